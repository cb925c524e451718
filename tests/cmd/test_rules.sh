#!/bin/bash
# The Prometheus alerting rules of man/examples/dcprobe.rules.yml: promtool
# accepts them, their unit tests (man/examples/dcprobe.rules.test.yml,
# installed beside them) show every alert firing and silent, and each
# alert's expression selects the series that dcache-probe and warm really
# print (labelled tree=app as the cron line does) on a cold fixture, a warm
# one and one whose listings fail.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
: "${DCP_SRC:=$(cd "$DCP_TESTS/.." && pwd)}"
RULES=$DCP_SRC/man/examples/dcprobe.rules.yml
UNIT=$DCP_SRC/man/examples/dcprobe.rules.test.yml
ALERTS="DcprobeCannotProbe DcprobeDataCold DcprobeRunFailed DcprobeRunStale DcprobeTreeAbsent DcprobeTreeCold"

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
	assertContains "$OUT" "SUCCESS: 6 rules found"
	assertEquals "the alerts" "$ALERTS" "$(alert_names "$RULES")"
	# Each alert waits (for:) and says what happened and what to do.
	assertEquals "a for: per alert" 6 "$(grep -c '^        for: [1-9][0-9]*m$' "$RULES")"
	assertEquals "a summary per alert" 6 "$(grep -c '^          summary: ' "$RULES")"
	assertEquals "a description per alert" 6 "$(grep -c '^          description: ' "$RULES")"
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
# label matcher, an annotation, the absent tree.  (The test file finds the
# rules beside it, as installed.)
test_unit_tests_can_fail() {
	local m dir="$SHUNIT_TMPDIR/mutant"
	mkdir -p "$dir"
	cp "$UNIT" "$dir/"
	for m in 's/< 0.9/< 0.2/' 's/for: 15m/for: 5m/' 's/!= 3/!= 2/' 's/> 1800/> 3600/' \
		's/dcprobe_data_resident_ratio </{__name__=~"dcprobe_.*data_resident_ratio"} </' \
		's/humanizePercentage/humanize/' 's/ == 3/ >= 3/' 's/{command="dcache-probe"} > 1800/ > 1800/' \
		's/tree="app"})/tree="ap"})/' 's/absent(dcprobe_last_run_timestamp_seconds{command="dcache-probe",/absent(dcprobe_last_run_timestamp_seconds{/'; do
		sed "$m" "$RULES" >"$dir/dcprobe.rules.yml"
		cmp -s "$RULES" "$dir/dcprobe.rules.yml" && fail "$m changes nothing"
		run promtool test rules "$dir/dcprobe.rules.test.yml"
		assertEquals "rules with $m fail the unit tests" 1 "$RC"
	done
}

# A cold tree: dcache-probe exits 1 and its cached ratio fires the cold
# alert; no file was measured, so there is no data ratio to alert on.
test_cold_tree_output() {
	local p="$SHUNIT_TMPDIR/cold.prom"
	dcache-probe -r --pages --prometheus --label=tree=app "$APP" >"$p"
	assertEquals "cold: exit 1" 1 $?
	assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
	assertNotContains "no data ratio over nothing" "$(cat "$p")" "dcprobe_data_resident_ratio{"
	check_selects "$p" \
		"DcprobeTreeCold=dcprobe_cached_ratio{command=\"dcache-probe\",tree=\"app\",root=\"$APP\"}"
	# The same tree after warm: the probe's ratio is 1 and nothing fires.
	warm -r -q "$APP"
	probe_warm "$p" -r --prometheus --label=tree=app "$APP"
	assertEquals "warm: exit 0" 0 $?
	check_selects "$p"
	# Another tree's metrics: tree app is absent.
	probe_warm "$p" -r --prometheus --label=tree=etc "$APP"
	check_selects "$p" "DcprobeTreeAbsent={command=\"dcache-probe\",tree=\"app\"}"
}

