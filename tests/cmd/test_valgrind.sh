#!/bin/bash
# valgrind memcheck over each command's main paths and the library's unit
# tests: zero errors, zero definite or indirect leaks (--error-exitcode=99).
#
# Limits of valgrind 3.19 (Debian 12), checked on this machine: it does not
# implement openat2 (syscall 437) and answers ENOSYS to every call, so any
# path that needs openat2 takes the "cannot probe here" branch (exit 3)
# under valgrind; those paths are covered by the ASan+UBSan build (which
# includes LeakSanitizer) instead.  io_uring_setup/enter/register do pass
# through, so the walker's batched probes (lib/batch.c) and uring-open run
# for real.  Skipped (77) when valgrind is missing, and in sanitizer builds
# (valgrind cannot run ASan binaries).
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind is not installed" >&2
	exit 77
fi
if grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address|thread)$' "$DCP_BUILD/CMakeCache.txt" 2>/dev/null; then
	echo "SKIP: valgrind cannot run a sanitizer build (the plain build runs this)" >&2
	exit 77
fi
fixture_require
. "$DCP_TESTS/lib/rely.sh"

RELY_TIMEOUT=600
VG=(valgrind -q --error-exitcode=99 --leak-check=full
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
	--child-silent-after-fork=yes)

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	T=$MNT/tree
	mkdir -p "$T/a/b" "$T/c" "$T/private"
	for i in $(seq 20); do echo "$i" >"$T/a/f$i"; echo "$i" >"$T/c/g$i"; done
	echo x >"$T/a/b/deep"
	echo s >"$T/private/s"
	chmod 0700 "$T/private"
	ln -s a "$T/link"
	ln -s nowhere "$T/dangling"
	touch "$T/$(printf 'esc\033]0;x\007')" "$T/$(printf 'bad\377')"
	# A directory of over 64 KiB: warm reads it ahead (FIEMAP, fadvise).
	mkdir "$MNT/wide"
	(cd "$MNT/wide" && seq -f 'an-entry-with-a-longer-name-%06g' 1 3000 | xargs touch)
	find "$T" -print0 >"$MNT/list0"
	find "$T" -type f >"$MNT/list"
	FILE=$T/a/f1
}

oneTimeTearDown() { rely_cleanup; }

# vg EXPECTED_RC [PREFIX... ++] CMD... - CMD under memcheck (PREFIX, e.g.
# setpriv or a ulimit, runs valgrind): no memcheck error (99), and the exit
# status CMD has without valgrind.
vg() {
	local want=$1 pre=() a
	shift
	for a in "$@"; do
		if [ "$a" = ++ ]; then
			while [ "$1" != ++ ]; do pre+=("$1"); shift; done
			shift
			break
		fi
	done
	runf "${pre[@]}" "${VG[@]}" "$@"
	grep -v "unhandled amd64-linux syscall: 437\|You may be able to write\|README_MISSING_SYSCALL\|Nevertheless we consider\|valgrind.org/support/bug_reports" \
		"$ERRF" >"$ERRF.clean"
	assertNotEquals "$* under valgrind: memcheck errors or leaks: $(grep '^==' "$ERRF.clean" | head -20)" 99 "$RC"
	assertEquals "$* under valgrind: exit status ($(head -3 "$ERRF.clean"))" "$want" "$RC"
}

test_unit_tests_under_valgrind() {
	local t
	# unit-probe and unit-walk probe with openat2, which valgrind lacks.
	for t in escape manifest pathlist progress report util; do
		[ -x "$DCP_BUILD/tests/unit-$t" ] || continue
		vg 0 "$DCP_BUILD/tests/unit-$t"
	done
}

