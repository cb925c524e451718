#!/bin/bash
# Claims: every sentence of the man pages about what a state means or what a
# run changes, checked against tests/oprobe (an independent prober calling
# openat2 itself, not libdcprobe) on a real cold fixture, as root and as an
# unprivileged user.  One test per claim, named after it; tests/README.md
# maps each claim to its test.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

OPROBE=${DCP_BUILD:?}/tests/oprobe
NOBODY=65534

oneTimeSetUp() {
	MNT=$(fixture_new 96) || fail "cannot make fixture"
	# t: root's tree, with links to follow under -L.
	mkdir -p "$MNT/t/a/b" "$MNT/t/a/d" "$MNT/t/x/y/z"
	touch "$MNT/t/a/b/f" "$MNT/t/a/b/g" "$MNT/t/a/c" "$MNT/t/a/d/h" "$MNT/t/x/y/z/k"
	ln -s a/b/f "$MNT/t/lnk"
	ln -s a/b "$MNT/t/dlnk"
	ln -s nowhere "$MNT/t/dangling"
	# u: a tree owned by somebody else than root.
	mkdir -p "$MNT/u/d1/d2"
	touch "$MNT/u/d1/f1" "$MNT/u/d1/d2/f2" "$MNT/u/e"
	chown -R "$NOBODY:$NOBODY" "$MNT/u"
	# big: 200 files in w, 5000 in cold (issue 10's recipe case).
	mkdir -p "$MNT/big/w" "$MNT/big/cold"
	(cd "$MNT/big/w" && seq -f 'f%g' 200 | xargs touch)
	(cd "$MNT/big/cold" && seq -f 'f%g' 5000 | xargs touch)
	# cyc: a link back to an ancestor; loops: a link loop.
	mkdir -p "$MNT/cyc/x/y/z"
	(cd "$MNT/cyc/x/y" && seq -f 'f%g' 50 | xargs touch)
	ln -s .. "$MNT/cyc/x/y/z/up"
	mkdir -p "$MNT/loops"
	ln -s l2 "$MNT/loops/l1"
	ln -s l1 "$MNT/loops/l2"
	mkdir -p "$MNT/bind" "$MNT/tmp"
	# wide: one directory of 10,000 files and 20 directories, more than
	# two chunks of a listing and shared among the threads (issue 26).
	mkdir -p "$MNT/wide"
	(cd "$MNT/wide" && seq -f 'f%05g' 10000 | xargs touch && seq -f 'd%02g' 20 | xargs mkdir)
	# churn: a wide directory (9,030 entries, more than two chunks) that
	# tests/lib/mutate_wide.py changes while it is walked: it renames every
	# mNNNN to rNNNN and back, unlinks and makes again every uNNNN, removes
	# and makes again every empty directory eNN.  The files fNNNNN and the
	# directories dNN (5 files each) are never touched.
	mkdir -p "$MNT/churn"
	(cd "$MNT/churn" && seq -f 'f%05g' 6000 | xargs touch && seq -f 'm%04g' 2000 | xargs touch &&
		seq -f 'u%04g' 1000 | xargs touch && seq -f 'e%02g' 10 | xargs mkdir &&
		for d in $(seq -f 'd%02g' 10); do mkdir "$d" && touch "$d"/g1 "$d"/g2 "$d"/g3 "$d"/g4 "$d"/g5; done)
	find "$MNT/churn" >"$SHUNIT_TMPDIR/paths-churn"
	# sib: three siblings, each with a directory b and links to the
	# others' b (issue 18 item 6): following one link warms another's path.
	for i in 1 2 3; do
		mkdir -p "$MNT/sib/d$i/b"
		touch "$MNT/sib/d$i/b/f"
		for j in 1 2 3; do
			[ $i = $j ] || ln -s "../d$j/b" "$MNT/sib/d$i/l$j"
		done
	done
	# Every path of the trees, listed now: the prober never walks.
	find "$MNT/t" "$MNT/u" "$MNT/big" "$MNT/wide" >"$SHUNIT_TMPDIR/paths"
	find -L "$MNT/t" "$MNT/sib" >"$SHUNIT_TMPDIR/paths-L" 2>/dev/null
	chmod 0644 "$SHUNIT_TMPDIR"/paths*
	chmod 0755 "$SHUNIT_TMPDIR"
}

cold() { fixture_cold_busy "$MNT"; }


setUp() {
	cold || fail "cannot remount fixture"
}

