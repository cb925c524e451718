#!/bin/bash
# The hostile matrix every mode inherits (issue 44; dcprobe DESIGN.md,
# "Every input is hostile"): a row per mode of the four commands, a column
# per hostile condition, and in every cell the same invariants:
#   - it ends within its bound (a hang is a failure, said as such);
#   - it never says complete when something was lost (exit status,
#     "complete" and "not_visited", "unresolved", "walk_errors", "error");
#   - no temporary is left beside its output file;
#   - nothing beyond the caller's permissions is revealed (a name in a
#     directory nobody may not read never reaches stdout, stderr or FILE);
#   - the output file is whole (JSON lines parse, an exposition passes
#     prom_check) or exactly as it was (checksum).
#
# The rows come from where the modes are declared: every long option in
# the --help of each built command (the argp option tables of cmd/*.c and
# lib/cmdrt/opts.c) is either a mode with a row here (MODE_OF) or a
# modifier of one (MODIFIERS); an option in neither fails the suite ("mode
# X has no row in the hostile matrix").  DCP_MATRIX_FAKE_MODE=CMD:--OPT
# (read by this suite only) adds an option to what --help said: the control
# that the check fails on a mode added without a row.
#
# A cell whose bound is a rule of the design (RULE: a FUSE root stalls until
# a signal ends it) checks that rule, named under the table.
# Cells that make no sense are N/A in the table, with their reason.  At the
# end the matrix is printed with its size, its cells passing, N/A and
# failing, and its runtime.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

START=$EPOCHREALTIME
SECRET=hidden-name-secret

# The rows: one per mode.
ROWS=(walk pages per-dir per-mount explain snapshot verify restore record record-start
	warm warm-check cachedopen uring-open uring-bench prometheus diagnose)
# The columns: one per hostile condition.
COLS=(fuse-in fuse-root floor floor+1 vmem nobody race sigterm full)

# Which row each mode is: COMMAND (the command without a mode option) or
# COMMAND:--OPTION.
declare -A MODE_OF=(
	[dcache-probe]=walk [dcache-probe:--recursive]=walk
	[dcache-probe:--pages]=pages [dcache-probe:--per-dir]=per-dir
	[dcache-probe:--per-mount]=per-mount [dcache-probe:--explain]=explain
	[dcache-probe:--ranges]=snapshot [dcache-probe:--manifest]=verify
	[dcache-probe:--record]=record [dcache-probe:--start]=record-start
	[dcache-probe:--diagnose]=diagnose
	[dcache-probe:--prometheus]=prometheus [dcache-probe:--output]=prometheus
	[warm]=warm [warm:--recursive]=warm [warm:--manifest]=restore [warm:--check]=warm-check
	[cachedopen]=cachedopen
	[uring-open]=uring-open [uring-open:--bench]=uring-bench
)

# The options that are not modes: they choose what a mode looks at or how
# it says it, and run in the rows of their command's modes (the walk's
# filters and limits, the recorder's scope, the formats, the thresholds).
# An option here is declared, not forgotten: a new one must be put here or
# given a row.
declare -A MODIFIERS=(
	[dcache-probe]="--exclude --exclude-fstype --files0-from --from --dereference-args --jobs
		--dereference --max-depth --mindepth --name --no-perturb --no-dereference --type
		--one-file-system --total --human-readable --ignore-unvisited --min-cached
		--min-resident --no-headings --only --quiet --si --sort --summary --null --json --label
		--no-progress --progress --cgroup --for --listed --pid --usage --version --help"
	[warm]="--exclude --exclude-fstype --files0-from --from --dereference-args --jobs
		--dereference --max-bytes --max-depth --max-file-size --mindepth --name --pages
		--pages-method --no-dereference --type --one-file-system --total --human-readable
		--no-headings --quiet --si --summary --verbose --null --json --label --no-progress
		--output --progress --prometheus --usage --version --help"
	[cachedopen]="--files0-from --from --dereference --path --no-dereference --explain
		--human-readable --pages --quiet --retry --si --json --output --usage --version --help"
	[uring-open]="--async --cached --depth --direct --flags --no-defer --count --pages --trace
		--timeout --files0-from --from --explain --human-readable --quiet --si --json --output
		--usage --version --help"
)

# The cells that make no sense, with why.
declare -A NA=(
	[diagnose.fuse-in]="takes no PATH: no tree to hold a FUSE mount"
	[diagnose.fuse-root]="takes no PATH: no root to be a FUSE mount"
	[diagnose.sigterm]="reads no input and ends in milliseconds: no middle to signal"
)

# The defects the matrix found that are not fixed yet: CELL="WHAT: why",
# WHAT a part of what the cell reports.  Such a cell is KNOWN in the table,
# reported, not failed; once it passes it fails until it is taken out.
# (None now: a defect found is fixed, or the cell checks the design's own
# bound, RULE below.)
declare -A KNOWN

