#!/bin/bash
# Resource limits: few descriptors, little address space, a full disk on
# stdout, a reader that goes away.  Nothing may crash, hang, lose entries
# silently or write noise.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
. "$DCP_TESTS/lib/rely.sh"

oneTimeSetUp() {
	MNT=$(fixture_new 64) || fail "cannot make fixture"
	mkdir "$MNT/dw"
	NDW=$(python3 "$DCP_TESTS/lib/mktree.py" deepwide "$MNT/dw" 64 200) || fail "mktree"
	NDW=$((NDW + 1)) # the root itself
	echo data >"$MNT/file"
	FILE=$MNT/file
}

oneTimeTearDown() {
	mountpoint -q "$RELY_TMP/grid" && umount "$RELY_TMP/grid"
	rely_cleanup
}

# Every walking command over the tree, as "NAME ARGS..." lines.
walkers() {
	echo "$WALKPRINT $MNT/dw"
	have dcache-probe && echo "dcache-probe -r $MNT/dw"
	have warm && echo "warm -r -v $MNT/dw"
}

# entry_count FILE - lines of output that name an entry of the tree.
entry_count() { grep -c "$MNT/dw" "$1"; }

# ulimit -n 16 on a tree 64 directories deep with 200 siblings in one
# place: the walker recycles descriptors, so nothing is lost.
test_ulimit_n16_deep_wide_tree() {
	local line cmd full
	while read -r line; do
		cmd=${line%% *}
		# shellcheck disable=SC2086
		runf $line
		assertEquals "$cmd unlimited: exit ($ERR)" 0 "$RC"
		full=$(entry_count "$OUTF")
		[ "$cmd" = "$WALKPRINT" ] && assertEquals "walkprint sees every entry" "$NDW" "$full"
		# shellcheck disable=SC2086
		runf bash -c 'ulimit -n 16 && exec "$@"' - $line
		assertEquals "$cmd under ulimit -n 16: exit ($ERR)" 0 "$RC"
		assertEquals "$cmd under ulimit -n 16: every entry" "$full" "$(entry_count "$OUTF")"
		assertNotContains "$cmd under ulimit -n 16" "$ERR" "Too many open files"
	done < <(walkers)
}

# Below any workable budget, the answer is a clear EMFILE error and exit 2,
# or a complete walk: never a crash, a hang, or a silent short listing.
test_ulimit_n_sweep() {
	local line cmd full n
	while read -r line; do
		cmd=${line%% *}
		# shellcheck disable=SC2086
		runf $line
		full=$(entry_count "$OUTF")
		for n in 4 5 6 7 8 10 12; do
			# shellcheck disable=SC2086
			runf bash -c "ulimit -n $n && exec \"\$@\"" - $line
			case $RC in
			0) assertEquals "$cmd -n $n: a clean exit is a complete walk" "$full" "$(entry_count "$OUTF")" ;;
			2) assertTrue "$cmd -n $n: exit 2 says why (EMFILE)" \
				"grep -q 'Too many open files\|EMFILE' '$OUTF' '$ERRF'" ;;
			*) fail "$cmd under ulimit -n $n: exit $RC: $ERR" ;;
			esac
		done
	done < <(walkers)
	# cachedopen closes each descriptor it opens: any number of paths.
	cat "$FILE" >/dev/null
	runf bash -c 'ulimit -n 8 && exec "$@"' - cachedopen $(for i in $(seq 200); do echo "$FILE"; done)
	assertEquals "cachedopen: 200 opens under ulimit -n 8" 0 "$RC"
	assertEquals 200 "$(grep -c 'open: 3$' "$OUTF")"
	# uring-open: a fresh ring (a descriptor) per open, closed each time.
	if have uring-open; then
		runf bash -c 'ulimit -n 8 && exec "$@"' - uring-open -n 50 "$FILE"
		# (0, or 1 if a concurrent mount elsewhere made one open punt.)
		assertTrue "uring-open: 50 rings under ulimit -n 8 ($RC: $ERR)" "[ $RC -le 1 ]"
		assertEquals "uring-open: 50 opens, each with a descriptor" 50 "$(grep -c ' fd [0-9]' "$OUTF")"
		find "$MNT/dw" -type f >"$RELY_TMP/list"
		runf bash -c 'ulimit -n 8 && exec "$@"' - uring-open --bench --from="$RELY_TMP/list"
		assertTrue "uring-open --bench under ulimit -n 8: done or a clear error ($RC: $ERR)" \
			"[ $RC = 0 ] || { [ $RC = 2 ] && grep -q 'Too many open files\|EMFILE' '$OUTF' '$ERRF'; }"
	fi
	# warm --from: lookups in flight never need more descriptors than allowed.
	if have warm; then
		find "$MNT/dw" >"$RELY_TMP/list"
		runf bash -c 'ulimit -n 8 && exec "$@"' - warm -v --from "$RELY_TMP/list"
		assertEquals "warm --from under ulimit -n 8 ($ERR)" 0 "$RC"
		assertEquals "warm --from: every path" "$NDW" "$(entry_count "$OUTF")"
	fi
}

