#!/bin/bash
# Installation as a packager does it: cmake --install into a DESTDIR, then
# check every file, render every man page, build a program against the
# installed library through pkg-config.  Then for each of the prefixes
# /usr and /usr/local, a fresh configure of the source and an install of
# the completions and examples: each shell, started the way it starts for
# a user of that prefix, finds and runs the installed completions (bash
# through bash-completion's on-demand loader, zsh in an interactive zsh -f
# under zpty), and the examples name the binaries of that prefix.
: "${DCP_BUILD:?}" "${DCP_SRC:?}"
export LC_ALL=C.UTF-8
export PATH="/usr/bin:$PATH"
: "${DCP_TESTS:=$DCP_SRC/tests}"
SHUNIT2=${SHUNIT2:-$(command -v shunit2 || echo /usr/share/shunit2/shunit2)}
COMMANDS=(cachedopen dcache-probe warm uring-open)
BASH_COMPLETION=/usr/share/bash-completion/bash_completion
PREFIXES=(/usr /usr/local)
# The options of issue 11's grammar each command's completions must offer,
# before and after the lead's parser has them in --help.
declare -A PLANNED=(
	[cachedopen]="-h --from --files0-from --dereference --follow --no-dereference --no-follow --json --quiet"
	[dcache-probe]="-h -c --total --files0-from --mindepth --type --name --exclude-fstype --xdev --follow --no-follow --summary --null --json --prometheus"
	[warm]="-h -c -s --summary --total --files0-from --mindepth --type --name --exclude-fstype --xdev --follow --no-follow --verbose --null --json --prometheus"
	[uring-open]="-h --bench --from --files0-from --json --quiet"
)
# And those it takes away: no longer offered, even while --help has them.
declare -A REMOVED=([uring-open]="--null")

# destdir PREFIX, build PREFIX - the DESTDIR and build directory of the
# install for PREFIX (side by side, never nested).
destdir() { echo "$WORK/dest${1//\//-}"; }
build() { echo "$WORK/build${1//\//-}"; }

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$DCP_BUILD/CMakeCache.txt"; }

