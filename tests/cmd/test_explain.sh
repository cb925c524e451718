#!/bin/bash
# Tests for --explain (cachedopen, dcache-probe, uring-open): every reason of
# dcprobe(7) "Why is it cold?" on a real fixture that produces it.  Each
# test checks the prefix and reason named AND, with the independent prober
# (oprobe), that the named prefix misses while its parent is cached.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

OPROBE=${DCP_BUILD:-$DCP_BIN/..}/tests/oprobe

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/a/b/c" "$MNT/real/dir" "$MNT/other/in" "$MNT/sub/mnt"
	echo data >"$MNT/a/b/c/file"
	echo data >"$MNT/real/dir/file"
	ln -s l2 "$MNT/l1"
	ln -s real/dir "$MNT/l2"
	# A tree owned by someone else: its ACL is not loaded after a remount.
	touch "$MNT/other/x" "$MNT/other/in/y"
	chown -R 1234:1234 "$MNT/other"
	chmod 0755 "$MNT/other" "$MNT/other/in"
	# A second filesystem, mounted inside the fixture by the test that needs it.
	INNER_IMG=$FIXTURE_ROOT/inner.img
	truncate -s 16M "$INNER_IMG"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$INNER_IMG" >/dev/null ||
		fail "mkfs inner"
	local tmp
	tmp=$(mktemp -d "$FIXTURE_ROOT/tmp.XXXXXX")
	mount -o loop "$INNER_IMG" "$tmp" && mkdir -p "$tmp/d" && echo data >"$tmp/d/file" &&
		umount "$tmp" || fail "populate inner"
	TMPFS=$(mktemp -d "$FIXTURE_ROOT/tmpfs.XXXXXX")
	mount -t tmpfs -o size=1M,mode=0755 none "$TMPFS" || fail "mount tmpfs"
	mkdir "$TMPFS/dir"
	# Names that end the way a JSON record does (test_names_that_look_like_json).
	mkdir -p "$MNT/jd/d}" "$MNT/jd/{\"a\":1}"
	echo data >"$MNT/jd/d}/f}"
	echo data >"$MNT/jd/d}/x\"}"
}

setUp() {
	mountpoint -q "$MNT/sub/mnt" && umount "$MNT/sub/mnt"
	fixture_cold_busy "$MNT" || fail "cannot remount fixture"
}

# oprobe_state [-L] PATH - the independent prober's state of PATH.
oprobe_state() {
	"$OPROBE" "$@" | cut -d' ' -f1
}

# check_prefix PREFIX [USER] - oprobe: PREFIX misses, its parent is cached.
check_prefix() {
	local who=${2:-root} pre=() 
	[ "$who" = nobody ] && pre=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --)
	assertEquals "oprobe ($who): the named prefix $1 misses" miss "$("${pre[@]}" "$OPROBE" "$1" | cut -d' ' -f1)"
	assertEquals "oprobe ($who): its parent is cached" cached \
		"$("${pre[@]}" "$OPROBE" "$(dirname "$1")" | cut -d' ' -f1)"
}

# explain_json CMD... - run CMD --json, print "first_miss reason" of the first record.
first_record() {
	json_get '"%s %s" % (objs[0].get("first_miss"), objs[0].get("reason"))' <<<"$OUT"
}

test_not_cached() {
	stat "$MNT/a" >/dev/null
	run dcache-probe --explain "$MNT/a/b/c/file"
	assertEquals 1 "$RC"
	assertEquals "miss $MNT/a/b/c/file  (first miss: $MNT/a/b: not-cached)" "$OUT"
	assertContains "$ERR" "misses by reason: 1 not-cached"
	check_prefix "$MNT/a/b"
	run cachedopen --explain "$MNT/a/b/c/file"
	assertEquals "open: -1  (first miss: $MNT/a/b: not-cached)" "$OUT"
	assertEquals "-0 records stay bare paths" "$(printf '%s\0' "$MNT/a/b/c/file" | od -An -c)" \
		"$(dcache-probe --explain -0 "$MNT/a/b/c/file" 2>/dev/null | od -An -c)"
	run cachedopen --explain --json "$MNT/a/b/c/file"
	assertEquals "$MNT/a/b not-cached" "$(first_record)"
	assertEquals 1 "$(json_get 'objs[1]["reasons"]["not-cached"]' <<<"$OUT")"
}

