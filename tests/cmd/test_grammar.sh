#!/bin/bash
# One grammar for the four commands (dcprobe.7, "OPTIONS SHARED BY THE
# COMMANDS"): each test runs the same scenario through every command that
# has the option and expects the same answer, in the same words.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

ALL=(cachedopen dcache-probe warm uring-open)
WALKERS=(dcache-probe warm)

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/t/a/b" "$MNT/t/c" "$MNT/p" "$MNT/m"
	touch "$MNT/t/x.c" "$MNT/t/a/y.c" "$MNT/t/a/z.h" "$MNT/t/a/b/w.c" "$MNT/t/c/v.txt"
	ln -s x.c "$MNT/t/l.c"
	mkfifo "$MNT/t/a/fifo.c"
	touch "$MNT/t/space name.c"
	chmod -R a+rX "$MNT"
	LIST=$SHUNIT_TMPDIR/list LIST0=$SHUNIT_TMPDIR/list0
	printf '%s\n' "$MNT/t/x.c" "$MNT/t/space name.c" "$MNT/t/a" >"$LIST"
	printf '%s\0' "$MNT/t/x.c" "$MNT/t/space name.c" "$MNT/t/a" >"$LIST0"
}

oneTimeTearDown() {
	mountpoint -q "$MNT/p" && umount "$MNT/p"
	mountpoint -q "$MNT/m" && umount "$MNT/m"
	fixture_cleanup
}

# The help entries of each option, one per line: "OPTIONS<TAB>TEXT".
help_entries() {
	python3 -c '
import re, sys
entries, cur = [], None
for line in sys.stdin.read().split("\n"):
    if re.match(r"^  (-\S|    --)", line):
        head, _, text = line.strip().partition("  ")
        cur = [head.strip(), text.strip()]
        entries.append(cur)
    elif cur is not None and re.match(r"^ {20,}\S", line):
        cur[1] = (cur[1] + " " + line.strip()).strip()
    else:
        cur = None
for head, text in entries:
    print("%s\t%s" % (head, re.sub(r"\s+", " ", text)))
'
}

# Every option name that two files share must have the same entry in both.
help_drift() {
	python3 -c '
import re, sys
texts, bad = {}, 0
for path in sys.argv[1:]:
    cmd = path.rsplit("/", 1)[1]
    for line in open(path):
        head, _, text = line.rstrip("\n").partition("\t")
        for name in re.findall(r"--[a-z0-9-]+|(?<![-\w])-[a-zA-Z0-9?]", head):
            texts.setdefault(name, {}).setdefault((head, text), []).append(cmd)
for name, variants in sorted(texts.items()):
    if len(variants) > 1:
        bad = 1
        print("%s differs:" % name)
        for (head, text), cmds in variants.items():
            print("   %s: %s  %s" % (",".join(cmds), head, text))
sys.exit(bad)
' "$@"
}

test_shared_options_have_the_same_help_text() {
	local d=$SHUNIT_TMPDIR/help cmd
	mkdir -p "$d"
	for cmd in "${ALL[@]}"; do
		"$cmd" --help | help_entries >"$d/$cmd"
	done
	# Only the shared options: those that come from lib/cmdrt/opts.c.
	local shared='^(-h|--si|-q|--json|-r|-x|--exclude|--name|--type|--max-depth|--mindepth|--exclude-fstype|-L|-H|-P|-j|--from|--files0-from|-s|-c|-v|-0|--prometheus|--progress|--no-progress)([,= '$'\t'']|$)'
	for cmd in "${ALL[@]}"; do
		grep -E "$shared" "$d/$cmd" >"$d/$cmd.shared"
	done
	# cachedopen's -L is about one path's last component: a walk's -L says more.
	grep -v '^-L' "$d/cachedopen.shared" >"$d/cachedopen.nol" && mv "$d/cachedopen.nol" "$d/cachedopen.shared"
	local out
	out=$(help_drift "$d/cachedopen.shared" "$d/dcache-probe.shared" "$d/warm.shared" "$d/uring-open.shared")
	assertEquals "no drift between the commands' --help: $out" 0 $?
	assertContains "the walk options are there" "$(cat "$d/warm.shared")" "--exclude-fstype"
	assertContains "the walk options are there" "$(cat "$d/dcache-probe.shared")" "--mindepth"
	assertEquals "the four commands all have -q" 4 "$(cat "$d"/*.shared | grep -cE '^-q, --quiet, --silent	')"
	assertEquals "the four commands all have -h" 4 "$(cat "$d"/*.shared | grep -cE '^-h, --human-readable	')"
	assertEquals "the four commands all have --si" 4 "$(cat "$d"/*.shared | grep -cE '^--si	')"
	# The check itself: a changed word in one command is drift.
	sed 's/Walk the tree/Walk the trees/' "$d/warm.shared" >"$d/warm.mut"
	out=$(help_drift "$d/dcache-probe.shared" "$d/warm.mut")
	assertNotEquals "a one-word change is caught" 0 $?
	assertContains "$out" "-r differs"
}

