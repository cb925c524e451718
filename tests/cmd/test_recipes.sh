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
	# dcprobe.7 as the build configured it and a person reads it, in ASCII,
	# one long line per line, its commands' directory (that of the built
	# unit's ExecStart) shown as the README's /usr/local/bin.
	MAN7="$SHUNIT_TMPDIR/dcprobe.7.txt"
	local bindir
	bindir=$(sed -n 's|^ExecStart=\(/.*\)/warm .*|\1|p' "$DCP_BUILD/examples/warm-app.service")
	LC_ALL=C MANWIDTH=400 man -l "$DCP_BUILD/man/man7/dcprobe.7" 2>/dev/null |
		sed -e 's/^ *//' -e "s|$bindir/|/usr/local/bin/|g" >"$MAN7"
}

# A loop device of own_loop left attached by a test that failed halfway.
oneTimeTearDown() {
	if [ -n "${LOOP:-}" ]; then
		umount "$MNT" 2>/dev/null
		losetup -d "$LOOP"
	fi
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
	    -e "s|/run/lock/|$SHUNIT_TMPDIR/|g" \
	    -e "s|/var/lib/dcprobe/|$SHUNIT_TMPDIR/|g" \
	    -e "s|--cgroup=/system.slice/app.service|--cgroup=${CGPATH:-/system.slice/app.service}|g" \
	    -e "s|/usr/local/bin/|$DCP_BIN/|g"
}

# recipe N - the Nth recipe line of the README.
recipe() {
	sed -n "${1}p" "$RECIPES"
}

test_readme_has_the_recipes() {
	assertEquals "eight recipe lines" 8 "$(grep -c . "$RECIPES")"
	assertTrue "a systemd unit" "grep -q '^ExecStart=' '$UNIT'"
}

test_recipes_are_in_dcprobe7() {
	local line
	while IFS= read -r line; do
		grep -qxF -- "$line" "$MAN7" || fail "dcprobe.7 lacks: $line"
	done <"$RECIPES"
	grep -qxF "ExecStart=/usr/local/bin/warm -r --prometheus --label=tree=app --output=/var/lib/prometheus/node-exporter/warm-app.prom /srv/app" "$MAN7" ||
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
		# --man=no: the Documentation= pages are not installed on the system here.
		run systemd-analyze verify --man=no "$UNIT"
		assertEquals "systemd-analyze verify: $ERR" 0 "$RC"
	fi
	local exec
	exec=$(sed -n 's/^ExecStart=//p' "$UNIT")
	run sh -c "$exec"
	assertEquals "the unit's command succeeds" 0 "$RC"
	assertEquals "its metrics published, tree app, status 0" 0 \
		"$(prom_check 'dcprobe_exit_status{command="warm",tree="app"}' <"$TEXTFILE/warm-app.prom")"
	run dcache-probe -r -s --no-perturb "$APP"
	assertEquals "the tree is warm after it" 0 "$RC"
}

