#!/bin/bash
# bench-uring-table.sh - reproduce the RESOLVE_CACHED cover letter's table:
# open every file of a list through io_uring, forced async (IOSQE_ASYNC, the
# way io_uring opened files before 5.12) against inline-first (the cached
# lookup is tried during submit, only misses go to io-wq), on a fixture
# where 33%, 89% and 100% of the files are in the dentry cache.
#
# Usage: tests/bench/bench-uring-table.sh [BUILD_DIR]
# Environment: FILES (10000), DIRS (100), RUNS (5), DEPTH (32),
#              SHARES ("33 89 100"), DIRECT (0; 1: open into direct
#              descriptors instead of closing each fd).  Needs root and
#              loop devices.
#
# Each run: remount the fixture (every dentry cold), stat the chosen share
# of the files (a fixed pseudo-random selection), then time
# `uring-open --bench LIST` over all files.  Medians of RUNS runs; the
# speedup is async time / inline-first time, for wall-clock time and for
# the CPU time of the process (its io-wq worker threads included).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
build=${1:-$here/../../build}
export DCP_BIN=$(cd "$build/bin" && pwd) || exit 2
export DCP_TESTS=$here/..
. "$DCP_TESTS/lib/fixture.sh"
fixture_require

FILES=${FILES:-10000}
DIRS=${DIRS:-100}
RUNS=${RUNS:-5}
DEPTH=${DEPTH:-32}
SHARES=${SHARES:-33 89 100}
DIRECT=${DIRECT:-0}
direct=
[ "$DIRECT" = 1 ] && direct=--direct
per_dir=$(( (FILES + DIRS - 1) / DIRS ))

mnt=$(fixture_new 128 -N $((FILES + DIRS + 64))) || exit 2
work=$(mktemp -d) || exit 2
# fixture_new ran in a command substitution: its mount list did not survive.
trap 'rm -rf "$work"; umount "$mnt"; fixture_cleanup' EXIT

echo "fixture: $FILES files in $DIRS directories on $mnt (ext4, loop)" >&2
n=0
for ((d = 0; d < DIRS && n < FILES; d++)); do
	mkdir "$mnt/d$d"
	for ((f = 0; f < per_dir && n < FILES; f++, n++)); do
		printf '%s/d%d/f%d\n' "$mnt" "$d" "$f"
	done
done >"$work/list"
xargs -a "$work/list" -d '\n' touch || exit 2

# The same pseudo-random selection of files for every run of a share.
select_share() {
	shuf -n $(( (FILES * $1 + 50) / 100 )) --random-source=<(yes) "$work/list"
}


# run MODE SHARE - one cold run; prints elapsed ms and checks the counts.
run() {
	local mode=$1 share=$2 opt= json
	[ "$mode" = async ] && opt=--async
	fixture_cold "$mnt" || exit 2
	if [ -s "$work/sel.$share" ]; then
		xargs -a "$work/sel.$share" -d '\n' stat --format=%i >/dev/null || exit 2
	fi
	json=$(uring-open --bench --from="$work/list" --depth "$DEPTH" $opt $direct --json)
	python3 -c '
import json, sys
b = [o for o in map(json.loads, sys.stdin) if o["type"] == "bench"][0]
if b["failed"] or b["opens"] != int(sys.argv[1]):
    sys.exit("bad run: %r" % b)
print("%.3f %.3f %d %d" % (b["elapsed_ms"], b["cpu_ms"], b["inline"], b["punted"]))
' "$FILES" <<<"$json" || exit 2
}

printf '%-7s %10s %12s %7s   %10s %12s %7s   %s\n' "Cached" "async" "inline-first" "Speedup" \
	"async CPU" "inline CPU" "Speedup" "inline/punted"
printf '%s\n' "------------------------------------------------------------------------------------------"
for share in $SHARES; do
	select_share "$share" >"$work/sel.$share"
	real=$(( ($(wc -l <"$work/sel.$share") * 100 + FILES / 2) / FILES ))
	: >"$work/t.async" >"$work/t.inline" >"$work/c.async" >"$work/c.inline"
	for ((r = 0; r < RUNS; r++)); do
		# Alternate the order so neither mode always runs first.
		if ((r % 2)); then order="inline async"; else order="async inline"; fi
		for mode in $order; do
			res=$(run "$mode" "$share") || exit 2
			set -- $res
			echo "$1" >>"$work/t.$mode"
			echo "$2" >>"$work/c.$mode"
			[ "$mode" = inline ] && counts="$3/$4"
		done
	done
	a=$(median <"$work/t.async") i=$(median <"$work/t.inline")
	ca=$(median <"$work/c.async") ci=$(median <"$work/c.inline")
	printf '%-7s %7.1f ms %9.1f ms %6.1fx   %7.1f ms %9.1f ms %6.1fx   %s\n' "$real%" "$a" "$i" \
		"$(awk -v a="$a" -v i="$i" 'BEGIN { print a / i }')" "$ca" "$ci" \
		"$(awk -v a="$ca" -v i="$ci" 'BEGIN { print a / i }')" "$counts"
done
echo "medians of $RUNS cold runs, $FILES files, queue depth $DEPTH${direct:+, direct descriptors}; kernel $(uname -r)" >&2
