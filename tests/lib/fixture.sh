# shellcheck shell=bash
# fixture.sh - real cold-cache fixtures for the command suites.
#
# A fixture is a small ext4 image, loop-mounted on a fresh directory.
# Unmounting and mounting it again drops every dentry and inode of that one
# filesystem, so its lookups are genuinely cold, without touching the rest
# of the machine's caches.
#
# No other program can look a name up in a fixture: each suite runs in a
# mount namespace of its own (fixture_require), where FIXTURE_ROOT is a
# tmpfs holding the images, the mount points and the suite's TMPDIR.  Seen
# from the machine (the namespace ctest runs in), FIXTURE_ROOT is an empty
# directory of mode 0700: an indexer, an admin's `find /` or `du /tmp`,
# another test run find nothing in it to look up, and no mount of the suite
# in `findmnt`.  Whatever the suite mounts dies with its namespace.
#
# Use:  . "$DCP_TESTS/lib/fixture.sh"; fixture_require   (before shunit2)
#       mnt=$(fixture_new [SIZE_MB] [MKFS_ARGS...])
#       ...populate "$mnt"...; fixture_cold "$mnt"
#       fixture_cleanup   (in oneTimeTearDown; also runs on EXIT)

: "${DCP_BIN:?DCP_BIN must name the directory with the built commands}"
: "${DCP_TESTS:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
export LC_ALL=C.UTF-8
# Debian's python3 first: a pyenv shim costs a second per start under load,
# and the reliability suites start python for every walk.
export PATH="$DCP_BIN:/usr/bin:$PATH"

# Every JSON record the suites see, for cmd/schema: the stdout of each
# --json run of the four commands through run or runf (and json_log called
# after a run by hand) is appended to JSON_LOG/SUITE.COMMAND.jsonl under the
# build directory.  Set DCP_JSON_LOG= (empty) to log nothing.
DCP_JSON_LOG=${DCP_JSON_LOG-${DCP_BUILD:+$DCP_BUILD/json-log}}
DCP_JSON_SUITE=$(basename "$0" .sh)

# Set by fixture_require in the first of the suite's three shells (below),
# inherited by the other two.
FIXTURE_ROOT=${FIXTURE_ROOT:-}
# Sourced without arguments, this file sees the script's own: keep them for
# the runs of the script that fixture_require makes.
FIXTURE_SCRIPT_ARGS=("$@")

# fixture_require [--namespace] - exit 77 (skipped) unless this run can
# make real fixtures: root, loop devices, mkfs.ext4, unshare (with
# --namespace, for a suite that makes no fixture, root and unshare).  Call
# it before sourcing shunit2.
#
# The script then runs three times, as three shells (DCP_FIXTURE_STAGE):
# - the first, in the namespace it was started in ("the machine's"), makes
#   FIXTURE_ROOT, an empty directory there, starts the second in a new
#   private mount namespace, and removes the directory when it is done;
# - the second mounts the tmpfs on FIXTURE_ROOT, inside, and runs the
#   third; its EXIT trap unmounts what the suite left mounted and ends
#   what the suite left running, inside the namespace, however the third
#   ended (shunit2 takes the EXIT trap of the shell it runs in);
# - the third is the suite.
# Every process the suite starts (as_nobody, bindfs and other FUSE daemons,
# io_uring workers) is in the namespace; DCP_FIXTURE_OUTSIDE names a
# process outside it (the first shell), for the tests of the isolation.
fixture_require() {
	local why=
	if [ "$(id -u)" != 0 ]; then
		why="not root"
	elif ! command -v unshare >/dev/null 2>&1; then
		why="unshare missing"
	elif [ "${1:-}" = --namespace ]; then
		:
	elif ! command -v mkfs.ext4 >/dev/null 2>&1; then
		why="mkfs.ext4 missing"
	elif [ ! -e /dev/loop-control ] && ! losetup -f >/dev/null 2>&1; then
		why="no loop devices"
	fi
	if [ -n "$why" ]; then
		echo "SKIP: the suite needs root and loop devices, in a mount namespace of its own ($why)" >&2
		exit 77
	fi
	local rc
	case ${DCP_FIXTURE_STAGE:-} in
	'')
		# This run's records replace the last run's.
		[ -z "$DCP_JSON_LOG" ] || rm -f "$DCP_JSON_LOG/$DCP_JSON_SUITE".*.jsonl
		# Mode 0700 and empty, seen from here, for as long as it exists.
		FIXTURE_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/dcprobe-fixture.XXXXXX") || exit 2
		trap 'rmdir "$FIXTURE_ROOT" 2>/dev/null' EXIT
		trap 'exit 130' INT TERM
		DCP_FIXTURE_STAGE=namespace DCP_FIXTURE_OUTSIDE=$$ FIXTURE_ROOT=$FIXTURE_ROOT \
			unshare --mount --propagation private -- bash "$0" "${FIXTURE_SCRIPT_ARGS[@]}"
		rc=$?
		# The namespace is gone, and its mounts with it (were a process of
		# the suite still in it, rmdir would detach them there).  Anything
		# in the directory was written from outside the namespace.
		rmdir "$FIXTURE_ROOT" || rc=2
		trap - EXIT
		exit $rc
		;;
	namespace)
		# The suite's own /tmp: its images, mount points and scratch files.
		# mode=0755: unprivileged tests walk through it.
		mount -t tmpfs -o mode=0755 dcprobe-fixture "$FIXTURE_ROOT" || exit 2
		mkdir -m 1777 "$FIXTURE_ROOT/tmp" || exit 2
		# What the suite left running first: a FUSE daemon it stopped
		# would hang the unmount.
		trap 'fixture_reap; fixture_cleanup' EXIT
		trap 'exit 130' INT TERM
		DCP_FIXTURE_STAGE=suite TMPDIR=$FIXTURE_ROOT/tmp bash "$0" "${FIXTURE_SCRIPT_ARGS[@]}"
		rc=$?
		exit $rc
		;;
	esac
}

