# shellcheck shell=bash
# lib.sh - what the benches share; sourced by tests/bench/bench-*.sh.

# DCP_BIN_BEFORE=DIR: an older build's bin/ (the same four commands), run
# beside the current build in every bench: each adds "(before)" rows and a
# now/before ratio, measured in the same run under the same load.
# before_bin NAME - DIR/NAME, or nothing without DCP_BIN_BEFORE.
before_bin() {
	[ -n "${DCP_BIN_BEFORE:-}" ] || return 0
	[ -x "$DCP_BIN_BEFORE/$1" ] || { echo "no $1 in DCP_BIN_BEFORE=$DCP_BIN_BEFORE" >&2; exit 2; }
	echo "$DCP_BIN_BEFORE/$1"
}

# median - the median of the numbers on stdin (separated by spaces or
# newlines); for an even count, the mean of the two in the middle.
median() {
	tr -s ' \t' '\n\n' | grep . | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.15g\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_scratch NAME - a scratch directory $tmp and an empty mount point
# $mnt below MNTDIR (default /mnt, else $tmp), both removed at exit, with
# the loop device $loopdev (set it once attached) detached first.
bench_scratch() {
	tmp=$(mktemp -d "/tmp/$1.XXXXXX") || exit 1
	MNTDIR=${MNTDIR:-/mnt}
	[ -d "$MNTDIR" ] && [ -w "$MNTDIR" ] || MNTDIR=$tmp
	mnt=$(mktemp -d "$MNTDIR/$1.XXXXXX") || exit 1
	loopdev=
	trap bench_cleanup EXIT
}

# bench_ms CMD... - run CMD, its output discarded; print its wall time in ms.
bench_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# bench_remount [MOUNT_OPTIONS] - unmount $mnt and mount $loopdev there
# again: every dentry, inode and cached block of the image is dropped
# (DESIGN.md), nothing else on the machine.  io_uring closes a command's
# descriptors after it exits, so a busy unmount is tried again for 3 s; a
# mount that stays busy is said on stderr (that run is not cold).  The
# status is mount's.
# shellcheck disable=SC2120 # the options are optional
bench_remount() {
	local _ name=${0##*/}
	sync -f "$mnt"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		umount "$mnt" 2>/dev/null && break
		sleep 0.3
	done
	mountpoint -q "$mnt" && echo "${name%.sh}: $mnt stays busy: this run is not cold" >&2
	mountpoint -q "$mnt" || mount ${1:+-o "$1"} "$loopdev" "$mnt"
}

bench_cleanup() {
	if [ -n "$loopdev" ]; then
		umount "$mnt" 2>/dev/null
		losetup -d "$loopdev" 2>/dev/null
	fi
	rmdir "$mnt" 2>/dev/null
	rm -rf "$tmp"
}