# -h is --human-readable, as in du -sh; help is --help and -?.
test_h_is_human_readable_in_every_command() {
	local cmd d=$MNT/h f=$MNT/h/f
	mkdir -p "$d"
	head -c 1572864 /dev/urandom >"$f" # 1.5 MiB: 1.5M, 1.6M (--si) or 1572864
	chmod -R a+rX "$d"
	for cmd in cachedopen dcache-probe uring-open; do
		cat "$f" >/dev/null
		run "$cmd" -h --pages "$f"
		assertContains "$cmd -h: $OUT $ERR" "$OUT$ERR" "bytes=1.5M/1.5M"
		run "$cmd" --human-readable --pages "$f"
		assertContains "$cmd --human-readable: $OUT $ERR" "$OUT$ERR" "bytes=1.5M/1.5M"
		run "$cmd" -h --si --pages "$f"
		assertContains "$cmd -h --si: the last wins: $OUT $ERR" "$OUT$ERR" "bytes=1.6M/1.6M"
		run "$cmd" --si -h --pages "$f"
		assertContains "$cmd --si -h: the last wins: $OUT $ERR" "$OUT$ERR" "bytes=1.5M/1.5M"
		run "$cmd" --pages "$f"
		assertContains "$cmd: bytes by default: $OUT $ERR" "$OUT$ERR" "bytes=1572864/1572864"
	done
	fixture_cold "$MNT"
	run warm -h --pages "$f"
	assertEquals "warm -h: $ERR" 0 "$RC"
	assertContains "warm -h: $ERR" "$ERR" "data: 1 file, 1.5M bytes read"
	# The bundles du's hands know: -sh, -rsh, -csh (on a tree warm already,
	# so that each run sees what the last one did).
	warm -r "$MNT/t"
	for cmd in "${WALKERS[@]}"; do
		local want
		run "$cmd" -r -s --human-readable "$MNT/t"
		want="$OUT"
		run "$cmd" -rsh "$MNT/t"
		assertEquals "$cmd -rsh is -r -s -h, not the help" "$want" "$OUT"
		assertNotContains "$cmd -rsh: $OUT" "$OUT" "Usage:"
		run "$cmd" -sh "$MNT/t"
		assertEquals "$cmd -sh" "$want" "$OUT"
		run "$cmd" -csh "$MNT/t"
		assertEquals "$cmd -csh: the tree and the total" 2 "$(printf '%s\n' "$OUT" | grep -c .)"
	done
	for cmd in "${ALL[@]}"; do
		run "$cmd" '-?'
		assertEquals "$cmd -?" 0 "$RC"
		assertEquals "$cmd: -? prints --help" "$("$cmd" --help)" "$OUT"
		assertContains "$cmd --help names -h" "$OUT" "-h, --human-readable"
	done
}