# Dentries warm, data cold (warm -r reads no data): the data alert fires
# for the root, not for the --per-dir directories; after warm --pages it
# is silent (retried: the machine's DAMON may reclaim pages between the
# two commands, see tests/README.md).
test_data_cold_output() {
	local p="$SHUNIT_TMPDIR/data.prom" i
	warm -r -q "$APP"
	probe_warm "$p" -r --pages --per-dir --prometheus --label=tree=app "$APP"
	assertEquals "dentries warm: exit 0" 0 $?
	assertTrue "a per-directory data ratio too" "grep -q '^dcprobe_dir_data_resident_ratio{' '$p'"
	check_selects "$p" \
		"DcprobeDataCold=dcprobe_data_resident_ratio{command=\"dcache-probe\",tree=\"app\",root=\"$APP\"}"
	for i in 1 2 3; do
		warm -r -q --pages "$APP"
		dcache-probe -r --pages --per-dir --prometheus --label=tree=app "$APP" >"$p"
		grep -q "^dcprobe_data_resident_ratio{command=\"dcache-probe\",tree=\"app\",root=\"$APP\"} 1$" "$p" && break
	done
	check_selects "$p"
}

# Every directory listing fails (faultinject: getdents64 gives EIO): exit
# status 2 fires the failed-run alert, from dcache-probe and from warm.
# The root's tree could not be walked: it has no ratio (its root's own
# lookup is no share of the tree), so the cold alert cannot fire on it.
test_failed_run_output() {
	local p="$SHUNIT_TMPDIR/failed.prom" c
	warm -r -q "$APP"
	for c in dcache-probe "warm --check"; do
		"$DCP_BUILD/tests/faultinject" getdents64=EIO -- "$DCP_BIN/"$c -r --prometheus --label=tree=app "$APP" >"$p"
		assertEquals "$c: exit 2" 2 $?
		c=${c% *}
		assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
		assertEquals "$c: not complete, a walk error" "0 1" "$(prom_check \
			"dcprobe_complete{command=\"$c\",tree=\"app\",root=\"$APP\"}" \
			"dcprobe_walk_errors{command=\"$c\",tree=\"app\",root=\"$APP\"}" <"$p" | xargs)"
		assertFalse "$c: no ratio of a tree not walked" "grep -q '^dcprobe_cached_ratio{' '$p'"
		# warm's metrics do not stand in for the cron job's: tree app is
		# absent when they are all there is.
		check_selects "$p" "DcprobeRunFailed=dcprobe_exit_status{command=\"$c\",tree=\"app\"}" \
			$([ "$c" = warm ] && echo "DcprobeTreeAbsent={command=\"dcache-probe\",tree=\"app\"}")
	done
}

# A tree that is not there, on its first run (its name never looked up:
# a miss) and after: the failed-run alert fires, never the cold one (the
# root's lookup was a ratio of 0, then of 1, before issue 37).
test_tree_not_there_output() {
	local p="$SHUNIT_TMPDIR/absent.prom" run c
	for c in dcache-probe "warm --check"; do
		for run in first again; do
			"$DCP_BIN/"$c -r --prometheus --label=tree=app "$MNT/absent" >"$p" 2>/dev/null
			assertEquals "$c, $run run: exit 2" 2 $?
			assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
			assertFalse "$c, $run run: no ratio" "grep -q '^dcprobe_cached_ratio{' '$p'"
			check_selects "$p" "DcprobeRunFailed=dcprobe_exit_status{command=\"${c% *}\",tree=\"app\"}" \
				$([ "$c" != dcache-probe ] && echo "DcprobeTreeAbsent={command=\"dcache-probe\",tree=\"app\"}")
		done
		fixture_cold "$MNT"
	done
}

