#!/bin/bash
# Manifests that survive a reboot (issue 40): a file is told by its
# filesystem's UUID and its handle, not by a device number.  Each case
# takes a snapshot (dcache-probe -r --ranges --json), then moves the
# filesystem as a reboot does (another loop device; btrfs mounted after
# another btrfs: another anonymous device number) or replaces a file as a
# user may (deleted and made again with the same name, size and mtime,
# even on the same inode number), then restores (warm --manifest) and
# verifies (dcache-probe --manifest) from cold, and checks the result
# against cachestat(2) per recorded range (tests/lib/manifest.py check)
# and the independent prober tests/oprobe.  ext4 always; xfs and btrfs
# where mkfs.xfs and mkfs.btrfs are installed (bootstrap installs both),
# each case saying on stderr when it is left out.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

OPROBE=${DCP_BUILD:-$DCP_BIN/..}/tests/oprobe
FI=${DCP_BUILD:-$DCP_BIN/..}/tests/faultinject
NOBODY=65534

mpy() { /usr/bin/python3 "$DCP_TESTS/lib/manifest.py" "$@"; }

oneTimeSetUp() {
	W=$(mktemp -d "$FIXTURE_ROOT/identity.XXXXXX") || fail "mktemp"
	chmod 0755 "$W"
	LOOPS=()
}

