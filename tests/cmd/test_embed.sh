#!/bin/bash
# libdcprobe embedded in a program of someone else's (tests/embed/embed.c),
# built against the INSTALLED shared library through pkg-config, as a
# server checking its own files before it serves them would use it:
#  - two walks with dcache-probe --pages's measuring, from two threads at
#    once, over two cold, partly warm fixtures, each with its own walk and
#    measuring context: each one's figures exactly those of the
#    independent prober (tests/oprobe --pages, which does not link the
#    library), and a second round exactly the first (no state carried);
#  - its own SIGINT and SIGTERM handlers in place and never run on a
#    thread of the library, though the process is sent both every
#    millisecond during the walks;
#  - alive, its descriptors as they were, after each error path: a missing
#    root, a walk short of descriptors (EMFILE), malformed, missing and
#    directory manifests;
#  - nothing written on descriptors 1 and 2, by any path.
# In the sanitizer builds the program is built with the build's
# -fsanitize flags (ASan+UBSan, TSan): any report fails it (on stderr).
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
. "$DCP_TESTS/lib/sanitizer.sh"
fixture_require

OPROBE=${DCP_BUILD:+$DCP_BUILD/tests/oprobe}
: "${OPROBE:=$DCP_BIN/../tests/oprobe}"
PS=$(getconf PAGESIZE)

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$DCP_BUILD/CMakeCache.txt"; }

# pages N - N pages of random data, and a bit more when N is odd.
pages() { head -c $(($1 * PS + ($1 % 2) * 100)) /dev/urandom; }

oneTimeSetUp() {
	WORK=$(mktemp -d "$FIXTURE_ROOT/embed.XXXXXX") || fail "mktemp"
	# The library as a packager installs it, and the program built on it:
	# a build configured for /usr into a DESTDIR (pkg-config's sysroot),
	# any other into a prefix of its own (cmake --install --prefix: the
	# relocatable dcprobe.pc gives that prefix's directories).
	local prefix libdir dest=$WORK/dest cc_flags sysroot=
	prefix=$(cache_value CMAKE_INSTALL_PREFIX)
	libdir=$(cache_value CMAKE_INSTALL_LIBDIR)
	for c in library devel; do
		if [ "$prefix" = /usr ]; then
			DESTDIR=$dest cmake --install "$DCP_BUILD" --component $c
		else
			cmake --install "$DCP_BUILD" --prefix "$dest" --component $c
		fi >>"$WORK/install.log" 2>&1 || fail "cmake --install --component $c: $(cat "$WORK/install.log")"
	done
	if [ "$prefix" = /usr ]; then
		sysroot=$dest && LIBPATH=$dest$prefix/$libdir
	else
		LIBPATH=$dest/$libdir
	fi
	cc_flags=$(PKG_CONFIG_PATH=$LIBPATH/pkgconfig PKG_CONFIG_SYSROOT_DIR=$sysroot \
		pkg-config --cflags --libs dcprobe) || fail "pkg-config"
	EMBED=$WORK/embed
	# shellcheck disable=SC2046,SC2086
	cc -std=c11 -Wall -Wextra -Werror -g $(sanitizer_flags) -pthread \
		"$DCP_TESTS/embed/embed.c" $cc_flags -o "$EMBED" 2>"$WORK/cc.log" ||
		fail "embed.c does not build against the installed library: $(cat "$WORK/cc.log")"

	# A: directories 4 deep, files of 1 to 64 pages, hard links (a pair in
	# one directory, a pair across two, a triple), an empty file, a
	# symlink, a FIFO.  B: one wide directory, one hard-link pair.
	A=$(fixture_new 64) && B=$(fixture_new 64) || fail "cannot make fixtures"
	local i d
	mkdir -p "$A"/d0/n1/n2/n3/n4 "$A"/d{1,2,3} "$B/wide" || fail "populate"
	for i in $(seq 1 40); do
		d=$A/d$((i % 4))
		[ $((i % 5)) = 0 ] && d=$A/d0/n1/n2/n3/n4
		pages $((1 + (i * 7) % 64)) >"$d/f$i" || fail "populate"
	done
	ln "$A/d1/f1" "$A/d1/f1.h" && ln "$A/d2/f2" "$A/d1/f2.h" &&
		ln "$A/d3/f3" "$A/d3/f3.h" && ln "$A/d3/f3" "$A/d0/f3.h2" || fail "links"
	: >"$A/d2/empty"
	ln -s d1/f1 "$A/sym"
	mkfifo "$A/d1/fifo"
	for i in $(seq 1 2000); do
		: >"$B/wide/e$i"
	done
	for i in $(seq 1 40); do
		pages $((1 + i % 8)) >"$B/wide/p$i"
	done
	ln "$B/wide/p1" "$B/wide/p1.h"
	# Every path, with its type, made while warm: the prober never lists
	# a directory.
	find "$A" -printf '%y %p\n' >"$WORK/A.types"
	find "$B" -printf '%y %p\n' >"$WORK/B.types"

	# Three good records and five malformed ones (cmd/manifest's cases),
	# of files outside the fixtures.
	mkdir "$WORK/m" && for i in 1 2 3 4; do pages 4 >"$WORK/m/g$i"; done
	BAD=$WORK/bad.jsonl
	# (One snapshot of the three: its format and "fs" records first, which
	# each identity names, then their entries.)
	"$DCP_BIN/dcache-probe" --ranges --json "$WORK/m/g1" "$WORK/m/g2" "$WORK/m/g3" |
		grep -E '"type":"(manifest|fs|entry)"' >"$BAD"
	python3 - "$("$DCP_BIN/dcache-probe" --ranges --json "$WORK/m/g4" | grep '"type":"entry"')" \
		>>"$BAD" <<'PY' || fail "manifest"
import json, sys
rec = sys.argv[1]
print(rec[:-7])  # bad JSON
for how in ("[[-4096,4096]]", "5", "[[0]]"):
    o = json.loads(rec)
    o["ranges"] = json.loads(how)
    print(json.dumps(o))
o = json.loads(rec)
o["path"] = o["path"] + "\u0000x"
print(json.dumps(o))
PY
}