# The cells whose bound is a rule of the design rather than BOUND seconds:
# CELL="the rule", printed with the table and checked by the cell.
declare -A RULE
# A FUSE mount the user named as a root is listed through its daemon, as ls
# would (DESIGN.md, "Every input is hostile"; dcprobe(7)): a stopped daemon
# stalls the run until it answers or a signal ends it.  The cell: a run
# still going after STALL_TERM seconds is sent SIGTERM, and must end within
# 1 s of it, of the signal (exit 143), FILE as it was, no temporary,
# nothing claimed complete; a run that ends by itself before is judged as
# any cell.
STALL_TERM=3
for r in walk pages per-dir per-mount explain snapshot warm warm-check prometheus; do
	RULE[$r.fuse-root]="stall-until-signal: a FUSE root is listed through its daemon, as ls would (dcprobe(7)); SIGTERM after ${STALL_TERM} s ends it within 1 s, exit 143, FILE as it was, no temporary"
done
unset r

declare -A RESULT WHY EXITS

# The commands: one per cmd/*.c.
commands() {
	local c
	for c in "${DCP_SRC:-$DCP_TESTS/..}"/cmd/*.c; do
		c=${c##*/}
		echo "${c%.c}"
	done
}

# options CMD - the long options CMD's --help lists (first name of each).
options() {
	"$DCP_BIN/$1" --help | grep -oE '^ +(-[^ ,-], )*--[a-z0-9-]+' | sed 's/.*--/--/' | sort -u
	local f
	for f in ${DCP_MATRIX_FAKE_MODE:-}; do
		[ "${f%%:*}" = "$1" ] && echo "${f#*:}"
	done
}

# coverage - every command and option a row or a declared modifier: prints
# what is neither, and fails then.
coverage() {
	local cmd opt bad=0 row r found
	for cmd in $(commands); do
		row=${MODE_OF[$cmd]:-}
		if [ -z "$row" ]; then
			echo "mode $cmd has no row in the hostile matrix"
			bad=1
		fi
		if ! "$DCP_BIN/$cmd" --help 2>&1 | grep -q -- '--output'; then
			echo "cannot read the options of $cmd from its --help"
			bad=1
		fi
		for opt in $(options "$cmd"); do
			row=${MODE_OF[$cmd:$opt]:-}
			if [ -n "$row" ]; then
				found=
				for r in "${ROWS[@]}"; do [ "$r" = "$row" ] && found=1; done
				[ -n "$found" ] || { echo "mode $cmd $opt names row $row, not in the matrix"; bad=1; }
			elif ! [[ " $(xargs <<<"${MODIFIERS[$cmd]:-}") " == *" $opt "* ]]; then
				echo "mode $cmd $opt has no row in the hostile matrix"
				bad=1
			fi
		done
	done
	# And every row is some mode's.
	for r in "${ROWS[@]}"; do
		found=
		for row in "${MODE_OF[@]}"; do [ "$row" = "$r" ] && found=1; done
		[ -n "$found" ] || { echo "row $r is no mode's"; bad=1; }
	done
	return $bad
}

# floor CMD - the fewest descriptors CMD runs with, as lib/cmdrt states it.
floor_of() {
	local n=${1^^}
	sed -n "s/^[[:space:]]*DCP_FLOOR_${n//-/_} = \([0-9]*\),.*/\1/p" \
		"${DCP_SRC:-$DCP_TESTS/..}/lib/cmdrt/dcp_opts.h"
}

oneTimeSetUp() {
	MNT=$(fixture_new 16) || fail "cannot make fixture"
	# Where nobody can reach its output directories (FIXTURE_ROOT is 0755).
	WORK=$FIXTURE_ROOT/matrix
	mkdir -p "$WORK"
	chmod 0755 "$WORK"
	# T: a/ and b/ with files, c/ a directory nobody may not read.
	T=$MNT/T
	mktree "$T"
	mkdir -m 0700 "$T/c"
	echo known >"$T/c/known"
	# The manifests the restore and verify rows are given, made by root
	# before c/ holds the secret: its name is in no input, anywhere.
	dcache-probe -r --ranges --json "$T" >"$WORK/T.manifest" 2>/dev/null
	chmod 0644 "$WORK/T.manifest"
	echo s >"$T/c/$SECRET"
	mkdir "$T/c/$SECRET.d" && echo s >"$T/c/$SECRET.d/f"
	# TF: c/ a FUSE mount (bindfs of S); FR: a FUSE mount as the root.
	S=$MNT/S
	mktree "$S"
	mkdir "$S/c" && echo s >"$S/c/f"
	TF=$MNT/TF
	mktree "$TF"
	mkdir "$TF/c"
	FR=$MNT/FR
	mkdir "$FR"
	# A tiny tmpfs, filled up: the full column's output directory.
	FULL=$FIXTURE_ROOT/full
	mkdir -p "$FULL"
	mount -t tmpfs -o size=128k,mode=0755 tmpfs "$FULL" || fail "cannot mount a tmpfs"
	local r
	for r in "${ROWS[@]}"; do echo old >"$FULL/$r.out"; done
	dd if=/dev/zero of="$FULL/filler" bs=4k 2>/dev/null
	mkfifo "$WORK/hold"
	baselines
}

