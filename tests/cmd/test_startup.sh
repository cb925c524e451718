#!/bin/bash
# What a run loads and reads before it does its work: a run that needs no
# mount table loads no libmount (nor what it drags in: libblkid, libselinux,
# pcre2) and reads neither /proc/filesystems nor the mount table.  Seen by
# strace in the real process, with a run that does need the mount table as
# the control.  tests/bench/bench-startup.sh measures what that saves.
: "${DCP_BIN:?}"
export LC_ALL=C.UTF-8
SHUNIT2=${SHUNIT2:-$(command -v shunit2 || echo /usr/share/shunit2/shunit2)}
# What linking libmount costs every start of a process.
HEAVY='libmount\.so|libblkid\.so|libselinux\.so|libpcre2|/proc/filesystems|/proc/self/mountinfo'

# opened CMD... - every file CMD (and its children) opened, one per line.
opened() {
	strace -f -qq -e trace=openat,open,openat2 -o "$SHUNIT_TMPDIR/trace" "$@" >/dev/null 2>&1
	sed -n 's/.*open[a-z0-9]*([^"]*"\([^"]*\)".*/\1/p' "$SHUNIT_TMPDIR/trace"
}

have_strace() {
	command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null && return 0
	startSkipping
	fail "strace is not installed or cannot trace here"
	return 1
}

test_cachedopen_q_loads_no_mount_table() {
	have_strace || return
	local files
	files=$(opened "$DCP_BIN/cachedopen" -q /etc/passwd)
	assertContains "the trace sees the probe's own openat2" "$files" "/etc/passwd"
	assertEquals "cachedopen -q opens none of it" "" "$(grep -E "$HEAVY" <<<"$files")"
	files=$(opened "$DCP_BIN/dcache-probe" /etc/passwd)
	assertEquals "dcache-probe PATH opens none of it" "" "$(grep -E "$HEAVY" <<<"$files")"
}

# The control: a run that needs the mount table loads libmount then, and
# reads mountinfo (so the check above sees them when they are opened).
test_a_run_that_needs_the_mount_table_loads_libmount() {
	have_strace || return
	local files
	files=$(opened "$DCP_BIN/dcache-probe" -r --per-mount /etc)
	assertContains "libmount loaded" "$files" "libmount.so.1"
	assertContains "mountinfo read" "$files" "/proc/self/mountinfo"
}

