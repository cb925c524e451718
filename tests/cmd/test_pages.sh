#!/bin/bash
# --pages: data residency of files in the page cache, on real cold fixtures,
# checked against fincore (util-linux), vmtouch and an independent prober.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
. "$DCP_TESTS/lib/rely.sh"

PS=$(getconf PAGESIZE)

# name size(bytes) pages-read (dd bs=PS skip:count, space separated) expected-resident
FILES="
e0	0	-	0
e1	1	0:1	1
p1	$PS	-	0
p2	$((PS + 1))	1:1	1
m	$((256 * PS))	10:5 100:1	6
big	$((3 * 1024 * 1024 + 123))	0:64 768:1	65
all	200000	0:49	49
sparse	S$((256 * PS))	0:4 200:2	6
"

NOBODY=65534

# Without cachestat(2) (before Linux 6.5) the data probe measures by
# mincore(2), which cannot tell dirty, writeback or recently evicted pages:
# a file's print as "-", JSON null, totals "?".  Whether the kernel has it
# is what the independent prober finds (CACHESTAT "present" or not, set
# once in oneTimeSetUp), never the kernel's version.

# cs3 D W E - a file's dirty, writeback and evicted figures as text prints
# them: D, W and E with cachestat, unknown ("-") without.
cs3() {
	if [ "$CACHESTAT" = present ]; then
		echo "dirty=$1 writeback=$2 evicted=$3"
	else
		echo "dirty=- writeback=- evicted=-"
	fi
}

# The method that measures a file: "cachestat", or "mincore" without it.
pages_method() {
	if [ "$CACHESTAT" = present ]; then echo cachestat; else echo mincore; fi
}

# needs_cachestat PART - true with cachestat; without it, says on standard
# error that PART is skipped (the caller then checks what mincore must say
# instead) and is false.
needs_cachestat() {
	[ "$CACHESTAT" = present ] && return 0
	echo "SKIP test part: needs cachestat (Linux 6.5): $1" >&2
	return 1
}

oneTimeSetUp() {
	CACHESTAT=$(python3 "$DCP_TESTS/lib/kfeat_probe.py" | awk '$1 == "cachestat" { print $2 }')
	MNT=$(fixture_new 64) || fail "cannot make fixture"
	mkdir -p "$MNT/k" "$MNT/t/a/sub" "$MNT/t/b" "$MNT/dev"
	while IFS=$'\t' read -r name size _ _; do
		[ -n "$name" ] || continue
		if [ "${size#S}" != "$size" ]; then
			truncate -s "${size#S}" "$MNT/k/$name"
		else
			head -c "$size" /dev/urandom >"$MNT/k/$name"
		fi
	done <<<"$FILES"
	for f in f1 f2 f3; do
		head -c $((5 * PS)) /dev/urandom >"$MNT/t/a/$f"
		head -c $((3 * PS + 7)) /dev/urandom >"$MNT/t/b/$f"
	done
	echo g >"$MNT/t/a/sub/g"
	ln -s a/f1 "$MNT/t/link"
	mkfifo "$MNT/dev/fifo"
	mknod "$MNT/dev/null" c 1 3
	echo x >"$MNT/dev/file"
	(cd "$MNT" && find t dev -print) >"$SHUNIT_TMPDIR/paths"
	sync
}

oneTimeTearDown() { rely_cleanup; }

setUp() {
	cold "$MNT" || fail "cannot remount fixture"
}

# No read-ahead on the fixture's loop device: a dd of N pages brings in
# exactly those pages, so the expected counts are known.
no_readahead() {
	blockdev --setra 0 "$(findmnt -no SOURCE "$MNT")"
}

# Reads completed by the fixture's loop device so far.
loop_reads() {
	local dev
	dev=$(findmnt -no SOURCE "$MNT")
	awk '{ print $1 }' "/sys/block/${dev#/dev/}/stat"
}

# The independent prober: the state of every path of the list (relative to
# MNT) from openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_CACHED), called
# here with ctypes.  A miss is asked three times (a mount anywhere on the
# machine fails a cached walk spuriously; a probe never warms anything).
probe_all() {
	python3 - "$MNT" "$SHUNIT_TMPDIR/paths" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
how = How(os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, 0, 0x20)
def probe(p):
    for _ in range(3):
        fd = libc.syscall(437, -100, p.encode(), ctypes.byref(how), ctypes.sizeof(how))
        if fd >= 0:
            os.close(fd)
            return "cached"
        e = ctypes.get_errno()
        if e != errno.EAGAIN:
            return "negative" if e == errno.ENOENT else "error"
    return "miss"
for rel in open(sys.argv[2]).read().split("\n"):
    if rel:
        print(probe(os.path.join(sys.argv[1], rel)), rel)
PY
}

# What dcache-probe --json reported for PATH: "resident" or "data" state.
json_field() { # JSONFILE PATH FIELD
	python3 - "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("type") == "entry" and o["path"] == sys.argv[2]:
        print(o["pages"][sys.argv[3]] if sys.argv[3] in ("resident", "total") else o["data"])
PY
}