# Whatever a test left attached or mounted.
tearDown() {
	local d
	for d in "$W"/m.*; do
		[ -d "$d" ] && mountpoint -q "$d" && umount "$d"
	done
	for d in "${LOOPS[@]}"; do
		losetup -d "$d" 2>/dev/null
	done
	LOOPS=()
	rm -rf "${W:?}"/*
}

# has_mkfs TYPE - mkfs.TYPE is installed; else say the case is left out.
has_mkfs() {
	command -v "mkfs.$1" >/dev/null && return 0
	echo "test_identity: mkfs.$1 is not installed: the $1 case is left out" >&2
	return 1
}

# img TYPE NAME - an empty filesystem of TYPE in image $W/NAME.img.
img() {
	local f=$W/$2.img
	case $1 in
	ext4) truncate -s 128M "$f" &&
		mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$f" >/dev/null ;;
	xfs) truncate -s 320M "$f" && mkfs.xfs -q -f "$f" >/dev/null ;;
	btrfs) truncate -s 256M "$f" && mkfs.btrfs -q -f "$f" >/dev/null ;;
	esac
}

# attach IMG - a new loop device for IMG in DEV (and in LOOPS, which
# tearDown detaches).
attach() {
	DEV=$(losetup -f --show "$1") || return 1
	LOOPS+=("$DEV")
}

# mnt DEV DIR - mount DEV on DIR (made), read-ahead off.
mnt() {
	local o=
	mkdir -p "$2"
	# (-p: probe the device now; blkid's cache may name what it held before.)
	[ "$(blkid -p -o value -s TYPE "$1")" = ext4 ] && o=no_prefetch_block_bitmaps
	mount ${o:+-o "$o"} "$1" "$2" || return 1
	blockdev --setra 0 "$1"
}

# tree DIR PLAN - a small manifest.py tree in DIR/w, world-readable, its
# workload run from cold by the caller.
tree() {
	mpy make "$1/w" "$2" 120 40 || return 1
	chmod -R a+rX "$1/w"
	sync -f "$1"
}

# remount DEV DIR - unmount DIR and mount DEV there again: cold.
remount() {
	sync -f "$2"
	umount "$2" || return 1
	mnt "$1" "$2"
}

# pin_start MANIFEST DEV / pin_stop - hold what is resident of MANIFEST's
# ranges and of DEV's cache locked in memory meanwhile (manifest.py pin,
# as cmd/manifest does): the machine's DAMON pageout may reclaim an idle
# page at any moment, and a verify would then rightly find it missing.
# Pinned, the pages evicted before (cachestat's shadow entries, counted by
# manifest.py evicted) are the only ones missing.
pin_start() {
	local line
	coproc PIN { mpy pin "$1" "$2"; }
	read -r line <&"${PIN[0]}"
	[[ $line == pinned\ * ]] || { echo "pin_start: $line" >&2; return 1; }
}
pin_stop() {
	local in=${PIN[1]} out=${PIN[0]} pid=$PIN_PID
	[ -n "$pid" ] || return 0
	exec {in}>&- {out}<&-
	wait "$pid"
}

# restored M DEV [WHO...] - restore M from its filesystem's present device
# DEV and verify it: warm exits 0, every recorded page is resident and no
# other (cachestat; a page DAMON reclaimed since counts as read), every
# name the snapshot had cached or negative is so now (oprobe), and the
# verify exits 0 with --min-resident 100 (1 when DAMON reclaimed a page
# before the pin: said).  WHO: a command prefix (as_nobody).
restored() {
	local m=$1 dev=$2 out ev want
	shift 2
	run "$@" "$DCP_BIN/warm" --manifest="$m"
	assertEquals "warm --manifest: exit ($ERR)" 0 "$RC"
	assertNotContains "nothing changed" "$ERR" "changed since the manifest"
	echo "$ERR" >&2
	pin_start "$m" "$dev" || fail "pin"
	out=$(mpy check "$m" 1 2>&1)
	# Before Linux 6.5 (no cachestat): its SKIP and unsure lines to the log.
	grep -E '^(SKIP |unsure: )' <<<"$out" >&2
	out=$(grep -Ev '^(SKIP |unsure: )' <<<"$out")
	assertEquals "every recorded page resident, no other" "" "$(grep -v '^files ' <<<"$out" | head -5)"
	assertTrue "pages were recorded ($out)" "[ $(awk '/^files / { print $4 }' <<<"$out") -gt 0 ]"
	assertEquals "every recorded name cached (the prober)" "" \
		"$(mpy paths "$m" cached | "$OPROBE" - | grep -v '^cached ' | head -3)"
	ev=$(mpy evicted "$m")
	want=$([ "$ev" = 0 ] && echo 0 || echo 1)
	# "unknown" (no cachestat): a recorded range not wholly resident now
	# (check said it), pages evicted or never read: the gate fails too.
	[ "$ev" = 0 ] || echo "restored: $ev recorded pages reclaimed (DAMON) before the verify" >&2
	if [ $# != 0 ]; then # no residency shown to nobody (Linux 6.15): no share to gate on
		run "$@" "$DCP_BIN/dcache-probe" -q --manifest="$m"
		assertEquals "dcache-probe --manifest: exit ($ERR)" 0 "$RC"
	fi
	run "$DCP_BIN/dcache-probe" -q --manifest="$m" --min-resident 100
	assertEquals "dcache-probe --manifest --min-resident 100: exit, $ev pages evicted ($ERR)" "$want" "$RC"
	pin_stop
}

# elsewhere TYPE [WHO...] - snapshot on one loop device, restore on
# another; WHO, a command prefix (faultinject: a kernel without an ioctl),
# takes the snapshot and the restore.
elsewhere() {
	local t=$1 m d1 d2 dev0 M
	shift
	m=$W/m.$t M=$W/$t.jsonl
	img "$t" "$t" || fail "mkfs.$t"
	attach "$W/$t.img" && d1=$DEV && mnt "$d1" "$m" || fail "mount $t"
	tree "$m" "$W/plan" || fail "tree"
	remount "$d1" "$m" && mpy workload "$m/w" "$W/plan" || fail "workload"
	"$@" dcache-probe -r --ranges --json "$m/w" >"$M"
	chmod 0644 "$M"
	UUID_FROM=$(json_get '" ".join(sorted(set(o["uuid_from"] + " " + o["uuid"] for o in objs if o["type"] == "fs")))' <"$M")
	dev0=$(stat -c %d "$m/w")
	# Another loop device for the same image: attached before the first
	# goes, so that it cannot be given the same number.
	umount "$m" && attach "$W/$t.img" && d2=$DEV && losetup -d "$d1" && mnt "$d2" "$m" ||
		fail "reattach $t"
	assertNotEquals "$t: another device number ($d1 -> $d2)" "$dev0" "$(stat -c %d "$m/w")"
	restored "$M" "$d2" "$@"
}

# The ioctls a kernel before Linux 6.9 lacks (FAULT), and ext4's own too
# (FAULT_EXT4: what Linux 5.10 lacks, as ext2/ext3 drivers do).
FAULT=("$FI" ioctl:FS_IOC_GETFSUUID=ENOTTY --)
FAULT_EXT4=("$FI" ioctl:FS_IOC_GETFSUUID=ENOTTY ioctl:EXT4_IOC_GETFSUUID=ENOTTY --)

# Issue 43: Debian 12's kernel (6.1) has no FS_IOC_GETFSUUID.  A snapshot
# there names the ext4 by the UUID ext4's own ioctl gives (6.0), and
# restores on another loop device as on 6.18.  Before: no UUID recorded,
# files named by device number, 0 restored ("another device number").
test_ext4_without_fsuuid_on_another_loop_device() {
	elsewhere ext4 "${FAULT[@]}"
	assertEquals "the UUID from ext4's ioctl, blkid's" "ext4 $(blkid -p -o value -s UUID "$W/ext4.img")" "$UUID_FROM"
}

# Neither ioctl (5.10, or a filesystem without one): root reads the UUID
# from the loop device with libblkid.  Before: as above, 0 restored.
test_ext4_uuid_from_its_device_on_another_loop_device() {
	elsewhere ext4 "${FAULT_EXT4[@]}"
	assertEquals "the UUID from the device (libblkid), blkid's" "blkid $(blkid -p -o value -s UUID "$W/ext4.img")" "$UUID_FROM"
}

# xfs on a kernel before 6.9: its geometry ioctl gives the UUID.
test_xfs_without_fsuuid_on_another_loop_device() {
	has_mkfs xfs || return 0
	elsewhere xfs "${FAULT[@]}"
	assertEquals "the UUID from xfs's geometry, blkid's" "xfs $(blkid -p -o value -s UUID "$W/xfs.img")" "$UUID_FROM"
}

# nobody_no_by_uuid CMD... - CMD as nobody with neither ioctl and no
# /dev/disk/by-uuid (an empty one over it, in a mount namespace of the
# command's own, should udev have made one here).
nobody_no_by_uuid() {
	unshare --mount --propagation private -- bash -c '
		if [ -d /dev/disk ]; then mount -t tmpfs -o mode=0755 none /dev/disk || exit 70; fi
		exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"' \
		nobody "${FAULT_EXT4[@]}" "$@"
}

# No UUID to be had: nobody, on a kernel without the ioctls, may not read
# the loop device and no /dev/disk/by-uuid names it.  The snapshot says so
# once for the filesystem (stderr and a notice record before its first
# file), records its files by device number, and its exit status is what
# it would be without the notice (0: everything cached).  Two directories
# of files on it: still once.  Before: nothing said.
test_nobody_no_uuid_said_once() {
	local m=$W/m.ext4 d M=$W/nouuid.jsonl line
	img ext4 ext4 || fail "mkfs"
	attach "$W/ext4.img" && d=$DEV && mnt "$d" "$m" || fail "mount"
	mkdir -p "$m/a" "$m/b"
	for line in a/1 a/2 b/1 b/2; do head -c 20000 /dev/urandom >"$m/$line"; done
	# nobody's own files: since Linux 6.15 nobody sees no residency of others'
	chown -R 65534:65534 "$m/a" "$m/b"
	as_nobody cat "$m"/a/* "$m"/b/* >/dev/null || fail "read as nobody"
	run nobody_no_by_uuid dcache-probe -r --ranges --json "$m/a" "$m/b"
	printf '%s\n' "$OUT" >"$M"
	assertEquals "exit status as without the notice ($ERR)" 0 "$RC"
	assertEquals "said once on stderr ($ERR)" 1 "$(grep -c "^dcache-probe: '$m': no filesystem UUID on this kernel .*: files there are recorded by device number ($(stat -c '%Hd:%Ld' "$m/a")) and will not match after a reboot or a move\$" <<<"$ERR")"
	assertContains "why, in words" "$ERR" "may not be read by this user (not root)"
	assertEquals "one notice record, before the first file with ranges" \
		"1 $m $(stat -c '%Hd:%Ld' "$m/a") device_denied True" \
		"$(json_get '(lambda n, f: "%d %s %s %s %s" % (len(n), objs[n[0]]["mount"], objs[n[0]]["dev"], objs[n[0]]["no_uuid"], n[0] < f))([i for i, o in enumerate(objs) if o["type"] == "notice"], min(i for i, o in enumerate(objs) if o.get("ranges")))' <"$M")"
	assertEquals "no fs record; every file by device number" "0 4" \
		"$(json_get '"%d %d" % (sum(o["type"] == "fs" for o in objs), sum(1 for o in objs if o.get("ranges") and "fs" not in o["identity"] and o["identity"]["dev"]))' <"$M")"
	# The manifest is read as before (the notice skipped): restored on
	# the same device.
	run warm --manifest="$M"
	assertEquals "the manifest restores on the same device ($ERR)" 0 "$RC"
	# Root, under the same kernel, reads the device: no notice.
	run "${FAULT_EXT4[@]}" "$DCP_BIN/dcache-probe" -r --ranges --json "$m/a" "$m/b"
	assertNotContains "root: nothing said" "$ERR" "no filesystem UUID"
	assertEquals "root: the UUID from the device" "blkid" \
		"$(json_get '" ".join(o["uuid_from"] for o in objs if o["type"] == "fs")' <<<"$OUT")"
}

# An ext4 image snapshotted on one loop device, restored on another (as
# after a reboot that numbered them otherwise): every recorded page back.
# Before (device numbers): 0 files restored, each "changed since the
# manifest", exit 2.
test_ext4_on_another_loop_device() { elsewhere ext4; }

test_xfs_on_another_loop_device() { has_mkfs xfs && elsewhere xfs; }

# btrfs gives each mount an anonymous device number: mounted after another
# btrfs, the same filesystem has another one.  A file in a subvolume
# (whose handle carries the subvolume) is restored too.
test_btrfs_mounted_after_another_btrfs() {
	local m=$W/m.b1 m2=$W/m.b2 d1 d2 dev0 i M=$W/btrfs.jsonl
	has_mkfs btrfs || return 0
	img btrfs b1 && img btrfs b2 || fail "mkfs.btrfs"
	attach "$W/b1.img" && d1=$DEV && attach "$W/b2.img" && d2=$DEV || fail "losetup"
	mnt "$d1" "$m" || fail "mount"
	tree "$m" "$W/plan" || fail "tree"
	btrfs -q subvolume create "$m/w/sv" >/dev/null || fail "subvolume"
	head -c $((64 * 1024)) /dev/urandom >"$m/w/sv/f" && chmod -R a+rX "$m/w/sv"
	remount "$d1" "$m" && mpy workload "$m/w" "$W/plan" || fail "workload"
	cat "$m/w/sv/f" >/dev/null
	dcache-probe -r --ranges --json "$m/w" >"$M"
	chmod 0644 "$M"
	assertEquals "the subvolume's file is recorded with a handle of its subvolume" \
		"77" "$(mpy handle "$M" "$m/w/sv/f" | cut -d: -f1)"
	dev0=$(stat -c %d "$m/w")
	umount "$m" || fail "umount"
	# The other btrfs first: it takes the anonymous number that was
	# freed.  (The numbers are the lowest free: should another mount on
	# the machine have freed a lower one meanwhile, mount it once more.)
	for i in 1 2 3; do
		mnt "$d2" "$m2" && mnt "$d1" "$m" || fail "mount"
		[ "$(stat -c %d "$m/w")" != "$dev0" ] && break
		umount "$m" && umount "$m2"
	done
	assertNotEquals "btrfs: another device number" "$dev0" "$(stat -c %d "$m/w")"
	restored "$M" "$d1"
	umount "$m2"
}

# recreated TYPE [WHO] - a file deleted and made again with the same name,
# size and mtime is refused: nothing of it read, exit 2, in the words
# "another file of the same name"; the verify says ESTALE.  On ext4 the
# new file must get the same inode number (the test fails if it does
# not: never vacuous); xfs and btrfs, where the number may differ, are a
# guard.  Before (ext4): restored as the recorded file, exit 0.
recreated() {
	local t=$1 m=$W/m.$1 d f M=$W/re.jsonl ino was out
	shift
	img "$t" "$t" || fail "mkfs.$t"
	attach "$W/$t.img" && d=$DEV && mnt "$d" "$m" || fail "mount $t"
	chmod 0711 "$m" # nobody may pass, not list: the UUID comes from the file
	mkdir -m 0755 "$m/re" && f=$m/re/f
	printf 12345 >"$f" && chmod 0644 "$f" && touch -d '2024-01-01 00:00:00.123456789' "$f"
	printf keep >"$m/re/g" && chmod 0644 "$m/re/g"
	sync -f "$m"
	remount "$d" "$m" && cat "$f" "$m/re/g" >/dev/null
	dcache-probe -r --ranges --json "$m/re" >"$M"
	chmod 0644 "$M"
	ino=$(stat -c %i "$f")
	was=$(stat -c '%s %y' "$f")
	rm "$f" && printf 67890 >"$f" && chmod 0644 "$f" &&
		touch -d '2024-01-01 00:00:00.123456789' "$f" || fail "recreate"
	[ "$t" = ext4 ] && assertEquals "ext4 gives the new file the same inode number" "$ino" "$(stat -c %i "$f")"
	assertEquals "the same size and mtime" "$was" "$(stat -c '%s %y' "$f")"
	remount "$d" "$m" || fail "remount"
	run "$@" "$DCP_BIN/warm" --manifest="$M"
	assertEquals "$t: refused, exit 2 ($ERR)" 2 "$RC"
	assertContains "$t: in its words" "$ERR" \
		"'$f': changed since the manifest, not restored (another file of the same name)"
	out=$(mpy check "$M" 2>&1 | grep -E "^(unsure: )?$f: .* recorded\$")
	if [[ $out == unsure:* ]]; then # no cachestat (before Linux 6.5): resident only
		assertEquals "$t: nothing of it resident" "unsure: $f: 0 pages resident (evicted unknown), 1 recorded" "$out"
		echo "SKIP test part: needs cachestat (Linux 6.5): $t: nothing of $f read and evicted since" >&2
	else
		assertEquals "$t: nothing of it read" "$f: 0 pages resident (0 evicted), 1 recorded" "$out"
	fi
	assertEquals "$t: the other file restored" "" "$(mpy check "$M" | grep "^$m/re/g" | head -1)"
	run "$@" "$DCP_BIN/dcache-probe" --json --manifest="$M"
	assertEquals "$t: verify exit ($ERR)" 2 "$RC"
	assertEquals "$t: verify says ESTALE" "error ESTALE" \
		"$(json_get '" ".join("%s %s" % (o["data"], o.get("data_errno")) for o in objs if o.get("path") == "'"$f"'")' <<<"$OUT")"
}

test_ext4_file_made_again_on_the_same_inode() { recreated ext4; }
test_xfs_file_made_again() { has_mkfs xfs && recreated xfs; }
test_btrfs_file_made_again() { has_mkfs btrfs && recreated btrfs; }

# Restored as nobody (uid 65534), on a world-readable tree whose mount
# root nobody may not list (0711): the UUID comes from each file's own
# descriptor.  (The snapshot is root's: since Linux 6.15 the kernel shows
# nobody no residency of a file nobody may not write.)
test_nobody_on_another_loop_device() {
	local m=$W/m.ext4 d1 d2 dev0 M=$W/nobody.jsonl
	img ext4 ext4 || fail "mkfs"
	attach "$W/ext4.img" && d1=$DEV && mnt "$d1" "$m" || fail "mount"
	tree "$m" "$W/plan" || fail "tree"
	chmod 0711 "$m"
	remount "$d1" "$m" && mpy workload "$m/w" "$W/plan" || fail "workload"
	dcache-probe -r --ranges --json "$m/w" >"$M"
	chmod 0644 "$M"
	dev0=$(stat -c %d "$m/w")
	umount "$m" && attach "$W/ext4.img" && d2=$DEV && losetup -d "$d1" && mnt "$d2" "$m" || fail "reattach"
	assertNotEquals "another device number" "$dev0" "$(stat -c %d "$m/w")"
	restored "$M" "$d2" as_nobody
}

test_nobody_file_made_again() { recreated ext4 as_nobody; }

# Two ext4 images made from the same tree (mkfs.ext4 -d: the same names,
# sizes, mtimes and inode numbers), one after the other on the same loop
# device (the same device number): the second is another filesystem (its
# UUID), and none of its files is taken for the first's.  Before: each
# file matched by device, inode, size and mtime, restored.
test_another_filesystem_with_the_same_paths() {
	local src=$W/src m=$W/m.ext4 d M=$W/twin.jsonl i
	mkdir -p "$src/w"
	for i in 1 2 3 4; do head -c $((8192 * i)) /dev/urandom >"$src/w/f$i"; done
	touch -d '2024-01-01' "$src/w"/f*
	for i in a b; do
		truncate -s 64M "$W/twin-$i.img" &&
			mkfs.ext4 -q -F -b 4096 -d "$src" "$W/twin-$i.img" >/dev/null || fail "mkfs -d"
	done
	attach "$W/twin-a.img" && d=$DEV && mnt "$d" "$m" || fail "mount"
	chmod -R a+rX "$m/w"
	cat "$m"/w/f* >/dev/null
	dcache-probe -r --ranges --json "$m/w" >"$M"
	stat -c '%d %i %s %Y' "$m"/w/f* >"$W/twin-a.stat"
	umount "$m" && losetup -d "$d" || fail "detach"
	losetup "$d" "$W/twin-b.img" || fail "$d was taken meanwhile by another program"
	mnt "$d" "$m" || fail "mount b"
	assertEquals "the twin has the same device, inode numbers, sizes and mtimes" \
		"$(cat "$W/twin-a.stat")" "$(stat -c '%d %i %s %Y' "$m"/w/f*)"
	run warm --manifest="$M"
	assertEquals "refused, exit 2 ($ERR)" 2 "$RC"
	assertEquals "each file in its words" 4 \
		"$(grep -c "changed since the manifest, not restored (another filesystem)" <<<"$ERR")"
	assertEquals "nothing of them read" 0 "$(fincore -n -r -o PAGES "$m"/w/f* | awk '{ s += $1 } END { print s + 0 }')"
}

# A manifest of format 1 (tests/lib/manifest.py v1: an independent writer
# of the records before format 2) is read as before, by device number, and
# said so once; on another loop device its files are refused, as before.
test_format_1_by_device_number_and_said() {
	local m=$W/m.ext4 d1 d2 M=$W/v1.jsonl
	img ext4 ext4 || fail "mkfs"
	attach "$W/ext4.img" && d1=$DEV && mnt "$d1" "$m" || fail "mount"
	tree "$m" "$W/plan" || fail "tree"
	remount "$d1" "$m" && mpy workload "$m/w" "$W/plan" || fail "workload"
	mpy v1 "$m/w" >"$M" || fail "manifest.py v1"
	assertEquals "format 1: no manifest record, identities without fs or handle" "0 0" \
		"$(grep -c '"type":"manifest"' "$M") $(grep -c '"handle"' "$M")"
	remount "$d1" "$m" || fail "remount"
	run warm --manifest="$M"
	assertEquals "same device: exit ($ERR)" 0 "$RC"
	assertEquals "said once" 1 "$(grep -c "a manifest of format 1 (no filesystem UUIDs, no file handles): its files are told by device number, which a reboot may change; take a new snapshot" <<<"$ERR")"
	assertEquals "every recorded page resident" "" "$(mpy check "$M" 1 | grep -v '^files ' | head -3)"
	run dcache-probe --json --manifest="$M"
	assertEquals "verify: exit ($ERR)" 0 "$RC"
	assertEquals "verify: a notice record" "1" \
		"$(json_get 'sum(o["type"] == "notice" and o["manifest_format"] == 1 for o in objs)' <<<"$OUT")"
	umount "$m" && attach "$W/ext4.img" && d2=$DEV && losetup -d "$d1" && mnt "$d2" "$m" || fail "reattach"
	run warm --manifest="$M"
	assertEquals "another device: refused, exit 2" 2 "$RC"
	assertContains "in its words" "$ERR" "changed since the manifest, not restored (another device number)"
}

# tmpfs (a random UUID per mount: no reboot to survive): a snapshot
# restores and verifies while mounted, as everywhere.
test_tmpfs_restores_while_mounted() {
	local m=$W/m.tmp t M=$W/t.jsonl
	mkdir -p "$m" && mount -t tmpfs -o size=8m none "$m" || fail "tmpfs"
	mkdir -p "$m/w"
	for t in 1 2 3; do head -c 20000 /dev/urandom >"$m/w/f$t"; done
	dcache-probe -r --ranges --json "$m/w" >"$M" 2>/dev/null
	# tmpfs has no UUID ioctl of its own: only FS_IOC_GETFSUUID (Linux 6.9)
	# gives it one, asked of the kernel by the independent prober.
	if [ "$(/usr/bin/python3 "$DCP_TESTS/lib/kfeat_probe.py" | awk '$1 == "fsuuid" { print $2 }')" = present ]; then
		assertEquals "a UUID for each file with data" 3 "$(grep -c '"identity":{"fs":0,' "$M")"
	else
		echo "SKIP test part: needs FS_IOC_GETFSUUID (Linux 6.9): a tmpfs UUID" >&2
		assertEquals "no UUID: said once in a notice" 1 "$(grep -c '"type":"notice"' "$M")"
	fi
	run warm --manifest="$M"
	assertEquals "restored ($ERR)" 0 "$RC"
	run dcache-probe -q --manifest="$M" --min-resident 100
	assertEquals "verified ($ERR)" 0 "$RC"
}

. "$SHUNIT2"
