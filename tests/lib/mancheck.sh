#!/bin/sh
# mancheck.sh PAGE - lint a man(7) page: groff in full warning mode, mandoc's
# linter at warning level (STYLE notes, such as long source lines, are not
# warnings) and man(1) rendering at 80 columns must all be silent.
set -u
page=$1
status=0
out=$(LC_ALL=C groff -man -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
	printf 'groff -man -ww -z: %s\n' "$out" >&2
	status=1
fi
if command -v mandoc >/dev/null 2>&1; then
	out=$(LC_ALL=C mandoc -Tlint -W warning "$page" 2>&1)
	if [ -n "$out" ]; then
		printf 'mandoc -Tlint: %s\n' "$out" >&2
		status=1
	fi
else
	echo "mandoc not found (Debian package mandoc; ./bootstrap test installs it)" >&2
	status=1
fi
# An alternating-font macro (.BR, .IR...) joins its arguments without a
# space: three plain words in a row among them are a sentence rendered
# run together ("/var/lib/dcprobe;asnapshotof...").
out=$(awk '/^\.(BR|RB|IR|RI|BI|IB)[ \t]/ {
	line = $0; gsub(/"[^"]*"/, "\"", line)
	n = split(line, a, /[ \t]+/); run = 0
	for (i = 2; i <= n; i++)
		if (a[i] ~ /^[A-Za-z][a-z]*[,.;:]?$/) { if (++run >= 3) { print FILENAME ":" NR ": " $0; break } }
		else run = 0
}' "$page")
if [ -n "$out" ]; then
	printf 'words run together: %s\n' "$out" >&2
	status=1
fi
# The page must also render through man(1) itself, as a reader's terminal
# shows it, without a warning (a table wider than the line, a word that
# cannot be broken or adjusted).
if command -v man >/dev/null 2>&1; then
	out=$(LC_ALL=C MANWIDTH=80 man -l "$page" 2>&1 >/dev/null) || {
		echo "man -l $page failed: $out" >&2
		exit 1
	}
	if [ -n "$out" ]; then
		printf 'man -l (80 columns): %s\n' "$out" >&2
		status=1
	fi
fi
exit $status
