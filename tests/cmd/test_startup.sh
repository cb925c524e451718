#!/bin/bash
# What a run loads and reads before it does its work: a run that needs no
# mount table loads no libmount (nor what it drags in: libblkid, libselinux,
# pcre2) and reads neither /proc/filesystems nor the mount table.  Seen by
# strace in the real process, with a run that does need the mount table as
# the control.  tests/bench/bench-startup.sh measures what that saves.
: "${DCP_BIN:?}"
export LC_ALL=C.UTF-8
SHUNIT2=${SHUNIT2:-$(command -v shunit2 || echo /usr/share/shunit2/shunit2)}
# What linking libmount costs every start of a process.
HEAVY='libmount\.so|libblkid\.so|libselinux\.so|libpcre2|/proc/filesystems|/proc/self/mountinfo'

# opened CMD... - every file CMD (and its children) opened, one per line.
opened() {
	strace -f -qq -e trace=openat,open,openat2 -o "$SHUNIT_TMPDIR/trace" "$@" >/dev/null 2>&1
	sed -n 's/.*open[a-z0-9]*([^"]*"\([^"]*\)".*/\1/p' "$SHUNIT_TMPDIR/trace"
}

have_strace() {
	command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null && return 0
	startSkipping
	fail "strace is not installed or cannot trace here"
	return 1
}

test_cachedopen_q_loads_no_mount_table() {
	have_strace || return
	local files
	files=$(opened "$DCP_BIN/cachedopen" -q /etc/passwd)
	assertContains "the trace sees the probe's own openat2" "$files" "/etc/passwd"
	assertEquals "cachedopen -q opens none of it" "" "$(grep -E "$HEAVY" <<<"$files")"
	files=$(opened "$DCP_BIN/dcache-probe" /etc/passwd)
	assertEquals "dcache-probe PATH opens none of it" "" "$(grep -E "$HEAVY" <<<"$files")"
}

# The control: a run that needs the mount table loads libmount then, and
# reads mountinfo (so the check above sees them when they are opened).
test_a_run_that_needs_the_mount_table_loads_libmount() {
	have_strace || return
	local files
	files=$(opened "$DCP_BIN/dcache-probe" -r --per-mount /etc)
	assertContains "libmount loaded" "$files" "libmount.so.1"
	assertContains "mountinfo read" "$files" "/proc/self/mountinfo"
}

# No command and not the shared library names libmount (readelf NEEDED):
# it is loaded with dlopen, and a package must depend on it explicitly.
test_nothing_links_libmount() {
	local f
	for f in "$DCP_BIN"/* "${DCP_BUILD:-$DCP_BIN/..}"/libdcprobe.so.[0-9]*; do
		[ -f "$f" ] || continue
		assertNotContains "$f NEEDED" "$(readelf -d "$f" | grep NEEDED)" "libmount"
	done
}

. "$SHUNIT2"
