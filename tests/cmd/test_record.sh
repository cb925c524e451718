#!/bin/bash
# dcache-probe --record (issue 39): what one workload opens under a tree,
# recorded with fanotify while another process reads other files of the
# same directories, written as a manifest that warm --manifest restores.
#
# The fixture is manifest.py's tree (tests/lib/manifest.py make) on a loop
# device of the suite's own with read-ahead off; its plan is split in two
# workloads over the same directories: W (the even lines, plus the extras
# of x/: a FIFO and a device it opens, a directory it lists, a file it only
# stats, one it reads through a symlink, a child and a double-forked
# grandchild that read a file each) and O (the odd lines and o-only/).
# Checked by manifest.py expect-recording (which names every difference),
# cachestat, the independent prober oprobe (root and nobody), the loop
# device's sectors and strace.
#
# The recorder is started with NOTIFY_SOCKET pointing at a listener of the
# suite and waited for until it says READY=1 (10 s at most: the only
# deadline of the suite, a failure when it passes).
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

PS=$(getconf PAGESIZE)
MOPTS=no_prefetch_block_bitmaps
OPROBE=${DCP_BUILD:-$DCP_BIN/..}/tests/oprobe
FAULT=${DCP_BUILD:-$DCP_BIN/..}/tests/faultinject

mpy() { python3 "$DCP_TESTS/lib/manifest.py" "$@"; }

oneTimeSetUp() {
	local i
	MNT=$(mktemp -d "$FIXTURE_ROOT/mnt.XXXXXX") || fail "mktemp"
	truncate -s 256M "$MNT.img" || fail "truncate"
	mkfs.ext4 -q -F -b 4096 -N 32768 -E lazy_itable_init=0,lazy_journal_init=0 "$MNT.img" >/dev/null ||
		fail "mkfs"
	LOOP=$(losetup -f --show "$MNT.img") || fail "losetup"
	mount -o "$MOPTS" "$LOOP" "$MNT" || fail "mount $LOOP"
	chmod 0755 "$MNT"
	MNT=$(realpath "$MNT") # a recording names paths by their real path
	ROOT=$MNT/w
	WORK=$(mktemp -d "$FIXTURE_ROOT/record.XXXXXX")
	chmod 0755 "$WORK"
	PLAN=$WORK/plan WPLAN=$WORK/plan.w OPLAN=$WORK/plan.o
	mpy make "$ROOT" "$PLAN" 400 20 || fail "cannot make the tree"
	mpy split "$PLAN" "$WPLAN" "$OPLAN"
	mkdir -p "$ROOT/x/ls" "$ROOT/o-only"
	mkfifo "$ROOT/x/fifo"
	mknod "$ROOT/x/null" c 1 3
	for i in a b; do echo "$i" >"$ROOT/x/ls/$i"; done
	for i in child grand target statonly; do head -c 9000 /dev/urandom >"$ROOT/x/$i"; done
	ln -s target "$ROOT/x/link"
	for i in $(seq -w 1 20); do head -c 5000 /dev/urandom >"$ROOT/o-only/f$i"; done
	chmod -R a+rX "$ROOT"
	# W: its half of the plan, then the extras.
	cat >"$WORK/w.sh" <<'EOF'
set -e
R=$1 PLAN=$2 MPY=$3 DONE=$4
python3 "$MPY" workload "$R" "$PLAN"
python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK))' "$R/x/fifo"
: <"$R/x/null"
ls "$R/x/ls" >/dev/null
stat "$R/x/statonly" >/dev/null
cat "$R/x/link" >/dev/null
sh -c "cat '$R/x/child' >/dev/null"
rm -f "$DONE"
setsid sh -c "(cat '$R/x/grand' >/dev/null; : >'$DONE') &"
for _ in $(seq 1000); do [ -e "$DONE" ] && exit 0; sleep 0.01; done
echo "w.sh: the grandchild did not finish" >&2
exit 1
EOF
	cat >"$WORK/o.sh" <<'EOF'