oneTimeTearDown() {
	fuse_cont
	fixture_cleanup
}

mktree() {
	mkdir -p "$1/a" "$1/b"
	local i
	for i in 1 2 3 4 5; do
		echo "a$i" >"$1/a/f$i"
		head -c 20000 /dev/urandom >"$1/b/g$i"
	done
}

# row_argv ROW ROOT MANIFEST - the command line of ROW over ROOT: A.
# Output goes to FILE through --output (--record for the recorder).
row_argv() {
	local r=$2 m=$3
	case $1 in
	walk) A=(dcache-probe -r --json "$r") ;;
	pages) A=(dcache-probe -r --pages --json "$r") ;;
	per-dir) A=(dcache-probe --per-dir=2 --json "$r") ;;
	per-mount) A=(dcache-probe -r --per-mount --json "$r") ;;
	explain) A=(dcache-probe -r --explain --json "$r") ;;
	snapshot) A=(dcache-probe -r --ranges --json "$r") ;;
	verify) A=(dcache-probe --manifest="$m" --json) ;;
	restore) A=(warm --manifest="$m" --json) ;;
	record) A=(dcache-probe --for=1s --listed "$r") ;;
	# The command it starts is the workload: it reads, then outlives --for
	# (left running, its output elsewhere).
	record-start) A=(dcache-probe --for=1s --listed
		--start="cat $r/a/* $r/b/* >/dev/null 2>&1; exec sleep 2 >/dev/null 2>&1" "$r") ;;
	warm) A=(warm -r --pages --json "$r") ;;
	warm-check) A=(warm -r --check --json "$r") ;;
	cachedopen) A=(cachedopen --pages --json "$r/a/f1" "$r/b/g1" "$r/c/known") ;;
	# (--timeout=1s: an open waiting on a stopped daemon is cancelled after
	# it, each one: three in a FUSE root end within the bound.)
	uring-open) A=(uring-open --timeout=1s --pages --json "$r/a/f1" "$r/b/g1" "$r/c/known") ;;
	# (The root itself too: a FUSE root's open blocks in the submit call,
	# inline, where the ring's timeout cannot reach it.)
	uring-bench) A=(uring-open --timeout=1s --bench --json "$r/a/f1" "$r/a/f2" "$r/b/g1" "$r/c/known" "$r") ;;
	prometheus) A=(dcache-probe -r --pages --prometheus "$r") ;;
	diagnose) A=(dcache-probe --diagnose --json) ;;
	esac
}

# out_opt ROW FILE - the option that sends ROW's output to FILE.
out_opt() {
	case $1 in
	record | record-start) echo "--record=$2" ;;
	*) echo "--output=$2" ;;
	esac
}

# bound ROW - seconds a run of ROW may take before it is a hang.
# (The recorder's --for=1s included: it ends within a second of it.)
bound() { echo 4; }

