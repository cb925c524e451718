#!/bin/bash
# Tests for warm on real cold-cache fixtures: after warm, RESOLVE_CACHED
# probes (cachedopen --path) must find every entry in the dentry cache.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

NL=$'new\nline'
OPROBE=${DCP_BUILD:-$DCP_BIN/..}/tests/oprobe

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/a/b/c" "$MNT/private/inner" "$MNT/tree/x/y/z" "$MNT/sub"
	echo data >"$MNT/a/b/c/file"
	echo other >"$MNT/a/other"
	echo secret >"$MNT/private/inner/secret"
	chmod 0700 "$MNT/private"
	for d in d1 d2 d3 d4; do
		mkdir "$MNT/tree/$d"
		for i in $(seq -w 1 40); do
			: >"$MNT/tree/$d/f$i.txt"
		done
		: >"$MNT/tree/$d/keep.dat"
	done
	: >"$MNT/tree/x/y/z/deep"
	ln -s a "$MNT/link"
	ln -s nowhere "$MNT/dangling"
	: >"$MNT/$NL"
	: >"$MNT/$(printf 'x\377')"
	mkfifo "$MNT/fifo"
	# A second filesystem mounted inside the first one, for -x.
	SUBIMG=$(dirname "$MNT")/sub.img
	truncate -s 16M "$SUBIMG"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$SUBIMG" >/dev/null ||
		fail "cannot make the inner fixture"
	mount -o loop "$SUBIMG" "$MNT/sub" || fail "cannot mount the inner fixture"
	mkdir "$MNT/sub/in"
	: >"$MNT/sub/in/file"
	# Every path of both trees, as NUL-separated records.
	mapfile -d '' ALL < <(find "$MNT" -print0)
	mapfile -d '' OUTER < <(find "$MNT" -xdev -print0)
}

oneTimeTearDown() {
	umount -l "$MNT/sub" 2>/dev/null || true
}

# retry CMD... - a few tries: io_uring releases a finished command's
# descriptors asynchronously, so umount may briefly be EBUSY (as in
# fixture_cold_busy).  No other program can keep a fixture busy: it is in
# the suite's own mount namespace (fixture.sh).
retry() {
	local i
	for i in 1 2 3 4 5; do
		"$@" 2>/dev/null && return 0
		sleep 0.2
	done
	"$@"
}

# Both filesystems cold: the inner one is unmounted and mounted again too.
setUp() {
	sync -f "$MNT/sub" 2>/dev/null
	retry umount "$MNT/sub" || fail "cannot unmount the inner fixture"
	retry fixture_cold "$MNT" || fail "cannot remount fixture"
	mountpoint -q "$MNT" || retry mount -o loop "$MNT.img" "$MNT" || fail "cannot mount fixture"
	retry mount -o loop "$SUBIMG" "$MNT/sub" || fail "cannot mount the inner fixture"
}