# Each command's --help, -? and --usage: the same bytes in every run and
# in every environment, and none of issue 37's defects (tests/lib/help_check.py).
# glibc's argp decides where to break a line of exactly 79 columns (the last
# of a text) from the byte after its buffer, stale heap memory: under
# MALLOC_PERTURB_=223 that byte is a blank, under 246 a tab, under 1 neither.
test_help_is_the_same_bytes_everywhere() {
	local d=$SHUNIT_TMPDIR/helpbytes cmd opt i v
	mkdir -p "$d"
	for cmd in "${ALL[@]}"; do
		for opt in --help '-?' --usage; do
			"$DCP_BIN/$cmd" "$opt" >"$d/ref" 2>&1
			assertEquals "$cmd $opt" 0 $?
			for i in $(seq 20); do
				"$DCP_BIN/$cmd" "$opt" >"$d/out" 2>&1
				cmp -s "$d/ref" "$d/out" || fail "$cmd $opt: run $i differs: $(diff "$d/ref" "$d/out")"
			done
			for v in MALLOC_PERTURB_=1 MALLOC_PERTURB_=223 MALLOC_PERTURB_=246 \
				 GLIBC_TUNABLES=glibc.malloc.perturb=223 COLUMNS=40 COLUMNS=200 \
				 ARGP_HELP_FMT=rmargin=60 ARGP_HELP_FMT=rmargin=120,opt-doc-col=10 \
				 LC_ALL=C LC_ALL=C.UTF-8 LANG=de_DE.UTF-8 TERM=dumb; do
				env "$v" "$DCP_BIN/$cmd" "$opt" >"$d/out" 2>&1
				cmp -s "$d/ref" "$d/out" || fail "$cmd $opt under $v differs: $(diff "$d/ref" "$d/out")"
			done
			# On a terminal (script(1) gives it a pty: lines end in CR LF there).
			script -qec "$DCP_BIN/$cmd $opt" /dev/null </dev/null | tr -d '\r' >"$d/out"
			cmp -s "$d/ref" "$d/out" || fail "$cmd $opt on a terminal differs: $(diff "$d/ref" "$d/out")"
			as_nobody env -i PATH=/usr/bin "$DCP_BIN/$cmd" "$opt" >"$d/out" 2>&1
			cmp -s "$d/ref" "$d/out" || fail "$cmd $opt as nobody, empty environment, differs"
		done
		"$DCP_BIN/$cmd" --help >"$d/ref"
		out=$(python3 "$DCP_TESTS/lib/help_check.py" "$cmd --help" <"$d/ref")
		assertEquals "$cmd --help has no defect: $out" 0 $?
	done
	# The check itself fails on each defect the commands' help had.
	printf '%s\n' "Usage: warm [OPTION...] [PATH...]" \
		"dcache-probe takes, see dcprobe(7)) is put back: each path's dentry and" \
		"exactly" >"$d/bad1"
	printf '%s\n' "      --si                   Likewise, in powers of 1000" >"$d/bad2"
	printf '%s\n' "      --json                 JSON Lines on standard output: one object per" \
		"                             record, then a summary object (schema: dcprobe(7))" \
		"                            " >"$d/bad3"
	printf '%s\n' "  warm --manifest=/var/lib/app/warm.jsonl    # what a snapshot held, back again!" >"$d/bad4"
	printf '%s\n' "EXAMPLES:" " What to warm:" "  -q, --quiet, --silent      Print no results" >"$d/good"
	for i in 1 2 3 4; do
		out=$(python3 "$DCP_TESTS/lib/help_check.py" bad$i <"$d/bad$i")
		assertEquals "bad$i is caught: $out" 1 $?
	done
	assertContains "$(python3 "$DCP_TESTS/lib/help_check.py" bad1 <"$d/bad1")" "bad1:3: a line of one word"
	assertContains "$(python3 "$DCP_TESTS/lib/help_check.py" bad2 <"$d/bad2")" "needs the entry before it"
	assertContains "$(python3 "$DCP_TESTS/lib/help_check.py" bad3 <"$d/bad3")" "bad3:3: a line of blanks"
	assertContains "$(python3 "$DCP_TESTS/lib/help_check.py" bad4 <"$d/bad4")" "wider than 79 columns"
	out=$(python3 "$DCP_TESTS/lib/help_check.py" good <"$d/good")
	assertEquals "headings and entries pass: $out" 0 $?
}

