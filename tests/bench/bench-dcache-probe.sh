#!/bin/bash
# bench-dcache-probe.sh - dcache-probe -r -s -x against the tree walkers a
# user would pick instead, on the same warm tree.
#
#   tests/bench/bench-dcache-probe.sh [TREE [RUNS]]      (default: /usr 7)
#
# Needs: find, bfs, fdfind (package fd-find), GNU time (package time).
# DCACHE_PROBE names the binary (default: build/bin/dcache-probe, then PATH);
# DCACHE_PROBE_BEFORE an older one, measured in the same run (a before/after
# row); DCP_BIN_BEFORE=DIR (lib.sh) means DIR/dcache-probe.
# Prints the median wall time and peak RSS of RUNS runs of each command and
# their ratios to GNU find's.  Target: dcache-probe <= 0.8x find's wall time,
# <= 1x its peak RSS, although it makes one openat2 probe per entry.
set -u
tree=${1:-/usr}
runs=${2:-7}
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib.sh"
dp=${DCACHE_PROBE:-$here/build/bin/dcache-probe}
[ -x "$dp" ] || dp=$(command -v dcache-probe) || { echo "dcache-probe not built" >&2; exit 2; }
DCACHE_PROBE_BEFORE=${DCACHE_PROBE_BEFORE:-$(before_bin dcache-probe)}
gtime=/usr/bin/time
[ -x "$gtime" ] || { echo "GNU time missing (apt-get install time)" >&2; exit 2; }

names=() cmds=()
add() { names+=("$1"); cmds+=("$2"); }
add "dcache-probe -r -s -x" "$dp -r -s -x $tree"
add "find -xdev" "find $tree -xdev"
command -v bfs >/dev/null && add "bfs -xdev" "bfs $tree -xdev"
command -v fdfind >/dev/null && add "fdfind -u" "fdfind -u . $tree"
[ -n "${DCACHE_PROBE_BEFORE:-}" ] && add "dcache-probe (before)" "$DCACHE_PROBE_BEFORE -r -s -x $tree"

# Warm-up: stat every entry (so dentries and inodes are cached, as a
# probe needs), then one pass of every command (directory blocks).
du -sx "$tree" >/dev/null 2>&1
for c in "${cmds[@]}"; do $c >/dev/null 2>&1; done


declare -A wall rss cpu walls rsss cpus
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# Interleave the commands run by run, so load changes hit all alike.
cpu_idle() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
read -r idle0 total0 < <(cpu_idle)
for ((r = 0; r < runs; r++)); do
	for i in "${!cmds[@]}"; do
		t0=$(date +%s%N)
		$gtime -f '%M %U %S' -o "$tmp" ${cmds[$i]} >/dev/null 2>&1
		t1=$(date +%s%N)
		walls[$i]+="$(( (t1 - t0) / 1000 )) "
		read -r m u s < <(tail -1 "$tmp")
		rsss[$i]+="$m "
		cpus[$i]+="$(awk -v u="$u" -v s="$s" 'BEGIN { print (u + s) * 1000 }') "
	done
done
read -r idle1 total1 < <(cpu_idle)
for i in "${!cmds[@]}"; do
	wall[$i]=$(tr ' ' '\n' <<<"${walls[$i]}" | grep . | median)
	rss[$i]=$(tr ' ' '\n' <<<"${rsss[$i]}" | grep . | median)
	cpu[$i]=$(tr ' ' '\n' <<<"${cpus[$i]}" | grep . | median)
done

# -s: "PCT%<TAB>CACHED/TOTAL<TAB>TREE" on stdout, as du -s.
entries=$("$dp" -r -s -x "$tree" 2>/dev/null | cut -f2 | cut -d/ -f2 | grep -o '^[0-9]*')
printf 'tree %s, %s entries, %d runs each, median; %s CPUs\n' "$tree" "${entries:-?}" "$runs" "$(nproc)"
printf '%-24s %10s %8s %10s %8s %12s %8s\n' command wall_ms x_find cpu_ms x_find peak_rss_kb x_find
for i in "${!cmds[@]}"; do
	awk -v n="${names[$i]}" -v w="${wall[$i]}" -v fw="${wall[1]}" -v m="${rss[$i]}" -v fm="${rss[1]}" \
		-v c="${cpu[$i]}" -v fc="${cpu[1]}" \
		'BEGIN { printf "%-24s %10.1f %8.2f %10.0f %8.2f %12d %8.2f\n", n, w / 1000, w / fw, c, (fc ? c / fc : 0), m, m / fm }'
done
awk -v i=$((idle1 - idle0)) -v t=$((total1 - total0)) -v n="$(nproc)" 'BEGIN {
	printf "cpu = user + sys of all threads.  Idle CPUs during the runs: %.1f of %d on average\n", (t ? n * i / t : 0), n
	printf "(near 0: other processes competed, and a parallel walker cannot show its speed).\n"
}'
awk -v w="${wall[0]}" -v fw="${wall[1]}" -v m="${rss[0]}" -v fm="${rss[1]}" 'BEGIN {
	ok = (w <= 0.8 * fw && m <= fm)
	printf "target (wall <= 0.8x find, rss <= 1x find): %s\n", ok ? "met" : "MISSED"
}'
# Issue 22: at most 0.8x bfs -xdev (cmds[2] when bfs is installed).
if [ "${names[2]:-}" = "bfs -xdev" ]; then
	awk -v w="${wall[0]}" -v b="${wall[2]}" 'BEGIN {
		printf "dcache-probe / bfs -xdev wall: %.2f (target <= 0.8): %s\n", w / b, (w <= 0.8 * b) ? "met" : "MISSED" }'
fi
for i in "${!names[@]}"; do
	[ "${names[$i]}" = "dcache-probe (before)" ] || continue
	awk -v w="${wall[0]}" -v o="${wall[$i]}" -v c="${cpu[0]}" -v oc="${cpu[$i]}" 'BEGIN {
		printf "dcache-probe now / before: wall %.2f, cpu %.2f\n", w / o, (oc ? c / oc : 0) }'
done
