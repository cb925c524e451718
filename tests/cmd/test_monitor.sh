#!/bin/bash
# What a run hands to monitoring (dcprobe.7, "OPTIONS SHARED BY THE
# COMMANDS" and "PROMETHEUS METRICS"): --output replaces FILE whole or not
# at all, in all four commands; --label names a run in every series; a run
# that cannot probe, or a usage error once --prometheus was read, still
# publishes its exit status.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

ALL=(cachedopen dcache-probe warm uring-open)
WALKERS=(dcache-probe warm)
OPROBE=${DCP_BUILD:-$DCP_BIN/..}/tests/oprobe

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/t/a"
	touch "$MNT/t/x" "$MNT/t/a/y"
	# A directory on a tiny tmpfs, filled up by the tests that need it.
	FULL=$(mktemp -d "$FIXTURE_ROOT/full.XXXXXX")
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$FULL" || fail "cannot mount a tmpfs"
	OUTDIR=$SHUNIT_TMPDIR/out
	mkdir -p "$OUTDIR"
	# A sticky directory anyone may write, as /tmp, that nobody can reach.
	STICKY=$(mktemp -d "$FIXTURE_ROOT/sticky.XXXXXX")
	chmod 1777 "$STICKY"
}

oneTimeTearDown() {
	fixture_cleanup
}

