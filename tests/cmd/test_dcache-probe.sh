#!/bin/bash
# Tests for dcache-probe on real cold-cache fixtures.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

# The tree under $MNT/t (14 entries below t):
#   a/ f1..f4 sub/ g1 g2     b/ f1..f4     c
T_BELOW=14

oneTimeSetUp() {
	MNT=$(fixture_new 64) || fail "cannot make fixture"
	mkdir -p "$MNT/t/a/sub" "$MNT/t/b"
	for f in f1 f2 f3 f4; do
		echo "$f" >"$MNT/t/a/$f"
		echo "$f" >"$MNT/t/b/$f"
	done
	touch "$MNT/t/a/sub/g1" "$MNT/t/a/sub/g2" "$MNT/t/c"

	mkdir -p "$MNT/names"
	touch "$MNT/names/$(printf 'new\nline')" "$MNT/names/$(printf 'esc\033[31mred')" \
		"$MNT/names/$(printf 'bad\377byte')" "$MNT/names/back\\slash" \
		"$MNT/names/quo\"te" "$MNT/names/sp ace"

	mkdir -p "$MNT/loop/d"
	ln -s . "$MNT/loop/self"
	ln -s l2 "$MNT/loop/l1"
	ln -s l1 "$MNT/loop/l2"
	ln -s .. "$MNT/loop/d/up"
	ln -s t "$MNT/tlink"

	mkdir -p "$MNT/perm/priv" "$MNT/perm/pub"
	touch "$MNT/perm/priv/secret" "$MNT/perm/pub/file"
	chmod 0700 "$MNT/perm/priv"
	mkdir -p "$MNT/pm/inner" "$MNT/pm/sys" "$MNT/pm/ext"
	touch "$MNT/pm/here"
}

cold() { fixture_cold_busy "$MNT"; }


umount_retry() {
	local i
	for i in $(seq 30); do
		umount "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	umount "$1"
}

setUp() {
	cold || fail "cannot remount fixture"
}

# Entries of OUT (text lines) in STATE.
count_state() {
	grep -c "^$1 " <<<"$OUT"
}

test_cold_tree_is_all_miss() {
	run dcache-probe -r -j1 "$MNT/t"
	assertEquals "a cold tree is cold" 1 "$RC"
	assertEquals "every entry, root included" $((T_BELOW + 1)) "$(wc -l <<<"$OUT")"
	assertEquals "every entry is a miss" $((T_BELOW + 1)) "$(count_state miss)"
	assertContains "$OUT" "miss $MNT/t/a/sub/g1"
	assertEquals "dcache-probe: 15 paths: 0 cached, 0 negative, 15 miss, 0 error; 0.0% cached" "$ERR"
}

test_probing_does_not_warm_files() {
	run dcache-probe -r "$MNT/t"
	assertEquals 1 "$RC"
	assertEquals 11 "$(grep -c "^miss .*/[fgc][0-9]*$" <<<"$OUT")"
	run dcache-probe -r "$MNT/t"
	assertEquals "still cold" 1 "$RC"
	# Listing a directory warmed the directory itself, never its files.
	assertEquals "files miss again" 11 "$(grep -c "^miss .*/[fgc][0-9]*$" <<<"$OUT")"
	assertEquals "the walked directories are now cached" 4 "$(count_state cached)"
}

test_warm_tree_is_all_cached() {
	du -a "$MNT/t" >/dev/null
	run dcache-probe -r "$MNT/t"
	assertEquals "after du everything is cached" 0 "$RC"
	assertEquals $((T_BELOW + 1)) "$(count_state cached)"
	assertEquals "" "$(grep -v '^cached ' <<<"$OUT")"
	assertContains "$ERR" "15 paths: 15 cached, 0 negative, 0 miss, 0 error; 100.0% cached"
}

test_negative_dentries() {
	ls -l "$MNT/t" >/dev/null
	stat "$MNT/t/absent" >/dev/null 2>&1
	run dcache-probe "$MNT/t/absent" "$MNT/t/c"
	assertEquals "negative counts as cached" 0 "$RC"
	assertEquals "negative $MNT/t/absent
cached $MNT/t/c" "$OUT"
	run dcache-probe "$MNT/t/never-looked-up"
	assertEquals "an absent name nobody looked up is a miss" 1 "$RC"
	assertEquals "miss $MNT/t/never-looked-up" "$OUT"
	# A tree that is not there is an error, never a warm tree.
	run dcache-probe -r "$MNT/t/absent"
	assertEquals "a negative walk root is an error" 2 "$RC"
	assertEquals "negative $MNT/t/absent" "$OUT"
	assertContains "$ERR" "cannot walk '$MNT/t/absent': No such file or directory"
}

# A tree that is not there, or that cannot be walked, reads as no share and
# not complete, never as warm (100.0% 1/1) or as cold (0.0% 0/1), in every
# format: on the first run (its name never looked up: a miss, the prober
# says) and once the kernel knows it absent (negative).  The probe of its
# name is still counted and printed; without -r the name is a probe only.
test_a_tree_not_there_has_no_share() {
	local nope=$MNT/t/nope run state as
	ls "$MNT/t" >/dev/null
	for run in 1 2; do
		state=$("$DCP_BUILD/tests/oprobe" "$nope")
		assertEquals "run $run: the prober" "$([ $run = 1 ] && echo miss || echo negative) $nope" "$state"
		run dcache-probe -r -s "$nope"
		assertEquals "run $run: -s exit" 2 "$RC"
		assertEquals "run $run: no share" "     -	$([ $run = 1 ] && echo 0 || echo 1)/1	$nope" "$OUT"
		assertContains "run $run" "$ERR" "cannot walk '$nope': No such file or directory"
	done
	run dcache-probe -r "$nope"
	assertContains "the summary on stderr: $ERR" "$ERR" "no share: 1 tree could not be walked; 1 walk error"
	assertNotContains "$ERR" "100.0% cached"
	run dcache-probe -r -s --json "$nope"
	assertEquals 2 "$RC"
	assertEquals "root and summary: no share, not complete" "None False None False 2" \
		"$(json_get '"%s %s %s %s %s" % (objs[-2]["cached_percent"], objs[-2]["complete"], objs[-1]["cached_percent"], objs[-1]["complete"], objs[-1]["status"])' <<<"$OUT")"
	run dcache-probe -r --prometheus "$nope"
	assertEquals 2 "$RC"
	prom_check <<<"$OUT" || fail "bad exposition format"
	assertNotContains "no ratio sample" "$OUT" "dcprobe_cached_ratio{"
	assertEquals "complete 0, 1 walk error, status 2" "0 1 2" \
		"$(prom_check "dcprobe_complete{command=\"dcache-probe\",root=\"$nope\"}" \
			"dcprobe_walk_errors{command=\"dcache-probe\",root=\"$nope\"}" \
			'dcprobe_exit_status{command="dcache-probe"}' <<<"$OUT" | xargs)"
	# With a tree that is there: its own row keeps its share, the total has none.
	du -a "$MNT/t/b" >/dev/null
	run dcache-probe -r -s -c "$nope" "$MNT/t/b"
	assertEquals 2 "$RC"
	assertEquals "     -	1/1	$nope
100.0%	5/5	$MNT/t/b
     -	6/6	total" "$OUT"
	run dcache-probe -r --prometheus "$nope" "$MNT/t/b"
	assertContains "$OUT" "dcprobe_cached_ratio{command=\"dcache-probe\",root=\"$MNT/t/b\"} 1"
	assertNotContains "$OUT" "dcprobe_cached_ratio{command=\"dcache-probe\",root=\"$nope\"}"
	# A directory nobody may not list is no tree for nobody either.
	ls -l "$MNT/perm" >/dev/null
	state=$(as_nobody "$DCP_BUILD/tests/oprobe" "$MNT/perm/priv")
	run as_nobody "$DCP_BIN/dcache-probe" -r -s "$MNT/perm/priv"
	assertEquals "as nobody" 2 "$RC"
	assertEquals "as nobody: no share (the prober: $state)" \
		"     -	$([ "${state%% *}" = cached ] && echo 1 || echo 0)/1	$MNT/perm/priv" "$OUT"
	assertContains "$ERR" "cannot walk '$MNT/perm/priv': Permission denied"
	# Without -r, an absent name is a probe: negative, cached (DESIGN).
	run dcache-probe "$nope"
	assertEquals "a probe of a known absent name" 0 "$RC"
	assertEquals "negative $nope" "$OUT"
	# A subdirectory that cannot be listed leaves its tree incomplete.
	run as_nobody "$DCP_BIN/dcache-probe" -r -s --json "$MNT/perm"
	assertEquals "a walk error below the root: a share, not complete" "False 2" \
		"$(json_get '"%s %s" % (objs[-1]["complete"], objs[-1]["status"])' <<<"$OUT")"
	assertNotEquals "its share is there" "None" "$(json_get 'objs[-2]["cached_percent"]' <<<"$OUT")"
}