# agree BEFORE OUT - every "STATE PATH" line of OUT has the state the prober
# gave PATH in BEFORE; prints the disagreements and fails on any.
agree() {
	awk 'NR == FNR { st[$2] = $1; next }
	     $1 == "unvisited" { next }
	     { s = $1; p = $2 }
	     $1 == "error" { s = "error:" $2; p = $3 }
	     !(p in st) { print "not in the prober'\''s list: " $0; bad = 1; next }
	     st[p] != s { print p ": dcache-probe says " s ", the prober said " st[p]; bad = 1 }
	     END { exit bad }' <(printf '%s\n' "$1") <(printf '%s\n' "$2")
}

# check_walk WHO ARGS... - a walk's states equal the prober's, taken before.
check_walk() {
	local who=$1 as= follow= list=$SHUNIT_TMPDIR/paths before diff
	shift
	[ "$who" = nobody ] && as=as_nobody
	case " $* " in *" -L "*) follow=-L list=$SHUNIT_TMPDIR/paths-L ;; esac
	before=$($as "$OPROBE" $follow - <"$list")
	run $as dcache-probe "$@"
	diff=$(agree "$before" "$OUT")
	assertTrue "$who: dcache-probe $* against the prober: $diff" $?
	assertNotEquals "$who: some lines" "" "$OUT"
}

# Claim (dcache-probe.1, dcprobe.7): every entry is probed before the walk
# does anything to it, and its state is that of its whole path.
test_walk_reports_each_path_as_the_prober_saw_it_before() {
	for who in root nobody; do
		cold
		check_walk $who -r -j1 "$MNT/t"
		cold
		# Half warm: a and a/b cached, a/b's files and a/d's inside not.
		stat "$MNT/t/a/b" "$MNT/t/a/d" >/dev/null
		check_walk $who -r -j2 "$MNT/t"
		check_walk $who -r -j2 "$MNT/t" # after the first run's listings
	done
}

# Claim (dcache-probe.1 -L): a link whose probe missed is followed only
# after the rest of the walk; nothing is touched before it is probed.
test_follow_probes_a_link_target_before_following_it() {
	local who
	for who in root nobody; do
		cold
		check_walk $who -r -L -j1 "$MNT/t"
		assertContains "$who: the issue's case" "$OUT" "miss $MNT/t/a/b/f"
		assertNotContains "$who: a/b was cold" "$OUT" "cached $MNT/t/a/b"
		cold
		stat "$MNT/t/a" >/dev/null # a cached, a/b cold: the link would warm b
		check_walk $who -r -L -j1 "$MNT/t"
		cold
		check_walk $who -r -L -j2 "$MNT/t"
	done
}

# Claim (dcache-probe.1 DESCRIPTION): a directory larger than one chunk of
# a listing (read, probed by every thread and visited a chunk at a time)
# gets every entry's state, and the counts, as the prober saw them before.
test_wide_directory_reports_each_entry_as_the_prober_saw_it() {
	local j who as cached
	for who in root nobody; do
		as=
		[ $who = nobody ] && as=as_nobody
		for j in 1 8; do
			cold
			# Every third name cached, the rest and the directories not.
			(cd "$MNT/wide" && seq -f 'f%05g' 1 3 10000 | $as xargs stat >/dev/null)
			check_walk $who -r -j$j "$MNT/wide"
			assertEquals "$who -j$j: every entry once" 10021 "$(grep -c . <<<"$OUT")"
			cached=$(grep -c '^cached ' <<<"$OUT")
			# The same state again: the counts of -s say the same.
			cold
			(cd "$MNT/wide" && seq -f 'f%05g' 1 3 10000 | $as xargs stat >/dev/null)
			run $as dcache-probe -r -s -j$j "$MNT/wide"
			assertContains "$who -j$j: the counts" "$OUT" "	$cached/10021	$MNT/wide"
			# And every --per-dir row, and the summary, as the prober's.
			cold
			(cd "$MNT/wide" && seq -f 'f%05g' 1 3 10000 | $as xargs stat >/dev/null)
			before=$($as "$OPROBE" - <"$SHUNIT_TMPDIR/paths")
			run $as dcache-probe -r --per-dir --json -j$j "$MNT/wide"
			diff=$(rows_agree "$before" "$OUT" "$MNT/wide" '.*')
			assertTrue "$who -j$j: --per-dir rows against the prober: $diff" $?
		done
	done
}

