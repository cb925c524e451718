#!/bin/bash
# bench-startup.sh - what one call costs as a whole process: cachedopen -q
# PATH against coreutils' stat PATH, N runs of each, interleaved, in
# ROUNDS rounds; the medians of the rounds' per-call times and their ratio.
#
# Usage: tests/bench/bench-startup.sh [PATH]     (default /etc/passwd)
#   N=500          runs of each command per round
#   ROUNDS=7       rounds (each: N cachedopen, N stat, alternating in blocks)
#   CACHEDOPEN=... the binary (default: build/bin/cachedopen)
#
# Target (issue 22): cachedopen -q at most 0.6x stat.  Both are started
# the same way (posix_spawn, output to /dev/null), so the exec and the
# dynamic loader's work are counted, a shell's fork is not.
# Not a test: it gates nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
P=${1:-/etc/passwd}
N=${N:-500}
ROUNDS=${ROUNDS:-7}
CO=${CACHEDOPEN:-$here/../../build/bin/cachedopen}
STAT=$(command -v stat) || { echo "bench-startup: no stat" >&2; exit 1; }

die() { echo "bench-startup: $*" >&2; exit 1; }
[ -x "$CO" ] || die "no cachedopen at $CO (build first, or set CACHEDOPEN=)"
"$CO" -q "$P" || die "$P is not cached (cachedopen -q exits $?)"

# per_call CMD... - microseconds per run of CMD over N runs: "WALL CPU",
# CPU being the child's user+system time.  posix_spawn from one python
# process, so that what is timed is the command, not a shell's fork.
per_call() {
	python3 - "$N" "$@" <<'PY'
import os, sys, time
n, argv = int(sys.argv[1]), sys.argv[2:]
fa = [(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)]
cpu, t0 = 0.0, time.perf_counter_ns()
for _ in range(n):
    _, _, ru = os.wait4(os.posix_spawn(argv[0], argv, os.environ, file_actions=fa), 0)
    cpu += ru.ru_utime + ru.ru_stime
print(round((time.perf_counter_ns() - t0) / n / 1000), round(cpu / n * 1e6))
PY
}

cow=() coc=() stw=() stc=() w=0 c=0
for ((r = 0; r < ROUNDS; r++)); do
	# Alternate which goes first, so that neither always follows the other.
	for who in $( ((r % 2)) && echo st co || echo co st); do
		if [ "$who" = co ]; then
			read -r w c < <(per_call "$CO" -q "$P")
			cow+=("$w") coc+=("$c")
		else
			read -r w c < <(per_call "$STAT" "$P")
			stw+=("$w") stc+=("$c")
		fi
	done
done
m() { echo "$@" | median; }
printf 'cachedopen -q %s: wall %s us, CPU %s us per call (wall by round: %s)\n' \
	"$P" "$(m "${cow[@]}")" "$(m "${coc[@]}")" "${cow[*]}"
printf 'stat %s:          wall %s us, CPU %s us per call (wall by round: %s)\n' \
	"$P" "$(m "${stw[@]}")" "$(m "${stc[@]}")" "${stw[*]}"
awk -v a="$(m "${cow[@]}")" -v b="$(m "${stw[@]}")" -v c="$(m "${coc[@]}")" -v d="$(m "${stc[@]}")" \
	'BEGIN { printf "ratio cachedopen/stat: wall %.2fx, CPU %.2fx (target <= 0.6x)\n", a / b, c / d }'
