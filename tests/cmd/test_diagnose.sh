#!/bin/bash
# dcache-probe --diagnose: each kernel mechanism dcprobe uses, present,
# absent or blocked on the running kernel, held against an independent
# prober (tests/lib/kfeat_probe.py: ctypes and system call numbers, not
# libdcprobe) on whatever kernel runs the suite, and under seccomp filters
# (faultinject) that take a mechanism away as an old kernel or a container
# profile would.  Nothing here assumes a kernel version.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require --namespace

FI=$DCP_BUILD/tests/faultinject
PY=/usr/bin/python3
KP=$DCP_TESTS/lib/kfeat_probe.py

# The names and states of the JSON records in $OUT ("NAME STATE" lines).
json_states() {
	"$PY" -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["type"] == "mechanism":
        print(o["name"], o["state"])
'
}

# The prober's answer under the same wrapper (CMD... before python3), as
# "NAME STATE" lines; the command's records for the same names.
compare() {
	local want got
	want=$("$@" "$PY" "$KP" | awk '{ print $1, $2 }')
	run "$@" dcache-probe --diagnose --json
	got=$(json_states <<<"$OUT" | awk 'NR == FNR { k[$1]; next } $1 in k' <(echo "$want") -)
	assertEquals "the states of $* match the independent prober's" "$want" "$got"
	# Exit status 0 exactly when the prober could open "/" with RESOLVE_CACHED.
	if grep -qx 'resolve-cached present' <<<"$want"; then
		assertEquals "exit status ($*)" 0 "$RC"
	else
		assertEquals "exit status ($*)" 3 "$RC"
	fi
}

test_json_matches_the_independent_prober() {
	compare env
	local n
	n=$(json_types <<<"$OUT" | sort | uniq -c | awk '{ printf "%s=%s ", $2, $1 }')
	assertEquals "records" "mechanism=17 summary=1 " "$n"
	# The summary counts the records.
	assertEquals "summary" "True" "$(json_get '
(lambda ms, s: s["present"] == sum(m["state"] == "present" for m in ms) and
 s["absent"] == sum(m["state"] == "absent" for m in ms) and
 s["blocked"] == sum(m["state"] == "blocked" for m in ms) and
 s["unknown"] == 0 and s["status"] == (0 if s["can_probe"] else 3))(
 [o for o in objs if o["type"] == "mechanism"], objs[-1])' <<<"$OUT")"
	# io_uring's opcode question is no better than its ring's.
	local ring op
	ring=$(json_states <<<"$OUT" | awk '$1 == "io-uring" { print $2 }')
	op=$(json_states <<<"$OUT" | awk '$1 == "uring-openat2" { print $2 }')
	[ "$ring" = present ] || assertEquals "uring-openat2 follows io-uring" "$ring" "$op"
}

test_as_nobody() {
	compare as_nobody
	# What needs a privilege nobody lacks is blocked, and says which.
	local line
	line=$(json_get '[o for o in objs if o.get("name") == "open-by-handle"][0]' <<<"$OUT")
	assertContains "$line" "'state': 'blocked'"
	assertContains "$line" "CAP_DAC_READ_SEARCH"
}

# The text: one line per mechanism, NAME STATE CLAUSE, the same states.
test_text_lines_are_the_json_records() {
	local json text
	run dcache-probe --diagnose --json
	json=$(json_states <<<"$OUT")
	run dcache-probe --diagnose
	text=$(awk '{ print $1, $2 }' <<<"$OUT")
	assertEquals "text and JSON say the same" "$json" "$text"
	assertEquals "no message" "" "$ERR"
	assertContains "a present mechanism says what its absence would change" "$OUT" \
		"cachestat            "
	assertEquals "17 lines" 17 "$(grep -c . <<<"$OUT")"
}