# The fixture's own mount point: nothing was looked up on it since it was mounted.
test_mount_point_fixture_root() {
	run dcache-probe --explain --json "$MNT/a/b/c"
	assertEquals 1 "$RC"
	assertEquals "$MNT/a mount-point" "$(first_record)"
	check_prefix "$MNT/a"
}

# A filesystem mounted inside the tree.
test_mount_point_inside() {
	stat "$MNT/sub" >/dev/null
	mount -o loop "$INNER_IMG" "$MNT/sub/mnt" || fail "mount inner"
	run dcache-probe --explain "$MNT/sub/mnt/d/file"
	assertEquals "miss $MNT/sub/mnt/d/file  (first miss: $MNT/sub/mnt/d: mount-point)" "$OUT"
	check_prefix "$MNT/sub/mnt/d"
	run uring-open --explain "$MNT/sub/mnt/d/file"
	assertContains "$OUT" "  (first miss: $MNT/sub/mnt/d: mount-point)"
	# uring-open explained before it opened: the open itself was punted.
	# (Said exactly where io-wq's completions are deferred: on 6.1 a
	# worker faster than the submit call is called inline, "exact":false.)
	if [ "$(uring_exact)" = true ]; then
		assertEquals 1 "$RC"
		assertContains "$OUT" "punted "
	else
		echo "SKIP test part: needs io-wq's completions deferred (Linux 6.2): uring-open's verdict after --explain" >&2
		run uring-open --explain --json "$MNT/sub/mnt/d/file"
		assertEquals "the JSON says the verdict is not exact" False "$(json_get 'objs[-1]["exact"]' <<<"$OUT")"
	fi
	umount "$MNT/sub/mnt"
}

# l1 -> l2 -> real/dir: the links are cached, the target's "dir" is not.
test_symlink_chain() {
	stat "$MNT/real" >/dev/null
	ls -l "$MNT/l1" "$MNT/l2" >/dev/null
	local want="(first miss: $MNT/real/dir: symlink, via $MNT/l1 (not-cached))"
	run cachedopen --explain "$MNT/l1/file"
	assertEquals "open: -1  $want" "$OUT"
	check_prefix "$MNT/real/dir"
	assertEquals "the link itself is cached" cached "$(oprobe_state "$MNT/l1")"
	assertEquals "following it misses" miss "$(oprobe_state -L "$MNT/l1")"
	# The link as the last component, followed.
	run cachedopen --explain "$MNT/l1"
	assertEquals "open: -1  $want" "$OUT"
	run dcache-probe --explain --json -L "$MNT/l1"
	assertEquals "$MNT/real/dir symlink" "$(first_record)"
	assertEquals "$MNT/l1" "$(json_get 'objs[0]["link"]' <<<"$OUT")"
	assertEquals "not-cached" "$(json_get 'objs[0]["link_reason"]' <<<"$OUT")"
	# Not followed, the link is simply cached.
	run dcache-probe --explain "$MNT/l1"
	assertEquals "cached $MNT/l1" "$OUT"
}

# A directory owned by another user: its entry is cached, its ACL is not.
test_inside_miss_root() {
	stat "$MNT/other" >/dev/null
	run dcache-probe --explain "$MNT/other/x"
	assertEquals "miss $MNT/other/x  (first miss: $MNT/other/x: inside-miss)" "$OUT"
	check_prefix "$MNT/other/x"
	assertEquals "lookups inside it miss" miss "$(oprobe_state "$MNT/other/.")"
}

# For nobody the fixture root itself is someone else's directory.
test_inside_miss_nobody() {
	stat "$MNT/other" >/dev/null
	run as_nobody dcache-probe --explain "$MNT/other/x"
	assertEquals "miss $MNT/other/x  (first miss: $MNT/other: inside-miss)" "$OUT"
	check_prefix "$MNT/other" nobody
	check_prefix "$MNT/other/x" root
}

