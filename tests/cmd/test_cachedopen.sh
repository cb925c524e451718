#!/bin/bash
# Tests for cachedopen on real cold-cache fixtures.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
FI=$DCP_BUILD/tests/faultinject

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	echo "set nowrap" >"$MNT/nanorc"
	mkdir -p "$MNT/a/b/c" "$MNT/private"
	echo data >"$MNT/a/b/c/file"
	printf '#!/bin/sh\n' >"$MNT/script"
	chmod 0755 "$MNT/script"
	echo secret >"$MNT/private/file"
	chmod 0700 "$MNT/private"
	mkdir "$MNT/listonly"
	echo x >"$MNT/listonly/file"
	chmod 0744 "$MNT/listonly"
	mkdir "$MNT/grp"
	echo x >"$MNT/grp/file"
	chmod 0750 "$MNT/grp"
	chmod 0755 "$MNT"
	ln -s nanorc "$MNT/link"
	ln -s nowhere "$MNT/dangling"
	ln -s loop2 "$MNT/loop1"
	ln -s loop1 "$MNT/loop2"
	mkfifo "$MNT/fifo"
	mknod "$MNT/null" c 1 3
	touch "$MNT/$(printf 'new\nline\033[31m')"
}

setUp() {
	fixture_cold "$MNT" || fail "cannot remount fixture"
}

# The cover letter's transcript: miss, miss again, ls, then cached.
test_transcript() {
	run cachedopen "$MNT/nanorc"
	assertEquals "first open misses" 1 "$RC"
	assertEquals "open: -1" "$OUT"
	assertEquals "cachedopen: '$MNT/nanorc': openat2: Resource temporarily unavailable" "$ERR"
	run cachedopen "$MNT/nanorc"
	assertEquals "a miss does not warm the path" 1 "$RC"
	assertEquals "open: -1" "$OUT"
	ls -al "$MNT/nanorc" >/dev/null
	run cachedopen "$MNT/nanorc"
	assertEquals "after ls the open is cached" 0 "$RC"
	assertEquals "open: 3" "$OUT"
	assertEquals "" "$ERR"
}

test_negative_dentry_is_enoent() {
	stat "$MNT/absent" >/dev/null 2>&1
	run cachedopen "$MNT/absent"
	assertEquals 2 "$RC"
	assertEquals "open: -1" "$OUT"
	assertEquals "cachedopen: '$MNT/absent': openat2: No such file or directory" "$ERR"
	run cachedopen --json "$MNT/absent"
	assertEquals "negative" "$(json_get 'objs[0]["state"]' <<<"$OUT")"
	assertEquals "ENOENT" "$(json_get 'objs[0]["errno"]' <<<"$OUT")"
}

test_quiet_exit_codes() {
	run cachedopen -q "$MNT/nanorc"
	assertEquals 1 "$RC"
	assertEquals "" "$OUT$ERR"
	cat "$MNT/nanorc" >/dev/null
	run cachedopen -q "$MNT/nanorc"
	assertEquals 0 "$RC"
	assertEquals "" "$OUT$ERR"
	ls -l "$MNT/loop1" "$MNT/loop2" >/dev/null
	run cachedopen -q "$MNT/loop1"
	assertEquals "ELOOP is an error" 2 "$RC"
	assertEquals "-q prints nothing on stdout" "" "$OUT"
	assertEquals "-q still says the error" \
		"cachedopen: '$MNT/loop1': openat2: Too many levels of symbolic links" "$ERR"
}

# An error met in the middle of a walk (ENOTDIR) is only confirmed outside
# RCU mode, which RESOLVE_CACHED forbids: it reads as a miss.  (A denied
# search is not one: test_unprivileged_under_private_dir.)
test_mid_walk_error_is_a_miss() {
	ls -l "$MNT/script" >/dev/null
	run cachedopen "$MNT/script/notadir"
	assertEquals 1 "$RC"
	assertEquals "cachedopen: '$MNT/script/notadir': openat2: Resource temporarily unavailable" "$ERR"
	run cachedopen --retry "$MNT/script/notadir"
	assertEquals 2 "$RC"
	assertContains "$ERR" "open: Not a directory"
}

