#!/bin/bash
# Isolation: no other program on the machine can look a name up in a
# suite's fixtures (tests/lib/fixture.sh).  Every suite runs in a private
# mount namespace of its own; seen from the namespace the suite was started
# in ("outside": an indexer, an admin's `find /` or `du /tmp`, another test
# run), its FIXTURE_ROOT is an empty directory of mode 0700, nothing of the
# suite is mounted, and a lookup there cannot warm a fixture.  Each check
# has its control inside the namespace (or through the one door left), so
# that it can fail.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

OPROBE=${DCP_BUILD:?}/tests/oprobe
OUTSIDE=/proc/$DCP_FIXTURE_OUTSIDE/ns/mnt
# outside CMD... - fixture_outside: in the namespace the suite was started in.
outside() { fixture_outside "$@"; }

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/t/a/b" "$MNT/t/c"
	touch "$MNT/t/a/b/f" "$MNT/t/a/g" "$MNT/t/c/h"
	chmod -R a+rX "$MNT/t"
	find "$MNT/t" >"$SHUNIT_TMPDIR/paths"
	chmod 0644 "$SHUNIT_TMPDIR/paths"
	chmod 0755 "$SHUNIT_TMPDIR"
}

oneTimeTearDown() {
	fixture_cleanup
}

setUp() {
	fixture_cold_busy "$MNT" || fail "cannot remount the fixture"
}

# The prober's states of every path of the tree (listed before: the prober
# never walks).
states() { "$OPROBE" - <"$SHUNIT_TMPDIR/paths"; }

test_the_suite_runs_in_a_namespace_of_its_own() {
	assertFalse "the suite's namespace is not the one it was started in" \
		"[ /proc/self/ns/mnt -ef '$OUTSIDE' ]"
	assertEquals "the namespace's mounts propagate nowhere" "private" \
		"$(findmnt -n -o PROPAGATION "$MNT")"
	assertEquals "the fixture root is the suite's own tmpfs" "tmpfs" \
		"$(findmnt -n -o FSTYPE "$FIXTURE_ROOT")"
	assertEquals "TMPDIR is in it" "$FIXTURE_ROOT/tmp" "$TMPDIR"
	assertEquals "and shunit2's directory" "$TMPDIR/" "${SHUNIT_TMPDIR%%shunit.*}"
}

test_nothing_of_the_suite_is_mounted_outside() {
	local inside out
	inside=$(findmnt -rn -o TARGET | grep -cF "$FIXTURE_ROOT")
	assertTrue "control: inside, the tmpfs and the fixture are in the mount table ($inside)" \
		"[ $inside -ge 2 ]"
	out=$(outside findmnt -rn -o TARGET | grep -F "$FIXTURE_ROOT")
	assertEquals "outside, nothing below FIXTURE_ROOT in the mount table" "" "$out"
	out=$(outside cat /proc/self/mountinfo | grep -cF "$FIXTURE_ROOT")
	assertEquals "nor in mountinfo" 0 "$out"
}

test_fixture_root_is_an_empty_private_directory_outside() {
	assertEquals "inside: the images, the mount point and TMPDIR" \
		"$(basename "$MNT") $(basename "$MNT").img tmp" "$(ls "$FIXTURE_ROOT" | sort | xargs)"
	assertEquals "outside: find sees the directory alone" "$FIXTURE_ROOT" \
		"$(outside find "$FIXTURE_ROOT" 2>&1)"
	assertEquals "outside: owned by root, mode 0700" "root 700 directory" \
		"$(outside stat -c '%U %a %F' "$FIXTURE_ROOT")"
	assertFalse "outside: no image file" "outside test -e '$MNT.img'"
	assertFalse "outside: no mount point" "outside test -e '$MNT'"
	assertFalse "outside: no shunit2 directory" "outside test -e '$SHUNIT_TMPDIR'"
	assertEquals "outside: du finds 4 KiB at most" 1 \
		"$(outside du -s "$FIXTURE_ROOT" | awk '{ print ($1 <= 4) }')"
}

# A lookup outside reaches nothing of the fixture: the prober's states of
# every path are the same after every walk an indexer or an admin makes,
# as root and as nobody.  Controls: the same lookups through
# /proc/PID/root (a process of the suite's root, in its namespace: the one
# door left, for root only) and inside warm the tree.
test_a_lookup_outside_cannot_warm_the_fixture() {
	local before after
	stat "$MNT/t" >/dev/null # t cached, everything below cold
	before=$(states)
	assertContains "cold below t" "$before" "miss $MNT/t/a/b/f"
	outside stat "$MNT/t/a/b/f" "$MNT/t/c/h" >/dev/null 2>&1
	outside ls -laR "$FIXTURE_ROOT" >/dev/null 2>&1
	outside find "$FIXTURE_ROOT" "$MNT/t" "$MNT/t/a/b" -xdev >/dev/null 2>&1
	outside du -s "$FIXTURE_ROOT" "$MNT/t" >/dev/null 2>&1
	outside setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		ls -R "$FIXTURE_ROOT" "$MNT/t" "$MNT/t/a" >/dev/null 2>&1
	outside setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		stat "$MNT/t/a/g" "$MNT/t/a/b/f" >/dev/null 2>&1
	after=$(states)
	assertEquals "outside lookups: the prober's states as before" "$before" "$after"
	# Control: a process outside that could see the tree warms it.
	outside stat "/proc/$$/root$MNT/t/a/b/f" >/dev/null
	assertContains "control: through /proc/PID/root, from outside" "$(states)" "cached $MNT/t/a/b/f"
	fixture_cold_busy "$MNT"
	stat "$MNT/t" >/dev/null
	assertEquals "cold again" "$before" "$(states)"
	ls -laR "$MNT/t" >/dev/null
	assertContains "control: inside, ls -laR warms it" "$(states)" "cached $MNT/t/c/h"
}