# rows_agree BEFORE JSON ROOT REGEX - the --per-dir --json rows of OUT
# whose path below ROOT matches REGEX (and the summary, if REGEX is .*)
# count exactly the prober's states of the paths below each; and in every
# row and the summary, paths = cached + negative + miss + error.
rows_agree() {
	printf '%s\n' "$1" >"$SHUNIT_TMPDIR/rows.before"
	printf '%s\n' "$2" >"$SHUNIT_TMPDIR/rows.out"
	python3 - "$SHUNIT_TMPDIR/rows.before" "$SHUNIT_TMPDIR/rows.out" "$3" "$4" <<'PY'
import json, re, sys
before, out = (open(f).read() for f in sys.argv[1:3])
root, rx = sys.argv[3:5]
st = {}
for l in filter(None, before.splitlines()):
    s, p = l.split(" ", 1)
    st[p] = s
keys = ("cached", "negative", "miss", "error")
bad = []
def count(pfx, inclusive):
    c = dict.fromkeys(keys, 0)
    for p, s in st.items():
        if p.startswith(pfx + "/") or (inclusive and p == pfx):
            c[s if s in keys else "error"] += 1
    c["paths"] = sum(c[k] for k in keys)
    return c
rows = 0
for l in filter(None, out.splitlines()):
    o = json.loads(l)
    if o["type"] not in ("dir", "summary"):
        continue
    if o["paths"] != sum(o[k] for k in keys):
        bad.append("row does not add up: %s" % l)
    if o["type"] == "summary":
        if rx == ".*":
            want = count(root, True)
            got = {k: o[k] for k in want}
            if got != want:
                bad.append("summary %s, prober %s" % (got, want))
        continue
    rel = o["path"][len(root):].lstrip("/")
    if not re.fullmatch(rx, rel):
        continue
    rows += 1
    want = count(o["path"], False)
    got = {k: o[k] for k in want}
    if got != want:
        bad.append("%s: %s, prober %s" % (o["path"], got, want))
if not rows:
    bad.append("no row matched")
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
}