# workload ROOT - what the recorder sees: reads under ROOT, until killed.
workload_start() {
	(while :; do cat "$1"/a/* "$1"/b/* >/dev/null 2>&1; sleep 0.05; done) &
	WL=$!
}
workload_stop() {
	[ -n "${WL:-}" ] || return 0
	kill "$WL" 2>/dev/null
	wait "$WL" 2>/dev/null
	WL=
}

# go BOUND PRE -- CMD... - run CMD (its first word a command of DCP_BIN)
# after the shell code PRE (ulimit...), in the background with the standard
# descriptors alone; killed after BOUND seconds (HANG=1).  RC, ELAPSED
# (seconds), STDOUT and STDERR (files).  With SIGTERM_AFTER set, SIGTERM is
# sent after that many seconds, and ELAPSED counts from it.
go() {
	local bound=$1 pre=$2 pid t0 dl
	shift 3
	local cmd=$1
	shift
	STDOUT=$WORK/stdout STDERR=$WORK/stderr HANG= SIGNALLED=
	# shellcheck disable=SC2086
	${AS:+setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --} bash -c "$pre"'; exec "$@"' - "$DCP_BIN/$cmd" "$@" \
		>"$STDOUT" 2>"$STDERR" </dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	pid=$!
	t0=$EPOCHREALTIME
	dl=$(awk -v t="$t0" -v b="$bound" 'BEGIN { printf "%.6f", t + b }')
	if [ -n "${SIGTERM_AFTER:-}" ]; then
		sleep "$SIGTERM_AFTER"
		if kill -0 "$pid" 2>/dev/null && ! fixture_dead "$pid"; then
			SIGNALLED=1
		fi
		kill -TERM "$pid" 2>/dev/null
		t0=$EPOCHREALTIME
		dl=$(awk -v t="$t0" -v b="$bound" 'BEGIN { printf "%.6f", t + b }')
	fi
	while kill -0 "$pid" 2>/dev/null && ! fixture_dead "$pid"; do
		if awk -v n="$EPOCHREALTIME" -v d="$dl" 'BEGIN { exit !(n > d) }'; then
			# Past its bound: a hang.  Does SIGTERM end it (within 1 s)?
			if [ -z "$HANG" ]; then
				HANG=term
				kill -TERM "$pid" 2>/dev/null
				dl=$(awk -v t="$EPOCHREALTIME" 'BEGIN { printf "%.6f", t + 1 }')
			else
				HANG="kill"
				kill -KILL "$pid" 2>/dev/null
				break
			fi
		fi
		sleep 0.02
	done
	wait "$pid"
	RC=$?
	ELAPSED=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}

# parse ROW FILE - FILE is whole output of ROW: JSON lines or an exposition.
parse() {
	case $1 in
	prometheus) prom_check <"$2" >/dev/null 2>"$WORK/parse.err" ;;
	*) json_types <"$2" >/dev/null 2>"$WORK/parse.err" ;;
	esac
}

# judge WHAT ROW FILE RC - from ROW's output FILE (JSON lines or an
# exposition): WHAT=counts prints what a complete run counts (the summary's
# paths/entries/opens, the recording's files); WHAT=claims prints what it
# says that it should not: complete (or exit 0) although it counts
# something lost, an exit-status series that is not the exit status.
judge() {
	python3 -c '
import json, re, sys
what, row, path, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lost, unknown, counts, bad = [], [], [], []
complete = None
if row == "prometheus":
    s = {}
    for l in open(path):
        m = re.match(r"^([a-z_]+)(\{[^}]*\})? (\S+)$", l.strip())
        if m:
            s.setdefault(m.group(1), []).append((m.group(2) or "", float(m.group(3))))
    counts.append("paths=%d" % sum(v for _, v in s.get("dcprobe_paths", [])))
    for name in ("dcprobe_not_visited_dirs", "dcprobe_walk_errors"):
        v = sum(v for _, v in s.get(name, []))
        if v > 0:
            unknown.append("%s=%d" % (name, v))
    v = sum(v for l, v in s.get("dcprobe_paths", []) if "state=\"error\"" in l)
    if v > 0:
        lost.append("paths in error=%d" % v)
    c = s.get("dcprobe_complete")
    if c:
        complete = all(v == 1 for _, v in c)
    st = s.get("dcprobe_exit_status")
    if not st or int(st[0][1]) != rc:
        bad.append("dcprobe_exit_status %s, exit %d" % (st and st[0][1], rc))
else:
    for l in open(path):
        if not l.strip():
            continue
        o = json.loads(l)
        t = o.get("type")
        if t == "summary":
            counts += ["%s=%s" % (k, o[k]) for k in ("paths", "entries", "opens", "present") if k in o]
            if "complete" in o:
                complete = o["complete"]
        if t == "recording":
            counts.append("files=%s" % o["files"])
        if t in ("summary", "recording"):
            # Unknown content (no "complete" then) or a failed path (exit 2).
            for k in ("not_visited", "unresolved", "walk_errors", "stale_dirs", "overflows",
                      "error", "errors", "failed"):
                v = o.get(k)
                if isinstance(v, (int, float)) and v > 0:
                    (unknown if k in ("not_visited", "unresolved", "walk_errors", "stale_dirs",
                                      "overflows") else lost).append("%s=%s" % (k, v))
if what == "counts":
    print(" ".join(counts))
    sys.exit(0)
# "complete": whether what every directory holds is known (dcprobe.schema.json).
if unknown and complete is True:
    bad.append("says complete although %s" % ", ".join(unknown))
if (lost or unknown) and rc == 0:
    bad.append("exit 0 although %s" % ", ".join(lost + unknown))
if complete is False and rc == 0:
    bad.append("exit 0 although not complete")
print("; ".join(bad))
' "$@"
}

# verdict ROW COL - the invariants of the cell just run (go), with its
# output directory DIR, output file OF (with OLD, its checksum before) and
# the expectation EXPECT (lost: something was lost; signal: died of
# SIGTERM; full: exit 2, FILE as it was; same: the baseline's counts or
# exit 2 and said): RESULT and WHY.
verdict() {
	local row=$1 col=$2 why=() f now
	case $HANG in
	term) why+=("HANG: still running after $(bound "$row") s (SIGTERM then ended it)") ;;
	kill) why+=("HANG: still running after $(bound "$row") s, and 1 s after SIGTERM (killed)") ;;
	esac
	# The cell's own FILE refused at the start: the cell tested nothing.
	if [ "$col" != full ] && grep -q -e 'cannot create a file beside' -e ': not replaced' "$STDERR"; then
		why+=("the cell's FILE was refused, nothing was tested: $(head -c 200 "$STDERR")")
	fi
	case $RC in
	132 | 134 | 135 | 136 | 139) why+=("crashed (exit $RC)") ;;
	126 | 127) why+=("could not be run (exit $RC): $(head -c 200 "$STDERR")") ;;
	esac
	# No temporary beside FILE.
	for f in "$DIR"/.[!.]* "$DIR"/*; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		case ${f##*/} in
		"${OF##*/}" | fifo | filler | *.out) ;;
		*) why+=("left ${f##*/}") ;;
		esac
	done
	for f in "$DIR"/."${OF##*/}".*; do
		[ -e "$f" ] && why+=("left ${f##*/}")
	done
	# Nothing beyond the caller's permissions.
	if [ -n "${AS:-}" ] && grep -qF "$SECRET" "$STDOUT" "$STDERR" "$OF" 2>/dev/null; then
		why+=("revealed $SECRET")
	fi
	# The file whole or as it was.
	now=$(cksum <"$OF" 2>/dev/null)
	local published=
	if [ "$now" != "$OLD" ]; then
		published=1
		if [ ! -f "$OF" ]; then
			why+=("FILE is gone")
		elif ! parse "$row" "$OF"; then
			why+=("FILE is not whole: $(head -c 200 "$WORK/parse.err")")
		else
			local c
			c=$(judge claims "$row" "$OF" "$RC")
			# A snapshot is an action, "write a manifest": exit 0 once it is
			# written, what it missed in "complete" and "not_visited"
			# (probe_run.c, exit_status()).
			[ "$row" != snapshot ] || c=$(sed 's/exit 0 although [^;]*;* *//g' <<<"$c")
			[ -z "$c" ] || why+=("$c")
		fi
	elif [ -z "$HANG" ] && { [ "$RC" = 0 ] || [ "$RC" = 1 ]; } && [ "$row" != diagnose ]; then
		why+=("exit $RC and FILE not published")
	fi
	if [ -z "$HANG" ]; then
		case $EXPECT in
		stall)
			# Ended by itself before the signal: judged as any cell.
			if [ -n "$SIGNALLED" ]; then
				[ "$RC" = 143 ] || why+=("exit $RC, not the signal's 143")
				[ -z "$published" ] || why+=("FILE replaced by a run ended by SIGTERM")
				awk -v e="$ELAPSED" 'BEGIN { exit !(e <= 1.0) }' ||
					why+=("ended ${ELAPSED}s after SIGTERM (> 1 s)")
			fi
			;;
		lost)
			[ "$RC" != 0 ] || why+=("exit 0 although c/ could not be read")
			;;
		signal)
			if [[ $row == record* ]]; then
				[ "$RC" = 0 ] || why+=("exit $RC: SIGTERM is the recording's end ($(tail -c 200 "$STDERR"))")
				[ -n "$published" ] || why+=("no manifest after SIGTERM")
				awk -v e="$ELAPSED" 'BEGIN { exit !(e <= 1.0) }' ||
					why+=("ended ${ELAPSED}s after SIGTERM (> 1 s)")
			else
				[ "$RC" = 143 ] || why+=("exit $RC, not the signal's 143")
				[ -z "$published" ] || why+=("FILE replaced by a run killed by SIGTERM")
			fi
			;;
		full)
			[ "$RC" = 2 ] || why+=("exit $RC on a full filesystem")
			[ -z "$published" ] || why+=("FILE not as it was on a full filesystem")
			;;
		same)
			if [ "$RC" = "${BASE_RC[$row]}" ] && [ -n "$published" ] && [ "$row" != diagnose ]; then
				local c
				c=$(judge counts "$row" "$OF" "$RC")
				[ "$c" = "${BASE_COUNT[$row]}" ] ||
					why+=("exit $RC as unlimited, but counts '$c', not '${BASE_COUNT[$row]}'")
			elif [ "$RC" != "${BASE_RC[$row]}" ] && [ "$RC" != 2 ] && [ "$RC" != 3 ]; then
				why+=("exit $RC (unlimited: ${BASE_RC[$row]})")
			fi
			if [ "$RC" != "${BASE_RC[$row]}" ] && ! [ -s "$STDERR" ]; then
				why+=("exit $RC (unlimited: ${BASE_RC[$row]}) and nothing said on stderr")
			fi
			;;
		esac
	fi
	settle "$row" "$col" "$(IFS=';'; echo "${why[*]}")" "[exit $RC, ${ELAPSED}s]"
	EXITS[$row.$col]=$RC
	# DCP_MATRIX_VERBOSE=1: what each cell's run said.
	[ -z "${DCP_MATRIX_VERBOSE:-}" ] || sed "s|^|  $row x $col (exit $RC): |" "$STDERR" | head -3 >&2
}