test_node_exporter_cron_line() {
	local line cmd shim="$SHUNIT_TMPDIR/shim2" job='command="dcache-probe",tree="app"'
	line=$(recipe 3)
	assertEquals "a cron.d line" "*/5 * * * * root" "$(echo "$line" | cut -d' ' -f1-6)"
	cmd=$(echo "$line" | cut -d' ' -f7- | local_paths)
	assertContains "the recipe writes through --output" "$cmd" " --output=$TEXTFILE/dcache.prom "
	assertContains "the recipe names its tree" "$cmd" " --label=tree=app "
	# A new file gets 0666 less the umask, as with '>': 0644 under 022,
	# 0600 under 077, which node_exporter's user could not read; created
	# once readable, as README says, it keeps 0644 under any umask.
	run sh -c "umask 022; $cmd"
	assertEquals "a new file under umask 022" 644 "$(stat -c %a "$TEXTFILE/dcache.prom")"
	rm -f "$TEXTFILE/dcache.prom"
	run sh -c "umask 077; $cmd"
	assertEquals "a new file under umask 077" 600 "$(stat -c %a "$TEXTFILE/dcache.prom")"
	rm -f "$TEXTFILE/dcache.prom"
	install -m 0644 /dev/null "$TEXTFILE/dcache.prom"
	cmd="umask 077; $cmd"
	# Cold: exit status 1 from the probe, the metrics are still published.
	fixture_cold "$MNT" || fail "remount"
	run sh -c "$cmd"
	assertEquals "cold: 1" 1 "$RC"
	assertTrue "dcache.prom published" "[ -s '$TEXTFILE/dcache.prom' ]"
	assertEquals "nothing else left behind" "dcache.prom" "$(ls -A "$TEXTFILE")"
	assertEquals "mode 0644 kept under umask 077" 644 "$(stat -c %a "$TEXTFILE/dcache.prom")"
	assertTrue "promtool accepts it, no duplicate series" "prom_check <'$TEXTFILE/dcache.prom' >/dev/null"
	assertEquals "status 1 published" 1 \
		"$(prom_check "dcprobe_exit_status{$job}" <"$TEXTFILE/dcache.prom")"
	assertTrue "a cold ratio below 1" \
		"grep -q '^dcprobe_cached_ratio{$job,root=\"$APP\"} 0' '$TEXTFILE/dcache.prom'"
	# Warm: status 0 replaces it.
	run warm -r -q "$APP"
	run sh -c "$cmd"
	assertEquals "status 0 published" 0 \
		"$(prom_check "dcprobe_exit_status{$job}" <"$TEXTFILE/dcache.prom")"
	# An error (every directory listing fails with EIO): status 2 is
	# published too, so monitoring sees it instead of the last run's metrics.
	mkdir -p "$shim"
	printf '#!/bin/sh\nexec "%s" getdents64=EIO -- "%s/dcache-probe" "$@"\n' \
		"$DCP_BUILD/tests/faultinject" "$DCP_BIN" >"$shim/dcache-probe"
	chmod +x "$shim/dcache-probe"
	# The recipe names the command by its full path (or by PATH).
	run env PATH="$shim:$PATH" sh -c "${cmd//$DCP_BIN\/dcache-probe/$shim/dcache-probe}"
	assertEquals "nothing else left behind" "dcache.prom" "$(ls -A "$TEXTFILE")"
	assertTrue "promtool accepts it" "prom_check <'$TEXTFILE/dcache.prom' >/dev/null"
	assertEquals "status 2 published" "2 1" "$(prom_check "dcprobe_exit_status{$job}" \
		"dcprobe_walk_errors{$job,root=\"$APP\"}" <"$TEXTFILE/dcache.prom" | xargs)"
	# This system cannot probe (no openat2): status 3 is published, alone.
	printf '#!/bin/sh\nexec "%s" openat2=ENOSYS -- "%s/dcache-probe" "$@"\n' \
		"$DCP_BUILD/tests/faultinject" "$DCP_BIN" >"$shim/dcache-probe"
	run env PATH="$shim:$PATH" sh -c "${cmd//$DCP_BIN\/dcache-probe/$shim/dcache-probe}"
	assertEquals "cannot probe: 3" 3 "$RC"
	assertEquals "nothing else left behind" "dcache.prom" "$(ls -A "$TEXTFILE")"
	assertEquals "status 3 published" 3 \
		"$(prom_check "dcprobe_exit_status{$job}" <"$TEXTFILE/dcache.prom")"
	assertEquals "the run-level series only" \
		"dcprobe_duration_seconds dcprobe_exit_status dcprobe_last_run_timestamp_seconds dcprobe_build_info" \
		"$(grep -v '^#' "$TEXTFILE/dcache.prom" | sed 's/{.*//' | xargs)"
	assertEquals "still 0644 after every run" 644 "$(stat -c %a "$TEXTFILE/dcache.prom")"
}