# churn_check MODE BEFORE OUT ERR RC - a walk of churn made while
# mutate_wide.py changed it (MODE entries: text lines; rows: --per-dir
# --json).  What a concurrent change cannot make uncertain is exact:
#  - every path the mutator never touches (the root, fNNNNN, dNN and
#    their files) is reported once, with the state the prober saw before;
#  - no path is reported twice, and every one is a name of the tree
#    (mNNNN, rNNNN, uNNNN, eNN included), in a state of dcprobe(7);
#  - a walk error is only an eNN directory removed before it was listed
#    (ENOENT), and the exit status is 2 exactly when there is one, else 1
#    (the tree is partly cold);
#  - the counts are the sum of the lines: the summary counts every
#    reported line by state, and --per-dir rows add up (each row's states
#    to its paths, the root's row plus the root to the summary); the
#    stable dNN rows are the prober's; the root's row counts at least the
#    stable entries and at most those plus every mutable name twice.
churn_check() {
	printf '%s\n' "$2" >"$SHUNIT_TMPDIR/churn.before"
	printf '%s\n' "$3" >"$SHUNIT_TMPDIR/churn.out"
	printf '%s\n' "$4" >"$SHUNIT_TMPDIR/churn.err"
	python3 - "$1" "$SHUNIT_TMPDIR"/churn.{before,out,err} "$5" "$MNT/churn" <<'PY'
import json, re, sys
mode, rc, root = sys.argv[1], sys.argv[5], sys.argv[6]
before, out, err = (open(f).read() for f in sys.argv[2:5])
rc = int(rc)
st = {}
for l in filter(None, before.splitlines()):
    s, p = l.split(" ", 1)
    st[p] = s
stable = re.compile(r"(f\d{5}|d\d\d(/g\d)?)?")
names = re.compile(r"f\d{5}|d\d\d(/g\d)?|[mr]\d{4}|u\d{4}|e\d\d")
states = ("cached", "negative", "miss")
bad = []
def rel(p):
    return p[len(root):].lstrip("/") if p == root or p.startswith(root + "/") else None
werr = []
for l in filter(None, err.splitlines()):
    m = re.fullmatch(r".*dcache-probe: cannot walk '(.*)': No such file or directory", l)
    if m:
        werr.append(m.group(1))
    elif mode == "rows" or not re.fullmatch(r".*dcache-probe: \d+ paths: .*", l):
        bad.append("unexpected on stderr: " + l)
seen = {}
rows = {}
summary = None
for l in filter(None, out.splitlines()):
    if mode == "entries":
        s, p = l.split(" ", 1)
        if s not in states:
            bad.append("not a state: " + l)
        seen.setdefault(p, []).append(s)
        continue
    o = json.loads(l)
    if o["type"] == "error":
        if o["errno"] != "ENOENT":
            bad.append("walk error: " + l)
        werr.append(o["path"])
    elif o["type"] == "dir":
        if o["path"] in rows:
            bad.append("row twice: " + o["path"])
        rows[o["path"]] = o
    elif o["type"] == "summary":
        summary = o
    else:
        bad.append("record: " + l)
for p in werr:
    r = rel(p)
    if r is None or not re.fullmatch(r"e\d\d", r):
        bad.append("walk error not of a removed directory: " + p)
if len(set(werr)) != len(werr):
    bad.append("a walk error twice")
if rc != (2 if werr else 1):
    bad.append("exit status %d with %d walk errors" % (rc, len(werr)))
keys = ("cached", "negative", "miss", "error")
if mode == "entries":
    for p, ss in seen.items():
        r = rel(p)
        if len(ss) > 1:
            bad.append("reported %d times: %s" % (len(ss), p))
        if r is None or (r and not names.fullmatch(r)):
            bad.append("not a name of the tree: " + p)
    for p, s in st.items():
        r = rel(p)
        if r is not None and stable.fullmatch(r) and seen.get(p) != [s]:
            bad.append("%s: the prober said %s, the walk %s" % (p, s, seen.get(p)))
    m = [l for l in err.splitlines() if re.fullmatch(r".*dcache-probe: \d+ paths: .*", l)]
    c = {s: sum(ss.count(s) for ss in seen.values()) for s in states}
    want = "%d paths: %d cached, %d negative, %d miss, 0 error" % (
        sum(c.values()), c["cached"], c["negative"], c["miss"])
    if len(m) != 1 or want not in m[0]:
        bad.append("summary %r, lines say %r" % (m, want))
    if werr and (len(m) != 1 or not m[0].endswith("; %d walk error%s" % (len(werr), "s" if len(werr) > 1 else ""))):
        bad.append("walk errors not in the summary: %r" % m)
else:
    for o in list(rows.values()) + ([summary] if summary else []):
        if o["paths"] != sum(o[k] for k in keys) or o["error"]:
            bad.append("row does not add up: %s" % o)
    top = rows.get(root)
    if not summary or not top:
        bad.append("no summary or no row for the root")
    else:
        own = st[root]
        for k in keys:
            if summary[k] != top[k] + (own == k):
                bad.append("summary %s %d, root row %d + the root (%s)" % (k, summary[k], top[k], own))
        if summary["walk_errors"] != len(werr):
            bad.append("summary walk_errors %d, %d errors" % (summary["walk_errors"], len(werr)))
        sc = {k: sum(1 for p, s in st.items() if rel(p) and stable.fullmatch(rel(p)) and s == k) for k in keys}
        mutable = sum(1 for p in st if rel(p) and not stable.fullmatch(rel(p)))
        for k in keys:
            if not sc[k] <= top[k] <= sc[k] + 2 * mutable:
                bad.append("root row %s %d, stable %d, mutable names %d" % (k, top[k], sc[k], mutable))
    for p in rows:
        r = rel(p)
        if r is None or (r and not names.fullmatch(r)):
            bad.append("row of a directory not in the tree: " + p)
        if r and re.fullmatch(r"d\d\d", r):
            want = {k: sum(1 for q, s in st.items() if q.startswith(p + "/") and s == k) for k in keys}
            got = {k: rows[p][k] for k in keys}
            if got != want:
                bad.append("%s: %s, prober %s" % (p, got, want))
    if sum(1 for p in rows if re.fullmatch(r"d\d\d", rel(p) or "")) != 10:
        bad.append("not every stable directory has its row")
print("\n".join(bad[:10]))
sys.exit(1 if bad else 0)
PY
}

