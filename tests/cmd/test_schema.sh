#!/bin/bash
# Every JSON record against the schema (man/dcprobe.schema.json, described
# in dcprobe(7)): the records every other suite logged (tests/lib/fixture.sh
# appends the stdout of each --json run to $DCP_BUILD/json-log), and this
# suite's own runs of the four commands over the hostile names.  Validated
# with python3-jsonschema; a mutated record must fail, so the check can.
# ctest runs this suite after the others (DEPENDS); alone, it checks what
# the logs hold from earlier runs, and its own records.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
. "$DCP_TESTS/lib/rely.sh"
: "${DCP_SRC:=$(cd "$DCP_TESTS/.." && pwd)}"

SCHEMA=$DCP_SRC/man/dcprobe.schema.json
CHECK="/usr/bin/python3 $DCP_TESTS/lib/schema_check.py $SCHEMA"

oneTimeSetUp() {
	/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
		fail "python3-jsonschema is missing (Debian package python3-jsonschema)"
	[ -n "$DCP_JSON_LOG" ] || fail "no JSON log (DCP_BUILD unset)"
	MNT=$(fixture_new 64) || fail "cannot make fixture"
	H=$MNT/h
	mkdir "$H"
	python3 "$DCP_TESTS/lib/mktree.py" hostile "$H" >/dev/null || fail "mktree hostile"
	mkdir -p "$MNT/t/a/b" && touch "$MNT/t/a/f" "$MNT/t/a/b/g"
	seq 1 3000 | head -c 2000 >"$MNT/t/a/data"
}

# mine COMMAND - this suite's log of COMMAND.
mine() { printf '%s\n' "$DCP_JSON_LOG/$DCP_JSON_SUITE.$1.jsonl"; }

test_the_schema_is_a_valid_json_schema() {
	run /usr/bin/python3 -c 'import json, sys, jsonschema
jsonschema.Draft202012Validator.check_schema(json.load(open(sys.argv[1])))' "$SCHEMA"
	assertEquals "check_schema: $ERR" 0 "$RC"
}

# The four commands over the hostile names, in every JSON shape they have.
test_own_runs_over_hostile_names() {
	local args=() p
	while IFS= read -r -d '' p; do args+=("$p"); done < <(find "$H" -mindepth 1 -maxdepth 1 -print0)
	fixture_cold "$MNT" || fail "cannot remount"
	if have dcache-probe; then
		runf dcache-probe -r --json "$H"
		runf dcache-probe -r -L --json "$H"
		runf dcache-probe -r --json --per-dir "$H" "$H"
		runf dcache-probe -r --json --per-mount --min-cached 50 "$H" "$MNT/t"
		runf dcache-probe -r --json --no-perturb "$H"
		runf dcache-probe -r --json --pages --per-dir --per-mount --min-resident 10 "$MNT/t" "$H"
		runf dcache-probe --json --pages "${args[@]}"
		runf dcache-probe -r --json "$MNT/absent" "$H"
	fi
	if have warm; then
		fixture_cold "$MNT" || fail "cannot remount"
		runf warm -r --json --check -v "$H"
		runf warm -r --json -L "$H"
		runf warm -r --json --pages --check "$MNT/t"
		runf warm --json -v "${args[@]}" "$MNT/absent"
		runf as_nobody "$DCP_BIN/warm" -r --json "$MNT"
	fi
	if have cachedopen; then
		runf cachedopen --json "${args[@]}"
		runf cachedopen --json --path "${args[@]}"
		runf cachedopen --json --retry --pages "$MNT/t/a/data" "$MNT/absent"
	fi
	if have uring-open; then
		runf uring-open --json "${args[@]}"
		runf uring-open --json --pages "$MNT/t/a/data" "$MNT/t/a/f"
		find "$MNT/t" -type f >"$RELY_TMP/list"
		runf uring-open --json --bench "$RELY_TMP/list"
		runf uring-open --json --bench "$RELY_TMP/list" --async --direct
		if [ -d /sys/kernel/tracing/instances ] || [ -d /sys/kernel/debug/tracing/instances ]; then
			runf uring-open --json --trace "$MNT/t/a/data" "$MNT/absent"
			runf uring-open --json --trace --bench "$RELY_TMP/list"
		fi
	fi
	for p in dcache-probe warm cachedopen uring-open; do
		have "$p" || continue
		assertTrue "$p: records logged" "[ -s '$(mine "$p")' ]"
		run $CHECK "$(mine "$p")"
		assertEquals "$p over hostile names: $OUT" 0 "$RC"
	done
}