# ns_of PID - 0 when every task of PID (its threads and io_uring workers
# too) is in the suite's mount namespace.
ns_of() {
	local t n=0
	for t in /proc/"$1"/task/*; do
		[ "$t/ns/mnt" -ef /proc/self/ns/mnt ] || return 1
		n=$((n + 1))
	done
	[ $n -gt 0 ]
}

# Every process of the suite is inside: as nobody, a FUSE daemon (bindfs,
# which forks into the background), io_uring's workers.
test_every_process_of_the_suite_is_inside() {
	local fuse pid fifo ring workers
	as_nobody sleep 30 &
	pid=$(for _ in $(seq 100); do pgrep -u 65534 -P $! && break; sleep 0.1; done)
	assertNotNull "as_nobody's process" "$pid"
	assertTrue "as_nobody's process" "ns_of $pid"
	kill $pid
	wait
	if command -v bindfs >/dev/null; then
		fuse=$(mktemp -d "$FIXTURE_ROOT/fuse.XXXXXX")
		bindfs "$MNT/t" "$fuse" || fail "bindfs"
		pid=$(fixture_pgrep "bindfs $MNT/t $fuse")
		assertNotNull "the bindfs daemon" "$pid"
		[ -z "$pid" ] || assertTrue "the bindfs daemon" "ns_of $pid"
		assertEquals "outside, no FUSE mount there" "" "$(outside findmnt -rn -o TARGET "$fuse")"
		umount "$fuse"
	fi
	# A cold FIFO nobody writes: uring-open's open is punted to an io-wq
	# worker, which blocks.
	fifo=$MNT/fifo
	mkfifo "$fifo"
	fixture_cold_busy "$MNT"
	uring-open --flags rdonly "$fifo" >/dev/null 2>&1 &
	ring=$!
	workers=
	for _ in $(seq 100); do
		workers=$(grep -l '^iou-wrk' /proc/$ring/task/*/comm 2>/dev/null)
		[ -n "$workers" ] && break
		sleep 0.1
	done
	assertNotNull "an io-wq worker blocks on the FIFO" "$workers"
	assertTrue "uring-open and its io-wq workers" "ns_of $ring"
	kill "$ring"
	wait "$ring" 2>/dev/null
	rm -f "$fifo"
}

# A suite that ends leaves nothing behind, however it ends: its mounts die
# with its namespace, a process it left running is ended (a stopped FUSE
# daemon included), its loop devices are detached and its directory is
# removed.  The suite here is killed (SIGKILL) with its fixture mounted,
# a bindfs daemon stopped, a shell in the background.
test_a_suite_killed_leaves_nothing_behind() {
	local s=$SHUNIT_TMPDIR/leaky.sh out rc root img loop sleeper daemon= i
	cat >"$s" <<'EOF'
. "$DCP_TESTS/lib/fixture.sh"
fixture_require
m=$(fixture_new 16) || exit 2
sleep 300 &
echo "$FIXTURE_ROOT $m.img $(findmnt -n -o SOURCE "$m") $!"
if command -v bindfs >/dev/null; then
	mkdir "$FIXTURE_ROOT/fz" && bindfs "$m" "$FIXTURE_ROOT/fz" && ls "$FIXTURE_ROOT/fz" >/dev/null &&
		d=$(fixture_pgrep "bindfs $m $FIXTURE_ROOT/fz") && echo "$d" && kill -STOP "$d"
fi
kill -KILL $$
EOF
	out=$(env -u DCP_FIXTURE_STAGE -u FIXTURE_ROOT -u DCP_FIXTURE_OUTSIDE \
		timeout 120 bash "$s" 2>"$SHUNIT_TMPDIR/leaky.err")
	rc=$?
	assertEquals "the killed suite's exit status" 137 $rc
	{
		read -r root img loop sleeper
		read -r daemon
	} <<<"$out"
	assertNotNull "it made a fixture ($(cat "$SHUNIT_TMPDIR/leaky.err"))" "$loop"
	assertContains "what it left running is said" "$(cat "$SHUNIT_TMPDIR/leaky.err")" "$sleeper (sleep)"
	assertTrue "its background job is ended" "fixture_dead $sleeper"
	if command -v bindfs >/dev/null; then
		assertNotNull "its bindfs daemon" "$daemon"
		assertTrue "its bindfs daemon, stopped, is ended" "fixture_dead $daemon"
	fi
	assertFalse "its directory is removed" "[ -e '$root' ]"
	# The kernel releases a detached mount's loop device asynchronously
	# (and another program may take it again at once).
	for ((i = 0; i < 100; i++)); do
		backs "$loop" "$img" || break
		sleep 0.1
	done
	assertFalse "its loop device $loop is detached" "backs '$loop' '$img'"
	assertTrue "control: this suite's fixture's loop device backs its image" \
		"backs '$(findmnt -n -o SOURCE "$MNT")' '$MNT.img'"
}

# backs LOOP FILE - the loop device is attached to FILE (by its name, unique
# to the run: the kernel names a file whose mount is detached from its
# namespace by the part of its path below that mount).
backs() {
	local f
	f=$(cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null) && [ "${f##*/}" = "${2##*/}" ]
}

. "$SHUNIT2"