# No command and not the shared library names libmount (readelf NEEDED):
# it is loaded with dlopen, and a package must depend on it explicitly.
test_nothing_links_libmount() {
	local f
	for f in "$DCP_BIN"/* "${DCP_BUILD:-$DCP_BIN/..}"/libdcprobe.so.[0-9]*; do
		[ -f "$f" ] || continue
		assertNotContains "$f NEEDED" "$(readelf -d "$f" | grep NEEDED)" "libmount"
	done
}

# A real program restored from cold (issue 44): python3 -S importing a
# dozen modules from a copy of its standard library on a loop image.  One
# cold start recorded (dcache-probe --record --pid: the program started
# stopped, the recorder resumes it once it watches), then, from an unmount
# and mount each time: a cold start alone, and warm --manifest of the
# recording followed by the start.  What each start read is the loop
# device's read sectors (/sys/block/loopN/stat) while it ran: the restored
# start reads at most 5% of what the cold start reads.  In a mount
# namespace of its own, as root (skipped otherwise); the image is direct
# I/O, so what is read reaches the device's counters.
# The run in the namespace: prints "cold_kib restore_kib restored_kib files".
py_restore() { # BIN WORKDIR PYTHON
	local BIN=$1 W=$2 PY=$3 mnt loop stdlib i rpid wpid s0 s1 s2 cold rest restored
	local mods="argparse, json, logging, email.parser, http.client, urllib.request, xml.etree.ElementTree, decimal, csv, zipfile, tarfile, uuid, sqlite3, hashlib"
	mnt=$W/mnt
	mkdir -p "$mnt"
	truncate -s 192M "$W/img" && mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$W/img" ||
		return 1
	loop=$(losetup -f --show --direct-io=on "$W/img") || return 1
	# shellcheck disable=SC2064 # the values now: the locals are gone at exit
	trap "umount '$mnt' 2>/dev/null; losetup -d '$loop'" EXIT
	mount -o no_prefetch_block_bitmaps "$loop" "$mnt" || return 1
	stdlib=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
	mkdir -p "$mnt/py/lib/${stdlib##*/}"
	tar -C "$stdlib" --exclude=./test --exclude=./site-packages --exclude=./dist-packages \
		--exclude=./idlelib --exclude=./tkinter --exclude=./ensurepip -cf - . |
		tar -C "$mnt/py/lib/${stdlib##*/}" -xf - || return 1
	local prog=(env PYTHONHOME="$mnt/py" "$PY" -S -c "import $mods")
	[[ $(env PYTHONHOME="$mnt/py" "$PY" -S -c 'import json; print(json.__file__)') == "$mnt"/* ]] ||
		{ echo "json does not come from the image" >&2; return 1; }
	"${prog[@]}" || return 1 # its bytecode written now, not in a measured start
	sync
	remount() { umount "$mnt" && mount -o no_prefetch_block_bitmaps "$loop" "$mnt"; }
	sectors() { awk '{ print $3 }' "/sys/block/${loop#/dev/}/stat"; }
	# The recording: one cold start, started stopped, resumed by the recorder.
	remount || return 1
	bash -c 'kill -STOP $$; exec "$@"' - "${prog[@]}" &
	wpid=$!
	for ((i = 0; i < 500; i++)); do
		[ "$(awk '{ print $3 }' "/proc/$wpid/stat" 2>/dev/null)" = T ] && break
		sleep 0.01
	done
	"$BIN/dcache-probe" --record="$W/R" --pid="$wpid" "$mnt" 2>"$W/rec.err" &
	rpid=$!
	for ((i = 0; i < 3000; i++)); do
		if ! kill -0 "$wpid" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$wpid/stat" 2>/dev/null)" = Z ]; then
			break
		fi
		kill -0 "$rpid" 2>/dev/null || kill -CONT "$wpid" # the recorder ended: never leave it stopped
		sleep 0.01
	done
	wait "$wpid"
	kill -INT "$rpid" 2>/dev/null
	wait "$rpid"
	echo "recorder exit $?: $(cat "$W/rec.err")" >&2
	# A cold start alone.
	remount || return 1
	s0=$(sectors)
	"${prog[@]}"
	s1=$(sectors)
	cold=$(((s1 - s0) / 2))
	# The restore, then the start.
	remount || return 1
	s0=$(sectors)
	"$BIN/warm" --manifest="$W/R" >&2
	s1=$(sectors)
	"${prog[@]}"
	s2=$(sectors)
	rest=$(((s1 - s0) / 2)) restored=$(((s2 - s1) / 2))
	echo "$cold $rest $restored $(grep -c '"type":"entry"' "$W/R")"
}

test_python_start_restored_from_cold_reads_at_most_5_percent() {
	local W out cold rest restored files
	if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null || ! losetup -f >/dev/null 2>&1 ||
		[ ! -x /usr/bin/python3 ]; then
		startSkipping
		fail "needs root, loop devices, mkfs.ext4 and /usr/bin/python3"
		return
	fi
	W=$(mktemp -d "$SHUNIT_TMPDIR/py.XXXXXX")
	out=$(unshare --mount --propagation private -- bash -c "$(declare -f py_restore); py_restore \"\$@\"" - \
		"$DCP_BIN" "$W" "$(readlink -f /usr/bin/python3)")
	assertEquals "the run ($out)" 0 $?
	read -r cold rest restored files <<<"$out"
	echo "python3 start: cold ${cold} KiB read; restore of the recording (${files} entries) ${rest} KiB; the start after it ${restored} KiB" >&2
	assertTrue "the cold start reads something (${cold} KiB)" "[ ${cold:-0} -gt 100 ]"
	assertTrue "the restored start reads at most 5% of the cold start's ${cold} KiB: ${restored} KiB" \
		"[ $((${restored:-999999} * 20)) -le ${cold:-0} ]"
	rm -rf "$W"
}

. "$SHUNIT2"
