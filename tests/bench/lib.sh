# shellcheck shell=bash
# lib.sh - what the benches share; sourced by tests/bench/bench-*.sh.

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

bench_cleanup() {
	if [ -n "$loopdev" ]; then
		umount "$mnt" 2>/dev/null
		losetup -d "$loopdev" 2>/dev/null
	fi
	rmdir "$mnt" 2>/dev/null
	rm -rf "$tmp"
}