# Claim (dcprobe.7 "a probe is a snapshot"): a wide directory (more than two
# chunks, probed by every thread) whose entries are renamed and removed
# while it is listed is reported consistently: the entries nobody touched
# exactly as the prober saw them before, the others once each in a state
# of dcprobe(7) or, for a directory removed before it was listed, as a
# walk error; counts that add up.  What the mutator's changes meet is left
# to the scheduler, so only what holds whatever they meet is asserted.
test_wide_directory_renamed_and_removed_while_listed() {
	local who as j mode mpid before changes rc out err
	for who in root nobody; do
		as=
		[ $who = nobody ] && as=as_nobody
		for j in 1 8; do
			for mode in entries rows; do
				cold
				# The directory and every third stable file, every other
				# mutable one, and d00-d04 with their files cached.
				$as stat "$MNT/churn" >/dev/null
				(cd "$MNT/churn" && { seq -f 'f%05g' 1 3 6000; seq -f 'm%04g' 1 2 2000
					seq -f 'u%04g' 1 2 1000; seq -f 'd%02g' 5; seq -f 'd%02g/g3' 5; } |
					$as xargs stat >/dev/null)
				before=$($as "$OPROBE" - <"$SHUNIT_TMPDIR/paths-churn")
				rm -f "$SHUNIT_TMPDIR/ready" "$SHUNIT_TMPDIR/stop"
				python3 "$DCP_TESTS/lib/mutate_wide.py" "$MNT/churn" "$SHUNIT_TMPDIR/ready" \
					"$SHUNIT_TMPDIR/stop" >"$SHUNIT_TMPDIR/changes" &
				mpid=$!
				# Started, not timed: the walk begins once a change is made.
				while [ ! -e "$SHUNIT_TMPDIR/ready" ] && kill -0 $mpid 2>/dev/null; do
					sleep 0.01
				done
				if [ $mode = entries ]; then
					run $as dcache-probe -r -j$j "$MNT/churn"
				else
					run $as dcache-probe -r --per-dir --json -j$j "$MNT/churn"
				fi
				rc=$RC out=$OUT err=$ERR
				touch "$SHUNIT_TMPDIR/stop"
				wait $mpid
				assertEquals "$who -j$j $mode: the mutator ran" 0 $?
				changes=$(cat "$SHUNIT_TMPDIR/changes")
				diff=$(churn_check $mode "$before" "$out" "$err" "$rc")
				assertTrue "$who -j$j $mode ($changes changes): $diff" $?
			done
		done
	done
}

# Claim (dcache-probe.1 -L): a link's state is that of its whole followed
# path before the walk touched anything, even when the walk has since
# entered the target through its own name or through another link.
test_follow_reports_a_link_as_it_was_before_the_walk() {
	local who j as
	for who in root nobody; do
		as=
		[ $who = nobody ] && as=as_nobody
		for j in 1 2; do
			cold
			# The links' own entries cached, every b cold.
			stat "$MNT"/sib/d*/l* >/dev/null
			check_walk $who -r -L -j$j "$MNT/sib"
			assertContains "$who -j$j: d2/l1 missed" "$OUT" "miss $MNT/sib/d2/l1"
			assertContains "$who -j$j: d3/l2 missed" "$OUT" "miss $MNT/sib/d3/l2"
			assertContains "$who -j$j: d1/l2 missed" "$OUT" "miss $MNT/sib/d1/l2"
		done
		cold
		# d1/b warm for the caller: links into it cached, the others not.
		$as stat "$MNT"/sib/d*/l* "$MNT/sib/d1/b/f" >/dev/null
		check_walk $who -r -L -j1 "$MNT/sib"
		assertContains "$who: d2/l1 cached" "$OUT" "cached $MNT/sib/d2/l1"
		assertContains "$who: d1/l2 missed" "$OUT" "miss $MNT/sib/d1/l2"
	done
}

# Claim (dcprobe.7): for a caller who is not the owner (root included) a
# directory's ACL must be loaded; until then lookups inside it miss, and
# the walk reports them as the misses they are.
test_non_owner_misses_below_a_directory_whose_acl_is_not_loaded() {
	as_nobody find "$MNT/u" -exec stat {} + >/dev/null 2>&1 # the owner warms u
	run "$OPROBE" "$MNT/u" "$MNT/u/." "$MNT/u/d1"
	assertEquals "root, a non-owner, misses inside u" "cached $MNT/u
miss $MNT/u/.
miss $MNT/u/d1" "$OUT"
	run as_nobody "$OPROBE" "$MNT/u/d1"
	assertEquals "the owner does not" "cached $MNT/u/d1" "$OUT"
	check_walk root -r -j1 "$MNT/u"
	assertContains "$OUT" "miss $MNT/u/d1/f1"
	# The mirror case: root's tree, warmed by root, walked by nobody.
	cold
	find "$MNT/t" -exec stat {} + >/dev/null
	check_walk nobody -r -j1 "$MNT/t"
	assertContains "$OUT" "miss $MNT/t/a"
}