# A walk root whose middle component is a regular file (FILE/x, ENOTDIR)
# is not there to walk, like a missing one: exit 2 whatever the gate; its
# line is the kernel's answer (the prober's: a cached walk cannot tell
# ENOTDIR, so a miss).  A regular file as the root itself is no error.
test_walk_root_through_a_file() {
	local f=$MNT/t/c as
	stat "$f" >/dev/null
	for as in "" as_nobody; do
		run $as "$DCP_BIN/dcache-probe" -r "$f/x"
		assertEquals "$as: exit 2: $ERR" 2 "$RC"
		assertEquals "$as: the prober's answer" "$("$DCP_BUILD/tests/oprobe" "$f/x")" "$OUT"
		assertContains "$as" "$ERR" "cannot walk '$f/x': Not a directory"
		run $as "$DCP_BIN/dcache-probe" -r --min-cached 0 --json "$f/x"
		assertEquals "$as: no gate passes" 2 "$RC"
		assertEquals "$as" "1 2" "$(json_get '"%d %d" % (objs[-1]["walk_errors"], objs[-1]["status"])' <<<"$OUT")"
		run $as "$DCP_BIN/warm" -r "$f/x"
		assertEquals "$as: warm: exit 2" 2 "$RC"
		run $as "$DCP_BIN/warm" -r --prometheus "$f/x"
		assertContains "$as: warm: a root not walked is a walk error, as dcache-probe says" \
			"$OUT" "dcprobe_walk_errors{command=\"warm\",root=\"$f/x\"} 1"
		assertContains "$as" "$ERR" "'$f/x': Not a directory"
		run $as "$DCP_BIN/dcache-probe" -r "$f"
		assertEquals "$as: a file as the root: $ERR" 0 "$RC"
		assertEquals "$as" "cached $f" "$OUT"
	done
}

test_no_perturb_leaves_cache_as_found() {
	ls -l "$MNT/t" >/dev/null   # t, a, b and c cached, what lies below them not
	run dcache-probe -r -j1 --no-perturb "$MNT/t"
	local out1=$OUT err1=$ERR rc1=$RC
	assertEquals 1 "$rc1"
	assertContains "$out1" "cached $MNT/t/a"
	assertContains "$out1" "miss $MNT/t/a/f1"
	assertContains "$out1" "miss $MNT/t/a/sub"
	assertNotContains "sub is cold: not listed" "$out1" "$MNT/t/a/sub/g1"
	assertContains "$out1" "unvisited $MNT/t/a/sub"
	assertContains "$err1" "13 paths: 4 cached, 0 negative, 9 miss, 0 error; at most 30.8% cached; 1 directory not visited (what it holds is unknown)"
	run dcache-probe -r -j1 --no-perturb "$MNT/t"
	assertEquals "second run byte-identical" "$out1" "$OUT"
	assertEquals "$err1" "$ERR"
	assertEquals "$rc1" "$RC"
	# The default order is not fixed with several threads, the set is.
	run dcache-probe -r --no-perturb "$MNT/t"
	assertEquals "$(sort <<<"$out1")" "$(sort <<<"$OUT")"
	# A plain -r run opens the cold directories it lists: that shows.
	run dcache-probe -r "$MNT/t"
	run dcache-probe -r -j1 --no-perturb "$MNT/t"
	assertNotEquals "a plain walk perturbed the cache" "$out1" "$OUT"
}

test_no_perturb_counts_not_visited() {
	stat "$MNT/t" >/dev/null    # t cached; a, b, c cold
	run dcache-probe -r --no-perturb "$MNT/t"
	assertEquals 1 "$RC"
	assertEquals "cached $MNT/t
miss $MNT/t/a
miss $MNT/t/b
miss $MNT/t/c
unvisited $MNT/t/a
unvisited $MNT/t/b" "$(sort <<<"$OUT")"
	assertContains "$ERR" "4 paths: 1 cached, 0 negative, 3 miss, 0 error; at most 25.0% cached; 2 directories not visited (what they hold is unknown)"
	run dcache-probe -r --no-perturb --json "$MNT/t"
	assertEquals 2 "$(json_get 'objs[-1]["not_visited"]' <<<"$OUT")"
	run dcache-probe -r --no-perturb "$MNT/t"
	assertContains "nothing was warmed" "$ERR" "1 cached, 0 negative, 3 miss"
}

test_exit_codes() {
	du -a "$MNT/t" >/dev/null
	run dcache-probe "$MNT/t/c"
	assertEquals "cached: 0" 0 "$RC"
	cold
	run dcache-probe "$MNT/t/c"
	assertEquals "miss: 1" 1 "$RC"
	ls -l "$MNT/loop" >/dev/null
	run dcache-probe -L "$MNT/loop/l1"
	assertEquals "ELOOP: 2" 2 "$RC"
	assertEquals "error ELOOP $MNT/loop/l1" "$OUT"
	run dcache-probe -L "$MNT/loop/l1" "$MNT/t/a/f1"
	assertEquals "2 beats 1" 2 "$RC"
	run dcache-probe -q "$MNT/t/a/f1"
	assertEquals 1 "$RC"
	assertEquals "quiet is quiet" "" "$OUT$ERR"
}

# An unsupported kernel is simulated by a preloaded syscall() that fails
# openat2 with ENOSYS.
test_unsupported_kernel_is_3() {
	local shim=$SHUNIT_TMPDIR/noopenat2.so
	command -v cc >/dev/null || startSkipping
	cat >"$SHUNIT_TMPDIR/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
long syscall(long n, ...)
{
	static long (*real)(long, ...);
	va_list ap;
	long a[6];
	if (n == SYS_openat2) { errno = ENOSYS; return -1; }
	if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, n);
	for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
	va_end(ap);
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
EOF
	cc -shared -fPIC -o "$shim" "$SHUNIT_TMPDIR/shim.c" -ldl || fail "cannot build shim"
	run env LD_PRELOAD="$shim" ASAN_OPTIONS=verify_asan_link_order=0 dcache-probe -r "$MNT/t"
	assertEquals 3 "$RC"
	assertContains "$ERR" "openat2"
	assertEquals "" "$OUT"
}

