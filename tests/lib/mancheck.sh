#!/bin/sh
# mancheck.sh PAGE - lint a man(7) page: groff in full warning mode must be silent.
set -u
page=$1
out=$(LC_ALL=C groff -man -ww -z "$page" 2>&1)
if [ -n "$out" ]; then
	printf '%s\n' "$out" >&2
	exit 1
fi
# The page must also render through man(1) itself when it is installed.
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$page" >/dev/null 2>&1 || { echo "man -l $page failed" >&2; exit 1; }
fi
exit 0