test_several_paths_and_error_wins() {
	cat "$MNT/nanorc" >/dev/null
	stat "$MNT/gone" >/dev/null 2>&1
	run cachedopen "$MNT/nanorc" "$MNT/a/b/c/file"
	assertEquals "a miss among hits" 1 "$RC"
	assertEquals "$MNT/nanorc: open: 3
$MNT/a/b/c/file: open: -1" "$OUT"
	assertEquals "cachedopen: '$MNT/a/b/c/file': openat2: Resource temporarily unavailable" "$ERR"
	run cachedopen "$MNT/a/b/c/file" "$MNT/gone"
	assertEquals "error (negative) beats miss" 2 "$RC"
}

test_path_probe_does_not_open() {
	ls -l "$MNT/fifo" "$MNT/null" >/dev/null
	run timeout 5 cachedopen --path "$MNT/fifo" "$MNT/null"
	assertEquals 0 "$RC"
	assertEquals "$MNT/fifo: open: 3
$MNT/null: open: 3" "$OUT"
}

test_fifo_and_device_never_hang() {
	ls -l "$MNT/fifo" "$MNT/null" >/dev/null
	# No writer on the FIFO: a blocking open would hang forever.
	run timeout 5 cachedopen "$MNT/fifo"
	assertEquals "fifo opens without a writer" 0 "$RC"
	assertEquals "open: 3" "$OUT"
	run timeout 5 cachedopen "$MNT/null"
	assertEquals 0 "$RC"
	# A terminal is opened without becoming the controlling tty.
	run timeout 5 setsid cachedopen /dev/tty
	assertNotEquals "never hangs on /dev/tty" 124 "$RC"
}

test_follow_and_no_follow() {
	ls -l "$MNT/link" "$MNT/nanorc" >/dev/null
	run cachedopen "$MNT/link"
	assertEquals "follows by default" 0 "$RC"
	run cachedopen -P "$MNT/link"
	assertEquals "a real open of a symlink with -P is ELOOP" 2 "$RC"
	assertEquals "cachedopen: '$MNT/link': openat2: Too many levels of symbolic links" "$ERR"
	run cachedopen -P --path "$MNT/link"
	assertEquals "--path -P probes the link itself" 0 "$RC"
	fixture_cold "$MNT"
	ls -l "$MNT/link" >/dev/null    # the link is cached, its target is not
	run cachedopen -P --path "$MNT/link"
	assertEquals 0 "$RC"
	run cachedopen -L "$MNT/link"
	assertEquals "following reaches the cold target" 1 "$RC"
}

test_retry_falls_back() {
	run cachedopen --retry "$MNT/a/b/c/file"
	assertEquals "retry still reports the miss" 1 "$RC"
	assertContains "$OUT" "open: -1"
	assertContains "$OUT" "retry: open: 3 (blocking,"
	run cachedopen "$MNT/a/b/c/file"
	assertEquals "the blocking open warmed it" 0 "$RC"
	run cachedopen --retry "$MNT/a/missing"
	assertEquals "a failed retry is an error" 2 "$RC"
	assertContains "$ERR" "open: No such file or directory"
}

test_json_parses() {
	cat "$MNT/nanorc" >/dev/null
	ls -l "$MNT/loop1" "$MNT/loop2" >/dev/null
	run cachedopen --json "$MNT/nanorc" "$MNT/a/b/c/file" "$MNT/loop1"
	assertEquals 2 "$RC"
	assertEquals "open open open summary" "$(json_types <<<"$OUT" | xargs)"
	assertEquals "['cached', 'miss', 'error']" "$(json_get '[o["state"] for o in objs[:3]]' <<<"$OUT")"
	assertEquals "ELOOP" "$(json_get 'objs[2]["errno"]' <<<"$OUT")"
	assertEquals "1 1 1 2" "$(json_get '" ".join(str(objs[3][k]) for k in ("cached","miss","error","status"))' <<<"$OUT")"
}

test_hostile_names() {
	local name
	name="$MNT/$(printf 'new\nline\033[31m')"
	ls -l "$MNT" >/dev/null
	run cachedopen "$name" "$MNT/nanorc"
	assertNotContains "no raw escape reaches the terminal" "$OUT$ERR" $'\033'
	assertContains "$OUT" 'new\nline\e[31m: open: 3'
	run cachedopen --json "$name"
	assertEquals "the name round-trips through JSON" "$name" \
		"$(json_get 'objs[0]["path"]' <<<"$OUT")"
	# Invalid UTF-8 becomes the bytes form.
	run cachedopen --json "$MNT/$(printf 'x\377')"
	assertEquals "$(printf '%s' "$MNT/$(printf 'x\377')" | base64 -w0)" \
		"$(json_get 'objs[0]["path"]["bytes"]' <<<"$OUT")"
}