test_min_cached() {
	ls -l "$MNT/t" "$MNT/t/a" >/dev/null   # t, a, b, c, a/* cached: 9 of 15
	run dcache-probe -r -s --no-perturb --min-cached 50 "$MNT/t"
	assertEquals "60% >= 50%" 0 "$RC"
	assertEquals "-s: the root's line on stdout" "$(printf ' 60.0%%\t9/15\t%s' "$MNT/t")" "$OUT"
	run dcache-probe -r -s --no-perturb --min-cached 60% "$MNT/t"
	assertEquals "60% >= 60%" 0 "$RC"
	run dcache-probe -rq --no-perturb --min-cached 60.5 "$MNT/t"
	assertEquals "60% < 60.5%" 1 "$RC"
	assertEquals "" "$OUT$ERR"
	run dcache-probe -r --no-perturb --min-cached 99 --json "$MNT/t"
	assertEquals 1 "$RC"
	assertEquals "99 60.0 1" "$(json_get '"%g %.1f %d" % (objs[-1]["min_cached"], objs[-1]["cached_percent"], objs[-1]["status"])' <<<"$OUT")"
	ls -l "$MNT/loop" >/dev/null
	run dcache-probe -L --min-cached 0 "$MNT/loop/l1"
	assertEquals "an error still wins over a met threshold" 2 "$RC"
	run dcache-probe --min-cached 101 "$MNT"
	assertEquals 64 "$RC"
}

test_only() {
	stat "$MNT/t" >/dev/null
	stat "$MNT/t/absent" >/dev/null 2>&1
	run dcache-probe -r --no-perturb --only=cached "$MNT/t" "$MNT/t/absent"
	assertEquals "cached $MNT/t" "$OUT"
	assertContains "the summary counts everything" "$ERR" "5 paths: 1 cached, 1 negative, 3 miss"
	run dcache-probe -r --no-perturb --only=negative,miss "$MNT/t" "$MNT/t/absent"
	assertEquals "miss $MNT/t/a
miss $MNT/t/b
miss $MNT/t/c
negative $MNT/t/absent" "$(sort <<<"$OUT")"
	run dcache-probe --only=warm "$MNT"
	assertEquals 64 "$RC"
	assertContains "$ERR" "invalid --only"
	run dcache-probe --only= "$MNT"
	assertEquals 64 "$RC"
}

test_per_dir() {
	du -a "$MNT/t/a" >/dev/null   # t and all of a cached; b and c cold
	run dcache-probe --per-dir=1 "$MNT/t"
	assertEquals "--per-dir implies -r" 1 "$RC"
	assertEquals "3 rows down to depth 1" 3 "$(wc -l <<<"$OUT")"
	assertEquals "$(printf '100.0%%\t7/7\t%s' "$MNT/t/a")" "$(grep '/t/a$' <<<"$OUT")"
	assertEquals "$(printf '  0.0%%\t0/4\t%s' "$MNT/t/b")" "$(grep '/t/b$' <<<"$OUT")"
	assertEquals "$(printf ' 57.1%%\t8/14\t%s' "$MNT/t")" "$(grep '/t$' <<<"$OUT")"
	assertEquals "the root comes last (post-order)" "$MNT/t" "$(tail -1 <<<"$OUT" | cut -f3)"
	run dcache-probe --per-dir "$MNT/t"
	assertEquals "all directories" 4 "$(wc -l <<<"$OUT")"
	assertContains "$OUT" "$(printf '2/2\t%s' "$MNT/t/a/sub")"
	run dcache-probe --per-dir=0 --json "$MNT/t"
	assertEquals "dir summary" "$(json_types <<<"$OUT" | xargs)"
	# b was listed by the first run, which warmed its dentry.
	assertEquals "14 9 5" "$(json_get '"%d %d %d" % (objs[0]["paths"], objs[0]["cached"], objs[0]["miss"])' <<<"$OUT")"
	run dcache-probe --per-dir=x "$MNT/t"
	assertEquals 64 "$RC"
}

# --per-dir with --no-perturb: a directory not listed has its own row,
# which says so ("-", "0/0+1?"; JSON not_visited 1, null share, not
# complete; a Prometheus series), so that the coldest subtrees are the
# first rows of "sort -n", not missing from the table (README's example,
# on the same tree: t is /srv/app, a its lib, b its cache).  As nobody, a
# directory whose inside it may not look up is such a row too.
test_per_dir_shows_what_it_did_not_visit() {
	local b=$MNT/t/b
	du -a "$MNT/t/a" >/dev/null   # t and all of a cached; b and c cold
	assertEquals "the prober: b misses" "miss $b" "$("$DCP_BUILD/tests/oprobe" "$b")"
	run dcache-probe --no-perturb --per-dir=1 "$MNT/t"
	assertEquals "exit 1: b not visited" 1 "$RC"
	assertEquals "$(printf '100.0%%\t7/7\t%s\n     -\t0/0+1?\t%s\n 80.0%%\t8/10+1?\t%s' \
		"$MNT/t/a" "$b" "$MNT/t")" "$OUT"
	assertEquals "sort -n: the coldest first" "$b
$MNT/t
$MNT/t/a" "$(sort -n <<<"$OUT" | cut -f3)"
	assertEquals "the prober: b still misses, nothing was warmed" "miss $b" "$("$DCP_BUILD/tests/oprobe" "$b")"
	run dcache-probe --no-perturb --per-dir=1 --json "$MNT/t"
	assertEquals "b's record" "0 1 None False" \
		"$(json_get '" ".join(str(o[k]) for o in objs if o.get("path") == "'"$b"'" and o["type"] == "dir" for k in ("paths", "not_visited", "cached_percent", "complete"))' <<<"$OUT")"
	run dcache-probe --no-perturb --per-dir=1 --prometheus "$MNT/t"
	prom_check <<<"$OUT" || fail "bad exposition format"
	assertEquals "b: not visited, nothing probed below; t: 1 not visited" "1 0 1" \
		"$(prom_check "dcprobe_dir_not_visited_dirs{command=\"dcache-probe\",path=\"$b\"}" \
			"dcprobe_dir_paths{command=\"dcache-probe\",path=\"$b\",state=\"miss\"}" \
			"dcprobe_dir_not_visited_dirs{command=\"dcache-probe\",path=\"$MNT/t\"}" <<<"$OUT" | xargs)"
	# Deeper than DEPTH: no row, but still counted in the rows above.
	run dcache-probe --no-perturb --per-dir=0 "$MNT/t"
	assertEquals "$(printf ' 80.0%%\t8/10+1?\t%s' "$MNT/t")" "$OUT"
	# A root not visited has its row too (depth 0).
	fixture_cold "$MNT"
	run dcache-probe --no-perturb --per-dir=1 "$MNT/t"
	assertEquals "a cold root" "$(printf '     -\t0/0+1?\t%s' "$MNT/t")" "$OUT"
	# -q prints no table.
	run dcache-probe -q --no-perturb --per-dir=1 "$MNT/t"
	assertEquals "" "$OUT"
	# As nobody (perm/priv is root's, 0700): every directory it leaves
	# unvisited down to DEPTH has its row, whatever the kernel lets it see.
	ls -l "$MNT/perm" "$MNT/perm/pub" >/dev/null
	run as_nobody "$DCP_BIN/dcache-probe" --no-perturb -r --max-depth=1 --only=unvisited "$MNT/perm"
	local unvisited=$OUT
	assertNotEquals "as nobody: something is not visited" "" "$unvisited"
	run as_nobody "$DCP_BIN/dcache-probe" --no-perturb --per-dir=1 "$MNT/perm"
	assertEquals "as nobody: exit 1" 1 "$RC"
	assertEquals "as nobody: a row for each directory not visited" \
		"$(sed 's/^unvisited //' <<<"$unvisited" | sort)" \
		"$(grep -P '^     -\t0/0\+1\?\t' <<<"$OUT" | cut -f3 | sort)"
}