# One round: dd the chosen ranges, then dcache-probe, fincore and vmtouch
# on every file; prints "name expected ours fincore vmtouch" lines.
residency_round() {
	local name size ranges want r skip count f j
	no_readahead
	while IFS=$'\t' read -r name size ranges want; do
		[ -n "$name" ] || continue
		for r in $ranges; do
			[ "$r" = - ] && continue
			skip=${r%:*} count=${r#*:}
			dd if="$MNT/k/$name" of=/dev/null bs="$PS" skip="$skip" count="$count" 2>/dev/null
		done
		# A file never read still needs its dentry cached to be measured.
		stat "$MNT/k/$name" >/dev/null
	done <<<"$FILES"
	j=$SHUNIT_TMPDIR/round.json
	dcache-probe --pages --json "$MNT"/k/* >"$j"
	json_log dcache-probe "$j"
	while IFS=$'\t' read -r name size ranges want; do
		[ -n "$name" ] || continue
		f=$MNT/k/$name
		echo "$name $want $(json_field "$j" "$f" resident)" \
			"$(fincore -n -r -o PAGES "$f")" \
			"$(vmtouch "$f" | awk '/Resident Pages/ { split($3, a, "/"); print a[1] }')"
	done <<<"$FILES"
}

test_resident_pages_equal_fincore_and_vmtouch() {
	local rows try bad
	# Benches on this machine may drop the caches between two commands:
	# such a round disagrees once; a real difference repeats.
	for try in 1 2 3; do
		[ "$try" = 1 ] || cold "$MNT"
		rows=$(residency_round)
		bad=$(awk '!($2 == $3 && $3 == $4 && $4 == $5)' <<<"$rows")
		[ -z "$bad" ] && break
	done
	assertEquals "every file: expected = dcache-probe = fincore = vmtouch" "" "$bad"
	assertEquals "all files compared" 8 "$(grep -c . <<<"$rows")"
	assertContains "$rows" "m 6 6 6 6"
	assertContains "$rows" "big 65 65 65 65"
}

test_text_and_json_of_one_file() {
	no_readahead
	dd if="$MNT/k/m" of=/dev/null bs="$PS" skip=10 count=5 2>/dev/null
	run dcache-probe --pages "$MNT/k/m"
	assertEquals 0 "$RC"
	assertEquals "cached pages=5/256 bytes=$((5 * PS))/$((256 * PS)) $(cs3 0 0 0) $MNT/k/m" "$OUT"
	assertContains "$ERR" "data: 5/256 pages resident (2.0%)"
	assertContains "$ERR" "1 file measured, 0 unknown (not measured), 0 errors ($(pages_method))"
	run dcache-probe --pages --json "$MNT/k/m" "$MNT/k/p1" "$MNT/k"
	assertEquals "p1 missed" 1 "$RC"
	json_types <<<"$OUT" >/dev/null || fail "not JSON Lines"
	assertEquals "not_regular" "$(json_get 'objs[2]["data"]' <<<"$OUT")"
	assertEquals "unknown: p1's dentry missed" "unknown" "$(json_get 'objs[1]["data"]' <<<"$OUT")"
	assertEquals "5 256 $(pages_method)" \
		"$(json_get '" ".join(str(objs[0]["pages"][k]) for k in ("resident","total","method"))' <<<"$OUT")"
	assertEquals "1 1 5" \
		"$(json_get '" ".join(str(objs[-1]["data"][k]) for k in ("files","unknown","resident"))' <<<"$OUT")"
}

test_dirty_pages_are_counted() {
	local d1=1 d0=0
	# Without cachestat: unknown (null) before and after, never a count.
	needs_cachestat "one dirty page counted, 0 once written back (mincore: null)" ||
		d1=None d0=None
	stat "$MNT/k/p2" >/dev/null
	dd if=/dev/zero of="$MNT/k/p2" bs="$PS" count=1 conv=notrunc 2>/dev/null
	run dcache-probe --pages --json "$MNT/k/p2"
	assertEquals "one dirty page until written back" "$d1" "$(json_get 'objs[0]["pages"]["dirty"]' <<<"$OUT")"
	sync -f "$MNT/k/p2"
	run dcache-probe --pages --json "$MNT/k/p2"
	assertEquals "$d0" "$(json_get 'objs[0]["pages"]["dirty"]' <<<"$OUT")"
}

# The claim of the man page: with --no-perturb the data probe adds no
# lookup I/O and changes no probe result; a cached file is measured, a
# missed one is unknown and never opened.
test_pages_run_leaves_a_cold_tree_as_found() {
	local before after r0 r1 j=$SHUNIT_TMPDIR/np.json want
	cat "$MNT/t/a/f1" >/dev/null
	stat "$MNT/t/b/f2" >/dev/null
	before=$(probe_all)
	assertContains "$before" "cached t/a/f1"
	assertContains "$before" "miss t/a/f2"
	want=$(fincore -n -r -o PAGES "$MNT/t/a/f1")
	# The remount left the superblock dirty: write it out now, so that a
	# journal commit does not fall into the window measured.
	sync -f "$MNT"
	r0=$(loop_reads)
	dcache-probe -r --no-perturb --pages --json "$MNT/t" >"$j"
	json_log dcache-probe "$j"
	r1=$(loop_reads)
	after=$(probe_all)
	assertEquals "no probe result changed" "$before" "$after"
	assertEquals "no read I/O on the fixture" "$r0" "$r1"
	assertEquals "measured" "$(json_field "$j" "$MNT/t/a/f1" data)"
	assertEquals "$want" "$(json_field "$j" "$MNT/t/a/f1" resident)"
	assertEquals 5 "$want"
	assertEquals 0 "$(json_field "$j" "$MNT/t/b/f2" resident)"
	assertEquals "unknown" "$(json_field "$j" "$MNT/t/a/f2" data)"
	assertEquals "unknown" "$(json_field "$j" "$MNT/t/b/f3" data)"
}

# Without --no-perturb the walk lists every directory (that warms the
# directories), but a file whose dentry missed is still never opened.
test_missed_files_are_never_opened() {
	local after j=$SHUNIT_TMPDIR/cold.json
	run dcache-probe -r --pages --json "$MNT/t"
	assertEquals 1 "$RC"
	printf '%s\n' "$OUT" >"$j"
	assertEquals "unknown" "$(json_field "$j" "$MNT/t/a/f1" data)"
	# The root missed too: its type is not known either.
	assertEquals "7 files and the root unknown, none measured" "0 8" \
		"$(json_get '"%d %d" % (objs[-1]["data"]["files"], objs[-1]["data"]["unknown"])' <<<"$OUT")"
	after=$(probe_all)
	assertEquals "every file still misses" 0 "$(grep -E '^cached t/(a|b)/f|^cached t/a/sub/g' <<<"$after" | wc -l)"
}

# FIFOs and devices are never opened for reading; nothing blocks.
test_fifo_and_device_are_never_opened() {
	local log=$SHUNIT_TMPDIR/strace
	stat "$MNT/dev/fifo" "$MNT/dev/null" "$MNT/dev/file" >/dev/null
	# LeakSanitizer cannot run under ptrace: leaks are checked without strace.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 20 strace -f -qq -e trace=openat2,openat -o "$log" \
		dcache-probe --pages "$MNT/dev/fifo" "$MNT/dev/null" "$MNT/dev/file" >"$SHUNIT_TMPDIR/o" 2>/dev/null
	assertEquals "no hang" 0 $?
	assertEquals "cached pages=- $MNT/dev/fifo" "$(sed -n 1p "$SHUNIT_TMPDIR/o")"
	assertEquals "cached pages=- $MNT/dev/null" "$(sed -n 2p "$SHUNIT_TMPDIR/o")"
	assertContains "measured, nothing read" "$(sed -n 3p "$SHUNIT_TMPDIR/o")" "cached pages=0/1 "
	assertEquals "only O_PATH looks at the FIFO and the device" "" \
		"$(grep -E '"[^"]*/dev/(fifo|null)"' "$log" | grep -v O_PATH)"
	# The regular file: looked up once (O_PATH), and that descriptor opened.
	assertContains "the regular file is looked up once" "$(grep '/dev/file"' "$log")" "O_PATH"
	# (openat(the /proc/self/fd directory, "N", O_RDONLY...): N is a descriptor.)
	assertContains "its checked descriptor is opened for reading" \
		"$(grep -E 'openat\([0-9]+, "[0-9]+", ' "$log")" "O_RDONLY|O_NOCTTY|O_NONBLOCK"
	run timeout 20 dcache-probe -r --pages "$MNT/dev"
	assertEquals 0 "$RC"
	assertContains "$OUT" "cached pages=- $MNT/dev/fifo"
	assertContains "$OUT" "cached pages=- $MNT/dev/null"
}

# The data probe reads nothing: no atime change, and inotify sees the
# open and close but no access.
test_no_read_no_atime_open_event() {
	local f=$MNT/t/b/f1 a0 a1 ev
	stat "$f" >/dev/null
	a0=$(stat -c %x "$f")
	ev=$(python3 - "$MNT/t/b" "$DCP_BIN/dcache-probe" "$f" <<'PY'
import ctypes, os, struct, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE = 0x1, 0x20, 0x10
libc.inotify_add_watch(fd, sys.argv[1].encode(), IN_ACCESS | IN_OPEN | IN_CLOSE_NOWRITE)
subprocess.run([sys.argv[2], "--pages", sys.argv[3]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
names = []
try:
    data = os.read(fd, 65536)
except BlockingIOError:
    data = b""
i = 0
while i < len(data):
    wd, mask, cookie, ln = struct.unpack_from("iIII", data, i)
    name = data[i + 16:i + 16 + ln].rstrip(b"\0").decode()
    for bit, s in ((IN_OPEN, "open"), (IN_ACCESS, "access"), (IN_CLOSE_NOWRITE, "close")):
        if mask & bit:
            names.append(s + ":" + name)
    i += 16 + ln
print(" ".join(names))
PY
)
	a1=$(stat -c %x "$f")
	# Without cachestat, mincore(2) needs a mapping of the file, and mmap(2)
	# updates its access time (file_accessed()) unless the open file says
	# O_NOATIME, which the library sets for the count (root may).  (Before:
	# under faultinject cachestat=ENOSYS the atime changed.)
	assertEquals "atime unchanged ($CACHESTAT cachestat)" "$a0" "$a1"
	assertEquals "an open event, no access" "open:f1 close:f1" "$ev"
	cat "$f" >/dev/null
	assertNotEquals "a real read would have changed atime" "$a0" "$(stat -c %x "$f")"
}

test_min_resident_verdict() {
	cat "$MNT/t/a/f1" "$MNT/t/a/f2" >/dev/null
	run dcache-probe -q --min-resident 100 "$MNT/t/a/f1" "$MNT/t/a/f2"
	assertEquals "fully resident" 0 "$RC"
	stat "$MNT/t/b/f1" >/dev/null
	run dcache-probe -q --min-resident 60 "$MNT/t/a/f1" "$MNT/t/a/f2" "$MNT/t/b/f1"
	assertEquals "10 of 14 pages: 71%" 0 "$RC"
	run dcache-probe -q --min-resident 75 "$MNT/t/a/f1" "$MNT/t/a/f2" "$MNT/t/b/f1"
	assertEquals "71% < 75%" 1 "$RC"
	run dcache-probe -q --min-cached 0 --min-resident 0 "$MNT/t/a/f1" "$MNT/t/b/f3"
	assertEquals "an unknown file fails any --min-resident" 1 "$RC"
	run dcache-probe -q --min-cached 0 "$MNT/t/a/f1" "$MNT/t/b/f3"
	assertEquals "without it, --min-cached alone decides" 0 "$RC"
	run dcache-probe -r -q --no-perturb --min-cached 0 --min-resident 0 "$MNT/t"
	assertEquals "a directory not visited holds unknown files" 1 "$RC"
	run dcache-probe --min-resident 101 "$MNT/t"
	assertEquals 64 "$RC"
}

# No figure reads as a share of nothing, and no data verdict passes on
# files that were not measured.  (Before: a fresh mount, every file
# unknown, said "0/0 pages resident (100.0%)", JSON 100, Prometheus ratio
# 1; --min-resident passed on a directory without -r, and over unvisited
# directories under --ignore-unvisited.)
test_data_verdicts_never_on_nothing() {
	local p
	# setUp left the fixture cold: every file below t misses, unknown.
	run dcache-probe -r --pages "$MNT/t"
	assertContains "$ERR" "data: 0/0 pages resident, 0/0 bytes;"
	assertNotContains "no share of nothing" "$ERR" "%), 0/0 bytes"
	assertContains "$ERR" "0 files measured, "
	run dcache-probe -r --pages --json "$MNT/t"
	assertEquals "JSON: null" "None 0 7" "$(json_get '"%s %s %s" % (objs[-1]["data"]["resident_percent"], objs[-1]["data"]["files"], objs[-1]["data"]["unknown"])' <<<"$OUT")"
	run dcache-probe -r --pages --prometheus "$MNT/t"
	assertEquals "Prometheus: the counts" "7" \
		"$(prom_check "dcprobe_data_files{command=\"dcache-probe\",root=\"$MNT/t\",state=\"unknown\"}" <<<"$OUT")"
	assertNotContains "Prometheus: no ratio sample" "$OUT" "dcprobe_data_resident_ratio{"
	run dcache-probe -r --pages --per-dir=0 "$MNT/t"
	assertContains "--per-dir: no share, 7 files not measured" "$OUT" "-	0/0+7?	"
	# A directory without -r: no file measured, no verdict.
	stat "$MNT/t" >/dev/null
	run dcache-probe --min-resident 0 "$MNT/t"
	assertEquals "a directory alone: nothing measured, the verdict fails" 1 "$RC"
	assertContains "cached pages=- $MNT/t" "$OUT"
	# Unvisited directories hold unmeasured files, --ignore-unvisited or not.
	cold "$MNT"
	stat "$MNT/t/a/f1" "$MNT/t/a/f2" "$MNT/t/a/f3" "$MNT/t/a/sub/g" "$MNT/t/link" >/dev/null
	run dcache-probe -r --no-perturb --ignore-unvisited --min-cached 0 --pages --json "$MNT/t"
	assertEquals "every file of the visited directories measured, t/b not visited" "4 0 1" \
		"$(json_get '"%s %s %s" % (objs[-1]["data"]["files"], objs[-1]["data"]["unknown"], objs[-1]["not_visited"])' <<<"$OUT")"
	run dcache-probe -r -q --no-perturb --ignore-unvisited --min-cached 0 --min-resident 0 "$MNT/t"
	assertEquals "--ignore-unvisited never lets a data verdict pass" 1 "$RC"
	run dcache-probe -r -q --no-perturb --ignore-unvisited --min-cached 0 "$MNT/t"
	assertEquals "it still lets the path verdict pass" 0 "$RC"
	# Empty files are measured and span no page: wholly resident, no share.
	stat "$MNT/k/e0" >/dev/null
	run dcache-probe --min-resident 100 --json "$MNT/k/e0"
	assertEquals "an empty file passes" 0 "$RC"
	assertEquals "0 0 None" "$(json_get '"%s %s %s" % (objs[-1]["data"]["pages"], objs[-1]["data"]["unknown"], objs[-1]["data"]["resident_percent"])' <<<"$OUT")"
	cat "$MNT/k/e0" >/dev/null
	run warm --pages --check "$MNT/k/e0"
	assertContains "warm: no share of nothing" "$ERR" "resident before 0/0 pages, after 0/0"
}

# An inode with several names (hard links) counts once in every data total,
# as du counts it, and warm reads it once and measures "before" before
# this run read it.  (Before: warm --check f g on a cold fixture said
# "resident before 25/50 pages" where the truth is 0/25.)
test_hard_links_count_once() {
	local d=$MNT/links j
	mkdir -p "$d/x" "$d/y"
	head -c $((25 * PS)) /dev/urandom >"$d/x/f"
	ln "$d/x/f" "$d/x/g"
	ln "$d/x/f" "$d/y/h"
	sync
	cold "$MNT"
	run warm --pages --check --json "$d/x/f" "$d/x/g" "$d/y/h"
	assertEquals "warm: exit" 0 "$RC"
	assertEquals "warm: one file read, once; before 0 of its 25 pages, after 25" "1 $((25 * PS)) 25 0 25" \
		"$(json_get '"%s %s %s %s %s" % tuple(objs[-1]["data"][k] for k in ("files", "bytes_read", "pages", "resident_before", "resident_after"))' <<<"$OUT")"
	assertEquals "fincore agrees" 25 "$(fincore -n -r -o PAGES "$d/x/f")"
	run dcache-probe --pages --json "$d/x/f" "$d/x/g" "$d/y/h"
	assertEquals "dcache-probe: every name's line has the inode's figures" "25 25 25" \
		"$(json_get '" ".join(str(o["pages"]["resident"]) for o in objs if o["type"] == "entry")' <<<"$OUT")"
	assertEquals "dcache-probe: the total counts it once" "1 25 25" \
		"$(json_get '"%s %s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages", "resident"))' <<<"$OUT")"
	run dcache-probe -r --pages --json --per-dir "$d"
	assertEquals "dcache-probe -r: once in the run, in the root, in each directory (x: f and g)" \
		"1 25 | root 1 25 | links 1 25 | x 1 25 | y 1 25" \
		"$(json_get '"%s %s | " % tuple(objs[-1]["data"][k] for k in ("files", "pages")) + " | ".join(["root %s %s" % (o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "root_data"] + sorted("%s %s %s" % (o["path"].rsplit("/", 1)[-1], o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "dir"))' <<<"$OUT")"
	run dcache-probe -r --pages --json "$d/x" "$d/y"
	assertEquals "dcache-probe -r, two roots: once in the run, once in each root" "1 25 | 1 25 | 1 25" \
		"$(json_get '"%s %s | " % tuple(objs[-1]["data"][k] for k in ("files", "pages")) + " | ".join("%s %s" % (o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "root_data")' <<<"$OUT")"
	run cachedopen --pages --json "$d/x/f" "$d/x/g" "$d/y/h"
	assertEquals "cachedopen: once" "1 25" \
		"$(json_get '"%s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages"))' <<<"$OUT")"
	rm -rf "$d"
}

# Under -L a file is reached by several paths: d/file, ld/file (ld -> d)
# and lf (lf -> d/file).  Its inode counts once in every total, as a file
# with several names does: once in the run, in each root, in each
# directory's subtree; warm reads it once.  (Before: 3 files, 768 pages for
# one file of 256, and warm's "before" of the second path was after the
# first path's read.)
test_L_counts_a_file_once() {
	local d=$MNT/lpages n=256
	mkdir -p "$d/d"
	head -c $((n * PS)) /dev/urandom >"$d/d/file"
	ln -s d "$d/ld"
	ln -s d/file "$d/lf"
	stat -L "$d/ld/file" "$d/lf" >/dev/null # each link's atime updated once
	sync
	cold "$MNT"
	run warm -L -r --pages --check --json "$d"
	assertEquals "warm: exit ($ERR $(grep -v "\"type\":\"path\"" <<<"$OUT"))" 0 "$RC"
	assertEquals "warm: one file read, once; before 0 of its pages, after all" \
		"1 $((n * PS)) $n 0 $n" \
		"$(json_get '"%s %s %s %s %s" % tuple(objs[-1]["data"][k] for k in ("files", "bytes_read", "pages", "resident_before", "resident_after"))' <<<"$OUT")"
	assertEquals "fincore agrees" "$n" "$(fincore -n -r -o PAGES "$d/d/file")"
	run dcache-probe -L -r --pages --json "$d"
	assertEquals "dcache-probe: every path to it has the inode's figures" "$n $n $n" \
		"$(json_get '" ".join(str(o["pages"]["total"]) for o in objs if o["type"] == "entry" and o["path"].rsplit("/", 1)[-1] in ("file", "lf"))' <<<"$OUT")"
	run dcache-probe -L -r --pages --json --per-dir "$d"
	# (Pages, not resident pages: the machine may reclaim some meanwhile.)
	assertEquals "dcache-probe -L -r: once in the run, in the root, in its row" \
		"1 $n | root 1 $n | lpages 1 $n" \
		"$(json_get '"%s %s | " % tuple(objs[-1]["data"][k] for k in ("files", "pages")) + " | ".join(["root %s %s" % (o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "root_data"] + ["%s %s %s" % (o["path"].rsplit("/", 1)[-1], o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "dir" and o["path"].endswith("/lpages")])' <<<"$OUT")"
	run dcache-probe -L -r --pages --json "$d" "$d/ld"
	assertEquals "two roots: once in the run, once in each root" "1 $n | 1 $n | 1 $n" \
		"$(json_get '"%s %s | " % tuple(objs[-1]["data"][k] for k in ("files", "pages")) + " | ".join("%s %s" % (o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "root_data")' <<<"$OUT")"
	run dcache-probe -L --pages --json "$d/d/file" "$d/lf" "$d/ld/file"
	assertEquals "three paths given: once" "1 $n" \
		"$(json_get '"%s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages"))' <<<"$OUT")"
	run cachedopen -L --pages --json "$d/d/file" "$d/lf" "$d/ld/file"
	assertEquals "cachedopen -L: once" "1 $n" \
		"$(json_get '"%s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages"))' <<<"$OUT")"
	rm -rf "$d"
}

# A file with one name reached twice through a bind mount inside the tree
# (T/b is T/a, bind-mounted: the same device and inode by another path)
# counts once in every data total, as fincore and cachestat count the
# inode, whatever the path; the paths (dentries) count per path, as du
# counts them.  Its own fixture: a bind mount on the shared one would make
# every other test's files "shared" (remembered).  (Before: -r --pages -s
# said 600 pages and 260 resident for 400 and 180; JSON, Prometheus and
# the per-directory rows the same; warm -r read the data of T/a twice over.)
bind_cold() { # FIXTURE TREE
	mountpoint -q "$2/b" && umount "$2/b"
	cold "$1" || return 1
	blockdev --setra 0 "$(findmnt -no SOURCE "$1")"
	mount --bind "$2/a" "$2/b"
}

# Resident and total pages of the unique inodes below T (by device and
# inode, as find -L sees them) from fincore and from cachestat(2) called
# directly; then fincore's resident pages of every path.
bind_truth() { # TREE
	python3 - "$1" "$DCP_TESTS/lib" <<'PY'
import os, subprocess, sys
sys.path.insert(0, sys.argv[2])
from manifest import cachestat, PS
seen, uniq, every = set(), [], []
for d, _, files in sorted(os.walk(sys.argv[1])):
    for f in sorted(files):
        p = os.path.join(d, f)
        st = os.stat(p)
        every.append(p)
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            uniq.append(p)
def fincore(paths):
    out = subprocess.run(["fincore", "-n", "-r", "-b", "-o", "PAGES,SIZE"] + paths,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    rows = [l.split() for l in out if l.strip()]
    return sum(int(r[0]) for r in rows), sum((int(r[1]) + PS - 1) // PS for r in rows)
fr, ft = fincore(uniq)
cr = 0
for p in uniq:
    fd = os.open(p, os.O_RDONLY)
    cr += cachestat(fd, 0, 0)[0]
    os.close(fd)
print(len(uniq), ft, fr, cr, fincore(every)[0])
PY
}

test_bind_mounted_file_counts_once() {
	local M T truth n
	M=$(fixture_new 32) || fail "cannot make fixture"
	T=$M/T
	mkdir -p "$T/a" "$T/b" "$T/c"
	for n in 1 2 3 4 5 6 7 8; do head -c $((25 * PS)) /dev/urandom >"$T/a/f$n"; done
	for n in 1 2 3 4; do head -c $((50 * PS)) /dev/urandom >"$T/c/g$n"; done
	sync
	bind_cold "$M" "$T" || fail "cannot remount"
	# Every name cached; 10 pages of each f (read through the bind mount), all of g1 and g2.
	find "$T" -exec stat {} + >/dev/null
	for n in 1 2 3 4 5 6 7 8; do dd if="$T/b/f$n" of=/dev/null bs="$PS" count=10 status=none; done
	cat "$T/c/g1" "$T/c/g2" >/dev/null
	truth=$(bind_truth "$T")
	assertEquals "the truth: 12 inodes, 400 pages; fincore = cachestat = 180 resident; fincore per path 260" \
		"12 400 180 180 260" "$truth"
	run dcache-probe -r --pages -s "$T"
	assertEquals "-r --pages -s: the data once ($ERR)" "180/400" "$(cut -f4 <<<"$OUT")"
	run dcache-probe -r --pages --json "$T"
	assertEquals "--json: paths per path (1+3+8+8+4), data per inode" "24 | 12 400 180" \
		"$(json_get '"%s | %s %s %s" % ((objs[-1]["paths"],) + tuple(objs[-1]["data"][k] for k in ("files", "pages", "resident")))' <<<"$OUT")"
	run dcache-probe -r --pages --json --per-dir "$T"
	assertEquals "--per-dir: T's subtree once; b is a's row (one directory, one row)" "T 12 400 | a 8 200 | c 4 200" \
		"$(json_get '" | ".join(sorted("%s %s %s" % (o["path"].rsplit("/", 1)[-1], o["data"]["files"], o["data"]["pages"]) for o in objs if o["type"] == "dir"))' <<<"$OUT")"
	run dcache-probe -r --pages --prometheus "$T"
	assertEquals "--prometheus: resident and total once" "180 400 " \
		"$(prom_check "dcprobe_data_pages{command=\"dcache-probe\",root=\"$T\",kind=\"resident\"}" \
			"dcprobe_data_pages{command=\"dcache-probe\",root=\"$T\",kind=\"total\"}" <<<"$OUT" | tr '\n' ' ')"
	# Overlapping roots through the bind mount, and two paths given.
	run dcache-probe -r --pages --json "$T/a" "$T/b"
	assertEquals "-r T/a T/b: once in the run" "8 200 80" \
		"$(json_get '"%s %s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages", "resident"))' <<<"$OUT")"
	run dcache-probe --pages --json "$T/a/f1" "$T/b/f1"
	assertEquals "two paths to one file: once" "1 25 10" \
		"$(json_get '"%s %s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages", "resident"))' <<<"$OUT")"
	run cachedopen --pages --json "$T/a/f1" "$T/b/f1"
	assertEquals "cachedopen, two paths: once" "1 25" \
		"$(json_get '"%s %s" % tuple(objs[-1]["data"][k] for k in ("files", "pages"))' <<<"$OUT")"
	# warm reads each inode once, and measures "before" before its own read.
	bind_cold "$M" "$T" || fail "cannot remount"
	find "$T" -exec stat {} + >/dev/null
	run warm -r --pages --check --json "$T"
	assertEquals "warm -r: 12 files read once each; before 0, after all ($ERR)" "12 $((400 * PS)) 400 0 400" \
		"$(json_get '"%s %s %s %s %s" % tuple(objs[-1]["data"][k] for k in ("files", "bytes_read", "pages", "resident_before", "resident_after"))' <<<"$OUT")"
	umount "$T/b"
	umount "$M"
}

test_per_root_totals_and_prometheus() {
	cat "$MNT/t/a/f1" "$MNT/t/b/f1" >/dev/null
	run dcache-probe -r --only=error --pages --json "$MNT/t/a" "$MNT/t/b"
	json_types <<<"$OUT" >/dev/null || fail "not JSON Lines"
	assertEquals "root_data root_data summary" "$(json_types <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
	assertEquals "5 4 9" "$(json_get '"%d %d %d" % (objs[0]["data"]["resident"], objs[1]["data"]["resident"], objs[2]["data"]["resident"])' <<<"$OUT")"
	run dcache-probe -r -s -c --pages --json "$MNT/t/a" "$MNT/t/b"
	assertEquals "-s -c: the roots' and the total's lines carry the data" "5 4 9" \
		"$(json_get '" ".join("%d" % o["data"]["resident"] for o in objs if o["type"] in ("root", "total"))' <<<"$OUT")"
	run dcache-probe -r --pages "$MNT/t/a" "$MNT/t/b"
	assertContains "$ERR" "$MNT/t/a: data: 5/"
	assertContains "$ERR" "$MNT/t/b: data: 4/"
	run dcache-probe -r --pages --prometheus "$MNT/t/a" "$MNT/t/b"
	assertEquals "f1 measured, f2 f3 unknown" "5 4 5 unknown:2" \
		"$(prom_check "dcprobe_data_pages{command=\"dcache-probe\",root=\"$MNT/t/a\",kind=\"resident\"}" \
			"dcprobe_data_pages{command=\"dcache-probe\",root=\"$MNT/t/b\",kind=\"resident\"}" \
			"dcprobe_data_pages{command=\"dcache-probe\",root=\"$MNT/t/a\",kind=\"total\"}" <<<"$OUT" | tr '\n' ' ')unknown:$(prom_check "dcprobe_data_files{command=\"dcache-probe\",root=\"$MNT/t/b\",state=\"unknown\"}" <<<"$OUT")"
}

test_mincore_fallback_and_no_method() {
	no_readahead
	dd if="$MNT/k/m" of=/dev/null bs="$PS" skip=10 count=5 2>/dev/null
	run "$FI" cachestat=ENOSYS -- dcache-probe --pages --json "$MNT/k/m"
	assertEquals 0 "$RC"
	assertEquals "mincore 5 None" "$(json_get '"%s %s %s" % (objs[0]["pages"]["method"], objs[0]["pages"]["resident"], objs[0]["pages"]["dirty"])' <<<"$OUT")"
	assertEquals "mincore" "$(json_get 'objs[-1]["data"]["method"]' <<<"$OUT")"
	run "$FI" cachestat=ENOSYS mincore=ENOSYS -- dcache-probe --pages "$MNT/k/m"
	assertEquals "neither: cannot measure" 3 "$RC"
	assertEquals "" "$OUT"
	assertEquals 1 "$(grep -c . <<<"$ERR")"
	assertContains "$ERR" "neither cachestat(2) nor mincore(2)"
	run "$FI" cachestat=ENOSYS mincore=ENOSYS -- dcache-probe "$MNT/k/m"
	assertEquals "without --pages nothing changes" 0 "$RC"
}

# Without cachestat (Linux < 6.5) mincore cannot tell dirty, writeback or
# evicted pages: each file's are unknown, and so is every total with such a
# part: "?" in text, null in JSON (summary and --per-mount rows), no
# Prometheus sample; never 0.  With cachestat they are counts.
test_mincore_totals_are_unknown_never_0() {
	stat "$MNT"/k/* >/dev/null
	run "$FI" cachestat=ENOSYS -- dcache-probe --pages "$MNT/k/m" "$MNT/k/p2"
	assertEquals 0 "$RC"
	assertContains "per file: unknown" "$OUT" "dirty=- writeback=- evicted=- $MNT/k/m"
	assertContains "total: unknown ($ERR)" "$ERR" "bytes; ? dirty, ? writeback, ? recently evicted; 2 files measured"
	assertNotContains "$ERR" "0 dirty"
	run "$FI" cachestat=ENOSYS -- dcache-probe -s --pages --per-mount --json "$MNT/k"
	assertEquals 0 "$RC"
	assertEquals "summary and mount row: null" "None None None|None None None" \
		"$(json_get '"|".join(" ".join(str(o["data"][k]) for k in ("dirty","writeback","recently_evicted")) for o in objs if o["type"] in ("summary","mount") and isinstance(o.get("data"), dict))' <<<"$OUT")"
	run "$FI" cachestat=ENOSYS -- dcache-probe -r --pages --prometheus "$MNT/k"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format"
	assertEquals "no dirty/writeback/evicted sample" "" \
		"$(grep -E 'dcprobe_data_pages\{.*kind="(dirty|writeback|recently_evicted)"' <<<"$OUT")"
	assertNotNull "total and resident are" \
		"$(prom_check "dcprobe_data_pages{command=\"dcache-probe\",root=\"$MNT/k\",kind=\"resident\"}" <<<"$OUT")"
	# With cachestat: counts (without it, unknown as above).
	local want="0 0 0"
	needs_cachestat "dirty, writeback and evicted totals counted (0 0 0), the dirty sample there" ||
		want="None None None"
	run dcache-probe -s --pages --json "$MNT/k"
	assertEquals "$(pages_method): $want" "$want" \
		"$(json_get '" ".join(str(objs[-1]["data"][k]) for k in ("dirty","writeback","recently_evicted"))' <<<"$OUT")"
	run dcache-probe -r --pages --prometheus "$MNT/k"
	if [ "$CACHESTAT" = present ]; then
		assertEquals "cachestat: the dirty sample is there" 0 \
			"$(prom_check "dcprobe_data_pages{command=\"dcache-probe\",root=\"$MNT/k\",kind=\"dirty\"}" <<<"$OUT")"
	else
		prom_check <<<"$OUT" >/dev/null || fail "mincore: bad exposition format"
		assertEquals "mincore: no dirty/writeback/evicted sample" "" \
			"$(grep -E 'dcprobe_data_pages\{.*kind="(dirty|writeback|recently_evicted)"' <<<"$OUT")"
	fi
}

# evict FILE... - drop the files' clean pages from the page cache
# (POSIX_FADV_DONTNEED), their dentries left cached.
evict() {
	python3 -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
' "$@"
}

# The bytes of FILE... in the page cache, by the kernel's own count
# (cachestat per page, without libdcprobe): a page counts up to the end
# of the file.  Prints "PATH BYTES SIZE" per file.
resident_bytes_of() {
	python3 - "$DCP_TESTS/lib" "$@" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from manifest import cachestat, PS
for p in sys.argv[2:]:
    fd = os.open(p, os.O_RDONLY)
    size = os.fstat(fd).st_size
    n = sum(min(PS, size - off) for off in range(0, size, PS) if cachestat(fd, off, PS)[0])
    os.close(fd)
    print(p, n, size)
PY
}

# Issue 37: resident bytes never exceed a file's size: the last page, of
# which the file holds less than a page, counts up to the file's end (a
# 1-byte file in memory is 1 byte resident, not 4096).  Files whose last
# page is resident, or not; the per-file text and JSON, the run's totals
# (text, JSON), the -s table's share and a manifest's check, by cachestat
# and by mincore; each against the kernel's count per page.
test_resident_bytes_never_exceed_the_size() {
	local f j m method fi want
	no_readahead
	# e1: 1 byte; p2: a page and 1 byte, its last page alone read; t/b/f1..3
	# (3 pages and 7 bytes): the first page, the last (7 bytes), all.
	cat "$MNT/k/e1" >/dev/null
	dd if="$MNT/k/p2" of=/dev/null bs="$PS" skip=1 count=1 2>/dev/null
	dd if="$MNT/t/b/f1" of=/dev/null bs="$PS" count=1 2>/dev/null
	dd if="$MNT/t/b/f2" of=/dev/null bs="$PS" skip=3 count=1 2>/dev/null
	cat "$MNT/t/b/f3" >/dev/null
	ls "$MNT/t/b" >/dev/null
	want=$(resident_bytes_of "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3})
	assertEquals "the kernel's count" "$MNT/k/e1 1 1
$MNT/k/p2 1 $((PS + 1))
$MNT/t/b/f1 $PS $((3 * PS + 7))
$MNT/t/b/f2 7 $((3 * PS + 7))
$MNT/t/b/f3 $((3 * PS + 7)) $((3 * PS + 7))" "$want"
	local methods="cachestat mincore"
	needs_cachestat "resident bytes by cachestat (by mincore only)" || methods=mincore
	for method in $methods; do
		fi=()
		[ $method = mincore ] && fi=("$FI" cachestat=ENOSYS --)
		run "${fi[@]}" dcache-probe --pages "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3}
		assertEquals "$method" 0 "$RC"
		assertEquals "$method: text" "cached pages=1/1 bytes=1/1
cached pages=1/2 bytes=1/$((PS + 1))
cached pages=1/4 bytes=$PS/$((3 * PS + 7))
cached pages=1/4 bytes=7/$((3 * PS + 7))
cached pages=4/4 bytes=$((3 * PS + 7))/$((3 * PS + 7))" \
			"$(sed 's/ dirty=.*//' <<<"$OUT")"
		assertContains "$method: the total" "$ERR" \
			"data: 8/15 pages resident (53.3%), $((4 * PS + 16))/$((10 * PS + 23)) bytes;"
		run "${fi[@]}" dcache-probe --pages --json "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3}
		assertEquals "$method: JSON, per file and the total" "$(awk '{ print $2, $3 }' <<<"$want")
$((4 * PS + 16)) $((10 * PS + 23))" \
			"$(json_get '"\n".join("%d %d" % (o.get("pages", o.get("data"))["resident_bytes"], o.get("pages", o.get("data"))["size"]) for o in objs)' <<<"$OUT")"
	done
	# A walk's totals, and human-readable figures that cannot exceed the size.
	run dcache-probe -r --pages "$MNT/t/b"
	assertContains "the tree's total" "$ERR" "data: 6/12 pages resident (50.0%), $((4 * PS + 14))/$((9 * PS + 21)) bytes;"
	run dcache-probe -h --pages "$MNT/k/e1"
	assertContains "$OUT" "bytes=1/1 "
	# A manifest's check: the size is what the recorded ranges span of the
	# file, never past its end, and so are the resident bytes.
	m=$SHUNIT_TMPDIR/bytes.jsonl
	dcache-probe -r --ranges --json --output="$m" "$MNT/t/b" 2>/dev/null
	run dcache-probe --manifest="$m" --json
	assertEquals "manifest: f1 f2 f3 and the total" "$MNT/t/b/f1 $PS $PS
$MNT/t/b/f2 7 7
$MNT/t/b/f3 $((3 * PS + 7)) $((3 * PS + 7))
~total $((4 * PS + 14)) $((4 * PS + 14))" \
		"$(json_get '"\n".join(sorted("%s %d %d" % (o.get("path", "~total"), o.get("pages", o.get("data"))["resident_bytes"], o.get("pages", o.get("data"))["size"]) for o in objs if o.get("pages") or o["type"] == "summary"))' <<<"$OUT")"
	# warm's figures are what its reads bring in, the unit --max-bytes is
	# charged in (issue 36): whole pages, a page being read whole however
	# few bytes of it a file holds; a restore of those ranges brings in
	# f1's first page, f2's last and all of f3 (6 pages), and plain warm
	# --pages the five files' 15 pages (the residency figures above stop
	# at each file's end; these count the page cache and the device's
	# reads).  The pages are dropped
	# (clean: POSIX_FADV_DONTNEED), not the fixture remounted: a remount
	# may take another loop device, and the manifest records the device.
	evict "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3}
	assertEquals "evicted" "0 0 0 0 0" "$(resident_bytes_of "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3} | awk '{ print $2 }' | xargs)"
	run warm --manifest="$m" --json
	assertEquals "restore: bytes read, 6 pages ($OUT $ERR)" "$((6 * PS))" \
		"$(json_get '[o for o in objs if o["type"] == "summary"][-1]["data"]["bytes_read"]' <<<"$OUT")"
	evict "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3}
	run warm --pages --json "$MNT/k/e1" "$MNT/k/p2" "$MNT"/t/b/f{1,2,3}
	assertEquals "warm --pages: bytes read, 15 pages" "$((15 * PS))" \
		"$(json_get '[o for o in objs if o["type"] == "summary"][-1]["data"]["bytes_read"]' <<<"$OUT")"
}

# cachestat as the caller: 0 if it may see F's residency, else the errno
# (the kernel's own answer, without libdcprobe).
cachestat_errno() {
	python3 - "$1" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]
st = (ctypes.c_uint64 * 5)()
fd = os.open(sys.argv[1], os.O_RDONLY)
r = libc.syscall(451, fd, ctypes.byref(Range(0, 0)), st, 0)
print(0 if r == 0 else ctypes.get_errno())
PY
}