setUp() {
	rm -rf "${FULL:?}"/* "${FULL:?}"/.[!.]* "${OUTDIR:?}"/* "${OUTDIR:?}"/.[!.]* \
		"${STICKY:?}"/* "${STICKY:?}"/.[!.]*
}

# listing DIR - the names in DIR, dot files too, sorted, on one line.
listing() {
	find "$1" -mindepth 1 -printf '%f\n' | sort | xargs
}

# args CMD - arguments that make CMD write output about the fixture.
args() {
	case $1 in
	dcache-probe | warm) echo "-r $MNT/t" ;;
	*) echo "$MNT/t/x" ;;
	esac
}

test_output_replaces_the_file_whole() {
	local cmd
	for cmd in "${ALL[@]}"; do
		echo old >"$OUTDIR/$cmd.out"
		# shellcheck disable=SC2046
		run "$cmd" $(args "$cmd")
		local want=$OUT rc=$RC
		# shellcheck disable=SC2046
		run sh -c "umask 077; exec $cmd --output='$OUTDIR/$cmd.out' $(args "$cmd")"
		assertEquals "$cmd: the same exit status: $ERR" "$rc" "$RC"
		assertEquals "$cmd: nothing on stdout" "" "$OUT"
		# uring-open's lines carry times: all but those; a walk's order varies.
		assertEquals "$cmd: the output is in FILE" "$(sed -E 's/[0-9.]+ us/T us/' <<<"$want" | sort)" \
			"$(sed -E 's/[0-9.]+ us/T us/' "$OUTDIR/$cmd.out" | sort)"
		assertEquals "$cmd: the replaced file's mode, whatever the umask" 644 \
			"$(stat -c %a "$OUTDIR/$cmd.out")"
	done
	assertEquals "no temporary file left" "cachedopen.out dcache-probe.out uring-open.out warm.out" \
		"$(listing "$OUTDIR")"
}

# The file --output makes is the one '>' would: a new FILE gets 0666 less
# the umask (077: 0600, 027: 0640, 022: 0644); a FILE replaced keeps its
# mode, owner and group (0600 stays 0600 under umask 022; nobody's 0640
# file stays nobody's), as root and as nobody (its own 0600 file).  The
# new file is never wider than FILE on its way: the system calls that set
# its mode (strace) never give it more than 0600 when it replaces a 0600
# file.  The same for a manifest (--ranges through --output, --record).
# (Before: 0644 in every case, root's, whatever the umask or FILE.)
test_output_behaves_as_a_redirection() {
	local cmd f mask want
	for cmd in "${ALL[@]}"; do
		f=$OUTDIR/$cmd.out
		for mask in 077:600 027:640 022:644; do
			rm -f "$f"
			# shellcheck disable=SC2046
			run sh -c "umask ${mask%:*}; exec $cmd --output='$f' $(args "$cmd")"
			assertEquals "$cmd, a new file under umask ${mask%:*} ($ERR)" "${mask#*:} root root" \
				"$(stat -c '%a %U %G' "$f")"
		done
		echo old >"$f" && chmod 0600 "$f"
		# shellcheck disable=SC2046
		run sh -c "umask 022; exec $cmd --output='$f' $(args "$cmd")"
		assertEquals "$cmd, a 0600 file replaced under umask 022" "600 root root" \
			"$(stat -c '%a %U %G' "$f")"
		assertNotEquals "$cmd: and replaced" old "$(cat "$f")"
		echo old >"$f" && chown 65534:65534 "$f" && chmod 0640 "$f"
		# shellcheck disable=SC2046
		run "$cmd" --output="$f" $(args "$cmd")
		assertEquals "$cmd, nobody's 0640 file replaced by root" "640 65534 65534" \
			"$(stat -c '%a %u %g' "$f")"
		assertNotEquals "$cmd: and replaced" old "$(cat "$f")"
		# nobody, its own 0600 file in the sticky directory; a new one under 077.
		f=$STICKY/$cmd.out
		echo old >"$f" && chown 65534:65534 "$f" && chmod 0600 "$f"
		# shellcheck disable=SC2046
		run as_nobody sh -c "umask 022; exec $DCP_BIN/$cmd --output='$f' $(args "$cmd")"
		assertEquals "nobody: $cmd, its 0600 file replaced ($ERR)" "600 65534" "$(stat -c '%a %u' "$f")"
		rm -f "$f"
		# shellcheck disable=SC2046
		run as_nobody sh -c "umask 077; exec $DCP_BIN/$cmd --output='$f' $(args "$cmd")"
		assertEquals "nobody: $cmd, a new file under umask 077 ($ERR)" "600 65534" "$(stat -c '%a %u' "$f")"
	done
	# The manifest writers too: --ranges through --output, and --record.
	run sh -c "umask 077; exec dcache-probe -r --json --ranges --output='$OUTDIR/ranges.jsonl' '$MNT/t'"
	assertEquals "--ranges, a new file under umask 077 ($ERR)" 600 "$(stat -c %a "$OUTDIR/ranges.jsonl")"
	run sh -c "umask 077; exec dcache-probe --record='$OUTDIR/rec.jsonl' --for=1s '$MNT/t'"
	assertEquals "--record, a new file under umask 077 ($ERR)" 600 "$(stat -c %a "$OUTDIR/rec.jsonl")"
	rm -f "$OUTDIR/ranges.jsonl" "$OUTDIR/rec.jsonl"
	assertEquals "no temporary file left" "cachedopen.out dcache-probe.out uring-open.out warm.out" \
		"$(listing "$OUTDIR")"
	assertEquals "nobody: no temporary file left" "cachedopen.out dcache-probe.out uring-open.out warm.out" \
		"$(listing "$STICKY")"
	# Never wider on the way: every mode set is within 0600.
	command -v strace >/dev/null || {
		fail "strace not found"
		return
	}
	f=$OUTDIR/traced.out
	echo old >"$f" && chmod 0600 "$f"
	strace -f -qq -e trace=fchmod,fchmodat,chmod,openat -o "$SHUNIT_TMPDIR/modes" \
		cachedopen --output="$f" "$MNT/t/x" >/dev/null 2>&1
	want=$(grep -E 'chmod|O_CREAT|O_TMPFILE' "$SHUNIT_TMPDIR/modes" | grep -v ' = -1' |
		grep -oE ', 0[0-7]+\)' | tr -d ' ,)' | sort -u | xargs)
	assertEquals "the modes given on the way" 0600 "$want"
	assertEquals "and the file published" "600" "$(stat -c %a "$f")"
}

test_output_on_a_full_disk_leaves_the_old_file() {
	local cmd
	for cmd in "${ALL[@]}"; do
		echo "old $cmd" >"$FULL/$cmd.prom"
	done
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
	for cmd in "${ALL[@]}"; do
		# shellcheck disable=SC2046
		run "$cmd" --json --output="$FULL/$cmd.prom" $(args "$cmd")
		assertEquals "$cmd: a full disk is exit 2" 2 "$RC"
		assertContains "$cmd: said" "$ERR" "No space left on device"
		assertContains "$cmd: said" "$ERR" "'$FULL/$cmd.prom' left as it was"
		assertEquals "$cmd: the old file intact" "old $cmd" "$(cat "$FULL/$cmd.prom")"
	done
	assertEquals "no temporary file left" "cachedopen.prom dcache-probe.prom fill uring-open.prom warm.prom" \
		"$(listing "$FULL")"
}

test_output_to_a_missing_directory_is_an_error() {
	local cmd
	for cmd in "${ALL[@]}"; do
		# shellcheck disable=SC2046
		run "$cmd" --output="$OUTDIR/no/such/file" $(args "$cmd")
		assertEquals "$cmd: exit 2" 2 "$RC"
		assertContains "$cmd" "$ERR" "--output: cannot create a file beside '$OUTDIR/no/such/file'"
	done
}

# what_is PATH - its type, inode, link target and contents, as one line:
# what must not change when the object is not replaced.
what_is() {
	stat -c '%F %i %U' "$1" | tr '\n' ' '
	[ -L "$1" ] && readlink "$1" | tr '\n' ' '
	[ -f "$1" ] && [ ! -L "$1" ] && md5sum <"$1" | tr '\n' ' '
	echo
}

# non_regular DIR - make in DIR what --output must never replace; prints
# "NAME WORDS" lines, WORDS being what the message says it is.
non_regular() {
	mkfifo "$1/fifo"
	mknod "$1/cn" c 1 7
	ln -s /proc/self/fd/1 "$1/fd1"
	echo kept >"$1/target"
	ln -s target "$1/lnreg"
	mkdir "$1/dir"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1/sock"
	cat <<'EOT'
fifo is a FIFO, not a regular file
cn is a character device, not a regular file
fd1 is a symbolic link, not a regular file
lnreg is a symbolic link, not a regular file
dir is a directory, not a regular file
dir/ names a directory (it ends with '/')
sock is a socket, not a regular file
EOT
}

# FILE must be a regular file or absent: a FIFO, a device node, a symlink
# (to /proc/self/fd/1, or to a regular file: root would write through it
# elsewhere), a directory, a name ending in '/' and a socket are each
# refused with exit 2 and one line, before the run (a cold tree stays
# cold under warm), and left exactly as they were; no temporary file.
# (Before: each was replaced by a regular file, exit 0 or 1, and a
# directory failed only after the whole walk.)
test_output_refuses_what_is_not_a_regular_file() {
	local cmd name words before want
	non_regular "$OUTDIR" >"$SHUNIT_TMPDIR/kinds"
	want=$(listing "$OUTDIR")
	for cmd in "${ALL[@]}"; do
		while read -r name words; do
			before=$(what_is "$OUTDIR/${name%/}")
			# shellcheck disable=SC2046
			run "$cmd" --output="$OUTDIR/$name" $(args "$cmd")
			assertEquals "$cmd --output=$name: exit 2" 2 "$RC"
			assertEquals "$cmd --output=$name: nothing on stdout" "" "$OUT"
			assertEquals "$cmd --output=$name: one line" \
				"$cmd: --output: '$OUTDIR/$name' $words: not replaced" "$ERR"
			assertEquals "$cmd --output=$name: left as it was" "$before" \
				"$(what_is "$OUTDIR/${name%/}")"
		done <"$SHUNIT_TMPDIR/kinds"
		assertEquals "$cmd: the target of the link untouched" kept "$(cat "$OUTDIR/target")"
		assertEquals "$cmd: no temporary file" "$want" "$(listing "$OUTDIR")"
	done
	# Before the run, not after it: the cold tree stays cold.
	fixture_cold "$MNT" || fail "remount"
	for name in fifo dir cn; do
		run warm -r --output="$OUTDIR/$name" "$MNT/t"
		assertEquals "warm --output=$name: exit 2" 2 "$RC"
		assertEquals "warm --output=$name: nothing was warmed" "miss $MNT/t/a/y" \
			"$("$OPROBE" "$MNT/t/a/y")"
	done
	# Warm again for the tests that follow, for nobody too (ACLs loaded).
	find "$MNT/t" -exec stat {} + >/dev/null
	as_nobody find "$MNT/t" -exec stat {} + >/dev/null
	# As nobody, in a directory nobody may write, the same.
	non_regular "$STICKY" >/dev/null
	want=$(listing "$STICKY")
	for cmd in "${ALL[@]}"; do
		while read -r name words; do
			before=$(what_is "$STICKY/${name%/}")
			# shellcheck disable=SC2046
			run as_nobody "$DCP_BIN/$cmd" --output="$STICKY/$name" $(args "$cmd")
			assertEquals "nobody: $cmd --output=$name: exit 2" 2 "$RC"
			assertEquals "nobody: $cmd --output=$name: one line" \
				"$DCP_BIN/$cmd: --output: '$STICKY/$name' $words: not replaced" "$ERR"
			assertEquals "nobody: $cmd --output=$name: left as it was" "$before" \
				"$(what_is "$STICKY/${name%/}")"
		done <"$SHUNIT_TMPDIR/kinds"
	done
	assertEquals "nobody: no temporary file" "$want" "$(listing "$STICKY")"
}

# start_held CMD... - start CMD with --from a FIFO (appended) and wait until
# it reads the list: FILE was checked by then (before the run).  The list
# is given and the run ended by end_held PATH.
start_held() {
	rm -f "$SHUNIT_TMPDIR/list"
	mkfifo "$SHUNIT_TMPDIR/list"
	"$@" --from="$SHUNIT_TMPDIR/list" >"$SHUNIT_TMPDIR/held.out" 2>"$SHUNIT_TMPDIR/held.err" &
	HELD=$!
	exec 7>"$SHUNIT_TMPDIR/list" # returns once the command opened the list
}

end_held() {
	echo "$1" >&7
	exec 7>&-
	wait "$HELD"
	RC=$?
	OUT=$(cat "$SHUNIT_TMPDIR/held.out")
	ERR=$(cat "$SHUNIT_TMPDIR/held.err")
}

# FILE is checked again at the rename: a regular file when the run began,
# swapped for a FIFO, a device node or a symlink (as the user who may
# write the directory could) while the command runs, is left as it is,
# exit 2, said; so is FILE when the temporary file was replaced (the other
# file is not renamed into place; a temporary file with a name from the
# start, as on a filesystem without O_TMPFILE, faultinject making it so).
# Absent or still a regular file, the output is published.  (Before: each
# was replaced.)
test_output_checked_again_at_the_rename() {
	local cmd kind f t
	for cmd in "${ALL[@]}"; do
		f=$OUTDIR/$cmd.out
		for kind in fifo cn fd1 tmp same; do
			rm -f "$f" "$OUTDIR"/.*.out.*
			echo old >"$f"
			if [ "$kind" = tmp ]; then
				# A temporary file to replace: one with a name from the start.
				start_held "$DCP_BUILD/tests/faultinject" tmpfile=EOPNOTSUPP -- "$DCP_BIN/$cmd" \
					--output="$f"
			else
				start_held "$cmd" --output="$f"
			fi
			case $kind in
			fifo) rm "$f" && mkfifo "$f" ;;
			cn) rm "$f" && mknod "$f" c 1 7 ;;
			fd1) rm "$f" && ln -s /proc/self/fd/1 "$f" ;;
			tmp)
				t=$(find "$OUTDIR" -name ".$cmd.out.*")
				rm "$t" && echo other >"$t"
				;;
			same) echo newer >"$f" ;;
			esac
			end_held "$MNT/t/x"
			case $kind in
			same)
				assertEquals "$cmd, FILE rewritten meanwhile: published ($ERR)" 0 "$RC"
				assertNotEquals "$cmd: the output in FILE" newer "$(cat "$f")"
				;;
			tmp)
				assertEquals "$cmd, temporary replaced: exit 2" 2 "$RC"
				assertContains "$cmd, temporary replaced: said" "$ERR" \
					"$cmd: '$f' left as it was: since the run began, it had its temporary file replaced"
				assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
				assertEquals "$cmd: the other file left where it was" other "$(cat "$t")"
				;;
			*)
				assertEquals "$cmd, $kind swapped in: exit 2" 2 "$RC"
				assertContains "$cmd, $kind swapped in: said" "$ERR" \
					"$cmd: '$f' left as it was: since the run began, it is a "
				assertEquals "$cmd, $kind swapped in: still there" \
					"$(case $kind in fifo) echo fifo ;; cn) echo character special file ;; fd1) echo symbolic link ;; esac)" \
					"$(stat -c %F "$f")"
				;;
			esac
			[ "$kind" = tmp ] || assertEquals "$cmd, $kind: no temporary file" "" \
				"$(find "$OUTDIR" -name ".$cmd.out.*")"
		done
	done
}

# A signal that ends a run in the middle (held reading its --from FIFO, its
# output file made) leaves no temporary file and FILE as it was: SIGTERM,
# SIGINT and SIGHUP, to each command, with the new file unnamed (O_TMPFILE:
# no temporary name exists during the run) and, where the filesystem makes
# no unnamed file (faultinject: O_TMPFILE fails with EOPNOTSUPP), with a
# temporary name from the start, which is there during the run and gone
# after the signal.  The command dies of the signal (128 + its number).
# (Before: the temporary file stayed, with every signal, in every command.)
test_output_leaves_no_temporary_after_a_signal() {
	local cmd sig how f t rc
	for cmd in "${ALL[@]}"; do
		f=$OUTDIR/$cmd.out
		for how in unnamed named; do
			for sig in TERM INT HUP; do
				rm -f "$OUTDIR"/.*.out.*
				echo old >"$f"
				rm -f "$SHUNIT_TMPDIR/list"
				mkfifo "$SHUNIT_TMPDIR/list"
				# A background job ignores SIGINT unless told otherwise.
				if [ $how = named ]; then
					env --default-signal="$sig" "$DCP_BUILD/tests/faultinject" \
						tmpfile=EOPNOTSUPP -- "$DCP_BIN/$cmd" --output="$f" \
						--from="$SHUNIT_TMPDIR/list" 2>"$SHUNIT_TMPDIR/held.err" &
				else
					env --default-signal="$sig" "$DCP_BIN/$cmd" --output="$f" \
						--from="$SHUNIT_TMPDIR/list" 2>"$SHUNIT_TMPDIR/held.err" &
				fi
				HELD=$!
				exec 7>"$SHUNIT_TMPDIR/list" # the command is reading its list
				echo "$MNT/t/x" >&7
				t=$(find "$OUTDIR" -name ".$cmd.out.*")
				if [ $how = named ]; then
					assertNotEquals "$cmd, $how: a temporary name during the run" "" "$t"
				else
					assertEquals "$cmd, $how: no temporary name during the run" "" "$t"
				fi
				kill -s "$sig" "$HELD"
				wait "$HELD" 2>/dev/null # (bash would say "Hangup")
				rc=$?
				exec 7>&-
				assertEquals "$cmd, $how, SIG$sig: ended by it ($(cat "$SHUNIT_TMPDIR/held.err"))" \
					$((128 + $(kill -l "$sig"))) "$rc"
				assertEquals "$cmd, $how, SIG$sig: FILE as it was" old "$(cat "$f")"
				assertEquals "$cmd, $how, SIG$sig: no temporary file left" "" \
					"$(find "$OUTDIR" -name ".$cmd.out.*")"
			done
		done
	done
}

# The last moment: another process exchanges FILE (a regular file) and a
# FIFO beside it atomically, over and over, while cachedopen runs 300 times
# with --output=FILE (every other run with a named temporary file).  Whatever moment the exchange falls on, the FIFO is
# never replaced: after every run it is still at FILE or beside it (the
# rename exchanges FILE with the new file and checks what left it, putting
# a FIFO back).  Every run publishes (0) or refuses (2), and none leaves a
# temporary file: whatever comes back under the temporary name after the
# exchange is removed (a regular file) or put back (a FIFO).  (Before: the
# first run replaced the FIFO or the file, whichever was at FILE; then,
# about one run in 18 left a ".swap.out.XXXXXX" behind.)
test_output_never_replaces_what_is_swapped_in_at_the_last_moment() {
	local f=$OUTDIR/swap.out a=$OUTDIR/swap.fifo i ino bad=0 refused=0 left=0 swapper
	echo old >"$f"
	mkfifo "$a"
	ino=$(stat -c %i "$a")
	python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
while True:
    libc.renameat2(d, b"swap.out", d, b"swap.fifo", 2)  # RENAME_EXCHANGE
' "$OUTDIR" &
	swapper=$!
	for i in $(seq 300); do
		# Every other run with a temporary name from the start (as on a
		# filesystem without O_TMPFILE): the same exchange, the same checks.
		if [ $((i % 2)) = 1 ]; then
			"$DCP_BUILD/tests/faultinject" tmpfile=EOPNOTSUPP -- "$DCP_BIN/cachedopen" \
				--output="$f" "$MNT/t/x" >/dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
		else
			cachedopen --output="$f" "$MNT/t/x" >/dev/null 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
		fi
		RC=$?
		[ "$RC" = 2 ] && refused=$((refused + 1))
		if [ "$RC" != 0 ] && [ "$RC" != 2 ]; then
			bad=$((bad + 1))
		fi
		# Looked at with the swapper stopped: two names are two lookups.
		kill -STOP "$swapper"
		until [ "$(cut -d' ' -f3 "/proc/$swapper/stat")" = T ]; do :; done
		if [ "$(stat -c %i "$f")" != "$ino" ] && [ "$(stat -c %i "$a" 2>/dev/null)" != "$ino" ]; then
			fail "run $i: the FIFO was replaced"
			break
		fi
		if [ -n "$(find "$OUTDIR" -name '.swap.out.*')" ]; then
			left=$((left + 1))
			rm -f "$OUTDIR"/.swap.out.*
		fi
		kill -CONT "$swapper"
	done
	kill -KILL "$swapper"
	wait "$swapper" 2>/dev/null
	echo "  $i runs: $refused refused, $left left a temporary file"
	assertEquals "every run published or refused" 0 "$bad"
	assertTrue "the swap happened during runs (some refused)" "[ $refused -gt 0 ]"
	assertEquals "no run left a temporary file" 0 "$left"
}

# A regular file is replaced only when it is the caller's, in a sticky
# directory (/tmp): root refuses nobody's file there, as
# fs.protected_regular=2 would refuse root an O_CREAT open of it, whatever
# the sysctl says; a file of the directory's owner is root's to replace.
# nobody is refused another's file before the run (the kernel would refuse
# the rename only after it) and publishes its own.
test_output_in_a_sticky_directory() {
	local cmd f
	for cmd in "${ALL[@]}"; do
		f=$STICKY/$cmd.out
		echo nobody >"$f" && chown 65534:65534 "$f"
		# shellcheck disable=SC2046
		run "$cmd" --output="$f" $(args "$cmd")
		assertEquals "root, nobody's file: exit 2" 2 "$RC"
		assertEquals "root, nobody's file: said" \
			"$cmd: --output: '$f' is another user's file in a sticky directory: not replaced" "$ERR"
		assertEquals "root, nobody's file: as it was" "nobody 65534" "$(cat "$f") $(stat -c %u "$f")"
		# shellcheck disable=SC2046
		run as_nobody "$DCP_BIN/$cmd" --output="$f" $(args "$cmd")
		assertEquals "nobody, its own file: published ($ERR)" "0 65534" "$RC $(stat -c %u "$f")"
		assertNotEquals "nobody, its own file: new" nobody "$(cat "$f")"
		echo root >"$f" && chown 0:0 "$f"
		# shellcheck disable=SC2046
		run as_nobody "$DCP_BIN/$cmd" --output="$f" $(args "$cmd")
		assertEquals "nobody, root's file: exit 2" 2 "$RC"
		assertEquals "nobody, root's file: said" \
			"$DCP_BIN/$cmd: --output: '$f' is another user's file in a sticky directory: not replaced" "$ERR"
		assertEquals "nobody, root's file: as it was" root "$(cat "$f")"
		# shellcheck disable=SC2046
		run "$cmd" --output="$f" $(args "$cmd")
		assertEquals "root, the directory owner's file: published ($ERR)" 0 "$RC"
	done
	assertEquals "no temporary file left" "cachedopen.out dcache-probe.out uring-open.out warm.out" \
		"$(listing "$STICKY")"
}

# Without --prometheus a run that cannot probe leaves FILE as it was.
test_output_of_a_run_that_cannot_probe() {
	local cmd
	for cmd in cachedopen dcache-probe; do
		echo old >"$OUTDIR/$cmd.out"
		# shellcheck disable=SC2046
		run "$DCP_BUILD/tests/faultinject" openat2=ENOSYS -- "$DCP_BIN/$cmd" \
			--output="$OUTDIR/$cmd.out" $(args "$cmd")
		assertEquals "$cmd: cannot probe" 3 "$RC"
		assertEquals "$cmd: FILE as it was" old "$(cat "$OUTDIR/$cmd.out")"
	done
	assertEquals "no temporary file left" "cachedopen.out dcache-probe.out" "$(listing "$OUTDIR")"
}

test_labels_on_every_series() {
	local cmd f
	for cmd in "${WALKERS[@]}"; do
		f=$OUTDIR/$cmd.prom
		run "$cmd" -r --prometheus --label=job=app --label='site=a"b\c' --output="$f" "$MNT/t"
		assertEquals "$cmd: a run: $ERR" 0 "$((RC <= 1 ? 0 : RC))"
		assertTrue "$cmd: promtool accepts it" "prom_check <'$f' >/dev/null"
		assertEquals "$cmd: every series has the labels, after command" 0 \
			"$(grep -v '^#' "$f" | grep -vc "^dcprobe_[a-z_]*{command=\"$cmd\",job=\"app\",site=\"a\\\\\"b\\\\\\\\\\\\\\\\c\"[,}]")"
		assertTrue "$cmd: and there are series" "[ $(grep -vc '^#' "$f") -ge 3 ]"
	done
	# Two jobs' files side by side: no series twice.
	run dcache-probe -r --prometheus --label=job=one "$MNT/t"
	local first=$OUT
	run dcache-probe -r --prometheus --label=job=two "$MNT/t"
	assertEquals "two jobs never collide" "" "$(series_twice "$first" "$OUT")"
	run dcache-probe -r --prometheus "$MNT/t"
	first=$OUT
	run dcache-probe -r --prometheus "$MNT/t"
	assertContains "the control: without labels two runs collide" \
		"$(series_twice "$first" "$OUT")" 'dcprobe_exit_status{command="dcache-probe"}'
}

# series_twice TEXT... - the series that more than one exposition holds.
series_twice() {
	printf '%s\n' "$@" | grep -v '^#' | sed 's/ [^ ]*$//' | sort | uniq -d
}

test_bad_labels_are_usage_errors() {
	local cmd bad msg
	for cmd in "${WALKERS[@]}"; do
		while IFS='|' read -r bad msg; do
			run "$cmd" -r --prometheus "$bad" "$MNT/t"
			assertEquals "$cmd $bad" 64 "$RC"
			assertContains "$cmd $bad" "$ERR" "$msg"
		done <<'EOF2'
--label=job|invalid --label 'job': NAME=VALUE is needed
--label=1job=a|invalid --label name '1job': a Prometheus label name
--label=jo-b=a|invalid --label name 'jo-b': a Prometheus label name
--label==a|invalid --label name '': a Prometheus label name
--label=__name__=a|names starting with __ are reserved by Prometheus
--label=command=x|invalid --label name 'command': the series already carry it
--label=root=x|invalid --label name 'root'
--label=state=x|invalid --label name 'state'
--label=mountpoint=x|invalid --label name 'mountpoint'
--label=version=x|invalid --label name 'version'
--label=job=|invalid --label 'job=': an empty VALUE
EOF2
		run "$cmd" -r --prometheus --label=job=a --label=job=b "$MNT/t"
		assertEquals "$cmd: a label twice" 64 "$RC"
		assertContains "$ERR" "--label 'job' given twice"
		run "$cmd" -r --label=job=a "$MNT/t"
		assertEquals "$cmd: --label without --prometheus" 64 "$RC"
		assertContains "$ERR" "--label needs --prometheus"
	done
}

# Exit 3 (no openat2 here): the run-level series, with the labels.
test_cannot_probe_publishes_its_status() {
	local cmd f
	for cmd in dcache-probe "warm --check"; do
		f=$OUTDIR/${cmd%% *}.prom
		echo old >"$f"
		run "$DCP_BUILD/tests/faultinject" openat2=ENOSYS -- "$DCP_BIN/${cmd%% *}" ${cmd#* } \
			-r --prometheus --label=job=app --output="$f" "$MNT/t"
		[ "$cmd" = dcache-probe ] || true
		assertEquals "$cmd: cannot probe" 3 "$RC"
		assertEquals "$cmd: status 3 published" 3 \
			"$(prom_check "dcprobe_exit_status{command=\"${cmd%% *}\",job=\"app\"}" <"$f")"
		assertEquals "$cmd: the run-level series" \
			"dcprobe_duration_seconds dcprobe_exit_status dcprobe_last_run_timestamp_seconds dcprobe_build_info" \
			"$(grep -v '^#' "$f" | sed 's/{.*//' | xargs)"
		# And on standard output without --output.
		run "$DCP_BUILD/tests/faultinject" openat2=ENOSYS -- "$DCP_BIN/${cmd%% *}" ${cmd#* } \
			-r --prometheus "$MNT/t"
		assertEquals "$cmd: on stdout" 3 \
			"$(prom_check "dcprobe_exit_status{command=\"${cmd%% *}\"}" <<<"$OUT")"
	done
}

# dcprobe_build_info{version} 1 in every exposition, whatever the exit
# status: 0 or 1, 2 (every listing fails), 3 (no openat2), 64.
test_build_info_in_every_exposition() {
	local cmd version why
	for cmd in "${WALKERS[@]}"; do
		version=$("$cmd" --version | sed -n 's/.*(dcprobe) //p')
		assertNotNull "$cmd --version" "$version"
		for why in run getdents64=EIO openat2=ENOSYS usage; do
			# warm probes (and so can fail to) with --check.
			case $why in
			run) run "$cmd" -r $([ "$cmd" = warm ] && echo --check) --prometheus "$MNT/t" ;;
			usage) run "$cmd" --prometheus --max-depth=x "$MNT/t" ;;
			*) run "$DCP_BUILD/tests/faultinject" "$why" -- "$DCP_BIN/$cmd" -r \
				$([ "$cmd" = warm ] && echo --check) --prometheus "$MNT/t" ;;
			esac
			assertEquals "$cmd $why (exit $RC: $ERR): build info" 1 \
				"$(prom_check "dcprobe_build_info{command=\"$cmd\",version=\"$version\"}" <<<"$OUT")"
		done
	done
}