# The kernel retries a failed permission check outside RCU mode, which
# RESOLVE_CACHED forbids: a path the caller may not search reads as a miss
# even when every dentry is cached.  --retry shows the real error.
test_unprivileged_under_private_dir() {
	ls -l "$MNT/private" "$MNT/listonly" "$MNT/grp" "$MNT/nanorc" >/dev/null
	# For a caller that is not the owner, the POSIX ACL of each directory
	# must be in memory too: until one blocking lookup loads it, the walk
	# is a miss although every dentry is cached.
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/nanorc"
	assertEquals "ACLs not yet loaded" 1 "$RC"
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/nanorc"
	assertEquals "the miss loaded no ACL" 1 "$RC"
	as_nobody cat "$MNT/nanorc" >/dev/null
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/nanorc"
	assertEquals "nobody probes readable cached paths" 0 "$RC"
	assertEquals "open: 3" "$OUT"

	# A denied search is an error, EACCES, on every kernel: 6.1 answers
	# EACCES itself, later kernels EAGAIN (they leave RCU mode to confirm
	# a failed permission check), and the library then looks at the mode of
	# the directory where the cached walk stopped (no ACL loaded: the ACL
	# case above stays a miss).
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/private/file"
	assertEquals "a denied search is an error" 2 "$RC"
	assertEquals "open: -1" "$OUT"
	assertEquals "$DCP_BIN/cachedopen: '$MNT/private/file': openat2: Permission denied" "$ERR"
	run as_nobody "$DCP_BIN/cachedopen" --retry "$MNT/private/file"
	assertEquals "no retry of an error" 2 "$RC"
	assertNotContains "$OUT" "retry:"
	run as_nobody "$DCP_BIN/cachedopen" --json "$MNT/private/file"
	assertEquals "error EACCES" "$(json_get '"%s %s" % (objs[0]["state"], objs[0]["errno"])' <<<"$OUT")"
	run as_nobody "$DCP_BIN/dcache-probe" "$MNT/private/file" "$MNT/private/absent"
	assertEquals "dcache-probe agrees" 2 "$RC"
	assertEquals "error EACCES $MNT/private/file
error EACCES $MNT/private/absent" "$OUT"
	# The walker: a directory nobody may list but not search (0744).
	run as_nobody "$DCP_BIN/dcache-probe" -r "$MNT/listonly"
	assertEquals "the walker agrees" 2 "$RC"
	assertEquals "cached $MNT/listonly
error EACCES $MNT/listonly/file" "$OUT"
	# As root the same paths are a miss (cold) or cached, never denied.
	run "$DCP_BIN/cachedopen" -P "$MNT/private/file"
	assertEquals "root: $OUT $ERR" 0 "$RC"
	# Linux 6.1 answers EACCES itself: this suite runs there too
	# (tests/kernels/matrix), with the same expectations.
	# A search the caller may make stays a miss (the ACL case above, and
	# a name not cached in a directory it may search).
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/a/b/c/file"
	assertEquals "a real miss is a miss" 1 "$RC"
	# 0750: only an ACL entry could let nobody in: a miss, and still one
	# after (nothing was warmed), on every kernel (6.1 answers EACCES here
	# once the directory's ACL is in memory, which goes through the same
	# rule).
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/grp/file"
	assertEquals "0750: a miss" 1 "$RC"
	run as_nobody "$DCP_BIN/cachedopen" "$MNT/grp/file"
	assertEquals "0750: still a miss" 1 "$RC"
}

test_usage_errors() {
	run cachedopen
	assertEquals 64 "$RC"
	assertContains "$ERR" "no PATH given"
	run cachedopen --bogus /
	assertEquals 64 "$RC"
	run cachedopen ""
	assertEquals 64 "$RC"
	run cachedopen -q --json /
	assertEquals 64 "$RC"
	run cachedopen --help
	assertEquals 0 "$RC"
	assertContains "$OUT" "RESOLVE_CACHED"
	run cachedopen --version
	assertContains "$OUT" "dcprobe"
}

test_write_error() {
	cat "$MNT/nanorc" >/dev/null
	run cachedopen "$MNT/nanorc" >/dev/full
	cachedopen "$MNT/nanorc" >/dev/full 2>/dev/null
	assertEquals "write error is exit 2" 2 $?
}

. "$SHUNIT2"