# The pages of F that mincore(2) shows the caller resident, over a fresh
# read-only mapping nothing touches (the kernel's own answer, without
# libdcprobe).  Since Linux 5.2 a caller who neither owns F nor may write
# it is shown every page as resident, whatever the cache holds.
mincore_resident() {
	python3 - "$1" <<'PY'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
n = -(-size // mmap.PAGESIZE)
m = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
vec = (ctypes.c_ubyte * n)()
if libc.mincore(ctypes.c_void_p(m), ctypes.c_size_t(size), vec) < 0:
    sys.exit("mincore: " + os.strerror(ctypes.get_errno()))
print(sum(v & 1 for v in vec))
PY
}

# Issue 18 item 10: a caller who may not see a file's residency (neither
# its owner nor allowed to write it) gets it as unknown, reason
# "permission", never an error that fails the run, never a guessed figure;
# a verdict fails on it as on any unknown; its own files are measured.
test_unprivileged_caller() {
	local f=$MNT/t/a/f3 mine=$MNT/t/b/f1 err
	chmod 0644 "$f"
	chown "$NOBODY:$NOBODY" "$mine"
	# Lookups as nobody load the directories' ACLs (RCU walks need them).
	as_nobody cat "$f" "$mine" >/dev/null
	err=$(as_nobody bash -c "$(declare -f cachestat_errno); cachestat_errno '$f'")
	if [ "$err" = 38 ]; then
		# No cachestat (ENOSYS): mincore hides the file from nobody (since
		# Linux 5.2): all 5 pages resident for nobody, evicted for root.
		echo "SKIP test part: needs cachestat (Linux 6.5): the kernel refuses nobody (EPERM); mincore's answer checked instead" >&2
		evict "$f"
		assertEquals "mincore: f evicted (root)" 0 "$(mincore_resident "$f")"
		assertEquals "mincore: every page of f resident for nobody, a figure that tells nothing" 5 \
			"$(as_nobody bash -c "$(declare -f mincore_resident); mincore_resident '$f'")"
	else
		if [ "$err" = 0 ]; then
			# A kernel that tells anyone (before 6.15): measured.
			run as_nobody "$DCP_BIN/dcache-probe" --pages "$f"
			assertContains "$OUT" "pages=5/5"
			startSkipping
		fi
		assertEquals "the kernel refuses nobody (EPERM)" 1 "$err"
	fi
	run as_nobody "$DCP_BIN/dcache-probe" --pages "$f" "$mine"
	assertEquals "not an error: exit 0 ($ERR)" 0 "$RC"
	assertEquals "its line" "cached pages=unknown:permission $f" "$(sed -n 1p <<<"$OUT")"
	assertEquals "its own file measured" "cached pages=4/4 $mine" \
		"$(sed -n '2s/ bytes=.* \// \//p' <<<"$OUT")"
	assertContains "$ERR" "1 file measured, 1 unknown (not measured), 0 errors"
	run as_nobody "$DCP_BIN/dcache-probe" --pages --min-resident 0 "$f"
	assertEquals "a verdict fails on it" 1 "$RC"
	run as_nobody "$DCP_BIN/dcache-probe" --pages --json "$f"
	assertEquals "unknown permission" "$(json_get '"%s %s" % (objs[0]["data"], objs[0]["data_reason"])' <<<"$OUT")"
	assertEquals 0 "$(json_get 'objs[-1]["status"]' <<<"$OUT")"
	# A walk of root's tree: every file unknown, none an error.
	as_nobody find "$MNT/t" -exec stat {} + >/dev/null
	run as_nobody "$DCP_BIN/dcache-probe" -r --pages --json "$MNT/t"
	assertEquals "walk: exit 0 ($ERR)" 0 "$RC"
	assertEquals "walk: 1 measured (nobody's), 6 unknown, 0 errors" "1 6 0" \
		"$(json_get '"%s %s %s" % (objs[-1]["data"]["files"], objs[-1]["data"]["unknown"], objs[-1]["data"]["errors"])' <<<"$OUT")"
	assertEquals "every unknown says permission" 6 "$(grep -c '"data_reason":"permission"' <<<"$OUT")"
	run as_nobody "$DCP_BIN/cachedopen" --pages "$f"
	assertEquals "cachedopen: exit 0" 0 "$RC"
	assertContains "$OUT" "pages=unknown:permission"
	# warm reads it (it may) but its residency is in no figure.
	run as_nobody "$DCP_BIN/warm" --pages --check "$f" "$mine"
	assertEquals "warm: exit 0 ($ERR)" 0 "$RC"
	assertContains "$ERR" "; 1 not measured (permission)"
	assertContains "$ERR" "resident before 4/4 pages (100.0%), after 4/4 (100.0%)"
	chown 0:0 "$mine"
	endSkipping
}

# "resident total" page sums over every regular file below the arguments,
# as fincore counts them (total: pages the size spans).
fincore_sums() {
	find "$@" -type f -print0 | xargs -0r fincore -n -r -b -o PAGES,SIZE |
		awk -v ps="$PS" '{ r += $1; t += int(($2 + ps - 1) / ps) } END { print r + 0, t + 0 }'
}

# This machine kind runs a DAMON "pageout" scheme (kdamond): it reclaims
# page-cache regions it judges idle, now and then within seconds of a read,
# and cachestat counts those pages as recently evicted.  A real shortfall
# repeats on every try; a page reclaimed between warm and the check does
# not, so each method gets three tries of warm followed at once by checks.
test_warm_pages_makes_a_cold_tree_fully_resident() {
	local m sums try ok wrc
	for m in willneed readahead read uring; do
		cold "$MNT"
		assertEquals "cold: nothing resident ($m)" 0 "$(fincore_sums "$MNT/k" "$MNT/t" | cut -d' ' -f1)"
		for try in 1 2 3; do
			cold "$MNT"
			run warm -r --pages --pages-method="$m" --check "$MNT/k" "$MNT/t"
			wrc=$RC ok=$ERR
			[ "$wrc" = 0 ] || break
			sums=$(fincore_sums "$MNT/k" "$MNT/t")
			run dcache-probe -r -q --min-cached 100 --min-resident 100 "$MNT/k" "$MNT/t"
			[ "${sums#* }" = "${sums% *}" ] && [ "$RC" = 0 ] &&
				[[ $ok == *"after ${sums#* }/${sums#* } (100.0%)"* ]] && break
			echo "  $m try $try: fincore $sums, dcache-probe exit $RC (reclaimed meanwhile?)" >&2
		done
		assertEquals "$m: warm: $ok" 0 "$wrc"
		assertEquals "$m: every page of every file resident per fincore" \
			"${sums#* }" "${sums% *}"
		assertContains "$m" "$ok" "resident before 0/${sums#* } pages (0.0%), after ${sums#* }/${sums#* } (100.0%)"
		assertEquals "$m: dcache-probe agrees: warm in both halves" 0 "$RC"
	done
}

test_warm_pages_limits() {
	local j
	run warm -r --pages --max-file-size 8K "$MNT/k"
	assertEquals 0 "$RC"
	assertEquals "files over 8 KiB left out" "0 0 0 0" "$(for f in m big all sparse; do
		fincore -n -r -o PAGES "$MNT/k/$f"; done | tr '\n' ' ' | sed 's/ $//')"
	assertEquals "smaller ones read" "1 1 2" "$(for f in e1 p1 p2; do
		fincore -n -r -o PAGES "$MNT/k/$f"; done | tr '\n' ' ' | sed 's/ $//')"
	assertContains "$ERR" "4 left out by limits"
	cold "$MNT"
	run warm -r --pages --json --max-bytes 100K "$MNT/k"
	assertEquals 0 "$RC"
	j=$(json_get 'objs[-1]["data"]["bytes_read"]' <<<"$OUT")
	assertTrue "at most 100 KiB read ($j)" "[ $j -le 102400 ] && [ $j -gt 0 ]"
	# Whole pages of what was read: resident bytes (each file's capped at
	# its size) within the budget plus the partly read file's last page.
	assertTrue "no read-ahead past the budget" "[ $(find "$MNT/k" -type f -print0 |
		xargs -0 fincore -n -r -b -o RES,SIZE |
		awk '{ r += ($1 < $2 ? $1 : $2) } END { print r + 0 }') -le $((102400 + PS)) ]"
	# By default half of MemAvailable when the run starts.  The machine's
	# figure moves with every other program's memory, so the run reads a
	# copy taken now, bind-mounted over /proc/meminfo in a mount namespace
	# of its own, and the budget is exactly half of that copy's figure.
	cp /proc/meminfo "$SHUNIT_TMPDIR/meminfo"
	local avail
	avail=$(($(awk '$1 == "MemAvailable:" { print $2 }' "$SHUNIT_TMPDIR/meminfo") * 1024))
	run unshare --mount --propagation private -- sh -c 'mount --bind "$0" /proc/meminfo && exec "$@"' \
		"$SHUNIT_TMPDIR/meminfo" warm -r --pages --json "$MNT/t"
	assertEquals "by default half the available memory" $((avail / 2)) \
		"$(json_get 'objs[-1]["data"]["max_bytes"]' <<<"$OUT")"
	run warm --max-bytes 12Q "$MNT/k"
	assertEquals 64 "$RC"
}

