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

# floor CMD - the descriptor floor CMD's man page states ("CMD needs at
# least N open file descriptors").
floor() {
	grep -o "needs at least [0-9]* open file descriptors" "$DCP_SRC/man/$1.1" | head -1 |
		grep -o '[0-9][0-9]*'
}

# heavy CMD - "ARGS" lines: runs of CMD with the options that hold the
# most descriptors at once (measured: the floor is the least limit under
# which all of them complete), over the deep and wide tree, with --output
# into $RELY_TMP/out (under which FILE is $RELY_TMP/out/F).
heavy() {
	local o=--output=$RELY_TMP/out/F
	case $1 in
	cachedopen)
		echo "--path --pages --explain --retry --json $o --from=$RELY_TMP/dwfiles"
		echo "--pages --json $o $FILE"
		;;
	dcache-probe)
		echo "-r -L --pages --ranges --json --explain $o -j 8 $MNT/dw $MNT/dw/d0"
		echo "-r -s --pages --prometheus --per-mount $o -j 8 $MNT/dw"
		echo "-r -x --exclude-fstype=none --pages --per-mount --json $o $MNT/dw"
		echo "--manifest=$RELY_TMP/M --json $o"
		;;
	warm)
		echo "-r -L --pages --check --json $o -j 8 $MNT/dw $MNT/dw/d0"
		echo "-r --pages --pages-method=uring --prometheus $o -j 8 $MNT/dw"
		echo "--manifest=$RELY_TMP/M --json $o"
		echo "--pages --check --json $o --from=$RELY_TMP/dwfiles"
		;;
	uring-open)
		echo "--pages --json --explain $o -n 5 $FILE"
		echo "--bench --json $o --from=$RELY_TMP/dwfiles"
		echo "--bench --direct --json $o --from=$RELY_TMP/dwfiles"
		;;
	esac
}

# shape - what a run's output (stdin) must keep whatever the descriptor
# limit: its records' types and paths, states other than a miss (a mount
# anywhere on the machine can make one cached lookup miss), data measured
# or not, counts of entries and files, and every errno; not times, fds,
# depths (which of two overlapping roots reaches an entry first), the
# bench's depth in flight or thread counts.
shape() {
	python3 -c '
import json, re, sys
for line in sys.stdin:
    line = line.rstrip("\n")
    try:
        o = json.loads(line)
    except ValueError:
        # Prometheus: the series and its value, but for times and gauges
        # of the machine.
        if line.startswith("#") or re.match(r"dcprobe_(duration|last_run|warm_jobs|pages_(evicted|recently))", line):
            continue
        name, _, value = line.rpartition(" ")
        if re.match(r"dcprobe_exit_status", line):
            value = "0" if value == "1" else value  # a spurious miss
        elif not re.match(r"dcprobe_(complete|walk_errors|not_visited)|dcprobe_paths.*state=\"error\"", line):
            value = ""  # counts a spurious miss moves, or times
        print(name, value)
        continue
    if o.get("type") == "path" and o.get("after") == "miss" and "errno" not in o:
        continue  # warm --check: one that still misses after the stat
    keep = {k: o.get(k) for k in ("type", "path", "kind", "errno", "data", "data_reason",
                                 "paths", "entries", "error", "errors", "not_visited",
                                 "walk_errors", "complete", "opens", "failed")}
    if o.get("state") not in (None, "miss", "cached"):
        keep["state"] = o["state"]
    if o.get("errno") == "EAGAIN":
        keep["errno"] = None
    # Measured, or unknown after a miss (of the entry, or of the lookup
    # that --path --pages makes again): the same to the limit.  Unknown
    # for another reason (the mount table not read: "filesystem") is not.
    if keep["data"] == "measured" or keep["data_reason"] in ("miss", "lookup"):
        keep["data"] = keep["data_reason"] = None
    if isinstance(o.get("data"), dict):
        d = o["data"]
        keep["data"] = {"files": d.get("files", 0) + d.get("unknown", 0), "errors": d.get("errors")}
    print(json.dumps(keep, sort_keys=True))
' | sort
}

