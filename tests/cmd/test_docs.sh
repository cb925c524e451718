#!/bin/bash
# The doc test: every example of README.md (its ```console blocks) and of
# each man page's EXAMPLES section (the pages as the build configured
# them) runs on a fixture, at a terminal, and prints what it shows:
# tests/lib/docex.py takes the examples from the documents, maps their
# paths onto the fixture and checks each output's shape (fields, state
# words, kinds of numbers, JSON members, line count) and exit status.
#
# The fixture stands for the machine of the examples, an ext4 image with
# a tmpfs on its /tmp; each example block starts from the same state
# ("boot_state"): everything cold but for what a booted machine would have
# looked up:
#   /etc/hostname, /etc/motd               cached    (/etc/hosts, /etc/nanorc cold)
#   /etc/nope.conf                         negative  (looked up, absent)
#   /usr/bin, /usr/lib/x86_64-linux-gnu    cached, every entry; /usr/bin/ls's
#                                          data read (a command that ran)
#   /usr/lib/python3, /usr/share           cold      (their own names cached)
#   /srv/app, its entries config,          cached    (static and the
#   config.toml, lib, cache, lib/*                    entries of cache cold);
#                                          the data of lib/* read
#   /srv/cold, /srv/db, /var/lib/app       cold
#   /tmp                                   a fresh tmpfs, holding .X11-unix
#                                          and .X0-lock
# Path substitutions (docex.py prints the table): "/" is the fixture's
# root, /X is ROOT/X but /proc, /sys, /dev/null and /usr/bin/flock, the
# commands' directory is the build's, "sudo" is dropped.
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require
: "${DCP_SRC:=$(cd "$DCP_TESTS/.." && pwd)}"
DOCEX=$DCP_TESTS/lib/docex.py