# settle ROW COL WHY [DETAIL] - the cell's result: PASS without WHY; KNOWN
# when WHY is the defect KNOWN declares for it (reported, not failed);
# else FAIL, and a cell declared KNOWN that passes fails too (the
# declaration is stale).
settle() {
	local key=$1.$2 said=$3 known=${KNOWN[$1.$2]:-}
	if [ -z "$said" ] && [ -z "$known" ]; then
		RESULT[$key]=PASS
	elif [ -n "$known" ] && [ -n "$said" ] && [[ "$said" == *"${known%%:*}"* ]]; then
		RESULT[$key]=KNOWN
		WHY[$key]="$said ${4:-}"
	else
		RESULT[$key]=FAIL
		[ -n "$said" ] || said="declared a known defect ($known), but passes: remove it from KNOWN"
		WHY[$key]="$said ${4:-}"
		fail "$1 x $2: ${WHY[$key]}"
	fi
}

# cell_dir - a fresh output directory (nobody's with AS) with FILE "out"
# holding "old": DIR, OF, OLD.
cell_dir() {
	DIR=$(mktemp -d "$WORK/cell.XXXXXX")
	chmod 0755 "$DIR"
	OF=$DIR/out
	echo old >"$OF"
	[ -z "${AS:-}" ] || chown -R 65534:65534 "$DIR"
	OLD=$(cksum <"$OF")
}

