#!/bin/bash
# tests/kernels/run: a command on Debian 12's kernel under qemu gives back
# its standard output, standard error and exit status apart; the guest's
# root is ext4 (not 9p, whose lookups never come from the cache), the
# project is at its own path, and nothing a run writes outlives it.  The
# README's example runs here.  Skipped (77) inside a guest and without
# root; a missing qemu is a failure (./bootstrap installs it).
if [ -n "${DCP_GUEST_KERNEL:-}" ]; then
	echo "SKIP: already inside a tests/kernels guest ($DCP_GUEST_KERNEL)" >&2
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: tests/kernels needs root" >&2
	exit 77
fi
SRC=${DCP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
RUN=$SRC/tests/kernels/run
BUILD=${DCP_BUILD:-$SRC/build}

test_output_and_status_come_back_apart() {
	local out err rc
	# (From the project's top: the guest starts where the caller stands.)
	out=$(cd "$SRC" && "$RUN" -b "$BUILD" 6.1 -- bash -c \
		'uname -r; findmnt -no FSTYPE /; pwd; command -v dcache-probe; echo to-stderr >&2; exit 7' \
		2>"$SHUNIT_TMPDIR/err") && rc=0 || rc=$?
	err=$(cat "$SHUNIT_TMPDIR/err")
	assertEquals "the command's status" 7 "$rc"
	assertEquals "Debian 12's kernel" 6.1 "$(sed -n 1p <<<"$out" | cut -d. -f1,2)"
	assertEquals "the root is ext4" ext4 "$(sed -n 2p <<<"$out")"
	assertEquals "run where the caller stands" "$SRC" "$(sed -n 3p <<<"$out")"
	assertEquals "the build's commands first on PATH" "$BUILD/bin/dcache-probe" "$(sed -n 4p <<<"$out")"
	assertEquals "stderr apart" to-stderr "$err"
}

test_nothing_outlives_a_run() {
	"$RUN" -b "$BUILD" 6.1 -- bash -c 'touch /usr/dcp-kernels-marker "$DCP_GUEST_CWD/marker"' 2>/dev/null
	assertEquals "the first run wrote" 0 $?
	"$RUN" -b "$BUILD" 6.1 -- bash -c 'test -e /usr/dcp-kernels-marker || test -e "$DCP_GUEST_CWD/marker"' 2>/dev/null
	assertEquals "the second saw nothing of it" 1 $?
	assertFalse "nothing on the host" "[ -e '$SRC/marker' ]"
}

# README.md's example, as written there.
test_readme_example() {
	local line out rc
	line=$(grep -m1 '^tests/kernels/run 6.1 -- ' "$SRC/README.md" | sed 's/ *#.*//')
	assertEquals "README's example" "tests/kernels/run 6.1 -- dcache-probe --diagnose" "$line"
	out=$(cd "$SRC" && eval "$line") && rc=0 || rc=$?
	assertEquals "exit status" 0 "$rc"
	assertContains "the mechanism RESOLVE_CACHED is present on 6.1" "$out" "resolve-cached"
	assertContains "$out" "present"
}

test_usage() {
	"$RUN" 4.19 -- true 2>/dev/null
	assertEquals "an unknown kernel" 64 $?
	"$RUN" 6.1 true 2>/dev/null
	assertEquals "no --" 64 $?
	assertEquals "the kernels" "5.10 6.1 6.12" "$("$RUN" --list | tr '\n' ' ' | sed 's/ $//')"
}

SHUNIT_PARENT=$0
. /usr/share/shunit2/shunit2