set -e
python3 "$3" workload "$1" "$2"
cat "$1"/o-only/* >/dev/null
EOF
	ALSO=(x/fifo x/null x/ls x/child x/grand x/target '!x/link' '!x/statonly' '!x/ls/a' '!x/ls/b')
}

oneTimeTearDown() {
	[ -z "${CG:-}" ] || rmdir "$CG" 2>/dev/null
	umount "$MNT" 2>/dev/null
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	LOOP=
}

tearDown() {
	# A recorder or a listener a failed test left behind.
	[ -z "${REC_PID:-}" ] || { kill -KILL "$REC_PID" 2>/dev/null; wait "$REC_PID" 2>/dev/null; }
	[ -z "${LISTENER:-}" ] || { kill "$LISTENER" 2>/dev/null; wait "$LISTENER" 2>/dev/null; }
	REC_PID= REC_SIG= LISTENER=
	cg_rm
}

# mcold - the fixture cold (unmount, mount), read-ahead off.
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
	sync -f "$MNT"
}

sectors() { awk '{ print $3 }' "/sys/block/${LOOP#/dev/}/stat"; }

# pin_start MANIFEST / pin_stop - hold what is resident of MANIFEST's
# ranges and of the loop device's cache locked in memory meanwhile
# (manifest.py pin, as cmd/manifest does): the machine's DAMON pageout may
# reclaim an idle page at any moment, which a restore would rightly read.
# evicted MANIFEST: the pages of its ranges and of the device evicted now.
pin_start() {
	local line
	coproc PIN { mpy pin "$1" "$LOOP"; }
	read -r line <&"${PIN[0]}"
	[[ $line == pinned\ * ]] || { echo "pin_start: $line" >&2; return 1; }
}
pin_stop() {
	local in=${PIN[1]} out=${PIN[0]} pid=$PIN_PID
	[ -n "$pid" ] || return 0
	exec {in}>&- {out}<&-
	wait "$pid"
}
evicted() { mpy evicted "$1" "$LOOP"; }

# rec_start CMD... - start a recorder (CMD, with its options) in the
# background, its stdout in $WORK/rec.out and stderr in $WORK/rec.err, and
# wait until it says READY=1 (10 s at most).  Sets REC_PID.
rec_start() {
	local sock=$WORK/notify.sock i
	rm -f "$sock" "$sock.log"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode(errors="replace") + "\n")
' "$sock" "$sock.log" &
	LISTENER=$!
	for ((i = 0; i < 1000; i++)); do
		[ -S "$sock" ] && break
		sleep 0.01
	done
	NOTIFY_SOCKET=$sock "$@" >"$WORK/rec.out" 2>"$WORK/rec.err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	REC_PID=$!
	for ((i = 0; i < 1000; i++)); do
		grep -qx 'READY=1' "$sock.log" 2>/dev/null && return 0
		kill -0 "$REC_PID" 2>/dev/null || break
		sleep 0.01
	done
	fail "the recorder did not say READY=1 in 10 s: $(cat "$WORK/rec.err")"
	return 1
}

# rec_stop [SIGNAL] - end the recording (SIGINT), wait for it: REC_RC,
# REC_ERR, and the notifications it sent in NOTES.
rec_stop() {
	kill -"${1:-INT}" "${REC_SIG:-$REC_PID}" 2>/dev/null
	wait "$REC_PID"
	REC_RC=$?
	REC_PID= REC_SIG=
	REC_ERR=$(cat "$WORK/rec.err")
	kill "$LISTENER" 2>/dev/null
	wait "$LISTENER" 2>/dev/null
	LISTENER=
	NOTES=$(cat "$WORK/notify.sock.log" 2>/dev/null)
}

# rec_wait - wait for a recorder that ends by itself (--for).
rec_wait() {
	wait "$REC_PID"
	REC_RC=$?
	REC_PID=
	REC_ERR=$(cat "$WORK/rec.err")
	kill "$LISTENER" 2>/dev/null
	wait "$LISTENER" 2>/dev/null
	LISTENER=
}

# recording FILE EXPR - a python expression over FILE's "recording" record (r).
recording() {
	python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = [o for o in r if o.get("type") == "recording"][-1]
print(eval(sys.argv[2]))' "$1" "$2"
}

# rec_said FILE WHAT - one line on stderr of what recording FILE holds (the
# suite's log shows it): entries by kind, ranges, and the counts.
rec_said() {
	python3 -c '
import collections, json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ents = [o for o in objs if o.get("type") == "entry"]
kinds = collections.Counter(o.get("kind") for o in ents)
pages = sum(l for o in ents for _, l in (o.get("ranges") or [])) // 4096
r = [o for o in objs if o.get("type") == "recording"][-1]
print("  %s: %d entries (%s), %d pages of ranges; events %d, other %d, unattributed %d, outside %d, overflows %d"
      % (sys.argv[2], len(ents), ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items())), pages,
         r["events"], r["other"], r["unattributed"], r["outside"], r["overflows"]), file=sys.stderr)' "$1" "$2"
}

# kind FILE PATH - the kind of PATH's entry in manifest FILE, or "absent".
kind() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("type") == "entry" and o["path"] == sys.argv[2]:
        print(o.get("kind")); break
else:
    print("absent")' "$1" "$2"
}

# stopped PID - wait until PID is stopped (SIGSTOP reached it), 10 s at most.
stopped() {
	local i st
	for ((i = 0; i < 1000; i++)); do
		read -r st </proc/"$1"/stat 2>/dev/null || return 1
		st=${st##*) }
		[ "${st%% *}" = T ] && return 0
		sleep 0.01
	done
	return 1
}

# w_stopped - start W stopped (its pid is known before it runs): W_PID.
w_stopped() {
	bash -c 'kill -STOP $$; exec "$@"' - "$@" &
	W_PID=$!
	stopped "$W_PID" || fail "W did not stop"
}

run_w() { bash "$WORK/w.sh" "$ROOT" "$WPLAN" "$DCP_TESTS/lib/manifest.py" "$WORK/grand.done"; }
run_o() { bash "$WORK/o.sh" "$ROOT" "$OPLAN" "$DCP_TESTS/lib/manifest.py"; }

# The cgroup v2 mount (first), and a cgroup of the test below it: CG.
cg_new() {
	CGMNT=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	if [ -z "$CGMNT" ] || ! CG=$(mktemp -d "$CGMNT/dcprobe-test.XXXXXX" 2>/dev/null); then
		CG=
		startSkipping
		fail "no writable cgroup v2 hierarchy: the --cgroup tests cannot run here"
		return 1
	fi
	CGPATH=${CG#"$CGMNT"}
}

# cg_rm - remove the test's cgroup once its processes are gone.
cg_rm() {
	local p i
	[ -n "${CG:-}" ] || return 0
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	for ((i = 0; i < 500; i++)); do
		rmdir "$CG" 2>/dev/null && break
		sleep 0.01
	done
	CG=
}

# ---- what is recorded ----

# The workload alone, every process recorded: exactly what it opened, read
# and listed, with the directories on the way; not what it only looked up
# (stat), not the symlink it read through (its target is).
test_record_is_what_the_workload_read() {
	local m=$WORK/all.jsonl
	mcold || fail "remount"
	rec_start dcache-probe --record="$m" "$ROOT" || return
	run_w || fail "W failed"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	rec_said "$m" "every process, W alone"
	assertEquals "the recording is what W read" "" \
		"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" - "${ALSO[@]}" | head -5)"
	assertEquals "the FIFO, as a FIFO" fifo "$(kind "$m" "$ROOT/x/fifo")"
	assertEquals "the device, as a device" char "$(kind "$m" "$ROOT/x/null")"
	assertEquals "the directory listed" dir "$(kind "$m" "$ROOT/x/ls")"
	assertEquals "own events" 0 "$(recording "$m" 'r["own"]')"
	assertEquals "attribution" all "$(recording "$m" 'r["attribution"]["by"]')"
	assertEquals "ended by" SIGINT "$(recording "$m" 'r["ended_by"]')"
	assertEquals "roots" "['$ROOT']" "$(recording "$m" 'r["roots"]')"
	assertEquals "the summary is complete" True \
		"$(json_get '[o for o in objs if o["type"] == "summary"][-1]["complete"]' <"$m")"
	cp "$m" "$WORK/restore.jsonl"
}

# After a remount, warm --manifest of the recording brings back its names
# and its ranges and nothing else: every recorded path cached (the prober,
# as root and as nobody), every file of O and every file W only looked up
# missing; each recorded range resident and no page outside them
# (cachestat), none of O's pages; a second restore reads nothing.
test_record_restores_after_a_remount() {
	local m=$WORK/restore.jsonl s0 s1 paths ev
	[ -s "$m" ] || test_record_is_what_the_workload_read
	mcold || fail "remount"
	run warm --manifest="$m"
	assertEquals "restore ($ERR)" 0 "$RC"
	paths=$(mpy paths "$m")
	assertEquals "every recorded path cached (root)" "" \
		"$("$OPROBE" - <<<"$paths" | grep -v '^cached ' | head -3)"
	assertEquals "O's files and W's looked-up files miss" "" \
		"$(python3 -c '
import json, os, sys
for plan, kinds in ((sys.argv[2], None), (sys.argv[3], ("stat", "untouched"))):
    for l in open(plan):
        o = json.loads(l)
        if kinds is None or o["kind"] in kinds:
            print(os.path.join(sys.argv[1], o["path"]))
for f in sorted(os.listdir(os.path.join(sys.argv[1], "o-only"))):
    print(os.path.join(sys.argv[1], "o-only", f))
print(os.path.join(sys.argv[1], "x", "statonly"))' "$ROOT" "$OPLAN" "$WPLAN" | "$OPROBE" --once - | grep -v '^miss ' | head -3)"
	assertEquals "each recorded range resident, no page outside" "" \
		"$(mpy check "$m" 1 | grep -v '^files ' | head -3)"
	assertEquals "none of O's pages resident" "" "$(mpy noresident "$ROOT" "$OPLAN" | head -3)"
	pin_start "$m" || fail "pin"
	ev=$(evicted "$m")
	s0=$(sectors)
	run warm --manifest="$m"
	s1=$(sectors)
	pin_stop
	assertEquals "a second restore ($ERR)" 0 "$RC"
	assertTrue "a second restore reads nothing: $(((s1 - s0) * 512)) bytes, $ev pages evicted since" \
		"[ $(((s1 - s0) * 512)) -le $((ev * PS)) ]"
	# As nobody (the tree is world-readable): a restore of its own, since
	# root's lookups do not load the directories' POSIX ACLs that a
	# non-owner's cached lookups need (dcprobe(7)).
	mcold || fail "remount"
	run as_nobody warm --manifest="$m"
	assertEquals "restore as nobody ($ERR)" 0 "$RC"
	assertEquals "every recorded path cached (nobody)" "" \
		"$(as_nobody "$OPROBE" - <<<"$paths" | grep -v '^cached ' | head -3)"
	assertEquals "nobody: each recorded range resident, no page outside" "" \
		"$(mpy check "$m" 1 | grep -v '^files ' | head -3)"
}

# While it watches, the recorder opens nothing but O_PATH (directories by
# their handles), and no name of the fixture; over the whole run it never
# opens the FIFO or the device W opened (the writer names them, and opens
# only regular files it checked): strace from READY=1 (its sendto) to the
# close of the fanotify descriptor.
test_record_opens_nothing_while_watching() {
	local m=$WORK/strace.jsonl t=$WORK/rec.strace
	command -v strace >/dev/null || { fail "strace is needed"; return; }
	mcold || fail "remount"
	# (LeakSanitizer cannot run under ptrace: off for this run in ASan builds)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		rec_start strace -f -yy -qq -s 256 -o "$t" \
		-e trace=open,openat,openat2,open_by_handle_at,name_to_handle_at,execve,close,sendto \
		dcache-probe --record="$m" "$ROOT" || return
	# The signal goes to the recorder itself: strace, started in the
	# background by a shell without job control, ignores SIGINT.
	REC_SIG=$(ps -o pid= --ppid "$REC_PID" | tr -d ' ')
	[ -n "$REC_SIG" ] || fail "no recorder under strace"
	run_w || fail "W failed"
	rec_stop
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "the recording under strace is what W read" "" \
		"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" - "${ALSO[@]}" | head -5)"
	python3 - "$t" "$MNT" >"$WORK/watch.calls" <<'PY'
import re, sys
mnt = sys.argv[2]
on = False
n = npath = nh = 0
for line in open(sys.argv[1]):
    if "READY=1" in line and "sendto(" in line:
        on = True
        continue
    if on and re.search(r"close\(\d+<anon_inode:\[fanotify\]>\)", line):
        print("END")
        print("  strace, from READY=1 to the fanotify close: %d opens, %d of them O_PATH (%d by handle)"
              % (n, npath, nh), file=sys.stderr)
        break
    if not on:
        continue
    m = re.search(r"\b(open|openat|openat2|open_by_handle_at)\((.*)", line)
    if not m:
        continue
    call = m.group(0)
    n += 1
    npath += "O_PATH" in call
    nh += m.group(1) == "open_by_handle_at"
    if "O_PATH" not in call:
        print("not O_PATH: " + line.strip())
    elif m.group(1) != "open_by_handle_at" and mnt in call.split("=")[0]:
        print("a name of the fixture: " + line.strip())
if not on:
    print("no READY=1")
PY
	assertEquals "while watching: only O_PATH opens, no name of the fixture" "END" \
		"$(head -5 "$WORK/watch.calls")"
	assertEquals "the FIFO and the device are never opened but O_PATH" "" \
		"$(grep -E "open[a-z0-9_]*\(.*$ROOT/x/(fifo|null)\"" "$t" | grep -v O_PATH | head -3)"
	assertTrue "it did open directories by handle" "grep -q 'open_by_handle_at(.*O_PATH' '$t'"
}

# A recorded file's identity is the one a snapshot writes of it: the same
# writer (dcache-probe --ranges --json over the recorded files, just after).
test_record_identity_is_the_snapshots() {
	local m=$WORK/restore.jsonl s=$WORK/snap.jsonl
	[ -s "$m" ] || test_record_is_what_the_workload_read
	mcold || fail "remount"
	warm -q --manifest="$m"
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("type") == "entry" and o.get("kind") == "file":
        print(o["path"])' "$m" >"$WORK/files"
	dcache-probe --ranges --json --from="$WORK/files" >"$s"
	json_log dcache-probe "$s"
	assertEquals "identities" "" "$(python3 -c '
import json, sys
def ids(f, kind):
    # (a path given, as the snapshot has them, is of kind "unknown")
    return {o["path"]: o.get("identity") for o in map(json.loads, open(f))
            if o.get("type") == "entry" and o.get("kind") == kind}
a, b = ids(sys.argv[1], "file"), ids(sys.argv[2], "unknown")
print("\n".join("%s: %s / %s" % (p, a[p], b.get(p)) for p in sorted(a) if a[p] != b.get(p))[:2000])
assert a' "$m" "$s")"
}

# FILE is replaced whole or not at all: a second SIGINT while the manifest
# is written stops the run (exit 2) and leaves the old FILE as it was.  The
# writing is held in place by freezing the filesystem of FILE's directory.
test_record_output_is_whole_or_absent() {
	local out i
	out=$(mktemp -d "$FIXTURE_ROOT/out.XXXXXX")
	truncate -s 32M "$out.img" && mkfs.ext4 -q -F "$out.img" && mount -o loop "$out.img" "$out" ||
		{ fail "cannot make the output's filesystem"; return; }
	echo "the old manifest" >"$out/m.jsonl"
	rec_start dcache-probe --record="$out/m.jsonl" "$ROOT" || { umount "$out"; return; }
	run_w || fail "W failed"
	fsfreeze -f "$out" || fail "fsfreeze"
	kill -INT "$REC_PID"
	for ((i = 0; i < 1000; i++)); do
		grep -qx 'STOPPING=1' "$WORK/notify.sock.log" && break
		sleep 0.01
	done
	assertTrue "STOPPING=1 said" "grep -qx STOPPING=1 '$WORK/notify.sock.log'"
	kill -INT "$REC_PID"
	fsfreeze -u "$out"
	rec_stop INT
	assertEquals "a second SIGINT: exit 2 ($REC_ERR)" 2 "$REC_RC"
	assertContains "it says so" "$REC_ERR" "left as it was"
	assertEquals "the old FILE" "the old manifest" "$(cat "$out/m.jsonl")"
	assertEquals "no temporary file left" "m.jsonl" "$(ls -A "$out" | grep -v lost+found)"
	umount "$out"
	# A FIFO or a directory as FILE: refused before anything is watched.
	mkfifo "$WORK/fifo"
	run timeout 10 dcache-probe --record="$WORK/fifo" "$ROOT"
	assertEquals "onto a FIFO: exit 2 ($ERR)" 2 "$RC"
	run timeout 10 dcache-probe --record="$WORK" "$ROOT"
	assertEquals "onto a directory: exit 2 ($ERR)" 2 "$RC"
}

# Only root records (fanotify filesystem marks); a kernel without
# directory handles in fanotify cannot.
test_record_needs_root() {
	run as_nobody dcache-probe --record=- --for=1s "$ROOT"
	assertEquals "as nobody: exit 3" 3 "$RC"
	assertContains "as nobody: why" "$ERR" "--record needs CAP_SYS_ADMIN (fanotify filesystem marks)"
	run "$FAULT" fanotify_init=EINVAL -- dcache-probe --record=- --for=1s "$ROOT"
	assertEquals "fanotify_init EINVAL: exit 3" 3 "$RC"
	assertContains "fanotify_init EINVAL: why" "$ERR" "needs fanotify reporting directories and names"
	run dcache-probe --record=- --for=1s "$ROOT/d00/f0000"
	assertEquals "a root that is a file: exit 2" 2 "$RC"
	assertContains "a root that is a file: why" "$ERR" "not a directory"
	run dcache-probe --record=- --for=1s "$ROOT/nothere"
	assertEquals "a root not there: exit 2" 2 "$RC"
}

# A root on a btrfs subvolume: fanotify refuses a filesystem mark there
# (EXDEV: the subvolume's fsid is not the superblock's), so exit 3 and
# why; the top of the same btrfs is recorded.
test_record_btrfs_subvolume_is_refused() {
	local b img
	command -v mkfs.btrfs >/dev/null || { fail "btrfs-progs is needed"; return; }
	b=$(mktemp -d "$FIXTURE_ROOT/btrfs.XXXXXX")
	img=$b.img
	truncate -s 200M "$img" && mkfs.btrfs -q -f "$img" >/dev/null && mount -o loop "$img" "$b" ||
		{ fail "cannot make a btrfs"; return; }
	b=$(realpath "$b")
	btrfs -q subvolume create "$b/sub" >/dev/null && echo x >"$b/sub/f" && echo y >"$b/top"
	run dcache-probe --record=- --for=1s "$b/sub"
	assertEquals "a subvolume: exit 3" 3 "$RC"
	assertContains "a subvolume: why" "$ERR" "a root on a btrfs subvolume cannot be watched by filesystem (EXDEV)"
	rec_start dcache-probe --record="$WORK/btrfs.jsonl" "$b" || { umount "$b"; return; }
	cat "$b/top" >/dev/null
	rec_stop
	assertEquals "the top of the btrfs: exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "the top of the btrfs: its file recorded" file "$(kind "$WORK/btrfs.jsonl" "$b/top")"
	umount "$b"
	rm -f "$img"
}

# Each exclusion and each bad value: exit 64 and its sentence.
test_record_usage() {
	local a
	while IFS='|' read -r a want; do
		# shellcheck disable=SC2086
		run dcache-probe $a
		assertEquals "$a: exit" 64 "$RC"
		assertContains "$a: $ERR" "$ERR" "$want"
	done <<EOF
--record=- -r $ROOT|--record excludes -r
--record=- -s $ROOT|--record excludes -s and -c
--record=- --manifest=$WORK/x|--record excludes --manifest
--record=- --explain $ROOT|--record excludes --explain
--record=- --prometheus $ROOT|--record excludes --prometheus
--record=- -0 $ROOT|--record excludes -0
--record=- --per-dir $ROOT|--record excludes --per-dir
--record=- --per-mount $ROOT|--record excludes --per-mount
--record=- --from=$WORK/x $ROOT|--record excludes --from and --files0-from
--record=- -L $ROOT|--record excludes -L and -H
--record=- --min-cached 50 $ROOT|--record excludes --min-cached
--record=$WORK/m --output=$WORK/n $ROOT|--record excludes --output
--record=- --pid=1 --cgroup=/x $ROOT|--pid excludes --cgroup
--record=- --for=0 $ROOT|invalid --for '0'
--record=- --for=1d $ROOT|invalid --for '1d'
--record=- --pid=0 $ROOT|invalid --pid '0'
--record=- --pid=x $ROOT|invalid --pid 'x'
--record=- --cgroup=system.slice $ROOT|invalid --cgroup 'system.slice'
--record=- --cgroup=/a/../b $ROOT|invalid --cgroup '/a/../b'
--for=1s $ROOT|--for needs --record
--pid=1 $ROOT|--pid needs --record
--start=true $ROOT|--start needs --record
--record=- --start=true $ROOT|--start needs --record=FILE, not standard output
--record=$WORK/m --start=true --pid=1 $ROOT|--start excludes --pid
--record=$WORK/m --start=true --cgroup=/x $ROOT|--start excludes --cgroup
--record=$WORK/m --start= $ROOT|--start needs a command
--listed $ROOT|--listed needs --record
--record= $ROOT|--record needs a file name
--record=-|no PATH given
EOF
}

# fan_marks PID INODE... - wait until the recorder PID's fanotify
# descriptor holds an inode mark on each INODE (the ignore mark it puts on a
# file once it has recorded it): its events are read.  10 s at most.
fan_marks() {
	local pid=$1 fd i ino all
	shift
	fd=$(find /proc/"$pid"/fd -lname 'anon_inode:\[fanotify\]' -printf '%f\n' | head -1)
	[ -n "$fd" ] || return 1
	for ((i = 0; i < 1000; i++)); do
		all=1
		for ino; do
			grep -q "^fanotify ino:$(printf '%x' "$ino") " /proc/"$pid"/fdinfo/"$fd" || all=
		done
		[ -n "$all" ] && return 0
		sleep 0.01
	done
	return 1
}

# Files deleted, replaced or renamed after use, and a directory deleted
# before the recorder read its events (the recorder stopped meanwhile):
# a name gone is left out and counted, a replaced file is kept (what a
# restart opens), a deleted directory is counted stale.
test_record_gone_replaced_renamed() {
	local m=$WORK/gone.jsonl g=$ROOT/g
	rm -rf "$g"
	mkdir -p "$g/ren" "$g/st"
	for f in del rep ren/x st/z keep; do echo "$f" >"$g/$f"; done
	mcold || fail "remount"
	rec_start dcache-probe --record="$m" "$ROOT" || return
	cat "$g/del" "$g/rep" "$g/ren/x" "$g/keep" >/dev/null
	fan_marks "$REC_PID" "$(stat -c %i "$g/del")" "$(stat -c %i "$g/rep")" \
		"$(stat -c %i "$g/ren/x")" || fail "the recorder did not read the events in 10 s"
	rm "$g/del"
	echo new >"$g/rep.new" && mv "$g/rep.new" "$g/rep"
	mv "$g/ren" "$g/ren2"
	kill -STOP "$REC_PID"
	cat "$g/st/z" >/dev/null
	rm -r "$g/st"
	kill -CONT "$REC_PID"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "recorded under g/" "$g
$g/keep
$g/rep" "$(mpy paths "$m" | grep "^$g" | sort)"
	assertEquals "gone: del, rep.new, ren/x" 3 "$(recording "$m" 'r["gone"]')"
	assertEquals "replaced: rep" 1 "$(recording "$m" 'r["replaced"]')"
	assertEquals "a stale directory: st" 1 "$(recording "$m" 'r["stale_dirs"]')"
	assertEquals "rep's identity is the new file's" "$(stat -c %i "$g/rep")" \
		"$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("path") == sys.argv[2]:
        print(o["identity"]["ino"])' "$m" "$g/rep")"
	rm -rf "$g"
}

# ---- --pid ----

# W and its descendants (a child, a double-forked grandchild) while O reads
# the other files of the same directories: exactly W's.
test_record_pid_holds_exactly_the_workload() {
	local m=$WORK/pid.jsonl o
	mcold || fail "remount"
	w_stopped bash "$WORK/w.sh" "$ROOT" "$WPLAN" "$DCP_TESTS/lib/manifest.py" "$WORK/grand.done"
	rec_start dcache-probe --record="$m" --pid="$W_PID" "$ROOT" || return
	run_o &
	o=$!
	kill -CONT "$W_PID"
	wait "$W_PID" || fail "W failed"
	wait "$o" || fail "O failed"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	rec_said "$m" "--pid"
	assertEquals "the recording is W's, none of O's" "" \
		"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" "$OPLAN" "${ALSO[@]}" '!o-only' | head -5)"
	assertEquals "unattributed" 0 "$(recording "$m" 'r["unattributed"]')"
	assertEquals "lineage" True "$(recording "$m" 'r["attribution"]["lineage"]')"
	assertTrue "O's events were seen and left out" "[ $(recording "$m" 'r["other"]') -gt 0 ]"
}

# Without the fork events (bind fails), a child of W that read F and was
# reaped before the recorder read its events cannot be attributed: F is
# left out, the events and the file are counted and said, the exit status
# unchanged.
test_record_pid_unattributed_is_counted() {
	local m=$WORK/unattr.jsonl f=$ROOT/x/child
	mcold || fail "remount"
	# W waits on a FIFO (the recorder resumes a --pid stopped at its start).
	rm -f "$WORK/go" && mkfifo "$WORK/go"
	sh -c 'read -r _ <"$2"; cat "$1" >/dev/null; exit 0' - "$f" "$WORK/go" &
	W_PID=$!
	rec_start "$FAULT" bind=EPERM -- dcache-probe --record="$m" --pid="$W_PID" "$ROOT" || return
	kill -STOP "$REC_PID"
	echo go >"$WORK/go"
	wait "$W_PID"
	kill -CONT "$REC_PID"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status unchanged ($REC_ERR)" 0 "$REC_RC"
	assertContains "lineage off, said" "$REC_ERR" "process events cannot be followed here"
	assertEquals "lineage" False "$(recording "$m" 'r["attribution"]["lineage"]')"
	assertEquals "F is not recorded" absent "$(kind "$m" "$f")"
	assertTrue "unattributed events" "[ $(recording "$m" 'r["unattributed"]') -ge 1 ]"
	assertEquals "unattributed files" 1 "$(recording "$m" 'r["unattributed_files"]')"
	assertContains "said" "$REC_ERR" "of 1 file came from processes that exited before they could be attributed; these files are not recorded"
}

# --pid of a process that is gone.
test_record_pid_gone() {
	local p
	sh -c 'exit 0' &
	p=$!
	wait "$p"
	run dcache-probe --record=- --pid="$p" "$ROOT"
	assertEquals "exit" 2 "$RC"
	assertContains "why" "$ERR" "--pid: no process $p"
}

# ---- --cgroup ----

# W in a cgroup of the test, O outside: exactly W's; the cgroup given as
# its hierarchy path and as its directory under the cgroup2 mount.
test_record_cgroup_holds_exactly_the_workload() {
	local m=$WORK/cg.jsonl form o un
	cg_new || return
	for form in "$CGPATH" "$CG"; do
		mcold || fail "remount"
		rec_start dcache-probe --record="$m" --cgroup="$form" "$ROOT" || return
		run_o &
		o=$!
		bash -c 'echo $$ >"$1/cgroup.procs" && exec bash "$2" "$3" "$4" "$5" "$6"' - "$CG" \
			"$WORK/w.sh" "$ROOT" "$WPLAN" "$DCP_TESTS/lib/manifest.py" "$WORK/grand.done" ||
			fail "W failed"
		wait "$o" || fail "O failed"
		rec_stop
		json_log dcache-probe "$m"
		assertEquals "$form: exit status ($REC_ERR)" 0 "$REC_RC"
		rec_said "$m" "--cgroup=$form"
		assertEquals "$form: the recording is W's, none of O's" "" \
			"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" "$OPLAN" "${ALSO[@]}" '!o-only' | head -5)"
		assertEquals "$form: the hierarchy path" "$CGPATH" "$(recording "$m" 'r["attribution"]["cgroup"]')"
		# O's short-lived children (cat), born outside and reaped before
		# their forks were read, cannot be told from a process that
		# moved itself in: counted and said, never recorded (above).
		un=$(recording "$m" 'r["unattributed"]')
		if [ "$un" -gt 0 ]; then
			assertContains "$form: $un unattributed, said" "$REC_ERR" "these files are not recorded"
		fi
	done
}

# The cgroup made after the recording started (a unit ordered before the
# service records its start): exact.
test_record_cgroup_made_after_the_start() {
	local m=$WORK/cglate.jsonl cgm
	cgm=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	[ -n "$cgm" ] || { startSkipping; fail "no cgroup v2 hierarchy"; return; }
	mcold || fail "remount"
	CGPATH=/dcprobe-test-late-$$
	rec_start dcache-probe --record="$m" --cgroup="$CGPATH" "$ROOT" || return
	mkdir "$cgm$CGPATH" || { fail "cannot make the cgroup"; return; }
	CG=$cgm$CGPATH
	bash -c 'echo $$ >"$1/cgroup.procs" && exec bash "$2" "$3" "$4" "$5" "$6"' - "$CG" \
		"$WORK/w.sh" "$ROOT" "$WPLAN" "$DCP_TESTS/lib/manifest.py" "$WORK/grand.done" ||
		fail "W failed"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "the recording is W's" "" \
		"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" - "${ALSO[@]}" | head -5)"
}

# A process born outside that moves itself in, reads F, exits and is
# reaped while the recorder is stopped: it cannot be told (it may have
# been in), so F is left out and counted, never dropped silently.
test_record_cgroup_moved_in_and_gone_is_unattributed() {
	local m=$WORK/cgun.jsonl f=$ROOT/x/child
	cg_new || return
	mcold || fail "remount"
	rec_start dcache-probe --record="$m" --cgroup="$CGPATH" "$ROOT" || return
	kill -STOP "$REC_PID"
	sh -c 'echo $$ >"$1/cgroup.procs" && cat "$2" >/dev/null' - "$CG" "$f" || fail "the process failed"
	kill -CONT "$REC_PID"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "F is not recorded" absent "$(kind "$m" "$f")"
	assertEquals "unattributed files" 1 "$(recording "$m" 'r["unattributed_files"]')"
	assertContains "said" "$REC_ERR" "these files are not recorded"
}

# A workload in a mount namespace of its own (as a unit with
# ProtectSystem= runs) is recorded: the marks are on the filesystem.
test_record_sees_other_mount_namespaces() {
	local m=$WORK/ns.jsonl
	mcold || fail "remount"
	rec_start dcache-probe --record="$m" "$ROOT" || return
	unshare -m --propagation private bash "$WORK/w.sh" "$ROOT" "$WPLAN" "$DCP_TESTS/lib/manifest.py" \
		"$WORK/grand.done" || fail "W failed"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "W in its own namespace, recorded" "" \
		"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" - "${ALSO[@]}" | head -5)"
}

# ---- what is said ----

# 17,000 files opened while the recorder is stopped: the queue (16,384
# events) overflows.  Said, exit 2, the manifest written and not complete.
test_record_overflow_is_said() {
	local m=$WORK/over.jsonl d=$ROOT/many
	mkdir -p "$d"
	python3 -c '
import os, sys
for i in range(17000):
    os.close(os.open(os.path.join(sys.argv[1], "f%05d" % i), os.O_WRONLY | os.O_CREAT, 0o644))' "$d"
	rec_start dcache-probe --record="$m" "$ROOT" || return
	kill -STOP "$REC_PID"
	python3 -c '
import os, sys
for i in range(17000):
    os.close(os.open(os.path.join(sys.argv[1], "f%05d" % i), os.O_RDONLY))' "$d"
	kill -CONT "$REC_PID"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status" 2 "$REC_RC"
	assertContains "said" "$REC_ERR" "the event queue overflowed 1 time: what was opened then is missing from the recording (fs.fanotify.max_queued_events is"
	assertEquals "overflows" 1 "$(recording "$m" 'r["overflows"]')"
	assertEquals "not complete" False \
		"$(json_get '[o for o in objs if o["type"] == "summary"][-1]["complete"]' <"$m")"
	assertEquals "the summary says exit 2" 2 \
		"$(json_get '[o for o in objs if o["type"] == "summary"][-1]["status"]' <"$m")"
	rm -rf "$d"
}

# A file recorded once is ignored after (an ignore mark on its inode): 100
# files opened 50 times each cost about one event each.
test_record_repeated_opens_add_no_events() {
	local m=$WORK/rep.jsonl d=$ROOT/rep
	mkdir -p "$d"
	for i in $(seq 100); do echo "$i" >"$d/f$i"; done
	rec_start dcache-probe --record="$m" "$d" || return
	python3 -c '
import os, sys
for k in range(50):
    for i in range(1, 101):
        fd = os.open(os.path.join(sys.argv[1], "f%d" % i), os.O_RDONLY)
        os.read(fd, 16)
        os.close(fd)' "$d"
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "files" 100 "$(recording "$m" 'r["files"]')"
	assertTrue "events ($(recording "$m" 'r["events"]')) <= 210" "[ $(recording "$m" 'r["events"]') -le 210 ]"
	assertTrue "ignore marks" "[ $(recording "$m" 'r["ignore_marks"]') -ge 100 ]"
	rm -rf "$d"
}

# --listed: the names a listed directory holds in the dentry cache (those
# looked up, as a stat does: fanotify does not see it), as names only; a
# restore looks them up and reads none of their data.
test_record_listed_adds_names_only() {
	local m=$WORK/listed.jsonl n=$WORK/nolisted.jsonl d=$ROOT/lst s0 s1
	mkdir -p "$d"
	for f in a b c; do head -c 20000 /dev/urandom >"$d/$f"; done
	for args in "--listed|$m" "|$n"; do
		mcold || fail "remount"
		# shellcheck disable=SC2086
		rec_start dcache-probe --record="${args#*|}" ${args%%|*} "$ROOT" || return
		ls "$d" >/dev/null
		stat "$d/a" >/dev/null
		rec_stop
		json_log dcache-probe "${args#*|}"
		assertEquals "${args%%|*}: exit status ($REC_ERR)" 0 "$REC_RC"
	done
	assertEquals "without --listed: D/a absent" absent "$(kind "$n" "$d/a")"
	assertEquals "with --listed: D/a, a name" "file" "$(kind "$m" "$d/a")"
	assertEquals "with --listed: no identity, no ranges" "None None" "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("path") == sys.argv[2]:
        print(o.get("identity"), o.get("ranges"))' "$m" "$d/a")"
	assertEquals "a name nobody looked up is absent" absent "$(kind "$m" "$d/b")"
	assertEquals "listed_names" 1 "$(recording "$m" 'r["listed_names"]')"
	mcold || fail "remount"
	warm -q --manifest="$m"
	assertEquals "after a restore: D/a cached" "cached $d/a" "$("$OPROBE" "$d/a")"
	assertEquals "and none of its data read" "" "$(python3 -c '
import os, sys
sys.path.insert(0, sys.argv[1])
import manifest
fd = os.open(sys.argv[2], os.O_RDONLY)
r = manifest.cachestat(fd, 0, 0)[0]
print(r or "")' "$DCP_TESTS/lib" "$d/a")"
	rm -rf "$d"
}

# ---- hostile (issue 44) ----

# fan_ready PID - wait until recorder PID holds its filesystem marks (its
# fanotify descriptor has an "sdev" mark), 10 s at most; 1 when it ended.
fan_ready() {
	local fd i
	for ((i = 0; i < 1000; i++)); do
		kill -0 "$1" 2>/dev/null || return 1
		fd=$(find /proc/"$1"/fd -lname 'anon_inode:\[fanotify\]' -printf '%f\n' 2>/dev/null | head -1)
		[ -n "$fd" ] && grep -q '^fanotify sdev:' /proc/"$1"/fdinfo/"$fd" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# ms_since T0 - milliseconds since T0 (date +%s%N).
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# A FUSE mount (bindfs) whose daemon is stopped, inside the root and as
# the root: the recorder never stats, reads a link or opens through it, so
# --for and SIGTERM end a recording within a second; a FUSE root is
# refused at once (exit 3), not waited on.  (Before: add_listed() fstat'ed
# the mount's root, the start stat'ed a FUSE root with SIGTERM blocked:
# ended only by SIGKILL.)
test_record_never_asks_a_stopped_fuse_daemon() {
	command -v bindfs >/dev/null || startSkipping
	local src=$MNT/fsrc fuse=$ROOT/fz m=$WORK/fuse.jsonl pid t0 ms sig
	mkdir -p "$src/d" "$fuse"
	echo x >"$src/d/f"
	bindfs -o entry_timeout=0.2,attr_timeout=0.2 "$src" "$fuse" || fail "bindfs"
	pid=$(fixture_pgrep "bindfs .*$fuse" | head -1)
	assertNotNull "the daemon" "$pid"
	ls -l "$fuse/d/f" >/dev/null
	fuse_stop "$pid"
	sleep 0.5 # the entry and attribute timeouts run out
	# Inside the root, --listed: ended by --for, then by SIGTERM.
	for sig in for TERM INT; do
		t0=$(date +%s%N)
		if [ "$sig" = for ]; then
			rec_start timeout -k 5 15 "$DCP_BIN/dcache-probe" --record="$m" --listed --for=2s "$ROOT" || break
		else
			rec_start timeout -k 5 15 "$DCP_BIN/dcache-probe" --record="$m" --listed "$ROOT" || break
		fi
		# The signal to the recorder itself: timeout would send it twice
		# (to its child, then to its process group), and a second one
		# abandons the writing.
		REC_SIG=$(pgrep -P "$REC_PID" -x dcache-probe)
		ls "$ROOT" >/dev/null
		cat "$ROOT/x/target" >/dev/null
		sleep 0.3
		if [ "$sig" = for ]; then
			rec_wait
		else
			t0=$(date +%s%N)
			rec_stop "$sig"
		fi
		ms=$(ms_since "$t0")
		echo "  $sig: ended in $ms ms, exit $REC_RC" >&2
		assertEquals "$sig: exit status ($REC_ERR)" 0 "$REC_RC"
		if [ "$sig" = for ]; then
			assertTrue "--for=2s: ended within 3 s ($ms ms)" "[ $ms -lt 3000 ]"
		else
			assertTrue "SIG$sig: ended within a second ($ms ms)" "[ $ms -lt 1000 ]"
		fi
		assertEquals "$sig: x/target recorded" file "$(kind "$m" "$ROOT/x/target")"
		assertEquals "$sig: the FUSE mount point is not" absent "$(kind "$m" "$fuse")"
	done
	# The FUSE mount as the root: refused at once, nothing asked.
	t0=$(date +%s%N)
	run timeout -k 5 15 "$DCP_BIN/dcache-probe" --record="$m.root" --for=1s "$fuse"
	ms=$(ms_since "$t0")
	echo "  FUSE root: ended in $ms ms, exit $RC: $ERR" >&2
	assertEquals "FUSE root: exit 3 ($ERR)" 3 "$RC"
	assertTrue "FUSE root: within a second ($ms ms)" "[ $ms -lt 1000 ]"
	assertContains "FUSE root: said" "$ERR" "'$fuse': on a fuse"
	assertFalse "FUSE root: nothing published" "[ -e '$m.root' ]"
	run timeout -k 5 15 "$DCP_BIN/dcache-probe" --record="$m.root" --for=1s "$fuse/d"
	assertEquals "below a FUSE root: exit 3 ($ERR)" 3 "$RC"
	fuse_cont
	umount "$fuse" || umount -l "$fuse"
	rmdir "$fuse"
	rm -rf "$src"
}

# At the descriptor floor and above it, while a workload reads 60 files:
# a recording either refuses to start (exit 2, in words), or holds every
# file, or says it is incomplete (exit 2, "complete":false); never a quiet
# success that lost files.  (Before: ulimit -n 9 recorded "files":0,
# open_by_handle_at's EMFILE counted as stale directories, complete, exit 0.)
test_record_at_the_descriptor_floor() {
	local d=$ROOT/fl m=$WORK/floor.jsonl lim by rp files complete refused=0 whole=0
	mkdir -p "$d"
	for i in $(seq -w 1 60); do echo "$i" >"$d/f$i"; done
	for by in all pid; do
		for lim in 9 10 11 12 13 14 16 20; do
			mcold || fail "remount"
			rm -f "$m"
			if [ "$by" = pid ]; then
				w_stopped sh -c 'cat "$1"/* >/dev/null' - "$d"
				(ulimit -n "$lim" && exec "$DCP_BIN/dcache-probe" --record="$m" --pid="$W_PID" "$ROOT") \
					>/dev/null 2>"$WORK/floor.err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
			else
				(ulimit -n "$lim" && exec "$DCP_BIN/dcache-probe" --record="$m" "$ROOT") \
					>/dev/null 2>"$WORK/floor.err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
			fi
			rp=$!
			if fan_ready "$rp"; then
				if [ "$by" = pid ]; then
					kill -CONT "$W_PID"
					wait "$W_PID"
				else
					cat "$d"/* >/dev/null
				fi
				sleep 0.2
				kill -INT "$rp"
			else
				[ "$by" = pid ] && { kill -CONT "$W_PID"; wait "$W_PID"; }
			fi
			wait "$rp"
			REC_RC=$?
			REC_ERR=$(cat "$WORK/floor.err")
			if [ ! -s "$m" ]; then
				echo "  $by, ulimit -n $lim: refused, exit $REC_RC: $REC_ERR" >&2
				assertEquals "$by, $lim: refused: exit 2" 2 "$REC_RC"
				assertContains "$by, $lim: refused in words" "$REC_ERR" "open file descriptors"
				[[ $REC_ERR =~ at\ least\ [0-9]+\ is\ needed ]]
				assertTrue "$by, $lim: the number needed said: $REC_ERR" $?
				refused=$((refused + 1))
				continue
			fi
			files=$(python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) for o in [json.loads(l)]
          if o.get("type") == "entry" and o["path"].startswith(sys.argv[2] + "/")
          and o.get("identity") and o.get("ranges")))' "$m" "$d")
			complete=$(python3 -c '
import json, sys
print([json.loads(l) for l in open(sys.argv[1])][-1]["complete"])' "$m")
			echo "  $by, ulimit -n $lim: exit $REC_RC, $files files, complete $complete" >&2
			if [ "$files" = 60 ]; then
				assertEquals "$by, $lim: whole: exit 0 ($REC_ERR)" 0 "$REC_RC"
				assertEquals "$by, $lim: whole: complete" True "$complete"
				whole=$((whole + 1))
			else
				assertEquals "$by, $lim: $files of 60 files: exit 2 ($REC_ERR)" 2 "$REC_RC"
				assertEquals "$by, $lim: $files of 60 files: incomplete" False "$complete"
				assertContains "$by, $lim: said" "$REC_ERR" "could not be resolved"
			fi
		done
	done
	assertTrue "some limit records every file" "[ $whole -ge 2 ]"
	rm -rf "$d"
}

# --listed and files opened in a listed directory: the opened files keep
# their identity and ranges; only the names nobody opened are names only.
# (Before: the listed name shadowed the opened file: no identity, no ranges.)
test_record_listed_keeps_the_data_of_opened_files() {
	local m=$WORK/listed2.jsonl d=$ROOT/lst2
	mkdir -p "$d"
	for f in a b c; do head -c 20000 /dev/urandom >"$d/$f"; done
	mcold || fail "remount"
	rec_start dcache-probe --record="$m" --listed "$ROOT" || return
	ls "$d" >/dev/null
	cat "$d/a" >/dev/null
	stat "$d/b" >/dev/null
	rec_stop
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	assertEquals "a: opened: identity and ranges; b: a name only" "a True True
b False False" "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("type") == "entry" and o["path"].startswith(sys.argv[2] + "/"):
        print(o["path"].rsplit("/", 1)[1], bool(o.get("identity")), bool(o.get("ranges")))' "$m" "$d")"
	assertEquals "files: a" 1 "$(recording "$m" 'r["files"]')"
	assertEquals "listed_names: b (a is a file recorded)" 1 "$(recording "$m" 'r["listed_names"]')"
	rm -rf "$d"
}

# Arguments that mean nothing: a zombie --pid, a --cgroup that is not a
# cgroup or cannot come to exist, --for below a second.
test_record_arguments_that_mean_nothing() {
	local z zp i cgmnt
	run dcache-probe --record=- --for=1ms "$ROOT"
	assertEquals "--for=1ms: exit" 64 "$RC"
	assertContains "--for=1ms: $ERR" "$ERR" "invalid --for '1ms'"
	run dcache-probe --record=- --for=500us "$ROOT"
	assertEquals "--for=500us: exit" 64 "$RC"
	# A zombie: a child of a shell that does not reap it (stopped).
	python3 -c '
import os, signal
p = os.fork()
if p == 0:
    os._exit(0)
print(p, flush=True)
signal.pause()' >"$WORK/zpid" &
	z=$!
	for ((i = 0; i < 1000; i++)); do
		zp=$(cat "$WORK/zpid")
		[ -n "$zp" ] && [ "$(awk '{ print $3 }' /proc/"$zp"/stat 2>/dev/null)" = Z ] && break
		sleep 0.01
	done
	assertEquals "it is a zombie" Z "$(awk '{ print $3 }' /proc/"$zp"/stat)"
	run dcache-probe --record=- --pid="$zp" --for=1s "$ROOT"
	assertEquals "zombie --pid: exit" 2 "$RC"
	assertContains "zombie --pid: $ERR" "$ERR" "--pid: process $zp has exited"
	kill -KILL "$z"
	wait "$z" 2>/dev/null
	cgmnt=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	[ -n "$cgmnt" ] || { startSkipping; fail "no cgroup v2 hierarchy"; return; }
	run dcache-probe --record=- --cgroup="$cgmnt/cgroup.procs" --for=1s "$ROOT"
	assertEquals "a file of the cgroup2 mount: exit" 2 "$RC"
	assertContains "not a cgroup: $ERR" "$ERR" "not a cgroup"
	run dcache-probe --record=- --cgroup=/no-such.slice/no-such.service --for=1s "$ROOT"
	assertEquals "no such cgroup nor its parent: exit" 2 "$RC"
	assertContains "no such cgroup: $ERR" "$ERR" "no cgroup /no-such.slice"
}

# --help: the recorder's options under their own heading, apart from the
# probe's, and none of them elsewhere.
test_record_help_groups_its_options() {
	run dcache-probe --help
	assertEquals "exit" 0 "$RC"
	assertEquals "under one heading, nothing else in it" \
		" Recording (--record; root only):
--cgroup
--for
--listed
--pid
--record
--start" "$(printf '%s\n' "$OUT" | awk '
/^ [A-Z].*:$/ { head = $0; if (head ~ /Recording/) print head; next }
/^$/ { head = "" }
head ~ /Recording/ && match($0, /--[a-z-]+/) { print substr($0, RSTART, RLENGTH) }
head !~ /Recording/ && /^ +(-., )?--(record|for|pid|cgroup|listed|start)[= ]/ { print "ELSEWHERE " $0 }
' | sort -u)"
	printf '%s\n' "$OUT" | python3 "$DCP_TESTS/lib/help_check.py" "dcache-probe --help"
	assertEquals "help_check" 0 $?
}

# A plain command recorded without systemd: started stopped, its pid given;
# the recorder resumes it once it watches (nothing of its start is missed)
# and, at a terminal, says so and what ends the recording.
test_record_resumes_a_stopped_pid() {
	local m=$WORK/resume.jsonl p
	mcold || fail "remount"
	sh -c 'kill -STOP $$; exec cat "$1"' - "$ROOT/x/target" >/dev/null &
	p=$!
	stopped "$p" || fail "the command did not stop"
	run timeout -k 5 20 script -qec "$DCP_BIN/dcache-probe --record=$m --pid=$p --for=2s $ROOT" /dev/null
	assertFalse "resumed: it ran to its end ($OUT)" "kill -0 $p 2>/dev/null && ! grep -q '^[^)]*) Z' /proc/$p/stat"
	kill -CONT "$p" 2>/dev/null
	wait "$p"
	assertEquals "exit" 0 "$RC"
	assertContains "said at a terminal" "$OUT" "recording what process $p and its descendants open (resumed); --for, SIGINT (Ctrl-C) or SIGTERM ends it"
	assertEquals "its file recorded" file "$(kind "$m" "$ROOT/x/target")"
}

# ---- --start: a recorder that starts the command ----

# The command --start runs is recorded, and only it: W run by the recorder
# while O reads the other half of the same directories; its exit ends the
# recording (no signal, no --for), exit 0.
test_record_start_holds_exactly_the_command() {
	local m=$WORK/start.jsonl o
	mcold || fail "remount"
	rec_start dcache-probe --record="$m" \
		--start="exec bash '$WORK/w.sh' '$ROOT' '$WPLAN' '$DCP_TESTS/lib/manifest.py' '$WORK/grand.done'" \
		"$ROOT" || return
	run_o &
	o=$!
	rec_wait
	wait "$o" || fail "O failed"
	json_log dcache-probe "$m"
	assertEquals "exit status ($REC_ERR)" 0 "$REC_RC"
	rec_said "$m" "--start"
	assertEquals "the recording is W's, none of O's" "" \
		"$(mpy expect-recording "$ROOT" "$WPLAN" "$m" "$OPLAN" "${ALSO[@]}" '!o-only' | head -5)"
	assertEquals "ended by" exit "$(recording "$m" 'r["ended_by"]')"
	assertEquals "attribution" pid "$(recording "$m" 'r["attribution"]["by"]')"
	assertContains "the command named" "$(recording "$m" 'r["attribution"]["command"]')" "w.sh"
	assertEquals "unattributed" 0 "$(recording "$m" 'r["unattributed"]')"
	assertEquals "the command's stdout is not the manifest" "" "$(cat "$WORK/rec.out")"
}

# Nothing is lost at the start, 20 times: the command's first open (its
# only one) is recorded each time, at a terminal the line that says the
# recording has begun comes before the command's own output, and the
# recording ends with the command (no --for, no signal; 10 s at most).
test_record_start_records_the_first_open_every_time() {
	local m=$WORK/first.jsonl i f bad=0
	for i in $(seq -w 1 20); do
		f=$ROOT/o-only/f$i
		rm -f "$m"
		run timeout -k 2 10 script -qec "$DCP_BIN/dcache-probe --record=$m --start='head -c 3 $f >/dev/null; echo ran' $ROOT" /dev/null
		if [ "$RC" != 0 ] || [ "$(kind "$m" "$f")" != file ]; then
			bad=$((bad + 1))
			echo "  run $i: exit $RC, $f $(kind "$m" "$f"): $OUT" >&2
		fi
	done
	assertEquals "runs where the first open was missed" 0 "$bad"
	assertEquals "ended by the command's exit" exit "$(recording "$m" 'r["ended_by"]')"
	assertEquals "said at a terminal, then the command's output" \
		"recording what the command (process $(recording "$m" 'r["attribution"]["pid"]')) and its descendants open; its exit, SIGINT (Ctrl-C) or SIGTERM ends it|ran" \
		"$(printf '%s\n' "$OUT" | tr -d '\r' | sed -n '1s/^[^:]*: //p; 2p' | paste -sd'|')"
}

# A command that fails gives no quiet 0: "the command exited N" (or was
# killed by SIG), exit 2, and the manifest of what it opened is written.
test_record_start_failing_command_is_exit_2() {
	local m=$WORK/fail.jsonl
	run timeout -k 2 10 dcache-probe --record="$m" --start="cat '$ROOT/x/target' >/dev/null; exit 3" "$ROOT"
	assertEquals "exit" 2 "$RC"
	assertContains "said: $ERR" "$ERR" "dcache-probe: the command exited 3"
	assertEquals "its file recorded" file "$(kind "$m" "$ROOT/x/target")"
	assertEquals "ended by" exit "$(recording "$m" 'r["ended_by"]')"
	run timeout -k 2 10 dcache-probe --record="$m" --start='kill -USR1 $$' "$ROOT"
	assertEquals "killed: exit" 2 "$RC"
	assertContains "killed: said: $ERR" "$ERR" "dcache-probe: the command was killed by SIGUSR1"
	run timeout -k 2 10 dcache-probe --record="$m" --start="/no/such/command" "$ROOT"
	assertEquals "not found: exit" 2 "$RC"
	assertContains "not found: said: $ERR" "$ERR" "the command exited 127"
	run timeout -k 2 10 dcache-probe --record="$m" --start=true "$ROOT"
	assertEquals "true: exit" 0 "$RC"
}

# SIGTERM to the recorder ends the recording within a second and is passed
# on to the command (SIGTERM, as kill(1) sent it); the manifest holds what
# the command opened.  --for leaves the command running.
test_record_start_sigterm_and_for() {
	local m=$WORK/term.jsonl t0 p
	rec_start dcache-probe --record="$m" --start="cat '$ROOT/x/target' >/dev/null; exec sleep 60" "$ROOT" ||
		return
	p=$(pgrep -P "$REC_PID" -x sleep)
	for ((i = 0; i < 500; i++)); do
		p=$(pgrep -P "$REC_PID" -x sleep) && break
		sleep 0.01
	done
	assertNotNull "the command runs (sleep)" "$p"
	t0=$(date +%s%N)
	rec_stop TERM
	assertTrue "ended within 1 s ($(ms_since "$t0") ms)" "[ $(ms_since "$t0") -lt 1000 ]"
	assertEquals "exit ($REC_ERR)" 0 "$REC_RC"
	assertEquals "ended by" SIGTERM "$(recording "$m" 'r["ended_by"]')"
	assertEquals "its file recorded" file "$(kind "$m" "$ROOT/x/target")"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$p" 2>/dev/null && ! grep -q '^[^)]*) Z' "/proc/$p/stat" 2>/dev/null || break
		sleep 0.01
	done
	assertFalse "the command got SIGTERM" "kill -0 $p 2>/dev/null && ! grep -q '^[^)]*) Z' /proc/$p/stat"
	# --for: the recording ends, the command goes on.
	run timeout -k 2 10 dcache-probe --record="$m" --for=1s --start="exec sleep 30 >/dev/null 2>&1" "$ROOT"
	assertEquals "--for: exit ($ERR)" 0 "$RC"
	assertEquals "--for: ended by" for "$(recording "$m" 'r["ended_by"]')"
	p=$(recording "$m" 'r["attribution"]["pid"]')
	assertTrue "--for: the command left running" "kill -0 $p"
	kill "$p" 2>/dev/null
}

# shellcheck source=/dev/null
. "$SHUNIT2"
