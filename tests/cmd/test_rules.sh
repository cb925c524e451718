#!/bin/bash
# The Prometheus alerting rules of man/examples/dcprobe.rules.yml: promtool
# accepts them, their unit tests (tests/rules/dcprobe.rules.test.yml) show
# every alert firing and silent, and each alert's expression selects the
# series that dcache-probe and warm really print on a cold fixture, a warm
# one and one whose listings fail.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
: "${DCP_SRC:=$(cd "$DCP_TESTS/.." && pwd)}"
RULES=$DCP_SRC/man/examples/dcprobe.rules.yml
UNIT=$DCP_TESTS/rules/dcprobe.rules.test.yml
ALERTS="DcprobeCannotProbe DcprobeDataCold DcprobeRunFailed DcprobeRunStale DcprobeTreeCold"

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	APP="$MNT/app"
	mkdir -p "$APP/lib" "$APP/static"
	for i in $(seq 1 20); do head -c 20000 /dev/urandom >"$APP/lib/mod$i.so"; done
	for i in $(seq 1 10); do echo "$i" >"$APP/static/file$i.css"; done
}

setUp() {
	fixture_cold "$MNT" || fail "cannot remount"
}

# check_selects PROMFILE [ALERT=SERIES...] - each alert's expr over the
# series of PROMFILE selects exactly the series listed for it (promtool).
check_selects() {
	local prom=$1 t="$SHUNIT_TMPDIR/expr_test.json"
	shift
	python3 "$DCP_TESTS/rules/expr_test.py" "$RULES" "$prom" "$t" "$@" ||
		{ fail "cannot make the test of $prom"; return; }
	run promtool test rules "$t"
	assertEquals "promtool test rules over $prom: $OUT $ERR" 0 "$RC"
}

# probe_warm OUT ARGS... - dcache-probe ARGS into OUT on a tree warmed
# before: exit 0, unless a mount elsewhere on the machine made a probe miss
# (tests/README.md, spurious misses), so up to 3 runs; returns the status.
probe_warm() {
	local out=$1 i rc
	shift
	for i in 1 2 3; do
		dcache-probe "$@" >"$out"
		rc=$?
		[ $rc = 0 ] && break
	done
	return $rc
}

# alert_names FILE - the alerts of a rules file, sorted, on one line.
alert_names() {
	sed -n 's/^ *- alert: //p' "$1" | sort | xargs
}

test_rules_are_valid() {
	run promtool check rules "$RULES"
	assertEquals "promtool check rules: $OUT $ERR" 0 "$RC"
	assertContains "$OUT" "SUCCESS: 5 rules found"
	assertEquals "the alerts" "$ALERTS" "$(alert_names "$RULES")"
	# Each alert waits (for:) and says what happened and what to do.
	assertEquals "a for: per alert" 5 "$(grep -c '^        for: [1-9][0-9]*m$' "$RULES")"
	assertEquals "a summary per alert" 5 "$(grep -c '^          summary: ' "$RULES")"
	assertEquals "a description per alert" 5 "$(grep -c '^          description: ' "$RULES")"
	# A broken file is refused.
	sed 's/dcprobe_cached_ratio < 0.9/dcprobe_cached_ratio < < 0.9/' "$RULES" >"$SHUNIT_TMPDIR/bad.yml"
	run promtool check rules "$SHUNIT_TMPDIR/bad.yml"
	assertNotEquals "promtool refuses a bad expr" 0 "$RC"
}

test_unit_tests_pass() {
	run promtool test rules "$UNIT"
	assertEquals "promtool test rules: $OUT $ERR" 0 "$RC"
	# Every alert is tested, each firing (an exp_alerts list) and silent.
	local a
	for a in $ALERTS; do
		assertTrue "$a is tested" "grep -q 'alertname: $a\$' '$UNIT'"
	done
	run python3 -c '
import re, sys
text = open(sys.argv[1]).read()
fired, silent = set(), set()
for m in re.finditer(r"alertname: (\S+)\n\s+exp_alerts:( \[\])?", text):
    (silent if m.group(2) else fired).add(m.group(1))
missing = sorted(set(sys.argv[2:]) - (fired & silent))
sys.exit("not both firing and silent: %s" % missing if missing else 0)
' "$UNIT" $ALERTS
	assertEquals "$ERR" 0 "$RC"
}