# probe_misses PATH... - how many of the paths miss the dentry cache, by
# cachedopen's RESOLVE_CACHED probe (which never warms what it probes).
# A probe never warms anything, so a real miss misses every time; a
# spurious one (a mount anywhere on the machine during the RCU walk, see
# lib/rely.sh's cached_count) does not repeat: a path counts as a miss
# when three probes in a row missed it.
probe_misses() {
	local i f=$SHUNIT_TMPDIR/misses
	local -a paths=("$@")
	for i in 1 2 3; do
		# The missed paths, NUL-ended, as bytes (a name need not be UTF-8).
		cachedopen -P --path --json "${paths[@]}" | python3 -c '
import base64, json, sys
out = sys.stdout.buffer
for l in sys.stdin:
    o = json.loads(l)
    if o.get("state") == "miss":
        p = o["path"]
        out.write((base64.b64decode(p["bytes"]) if isinstance(p, dict) else p.encode()) + b"\0")
' >"$f"
		mapfile -d '' -t paths <"$f"
		[ ${#paths[@]} -gt 0 ] || break
	done
	echo "${#paths[@]}"
}

# cached PATH - true when a probe of PATH is served from the cache.
cached() {
	cachedopen -q -P --path "$1"
}

test_tree_warm_leaves_everything_cached() {
	local before
	before=$(probe_misses "${ALL[@]}")
	assertTrue "a cold fixture misses (got $before misses)" "[ $before -gt 150 ]"
	run warm -r "$MNT"
	assertEquals "exit status: $ERR" 0 "$RC"
	assertEquals "quiet: nothing on stdout" "" "$OUT"
	assertContains "summary on stderr" "$ERR" "${#ALL[@]} entries, 0 errors in "
	assertContains "$ERR" "entries/s)"
	assertEquals "every entry is cached afterwards" 0 "$(probe_misses "${ALL[@]}")"
}

# The suite's own prober, when it is built: the same verdict.
test_dcache_probe_agrees() {
	command -v dcache-probe >/dev/null || { startSkipping; return; }
	run warm -r -q "$MNT"
	assertEquals 0 "$RC"
	run dcache-probe -r --json "$MNT"
	# A mount elsewhere on this shared machine fails RCU walks in flight
	# (EAGAIN); dcache-probe does not ask twice.  A real miss stays a miss.
	[ "$RC" = 0 ] || run dcache-probe -r --json "$MNT"
	assertEquals "dcache-probe: every entry cached: $ERR $(grep -v '"cached"' <<<"$OUT")" 0 "$RC"
	assertEquals "${#ALL[@]} ${#ALL[@]} 0" \
		"$(json_get '" ".join(str(objs[-1][k]) for k in ("paths", "cached", "miss"))' <<<"$OUT")"
}

test_check_counts_match_the_probe() {
	local cold
	# Warm some entries by hand, so the tree is partly cold.
	ls -l "$MNT/a/b" "$MNT/tree/d2" >/dev/null
	cold=$(probe_misses "${ALL[@]}")
	run warm -r --check --json "$MNT"
	assertEquals "exit status: $ERR" 0 "$RC"
	assertEquals "the cold count is the probe's" "$cold" \
		"$(json_get 'objs[-1]["cold"]' <<<"$OUT")"
	assertEquals "$cold" "$(json_get 'objs[-1]["newly_warmed"]' <<<"$OUT")"
	assertEquals "0" "$(json_get 'objs[-1]["still_miss"]' <<<"$OUT")"
	assertEquals "${#ALL[@]}" "$(json_get 'objs[-1]["cached_after"]' <<<"$OUT")"
	assertEquals "$(( ${#ALL[@]} - cold ))" "$(json_get 'objs[-1]["cached_before"]' <<<"$OUT")"
	# A second check finds nothing cold.
	run warm -r --check "$MNT"
	assertEquals 0 "$RC"
	assertContains "$ERR" "${#ALL[@]} entries: 0 were cold, ${#ALL[@]} now cached (0 newly warmed), 0 still miss, 0 errors"
}

test_check_text_summary_counts() {
	ls -l "$MNT/tree/d1" >/dev/null
	local cold
	cold=$(probe_misses "${OUTER[@]}")
	run warm -r -x --check "$MNT"
	assertEquals 0 "$RC"
	assertEquals "no entry still misses: nothing listed" "" "$OUT"
	assertContains "$ERR" "${#OUTER[@]} entries: $cold were cold, ${#OUTER[@]} now cached ($cold newly warmed), 0 still miss, 0 errors"
}

test_a_path_warms_its_whole_chain() {
	assertFalse "cold before" "cached $MNT/a"
	run warm "$MNT/a/b/c/file"
	assertEquals 0 "$RC"
	assertContains "$ERR" "1 entry, 0 errors"
	for p in "$MNT/a" "$MNT/a/b" "$MNT/a/b/c" "$MNT/a/b/c/file"; do
		assertTrue "$p is cached" "cached '$p'"
	done
	assertFalse "a sibling stays cold" "cached $MNT/a/other"
	assertFalse "not recursive" "cached $MNT/tree/d1"
}

test_still_miss_is_exit_1() {
	# /proc/sys revalidates every dentry: RESOLVE_CACHED never succeeds there.
	[ -e /proc/sys/kernel/hostname ] || startSkipping
	run warm --check /proc/sys/kernel/hostname "$MNT/a/other"
	assertEquals "exit 1: something still misses" 1 "$RC"
	assertEquals "only what still misses is listed" \
		"miss miss /proc/sys/kernel/hostname" "$OUT"
	assertContains "$ERR" "2 entries: 2 were cold, 1 now cached (1 newly warmed), 1 still miss, 0 errors"
	run warm --check -v "$MNT/a/other"
	assertEquals 0 "$RC"
	assertEquals "-v lists every path, with both states" "cached cached $MNT/a/other" "$OUT"
}

test_missing_paths_are_reported_and_the_run_goes_on() {
	run warm "$MNT/absent" "$MNT/a/other" "$MNT/a/b/nothing/here"
	assertEquals "exit 2: an error" 2 "$RC"
	assertContains "$ERR" "warm: '$MNT/absent': No such file or directory"
	assertContains "$ERR" "warm: '$MNT/a/b/nothing/here': No such file or directory"
	assertContains "$ERR" "3 entries, 2 errors in"
	assertTrue "the good path was warmed" "cached $MNT/a/other"
	run warm -r "$MNT/absent" "$MNT/tree/x"
	assertEquals 2 "$RC"
	assertContains "$ERR" "warm: '$MNT/absent': No such file or directory"
	assertTrue "the tree was warmed" "cached $MNT/tree/x/y/z/deep"
	# Error wins over miss.
	run warm --check "$MNT/absent" /proc/sys/kernel/hostname
	assertEquals 2 "$RC"
}

# A PATH that is not there (or a tree that cannot be walked) is an error,
# never "now cached" for --check, and has no share: the metrics publish no
# dcprobe_cached_ratio for it and dcprobe_complete 0, as dcache-probe does.
test_a_path_not_there_is_no_share() {
	local nope=$MNT/nope r
	for r in "" -r; do
		# shellcheck disable=SC2086
		run warm $r --check "$nope"
		assertEquals "warm $r --check: exit" 2 "$RC"
		assertContains "warm $r --check: $ERR" "$ERR" "1 entry: "
		assertContains "warm $r --check: $ERR" "$ERR" " 0 now cached (0 newly warmed), 0 still miss, 1 error in"
		# shellcheck disable=SC2086
		run warm $r --check --json "$nope"
		assertEquals "warm $r --check --json: cached_after" "0 1" \
			"$(json_get '"%d %d" % (objs[-1]["cached_after"], objs[-1]["errors"])' <<<"$OUT")"
		# shellcheck disable=SC2086
		run warm $r --check --prometheus "$nope"
		assertEquals 2 "$RC"
		prom_check <<<"$OUT" || fail "bad exposition format"
		assertNotContains "warm $r: no ratio sample" "$OUT" "dcprobe_cached_ratio{"
		assertContains "warm $r: an error, not a negative" "$OUT" "state=\"error\"} 1"
		assertContains "warm $r: an error, not a negative" "$OUT" "state=\"negative\"} 0"
		assertContains "warm $r: not complete" "$OUT" "dcprobe_complete{command=\"warm\"$([ -n "$r" ] && echo ",root=\"$nope\"")} 0"
	done
	# A tree nobody may not list: no share for nobody.
	run as_nobody "$DCP_BIN/warm" -r --check --prometheus "$MNT/private"
	assertEquals "as nobody" 2 "$RC"
	assertNotContains "as nobody: no ratio sample" "$OUT" "dcprobe_cached_ratio{"
	assertContains "as nobody: not complete" "$OUT" "dcprobe_complete{command=\"warm\",root=\"$MNT/private\"} 0"
	# Beside a tree that is there: its own ratio stays.
	run warm -r --check --prometheus "$nope" "$MNT/tree/x"
	assertContains "$OUT" "dcprobe_cached_ratio{command=\"warm\",root=\"$MNT/tree/x\"} 1"
	assertContains "$OUT" "dcprobe_complete{command=\"warm\",root=\"$MNT/tree/x\"} 1"
}