test_walker_under_valgrind() {
	cold "$MNT"
	ls -l "$T" "$T/a" >/dev/null
	vg 0 "$WALKPRINT" -t 2 "$T"
	vg 0 "$WALKPRINT" -j -t 3 "$T"
	# Batched probes through io_uring, on a half-cold tree (hits and misses).
	vg 0 "$WALKPRINT" -p "$T"
	assertContains "the batch ran: entries miss" "$OUT" "EAGAIN"
	vg 0 "$WALKPRINT" -L -j "$T"
	vg 2 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- ++ \
		"$WALKPRINT" "$T"
	assertContains "$ERR" "private: Permission denied"
	# Descriptor pressure: directories evicted and reopened (valgrind
	# keeps a dozen descriptors of the limit for itself).
	vg 0 bash -c 'ulimit -n 24 && exec "$@"' - ++ "$WALKPRINT" "$T"
}

# static_program CMD - true (and this test skipped) when CMD is a static
# program (cachedopen with DCP_LINK_COMMANDS=static-pie): valgrind cannot
# replace its malloc, so the leak check would pass on nothing; the shared
# build runs the test.
static_program() {
	readelf -l "$DCP_BIN/$1" | grep -q INTERP && return 1
	startSkipping
	echo "SKIP: $1 is a static program: valgrind sees none of its allocations" >&2
	return 0
}

test_cachedopen_under_valgrind() {
	static_program cachedopen && return
	vg 3 cachedopen "$FILE"
	vg 3 cachedopen --json "$FILE" "$T/c/g1"
	vg 64 cachedopen --bogus
	vg 64 cachedopen
	vg 0 cachedopen --help
}

test_dcache_probe_under_valgrind() {
	have dcache-probe || { echo "  (pending: dcache-probe not built yet)"; return 0; }
	vg 3 dcache-probe -r "$T"
	vg 3 dcache-probe -r --json "$T"
	vg 64 dcache-probe --bogus
	vg 0 dcache-probe --help
}

test_warm_under_valgrind() {
	have warm || { echo "  (pending: warm not built yet)"; return 0; }
	cold "$MNT"
	vg 0 warm -r -v "$T"
	vg 0 warm -r --json "$T"
	vg 0 warm -r --prometheus "$T"
	vg 0 warm --from "$MNT/list"
	vg 0 warm -0 -v --files0-from=- <"$MNT/list0"
	vg 2 warm "$T/absent"
	vg 3 warm -r --check "$T"
	vg 64 warm --bogus
	cold "$MNT"
	vg 0 warm -r -s -j 4 "$MNT/wide"
}

# A manifest (the reader, the restore's threads and batches): valgrind has
# no openat2, so every lookup of the restore fails (ENOSYS, exit 2) and
# dcache-probe cannot probe (3); the parsing, the engine and its memory run.
test_manifest_under_valgrind() {
	cat "$T"/a/f* >/dev/null
	dcache-probe -r --ranges --json "$T" >"$MNT/manifest" 2>/dev/null
	printf '%s\n' 'not json' '{"type":"entry","path":"/x","state":"cached","ranges":[[0,1]]}' >>"$MNT/manifest"
	assertTrue "a manifest with ranges" "grep -q '\"ranges\":\[\[0,' '$MNT/manifest'"
	vg 2 warm --manifest="$MNT/manifest"
	assertContains "$ERR" "record"
	vg 2 warm --json -j 3 --manifest=- <"$MNT/manifest"
	vg 3 dcache-probe --manifest="$MNT/manifest"
	vg 64 warm --manifest="$MNT/manifest" "$T"
}

test_uring_open_under_valgrind() {
	have uring-open || { echo "  (pending: uring-open not built yet)"; return 0; }
	cold "$MNT"
	vg 1 uring-open "$FILE"
	vg 0 uring-open "$FILE"
	find "$T" -type f -exec cat {} + >/dev/null 2>&1 # all warm: inline
	vg 0 uring-open --json -n 5 "$FILE" "$T/c/g1"
	vg 2 uring-open "$T/absent"
	vg 0 uring-open --bench --from="$MNT/list"
	vg 64 uring-open --bogus
}

. "$SHUNIT2"