# A second cold ext4 fixture, a tmpfs and a sysfs mounted inside the first.
test_per_mount() {
	local mnt2
	mnt2=$(fixture_new 16) || fail "cannot make a second fixture"
	touch "$mnt2/f1" "$mnt2/f2" "$mnt2/f3"
	fixture_cold "$mnt2"
	mount --bind "$mnt2" "$MNT/pm/ext" || fail "cannot mount the second fixture"
	mount -t tmpfs dcp-tmpfs "$MNT/pm/inner" || fail "cannot mount tmpfs"
	mount -t sysfs dcp-sysfs "$MNT/pm/sys" || fail "cannot mount sysfs"
	touch "$MNT/pm/inner/x" "$MNT/pm/inner/y"
	run dcache-probe -r --per-mount --max-depth 2 "$MNT/pm"
	assertEquals "sysfs is not gone into by default" 0 "$(grep -c sysfs <<<"$OUT")"
	run dcache-probe -r --per-mount --max-depth 2 --exclude-fstype=none "$MNT/pm"
	assertEquals 1 "$RC"
	assertEquals "sorted by mount point" 4 "$(wc -l <<<"$OUT")"
	assertEquals "pm, the 3 mount points (they count on their parent) and a cold file" \
		"$(printf ' 80.0%%\t4/5\text4\t%s' "$MNT")" "$(sed -n 1p <<<"$OUT")"
	assertEquals "the cold second fixture" \
		"$(printf '  0.0%%\t0/4\text4\t%s' "$MNT/pm/ext")" "$(sed -n 2p <<<"$OUT")"
	assertEquals "tmpfs is flagged: no negative dentries" "$(printf '100.0%%\t2/2\ttmpfs*\t%s' "$MNT/pm/inner")" "$(sed -n 3p <<<"$OUT")"
	assertContains "sysfs is flagged" "$(sed -n 4p <<<"$OUT")" "$(printf 'sysfs*\t%s/pm/sys' "$MNT")"
	assertContains "and always misses: never cached, no share" "$(sed -n 4p <<<"$OUT")" \
		"$(printf '     -\t0/0, ')"
	assertContains "$(sed -n 4p <<<"$OUT")" " never cached$(printf '\t')sysfs*"
	run dcache-probe -r --per-mount --max-depth 2 --exclude-fstype=none --json "$MNT/pm"
	assertEquals "never" "$(json_get '[o["resolve_cached"] for o in objs if o["type"] == "mount" and o["fstype"] == "sysfs"][0]' <<<"$OUT")"
	assertEquals "no-negative" "$(json_get '[o["resolve_cached"] for o in objs if o["type"] == "mount" and o["fstype"] == "tmpfs"][0]' <<<"$OUT")"
	assertEquals "its 3 files and lost+found stay cold" "0 4" \
		"$(json_get '[" ".join(str(o[k]) for k in ("cached", "miss")) for o in objs if o["type"] == "mount" and o["mountpoint"].endswith("/pm/ext")][0]' <<<"$OUT")"
	run dcache-probe -x -r --per-mount "$MNT/pm"
	assertEquals "-x: only the mount points of other filesystems" \
		"$(printf 'ext4\t%s' "$MNT")" "$(cut -f3- <<<"$OUT")"
	run dcache-probe --per-mount "$MNT/pm/inner/x"
	assertEquals "one path, on tmpfs" "$(printf '100.0%%\t1/1\ttmpfs*\t%s' "$MNT/pm/inner")" "$OUT"
	umount_retry "$MNT/pm/sys"
	umount_retry "$MNT/pm/inner"
	umount_retry "$MNT/pm/ext"
}

# A miss on a filesystem whose lookups the kernel never serves from the
# cache (class "never": 9p, CIFS, vfat, sysfs...; sysfs here, the others
# are not in this kernel) keeps its state and exit status 1, but no table
# or summary counts it as cold: "N never cached" apart, the share over the
# paths a cache can serve (issue 43).  The prober holds each such path a
# miss after a lookup warmed it.
test_never_cached_counted_apart() {
	local s=$MNT/pm/sys mm k p bad=0 exp
	mount -t sysfs dcp-sysfs "$s" || fail "cannot mount sysfs"
	mm=$s/kernel/mm
	k=$(find "$mm" -mindepth 1 -maxdepth 1 | wc -l)
	find "$mm" -maxdepth 1 -exec stat {} + >/dev/null # a lookup of each, warming what can be
	run dcache-probe -r --max-depth 1 "$mm"
	assertEquals "every path keeps the state miss" $((k + 1)) "$(count_state miss)"
	assertEquals "a lookup there blocks: exit 1" 1 "$RC"
	for p in $(sed 's/^miss //' <<<"$OUT"); do
		[ "$(findmnt -n -o FSTYPE -T "$p")" = sysfs ] || bad=$((bad + 1))
		[ "$("$DCP_BUILD/tests/oprobe" "$p")" = "miss $p" ] || bad=$((bad + 1))
	done
	assertEquals "the prober: each a miss after its lookup, on sysfs" 0 "$bad"
	assertEquals "the summary" "dcache-probe: $((k + 1)) paths: 0 cached, 0 negative, 0 miss, $((k + 1)) never cached, 0 error; no share: no path probed is on a filesystem the cache can serve" "$ERR"

	# With a cold tree beside it: the cold share is the ext4 tree's.
	run dcache-probe -r -s -c --max-depth 1 "$MNT/t" "$mm"
	assertEquals 1 "$RC"
	exp=$(printf '  0.0%%\t0/4\t%s\n     -\t0/0, %d never cached\t%s\n  0.0%%\t0/4, %d never cached\ttotal' \
		"$MNT/t" $((k + 1)) "$mm" $((k + 1)))
	assertEquals "-s -c" "$exp" "$OUT"
	# Listing t warmed t itself: 1 of its 4 now cached.
	run dcache-probe -r --json --max-depth 1 -s -c "$MNT/t" "$mm"
	assertEquals 1 "$RC"
	assertEquals "JSON: miss, never_cached, cached_percent per root, total, summary" \
		"3 0 25.0;0 $((k + 1)) None;3 $((k + 1)) 25.0;3 $((k + 1)) 25.0" \
		"$(json_get '";".join("%s %s %s" % (o["miss"], o["never_cached"], o["cached_percent"]) for o in objs if o["type"] in ("root", "total", "summary"))' <<<"$OUT")"
	assertEquals "JSON: paths = cached + negative + miss + never_cached + error" "True" \
		"$(json_get 'all(o["paths"] == o["cached"] + o["negative"] + o["miss"] + o["never_cached"] + o["error"] for o in objs if "never_cached" in o)' <<<"$OUT")"
	run dcache-probe -r -0 -s --max-depth 1 "$mm"
	assertEquals "-0" "$(printf '     -\t0/0, %d never cached\t%s' $((k + 1)) "$mm")" "$(tr -d '\0' <<<"$OUT")"
	run dcache-probe -r --per-mount --max-depth 1 "$mm"
	assertEquals "--per-mount" "$(printf '     -\t0/0, %d never cached\tsysfs*\t%s' $((k + 1)) "$s")" "$OUT"
	run dcache-probe -r --per-dir=0 --max-depth 1 "$mm"
	assertEquals "--per-dir" "$(printf '     -\t0/0, %d never cached\t%s' "$k" "$mm")" "$OUT"
	run dcache-probe -r --prometheus --max-depth 1 "$MNT/t" "$mm"
	assertEquals 1 "$RC"
	prom_check <<<"$OUT" || fail "bad exposition format"
	assertEquals "Prometheus: state never_cached apart from miss; a ratio only for the cold tree" \
		"$(printf '%s\n' $((k + 1)) 0 3 0 0.25)" \
		"$(prom_check "dcprobe_paths{command=\"dcache-probe\",root=\"$mm\",state=\"never_cached\"}" \
			"dcprobe_paths{command=\"dcache-probe\",root=\"$mm\",state=\"miss\"}" \
			"dcprobe_paths{command=\"dcache-probe\",root=\"$MNT/t\",state=\"miss\"}" \
			"dcprobe_paths{command=\"dcache-probe\",root=\"$MNT/t\",state=\"never_cached\"}" \
			"dcprobe_cached_ratio{command=\"dcache-probe\",root=\"$MNT/t\"}" <<<"$OUT")"
	assertNotContains "no ratio of nothing" "$OUT" "dcprobe_cached_ratio{command=\"dcache-probe\",root=\"$mm\"}"
	run dcache-probe --min-cached 0 "$mm"
	assertEquals "a gate has no share to pass on" 1 "$RC"

	umount_retry "$s"
}

