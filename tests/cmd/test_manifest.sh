#!/bin/bash
# Residency manifests (issue 20): a snapshot (dcache-probe -r --ranges
# --json) restored by warm --manifest and verified by dcache-probe
# --manifest, on a real cold fixture with read-ahead off, checked against
# cachestat(2) and fincore(1) (tests/lib/manifest.py), the loop device's
# sector counters and the independent prober tests/oprobe.
#
# The machine's DAMON pageout scheme (tests/README.md, "Known limits")
# reclaims page-cache pages left idle for about 5 s.  No check here waits
# or retries for it: a page read and then reclaimed leaves a shadow entry
# that cachestat counts as evicted (a remount leaves none), so the checks
# count such pages as read, and a sector count allows exactly the pages
# that were evicted before the command measured started.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

PS=$(getconf PAGESIZE)
# ext4 reads its block bitmaps in the background after a mount (its lazy
# init thread prefetches them, up to a second or two later): not in the
# sectors a command is charged with.
MOPTS=no_prefetch_block_bitmaps
OPROBE=${DCP_BUILD:-$DCP_BIN/..}/tests/oprobe

mpy() { python3 "$DCP_TESTS/lib/manifest.py" "$@"; }

# mchk ARGS... - a check of manifest.py: its lines, and a line saying so
# when it failed (a checker that crashes must not read as "no difference").
# Before Linux 6.5 (no cachestat) its "SKIP test part: ..." lines (a part
# it cannot check) and "unsure: ..." lines (what it could not tell apart)
# go to standard error, the log.
mchk() {
	local out
	out=$(mpy "$@" 2>&1) || out+=$'\n'"manifest.py $1 failed"
	grep -E '^(SKIP |unsure: )' <<<"$out" >&2
	grep -Ev '^(SKIP |unsure: )' <<<"$out"
}

# within_evicted MSG OK EV - assertTrue MSG OK, where OK is a test that holds
# with more pages evicted if it holds with fewer, made with EV pages
# evicted; EV "unknown" (no cachestat, before Linux 6.5): made with none
# evicted, and if it fails then, skipped (said), not failed.
within_evicted() {
	local t=${2//@EV@/${3/unknown/0}}
	if [ "$3" = unknown ] && ! eval "$t"; then
		echo "SKIP test part: needs cachestat (Linux 6.5): $1 (evicted pages unknown)" >&2
		return 0
	fi
	assertTrue "$1" "$t"
}

oneTimeSetUp() {
	# A fixture (as fixture_new) on a loop device of the suite's own,
	# attached for the whole run: a manifest records each file's device,
	# which must stay the same across remounts (mount -o loop may take
	# another device each time).  Nothing else opens the device, so an
	# unmount still drops its cached metadata.
	MNT=$(mktemp -d "$FIXTURE_ROOT/mnt.XXXXXX") || fail "mktemp"
	truncate -s 256M "$MNT.img" || fail "truncate"
	# 4 KiB blocks, as on a real disk (mke2fs takes 1 KiB below 512 MB).
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$MNT.img" >/dev/null || fail "mkfs"
	LOOP=$(losetup -f --show "$MNT.img") || fail "losetup"
	mount -o "$MOPTS" "$LOOP" "$MNT" || fail "mount $LOOP"
	chmod 0755 "$MNT"
	MDIR=$(mktemp -d "$FIXTURE_ROOT/manifests.XXXXXX")
	chmod 0755 "$MDIR"
	PLAN=$MDIR/plan
	M=$MDIR/w.jsonl
	mpy make "$MNT/w" "$PLAN" 2000 20 || fail "cannot make the tree"
	chmod -R a+rX "$MNT/w"
	# The workload, on a cold fixture without read-ahead: scattered page
	# ranges of 2000 files, then the snapshot.
	mcold || fail "cannot remount"
	mpy workload "$MNT/w" "$PLAN" || fail "workload"
	dcache-probe -r --ranges --json "$MNT/w" >"$M"
	json_log dcache-probe "$M"
	chmod 0644 "$M"
	# The bytes recorded: the sum of the ranges' lengths.
	REC=$(mchk check "$M" | awk '/^files / { print $6 }')
}

oneTimeTearDown() {
	umount "$MNT" 2>/dev/null
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	LOOP=
}

# mcold - unmount and mount again (every lookup and page of the fixture
# cold), read-ahead off.  umount is tried again while busy: io_uring
# releases a finished command's descriptors asynchronously (fixture.sh).
mcold() {
	local i
	sync -f "$MNT" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		umount "$MNT" 2>/dev/null && break
		sleep 0.1
	done
	mountpoint -q "$MNT" && { echo "mcold: $MNT stays busy" >&2; return 1; }
	mount -o "$MOPTS" "$LOOP" "$MNT" || return 1
	blockdev --setra 0 "$LOOP"
	# The remount left the superblock dirty: written now, not in a window
	# measured.
	sync -f "$MNT"
}

# Sectors read by the fixture's loop device so far.
sectors() { awk '{ print $3 }' "/sys/block/${LOOP#/dev/}/stat"; }

# lookup_bytes - the bytes a cold warm -r of the fixture reads: what
# looking the tree up costs, without its data.  Leaves the fixture warm.
lookup_bytes() {
	local s0 s1
	mcold || return 1
	s0=$(sectors)
	warm -r -q "$MNT/w"
	s1=$(sectors)
	echo $(((s1 - s0) * 512))
}

# Pages of MANIFEST's ranges and of the loop device's cache evicted now.
evicted() { mpy evicted "$1" "$LOOP"; }

# pin_start MANIFEST / pin_stop - hold what is resident of MANIFEST's
# ranges and of the loop device's cache locked in memory meanwhile
# (manifest.py pin): the machine's DAMON pageout may reclaim an idle page
# at any moment, also after evicted() counted and before the command
# measured looked, and that command would then rightly read it.  Pinned,
# the pages evicted before the command are the only ones it may read.
pin_start() {
	local line
	coproc PIN { mpy pin "$1" "$LOOP"; }
	read -r line <&"${PIN[0]}"
	[[ $line == pinned\ * ]] || { echo "pin_start: $line" >&2; return 1; }
	echo "  ${line#pinned } pages pinned" >&2
}
pin_stop() {
	local in=${PIN[1]} out=${PIN[0]} pid=$PIN_PID
	[ -n "$pid" ] || return 0
	exec {in}>&- {out}<&-
	wait "$pid"
}

# read_pages FILE - pages of FILE read in since the remount: resident per
# fincore, plus those reclaimed since (cachestat's evicted count).
# Before Linux 6.5 (no cachestat) the resident ones only, said.
read_pages() {
	local ev
	ev=$(file_evicted "$1")
	[ "$ev" = unknown ] && echo "SKIP test part: needs cachestat (Linux 6.5): pages of $1 read and evicted since not counted" >&2
	echo $(($(fincore -n -r -o PAGES "$1") + ${ev/unknown/0}))
}

# file_evicted FILE - FILE's pages evicted now (cachestat), or "unknown".
file_evicted() {
	python3 -c '
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import manifest
fd = os.open(sys.argv[2], os.O_RDONLY)
res, ev = manifest.cachestat(fd, 0, 0)
# Without cachestat: a file wholly resident has none evicted.
if ev is None and res == -(-os.fstat(fd).st_size // manifest.PS):
    ev = 0
print("unknown" if ev is None else ev)' "$DCP_TESTS/lib" "$1"
}

# bytes_read JSON - the data bytes_read of warm's JSON summary.
bytes_read() { json_get '[o for o in objs if o["type"] == "summary"][-1]["data"]["bytes_read"]' <<<"$1"; }

# Lines of strace -f output with the calls a thread left unfinished joined
# to their resumption, so that each open is one line with its result.
strace_joined() {
	python3 - "$1" <<'PY'
import re, sys
pending = {}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"^(\d+) +(.*) <unfinished \.\.\.>$", line)
    if m:
        pending[m.group(1)] = m.group(2)
        continue
    m = re.match(r"^(\d+) +<\.\.\. \w+ resumed>(.*)$", line)
    if m:
        print(m.group(1), pending.pop(m.group(1), "") + m.group(2))
        continue
    print(line)
PY
}

# The snapshot half, which the rest relies on: the manifest holds what the
# workload read (no read-ahead), files never looked up are misses.
test_snapshot_is_what_the_workload_read() {
	assertEquals "the snapshot's ranges are the pages read" "" "$(mchk expect "$MNT/w" "$PLAN" "$M" | head -5)"
	assertTrue "thousands of pages recorded ($REC bytes)" "[ $((REC / PS)) -gt 2000 ]"
}

# The reads go out in the order of the data on the device (FIEMAP), in
# batches of files held open at once: with one thread, the physical
# offsets of the files' first reads go down only where a batch begins.
# (The manifest's own order, the walk's, goes down hundreds of times.)
test_reads_follow_the_device_order() {
	local t=$MDIR/order.strace
	mcold || fail "remount"
	# LeakSanitizer cannot run under ptrace (an ASan build): leaks are
	# the other tests' business here.
	run bash -c 'ulimit -n 4096 && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" &&
		exec strace -f -qq -y -s 0 -e trace=pread64 -e signal=none -o "$1" warm -j 1 --manifest="$2"' - "$t" "$M"
	assertEquals "restore under strace ($ERR)" 0 "$RC"
	assertEquals "down only where a batch of 1024 entries begins" "ok" "$(python3 - "$t" "$M" "$MNT/w/" <<'PY'
import array, fcntl, json, os, re, struct, sys
FS_IOC_FIEMAP = 0xC020660B
def physical(path, off):
    fd = os.open(path, os.O_RDONLY)
    try:
        req = bytearray(struct.pack("=QQIIII", off, 1, 0, 0, 1, 0) + bytes(56))
        fcntl.ioctl(fd, FS_IOC_FIEMAP, req)
        mapped = struct.unpack_from("=I", req, 20)[0]
        if not mapped:
            return None
        logical, phys = struct.unpack_from("=QQ", req, 32)
        return phys + (off - logical)
    finally:
        os.close(fd)
first = []
seen = set()
for line in open(sys.argv[1]):
    m = re.search(r"pread64\(\d+<(.*)>, .*, (\d+)\) = ", line)
    # The manifest's files only (ld.so reads libc with pread64 too).
    if m and m.group(1).startswith(sys.argv[3]) and m.group(1) not in seen:
        seen.add(m.group(1))
        first.append(physical(m.group(1), int(m.group(2))))
walk = []
counted = 0
for line in open(sys.argv[2]):
    o = json.loads(line)
    counted += o.get("type") == "entry" and o.get("state") in ("cached", "negative")
    if o.get("type") == "entry" and o.get("ranges"):
        walk.append(physical(o["path"], o["ranges"][0][0]))
batches = (counted + 1023) // 1024
down = lambda v: sum(1 for a, b in zip(v, v[1:]) if a is not None and b is not None and b < a)
if len(first) < 1000:
    print("only %d files read" % len(first))
elif down(first) > batches - 1:
    at = [i for i in range(1, len(first)) if first[i - 1] is not None and first[i] is not None and first[i] < first[i - 1]]
    print("%d descents in %d files, %d batches (the manifest's order: %d), at %s" % (down(first), len(first), batches, down(walk), at))
elif down(walk) < 100:
    print("the manifest's own order is nearly sorted already (%d descents): no test" % down(walk))
else:
    print("ok")
PY
)"
}