# The check fails on a record that does not match: each valid record below,
# mutated, must be refused (and the valid one accepted).
test_a_mutated_record_fails() {
	local cmd rec bad
	while IFS=$'\t' read -r cmd rec bad; do
		run $CHECK --command "$cmd" <<<"$rec"
		assertEquals "$cmd accepts $rec: $OUT" 0 "$RC"
		run $CHECK --command "$cmd" <<<"$bad"
		assertEquals "$cmd refuses $bad" 1 "$RC"
	done <<'EOF_RECORDS'
dcache-probe	{"type":"entry","path":"/f","state":"cached","kind":"file","depth":1,"data":"measured","pages":{"resident":1,"total":2,"resident_bytes":4096,"size":8000,"dirty":0,"writeback":0,"evicted":0,"recently_evicted":0,"method":"cachestat"},"identity":{"dev":"8:1","ino":12,"size":8000,"mtime_ns":1},"ranges":[[4096,4096]]}	{"type":"entry","path":"/f","state":"cached","kind":"file","depth":1,"data":"measured","pages":{"resident":1,"total":2,"resident_bytes":4096,"size":8000,"dirty":0,"writeback":0,"evicted":0,"recently_evicted":0,"method":"cachestat"},"identity":{"dev":"8:1","ino":12,"size":8000,"mtime_ns":1},"ranges":[[4096,0]]}
dcache-probe	{"type":"input_error","list":"l","record":2,"message":"an empty PATH names nothing"}	{"type":"input_error","list":"l","record":0,"message":"an empty PATH names nothing"}
warm	{"type":"input_error","list":"/x","errno":"ENOENT","message":"No such file or directory"}	{"type":"input_error","list":"/x","errno":"ENOENT"}
cachedopen	{"type":"input_error","list":"-","record":1,"message":"a path contains a NUL byte (use --files0-from)"}	{"type":"input_error","record":1,"message":"x"}
dcache-probe	{"type":"dir","path":"/e","depth":1,"paths":0,"cached":0,"negative":0,"miss":0,"never_cached":0,"error":0,"not_visited":0,"walk_errors":0,"cached_percent":null,"complete":true}	{"type":"dir","path":"/e","depth":1,"paths":0,"cached":0,"negative":0,"miss":0,"never_cached":0,"error":0,"not_visited":0,"walk_errors":0,"cached_percent":"-","complete":true}
dcache-probe	{"type":"total","paths":12,"cached":0,"negative":0,"miss":0,"never_cached":12,"error":0,"not_visited":0,"walk_errors":0,"cached_percent":null,"complete":true}	{"type":"total","paths":12,"cached":0,"negative":0,"miss":0,"error":0,"not_visited":0,"walk_errors":0,"cached_percent":null,"complete":true}
dcache-probe	{"type":"entry","path":"/a","state":"miss","kind":"file","depth":1}	{"type":"entry","path":"/a","state":"warm","kind":"file","depth":1}
dcache-probe	{"type":"entry","path":{"bytes":"/w=="},"state":"error","kind":"dir","depth":0,"errno":"ELOOP","message":"x"}	{"type":"entry","path":{"bytes":"/w=="},"state":"error","kind":"dir","depth":0}
dcache-probe	{"type":"unvisited","path":"/a","depth":2,"reason":"inside-miss"}	{"type":"unvisited","path":"/a","depth":2,"reason":"inside-miss","extra":1}
dcache-probe	{"type":"summary","paths":1,"cached":1,"negative":0,"miss":0,"never_cached":0,"error":0,"not_visited":0,"walk_errors":0,"cached_percent":100.00,"complete":true,"elapsed_s":0.1,"status":0}	{"type":"summary","paths":1,"cached":1,"negative":0,"miss":0,"never_cached":0,"error":0,"not_visited":0,"walk_errors":0,"cached_percent":100.00,"complete":true,"elapsed_s":0.1}
warm	{"type":"path","path":"/a","warmed":true,"before":"miss","after":"cached"}	{"type":"path","path":"/a","warmed":"yes"}
warm	{"type":"error","path":"/a","op":"readdir","errno":"EACCES","message":"Permission denied"}	{"type":"error","path":"/a","op":"readdir","errno":"eacces","message":"Permission denied"}
cachedopen	{"type":"open","path":"/a","state":"negative","fd":-1,"errno":"ENOENT","message":"x"}	{"type":"open","path":"/a","state":"negative","fd":-1}
cachedopen	{"type":"summary","paths":1,"cached":1,"negative":0,"miss":0,"error":0,"status":0}	{"type":"summary","paths":"1","cached":1,"negative":0,"miss":0,"error":0,"status":0}
uring-open	{"type":"summary","opens":3,"status":1}	{"type":"summary","opens":3,"status":1,"bench":true}
uring-open	{"type":"bench","mode":"async","direct":false,"depth":8,"opens":3,"inline":0,"punted":3,"eagain":0,"failed":0,"exact":true,"elapsed_ns":5,"elapsed_ms":0.000005,"cpu_ms":0.1}	{"type":"bench","mode":"sync","direct":false,"depth":8,"opens":3,"inline":0,"punted":3,"eagain":0,"failed":0,"exact":true,"elapsed_ns":5,"elapsed_ms":0.000005,"cpu_ms":0.1}
cachedopen	{"type":"open","path":"/a","state":"miss","fd":-1,"errno":"EAGAIN","message":"x","first_miss":"/a","reason":"pseudo"}	{"type":"open","path":"/a","state":"miss","fd":-1,"errno":"EAGAIN","message":"x","first_miss":"/a","reason":"cold"}
dcache-probe	{"type":"entry","path":"/a/l/f","state":"miss","kind":"file","depth":2,"first_miss":"/a/l","reason":"symlink","link":"/a/l","link_reason":"not-cached"}	{"type":"entry","path":"/a/l/f","state":"miss","kind":"file","depth":2,"first_miss":"/a/l","reason":"symlink","link":"/a/l"}
warm	{"type":"root","path":"/a","entries":3,"errors":0}	{"type":"root","path":"/a","entries":3}
warm	{"type":"path","path":"/a","warmed":false,"record":2,"left_out":"max_bytes"}	{"type":"path","path":"/a","warmed":false,"record":2,"left_out":"max_pages"}
warm	{"type":"path","path":"/a","warmed":false,"record":2,"errno":"EOPNOTSUPP","message":"on a pseudo filesystem (proc, sysfs...), not restored"}	{"type":"path","path":"/a","warmed":false,"record":2}
EOF_RECORDS
	# A log with one bad line among good ones fails as a whole, and says which.
	local log=$RELY_TMP/mut.dcache-probe.jsonl
	head -3 "$(mine dcache-probe)" >"$log"
	sed -n 1p "$(mine dcache-probe)" | sed 's/"state":"[a-z]*"/"state":"lukewarm"/' >>"$log"
	run $CHECK "$log"
	assertEquals "a log with a mutated record: $OUT" 1 "$RC"
	assertContains "the bad line is named" "$OUT" "mut.dcache-probe.jsonl:4:"
}

# Last: every record of every suite's log (ctest runs this suite after the
# others), this suite's included.
test_every_logged_record_matches_the_schema() {
	local logs=("$DCP_JSON_LOG"/*.jsonl)
	assertTrue "logs exist" "[ -e '${logs[0]}' ]"
	run $CHECK "${logs[@]}"
	echo "$OUT" | tail -5
	assertEquals "every logged JSON record matches the schema: $OUT" 0 "$RC"
}

. "$SHUNIT2"