test_json_parses() {
	du -a "$MNT/t/a" >/dev/null
	ls -l "$MNT/loop" >/dev/null
	run dcache-probe -r --json -L "$MNT/t" "$MNT/loop/l1"
	assertEquals 2 "$RC"
	json_types <<<"$OUT" >/dev/null || fail "not JSON Lines"
	assertEquals "entry" "$(json_types <<<"$OUT" | sort -u | grep -v summary)"
	assertEquals "summary" "$(json_types <<<"$OUT" | tail -1)"
	assertEquals "dir" "$(json_get '[o["kind"] for o in objs if o.get("path") == "'"$MNT"'/t/a"][0]' <<<"$OUT")"
	assertEquals "file" "$(json_get '[o["kind"] for o in objs if o.get("path") == "'"$MNT"'/t/a/f1"][0]' <<<"$OUT")"
	assertEquals "cached" "$(json_get '[o["state"] for o in objs if o.get("path") == "'"$MNT"'/t/a/f1"][0]' <<<"$OUT")"
	assertEquals "ELOOP" "$(json_get '[o["errno"] for o in objs if o.get("state") == "error"][0]' <<<"$OUT")"
	assertEquals "16 9 6 1 2" "$(json_get '" ".join(str(objs[-1][k]) for k in ("paths","cached","miss","error","status"))' <<<"$OUT")"
	assertEquals "" "$ERR"
}

# Quoting is injective: the raw byte 0x9b (not UTF-8) is \x9b, the
# character U+009B (bytes c2 9b) \u009b, and names spelling those escapes
# with a real backslash get it doubled: four names, four lines, four series.
test_quoting_tells_a_byte_from_a_character() {
	local d=$MNT/q9b want
	mkdir -p "$d/a"$'\x9b' "$d/a"$'\xc2\x9b' "$d/a\\x9b" "$d/a\\u009b"
	ls -R "$d" >/dev/null
	run dcache-probe -r "$d"
	assertEquals 0 "$RC"
	want=$(printf '%s\n' "cached $d" "cached $d/a"'\\u009b' "cached $d/a"'\\x9b' \
		"cached $d/a"'\u009b' "cached $d/a"'\x9b')
	assertEquals "dcache-probe: one distinct line per name" "$want" "$(sort <<<"$OUT")"
	assertNotContains "no raw C1 byte" "$OUT" $'\x9b'
	run warm -r -v "$d"
	assertEquals "warm -v: the same quoted names" "$want" "$(sed 's/^/cached /' <<<"$OUT" | sort)"
	run cachedopen --path "$d/a"$'\x9b' "$d/a"$'\xc2\x9b'
	assertEquals "cachedopen: each path's own prefix" \
		"$(printf '%s\n' "$d/a"'\x9b: open: 3' "$d/a"'\u009b: open: 3')" \
		"$(sed 's/open: [0-9]*/open: 3/' <<<"$OUT")"
	run dcache-probe -r --per-dir --prometheus "$d"
	prom_check <<<"$OUT" || fail "0x9b and U+009B share a series: $(grep 'a\\' <<<"$OUT" | head -4)"
	assertEquals "four directories, four series" 4 \
		"$(grep -c '^dcprobe_dir_paths{.*path=".*/a\\.*state="cached"' <<<"$OUT")"
}

# Series stay unique whatever the names: a directory named with a real ESC
# and one named with the four characters \x1b used to get one label value,
# and every device missing from the mount table was mountpoint="?" (here
# two tmpfs detached with umount -l, reached through their holders' cwd).
test_prometheus_series_unique() {
	local d=$SHUNIT_TMPDIR/pu p1 p2
	mkdir -p "$MNT/pu/$(printf 'e\033x')" "$MNT/pu/e\\x1bx"
	run dcache-probe -r --per-dir --prometheus "$MNT/pu"
	prom_check <<<"$OUT" || fail "ESC and \\x1b: $(grep 'e\\' <<<"$OUT" | head -4)"
	mkdir -p "$d/m1" "$d/m2"
	mount -t tmpfs none "$d/m1" && mount -t tmpfs none "$d/m2" || { fail "tmpfs"; return; }
	touch "$d/m1/f" "$d/m2/f"
	(cd "$d/m1" && exec sleep 60) &
	p1=$!
	(cd "$d/m2" && exec sleep 60) &
	p2=$!
	sleep 0.3
	umount -l "$d/m1"
	umount -l "$d/m2"
	run dcache-probe -r -H --per-mount --prometheus "/proc/$p1/cwd" "/proc/$p2/cwd"
	kill "$p1" "$p2"
	wait "$p1" "$p2" 2>/dev/null
	assertEquals "two detached mounts: both unknown, 5 states each ($OUT)" 10 "$(grep -c '^dcprobe_mount_paths{command="dcache-probe",mountpoint="?"' <<<"$OUT")"
	prom_check <<<"$OUT" || fail "mountpoint=\"?\" twice: $(grep 'mountpoint="?"' <<<"$OUT" | head -8)"
	rm -rf "$MNT/pu"
}

test_null_output_with_xargs() {
	ls -l "$MNT/names" >/dev/null
	local o=$SHUNIT_TMPDIR/nul
	dcache-probe -r -0 "$MNT/names" >"$o" 2>/dev/null
	assertEquals "7 NUL-terminated paths" 7 "$(tr -cd '\0' <"$o" | wc -c)"
	xargs -0 stat -c %i <"$o" >/dev/null
	assertEquals "xargs -0 gets every path right" 0 $?
	assertEquals "raw names, no quoting" 1 "$(grep -ac "$(printf 'esc\033')" "$o")"
	# NUL-separated input: find -print0 | dcache-probe --files0-from=-
	find "$MNT/names" -mindepth 1 -print0 | dcache-probe -0 --files0-from=- >"$o" 2>/dev/null
	assertEquals "all cached since ls -l" 0 $?
	assertEquals 6 "$(tr -cd '\0' <"$o" | wc -c)"
	# -0 is output only: a list of lines is still read as lines.
	printf '%s\n' "$MNT/names" "$MNT" | dcache-probe -0 --from=- >"$o" 2>/dev/null
	assertEquals "-0 --from reads lines" 0 $?
	assertEquals "$(printf '%s\0%s\0' "$MNT/names" "$MNT" | od -c)" "$(od -c <"$o")"
}