# -q prints no results and no summary, but every error still (issue 37):
# what makes the exit status 2 is said on stderr, in every command and
# every mode (a probe, a walk, a manifest, --pages, -s, --prometheus).
test_quiet_says_every_error() {
	local cmd long q=$MNT/q m=$SHUNIT_TMPDIR/q.jsonl mode
	long=$MNT/$(head -c 4200 /dev/zero | tr '\0' x)
	for cmd in "${ALL[@]}"; do
		run "$cmd" -q "$long"
		assertEquals "$cmd -q, a PATH longer than PATH_MAX" 2 "$RC"
		assertEquals "$cmd -q: nothing on stdout" "" "$OUT"
		assertContains "$cmd -q says why" "$ERR" "File name too long"
	done
	# An absent name is an error to cachedopen (known absent: negative)
	# and to uring-open's open; the same words as without -q.
	stat "$MNT/t/absent" 2>/dev/null
	for cmd in cachedopen uring-open; do
		run "$cmd" "$MNT/t/absent"
		local said=$ERR
		run "$cmd" -q "$MNT/t/absent"
		assertEquals "$cmd -q absent" 2 "$RC"
		assertEquals "$cmd -q: nothing on stdout" "" "$OUT"
		assertContains "$cmd -q: $ERR" "$ERR" "'$MNT/t/absent': "
		assertContains "$cmd -q: $ERR" "$ERR" "No such file or directory"
		assertEquals "$cmd: -q says what the run without -q says on stderr" "$said" "$ERR"
	done
	# cachedopen --retry: a miss, then the blocking open fails.
	fixture_cold "$MNT"
	run cachedopen -q --retry "$MNT/t/never"
	assertEquals "cachedopen -q --retry" 2 "$RC"
	assertContains "$ERR" "'$MNT/t/never': open: No such file or directory"
	# A manifest whose files changed (f1) and went (f2) since the snapshot.
	mkdir -p "$q"
	for f in f1 f2 f3; do head -c 20000 /dev/urandom >"$q/$f"; done
	cat "$q"/* >/dev/null
	dcache-probe -r --ranges --json --output="$m" "$q" 2>/dev/null
	echo more >>"$q/f1"
	rm "$q/f2"
	for mode in -q "-q --min-resident 99" -s "-s -c" --prometheus "--only=miss"; do
		# shellcheck disable=SC2086
		run dcache-probe $mode --manifest="$m"
		assertEquals "dcache-probe $mode --manifest" 2 "$RC"
		assertContains "dcache-probe $mode: $ERR" "$ERR" "'$q/f1': data: changed since the manifest"
		assertContains "dcache-probe $mode: $ERR" "$ERR" "'$q/f2': data: No such file or directory"
	done
	run dcache-probe -q --manifest="$m" --min-resident 99
	assertEquals "each error once" 2 "$(grep -c . <<<"$ERR")"
	# The same words as the records': the JSON's data_message.
	run dcache-probe --json --manifest="$m"
	assertContains "$OUT" '"data_message":"changed since the manifest"'
	run warm -q --manifest="$m"
	assertEquals "warm -q --manifest" 2 "$RC"
	assertContains "warm -q: $ERR" "$ERR" "'$q/f1': changed since the manifest, not restored"
	assertContains "warm -q: $ERR" "$ERR" "'$q/f2': No such file or directory"
	# A walk that cannot read a directory, as nobody.
	mkdir -p "$q/locked" && touch "$q/locked/x" && chmod 700 "$q/locked"
	for cmd in "${WALKERS[@]}"; do
		run as_nobody "$DCP_BIN/$cmd" -q -r "$q"
		assertEquals "$cmd -q -r as nobody" 2 "$RC"
		assertContains "$cmd -q -r as nobody: $ERR" "$ERR" "'$q/locked'"
		assertContains "$cmd -q -r as nobody: $ERR" "$ERR" "Permission denied"
	done
	rm -rf "$q"
}

test_conflicts_are_the_same_everywhere() {
	local cmd
	for cmd in "${ALL[@]}"; do
		run "$cmd" -q --json "$MNT/t"
		assertEquals "$cmd -q --json" 64 "$RC"
		assertContains "$cmd" "$ERR" "-q excludes --json"
	done
	for cmd in "${WALKERS[@]}"; do
		run "$cmd" --json --prometheus "$MNT/t"
		assertEquals "$cmd --json --prometheus" 64 "$RC"
		assertContains "$ERR" "--json excludes --prometheus"
		run "$cmd" -0 --json "$MNT/t"
		assertEquals "$cmd -0 --json" 64 "$RC"
		assertContains "$ERR" "--json excludes -0"
		run "$cmd" -q --prometheus "$MNT/t"
		assertEquals "$cmd -q --prometheus" 64 "$RC"
		local opt
		for opt in -x --exclude=a --name=a --type=f --exclude-fstype=proc; do
			run "$cmd" "$opt" "$MNT/t"
			assertEquals "$cmd $opt without -r" 64 "$RC"
			assertContains "$cmd $opt" "$ERR" "needs -r"
		done
		run "$cmd" --type=q -r "$MNT/t"
		assertEquals "$cmd --type=q" 64 "$RC"
		assertContains "$ERR" "invalid --type"
		run "$cmd" -j 0 "$MNT/t"
		assertEquals "$cmd -j 0" 64 "$RC"
		assertContains "$ERR" "invalid --jobs '0'"
	done
	run warm -q -v "$MNT/t"
	assertEquals "warm -q -v" 64 "$RC"
	# One form for a bad value: invalid OPTION 'VALUE': WHAT is needed.
	local c
	for c in "dcache-probe -j x" "warm -j x" "dcache-probe --per-dir=x" "dcache-probe --max-depth=x" \
		"warm --mindepth=x" "uring-open -n x" "uring-open --depth x" "dcache-probe --min-cached x" \
		"warm --max-bytes x" "dcache-probe --only x" "warm --type x -r" "uring-open --flags x"; do
		# shellcheck disable=SC2086
		run $c "$MNT/t"
		assertEquals "$c" 64 "$RC"
		assertTrue "$c: $ERR" "grep -Eq \"^${c%% *}: invalid -[-a-z]+( at)? 'x': .* is needed\$\" <<<\"\$ERR\""
	done
}

# --max-depth and --mindepth imply -r in both walkers.
test_depth_options_imply_r() {
	local cmd n
	du -a "$MNT/t" >/dev/null
	run dcache-probe --max-depth 1 "$MNT/t"
	n=$(find "$MNT/t" -maxdepth 1 | wc -l)
	assertEquals "dcache-probe --max-depth 1" "$n" "$(grep -c . <<<"$OUT")"
	run warm -v --max-depth 1 "$MNT/t"
	assertEquals "warm --max-depth 1" "$n" "$(grep -c . <<<"$OUT")"
	run dcache-probe --mindepth 2 "$MNT/t"
	n=$(find "$MNT/t" -mindepth 2 | wc -l)
	assertEquals "dcache-probe --mindepth 2" "$n" "$(grep -c . <<<"$OUT")"
	run warm -v --mindepth 2 "$MNT/t"
	assertEquals "warm --mindepth 2" "$n" "$(grep -c . <<<"$OUT")"
}

# --type, --name, --mindepth select what find selects, in both walkers.
test_filters_select_what_find_selects() {
	local args want got
	du -a "$MNT/t" >/dev/null
	for args in "-type f" "-type f,l" "-type d" "-type p" "-name *.c" "-mindepth 2 -name *.c" \
		"-type f -name *.c" "-mindepth 1 -type d"; do
		local fargs=() dargs=() a
		set -f
		for a in $args; do fargs+=("$a"); done
		set +f
		# find's -type f,l is GNU syntax too; -mindepth goes first.
		want=$(find "$MNT/t" "${fargs[@]}" | sort)
		dargs=()
		for ((i = 0; i < ${#fargs[@]}; i += 2)); do
			dargs+=("-${fargs[i]}=${fargs[i + 1]}")
		done
		got=$(dcache-probe -r "${dargs[@]}" "$MNT/t" | sed 's/^[a-z]* //' | sort)
		assertEquals "dcache-probe ${dargs[*]} = find $args" "$want" "$got"
		got=$(warm -r -v "${dargs[@]}" "$MNT/t" | sort)
		assertEquals "warm ${dargs[*]} = find $args" "$want" "$got"
	done
	# Counts and verdicts see only what passes the filters.
	fixture_cold_busy "$MNT"
	ls "$MNT/t" >/dev/null
	run dcache-probe -r --type=d -s "$MNT/t"
	assertContains "only directories count" "$OUT" "/$(find "$MNT/t" -type d | wc -l)	$MNT/t"
}

# A walk does not go into /proc, /sys and the like unless told to.
test_exclude_fstype_keeps_walks_out_of_pseudo_filesystems() {
	mount -t proc dcp-proc "$MNT/p" || fail "cannot mount proc"
	mount -t tmpfs dcp-tmpfs "$MNT/m" || fail "cannot mount tmpfs"
	touch "$MNT/m/one" "$MNT/m/two"
	local cmd
	for cmd in "${WALKERS[@]}"; do
		local v=-v
		[ "$cmd" = dcache-probe ] && v=
		run "$cmd" -r $v "$MNT"
		assertNotEquals "$cmd: proc is not an error" 2 "$RC"
		assertContains "$cmd: the mount point itself is there" "$OUT" "$MNT/p"
		assertEquals "$cmd: nothing below it" 0 "$(grep -c "^\([a-z]* \)\?$MNT/p/" <<<"$OUT")"
		assertEquals "$cmd: tmpfs is walked" 1 "$(grep -c "$MNT/m/one" <<<"$OUT")"
		run "$cmd" -r $v --exclude-fstype=tmpfs --max-depth 2 "$MNT"
		assertEquals "$cmd: the first --exclude-fstype replaces the default" 0 "$(grep -c "$MNT/m/one" <<<"$OUT")"
		assertNotEquals "$cmd: proc walked now" 0 "$(grep -c "$MNT/p/self" <<<"$OUT")"
		run "$cmd" -r $v --exclude-fstype=none --max-depth 2 "$MNT"
		assertNotEquals "$cmd: none walks every mount" 0 "$(grep -c "$MNT/p/self" <<<"$OUT")"
		assertEquals "$cmd: none walks every mount" 1 "$(grep -c "$MNT/m/one" <<<"$OUT")"
		run "$cmd" -r $v --max-depth 1 "$MNT/p"
		assertNotEquals "$cmd: a PATH given is walked whatever its type" 0 "$(grep -c "$MNT/p/self" <<<"$OUT")"
	done
	# The issue's case: --per-mount / as root touches no proc or sysfs mount.
	run dcache-probe -r --per-mount --max-depth 3 /
	assertEquals "no proc row" 0 "$(awk -F'\t' '$3 == "proc" || $3 == "sysfs*"' <<<"$OUT" | grep -c .)"
	assertNotEquals "no walk error from /proc" 2 "$RC"
	umount "$MNT/p" "$MNT/m"
}

# The same lists through the four commands: lines with --from, NUL-ended
# with --files0-from; -0 never changes how input is read.
test_lists_read_the_same_everywhere() {
	local cmd
	for cmd in "${ALL[@]}"; do
		local v=
		[ "$cmd" = warm ] && v=-v # warm lists what it warmed with -v only
		run "$cmd" --json $v --from="$LIST"
		assertEquals "$cmd --from: three paths" 3 "$(json_get 'len([o for o in objs if o["type"] not in ("summary", "bench")])' <<<"$OUT")"
		run "$cmd" --json $v --files0-from="$LIST0"
		assertEquals "$cmd --files0-from: three paths" 3 "$(json_get 'len([o for o in objs if o["type"] not in ("summary", "bench")])' <<<"$OUT")"
		run "$cmd" --json $v --files0-from=- <"$LIST0"
		assertContains "$cmd --files0-from=-: the name with a space" "$OUT" "space name.c"
	done
	local o=$SHUNIT_TMPDIR/out0
	dcache-probe -0 --from="$LIST" >"$o" 2>/dev/null
	assertEquals "dcache-probe -0 --from reads lines, writes NULs" "$(od -c <"$LIST0")" "$(od -c <"$o")"
	warm -0 -v --from="$LIST" >"$o" 2>/dev/null
	assertEquals "warm -0 --from reads lines, writes NULs" 3 "$(tr -cd '\0' <"$o" | wc -c)"
}

test_bad_lists_are_said_in_the_same_words() {
	local cmd bad=$SHUNIT_TMPDIR/bad
	printf '%s\n\n%s\n' "$MNT/t/x.c" "$MNT/t/a" >"$bad"
	for cmd in "${ALL[@]}"; do
		run "$cmd" --from="$bad"
		assertEquals "$cmd: an empty record" 2 "$RC"
		assertContains "$cmd" "$ERR" "'$bad': record 2: an empty PATH names nothing"
		# JSON consumers get a record for every error that sets the status.
		run "$cmd" --json --from="$bad" --from="$MNT/t"
		assertEquals "$cmd --json: input_error records" "2 None None EISDIR" \
			"$(json_get '" ".join(str(o.get(k)) for o in objs if o["type"] == "input_error" for k in ("record", "errno"))' <<<"$OUT" | cut -d' ' -f1-4)"
		run "$cmd" --from="$MNT/t"
		assertEquals "$cmd: a directory as the list" 2 "$RC"
		assertContains "$cmd" "$ERR" "cannot read '$MNT/t': Is a directory"
		run "$cmd" --from=/dev/null
		assertEquals "$cmd: an empty list is nothing to do" 0 "$RC"
		run "$cmd" --from="$LIST0"
		assertEquals "$cmd: a NUL list read as lines" 2 "$RC"
		assertContains "$cmd" "$ERR" "record 1: a path contains a NUL byte (use --files0-from)"
		run "$cmd" --from=- --files0-from=- </dev/null
		assertEquals "$cmd: stdin twice" 64 "$RC"
		run "$cmd" -q --from="$MNT/t"
		assertContains "$cmd -q still says errors" "$ERR" "Is a directory"
		assertEquals "$cmd -q" 2 "$RC"
	done
	python3 -c 'import sys; sys.stdout.write("/" * 5000 + "\n")' >"$bad"
	for cmd in "${ALL[@]}"; do
		run "$cmd" --from="$bad"
		assertContains "$cmd: over-long" "$ERR" "record 1: the path is longer than PATH_MAX (4096 bytes)"
	done
}

# Progress never goes where it could mix with output.
test_progress_only_where_it_cannot_mix() {
	local t=$SHUNIT_TMPDIR/typescript
	# A list that arrives slowly keeps a run going for more than a second.
	script -qfec "(echo /; sleep 1.7; echo /) | dcache-probe --from - >/dev/null" "$t" >/dev/null
	assertContains "dcache-probe: stdout not a pipe, stderr a terminal" "$(cat "$t")" "path, "
	script -qfec "(echo /; sleep 1.7; echo /) | dcache-probe --from - | cat >/dev/null" "$t" >/dev/null
	assertNotContains "dcache-probe: stdout into a pipe" "$(cat "$t")" "path, "
	script -qfec "(echo /; sleep 1.2; echo /) | warm --from - >/dev/null" "$t" >/dev/null
	assertContains "warm: stdout not a pipe" "$(cat "$t")" "1 entry, 0 errors, "
	script -qfec "(echo /; sleep 1.2; echo /) | warm -v --from - | cat >/dev/null" "$t" >/dev/null
	assertNotContains "warm: stdout into a pipe" "$(cat "$t")" "errors, "
	script -qfec "(echo /; sleep 1.2; echo /) | warm -v --from - " "$t" >/dev/null
	assertNotContains "warm: -v lines on the same terminal" "$(cat "$t")" "errors, "
}

# cachedopen on a terminal: each reason next to its own open line.
test_cachedopen_lines_in_order_on_a_terminal() {
	fixture_cold_busy "$MNT"
	ls -l "$MNT/t" >/dev/null
	local t=$SHUNIT_TMPDIR/typescript
	# Descriptors the suite holds are closed, so that the first open is 3.
	script -qfec "cachedopen '$MNT/t/a' '$MNT/t/x.c' '$MNT/t/c/v.txt'" "$t" >/dev/null \
		3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
	local lines
	lines=$(tr -d '\r' <"$t" | grep -v '^Script \(started\|done\)' | grep . | sed "s|$MNT|M|g")
	assertEquals "open, its reason, the next open, the hint last" \
"M/t/a: open: 3
M/t/x.c: open: 3
M/t/c/v.txt: open: -1
cachedopen: 'M/t/c/v.txt': openat2: Resource temporarily unavailable
cachedopen: a miss can also be a name that does not exist and was never looked up; --retry tells" "$lines"
	script -qfec "cachedopen --retry '$MNT/t/c/v.txt' '$MNT/t/nope'" "$t" >/dev/null
	lines=$(tr -d '\r' <"$t" | grep -v '^Script \(started\|done\)' | grep . |
		sed "s|$MNT|M|g; s/[0-9]* us/N us/; s/open: [0-9][0-9]*/open: F/")
	assertEquals "with --retry, the man page's order; no hint" \
"M/t/c/v.txt: open: -1
cachedopen: 'M/t/c/v.txt': openat2: Resource temporarily unavailable
M/t/c/v.txt: retry: open: F (blocking, N us)
M/t/nope: open: -1
cachedopen: 'M/t/nope': openat2: Resource temporarily unavailable
M/t/nope: retry: open: -1 (blocking, N us)
cachedopen: 'M/t/nope': open: No such file or directory" "$lines"
}