# The cron recipe as two jobs (tree=app as written, and tree=etc, another tree
# and file), their files in one textfile directory on a tiny tmpfs, scraped
# by the real node_exporter.  The second run of job app meets the full disk:
# it must leave its last file whole and say so; the collector then exports
# both jobs' statuses without a scrape error.
test_node_exporter_two_jobs_on_a_full_disk() {
	local ne=prometheus-node-exporter dir app etc before port pid i
	if ! command -v $ne >/dev/null; then
		fail "$ne not found (Debian package prometheus-node-exporter)"
		return
	fi
	dir=$(mktemp -d "$FIXTURE_ROOT/textfile.XXXXXX")
	mount -t tmpfs -o size=256k,mode=0755 tmpfs "$dir" || fail "cannot mount a tmpfs"
	app=$(recipe 3 | cut -d' ' -f7- | local_paths | sed "s|$TEXTFILE|$dir|g")
	etc=$(printf '%s\n' "$app" | sed -e 's/--label=tree=app/--label=tree=etc/' \
		-e "s|/dcache.prom |/dcache-etc.prom |" -e "s| $APP\$| $MNT/mostly/warm|")
	assertContains "$etc" "--label=tree=etc --output=$dir/dcache-etc.prom $MNT/mostly/warm"
	run warm -r -q "$MNT/mostly/warm"
	run sh -c "$etc"
	assertEquals "job etc: warm" 0 "$RC"
	run sh -c "$app"
	assertEquals "job app: cold" 1 "$RC"
	before=$(sha256sum <"$dir/dcache.prom")
	# Fill the disk; then the tree is warm, and the next run would say 0.
	dd if=/dev/zero of="$dir/fill" bs=4k 2>/dev/null
	run warm -r -q "$APP"
	run sh -c "$app"
	assertEquals "a full disk: exit 2" 2 "$RC"
	assertContains "said on stderr" "$ERR" "No space left on device"
	assertContains "said on stderr" "$ERR" "'$dir/dcache.prom' left as it was"
	assertEquals "the old file intact" "$before" "$(sha256sum <"$dir/dcache.prom")"
	assertEquals "no temporary file left" "dcache-etc.prom dcache.prom fill" "$(find "$dir" -mindepth 1 -printf '%f\n' | sort | xargs)"
	# The real collector over that directory (a port taken meanwhile: another).
	for _ in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		$ne --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
			--collector.textfile --collector.textfile.directory="$dir" \
			>"$SHUNIT_TMPDIR/ne.log" 2>&1 &
		pid=$!
		for i in $(seq 1 300); do # up to 30 s on a loaded machine
			curl -sf --noproxy '*' "http://127.0.0.1:$port/metrics" >"$SHUNIT_TMPDIR/scrape" && break
			kill -0 $pid 2>/dev/null || break
			sleep 0.1
		done
		kill $pid 2>/dev/null
		wait $pid 2>/dev/null
		[ -s "$SHUNIT_TMPDIR/scrape" ] && break
	done
	umount "$dir"
	assertTrue "scraped: $(cat "$SHUNIT_TMPDIR/ne.log")" "[ -s '$SHUNIT_TMPDIR/scrape' ]"
	assertTrue "no scrape error" "grep -qx 'node_textfile_scrape_error 0' '$SHUNIT_TMPDIR/scrape'"
	assertTrue "job app's status: its last good run" \
		"grep -qxF 'dcprobe_exit_status{command=\"dcache-probe\",tree=\"app\"} 1' '$SHUNIT_TMPDIR/scrape'"
	assertTrue "job etc's status" \
		"grep -qxF 'dcprobe_exit_status{command=\"dcache-probe\",tree=\"etc\"} 0' '$SHUNIT_TMPDIR/scrape'"
	assertTrue "both roots' ratios" "[ $(grep -c '^dcprobe_cached_ratio{' "$SHUNIT_TMPDIR/scrape") -eq 2 ]"
	assertFalse "node_exporter logged no error: $(cat "$SHUNIT_TMPDIR/ne.log")" \
		"grep -qiE 'level=error|collected before' '$SHUNIT_TMPDIR/ne.log'"
}