test_from_file() {
	du -a "$MNT/t" >/dev/null
	printf '%s\n\n%s\n' "$MNT/t/c" "$MNT/t/a/f1" >"$SHUNIT_TMPDIR/list"
	run dcache-probe --from "$SHUNIT_TMPDIR/list" "$MNT/t/b"
	assertEquals "an empty record is bad input" 2 "$RC"
	assertContains "$ERR" "record 2: an empty PATH names nothing"
	assertEquals "arguments first, then the list" "cached $MNT/t/b
cached $MNT/t/c
cached $MNT/t/a/f1" "$OUT"
	run dcache-probe -r --from - <<<"$MNT/t"
	assertEquals 15 "$(count_state cached)"
	printf '%s\n%s\0x\n%s\n' "$MNT/t/c" "$MNT/t" "$MNT/t/b" >"$SHUNIT_TMPDIR/bad"
	run dcache-probe --from "$SHUNIT_TMPDIR/bad"
	assertEquals "a NUL in a line is bad input" 2 "$RC"
	assertContains "$ERR" "record 2: a path contains a NUL byte"
	assertEquals "the other records are probed" 2 "$(count_state cached)"
	run dcache-probe --from "$SHUNIT_TMPDIR/missing"
	assertEquals 2 "$RC"
	assertContains "$ERR" "cannot read"
}


test_prometheus() {
	local hostile="$MNT/names/q\"b\\s"
	mkdir -p "$hostile/$(printf 'n\nl')"
	du -a "$MNT/t/a" >/dev/null
	run dcache-probe -r --prometheus --per-dir=0 "$MNT/t" "$hostile"
	assertEquals 1 "$RC"
	prom_check <<<"$OUT" || fail "bad exposition format"
	assertEquals "9 6 1" "$(prom_check "dcprobe_paths{command=\"dcache-probe\",root=\"$MNT/t\",state=\"cached\"}" \
		"dcprobe_paths{command=\"dcache-probe\",root=\"$MNT/t\",state=\"miss\"}" \
		'dcprobe_exit_status{command="dcache-probe"}' <<<"$OUT" | xargs)"
	assertContains "a label value is escaped" "$OUT" "root=\"$MNT/names/q\\\"b\\\\\\\\s\""
	assertContains "$OUT" "dcprobe_dir_paths{command=\"dcache-probe\",path=\"$MNT/t\",state=\"miss\"} 6"
	assertContains "$OUT" "# TYPE dcprobe_paths gauge"
	run dcache-probe --prometheus --per-mount "$MNT/t/a/f1"
	prom_check <<<"$OUT" || fail "bad exposition format"
	assertEquals "1" "$(prom_check "dcprobe_mount_resolve_cached{command=\"dcache-probe\",mountpoint=\"$MNT\",fstype=\"ext4\",mount_id=\"$(awk -v m="$MNT" '$5 == m {print $1}' /proc/self/mountinfo)\"}" <<<"$OUT")"
	assertEquals "without -r the run is one unlabelled series" "1" \
		"$(prom_check 'dcprobe_paths{command="dcache-probe",state="cached"}' <<<"$OUT")"
	rm -rf "$MNT/names/q\"b\\s"
}

test_deeper_than_path_max() {
	local name
	name=$(printf 'd%.0s' $(seq 200))
	mkdir -p "$MNT/deep"
	(cd "$MNT/deep" && for _ in $(seq 30); do mkdir "$name" && cd "$name" || exit 1; done && touch leaf) ||
		fail "cannot build the chain"
	cold
	run dcache-probe -r "$MNT/deep"
	assertEquals "no error at any depth" 1 "$RC"
	assertEquals 32 "$(wc -l <<<"$OUT")"
	assertTrue "the leaf's path is longer than PATH_MAX" \
		"[ $(grep '/leaf$' <<<"$OUT" | wc -c) -gt 6000 ]"
	# With few descriptors the walker recycles them and still gets there.
	run bash -c "ulimit -n 24; exec dcache-probe -r -j2 '$MNT/deep'"
	assertEquals 1 "$RC"
	assertEquals 32 "$(wc -l <<<"$OUT")"
	assertEquals "" "$(grep -v -e '^miss' -e '^cached' <<<"$OUT")"
	assertContains "$ERR" "32 paths: 31 cached, 0 negative, 1 miss, 0 error"
	rm -rf "$MNT/deep"
}

test_symlink_loops() {
	ls -l "$MNT/loop" >/dev/null
	run timeout 20 dcache-probe -r "$MNT/loop"
	assertEquals "no link is followed by default" 1 "$RC"
	assertEquals 6 "$(wc -l <<<"$OUT")"
	run timeout 20 dcache-probe -r -L "$MNT/loop"
	assertEquals "cycles and ELOOP are errors" 2 "$RC"
	assertContains "$OUT" "error ELOOP $MNT/loop/l1"
	assertContains "$ERR" "cannot walk '$MNT/loop/self': Too many levels of symbolic links"
	assertContains "$ERR" "cannot walk '$MNT/loop/d/up': Too many levels of symbolic links"
	run dcache-probe -r "$MNT/tlink"
	assertEquals "a root symlink is probed, not followed" 1 "$(wc -l <<<"$OUT")"
	run dcache-probe -r -H "$MNT/tlink"
	assertEquals "-H follows it" $((T_BELOW + 1)) "$(wc -l <<<"$OUT")"
	run dcache-probe -r -H -P "$MNT/tlink"
	assertEquals "-P takes it back" 1 "$(wc -l <<<"$OUT")"
}

# Following a symlink whose access time is due for an update (relatime:
# not read since it was made) needs a blocking step: a miss, until one
# normal follow updated it.
test_follow_needs_atime_update() {
	ln -s t "$MNT/fresh"
	cold
	[ -L "$MNT/fresh" ] && ls "$MNT/t" >/dev/null   # lstat: the link itself only
	run dcache-probe "$MNT/fresh"
	assertEquals "the link itself is cached" 0 "$RC"
	run dcache-probe -H "$MNT/fresh"
	assertEquals "following it misses" 1 "$RC"
	ls "$MNT/fresh/" >/dev/null
	run dcache-probe -H "$MNT/fresh"
	assertEquals "after one follow, cached" 0 "$RC"
	rm -f "$MNT/fresh"
}

test_unreadable_directory() {
	ls -l "$MNT/perm" "$MNT/perm/pub" >/dev/null
	run as_nobody "$DCP_BIN/dcache-probe" -r "$MNT/perm"
	assertEquals "a walk error is exit 2" 2 "$RC"
	assertContains "$ERR" "cannot walk '$MNT/perm/priv': Permission denied"
	assertContains "the walk went on" "$OUT" "$MNT/perm/pub/file"
	assertContains "$ERR" "1 walk error"
	run as_nobody "$DCP_BIN/dcache-probe" -r --json "$MNT/perm"
	assertEquals "EACCES" "$(json_get '[o["errno"] for o in objs if o["type"] == "error"][0]' <<<"$OUT")"
}

