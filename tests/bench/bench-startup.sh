#!/bin/bash
# bench-startup.sh - what one call costs as a whole process: cachedopen -q
# PATH against coreutils' stat PATH, N runs of each, interleaved, in
# ROUNDS rounds; the medians of the rounds' per-call times and their ratio.
#
# Usage: tests/bench/bench-startup.sh [PATH]     (default /etc/passwd)
#   N=500          runs of each command per round
#   ROUNDS=7       rounds (each: N runs of every command, in blocks whose
#                  order turns around every round)
#   CACHEDOPEN=... the binary (default: build/bin/cachedopen); several,
#                  separated by spaces, to compare builds in one run
#                  (e.g. -DDCP_LINK_COMMANDS=shared and static-pie);
#                  DCP_BIN_BEFORE=DIR (lib.sh) adds DIR/cachedopen
#   FLOOR=1        also time two programs whose main() returns at once, one
#                  dynamically linked and one static PIE (built here with
#                  cc): what any C program costs to start on this machine
#
# The floor rows matter in a VM: glibc's start-up (init_cpu_features and
# its cache-size queries) runs 68 CPUID instructions in every process, each
# a trap to the hypervisor (6.3 us apiece on the 2-core test VM: 430 us of
# the 550-700 us an empty main costs), which no linking choice avoids.
#
# Target (issue 22): cachedopen -q at most 0.6x stat.  All are started the
# same way (posix_spawn, output to /dev/null), so the exec and the dynamic
# loader's work are counted, a shell's fork is not.  CPU is the child's
# user+system time (wait4's rusage), steadier than wall on a shared machine.
# Not a test: it gates nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
P=${1:-/etc/passwd}
N=${N:-500}
ROUNDS=${ROUNDS:-7}
read -r -a COS <<<"${CACHEDOPEN:-$here/../../build/bin/cachedopen} $(before_bin cachedopen)"
STAT=$(command -v stat) || { echo "bench-startup: no stat" >&2; exit 1; }

die() { echo "bench-startup: $*" >&2; exit 1; }
cmds=()
for co in "${COS[@]}"; do
	[ -x "$co" ] || die "no cachedopen at $co (build first, or set CACHEDOPEN=)"
	"$co" -q "$P" || die "$P is not cached ($co -q exits $?)"
	cmds+=("$co -q $P")
done
if [ "${FLOOR:-0}" = 1 ]; then
	bench_scratch bench-startup
	echo 'int main(void) { return 0; }' >"$tmp/empty.c"
	cc -O2 -o "$tmp/empty-dynamic" "$tmp/empty.c" || die "cc failed"
	cc -O2 -static-pie -o "$tmp/empty-static-pie" "$tmp/empty.c" || die "cc -static-pie failed"
	cmds+=("$tmp/empty-dynamic" "$tmp/empty-static-pie")
fi
cmds+=("$STAT $P")

# One python process spawns every command, N at a time in turn, so that
# what is timed is the command, not a shell's fork; the last is stat,
# every ratio is against it.  Paths with spaces are not supported.
python3 - "$N" "$ROUNDS" "${cmds[@]}" <<'PY'
import os, statistics, sys, time
n, rounds, cmds = int(sys.argv[1]), int(sys.argv[2]), [c.split() for c in sys.argv[3:]]
fa = [(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)]
wall, cpu = [[] for _ in cmds], [[] for _ in cmds]
for r in range(rounds):
    order = list(range(len(cmds)))[:: -1 if r % 2 else 1]
    for i in order:
        c, t0 = 0.0, time.perf_counter_ns()
        for _ in range(n):
            _, _, ru = os.wait4(os.posix_spawn(cmds[i][0], cmds[i], os.environ, file_actions=fa), 0)
            c += ru.ru_utime + ru.ru_stime
        wall[i].append((time.perf_counter_ns() - t0) / n / 1000)
        cpu[i].append(c / n * 1e6)
sw, sc = statistics.median(wall[-1]), statistics.median(cpu[-1])
for c, w, u in zip(cmds, wall, cpu):
    mw, mc = statistics.median(w), statistics.median(u)
    print(f"{' '.join(c)}: wall {mw:.0f} us, CPU {mc:.0f} us per call;"
          f" /stat: wall {mw / sw:.2f}x, CPU {mc / sc:.2f}x"
          f" (wall by round: {' '.join(str(round(x)) for x in w)})")
print("target: cachedopen -q at most 0.6x stat")
PY