# manifest_counts M - "ENTRIES CACHED NEGATIVE MISS ERROR FILES" of manifest
# M: its entries by state, and the files recorded with ranges.
manifest_counts() {
	python3 -c '
import json, sys
c = {"cached": 0, "negative": 0, "miss": 0, "error": 0}
files = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("type") == "entry":
        c[o["state"]] += 1
        files += bool(o.get("ranges"))
print(sum(c.values()), c["cached"], c["negative"], c["miss"], c["error"], files)
' "$1"
}

# own_loop - mount the fixture on a loop device of the test's own, which
# loop_cold keeps across remounts: a manifest records each file's device,
# and a plain remount (mount -o loop) may take another loop device, after
# which the restore finds every file changed.  own_loop_end mounts the
# fixture back as fixture.sh does.
own_loop() {
	umount "$MNT" || return 1
	LOOP=$(losetup -f --show "$MNT.img") || return 1
	mount -o no_prefetch_block_bitmaps "$LOOP" "$MNT"
}
loop_cold() {
	local i
	sync -f "$MNT" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		umount "$MNT" 2>/dev/null && break
		sleep 0.1
	done
	mountpoint -q "$MNT" && return 1
	mount -o no_prefetch_block_bitmaps "$LOOP" "$MNT"
}
own_loop_end() {
	loop_cold && umount "$MNT" && losetup -d "$LOOP" && LOOP= &&
		mount -o "$FIXTURE_MOUNT_OPTS" "$MNT.img" "$MNT"
}