# Round trip: warm --manifest on the cold fixture brings back exactly the
# recorded pages (per range: cachestat; per file: fincore), nothing else,
# leaves the snapshot's misses alone, and reads at most 10% more than the
# recorded bytes plus what looking the tree up costs (a cold warm -r of it,
# measured here); a second restore reads nothing.
test_round_trip() {
	local s0 s1 meta bytes out ev
	meta=$(lookup_bytes) || fail "remount"
	mcold || fail "remount"
	s0=$(sectors)
	run timeout 120 warm --manifest="$M"
	s1=$(sectors)
	bytes=$(((s1 - s0) * 512))
	assertEquals "exit status ($ERR)" 0 "$RC"
	assertContains "the restore's line" "$ERR" "warm: restored "
	# The prober first: what the snapshot saw missing is still missing.
	assertTrue "the snapshot has misses" "[ $(mpy paths "$M" miss | grep -c .) -gt 100 ]"
	assertEquals "the snapshot's misses are left alone" "" \
		"$(mpy paths "$M" miss | "$OPROBE" - | grep -v '^miss ' | head -3)"
	out=$(mchk check "$M" 1)
	assertEquals "every recorded page resident, no other" "" "$(grep -v '^files ' <<<"$out" | head -5)"
	assertEquals "fincore agrees" "" "$(mchk fincore "$M" | head -5)"
	echo "round trip: recorded $REC bytes, read $bytes bytes, looking the tree up $meta bytes ($(grep '^files ' <<<"$out"))"
	assertTrue "read $bytes bytes <= 1.1 x $REC recorded + $meta (lookups)" \
		"[ $((bytes * 10)) -le $((REC * 11 + meta * 10)) ]"
	assertTrue "read at least the recorded data that is not a hole" "[ $bytes -gt $((REC / 2)) ]"
	# Again, the manifest from standard input: everything is resident.
	pin_start "$M" || fail "pin"
	ev=$(evicted "$M")
	s0=$(sectors)
	run warm --manifest=- <"$M"
	s1=$(sectors)
	assertEquals "second run: exit status ($ERR)" 0 "$RC"
	within_evicted "a second restore reads nothing: $(((s1 - s0) * 512)) bytes read, $ev pages evicted since" \
		"[ $(((s1 - s0) * 512)) -le \$((@EV@ * PS)) ]" "$ev"
	[ "$ev" = 0 ] && assertContains "it says so" "$ERR" " files, 0 bytes read"
	[ "$ev" = unknown ] && echo "SKIP test part: needs cachestat (Linux 6.5): a second restore says 0 bytes read (evicted pages unknown)" >&2
	ev=$(evicted "$M")
	run warm --manifest="$M" --json
	assertEquals "third run: exit status ($ERR)" 0 "$RC"
	within_evicted "--json: $(bytes_read "$OUT") bytes read, $ev pages evicted since" \
		"[ $(bytes_read "$OUT") -le \$((@EV@ * PS)) ]" "$ev"
	pin_stop
}