# Each command needs a number of descriptors it states in its man page
# (the floor).  Under every limit from 3 up to the floor + 2, with the
# options that hold the most: below the floor the run does not start and
# says so in one line, exit 2, nothing on stdout, FILE (--output) left as
# it was and no temporary, warm warms nothing of a cold tree; under 3 the
# dynamic loader may say it first (exit 127).  From the floor on, every
# run gives what an unlimited one gives: every entry, every file measured,
# no EMFILE, the same exit status.  (Before: dcache-probe -r -s exited 2
# without a word under 4 and 5 with its JSON "complete":true over 8 of
# the tree's paths; cachedopen --path --pages reported data "unknown:
# filesystem" under 9, libmount failing to load, exit 0.)
test_descriptor_floor() {
	local cmd n fl args want got wrc
	mkdir -p "$RELY_TMP/out"
	find "$MNT" -exec stat {} + >/dev/null # every entry cached
	find "$MNT/dw" -type f >"$RELY_TMP/dwfiles"
	"$DCP_BIN/dcache-probe" -r --ranges --json "$MNT/dw" >"$RELY_TMP/M"
	for cmd in cachedopen dcache-probe warm uring-open; do
		have "$cmd" || continue
		fl=$(floor "$cmd")
		assertTrue "$cmd.1 states its floor" "[ -n '$fl' ]"
		[ -n "$fl" ] || continue
		while read -r args; do
			# shellcheck disable=SC2086
			runf "$cmd" $args
			wrc=$RC
			want=$(shape <"$RELY_TMP/out/F")
			assertNotEquals "$cmd $args: unlimited, some output" "" "$want"
			for ((n = 3; n <= fl + 2; n++)); do
				echo old >"$RELY_TMP/out/F"
				# shellcheck disable=SC2086
				runf bash -c "ulimit -n $n && exec \"\$@\"" - "$cmd" $args
				if ((n < fl)); then
					if [ "$n" = 3 ] && [ "$RC" = 127 ] &&
						grep -q "error while loading shared libraries: .*Error 24" "$ERRF"; then
						:
					else
						assertEquals "$cmd $args, limit $n: exit 2 ($ERR)" 2 "$RC"
						assertEquals "$cmd $args, limit $n: said" \
							"$cmd: needs at least $fl open file descriptors, RLIMIT_NOFILE (ulimit -n) is $n" "$ERR"
					fi
					assertEquals "$cmd, limit $n: nothing on stdout" "" "$(cat "$OUTF")"
					assertEquals "$cmd, limit $n: FILE as it was" old "$(cat "$RELY_TMP/out/F")"
				else
					# 0 and 1 alike: a spurious miss (see shape).
					assertEquals "$cmd $args, limit $n: the exit status of an unlimited run ($ERR)" \
						"${wrc/1/0}" "${RC/1/0}"
					assertNotContains "$cmd $args, limit $n" "$ERR" "Too many open files"
					got=$(shape <"$RELY_TMP/out/F")
					assertEquals "$cmd $args, limit $n: what an unlimited run gives:
$(diff <(echo "$want") <(echo "$got") | head -5)" "$want" "$got"
				fi
				assertEquals "$cmd, limit $n: no temporary file" F "$(ls -A "$RELY_TMP/out")"
			done
		done < <(heavy "$cmd")
	done
	# As nobody, the same floor and the same words.
	for cmd in cachedopen dcache-probe warm uring-open; do
		have "$cmd" || continue
		fl=$(floor "$cmd")
		args=$MNT/file
		[ "$cmd" = cachedopen ] || [ "$cmd" = uring-open ] || args="-r $MNT/dw"
		# shellcheck disable=SC2086
		runf as_nobody bash -c "ulimit -n $((fl - 1)) && exec \"\$@\"" - "$DCP_BIN/$cmd" $args
		assertEquals "nobody, $cmd under $((fl - 1)): said, exit 2" \
			"2 $DCP_BIN/$cmd: needs at least $fl open file descriptors, RLIMIT_NOFILE (ulimit -n) is $((fl - 1))" \
			"$RC $ERR"
		# shellcheck disable=SC2086
		runf as_nobody bash -c "ulimit -n $fl && exec \"\$@\"" - "$DCP_BIN/$cmd" $args
		assertTrue "nobody, $cmd at $fl: done ($RC: $ERR)" "[ $RC -le 1 ]"
		assertNotContains "nobody, $cmd at $fl" "$ERR" "Too many open files"
	done
	# Below the floor nothing starts: a cold tree stays cold under warm.
	fixture_cold "$MNT" || fail "remount"
	runf bash -c "ulimit -n $(($(floor warm) - 1)) && exec \"\$@\"" - warm -r "$MNT/dw"
	assertEquals "warm below its floor: exit 2" 2 "$RC"
	assertEquals "warm below its floor: the tree is still cold" "miss $MNT/dw/d0" \
		"$("$DCP_BUILD/tests/oprobe" "$MNT/dw/d0")"
	find "$MNT" -exec stat {} + >/dev/null # warm again for the other tests
}

