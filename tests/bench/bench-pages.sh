#!/bin/bash
# bench-pages.sh - file data in the page cache, against the tools users know.
#
#  1. Warming a cold tree's data: warm -r --pages (each --pages-method)
#     against vmtouch -t and cat of every file.  ROOT's tree, data included,
#     is copied once into an ext4 image on a loop device with direct I/O
#     (so reads go to the disk, not to the image file's own cache); before
#     every run the image is unmounted, the machine's caches are dropped
#     (sync; echo 3 > /proc/sys/vm/drop_caches) and it is mounted again.
#     Target: warm --pages <= 0.5x vmtouch -t.
#  2. Measuring a warm tree's residency: dcache-probe -r --pages -s PROBE
#     against vmtouch PROBE and find PROBE -type f -exec fincore {} +, all
#     on warm caches (one unmeasured run of each first).
#     Target: dcache-probe <= 0.5x vmtouch.
#
# Usage: tests/bench/bench-pages.sh [ROOT [PROBE]]   (as root; default
#        /usr/share and /usr)
#   RUNS=5          runs of each command (interleaved), median reported
#   METHODS="willneed readahead read uring"   warm --pages-method values
#   BIN=dir         the built commands (default: build/bin next to this tree)
#   PART="1 2"      which parts to run
#   DCP_BIN_BEFORE=dir  an older build's commands (lib.sh): part 2 adds a
#                   "(before)" row and the now/before ratio
#
# Not a test: it gates nothing.  It drops the whole machine's caches, which
# disturbs everything else running on it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ROOT=${1:-/usr/share}
PROBE=${2:-/usr}
RUNS=${RUNS:-5}
METHODS=${METHODS:-willneed readahead read uring}
BIN=${BIN:-$here/../../build/bin}
PART=${PART:-1 2}

die() { echo "bench-pages: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it drops caches and mounts an image)"
[ -x "$BIN/warm" ] && [ -x "$BIN/dcache-probe" ] || die "no commands in $BIN (build first, or set BIN=)"
command -v vmtouch >/dev/null || die "vmtouch is not installed (apt-get install vmtouch)"
command -v fincore >/dev/null || die "fincore (util-linux) is not installed"

bench_scratch bench-pages


declare -A times

echo "cpus: $(nproc); kernel $(uname -r); $(vmtouch 2>&1 | grep -m1 -o 'vmtouch v[0-9.]*'); $(fincore --version)"

if [[ " $PART " == *" 1 "* ]]; then
	kb=$(du -sk -x "$ROOT" | cut -f1)
	echo "== 1. warming the data of a cold copy of $ROOT ($((kb / 1024)) MiB)"
	truncate -s $(( kb / 1024 * 13 / 10 + 512 ))M "$tmp/img"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$tmp/img" || die "mkfs failed"
	loopdev=$(losetup -f --show --direct-io=on "$tmp/img") || die "losetup failed"
	mount "$loopdev" "$mnt" || die "mount failed"
	cp -a "$ROOT/." "$mnt/" 2>/dev/null
	sync
	echo "tree: $(find "$mnt" -type f | wc -l) files, $(du -sh "$mnt" | cut -f1), on $loopdev (direct I/O) backed by:"
	lsblk -o NAME,TYPE,SIZE,ROTA,SCHED,RQ-SIZE,MODEL "$(findmnt -no SOURCE --target "$tmp")" 2>/dev/null
	go_cold() {
		bench_remount
		sync
		echo 3 >/proc/sys/vm/drop_caches
	}
	cmds=()
	for m in $METHODS; do cmds+=("warm --pages-method=$m"); done
	cmds+=("vmtouch -t" "cat every file")
	for (( r = 1; r <= RUNS; r++ )); do
		for c in "${cmds[@]}"; do
			go_cold
			case $c in
			warm*)	 times[$c]+=" $(bench_ms "$BIN/warm" -r -q --pages "${c#warm }" "$mnt")" ;;
			vmtouch*) times[$c]+=" $(bench_ms vmtouch -tq "$mnt")" ;;
			cat*)	 times[$c]+=" $(bench_ms sh -c 'find "$1" -type f -exec cat {} + >/dev/null' sh "$mnt")" ;;
			esac
		done
		echo "run $r done"
	done
	# Is it all in?  (The last run of each command was cat; warm once more.)
	go_cold
	"$BIN/warm" -r -q --pages "$mnt"
	echo "after warm --pages: $(find "$mnt" -type f -print0 | xargs -0 fincore -n -r -b -o PAGES,SIZE |
		awk '{ r += $1; t += int(($2 + 4095) / 4096) } END { printf "%d/%d pages resident per fincore", r, t }')"
	echo "median wall time (ms):"
	for c in "${cmds[@]}"; do
		printf '  %-30s %7s ms   runs:%s\n' "$c" "$(median <<<"${times[$c]}")" "${times[$c]}"
	done
	vt=$(median <<<"${times[vmtouch -t]}")
	ct=$(median <<<"${times[cat every file]}")
	for m in $METHODS; do
		awk -v w="$(median <<<"${times[warm --pages-method=$m]}")" -v vt="$vt" -v ct="$ct" -v m="$m" \
			'BEGIN { printf "  warm --pages (%s): %.2fx vmtouch -t, %.2fx cat   (target <= 0.5x vmtouch)\n", m, w / vt, w / ct }'
	done
	umount "$mnt"
	losetup -d "$loopdev"
	loopdev=
fi

if [[ " $PART " == *" 2 "* ]]; then
	echo "== 2. measuring the residency of warm $PROBE ($(find "$PROBE" -xdev -type f | wc -l) files)"
	cmds=("dcache-probe -r --pages -s" "vmtouch" "find -exec fincore")
	BEFORE_DP=$(before_bin dcache-probe)
	[ -z "$BEFORE_DP" ] || cmds+=("dcache-probe -r --pages -s (before)")
	run2() {
		case $1 in
		*"(before)") bench_ms "$BEFORE_DP" -r --pages -s "$PROBE" ;;
		dcache*) bench_ms "$BIN/dcache-probe" -r --pages -s "$PROBE" ;;
		vmtouch) bench_ms vmtouch "$PROBE" ;;
		find*)	 bench_ms find "$PROBE" -type f -exec fincore {} + ;;
		esac
	}
	for c in "${cmds[@]}"; do run2 "$c" >/dev/null; done # warm everything first
	for (( r = 1; r <= RUNS; r++ )); do
		for c in "${cmds[@]}"; do times[$c]+=" $(run2 "$c")"; done
	done
	"$BIN/dcache-probe" -r --pages -s "$PROBE" 2>&1 | sed 's/^/  /'
	echo "median wall time (ms):"
	for c in "${cmds[@]}"; do
		printf '  %-30s %7s ms   runs:%s\n' "$c" "$(median <<<"${times[$c]}")" "${times[$c]}"
	done
	awk -v d="$(median <<<"${times[dcache-probe -r --pages -s]}")" \
		-v v="$(median <<<"${times[vmtouch]}")" -v f="$(median <<<"${times[find -exec fincore]}")" \
		'BEGIN { printf "  dcache-probe -r --pages -s: %.2fx vmtouch, %.2fx find+fincore   (target <= 0.5x vmtouch)\n", d / v, d / f }'
	[ -z "$BEFORE_DP" ] || awk -v d="$(median <<<"${times[dcache-probe -r --pages -s]}")" \
		-v b="$(median <<<"${times[dcache-probe -r --pages -s (before)]}")" \
		'BEGIN { printf "  dcache-probe -r --pages -s now / before: %.2f\n", d / b }'
fi