test_unreadable_directory_as_nobody() {
	run as_nobody "$DCP_BIN/warm" -r -x "$MNT"
	assertEquals "exit 2: $ERR" 2 "$RC"
	assertContains "$ERR" "warm: '$MNT/private': cannot read directory: Permission denied"
	assertContains "$ERR" "warm: '$MNT/lost+found': cannot read directory: Permission denied"
	assertContains "$ERR" ", 2 errors in"
	assertTrue "the rest was warmed" "cached $MNT/tree/d4/f40.txt"
	assertTrue "the private directory itself was looked up" "cached $MNT/private"
	assertFalse "its contents were not" "cached $MNT/private/inner"
	run as_nobody "$DCP_BIN/warm" "$MNT/private/inner/secret"
	assertEquals 2 "$RC"
	assertContains "$ERR" "secret': Permission denied"
}

test_out_of_descriptors() {
	# One descriptor left free by the parent, under a limit of 300 (not
	# counted: below warm's floor of descriptors, ulimit -n 4, nothing
	# starts): the walker cannot open a subdirectory while its parent is
	# open.  Every failure is reported; the run goes on.
	run python3 "$DCP_TESTS/lib/withfds.py" 300 1 warm -r -x "$MNT"
	assertEquals "exit 2: $ERR" 2 "$RC"
	assertContains "$ERR" "cannot read directory: Too many open files"
	assertContains "$ERR" "entries, "
	assertTrue "top-level entries were still warmed" "cached $MNT/a"
	# One directory open and no descriptor to spare: the entries of a big
	# directory are stat'ed by the visitor instead of the pool.
	run python3 "$DCP_TESTS/lib/withfds.py" 300 1 warm -r "$MNT/tree/d1"
	assertEquals "exit status: $ERR" 0 "$RC"
	assertContains "$ERR" "42 entries, 0 errors"
	assertTrue "cached $MNT/tree/d1/keep.dat"
	assertTrue "cached $MNT/tree/d1/f40.txt"
}

# A task limit refuses 64 threads: warm runs with fewer, and completes.
test_task_limit() {
	# LeakSanitizer cannot stop the world under a task limit this tight.
	local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export ASAN_OPTIONS
	run as_nobody bash -c 'ulimit -u 24 && exec "$1" -r --json "$2"' _ "$DCP_BIN/warm" "$MNT/tree"
	assertEquals "exit status: $ERR" 0 "$RC"
	assertTrue "fewer threads: $OUT" "[ $(json_get 'objs[-1]["jobs"]' <<<"$OUT") -lt 64 ]"
	assertEquals 173 "$(json_get 'objs[-1]["entries"]' <<<"$OUT")"
	assertTrue "cached $MNT/tree/x/y/z/deep"
	run as_nobody bash -c 'ulimit -u 24 && exec "$1" --json "$2"' _ "$DCP_BIN/warm" "$MNT/a"
	assertEquals 0 "$RC"
	assertTrue "[ $(json_get 'objs[-1]["jobs"]' <<<"$OUT") -lt 64 ]"
}

test_unreadable_lists() {
	printf '%s\n' "$MNT/a/other" >"$SHUNIT_TMPDIR/list"
	chmod 0600 "$SHUNIT_TMPDIR/list"
	chmod 0755 "$SHUNIT_TMPDIR"
	run as_nobody "$DCP_BIN/warm" --from "$SHUNIT_TMPDIR/list" --from "$MNT/nolist" "$MNT/tree/d1"
	assertEquals "exit 2: $ERR" 2 "$RC"
	assertContains "$ERR" "warm: cannot read '$SHUNIT_TMPDIR/list': Permission denied"
	assertContains "$ERR" "warm: cannot read '$MNT/nolist': No such file or directory"
	assertContains "$ERR" "1 entry, 2 errors"
	assertTrue "the argument was warmed" "cached $MNT/tree/d1"
}