# One wording for counts: "1 path", "2 paths".
test_counts_are_singular_and_plural() {
	run dcache-probe "$MNT/t"
	assertContains "$ERR" "1 path: "
	run dcache-probe "$MNT/t" "$MNT/t/a"
	assertContains "$ERR" "2 paths: "
	run warm "$MNT/t"
	assertContains "$ERR" "warm: 1 entry, 0 errors in "
	run warm "$MNT/t" "$MNT/t/a" "$MNT/nope"
	assertContains "$ERR" "warm: 3 entries, 1 error in "
	run uring-open -n 2 "$MNT/t"
	assertContains "uring-open: $ERR" "$ERR" "2 opens: "
}

# -s is du -s: a line per PATH on stdout; -c a total.
test_summary_per_root_and_total() {
	du -a "$MNT/t" >/dev/null
	local n
	n=$(find "$MNT/t" | wc -l)
	# t/a lies inside t: its line counts its tree, the total each entry once.
	run dcache-probe -r -s -c "$MNT/t" "$MNT/t/a"
	assertEquals "$(printf '100.0%%\t%d/%d\t%s\n100.0%%\t%d/%d\t%s\n100.0%%\t%d/%d\ttotal' \
		"$n" "$n" "$MNT/t" 6 6 "$MNT/t/a" "$n" "$n")" "$OUT"
	run dcache-probe -r -c --json "$MNT/t"
	assertEquals "root total summary" "$(json_types <<<"$OUT" | paste -sd' ')"
	# warm: the same lines, with warm's figures (entries looked up, errors).
	run warm -r -s -c "$MNT/t" "$MNT/t/a" "$MNT/nope"
	# Lines come as the trees finish; the total is last.
	assertEquals "warm -s -c" "$(printf '%d\t0\t%s\n6\t0\t%s\n1\t1\t%s' \
		"$n" "$MNT/t" "$MNT/t/a" "$MNT/nope" | sort)" "$(sed '$d' <<<"$OUT" | sort)"
	assertEquals "warm -c: the total" "$(printf '%d\t1\ttotal' $((n + 1)))" "$(tail -n1 <<<"$OUT")"
	assertEquals "warm: an error too" 2 "$RC"
	run warm -s "$MNT/t/x.c" "$MNT/t/a"
	assertEquals "warm -s implies -r: a line per tree, as du -s" "$(printf '6\t0\t%s\n1\t0\t%s' "$MNT/t/a" "$MNT/t/x.c")" "$(sort -t$'\t' -k3 <<<"$OUT")"
	assertEquals "warm -s: no summary on stderr when it is not a terminal" "" "$ERR"
	run warm -r -c --json --check "$MNT/t"
	assertEquals "root total summary" "$(json_types <<<"$OUT" | paste -sd' ')"
}