# The unit tests fail on rules that are wrong: a threshold, a for:, a
# label matcher, an annotation.
test_unit_tests_can_fail() {
	local m dir="$SHUNIT_TMPDIR/mutant"
	mkdir -p "$dir/man/examples" "$dir/tests/rules"
	cp "$UNIT" "$dir/tests/rules/"
	for m in 's/< 0.9/< 0.2/' 's/for: 15m/for: 5m/' 's/!= 3/!= 2/' 's/> 1800/> 3600/' \
		's/dcprobe_data_resident_ratio </{__name__=~"dcprobe_.*data_resident_ratio"} </' \
		's/humanizePercentage/humanize/' 's/ == 3/ >= 3/'; do
		sed "$m" "$RULES" >"$dir/man/examples/dcprobe.rules.yml"
		cmp -s "$RULES" "$dir/man/examples/dcprobe.rules.yml" && fail "$m changes nothing"
		run promtool test rules "$dir/tests/rules/dcprobe.rules.test.yml"
		assertEquals "rules with $m fail the unit tests" 1 "$RC"
	done
}

# A cold tree: dcache-probe exits 1 and its cached ratio fires the cold
# alert; no file was measured, so there is no data ratio to alert on.
test_cold_tree_output() {
	local p="$SHUNIT_TMPDIR/cold.prom"
	dcache-probe -r --pages --prometheus "$APP" >"$p"
	assertEquals "cold: exit 1" 1 $?
	assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
	assertNotContains "no data ratio over nothing" "$(cat "$p")" "dcprobe_data_resident_ratio{"
	check_selects "$p" \
		"DcprobeTreeCold=dcprobe_cached_ratio{command=\"dcache-probe\",root=\"$APP\"}"
	# The same tree after warm: the probe's ratio is 1 and nothing fires.
	warm -r -q "$APP"
	probe_warm "$p" -r --prometheus "$APP"
	assertEquals "warm: exit 0" 0 $?
	check_selects "$p"
}

# Dentries warm, data cold (warm -r reads no data): the data alert fires
# for the root, not for the --per-dir directories; after warm --pages it
# is silent (retried: the machine's DAMON may reclaim pages between the
# two commands, see tests/README.md).
test_data_cold_output() {
	local p="$SHUNIT_TMPDIR/data.prom" i
	warm -r -q "$APP"
	probe_warm "$p" -r --pages --per-dir --prometheus "$APP"
	assertEquals "dentries warm: exit 0" 0 $?
	assertTrue "a per-directory data ratio too" "grep -q '^dcprobe_dir_data_resident_ratio{' '$p'"
	check_selects "$p" \
		"DcprobeDataCold=dcprobe_data_resident_ratio{command=\"dcache-probe\",root=\"$APP\"}"
	for i in 1 2 3; do
		warm -r -q --pages "$APP"
		dcache-probe -r --pages --per-dir --prometheus "$APP" >"$p"
		grep -q "^dcprobe_data_resident_ratio{command=\"dcache-probe\",root=\"$APP\"} 1$" "$p" && break
	done
	check_selects "$p"
}

# Every directory listing fails (faultinject: getdents64 gives EIO): exit
# status 2 fires the failed-run alert, from dcache-probe and from warm.
test_failed_run_output() {
	local p="$SHUNIT_TMPDIR/failed.prom" c i rc
	warm -r -q "$APP"
	# warm writes the probe states (after warming) with --check.  The root
	# alone is probed, cached: a mount elsewhere on the machine can make
	# one probe miss (tests/README.md, spurious misses), so up to 3 runs.
	for c in dcache-probe "warm --check"; do
		for i in 1 2 3; do
			"$DCP_BUILD/tests/faultinject" getdents64=EIO -- "$DCP_BIN/"$c -r --prometheus "$APP" >"$p"
			rc=$?
			grep -q "^dcprobe_cached_ratio{.*} 1$" "$p" && break
		done
		assertEquals "$c: exit 2" 2 $rc
		c=${c% *}
		assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
		assertEquals "$c: the root alone, cached" 1 "$(prom_check \
			"dcprobe_cached_ratio{command=\"$c\",root=\"$APP\"}" <"$p")"
		check_selects "$p" "DcprobeRunFailed=dcprobe_exit_status{command=\"$c\"}"
	done
}