# Claim (dcprobe.7): listing a directory loads its ACL for a non-owner.
test_listing_loads_the_acl_for_a_non_owner() {
	as_nobody find "$MNT/u" -exec stat {} + >/dev/null 2>&1
	run "$OPROBE" "$MNT/u/d1"
	assertEquals "miss $MNT/u/d1" "$OUT"
	ls "$MNT/u" >/dev/null
	run "$OPROBE" "$MNT/u/d1"
	assertEquals "cached $MNT/u/d1" "$OUT"
}

# Claim (dcache-probe.1 --no-perturb, dcprobe.7): a run leaves the dentry
# cache as it found it, for root and for any other caller.
test_no_perturb_leaves_the_cache_as_found_for_any_caller() {
	local who as before after diff
	for who in root nobody; do
		as=
		[ $who = nobody ] && as=as_nobody
		cold
		stat "$MNT/t/a/b" >/dev/null
		as_nobody find "$MNT/u" -exec stat {} + >/dev/null 2>&1
		find "$MNT/big/w" -exec stat {} + >/dev/null
		before=$($as "$OPROBE" - <"$SHUNIT_TMPDIR/paths")
		run $as dcache-probe -r -j2 --no-perturb "$MNT/t" "$MNT/u" "$MNT/big"
		assertEquals "$who: cold parts: exit 1" 1 "$RC"
		after=$($as "$OPROBE" - <"$SHUNIT_TMPDIR/paths")
		assertEquals "$who: the cache as found" "$before" "$after"
		diff=$(agree "$before" "$OUT")
		assertTrue "$who: states as the prober's: $diff" $?
		# The same as the other caller sees it.
		if [ $who = root ]; then
			assertContains "root does not own u: u is not listed" "$OUT" "unvisited $MNT/u"
		fi
	done
}

# Claim (dcache-probe.1 --no-perturb): on a tree that is warm for the caller
# nothing is left unvisited: a file, or a link to a file, has no inside.
test_no_perturb_on_a_warm_tree_is_complete() {
	local who as
	for who in root nobody; do
		as=
		[ $who = nobody ] && as=as_nobody
		cold
		$as find -L "$MNT/t" -exec stat {} + >/dev/null 2>&1
		$as stat "$MNT" >/dev/null
		run $as dcache-probe -r -L --no-perturb "$MNT/t"
		assertEquals "$who: warm, complete: $OUT" 0 "$RC"
		assertNotContains "$who" "$OUT" "unvisited"
		run $as dcache-probe -r -j1 --no-perturb "$MNT/t/a/c" "$MNT/t/lnk"
		assertEquals "$who: file roots" "cached $MNT/t/a/c
cached $MNT/t/lnk" "$OUT"
		assertEquals "$who: file roots: exit" 0 "$RC"
	done
}

# Claim (dcache-probe.1 --min-cached, --ignore-unvisited; issue 10.3): a
# verdict never passes while the contents of a directory are unknown.
test_unvisited_directories_fail_the_verdict() {
	find "$MNT/big/w" -exec stat {} + >/dev/null # 200 warm files, cold/ untouched
	run "$OPROBE" "$MNT/big/cold"
	assertEquals "miss $MNT/big/cold" "$OUT"
	run dcache-probe -rq --no-perturb --min-cached 95 "$MNT/big"
	assertEquals "99.5% of what it saw, but cold/ unknown" 1 "$RC"
	run dcache-probe -rq --no-perturb --min-cached 95 --ignore-unvisited "$MNT/big"
	assertEquals "asked for explicitly" 0 "$RC"
	run dcache-probe -r --no-perturb "$MNT/big"
	assertContains "$OUT" "unvisited $MNT/big/cold"
	assertEquals "-0 --only=unvisited: what to warm with -r" "$MNT/big/cold|" \
		"$(dcache-probe -r --no-perturb -0 --only=unvisited "$MNT/big" 2>/dev/null | tr '\0' '|')"
	assertContains "$ERR" "at most 99.5% cached; 1 directory not visited (what it holds is unknown)"
	run dcache-probe -r --no-perturb --per-dir=0 "$MNT/big"
	assertEquals "$(printf ' 99.5%%\t201/202+1?\t%s' "$MNT/big")" "$OUT"
	run dcache-probe -r --no-perturb --json "$MNT/big"
	assertEquals "False" "$(json_get 'objs[-1]["complete"]' <<<"$OUT")"
	assertEquals "miss" "$(json_get '[o["reason"] for o in objs if o["type"] == "unvisited"][0]' <<<"$OUT")"
	run dcache-probe -r --no-perturb --prometheus "$MNT/big"
	assertContains "$OUT" "dcprobe_complete{command=\"dcache-probe\",root=\"$MNT/big\"} 0"
	assertContains "$OUT" 'dcprobe_exit_status{command="dcache-probe"} 1'
	# The README recipe now decides to warm, and warming makes it all cached.
	dcache-probe -rq --no-perturb --min-cached 95 "$MNT/big" || warm -rq "$MNT/big"
	run "$OPROBE" - <"$SHUNIT_TMPDIR/paths"
	assertEquals "no miss left under big" "" "$(grep "$MNT/big" <<<"$OUT" | grep -v '^cached ')"
	run dcache-probe -rq --no-perturb --min-cached 95 "$MNT/big"
	assertEquals "warm now: the recipe does nothing" 0 "$RC"
}