test_from_stdin_nul_with_newline_names() {
	printf '%s\0' "$MNT/$NL" "$MNT/tree/d3/f07.txt" >"$SHUNIT_TMPDIR/in"
	run warm --files0-from=- <"$SHUNIT_TMPDIR/in"
	assertEquals "exit status: $ERR" 0 "$RC"
	assertContains "$ERR" "2 entries, 0 errors"
	assertTrue "the name with a newline is cached" "cached '$MNT/$NL'"
	assertTrue "cached $MNT/tree/d3/f07.txt"
	assertFalse "the others are not" "cached $MNT/tree/d3/f08.txt"
	# The same list read as lines names two files that do not exist.
	run warm --from - <<<"$MNT/$NL"
	assertEquals 2 "$RC"
	assertContains "$ERR" "$MNT/new': No such file or directory"
	# A NUL byte in a newline-separated list is bad input; the rest goes on.
	printf '%s\n%s\0x\n' "$MNT/a/other" "$MNT/a" >"$SHUNIT_TMPDIR/in"
	run warm --from - <"$SHUNIT_TMPDIR/in"
	assertEquals 2 "$RC"
	assertContains "$ERR" "standard input: record 2: a path contains a NUL byte (use --files0-from)"
	assertTrue "cached $MNT/a/other"
	# -r over a list: each path is a tree.
	run warm -r --from - <<<"$MNT/tree/x"
	assertEquals 0 "$RC"
	assertTrue "cached $MNT/tree/x/y/z/deep"
}

test_one_file_system() {
	run warm -r -x --json "$MNT"
	assertEquals 0 "$RC"
	assertEquals "-x: the entries of the outer filesystem" "${#OUTER[@]}" \
		"$(json_get 'objs[-1]["entries"]' <<<"$OUT")"
	assertTrue "the mount point itself is looked up" "cached $MNT/sub"
	assertFalse "the inner filesystem stays cold" "cached $MNT/sub/in"
	run warm -r "$MNT"
	assertEquals 0 "$RC"
	assertTrue "without -x it is warmed" "cached $MNT/sub/in/file"
}

test_max_depth() {
	run warm -r --max-depth 2 --json "$MNT/tree"
	assertEquals 0 "$RC"
	assertTrue "depth 1" "cached $MNT/tree/x"
	assertTrue "depth 2" "cached $MNT/tree/x/y"
	assertTrue "depth 2 files" "cached $MNT/tree/d1/f01.txt"
	assertFalse "depth 3 is not warmed" "cached $MNT/tree/x/y/z"
	# tree + 5 subdirectories + 4 x 41 files + y
	assertEquals 171 "$(json_get 'objs[-1]["entries"]' <<<"$OUT")"
	run warm -r --max-depth 0 "$MNT/a"
	assertEquals 0 "$RC"
	assertContains "$ERR" "1 entry"
	assertFalse "cached $MNT/a/b"
}

test_exclude() {
	run warm -r --exclude '*.txt' --exclude y --json "$MNT/tree"
	assertEquals 0 "$RC"
	assertTrue "cached $MNT/tree/d1/keep.dat"
	assertFalse "an excluded name" "cached $MNT/tree/d1/f01.txt"
	assertFalse "an excluded directory" "cached $MNT/tree/x/y"
	assertTrue "cached $MNT/tree/x"
	# tree, d1-d4, keep.dat x 4, x
	assertEquals 10 "$(json_get 'objs[-1]["entries"]' <<<"$OUT")"
	# A glob with a slash matches the whole path.
	run warm -r --exclude "$MNT/tree/d2" "$MNT/tree"
	assertEquals 0 "$RC"
	assertFalse "a path glob" "cached $MNT/tree/d2/f01.txt"
	assertTrue "cached $MNT/tree/d3/f01.txt"
}

test_symlinks() {
	run warm -r "$MNT/link"
	assertEquals 0 "$RC"
	assertTrue "the link is looked up" "cached $MNT/link"
	assertFalse "-P: not followed" "cached $MNT/a"
	run warm -r -H "$MNT/link"
	assertEquals 0 "$RC"
	assertTrue "-H follows a link given as PATH" "cached $MNT/a/b/c/file"
	run warm -r -L "$MNT/dangling" "$MNT/tree/x"
	assertEquals "a dangling link is no error with -L" 0 "$RC"
	assertTrue "cached $MNT/dangling"
}

test_follow_all_and_loops() {
	mkdir -p "$MNT/ltree/real"
	: >"$MNT/ltree/real/f"
	ln -s ../a "$MNT/ltree/to_a"
	ln -s .. "$MNT/ltree/real/up"
	setUp
	run warm -r "$MNT/ltree"
	assertEquals 0 "$RC"
	assertFalse "no -L: links are not followed" "cached $MNT/a/b"
	run warm -r -L "$MNT/ltree"
	assertEquals "a directory cycle is an error: $ERR" 2 "$RC"
	assertContains "$ERR" "Too many levels of symbolic links"
	assertTrue "-L follows links in the tree" "cached $MNT/a/b/c/file"
	rm -r "$MNT/ltree"
}