# fixture_reap - end every process left in the suite's mount namespace but
# this shell (a daemon or a background job a test did not stop, which
# would keep its mounts and loop devices alive after the suite), saying
# which.  Only processes in this namespace: the suite's own.
fixture_reap() {
	local p c i pids=() left=()
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" != $$ ] && [ "$p" != "$BASHPID" ] || continue
		# -ef: the same namespace (stat of the nsfs inodes; no fork).
		[ /proc/"$p"/ns/mnt -ef /proc/$$/ns/mnt ] || continue
		fixture_dead "$p" && continue
		read -r c 2>/dev/null </proc/"$p"/comm || continue
		pids+=("$p")
		left+=("$p ($c)")
		kill -KILL "$p" 2>/dev/null
	done
	[ ${#left[@]} -eq 0 ] && return 0
	echo "fixture: the suite left ${#left[@]} process(es) running, killed: ${left[*]}" >&2
	# Dead before the namespace's mounts go: a process in the middle of
	# its exit still holds its files.
	for p in "${pids[@]}"; do
		for ((i = 0; i < 300; i++)); do
			fixture_dead "$p" && break
			sleep 0.1
		done
	done
}

# fixture_dead PID - the process is gone, or a zombie.
fixture_dead() {
	local stat
	read -r stat 2>/dev/null </proc/"$1"/stat || return 0
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

# fixture_outside CMD... - run CMD outside the suite's namespace, in the one
# it was started in (with that namespace's / as root and working directory).
fixture_outside() { nsenter --mount="/proc/${DCP_FIXTURE_OUTSIDE:?}/ns/mnt" -- "$@"; }

# fixture_pgrep PATTERN - the pids of the suite's own processes (those in
# its mount namespace) whose command line matches PATTERN (pgrep -f).
fixture_pgrep() { pgrep --ns $$ --nslist mnt -f "$1"; }

# The fixtures' mount options: ext4 reads block bitmaps in the background
# for a second or so after a mount (prefetch_block_bitmaps), which a test
# counting the device's reads after a remount would see at random.
FIXTURE_MOUNT_OPTS=loop,no_prefetch_block_bitmaps

# fixture_settle - wait until udev, where it runs, has handled the events of
# the loop devices just attached: its blkid reads the first sectors of each
# (60-persistent-storage.rules), at a moment of its own, which a test
# counting the device's reads after a mount would see at random.  A no-op
# without udev.
fixture_settle() {
	[ -S /run/udev/control ] && command -v udevadm >/dev/null || return 0
	udevadm settle --timeout=30 || echo "fixture: udevadm settle: still busy after 30 s" >&2
}

# fixture_new [SIZE_MB [MKFS_ARGS...]] - make, mount and print a fixture's mount point.
fixture_new() {
	local size=${1:-32}
	shift || true
	local dir img
	# Never fall back to "/": fixtures live below the suite's own root.
	[ -n "$FIXTURE_ROOT" ] && [ -d "$FIXTURE_ROOT" ] || {
		echo "fixture_new: no FIXTURE_ROOT (call fixture_require first)" >&2
		return 1
	}
	dir=$(mktemp -d "$FIXTURE_ROOT/mnt.XXXXXX") || return 1
	img="$dir.img"
	truncate -s "${size}M" "$img" || return 1
	# No lazy init: no kernel thread writes the image behind the test's back.
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$@" "$img" >/dev/null || return 1
	mount -o "$FIXTURE_MOUNT_OPTS" "$img" "$dir" || return 1
	fixture_settle
	chmod 0755 "$dir"
	printf '%s\n' "$dir"
}

# fixture_cold MNT - unmount and mount again: every lookup below MNT is cold.
fixture_cold() {
	local dir=$1
	sync -f "$dir" 2>/dev/null
	umount "$dir" || return 1
	mount -o "$FIXTURE_MOUNT_OPTS" "$dir.img" "$dir" || return 1
	fixture_settle
}

# fixture_dev MNT - the name of the loop device MNT is mounted from now
# (loop3).  Ask again after every fixture_cold: the old device is freed at
# the unmount, and when programs elsewhere on the machine attach loop
# devices meanwhile, the mount takes another one (seen with three suites
# remounting at once: loop2, loop3, loop0, loop6 for one fixture).
fixture_dev() { basename "$(findmnt -n -o SOURCE "$1")"; }

# fixture_cold_busy MNT - fixture_cold, retried: io_uring releases direct
# descriptors asynchronously after a command exits, so umount may briefly be
# EBUSY; a fixture left unmounted by a failed try is mounted again.
fixture_cold_busy() {
	local dir=$1 i
	for ((i = 0; i < 100; i++)); do
		fixture_cold "$dir" 2>/dev/null && return 0
		mountpoint -q "$dir" || mount -o "$FIXTURE_MOUNT_OPTS" "$dir.img" "$dir" || return 1
		sleep 0.1
	done
	fixture_cold "$dir"
}

# The exposition format of stdin: first Prometheus's own parser and linter
# (promtool check metrics: one HELP and TYPE per family, escapes, UTF-8,
# metric names), which does not look for duplicate series; then, line by
# line: HELP and TYPE before every family, well-formed names, escaped label
# values, numeric values, and no series twice, by its decoded label values.
# Prints the values of the series named as arguments (exact text).
prom_check() {
	local text
	text=$(cat; echo x) # keep trailing newlines
	text=${text%x}
	if ! command -v promtool >/dev/null; then
		echo "prom_check: promtool not found (Debian package prometheus)" >&2
		return 1
	fi
	printf '%s' "$text" | promtool check metrics >&2 || {
		echo "prom_check: promtool check metrics failed" >&2
		return 1
	}
	printf '%s' "$text" | python3 -c '
import re, sys
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
label = r"[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\n]|\\[\\\"n])*\""
sample = re.compile(r"^(%s)(\{%s(?:,%s)*\})? (\S+)$" % (name, label, label))
helped, typed, seen = set(), set(), {}
for n, line in enumerate(sys.stdin.read().split("\n")[:-1], 1):
    m = re.match(r"^# (HELP|TYPE) (%s) (.+)$" % name, line)
    if m:
        (helped if m.group(1) == "HELP" else typed).add(m.group(2))
        if m.group(1) == "TYPE" and m.group(3) not in ("gauge", "counter"):
            sys.exit("line %d: bad type" % n)
        continue
    m = sample.match(line)
    if not m:
        sys.exit("line %d malformed: %r" % (n, line))
    if m.group(1) not in helped or m.group(1) not in typed:
        sys.exit("line %d: no HELP/TYPE for %s" % (n, m.group(1)))
    float(m.group(3))
    key = m.group(1) + (m.group(2) or "")
    # A series is its name and its decoded label values, as a scraper
    # sees them: two escapings of one value are one (duplicate) series.
    dec = tuple(sorted((k, re.sub(r"\\(.)", lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), v))
                       for k, v in re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\]|\\.)*)\"",
                                              m.group(2) or "")))
    if (m.group(1), dec) in seen:
        sys.exit("line %d: duplicate series %s" % (n, key))
    seen[(m.group(1), dec)] = True
    if key in seen:
        sys.exit("line %d: duplicate series %s" % (n, key))
    seen[key] = float(m.group(3))