# Recipes 5-7: snapshot a warm tree, restore it after a cold start, and
# check it back: the check says no before the restore and yes after.  The
# snapshot is an action ("write a manifest"): exit 0 although part of the
# tree was cold (a set -e script and a timer unit go on), and at a terminal
# one line of what it recorded; the restore says what came back of it, and
# dcache-probe -s over it gives a data share, with the files it could not
# measure as +N? (issue 37).
test_restore_a_warm_set_recipe() {
	local snap restore check m=$SHUNIT_TMPDIR/app.jsonl files misses todo
	snap=$(recipe 5 | local_paths)
	restore=$(recipe 6 | local_paths)
	check=$(recipe 7 | local_paths)
	own_loop || fail "cannot mount on a loop device of its own"
	cat "$APP"/lib/python/mod*.py "$APP/config.toml" >/dev/null
	(set -e; eval "$snap"; echo "the script went on") >"$SHUNIT_TMPDIR/snap.out" 2>&1
	assertEquals "snapshot: written, exit 0 though part of the tree was cold" 0 $?
	assertEquals "set -e: the script went on" "the script went on" "$(cat "$SHUNIT_TMPDIR/snap.out")"
	assertTrue "a manifest with ranges" "grep -q '\"ranges\":\[\[0,' '$m'"
	# At a terminal, one line of what was recorded (stderr; stdout unused).
	loop_cold || fail "cannot remount"
	cat "$APP"/lib/python/mod*.py "$APP/config.toml" >/dev/null
	run script -qec "$(recipe 5 | local_paths)" /dev/null
	assertEquals "on a terminal: exit 0" 0 "$RC"
	set -- $(manifest_counts "$m")
	files=$6
	assertTrue "some of the tree was cold: $*" "[ $4 -gt 0 ]"
	assertContains "the snapshot's line: $OUT" "$OUT" \
		"dcache-probe: recorded $1 paths ($2 cached, $3 negative, $4 miss, $5 error) and the resident ranges of $files files ("
	assertContains "$OUT" " bytes) in '$m'"
	# Not at a terminal: nothing but the exit status.
	eval "$snap" 2>"$SHUNIT_TMPDIR/snap.err"
	assertEquals "into a file: nothing said" "" "$(cat "$SHUNIT_TMPDIR/snap.err")"
	set -- $(manifest_counts "$m")
	todo=$(($2 + $3)) misses=$4 files=$6
	loop_cold || fail "cannot remount"
	eval "$check"
	assertEquals "cold: the check says not yet" 1 $?
	# Every recorded file missed: no share of nothing, the files +N?.
	run dcache-probe -s --manifest="$m"
	assertEquals "cold: -s" "$(printf '%s\t-\t0/0+%s?\t%s' "$(cut -f1-2 <<<"$OUT")" "$files" "$APP")" "$OUT"
	run sh -c "$restore"
	assertEquals "restore" 0 "$RC"
	assertContains "the restore's line: $ERR" "$ERR" \
		"warm: restored $todo of $todo entries, $files files, "
	assertContains "the restore's line: $ERR" "$ERR" " bytes read, 0 left out by limits in "
	assertContains "the restore's line: $ERR" "$ERR" "; $misses recorded misses skipped"
	assertEquals "one line" 1 "$(grep -c . <<<"$ERR")"
	run warm --manifest="$m" --json
	assertEquals "JSON: the restore's counts" "$1 $todo $todo $misses 0 0" \
		"$(json_get '" ".join(str(objs[-1]["restore"][k]) for k in ("recorded", "to_restore", "restored", "skipped", "not_restored", "changed"))' <<<"$OUT")"
	eval "$check"
	assertEquals "restored: the check passes" 0 $?
	run dcache-probe -s --manifest="$m"
	assertContains "restored: -s gives a data share: $OUT" "$OUT" "$(printf '100.0%%\t')"
	assertNotContains "restored: -s: $OUT" "$OUT" "?"
	assertEquals "what was read is what was recorded: the rest stays cold" 0 \
		"$(fincore -n -r -o PAGES "$APP/static/file1.css")"
	# A file changed since: the restore says so, in its line too.
	echo more >>"$APP/config.toml"
	run sh -c "$restore"
	assertEquals "a changed file: exit 2" 2 "$RC"
	assertContains "$ERR" "; 1 not restored (1 changed since the manifest)"
	own_loop_end || fail "cannot mount the fixture back"
}

# The io_uring comparison compares like with like: run a command at a time
# on a cold tree, the independent prober finds every listed file cached
# before each of the two bench runs (the recipe warms the list first).
# Control: the recipe without its warm step starts the first run cold and
# the second warm.
test_uring_bench_recipe() {
	local cmd
	cmd=$(recipe 4 | local_paths)
	assertContains "the list is warmed first" "$cmd" "; warm -q --files0-from=$SHUNIT_TMPDIR/app.list; uring-open --bench"
	bench_states "$cmd"
	assertEquals "both runs print their summary: $BENCH_OUT" 2 "$(grep -c 'opens in' <<<"$BENCH_OUT")"
	assertEquals "61 files listed" 61 "$(tr -cd '\0' <"$SHUNIT_TMPDIR/app.list" | wc -c)"
	assertEquals "cached files before each bench run" "61 61" "$BENCH_STATES"
	fixture_cold "$MNT"
	bench_states "$(sed 's/; warm -q [^;]*;/;/' <<<"$cmd")"
	assertEquals "control: without the warm step" "0 61" "$BENCH_STATES"
}

# bench_states LINE - run the commands of LINE (joined by ';') one at a
# time; BENCH_STATES: before each uring-open, how many of the listed files
# oprobe finds cached; BENCH_OUT: what they printed.
bench_states() {
	local part parts
	BENCH_STATES="" BENCH_OUT=""
	IFS=';' read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		case $part in
		*uring-open*)
			BENCH_STATES+="$(tr '\0' '\n' <"$SHUNIT_TMPDIR/app.list" | "$DCP_BUILD/tests/oprobe" - | grep -c '^cached ') "
			;;
		esac
		run sh -c "$part"
		BENCH_OUT+="$OUT$ERR"$'\n'
	done
	BENCH_STATES=${BENCH_STATES% }
}

