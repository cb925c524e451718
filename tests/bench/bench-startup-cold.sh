#!/bin/bash
# bench-startup-cold.sh - how long a real program takes to start from a
# cold tree, and after each way of warming it first (issue 39).
#
# The program: python3 -S importing MODULES from a copy of its standard
# library on a loop-mounted ext4 image (PYTHONHOME points there; the
# script checks that json.__file__ lies on the image, else the figures
# would be the machine's python's).  The image is on a loop device with
# direct I/O, so reads reach the disk and not the image file's page cache;
# every condition starts from an unmount and mount of it (its dentries,
# inodes and pages cold), read-ahead as the device has it.  Conditions,
# interleaved, RUNS rounds:
#   cold                   the start alone;
#   warm                   the start after one unmeasured start;
#   warm --manifest=REC    after a restore of a recording of one cold start
#                          (dcache-probe --record --pid, around the start);
#   warm --manifest=SNAP   after a restore of a snapshot of the whole tree
#                          (dcache-probe -r --ranges --json), taken after one
#                          start and reads of other files of the tree (as much
#                          as the recording holds: what another program read);
#   warm -r --pages        after warming every name and page of the tree;
#   vmtouch -t             after vmtouch touching every page of the tree;
#   cold, recording        the cold start with a recorder (--pid) around it:
#                          what recording costs a real start.
# Printed per condition: the restore's wall ms and KiB read from the device
# (its sectors), the start's wall ms (median and min), its CPU ms (the
# child's rusage), its KiB read, and its ratio to the warm start (median
# over median, min over min).  Then the goal (issue 39): after the restore
# of the recording, the start within 1.2x of the warm one, reading no more
# than the recording holds; and one restore of the recording with names
# only (identities and ranges stripped: RECN) splits the restore's bytes
# into lookups and data.
#
# Usage: tests/bench/bench-startup-cold.sh   (as root)
#   RUNS=9        rounds (interleaved), median and min reported
#   MODULES="json, ..."   what the program imports
#   BIN=dir       the built commands (default: build/bin next to this tree)
#
# Not a test: it gates nothing.  It drops no cache but the image's own.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
RUNS=${RUNS:-9}
BIN=${BIN:-$here/../../build/bin}
MODULES=${MODULES:-"argparse, json, logging, email.parser, http.client, urllib.request, xml.etree.ElementTree, decimal, asyncio, unittest, sqlite3, csv, zipfile, tarfile, subprocess, uuid, hashlib, ssl, pathlib, typing, dataclasses, shutil, tempfile"}
PY=${PY:-$(readlink -f /usr/bin/python3)}
SPY=/usr/bin/python3 # the bench's own helpers