# A tree walked in part is no complete tree: as nobody, perm/priv (0700,
# root's) cannot be listed, so what it holds is unknown.  Its tree reads
# "+1?" beside the counts, in the -s line and the --per-dir rows (priv has
# its own "-  0/0+1?" row); JSON says "not_visited":1 and not complete, in
# the root's record, priv's row and the summary; Prometheus
# dcprobe_not_visited_dirs 1 and dcprobe_complete 0; the summary on stderr
# says "at most" and "1 directory not visited"; exit 2.  The prober agrees
# that everything probed is cached.  A cycle under -L is a walk error but
# no unvisited directory.  (Before: "100.0%  4/4", "not_visited":0, no
# row for priv: only stderr and the exit status told.)
test_a_partly_walked_tree_shows_what_it_did_not_visit() {
	local p=$MNT/perm
	as_nobody find "$p" -exec stat {} + >/dev/null 2>&1
	assertEquals "the prober: all cached" "cached cached cached cached" \
		"$(for x in "$p" "$p/priv" "$p/pub" "$p/pub/file"; do as_nobody "$DCP_BUILD/tests/oprobe" "$x"; done | cut -d' ' -f1 | xargs)"
	run as_nobody "$DCP_BIN/dcache-probe" -r -s "$p"
	assertEquals "-s: exit 2" 2 "$RC"
	assertEquals "-s: the unknown shown" "100.0%	4/4+1?	$p" "$OUT"
	run as_nobody "$DCP_BIN/dcache-probe" -r "$p"
	assertContains "the summary" "$ERR" \
		"4 paths: 4 cached, 0 negative, 0 miss, 0 error; at most 100.0% cached; 1 directory not visited (what it holds is unknown); 1 walk error"
	run as_nobody "$DCP_BIN/dcache-probe" --per-dir=1 "$p"
	assertEquals "--per-dir: a row for priv" "$(sort <<EOT
100.0%	1/1	$p/pub
     -	0/0+1?	$p/priv
100.0%	3/3+1?	$p
EOT
)" "$(sort <<<"$OUT")"
	run as_nobody "$DCP_BIN/dcache-probe" -r -s --json "$p"
	assertEquals "JSON: root and summary" "root 1 False summary 1 False" \
		"$(json_get '" ".join("%s %s %s" % (o["type"], o["not_visited"], o["complete"]) for o in objs if o["type"] in ("root", "summary"))' <<<"$OUT")"
	run as_nobody "$DCP_BIN/dcache-probe" --per-dir=1 --json "$p"
	assertEquals "JSON: priv's row" "0 1 None False" \
		"$(json_get '" ".join("%s %s %s %s" % (o["paths"], o["not_visited"], o["cached_percent"], o["complete"]) for o in objs if o["type"] == "dir" and o["path"].endswith("/priv"))' <<<"$OUT")"
	run as_nobody "$DCP_BIN/dcache-probe" -r -s --prometheus "$p"
	assertEquals "Prometheus" "1 0" "$(prom_check "dcprobe_not_visited_dirs{command=\"dcache-probe\",root=\"$p\"}" \
		"dcprobe_complete{command=\"dcache-probe\",root=\"$p\"}" <<<"$OUT" | xargs)"
	# A cycle: its inside is walked, as its ancestor's.
	run dcache-probe -r -s -L "$MNT/loop"
	assertNotContains "-L over a cycle: nothing unknown" "$OUT" "?"
}

# Wait (at most 30 s) until the pipe on stdin is full, reading nothing.
pipe_full() {
	python3 -c '
import fcntl, struct, termios, time
end = time.time() + 30
while time.time() < end:
    if struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"0000"))[0] >= 65536:
        break
    time.sleep(0.02)
time.sleep(0.2)
'
}

# The walk is stopped on a full pipe (-j1, the reader sleeps) after listing
# a large directory, and its subdirectories are removed before it goes on.
test_entries_deleted_while_walking() {
	local long i
	long=$(printf 'x%.0s' $(seq 120))
	mkdir -p "$MNT/del"
	(cd "$MNT/del" && for i in $(seq 1500); do echo "$long$i"; done | xargs mkdir)
	(
		dcache-probe -r -j1 "$MNT/del" 2>"$SHUNIT_TMPDIR/err"
		echo $? >"$SHUNIT_TMPDIR/rc"
	) | (pipe_full; rm -rf "$MNT/del"/x*; cat >"$SHUNIT_TMPDIR/out")
	RC=$(cat "$SHUNIT_TMPDIR/rc")
	assertEquals "vanished directories are walk errors" 2 "$RC"
	assertContains "$(cat "$SHUNIT_TMPDIR/err")" "No such file or directory"
	assertEquals "every entry listed was reported" 1501 "$(wc -l <"$SHUNIT_TMPDIR/out")"
	# Several threads racing with rm: no crash, whatever the outcome.
	(cd "$MNT/del" && for i in $(seq 300); do echo "$long$i/a/b"; done | xargs mkdir -p)
	(sleep 0.05; rm -rf "$MNT/del"/x*) &
	dcache-probe -r -j4 "$MNT/del" >/dev/null 2>&1
	RC=$?
	wait
	assertTrue "exit $RC is a status, not a signal" "[ $RC -le 2 ]"
	rm -rf "$MNT/del"
}

test_hostile_names() {
	ls -l "$MNT/names" >/dev/null
	run dcache-probe -r "$MNT/names"
	assertEquals 0 "$RC"
	assertNotContains "no raw escape" "$OUT$ERR" $'\033'
	assertNotContains "no raw invalid byte" "$OUT" $'\377'
	assertContains "$OUT" "cached $MNT/names/new\\nline"
	assertContains "$OUT" "cached $MNT/names/esc\\e[31mred"
	assertContains "$OUT" "cached $MNT/names/bad\\xffbyte"
	assertContains "$OUT" "cached $MNT/names/back\\\\slash"
	assertEquals "one line per name" 7 "$(wc -l <<<"$OUT")"
	run dcache-probe -r --json "$MNT/names"
	assertEquals "$MNT/names/$(printf 'new\nline')" \
		"$(json_get '[o["path"] for o in objs if "line" in str(o.get("path"))][0]' <<<"$OUT")"
	assertEquals "$(printf '%s' "$MNT/names/$(printf 'bad\377byte')" | base64 -w0)" \
		"$(json_get '[o["path"]["bytes"] for o in objs if isinstance(o.get("path"), dict)][0]' <<<"$OUT")"
}

test_walk_controls() {
	du -a "$MNT/t" >/dev/null
	run dcache-probe -r --exclude b "$MNT/t"
	assertEquals "b and its 4 files skipped" 10 "$(wc -l <<<"$OUT")"
	assertNotContains "$OUT" "$MNT/t/b"
	run dcache-probe -r --exclude '*/a/*' --exclude c "$MNT/t"
	assertEquals "t a b b/f1..f4" 7 "$(wc -l <<<"$OUT")"
	run dcache-probe --max-depth 0 "$MNT/t"
	assertEquals "cached $MNT/t" "$OUT"
	run dcache-probe --max-depth 1 "$MNT/t"
	assertEquals 4 "$(wc -l <<<"$OUT")"
	run dcache-probe -r -j1 "$MNT/t"
	local one=$OUT
	run dcache-probe -r -j1 "$MNT/t"
	assertEquals "-j1 output order is stable" "$one" "$OUT"
	run dcache-probe -r -s "$MNT/t"
	assertEquals "-s: one line for the root, as du -s" "$(printf '100.0%%\t15/15\t%s' "$MNT/t")" "$OUT"
	assertEquals "-s: no summary on stderr when it is not a terminal" "" "$ERR"
	run dcache-probe -r -s -c "$MNT/t" "$MNT/t/a"
	local na
	na=$(find "$MNT/t/a" | wc -l)
	# t/a lies inside t: the total counts each entry once, as du -c.
	assertEquals "-c: and a total" "$(printf '100.0%%\t15/15\t%s\n100.0%%\t%d/%d\t%s\n100.0%%\t15/15\ttotal' "$MNT/t" "$na" "$na" "$MNT/t/a")" "$OUT"
	run dcache-probe -r "$MNT/t"
	assertContains "without -s the summary is on stderr" "$ERR" "15 paths: 15 cached"
	run dcache-probe -j 0 "$MNT/t"
	assertEquals 64 "$RC"
}

