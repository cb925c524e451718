#!/bin/bash
# bench-record.sh - what recording costs the recorded (issue 39): a
# workload that opens, reads and closes COUNT distinct 4 KiB files (about
# one merged event each), warm, on an ext4 loop image, interleaved RUNS
# rounds of:
#   none              the workload alone;
#   --record          dcache-probe --record of the tree, every process;
#   --record --cgroup the workload in a cgroup of its own, recorded by it.
# Then a second workload, REP files opened REPN times each (ignore marks:
# a file recorded once costs nothing more), none against --record.
# Printed: the workload's wall ms (median, and its ratio to none), the
# recorder's CPU ms and peak RSS while it watched (/proc, before SIGINT),
# the events it read, its end phase (from SIGINT to its exit: the manifest
# of COUNT files written), and its CPU and peak RSS over the whole run
# (wait4's rusage).
#
# Usage: tests/bench/bench-record.sh   (as root)
#   RUNS=5  COUNT=100000  REP=1000  REPN=100
#   BIN=dir       the built commands (default: build/bin next to this tree)
#
# Not a test: it gates nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
RUNS=${RUNS:-5}
COUNT=${COUNT:-100000}
REP=${REP:-1000}
REPN=${REPN:-100}
BIN=${BIN:-$here/../../build/bin}
SPY=/usr/bin/python3

die() { echo "bench-record: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it mounts an image, and records)"
"$BIN/dcache-probe" --help | grep -q -- --record || die "$BIN/dcache-probe has no --record"

bench_scratch bench-record
truncate -s 1G "$tmp/img"
mkfs.ext4 -q -F -N $((COUNT + 30000)) -E lazy_itable_init=0,lazy_journal_init=0 "$tmp/img" || die "mkfs failed"
loopdev=$(losetup -f --show "$tmp/img") || die "losetup failed"
mount -o no_prefetch_block_bitmaps "$loopdev" "$mnt" || die "mount failed"
$SPY -c '
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
data = b"x" * 4096
for i in range(n):
    d = os.path.join(root, "t", "d%03d" % (i % 200))
    if i < 200:
        os.makedirs(d)
    with open(os.path.join(d, "f%06d" % i), "wb") as f:
        f.write(data)
for i in range(int(sys.argv[3])):
    d = os.path.join(root, "r")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%04d" % i), "wb") as f:
        f.write(data)' "$mnt" "$COUNT" "$REP"
sync
CGM=$(findmnt -n -t cgroup2 -o TARGET | head -1)
CG=
[ -n "$CGM" ] && CG=$(mktemp -d "$CGM/bench-record.XXXXXX" 2>/dev/null)
trap '[ -n "$CG" ] && rmdir "$CG" 2>/dev/null; bench_cleanup' EXIT

# The workloads: "WALL_MS" of one run (in cgroup CG when given).
workload() {
	$SPY -c '
import os, sys, time
cg = sys.argv[4]
if cg:
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
root, mode = sys.argv[1], sys.argv[2]
if mode == "distinct":
    names = [os.path.join(root, "t", "d%03d" % (i % 200), "f%06d" % i) for i in range(int(sys.argv[3]))]
    rounds = 1
else:
    names = [os.path.join(root, "r", "f%04d" % i) for i in range(int(sys.argv[3]))]
    rounds = int(sys.argv[5])
t = time.monotonic()
for _ in range(rounds):
    for p in names:
        fd = os.open(p, os.O_RDONLY)
        os.read(fd, 4096)
        os.close(fd)
print("%.1f" % ((time.monotonic() - t) * 1e3))' "$mnt" "$@"
}

# recorded ARGS... -- WORKLOAD_ARGS: the workload under a recorder with
# ARGS: "WALL_MS WATCH_CPU_MS WATCH_RSS_KIB EVENTS END_MS CPU_MS RSS_KIB":
# the recorder's CPU and peak RSS while it watched (before SIGINT), and
# over its whole run (the end phase writes the manifest).
recorded() {
	local args=() wl=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	wl=("$@")
	$SPY - "$BIN/dcache-probe" "$tmp/rec.jsonl" "$mnt" "${#args[@]}" "${args[@]}" "${wl[@]}" <<'PY'
import json, os, signal, socket, subprocess, sys, tempfile, time
probe, out, root, na = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
args, wl = sys.argv[5:5 + na], sys.argv[5 + na:]
d = tempfile.mkdtemp()
sock = os.path.join(d, "n")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock)
env = dict(os.environ, NOTIFY_SOCKET=sock)
p = subprocess.Popen([probe, "--record=" + out] + args + [root], env=env, stderr=subprocess.DEVNULL)
s.settimeout(30)
while s.recv(4096) != b"READY=1":
    pass
w = subprocess.run(wl, capture_output=True, text=True, check=True).stdout.split()[0]
time.sleep(0.2)  # the last events read (5 ms after they wake it)
# While watching: its CPU (utime + stime) and peak RSS so far.
f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
wcpu = (int(f[11]) + int(f[12])) * 1e3 / os.sysconf("SC_CLK_TCK")
whwm = [int(l.split()[1]) for l in open("/proc/%d/status" % p.pid) if l.startswith("VmHWM:")][0]
t = time.monotonic()
os.kill(p.pid, signal.SIGINT)
_, st, ru = os.wait4(p.pid, 0)
end = (time.monotonic() - t) * 1e3
ev = [json.loads(l) for l in open(out) if '"recording"' in l][-1]["events"]
print(w, "%.0f" % wcpu, whwm, ev, "%.0f" % end, "%.0f" % ((ru.ru_utime + ru.ru_stime) * 1e3), ru.ru_maxrss)
os.unlink(sock)
os.rmdir(d)
PY
}