# -L --check: a link whose probe missed is warmed once the walk is done, as
# the walker follows it last: following it when met warms its target's
# path, which the walk may not have probed yet.  Here a/lf -> ../b/c/file
# is met first (one thread, inode order), with b cached and c cold: every
# entry's "before" must be the prober's, c a miss.  (Before: c, and its
# file, came out cached, the link having warmed them; cmd/overlap's -L
# rounds met it by chance under ASan.)
test_check_L_warms_a_cold_link_last() {
	local d=$MNT/lk got
	mkdir -p "$d/a" "$d/b/c" && : >"$d/b/c/file"
	ln -s ../b/c/file "$d/a/lf"
	stat -L "$d/a/lf" >/dev/null # the link's atime, updated once
	python3 "$DCP_TESTS/lib/mktree.py" follow "$d" >"$SHUNIT_TMPDIR/lk.list" 2>/dev/null
	setUp
	stat "$d/a" "$d/b" >/dev/null
	ls "$d/a" >/dev/null
	"$OPROBE" -L - <"$SHUNIT_TMPDIR/lk.list" >"$SHUNIT_TMPDIR/lk.want"
	assertContains "the prober: c misses" "$(cat "$SHUNIT_TMPDIR/lk.want")" "miss $d/b/c"
	run warm -r -L -j 1 --check --json -v "$d"
	assertEquals "exit ($ERR)" 0 "$RC"
	printf '%s\n' "$OUT" >"$SHUNIT_TMPDIR/lk.got"
	got=$(python3 - "$SHUNIT_TMPDIR/lk.want" "$SHUNIT_TMPDIR/lk.got" <<'PY'
import json, sys
want = {}
for line in open(sys.argv[1]):
    state, path = line.rstrip("\n").split(" ", 1)
    want[path] = "cached" if state in ("cached", "negative") else "miss"
seen, bad = 0, []
for line in open(sys.argv[2]):
    o = json.loads(line)
    if o.get("type") != "path":
        continue
    seen += 1
    if want.get(o["path"]) != o["before"]:
        bad.append("%s: warm %s, the prober %s" % (o["path"], o["before"], want.get(o["path"])))
print("%d of %d %s" % (seen, len(want), "; ".join(bad)))
PY
)
	assertEquals "every path's before is the prober's" "6 of 6 " "$got"
	rm -rf "$d"
}

test_verbose_and_hostile_names() {
	run warm -v "$MNT/$NL" "$MNT/$(printf 'x\377')" "$MNT/fifo"
	assertEquals 0 "$RC"
	assertContains "$OUT" 'new\nline'
	assertContains "$OUT" 'x\xff'
	assertEquals "one line per path" 3 "$(wc -l <<<"$OUT")"
	assertTrue "a FIFO is looked up, never opened" "cached $MNT/fifo"
	run warm -r -v -x "$MNT/tree"
	assertEquals 0 "$RC"
	# tree, d1-d4 and x, 4 x 41 files, y, z, deep
	assertEquals 173 "$(sort <<<"$OUT" | uniq | wc -l)"
}

test_json() {
	run warm -r --check -v --json "$MNT/tree/x" "$MNT/absent"
	assertEquals 2 "$RC"
	assertEquals "" "$ERR"
	assertEquals "5 objects per path and a summary" "path path path path path summary" \
		"$(json_types <<<"$OUT" | sort | xargs)"
	assertEquals "ENOENT" "$(json_get '[o for o in objs if o.get("path", "").endswith("absent")][0]["errno"]' <<<"$OUT")"
	assertEquals "False" "$(json_get '[o for o in objs if o.get("path", "").endswith("absent")][0]["warmed"]' <<<"$OUT")"
	assertEquals "miss cached" "$(json_get '" ".join([(o["before"] + " " + o["after"]) for o in objs if o.get("path") == "'"$MNT"'/tree/x/y/z/deep"])' <<<"$OUT")"
	assertEquals "5 1 2" "$(json_get '" ".join(str(objs[-1][k]) for k in ("entries","errors","status"))' <<<"$OUT")"
	# Without -v: errors and the summary only.
	run warm --json "$MNT/a/other"
	assertEquals "summary" "$(json_types <<<"$OUT")"
	assertEquals "64" "$(json_get 'objs[0]["jobs"]' <<<"$OUT")"
	run warm -r --json -j 3 "$MNT/tree/x"
	assertEquals "3" "$(json_get 'objs[0]["jobs"]' <<<"$OUT")"
	# A directory that cannot be read is an "error" object.
	run as_nobody "$DCP_BIN/warm" -r --json "$MNT/private"
	assertEquals 2 "$RC"
	assertEquals "readdir EACCES" "$(json_get '" ".join([o["op"] + " " + o["errno"] for o in objs if o["type"] == "error"])' <<<"$OUT")"
	# Names that are not UTF-8 keep their bytes.
	run warm -v --json "$MNT/$(printf 'x\377')"
	assertEquals "$(printf '%s' "$MNT/$(printf 'x\377')" | base64 -w0)" \
		"$(json_get 'objs[0]["path"]["bytes"]' <<<"$OUT")"
}