# At its floor each command still closes what it opens: any number of
# paths (cachedopen 200 opens, uring-open 50 rings, warm --from every path
# of the tree, uring-open --bench the whole list).
test_many_opens_at_the_floor() {
	cat "$FILE" >/dev/null
	runf bash -c "ulimit -n $(floor cachedopen) && exec \"\$@\"" - cachedopen $(for i in $(seq 200); do echo "$FILE"; done)
	assertEquals "cachedopen: 200 opens at the floor" 0 "$RC"
	assertEquals 200 "$(grep -c 'open: 3$' "$OUTF")"
	if have uring-open; then
		runf bash -c "ulimit -n $(floor uring-open) && exec \"\$@\"" - uring-open -n 50 "$FILE"
		# (0, or 1 if a concurrent mount elsewhere made one open punt.)
		assertTrue "uring-open: 50 rings at the floor ($RC: $ERR)" "[ $RC -le 1 ]"
		assertEquals "uring-open: 50 opens, each with a descriptor" 50 "$(grep -c ' fd [0-9]' "$OUTF")"
		find "$MNT/dw" -type f >"$RELY_TMP/list"
		runf bash -c "ulimit -n $(floor uring-open) && exec \"\$@\"" - uring-open --bench --from="$RELY_TMP/list"
		assertTrue "uring-open --bench at the floor: done ($RC: $ERR)" "[ $RC -le 1 ]"
		assertContains "uring-open --bench: every path, none failed" "$(cat "$OUTF")" \
			"$(wc -l <"$RELY_TMP/list") opens"
		assertContains "uring-open --bench: none failed" "$(cat "$OUTF")" " 0 failed"
	fi
	if have warm; then
		find "$MNT/dw" >"$RELY_TMP/list"
		runf bash -c "ulimit -n $(floor warm) && exec \"\$@\"" - warm -v --from "$RELY_TMP/list"
		assertEquals "warm --from at the floor ($ERR)" 0 "$RC"
		assertEquals "warm --from: every path" "$NDW" "$(entry_count "$OUTF")"
	fi
}

# withfds LIMIT FREE CMD... - run CMD (runf) under RLIMIT_NOFILE LIMIT with
# descriptors given by its parent, FREE numbers left free below LIMIT.
withfds() {
	local limit=$1 free=$2
	shift 2
	runf python3 "$DCP_TESTS/lib/withfds.py" "$limit" "$free" "$@"
}