# Recipe 8: record what the service (a process of a cgroup of the test)
# reads while it starts, while another process reads other files of the
# tree; the recording ends on SIGTERM (as systemctl stop ends it), before
# --for; after a remount, warm --manifest of it brings back the service's
# files (the prober) and none of the other's.
test_record_a_service_start_recipe() {
	local cgm m=$SHUNIT_TMPDIR/app.jsonl rec sock=$SHUNIT_TMPDIR/notify.sock pid i f
	cgm=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	CG=
	[ -n "$cgm" ] && CG=$(mktemp -d "$cgm/dcprobe-recipe.XXXXXX" 2>/dev/null)
	if [ -z "$CG" ]; then
		startSkipping
		fail "no writable cgroup v2 hierarchy"
		return
	fi
	CGPATH=${CG#"$cgm"}
	rec=$(recipe 8 | local_paths)
	own_loop || fail "cannot mount on a loop device of its own"
	rm -f "$m" "$sock" "$sock.log"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode(errors="replace") + "\n")' "$sock" "$sock.log" &
	local listener=$!
	for ((i = 0; i < 1000; i++)); do [ -S "$sock" ] && break; sleep 0.01; done
	NOTIFY_SOCKET=$sock bash -c "exec $rec" 2>"$SHUNIT_TMPDIR/rec.err" &
	pid=$!
	for ((i = 0; i < 1000; i++)); do
		grep -qx READY=1 "$sock.log" 2>/dev/null && break
		sleep 0.01
	done
	assertTrue "READY=1 within 10 s" "grep -qx READY=1 '$sock.log'"
	# The service: a process that moves itself into the cgroup, reads its
	# modules and config, and stays up (the recording ends while it runs,
	# as its ExecStartPost= ends it); the other process (outside) reads the
	# static files.
	rm -f "$SHUNIT_TMPDIR/up"
	bash -c 'echo $$ >"$1/cgroup.procs" && cat "$2"/lib/python/mod1*.py "$2/config.toml" >/dev/null &&
		: >"$3" && exec sleep 600' - "$CG" "$APP" "$SHUNIT_TMPDIR/up" &
	local svc=$!
	for ((i = 0; i < 1000; i++)); do
		[ -e "$SHUNIT_TMPDIR/up" ] && break
		kill -0 "$svc" 2>/dev/null || break
		sleep 0.01
	done
	assertTrue "the service is up" "[ -e '$SHUNIT_TMPDIR/up' ]"
	cat "$APP"/static/*.css >/dev/null
	kill -TERM "$pid"
	wait "$pid"
	assertEquals "recorded ($(cat "$SHUNIT_TMPDIR/rec.err"))" 0 $?
	kill "$svc"
	wait "$svc" 2>/dev/null
	kill "$listener"
	wait "$listener" 2>/dev/null
	rmdir "$CG"
	CG=
	assertEquals "the service's files, none of the other's" \
		"$(cd / && printf '%s\n' "$APP"/lib/python/mod1*.py "$APP/config.toml" | sort)" \
		"$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("type") == "entry" and o.get("kind") == "file":
        print(o["path"])' "$m" | sort)"
	loop_cold || fail "cannot remount"
	run warm --manifest="$m"
	assertEquals "restore ($ERR)" 0 "$RC"
	for f in "$APP"/lib/python/mod1*.py "$APP/config.toml"; do
		assertEquals "restored" "cached $f" "$("$DCP_BUILD/tests/oprobe" "$f")"
	done
	assertEquals "the other's file stays cold" "miss $APP/static/file1.css" \
		"$("$DCP_BUILD/tests/oprobe" "$APP/static/file1.css")"
	own_loop_end || fail "cannot mount the fixture back"
}

. "$SHUNIT2"
