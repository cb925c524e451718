#!/bin/bash
# What a run hands to monitoring (dcprobe.7, "OPTIONS SHARED BY THE
# COMMANDS" and "PROMETHEUS METRICS"): --output replaces FILE whole or not
# at all, in all four commands; --label names a run in every series; a run
# that cannot probe, or a usage error once --prometheus was read, still
# publishes its exit status.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require

ALL=(cachedopen dcache-probe warm uring-open)
WALKERS=(dcache-probe warm)

oneTimeSetUp() {
	MNT=$(fixture_new 32) || fail "cannot make fixture"
	mkdir -p "$MNT/t/a"
	touch "$MNT/t/x" "$MNT/t/a/y"
	# A directory on a tiny tmpfs, filled up by the tests that need it.
	FULL=$(mktemp -d "$FIXTURE_ROOT/full.XXXXXX")
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$FULL" || fail "cannot mount a tmpfs"
	OUTDIR=$SHUNIT_TMPDIR/out
	mkdir -p "$OUTDIR"
}

oneTimeTearDown() {
	fixture_cleanup
}

setUp() {
	rm -rf "${FULL:?}"/* "${FULL:?}"/.[!.]* "${OUTDIR:?}"/* "${OUTDIR:?}"/.[!.]*
}

# listing DIR - the names in DIR, dot files too, sorted, on one line.
listing() {
	find "$1" -mindepth 1 -printf '%f\n' | sort | xargs
}

# args CMD - arguments that make CMD write output about the fixture.
args() {
	case $1 in
	dcache-probe | warm) echo "-r $MNT/t" ;;
	*) echo "$MNT/t/x" ;;
	esac
}

test_output_replaces_the_file_whole() {
	local cmd
	for cmd in "${ALL[@]}"; do
		echo old >"$OUTDIR/$cmd.out"
		# shellcheck disable=SC2046
		run "$cmd" $(args "$cmd")
		local want=$OUT rc=$RC
		# shellcheck disable=SC2046
		run sh -c "umask 077; exec $cmd --output='$OUTDIR/$cmd.out' $(args "$cmd")"
		assertEquals "$cmd: the same exit status: $ERR" "$rc" "$RC"
		assertEquals "$cmd: nothing on stdout" "" "$OUT"
		# uring-open's lines carry times: all but those; a walk's order varies.
		assertEquals "$cmd: the output is in FILE" "$(sed -E 's/[0-9.]+ us/T us/' <<<"$want" | sort)" \
			"$(sed -E 's/[0-9.]+ us/T us/' "$OUTDIR/$cmd.out" | sort)"
		assertEquals "$cmd: mode 0644 whatever the umask" 644 "$(stat -c %a "$OUTDIR/$cmd.out")"
	done
	assertEquals "no temporary file left" "cachedopen.out dcache-probe.out uring-open.out warm.out" \
		"$(listing "$OUTDIR")"
}

test_output_on_a_full_disk_leaves_the_old_file() {
	local cmd
	for cmd in "${ALL[@]}"; do
		echo "old $cmd" >"$FULL/$cmd.prom"
	done
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
	for cmd in "${ALL[@]}"; do
		# shellcheck disable=SC2046
		run "$cmd" --json --output="$FULL/$cmd.prom" $(args "$cmd")
		assertEquals "$cmd: a full disk is exit 2" 2 "$RC"
		assertContains "$cmd: said" "$ERR" "No space left on device"
		assertContains "$cmd: said" "$ERR" "'$FULL/$cmd.prom' left as it was"
		assertEquals "$cmd: the old file intact" "old $cmd" "$(cat "$FULL/$cmd.prom")"
	done
	assertEquals "no temporary file left" "cachedopen.prom dcache-probe.prom fill uring-open.prom warm.prom" \
		"$(listing "$FULL")"
}

test_output_to_a_missing_directory_is_an_error() {
	local cmd
	for cmd in "${ALL[@]}"; do
		# shellcheck disable=SC2046
		run "$cmd" --output="$OUTDIR/no/such/file" $(args "$cmd")
		assertEquals "$cmd: exit 2" 2 "$RC"
		assertContains "$cmd" "$ERR" "--output: cannot create a file beside '$OUTDIR/no/such/file'"
	done
}

# Without --prometheus a run that cannot probe leaves FILE as it was.
test_output_of_a_run_that_cannot_probe() {
	local cmd
	for cmd in cachedopen dcache-probe; do
		echo old >"$OUTDIR/$cmd.out"
		# shellcheck disable=SC2046
		run "$DCP_BUILD/tests/faultinject" openat2=ENOSYS -- "$DCP_BIN/$cmd" \
			--output="$OUTDIR/$cmd.out" $(args "$cmd")
		assertEquals "$cmd: cannot probe" 3 "$RC"
		assertEquals "$cmd: FILE as it was" old "$(cat "$OUTDIR/$cmd.out")"
	done
	assertEquals "no temporary file left" "cachedopen.out dcache-probe.out" "$(listing "$OUTDIR")"
}

test_labels_on_every_series() {
	local cmd f
	for cmd in "${WALKERS[@]}"; do
		f=$OUTDIR/$cmd.prom
		run "$cmd" -r --prometheus --label=job=app --label='site=a"b\c' --output="$f" "$MNT/t"
		assertEquals "$cmd: a run: $ERR" 0 "$((RC <= 1 ? 0 : RC))"
		assertTrue "$cmd: promtool accepts it" "prom_check <'$f' >/dev/null"
		assertEquals "$cmd: every series has the labels, after command" 0 \
			"$(grep -v '^#' "$f" | grep -vc "^dcprobe_[a-z_]*{command=\"$cmd\",job=\"app\",site=\"a\\\\\"b\\\\\\\\\\\\\\\\c\"[,}]")"
		assertTrue "$cmd: and there are series" "[ $(grep -vc '^#' "$f") -ge 3 ]"
	done
	# Two jobs' files side by side: no series twice.
	run dcache-probe -r --prometheus --label=job=one "$MNT/t"
	local first=$OUT
	run dcache-probe -r --prometheus --label=job=two "$MNT/t"
	assertEquals "two jobs never collide" "" "$(series_twice "$first" "$OUT")"
	run dcache-probe -r --prometheus "$MNT/t"
	first=$OUT
	run dcache-probe -r --prometheus "$MNT/t"
	assertContains "the control: without labels two runs collide" \
		"$(series_twice "$first" "$OUT")" 'dcprobe_exit_status{command="dcache-probe"}'
}

# series_twice TEXT... - the series that more than one exposition holds.
series_twice() {
	printf '%s\n' "$@" | grep -v '^#' | sed 's/ [^ ]*$//' | sort | uniq -d
}

test_bad_labels_are_usage_errors() {
	local cmd bad msg
	for cmd in "${WALKERS[@]}"; do
		while IFS='|' read -r bad msg; do
			run "$cmd" -r --prometheus "$bad" "$MNT/t"
			assertEquals "$cmd $bad" 64 "$RC"
			assertContains "$cmd $bad" "$ERR" "$msg"
		done <<'EOF2'
--label=job|invalid --label 'job': NAME=VALUE is needed
--label=1job=a|invalid --label name '1job': a Prometheus label name
--label=jo-b=a|invalid --label name 'jo-b': a Prometheus label name
--label==a|invalid --label name '': a Prometheus label name
--label=__name__=a|names starting with __ are reserved by Prometheus
--label=command=x|invalid --label name 'command': the series already carry it
--label=root=x|invalid --label name 'root'
--label=state=x|invalid --label name 'state'
--label=mountpoint=x|invalid --label name 'mountpoint'
--label=version=x|invalid --label name 'version'
--label=job=|invalid --label 'job=': an empty VALUE
EOF2
		run "$cmd" -r --prometheus --label=job=a --label=job=b "$MNT/t"
		assertEquals "$cmd: a label twice" 64 "$RC"
		assertContains "$ERR" "--label 'job' given twice"
		run "$cmd" -r --label=job=a "$MNT/t"
		assertEquals "$cmd: --label without --prometheus" 64 "$RC"
		assertContains "$ERR" "--label needs --prometheus"
	done
}

# Exit 3 (no openat2 here): the run-level series, with the labels.
test_cannot_probe_publishes_its_status() {
	local cmd f
	for cmd in dcache-probe "warm --check"; do
		f=$OUTDIR/${cmd%% *}.prom
		echo old >"$f"
		run "$DCP_BUILD/tests/faultinject" openat2=ENOSYS -- "$DCP_BIN/${cmd%% *}" ${cmd#* } \
			-r --prometheus --label=job=app --output="$f" "$MNT/t"
		[ "$cmd" = dcache-probe ] || true
		assertEquals "$cmd: cannot probe" 3 "$RC"
		assertEquals "$cmd: status 3 published" 3 \
			"$(prom_check "dcprobe_exit_status{command=\"${cmd%% *}\",job=\"app\"}" <"$f")"
		assertEquals "$cmd: the run-level series" \
			"dcprobe_duration_seconds dcprobe_exit_status dcprobe_last_run_timestamp_seconds dcprobe_build_info" \
			"$(grep -v '^#' "$f" | sed 's/{.*//' | xargs)"
		# And on standard output without --output.
		run "$DCP_BUILD/tests/faultinject" openat2=ENOSYS -- "$DCP_BIN/${cmd%% *}" ${cmd#* } \
			-r --prometheus "$MNT/t"
		assertEquals "$cmd: on stdout" 3 \
			"$(prom_check "dcprobe_exit_status{command=\"${cmd%% *}\"}" <<<"$OUT")"
	done
}

# dcprobe_build_info{version} 1 in every exposition, whatever the exit
# status: 0 or 1, 2 (every listing fails), 3 (no openat2), 64.
test_build_info_in_every_exposition() {
	local cmd version why
	for cmd in "${WALKERS[@]}"; do
		version=$("$cmd" --version | sed -n 's/.*(dcprobe) //p')
		assertNotNull "$cmd --version" "$version"
		for why in run getdents64=EIO openat2=ENOSYS usage; do
			# warm probes (and so can fail to) with --check.
			case $why in
			run) run "$cmd" -r $([ "$cmd" = warm ] && echo --check) --prometheus "$MNT/t" ;;
			usage) run "$cmd" --prometheus --max-depth=x "$MNT/t" ;;
			*) run "$DCP_BUILD/tests/faultinject" "$why" -- "$DCP_BIN/$cmd" -r \
				$([ "$cmd" = warm ] && echo --check) --prometheus "$MNT/t" ;;
			esac
			assertEquals "$cmd $why (exit $RC: $ERR): build info" 1 \
				"$(prom_check "dcprobe_build_info{command=\"$cmd\",version=\"$version\"}" <<<"$OUT")"
		done
	done
}