oneTimeSetUp() {
	ROOT=$(fixture_new 64) || fail "cannot make fixture"
	populate "$ROOT"
	# uring-open --trace's examples need tracefs: mounted here, in the
	# suite's own mount namespace, when the machine has not (as
	# cmd/uring-open does).
	[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	WORK=$SHUNIT_TMPDIR/docs
	mkdir -p "$WORK/cwd"
	# The pages as installed: the configured ones, in the build.
	PAGES=("$DCP_BUILD"/man/man1/*.1 "$DCP_BUILD"/man/man7/*.7)
	# The reset every block starts from, a script of its own (docex.py
	# runs it between blocks).
	{
		printf 'set -e\nROOT=%q\n' "$ROOT"
		printf 'DCP_FIXTURE_STAGE=suite FIXTURE_ROOT=%q DCP_BIN=%q DCP_JSON_LOG= . %q\n' \
			"$FIXTURE_ROOT" "$DCP_BIN" "$DCP_TESTS/lib/fixture.sh"
		declare -f boot_state
		printf 'mountpoint -q "$ROOT/tmp" && umount "$ROOT/tmp"\n'
		printf 'rm -rf "$ROOT"/var/lib/dcprobe/* "$ROOT"/var/lib/prometheus/node-exporter/* %q/*\n' "$WORK/cwd"
		printf 'fixture_cold "$ROOT"\nmount -t tmpfs -o size=16m,mode=1777 dcprobe-docs-tmp "$ROOT/tmp"\n'
		printf 'boot_state "$ROOT"\n'
	} >"$WORK/reset.sh"
	export DOCEX_BINDIRS="/usr/local/bin:$(bindir)"
	export DOCEX_BOOTSTRAP_ARGS=$(sed -n '/^run)/,/;;/s/.*|| set -- //p' "$DCP_SRC/bootstrap")
	export DOCEX_CWD=$WORK/cwd
	export PATH="$DCP_BIN:$PATH"
}

oneTimeTearDown() {
	mountpoint -q "$ROOT/tmp" && umount "$ROOT/tmp"
	fixture_cleanup
}

# bindir - the configured commands' directory (the built unit's ExecStart).
bindir() {
	sed -n 's|^ExecStart=\(/.*\)/warm .*|\1|p' "$DCP_BUILD/examples/warm-app.service"
}

# populate ROOT - the machine of the examples.
populate() {
	local r=$1 i
	mkdir -p "$r"/{etc,usr/bin,usr/lib/x86_64-linux-gnu,usr/lib/python3/json,usr/lib/python3/email} \
		"$r"/usr/share/{doc/bash,man/man1} "$r"/srv/{app/lib,app/cache,app/static,cold,db} \
		"$r"/var/lib/{app,dcprobe,prometheus/node-exporter} "$r"/run/lock "$r/tmp"
	echo docs-host >"$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n' >"$r/etc/hosts"
	echo "Welcome." >"$r/etc/motd"
	echo "set nowrap" >"$r/etc/nanorc"
	cp /usr/bin/ls /usr/bin/cat "$r/usr/bin/"
	for i in $(seq 1 40); do echo "$i" >"$r/usr/lib/x86_64-linux-gnu/lib$i.so"; done
	for i in $(seq 1 30); do echo "$i" >"$r/usr/lib/python3/json/m$i.py"; echo "$i" >"$r/usr/lib/python3/email/m$i.py"; done
	for i in $(seq 1 60); do echo "$i" >"$r/usr/share/doc/bash/f$i"; echo "$i" >"$r/usr/share/man/man1/p$i.1"; done
	echo "port = 80" >"$r/srv/app/config.toml"
	echo "app" >"$r/srv/app/config"
	for i in x a b c d e; do head -c 20000 /dev/urandom >"$r/srv/app/lib/$i.so"; done
	for i in 1 2 3 4; do echo "$i" >"$r/srv/app/cache/$i.tmp"; done
	for i in logo.png style.css app.js; do head -c 5000 /dev/urandom >"$r/srv/app/static/$i"; done
	echo cold >"$r/srv/cold/file"
	head -c 1048576 /dev/urandom >"$r/srv/db/data.db"
	head -c 300000 /dev/urandom >"$r/srv/db/index.db"
	echo db >"$r/var/lib/app/db"
	chmod -R a+rX "$r"
}

# boot_state ROOT - the lookups a booted machine made (the table above).
boot_state() {
	local r=$1
	stat "$r/etc/hostname" "$r/etc/motd" >/dev/null
	! stat "$r/etc/nope.conf" >/dev/null 2>&1
	find "$r/usr/bin" "$r/usr/lib/x86_64-linux-gnu" -exec stat {} + >/dev/null
	cat "$r/usr/bin/ls" >/dev/null
	stat "$r/usr/lib/python3" "$r/usr/share" >/dev/null
	stat "$r/srv/app/config" "$r/srv/app/config.toml" "$r/srv/app/lib" "$r/srv/app/cache" \
		"$r"/srv/app/lib/?.so >/dev/null
	cat "$r"/srv/app/lib/?.so >/dev/null
	# What a booted machine keeps in its /tmp (a fresh tmpfs).
	mkdir "$r/tmp/.X11-unix" && touch "$r/tmp/.X0-lock"
}

# docex FILE... - run the examples of FILE, print the report.
docex() {
	python3 "$DOCEX" run "$ROOT" "bash $WORK/reset.sh" "$@"
}

check_examples() {
	local out rc
	out=$(docex "$@" 2>&1)
	rc=$?
	[ -z "${DOCEX_VERBOSE:-}" ] || printf '%s\n' "$out" >&2
	assertEquals "the examples of $*:
$out
" 0 "$rc"
	assertContains "$out" " examples, 0 failed"
}

test_readme_examples() {
	check_examples "$DCP_SRC/README.md"
}

test_cachedopen_1_examples() { check_examples "$DCP_BUILD/man/man1/cachedopen.1"; }
test_dcache_probe_1_examples() { check_examples "$DCP_BUILD/man/man1/dcache-probe.1"; }
test_warm_1_examples() { check_examples "$DCP_BUILD/man/man1/warm.1"; }
test_uring_open_1_examples() { check_examples "$DCP_BUILD/man/man1/uring-open.1"; }
test_dcprobe_7_examples() { check_examples "$DCP_BUILD/man/man7/dcprobe.7"; }

# Every page with an EXAMPLES section is one of the pages tested above.
test_every_page_is_covered() {
	local page name
	for page in "${PAGES[@]}"; do
		grep -q '^\.SH EXAMPLES' "$page" || continue
		name=$(basename "$page")
		name=${name//[.-]/_}
		declare -F "test_${name}_examples" >/dev/null || fail "no test runs the examples of $(basename "$page")"
	done
}

# The extraction finds every example: each prompt line of README's console
# blocks and each .nf block of an EXAMPLES section, counted here by grep
# and awk, independently of docex.py.
test_every_example_is_found() {
	local page prompts blocks found
	prompts=$(awk '/^```console/ { on = 1; next } /^```/ { on = 0 } on && /^[$#] /' "$DCP_SRC/README.md" | wc -l)
	found=$(python3 "$DOCEX" list "$DCP_SRC/README.md" | wc -l)
	assertEquals "README: one example per prompt" "$prompts" "$found"
	assertTrue "README has examples ($found)" "[ $found -ge 20 ]"
	for page in "${PAGES[@]}"; do
		blocks=$(awk '/^\.SH / { on = ($2 == "EXAMPLES") } on && /^\.nf/' "$page" | wc -l)
		found=$(python3 "$DOCEX" list "$page" | python3 -c 'import json, sys; print(len({json.loads(l)["block"] for l in sys.stdin}))')
		assertEquals "$(basename "$page"): every EXAMPLES block" "$blocks" "$found"
	done
}

# The test can fail: a copy of the README whose example shows another
# state word, one column more, a number where "-" is, or an option the
# command refuses (exit 64) fails, and names the example.
test_a_changed_example_fails() {
	local m out n=0
	for m in 's/^cached \/etc\/hostname$/miss \/etc\/hostname/' \
		's/^open: 3$/open: 3 extra/' \
		's/^\$ dcache-probe \/etc\/hostname \/etc\/nope.conf$/$ dcache-probe --no-such-option \/etc\/hostname/' \
		's/^\$ warm -r -x \/srv\/app\( .*\)*$/$ warm -r -x --per-mount \/srv\/app/'; do
		n=$((n + 1))
		sed "$m" "$DCP_SRC/README.md" >"$WORK/README.$n.md"
		if cmp -s "$DCP_SRC/README.md" "$WORK/README.$n.md"; then
			fail "mutation $m changes nothing"
			continue
		fi
		out=$(docex "$WORK/README.$n.md" 2>&1)
		assertEquals "mutation $m: fails" 1 $?
		assertContains "mutation $m: one example fails" "$out" " examples, 1 failed"
	done
}

# The shape check itself, on lines: what passes and what does not.
test_shapes() {
	run python3 - "$DOCEX" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("docex", sys.argv[1])
d = importlib.util.module_from_spec(spec)
spec.loader.exec_module(d)
ok = [(" 97.3%\t41022/42160\t/usr", "  0.5%\t3/600\t/usr"),
      ("cached /etc/hostname", "cached /etc/hostname"),
      ("warm: 48213 entries, 0 errors in 0.410 s (117593 entries/s)",
       "warm: 7 entries, 0 errors in 0.001 s (5000 entries/s)"),
      ('{"type":"open","path":"/a","fd":3,"us":1.5}', '{"type":"open","path":"/a","fd":4,"us":2}')]
bad = [(" 97.3%\t41022/42160\t/usr", " 97.3%\t41022/42160+3?\t/usr"),
       (" 97.3%\t41022/42160\t/usr", " 97.3% 41022/42160 /usr"),
       (" 97.3%\t41022/42160\t/usr", "     -\t0/0\t/usr"),
       ("cached /etc/hostname", "miss /etc/hostname"),
       ("open: -1", "open: 3"),
       ("dcache-probe: 5 paths; 40.0% cached", "dcache-probe: 5 paths; 40% cached"),
       ('{"type":"open","path":"/a","fd":3}', '{"type":"open","path":"/a","fd":null}'),
       ('{"type":"open","path":"/a","fd":3}', '{"type":"open","path":"/a","fd":3,"x":1}'),
       ('{"type":"open","path":"/a","fd":3}', '{"type":"error","path":"/a","fd":3}')]
for s, a in ok:
    if d.line_matches(s, a):
        sys.exit("%r should match %r: %s" % (a, s, d.line_matches(s, a)))
for s, a in bad:
    if not d.line_matches(s, a):
        sys.exit("%r should not match %r" % (a, s))
assert d.compare([], [], 64), "exit 64 passes"
assert d.compare([], [], 2), "exit 2 without an error shown passes"
assert not d.compare(["cachedopen: '/x': openat2: No such file or directory"], ["cachedopen: '/x': openat2: No such file or directory"], 2)
assert d.compare(["a", "b"], ["a"], 0), "a missing line passes"
print("ok")
EOF
	assertEquals "the shape check: $ERR" "ok" "$OUT"
}

. "$SHUNIT2"