# A small address space: a command either works or says it cannot (exit 2
# with a message), never dies on a signal.  Sanitizer builds reserve
# terabytes of shadow memory and cannot run under ulimit -v.
test_ulimit_v_sweep() {
	local line cmd kb
	if sanitized; then
		startSkipping
		return
	fi
	cat "$FILE" >/dev/null
	{
		walkers
		echo "cachedopen $FILE"
		have uring-open && echo "uring-open $FILE"
	} >"$RELY_TMP/cmds"
	while read -r line; do
		cmd=${line%% *}
		for kb in 4096 8192 12288 16384 24576 32768 65536; do
			# shellcheck disable=SC2086
			runf bash -c "ulimit -v $kb && exec \"\$@\"" - $line
			if [ "$RC" = 127 ] && grep -q "error while loading shared libraries\|cannot allocate TLS data structures for initial thread" "$ERRF"; then
				continue # the dynamic loader itself could not map libc
			fi
			case $RC in
			0 | 1) ;;
			2 | 3) assertNotEquals "$cmd -v $kb: exit $RC says why" "" "$ERR" ;;
			*) fail "$cmd under ulimit -v $kb: exit $RC: $ERR" ;;
			esac
		done
	done <"$RELY_TMP/cmds"
	# The common case must work: 64 MiB is plenty for these trees.
	runf bash -c 'ulimit -v 65536 && exec "$@"' - "$WALKPRINT" "$MNT/dw"
	assertEquals "walkprint in 64 MiB" 0 "$RC"
}

# Output to /dev/full: ENOSPC on write is exit 2 and one message.
test_dev_full() {
	local line cmd
	cat "$FILE" >/dev/null
	{
		echo "cachedopen $FILE"
		echo "cachedopen --json $FILE"
		have dcache-probe && echo "dcache-probe -r $MNT/dw" && echo "dcache-probe -r --json $MNT/dw" &&
			echo "dcache-probe -r -0 $MNT/dw" && echo "dcache-probe -r --prometheus $MNT/dw"
		have warm && echo "warm -r -v $MNT/dw" && echo "warm -r --json $MNT/dw"
		have uring-open && echo "uring-open $FILE" && echo "uring-open --json $FILE"
	} >"$RELY_TMP/cmds"
	while read -r line; do
		# shellcheck disable=SC2086
		timeout -k 10 "$RELY_TIMEOUT" $line >/dev/full 2>"$ERRF" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
		RC=$?
		assertEquals "$line >/dev/full: exit 2" 2 "$RC"
		assertContains "$line >/dev/full: says so" "$(cat "$ERRF")" "No space left on device"
	done <"$RELY_TMP/cmds"
}

# pipe_run CMD... - run CMD into `head -1`; sets RC (the command's status)
# and ERRF.  SIGPIPE disposition as given by PIPE_SIG (default or ignore).
pipe_run() {
	timeout -k 10 "$RELY_TIMEOUT" env --"${PIPE_SIG}"-signal=PIPE "$@" 2>"$ERRF" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- |
		head -1 >/dev/null
	RC=${PIPESTATUS[0]}
}

# More output than a pipe holds, so the command is still writing when the
# reader leaves.
pipe_cmds() {
	echo "cachedopen $(printf "$FILE %.0s" $(seq 30000))"
	echo "$WALKPRINT $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw"
	have dcache-probe && echo "dcache-probe -r $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw"
	have warm && echo "warm -r -v $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw $MNT/dw"
	have uring-open && echo "uring-open -n 20000 $FILE"
}

# `CMD | head -1` in a shell (SIGPIPE at its default): the command dies
# of SIGPIPE (status 141) without a word, like every Unix filter.
test_closed_pipe_sigpipe_default() {
	local line
	cat "$FILE" >/dev/null
	PIPE_SIG=default
	while read -r line; do
		# shellcheck disable=SC2086
		pipe_run $line
		assertEquals "${line:0:40}...: killed by SIGPIPE, quietly" 141 "$RC"
		assertEquals "${line:0:40}...: nothing on stderr" "" "$(cat "$ERRF")"
	done < <(pipe_cmds)
}

