#!/bin/bash
# Installation as a packager does it: cmake --install into a DESTDIR, then
# check every file, render every man page, load every bash completion and
# complete options and option values, and build a program against the
# installed library through pkg-config.
: "${DCP_BUILD:?}" "${DCP_SRC:?}"
export LC_ALL=C.UTF-8
SHUNIT2=${SHUNIT2:-$(command -v shunit2 || echo /usr/share/shunit2/shunit2)}
COMMANDS=(cachedopen dcache-probe warm uring-open)
BASH_COMPLETION=/usr/share/bash-completion/bash_completion

oneTimeSetUp() {
	DEST=$(mktemp -d "${TMPDIR:-/tmp}/dcprobe-install.XXXXXX")
	DESTDIR=$DEST cmake --install "$DCP_BUILD" --prefix /usr >"$DEST.log" 2>&1 ||
		fail "cmake --install failed: $(cat "$DEST.log")"
	VERSION=$(sed -n 's/^project(dcprobe VERSION \([0-9.]*\).*/\1/p' "$DCP_SRC/CMakeLists.txt")
	# Only the commands this build has: each must then be complete.
	BUILT=()
	local c
	for c in "${COMMANDS[@]}"; do
		if [ -x "$DCP_BUILD/bin/$c" ]; then BUILT+=("$c"); fi
	done
}

oneTimeTearDown() {
	rm -rf "$DEST" "$DEST.log"
}

test_every_command_installs_with_its_page_and_completion() {
	local c
	assertTrue "at least cachedopen is built" "[ ${#BUILT[@]} -ge 1 ]"
	for c in "${BUILT[@]}"; do
		assertTrue "bin/$c" "[ -x '$DEST/usr/bin/$c' ]"
		assertTrue "man1/$c.1" "[ -f '$DEST/usr/share/man/man1/$c.1' ]"
		assertTrue "completion $c" "[ -f '$DEST/usr/share/bash-completion/completions/$c' ]"
	done
	assertTrue "dcprobe.7 once dcache-probe exists" \
		"[ ! -x '$DCP_BUILD/bin/dcache-probe' ] || [ -f '$DEST/usr/share/man/man7/dcprobe.7' ]"
	assertTrue "the JSON Schema of dcprobe.7" "[ -f '$DEST/usr/share/doc/dcprobe/dcprobe.schema.json' ]"
	assertTrue "library" "[ -f '$DEST/usr/lib/libdcprobe.a' ]"
	assertTrue "header" "[ -f '$DEST/usr/include/dcprobe/dcprobe.h' ]"
	assertTrue "pkg-config file" "[ -f '$DEST/usr/lib/pkgconfig/dcprobe.pc' ]"
}

test_man_pages_render() {
	local page out
	for page in "$DEST"/usr/share/man/man[17]/*; do
		out=$(MANWIDTH=80 man -l "$page" 2>&1 >/dev/null)
		assertEquals "man -l $page warns" "" "$out"
		MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q "SEE ALSO" ||
			fail "$page renders without SEE ALSO"
	done
}

test_one_version_everywhere() {
	local c page
	assertNotNull "project version" "$VERSION"
	for c in "${BUILT[@]}"; do
		assertEquals "$c --version" "$c (dcprobe) $VERSION" "$("$DEST/usr/bin/$c" --version)"
		page="$DEST/usr/share/man/man1/$c.1"
		assertContains "$page carries the version" "$(head -1 "$page")" "dcprobe $VERSION"
	done
	assertEquals "$VERSION" "$(PKG_CONFIG_PATH=$DEST/usr/lib/pkgconfig pkg-config --modversion dcprobe)"
}

# complete CMD WORDS... - what bash completion offers for the last word.
complete_words() {
	local cmd=$1
	shift
	bash -c '
		source "$1" || exit 1
		source "$2" || exit 1
		shift 2
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		func=$(complete -p "$1" | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
		[ -n "$func" ] || exit 2
		"$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' _ "$BASH_COMPLETION" "$DEST/usr/share/bash-completion/completions/$cmd" "$cmd" "$@"
}

test_completions_complete_options() {
	local c long
	[ -f "$BASH_COMPLETION" ] || { startSkipping; fail "bash-completion is not installed"; return; }
	for c in "${BUILT[@]}"; do
		assertContains "$c completes --help" "$(complete_words "$c" --he)" "--help"
		# Every long option of --help is offered.
		for long in $("$DEST/usr/bin/$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
			assertContains "$c completes $long" "$(complete_words "$c" "${long%?}")" "$long"
		done
	done
}

test_completions_complete_values() {
	[ -f "$BASH_COMPLETION" ] || { startSkipping; return; }
	if [ -x "$DCP_BUILD/bin/dcache-probe" ]; then
		assertContains "--only values" "$(complete_words dcache-probe --only '')" "miss"
	fi
	if [ -x "$DCP_BUILD/bin/uring-open" ]; then
		assertContains "--flags values" "$(complete_words uring-open --flags '')" "creat"
	fi
	assertContains "paths after options" "$(cd "$DEST/usr" && complete_words cachedopen -q b)" "bin"
}

# zsh: each file is valid zsh, registers with compinit, and names every
# long option that --help prints.
test_zsh_completions() {
	local c f long
	command -v zsh >/dev/null || { startSkipping; fail "zsh is not installed"; return; }
	for c in "${BUILT[@]}"; do
		f="$DEST/usr/share/zsh/vendor-completions/_$c"
		assertTrue "zsh completion for $c installed" "[ -f '$f' ]" || continue
		assertTrue "_$c parses" "zsh -n '$f'"
		assertEquals "compinit registers _$c" "_$c" "$(zsh -fc "fpath=('$DEST/usr/share/zsh/vendor-completions' \$fpath); autoload -Uz compinit; compinit -u -D; print \${_comps[$c]}")"
		for long in $("$DEST/usr/bin/$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
			grep -q -- "$long" "$f" || fail "_$c does not complete $long"
		done
	done
}

test_pkg_config_builds_a_program() {
	local flags bin="$DEST/example"
	flags=$(PKG_CONFIG_PATH=$DEST/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEST \
		pkg-config --cflags --libs dcprobe) || fail "pkg-config failed"
	# The .pc file is relocatable: it finds headers and library in DESTDIR.
	assertContains "$flags" "$DEST"
	# A sanitized build installs a sanitized library: link it the same way.
	local san=
	grep -Eq '^DCP_SANITIZE:[A-Z]+=(ON|address)$' "$DCP_BUILD/CMakeCache.txt" && san=-fsanitize=address,undefined
	grep -q '^DCP_SANITIZE:[A-Z]*=thread$' "$DCP_BUILD/CMakeCache.txt" && san=-fsanitize=thread
	cc -std=c11 -Wall -Wextra -Werror $san "$DCP_SRC/tests/example/example.c" \
		$(PKG_CONFIG_PATH=$DEST/usr/lib/pkgconfig pkg-config --cflags --libs dcprobe) -o "$bin" ||
		fail "the example does not build against the installed library"
	local out
	out=$("$bin" / 2>&1)
	assertEquals "example exit" 0 $?
	assertEquals "libdcprobe $VERSION
cached /" "$out"
}

. "$SHUNIT2"