# cell ROW COL ROOT MANIFEST PRE - run ROW over ROOT in a fresh directory
# and judge it.
cell() {
	local row=$1 col=$2 root=$3 m=$4 pre=$5
	# LeakSanitizer's check at exit waits for good on an io-wq worker left
	# blocked in a stopped FUSE daemon (measured: 9 s and SIGKILL with leak
	# checks, 1.03 s without); the leaks of uring-open are checked in
	# cmd/uring-open's other runs.
	case $row in uring-*) local -x ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" ;; esac
	if [ -n "${NA[$row.$col]:-}" ]; then
		RESULT[$row.$col]=N/A
		return
	fi
	cell_dir
	row_argv "$row" "$root" "$m"
	# (Not through the stopped daemon: the reader would wait for good.)
	[ "$row" = record ] && [ "$root" != "$FR" ] && workload_start "$root"
	if [ -n "${RULE[$row.$col]:-}" ]; then
		local expect=$EXPECT
		EXPECT=stall
		SIGTERM_AFTER=$STALL_TERM go "$(bound "$row")" "$pre" -- "${A[@]}" "$(out_opt "$row" "$OF")"
		workload_stop
		verdict "$row" "$col"
		EXPECT=$expect
	else
		go "$(bound "$row")" "$pre" -- "${A[@]}" "$(out_opt "$row" "$OF")"
		workload_stop
		verdict "$row" "$col"
	fi
	rm -rf "$DIR"
}

declare -A BASE_RC BASE_COUNT
baselines() {
	local row
	for row in "${ROWS[@]}"; do
		cell_dir
		row_argv "$row" "$T" "$WORK/T.manifest"
		[ "$row" = record ] && workload_start "$T"
		go 10 : -- "${A[@]}" "$(out_opt "$row" "$OF")"
		workload_stop
		BASE_RC[$row]=$RC
		BASE_COUNT[$row]=$(judge counts "$row" "$OF" "$RC" 2>/dev/null)
		rm -rf "$DIR"
	done
}

# fuse_mount SRC DIR - bindfs SRC on DIR, its daemon's pid in FUSE_PID.
fuse_mount() {
	bindfs -o entry_timeout=0.2,attr_timeout=0.2,negative_timeout=0.2 "$1" "$2" || fail "bindfs"
	FUSE_PID=$(fixture_pgrep "bindfs .*$2\$" | head -1)
	[ -n "$FUSE_PID" ] || fail "no bindfs daemon for $2"
}

# --- the rows' modes are the option tables' ---

test_every_mode_has_a_row() {
	local out
	out=$(coverage)
	assertTrue "every mode has a row: $out" "[ -z '$out' ]"
}

# The control: a mode added to a command's options without a row fails it.
test_a_mode_without_a_row_fails_the_matrix() {
	local out
	out=$(DCP_MATRIX_FAKE_MODE=dcache-probe:--frobnicate coverage)
	assertFalse "a fake mode fails the coverage" $?
	assertEquals "it is named" "mode dcache-probe --frobnicate has no row in the hostile matrix" "$out"
}

# The controls of the judge: outputs that lie are caught.
test_the_judge_catches_a_claim_of_completeness() {
	local f=$WORK/lie
	echo '{"type":"summary","paths":3,"not_visited":1,"complete":true,"status":0}' >"$f"
	assertEquals "complete with a directory not visited" \
		"says complete although not_visited=1; exit 0 although not_visited=1" "$(judge claims walk "$f" 0)"
	echo '{"type":"recording","files":0,"unresolved":213}' >"$f"
	assertEquals "a recording with unresolved events, exit 0" \
		"exit 0 although unresolved=213" "$(judge claims record "$f" 0)"
	echo '{"type":"summary","paths":3,"error":1,"complete":true,"status":2}' >"$f"
	assertEquals "a failed path, exit 2, every directory known" "" "$(judge claims verify "$f" 2)"
	printf '%s\n' '# HELP dcprobe_not_visited_dirs x' '# TYPE dcprobe_not_visited_dirs gauge' \
		'dcprobe_not_visited_dirs{root="t"} 2' '# HELP dcprobe_complete x' '# TYPE dcprobe_complete gauge' \
		'dcprobe_complete{root="t"} 1' '# HELP dcprobe_exit_status x' '# TYPE dcprobe_exit_status gauge' \
		'dcprobe_exit_status 1' >"$f"
	assertEquals "an exposition that says complete, and exit 0 while it said 1" \
		"dcprobe_exit_status 1.0, exit 0; says complete although dcprobe_not_visited_dirs=2; exit 0 although dcprobe_not_visited_dirs=2" \
		"$(judge claims prometheus "$f" 0)"
	rm -f "$f"
}

