#!/bin/bash
# bench-deep-chain.sh - walks down deep chains: cost must grow linearly
# with depth, like find's and du's.
#
#   tests/bench/bench-deep-chain.sh [RUNS [DEPTH...]]    (default: 5  1000 4000 16000)
#
# Each chain has two sibling directories per level (so a walker must keep
# or reopen every level's descriptor) and lives on tmpfs (/dev/shm, or
# $TMPDIR).  Prints the median wall time of RUNS runs of dcache-probe -r -s,
# the same under ulimit -n 12, warm -r, find and du -s, their ratios to
# find's, and how each grows from one depth to the next (4x the depth
# should cost about 4x, not 16x).
# DCACHE_PROBE and WARM name the binaries (default: build/bin/..., then PATH).
set -u
runs=${1:-5}
shift
depths=("$@")
[ ${#depths[@]} -gt 0 ] || depths=(1000 4000 16000)
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib.sh"
dp=${DCACHE_PROBE:-$here/build/bin/dcache-probe}
[ -x "$dp" ] || dp=$(command -v dcache-probe) || { echo "dcache-probe not built" >&2; exit 2; }
wm=${WARM:-$here/build/bin/warm}
[ -x "$wm" ] || wm=$(command -v warm) || { echo "warm not built" >&2; exit 2; }
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
dir=$(mktemp -d "$base/deepchain.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT

names=("dcache-probe -r -s" "dcache-probe -r -s, ulimit -n 12" "warm -r" "find" "du -s")
run_cmd() { # INDEX TREE
	case $1 in
	0) "$dp" -r -s "$2" ;;
	1) bash -c 'ulimit -n 12 && exec "$@"' - "$dp" -r -s "$2" ;;
	2) "$wm" -r "$2" ;;
	3) find "$2" ;;
	4) du -s "$2" ;;
	esac >/dev/null 2>&1
}

declare -A med
for d in "${depths[@]}"; do
	mkdir "$dir/c$d" && python3 "$here/tests/lib/mktree.py" chain "$dir/c$d" "$d" 1 >/dev/null ||
		{ echo "cannot build the chain" >&2; exit 2; }
	for i in "${!names[@]}"; do
		samples=
		run_cmd "$i" "$dir/c$d" || echo "${names[$i]}: exit $? at depth $d" >&2 # warm-up
		for ((r = 0; r < runs; r++)); do
			t0=$(date +%s%N)
			run_cmd "$i" "$dir/c$d"
			t1=$(date +%s%N)
			samples+="$(((t1 - t0) / 1000)) "
		done
		med[$d,$i]=$(tr ' ' '\n' <<<"$samples" | grep . | median)
	done
done

printf 'deep chains (2 sibling directories per level) on %s, %d runs each, median wall ms; %s CPUs\n' \
	"$(stat -f -c %T "$dir")" "$runs" "$(nproc)"
printf '%-34s' command
for d in "${depths[@]}"; do printf ' %9s %6s' "${d}lv" x_find; done
printf ' %s\n' "growth per step (depth ratio $(awk -v a="${depths[0]}" -v b="${depths[1]:-${depths[0]}}" 'BEGIN { printf "%.0fx", b / a }'))"
for i in "${!names[@]}"; do
	printf '%-34s' "${names[$i]}"
	for d in "${depths[@]}"; do
		awk -v w="${med[$d,$i]}" -v f="${med[$d,3]}" 'BEGIN { printf " %9.1f %6.2f", w / 1000, w / f }'
	done
	prev=
	for d in "${depths[@]}"; do
		[ -n "$prev" ] && awk -v a="${med[$prev,$i]}" -v b="${med[$d,$i]}" 'BEGIN { printf " %.1fx", b / a }'
		prev=$d
	done
	echo
done