die() { echo "bench-startup-cold: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it mounts an image, and records)"
[ -x "$BIN/warm" ] && [ -x "$BIN/dcache-probe" ] || die "no commands in $BIN (build first, or set BIN=)"
"$BIN/dcache-probe" --help | grep -q -- --record || die "$BIN/dcache-probe has no --record"
command -v vmtouch >/dev/null || die "vmtouch is not installed (apt-get install vmtouch)"

bench_scratch bench-startup-cold
truncate -s 512M "$tmp/img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$tmp/img" || die "mkfs failed"
loopdev=$(losetup -f --show --direct-io=on "$tmp/img") || die "losetup failed"
mount -o no_prefetch_block_bitmaps "$loopdev" "$mnt" || die "mount failed"
stdlib=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
ver=${stdlib##*/}
mkdir -p "$mnt/py/lib"
cp -a "$stdlib" "$mnt/py/lib/" || die "cannot copy $stdlib"
TREE=$mnt/py
prog=(env PYTHONHOME="$TREE" "$PY" -S -c "import $MODULES")
where=$(env PYTHONHOME="$TREE" "$PY" -S -c 'import json; print(json.__file__)')
[[ $where == "$TREE"/* ]] || die "json comes from $where, not from the image: the figures would be the machine's"
"${prog[@]}" || die "the program fails: ${prog[*]}"
sync

remount() { bench_remount no_prefetch_block_bitmaps; sync -f "$mnt"; }
sectors() { awk '{ print $3 }' "/sys/block/${loopdev#/dev/}/stat"; }
# spawn CMD... - "WALL_MS CPU_MS" of CMD (output discarded), timed by one
# python process from its spawn to its wait (the child's rusage).
spawn() {
	$SPY -c '
import os, sys, time
fa = [(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0), (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)]
t = time.monotonic()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ, file_actions=fa)
_, st, ru = os.wait4(pid, 0)
print("%.1f %.1f" % ((time.monotonic() - t) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3))
sys.exit(os.waitstatus_to_exitcode(st))' "$@"
}

# rec_around FILE CMD... - start a recording (--pid) to FILE of one run of
# CMD: CMD is started stopped (its pid W_PID), the recorder (REC_PID) waited
# for until it says READY=1 (its listener LISTENER).  SIGCONT W_PID to run.
rec_around() {
	local sock=$tmp/notify.sock i out=$1
	shift
	rm -f "$sock" "$sock.log"
	$SPY -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        log.write(s.recv(4096).decode(errors="replace") + "\n")' "$sock" "$sock.log" &
	LISTENER=$!
	for ((i = 0; i < 1000; i++)); do [ -S "$sock" ] && break; sleep 0.01; done
	bash -c 'kill -STOP $$; exec "$@"' - "$@" >/dev/null 2>&1 &
	W_PID=$!
	for ((i = 0; i < 1000; i++)); do
		[ "$(awk '{ print $3 }' "/proc/$W_PID/stat" 2>/dev/null)" = T ] && break
		sleep 0.01
	done
	NOTIFY_SOCKET=$sock "$BIN/dcache-probe" --record="$out" --pid="$W_PID" "$mnt" 2>"$tmp/rec.err" &
	REC_PID=$!
	for ((i = 0; i < 1000; i++)); do
		grep -qx READY=1 "$sock.log" 2>/dev/null && break
		sleep 0.01
	done
	grep -qx READY=1 "$sock.log" || die "the recorder did not say READY=1: $(cat "$tmp/rec.err")"
}
# rec_end - SIGINT the recorder, wait for it (REC_RC), stop the listener.
rec_end() {
	kill -INT "$REC_PID"
	wait "$REC_PID"
	REC_RC=$?
	kill "$LISTENER" 2>/dev/null
	wait "$LISTENER" 2>/dev/null
}

echo "cpus: $(nproc); kernel $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg); $(vmtouch 2>&1 | grep -m1 -o 'vmtouch v[0-9.]*')"
echo "program: PYTHONHOME=$TREE $PY -S -c \"import $MODULES\""
echo "tree: $(find "$TREE" -type f | wc -l) files, $(find "$TREE" -type d | wc -l) directories, $(du -sh "$TREE" | cut -f1); on $loopdev (direct I/O), read-ahead $(blockdev --getra "$loopdev") sectors"

# The recording: one cold start.
remount
rec_around "$tmp/REC" "${prog[@]}"
kill -CONT "$W_PID"
wait "$W_PID"
rec_end
[ "$REC_RC" -le 1 ] || die "the recording failed ($REC_RC): $(cat "$tmp/rec.err")"
grep . "$tmp/rec.err" >&2
# Names only: the recording without identities and ranges.
$SPY -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "entry":
        for k in ("identity", "ranges", "pages", "data"):
            r.pop(k, None)
    print(json.dumps(r))' "$tmp/REC" >"$tmp/RECN"
# The snapshot: one start, then other files of the tree read (the largest
# the program did not open, as many bytes as the recording holds).
mstat() {
	$SPY -c '
import json, sys
n = c = f = t = 0
rec = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "recording":
        rec = r
    if r.get("type") != "entry":
        continue
    n += 1
    c += r.get("state") == "cached"
    if r.get("ranges"):
        f += 1
        t += sum(x[1] for x in r["ranges"])
print(n, c, f, t, rec.get("events", "-"))' "$1"
}
read -r rn rc rf rbytes revents < <(mstat "$tmp/REC")
remount
"${prog[@]}"
$SPY -c '
import json, os, sys
rec = {json.loads(l)["path"] for l in open(sys.argv[1]) if json.loads(l).get("type") == "entry"}
files = []
for d, _, fs in os.walk(sys.argv[2]):
    for f in fs:
        p = os.path.join(d, f)
        if p not in rec and os.path.isfile(p) and not os.path.islink(p):
            files.append((os.path.getsize(p), p))
want, got = int(sys.argv[3]), 0
for sz, p in sorted(files, reverse=True):
    if got >= want:
        break
    with open(p, "rb") as fh:
        while fh.read(1 << 20):
            pass
    got += sz
print("other: %d KiB read of files the program did not open" % (got // 1024), file=sys.stderr)' \
	"$tmp/REC" "$TREE" "$rbytes"
"$BIN/dcache-probe" -r --ranges --json "$TREE" >"$tmp/SNAP"
read -r sn sc sf sbytes _ < <(mstat "$tmp/SNAP")
echo "REC:  $rn entries ($rc cached), $rf files with ranges, $((rbytes / 1024)) KiB of ranges; $revents events"
echo "SNAP: $sn entries ($sc cached), $sf files with ranges, $((sbytes / 1024)) KiB of ranges"
# strace's view of the same cold start: the paths it opened under the tree.
if command -v strace >/dev/null; then
	remount
	strace -f -qq -e trace=openat,open,execve -e status=successful -o "$tmp/st" "${prog[@]}" >/dev/null 2>&1
	grep -o "\"$mnt/[^\"]*\"" "$tmp/st" | tr -d '"' | sort -u >"$tmp/stlist"
	$SPY -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "entry" and r.get("kind") != "dir":
        print(r["path"])' "$tmp/REC" | sort -u >"$tmp/reclist"
	echo "strace of a cold start opened $(grep -c . "$tmp/stlist") paths under the tree (files and directories); the recording holds $(grep -c . "$tmp/reclist") files; files strace saw opened and the recording lacks: $(comm -13 "$tmp/reclist" <(grep -vxFf <(find "$TREE" -type d) "$tmp/stlist") | wc -l)"
fi

conds=("cold" "warm" "warm --manifest=REC" "warm --manifest=SNAP" "warm -r --pages" "vmtouch -t" "cold, recording")
declare -A rt rk pt pk pc
for ((r = 1; r <= RUNS; r++)); do
	for c in "${conds[@]}"; do
		remount
		s0=$(sectors)
		t=0
		case $c in
		warm) "${prog[@]}" ;;
		*REC) read -r t _ < <(spawn "$BIN/warm" -q --manifest="$tmp/REC") ;;
		*SNAP) read -r t _ < <(spawn "$BIN/warm" -q --manifest="$tmp/SNAP") ;;
		"warm -r --pages") read -r t _ < <(spawn "$BIN/warm" -q -r --pages "$TREE") ;;
		vmtouch*) read -r t _ < <(spawn vmtouch -tq "$TREE") ;;
		esac
		s1=$(sectors)
		[ "$c" = warm ] && s0=$s1
		if [ "$c" = "cold, recording" ]; then
			rec_around "$tmp/REC2" "${prog[@]}"
			s1=$(sectors)
			# The start, timed from SIGCONT to its end (wait).
			t0=$(date +%s%N)
			kill -CONT "$W_PID"
			wait "$W_PID"
			t1=$(date +%s%N)
			s2=$(sectors)
			rec_end
			p=$(((t1 - t0) / 100000))
			p=$(printf '%d.%d' $((p / 10)) $((p % 10)))
			cpu=-
		else
			read -r p cpu < <(spawn "${prog[@]}")
			s2=$(sectors)
		fi
		rt[$c]+=" $t"
		rk[$c]+=" $(((s1 - s0) / 2))"
		pt[$c]+=" $p"
		pk[$c]+=" $(((s2 - s1) / 2))"
		pc[$c]+=" $cpu"
	done
done
# One names-only restore (not measured as a condition): lookups vs data.
remount
s0=$(sectors)
"$BIN/warm" -q --manifest="$tmp/RECN"
s1=$(sectors)
names_kib=$(((s1 - s0) / 2))
read -r p _ < <(spawn "${prog[@]}")
s2=$(sectors)
names_start_kib=$(((s2 - s1) / 2))

minof() { tr -s ' ' '\n' | grep -v '^-*$' | sort -g | head -1; }
wm=$(median <<<"${pt[warm]}")
wmin=$(minof <<<"${pt[warm]}")
echo "$RUNS rounds, load now $(cut -d' ' -f1-3 /proc/loadavg):"
printf '%-22s %10s %11s %9s %9s %9s %9s %7s %7s\n' condition "restore ms" "restore KiB" "start ms" "start min" "start cpu" "start KiB" "/warm" "min/min"
for c in "${conds[@]}"; do
	p=$(median <<<"${pt[$c]}")
	m=$(minof <<<"${pt[$c]}")
	cpu=$(grep -q '[0-9]' <<<"${pc[$c]}" && median <<<"${pc[$c]//-/}" || echo -)
	printf '%-22s %10s %11s %9s %9s %9s %9s %7.2f %7.2f\n' "$c" "$(median <<<"${rt[$c]}")" \
		"$(median <<<"${rk[$c]}")" "$p" "$m" "$cpu" "$(median <<<"${pk[$c]}")" \
		"$(echo "$p / $wm" | bc -l)" "$(echo "$m / $wmin" | bc -l)"
done
rp=$(median <<<"${pt[warm --manifest=REC]}")
rmin=$(minof <<<"${pt[warm --manifest=REC]}")
rk_=$(median <<<"${rk[warm --manifest=REC]}")
pk_=$(median <<<"${pk[warm --manifest=REC]}")
ck=$(median <<<"${pk[cold]}")
printf 'after REC: start %.2fx warm (median; min %.2fx; goal <= 1.2x): %s\n' "$(echo "$rp / $wm" | bc -l)" \
	"$(echo "$rmin / $wmin" | bc -l)" \
	"$( (($(echo "$rp <= 1.2 * $wm" | bc -l))) && echo met || echo "NOT met")"
echo "after REC: the start read $pk_ KiB (goal: no more than the recording holds, $((rbytes / 1024)) KiB of ranges)"
echo "restore of REC read $rk_ KiB = $((rbytes / 1024)) KiB of recorded ranges + lookups (a names-only restore read $names_kib KiB, then the start read $names_start_kib KiB); a cold start reads $ck KiB"
