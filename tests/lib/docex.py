#!/usr/bin/python3
"""docex.py - the examples of the documentation, run, their output's shape
checked (tests/cmd/test_docs.sh).

  docex.py list FILE...                  the examples found, as JSON lines
  docex.py run ROOT RESET FILE...        run them; exit 1 if one fails
                                         (DOCEX_VERBOSE=1: print every output)

An example is taken from the documents themselves, never copied into a test:

- README.md: every ```console block.  A line starting with "$ " (or "# ",
  a root prompt) is a command (a trailing backslash continues it); the
  lines after it, up to the next command, are what it shows.
- a man page (as the build configured it): every .nf/.fi block of its
  EXAMPLES section, roff escapes undone.  A block whose first line is a
  prompt is read as above; a block starting with "[" is a systemd unit,
  whose ExecStartPre= and ExecStart= lines are commands; a line with five
  time fields and a user is a cron line, whose command is the rest; any
  other block is one shell script.

Each block runs as a whole, in order, from the same starting state (RESET,
a shell command that puts the fixture back: cold, then the few lookups
test_docs.sh describes), in a bash whose standard input, output and error
are a terminal (a pty), as a person at a terminal runs it.  Paths and
commands are mapped onto the fixture by one table (SUBSTITUTIONS below),
applied alike to commands and to the output they show.

The output is checked against what the example shows, line by line: each
shown line is turned into a pattern in which every run of digits is "some
digits" (a decimal point stays a decimal point), a run of spaces is "some
spaces", a tab a tab and leading blanks any; the rest (state words, paths,
punctuation, separators, the number of fields) must be as shown.  A line
that is a JSON object must be one with the same members, the same kinds of
values and the same strings.  The number of lines must be the same; lines
may come in another order only where they do not in the order shown (more
than one thread prints).  The exit status must be 0 or 1, or 2 when the
shown output shows an error; an example that shows no output is run and
checked for its status alone.
"""
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import struct
import fcntl
import time

COMMANDS = ("cachedopen", "dcache-probe", "warm", "uring-open")

# Paths that are the system's own and stay as written: the pseudo
# filesystems, the null device, the system's flock.  Every other absolute
# path P becomes ROOT + P, and "/" alone ROOT: the fixture stands for the
# machine.
KEEP = re.compile(r"/(proc|sys|dev/null|usr/bin/flock)(?=[/\s'\":;,)]|$)")
# Where a path may start: the start of a line, or after a blank, a quote,
# '=', '(', a redirection, ':' or ','.
PATH_START = re.compile(r"(?:(?<=^)|(?<=[\s'\"=(<>:,]))/")

SUBSTITUTIONS = """\
  doc                                  run as
  sudo CMD                             CMD (the suite runs as root)
  ./bootstrap run [ARGS]               dcache-probe ARGS (bootstrap's default
                                       ARGS when none: its "set --" line)
  BINDIR/NAME (/usr/local/bin, the     NAME, found on PATH: the build's
  configured bindir), NAME one of the
  four commands
  /proc/..., /sys/..., /dev/null,      themselves
  /usr/bin/flock
  / (alone)                            ROOT
  any other /PATH                      ROOT/PATH
  reload_now, reload_later             shell functions that say their name
"""


