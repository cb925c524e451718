#!/bin/bash
# Fault injection: every command under a seccomp filter that fails the
# system calls it depends on, as an old kernel or a container profile would.
#   openat2 -> ENOSYS   no openat2 (Linux < 5.6, or a seccomp profile)
#   openat2 -> EINVAL   no RESOLVE_CACHED (Linux < 5.12); BPF cannot read
#                       struct open_how, so every openat2 fails with EINVAL
#   openat2 -> EPERM    a security module or profile refusing the call
#   io_uring_setup -> EPERM, ENOSYS   kernel.io_uring_disabled, profiles
# A command that needs the failed call answers with one sentence on stderr,
# nothing on stdout, and exit 3.  A command that does not need it behaves
# exactly as without the fault.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
. "$DCP_TESTS/lib/rely.sh"

OPENAT2_FAULTS="openat2=ENOSYS openat2=EINVAL openat2=EPERM"
URING_FAULTS="io_uring_setup=EPERM io_uring_setup=ENOSYS"

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/tree/a/b" "$MNT/tree/c"
	for i in 1 2 3; do echo "$i" >"$MNT/tree/a/f$i"; echo "$i" >"$MNT/tree/c/g$i"; done
	echo x >"$MNT/tree/a/b/deep"
	FILE=$MNT/tree/a/f1
}

oneTimeTearDown() { rely_cleanup; }

setUp() {
	cold "$MNT" || fail "cannot remount fixture"
}

# The main path of each command, as "NAME ARGS...".  warm-check is warm
# with --check, the only warm mode that probes with openat2.
invocation() {
	case $1 in
	cachedopen) echo "cachedopen $FILE" ;;
	dcache-probe) echo "dcache-probe -r $MNT/tree" ;;
	warm) echo "warm -r $MNT/tree" ;;
	warm-check) echo "warm -r --check $MNT/tree" ;;
	uring-open) echo "uring-open $FILE" ;;
	esac
}

# What each command owes under each fault: "3" (cannot probe here) or
# "same" (the call is not one it needs: same exit status and output).
expectation() {
	case $1:$2 in
	cachedopen:openat2=* | dcache-probe:openat2=* | warm-check:openat2=*) echo 3 ;;
	uring-open:io_uring_setup=*) echo 3 ;;
	*) echo same ;;
	esac
}

# Numbers (fds, latencies, timings) vary from run to run.
normalise() { sed -E "s/[0-9]+(\.[0-9]+)?/N/g" <<<"$1" | sort; }

check_fault() { # NAME FAULT
	local name=$1 fault=$2 cmd args exp base_rc base_out
	read -r cmd args <<<"$(invocation "$name")"
	have "$cmd" || { echo "  (pending: $cmd not built yet)"; return 0; }
	exp=$(expectation "$name" "$fault")
	if [ "$exp" = same ]; then
		# Same coldness for both runs (an earlier command may have warmed).
		cold "$MNT"
		# shellcheck disable=SC2086
		runf "$cmd" $args
		base_rc=$RC base_out=$(normalise "$OUT")
		cold "$MNT"
	fi
	# shellcheck disable=SC2086
	runf "$FI" "$fault" -- "$cmd" $args
	if [ "$exp" = 3 ]; then
		assertEquals "$name under $fault: exit 3" 3 "$RC"
		assertEquals "$name under $fault: nothing on stdout" "" "$OUT"
		assertEquals "$name under $fault: one sentence on stderr: $ERR" 1 "$(nlines "$ERRF")"
		assertEquals "$name under $fault: message names the program" \
			"$cmd: " "${ERR:0:${#cmd}+2}"
		assertNotContains "$name under $fault: no raw errno dump" "$ERR" "Function not implemented"
	else
		assertEquals "$name under $fault: exit as without the fault ($ERR)" "$base_rc" "$RC"
		assertEquals "$name under $fault: output as without the fault" "$base_out" "$(normalise "$OUT")"
	fi
}

test_openat2_enosys() {
	for n in cachedopen dcache-probe warm warm-check uring-open; do check_fault $n openat2=ENOSYS; done
}

test_openat2_einval_old_kernel() {
	for n in cachedopen dcache-probe warm warm-check uring-open; do check_fault $n openat2=EINVAL; done
}

test_openat2_eperm() {
	for n in cachedopen dcache-probe warm warm-check uring-open; do check_fault $n openat2=EPERM; done
}

test_io_uring_setup_eperm() {
	for n in cachedopen dcache-probe warm warm-check uring-open; do check_fault $n io_uring_setup=EPERM; done
}

test_io_uring_setup_enosys() {
	for n in cachedopen dcache-probe warm warm-check uring-open; do check_fault $n io_uring_setup=ENOSYS; done
}

