#!/bin/bash
# bench-explain.sh - what --explain costs a cold walk: dcache-probe -r -s
# with and without --explain over the same tree of about 100k entries,
# each run from a cold cache; medians and the ratio within one run.
#
# Usage: tests/bench/bench-explain.sh [DIRS [FILES]]    (as root)
#   DIRS x FILES empty files (default 1000 x 100) in an ext4 image on a
#   loop device, made cold by unmounting and mounting it again.
#   RUNS=5               runs of each command (interleaved), median reported
#   DCACHE_PROBE=path    the binary (default: build/bin/dcache-probe)
#
# Two shapes of cold: "cold" (freshly mounted: every directory below the
# root misses, the entries below them are explained from what the walk
# knows) and "files" (directories listed once, files cold: every file is a
# miss of its own in a warm directory).  Target: --explain <= 1.5x.
# Not a test: it gates nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
DIRS=${1:-1000}
FILES=${2:-100}
RUNS=${RUNS:-5}
DP=${DCACHE_PROBE:-$here/../../build/bin/dcache-probe}

die() { echo "bench-explain: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it mounts an image)"
[ -x "$DP" ] || die "no dcache-probe at $DP (build first, or set DCACHE_PROBE=)"

tmp=$(mktemp -d /tmp/bench-explain.XXXXXX) || exit 1
mnt=$tmp/mnt
cleanup() {
	mountpoint -q "$mnt" && umount "$mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$mnt"
entries=$((DIRS * FILES + DIRS))
truncate -s $((entries / 40 + 64))M "$tmp/img"
mkfs.ext4 -q -F -N $((entries + 4096)) -E lazy_itable_init=0,lazy_journal_init=0 \
	"$tmp/img" || die "mkfs failed"
mount -o loop "$tmp/img" "$mnt" || die "mount failed"
mkdir "$mnt/t" && /usr/bin/python3 "$here/../lib/mktree.py" grid "$mnt/t" "$DIRS" "$FILES" >/dev/null ||
	die "mktree failed"

cold() {
	sync -f "$mnt"
	umount "$mnt" && mount -o loop "$tmp/img" "$mnt" || die "remount failed"
}
shape() { # files: list every directory once, leave the files cold
	cold
	[ "$1" = files ] && find "$mnt/t" -type d >/dev/null
}
ms() { # "WALL_MS CPU_MS" of one run (CPU: user + system, all threads)
	local TIMEFORMAT='%3R %3U %3S' t
	t=$({ time "$@" >/dev/null 2>&1; } 2>&1)
	awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }' <<<"$t"
}

shape cold
total=$("$DP" -r "$mnt/t" 2>&1 >/dev/null | grep -o '[0-9]* paths' | grep -o '[0-9]*')
echo "tree: $DIRS dirs x $FILES files ($total paths), $RUNS cold runs each, interleaved; $(nproc) CPUs"
for s in cold files; do
	shape "$s"
	echo "$s:"
	"$DP" -r --explain "$mnt/t" 2>&1 >/dev/null | sed 's/^[^:]*: /  /'
done
printf '%-6s %9s %11s %7s %8s %10s %7s\n' shape wall_ms +explain ratio cpu_ms +explain ratio
for s in cold files; do
	pw=() ew=() pc=() ec=() rw=() rc=()
	for ((r = 0; r < RUNS; r++)); do
		# Alternate which goes first, so a drift in load hits both alike.
		if ((r % 2)); then
			shape "$s"; read -r bw bc < <(ms "$DP" -r -s --explain "$mnt/t")
			shape "$s"; read -r aw ac < <(ms "$DP" -r -s "$mnt/t")
		else
			shape "$s"; read -r aw ac < <(ms "$DP" -r -s "$mnt/t")
			shape "$s"; read -r bw bc < <(ms "$DP" -r -s --explain "$mnt/t")
		fi
		pw+=("$aw") ew+=("$bw") pc+=("$ac") ec+=("$bc")
		rw+=("$(awk -v a="$aw" -v b="$bw" 'BEGIN { printf "%.3f", b / a }')")
		rc+=("$(awk -v a="$ac" -v b="$bc" 'BEGIN { printf "%.3f", (a ? b / a : 1) }')")
	done
	printf '%-6s %9s %11s %7s %8s %10s %7s\n' "$s" \
		"$(printf '%s\n' "${pw[@]}" | median)" "$(printf '%s\n' "${ew[@]}" | median)" \
		"$(printf '%s\n' "${rw[@]}" | median)" \
		"$(printf '%s\n' "${pc[@]}" | median)" "$(printf '%s\n' "${ec[@]}" | median)" \
		"$(printf '%s\n' "${rc[@]}" | median)"
	echo "  wall ratios of each run pair: ${rw[*]}"
	awk -v r="$(printf '%s\n' "${rw[@]}" | median)" -v s="$s" \
		'BEGIN { printf "  %s: median wall ratio %s: target (<= 1.5x) %s\n", s, r, r <= 1.5 ? "met" : "MISSED" }'
done