def roff_text(line):
    """The text of a line of a .nf block, roff escapes undone."""
    out, i = [], 0
    simple = {"-": "-", "e": "\\", "&": "", " ": " ", "|": "", "^": "", "%": ""}
    named = {"aq": "'", "dq": '"', "em": "--", "en": "-", "bu": "*", "ti": "~", "ha": "^"}
    while i < len(line):
        c = line[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = line[i + 1:i + 2]
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n == "(" and line[i + 2:i + 4] in named:
            out.append(named[line[i + 2:i + 4]])
            i += 4
        elif n == "f" and line[i + 2:i + 3] in ("B", "I", "R", "P"):
            i += 3
        else:
            raise ValueError("unknown roff escape in %r" % line)
    return "".join(out)


def man_blocks(path):
    """The .nf blocks of the EXAMPLES section of man page PATH: (line, [text])."""
    blocks, on, block, start = [], False, None, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith(".SH "):
                on = line.split(None, 1)[1].strip('"') == "EXAMPLES"
                continue
            if not on:
                continue
            if line == ".nf":
                block, start = [], n + 1
            elif line == ".fi":
                blocks.append((start, block))
                block = None
            elif block is not None:
                if line.startswith(".") or line.startswith("'"):
                    raise ValueError("%s:%d: a request inside an example: %r" % (path, n, line))
                block.append(roff_text(line))
    return blocks


def readme_blocks(path):
    """The ```console blocks of a Markdown file: (line, [text])."""
    blocks, block, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if block is None and line.strip() == "```console":
                block, start = [], n + 1
            elif block is not None and line.strip() == "```":
                blocks.append((start, block))
                block = None
            elif block is not None:
                block.append(line)
    return blocks


PROMPT = re.compile(r"^([$#]) (.*)$")
CRON = re.compile(r"^(?:[0-9*/,-]+\s+){5}\S+\s+(.*)$")


def transcript(lines):
    """[(command, [shown lines])] of a block of prompts and output."""
    steps, i = [], 0
    while i < len(lines):
        m = PROMPT.match(lines[i])
        if not m:
            raise ValueError("output before any command: %r" % lines[i])
        cmd = m.group(2)
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not PROMPT.match(lines[i]):
            shown.append(lines[i])
            i += 1
        steps.append((cmd, shown))
    return steps


def examples(files):
    """Every example of FILES: dicts with src, block, cmd, shown, kind."""
    out = []
    for path in files:
        is_man = re.search(r"\.[1-8]$", path) is not None
        blocks = man_blocks(path) if is_man else readme_blocks(path)
        for b, (line, lines) in enumerate(blocks):
            src = "%s:%d" % (os.path.basename(path), line)
            if not lines:
                raise ValueError("%s: an empty example" % src)
            if PROMPT.match(lines[0]):
                steps = [(c, s, "console") for c, s in transcript(lines)]
            elif lines[0].startswith("["):
                steps = [(re.sub(r"^-", "", l.split("=", 1)[1]), [], "unit") for l in lines
                         if re.match(r"^ExecStart(Pre)?=", l)]
                if not steps:
                    raise ValueError("%s: a unit without ExecStart=" % src)
            elif all(CRON.match(l) for l in lines):
                steps = [(CRON.match(l).group(1), [], "cron") for l in lines]
            else:
                steps = [("\n".join(lines), [], "script")]
            for cmd, shown, kind in steps:
                out.append({"src": src, "block": "%s#%d" % (os.path.basename(path), b),
                            "cmd": cmd, "shown": shown, "kind": kind})
    return out


def fixture_paths(text, root):
    """TEXT with its absolute paths moved below ROOT (see KEEP)."""
    def one(m):
        rest = text[m.start():]
        if KEEP.match(rest):
            return "/"
        if re.match(r"/(?=$|[\s'\":;,)])", rest):
            return root
        return root + "/"
    return PATH_START.sub(one, text)


def command_line(cmd, root, bindirs, bootstrap_args):
    """The command as run on the fixture (SUBSTITUTIONS)."""
    for b in bindirs:
        cmd = re.sub(r"(?<![\w/.-])%s/(%s)\b" % (re.escape(b), "|".join(map(re.escape, COMMANDS))),
                     r"\1", cmd)
    cmd = re.sub(r"(^|[;&|(]\s*)sudo\s+", r"\1", cmd)
    cmd = re.sub(r"^\./bootstrap run(?=\s|$)( [^2>|;&]*)?",
                 lambda m: "dcache-probe " + ((m.group(1) or "").strip() or bootstrap_args) + " ", cmd)
    return fixture_paths(cmd, root)


def pattern(line):
    """The regular expression of a shown text line: numbers by kind."""
    out, i = [], 0
    lead = re.match(r"^[ \t]*", line).end()
    if lead:
        out.append(r"[ \t]*")
        i = lead
    for tok in re.finditer(r"[0-9]+(?:\.[0-9]+)?| +|\t|[^0-9 \t]+", line[i:]):
        t = tok.group(0)
        if t[0].isdigit():
            out.append(r"[0-9]+\.[0-9]+" if "." in t else r"[0-9]+")
        elif t[0] == " ":
            out.append(" +")
        elif t == "\t":
            out.append("\t")
        else:
            out.append(re.escape(t))
    return "^" + "".join(out) + "$"


def json_shape(shown, actual):
    """None if ACTUAL has SHOWN's shape (members, kinds, strings), else why."""
    def kind(v):
        if isinstance(v, bool) or v is None:
            return repr(v)
        return "number" if isinstance(v, (int, float)) else type(v).__name__

    def walk(s, a, where):
        if kind(s) != kind(a):
            return "%s: %s where %s is shown" % (where or "record", kind(a), kind(s))
        if isinstance(s, dict):
            if sorted(s) != sorted(a):
                return "%s: members %s, shown %s" % (where or "record", sorted(a), sorted(s))
            for k in s:
                why = walk(s[k], a[k], where + "." + k)
                if why:
                    return why
        elif isinstance(s, list):
            if len(s) != len(a):
                return "%s: %d items, shown %d" % (where, len(a), len(s))
            for n, (x, y) in enumerate(zip(s, a)):
                why = walk(x, y, "%s[%d]" % (where, n))
                if why:
                    return why
        elif isinstance(s, str) and s != a:
            return "%s: %r, shown %r" % (where, a, s)
        return None
    return walk(shown, actual, "")


def line_matches(shown, actual):
    """None if the actual line has the shape of the shown one, else why."""
    if shown.lstrip().startswith("{"):
        try:
            s = json.loads(shown)
        except ValueError:
            s = None
        if isinstance(s, dict):
            try:
                a = json.loads(actual)
            except ValueError:
                return "not JSON"
            return json_shape(s, a)
    return None if re.match(pattern(shown), actual) else "another shape"


def shows_error(shown):
    text = "\n".join(shown)
    return re.search(r"\berror\b|No such file|Permission denied|cannot ", text) is not None


def compare(shown, actual, status):
    """Why ACTUAL (lines) and STATUS do not fit what is SHOWN, or None."""
    allowed = (0, 1, 2) if shows_error(shown) else (0, 1)
    if status not in allowed:
        return "exit status %d (the documentation allows %s)" % (status, " or ".join(map(str, allowed)))
    if not shown:
        return None
    if len(shown) != len(actual):
        return "%d lines, %d shown" % (len(actual), len(shown))
    whys = [line_matches(s, a) for s, a in zip(shown, actual)]
    if not any(whys):
        return None
    # Lines of several threads: each shown line matches a line of its own.
    left = list(actual)
    for s in shown:
        for a in left:
            if not line_matches(s, a):
                left.remove(a)
                break
        else:
            n = shown.index(s)
            return "line %d: %s: shown %r, printed %r" % (n + 1, whys[n] or "no line of its shape",
                                                        s, actual[n])
    return None


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def terminal_lines(data):
    """What a terminal shows of DATA: carriage returns and escapes applied."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    lines = []
    for raw in text.split("\n"):
        line = ANSI.sub("", raw.split("\r")[-1])
        if line or "\r" not in raw:
            lines.append(line)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def run_on_a_terminal(script, cwd, env, timeout=120):
    """Run bash SCRIPT with stdin, stdout and stderr a pty: (status, lines)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    p = subprocess.Popen(["bash", "-c", script], stdin=slave, stdout=slave, stderr=slave,
                         cwd=cwd, env=env, start_new_session=True, close_fds=True)
    os.close(slave)
    data, deadline = b"", time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            os.close(master)
            return 124, terminal_lines(data) + ["(killed after %d s)" % timeout]
        r, _, _ = select.select([master], [], [], min(left, 1))
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            data += chunk
    os.close(master)
    return p.wait(), terminal_lines(data)


PRELUDE = """\
reload_now() { echo reload_now; }
reload_later() { echo reload_later; }
"""


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "list":
        for e in examples(sys.argv[2:]):
            print(json.dumps(e))
        return 0
    if len(sys.argv) < 5 or sys.argv[1] != "run":
        sys.exit(__doc__)
    root, reset, files = sys.argv[2], sys.argv[3], sys.argv[4:]
    bindirs = [d for d in os.environ.get("DOCEX_BINDIRS", "/usr/local/bin").split(":") if d]
    bootstrap_args = os.environ.get("DOCEX_BOOTSTRAP_ARGS", "")
    cwd = os.environ.get("DOCEX_CWD", "/tmp")
    failed, ran, block = 0, 0, None
    for e in examples(files):
        if e["block"] != block:
            block = e["block"]
            r = subprocess.run(["bash", "-c", reset])
            if r.returncode:
                print("%s: cannot reset the fixture" % e["src"])
                return 2
        cmd = command_line(e["cmd"], root, bindirs, bootstrap_args)
        status, lines = run_on_a_terminal(PRELUDE + cmd, cwd, os.environ.copy())
        shown = [fixture_paths(s, root) for s in e["shown"]]
        why = compare(shown, lines, status)
        ran += 1
        first = e["cmd"].split("\n")[0]
        if why:
            failed += 1
            print("FAIL %s: %s\n  %s\n  ran: %s\n  printed (exit %d):\n%s" % (
                e["src"], first, why, cmd.replace("\n", "\n       "), status,
                "\n".join("    | " + l for l in lines)))
        else:
            print("ok   %s: %s (exit %d, %d lines)" % (e["src"], first, status, len(lines)))
            if os.environ.get("DOCEX_VERBOSE") and lines:
                print("\n".join("    | " + l for l in lines))
    print("%d examples, %d failed" % (ran, failed))
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
