#!/bin/bash
# One run, one truth: roots that overlap (the same tree twice, nested roots
# in either order, a tree reached again through a symlink followed under
# -L or through a bind mount) share one measurement per entry.  On a cold,
# partly warm fixture, every root's figures must equal what the independent
# prober (tests/oprobe.c) sees just before the run, in every round, whatever
# the threads do; the total counts each entry once, as du -c.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

# Rounds per root set: each one a fresh cold mount and a run.
ROUNDS=${DCP_OVERLAP_ROUNDS:-20}
OPROBE=${DCP_BUILD:+$DCP_BUILD/tests/oprobe}
: "${OPROBE:=$DCP_BIN/../tests/oprobe}"

oneTimeSetUp() {
	MNT=$(fixture_new 64) || fail "cannot make fixture"
	T=$MNT/T
	mkdir -p "$T/sub/x" || fail "cannot populate"
	(cd "$T" && mkdir d{1..20} && touch d{1..20}/f{1..50} sub/f{1..30} sub/x/g{1..30}) ||
		fail "cannot populate"
	ln -s T "$MNT/L"
	BIND=$(mktemp -d "$FIXTURE_ROOT/bind.XXXXXX")
	LISTS=$(mktemp -d "$FIXTURE_ROOT/lists.XXXXXX")
	# Every path of each root, made while warm: the prober never lists a
	# directory (listing one opens it, which warms its entry).
	find "$T" >"$LISTS/T"
	find "$T/sub" >"$LISTS/sub"
	find "$T/sub/x" >"$LISTS/x"
	find -L "$MNT/L" >"$LISTS/L"
	sed "s|^$T|$BIND|" "$LISTS/T" >"$LISTS/bind"
	NT=$(wc -l <"$LISTS/T")
}

# cold ROUND - the fixture cold again, then warm in part, three ways in
# turn: nothing; a directory listed and a file of another looked up; sub
# listed (its entry cached, its files not) and a file deep in x.  The bind
# mount is made again each time (that looks T up: T is cached in all).
cold() {
	mountpoint -q "$BIND" && umount "$BIND"
	fixture_cold_busy "$MNT" || fail "cannot remount the fixture"
	case $(($1 % 3)) in
	1) ls "$T/d7" >/dev/null; stat "$T/d3/f1" >/dev/null ;;
	2) ls "$T/sub" >/dev/null; stat "$T/sub/x/g3" "$T/d5" >/dev/null ;;
	esac
	mount --bind "$T" "$BIND" || fail "cannot bind mount"
}

# Who runs the prober and the commands: root, or as_nobody.
AS=()

# truth LIST [-L] - "PATHS CACHED" of the paths in LIST, by the prober
# (negative counts as cached, as in dcache-probe's share).
truth() {
	local list=$1
	shift
	"${AS[@]}" "$OPROBE" "$@" - <"$LISTS/$list" |
		awk '{ n++ } /^(cached|negative) / { c++ } END { print n, c + 0 }'
}

# roots_json KIND - "PATH PATHS CACHED" per root record, and "total PATHS
# CACHED", from dcache-probe's (KIND probe) or warm's (KIND warm: entries
# and cached before) -s -c --json output in $OUT.
roots_json() {
	# The fixture's paths hold no quote or backslash: plain matching will do.
	awk -v kind="$1" '
	function num(k,   m) { return match($0, "\"" k "\":[0-9]+") ? substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) : "?" }
	/"type":"(root|total)"/ {
		name = match($0, /"path":"[^"]*"/) ? substr($0, RSTART + 8, RLENGTH - 9) : "total"
		if (kind == "probe")
			print name, num("paths"), num("cached") + num("negative")
		else
			print name, num("entries"), num("cached_before"), num("cold"), num("cached_after")
	}' <<<"$OUT"
}