# Exit 64: published when --prometheus (and --output) came before the error.
test_usage_error_publishes_its_status() {
	local cmd f
	for cmd in "${WALKERS[@]}"; do
		f=$OUTDIR/$cmd.prom
		echo old >"$f"
		run "$cmd" --prometheus --label=job=app --output="$f" --max-depth=x "$MNT/t"
		assertEquals "$cmd: usage error" 64 "$RC"
		assertEquals "$cmd: nothing on stdout" "" "$OUT"
		assertEquals "$cmd: status 64 published" 64 \
			"$(prom_check "dcprobe_exit_status{command=\"$cmd\",job=\"app\"}" <"$f")"
		# A missing PATH is found once every option was read.
		echo old >"$f"
		run "$cmd" -r --prometheus --output="$f"
		assertEquals "$cmd: no PATH" 64 "$RC"
		assertEquals "$cmd: status 64 published" 64 \
			"$(prom_check "dcprobe_exit_status{command=\"$cmd\"}" <"$f")"
		# --prometheus with another output: neither was asked, FILE stays.
		for opt in -q --json -0; do
			echo old >"$f"
			run "$cmd" -r "$MNT/t" $opt --prometheus --output="$f"
			assertEquals "$cmd $opt --prometheus" 64 "$RC"
			assertEquals "$cmd $opt --prometheus: FILE as it was" old "$(cat "$f")"
			run "$cmd" -r "$MNT/t" $opt --prometheus
			assertEquals "$cmd $opt --prometheus: nothing on stdout" "" "$OUT"
		done
		# Options after the one in error are not known: FILE stays.
		echo old >"$f"
		run "$cmd" --max-depth=x --prometheus --output="$f" "$MNT/t"
		assertEquals "$cmd: usage error" 64 "$RC"
		assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
		assertEquals "$cmd: nothing on stdout" "" "$OUT"
		# Without --prometheus, nothing is published.
		run "$cmd" --output="$f" --max-depth=x "$MNT/t"
		assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
		# --prometheus on stdout: the series there.
		run "$cmd" --prometheus --bogus "$MNT/t"
		assertEquals "$cmd: unknown option" 64 "$RC"
		assertEquals "$cmd: on stdout" 64 "$(prom_check "dcprobe_exit_status{command=\"$cmd\"}" <<<"$OUT")"
		# --help is no error and no run.
		run "$cmd" --prometheus --output="$f" --help
		assertEquals "$cmd --help" 0 "$RC"
		assertEquals "$cmd: FILE as it was" old "$(cat "$f")"
	done
	assertEquals "no temporary file left" "dcache-probe.prom warm.prom" "$(listing "$OUTDIR")"
}

. "$SHUNIT2"