# --- the columns ---

# A FUSE mount whose daemon is stopped, inside the tree (c/).
test_fuse_inside_the_tree() {
	command -v bindfs >/dev/null || { fail "bindfs missing: the FUSE columns cannot run"; return; }
	local row
	fuse_mount "$S" "$TF/c"
	# Cached through the daemon, then snapshot: the manifest names them.
	find "$TF" -type f -exec cat {} + >/dev/null
	dcache-probe -r --ranges --json "$TF" >"$WORK/TF.manifest" 2>/dev/null
	fuse_stop "$FUSE_PID"
	sleep 0.5 # every entry and attribute of the mount has expired
	EXPECT=
	for row in "${ROWS[@]}"; do
		cell "$row" fuse-in "$TF" "$WORK/TF.manifest" :
	done
	fuse_cont
	umount "$TF/c"
}

# A FUSE mount whose daemon is stopped, as the root.
test_fuse_as_the_root() {
	command -v bindfs >/dev/null || { fail "bindfs missing: the FUSE columns cannot run"; return; }
	local row
	fuse_mount "$S" "$FR"
	find "$FR" -type f -exec cat {} + >/dev/null
	dcache-probe -r --ranges --json "$FR" >"$WORK/FR.manifest" 2>/dev/null
	fuse_stop "$FUSE_PID"
	sleep 0.5
	EXPECT=
	for row in "${ROWS[@]}"; do
		cell "$row" fuse-root "$FR" "$WORK/FR.manifest" :
	done
	fuse_cont
	umount "$FR"
}

# RLIMIT_NOFILE at each command's stated floor (lib/cmdrt/dcp_opts.h), and
# one above it: the unlimited run's counts, or exit 2 said in words.
descriptors() {
	local col=$1 add=$2 row n
	EXPECT=same
	for row in "${ROWS[@]}"; do
		row_argv "$row" "$T" "$WORK/T.manifest"
		# The recorder has a floor of its own (DCP_FLOOR_RECORD: the row
		# records without --pid or --cgroup; DCP_FLOOR_RECORD_START with
		# --start).
		if [ "$row" = record ]; then
			n=$(floor_of record)
		elif [ "$row" = record-start ]; then
			n=$(floor_of record-start)
		else
			n=$(floor_of "${A[0]}")
		fi
		assertNotNull "the floor of $row" "$n"
		cell "$row" "$col" "$T" "$WORK/T.manifest" "ulimit -n $((n + add))"
	done
}
test_descriptor_floor() { descriptors floor 0; }
test_descriptor_floor_plus_one() { descriptors floor+1 1; }

# ulimit -v: 12 MiB, where a walk's threads cannot start.  A sanitizer
# build reserves terabytes of address space before main(): no ulimit -v
# lets it start, so the column is the plain build's (as in cmd/limits).
test_address_space_limit() {
	local row
	EXPECT=same
	if grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address|thread)$' "$DCP_BUILD/CMakeCache.txt" 2>/dev/null; then
		for row in "${ROWS[@]}"; do
			NA[$row.vmem]="a sanitizer build cannot start under any ulimit -v (the plain build runs this column)"
		done
	fi
	for row in "${ROWS[@]}"; do
		cell "$row" vmem "$T" "$WORK/T.manifest" "ulimit -v 12000"
	done
}

# As nobody, in a tree whose c/ nobody may not read.
test_nobody_with_an_unreadable_directory() {
	local row
	EXPECT=lost
	AS=1
	for row in "${ROWS[@]}"; do
		[ "$row" = diagnose ] && EXPECT= || EXPECT=lost
		cell "$row" nobody "$T" "$WORK/T.manifest" :
	done
	AS=
}