test_no_negative_tmpfs() {
	run dcache-probe --explain "$TMPFS/dir/absent" "$TMPFS/absent/deeper"
	assertEquals "miss $TMPFS/dir/absent  (first miss: $TMPFS/dir/absent: no-negative)
miss $TMPFS/absent/deeper  (first miss: $TMPFS/absent: no-negative)" "$OUT"
	check_prefix "$TMPFS/dir/absent"
	check_prefix "$TMPFS/absent"
	run as_nobody dcache-probe --explain "$TMPFS/dir/absent"
	assertEquals "miss $TMPFS/dir/absent  (first miss: $TMPFS/dir/absent: no-negative)" "$OUT"
	check_prefix "$TMPFS/dir/absent" nobody
}

# FUSE (bindfs) revalidates an entry once its timeout ran out.
test_revalidating_fuse() {
	command -v bindfs >/dev/null || startSkipping
	local fuse
	fuse=$(mktemp -d "$FIXTURE_ROOT/fuse.XXXXXX")
	stat "$MNT/real/dir/file" >/dev/null
	bindfs -o entry_timeout=0.2,attr_timeout=0.2 "$MNT/real" "$fuse" || fail "bindfs"
	stat "$fuse/dir/file" >/dev/null
	sleep 0.5
	run dcache-probe --explain "$fuse/dir/file"
	assertEquals "miss $fuse/dir/file  (first miss: $fuse/dir: revalidating)" "$OUT"
	check_prefix "$fuse/dir"
	run dcache-probe -r --explain --per-mount "$fuse"
	assertContains "$OUT" "revalidating:2	$fuse"
	umount "$fuse"
}

# A FUSE daemon that its user stopped (SIGSTOP) is never asked anything by
# --explain, nor by the probes and walks around it: every command returns
# with its verdict, and the explanation names the prefix whose entry timed
# out.  (Before: lib/explain.c stat'ed the FUSE mount's root, whose
# attributes had timed out, and waited for the daemon for ever; so did a
# walk following a link onto the mount, and warm -L warming it.)
test_explain_never_asks_a_stopped_fuse_daemon() {
	command -v bindfs >/dev/null || startSkipping
	local fuse pid m=$SHUNIT_TMPDIR/fuse.jsonl l=$MNT/flinks
	fuse=$(mktemp -d "$FIXTURE_ROOT/sfuse.XXXXXX")
	bindfs -o entry_timeout=0.2,attr_timeout=0.2 "$MNT/real" "$fuse" || fail "bindfs"
	pid=$(fixture_pgrep "bindfs .*$fuse" | head -1)
	assertNotNull "the daemon" "$pid"
	ls -l "$fuse/dir/file" >/dev/null
	mkdir -p "$l"
	ln -s "$fuse/dir" "$l/d"
	ln -s "$fuse/dir/file" "$l/f"
	printf '{"type":"entry","path":"%s","state":"cached","kind":"file","depth":0}\n' \
		"$fuse/dir/file" >"$m"
	fuse_stop "$pid"
	sleep 0.5 # the entry and attribute timeouts run out
	run timeout 20 dcache-probe --explain "$fuse/dir/file"
	assertEquals "dcache-probe: no hang, a miss" 1 "$RC"
	assertEquals "miss $fuse/dir/file  (first miss: $fuse/dir: revalidating)" "$OUT"
	run timeout 20 dcache-probe --explain --per-mount "$fuse/dir/file"
	assertEquals "--per-mount: no hang" 1 "$RC"
	assertContains "$OUT" "revalidating:1	$fuse"
	run timeout 20 cachedopen --explain "$fuse/dir/file"
	assertEquals "cachedopen: no hang, a miss" 1 "$RC"
	assertEquals "open: -1  (first miss: $fuse/dir: revalidating)" "$OUT"
	run timeout 20 uring-open --cached --explain "$fuse/dir/file"
	assertEquals "uring-open --cached: no hang, a miss" 1 "$RC"
	assertContains "$OUT" "(first miss: $fuse/dir: revalidating)"
	run timeout 20 dcache-probe --manifest="$m" --explain
	assertEquals "dcache-probe --manifest: no hang, a miss" 1 "$RC"
	assertContains "$OUT" "$fuse/dir/file  (first miss: $fuse/dir: revalidating)"
	run timeout 20 dcache-probe -L --explain "$l/d/file" "$l/f"
	assertEquals "-L: no hang, misses" 1 "$RC"
	assertEquals "through the links" \
		"miss $l/d/file  (first miss: $fuse/dir: symlink, via $l/d (revalidating))
miss $l/f  (first miss: $fuse/dir: symlink, via $l/f (revalidating))" "$OUT"
	run timeout 20 dcache-probe -r -L --explain "$l"
	assertEquals "-r -L: no hang, what the links lead to unvisited" 1 "$RC"
	assertContains "$OUT" "unvisited $l/d"
	run timeout 20 warm -r -L --check "$l"
	assertEquals "warm -r -L: no hang, not entered is an error" 2 "$RC"
	assertContains "$ERR" "'$l/d': not entered"
	run timeout 20 warm -r -L --pages "$l"
	assertEquals "warm -r -L --pages: no hang" 2 "$RC"
	run as_nobody timeout 20 "$DCP_BIN/dcache-probe" --explain "$fuse/dir/file"
	assertEquals "as nobody: no hang, a miss" 1 "$RC"
	# The prober: the prefix named misses, its parent (the mount) is cached.
	check_prefix "$fuse/dir"
	fuse_cont
	umount "$fuse" || umount -l "$fuse"
	rm -rf "$l"
}