for k in sys.argv[1:]:
    print(int(seen[k]) if seen[k] == int(seen[k]) else seen[k])
' "$@"
}

# Unmount everything mounted below FIXTURE_ROOT (fixture_new runs in a
# command substitution, so the kernel's mount table is the only reliable
# list), deepest first, then remove the images and mount points.  rm never
# crosses into a filesystem that is still mounted.  The tmpfs on
# FIXTURE_ROOT itself, with the suite's TMPDIR (shunit2 removes its own
# directory there last), goes with the namespace.
fixture_cleanup() {
	local dir
	[ -n "$FIXTURE_ROOT" ] || return 0
	fuse_cont
	for dir in $(findmnt -rn -o TARGET | grep -F "$FIXTURE_ROOT/" | sort -r); do
		umount "$dir" 2>/dev/null || umount -l "$dir"
	done
	find "$FIXTURE_ROOT" -mindepth 1 -maxdepth 1 ! -name tmp -exec rm -rf --one-file-system {} +
	FIXTURE_ROOT=
}

# fuse_stop PID - stop FUSE daemon PID (SIGSTOP), noted below FIXTURE_ROOT:
# fuse_cont (and fixture_cleanup, however the suite ended) lets it go on
# before anything is unmounted.  A stopped daemon left behind hangs umount,
# and every later lookup on its mount, for good.
fuse_stop() {
	[ -n "$1" ] && echo "$1" >>"$FIXTURE_ROOT/stopped-daemons" && kill -STOP "$1"
}