# cpu_min N LIMIT CMD... - the least user+system CPU seconds of N runs of
# CMD under ulimit -n LIMIT ("-" for none); "fail" if a run fails or takes
# over 60 s (a quadratic walk of the deep chains below would take minutes).
cpu_min() {
	python3 - "$@" <<'EOF'
import resource, subprocess, sys
runs, limit, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
def pre():
    if limit != "-":
        n = int(limit)
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
best = None
for _ in range(runs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           preexec_fn=pre, timeout=60)
    except subprocess.TimeoutExpired:
        print("fail"); sys.exit(0)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        print("fail"); sys.exit(0)
    t = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    best = t if best is None else min(best, t)
print("%.3f" % best)
EOF
}

# Cost is linear in depth: chains of 6,000 and 12,000 levels with two
# siblings per level (files, or directories whose parent must be kept or
# reopened), on tmpfs, with plenty of descriptors and under ulimit -n 12.
# Doubling the depth may not more than triple the CPU time.  (Rebuilding
# each directory's path from the root, and reopening evicted directories
# from the nearest open ancestor, were quadratic: 4x and worse.)
test_deep_chain_time_linear_in_depth() {
	local n=6000 shape lim t1 t2 line cmd
	TMPFS=$(mktemp -d "$RELY_TMP/tmpfs.XXXXXX")
	mount -t tmpfs -o size=256M,mode=0755 tmpfs "$TMPFS" || { fail "tmpfs"; return; }
	for shape in 0 1; do
		mkdir "$TMPFS/c$shape-$n" "$TMPFS/c$shape-$((2 * n))"
		python3 "$DCP_TESTS/lib/mktree.py" chain "$TMPFS/c$shape-$n" $n $shape >/dev/null || fail "mktree chain"
		python3 "$DCP_TESTS/lib/mktree.py" chain "$TMPFS/c$shape-$((2 * n))" $((2 * n)) $shape >/dev/null || fail "mktree chain"
	done
	while read -r shape lim line; do
		cmd="${line%% *} (sides $shape, ulimit -n $lim)"
		# shellcheck disable=SC2086
		t1=$(cpu_min 3 "$lim" $line "$TMPFS/c$shape-$n")
		# shellcheck disable=SC2086
		t2=$(cpu_min 3 "$lim" $line "$TMPFS/c$shape-$((2 * n))")
		echo "  $line (sides $shape, ulimit -n $lim): $n levels ${t1} s, $((2 * n)) levels ${t2} s CPU"
		assertNotEquals "$cmd: $n levels ran" fail "$t1"
		assertNotEquals "$cmd: $((2 * n)) levels ran (within 60 s)" fail "$t2"
		{ [ "$t1" = fail ] || [ "$t2" = fail ]; } && continue
		# 20 ms of slack for process start-up at the small end.
		assertTrue "$cmd: twice as deep costs ${t2} s against ${t1} s" \
			"awk -v a=$t1 -v b=$t2 'BEGIN { exit !(b <= 3 * a + 0.02) }'"
	done <<EOT
0 - $DCP_BIN/dcache-probe -r -s -j1
1 - $DCP_BIN/dcache-probe -r -s -j1
1 - $DCP_BIN/dcache-probe -r -s -j2
1 12 $DCP_BIN/dcache-probe -r -s -j1
1 - $DCP_BIN/warm -r
1 12 $DCP_BIN/warm -r
EOT
	umount "$TMPFS"
}

# big_grid - prints a tmpfs directory holding 200 directories of 1,000
# empty files (200,201 entries with the root), made once per suite run;
# the fixture cleanup unmounts it.
big_grid() {
	local t=$RELY_TMP/grid
	if ! mountpoint -q "$t"; then
		mkdir -p "$t" &&
			mount -t tmpfs -o size=256M,nr_inodes=300000,mode=0755 tmpfs "$t" &&
			python3 "$DCP_TESTS/lib/mktree.py" grid "$t" 200 1000 >/dev/null || return 1
	fi
	echo "$t"
}

