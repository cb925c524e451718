#!/usr/bin/python3
"""help_check.py NAME <HELP - the defects of issue 37 in a --help text.

Prints one line per defect ("NAME:LINE: what") and exits 1 if there is any:
- a line wider than 79 columns (argp's right margin);
- a line of blanks only (argp's wrap of a text that ends at column 79);
- a line of one word that is not a heading ("EXAMPLES:", " What to warm:"):
  what is left over when argp breaks a line of 79 columns, as "exactly" or
  "again" alone, or the last word of an option's text alone;
- an option whose text leans on the entry before it ("Likewise", "Ditto",
  "The same"): argp sorts the options, so no entry may need its neighbour.
"""
import re
import sys

name = sys.argv[1] if len(sys.argv) > 1 else "help"
bad = 0


def say(n, what, line):
    global bad
    bad = 1
    print("%s:%d: %s: %r" % (name, n, what, line))


lines = sys.stdin.read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
for n, line in enumerate(lines, 1):
    if len(line) > 79:
        say(n, "wider than 79 columns", line)
    if line and not line.strip():
        say(n, "a line of blanks", line)
    words = line.split()
    if len(words) == 1 and not words[0].endswith(":"):
        say(n, "a line of one word", line)
    m = re.match(r"^  (?:-\S|    --)\S*(?:, \S+)*\s{2,}(\S.*)$", line)
    if m and re.match(r"(?i)(likewise|ditto|the same|as above)\b", m.group(1)):
        say(n, "an option's text that needs the entry before it", line)
sys.exit(bad)
