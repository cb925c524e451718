#!/bin/bash
# The recipes of README.md and dcprobe(7), run as written on a real cold
# fixture: the command lines are taken from the README (the paths
# /srv/app, /var/lib/prometheus/node-exporter and /tmp/app.list replaced
# by the fixture's), and each must also appear, word for word, in dcprobe.7.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
: "${DCP_SRC:=$(cd "$DCP_TESTS/.." && pwd)}"

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	APP="$MNT/app"
	mkdir -p "$APP/lib/python" "$APP/cache" "$APP/static"
	for i in $(seq 1 40); do echo "$i" >"$APP/lib/python/mod$i.py"; done
	for i in $(seq 1 20); do echo "$i" >"$APP/static/file$i.css"; done
	echo "port = 80" >"$APP/config.toml"
	# A tree mostly warm by count, with one large cold directory.
	mkdir -p "$MNT/mostly/warm" "$MNT/mostly/cold"
	(cd "$MNT/mostly/warm" && seq -f 'w%g' 300 | xargs touch)
	(cd "$MNT/mostly/cold" && seq -f 'c%g' 3000 | xargs touch)
	TEXTFILE="$SHUNIT_TMPDIR/textfile"
	mkdir -p "$TEXTFILE"
	# The recipe lines, in order, from the README's "Recipes" section.
	RECIPES="$SHUNIT_TMPDIR/recipes"
	awk '/^## Recipes/ {on = 1; next} /^## / {on = 0}
	     on && /^```sh/ {code = 1; next} on && /^```/ {code = 0}
	     code' "$DCP_SRC/README.md" >"$RECIPES"
	UNIT="$SHUNIT_TMPDIR/warm-app.service"
	awk '/^## Recipes/ {on = 1; next} /^## / {on = 0}
	     on && /^```ini/ {code = 1; next} on && /^```/ {code = 0}
	     code' "$DCP_SRC/README.md" | local_paths >"$UNIT"
	# dcprobe.7 as a person reads it, in ASCII, one long line per line.
	MAN7="$SHUNIT_TMPDIR/dcprobe.7.txt"
	LC_ALL=C MANWIDTH=400 man -l "$DCP_SRC/man/dcprobe.7" 2>/dev/null |
		sed 's/^ *//' >"$MAN7"
}

