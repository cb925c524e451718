# shellcheck shell=bash
# rely.sh - helpers for the reliability suites (faults, limits, hostile trees,
# valgrind).  Source after fixture.sh and fixture_require.

: "${DCP_BUILD:?DCP_BUILD must name the build directory}"
FI=$DCP_BUILD/tests/faultinject
WALKPRINT=$DCP_BUILD/tests/walkprint
# Generous: the machine is shared, and a hang is what we are looking for.
: "${RELY_TIMEOUT:=120}"

# have CMD - the command is built (the suites cover each command once it exists).
have() { [ -x "$DCP_BIN/$1" ]; }

# sanitized - this build uses ASan/UBSan or TSan (no valgrind, no small
# ulimit -v: both reserve terabytes of shadow address space).
sanitized() { grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address|thread)$' "$DCP_BUILD/CMakeCache.txt" 2>/dev/null; }

# Under the fixture root (source this after fixture_require), so that the
# fixture cleanup also unmounts the tmpfs the suites mount in here.
RELY_TMP=$(mktemp -d "${FIXTURE_ROOT:-${TMPDIR:-/tmp}}/rely.XXXXXX") || exit 2
chmod 0755 "$RELY_TMP"
OUTF=$RELY_TMP/stdout
ERRF=$RELY_TMP/stderr

# runf CMD... - like run, but keeps the raw bytes in $OUTF and $ERRF (NULs
# and trailing newlines included) and wraps the command in a timeout: RC 124
# means it hung.
# A shell function as CMD (as_nobody) gets the timeout inside it.
runf() {
	local pre=()
	if declare -F "$1" >/dev/null; then
		pre=("$1")
		shift
	fi
	"${pre[@]}" timeout -k 10 "$RELY_TIMEOUT" "$@" >"$OUTF" 2>"$ERRF" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
	RC=$?
	json_log "$(json_log_name "$@")" "$OUTF"
	OUT=$(tr -d '\0' <"$OUTF")
	ERR=$(cat "$ERRF")
}

# nlines FILE - number of lines (a last line without newline counts).
nlines() { awk 'END { print NR }' "$1"; }

# ctl_check FILE... - prints nothing when every file is text a terminal
# shows without interpreting anything: valid UTF-8 (names that are not are
# escaped), no C0 control other than \n and \t, no DEL, no C1 control
# (CSI, OSC...), no bidirectional override; otherwise prints the first
# offence.
ctl_check() {
	python3 - "$@" <<'EOF'
import sys
UNSAFE = set(range(0x20)) - {0x0a, 0x09} | set(range(0x7f, 0xa0)) \
    | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a)) | {0x200e, 0x200f}
for name in sys.argv[1:]:
    data = open(name, "rb").read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        print("%s: not UTF-8 at offset %d: %r" % (name, e.start, data[max(0, e.start - 20):e.start + 20]))
        sys.exit(0)
    for i, c in enumerate(text):
        if ord(c) in UNSAFE:
            print("%s: U+%04X at character %d: %r" % (name, ord(c), i, text[max(0, i - 20):i + 20]))
            sys.exit(0)
EOF
}

# json_lines_check FILE - prints nothing when every line is a JSON object
# with a "type"; otherwise the first bad line.
json_lines_check() {
	python3 - "$1" <<'EOF'
import json, sys
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    try:
        obj = json.loads(line.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        print("line %d is not JSON: %s: %r" % (n, e, line[:200]))
        break
    if not isinstance(obj, dict) or "type" not in obj:
        print("line %d has no type: %r" % (n, line[:200]))
        break
EOF
}

rely_cleanup() {
	[ -n "$RELY_TMP" ] && rm -rf "$RELY_TMP"
	RELY_TMP=
}

# paths_check MODE FILE DIR - prints nothing when the paths in FILE are
# exactly the entries below DIR (DIR included), each once; otherwise what is
# missing or extra.  MODE: json (objects with a "path": a string, or
# {"bytes": base64}), nul (NUL-terminated paths, as from -0).
paths_check() {
	python3 - "$@" <<'PY'
import base64, collections, json, os, sys
mode, name, root = sys.argv[1:4]
want = collections.Counter([os.fsencode(root)])
for d, dirs, files in os.walk(os.fsencode(root)):
    want.update(os.path.join(d, x) for x in dirs + files)
got = collections.Counter()
data = open(name, "rb").read()
if mode == "nul":
    got.update(p for p in data.split(b"\0") if p)
else:
    for line in data.splitlines():
        obj = json.loads(line)
        p = obj.get("path")
        if p is None or obj.get("type") in ("summary", "error", "warning"):
            continue
        got[base64.b64decode(p["bytes"]) if isinstance(p, dict) else p.encode("utf-8", "surrogateescape")] += 1
missing, extra = want - got, got - want
if missing or extra:
    print("missing %d %r; extra %d %r" % (len(missing), list(missing)[:3], len(extra), list(extra)[:3]))
PY
}

# count_lines_with FILE TEXT - lines of FILE that contain TEXT.
count_lines_with() { grep -cF -- "$2" "$1"; }

# cached_count DIR [TRIES] - how many entries below DIR (DIR included) the
# walker's probe finds cached in at least one of TRIES runs (default 3).
# A probe never warms anything, so a real miss stays a miss in every run;
# a spurious one (a mount anywhere on the machine during the RCU walk,
# see test_hostile.sh) does not repeat.
cached_count() {
	local i tries=${2:-3}
	for ((i = 0; i < tries; i++)); do
		timeout -k 10 "$RELY_TIMEOUT" "$WALKPRINT" -p "$1" 2>/dev/null | grep '^cached	'
	done | sort -u | wc -l
}

# cold MNT - fixture_cold_busy (fixture.sh): a ring of io_uring holds files
# on the fixture for a moment after its process exits.
cold() { fixture_cold_busy "$1"; }