# POSIX_FADV_RANDOM: with the device's read-ahead on, a restore still
# brings in the recorded pages and nothing around them.
test_restore_reads_nothing_beyond_the_ranges() {
	local out
	mcold || fail "remount"
	blockdev --setra 256 "$LOOP"
	run timeout 120 warm --manifest="$M"
	blockdev --setra 0 "$LOOP"
	assertEquals "exit status ($ERR)" 0 "$RC"
	out=$(mchk check "$M")
	assertEquals "read-ahead on: the recorded pages, no other" "" "$(grep -v '^files ' <<<"$out" | head -5)"
}

# --max-bytes keeps its meaning: a restore reads at most that much.
test_restore_within_max_bytes() {
	local s0 s1 meta res
	meta=$(lookup_bytes) || fail "remount"
	mcold || fail "remount"
	s0=$(sectors)
	run timeout 120 warm --manifest="$M" --max-bytes=1M --json
	s1=$(sectors)
	assertTrue "no crash ($RC)" "[ $RC -lt 64 ]"
	assertTrue "1 MiB said read: $(bytes_read "$OUT")" \
		"[ $(bytes_read "$OUT") -le 1048576 ] && [ $(bytes_read "$OUT") -gt $((1048576 - 64 * PS)) ]"
	assertTrue "some left out" "[ $(json_get '[o for o in objs if o["type"] == "summary"][-1]["data"]["left_out"]' <<<"$OUT") -gt 0 ]"
	res=$(mpy resident "$M")
	assertTrue "at most 1 MiB resident: $res pages" "[ $((res * PS)) -le 1048576 ] && [ $res -gt 0 ]"
	assertTrue "at most 1 MiB read: $(((s1 - s0) * 512)) bytes, lookups $meta" \
		"[ $(((s1 - s0) * 512)) -le $((1048576 + meta)) ]"
}

# Any -j completes under any descriptor limit: the files a batch holds open
# between planning and reading, and the threads, fit RLIMIT_NOFILE (before:
# -j 1024 under the usual limit of 1024 ran one thread).
test_any_jobs_under_any_descriptor_limit() {
	local n j
	for n in 16 1024; do
		for j in 1 1024; do
			mcold || fail "remount"
			run bash -c 'ulimit -n "$1" && exec warm --json -j "$2" --manifest="$3"' - "$n" "$j" "$M"
			assertEquals "ulimit -n $n, -j $j: exit ($ERR)" 0 "$RC"
			assertEquals "ulimit -n $n, -j $j: every recorded page resident" "" \
				"$(mchk check "$M" 1 | grep -v '^files ' | head -3)"
		done
	done
	assertTrue "-j 1024 under 1024 descriptors runs many threads ($OUT)" \
		"[ $(json_get '[o for o in objs if o["type"] == "summary"][-1]["jobs"]' <<<"$OUT") -gt 64 ]"
}