# Exit status 3 (no RESOLVE_CACHED: faultinject openat2=EINVAL): the
# commands print the run-level series (dcprobe_exit_status 3), and the
# cannot-probe alert must select it.
test_cannot_probe_output() {
	local p="$SHUNIT_TMPDIR/cannot.prom" c
	# warm probes (and can fail to) only with --check.
	for c in dcache-probe "warm --check"; do
		"$DCP_BUILD/tests/faultinject" openat2=EINVAL -- "$DCP_BIN/"$c -r --prometheus "$APP" >"$p"
		assertEquals "$c: exit 3" 3 $?
		c=${c% *}
		if [ -s "$p" ]; then
			assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
			check_selects "$p" "DcprobeCannotProbe=dcprobe_exit_status{command=\"$c\"}"
		fi
	done
}

# The cron line of cron.d/dcprobe (as built) on exit status 3 (openat2 without
# RESOLVE_CACHED) publishes the run's status, which DcprobeCannotProbe
# selects; on 64 (a usage error before --prometheus is read) it publishes
# nothing: the last file stays, its timestamp ages, and DcprobeRunStale is
# the alert (dcprobe.7).
test_cron_line_on_3_and_64() {
	local line cmd shim="$SHUNIT_TMPDIR/shim3" tf="$SHUNIT_TMPDIR/textfile" why
	line=$(grep -v '^#' "$DCP_BUILD/examples/cron.d/dcprobe" | cut -d' ' -f7-)
	assertContains "$line" "/dcache-probe -r "
	mkdir -p "$shim" "$tf"
	for why in 3 64; do
		# 64: a bad option before everything the cron line gives.
		printf '#!/bin/sh\nexec "%s" openat2=EINVAL -- "%s/dcache-probe" %s "$@"\n' \
			"$DCP_BUILD/tests/faultinject" "$DCP_BIN" \
			"$([ $why = 64 ] && echo --no-such-option)" >"$shim/dcache-probe"
		chmod +x "$shim/dcache-probe"
		cmd=$(printf '%s\n' "$line" | sed -e "s|[^ ]*/dcache-probe |$shim/dcache-probe |" \
			-e "s|/var/lib/prometheus/node-exporter|$tf|g" -e "s|/srv/app|$APP|g" \
			-e "s|/run/lock/|$SHUNIT_TMPDIR/|g")
		echo "the last run's metrics" >"$tf/dcache.prom"
		run sh -c "$cmd"
		case $why in
		64)
			assertEquals "64: the status" 64 "$RC"
			assertEquals "64: the last file is kept" "the last run's metrics" "$(cat "$tf/dcache.prom")"
			;;
		*)
			assertEquals "3: the status" 3 "$RC"
			assertContains "3: published" "$(cat "$tf/dcache.prom")" "dcprobe_exit_status{"
			assertTrue "promtool accepts it" "prom_check <'$tf/dcache.prom' >/dev/null"
			check_selects "$tf/dcache.prom" \
				"DcprobeCannotProbe=dcprobe_exit_status{command=\"dcache-probe\",job=\"app\"}"
			;;
		esac
	done
	# Control: a run that works replaces it.
	cmd=$(printf '%s\n' "$line" | sed -e "s|[^ ]*/dcache-probe |$DCP_BIN/dcache-probe |" \
		-e "s|/var/lib/prometheus/node-exporter|$tf|g" -e "s|/srv/app|$APP|g" \
		-e "s|/run/lock/|$SHUNIT_TMPDIR/|g")
	run sh -c "$cmd"
	assertContains "a good run publishes" "$(cat "$tf/dcache.prom")" "dcprobe_last_run_timestamp_seconds{"
}

. "$SHUNIT2"
