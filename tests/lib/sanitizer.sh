# shellcheck shell=bash
# sanitizer.sh - sanitizer_flags: the -fsanitize flags of the build under
# test (DCP_BUILD's CMakeCache.txt, DCP_SANITIZE): a sanitized build
# installs a sanitized library, and a program linked with it is built the
# same way.
sanitizer_flags() {
	if grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address)$' "$DCP_BUILD/CMakeCache.txt"; then
		echo -fsanitize=address,undefined
	elif grep -q '^DCP_SANITIZE:[A-Z]*=thread$' "$DCP_BUILD/CMakeCache.txt"; then
		echo -fsanitize=thread
	fi
}