# Claim (all four man pages; issue 10.4, 19.8): a walk root that does not
# exist and an empty PATH are errors; an absent single path is negative; an
# empty list is nothing to do (as du --files0-from), which no gate passes.
test_a_missing_tree_is_an_error() {
	local cmd
	stat "$MNT/t/absent" >/dev/null 2>&1
	run "$OPROBE" "$MNT/t/absent"
	assertEquals "negative $MNT/t/absent" "$OUT"
	run dcache-probe -rq --no-perturb --min-cached 95 "$MNT/t/absent"
	assertEquals "dcache-probe -r" 2 "$RC"
	run dcache-probe -r --prometheus "$MNT/t/absent"
	assertEquals 2 "$RC"
	assertContains "$OUT" 'dcprobe_exit_status{command="dcache-probe"} 2'
	assertContains "$OUT" "dcprobe_walk_errors{command=\"dcache-probe\",root=\"$MNT/t/absent\"} 1"
	run warm -r "$MNT/t/absent"
	assertEquals "warm -r" 2 "$RC"
	assertContains "$ERR" "No such file or directory"
	run dcache-probe "$MNT/t/absent"
	assertEquals "a single absent path is a state" 0 "$RC"
	assertEquals "negative $MNT/t/absent" "$OUT"
	for cmd in cachedopen dcache-probe warm uring-open; do
		run $cmd "" "$MNT/t/a/c"
		assertEquals "$cmd '' first" 64 "$RC"
		assertContains "$ERR" "an empty PATH names nothing"
		run $cmd "$MNT/t/a/c" ""
		assertEquals "$cmd '' last" 64 "$RC"
		assertContains "$ERR" "an empty PATH names nothing"
		run $cmd "$MNT/t/a/c" "" "$MNT/t/a/c"
		assertEquals "$cmd '' in the middle" 64 "$RC"
		assertEquals "$cmd: nothing ran" "" "$OUT"
	done
	run dcache-probe --from /dev/null
	assertEquals "dcache-probe, empty list" 0 "$RC"
	assertEquals "dcache-probe, empty list: no share of nothing" \
		"dcache-probe: 0 paths: 0 cached, 0 negative, 0 miss, 0 error" "$ERR"
	run dcache-probe -q --min-cached 0 --from /dev/null
	assertEquals "dcache-probe, empty list: a gate fails" 1 "$RC"
	run dcache-probe -q --min-resident 0 --from /dev/null
	assertEquals "dcache-probe, empty list: a data gate fails" 1 "$RC"
	run warm --from /dev/null
	assertEquals "warm, empty list" 0 "$RC"
	run warm --files0-from=- </dev/null
	assertEquals "warm, empty list on stdin" 0 "$RC"
	run cachedopen --from /dev/null
	assertEquals "cachedopen, empty list" 0 "$RC"
	assertEquals "cachedopen: nothing said" "" "$OUT$ERR"
	run uring-open --bench --from /dev/null
	assertEquals "uring-open, empty list" 0 "$RC"
	assertEquals "uring-open: nothing said" "" "$OUT$ERR"
	# The recipe that used to break a set -euo pipefail script on a warm tree.
	warm -r "$MNT/t/a"
	run bash -c "set -euo pipefail; dcache-probe -r -0 --only=miss '$MNT/t/a' | warm --files0-from=-"
	assertEquals "dcache-probe --only=miss | warm on a warm tree ($ERR)" 0 "$RC"
}