# check_set NAME FLAGS ROOT:LIST... - ROUNDS cold rounds of dcache-probe and
# of warm --check on these roots; each root's figures must be the prober's.
check_set() {
	local name=$1 flags=$2 round spec root list want got bad=0
	shift 2
	for ((round = 0; round < ROUNDS; round++)); do
		local -a roots=() wants=()
		cold "$round"
		for spec in "$@"; do
			root=${spec%%:*} list=${spec#*:}
			roots+=("$root")
			# shellcheck disable=SC2086 # FLAGS is a word list
			wants+=("$root $(truth "$list" $([[ $flags == *-L* ]] && echo -L))")
		done
		want=$(printf '%s\n' "${wants[@]}" | awk '!seen[$1]++')
		# shellcheck disable=SC2086
		run "${AS[@]}" "$DCP_BIN/dcache-probe" -r -s -c --json $flags "${roots[@]}"
		got=$(roots_json probe)
		if ! total_ok "$want" "$got"; then
			bad=$((bad + 1))
			echo "$name round $round: dcache-probe $flags ${roots[*]}" >&2
			diff <(echo "$want") <(echo "$got") >&2
		fi
		cold "$round"
		wants=()
		for spec in "$@"; do
			root=${spec%%:*} list=${spec#*:}
			# shellcheck disable=SC2086
			wants+=("$root $(truth "$list" $([[ $flags == *-L* ]] && echo -L))")
		done
		# shellcheck disable=SC2086
		run "${AS[@]}" "$DCP_BIN/warm" -r -s -c --check --json $flags "${roots[@]}"
		got=$(roots_json warm)
		if ! warm_ok "$(printf '%s\n' "${wants[@]}" | awk '!seen[$1]++')" "$got"; then
			bad=$((bad + 1))
			echo "$name round $round: warm --check $flags ${roots[*]}" >&2
			echo "$got" >&2
		fi
	done
	assertEquals "$name: rounds whose figures differ from the prober's" 0 "$bad"
}

# total_ok WANT GOT - every root's line as the prober's, in order, and a
# total that counts each path of the tree once (every root set here lies
# within T, so the tree is T's, and its cached count T's).
total_ok() {
	local want=$1 got=$2 tline
	tline=$(grep "^$T " <<<"$want" | head -n1)
	[ "$(grep -v '^total ' <<<"$got")" = "$want" ] &&
		[ "$(grep '^total ' <<<"$got")" = "total ${tline#* }" ]
}

# warm_ok WANT GOT - per root: entries as the prober's paths, cached before
# as its cached count, cold the rest, all cached after; the total counts
# T's tree once.
warm_ok() {
	awk -v want="$1" -v nt="$NT" '
	BEGIN { n = split(want, w, "\n"); ok = 1 }
	$1 == "total" { tot++; ok = ok && $2 == nt && $5 == nt; next }
	{
		split(w[++k], x, " ")
		ok = ok && $1 == x[1] && $2 == x[2] && $3 == x[3] && $4 == x[2] - x[3] && $5 == x[2]
	}
	END { exit !(ok && k == n && tot == 1) }' <<<"$2"
}

test_same_root_twice() {
	check_set same "" "$T:T" "$T:T"
}

test_nested_roots() {
	check_set nested "" "$T:T" "$T/sub:sub"
}

test_nested_roots_inner_first() {
	check_set inner-first "" "$T/sub:sub" "$T:T" "$T/sub/x:x"
}

# The same as an unprivileged user (the fixture is world-readable).
test_nested_roots_as_nobody() {
	AS=(as_nobody)
	ROUNDS=$((ROUNDS / 4 + 1)) check_set nobody "" "$T/sub:sub" "$T:T"
	AS=()
}

test_root_again_through_symlink_under_L() {
	check_set symlink "-L" "$T:T" "$MNT/L:L"
}

test_root_again_through_bind_mount() {
	check_set bind "" "$T:T" "$BIND:bind"
}

# A root given twice by the same name is reported once, in every format;
# one given again by another name gets its own line with the same figures.
test_root_given_twice_is_reported_once() {
	cold 1
	run dcache-probe -r -s "$T" "$T"
	assertEquals "text: one line" 1 "$(wc -l <<<"$OUT")"
	run dcache-probe -r -s --json "$T" "$T"
	assertEquals "json: one root record" 1 "$(grep -c '"type":"root"' <<<"$OUT")"
	run dcache-probe -r --prometheus "$T" "$T"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format"
	assertEquals "prometheus: one series" 1 \
		"$(grep -c "^dcprobe_paths{command=\"dcache-probe\",root=\"$T\",state=\"miss\"}" <<<"$OUT")"
	run dcache-probe -r --json "$T" "$T"
	assertContains "json: the summary counts the tree once" "$(tail -n1 <<<"$OUT")" \
		"\"type\":\"summary\",\"paths\":$NT,"
	run warm -r -s --check "$T" "$T"
	assertEquals "warm text: one line" 1 "$(wc -l <<<"$OUT")"
	run warm -r --check --prometheus "$T" "$T"
	prom_check <<<"$OUT" >/dev/null || fail "bad exposition format"
	assertEquals "warm prometheus: one series" 1 \
		"$(grep -c "^dcprobe_warm_entries{command=\"warm\",root=\"$T\"}" <<<"$OUT")"
	run dcache-probe -r -s "$T" "$MNT/./T"
	assertEquals "another name: its own line" 2 "$(wc -l <<<"$OUT")"
	assertEquals "another name: the same figures" "$(head -n1 <<<"$OUT" | cut -f1,2)" \
		"$(tail -n1 <<<"$OUT" | cut -f1,2)"
}

# Without -r each PATH is a question of its own: answered as often as asked.
test_without_r_each_path_is_answered() {
	cold 0
	run dcache-probe "$T/d1" "$T/d1"
	assertEquals 2 "$(wc -l <<<"$OUT")"
}

# A nested root that is cold is walked after the warm ones: its own entry
# and everything below it count once in the total, and --per-dir gives one
# row per directory.
test_per_dir_rows_once() {
	cold 2
	run dcache-probe -r --per-dir=1 "$T/sub" "$T"
	assertEquals "a row per directory, once" 0 "$(grep -v '^ *[0-9.]*%' <<<"$OUT" | wc -l)"
	assertEquals "no directory twice" "" "$(awk -F'\t' '{ print $NF }' <<<"$OUT" | sort | uniq -d)"
}

# Roots from a list (--from, --files0-from) are roots like any other.
test_roots_from_a_list() {
	local want
	cold 2
	want=$(printf '%s %s\n%s %s' "$T/sub" "$(truth sub)" "$T" "$(truth T)")
	run dcache-probe -r -s -c --json --from=- <<<"$T/sub"$'\n'"$T"
	total_ok "$want" "$(roots_json probe)" || fail "--from: $OUT"
	cold 2
	want=$(printf '%s %s\n%s %s' "$T/sub" "$(truth sub)" "$T" "$(truth T)")
	run dcache-probe -r -s -c --json --files0-from=- < <(printf '%s\0' "$T/sub" "$T")
	total_ok "$want" "$(roots_json probe)" || fail "--files0-from: $OUT"
}

# The per-mount row counts each entry of the mount once.
test_per_mount_rows_once() {
	cold 2
	run dcache-probe -r --per-mount --json "$T/sub" "$T" "$T/sub/x"
	assertContains "$(grep '"type":"mount"' <<<"$OUT")" "\"paths\":$NT,"
}

# shellcheck source=/dev/null
. shunit2