echo "cpus: $(nproc); kernel $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tree: $COUNT files of 4 KiB in 200 directories, and $REP more; warm (each read once first)"
workload distinct "$COUNT" "" >/dev/null
workload rep "$REP" "" 1 >/dev/null

conds=("none" "--record")
[ -n "$CG" ] && conds+=("--record --cgroup")
declare -A wall cpu rss evs endt tcpu trss
for ((r = 1; r <= RUNS; r++)); do
	for c in "${conds[@]}"; do
		case $c in
		none) w=$(workload distinct "$COUNT" ""); rest="- - - - - -" ;;
		--record) read -r w rest < <(recorded -- bash -c "$(declare -f workload); SPY=$SPY mnt=$mnt workload distinct $COUNT ''") ;;
		*cgroup) read -r w rest < <(recorded --cgroup="${CG#"$CGM"}" -- bash -c "$(declare -f workload); SPY=$SPY mnt=$mnt workload distinct $COUNT '$CG'") ;;
		esac
		read -r c1 c2 c3 c4 c5 c6 <<<"$rest"
		wall[$c]+=" $w"; cpu[$c]+=" $c1"; rss[$c]+=" $c2"; evs[$c]+=" $c3"; endt[$c]+=" $c4"
		tcpu[$c]+=" $c5"; trss[$c]+=" $c6"
	done
	w=$(workload rep "$REP" "" "$REPN")
	wall[rep_none]+=" $w"
	read -r w c1 c2 c3 c4 c5 c6 < <(recorded -- bash -c "$(declare -f workload); SPY=$SPY mnt=$mnt workload rep $REP '' $REPN")
	wall[rep_rec]+=" $w"; cpu[rep_rec]+=" $c1"; rss[rep_rec]+=" $c2"; evs[rep_rec]+=" $c3"; endt[rep_rec]+=" $c4"
	tcpu[rep_rec]+=" $c5"; trss[rep_rec]+=" $c6"
done
med() { tr -s ' ' '\n' | grep -v '^-*$' | median; }
n0=$(med <<<"${wall[none]}")
r0=$(med <<<"${wall[rep_none]}")
echo "$RUNS rounds, load now $(cut -d' ' -f1-3 /proc/loadavg):"
mib() { local v; v=$(med); [ -n "$v" ] && echo "scale=1; $v / 1024" | bc || echo -; }
printf '%-34s %8s %6s %10s %10s %8s %8s %10s %9s\n' workload "wall ms" ratio "watch cpu" "watch MiB" events "end ms" "total cpu" "peak MiB"
row() {
	local name=$1 c=$2 base=$3 w
	w=$(med <<<"${wall[$c]}")
	printf '%-34s %8s %6.2f %10s %10s %8s %8s %10s %9s\n' "$name" "$w" "$(echo "$w / $base" | bc -l)" \
		"$(med <<<"${cpu[$c]:-}")" "$(mib <<<"${rss[$c]:-}")" "$(med <<<"${evs[$c]:-}")" \
		"$(med <<<"${endt[$c]:-}")" "$(med <<<"${tcpu[$c]:-}")" "$(mib <<<"${trss[$c]:-}")"
}
for c in "${conds[@]}"; do
	row "$COUNT distinct, $c" "$c" "$n0"
done
wall[rep_none_]=${wall[rep_none]}
row "$REP x $REPN, none" rep_none_ "$r0"
row "$REP x $REPN, --record" rep_rec "$r0"
