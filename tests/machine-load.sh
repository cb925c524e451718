#!/bin/bash
# machine-load.sh [-m] [-n] [CMD [ARGS...]] - run CMD while other programs
# work on the machine as they do on any shared one: loops of
# `find / -xdev`, `du -s /tmp` and `ls -R /tmp` (an indexer, an admin,
# another test run looking names up everywhere); with -m a loop that
# mounts and unmounts a tmpfs, and with -n one that makes and tears down a
# mount namespace (a container host: the kernel changes its mount table
# once per mount copied or unmounted).  Any mount or unmount on the
# machine, in any namespace, bumps the kernel's global mount_lock.
# Without CMD, until interrupted.  Exits with CMD's status; the loops end
# with it (or, if this script is killed, after their current command).
#
#   tests/machine-load.sh ./bootstrap test
#   tests/machine-load.sh -m sh -c 'cd build && ctest -R cmd/claims --repeat until-fail:5'
set -u
mounts= namespaces=
while [ $# -gt 0 ]; do
	case $1 in
	-m) mounts=1 ;;
	-n) namespaces=1 ;;
	*) break ;;
	esac
	shift
done
main=$$
pids=()
# A walk stuck on somebody's FUSE mount whose daemon is stopped is ended
# after a minute, and the loop goes on.
loop() {
	(
		c= n=0
		# How often it ran, said when it ends: a load that never ran is
		# no load.
		trap 'kill $c 2>/dev/null; echo "machine-load: $* ran $n times to the end" >&2; exit' TERM
		while kill -0 $main 2>/dev/null; do
			timeout --foreground -k 5 60 "$@" >/dev/null 2>&1 &
			c=$!
			wait $c
			n=$((n + 1))
		done
	) &
	pids+=($!)
}
loop find / -xdev
loop du -s /tmp
loop ls -R /tmp
if [ -n "$mounts$namespaces" ]; then
	mdir=$(mktemp -d) || exit 2
	# In a mount namespace of its own: nothing it mounts is ever seen or
	# left behind, however it is stopped.
	[ -z "$mounts" ] || loop unshare --mount --propagation private sh -c "
		while kill -0 $main 2>/dev/null; do mount -t tmpfs none '$mdir' && umount '$mdir'; done"
	[ -z "$namespaces" ] || loop unshare --mount --propagation private true
fi
stop() {
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	[ -z "$mounts$namespaces" ] || rmdir "$mdir"
}
trap stop EXIT
trap 'exit 130' INT TERM
if [ $# -eq 0 ]; then
	wait
	exit 0
fi
"$@"