# FILE and a FIFO exchanged (renameat2 RENAME_EXCHANGE) in a loop while the
# mode runs: the FIFO is never replaced, no temporary is left, every run
# ends publishing or refusing.
test_fifo_exchange_race() {
	local row i n swapper ino why rc refused
	for row in "${ROWS[@]}"; do
		n=6
		[[ $row == record* ]] && n=2
		DIR=$(mktemp -d "$WORK/race.XXXXXX")
		OF=$DIR/out
		echo old >"$OF"
		mkfifo "$DIR/fifo"
		ino=$(stat -c %i "$DIR/fifo")
		python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
while True:
    libc.renameat2(d, b"out", d, b"fifo", 2)  # RENAME_EXCHANGE
' "$DIR" &
		swapper=$!
		why=() refused=0
		row_argv "$row" "$T" "$WORK/T.manifest"
		for ((i = 0; i < n; i++)); do
			[ "$row" = record ] && workload_start "$T"
			go "$(bound "$row")" : -- "${A[@]}" "$(out_opt "$row" "$OF")"
			workload_stop
			rc=$RC
			[ -z "$HANG" ] || why+=("HANG: run $i still running after $(bound "$row") s")
			case $rc in
			0 | 1 | 3) ;;
			2) refused=$((refused + 1)) ;;
			*) why+=("run $i: exit $rc") ;;
			esac
			kill -STOP "$swapper"
			until [ "$(cut -d' ' -f3 "/proc/$swapper/stat")" = T ]; do :; done
			if [ "$(stat -c %i "$DIR/out")" != "$ino" ] && [ "$(stat -c %i "$DIR/fifo")" != "$ino" ]; then
				why+=("run $i: the FIFO was replaced")
				kill -CONT "$swapper"
				break
			fi
			if [ "$(find "$DIR" -mindepth 1 | wc -l)" != 2 ]; then
				why+=("run $i left $(find "$DIR" -mindepth 1 -name '.*' -printf '%f ')")
				find "$DIR" -mindepth 1 -name '.*' -delete
			fi
			# The regular one of the two is whole, or "old".
			for f in "$DIR/out" "$DIR/fifo"; do
				[ -f "$f" ] || continue
				if [ "$(cat "$f")" != old ] && ! parse "$row" "$f"; then
					why+=("run $i: FILE is not whole")
				fi
			done
			kill -CONT "$swapper"
		done
		kill -KILL "$swapper"
		wait "$swapper" 2>/dev/null
		rm -rf "$DIR"
		settle "$row" race "$(IFS=';'; echo "${why[*]}")"
		EXITS[$row.race]=$refused/$n
	done
}

# SIGTERM while the run is held reading a list (a FIFO no one writes): it
# dies of it, FILE as it was, no temporary.  The recorder ends on it
# within a second, its manifest whole.
test_sigterm_in_the_middle() {
	local row
	for row in "${ROWS[@]}"; do
		if [ -n "${NA[$row.sigterm]:-}" ]; then
			RESULT[$row.sigterm]=N/A
			continue
		fi
		cell_dir
		row_argv "$row" "$T" "$WORK/hold"
		case $row in
		verify | restore | record | record-start | diagnose) ;;
		uring-bench) A+=(--files0-from="$WORK/hold") ;;
		*) A+=(--from="$WORK/hold") ;;
		esac
		[ "$row" = record ] && workload_start "$T"
		EXPECT=signal
		SIGTERM_AFTER=0.4 go "$(bound "$row")" : -- "${A[@]}" "$(out_opt "$row" "$OF")"
		workload_stop
		verdict "$row" sigterm
		rm -rf "$DIR"
	done
}

# --output on a full filesystem (a 128 KiB tmpfs, filled: a page per row's old FILE): exit 2, FILE as
# it was, no temporary.
test_full_filesystem() {
	local row
	EXPECT=full
	for row in "${ROWS[@]}"; do
		DIR=$FULL
		OF=$FULL/$row.out
		OLD=$(cksum <"$OF")
		row_argv "$row" "$T" "$WORK/T.manifest"
		[ "$row" = record ] && workload_start "$T"
		go "$(bound "$row")" : -- "${A[@]}" "$(out_opt "$row" "$OF")"
		workload_stop
		verdict "$row" full
	done
}

# The table, its size and runtime.
test_zz_the_matrix() {
	local row col r pass=0 na=0 known=0 failed=0 w
	echo "each cell: its result and the exit status of its run (race: runs refused, exit 2, of runs; every other exit 0, 1 or 3)"
	printf '\n%-12s' mode
	for col in "${COLS[@]}"; do printf ' %-9s' "$col"; done
	printf '\n'
	for row in "${ROWS[@]}"; do
		printf '%-12s' "$row"
		for col in "${COLS[@]}"; do
			r=${RESULT[$row.$col]:-NOT-RUN}
			case $r in
			PASS) pass=$((pass + 1)) ;;
			N/A) na=$((na + 1)) ;;
			KNOWN) known=$((known + 1)) ;;
			*) failed=$((failed + 1)) ;;
			esac
			printf ' %-9s' "$r${EXITS[$row.$col]:+ ${EXITS[$row.$col]}}"
		done
		printf '\n'
	done
	for w in "${!NA[@]}"; do echo "  N/A $w: ${NA[$w]}"; done | sort
	for w in "${!RULE[@]}"; do echo "  ${RESULT[$w]:-NOT-RUN} $w (rule ${RULE[$w]%%:*}): ${RULE[$w]#*: }"; done | sort
	for w in "${!WHY[@]}"; do echo "  ${RESULT[$w]} $w: ${WHY[$w]}"; done | sort
	printf '%d rows x %d columns = %d cells: %d pass, %d N/A, %d known defects, %d fail; %.0f s\n' \
		${#ROWS[@]} ${#COLS[@]} $((${#ROWS[@]} * ${#COLS[@]})) $pass $na $known $failed \
		"$(awk -v a="$START" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
	assertEquals "cells neither passing nor N/A" 0 "$failed"
}

# shellcheck disable=SC1090
. "$SHUNIT2"