# Descriptors a parent leaves open count against the limit: near the
# floor they are counted, and too few left is said (exit 2) before the
# run; exactly enough, the run is complete.  Under a limit of 256 or more
# they are not counted: a run that then runs out (EMFILE) says so on
# stderr, counts the directories it could not probe or list as walk
# errors, and no output calls it complete (JSON "complete":false, dcprobe_complete 0,
# exit 2).  (Before: with one descriptor free, dcache-probe -r -s --json
# exited 2 without a word, its summary "complete":true over 8 of the
# tree's paths; warm's metrics said dcprobe_complete 1.)
test_descriptors_given_by_the_parent() {
	local cmd fl free full n
	for cmd in dcache-probe warm; do
		have "$cmd" || continue
		fl=$(floor "$cmd")
		withfds 40 $((fl - 4)) "$cmd" -r "$MNT/dw"
		assertEquals "$cmd, $((fl - 4)) free under 40: exit 2" 2 "$RC"
		assertEquals "$cmd, $((fl - 4)) free under 40: said" \
			"$cmd: needs at least $fl open file descriptors, RLIMIT_NOFILE (ulimit -n) is 40 and $((40 - fl + 4)) are open already ($((40 - fl + 1)) besides standard input, output and error)" "$ERR"
	done
	runf dcache-probe -r -s --json "$MNT/dw"
	full=$(json_get 'objs[-1]["paths"]' <"$OUTF")
	withfds 40 $(($(floor dcache-probe) - 3)) dcache-probe -r -s --json "$MNT/dw"
	# (Exit 1 for a spurious miss: a mount anywhere on the machine.)
	assertEquals "floor - 3 free under 40: complete ($ERR)" "0 $full True" \
		"${RC/1/0} $(json_get '"%s %s" % (objs[-1]["paths"], objs[-1]["complete"])' <"$OUTF")"
	# One worker walks in one order: its 64-deep chain holds more
	# directories open than are free, so it runs out on every run.  With
	# more workers whether it runs out depends on how they interleave
	# (one CI run in several completed with 8 free); either way the
	# summary must be true: complete over every path, or not complete.
	for free in 1 2 3 4 5 6 8; do
		withfds 300 "$free" dcache-probe -r -s --json "$MNT/dw"
		n=$(json_get '"%s %s %s" % (objs[-1]["paths"], objs[-1]["complete"], objs[-1]["walk_errors"] > 0)' <"$OUTF")
		case "$RC $n" in
		"0 $full True False" | "1 $full True False") ;;
		"2 "*" False True")
			assertTrue "dcache-probe, $free free (workers as many as CPUs) under 300: said ($ERR)" \
				"grep -q 'Too many open files\|\"errno\":\"EMFILE\"' '$ERRF' '$OUTF'" ;;
		*) fail "dcache-probe, $free free (workers as many as CPUs) under 300: exit $RC, paths complete walk_errors: $n (complete: $full paths)" ;;
		esac
		withfds 300 "$free" dcache-probe -j1 -r -s --json "$MNT/dw"
		assertEquals "dcache-probe, $free free under 300: exit 2" 2 "$RC"
		assertEquals "dcache-probe, $free free under 300: not complete" "False" \
			"$(json_get 'objs[-1]["complete"]' <"$OUTF")"
		assertTrue "dcache-probe, $free free under 300: directories that could not be walked" \
			"[ $(json_get 'objs[-1]["walk_errors"]' <"$OUTF") -gt 0 ]"
		assertTrue "dcache-probe, $free free under 300: said ($ERR)" \
			"grep -q 'Too many open files\|\"errno\":\"EMFILE\"' '$ERRF' '$OUTF'"
		withfds 300 "$free" dcache-probe -j1 -r -s "$MNT/dw"
		assertEquals "dcache-probe -s, $free free under 300: exit 2" 2 "$RC"
		assertContains "dcache-probe -s, $free free under 300: said" "$ERR" "Too many open files"
		withfds 300 "$free" dcache-probe -j1 -r -s --prometheus "$MNT/dw"
		assertEquals "dcache-probe --prometheus, $free free: complete 0, exit 2" "0 2" \
			"$(prom_check "dcprobe_complete{command=\"dcache-probe\",root=\"$MNT/dw\"}" \
				"dcprobe_exit_status{command=\"dcache-probe\"}" <"$OUTF" | xargs)"
		withfds 300 "$free" warm -r --prometheus "$MNT/dw"
		n=$(prom_check "dcprobe_complete{command=\"warm\",root=\"$MNT/dw\"}" \
			"dcprobe_exit_status{command=\"warm\"}" <"$OUTF" | xargs)
		assertTrue "warm --prometheus, $free free: not complete and exit 2, or complete ($n)" \
			"[ '$n' = '0 2' ] || { [ '$n' = '1 0' ] && [ $RC = 0 ]; }"
		if [ "$n" = "0 2" ]; then
			assertContains "warm, $free free: said" "$ERR" "Too many open files"
		fi
	done
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
# from the nearest open ancestor, were quadratic: 4x and worse.)  Workers
# that wait for each other spin a little on the walker's lock, so their
# CPU time also follows how busy the machine is (warm -r: 3.2x once under
# a CI run): with more than one worker the chains are 6,000 and 24,000
# levels, and four times as deep may cost at most eight times as much
# (quadratic: 16x).
test_deep_chain_time_linear_in_depth() {
	local n=6000 shape lim t1 t2 line cmd f
	TMPFS=$(mktemp -d "$RELY_TMP/tmpfs.XXXXXX")
	mount -t tmpfs -o size=512M,mode=0755 tmpfs "$TMPFS" || { fail "tmpfs"; return; }
	for shape in 0 1; do
		mkdir "$TMPFS/c$shape-$n" "$TMPFS/c$shape-$((2 * n))"
		python3 "$DCP_TESTS/lib/mktree.py" chain "$TMPFS/c$shape-$n" $n $shape >/dev/null || fail "mktree chain"
		python3 "$DCP_TESTS/lib/mktree.py" chain "$TMPFS/c$shape-$((2 * n))" $((2 * n)) $shape >/dev/null || fail "mktree chain"
	done
	mkdir "$TMPFS/c1-$((4 * n))"
	python3 "$DCP_TESTS/lib/mktree.py" chain "$TMPFS/c1-$((4 * n))" $((4 * n)) 1 >/dev/null || fail "mktree chain"
	while read -r shape lim f line; do
		cmd="${line%% *} (sides $shape, ulimit -n $lim)"
		# shellcheck disable=SC2086
		t1=$(cpu_min 3 "$lim" $line "$TMPFS/c$shape-$n")
		# shellcheck disable=SC2086
		t2=$(cpu_min 3 "$lim" $line "$TMPFS/c$shape-$((f * n))")
		echo "  $line (sides $shape, ulimit -n $lim): $n levels ${t1} s, $((f * n)) levels ${t2} s CPU"
		assertNotEquals "$cmd: $n levels ran" fail "$t1"
		assertNotEquals "$cmd: $((f * n)) levels ran (within 60 s)" fail "$t2"
		{ [ "$t1" = fail ] || [ "$t2" = fail ]; } && continue
		# 20 ms of slack for process start-up at the small end.
		assertTrue "$cmd: $f times as deep costs ${t2} s against ${t1} s" \
			"awk -v a=$t1 -v b=$t2 -v f=$f 'BEGIN { exit !(b <= 2 * f * a - (f == 2 ? a : 0) + 0.02) }'"
	done <<EOT
0 - 2 $DCP_BIN/dcache-probe -r -s -j1
1 - 2 $DCP_BIN/dcache-probe -r -s -j1
1 - 4 $DCP_BIN/dcache-probe -r -s -j2
1 12 2 $DCP_BIN/dcache-probe -r -s -j1
1 - 4 $DCP_BIN/warm -r
1 12 2 $DCP_BIN/warm -r
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
# never a silent gap in the counts.  Deterministic: with one descriptor
# left free by the parent (withfds 300 1), the list file takes it while
# the first 1,024 paths are probed.  Then a 200,000-entry tree with -j 48 under ulimit -n
# 200: warm sizes its threads and the walker's budget within the limit
# (its own descriptors included), or says what failed.
test_check_counts_failed_probes_as_errors() {
	local t j
	have warm || return 0
	t=$(big_grid) || { fail "tmpfs grid"; return; }
	find "$t/d0" "$t/d1" "$t/d2" -type f >"$RELY_TMP/list3k"
	# Descriptors given by the parent, not counted under a limit of 300.
	withfds 300 1 warm --check -j 1 --from "$RELY_TMP/list3k"
	assertEquals "warm --check, probes failing: exit 2 ($(tail -1 "$ERRF"))" 2 "$RC"
	assertContains "each failed probe named" "$ERR" ": cannot probe: Too many open files"
	assertNotContains "the summary counts them" "$(tail -1 "$ERRF")" " 0 errors"
	withfds 300 1 warm --check --json -j 1 --from "$RELY_TMP/list3k"
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

# An address space so small that libmount (or libblkid) cannot be mapped
# when the mount table is first read: the run says it is out of memory
# (ENOMEM, "Cannot allocate memory"), never that a shared library cannot be
# accessed (ELIBACC: what a missing libmount is).  (Before, warm under
# ulimit -v 3000-4000: "cannot read the mount table: Can not access a
# needed shared library".)
test_ulimit_v_loading_libmount_is_out_of_memory() {
	local line kb said=0
	if sanitized; then
		startSkipping
		return
	fi
	while read -r line; do
		for kb in 2500 3000 3500 4000 4500 5000 6000; do
			# shellcheck disable=SC2086
			runf bash -c "ulimit -v $kb && exec \"\$@\"" - $line
			if [ "$RC" = 127 ] && grep -q "error while loading shared libraries\|cannot allocate TLS data structures for initial thread" "$ERRF"; then
				continue # the dynamic loader itself could not map libc
			fi
			assertNotContains "$line under ulimit -v $kb: exit $RC" "$ERR" "needed shared library"
			if grep -q "mount table: Cannot allocate memory" "$ERRF"; then
				said=$((said + 1))
				assertEquals "$line under ulimit -v $kb: exit 2" 2 "$RC"
			fi
		done
	done < <(printf '%s\n' "warm -r $MNT/dw" "dcache-probe -r $MNT/dw" "cachedopen --path --pages $FILE")
	assertTrue "some limit fails loading libmount, said as out of memory ($said)" "[ $said -ge 1 ]"
}

# The recorder's floor (DCP_FLOOR_RECORD, DCP_FLOOR_RECORD_PROCS and
# DCP_FLOOR_RECORD_START in lib/cmdrt/dcp_opts.h), stated in dcache-probe(1): under every limit below
# it a recording does not start, and says how many descriptors it needs;
# at the floor it records.  (Before: under 9 "too few open file
# descriptors to start the recording: RLIMIT_NOFILE is 9", no number;
# under 10 "at least 11", under 11 "at least 12".)
test_recorder_descriptor_floor() {
	local h=$DCP_SRC/lib/cmdrt/dcp_opts.h fl flp fls n by m=$RELY_TMP/rec.jsonl extra
	fl=$(sed -n 's/^[[:space:]]*DCP_FLOOR_RECORD = \([0-9]*\),.*/\1/p' "$h")
	flp=$(sed -n 's/^[[:space:]]*DCP_FLOOR_RECORD_PROCS = \([0-9]*\),.*/\1/p' "$h")
	assertNotNull "DCP_FLOOR_RECORD" "$fl"
	assertNotNull "DCP_FLOOR_RECORD_PROCS" "$flp"
	fls=$(sed -n 's/^[[:space:]]*DCP_FLOOR_RECORD_START = \([0-9]*\),.*/\1/p' "$h")
	assertNotNull "DCP_FLOOR_RECORD_START" "$fls"
	assertContains "dcache-probe.1 states it" "$(cat "$DCP_SRC/man/dcache-probe.1")" "$fls with"
	assertContains "dcache-probe.1 states it" "$(cat "$DCP_SRC/man/dcache-probe.1")" "The recorder's floor is $fl descriptors"
	assertContains "dcache-probe.1 states it" "$(cat "$DCP_SRC/man/dcache-probe.1")" "$flp with"
	for by in all pid start; do
		extra=()
		[ "$by" = pid ] && extra=(--pid=$$) && fl=$flp
		[ "$by" = start ] && extra=(--start=true) && fl=$fls
		for ((n = 9; n <= fl; n++)); do
			echo old >"$m"
			runf bash -c "ulimit -n $n && exec \"\$@\"" - dcache-probe --for=1s --listed \
				"${extra[@]}" --record="$m" "$MNT"
			if ((n < fl)); then
				assertEquals "$by, limit $n: refused, exit 2 ($ERR)" 2 "$RC"
				assertContains "$by, limit $n: the number needed said" "$ERR" \
					"RLIMIT_NOFILE (ulimit -n) is $n, at least $fl is needed here"
				assertEquals "$by, limit $n: FILE as it was" old "$(cat "$m")"
			else
				assertEquals "$by, limit $n: records ($ERR)" 0 "$RC"
				assertContains "$by, limit $n: a recording" "$(cat "$m")" '"type":"recording"'
			fi
		done
	done
}

. "$SHUNIT2"