test_prometheus() {
	local t="$MNT/tree" w='command="warm"'
	# The tree given twice: one series per root (the first), checked by
	# promtool and for duplicates.
	run warm -r --check --prometheus "$t" "$MNT/a" "$t"
	assertEquals 0 "$RC"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format: $OUT"
	assertEquals "173 0 173 0 0 173 0 1 0" "$(prom_check "dcprobe_warm_entries{$w,root=\"$t\"}" \
		"dcprobe_warm_errors{$w,root=\"$t\"}" "dcprobe_warm_cold_entries{$w,root=\"$t\"}" \
		"dcprobe_walk_errors{$w,root=\"$t\"}" "dcprobe_paths{$w,root=\"$t\",state=\"miss\"}" \
		"dcprobe_paths{$w,root=\"$t\",state=\"cached\"}" "dcprobe_exit_status{$w}" \
		"dcprobe_complete{$w,root=\"$t\"}" "dcprobe_paths{$w,root=\"$MNT/a\",state=\"miss\"}" \
		<<<"$OUT" | xargs)"
	assertEquals "one series per root" 1 "$(grep -c "^dcprobe_warm_entries{$w,root=\"$t\"}" <<<"$OUT")"
	assertEquals "HELP once per family" 1 "$(grep -c '^# HELP dcprobe_warm_entries ' <<<"$OUT")"
	assertContains "$OUT" "dcprobe_duration_seconds{$w} "
	assertContains "$OUT" "dcprobe_last_run_timestamp_seconds{$w} "
	assertEquals "no text summary on stderr in a machine format (as dcache-probe)" "" "$ERR"
	# Without -r: one series for the run, no root label; no check metrics.
	run warm --prometheus "$MNT/a" "$MNT/a"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format: $OUT"
	assertEquals "2 0" "$(prom_check "dcprobe_warm_entries{$w}" "dcprobe_exit_status{$w}" <<<"$OUT" | xargs)"
	assertNotContains "no check metrics without --check" "$OUT" "cold_entries"
	assertNotContains "no probe states without --check" "$OUT" "dcprobe_paths"
	# An error is published too: status 2 in the metrics.
	run warm -r --prometheus "$MNT/absent" "$t"
	assertEquals 2 "$RC"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format: $OUT"
	assertEquals "2 1" "$(prom_check "dcprobe_exit_status{$w}" "dcprobe_warm_errors{$w,root=\"$MNT/absent\"}" <<<"$OUT" | xargs)"
}

test_quiet_and_progress() {
	run warm -q -r "$MNT/tree"
	assertEquals 0 "$RC"
	assertEquals "" "$OUT$ERR"
	run warm -q "$MNT/absent"
	assertEquals 2 "$RC"
	assertEquals "errors are still shown" "warm: '$MNT/absent': No such file or directory" "$ERR"
	# Not a terminal: no progress unless asked; --progress forces it.
	run warm --from - < <(echo "$MNT/a"; sleep 1.2; echo "$MNT/a/other")
	assertNotContains "$ERR" $'\r'
	run warm --progress --from - < <(echo "$MNT/a"; sleep 1.2; echo "$MNT/a/other")
	assertEquals 0 "$RC"
	# Under ThreadSanitizer the progress thread's timed wait never times
	# out here (no tick in 1.2 s; cause not found, see tests/README.md).
	if ! grep -q '^DCP_SANITIZE:[A-Z]*=thread$' "$DCP_BUILD/CMakeCache.txt" 2>/dev/null; then
		assertContains "$ERR" $'\r\033[Kwarm: 1 entry, 0 errors, '
		assertContains "the summary follows a cleared line" "$ERR" $'\r\033[Kwarm: 2 entries, 0 errors in'
	fi
	run warm --progress --no-progress --from - < <(echo "$MNT/a"; sleep 1.2)
	assertNotContains "$ERR" $'\r'
}

test_many_paths_in_parallel() {
	local list=()
	for d in d1 d2 d3 d4; do
		for i in $(seq -w 1 40); do
			list+=("$MNT/tree/$d/f$i.txt")
		done
	done
	run warm -j 7 "${list[@]}"
	assertEquals 0 "$RC"
	assertContains "$ERR" "160 entries, 0 errors"
	assertEquals 0 "$(probe_misses "${list[@]}")"
	run warm -j 1 --check "${list[@]}"
	assertContains "$ERR" "160 entries: 0 were cold"
}

test_usage_errors() {
	run warm
	assertEquals 64 "$RC"
	assertContains "$ERR" "no PATH given"
	for bad in "-j 0" "-j 1025" "-j x" "--max-depth -1 -r" "--max-depth x -r" \
		"-x" "--exclude x" "--json -0" "--json --prometheus" \
		"-v --prometheus" "--bogus"; do
		# shellcheck disable=SC2086
		run warm $bad /
		assertEquals "warm $bad" 64 "$RC"
	done
	run warm --from - --from - </dev/null
	assertEquals 64 "$RC"
	run warm ""
	assertEquals 64 "$RC"
	run warm --help
	assertEquals 0 "$RC"
	assertContains "$OUT" "--check"
	run warm --version
	assertContains "$OUT" "warm (dcprobe)"
}