oneTimeSetUp() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/dcprobe-install.XXXXXX")
	# The build under test, installed at the prefix it was configured for.
	PREFIX=$(cache_value CMAKE_INSTALL_PREFIX)
	LIBDIR=$(cache_value CMAKE_INSTALL_LIBDIR)
	DEST=$WORK/dest
	ROOT=$DEST$PREFIX
	DESTDIR=$DEST cmake --install "$DCP_BUILD" >"$WORK/install.log" 2>&1 ||
		fail "cmake --install failed: $(cat "$WORK/install.log")"
	VERSION=$(sed -n 's/^project(dcprobe VERSION \([0-9.]*\).*/\1/p' "$DCP_SRC/CMakeLists.txt")
	# The shared library's SONAME number and file version (CMakeLists.txt).
	SOVERSION=$(sed -n 's/^set(DCP_SOVERSION \([0-9]*\))$/\1/p' "$DCP_SRC/CMakeLists.txt")
	LIBVERSION=$(sed -n 's/^set(DCP_LIB_VERSION \(.*\))$/\1/p' "$DCP_SRC/CMakeLists.txt")
	LIBVERSION=${LIBVERSION//'${DCP_SOVERSION}'/$SOVERSION}
	# Only the commands this build has: each must then be complete.
	BUILT=()
	local c p
	for c in "${COMMANDS[@]}"; do
		if [ -x "$DCP_BUILD/bin/$c" ]; then BUILT+=("$c"); fi
	done
	# Each prefix: configure only (nothing to compile for completions,
	# examples and pages), install those components into its DESTDIR.
	for p in "${PREFIXES[@]}"; do
		cmake -S "$DCP_SRC" -B "$(build "$p")" -DCMAKE_INSTALL_PREFIX="$p" \
			-DBUILD_TESTING=OFF >"$WORK/configure.log" 2>&1 ||
			fail "configure for $p failed: $(cat "$WORK/configure.log")"
		for comp in completions examples man; do
			DESTDIR=$(destdir "$p") cmake --install "$(build "$p")" --component $comp \
				>"$WORK/install${p//\//-}.log" 2>&1 ||
				fail "install of $comp for $p failed: $(cat "$WORK/install${p//\//-}.log")"
		done
	done
}

oneTimeTearDown() {
	rm -rf "$WORK"
}

test_every_command_installs_with_its_page_and_completion() {
	local c
	assertTrue "at least cachedopen is built" "[ ${#BUILT[@]} -ge 1 ]"
	for c in "${BUILT[@]}"; do
		assertTrue "bin/$c" "[ -x '$ROOT/bin/$c' ]"
		assertTrue "man1/$c.1" "[ -f '$ROOT/share/man/man1/$c.1' ]"
		assertEquals "one bash completion for $c" 1 \
			"$(find "$DEST" -path "*/bash-completion/completions/$c" -type f | wc -l)"
		assertEquals "one zsh completion for $c" 1 "$(find "$DEST" -path "*/zsh/*/_$c" -type f | wc -l)"
	done
	assertTrue "dcprobe.7 once dcache-probe exists" \
		"[ ! -x '$DCP_BUILD/bin/dcache-probe' ] || [ -f '$ROOT/share/man/man7/dcprobe.7' ]"
	assertTrue "the JSON Schema of dcprobe.7" "[ -f '$ROOT/share/doc/dcprobe/dcprobe.schema.json' ]"
	assertTrue "library" "[ -f '$ROOT/$LIBDIR/libdcprobe.a' ]"
	assertTrue "header" "[ -f '$ROOT/include/dcprobe/dcprobe.h' ]"
	assertTrue "pkg-config file" "[ -f '$ROOT/$LIBDIR/pkgconfig/dcprobe.pc' ]"
	assertTrue "the systemd unit" "[ -f '$ROOT/share/doc/dcprobe/examples/warm-app.service' ]"
	assertTrue "the cron file" "[ -f '$ROOT/share/doc/dcprobe/examples/cron.d/dcprobe' ]"
	assertTrue "the alerting rules, as in the source" \
		"cmp -s '$DCP_SRC/man/examples/dcprobe.rules.yml' '$ROOT/share/doc/dcprobe/examples/dcprobe.rules.yml'"
	assertTrue "their unit tests beside them, as in the source" \
		"cmp -s '$DCP_SRC/man/examples/dcprobe.rules.test.yml' '$ROOT/share/doc/dcprobe/examples/dcprobe.rules.test.yml'"
}

# The installed rules pass their installed unit tests, run from anywhere:
# the test file names the rules beside it.  Control: the test file alone
# (no rules beside it) fails.
test_installed_rules_pass_their_unit_tests() {
	local p ex out
	command -v promtool >/dev/null || { fail "promtool not found (Debian package prometheus)"; return; }
	for p in "${PREFIXES[@]}"; do
		ex=$(destdir "$p")$p/share/doc/dcprobe/examples
		out=$(cd / && promtool test rules "$ex/dcprobe.rules.test.yml" 2>&1)
		assertEquals "$p: promtool test rules on the installed files: $out" 0 $?
	done
	mkdir -p "$WORK/alone"
	cp "$ex/dcprobe.rules.test.yml" "$WORK/alone/"
	assertNotEquals "control: without the rules beside it" 0 \
		"$(cd / && promtool test rules "$WORK/alone/dcprobe.rules.test.yml" >/dev/null 2>&1; echo $?)"
}

test_man_pages_render() {
	local page out
	for page in "$ROOT"/share/man/man[137]/*; do
		[ -L "$page" ] && continue # a function's name for its page: below
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
		assertEquals "$c --version" "$c (dcprobe) $VERSION" "$("$ROOT/bin/$c" --version)"
		page="$ROOT/share/man/man1/$c.1"
		assertContains "$page carries the version" "$(head -1 "$page")" "dcprobe $VERSION"
	done
	assertEquals "$VERSION" "$(PKG_CONFIG_PATH=$ROOT/$LIBDIR/pkgconfig pkg-config --modversion dcprobe)"
}

# zsh_dir PREFIX - where the install for PREFIX puts zsh completions,
# relative to the prefix.
zsh_dir() {
	case $1 in
	/usr) echo share/zsh/vendor-completions ;;
	*) echo share/zsh/site-functions ;;
	esac
}

# bcomp PREFIX LINE - what bash offers at the end of LINE, with the
# completions installed for PREFIX (tests/lib/bash-complete.sh).
bcomp() {
	bash "$DCP_TESTS/lib/bash-complete.sh" "$(destdir "$1")$1/share" "$2"
}

# zfetch PREFIX LINE... - type each LINE and TAB in one interactive zsh,
# with the completions installed for PREFIX (tests/lib/zsh-complete.zsh),
# and keep what it offers for zcomp; zcomp PREFIX LINE - those matches,
# one per line (fetched alone if zfetch did not have LINE).
declare -A ZC
zfetch() {
	local p=$1 l m
	shift
	while IFS=$'\t' read -r l m; do
		ZC["$p|$l"]=$m
	done < <(zsh -f "$DCP_TESTS/lib/zsh-complete.zsh" "$(destdir "$p")$p/$(zsh_dir "$p")" "$@")
}
zcomp() {
	[ -n "${ZC["$1|$2"]+set}" ] || zfetch "$1" "$2"
	tr ' ' '\n' <<<"${ZC["$1|$2"]}" | grep .
}

have_bash_completion() {
	[ -f "$BASH_COMPLETION" ] && return 0
	startSkipping
	fail "bash-completion is not installed"
	return 1
}

have_zsh() {
	command -v zsh >/dev/null && zsh -fc 'zmodload zsh/zpty' 2>/dev/null && return 0
	startSkipping
	fail "zsh (with zsh/zpty) is not installed"
	return 1
}

# Each prefix puts the completions where its shells look, and they load
# there: bash through bash-completion's own on-demand loader, zsh through
# compinit in an interactive shell.
test_completions_install_where_the_shells_look() {
	have_bash_completion && have_zsh || return
	local p c zdir bdefault zfpath
	# bash-completion looks in bash-completion/completions under each
	# directory of XDG_DATA_DIRS, which has this default:
	bdefault=$(bash -c '. "$1"; declare -f __load_completion' _ "$BASH_COMPLETION" |
		grep -o 'XDG_DATA_DIRS:-[^}]*' | cut -d- -f2-)
	assertNotNull "bash-completion's default XDG_DATA_DIRS" "$bdefault"
	zfpath=$(zsh -fc 'print -l $fpath')
	for p in "${PREFIXES[@]}"; do
		zfetch "$p" 'uring-open --fl'
	done
	for p in "${PREFIXES[@]}"; do
		zdir=$(zsh_dir "$p")
		assertContains "bash-completion looks in $p/share" ":$bdefault:" ":$p/share:"
		assertContains "zsh -f looks in $p/$zdir" "$zfpath" "$p/$zdir"
		for c in "${COMMANDS[@]}"; do
			assertTrue "$p: bash completion for $c" \
				"[ -f '$(destdir "$p")$p/share/bash-completion/completions/$c' ]"
			assertTrue "$p: zsh completion for $c in $zdir" "[ -f '$(destdir "$p")$p/$zdir/_$c' ]"
			assertTrue "$p: _$c parses" "zsh -n '$(destdir "$p")$p/$zdir/_$c'"
		done
		assertEquals "$p: zsh has nothing elsewhere" "" \
			"$(find "$(destdir "$p")" -path '*/zsh/*' -type f ! -path "*/$zdir/*")"
		assertEquals "$p: bash completes an option" "--flags=" "$(bcomp "$p" 'uring-open --fl')"
		assertEquals "$p: zsh completes an option" "--flags" "$(zcomp "$p" 'uring-open --fl')"
		assertEquals "$p: compinit registers _warm" "_warm" \
			"$(zsh -fc "fpath=('$(destdir "$p")$p/$zdir' \$fpath); autoload -Uz compinit; compinit -u -D; print \${_comps[warm]}")"
	done
	# Under /usr, bash-completion's own directory (its pkg-config file).
	if pkg-config --exists bash-completion; then
		assertTrue "/usr: bash-completion's completionsdir" \
			"[ -f '$(destdir /usr)$(pkg-config --variable=completionsdir bash-completion)/warm' ]"
	fi
}

# Every long option of --help, and every option of the planned grammar,
# is offered by both shells.
test_completions_offer_every_option() {
	have_bash_completion && have_zsh || return
	local c opt bash_all zsh_all
	zfetch /usr "${COMMANDS[@]/%/ -}"
	for c in "${COMMANDS[@]}"; do
		bash_all=$(bcomp /usr "$c -")
		zsh_all=$(zcomp /usr "$c -")
		for opt in ${PLANNED[$c]} \
			$([ -x "$DCP_BUILD/bin/$c" ] && "$DCP_BUILD/bin/$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
			[[ " ${REMOVED[$c]-} " == *" $opt "* ]] && continue
			grep -qxE -- "$opt=?" <<<"$bash_all" || fail "bash: $c does not offer $opt"
			grep -qxF -- "$opt" <<<"$zsh_all" || fail "zsh: $c does not offer $opt"
		done
	done
	# uring-open's -0 goes away (--files0-from instead).
	for opt in -0 --null; do
		if bcomp /usr 'uring-open -' | grep -qxF -- "$opt"; then fail "bash: uring-open offers $opt"; fi
		if zcomp /usr 'uring-open -' | grep -qxF -- "$opt"; then fail "zsh: uring-open offers $opt"; fi
	done
}

# --opt=value and --opt value: the same values, from bash as it cuts the
# line (COMP_WORDBREAKS has '=': "--flags=rdonly,no" is three words).
test_bash_completes_option_values() {
	have_bash_completion || return
	local form
	for form in = ' '; do
		assertEquals "--flags${form}rdonly,no: the other flags starting with no" \
			"rdonly,noatime rdonly,noctty rdonly,nofollow rdonly,nonblock" \
			"$(bcomp /usr "uring-open --flags${form}rdonly,no" | sort | xargs)"
		assertEquals "--only${form}mi" "miss" "$(bcomp /usr "dcache-probe --only${form}mi")"
		assertEquals "--type${form}d" "d" "$(bcomp /usr "warm --type${form}d")"
	done
	assertEquals "a listed flag is not offered again" "rdonly,nofollow,noatime rdonly,nofollow,noctty rdonly,nofollow,nonblock" \
		"$(bcomp /usr 'uring-open --flags=rdonly,nofollow,no' | sort | xargs)"
	assertEquals "--type=f,: the other six" "f,b f,c f,d f,l f,p f,s" \
		"$(bcomp /usr 'dcache-probe --type=f,' | sort | xargs)"
	assertEquals "--only=miss,un" "miss,unvisited" "$(bcomp /usr 'dcache-probe --only=miss,un')"
	# Filesystem types: this kernel's, and none.
	local c expect
	expect=$( (echo none; cut -d$'\t' -f2 /proc/filesystems) | sort -u | xargs)
	for c in dcache-probe warm; do
		assertEquals "$c --exclude-fstype=: every type" "$expect" \
			"$(bcomp /usr "$c --exclude-fstype=" | sort -u | xargs)"
		assertEquals "$c --exclude-fstype=proc,sys" "proc,sysfs" \
			"$(bcomp /usr "$c --exclude-fstype=proc,sys")"
	done
	# A value that is not a list is not completed as options.
	assertEquals "--per-dir=" "" "$(bcomp /usr 'dcache-probe --per-dir=')"
	assertEquals "--max-depth=" "" "$(bcomp /usr 'warm --max-depth=-')"
}

# Files, and '-' (standard input) where a list may come from stdin.
test_bash_completes_files_and_stdin() {
	have_bash_completion || return
	local dir=$WORK/cwd line
	mkdir -p "$dir/sub" && touch "$dir/list.txt"
	for line in 'cachedopen --from=' 'cachedopen --files0-from ' 'dcache-probe --from=' \
		'dcache-probe --files0-from=' 'warm --from ' 'warm --files0-from=' \
		'uring-open --from=' 'uring-open --from ' 'uring-open --files0-from='; do
		assertEquals "$line" "- list.txt sub" "$(cd "$dir" && bcomp /usr "$line" | sort | xargs)"
	done
	assertEquals "--from=l: files only" "list.txt" "$(cd "$dir" && bcomp /usr 'warm --from=l')"
	assertEquals "--from=-" "-" "$(cd "$dir" && bcomp /usr 'dcache-probe --from=-')"
	assertEquals "paths as operands, no -" "list.txt sub" "$(cd "$dir" && bcomp /usr 'cachedopen -q ' | sort | xargs)"
	# -h is --human-readable (du -sh): paths follow it, as any option's.
	for line in 'cachedopen -h ' 'dcache-probe -rsh ' 'warm -h ' 'uring-open -h '; do
		assertEquals "$line: paths after -h" "list.txt sub" "$(cd "$dir" && bcomp /usr "$line" | sort | xargs)"
	done
}

# The same values from zsh, typed and TAB pressed in an interactive zsh.
test_zsh_completes_option_values() {
	have_zsh || return
	local dir=$WORK/zcwd p
	mkdir -p "$dir/sub" && touch "$dir/list.txt"
	local lines=('cachedopen --from=' 'dcache-probe --files0-from=' 'warm --from='
		'uring-open --from=' 'uring-open --files0-from=')
	zfetch /usr/local 'uring-open --flags=rdonly,no'
	cd "$dir" && zfetch /usr 'uring-open --flags=rdonly,no' 'uring-open --flags=rdonly,nofollow,no' \
		'dcache-probe --only=mi' 'warm --type=f,' 'dcache-probe --exclude-fstype=proc,sys' \
		'warm --exclude-fstype=n' 'warm -q --' 'warm -h --' 'dcache-probe -h --' "${lines[@]}"
	cd - >/dev/null || return
	for p in "${PREFIXES[@]}"; do
		assertEquals "$p: --flags=rdonly,no" "noatime noctty nofollow nonblock" \
			"$(zcomp "$p" 'uring-open --flags=rdonly,no' | xargs)"
	done
	assertEquals "--flags=rdonly,nofollow,no" "noatime noctty nonblock" \
		"$(zcomp /usr 'uring-open --flags=rdonly,nofollow,no' | xargs)"
	assertEquals "--only=mi" "miss" "$(zcomp /usr 'dcache-probe --only=mi')"
	assertEquals "--type=f," "b c d l p s" "$(zcomp /usr 'warm --type=f,' | xargs)"
	assertEquals "--exclude-fstype=proc,sys" "sysfs" "$(zcomp /usr 'dcache-probe --exclude-fstype=proc,sys')"
	assertContains "--exclude-fstype=n" "$(zcomp /usr 'warm --exclude-fstype=n' | xargs)" "none"
	local line
	for line in "${lines[@]}"; do
		assertEquals "$line" "- list.txt sub" "$(zcomp /usr "$line" | xargs)"
	done
	# Conflicts of the grammar: -q excludes --json, --prometheus and -v.
	local after_q
	after_q=$(zcomp /usr 'warm -q --')
	assertNotContains "warm -q: --json" "$after_q" "--json"
	assertNotContains "warm -q: --verbose" "$after_q" "--verbose"
	assertContains "warm -q: --recursive" "$after_q" "--recursive"
	# -h is --human-readable: the other options follow, not --si.
	local c after_h
	for c in warm dcache-probe; do
		after_h=$(zcomp /usr "$c -h --")
		assertContains "$c -h: --recursive" "$after_h" "--recursive"
		if grep -qxF -- --si <<<"$after_h"; then fail "zsh: $c -h offers --si"; fi
	done
}

# The bash files that complete lists carry the same list function.
test_bash_list_function_is_the_same_everywhere() {
	local c ref='' f
	for c in dcache-probe warm uring-open; do
		f=$(sed -n '/^_dcprobe_list()/,/^}/p' "$DCP_SRC/completions/$c")
		assertNotNull "$c has _dcprobe_list" "$f"
		[ -z "$ref" ] && ref=$f
		assertEquals "$c: _dcprobe_list as in dcache-probe" "$ref" "$f"
	done
}

# The examples name the binaries where the install of each prefix puts
# them (cmake's own install script says where that is).
test_examples_name_the_installed_binaries() {
	local p ex bindir
	for p in "${PREFIXES[@]}"; do
		ex=$(destdir "$p")$p/share/doc/dcprobe/examples
		bindir=$(sed -n 's|.*file(INSTALL DESTINATION "\(.*\)" TYPE EXECUTABLE FILES ".*/bin/cachedopen").*|\1|p' \
			"$(build "$p")/cmake_install.cmake")
		bindir=${bindir//'${CMAKE_INSTALL_PREFIX}'/$p}
		assertEquals "$p: commands go to" "$p/bin" "$bindir"
		assertEquals "$p: the unit runs the installed warm" "ExecStart=$bindir/warm -r --prometheus --label=tree=app --output=/var/lib/prometheus/node-exporter/warm-app.prom /srv/app" \
			"$(grep '^ExecStart=' "$ex/warm-app.service")"
		assertContains "$p: the cron line runs the installed dcache-probe" \
			"$(grep -v '^#' "$ex/cron.d/dcprobe")" " $bindir/dcache-probe -r "
		assertEquals "$p: nothing left to configure" "" "$(grep -rhE '@[A-Za-z_]+@' "$ex")"
	done
	# The build under test: the named binaries are the installed files,
	# and systemd finds the unit's command under that root.
	ex=$ROOT/share/doc/dcprobe/examples
	local cmd
	cmd=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$ex/warm-app.service")
	assertTrue "the unit's $cmd is installed" "[ -x '$DEST$cmd' ]"
	cmd=$(grep -v '^#' "$ex/cron.d/dcprobe" | grep -o "[^ ]*/bin/dcache-probe")
	assertTrue "the cron line's $cmd is installed" "[ -x '$DEST$cmd' ]"
	if command -v systemd-analyze >/dev/null && [ -x "$DEST$PREFIX/bin/warm" ]; then
		mkdir -p "$DEST/etc/systemd/system"
		cp "$ex/warm-app.service" "$DEST/etc/systemd/system/"
		assertNotContains "systemd finds the command" \
			"$(systemd-analyze verify --root="$DEST" warm-app.service 2>&1)" "is not executable"
		# Control: the same check does see a missing command.
		sed 's|^ExecStart=[^ ]*|ExecStart=/nonexistent/warm|' "$ex/warm-app.service" \
			>"$DEST/etc/systemd/system/warm-app.service"
		assertContains "systemd-analyze sees a missing command" \
			"$(systemd-analyze verify --root="$DEST" warm-app.service 2>&1)" "is not executable"
	fi
}

# rendered PAGE - the text of man page PAGE as a reader sees it.
rendered() {
	MANWIDTH=1000 man -l "$1" 2>/dev/null | col -bx
}

# Each prefix's install: the pages name that prefix's commands and
# documentation directory, and none of the other prefix's; nothing is left
# to configure.  The control: the pages of the other prefix fail the check.
test_installed_pages_name_the_installed_paths() {
	local p other man page text named bad
	for p in "${PREFIXES[@]}"; do
		man=$(destdir "$p")$p/share/man
		assertTrue "$p: dcprobe.7 installed" "[ -f '$man/man7/dcprobe.7' ]"
		assertEquals "$p: nothing left to configure" "" "$(grep -rlE '@[A-Z_]+@' "$man")"
		named=""
		for page in "$man"/man[17]/*; do
			text=$(rendered "$page")
			named+=$(grep -oE '[^ ]*/bin/(cachedopen|dcache-probe|warm|uring-open)\b' <<<"$text" | sed 's/^[^/]*//')$'\n'
			named+=$(grep -oE '/[^ ]*/share/doc/dcprobe\b' <<<"$text")$'\n'
		done
		named=$(grep . <<<"$named" | sort -u)
		assertEquals "$p: the commands and documents the pages name" \
			"$p/bin/dcache-probe $p/bin/warm $p/share/doc/dcprobe" "$(xargs <<<"$named")"
		for other in "${PREFIXES[@]}"; do
			[ "$other" = "$p" ] && continue
			bad=$(other_prefix_paths "$other" "$man")
			assertEquals "$p: pages naming $other's paths" "" "$bad"
			# Control: the other prefix's own pages do name them.
			assertNotNull "control: $other's pages name $other's paths" \
				"$(other_prefix_paths "$other" "$(destdir "$other")$other/share/man")"
		done
	done
}

# other_prefix_paths PREFIX MANDIR - the lines of the pages under MANDIR
# that name a command or the documentation of PREFIX.
other_prefix_paths() {
	local page
	for page in "$2"/man[17]/*; do
		rendered "$page" | grep -E "(^|[^A-Za-z0-9_./])$1/(bin/(cachedopen|dcache-probe|warm|uring-open)|share/doc/dcprobe)\b" |
			sed "s|^|$(basename "$page"): |"
	done
}

# README and dcprobe(7) show the installed examples of the default prefix,
# line for line (tests/cmd/test_recipes.sh runs the README's copies).
test_readme_shows_the_installed_examples() {
	local ex readme
	ex=$(destdir /usr/local)/usr/local/share/doc/dcprobe/examples
	readme=$(awk '/^## Recipes/ {on = 1; next} /^## / {on = 0}
	     on && /^```ini/ {code = 1; next} on && /^```/ {code = 0}
	     code' "$DCP_SRC/README.md")
	assertEquals "README's unit" "$(grep -v '^#' "$ex/warm-app.service")" "$readme"
	readme=$(awk '/^## Recipes/ {on = 1; next} /^## / {on = 0}
	     on && /^```sh/ {code = 1; next} on && /^```/ {code = 0}
	     code' "$DCP_SRC/README.md")
	grep -qxF -- "$(grep -v '^#' "$ex/cron.d/dcprobe")" <<<"$readme" ||
		fail "README's cron line is not the installed one: $(grep -v '^#' "$ex/cron.d/dcprobe")"
}

# cmake --install --prefix cannot rewrite what configure wrote: it says so.
test_install_prefix_other_than_configured_warns() {
	local out
	out=$(DESTDIR=$WORK/other cmake --install "$(build /usr)" --component examples --prefix /opt/dcprobe 2>&1)
	assertContains "$out" "configured for /usr"
	out=$(DESTDIR=$WORK/other cmake --install "$(build /usr)" --component examples 2>&1)
	assertNotContains "$out" "configured for"
}

# sanitizer_flags: a sanitized build installs a sanitized library, linked the same way.
. "$DCP_TESTS/lib/sanitizer.sh"

# pc ARGS... - pkg-config on the installed dcprobe.pc.
pc() {
	PKG_CONFIG_PATH=$ROOT/$LIBDIR/pkgconfig PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config "$@" dcprobe
}

# run_example BIN [LIBDIR] - run an example linked with the installed
# libdcprobe.so (LD_LIBRARY_PATH: the DESTDIR, or LIBDIR, is not where the
# loader looks) on /.
run_example() {
	local out
	out=$(LD_LIBRARY_PATH=${2:-$ROOT/$LIBDIR} "$1" / 2>&1)
	assertEquals "$1 exit: $out" 0 $?
	assertEquals "$1" "libdcprobe $VERSION
cached /" "$out"
}

# needed BIN - the shared libraries BIN names (readelf -d NEEDED).
needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | xargs
}

test_pkg_config_builds_a_program() {
	local flags bin="$WORK/example"
	flags=$(pc --cflags --libs) || fail "pkg-config failed"
	# The .pc file is relocatable: it finds headers and library in DESTDIR.
	assertContains "$flags" "$DEST"
	assertNotContains "no liburing, libmount or -pthread for the shared library" "$flags" "-l"uring
	cc -std=c11 -Wall -Wextra -Werror $(sanitizer_flags) "$DCP_SRC/tests/example/example.c" $flags -o "$bin" ||
		fail "the example does not build against the installed library"
	assertContains "linked with the shared library" " $(needed "$bin") " " libdcprobe.so.$SOVERSION "
	run_example "$bin"
}

# pkg-config --static: libdcprobe.a and what it needs.
test_pkg_config_static_builds_a_program() {
	local flags bin="$WORK/example-static"
	flags=$(pc --static --cflags --libs) || fail "pkg-config --static failed"
	assertContains "$flags" "-luring"
	# libmount is loaded at run time (dlopen), never linked.
	assertNotContains "$flags" "-lmount"
	cc -std=c11 -Wall -Wextra -Werror $(sanitizer_flags) "$DCP_SRC/tests/example/example.c" \
		${flags/-ldcprobe/-l:libdcprobe.a} -o "$bin" ||
		fail "the example does not build against the installed static library"
	assertNotContains "not linked with the shared library" " $(needed "$bin") " "libdcprobe"
	run_example "$bin"
}

# libdcprobe.so.N: its SONAME, the files a packager expects, and exactly the
# functions the installed headers declare (nm -D against the headers as the
# compiler sees them, static inline functions left out), versioned
# DCPROBE_N; none of the commands' runtime (options, messages, output,
# progress, the run engines), whose headers and pages are not installed.
test_shared_library_exports_the_documented_api() {
	local so="$ROOT/$LIBDIR/libdcprobe.so.$SOVERSION" exported declared h
	assertNotNull "DCP_SOVERSION" "$SOVERSION"
	assertEquals "libdcprobe.so -> .so.$SOVERSION" "libdcprobe.so.$SOVERSION" \
		"$(readlink "$ROOT/$LIBDIR/libdcprobe.so")"
	assertEquals "libdcprobe.so.$SOVERSION -> .so.$LIBVERSION" "libdcprobe.so.$LIBVERSION" "$(readlink "$so")"
	assertEquals "SONAME" "Library soname: [libdcprobe.so.$SOVERSION]" \
		"$(readelf -d "$so" | grep -o 'Library soname: .*')"
	exported=$(nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sort)
	assertNotNull "$exported"
	assertEquals "every export is versioned DCPROBE_$SOVERSION" "" \
		"$(grep -v "@@DCPROBE_$SOVERSION\$" <<<"$exported")"
	assertEquals "no engine, option, message, output, progress, trace, latency or list symbol" "" \
		"$(grep -E '^dcp_(probe_run|warm_run|uring_run|opts_|warn|die|msg_|output_|progress_|trace_|latency_|percentile|pathlist_|args_have_empty|pr_format_of|pr_progress)' <<<"$exported")"
	for h in dcp_cmd dcp_opts dcp_msg dcp_output dcp_progress dcp_probe_run dcp_uring_run dcp_warm_run \
		dcp_trace dcp_latency dcp_pathlist; do
		assertFalse "$h.h is not installed" "[ -e '$ROOT/include/dcprobe/$h.h' ]"
		assertFalse "$h.3 is not installed" "[ -e '$ROOT/share/man/man3/$h.3' ]"
	done
	assertEquals "nothing but functions" "T" "$(nm -D --defined-only "$so" | awk '$2 != "A" {print $2}' | sort -u | xargs)"
	declared=$(declared_functions "$ROOT/include/dcprobe/dcprobe.h")
	assertNotNull "$declared"
	assertEquals "exports = functions of the headers (< only exported, > only declared)" "" \
		"$(diff <(sed "s/@@DCPROBE_$SOVERSION\$//" <<<"$exported") <(echo "$declared") | grep '^[<>]')"
	# The check can fail: the static library has a function the headers do
	# not declare once one is added, and the same comparison sees it.
	printf 'int dcp_not_in_a_header(void);\nint dcp_not_in_a_header(void) { return 0; }\n' >"$WORK/extra.c"
	cc -shared -fPIC -Wl,--version-script="$DCP_SRC/lib/libdcprobe.map" "$WORK/extra.c" -o "$WORK/extra.so"
	assertEquals "the map exports a new dcp_ function, and the diff sees it" "< dcp_not_in_a_header" \
		"$(diff <(nm -D --defined-only "$WORK/extra.so" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}') \
			<(echo "$declared") | grep '^<')"
}

# declared_functions HEADER - the dcp_ functions HEADER declares, as the
# compiler reads it (comments gone), without those defined static inline.
declared_functions() {
	local text
	text=$(cc -E -P -I"$(dirname "$1")" -x c "$1" | tr '\n' ' ')
	comm -23 <(grep -oE '\bdcp_[a-z0-9_]+ *\(' <<<"$text" | sed 's/ *($//' | sort -u) \
		<(grep -oE 'static inline [^(;{]*\bdcp_[a-z0-9_]+ *\(' <<<"$text" |
			grep -oE 'dcp_[a-z0-9_]+ *\($' | sed 's/ *($//' | sort -u)
}

# Section 3: dcprobe(3) and one page per installed header, installed
# beside the library; every function the headers declare is in a page's
# SYNOPSIS; the example of dcprobe(3) is tests/example/example.c (built and
# run below), and no header points at a document that is not installed.
test_section_3_pages() {
	local h name declared documented
	assertTrue "dcprobe.3" "[ -f '$ROOT/share/man/man3/dcprobe.3' ]"
	for h in "$ROOT"/include/dcprobe/dcp_*.h; do
		name=$(basename "$h" .h)
		assertTrue "$name.3 for $name.h" "[ -f '$ROOT/share/man/man3/$name.3' ]"
	done
	declared=$(declared_functions "$ROOT/include/dcprobe/dcprobe.h")
	documented=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$ROOT"/share/man/man3/*.3 |
		grep -oE '\bdcp_[a-z0-9_]+\(' | tr -d '(' | sort -u)
	assertEquals "exported functions in no page's SYNOPSIS" "" \
		"$(comm -23 <(echo "$declared") <(echo "$documented"))"
	awk '/^\.SH EXAMPLES/ { on = 1 } on && /^\.EX/ { code = 1; next } code && /^\.EE/ { exit } code' \
		"$ROOT/share/man/man3/dcprobe.3" | sed 's/\\-/-/g; s/\\e/\\/g; s/\\(aq/'"'"'/g' >"$WORK/man3-example.c"
	assertTrue "dcprobe(3)'s example is tests/example/example.c" \
		"cmp -s '$DCP_SRC/tests/example/example.c' '$WORK/man3-example.c'"
	assertEquals "headers naming a document not installed" "" \
		"$(grep -lE '[A-Za-z_]+\.md\b' "$ROOT"/include/dcprobe/*.h)"
	assertContains "dcp_probe.h points at dcprobe(3)" "$(cat "$ROOT/include/dcprobe/dcp_probe.h")" "dcprobe(3)"
}

# Every function libdcprobe.so.N exports has a page name: man -w 3 NAME,
# over the installed tree only (MANPATH), finds the page whose SYNOPSIS
# shows it (NAME.3 is a link to it), and man renders it.  Control: a name
# no page shows is not found.
test_every_exported_function_has_a_page_name() {
	local so="$ROOT/$LIBDIR/libdcprobe.so.$SOVERSION" man="$ROOT/share/man" f page want got n=0
	declare -A where
	for page in "$man"/man3/*.3; do
		[ -L "$page" ] && continue
		for f in $(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$page" | grep -oE '\bdcp_[a-z0-9_]+\(' | tr -d '('); do
			where[$f]=$page
		done
	done
	for f in $(nm -D --defined-only "$so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }'); do
		n=$((n + 1))
		want=${where[$f]:-no page shows $f}
		got=$(MANPATH=$man man -w 3 "$f" 2>&1)
		assertEquals "man -w 3 $f" "$want" "$got"
		[ "$want" = "$got" ] || continue
		assertTrue "$f.3 is installed" "[ -e '$man/man3/$f.3' ] || [ '$man/man3/$f.3' = '$want' ]"
	done
	assertTrue "the library exports functions ($n)" "[ $n -gt 100 ]"
	assertContains "man 3 dcp_probe_at renders dcp_probe(3)" \
		"$(MANPATH=$man MANWIDTH=80 man 3 dcp_probe_at 2>&1 | head -1)" "DCP_PROBE(3)"
	assertNotEquals "control: a name no page shows" 0 \
		"$(MANPATH=$man man -w 3 dcp_not_a_function >/dev/null 2>&1; echo $?)"
}

# resolved FLAGS - the first -I and the -L of FLAGS, each as the directory
# it names with every .. resolved, one a line.
resolved() {
	local f seen_i=
	for f in $1; do
		case $f in
		-I*) [ -z "$seen_i" ] && seen_i=1 && echo "-I$(realpath -m "${f#-I}")" ;;
		-L*) echo "-L$(realpath -m "${f#-L}")" ;;
		esac
	done
}

# The .pc file is relocatable: its prefix is ${pcfiledir}/.. as deep as the
# libdir (lib/pkgconfig: ../.., lib/ARCH/pkgconfig: ../../..), so in the
# DESTDIR (as a sysroot or not) -I and -L are the installed directories.
# Configured for /usr (the Debian packages), it names /usr's directories,
# clean, which pkg-config leaves out of the flags as its system directories.
test_pkg_config_paths() {
	local pcdir=$ROOT/$LIBDIR/pkgconfig up usr
	up=$(sed 's|[^/]*|..|g' <<<"$LIBDIR/pkgconfig")
	if [ "$PREFIX" = /usr ]; then
		assertEquals "configured for /usr: the prefix" "prefix=/usr" "$(grep '^prefix=' "$pcdir/dcprobe.pc")"
	else
		assertEquals "the prefix, from the .pc file's place" "prefix=\${pcfiledir}/$up" \
			"$(grep '^prefix=' "$pcdir/dcprobe.pc")"
	fi
	assertEquals "-I and -L, with the DESTDIR as a sysroot" "-I$ROOT/include/dcprobe
-L$ROOT/$LIBDIR" "$(resolved "$(pc --cflags --libs)")"
	[ "$PREFIX" = /usr ] || assertEquals "-I and -L, without a sysroot" "-I$ROOT/include/dcprobe
-L$ROOT/$LIBDIR" "$(resolved "$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs dcprobe)")"
	# /usr (configured in oneTimeSetUp for the completions): absolute, and
	# the libdir is GNUInstallDirs' (lib/ARCH on Debian).
	usr=$(build /usr)/dcprobe.pc
	assertEquals "configured for /usr: absolute" "prefix=/usr
libdir=/usr/$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$(build /usr)/CMakeCache.txt")
includedir=/usr/include" "$(grep -E '^(prefix|libdir|includedir)=' "$usr")"
}

# cmake --install --prefix P, no DESTDIR: pkg-config on P's dcprobe.pc
# gives P's directories (the build was configured for another prefix), and
# a program built with them runs on P's library; moved elsewhere, the tree
# still does.
test_relocated_prefix_builds_and_runs_a_program() {
	if [ "$PREFIX" = /usr ]; then
		startSkipping
		fail "the build under test is configured for /usr, whose dcprobe.pc is absolute"
		return
	fi
	local p=$WORK/relocated/P q=$WORK/moved/Q c dir flags
	for c in library devel; do
		cmake --install "$DCP_BUILD" --prefix "$p" --component $c >>"$WORK/relocated.log" 2>&1 ||
			fail "cmake --install --prefix $p --component $c: $(cat "$WORK/relocated.log")"
	done
	mkdir -p "$WORK/moved"
	for dir in "$p" "$q"; do
		[ "$dir" = "$q" ] && { mv "$p" "$q" || fail "mv"; }
		flags=$(PKG_CONFIG_PATH=$dir/$LIBDIR/pkgconfig pkg-config --cflags --libs dcprobe) ||
			fail "pkg-config in $dir"
		assertNotContains "$dir: nothing of the configured prefix $PREFIX" "$flags" "$PREFIX/"
		assertEquals "$dir: -I and -L" "-I$dir/include/dcprobe
-L$dir/$LIBDIR" "$(resolved "$flags")"
		# shellcheck disable=SC2046,SC2086
		cc -std=c11 -Wall -Wextra -Werror $(sanitizer_flags) "$DCP_SRC/tests/example/example.c" \
			$flags -o "$WORK/example-relocated" || fail "the example does not build against $dir"
		run_example "$WORK/example-relocated" "$dir/$LIBDIR"
		assertContains "$dir: linked with the shared library" " $(needed "$WORK/example-relocated") " \
			" libdcprobe.so.$SOVERSION "
	done
}

# The installed headers are C99 (-pedantic) and C++: tests/example/example.c
# built both ways against them and libdcprobe.so.N, and run.
test_example_is_c99_and_cxx_with_the_shared_library() {
	local libs cflags
	cflags=$(pc --cflags) && libs=$(pc --libs) || fail "pkg-config failed"
	command -v g++ >/dev/null || fail "g++ not found (./bootstrap test installs it)"
	gcc -std=c99 -pedantic -Wall -Wextra -Werror $(sanitizer_flags) $cflags -x c \
		"$DCP_SRC/tests/example/example.c" $libs -o "$WORK/example-c99" ||
		fail "the example is not C99 -pedantic against the installed headers"
	run_example "$WORK/example-c99"
	g++ -std=c++11 -pedantic -Wall -Wextra -Werror $(sanitizer_flags) $cflags -x c++ \
		"$DCP_SRC/tests/example/example.c" $libs -o "$WORK/example-cxx" ||
		fail "the example is not C++ against the installed headers"
	assertContains "linked with the shared library" " $(needed "$WORK/example-cxx") " " libdcprobe.so.$SOVERSION "
	run_example "$WORK/example-cxx"
	# Every installed header alone, both ways (a header may rely on no other
	# header included before it).
	local h
	for h in "$ROOT"/include/dcprobe/*.h; do
		printf '#include <%s>\n' "$(basename "$h")" >"$WORK/one.c"
		gcc -std=c99 -pedantic -Wall -Wextra -Werror $cflags -fsyntax-only "$WORK/one.c" ||
			fail "$(basename "$h") is not C99 -pedantic"
		g++ -std=c++11 -pedantic -Wall -Wextra -Werror $cflags -fsyntax-only -x c++ "$WORK/one.c" ||
			fail "$(basename "$h") is not C++"
	done
	# The check can fail: a C11-only header is refused both ways.
	printf 'struct s { _Atomic int n; };\n' >"$WORK/c11.h"
	printf '#include "c11.h"\n' >"$WORK/c11.c"
	assertFalse "C99 -pedantic refuses _Atomic" \
		"gcc -std=c99 -pedantic -Werror -fsyntax-only '$WORK/c11.c' 2>/dev/null"
	assertFalse "C++ refuses _Atomic" "g++ -std=c++11 -fsyntax-only -x c++ '$WORK/c11.c' 2>/dev/null"
}

. "$SHUNIT2"