# No openat2 (or no RESOLVE_CACHED, or a filter): exit 3 and the reason.
test_openat2_refused_is_exit_3() {
	local fault want
	for fault in openat2=ENOSYS openat2=EINVAL openat2=EPERM; do
		want=absent
		[ "$fault" = openat2=EPERM ] && want=blocked
		compare "$FI" "$fault" --
		assertContains "$fault" "$(json_states <<<"$OUT")" "resolve-cached $want"
		assertContains "$fault: errno" "$OUT" "\"errno\":\"${fault#*=}\""
		assertContains "$fault: summary" "$OUT" '"can_probe":false,"status":3}'
		run "$FI" "$fault" -- dcache-probe --diagnose
		assertEquals "$fault: text" 3 "$RC"
		assertContains "$fault: text" "$OUT" "resolve-cached       $want"
		assertContains "$fault: the reason on stderr" "$ERR" "openat2(2)"
	done
}

test_cachestat_enosys_is_absent() {
	compare "$FI" cachestat=ENOSYS --
	assertContains "$(json_states <<<"$OUT")" "cachestat absent"
	run "$FI" cachestat=ENOSYS -- dcache-probe --diagnose
	assertContains "$OUT" "cachestat            absent  per-file dirty, writeback and evicted pages unknown (mincore(2)) (ENOSYS)"
}

test_io_uring_eperm_is_blocked() {
	compare "$FI" io_uring_setup=EPERM --
	local s
	s=$(json_states <<<"$OUT")
	assertContains "$s" "io-uring blocked"
	assertContains "$s" "uring-openat2 blocked"
	run "$FI" io_uring_setup=EPERM -- dcache-probe --diagnose
	assertContains "$OUT" "io-uring             blocked uring-open exits 3"
	# The consequence said: uring-open cannot run under the same filter.
	run "$FI" io_uring_setup=EPERM -- uring-open /
	assertEquals "uring-open under io_uring_setup=EPERM" 3 "$RC"
}

# Mechanisms taken away one by one: the command and the prober agree.
test_other_faults_match_the_prober() {
	compare "$FI" ioctl:FS_IOC_GETFSUUID=ENOTTY ioctl:0xc040ff0b=ENOTTY fanotify_init=EINVAL socket=EAFNOSUPPORT name_to_handle_at=EINVAL --
	local s
	s=$(json_states <<<"$OUT")
	assertContains "$s" "fsuuid absent"
	assertContains "$s" "pidfd-info absent"
	assertContains "$s" "fanotify-dfid-name absent"
	assertContains "$s" "proc-connector absent"
	compare "$FI" io_uring_register=EINVAL pidfd_open=ENOSYS statx=ENOSYS open_by_handle_at=EPERM \
		fanotify_mark=EINVAL --
	s=$(json_states <<<"$OUT")
	assertContains "$s" "uring-sparse-files absent"
	assertContains "$s" "pidfd-open absent"
	assertContains "$s" "fanotify-mark-ignore absent"
}

# The fallback of a missing FS_IOC_GETFSUUID is what the library would use.
test_fsuuid_names_the_roots_uuid_source() {
	run dcache-probe --diagnose --json
	assertContains "$OUT" '"root_uuid_from":"'
	run "$FI" ioctl:FS_IOC_GETFSUUID=ENOTTY -- dcache-probe --diagnose
	assertContains "$OUT" "fsuuid               absent"
	assertContains "$OUT" "; /: UUID "
}

test_usage() {
	local x
	for x in / "-r /" "--pages" "--prometheus" "--manifest=/nonexistent" "--from=/dev/null" \
		"-0" "--per-mount" "--record=- /"; do
		# shellcheck disable=SC2086
		run dcache-probe --diagnose $x
		assertEquals "--diagnose $x" 64 "$RC"
		assertContains "--diagnose $x: $ERR" "$ERR" "--diagnose excludes"
		# (--prometheus publishes the usage error's status: dcprobe(7))
		[ "$x" = --prometheus ] || assertEquals "--diagnose $x: nothing on stdout" "" "$OUT"
	done
	run dcache-probe --diagnose -q
	assertEquals "-q: the status alone" "0:" "$RC:$OUT$ERR"
	run "$FI" openat2=ENOSYS -- dcache-probe --diagnose -q
	assertEquals "-q: the status alone" "3:" "$RC:$OUT$ERR"
	local f=$SHUNIT_TMPDIR/diag.jsonl
	run dcache-probe --diagnose --json --output="$f"
	assertEquals "--output" "0:" "$RC:$OUT"
	assertEquals "--output holds the records" 18 "$(grep -c . "$f")"
}

. "$SHUNIT2"