# dcache-probe --manifest: what share of the manifest is cached, and how
# much of each file's recorded data is resident, never perturbing; held
# against the prober (run after it) and cachestat per recorded range.
test_verify_before_and_after_a_restore() {
	local v=$MDIR/verify.jsonl o=$MDIR/oprobe.out r r0
	mcold || fail "remount"
	mpy paths "$M" | "$OPROBE" - >"$o.before"
	run dcache-probe -q --manifest="$M" --min-resident 99
	assertEquals "cold: the gate fails" 1 "$RC"
	mpy paths "$M" | "$OPROBE" - >"$o"
	assertEquals "cold: the probe changed no path's state" "" "$(diff "$o.before" "$o" | head -5)"
	# Part of the files read back by hand: a page of every third file, the
	# name of the next one, nothing of the third nor of d19.
	python3 - "$M" "$PS" <<'PY'
import json, os, sys
k = 0
# In path order: a walk's record order varies from run to run.
for o in sorted((json.loads(line) for line in open(sys.argv[1])), key=lambda o: o.get("path", "")):
    if o.get("type") != "entry" or o.get("state") != "cached" or o.get("kind") != "file" \
            or not o.get("ranges") or "/d19/" in o["path"]:
        continue
    k += 1
    if k % 3 == 0:
        fd = os.open(o["path"], os.O_RDONLY)
        os.pread(fd, int(sys.argv[2]), o["ranges"][-1][0])
        os.close(fd)
    elif k % 3 == 1:
        os.stat(o["path"])
PY
	# The prober before and after (it changes nothing), and the pages
	# resident in the ranges before: the probe must leave both as found.
	mpy paths "$M" | "$OPROBE" - >"$o.before"
	r0=$(mpy rangeres "$M" "$o.before")
	run dcache-probe --manifest="$M" --json
	printf '%s\n' "$OUT" >"$v"
	assertEquals "some paths miss: exit 1 ($ERR)" 1 "$RC"
	mpy paths "$M" | "$OPROBE" - >"$o"
	assertEquals "the probe changed no path's state" "" "$(diff "$o.before" "$o" | head -5)"
	r=$(mchk verify "$M" "$v" "$o")
	echo "partly warm: $(tail -1 <<<"$r")"
	assertTrue "the probe read no data in: $r0 pages resident before, $(tail -1 <<<"$r")" \
		"[ $(tail -1 <<<"$r" | sed 's/.* resident=//') -le $r0 ]"
	assertEquals "states, pages and totals as the prober and cachestat" "" "$(grep -v '^expect ' <<<"$r" | head -5)"
	assertContains "a true share: both cached and missed paths" "$(tail -1 <<<"$r")" " miss="
	assertNotContains "$(tail -1 <<<"$r")" " miss=0 "
	assertNotContains "$(tail -1 <<<"$r")" " resident=0"
	# Prometheus, through promtool: the same counts for the root.
	run dcache-probe --manifest="$M" --prometheus
	assertEquals "Prometheus: the prober's counts, the pages recorded" \
		"$(tail -1 <<<"$r" | sed 's/.* cached=\([0-9]*\) .* miss=\([0-9]*\) pages=\([0-9]*\) .*/\1 \2 \3/')" \
		"$(prom_check "dcprobe_paths{command=\"dcache-probe\",root=\"$MNT/w\",state=\"cached\"}" \
			"dcprobe_paths{command=\"dcache-probe\",root=\"$MNT/w\",state=\"miss\"}" \
			"dcprobe_data_pages{command=\"dcache-probe\",root=\"$MNT/w\",kind=\"total\"}" <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
	run dcache-probe -s --manifest="$M"
	assertEquals "-s: one row for the one root" 1 "$(grep -c . <<<"$OUT")"
	assertContains "$OUT" "$MNT/w"
	# After the restore: all cached, all resident.
	run timeout 120 warm --manifest="$M"
	assertEquals "restore: exit status ($ERR)" 0 "$RC"
	mpy paths "$M" | "$OPROBE" - >"$o.before"
	run dcache-probe --manifest="$M" --json
	printf '%s\n' "$OUT" >"$v"
	assertEquals "restored: exit 0 ($ERR)" 0 "$RC"
	mpy paths "$M" | "$OPROBE" - >"$o"
	assertEquals "after: the probe changed no path's state" "" "$(diff "$o.before" "$o" | head -5)"
	r=$(mchk verify "$M" "$v" "$o")
	assertEquals "after: as the prober and cachestat" "" "$(grep -v '^expect ' <<<"$r" | head -5)"
	assertEquals "cached share 100" 100 \
		"$(json_get '"%g" % [o for o in objs if o["type"] == "summary"][0]["cached_percent"]' <<<"$OUT")"
	ev=$(evicted "$M")
	within_evicted "resident = pages (pages evicted since counted: $ev)" \
		"[ ok = \"\$(json_get '\"ok\" if (lambda d: d[\"pages\"] - @EV@ <= d[\"resident\"] <= d[\"pages\"])([o for o in objs if o[\"type\"] == \"summary\"][0][\"data\"]) else 0' <<<\"\$OUT\")\" ]" "$ev"
	run dcache-probe -q --manifest="$M" --min-resident 99
	assertEquals "restored: the gate passes" 0 "$RC"
	run warm --manifest="$M" --prometheus
	assertEquals "warm --prometheus: exit status 0, accepted by promtool" 0 \
		"$(prom_check 'dcprobe_exit_status{command="warm"}' <<<"$OUT")"
}

# Files changed (appended to), removed, and replaced by a FIFO since the
# snapshot: each named on stderr in the spec's words, exit 2, the others
# restored; the FIFO never opened but by O_PATH (a real open would hang
# without a writer); dcache-probe --manifest says ESTALE and ENOENT.
test_changed_removed_and_fifo() {
	local x=$MNT/x m2=$MDIR/x.jsonl log=$MDIR/strace f l
	rm -rf "$x"
	mkdir -p "$x"
	for f in grown gone pipe d e; do
		head -c $((8 * PS)) /dev/urandom >"$x/$f"
	done
	mcold || fail "remount"
	for f in grown gone pipe d e; do
		dd if="$x/$f" of=/dev/null bs="$PS" skip=1 count=3 2>/dev/null
	done
	stat "$x/absent" >/dev/null 2>&1
	dcache-probe -r --ranges --json "$x" >"$m2"
	dcache-probe --ranges --json "$x/absent" >>"$m2"
	json_log dcache-probe "$m2"
	assertEquals "the snapshot: 6 paths cached, absent negative" "cached 6 negative 1" \
		"$(json_get '"cached %d negative %d" % (sum(o["cached"] for o in objs if o["type"] == "summary"), sum(o["negative"] for o in objs if o["type"] == "summary"))' <"$m2")"
	echo more >>"$x/grown"
	rm "$x/gone" "$x/pipe"
	mkfifo "$x/pipe"
	mcold || fail "remount"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 run timeout 30 \
		strace -f -y -qq -e trace=openat,openat2 -o "$log" warm --manifest="$m2"
	assertEquals "returns, exit 2 ($ERR)" 2 "$RC"
	assertContains "$ERR" "warm: '$x/grown': changed since the manifest, not restored"
	assertContains "$ERR" "warm: '$x/gone': No such file or directory"
	assertContains "$ERR" "warm: '$x/pipe': not a regular file now, not restored"
	assertEquals "no other path named" "" "$(grep -E "'$x/(d|e|absent)'" <<<"$ERR")"
	for f in d e; do
		assertEquals "$f restored" 3 "$(read_pages "$x/$f")"
	done
	assertEquals "the changed file not read" 0 "$(read_pages "$x/grown")"
	l=$(strace_joined "$log")
	assertContains "the FIFO was looked up" "$l" "<$x/pipe>"
	assertEquals "only O_PATH opens of the FIFO, by name or by descriptor" "" \
		"$(grep -E '"([^"]*/)?pipe"|'"<$x/pipe>" <<<"$l" | grep -v O_PATH)"
	run timeout 30 warm --manifest="$m2" --json
	assertEquals "--json: exit 2" 2 "$RC"
	assertEquals "--json: a record each" \
		"$x/gone False ENOENT
$x/grown False ESTALE
$x/pipe False ENODEV" \
		"$(json_get '"\n".join(sorted("%s %s %s" % (o["path"], o["warmed"], o["errno"]) for o in objs if o["type"] == "path"))' <<<"$OUT")"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 run timeout 30 \
		strace -f -y -qq -e trace=openat,openat2 -o "$log" dcache-probe --manifest="$m2" --json
	assertEquals "verify: exit 2 ($ERR)" 2 "$RC"
	assertEquals "verify: gone ENOENT, changed ESTALE" \
		"error ENOENT
error ESTALE changed since the manifest" \
		"$(json_get '"\n".join("%s %s%s" % (o.get("data"), o.get("data_errno"), " " + o["data_message"] if o.get("data_errno") == "ESTALE" else "") for o in sorted(objs, key=lambda o: o.get("path", "")) if o.get("path", "").endswith(("/grown", "/gone")))' <<<"$OUT")"
	assertEquals "verify: the others restored, the FIFO not measured" "d 3 3
e 3 3
pipe False" \
		"$(json_get '"\n".join("d %s %s" % (o["pages"]["resident"], o["pages"]["total"]) if o["path"].endswith("/d") else "e %s %s" % (o["pages"]["resident"], o["pages"]["total"]) if o["path"].endswith("/e") else "pipe %s" % (o.get("data") == "measured") for o in sorted(objs, key=lambda o: o.get("path", "")) if o.get("path", "").endswith(("/d", "/e", "/pipe")))' <<<"$OUT")"
	assertEquals "verify: only O_PATH opens of the FIFO" "" \
		"$(strace_joined "$log" | grep -E '"([^"]*/)?pipe"|'"<$x/pipe>" | grep -v O_PATH)"
}

# As an unprivileged user (who may not write the files, so cachestat
# answers EPERM and mincore would say every page is resident): a restore
# of a world-readable tree brings back the same pages.
test_unprivileged_restore() {
	local out way
	mcold || fail "remount"
	run as_nobody timeout 120 "$DCP_BIN/warm" --manifest="$M"
	assertEquals "exit status ($ERR)" 0 "$RC"
	# Held while two checks look (pin_start: DAMON may reclaim an idle
	# page between them; seen once under TSan, fincore 10 pages of 11).
	pin_start "$M" || fail "pin"
	out=$(mchk check "$M" 1)
	assertEquals "nobody: every recorded page resident, no other" "" "$(grep -v '^files ' <<<"$out" | head -5)"
	assertEquals "nobody: fincore agrees" "" "$(mchk fincore "$M" | head -5)"
	pin_stop
	# The check as nobody: every name cached; each file's data measured
	# (all of it back) where the kernel shows nobody the residency of a
	# file it does not own, else unknown for that reason, and then no
	# --min-resident verdict passes on what it could not see.
	run as_nobody "$DCP_BIN/dcache-probe" --json --manifest="$M"
	assertEquals "nobody: the check's states" "ok" "$(python3 -c '
import collections, json, sys
objs = [json.loads(l) for l in sys.stdin if l.strip()]
paths = [o for o in objs if o["type"] == "entry"]
# (a file of which nothing was recorded has nothing to see: 0 of 0 pages)
files = [o for o in paths if o.get("data") not in (None, "not_regular") and
         not (o["data"] == "measured" and o["pages"]["total"] == 0)]
ways = collections.Counter("back" if o["data"] == "measured" and o["pages"]["resident"] == o["pages"]["total"]
                           else "permission" if o.get("data_reason") == "permission" else json.dumps(o) for o in files)
states = set(o["state"] for o in paths)
print("ok" if len(files) > 1000 and len(ways) == 1 and states <= {"cached", "negative"} else (len(files), states, ways.most_common(3)))' <<<"$OUT")"
	way=$(json_get '"measured" if [o for o in objs if o["type"] == "entry" and o.get("data") == "measured" and o["pages"]["total"]] else "unknown"' <<<"$OUT")
	run as_nobody "$DCP_BIN/dcache-probe" -q --manifest="$M" --min-resident 99
	assertEquals "nobody: --min-resident 99 with the data $way" "$([ "$way" = measured ] && echo 0 || echo 1)" "$RC"
}

# Malformed manifests: the record is named by number, skipped, exit 2,
# never a crash; the good records are still restored, and nothing named by
# a bad record is read.
test_malformed_manifests() {
	local y=$MNT/y head good bad rec n what f cmd cases
	# WHAT|HOW: each made into a manifest of a good record and a bad one.
	cases='bad JSON|json
negative offset|ranges=[[-4096,4096]]
offset past 2^64|ranges=[[18446744073709551616,4096]]
offset + length past 2^64|ranges=[[18446744073709547520,8192]]
ranges not an array|ranges=5
range not a pair|ranges=[[0]]
ranges an object|ranges={"0":4096}
a NUL in the path|nul
a .. component|dotdot
an identity naming no fs record|fs=7
an fs record given twice|fsdup
a fs record whose uuid is not hex|uuid=zzzzzzzz-337c-4f8b-8b3f-f177b1cc197c
a handle of 129 bytes|handle=1:'"$(printf 'ab%.0s' $(seq 129))"'
a handle of odd hex|handle=1:0d0
a handle of a negative type|handle=-1:0d
a manifest record not first|manifest
a manifest_root record after an entry|rootlate'
	rm -rf "$y"
	mkdir -p "$y"
	head -c $((8 * PS)) /dev/urandom >"$y/g1"
	head -c $((8 * PS)) /dev/urandom >"$y/g2"
	mcold || fail "remount"
	dd if="$y/g1" of=/dev/null bs="$PS" count=2 2>/dev/null
	dd if="$y/g2" of=/dev/null bs="$PS" count=2 2>/dev/null
	# The manifest's own records first (its format, its filesystem), then
	# the good entry, then the bad record (HEAD + 2).
	head=$(dcache-probe --ranges --json "$y/g1" | grep -E '"type":"(manifest|fs)"')
	good=$(dcache-probe --ranges --json "$y/g1" | grep '"type":"entry"')
	bad=$(dcache-probe --ranges --json "$y/g2" | grep '"type":"entry"')
	assertContains "$good" '"ranges":[[0,8192]]'
	rec=$(($(grep -c . <<<"$head") + 2))
	n=0
	while IFS='|' read -r what f; do
		[ -n "$what" ] || continue
		n=$((n + 1))
		printf '%s\n%s\n' "$head" "$good" >"$MDIR/bad$n.jsonl"
		python3 - "$bad" "$f" "$y" "$head" >>"$MDIR/bad$n.jsonl" <<'PY'
import json, sys
o = json.loads(sys.argv[1])
how, y, head = sys.argv[2], sys.argv[3], sys.argv[4].splitlines()
if how == "json":
    print(sys.argv[1][:-7])
    sys.exit()
if how.startswith("ranges="):
    o["ranges"] = json.loads(how[7:])
elif how == "nul":
    o["path"] = y + "/g2\u0000x"
elif how == "dotdot":
    o["path"] = y + "/../y/g2"
elif how.startswith("fs="):
    o["identity"]["fs"] = int(how[3:])
elif how.startswith("handle="):
    o["identity"]["handle"] = how[7:]
elif how == "fsdup":
    o = json.loads([l for l in head if '"type":"fs"' in l][0])
elif how.startswith("uuid="):
    o = json.loads([l for l in head if '"type":"fs"' in l][0])
    o["fs"], o["uuid"] = 1, how[5:]
elif how == "manifest":
    o = json.loads(head[0])
elif how == "rootlate":
    o = {"type": "manifest_root", "root": 0, "path": y}
print(json.dumps(o))
PY
	done <<<"$cases"
	mcold || fail "remount"
	n=0
	while IFS='|' read -r what f; do
		[ -n "$what" ] || continue
		n=$((n + 1))
		f=$MDIR/bad$n.jsonl
		for cmd in warm dcache-probe; do
			run timeout 60 "$cmd" --manifest="$f"
			assertEquals "$cmd, $what: exit 2 ($ERR)" 2 "$RC"
			assertContains "$cmd, $what: the record named" "$ERR" "$cmd: '$f': record $rec: "
		done
		assertEquals "$what: the good record restored" 2 "$(read_pages "$y/g1")"
		assertEquals "$what: nothing of the bad one read" 0 "$(read_pages "$y/g2")"
	done <<<"$cases"
	run warm --manifest="$MDIR/bad1.jsonl" --json
	assertEquals "--json: an input_error record" 1 \
		"$(json_get 'sum(1 for o in objs if o["type"] == "input_error")' <<<"$OUT")"
	# A manifest of a later format: said, and nothing of it read.
	f=$MDIR/later.jsonl
	printf '%s\n%s\n' "${head/\"version\":2/\"version\":3}" "$good" >"$f"
	mcold || fail "remount"
	for cmd in warm dcache-probe; do
		run timeout 60 "$cmd" --manifest="$f"
		assertEquals "$cmd, format 3: exit 2 ($ERR)" 2 "$RC"
		assertContains "$cmd, format 3: said" "$ERR" \
			"$cmd: '$f': record 1: a manifest of a later format than this dcprobe reads (2): nothing of it is read"
	done
	assertEquals "format 3: nothing of it read" 0 "$(read_pages "$y/g1")"
	run warm --manifest="$MDIR/missing.jsonl"
	assertEquals "unreadable: exit 2" 2 "$RC"
	assertContains "$ERR" "warm: cannot read '$MDIR/missing.jsonl': No such file or directory"
	# Usage errors.
	for f in "$y" -r "--from=$M" "--files0-from=$M"; do
		run warm --manifest="$M" "$f"
		assertEquals "warm --manifest $f: usage" 64 "$RC"
	done
	for f in "$y" -r "--from=$M" "--files0-from=$M" --per-dir --ranges --no-perturb; do
		run dcache-probe --manifest="$M" "$f"
		assertEquals "dcache-probe --manifest $f: usage" 64 "$RC"
	done
}

# Plain warm --pages reads only what is not resident: a resident file costs
# no read and nothing of --max-bytes, a partly resident one its missing
# pages.
test_warm_pages_reads_only_what_is_missing() {
	local z=$MNT/z s0 s1 ev
	rm -rf "$z"
	mkdir -p "$z"
	head -c $((16 * PS)) /dev/urandom >"$z/r"
	head -c $((16 * PS)) /dev/urandom >"$z/p"
	head -c $((2 * PS)) /dev/urandom >"$z/c"
	mcold || fail "remount"
	cat "$z/r" >/dev/null
	dd if="$z/p" of=/dev/null bs="$PS" count=6 2>/dev/null
	stat "$z/c" >/dev/null
	ev=$(file_evicted "$z/r")
	s0=$(sectors)
	run warm --pages --json "$z/r"
	s1=$(sectors)
	assertEquals "exit status ($ERR)" 0 "$RC"
	within_evicted "a resident file: $(((s1 - s0) * 512)) bytes read ($ev pages evicted)" \
		"[ $(((s1 - s0) * 512)) -le \$((@EV@ * PS)) ]" "$ev"
	within_evicted "and it says so: $(bytes_read "$OUT")" "[ $(bytes_read "$OUT") -le \$((@EV@ * PS)) ]" "$ev"
	run warm --pages "$z/r"
	[ "$ev" = 0 ] && assertContains "$ERR" "warm: data: 1 file, 0 bytes read"
	[ "$ev" = unknown ] && echo "SKIP test part: needs cachestat (Linux 6.5): warm --pages says 0 bytes read (evicted pages unknown)" >&2
	s0=$(sectors)
	run warm --pages --json "$z/p"
	s1=$(sectors)
	assertEquals "partly resident: its 10 missing pages" $((10 * PS)) "$(bytes_read "$OUT")"
	assertEquals "partly resident: the device read them" $((10 * PS)) $(((s1 - s0) * 512))
	assertEquals 16 "$(read_pages "$z/p")"
	run warm --pages --max-bytes=$((2 * PS)) "$z/r" "$z/c"
	assertEquals "exit status ($ERR)" 0 "$RC"
	assertEquals "the resident file took nothing of --max-bytes" 2 "$(read_pages "$z/c")"
	assertContains "$ERR" "0 left out by limits"
}

# A manifest is input anyone may write (issue 36): whatever its records
# name, a restore and a check open for reading only a regular file on a
# filesystem that stores files, and only once its O_PATH descriptor showed
# the identity recorded; never the name looked up twice.  Hand-written
# records: /proc/self/environ, sysfs files with their true identity (any
# user may stat them: root used to read /sys/bus/pci/devices/*/config),
# /etc/shadow with a wrong one (it used to be opened before the identity
# was found not to match), a FIFO, a device node, a POSIX message queue (a
# pseudo file whose lookup is cached, so the check reaches its open), and
# one good file, which is restored.  As root and as nobody, under strace:
# no open of any of them but O_PATH.
test_manifest_opens_no_pseudo_device_or_changed_file() {
	local h=$MNT/h m=$MDIR/hostile.jsonl log=$MDIR/hostile.strace mq=$MDIR/mq
	local who cmd l p sys=() real=()
	rm -rf "$h"
	mkdir -p "$h" "$mq"
	head -c $((4 * PS)) /dev/urandom >"$h/good"
	mkfifo "$h/fifo"
	mknod "$h/null" c 1 3
	mountpoint -q "$mq" || mount -t mqueue none "$mq" || fail "mount mqueue"
	touch "$mq/q"
	for p in /sys/kernel/uevent_seqnum /sys/bus/pci/devices/*/config; do
		[ -f "$p" ] && sys+=("$p") && real+=("$(readlink -f "$p")")
		[ ${#sys[@]} -lt 3 ] || break
	done
	assertTrue "a sysfs file to name" "[ ${#sys[@]} -gt 0 ]"
	{
		mpy record "$h/good"
		mpy record /proc/self/environ "[[0,$PS]]"
		for p in "${sys[@]}"; do mpy record "$p" "[[0,$PS]]"; done
		mpy record /etc/shadow "[[0,$PS]]" 1
		mpy record "$h/fifo" "[[0,$PS]]"
		mpy record "$h/null" "[[0,$PS]]"
		mpy record "$mq/q" "[[0,$PS]]"
	} >"$m"
	chmod 0644 "$m"
	assertEquals "the message queue's lookup is cached (the check reaches its open)" \
		"cached $mq/q" "$("$OPROBE" "$mq/q")"
	for who in root nobody; do
		# warm on a cold fixture, then dcache-probe (which opens a file
		# only when its lookup is cached: the restore left them so).
		mcold || fail "remount"
		for cmd in warm dcache-probe; do
			pre=()
			[ $who = nobody ] && pre=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 run timeout 60 \
				strace -f -y -qq -e trace=openat,openat2 -o "$log" "${pre[@]}" "$DCP_BIN/$cmd" --json --manifest="$m"
			assertEquals "$who, $cmd: returns, exit 2 ($ERR)" 2 "$RC"
			l=$(strace_joined "$log")
			# Every reopen of a checked descriptor (/proc/PID/fd/N) is
			# the good file's: it is the only object opened for reading.
			assertEquals "$who, $cmd: the good file reopened, nothing else" "<$h/good>" \
				"$(grep -E '</proc/[0-9]+/fd>, "[0-9]+"' <<<"$l" | sed 's/.*) *= [0-9-]* *//' | sort -u)"
			assertEquals "$who, $cmd: nothing named opened but O_PATH" "" \
				"$(grep -E "environ|shadow|<$h/(fifo|null)>|<$mq/q>|\"[^\"]*(/fifo|/null|$mq/q|/q)\"" <<<"$l" |
				   grep -v O_PATH | head -3)"
			for p in "${sys[@]}" "${real[@]}"; do
				assertEquals "$who, $cmd: $p not opened" "" \
					"$(grep -F -e "<$p>" -e "\"$p\"" -e "\"${p#/}\"" <<<"$l" | grep -v O_PATH | head -2)"
			done
		done
	done
	# What each says of them (as root, without strace).
	mcold || fail "remount"
	run warm --manifest="$m"
	assertEquals "warm: exit 2 ($ERR)" 2 "$RC"
	for p in /proc/self/environ "${sys[@]}" "$mq/q"; do
		assertContains "$ERR" "warm: '$p': on a pseudo filesystem (proc, sysfs...), not restored"
	done
	assertContains "$ERR" "warm: '/etc/shadow': changed since the manifest, not restored"
	assertContains "$ERR" "warm: '$h/fifo': not a regular file now, not restored"
	assertContains "$ERR" "warm: '$h/null': not a regular file now, not restored"
	assertNotContains "$ERR" "'$h/good'"
	assertEquals "the good file restored" 4 "$(read_pages "$h/good")"
	run warm --manifest="$m" --json
	assertEquals "--json: the errno of each" "$(printf '%s\n' "/etc/shadow ESTALE" \
		"/proc/self/environ EOPNOTSUPP" "$h/fifo ENODEV" "$h/null ENODEV" "$mq/q EOPNOTSUPP" | sort)" \
		"$(json_get '"\n".join(sorted("%s %s" % (o["path"], o["errno"]) for o in objs if o["type"] == "path" and not o["path"].startswith("/sys/")))' <<<"$OUT")"
	run dcache-probe --manifest="$m" --json
	assertEquals "dcache-probe: the message queue is not measured: a filesystem not read" \
		"unknown filesystem" \
		"$(json_get '" ".join("%s %s" % (o["data"], o["data_reason"]) for o in objs if o["type"] == "entry" and o["path"] == "'"$mq/q"'")' <<<"$OUT")"
	assertEquals "dcache-probe: /etc/shadow changed" "error ESTALE" \
		"$(json_get '" ".join("%s %s" % (o["data"], o["data_errno"]) for o in objs if o["type"] == "entry" and o["path"] == "/etc/shadow")' <<<"$OUT")"
	umount "$mq"
}

# sanitized - an ASan/UBSan or TSan build: no small ulimit -v (the
# sanitizers reserve terabytes of address space).
sanitized() { grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address|thread)$' "${DCP_BUILD:-$DCP_BIN/..}/CMakeCache.txt" 2>/dev/null; }

# maxrss CMD... - the peak resident set of CMD in KiB (its exit status in RC).
maxrss() {
	python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

# A manifest is read one bounded record at a time (issue 36): a record
# longer than 4 MiB is refused by its number without being held in memory,
# and the records after it are still used.  The issue's case: three
# records, the second 150 MB, under ulimit -v 100000: warm restored one
# entry and exited 0, and dcache-probe's --min-resident gate passed on the
# one path it checked.  A 300 MB record cost 296 MB of memory.
test_a_record_over_the_bound_is_refused_unread() {
	local b=$MNT/big m=$MDIR/big.jsonl f cmd out rc rss
	rm -rf "$b"
	mkdir -p "$b"
	for f in a b c; do head -c $((4 * PS)) /dev/urandom >"$b/$f"; done
	{ mpy record "$b/a"; mpy record "$b/b" "" 0 $((150 << 20)); mpy record "$b/c"; } >"$m"
	if ! sanitized; then
		mcold || fail "remount"
		run bash -c 'ulimit -v 100000 && exec "$@"' - warm --manifest="$m"
		assertEquals "warm under ulimit -v 100000: exit 2 ($ERR)" 2 "$RC"
		assertContains "$ERR" "warm: '$m': record 2: the record is longer than 4 MiB"
		assertEquals "a, before the long record, restored" 4 "$(read_pages "$b/a")"
		assertEquals "c, after it, restored" 4 "$(read_pages "$b/c")"
		assertEquals "b not read" 0 "$(read_pages "$b/b")"
		run bash -c 'ulimit -v 100000 && exec "$@"' - dcache-probe -q --manifest="$m" --min-resident 99
		assertEquals "dcache-probe --min-resident under ulimit -v 100000: exit 2 ($ERR)" 2 "$RC"
		assertContains "$ERR" "dcache-probe: '$m': record 2: the record is longer than 4 MiB"
	fi
	run dcache-probe --json --manifest="$m"
	assertEquals "dcache-probe: the two other paths checked" "2 2" \
		"$(json_get '"%d %d" % ([o for o in objs if o["type"] == "summary"][0]["paths"], sum(1 for o in objs if o["type"] == "entry"))' <<<"$OUT")"
	assertEquals "--json: an input_error record for record 2" "2 the record is longer than 4 MiB" \
		"$(json_get '" ".join("%d %s" % (o["record"], o["message"]) for o in objs if o["type"] == "input_error")' <<<"$OUT")"
	# 300 MB: the memory a run takes stays far below the record's length.
	{ mpy record "$b/a"; mpy record "$b/b" "" 0 $((300 << 20)); mpy record "$b/c"; } >"$m"
	for cmd in warm dcache-probe; do
		out=$(maxrss "$DCP_BIN/$cmd" --manifest="$m")
		rc=${out% *} rss=${out#* }
		assertEquals "$cmd, a 300 MB record: exit 2" 2 "$rc"
		assertTrue "$cmd, a 300 MB record: peak RSS $rss KiB < 96 MiB" "[ $rss -lt $((96 << 10)) ]"
	done
	rm -f "$m"
}

# Any error reading a manifest, ENOMEM included, is an error naming the
# manifest and the line (exit 2), never its end: a manifest of three
# records, the second 4 MiB less a little (under the bound), run under a
# ulimit -v from 4 to 48 MiB in steps of 1 MiB.  Each run reads all three
# records or says why not; the step where the second record does not fit
# names it (glibc's getline fails with ENOMEM without an error on the
# stream: read as the end, one record of three).  Plain build only.
test_out_of_memory_is_an_error_not_the_end() {
	local b=$MNT/oom m=$MDIR/oom.jsonl cmd kb named n
	sanitized && { echo "  (skipped under sanitizers: no small ulimit -v)"; return 0; }
	rm -rf "$b"
	mkdir -p "$b"
	for f in a b c; do head -c $((4 * PS)) /dev/urandom >"$b/$f"; done
	{ mpy record "$b/a"; mpy record "$b/b" "" 0 $(((4 << 20) - 1024)); mpy record "$b/c"; } >"$m"
	for cmd in warm dcache-probe; do
		named=0
		for ((kb = 4096; kb <= 49152; kb += 1024)); do
			run bash -c "ulimit -v $kb && exec \"\$@\"" - "$DCP_BIN/$cmd" --json --manifest="$m"
			case $RC in
			0 | 1)
				n=$(json_get '[o for o in objs if o["type"] == "summary"][0]["'"$([ $cmd = warm ] && echo entries || echo paths)"'"]' <<<"$OUT")
				assertEquals "$cmd, ulimit -v $kb: exit $RC: all three records read ($ERR)" 3 "$n" ;;
			2)
				assertNotEquals "$cmd, ulimit -v $kb: exit 2 says why" "" "$ERR$OUT"
				grep -q "'$m': record 2: Cannot allocate memory" <<<"$ERR" && named=$((named + 1)) ;;
			127) grep -q "error while loading shared libraries" <<<"$ERR" ||
				fail "$cmd, ulimit -v $kb: exit 127: $ERR" ;;
			*) fail "$cmd, ulimit -v $kb: exit $RC: $ERR" ;;
			esac
		done
		assertTrue "$cmd: a step where record 2 did not fit names it" "[ $named -gt 0 ]"
	done
	rm -f "$m"
}

# --max-bytes and a restore (issue 36): one unit, whole pages, for the
# budget and for "bytes read" (a 101-byte file read brings a page in and
# used to count 101 bytes; a budget of 7.5 pages brought 8 in); a restore
# that a limit cut short exits 1 (0 says every entry was restored) and
# names each file it left out, on stderr and in --json; --max-file-size
# leaves a file out of a restore too (it was ignored).
test_restore_cut_short_by_a_limit() {
	local c=$MNT/cut m=$MDIR/cut.jsonl
	rm -rf "$c"
	mkdir -p "$c"
	head -c 101 /dev/urandom >"$c/tiny"
	head -c $((16 * PS)) /dev/urandom >"$c/big"
	{ mpy record "$c/tiny"; mpy record "$c/big"; } >"$m"
	mcold || fail "remount"
	run warm --manifest="$m" --json
	assertEquals "no limit: exit 0 ($ERR)" 0 "$RC"
	assertEquals "bytes read: 17 pages, the tiny file's one whole" $((17 * PS)) "$(bytes_read "$OUT")"
	assertEquals "17 pages resident" 17 $(($(read_pages "$c/tiny") + $(read_pages "$c/big")))
	# Whichever file comes first on the device, 7 whole pages fit in 7.5:
	# the big file is cut, and the tiny one is read or left out whole.
	mcold || fail "remount"
	run warm --manifest="$m" --max-bytes=$((15 * PS / 2))
	assertEquals "--max-bytes 7.5 pages: exit 1 ($ERR)" 1 "$RC"
	assertEquals "7 whole pages brought in, within the budget" 7 \
		$(($(read_pages "$c/tiny") + $(read_pages "$c/big")))
	assertEquals "each file left out named, no other" "$(left_out "$c")" \
		"$(grep -o "'$c/[a-z]*': left out by --max-bytes, not restored" <<<"$ERR" | sort)"
	assertContains "the restore's line: 7 pages read, each file left out counted" "$ERR" \
		" $((7 * PS)) bytes read, $(left_out "$c" | grep -c .) left out by limits"
	mcold || fail "remount"
	run warm --manifest="$m" --max-bytes=$((15 * PS / 2)) --json
	assertEquals "--json: exit 1" 1 "$RC"
	assertEquals "--json: bytes read, 7 pages" $((7 * PS)) "$(bytes_read "$OUT")"
	assertEquals "--json: the status" 1 "$(json_get '[o for o in objs if o["type"] == "summary"][0]["status"]' <<<"$OUT")"
	assertEquals "--json: each file left out, with the limit" "$(left_out "$c" | sed "s/: left out.*/ False max_bytes/")" \
		"$(json_get '"\n".join(sorted("\x27%s\x27 %s %s" % (o["path"], o["warmed"], o.get("left_out")) for o in objs if o["type"] == "path"))' <<<"$OUT")"
	mcold || fail "remount"
	run warm --manifest="$m" --max-file-size=$((8 * PS))
	assertEquals "--max-file-size: exit 1 ($ERR)" 1 "$RC"
	assertContains "$ERR" "warm: '$c/big': larger than --max-file-size, not restored"
	assertEquals "--max-file-size: the tiny file restored" 1 "$(read_pages "$c/tiny")"
	assertEquals "--max-file-size: the big one not read" 0 "$(read_pages "$c/big")"
	# A limit that leaves nothing out: every entry restored, exit 0.
	mcold || fail "remount"
	run warm --manifest="$m" --max-bytes=$((17 * PS))
	assertEquals "a budget of exactly what is missing: exit 0 ($ERR)" 0 "$RC"
	assertNotContains "$ERR" "left out by --max-bytes"
	# Nobody (who is not shown these files' residency, so is charged all
	# that was recorded): the same budget, the same pages, the same names.
	mcold || fail "remount"
	run as_nobody "$DCP_BIN/warm" --manifest="$m" --max-bytes=$((15 * PS / 2))
	assertEquals "nobody, cut short: exit 1 ($ERR)" 1 "$RC"
	assertEquals "nobody: 7 pages brought in" 7 $(($(read_pages "$c/tiny") + $(read_pages "$c/big")))
	assertEquals "nobody: each file left out named" "$(left_out "$c")" \
		"$(grep -o "'$c/[a-z]*': left out by --max-bytes, not restored" <<<"$ERR" | sort)"
}

# left_out DIR - the message for each file of DIR (tiny, big: 1 and 16
# pages recorded) with fewer pages resident than recorded, sorted.
left_out() {
	[ "$(read_pages "$1/big")" -lt 16 ] && echo "'$1/big': left out by --max-bytes, not restored"
	[ "$(read_pages "$1/tiny")" -lt 1 ] && echo "'$1/tiny': left out by --max-bytes, not restored"
	return 0
}

# A restore that may make no thread (a task limit) does its work on the
# calling thread: every entry restored, "jobs":1 (was: "cannot restore
# 'M': Resource temporarily unavailable", exit 2, and a summary with
# "jobs":0, which the schema refuses).  RLIMIT_NPROC counts all the
# threads of a user: uid 65530, which nothing else on the machine runs as;
# the first limit under which warm starts at all (a sanitizer's own
# threads count too) leaves the restore none.
test_restore_with_no_thread_to_spare() {
	local t=$MNT/nothread m=$MDIR/nothread.jsonl u started=
	local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export ASAN_OPTIONS
	rm -rf "$t"
	mkdir -p "$t"
	head -c $((4 * PS)) /dev/urandom >"$t/a"
	head -c $((4 * PS)) /dev/urandom >"$t/b"
	chmod -R a+rX "$t"
	{ mpy record "$t/a"; mpy record "$t/b"; } >"$m"
	chmod 0644 "$m"
	mcold || fail "remount"
	for u in 1 2 3 4 5 6; do
		run setpriv --reuid=65530 --regid=65530 --clear-groups --inh-caps=-all -- \
			bash -c 'ulimit -u "$1" && exec "$2" --json --manifest="$3"' - "$u" "$DCP_BIN/warm" "$m"
		grep -q "cannot start" <<<"$ERR" && continue
		started=$u
		break
	done
	assertNotEquals "warm started under some ulimit -u" "" "$started"
	assertEquals "ulimit -u $started: exit 0 ($ERR)" 0 "$RC"
	assertEquals "ulimit -u $started: both restored, on one thread" "2 1" \
		"$(json_get '"%d %d" % ([o for o in objs if o["type"] == "summary"][0]["entries"], [o for o in objs if o["type"] == "summary"][0]["jobs"])' <<<"$OUT")"
	assertEquals "a: 4 pages back" 4 "$(read_pages "$t/a")"
	assertEquals "b: 4 pages back" 4 "$(read_pages "$t/b")"
}

# A snapshot keeps at most 65,536 ranges of a file (the closest joined, a
# superset of the resident pages), so that its record stays below the
# reader's bound: a tmpfs file with every other page resident over 65,542
# pages (main: 65,542 ranges, 1.1 MB).
test_snapshot_bounds_the_ranges_of_a_file() {
	local t=$MDIR/tm m=$MDIR/alt.jsonl
	mkdir -p "$t"
	mountpoint -q "$t" || mount -t tmpfs -o size=600m none "$t" || fail "mount tmpfs"
	python3 - "$t/alt" "$PS" <<'PY'
import os, sys
ps = int(sys.argv[2])
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.ftruncate(fd, 2 * 65542 * ps)
for i in range(65542):
    os.pwrite(fd, b"x" * ps, 2 * i * ps)
os.close(fd)
PY
	dcache-probe --ranges --json "$t/alt" >"$m"
	json_log dcache-probe "$m"
	assertEquals "at most 65536 ranges, covering every resident page" "ok" "$(python3 - "$m" "$t/alt" "$PS" <<'PY'
import json, sys
ps = int(sys.argv[3])
e = [json.loads(l) for l in open(sys.argv[1]) if '"entry"' in l][0]
r = e["ranges"]
covered = lambda p: any(o <= p * ps < o + n for o, n in r)
missing = [i for i in range(0, 2 * 65542, 2) if not covered(i)]
print("ok" if len(r) <= 65536 and not missing else "%d ranges, %d resident pages not covered" % (len(r), len(missing)))
PY
)"
	run warm --manifest="$m"
	assertEquals "the record is read back: exit 0 ($ERR)" 0 "$RC"
	rm -f "$t/alt"
	umount "$t"
}

# shellcheck disable=SC1090
. "$SHUNIT2"