test_pseudo_proc_sys() {
	local p
	p=$(printf '%s\n' /proc/sys/kernel/* | head -1)
	run dcache-probe --explain --json "$p"
	assertEquals "/proc/sys pseudo" "$(first_record)"
	check_prefix /proc/sys
	run as_nobody cachedopen --explain "$p"
	assertEquals "open: -1  (first miss: /proc/sys: pseudo)" "$OUT"
	check_prefix /proc/sys nobody
}

test_pseudo_sysfs() {
	run dcache-probe --explain /sys/kernel/mm
	assertEquals "miss /sys/kernel/mm  (first miss: /sys/kernel: pseudo)" "$OUT"
	check_prefix /sys/kernel
	run as_nobody dcache-probe --explain --json /sys/kernel/mm
	assertEquals "/sys/kernel pseudo" "$(first_record)"
}

# A name on a filesystem whose lookups are never served from the cache is
# explained by that filesystem even when something is mounted on the name
# (issue 43: with a guest's root on 9p, "/tmp" was called a mount-point).
# sysfs is one such filesystem here (9p, CIFS and vfat are not in this
# kernel); a tmpfs is mounted on its "kernel".
test_uncacheable_parent_before_mount_point() {
	local s=$MNT/sysm
	mkdir -p "$s"
	mount -t sysfs dcp-sysfs "$s" || fail "cannot mount sysfs"
	mount -t tmpfs dcp-tmpfs "$s/kernel" || fail "cannot mount tmpfs"
	touch "$s/kernel/x"
	run dcache-probe --explain "$s/kernel/x"
	assertEquals "miss $s/kernel/x  (first miss: $s/kernel: pseudo)" "$OUT"
	check_prefix "$s/kernel"
	umount "$s/kernel"
	umount "$s"
}

test_cached_paths_are_not_explained() {
	run dcache-probe --explain --json "$MNT" /
	assertEquals 0 "$RC"
	assertEquals "None None" "$(first_record)"
	run cachedopen --explain "$MNT"
	assertEquals "open: 3" "$OUT"
}

# A walk names the topmost cold directory for everything below it.
test_walk() {
	stat "$MNT/a" "$MNT/other" >/dev/null
	run dcache-probe -r --explain --json "$MNT/a" "$MNT/other"
	assertEquals 1 "$RC"
	local got
	got=$(json_get '"\n".join("%s %s %s" % (o["path"], o.get("first_miss"), o.get("reason"))
		for o in sorted(objs[:-1], key=lambda o: o["path"]))' <<<"$OUT")
	assertEquals "$MNT/a None None
$MNT/a/b $MNT/a/b not-cached
$MNT/a/b/c $MNT/a/b not-cached
$MNT/a/b/c/file $MNT/a/b not-cached
$MNT/other None None
$MNT/other/in $MNT/other/in inside-miss
$MNT/other/in/y $MNT/other/in inside-miss
$MNT/other/x $MNT/other/x inside-miss" "$got"
	assertEquals "the summary counts misses by reason" "3 3" \
		"$(json_get '"%d %d" % (objs[-1]["reasons"]["not-cached"], objs[-1]["reasons"]["inside-miss"])' <<<"$OUT")"
	fixture_cold_busy "$MNT"
	run dcache-probe -r -s --explain "$MNT"
	assertContains "-s: one line for the root, misses by reason" "$OUT" "mount-point:"
	assertContains "$OUT" "	$MNT"
	assertNotContains "$OUT" "unknown"
	fixture_cold_busy "$MNT"
	run dcache-probe -r --explain "$MNT/a"
	assertContains "the summary on stderr" "$ERR" "misses by reason: 4 mount-point"
}

# The record's format is the caller's, never guessed from its last bytes:
# names ending in "}" (and "\"}", "}" and a newline, a whole JSON object)
# get a text explanation in text and JSON members in --json.
test_names_that_look_like_json() {
	local names=('nothere}' 'q"}' '{"a":1}' 'b]}' $'nl}\n') n q want=() got
	stat "$MNT/jd" >/dev/null
	for n in "${names[@]}"; do
		q=${n//$'\n'/\\n}
		want+=("miss $q  (first miss: $q: not-cached)")
	done
	got=$(cd "$MNT/jd" && dcache-probe --explain -- "${names[@]}" 2>/dev/null)
	assertEquals "text, one line per name, the explanation after it" \
		"$(printf '%s\n' "${want[@]}")" "$got"
	fixture_cold_busy "$MNT"
	stat "$MNT/jd" >/dev/null
	OUT=$(cd "$MNT/jd" && dcache-probe --explain --json -- "${names[@]}" 2>/dev/null)
	json_log dcache-probe <(printf '%s\n' "$OUT")
	got=$(json_get '"\n".join(repr((o["path"], o["first_miss"], o["reason"]))
		for o in objs if o["type"] == "entry")' <<<"$OUT")
	assertEquals "--json: every line parses, path and first miss as given" \
		"$(for n in "${names[@]}"; do python3 -c 'import sys; print(repr((sys.argv[1],) * 2 + ("not-cached",)))' "$n"; done)" \
		"$got"
	# A walk: every record below the cold directory "d}" names it.
	fixture_cold_busy "$MNT"
	stat "$MNT/jd" >/dev/null
	run dcache-probe -r --explain "$MNT/jd"
	assertEquals 1 "$RC"
	assertEquals "cached $MNT/jd
miss $MNT/jd/d}  (first miss: $MNT/jd/d}: not-cached)
miss $MNT/jd/d}/f}  (first miss: $MNT/jd/d}: not-cached)
miss $MNT/jd/d}/x\"}  (first miss: $MNT/jd/d}: not-cached)
miss $MNT/jd/{\"a\":1}  (first miss: $MNT/jd/{\"a\":1}: not-cached)" "$(sort <<<"$OUT")"
	fixture_cold_busy "$MNT"
	stat "$MNT/jd" >/dev/null
	run dcache-probe -r --explain --json "$MNT/jd"
	got=$(json_get '"\n".join("%s|%s|%s" % (o["path"], o.get("first_miss"), o.get("reason"))
		for o in sorted(objs[:-1], key=lambda o: o["path"]))' <<<"$OUT")
	assertEquals "$MNT/jd|None|None
$MNT/jd/d}|$MNT/jd/d}|not-cached
$MNT/jd/d}/f}|$MNT/jd/d}|not-cached
$MNT/jd/d}/x\"}|$MNT/jd/d}|not-cached
$MNT/jd/{\"a\":1}|$MNT/jd/{\"a\":1}|not-cached" "$got"
}

# For nobody the fixture root's ACL is not loaded: the walk's root misses.
test_walk_nobody() {
	stat "$MNT/a" >/dev/null
	run as_nobody dcache-probe -r --explain "$MNT/a"
	assertEquals 1 "$RC"
	assertEquals "every entry names the root, inside-miss" 4 \
		"$(grep -c "(first miss: $MNT/a: inside-miss)$" <<<"$OUT")"
	fixture_cold_busy "$MNT"
	stat "$MNT/a" >/dev/null
	check_prefix "$MNT/a" nobody
}

test_walk_root_cold() {
	run dcache-probe -r --explain "$MNT/a"
	assertEquals "every entry names the root's first miss" 4 \
		"$(grep -c "(first miss: $MNT/a: mount-point)$" <<<"$OUT")"
}

test_per_mount() {
	run dcache-probe -r --explain --per-mount "$MNT/a" "$TMPFS/dir/absent"
	assertContains "$OUT" "mount-point:4	$MNT"
	assertContains "$OUT" "no-negative:1	$TMPFS"
	fixture_cold_busy "$MNT"
	run dcache-probe -r --explain --per-mount --json "$MNT/a"
	assertEquals 4 "$(json_get 'objs[0]["reasons"]["mount-point"]' <<<"$OUT")"
	run dcache-probe --explain --per-mount /
	assertContains "a mount without misses" "$OUT" "	-	/"
}

# --per-dir has the MISSES column too (JSON "reasons"): each row's reasons
# add up to its misses, and text says the same.  Under -0 the
# column is there as in text, before a path that holds a tab.  (Before: no
# column in --per-dir, and none in any -0 row.)
test_per_dir_and_nul_rows() {
	local json text tabdir
	run dcache-probe --per-dir=1 --explain --json "$MNT/a"
	json=$OUT
	assertEquals "cold: rows for a and a/b, each row's reasons add up to its misses" "2 True" \
		"$(json_get '"%d %s" % (len(objs) - 1, all(sum(o["reasons"].values()) == o["miss"] > 0 for o in objs[:-1]))' <<<"$json")"
	fixture_cold_busy "$MNT"
	run dcache-probe --per-dir=1 --explain "$MNT/a"
	text=$(json_get '"\n".join("%s\t%s" % (",".join("%s:%d" % (k, v) for k, v in o["reasons"].items() if v) or "-", o["path"])
		for o in objs[:-1])' <<<"$json")
	assertEquals "text: MISSES before the path, as the JSON's reasons" "$text" "$(cut -f3- <<<"$OUT")"
	tabdir="$TMPFS/t	ab"
	mkdir -p "$tabdir/in"
	"$DCP_BIN/dcache-probe" -r -s -c --explain -0 "$tabdir" /proc/sys/kernel 2>/dev/null >"$FIXTURE_ROOT/nul.out"
	assertEquals "-0: 4 columns, MISSES third, the path whole" \
		"-|$tabdir pseudo:|/proc/sys/kernel pseudo:|total" \
		"$(python3 -c '
import sys
rows = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
print(" ".join("%s|%s" % (f[2].decode().rstrip("0123456789"), f[3].decode()) for f in (r.split(b"\t", 3) for r in rows)))
' "$FIXTURE_ROOT/nul.out")"
	rm -rf "$tabdir"
}

# --explain changes nothing: the prober sees the same, the disk is not read.
test_explain_does_not_perturb() {
	local dev list before after reads
	stat "$MNT/a" "$MNT/other" "$MNT/real" >/dev/null
	ls -l "$MNT/l1" "$MNT/l2" >/dev/null
	list=$(find "$MNT" -xdev 2>/dev/null | sort)
	fixture_cold_busy "$MNT"
	dev=$(fixture_dev "$MNT") # after the remount: it may be another device
	stat "$MNT/a" "$MNT/other" "$MNT/real" >/dev/null
	ls -l "$MNT/l1" "$MNT/l2" >/dev/null
	# The remount left the superblock dirty: write it out now, so that a
	# journal commit does not fall into the window measured.
	sync -f "$MNT"
	before=$("$OPROBE" - <<<"$list"; "$OPROBE" -L - <<<"$list")
	reads=$(awk '{print $1}' "/sys/block/$dev/stat")
	cachedopen --explain "$MNT/l1/file" "$MNT/a/b/c/file" "$MNT/other/in/y" >/dev/null 2>&1
	dcache-probe --explain -L "$MNT/l1" "$MNT/a/b/c/file" "$MNT/other/x" >/dev/null 2>&1
	as_nobody dcache-probe --explain "$MNT/other/x" "$MNT/a/b" >/dev/null 2>&1
	after=$("$OPROBE" - <<<"$list"; "$OPROBE" -L - <<<"$list")
	assertEquals "the loop device was not read" "$reads" "$(awk '{print $1}' "/sys/block/$dev/stat")"
	assertEquals "oprobe sees the same before and after" "$before" "$after"
	assertContains "some paths stay cold" "$after" "miss $MNT/a/b"
}

test_usage() {
	run uring-open --explain --bench --from=/dev/null
	assertEquals 64 "$RC"
	assertContains "$ERR" "--explain does not apply to --bench"
}

. "$SHUNIT2"