# A probe that fails is an error in every output and in the exit status,
# never a silent gap in the counts.  Deterministic: under prlimit
# --nofile=4 the list file takes the last descriptor while the first 1,024
# paths are probed.  Then a 200,000-entry tree with -j 48 under ulimit -n
# 200: warm sizes its threads and the walker's budget within the limit
# (its own descriptors included), or says what failed.
test_check_counts_failed_probes_as_errors() {
	local t j
	have warm || return 0
	t=$(big_grid) || { fail "tmpfs grid"; return; }
	find "$t/d0" "$t/d1" "$t/d2" -type f >"$RELY_TMP/list3k"
	runf prlimit --nofile=4 warm --check -j 1 --from "$RELY_TMP/list3k"
	assertEquals "warm --check, probes failing: exit 2 ($(tail -1 "$ERRF"))" 2 "$RC"
	assertContains "each failed probe named" "$ERR" ": cannot probe: Too many open files"
	assertNotContains "the summary counts them" "$(tail -1 "$ERRF")" " 0 errors"
	runf prlimit --nofile=4 warm --check --json -j 1 --from "$RELY_TMP/list3k"
	assertEquals "warm --check --json, probes failing: exit 2" 2 "$RC"
	assertTrue "JSON: the failed probes carry EMFILE" \
		"grep -q '\"op\":\"probe\",\"errno\":\"EMFILE\"' '$OUTF'"
	assertEquals "JSON: status 2 and errors counted" "2 True" \
		"$(tail -1 "$OUTF" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["status"], s["errors"] > 0)')"
	for j in 1 2 3; do
		runf bash -c 'ulimit -n 200 && exec "$@"' - warm -r --check --json -j 48 "$t"
		assertTrue "warm -r --check -j 48 under ulimit -n 200: exit $RC" "[ $RC -eq 0 ] || [ $RC -eq 2 ]"
		# Every entry is cached afterwards or counted as an error; exit 0
		# only when all are cached.
		assertEquals "run $j: counts add up ($(tail -1 "$OUTF"))" ok "$(tail -1 "$OUTF" | python3 -c '
import json, sys
s = json.load(sys.stdin)
ok = s["cached_after"] + s["errors"] >= s["entries"] == 200201
ok = ok and (s["status"] != 0 or (s["errors"] == 0 and s["cached_after"] == s["entries"]))
print("ok" if ok else "bad")')"
	done
}

# A record too long for the memory left (getdelim fails with ENOMEM and
# no stream error) is an error naming the record, exit 2: never a list
# cut short in silence.  Plain build only (ASan reserves terabytes).
test_path_list_out_of_memory() {
	local cmd z f
	sanitized && { echo "  (skipped under sanitizers)"; return 0; }
	python3 -c '
import sys
for name, sep in (("nl", b"\n"), ("nul", b"\0")):
    open(sys.argv[1] + "." + name, "wb").write(b"/" + sep + b"a" * (64 << 20) + sep + b"/tmp" + sep)
' "$RELY_TMP/huge"
	for z in nl nul; do
		f=$RELY_TMP/huge.$z
		for cmd in "dcache-probe" "warm" "uring-open --bench"; do
			have "${cmd%% *}" || continue
			# shellcheck disable=SC2086
			runf bash -c 'ulimit -v 40000 && exec "$@"' - $cmd "$([ $z = nul ] && echo --files0-from || echo --from)=$f"
			assertEquals "$cmd ($z) under ulimit -v: exit 2 ($ERR)" 2 "$RC"
			assertContains "$cmd ($z): the error is named" "$ERR" "Cannot allocate memory"
		done
	done
	rm -f "$RELY_TMP"/huge.*
}

# With SIGPIPE ignored, a closed pipe stops the run at the first failed
# write: warm -r -v used to warm all 200,201 entries, then say "Broken
# pipe".  Both walking commands now stop well before the end.
test_closed_pipe_stops_the_run() {
	local t n
	t=$(big_grid) || { fail "tmpfs grid"; return; }
	PIPE_SIG=ignore
	if have warm; then
		pipe_run warm -r -v "$t"
		assertEquals "warm -r -v | head -1, SIGPIPE ignored: exit 2" 2 "$RC"
		n=$(grep -o '^warm: [0-9]* entries' "$ERRF" | grep -o '[0-9]*')
		assertTrue "warm stopped early: ${n:-?} of 200201 entries warmed" "[ ${n:-200201} -lt 150000 ]"
	fi
	if have dcache-probe; then
		pipe_run dcache-probe -r "$t"
		assertEquals "dcache-probe -r | head -1: exit 2" 2 "$RC"
		n=$(grep -o ': [0-9]* paths' "$ERRF" | grep -o '[0-9]*')
		assertTrue "dcache-probe stopped early: ${n:-?} of 200201 probed" "[ ${n:-0} -lt 150000 ]"
	fi
}

# When the parent ignores SIGPIPE (some daemons and CI runners do), the
# write fails with EPIPE: the command stops at once with exit 2 and one
# "write error: Broken pipe" line, as GNU coreutils do (warm's usual summary
# line may come first).  No hang, no message per remaining path.
test_closed_pipe_sigpipe_ignored() {
	local line
	cat "$FILE" >/dev/null
	PIPE_SIG=ignore
	while read -r line; do
		# shellcheck disable=SC2086
		pipe_run $line
		assertEquals "${line:0:40}...: EPIPE is exit 2" 2 "$RC"
		assertTrue "${line:0:40}...: at most one write error: $(head -3 "$ERRF")" \
			"[ $(grep -c 'Broken pipe' "$ERRF") -le 1 ]"
		assertTrue "${line:0:40}...: nothing else but a summary: $(head -3 "$ERRF")" \
			"[ $(grep -vc 'Broken pipe' "$ERRF") -le 1 ]"
	done < <(pipe_cmds)
}

. "$SHUNIT2"