# Issue 19.10: a table has a heading on a terminal that names its columns
# (those of --explain and --pages too), none for a program, none under
# --no-headings; mixed text tables are refused.
test_headings_on_a_terminal() {
	local t=$SHUNIT_TMPDIR/typescript lines
	script -qfec "dcache-probe -s --explain --pages '$MNT/t'; dcache-probe --per-dir=0 '$MNT/t';
		dcache-probe -r --per-mount '$MNT/t'; warm -s --check '$MNT/t'; warm -s '$MNT/t';
		dcache-probe -s --no-headings '$MNT/t'; warm -s --noheadings '$MNT/t'" "$t" >/dev/null 2>&1
	# (Rows name the fixture, whose random name may hold capitals.)
	lines=$(tr -d '\r' <"$t" | grep -E '^(CACHED%|ENTRIES)	')
	assertEquals "one heading per table, naming its columns" "CACHED%	CACHED/PROBED	MISSES	DATA%	RESIDENT/PAGES	PATH
CACHED%	CACHED/PROBED	PATH
CACHED%	CACHED/PROBED	FSTYPE	MOUNTPOINT
ENTRIES	ERRORS	COLD	STILL	PATH
ENTRIES	ERRORS	PATH" "$lines"
	# Each heading has as many columns as the rows under it.
	assertEquals "columns match" "" "$(tr -d '\r' <"$t" | awk -F'\t' '/^(CACHED|ENTRIES)/ { n = NF; next } n && NF > 1 && NF != n { print; } NF <= 1 { n = 0 }')"
	run dcache-probe -s "$MNT/t"
	assertNotContains "no heading for a program" "$OUT" "CACHED%"
	run warm -s "$MNT/t"
	assertNotContains "no heading for a program" "$OUT" "ENTRIES"
}