# Every option of --help is in the man page and the bash completion, and
# the completion completes.
test_man_and_completion_cover_every_option() {
	local src=${DCP_SRC:-$DCP_TESTS/..} o missing=
	for o in $(warm --help | grep -E '^ +(-., )?--' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
		grep -qF -- "$o" "$src/completions/warm" || missing+=" completion:$o"
		grep -qF -- "${o//-/\\-}" "$src/man/warm.1" || missing+=" man:$o"
	done
	assertEquals "" "$missing"
	[ -r /usr/share/bash-completion/bash_completion ] || startSkipping
	run bash -c '. /usr/share/bash-completion/bash_completion; . "$1/completions/warm"
		COMP_WORDS=(warm --che); COMP_CWORD=1; COMP_LINE="warm --che"; COMP_POINT=10
		_warm; echo "${COMPREPLY[*]}"
		COMP_WORDS=(warm -j ""); COMP_CWORD=2; COMP_LINE="warm -j "; COMP_POINT=8
		_warm; echo "${COMPREPLY[*]}"' _ "$src"
	assertEquals "--check
8 16 32 64 128" "$OUT"
}

# no_openat2 ERRNO CMD... - run CMD where every openat2(2) fails with ERRNO
# (a seccomp filter), as on a kernel without it (ENOSYS) or without
# RESOLVE_CACHED (EINVAL).  x86-64 only.
no_openat2() {
	python3 - "$@" <<'PY'
import ctypes, errno, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
err = getattr(errno, sys.argv[1])
# ld [nr]; jeq 437 ? errno : allow
code = [(0x20, 0, 0, 0), (0x15, 0, 1, 437), (0x06, 0, 0, 0x00050000 | err),
        (0x06, 0, 0, 0x7fff0000)]
buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *c) for c in code))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(code), ctypes.cast(buf, ctypes.c_void_p))
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(prog), 0, 0):
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[2], sys.argv[2:])
PY
}

test_cannot_probe_is_exit_3() {
	[ "$(uname -m)" = x86_64 ] || startSkipping
	run no_openat2 ENOSYS warm --check "$MNT/a"
	assertEquals "no openat2: $ERR" 3 "$RC"
	assertContains "$ERR" "openat2"
	run no_openat2 EINVAL warm -r --check "$MNT/a"
	assertEquals "no RESOLVE_CACHED: $ERR" 3 "$RC"
	run no_openat2 ENOSYS warm -r "$MNT/a"
	assertEquals "without --check nothing is probed" 0 "$RC"
	assertTrue "and the tree is warmed" "cached $MNT/a/b/c/file"
}

test_write_error() {
	warm -v "$MNT/a" >/dev/full 2>/dev/null
	assertEquals "write error is exit 2" 2 $?
	warm --prometheus "$MNT/a" >/dev/full 2>/dev/null
	assertEquals 2 $?
}

# Messages never share a line: 64 threads failing on 4,000 paths at once,
# while the main thread reports every tenth record of the list (empty) as
# it reads it.  Every stderr line is one whole message (glibc's error(3)
# writes one in pieces, which the threads interleaved).
test_messages_never_share_a_line() {
	local list=$SHUNIT_TMPDIR/bad.list i run bad lines
	for ((i = 0; i < 4000; i++)); do
		((i % 10 == 5)) && echo
		echo "$MNT/nx/p$i"
	done >"$list"
	for run in 1 2 3 4 5; do
		warm -j 64 --from="$list" >/dev/null 2>"$SHUNIT_TMPDIR/err"
		assertEquals "run $run: exit" 2 $?
		bad=$(grep -Evc -e "^warm: '$MNT/nx/p[0-9]+': No such file or directory\$" \
			-e "^warm: '$list': record [0-9]+: an empty PATH names nothing\$" \
			-e '^warm: 4000 entries, 4400 errors in [0-9.]+ s \([0-9]+ entries/s\)$' \
			"$SHUNIT_TMPDIR/err")
		lines=$(grep -Ec "^warm: '$MNT/nx/p[0-9]+': No such file or directory\$" "$SHUNIT_TMPDIR/err")
		assertEquals "run $run: lines that are not one whole message: $(grep -Ev -e ': No such file or directory$' -e 'names nothing$' -e 'entries/s)$' "$SHUNIT_TMPDIR/err" | head -3)" 0 "$bad"
		assertEquals "run $run: one line per missing path" 4000 "$lines"
		assertEquals "run $run: one line per empty record" 400 \
			"$(grep -c 'an empty PATH names nothing$' "$SHUNIT_TMPDIR/err")"
	done
}


# The device's read counters: "requests sectors" completed.
dev_reads() { awk '{ print $1, $3 }' "/sys/block/$1/stat"; }

# trace_ra LOG CMD... - CMD's opens and fadvise calls (LeakSanitizer cannot
# run under ptrace).
trace_ra() {
	local log=$1
	shift
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 60 \
		strace -f -qq -e trace=openat,fadvise64 -e signal=none -o "$log" "$@"
}

