#!/bin/bash
# bench-warm.sh - cold-cache warming of a tree: warm -r -x against du, find
# and fd, each run from a cold dentry/inode cache; medians and ratios.
#
# Usage: tests/bench/bench-warm.sh [ROOT]            (as root; default /usr)
#   RUNS=3        runs of each command (interleaved), median reported
#   JOBS="32"     warm -j values to measure (e.g. JOBS="8 16 32 64 128")
#   WARM=path     the warm binary (default: build/bin/warm next to this tree)
#   WARM_BEFORE=path  an older warm binary, measured in the same run
#                 (rows "warm-before ..."), for a before/after comparison;
#                 DCP_BIN_BEFORE=DIR (lib.sh) means DIR/warm
#   COLD=drop     drop the whole machine's caches before every run
#                 (sync; echo 3 > /proc/sys/vm/drop_caches): the real thing,
#                 but it disturbs everything else running on the machine;
#   COLD=slab     drop only dentries and inodes (echo 2 > drop_caches): the
#                 metadata blocks stay in the page cache, so a cold walk is
#                 CPU-bound (issue 22's case: warm's CPU against du's)
#   COLD=remount  copy ROOT's tree (names, links, empty files) once into an
#                 ext4 image on a loop device with direct I/O, and make it
#                 cold by unmounting and mounting it again: only the image's
#                 caches are dropped, and reads still go to the disk.
#                 It is mounted under /mnt (MNTDIR=), out of the way of
#                 other programs that walk /tmp and would warm it.
#   COLD=remount-cached  the same image, on a loop device without direct
#                 I/O: its blocks stay in the page cache of the image file,
#                 so a cold walk reads them by memory copies (in the loop
#                 driver's thread) and is CPU-bound, as with COLD=slab, while
#                 nothing outside the image is dropped (slab drops every
#                 dentry of a machine others may be testing on)
#
# Not a test: it gates nothing.  It prints the storage it ran on, because
# the ratios depend on it (the queue depth of the device above all).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ROOT=${1:-/usr}
RUNS=${RUNS:-3}
JOBS=${JOBS:-32}
COLD=${COLD:-drop}
WARM=${WARM:-$here/../../build/bin/warm}
WARM_BEFORE=${WARM_BEFORE:-$(before_bin warm)}

die() { echo "bench-warm: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it drops caches or mounts images)"
[ -x "$WARM" ] || die "no warm binary at $WARM (build first, or set WARM=)"
FD=$(command -v fdfind || command -v fd) || die "fd (fdfind) is not installed"

bench_scratch bench-warm

if [ "$COLD" = remount ] || [ "$COLD" = remount-cached ]; then
	inodes=$(find "$ROOT" -xdev | wc -l)
	echo "copying the tree of $ROOT ($inodes entries, no file data) into an image..."
	truncate -s $(( inodes / 40 + 256 ))M "$tmp/img"
	mkfs.ext4 -q -F -N $(( inodes + inodes / 4 + 1024 )) \
		-E lazy_itable_init=0,lazy_journal_init=0 "$tmp/img" || die "mkfs failed"
	dio=on
	[ "$COLD" = remount ] || dio=off
	loopdev=$(losetup -f --show --direct-io=$dio "$tmp/img") || die "losetup failed"
	mount "$loopdev" "$mnt" || die "mount failed"
	cp -a --attributes-only "$ROOT/." "$mnt/" 2>/dev/null
	TREE=$mnt
	go_cold() { bench_remount; }
elif [ "$COLD" = drop ]; then
	TREE=$ROOT
	go_cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
elif [ "$COLD" = slab ]; then
	TREE=$ROOT
	go_cold() { sync; echo 2 >/proc/sys/vm/drop_caches; }
else
	die "COLD must be drop, slab, remount or remount-cached"
fi

dev=$(findmnt -no SOURCE --target "$TREE")
echo "== storage"
echo "tree: $TREE ($(findmnt -no FSTYPE --target "$TREE") on $dev), $(find "$TREE" -xdev | wc -l) entries"
if [ -n "${dio:-}" ]; then
	echo "image on a loop device, direct I/O $dio, backed by:"
	dev=$(findmnt -no SOURCE --target "$tmp")
fi
lsblk -o NAME,TYPE,SIZE,ROTA,SCHED,RQ-SIZE,MODEL "$dev" 2>/dev/null || lsblk
echo "cpus: $(nproc); cold cache by: $COLD"

declare -A times
cmds=()
add() { cmds+=("$1"); }
for j in $JOBS; do
	add "warm -r -x -q -j $j"
	[ -z "${WARM_BEFORE:-}" ] || add "warm-before -r -x -q -j $j"
done
add "du -sx"
add "find -xdev -printf %s"
add "fdfind -u -S +0b ."

declare -A cpus
run_one() {
	local name=$1 t0 t1 u s
	# shellcheck disable=SC2086 # warm's options are words
	case $name in
	warm-before*) set -- "$WARM_BEFORE" ${name#warm-before } "$TREE" ;;
	warm*)	set -- "$WARM" ${name#warm } "$TREE" ;;
	du*)	set -- du -sx "$TREE" ;;
	find*)	set -- find "$TREE" -xdev -printf %s ;;
	fdfind*) set -- "$FD" -u -S +0b . "$TREE" ;;
	esac
	go_cold
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$tmp/cpu" "$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	times[$name]+=" $(( (t1 - t0) / 1000000 ))"
	read -r u s < <(tail -1 "$tmp/cpu")
	cpus[$name]+=" $(awk -v u="$u" -v s="$s" 'BEGIN { print (u + s) * 1000 }')"
}

echo "== $RUNS cold runs of each, interleaved"
for (( r = 1; r <= RUNS; r++ )); do
	for c in "${cmds[@]}"; do
		run_one "$c"
	done
	echo "run $r done"
done


echo "== median wall time (ms), and ratio of warm's median to each"
du_ms=$(median <<<"${times[du -sx]}")
fd_ms=$(median <<<"${times[fdfind -u -S +0b .]}")
find_ms=$(median <<<"${times[find -xdev -printf %s]}")
du_cpu=$(median <<<"${cpus[du -sx]}")
for c in "${cmds[@]}"; do
	printf '%-32s %7s ms  cpu %7s ms   runs:%s\n' "$c" "$(median <<<"${times[$c]}")" \
		"$(median <<<"${cpus[$c]}")" "${times[$c]}"
done
echo
for j in $JOBS; do
	for v in warm ${WARM_BEFORE:+warm-before}; do
		w=$(median <<<"${times[$v -r -x -q -j $j]}")
		c=$(median <<<"${cpus[$v -r -x -q -j $j]}")
		awk -v w="$w" -v c="$c" -v du="$du_ms" -v ducpu="$du_cpu" -v find="$find_ms" -v fd="$fd_ms" \
			-v j="$j" -v v="$v" 'BEGIN {
			printf "%-11s -j %-4s  %.2fx du   %.2fx find   %.2fx fd   (target: <= 0.25x du, < 1x fd)\n",
				v, j, w / du, w / find, w / fd
			printf "%-11s -j %-4s  cpu %.2fx du'"'"'s (target <= 1); wall %.2fx half du'"'"'s cpu (target <= 1.2)\n",
				v, j, c / ducpu, w / (ducpu / 2) }'
	done
done
