#!/bin/bash
# bench-manifest.sh - residency manifests (issues 20 and 40), against what a
# user would do instead.
#
#  1. Restoring from cold: warm --manifest=M over a fixture of COUNT files
#     (tests/lib/manifest.py make: scattered page ranges, whole files,
#     sparse files, files only looked up) and BIG files of 12 MiB with 28%
#     of their pages read in runs of 1 to 64 pages (manifest.py big),
#     against the restorers a user could pick instead, each reading the
#     same files: "mmap32 willneed" and "mmap32 faults" (mmaprestore.c: 32
#     threads map each file and fault in exactly the missing pages of its
#     ranges, each missing run first asked for with MADV_WILLNEED, or one
#     page fault and one 4 KiB read at a time), vmtouch -t (whole files:
#     vmtouch has no per-file ranges) and dd reading the same ranges in
#     manifest order (one dd per range, bs=PAGESIZE).  With BEFORE, the
#     older build restores the manifest it wrote itself ("(before)").
#     The ext4 image is on a loop device with direct I/O, so reads go to
#     the disk and not to the image file's page cache; every run starts
#     from an unmount and mount of it (its dentries, inodes and pages
#     cold), with the device's default read-ahead.  The snapshot itself is
#     taken with read-ahead off, so that its ranges are the scattered ones
#     read.  Each run's bytes read (the loop device's sectors) and the
#     pages resident after it (cachestat over the manifest's files) are
#     printed beside its time.  Targets (issue 40): warm --manifest <=
#     0.8x each mmap32 row's wall, and <= 1.0x the recorded bytes read.
#  2. Taking a snapshot of warm PROBE: dcache-probe -r --pages --ranges
#     --json against dcache-probe -r --pages --json (target <= 1.5x) and
#     vmtouch PROBE, all on warm caches (one unmeasured run of each
#     first); the manifest's bytes per entry.
#
# Usage: tests/bench/bench-manifest.sh [PROBE]   (as root; default /usr)
#   RUNS=5        runs of each command (interleaved), median reported
#   COUNT=3000    files in the fixture of part 1
#   BIG=48        files of 12 MiB in it (0: none)
#   BIN=dir       the built commands (default: build/bin next to this tree)
#   BEFORE=dir    an older build's commands (DCP_BIN_BEFORE too), measured
#                 in the same run: rows "... (before)"
#   PART="1 2"    which parts to run
#
# Not a test: it gates nothing.  It drops no cache but the fixture's own.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
PROBE=${1:-/usr}
RUNS=${RUNS:-5}
COUNT=${COUNT:-3000}
BIG=${BIG:-48}
BEFORE=${BEFORE:-${DCP_BIN_BEFORE:-}}
BIN=${BIN:-$here/../../build/bin}
PART=${PART:-1 2}
MPY="/usr/bin/python3 $here/../lib/manifest.py"
PS=$(getconf PAGESIZE)