# fuse_cont - SIGCONT every daemon fuse_stop stopped.
fuse_cont() {
	local pid
	[ -f "$FIXTURE_ROOT/stopped-daemons" ] || return 0
	while read -r pid; do
		kill -CONT "$pid" 2>/dev/null
	done <"$FIXTURE_ROOT/stopped-daemons"
	rm -f "$FIXTURE_ROOT/stopped-daemons"
}

# json_log_name ARGS... - the command of a command line that runs one of the
# four with --json (the first of its words named like one, as in
# "timeout 60 warm -r --json DIR" or "as_nobody $DCP_BIN/warm --json ..."),
# or nothing.
json_log_name() {
	local a name= json=
	for a; do
		case ${a##*/} in
		cachedopen | dcache-probe | warm | uring-open) name=${name:-${a##*/}} ;;
		--json) json=1 ;;
		esac
	done
	[ -n "$name" ] && [ -n "$json" ] && printf '%s\n' "$name"
}

# json_log NAME FILE [OFFSET] - append FILE's bytes from OFFSET (0) to the
# log of command NAME.
json_log() {
	[ -n "$DCP_JSON_LOG" ] && [ -n "$1" ] || return 0
	mkdir -p "$DCP_JSON_LOG" &&
		tail -c +$((${3:-0} + 1)) "$2" >>"$DCP_JSON_LOG/$DCP_JSON_SUITE.$1.jsonl"
}

# run CMD... - run a command, keeping its stdout in $OUT, stderr in $ERR and
# exit status in $RC, whatever it does.  JSON records are logged (json_log).
run() {
	local o e
	o=$(mktemp) e=$(mktemp)
	# Close the descriptors shunit2 and ctest leave open, so that the
	# command's first descriptor is 3 as in a fresh shell.
	"$@" >"$o" 2>"$e" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
	RC=$?
	json_log "$(json_log_name "$@")" "$o"
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	rm -f "$o" "$e"
}

# as_nobody CMD... - run a command as an unprivileged user (uid/gid 65534).
# uring_exact - "true" when the independent prober finds io-wq's completions
# deferred on this kernel (uring-open's verdict exact: Linux 6.2+), else
# "false", as uring-open's JSON says it.
uring_exact() {
	python3 "$DCP_TESTS/lib/kfeat_probe.py" |
		awk '$1 == "uring-defer-taskrun" { print ($2 == "present") ? "true" : "false" }'
}

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"
}

# json_check - every stdin line must be a JSON object: prints what python's
# parser sees as "type" per line, fails on the first invalid line.
json_types() {
	python3 -c '
import json, sys
for n, line in enumerate(sys.stdin, 1):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON: %s: %r" % (n, e, line))
    if not isinstance(obj, dict) or "type" not in obj:
        sys.exit("line %d has no type: %r" % (n, line))
    print(obj["type"])
'
}

# json_get EXPR - evaluate a python expression over the list of objects "objs".
json_get() {
	python3 -c '
import json, sys
objs = [json.loads(l) for l in sys.stdin if l.strip()]
print(eval(sys.argv[1]))
' "$1"
}

SHUNIT2=${SHUNIT2:-$(command -v shunit2 || echo /usr/share/shunit2/shunit2)}