oneTimeTearDown() {
	[ -z "${PIN:-}" ] || kill "$PIN" 2>/dev/null
}

# state - both fixtures cold, then warm in part: every directory looked up
# (so a walk opens only cached directories and changes nothing); of the
# files, by their number, some read whole, some in part, some looked up
# only, the rest left cold (misses: data unknown).  Prints the cached paths.
state() {
	local x y p n=0
	fixture_cold "$A" && fixture_cold "$B" || fail "remount"
	for x in A B; do
		while read -r y p; do
			n=$((n + 1))
			case $y in
			d) stat "$p" >/dev/null && echo "$p" ;;
			f) case $((n % 4)) in
			   0) cat "$p" >/dev/null && echo "$p" ;;
			   1) dd if="$p" of=/dev/null bs="$PS" count=2 2>/dev/null && echo "$p" ;;
			   2) stat "$p" >/dev/null && echo "$p" ;;
			   esac ;;
			*) [ $((n % 2)) = 0 ] && stat "$p" >/dev/null && echo "$p" ;; # lstat: not followed
			esac
		done <"$WORK/$x.types"
	done
}

# expected NAME - the figures of a walk of fixture NAME, from the prober:
# every path's state; over the cached regular files, their distinct
# inodes (a hard link counts once), the sum of their pages and resident
# pages; the regular files whose lookup misses are unknown.
expected() {
	cut -d' ' -f2- "$WORK/$1.types" | "$OPROBE" --pages - |
		paste -d' ' <(cut -d' ' -f1 "$WORK/$1.types") - |
		awk -v x="$1" '
		{ st[$2]++ }
		$1 == "f" && $2 == "cached" && $3 != "-" && !seen[$3]++ { files++; res += $4; pg += $5 }
		$1 == "f" && $2 == "cached" && $4 == "-1" { bad++ }
		$1 == "f" && $2 == "miss" { unknown++ }
		END {
			if (bad) print "prober failed on " bad " files"
			printf "fixture %s cached %d negative %d miss %d error %d files %d pages %d resident %d unknown %d failed 0 repeats 0\n",
				x, st["cached"], st["negative"], st["miss"], st["error"], files, pg, res, unknown
		}'
}

test_two_walks_in_two_threads_exact_handlers_kept_alive_after_errors() {
	local round x want got
	state >"$WORK/cached"
	# Held as it is until the end: the prober and the program see the same.
	coproc PINC { exec python3 "$DCP_TESTS/lib/pin.py" "$WORK/cached"; }
	PIN=$PINC_PID
	read -r got <&"${PINC[0]}"
	assertContains "pin.py: $got" "$got" "pinned "
	for x in A B; do
		expected $x >"$WORK/want.$x"
	done
	(ulimit -c 0; LD_LIBRARY_PATH=$LIBPATH "$EMBED" "$WORK/results" "$A" "$B" "$BAD" \
		>"$WORK/fd1" 2>"$WORK/fd2")
	RC=$?
	kill "$PIN"
	wait "$PIN" 2>/dev/null
	PIN=
	echo "--- embed's results:"
	cat "$WORK/results"
	assertEquals "exit status (results above)" 0 "$RC"
	assertEquals "nothing on descriptor 1" "" "$(cat "$WORK/fd1")"
	assertEquals "nothing on descriptor 2 (a message, or a sanitizer's report)" "" "$(cat "$WORK/fd2")"
	assertContains "linked with the shared library" "$(readelf -d "$EMBED")" "libdcprobe.so."
	for x in A B; do
		want=$(cat "$WORK/want.$x")
		echo "prober:  $want"
		for round in 1 2; do
			got=$(sed -n "s/^round $round //p" "$WORK/results" | grep "^fixture $x ")
			assertEquals "round $round, fixture $x: the prober's figures" "$want" "$got"
		done
	done
	for x in walks missing emfile emfile-again manifest; do
		assertContains "alive after $x" "$(cat "$WORK/results")" "alive after $x fds "
	done
	assertContains "$(cat "$WORK/results")" "handlers ok "
	assertContains "$(cat "$WORK/results")" " foreign 0"
	assertEquals "ok" "$(tail -1 "$WORK/results")"
}

# shellcheck source=/dev/null
. shunit2