die() { echo "bench-manifest: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (it mounts an image)"
if [ ! -x "$BIN/warm" ] || [ ! -x "$BIN/dcache-probe" ]; then
	die "no commands in $BIN (build first, or set BIN=)"
fi
"$BIN/warm" --help | grep -q -- --manifest || die "$BIN/warm has no --manifest"
command -v vmtouch >/dev/null || die "vmtouch is not installed (apt-get install vmtouch)"
if [ -n "$BEFORE" ] && { [ ! -x "$BEFORE/warm" ] || [ ! -x "$BEFORE/dcache-probe" ]; }; then
	die "no commands in BEFORE=$BEFORE"
fi

bench_scratch bench-manifest
${CC:-cc} -O2 -pthread -o "$tmp/mmaprestore" "$here/mmaprestore.c" || die "cannot build mmaprestore"

declare -A times bytes resident

echo "cpus: $(nproc); kernel $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg); $(vmtouch 2>&1 | grep -m1 -o 'vmtouch v[0-9.]*')"

if [[ " $PART " == *" 1 "* ]]; then
	truncate -s $((512 + BIG * 13))M "$tmp/img"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$tmp/img" || die "mkfs failed"
	loopdev=$(losetup -f --show --direct-io=on "$tmp/img") || die "losetup failed"
	# No block bitmaps read in the background after each mount.
	mount -o no_prefetch_block_bitmaps "$loopdev" "$mnt" || die "mount failed"
	ra=$(blockdev --getra "$loopdev")
	$MPY make "$mnt/w" "$tmp/plan" "$COUNT" 20 || die "cannot make the tree"
	[ "$BIG" -gt 0 ] && { $MPY big "$mnt/w" "$tmp/plan" "$BIG" 7 || die "cannot make the large files"; }
	sync
	go_cold() {
		bench_remount no_prefetch_block_bitmaps
		blockdev --setra "${1:-$ra}" "$loopdev"
		sync -f "$mnt"
	}
	go_cold 0
	$MPY workload "$mnt/w" "$tmp/plan"
	"$BIN/dcache-probe" -r --ranges --json "$mnt/w" >"$tmp/M"
	# The older build restores what it writes itself (its own format).
	[ -n "$BEFORE" ] && "$BEFORE/dcache-probe" -r --ranges --json "$mnt/w" >"$tmp/Mb"
	$MPY ranges "$tmp/M" >"$tmp/ranges"
	# vmtouch's list: each file with a recorded range, in manifest order.
	cut -d' ' -f1 "$tmp/ranges" | awk '!seen[$0]++' | tr '\n' '\0' >"$tmp/files0"
	rec=$($MPY check "$tmp/M" | awk '/^files / { print $6 }')
	echo "== 1. restoring a manifest of $(grep -c . "$tmp/ranges") ranges of $(tr -cd '\000' <"$tmp/files0" | wc -c) files ($((rec / 1024)) KiB recorded; tree: $COUNT files, $(du -sh "$mnt/w" | cut -f1)), from cold, read-ahead $ra sectors, on $loopdev (direct I/O) backed by:"
	lsblk -o NAME,TYPE,SIZE,ROTA,SCHED,MODEL "$(findmnt -no SOURCE --target "$tmp")" 2>/dev/null | sed 's/^/  /'
	sectors() { awk '{ print $3 }' "/sys/block/${loopdev#/dev/}/stat"; }
	dd_ranges() {
		local p off len
		while read -r p off len; do
			dd if="$p" of=/dev/null bs="$PS" skip=$((off / PS)) count=$(((len + PS - 1) / PS)) 2>/dev/null
		done <"$tmp/ranges"
	}
	cmds=("warm --manifest" ${BEFORE:+"warm --manifest (before)"} "mmap32 willneed" "mmap32 faults"
	      "vmtouch -t" "dd the ranges")
	for ((r = 1; r <= RUNS; r++)); do
		for c in "${cmds[@]}"; do
			go_cold
			s0=$(sectors)
			case $c in
			"warm --manifest") times[$c]+=" $(bench_ms "$BIN/warm" -q --manifest="$tmp/M")" ;;
			"warm --manifest (before)") times[$c]+=" $(bench_ms "$BEFORE/warm" -q --manifest="$tmp/Mb")" ;;
			"mmap32 willneed") times[$c]+=" $(bench_ms "$tmp/mmaprestore" --willneed "$tmp/ranges")" ;;
			"mmap32 faults") times[$c]+=" $(bench_ms "$tmp/mmaprestore" "$tmp/ranges")" ;;
			vmtouch*) times[$c]+=" $(bench_ms xargs -0 -a "$tmp/files0" vmtouch -tq)" ;;
			dd*) times[$c]+=" $(bench_ms dd_ranges)" ;;
			esac
			s1=$(sectors)
			bytes[$c]+=" $(((s1 - s0) * 512))"
			resident[$c]+=" $($MPY resident "$tmp/M")"
		done
		echo "  run $r done"
	done
	echo "  median over $RUNS runs:"
	printf '  %-26s %9s %12s %12s %14s   %s\n' command "time (ms)" "read (KiB)" "x recorded" "resident pgs" "runs (ms)"
	for c in "${cmds[@]}"; do
		b=$(median <<<"${bytes[$c]}" | cut -d. -f1)
		printf '  %-26s %9s %12s %12s %14s  %s\n' "$c" "$(median <<<"${times[$c]}")" \
			"$((b / 1024))" "$(awk -v b="$b" -v r="$rec" 'BEGIN { printf "%.2f", b / r }')" \
			"$(median <<<"${resident[$c]}")" "${times[$c]}"
	done
	w=$(median <<<"${times[warm --manifest]}")
	wb=$(median <<<"${bytes[warm --manifest]}")
	for c in "${cmds[@]}"; do
		[ "$c" = "warm --manifest" ] && continue
		awk -v c="$c" -v w="$w" -v o="$(median <<<"${times[$c]}")" -v wb="$wb" \
			-v ob="$(median <<<"${bytes[$c]}")" \
			'BEGIN { printf "  warm --manifest / %-26s time %5.2fx, bytes read %5.2fx\n", c ":", w / o, wb / ob }'
	done
	for c in "mmap32 willneed" "mmap32 faults"; do
		awk -v c="$c" -v w="$w" -v o="$(median <<<"${times[$c]}")" \
			'BEGIN { v = sprintf("%.2f", w / o); printf "  target: warm --manifest / %-22s %5.2fx (<= 0.8x): %s\n", c ":", v, v + 0 <= 0.8 ? "met" : "MISSED" }'
	done
	awk -v wb="$wb" -v rec="$rec" \
		'BEGIN { v = sprintf("%.2f", wb / rec); printf "  target: warm --manifest bytes read / recorded: %5.2fx (<= 1.0x): %s\n", v, v + 0 <= 1.0 ? "met" : "MISSED" }'
	umount "$mnt"
	losetup -d "$loopdev"
	loopdev=