# Issue 19.11: byte counts as people read them (--human-readable, --si,
# rounded up as du -h and numfmt --round=up), and sizes read by coreutils'
# rules (2GB is 10^9 bytes twice, 2G is 2 GiB), never reinterpreted.
test_sizes_people_read() {
	local f=$MNT/big
	head -c 1572864 /dev/zero >"$f"
	cat "$f" >/dev/null
	run cachedopen --pages --human-readable "$f"
	assertContains "$OUT" "bytes=1.5M/1.5M"
	run cachedopen --pages --si "$f"
	assertContains "$OUT" "bytes=$(numfmt --to=si --round=up 1572864)/$(numfmt --to=si --round=up 1572864)"
	run cachedopen --pages "$f"
	assertContains "digits by default" "$OUT" "bytes=1572864/1572864"
	# warm reads only what is not resident: the fixture's file, cold.
	sync "$f"
	fixture_cold_busy "$MNT"
	run warm --pages --check --human-readable "$f"
	assertContains "$ERR" "1.5M bytes read"
	run warm --pages --max-bytes 2GB --json "$f"
	assertEquals "2GB is 2*10^9 bytes" 2000000000 "$(json_get '[o for o in objs if o["type"] == "summary"][0]["data"]["max_bytes"]' <<<"$OUT")"
	run warm --pages --max-bytes 2G --json "$f"
	assertEquals "2G is 2 GiB" $((2 << 30)) "$(json_get '[o for o in objs if o["type"] == "summary"][0]["data"]["max_bytes"]' <<<"$OUT")"
	run warm --pages --max-bytes 2Gb "$f"
	assertEquals "a suffix coreutils does not read is refused" 64 "$RC"
	rm -f "$f"
}

. "$SHUNIT2"