setUp() {
	fixture_cold "$MNT" || fail "cannot remount"
	rm -f "$TEXTFILE"/*
}

# local_paths - the recipe with this fixture's paths and binaries.
local_paths() {
	sed -e "s|/srv/app|$APP|g" \
	    -e "s|/var/lib/prometheus/node-exporter|$TEXTFILE|g" \
	    -e "s|/tmp/app.list|$SHUNIT_TMPDIR/app.list|g" \
	    -e "s|/usr/local/bin/|$DCP_BIN/|g"
}

# recipe N - the Nth recipe line of the README.
recipe() {
	sed -n "${1}p" "$RECIPES"
}

test_readme_has_the_recipes() {
	assertEquals "four recipe lines" 4 "$(grep -c . "$RECIPES")"
	assertTrue "a systemd unit" "grep -q '^ExecStart=' '$UNIT'"
}

test_recipes_are_in_dcprobe7() {
	local line
	while IFS= read -r line; do
		grep -qxF -- "$line" "$MAN7" || fail "dcprobe.7 lacks: $line"
	done <"$RECIPES"
	grep -qxF "ExecStart=/usr/local/bin/warm -r -q /srv/app" "$MAN7" ||
		fail "dcprobe.7 lacks the unit's ExecStart"
}

test_is_my_tree_warm() {
	local cmd
	cmd=$(recipe 1 | local_paths)
	assertContains "$cmd" "--no-perturb"
	run sh -c "$cmd"
	assertEquals "a cold tree answers 1" 1 "$RC"
	assertContains "-s: the root's line on stdout" "$OUT" "	$APP"
	run sh -c "$cmd"
	assertEquals "the check warmed nothing" 1 "$RC"
	du -s "$APP" >/dev/null
	run sh -c "$cmd"
	assertEquals "after du it is warm" 0 "$RC"
	assertContains "$OUT" "100.0%	"
}

test_warm_only_when_cold() {
	local cmd shim="$SHUNIT_TMPDIR/shim"
	cmd=$(recipe 2 | local_paths)
	# A warm first in PATH that notes each time it runs.
	mkdir -p "$shim"
	printf '#!/bin/sh\necho ran >>"%s/warm.ran"\nexec "%s/warm" "$@"\n' \
		"$SHUNIT_TMPDIR" "$DCP_BIN" >"$shim/warm"
	chmod +x "$shim/warm"
	rm -f "$SHUNIT_TMPDIR/warm.ran"
	run env PATH="$shim:$PATH" sh -c "$cmd"
	assertEquals "cold: warm ran and succeeded" 0 "$RC"
	assertTrue "warm ran" "[ -s '$SHUNIT_TMPDIR/warm.ran' ]"
	run dcache-probe -r -s --no-perturb "$APP"
	assertEquals "now warm" 0 "$RC"
	assertContains "$OUT" "100.0%	"
	# Warm already: the probe answers 0 and warm does not run at all.
	rm -f "$SHUNIT_TMPDIR/warm.ran"
	run env PATH="$shim:$PATH" sh -c "$cmd"
	assertEquals 0 "$RC"
	assertFalse "warm not run when warm" "[ -e '$SHUNIT_TMPDIR/warm.ran' ]"
}

# The recipe on a tree that is 99.7% warm by what --no-perturb can see, and
# whose one cold directory holds 3,000 entries: it must decide to warm.
test_warm_only_when_mostly_cold() {
	local cmd shim="$SHUNIT_TMPDIR/shim" APP="$MNT/mostly"
	cmd=$(recipe 2 | local_paths)
	mkdir -p "$shim"
	printf '#!/bin/sh\necho ran >>"%s/warm.ran"\nexec "%s/warm" "$@"\n' \
		"$SHUNIT_TMPDIR" "$DCP_BIN" >"$shim/warm"
	chmod +x "$shim/warm"
	find "$APP/warm" -exec stat {} + >/dev/null
	run "$DCP_BUILD/tests/oprobe" "$APP/warm/w1" "$APP/cold"
	assertEquals "the independent prober: half warm" "cached $APP/warm/w1
miss $APP/cold" "$OUT"
	rm -f "$SHUNIT_TMPDIR/warm.ran"
	run env PATH="$shim:$PATH" sh -c "$cmd"
	assertEquals "mostly cold: warm ran and succeeded" 0 "$RC"
	assertTrue "warm ran" "[ -s '$SHUNIT_TMPDIR/warm.ran' ]"
	run "$DCP_BUILD/tests/oprobe" "$APP/cold/c3000"
	assertEquals "cached $APP/cold/c3000" "$OUT"
	rm -f "$SHUNIT_TMPDIR/warm.ran"
	run env PATH="$shim:$PATH" sh -c "$cmd"
	assertFalse "warm now: warm not run" "[ -e '$SHUNIT_TMPDIR/warm.ran' ]"
}

test_systemd_unit() {
	if command -v systemd-analyze >/dev/null; then
		run systemd-analyze verify "$UNIT"
		assertEquals "systemd-analyze verify: $ERR" 0 "$RC"
	fi
	local exec
	exec=$(sed -n 's/^ExecStart=//p' "$UNIT")
	run sh -c "$exec"
	assertEquals "the unit's command succeeds" 0 "$RC"
	run dcache-probe -r -s --no-perturb "$APP"
	assertEquals "the tree is warm after it" 0 "$RC"
}

test_node_exporter_cron_line() {
	local line cmd shim="$SHUNIT_TMPDIR/shim2"
	line=$(recipe 3)
	assertEquals "a cron.d line" "*/5 * * * * root" "$(echo "$line" | cut -d' ' -f1-6)"
	cmd=$(echo "$line" | cut -d' ' -f7- | local_paths)
	# Cold: exit status 1 from the probe, the metrics are still published.
	run sh -c "$cmd"
	assertTrue "dcache.prom published" "[ -s '$TEXTFILE/dcache.prom' ]"
	assertFalse "no .new left behind" "[ -e '$TEXTFILE/dcache.prom.new' ]"
	assertTrue "promtool accepts it, no duplicate series" "prom_check <'$TEXTFILE/dcache.prom' >/dev/null"
	assertEquals "status 1 published" 1 \
		"$(prom_check 'dcprobe_exit_status{command="dcache-probe"}' <"$TEXTFILE/dcache.prom")"
	assertTrue "a cold ratio below 1" \
		"grep -q '^dcprobe_cached_ratio{command=\"dcache-probe\",root=\"$APP\"} 0' '$TEXTFILE/dcache.prom'"
	# Warm: status 0 replaces it.
	run warm -r -q "$APP"
	run sh -c "$cmd"
	assertEquals "status 0 published" 0 \
		"$(prom_check 'dcprobe_exit_status{command="dcache-probe"}' <"$TEXTFILE/dcache.prom")"
	# An error (every directory listing fails with EIO): status 2 is
	# published too, so monitoring sees it instead of the last run's metrics.
	mkdir -p "$shim"
	printf '#!/bin/sh\nexec "%s" getdents64=EIO -- "%s/dcache-probe" "$@"\n' \
		"$DCP_BUILD/tests/faultinject" "$DCP_BIN" >"$shim/dcache-probe"
	chmod +x "$shim/dcache-probe"
	# The recipe names the command by its full path (or by PATH).
	run env PATH="$shim:$PATH" sh -c "${cmd//$DCP_BIN\/dcache-probe/$shim/dcache-probe}"
	assertFalse "no .new left behind" "[ -e '$TEXTFILE/dcache.prom.new' ]"
	assertTrue "promtool accepts it" "prom_check <'$TEXTFILE/dcache.prom' >/dev/null"
	assertEquals "status 2 published" "2 1" "$(prom_check 'dcprobe_exit_status{command="dcache-probe"}' \
		"dcprobe_walk_errors{command=\"dcache-probe\",root=\"$APP\"}" <"$TEXTFILE/dcache.prom" | xargs)"
}

test_uring_bench_recipe() {
	local cmd
	cmd=$(recipe 4 | local_paths)
	run sh -c "$cmd"
	assertTrue "both runs print their summary: $OUT $ERR" \
		"[ $(printf '%s\n%s\n' "$OUT" "$ERR" | grep -c 'opens in') -eq 2 ]"
	assertEquals "61 files listed" 61 "$(tr -cd '\0' <"$SHUNIT_TMPDIR/app.list" | wc -c)"
}

. "$SHUNIT2"