# A sparse file costs the data it holds, never its apparent size: without
# cachestat, mincore asks only its data extents (SEEK_DATA/SEEK_HOLE), and
# warm reads only those and charges only those to its limits.  (Before:
# the mincore fallback walked an 8 EiB file 64 MiB at a time, for months;
# warm read holes up to its budget and charged a 2 TiB file's size to
# --max-file-size, leaving its data out.)
test_sparse_files_cost_their_data() {
	local t=$SHUNIT_TMPDIR/tmpfs d=$MNT/sparse at m
	at=$(((1 << 40) / PS)) # the data: 8 pages at 1 TiB
	# tmpfs holds files up to 8 EiB (ext4 on the fixture, 1 KiB blocks, 4 TiB).
	mkdir -p "$t" && mount -t tmpfs -o size=16M tmpfs "$t" || fail "tmpfs"
	truncate -s $(((1 << 63) - 1)) "$t/huge"
	dd if=/dev/urandom of="$t/huge" bs="$PS" seek="$at" count=8 conv=notrunc 2>/dev/null
	run timeout 20 "$FI" cachestat=ENOSYS -- dcache-probe --pages --json "$t/huge"
	assertEquals "mincore over an 8 EiB sparse file: no hang" 0 "$RC"
	assertEquals "its 8 pages of 8 EiB" "mincore 8 $(((1 << 62) / PS * 2))" \
		"$(json_get '"%s %s %s" % (objs[0]["pages"]["method"], objs[0]["pages"]["resident"], objs[0]["pages"]["total"])' <<<"$OUT")"
	run timeout 20 warm --pages --json "$t/huge"
	assertEquals "warm: no hang" 0 "$RC"
	# tmpfs data lives in the page cache: all of it is resident already,
	# and a resident page is never read again (nor is a hole).
	assertEquals "warm reads nothing: no hole, no resident page" 0 "$(json_get 'objs[-1]["data"]["bytes_read"]' <<<"$OUT")"
	umount "$t"

	mkdir -p "$d"
	truncate -s 2T "$d/huge"
	dd if=/dev/urandom of="$d/huge" bs="$PS" seek="$at" count=8 conv=notrunc 2>/dev/null
	head -c $((16 * PS)) /dev/urandom >"$d/real"
	sync
	cold "$MNT"
	no_readahead
	dd if="$d/huge" of=/dev/null bs="$PS" skip=$((at + 2)) count=3 2>/dev/null
	run timeout 20 "$FI" cachestat=ENOSYS -- dcache-probe --pages --json "$d/huge"
	assertEquals "the 3 pages read, cold fixture (mincore)" "mincore 3" \
		"$(json_get '"%s %s" % (objs[0]["pages"]["method"], objs[0]["pages"]["resident"])' <<<"$OUT")"
	run timeout 20 dcache-probe --pages --json "$d/huge"
	assertEquals "$(pages_method) agrees" "3" "$(json_get 'objs[0]["pages"]["resident"]' <<<"$OUT")"
	for m in willneed readahead read uring; do
		cold "$MNT"
		run timeout 60 warm -r --pages --pages-method="$m" --json --max-file-size 1M --max-bytes 1M "$d"
		assertEquals "$m: warm" 0 "$RC"
		assertEquals "$m: both files' data read, no hole: nothing left out" "$((24 * PS)) 0" \
			"$(json_get '"%s %s" % (objs[-1]["data"]["bytes_read"], objs[-1]["data"]["left_out"])' <<<"$OUT")"
		# Reclaim may take a page back meanwhile, never add one: no page
		# of a hole was brought in.
		run dcache-probe --pages --json "$d/huge"
		assertTrue "$m: at most the 8 data pages resident, none in holes" \
			"[ $(json_get 'objs[0]["pages"]["resident"]' <<<"$OUT") -le 8 ]"
	done
	run timeout 60 warm -r --pages --json --max-bytes $((10 * PS)) "$d"
	assertTrue "the budget counts data bytes: at most 10 pages read" \
		"[ $(json_get 'objs[-1]["data"]["bytes_read"]' <<<"$OUT") -le $((10 * PS)) ]"
	rm -rf "$d"
}