# Exit 64: published when --prometheus (and --output) came before the error.
test_usage_error_publishes_its_status() {
	local cmd f
	for cmd in "${WALKERS[@]}"; do
		f=$OUTDIR/$cmd.prom
		echo old >"$f"
		run "$cmd" --prometheus --label=job=app --output="$f" --max-depth=x "$MNT/t"
		assertEquals "$cmd: usage error" 64 "$RC"
		assertEquals "$cmd: nothing on stdout" "" "$OUT"
		assertEquals "$cmd: status 64 published" 64 \
			"$(prom_check "dcprobe_exit_status{command=\"$cmd\",job=\"app\"}" <"$f")"
		# A missing PATH is found once every option was read.
		echo old >"$f"
		run "$cmd" -r --prometheus --output="$f"
		assertEquals "$cmd: no PATH" 64 "$RC"
		assertEquals "$cmd: status 64 published" 64 \
			"$(prom_check "dcprobe_exit_status{command=\"$cmd\"}" <"$f")"
		# --prometheus with another output: neither was asked, FILE stays.
		for opt in -q --json -0; do
			echo old >"$f"
			run "$cmd" -r "$MNT/t" $opt --prometheus --output="$f"
			assertEquals "$cmd $opt --prometheus" 64 "$RC"
			assertEquals "$cmd $opt --prometheus: FILE as it was" old "$(cat "$f")"
			run "$cmd" -r "$MNT/t" $opt --prometheus
			assertEquals "$cmd $opt --prometheus: nothing on stdout" "" "$OUT"
		done
		# Options after the one in error are not known: FILE stays.
		echo old >"$f"
		run "$cmd" --max-depth=x --prometheus --output="$f" "$MNT/t"
		assertEquals "$cmd: usage error" 64 "$RC"
		assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
		assertEquals "$cmd: nothing on stdout" "" "$OUT"
		# Without --prometheus, nothing is published.
		run "$cmd" --output="$f" --max-depth=x "$MNT/t"
		assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
		# --prometheus on stdout: the series there.
		run "$cmd" --prometheus --bogus "$MNT/t"
		assertEquals "$cmd: unknown option" 64 "$RC"
		assertEquals "$cmd: on stdout" 64 "$(prom_check "dcprobe_exit_status{command=\"$cmd\"}" <<<"$OUT")"
		# --help is no error and no run.
		run "$cmd" --prometheus --output="$f" --help
		assertEquals "$cmd --help" 0 "$RC"
		assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
	done
	assertEquals "no temporary file left" "dcache-probe.prom warm.prom" "$(listing "$OUTDIR")"
}

. "$SHUNIT2"