test_progress() {
	local t=$SHUNIT_TMPDIR/typescript
	# A list that arrives slowly keeps the run going for more than a second.
	script -qfec "(echo /; sleep 1.7; echo /) | dcache-probe --from - >/dev/null" "$t" >/dev/null
	assertContains "progress on a terminal" "$(cat "$t")" "path, "
	script -qfec "(echo /; sleep 1.7; echo /) | dcache-probe --no-progress --from - >/dev/null" "$t" >/dev/null
	assertNotContains "$(cat "$t")" "path, "
	run bash -c '(echo /; sleep 1.7; echo /) | dcache-probe --from - --only=error'
	assertNotContains "never when stderr is not a terminal" "$ERR" "path, "
	run bash -c '(echo /; sleep 1.7; echo /) | dcache-probe --progress --from - --only=error'
	assertContains "--progress forces it" "$ERR" "path, "
}

test_write_errors() {
	dcache-probe -r "$MNT/t" >/dev/full 2>"$SHUNIT_TMPDIR/err"
	assertEquals "write error is exit 2" 2 $?
	assertContains "$(cat "$SHUNIT_TMPDIR/err")" "write error: No space left on device"
	dcache-probe -r /usr/share 2>"$SHUNIT_TMPDIR/err" | head -1 >/dev/null
	assertEquals "a closed pipe is quiet" "" "$(cat "$SHUNIT_TMPDIR/err")"
	(trap '' PIPE; dcache-probe -r /usr/share 2>"$SHUNIT_TMPDIR/err" | head -1 >/dev/null)
	assertEquals "quiet with SIGPIPE ignored too" "" "$(cat "$SHUNIT_TMPDIR/err")"
}

# Under a task limit (ulimit -u as nobody) the walker runs with the threads
# it could create, as warm does; it used to give up ("the walk failed:
# Resource temporarily unavailable", exit 2).
test_task_limit() {
	# LeakSanitizer cannot stop the world under a task limit this tight.
	local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 u
	export ASAN_OPTIONS
	as_nobody du -a "$MNT/t" >/dev/null
	for u in 4 12 24; do
		run as_nobody bash -c 'ulimit -u '$u' && exec "$1" -r -j 64 "$2"' _ "$DCP_BIN/dcache-probe" "$MNT/t"
		# (1: a spurious miss from a concurrent mount elsewhere.)
		assertTrue "ulimit -u $u: exit status $RC: $ERR" "[ $RC -le 1 ]"
		assertContains "ulimit -u $u: every entry walked" "$ERR" "15 paths: "
		assertContains "ulimit -u $u: no error" "$ERR" " 0 error;"
	done
}

test_usage_errors() {
	run dcache-probe
	assertEquals 64 "$RC"
	assertContains "$ERR" "no PATH given"
	run dcache-probe ""
	assertEquals 64 "$RC"
	run dcache-probe --bogus /
	assertEquals 64 "$RC"
	run dcache-probe --json --prometheus /
	assertEquals 64 "$RC"
	run dcache-probe -q --json /
	assertEquals 64 "$RC"
	run dcache-probe --max-depth -1 /
	assertEquals 64 "$RC"
	run dcache-probe --help
	assertEquals 0 "$RC"
	assertContains "$OUT" "RESOLVE_CACHED"
	run dcache-probe --version
	assertContains "$OUT" "dcache-probe (dcprobe)"
}

# Every option of --help is in the man page and the bash completion.
test_options_documented() {
	local src=${DCP_SRC:-$DCP_TESTS/..} opt
	[ -f "$src/man/dcache-probe.1" ] || startSkipping
	for opt in $(dcache-probe --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
		assertContains "$opt in the man page" "$(sed 's/\\-/-/g' "$src/man/dcache-probe.1")" "$opt"
		assertContains "$opt in the completion" "$(cat "$src/completions/dcache-probe")" "$opt"
	done
	bash -n "$src/completions/dcache-probe" || fail "completion does not parse"
}

# Messages never share a line: as nobody, 64 threads meet 1,280 unreadable
# directories at once; each "cannot walk" is one whole line (glibc's
# error(3) wrote it in pieces, which the threads interleaved).
test_walk_errors_never_share_a_line() {
	local d=$MNT/ur i j run bad
	for ((i = 0; i < 64; i++)); do
		for ((j = 0; j < 20; j++)); do
			mkdir -p "$d/d$i/u$j" && touch "$d/d$i/u$j/f"
		done
	done
	chmod 0700 "$d"/d*/u*
	for run in 1 2 3 4 5; do
		as_nobody dcache-probe -r -j 64 "$d" >/dev/null 2>"$SHUNIT_TMPDIR/err"
		assertEquals "run $run: exit" 2 $?
		bad=$(grep -Evc -e "^dcache-probe: cannot walk '$d/d[0-9]+/u[0-9]+': Permission denied\$" \
			-e '^dcache-probe: 1345 paths: [0-9]+ cached, 0 negative, [0-9]+ miss, 0 error; at most [0-9.]+% cached; 1280 directories not visited \(what they hold is unknown\); 1280 walk errors$' \
			"$SHUNIT_TMPDIR/err")
		assertEquals "run $run: lines that are not one whole message: $(grep -v 'Permission denied$' "$SHUNIT_TMPDIR/err" | head -3)" 0 "$bad"
		assertEquals "run $run: one line per unreadable directory" 1280 \
			"$(grep -c '^dcache-probe: cannot walk .*: Permission denied$' "$SHUNIT_TMPDIR/err")"
		cold
	done
	rm -rf "$d"
}

# Issue 19.9: tables and --sort lines come in one order whatever the
# threads did: --per-dir in du's post-order (siblings by name, roots as
# given, a directory reached from two roots once, under the first);
# --sort in bfs -s pre-order.  Checked against an order computed here.
test_fixed_orders() {
	local i first out want
	ls -R "$MNT/t" >/dev/null
	first=$(dcache-probe -j 8 -r --per-dir "$MNT/t" "$MNT/t/a" 2>/dev/null)
	for i in 1 2 3 4 5; do
		out=$(dcache-probe -j 8 -r --per-dir "$MNT/t" "$MNT/t/a" 2>/dev/null)
		assertEquals "--per-dir run $i: the same rows in the same order" "$first" "$out"
	done
	want=$(find "$MNT/t" -type d | python3 -c '
import sys
ps = [l.rstrip("\n") for l in sys.stdin]
# post-order: by components, a directory after what it holds
print("\n".join(sorted(ps, key=lambda p: [(c.encode(), 0) for c in p.split("/")] + [(b"\xff" * 300, 1)])))')
	assertEquals "--per-dir: du order, t/a once (under the first root)" "$want" "$(cut -f3 <<<"$first")"
	out=$(dcache-probe -j 8 -r --sort "$MNT/t" 2>/dev/null)
	want=$(find "$MNT/t" | python3 -c '
import sys
ps = [l.rstrip("\n") for l in sys.stdin]
print("\n".join(sorted(ps, key=lambda p: [c.encode() for c in p.split("/")])))')
	assertEquals "--sort: pre-order, siblings by name" "$want" "$(sed 's/^[a-z]* \(E[A-Z]* \)\{0,1\}//' <<<"$out")"
	run dcache-probe -r --sort -s "$MNT/t"
	assertEquals "--sort needs per-path lines" 64 "$RC"
	run dcache-probe -r --per-dir --per-mount "$MNT/t"
	assertEquals "one table per stream" 64 "$RC"
	assertContains "$ERR" "Try 'dcache-probe --help' for more information."
}

. "$SHUNIT2"