# A manifest anyone may have edited can name any range: over a sparse file,
# a restore reads and a check counts only the data the file holds, each
# page once, never its apparent size (here 2 TiB named twice over 8 pages of
# data at 1 TiB); without cachestat, mincore asks only the data extents.
test_manifest_ranges_cost_the_data_held() {
	local d=$MNT/msparse at m=$SHUNIT_TMPDIR/sparse.jsonl
	at=$(((1 << 40) / PS))
	mkdir -p "$d"
	truncate -s 2T "$d/huge"
	dd if=/dev/urandom of="$d/huge" bs="$PS" seek="$at" count=8 conv=notrunc 2>/dev/null
	sync
	python3 - "$d/huge" >"$m" <<'PY'
import json, os, sys
st = os.stat(sys.argv[1])
print(json.dumps({"type": "entry", "path": sys.argv[1], "state": "cached", "kind": "file", "depth": 0,
                  "identity": {"dev": "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)),
                               "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns},
                  "ranges": [[0, st.st_size], [4096, st.st_size - 4096]]}))
PY
	cold "$MNT"
	run timeout 60 warm --json --manifest="$m"
	assertEquals "restore: no hang ($ERR)" 0 "$RC"
	assertEquals "the 8 data pages read, no hole" "$((8 * PS))" "$(json_get 'objs[-1]["data"]["bytes_read"]' <<<"$OUT")"
	run timeout 60 "$FI" cachestat=ENOSYS -- dcache-probe --json --manifest="$m"
	assertEquals "check without cachestat: no hang ($ERR)" 0 "$RC"
	assertEquals "the 8 data pages counted, and resident" "mincore 8 8" \
		"$(json_get '"%s %s %s" % (objs[0]["pages"]["method"], objs[0]["pages"]["total"], objs[0]["pages"]["resident"])' <<<"$OUT")"
	run timeout 60 dcache-probe --json --manifest="$m"
	assertEquals "$(pages_method) agrees" "8 8" \
		"$(json_get '"%s %s" % (objs[0]["pages"]["total"], objs[0]["pages"]["resident"])' <<<"$OUT")"
	rm -rf "$d"
}

# Any -j completes under any descriptor limit: the files --pages opens, the
# per-thread io_uring and the closes queued in it are in the walker's
# budget.  (Before: warm -r --pages --check -j 128 under a limit of 12 or
# 10 failed dozens to hundreds of files with EMFILE.)
test_any_jobs_under_any_descriptor_limit() {
	local d=$MNT/wide n m j
	python3 - "$d" <<'PY'
import os, sys
for i in range(128):
    os.makedirs("%s/d%03d" % (sys.argv[1], i))
    for k in range(20):
        with open("%s/d%03d/f%02d" % (sys.argv[1], i, k), "w") as f:
            f.write("x" * 100)
PY
	find "$d" -type f -exec cat {} + >/dev/null
	for n in 1024 64 12 10; do
		run prlimit --nofile="$n" -- dcache-probe -r --pages -j 128 --json -s "$d"
		assertEquals "dcache-probe, limit $n: exit" 0 "$RC"
		assertNotContains "dcache-probe, limit $n" "$ERR" "Too many open files"
		assertEquals "dcache-probe, limit $n: every file measured" "2560 0 0" \
			"$(json_get '"%s %s %s" % (objs[-1]["data"]["files"], objs[-1]["data"]["unknown"], objs[-1]["data"]["errors"])' <<<"$OUT")"
		for m in read uring; do
			run prlimit --nofile="$n" -- warm -r --pages --check --pages-method="$m" -j 128 --json "$d"
			assertEquals "warm -r $m, limit $n: exit" 0 "$RC"
			assertNotContains "warm -r $m, limit $n" "$ERR" "Too many open files"
			assertEquals "warm -r $m, limit $n: every file read" "2560 0" \
				"$(json_get '"%s %s" % (objs[-1]["data"]["files"], objs[-1]["data"]["errors"])' <<<"$OUT")"
		done
		find "$d" -type f >"$SHUNIT_TMPDIR/wide.list"
		run prlimit --nofile="$n" -- warm --pages --check -j 128 --json --from="$SHUNIT_TMPDIR/wide.list"
		assertEquals "warm --from, limit $n: exit" 0 "$RC"
		assertNotContains "warm --from, limit $n" "$ERR" "Too many open files"
		assertEquals "warm --from, limit $n: every file read" "2560 0" \
			"$(json_get '"%s %s" % (objs[-1]["data"]["files"], objs[-1]["data"]["errors"])' <<<"$OUT")"
	done
	rm -rf "$d"
}

test_warm_pages_never_opens_fifo_or_device() {
	local log=$SHUNIT_TMPDIR/strace-warm
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 60 strace -f -qq -e trace=openat,openat2,open -o "$log" \
		warm -r --pages "$MNT/dev" >/dev/null 2>&1
	assertEquals "no hang" 0 $?
	assertEquals "the FIFO and the device are looked at, never opened" "" \
		"$(grep -E '/dev/(fifo|null)"|"(fifo|null)"' "$log" | grep -v O_PATH)"
	assertContains "$(grep '"file"' "$log")" "O_PATH"
	assertContains "its checked descriptor is opened for reading" \
		"$(grep -E 'openat\([0-9]+, "[0-9]+", ' "$log")" "O_RDONLY"
	assertEquals 1 "$(fincore -n -r -o PAGES "$MNT/dev/file")"
}

# A file is opened by name only where nobody else can rename it: in a
# directory of the caller's that no one else may write to.  Anywhere else
# its name is looked up once (O_PATH) and that descriptor is reopened.
test_open_by_name_only_in_private_directories() {
	local d log=$SHUNIT_TMPDIR/strace-private
	d=$(mktemp -d "$FIXTURE_ROOT/private.XXXXXX")
	echo data >"$d/f"
	for mode in 0755 0775 0757; do
		chmod "$mode" "$d"
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 20 strace -f -qq -e trace=openat2,openat -o "$log" \
			dcache-probe -r --pages "$d" >"$SHUNIT_TMPDIR/o" 2>/dev/null
		assertContains "$mode: measured" "$(cat "$SHUNIT_TMPDIR/o")" "cached pages=1/1 "
		if [ "$mode" = 0755 ]; then
			assertContains "$mode: opened by name" "$(grep '"f"' "$log")" "O_RDONLY|O_NOCTTY|O_NONBLOCK"
		else
			assertEquals "$mode: the name is only looked up" "" "$(grep '"f"' "$log" | grep -v O_PATH)"
			assertContains "$mode: its descriptor is reopened" \
				"$(grep -E 'openat\([0-9]+, "[0-9]+", ' "$log")" "O_RDONLY|O_NOCTTY|O_NONBLOCK"
		fi
	done
	chown 65534 "$d"
	chmod 0755 "$d"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 20 strace -f -qq -e trace=openat2,openat -o "$log" \
		dcache-probe -r --pages "$d" >/dev/null 2>&1
	assertEquals "another user's directory: the name is only looked up" "" "$(grep '"f"' "$log" | grep -v O_PATH)"
	rm -rf "$d"
}

# A user (uid 65534) swaps a regular file with a FIFO (renameat2
# RENAME_EXCHANGE, in a loop) in a directory of its own while root measures
# or warms the tree: what is opened for reading must be the object whose
# type was checked, never the FIFO.  A writer blocked in open(O_WRONLY) on
# the FIFO (through a hard link elsewhere) counts every open of it for
# reading.  (Before the checked descriptor was reopened: 1,744 opens in 100
# runs of each.)
test_a_fifo_renamed_in_is_never_opened() {
	local d w s i
	d=$(mktemp -d "$FIXTURE_ROOT/race.XXXXXX")
	mkdir "$d/t" "$d/anchor"
	echo data >"$d/t/f"
	mkfifo "$d/t/p"
	ln "$d/t/p" "$d/anchor/p"
	ln -s t/f "$d/link"
	chown -R 65534:65534 "$d/t"
	chmod 0755 "$d"
	: >"$d/opens"
	(while :; do exec 3>"$d/anchor/p"; echo x >>"$d/opens"; exec 3>&-; done) 2>/dev/null &
	w=$!
	# A simple command, so that $! is the swapper itself; it also stops when
	# the stop file appears, so that nothing outlives the test.
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = (x.encode() for x in sys.argv[1:4])
while not os.path.exists(stop):
    for _ in range(1000):
        libc.renameat2(-100, a, -100, b, 2)  # RENAME_EXCHANGE
' "$d/t/f" "$d/t/p" "$d/stop" &
	s=$!
	for ((i = 0; i < ${DCP_RACE_RUNS:-300}; i++)); do
		dcache-probe -r --pages "$d/t" >/dev/null 2>&1
		dcache-probe -L --pages "$d/link" >/dev/null 2>&1
		warm -r --pages "$d/t" >/dev/null 2>&1
	done
	: >"$d/stop"
	kill "$w"
	wait "$s" "$w" 2>/dev/null
	assertEquals "opens of the FIFO for reading" 0 "$(wc -l <"$d/opens")"
	# The check can fail: a plain open of the same names, in the same loop.
	(while :; do exec 3>"$d/anchor/p"; echo x >>"$d/opens"; exec 3>&-; done) 2>/dev/null &
	w=$!
	for ((i = 0; i < 20; i++)); do
		timeout 1 head -c1 "$d/anchor/p" >/dev/null 2>&1
	done
	kill "$w"
	wait "$w" 2>/dev/null
	assertNotEquals "control: a plain open is counted" 0 "$(wc -l <"$d/opens")"
	rm -rf "$d"
}

test_cachedopen_pages() {
	local f=$MNT/k/m after
	no_readahead
	dd if="$f" of=/dev/null bs="$PS" skip=10 count=5 2>/dev/null
	run cachedopen --pages "$f"
	assertEquals 0 "$RC"
	assertEquals "open: 3
data: pages=5/256 bytes=$((5 * PS))/$((256 * PS)) $(cs3 0 0 0)" "$OUT"
	run cachedopen --pages --json "$f" "$MNT/t/a/f1"
	assertEquals "f1 missed" 1 "$RC"
	assertEquals "measured 5 unknown" "$(json_get '"%s %s %s" % (objs[0]["data"], objs[0]["pages"]["resident"], objs[1]["data"])' <<<"$OUT")"
	assertEquals "1 1" "$(json_get '"%d %d" % (objs[-1]["data"]["files"], objs[-1]["data"]["unknown"])' <<<"$OUT")"
	after=$(probe_all)
	assertContains "the missed file was not opened" "$after" "miss t/a/f1"
	stat "$MNT/dev/null" >/dev/null
	run cachedopen --pages --path "$f" "$MNT/dev/null"
	assertEquals 0 "$RC"
	assertContains "$OUT" "$f: data: pages=5/256"
	assertContains "$OUT" "$MNT/dev/null: data: pages=-"
}

test_per_dir_and_per_mount_tables() {
	cat "$MNT/t/a/f1" >/dev/null
	run dcache-probe --pages --per-dir=1 "$MNT/t"
	assertContains "f2, f3 and sub/g not measured: +3?" "$OUT" "$(printf '100.0%%\t5/5+3?\t%s' "$MNT/t/a")"
	du -a "$MNT/t" >/dev/null # looks up every name
	run dcache-probe --pages --per-dir=1 "$MNT/t"
	assertContains "$OUT" "$(printf '\t 31.2%%\t5/16\t%s' "$MNT/t/a")"
	assertContains "$OUT" "$(printf '\t  0.0%%\t0/12\t%s' "$MNT/t/b")"
	run dcache-probe --pages --per-mount "$MNT/t/a/f1" "$MNT/t/a/f2"
	assertContains "per mount" "$OUT" "$(printf 'ext4\t 50.0%%\t5/10\t%s' "$MNT")"
	run dcache-probe -r --pages --per-dir=1 --per-mount --prometheus "$MNT/t"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format"
	assertEquals "5 16 5" "$(prom_check "dcprobe_dir_data_pages{command=\"dcache-probe\",path=\"$MNT/t/a\",kind=\"resident\"}" \
		"dcprobe_dir_data_pages{command=\"dcache-probe\",path=\"$MNT/t/a\",kind=\"total\"}" \
		"dcprobe_mount_data_pages{command=\"dcache-probe\",mountpoint=\"$MNT\",fstype=\"ext4\",mount_id=\"$(awk -v m="$MNT" '$5 == m {print $1}' /proc/self/mountinfo)\",kind=\"resident\"}" <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
	run dcache-probe --pages --per-dir=1 --json "$MNT/t"
	assertEquals "5 16" "$(json_get '[ "%d %d" % (o["data"]["resident"], o["data"]["pages"]) for o in objs if o["type"] == "dir" and o["path"].endswith("/t/a")][0]' <<<"$OUT")"
}

# -h (and --si) applies to every size column: the --pages tables' figures
# in pages become bytes as du -h writes them (fincore's RES and SIZE
# columns) in -s, -c, --per-dir and --per-mount rows, their heading naming
# RESIDENT/SIZE, and warm --check's "resident before/after" the same; -0
# rows carry the text rows' columns; JSON keeps exact numbers.  (Before:
# the tables and warm stayed in pages under -h, and a -0 row had no data
# columns.)  The expected figures come from numfmt, not from the tool.
test_h_applies_to_every_size_column() {
	local d=$MNT/t/b size pages h si hp t=$SHUNIT_TMPDIR/typescript.h
	cat "$d/f1" "$d/f2" "$d/f3" >/dev/null
	size=$((3 * (3 * PS + 7))) pages=12
	h=$(numfmt --to=iec --round=up "$size")
	si=$(numfmt --to=si --round=up "$size" | sed 's/K$/k/')
	hp=$(numfmt --to=iec --round=up $((pages * PS)))
	run dcache-probe -r --pages -s -c "$d"
	assertEquals "-s -c: pages by default" "100.0%	$pages/$pages	$d
100.0%	$pages/$pages	total" "$(cut -f3- <<<"$OUT")"
	run dcache-probe -r --pages -s -c -h "$d"
	assertEquals "-s -c -h: bytes" "100.0%	$h/$h	$d
100.0%	$h/$h	total" "$(cut -f3- <<<"$OUT")"
	local text=$OUT
	assertEquals "-0: the text rows' columns" "$text" \
		"$(dcache-probe -r --pages -s -c -h -0 "$d" | tr '\0' '\n')"
	run dcache-probe -r --pages -s --si "$d"
	assertEquals "--si: powers of 1000" "100.0%	$si/$si	$d" "$(cut -f3- <<<"$OUT")"
	run dcache-probe -r --pages --per-dir=0 -h "$d"
	assertEquals "--per-dir -h" "100.0%	$h/$h	$d" "$(cut -f3- <<<"$OUT")"
	assertEquals "--per-dir -h -0" "100.0%	$h/$h	$d" \
		"$(dcache-probe -r --pages --per-dir=0 -h -0 "$d" 2>/dev/null | tr '\0' '\n' | cut -f3-)"
	run dcache-probe -r --pages --per-mount -h "$d"
	assertEquals "--per-mount -h" "100.0%	$h/$h	$MNT" "$(cut -f4- <<<"$OUT")"
	assertEquals "--per-mount -h -0" "100.0%	$h/$h	$MNT" \
		"$(dcache-probe -r --pages --per-mount -h -0 "$d" 2>/dev/null | tr '\0' '\n' | cut -f4-)"
	run dcache-probe -r --pages -s -h --json "$d"
	assertEquals "JSON keeps bytes and pages" "$size $size $pages $pages" \
		"$(json_get '[ "%d %d %d %d" % (o["data"]["resident_bytes"], o["data"]["size"], o["data"]["resident"], o["data"]["pages"]) for o in objs if o["type"] == "root"][0]' <<<"$OUT")"
	script -qfec "dcache-probe -r --pages -s -h '$d'" "$t" >/dev/null 2>&1
	assertEquals "the heading names the bytes" "CACHED%	CACHED/PROBED	DATA%	RESIDENT/SIZE	PATH" \
		"$(tr -d '\r' <"$t" | grep '^CACHED%')"
	run warm -r --pages --check -h "$d"
	assertContains "warm --check -h ($ERR)" "$ERR" "resident before $hp/$hp (100.0%), after $hp/$hp (100.0%)"
	run warm -r --pages --check "$d"
	assertContains "warm --check ($ERR)" "$ERR" "resident before $pages/$pages pages (100.0%), after $pages/$pages (100.0%)"
}

# The new options are in each command's man page and both completions.
test_pages_options_documented() {
	local src=${DCP_SRC:-$DCP_TESTS/..} c opt
	for c in dcache-probe cachedopen warm uring-open; do
		for opt in $("$c" --help | grep -o -- '--\(pages\|min-resident\|max-bytes\|max-file-size\)[a-z-]*' | sort -u); do
			assertContains "$c: $opt in the man page" "$(sed 's/\\-/-/g' "$src/man/$c.1")" "$opt"
			assertContains "$c: $opt in the bash completion" "$(cat "$src/completions/$c")" "$opt"
			assertContains "$c: $opt in the zsh completion" "$(cat "$src/completions/_$c")" "$opt"
		done
	done
	assertContains "$(warm --help)" "--pages-method"
}

test_uring_open_pages() {
	local f=$MNT/k/m
	no_readahead
	dd if="$f" of=/dev/null bs="$PS" skip=10 count=5 2>/dev/null
	run uring-open --pages "$f"
	assertEquals 0 "$RC"
	assertContains "$OUT" "data: pages=5/256 bytes=$((5 * PS))/$((256 * PS)) $(cs3 0 0 0)"
	assertEquals "5" "$(fincore -n -r -o PAGES "$f")"
	run uring-open --pages --cached --json "$f" "$MNT/t/a/f1"
	assertEquals "f1 missed" 1 "$RC"
	assertEquals "measured 5 unknown" "$(json_get '"%s %s %s" % (objs[0]["data"], objs[0]["pages"]["resident"], objs[1]["data"])' <<<"$OUT")"
	assertContains "the missed file was not opened" "$(probe_all)" "miss t/a/f1"
	run uring-open --pages --flags path "$f"
	assertContains "$OUT" "data: pages=-"
	run uring-open --pages --bench --from=- </dev/null
	assertEquals 64 "$RC"
}

# A user's FUSE mount in the tree: its daemon stopped, an open there would
# never return.  The data probe does not open files on FUSE.
test_fuse_files_are_not_opened() {
	local src=$SHUNIT_TMPDIR/fsrc fuse pid links
	fuse=$(mktemp -d "$FIXTURE_ROOT/fuse.XXXXXX")
	mkdir -p "$src" && echo data >"$src/f"
	bindfs -o entry_timeout=600,attr_timeout=600 "$src" "$fuse" || fail "bindfs"
	cat "$fuse/f" >/dev/null
	pid=$(fixture_pgrep "bindfs .*$fuse" | head -1)
	assertNotNull "the daemon" "$pid"
	# Reached through symlinks on another filesystem: the mount that
	# decides is the one of the object reached, not the one of the path as
	# written or of the link's directory.  (Before: each of these hung.)
	links=$(mktemp -d "$FIXTURE_ROOT/links.XXXXXX")
	ln -s "$fuse" "$links/dir"
	ln -s "$fuse/f" "$links/file"
	# Following a link reads it, and under relatime a link read within the
	# clock tick of its creation still wants its atime updated, which a
	# cached walk refuses (a miss): its atime is put past its ctime first.
	touch -h -a -d "@$(($(date +%s) + 3600))" "$links/dir" "$links/file"
	stat -L "$links/dir/f" "$links/file" >/dev/null
	fuse_stop "$pid"
	run timeout 20 dcache-probe --pages "$fuse/f"
	assertEquals "no hang" 0 "$RC"
	assertEquals "cached pages=unknown:filesystem $fuse/f" "$OUT"
	run timeout 20 dcache-probe --pages "$links/dir/f"
	assertEquals "through a directory link: no hang" 0 "$RC"
	assertEquals "cached pages=unknown:filesystem $links/dir/f" "$OUT"
	run timeout 20 dcache-probe -L --pages "$links/file"
	assertEquals "-L PATH: no hang" 0 "$RC"
	assertEquals "cached pages=unknown:filesystem $links/file" "$OUT"
	run timeout 20 dcache-probe -r -L --pages "$links"
	assertEquals "-r -L: no hang, the link's directory unvisited" 1 "$RC"
	assertContains "$OUT" "cached pages=unknown:filesystem $links/file"
	assertContains "$OUT" "unvisited $links/dir"
	run timeout 20 cachedopen --path --pages "$links/file"
	assertEquals "cachedopen --path --pages: no hang" 0 "$RC"
	fuse_cont
	umount "$fuse"
	rm -rf "$links"
}

# A walk does not go from one mount into a FUSE (or network) mount below:
# an open there waits on a daemon that the user who mounted it can stop.
# It is reported unvisited (dcache-probe, exit 1) or not entered (warm,
# exit 2), and a mount given as a PATH is walked.  (Before: every walk
# below hung on the stopped daemon.)
test_walks_do_not_enter_fuse_mounts() {
	local src=$SHUNIT_TMPDIR/wsrc t pid
	t=$(mktemp -d "$FIXTURE_ROOT/walk.XXXXXX")
	mkdir -p "$src/d" "$t/sub/mnt" && touch "$src/f" "$src/d/g" "$t/a"
	ln -s "$t/sub/mnt" "$t/link"
	bindfs "$src" "$t/sub/mnt" || fail "bindfs"
	run timeout 20 dcache-probe -r "$t/sub/mnt"
	assertEquals "a FUSE mount given as a PATH is walked" 4 "$(grep -c . <<<"$OUT")"
	pid=$(fixture_pgrep "bindfs .*$t/sub/mnt" | head -1)
	assertNotNull "the daemon" "$pid"
	fuse_stop "$pid"
	run timeout 20 dcache-probe -r "$t"
	assertEquals "-r: no hang, exit 1 ($ERR)" 1 "$RC"
	assertContains "$OUT" "unvisited $t/sub/mnt"
	assertContains "$ERR" "1 directory not visited"
	run timeout 20 dcache-probe -r -L --pages --json "$t"
	assertEquals "-r -L --pages: no hang, exit 1 ($ERR)" 1 "$RC"
	assertEquals "both ways in unvisited, as a mount that may wait" \
		"mount-may-wait $t/link
mount-may-wait $t/sub/mnt" \
		"$(json_get '"\n".join(sorted("%s %s" % (o["reason"], o["path"]) for o in objs if o["type"] == "unvisited"))' <<<"$OUT")"
	run timeout 20 dcache-probe -r -x "$t"
	assertEquals "-x: no hang, a mount point is not listed anyway" 0 "$RC"
	run timeout 20 warm -r -L --check "$t"
	assertEquals "warm: no hang, not entered is an error" 2 "$RC"
	assertContains "$ERR" "'$t/sub/mnt': not entered: an open there may wait"
	assertContains "$ERR" "'$t/link': not entered"
	run timeout 20 warm -r "$t/sub"
	assertEquals "warm -r SUB: no hang" 2 "$RC"
	fuse_cont
	umount "$t/sub/mnt"
	rm -rf "$t"
}

# A manifest is input anyone may have edited: a restore looks each path up
# from the root of the mount its text names, never leaving it, and never
# on FUSE or NFS, so a stopped daemon cannot stall it, whether the path is
# on the FUSE mount or reaches it through a symlink.  (dcache-probe
# --manifest probes with RESOLVE_CACHED, which never waits either.)
test_manifest_restore_never_waits_on_fuse() {
	local src=$SHUNIT_TMPDIR/msrc fuse pid d=$MNT/mlinks m=$SHUNIT_TMPDIR/fuse.jsonl
	fuse=$(mktemp -d "$FIXTURE_ROOT/mfuse.XXXXXX")
	mkdir -p "$src" "$d/real" && head -c $((4 * PS)) /dev/urandom >"$src/f"
	head -c $((4 * PS)) /dev/urandom >"$d/real/f"
	bindfs -o entry_timeout=600,attr_timeout=600 "$src" "$fuse" || fail "bindfs"
	ln -s "$fuse" "$d/dir"
	cat "$fuse/f" "$d/real/f" >/dev/null
	python3 - "$fuse/f" "$d/dir/f" "$d/real/f" >"$m" <<'PY'
import json, os, sys
for p in sys.argv[1:]:
    st = os.stat(p)
    print(json.dumps({"type": "entry", "path": p, "state": "cached", "kind": "file", "depth": 0,
                      "identity": {"dev": "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)),
                                   "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns},
                      "ranges": [[0, st.st_size]]}))
PY
	sync
	cold "$MNT"
	pid=$(fixture_pgrep "bindfs .*$fuse" | head -1)
	assertNotNull "the daemon" "$pid"
	fuse_stop "$pid"
	run timeout 20 warm --manifest="$m"
	assertEquals "no hang; the two FUSE paths are errors ($ERR)" 2 "$RC"
	assertContains "$ERR" "'$fuse/f': on a filesystem where a lookup may wait"
	assertContains "$ERR" "'$d/dir/f': reached through another mount, not restored"
	assertEquals "the file on the fixture is restored" "$((4 * PS))" "$(fincore -n -r -b -o RES "$d/real/f")"
	run timeout 20 dcache-probe --manifest="$m"
	assertNotEquals "dcache-probe --manifest: no hang" 124 "$RC"
	fuse_cont
	umount "$fuse"
	rm -rf "$d"
}

# shellcheck disable=SC1090
# Issue 20 (snapshot): --ranges lists each file's resident byte ranges,
# page-aligned and coalesced, with its identity.  With no read-ahead the
# pages a dd brings in are known: the ranges must be exactly those, and
# their pages fincore's count.  Checked on a cold fixture.
test_ranges_are_the_pages_read() {
	local j=$SHUNIT_TMPDIR/ranges.json name size ranges want r err
	residency_round >/dev/null
	run dcache-probe --ranges --json "$MNT"/k/*
	assertEquals "exit: $ERR" 0 "$RC"
	printf '%s\n' "$OUT" >"$j"
	while IFS=$'\t' read -r name size ranges want; do
		[ -n "$name" ] || continue
		r=$(python3 - "$j" "$MNT/k/$name" "$PS" "${size#S}" "$ranges" <<'PY'
import json, os, sys
j, path, ps, size, reads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
want = []
for r in reads.split():
    if r == "-":
        continue
    skip, count = map(int, r.split(":"))
    off, ln = skip * ps, min(count * ps, -(-size // ps) * ps - skip * ps)
    if want and want[-1][0] + want[-1][1] == off:
        want[-1][1] += ln
    else:
        want.append([off, ln])
st = os.stat(path)
for line in open(j):
    o = json.loads(line)
    if o.get("type") == "entry" and o.get("path") == path:
        # Format 2: nothing resident, nothing but the name to restore: no
        # identity, no "pages" (a manifest's file record).
        if not want:
            ok_id = "identity" not in o
        else:
            ident = o["identity"]
            ok_id = (ident["ino"], ident["size"], ident["mtime_ns"], ident["dev"]) == \
                (st.st_ino, st.st_size, st.st_mtime_ns, "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)))
        ok_id = ok_id and "pages" not in o and "data" not in o
        pages = sum(l for _, l in o["ranges"]) // ps
        print("ok" if o["ranges"] == want and ok_id else "got %s want %s identity %s" % (o["ranges"], want, ok_id), pages)
PY
)
		assertEquals "$name: ranges and identity" ok "${r% *}"
		assertEquals "$name: the ranges' pages are fincore's" "$(fincore -n -r -o PAGES "$MNT/k/$name")" "${r#* }"
	done <<<"$FILES"
	# As nobody (who may not write the file) a kernel since 6.15 hides
	# residency: not measured, no identity, no ranges; a file nobody owns:
	# its ranges.  (Lookups as nobody first: RCU walks need the ACLs.)
	cp "$MNT/k/m" "$MNT/k/nobody.m" && chown "$NOBODY" "$MNT/k/nobody.m"
	as_nobody cat "$MNT/k/m" "$MNT/k/nobody.m" >/dev/null
	run as_nobody "$DCP_BIN/dcache-probe" --ranges --json "$MNT/k/m"
	# Without cachestat (ENOSYS) the kernel hides it if mincore shows nobody
	# other pages than root once it is evicted (since Linux 5.2: all 256
	# resident, of none).
	err=$(as_nobody bash -c "$(declare -f cachestat_errno); cachestat_errno '$MNT/k/m'")
	if [ "$err" = 38 ]; then
		evict "$MNT/k/m"
		[ "$(as_nobody bash -c "$(declare -f mincore_resident); mincore_resident '$MNT/k/m'")" = \
			"$(mincore_resident "$MNT/k/m")" ] && err=0 || err=1
	fi
	# (A manifest's first record is its format; the entries follow.)
	if [ "$err" = 1 ]; then
		assertEquals "nobody: unknown permission, no ranges" "unknown permission False" \
			"$(json_get '(lambda e: "%s %s %s" % (e["data"], e.get("data_reason"), "ranges" in e))([o for o in objs if o["type"] == "entry"][0])' <<<"$OUT")"
	else # a kernel that tells anyone: measured
		assertEquals "nobody: measured, with ranges" "None True" \
			"$(json_get '(lambda e: "%s %s" % (e.get("data"), "ranges" in e))([o for o in objs if o["type"] == "entry"][0])' <<<"$OUT")"
	fi
	run as_nobody "$DCP_BIN/dcache-probe" --ranges --json "$MNT/k/nobody.m"
	assertEquals "nobody's own file: measured (ranges, no data member), ranges as fincore" \
		"manifest None $(fincore -n -r -o PAGES "$MNT/k/nobody.m")" \
		"$(json_get '(lambda e: "%s %s %d" % (objs[0]["type"], e.get("data"), sum(l for _, l in e["ranges"]) // '"$PS"'))([o for o in objs if o["type"] == "entry"][0])' <<<"$OUT")"
	rm -f "$MNT/k/nobody.m"
	run dcache-probe --ranges "$MNT/k/m"
	assertEquals "--ranges needs --json" 64 "$RC"
	run dcache-probe -r -s --ranges --json "$MNT/k"
	assertEquals "--ranges needs per-path records" 64 "$RC"
}

# Issue 40: a manifest names a file by what survives a reboot, the
# filesystem's UUID and the file's handle, not by the device number alone.
# Its first record is its format (2), its roots come before any entry, an
# "fs" record gives the UUID (the one blkid reads from the device) before
# the first identity that names it, and the handle of an ext4 file is its
# inode number and generation (FS_IOC_GETVERSION, asked here through
# Python's fcntl).  A file with nothing resident has no identity.
test_ranges_identity_has_uuid_and_handle() {
	local j=$SHUNIT_TMPDIR/ident.json dev t=$MNT/k/tmpfs i fsuuid
	# A second filesystem inside (tmpfs: a UUID of its own per mount),
	# its files written by 8 threads with the fixture's: each "fs"
	# record must still come before the first identity naming it.
	mkdir -p "$t" && mount -t tmpfs -o size=4m none "$t" || fail "cannot mount tmpfs"
	for i in $(seq 40); do echo "$i" >"$t/f$i"; done
	cat "$MNT/k/m" "$MNT/k/all" >/dev/null
	stat "$MNT"/k/* >/dev/null # looked up: measured, most with nothing resident
	dev=$(findmnt -no SOURCE "$MNT")
	run dcache-probe -r -j 8 --ranges --json "$MNT/k"
	umount "$t" && rmdir "$t"
	assertEquals "exit: $ERR" 0 "$RC"
	printf '%s\n' "$OUT" >"$j"
	# Without FS_IOC_GETFSUUID (Linux 6.9, as the independent prober finds
	# it) ext4's UUID comes from its own ioctl or the device, and tmpfs has
	# none: its files are known by device number, said once in a notice.
	fsuuid=$(/usr/bin/python3 "$DCP_TESTS/lib/kfeat_probe.py" | awk '$1 == "fsuuid" { print $2 }')
	[ "$fsuuid" = present ] ||
		echo "SKIP test part: needs FS_IOC_GETFSUUID (Linux 6.9): a tmpfs UUID, ext4's from the kernel's ioctl" >&2
	assertEquals "format 2, roots, fs records and identities" ok "$(python3 - "$j" "$(blkid -p -o value -s UUID "$dev")" "$MNT/k" "$PS" "$t" "$fsuuid" <<'PY'
import fcntl, json, os, struct, sys
j, uuid, root, ps, tmp = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
have_fsuuid = sys.argv[6] == "present"
tmpfs_fs = ["tmpfs"] if have_fsuuid else []
notices = 0
objs = [json.loads(l) for l in open(j) if l.strip()]
bad = []
if objs[0] != {"type": "manifest", "version": 2, "page_size": ps}:
    bad.append("first record %s" % objs[0])
first_entry = min(i for i, o in enumerate(objs) if o["type"] == "entry")
roots = [(i, o) for i, o in enumerate(objs) if o["type"] == "manifest_root"]
if [(o["root"], o["path"]) for _, o in roots] != [(0, root)] or roots[0][0] > first_entry:
    bad.append("roots %s" % roots)
fs, ids = {}, 0
for o in objs:
    if o["type"] == "notice":
        notices += 1
    if o["type"] == "fs":
        fs[o["fs"]] = o
        if (o["uuid"] == uuid) != (o.get("fstype") == "ext4") \
                or (o["uuid_from"] == "fsuuid") != have_fsuuid \
                or o["uuid_from"] not in ("fsuuid", "ext4", "blkid", "by-uuid") \
                or o.get("fstype") not in ["ext4"] + tmpfs_fs or o["fs"] != len(fs) - 1:
            bad.append("fs record %s, blkid says %s" % (o, uuid))
    if o["type"] != "entry" or o.get("kind") != "file":
        continue
    if "data" in o:
        bad.append("%s: not measured: %s" % (o["path"], o))
        continue
    if not o.get("ranges"):
        if "identity" in o or o.get("ranges") != []:
            bad.append("%s: nothing resident, %s" % (o["path"], o))
        continue
    ident = o["identity"]
    ids += 1
    if o["path"].startswith(tmp + "/") and not have_fsuuid:
        if "fs" in ident or notices != 1:
            bad.append("%s: no UUID: identity %s after %d notices" % (o["path"], ident, notices))
        continue
    if ident.get("fs") not in fs or (fs[ident["fs"]]["fstype"] == "tmpfs") != o["path"].startswith(tmp + "/"):
        bad.append("%s: identity names fs %s, given before: %s" % (o["path"], ident.get("fs"), list(fs)))
    if o["path"].startswith(tmp + "/"):
        continue
    fd = os.open(o["path"], os.O_RDONLY)
    # FS_IOC_GETVERSION (_IOR('v', 1, long)): ext4 writes a 32-bit int.
    gen = struct.unpack("<I", fcntl.ioctl(fd, 0x80087601, b"\0" * 8)[:4])[0]
    st = os.fstat(fd)
    os.close(fd)
    want = "1:" + struct.pack("<II", st.st_ino, gen).hex()
    if ident.get("handle") != want:
        bad.append("%s: handle %s, ino %d generation %d: %s" % (o["path"], ident.get("handle"), st.st_ino, gen, want))
if ids < 42 or ids == sum(o["type"] == "entry" and o.get("kind") == "file" for o in objs) \
        or sorted(o["fstype"] for o in fs.values()) != ["ext4"] + tmpfs_fs or notices != 1 - len(tmpfs_fs):
    bad.append("%d files with an identity, filesystems %s" % (ids, fs))
print("; ".join(bad) or "ok")
PY
)"
}

. "$SHUNIT2"