# Exit status 3 (no RESOLVE_CACHED: faultinject openat2=EINVAL): the
# commands print the run-level series (dcprobe_exit_status 3), and the
# cannot-probe alert must select it.
test_cannot_probe_output() {
	local p="$SHUNIT_TMPDIR/cannot.prom" c
	# warm probes (and can fail to) only with --check.
	for c in dcache-probe "warm --check"; do
		"$DCP_BUILD/tests/faultinject" openat2=EINVAL -- "$DCP_BIN/"$c -r --prometheus --label=tree=app "$APP" >"$p"
		assertEquals "$c: exit 3" 3 $?
		c=${c% *}
		if [ -s "$p" ]; then
			assertTrue "promtool accepts it" "prom_check <'$p' >/dev/null"
			check_selects "$p" "DcprobeCannotProbe=dcprobe_exit_status{command=\"$c\",tree=\"app\"}" \
				$([ "$c" = warm ] && echo "DcprobeTreeAbsent={command=\"dcache-probe\",tree=\"app\"}")
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
				"DcprobeCannotProbe=dcprobe_exit_status{command=\"dcache-probe\",tree=\"app\"}"
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

# free_port - a TCP port of 127.0.0.1 no one listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serve NAME LOG URL CMD... - start CMD in the background (its PID in
# SERVED) and wait up to 60 s for URL to answer; fails if CMD exits first.
serve() {
	local name=$1 log=$2 url=$3 i
	shift 3
	"$@" >"$log" 2>&1 &
	SERVED=$!
	for i in $(seq 1 600); do
		curl -sf --noproxy '*' "$url" >/dev/null && return 0
		kill -0 $SERVED 2>/dev/null || break
		sleep 0.1
	done
	echo "$name did not start: $(tail -5 "$log")" >&2
	kill $SERVED 2>/dev/null
	return 1
}

# promql QUERY - the result of an instant query of the Prometheus on
# PROM_PORT: one line per series, "LABEL=VALUE,... VALUE", sorted.
promql() {
	curl -sf --noproxy '*' "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["status"] == "success", r
for s in sorted(r["data"]["result"], key=lambda s: sorted(s["metric"].items())):
    print(",".join("%s=%s" % kv for kv in sorted(s["metric"].items()) if kv[0] != "__name__"),
          s["value"][1])
'
}

# evaluated_rules - how many rules Prometheus has evaluated without error.
evaluated_rules() {
	curl -sf --noproxy '*' "http://127.0.0.1:$PROM_PORT/api/v1/rules" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(sum(1 for g in r["data"]["groups"] for rule in g["rules"]
          if rule["health"] == "ok" and not rule["lastEvaluation"].startswith("0001")))
'
}

# await QUERY PATTERN - poll QUERY (up to 90 s) until a line of its result
# matches the extended regex PATTERN; prints the last result.
await() {
	local i out
	for i in $(seq 1 180); do
		out=$(promql "$1")
		grep -qE -- "$2" <<<"$out" && break
		sleep 0.5
	done
	printf '%s\n' "$out"
}

# The recommended setup end to end, with Prometheus itself (Debian packages
# prometheus and prometheus-node-exporter, both on 127.0.0.1 only, free
# ports, a temporary storage directory): the cron line of cron.d/dcprobe
# (as built) writes its file, node_exporter's textfile collector serves it,
# Prometheus scrapes it every second (honor_labels at its default, false)
# and evaluates the shipped rules every second.  The labels arrive as the
# command wrote them (tree="app", beside the scrape's job and instance);
# the control, a file written with --label=job=app, arrives as
# exported_job="app", job="node".  Once the cron line's file is removed,
# DcprobeTreeAbsent becomes active, "pending", then "firing", and it was
# not active before.  (Prometheus loads the shipped rules with one line
# changed, checked below: the absent rule's for: of 10 minutes made 3 s;
# the rules' unit tests show it firing after the real 10 minutes.)
test_prometheus_scrapes_the_cron_line() {
	local ne=prometheus-node-exporter tf="$SHUNIT_TMPDIR/prom-textfile" work="$SHUNIT_TMPDIR/prometheus"
	local line cmd ne_port ne_pid prom_pid out version i
	for cmd in $ne prometheus curl; do
		command -v $cmd >/dev/null || {
			fail "$cmd not found (Debian packages prometheus, prometheus-node-exporter, curl)"
			return
		}
	done
	mkdir -p "$tf" "$work/data"
	line=$(grep -v '^#' "$DCP_BUILD/examples/cron.d/dcprobe" | cut -d' ' -f7-)
	assertContains "the cron line labels its tree" "$line" " --label=tree=app "
	cmd=$(printf '%s\n' "$line" | sed -e "s|[^ ]*/dcache-probe |$DCP_BIN/dcache-probe |" \
		-e "s|/var/lib/prometheus/node-exporter|$tf|g" -e "s|/srv/app|$APP|g" \
		-e "s|/run/lock/|$SHUNIT_TMPDIR/|g")
	# (Its exit status, 0 or 1, is published and compared below: this test
	# needs no cold tree.)
	run sh -c "$cmd"
	local rc_tree=$RC rc_job
	assertTrue "the cron line ran: $ERR" "[ $RC -le 1 ] && [ -s '$tf/dcache.prom' ]"
	# The control: the same run labelled job=app, in a second file.
	run sh -c "$(sed -e 's/--label=tree=app/--label=job=app/' -e 's|/dcache.prom |/dcache-job.prom |' <<<"$cmd")"
	rc_job=$RC
	assertTrue "the control's file" "[ -s '$tf/dcache-job.prom' ]"
	version=$(dcache-probe --version | sed -n 's/.*(dcprobe) //p')

	ne_port=$(free_port)
	serve node_exporter "$work/ne.log" "http://127.0.0.1:$ne_port/metrics" \
		$ne --web.listen-address="127.0.0.1:$ne_port" --collector.disable-defaults \
		--collector.textfile --collector.textfile.directory="$tf" || { fail "node_exporter"; return; }
	ne_pid=$SERVED
	sed '/alert: DcprobeTreeAbsent$/,/^        for: / s/^        for: 10m$/        for: 3s/' \
		"$RULES" >"$work/rules.yml"
	assertEquals "the rules Prometheus loads: the shipped ones, the absent rule's for: 3s" \
		"<         for: 10m
---
>         for: 3s" "$(diff "$RULES" "$work/rules.yml" | grep -v '^[0-9]')"
	printf '%s\n' "global:" "  scrape_interval: 1s" "  evaluation_interval: 1s" \
		"rule_files:" "  - $work/rules.yml" "scrape_configs:" "  - job_name: node" "    static_configs:" \
		"      - targets: ['127.0.0.1:$ne_port']" >"$work/prometheus.yml"
	PROM_PORT=$(free_port)
	serve prometheus "$work/prometheus.log" "http://127.0.0.1:$PROM_PORT/-/ready" \
		prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
		--web.listen-address="127.0.0.1:$PROM_PORT" || { kill $ne_pid; fail "prometheus"; return; }
	prom_pid=$SERVED

	out=$(await 'dcprobe_exit_status' 'tree=app')
	assertEquals "the cron line's status, its labels unchanged; the control's job renamed" \
		"command=dcache-probe,exported_job=app,instance=127.0.0.1:$ne_port,job=node $rc_job
command=dcache-probe,instance=127.0.0.1:$ne_port,job=node,tree=app $rc_tree" "$out"
	assertEquals "the build" "command=dcache-probe,instance=127.0.0.1:$ne_port,job=node,tree=app,version=$version 1" \
		"$(promql 'dcprobe_build_info{tree="app"}')"
	assertEquals "the tree's ratio, labelled" 1 \
		"$(promql "dcprobe_cached_ratio{tree=\"app\",root=\"$APP\"}" | grep -c ',tree=app ')"
	# The rules are loaded and evaluated; the tree is there, so not absent.
	for i in $(seq 1 60); do
		out=$(evaluated_rules)
		[ "$out" = 6 ] && break
		sleep 0.5
	done
	assertEquals "the 6 rules loaded, evaluated, healthy" 6 "$out"
	# (An evaluation before the first scrape saw nothing: the alert may be
	# pending until the next evaluation sees the tree.)
	for i in $(seq 1 60); do
		out=$(promql 'ALERTS{alertname="DcprobeTreeAbsent"}')
		[ -z "$out" ] && break
		sleep 0.5
	done
	assertEquals "the tree is there: DcprobeTreeAbsent is not active" "" "$out"
	# The cron job stops writing and its file goes: the series go stale.
	rm "$tf/dcache.prom"
	out=$(await 'ALERTS{alertname="DcprobeTreeAbsent"}' 'alertstate=pending')
	assertEquals "the file removed: DcprobeTreeAbsent pending" \
		"alertname=DcprobeTreeAbsent,alertstate=pending,command=dcache-probe,severity=warning,tree=app 1" "$out"
	out=$(await 'ALERTS{alertname="DcprobeTreeAbsent"}' 'alertstate=firing')
	assertEquals "3 s later: DcprobeTreeAbsent firing" \
		"alertname=DcprobeTreeAbsent,alertstate=firing,command=dcache-probe,severity=warning,tree=app 1" "$out"
	kill $prom_pid $ne_pid
	wait $prom_pid $ne_pid 2>/dev/null
	assertFalse "Prometheus logged no error: $(grep -i 'level=error' "$work/prometheus.log" | head -3)" \
		"grep -qi 'level=error' '$work/prometheus.log'"
}

. "$SHUNIT2"
