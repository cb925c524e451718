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
mkdir "$mnt/t" && /usr/bin/python3 "$here/../lib/mktree.py" grid "$mnt/t" "$DIRS" "$FILES" || die "mktree failed"

cold() {
	sync -f "$mnt"
	umount "$mnt" && mount -o loop "$tmp/img" "$mnt" || die "remount failed"
}
shape() { # files: list every directory once, leave the files cold
	cold
	[ "$1" = files ] && find "$mnt/t" -type d >/dev/null
}
ms() { # the wall time of one run, in milliseconds
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

shape cold
total=$("$DP" -r -s "$mnt/t" 2>&1 | grep -o '[0-9]* paths' | grep -o '[0-9]*')
echo "tree: $DIRS dirs x $FILES files ($total paths), $RUNS cold runs each, interleaved; $(nproc) CPUs"
for s in cold files; do
	shape "$s"
	echo "$s:"
	"$DP" -r -s --explain "$mnt/t" 2>&1 | sed 's/^[^:]*: /  /'
done
printf '%-6s %12s %12s %8s\n' shape plain_ms explain_ms ratio
for s in cold files; do
	plain=() expl=() ratios=()
	for ((r = 0; r < RUNS; r++)); do
		shape "$s"
		a=$(ms "$DP" -r -s "$mnt/t")
		shape "$s"
		b=$(ms "$DP" -r -s --explain "$mnt/t")
		plain+=("$a") expl+=("$b")
		ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')")
	done
	pm=$(printf '%s\n' "${plain[@]}" | median)
	em=$(printf '%s\n' "${expl[@]}" | median)
	rm=$(printf '%s\n' "${ratios[@]}" | median)
	printf '%-6s %12s %12s %8s\n' "$s" "$pm" "$em" "$rm"
	awk -v r="$rm" -v s="$s" 'BEGIN { printf "  %s: median ratio of a run pair %s: target (<= 1.5x) %s\n", s, r, r <= 1.5 ? "met" : "MISSED" }'
done