# A directory of 64 KiB or more on ext4 is read ahead through its block
# device (as root): the same blocks as listing it reads, in a few requests
# instead of one waited-for request per block.  As nobody, who may not open
# the device, it is listed as before, with the same result.  Only that
# device is opened, read-only; only the directory's extents (FIEMAP, asked
# here by python) are read ahead; not a small directory, not tmpfs, never
# by dcache-probe.
test_large_directory_is_read_ahead() {
	local m dev blocks nob root r0 s0 r1 s1 r2 s2 r3 s3 t=$SHUNIT_TMPDIR/ra
	m=$(fixture_new 64 -b 4096 -N 16384) || fail "cannot make fixture"
	mkdir "$m/big" "$m/small"
	(cd "$m/big" && seq -f 'an-entry-with-a-longer-name-%06g' 1 6000 | xargs touch)
	touch "$m/small/a" "$m/small/b"
	chmod -R a+rX "$m"
	# Listed now, so that the prober below never walks the tree itself.
	find "$m" >"$t.list"
	blocks=$(($(stat -c %s "$m/big") / 4096))
	assertTrue "the directory is large ($blocks blocks)" "[ $blocks -ge 32 ]"

	# The device after each remount: it may be another one each time.
	fixture_cold_busy "$m" && sync -f "$m"
	dev=$(fixture_dev "$m")
	read -r r0 s0 <<<"$(dev_reads "$dev")"
	run as_nobody warm -r -s "$m"
	read -r r1 s1 <<<"$(dev_reads "$dev")"
	nob=$OUT
	assertEquals "as nobody ($ERR)" 0 "$RC"
	assertEquals "as nobody: every name cached (the independent prober)" "" \
		"$("$OPROBE" - <"$t.list" | grep -v '^cached ' | head -3)"
	fixture_cold_busy "$m" && sync -f "$m"
	dev=$(fixture_dev "$m")
	read -r r2 s2 <<<"$(dev_reads "$dev")"
	run warm -r -s "$m"
	read -r r3 s3 <<<"$(dev_reads "$dev")"
	root=$OUT
	assertEquals "as root ($ERR)" 0 "$RC"
	assertEquals "the same entries warmed" "$nob" "$root"
	assertEquals "everything cached after it" 0 "$(probe_misses "$m/big"/*)"
	assertEquals "as root: every name cached (the independent prober)" "" \
		"$("$OPROBE" - <"$t.list" | grep -v '^cached ' | head -3)"
	assertTrue "no more sectors read: root $((s3 - s2)), nobody $((s1 - s0))" \
		"[ $((s3 - s2)) -le $(((s1 - s0) * 21 / 20 + 64)) ]"
	assertTrue "far fewer requests: root $((r3 - r2)), nobody $((r1 - r0)), $blocks directory blocks" \
		"[ $((r3 - r2 + blocks / 2)) -le $((r1 - r0)) ]"

	# What it reads ahead, and through what.
	fixture_cold_busy "$m"
	dev=$(fixture_dev "$m")
	trace_ra "$t" warm -r -q "$m" ||
		fail "warm under strace"
	assertEquals "the device opened once, read-only" \
		"1 O_RDONLY|O_NOCTTY|O_NONBLOCK|O_CLOEXEC)" \
		"$(grep -c "\"/dev/$dev\"" "$t") $(grep -o "\"/dev/$dev\", [A-Z_|]*)" "$t" | sed 's/.*", //')"
	# The fadvise calls, joined where one ends where the next begins, are
	# the extents; each call asks for 1 byte to 128 KiB (a kernel reads at
	# most the device's read-ahead window per call, and 0 means "to the
	# end of the device").
	cat >"$SHUNIT_TMPDIR/extents.py" <<'PY'
import fcntl, os, struct, sys
n = 256
buf = bytearray(struct.pack("=QQLLLL", 0, 2**64 - 1, 0, 0, n, 0) + bytes(56 * n))
fcntl.ioctl(os.open(sys.argv[1], os.O_RDONLY), 0xC020660B, buf)  # FS_IOC_FIEMAP
extents = [struct.unpack_from("=QQQ", buf, 32 + 56 * i)[1:]
           for i in range(struct.unpack_from("=L", buf, 20)[0])]
calls = [tuple(map(int, l.split())) for l in sys.stdin]
def joined(ranges):
    out = []
    for off, length in ranges:
        if out and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + length)
        else:
            out.append((off, length))
    return out
pieces = sum(-(-length // (128 << 10)) for _, length in extents)
bad = [c for c in calls if not 0 < c[1] <= 128 << 10]
print("ok" if joined(calls) == joined(extents) and not bad and len(calls) == pieces else
      "extents %s, calls %s" % (extents, calls))
PY
	assertEquals "exactly the big directory's extents, in pieces" "ok" \
		"$(sed -n 's/.*fadvise64([0-9]*, \([0-9]*\), \([0-9]*\), POSIX_FADV_WILLNEED.*/\1 \2/p' "$t" |
			python3 "$SHUNIT_TMPDIR/extents.py" "$m/big")"

	fixture_cold_busy "$m"
	dev=$(fixture_dev "$m")
	trace_ra "$t" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- warm -r -q "$m"
	assertEquals "as nobody: one refused open, nothing read ahead" "1 0" \
		"$(grep -c "\"/dev/$dev\".* = -1 EACCES" "$t") $(grep -c fadvise64 "$t")"
	fixture_cold_busy "$m"
	trace_ra "$t" dcache-probe -r -q "$m"
	assertEquals "dcache-probe reads nothing ahead" "0 0" \
		"$(grep -c '/sys/dev/block\|"/dev/' "$t") $(grep -c fadvise64 "$t")"

	mkdir "$SHUNIT_TMPDIR/tmpfs"
	mount -t tmpfs dcprobe-test "$SHUNIT_TMPDIR/tmpfs" || fail "cannot mount tmpfs"
	(cd "$SHUNIT_TMPDIR/tmpfs" && seq -f 'an-entry-with-a-longer-name-%06g' 1 6000 | xargs touch)
	trace_ra "$t" warm -r -q "$SHUNIT_TMPDIR/tmpfs"
	umount "$SHUNIT_TMPDIR/tmpfs"
	assertEquals "tmpfs: no device, nothing read ahead" "0 0" \
		"$(grep -c '/sys/dev/block\|"/dev/' "$t") $(grep -c fadvise64 "$t")"
}

. "$SHUNIT2"