# Claim (dcache-probe.1 --per-mount): rows are mounts, not devices.
test_per_mount_has_a_row_per_mount() {
	mount --bind "$MNT/t/a" "$MNT/bind" || fail "bind mount"
	run dcache-probe -r --per-mount "$MNT/t" "$MNT/bind"
	umount "$MNT/bind"
	assertEquals "two rows" 2 "$(grep -c . <<<"$OUT")"
	assertContains "$OUT" "$(printf '\text4\t%s' "$MNT/bind")"
	assertContains "$OUT" "$(printf '\text4\t%s' "$MNT")"
	mount --bind "$MNT/t/a" "$MNT/bind" || fail "bind mount"
	run dcache-probe -r --per-mount --json "$MNT/t" "$MNT/bind"
	umount "$MNT/bind"
	assertEquals "2" "$(json_get 'len({o["mountpoint"] for o in objs if o["type"] == "mount"})' <<<"$OUT")"
}

# Claim (dcprobe.7 no-negative): tmpfs keeps no negative dentries: an absent
# name misses right after it was looked up; --per-mount flags tmpfs.
test_tmpfs_absent_names_always_miss() {
	local who as
	mount -t tmpfs dcp-claims "$MNT/tmp" || fail "tmpfs"
	chmod 0755 "$MNT/tmp"
	touch "$MNT/tmp/here"
	for who in root nobody; do
		as=
		[ $who = nobody ] && as=as_nobody
		$as stat "$MNT/tmp/absent" >/dev/null 2>&1
		run $as "$OPROBE" "$MNT/tmp/absent" "$MNT/tmp/here"
		assertEquals "$who" "miss $MNT/tmp/absent
cached $MNT/tmp/here" "$OUT"
		run $as dcache-probe "$MNT/tmp/absent"
		assertEquals "$who: dcache-probe agrees" "miss $MNT/tmp/absent" "$OUT"
	done
	run dcache-probe -r --per-mount "$MNT/tmp"
	assertContains "$OUT" "$(printf '\ttmpfs*\t%s' "$MNT/tmp")"
	run dcache-probe -r --per-mount --json "$MNT/tmp"
	assertEquals "no-negative" "$(json_get '[o["resolve_cached"] for o in objs if o["type"] == "mount"][0]' <<<"$OUT")"
	umount "$MNT/tmp"
}

# Claim (warm.1 -L, dcache-probe.1 -L): a link back to a directory above it
# is an ELOOP error and is not entered again.
test_follow_detects_a_cycle_on_entry() {
	local entries
	entries=$(find "$MNT/cyc" | wc -l)
	run warm -r -L -v "$MNT/cyc"
	assertEquals "warm: exit 2" 2 "$RC"
	assertEquals "warm: each entry once" "$entries" "$(grep -c "^$MNT/cyc" <<<"$OUT")"
	assertContains "$ERR" "Too many levels of symbolic links"
	cold
	run dcache-probe -r -L "$MNT/cyc"
	assertEquals "dcache-probe: exit 2" 2 "$RC"
	assertEquals "dcache-probe: each entry once" "$entries" "$(grep -c . <<<"$OUT")"
}

# Claim (dcache-probe.1, dcprobe.7): opening a walk's root looks up its
# ancestors; --no-perturb does not open a root that is not cached.
test_opening_a_root_looks_up_its_ancestors() {
	run dcache-probe -r --no-perturb "$MNT/t/a/b"
	run "$OPROBE" "$MNT/t/a"
	assertEquals "--no-perturb: still cold" "miss $MNT/t/a" "$OUT"
	run dcache-probe -r "$MNT/t/a/b"
	assertContains "the root's probe came first" "$OUT" "miss $MNT/t/a/b"
	run "$OPROBE" "$MNT/t/a"
	assertEquals "the ancestor is now cached" "cached $MNT/t/a" "$OUT"
}

# Claim (dcprobe.7): a symbolic link loop misses until one normal follow
# has read the links, and is ELOOP after that.
test_a_symlink_loop_misses_until_followed_once() {
	run "$OPROBE" -L "$MNT/loops/l1"
	assertEquals "miss $MNT/loops/l1" "$OUT"
	run dcache-probe -L "$MNT/loops/l1"
	assertEquals "miss $MNT/loops/l1" "$OUT"
	stat -L "$MNT/loops/l1" >/dev/null 2>&1
	run "$OPROBE" -L "$MNT/loops/l1"
	assertEquals "error:ELOOP $MNT/loops/l1" "$OUT"
	run dcache-probe -L "$MNT/loops/l1"
	assertEquals "error ELOOP $MNT/loops/l1" "$OUT"
}

. "$SHUNIT2"