# The messages say what is missing, in words a person can act on.
test_messages_name_the_cause() {
	runf "$FI" openat2=ENOSYS -- cachedopen "$FILE"
	assertContains "$ERR" "openat2(2)"
	assertContains "$ERR" "Linux 5.12"
	runf "$FI" openat2=EINVAL -- cachedopen "$FILE"
	assertContains "$ERR" "RESOLVE_CACHED"
	runf "$FI" openat2=EPERM -- cachedopen "$FILE"
	assertContains "$ERR" "blocked"
	if have uring-open; then
		runf "$FI" io_uring_setup=EPERM -- uring-open "$FILE"
		assertContains "$ERR" "io_uring"
	fi
}

# With --quiet or --json the answer is the same: exit 3 and one sentence
# on stderr (no JSON object pretending to be a result).
test_unsupported_in_every_output_mode() {
	for opt in -q --json --path --retry; do
		runf "$FI" openat2=EINVAL -- cachedopen $opt "$FILE"
		assertEquals "cachedopen $opt" 3 "$RC"
		assertEquals "cachedopen $opt: stdout" "" "$OUT"
		assertEquals "cachedopen $opt: one line" 1 "$(nlines "$ERRF")"
	done
	if have dcache-probe; then
		for opt in --json -0 --prometheus; do
			runf "$FI" openat2=ENOSYS -- dcache-probe -r $opt "$MNT/tree"
			assertEquals "dcache-probe $opt" 3 "$RC"
			assertEquals "dcache-probe $opt: one line" 1 "$(nlines "$ERRF")"
			[ "$opt" = --prometheus ] && continue
			assertEquals "dcache-probe $opt: stdout" "" "$OUT"
		done
		# The metrics say it: the run-level series alone, status 3.
		assertEquals "dcache-probe --prometheus: status 3" 3 \
			"$(prom_check 'dcprobe_exit_status{command="dcache-probe"}' <<<"$OUT")"
		assertEquals "dcache-probe --prometheus: the run-level series alone" 4 \
			"$(grep -vc '^#' <<<"$OUT")"
	fi
}

# The fault injector itself: an unknown name is a usage error, and the
# filter really is in force for the command it runs.
test_faultinject_self_check() {
	runf "$FI" nosuchcall=ENOSYS -- true
	assertEquals 64 "$RC"
	runf "$FI" openat=ENOSYS -- cat /dev/null
	assertNotEquals "the filter reaches the exec'd program" 0 "$RC"
	runf "$FI" getdents64=EIO -- ls "$MNT/tree"
	assertContains "$ERR" "Input/output error"
}

# A directory listing that fails mid-walk (getdents64 -> EIO) is reported
# and makes the walk exit 2, it is not silently an empty directory.
test_getdents_eio_is_reported() {
	runf "$FI" getdents64=EIO -- "$WALKPRINT" "$MNT/tree"
	assertEquals "walkprint" 2 "$RC"
	assertContains "$ERR" "Input/output error"
	if have dcache-probe; then
		runf "$FI" getdents64=EIO -- dcache-probe -r "$MNT/tree"
		assertEquals "dcache-probe: a failed listing is exit 2" 2 "$RC"
		assertContains "$ERR" "Input/output error"
		assertEquals "no raw control bytes" "" "$(ctl_check "$OUTF" "$ERRF")"
	fi
	if have warm; then
		runf "$FI" getdents64=EIO -- warm -r "$MNT/tree"
		assertEquals "warm: a failed listing is exit 2" 2 "$RC"
		assertContains "$ERR" "Input/output error"
	fi
}

# The walker's batched probes (lib/batch.c) go through io_uring; when
# io_uring is refused at any step they fall back to openat2 calls with the
# very same answers.  A cold and a half-warm tree, so that every state shows.
# (Not io_uring_enter=EINTR: a permanent EINTR is no real kernel, and a
# transient one is rightly retried.)
test_batch_probe_falls_back_with_same_answers() {
	local fault base
	for fault in io_uring_setup=EPERM io_uring_setup=ENOSYS io_uring_enter=EPERM \
		io_uring_enter=EBUSY io_uring_register=EINVAL; do
		cold "$MNT"
		ls -l "$MNT/tree" "$MNT/tree/a" >/dev/null
		stat "$MNT/tree/absent" >/dev/null 2>&1
		runf "$WALKPRINT" -p -t 1 "$MNT/tree"
		assertEquals "walkprint -p: exit ($ERR)" 0 "$RC"
		base=$(sort "$OUTF")
		assertContains "some entries are cached" "$base" "cached	$MNT/tree/a/f1"
		assertContains "some entries miss" "$base" "EAGAIN	$MNT/tree/c/g1"
		cold "$MNT"
		ls -l "$MNT/tree" "$MNT/tree/a" >/dev/null
		stat "$MNT/tree/absent" >/dev/null 2>&1
		runf "$FI" "$fault" -- "$WALKPRINT" -p -t 1 "$MNT/tree"
		assertEquals "walkprint -p under $fault: exit ($ERR)" 0 "$RC"
		assertEquals "walkprint -p under $fault: same answers" "$base" "$(sort "$OUTF")"
	done
}

. "$SHUNIT2"