fi

if [[ " $PART " == *" 2 "* ]]; then
	echo "== 2. a snapshot of warm $PROBE ($(find "$PROBE" -xdev -type f | wc -l) files)"
	cmds=("dcache-probe -r --pages --ranges --json" ${BEFORE:+"dcache-probe -r --pages --ranges --json (before)"}
	      "dcache-probe -r --pages --json" "vmtouch")
	run2() {
		case $1 in
		*"(before)") bench_ms "$BEFORE/dcache-probe" -r --pages --ranges --json "$PROBE" ;;
		*--ranges*) bench_ms "$BIN/dcache-probe" -r --pages --ranges --json "$PROBE" ;;
		dcache*) bench_ms "$BIN/dcache-probe" -r --pages --json "$PROBE" ;;
		vmtouch) bench_ms vmtouch "$PROBE" ;;
		esac
	}
	for c in "${cmds[@]}"; do run2 "$c" >/dev/null; done # warm everything first
	for ((r = 1; r <= RUNS; r++)); do
		for c in "${cmds[@]}"; do times[$c]+=" $(run2 "$c")"; done
	done
	"$BIN/dcache-probe" -r --pages --ranges --json "$PROBE" 2>/dev/null >"$tmp/M2"
	tail -1 "$tmp/M2" | cut -c1-300 | sed 's/^/  summary: /'
	perentry() { awk -v b="$(wc -c <"$1")" -v n="$(grep -c '"type":"entry"' "$1")" 'BEGIN { printf "%d bytes, %.0f bytes an entry", b, n ? b / n : 0 }'; }
	echo "  manifest: $(perentry "$tmp/M2")"
	if [ -n "$BEFORE" ]; then
		"$BEFORE/dcache-probe" -r --pages --ranges --json "$PROBE" 2>/dev/null >"$tmp/M2"
		echo "  manifest (before): $(perentry "$tmp/M2")"
	fi
	rm -f "$tmp/M2"
	echo "  median over $RUNS runs:"
	printf '  %-50s %9s   %s\n' command "time (ms)" "runs (ms)"
	for c in "${cmds[@]}"; do
		printf '  %-50s %9s  %s\n' "$c" "$(median <<<"${times[$c]}")" "${times[$c]}"
	done
	awk -v r="$(median <<<"${times[dcache-probe -r --pages --ranges --json]}")" \
		-v p="$(median <<<"${times[dcache-probe -r --pages --json]}")" -v v="$(median <<<"${times[vmtouch]}")" \
		'BEGIN { printf "  --ranges: %.2fx --pages (target <= 1.5x), %.2fx vmtouch\n", r / p, r / v }'
fi
