#!/bin/bash
# A manifest larger than the memory a command may have (issue 40): warm
# --manifest and dcache-probe --manifest read it a window at a time, so a
# manifest larger than what `ulimit -v` leaves them is restored and
# verified exactly, with the same results as without the limit.  Before,
# both read the whole manifest first (its memory about its size on disk)
# and stopped at the record where memory ran out: "record N: Cannot
# allocate memory", exit 2.
#
# The fixture: an ext4 image of its own with 250,000 empty files in 25
# directories, names of 200 bytes (a snapshot of about 85 MB in format
# 2), and 40 files with pages resident in scattered runs (data to read
# back).  Plain build only: the sanitizers reserve terabytes of address
# space, so no small ulimit -v can be set under them.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

PS=$(getconf PAGESIZE)
LIMIT_KB=65536
mpy() { /usr/bin/python3 "$DCP_TESTS/lib/manifest.py" "$@"; }

# sanitized - an ASan/UBSan or TSan build: no small ulimit -v.
sanitized() { grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address|thread)$' "${DCP_BUILD:-$DCP_BIN/..}/CMakeCache.txt" 2>/dev/null; }

oneTimeSetUp() {
	sanitized && return 0
	# 128-byte inodes: the 250,000 of them take 32 MB of the image.
	MNT=$(fixture_new 384 -b 4096 -I 128 -N 262144) || fail "fixture"
	M=$MNT.jsonl
	/usr/bin/python3 - "$MNT/w" <<'PY' || fail "the tree"
import os, sys
root = sys.argv[1]
for d in range(25):
    p = os.path.join(root, "d%02d" % d)
    os.makedirs(p)
    for i in range(10000):
        os.mknod(os.path.join(p, "f%06d" % (d * 10000 + i) + "x" * 193))
data = os.path.join(root, "data")
os.makedirs(data)
for i in range(40):
    with open(os.path.join(data, "g%02d" % i), "wb") as f:
        f.write(os.urandom(64 * 4096))
PY
	chmod -R a+rX "$MNT/w"
	fixture_cold "$MNT" || fail "remount"
	# Every name looked up; of each data file, every third page read.
	/usr/bin/python3 - "$MNT/w" "$PS" <<'PY' || fail "the workload"
import os, sys
root, ps = sys.argv[1], int(sys.argv[2])
for d, _, files in os.walk(root):
    for f in files:
        os.stat(os.path.join(d, f))
for i in range(40):
    fd = os.open(os.path.join(root, "data", "g%02d" % i), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    for p in range(i % 3, 64, 3):
        os.pread(fd, 1, p * ps)
    os.close(fd)
PY
	dcache-probe -r --ranges --json "$MNT/w" >"$M" || fail "snapshot"
}

oneTimeTearDown() { rm -f "${M:-}"; }

# pin_start MANIFEST DEV / pin_stop - what is resident of MANIFEST's ranges
# and of DEV's cache locked in memory meanwhile (manifest.py pin, as in
# cmd/manifest): the machine's DAMON pageout may reclaim an idle page at
# any moment, and a verify would then rightly count it missing.
pin_start() {
	local line
	coproc PIN { mpy pin "$1" "$2"; }
	read -r line <&"${PIN[0]}"
	[[ $line == pinned\ * ]] || { echo "pin_start: $line" >&2; return 1; }
}
pin_stop() {
	local in=${PIN[1]} out=${PIN[0]} pid=$PIN_PID
	[ -n "$pid" ] || return 0
	exec {in}>&- {out}<&-
	wait "$pid"
}

# summary - the last --json summary on stdin without what tells one run
# from another: elapsed time, rates, threads, the default --max-bytes (a
# share of the memory available at the start), and the resident pages of
# a verify, which DAMON may have reclaimed a page of before the pin
# (checked apart: resident + evicted = pages).
summary() {
	json_get 'json.dumps({k: ({a: b for a, b in v.items() if a not in ("max_bytes", "resident", "resident_bytes", "resident_percent", "recently_evicted")} if k == "data" else v) for k, v in [o for o in objs if o["type"] == "summary"][-1].items() if k not in ("elapsed_s", "entries_per_s", "paths_per_s", "jobs")}, sort_keys=True)'
}

# A restore and a verify of a manifest larger than the memory ulimit -v
# leaves them: the same results as without a limit, every recorded page
# back, exit 0.  Before: "'M': record N: Cannot allocate memory", exit 2.
test_larger_than_its_memory() {
	local way size lim free out cmd short ev
	if sanitized; then
		echo "  (skipped under sanitizers: no small ulimit -v)"
		return 0
	fi
	size=$(stat -c %s "$M")
	assertTrue "the manifest ($size bytes) is larger than the limit ($LIMIT_KB KiB)" \
		"[ $size -gt $((LIMIT_KB * 1024)) ]"
	assertEquals "250,000 entries and more" 1 "$(($(grep -c '"type":"entry"' "$M") > 250000))"
	for cmd in warm dcache-probe; do
		for way in limited free; do
			fixture_cold "$MNT" || fail "remount"
			# dcache-probe verifies what warm restored first (unlimited).
			[ $cmd = dcache-probe ] && { warm -q --manifest="$M" || fail "restore"; }
			if [ $cmd = dcache-probe ]; then
				pin_start "$M" "$(findmnt -n -o SOURCE "$MNT")" || fail "pin"
				ev=$(mpy evicted "$M")
			fi
			# (dcache-probe -s: the summary, not 250,067 records.)
			short=$([ $cmd = dcache-probe ] && echo -s)
			if [ $way = limited ]; then
				run bash -c 'ulimit -v "$1" && shift && exec "$@"' - "$LIMIT_KB" \
					/usr/bin/time -o "$MNT.rss" -f %M "$DCP_BIN/$cmd" --json $short \
					--manifest="$M"
			else
				run /usr/bin/time -o "$MNT.rss" -f %M "$DCP_BIN/$cmd" --json $short \
					--manifest="$M"
			fi
			assertEquals "$cmd, $way: exit 0 ($ERR)" 0 "$RC"
			out=$(summary <<<"$OUT")
			echo "  $cmd, $way: peak RSS $(tail -1 "$MNT.rss") KiB, manifest $size bytes: $out" >&2
			if [ $cmd = warm ]; then
				assertEquals "$cmd, $way: every recorded page back, no other" "" \
					"$(mpy check "$M" 1 | grep -v '^files ' | head -3)"
			else
				assertEquals "$cmd, $way: every name cached, every recorded page resident ($ev reclaimed before)" \
					"250067 250067 ok" \
					"$(json_get '"%d %d %s" % (lambda s: (s["paths"], s["cached"], "ok" if s["data"]["resident"] + '"$ev"' == s["data"]["pages"] > 0 else s["data"]))([o for o in objs if o["type"] == "summary"][-1])' <<<"$OUT")"
			fi
			[ $cmd = dcache-probe ] && pin_stop
			[ $way = limited ] && lim=$out || free=$out
		done
		assertEquals "$cmd: the same results with and without the limit" "$free" "$lim"
	done
}

. "$SHUNIT2"
