#!/bin/bash
# The Debian packages as a user gets them: a fresh build of the source for
# the prefix /usr (plain, without the tests: what is packaged is not the
# build under test), "cmake --build --target package" (CPack), lintian on
# each .deb, then apt-get install of the three on this machine: the
# commands run, man finds the pages, bash and zsh load the completions,
# pkg-config builds tests/example/example.c against the installed library;
# then apt-get purge, after which nothing the packages installed is left.
# Needs root, dpkg, apt-get and lintian (CI, ./bootstrap test, has them).
#
# The machine's system is never written: the suite runs in a mount
# namespace of its own (fixture_require), where /usr, /etc and /var are
# overlays whose upper layers are the suite's (private_system).  What
# apt-get installs and purges, dpkg's database and its lock are this run's
# alone: another run of the suite at the same time (another checkout, CI)
# installs and purges its own packages, and every other program on the
# machine sees none of them.
: "${DCP_SRC:?}"
. "${DCP_TESTS:-$(dirname "$0")/..}/lib/fixture.sh"
fixture_require --namespace
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
SHUNIT2=${SHUNIT2:-$(command -v shunit2 || echo /usr/share/shunit2/shunit2)}
# The shared library's SONAME number (CMakeLists.txt), and its package.
SOVERSION=$(sed -n 's/^set(DCP_SOVERSION \([0-9]*\))$/\1/p' "$DCP_SRC/CMakeLists.txt")
LIBPKG=libdcprobe$SOVERSION
PACKAGES=(dcprobe "$LIBPKG" libdcprobe-dev)
COMMANDS=(cachedopen dcache-probe warm uring-open)
# The lintian warnings that remain, each justified in man/debian/README.md;
# any other warning (or any error) fails.
LINTIAN_ALLOWED='initial-upload-closes-no-bugs|maintscript-calls-ldconfig'
APT=(apt-get -y -q -o DPkg::Lock::Timeout=300)

# why_not - why this machine cannot run the suite, or nothing.
why_not() {
	local t
	[ "$(id -u)" = 0 ] || { echo "not root (apt-get install needs it)"; return; }
	for t in dpkg dpkg-deb dpkg-shlibdeps apt-get lintian cmake cc pkg-config; do
		command -v $t >/dev/null || { echo "$t is not installed (./bootstrap test installs it)"; return; }
	done
}

# private_system - /usr, /etc and /var, in the suite's namespace, as
# overlays over the machine's: writes go to layers under FIXTURE_ROOT.
private_system() {
	local d o
	for d in usr etc var; do
		o=$FIXTURE_ROOT/system/$d
		mkdir -p "$o/upper" "$o/work" &&
			mount -t overlay "dcprobe-$d" -o "lowerdir=/$d,upperdir=$o/upper,workdir=$o/work" "/$d" ||
			return 1
	done
}

oneTimeSetUp() {
	WHY=$(why_not)
	[ -z "$WHY" ] || return 0
	private_system || {
		WHY="cannot mount /usr, /etc and /var as overlays in the suite's namespace"
		return 0
	}
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/dcprobe-package.XXXXXX")
	VERSION=$(sed -n 's/^project(dcprobe VERSION \([0-9.]*\).*/\1/p' "$DCP_SRC/CMakeLists.txt")
	LIBVERSION=$(sed -n 's/^set(DCP_LIB_VERSION \(.*\))$/\1/p' "$DCP_SRC/CMakeLists.txt")
	LIBVERSION=${LIBVERSION//'${DCP_SOVERSION}'/$SOVERSION}
	DEBS=()
	# Packages of a previous run of this suite would hide what these install.
	purge_ours
	# Linked as the build under test is (DCP_LINK_COMMANDS, default shared).
	LINK=$(sed -n 's/^DCP_LINK_COMMANDS:[A-Z]*=//p' "$DCP_BUILD/CMakeCache.txt")
	LINK=${LINK:-shared}
	if ! { cmake -S "$DCP_SRC" -B "$WORK/build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF \
		-DDCP_LINK_COMMANDS="$LINK" &&
		nice cmake --build "$WORK/build" -j "$(nproc)" --target package; } >"$WORK/build.log" 2>&1; then
		BUILD_FAILED=$(tail -30 "$WORK/build.log")
		return 0
	fi
	local p
	for p in "${PACKAGES[@]}"; do
		DEBS+=("$WORK/build/packages/${p}_$VERSION-1_$(dpkg --print-architecture).deb")
	done
}

oneTimeTearDown() {
	[ -z "${WORK:-}" ] && return
	purge_ours
	rm -rf "$WORK"
}

purge_ours() {
	local p installed=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "installed" && installed+=("$p")
	done
	[ ${#installed[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive "${APT[@]}" purge "${installed[@]}" >/dev/null 2>&1
}

setUp() {
	if [ -n "$WHY" ]; then
		startSkipping
		fail "skipped: $WHY"
	fi
	[ -z "${BUILD_FAILED:-}" ] || fail "cmake --target package failed: $BUILD_FAILED"
}

# field DEB NAME - a control field of DEB.
field() { dpkg-deb -f "$1" "$2"; }

test_three_packages_with_their_dependencies() {
	local deb
	for deb in "${DEBS[@]}"; do
		assertTrue "$(basename "$deb") built" "[ -f '$deb' ]"
	done
	[ -f "${DEBS[0]}" ] || return
	assertEquals "dcprobe: section" utils "$(field "${DEBS[0]}" Section)"
	assertEquals "$LIBPKG: section" libs "$(field "${DEBS[1]}" Section)"
	assertEquals "libdcprobe-dev: section" libdevel "$(field "${DEBS[2]}" Section)"
	# dpkg-shlibdeps found libc and liburing in the ELF files; libmount,
	# loaded with dlopen, is named explicitly.  Commands linked with
	# liburing.a (DCP_LINK_COMMANDS) need no liburing2; static PIE ones
	# carry their libc and pin libc6 to its release, for that dlopen.
	for deb in "${DEBS[0]}" "${DEBS[1]}"; do
		assertContains "$(basename "$deb"): Depends" "$(field "$deb" Depends)" "libc6 (>= "
		if [ "$deb" = "${DEBS[0]}" ] && [ "$LINK" != shared ]; then
			assertNotContains "$(basename "$deb"): Depends ($LINK)" "$(field "$deb" Depends)" "liburing2"
		else
			assertContains "$(basename "$deb"): Depends" "$(field "$deb" Depends)" "liburing2 (>= "
		fi
		assertContains "$(basename "$deb"): Depends" "$(field "$deb" Depends)" "libmount1"
		assertContains "$(basename "$deb"): Depends" "$(field "$deb" Depends)" "libblkid1"
	done
	if [ "$LINK" = static-pie ]; then
		assertContains "dcprobe: Depends (static-pie)" "$(field "${DEBS[0]}" Depends)" \
			"libc6 (<< $(getconf GNU_LIBC_VERSION | awk '{ split($2, v, "."); print v[1] "." v[2] + 1 }'))"
	fi
	assertContains "libdcprobe-dev: Depends" "$(field "${DEBS[2]}" Depends)" "$LIBPKG (= $VERSION-1)"
	assertEquals "$LIBPKG: shlibs" "libdcprobe $SOVERSION $LIBPKG (>= $VERSION-1)" \
		"$(dpkg-deb --ctrl-tarfile "${DEBS[1]}" | tar -xOf - ./shlibs)"
	assertEquals "$LIBPKG: the ldconfig trigger" "activate-noawait ldconfig" \
		"$(dpkg-deb --ctrl-tarfile "${DEBS[1]}" | tar -xOf - ./triggers)"
}

# contents DEB - "MODE OWNER PATH" of every member of DEB.
contents() {
	dpkg-deb -c "$1" | awk '{ p = $6; sub(/^\./, "", p); print $1, $2, p }'
}

# has LIST PATH - PATH is a line of LIST.
has() {
	grep -qxF -- "$2" <<<"$1" || fail "$2 is not in the package"
}

test_files_modes_and_md5sums() {
	[ -f "${DEBS[0]}" ] || return
	local deb pkg dir p
	for deb in "${DEBS[@]}"; do
		pkg=$(field "$deb" Package)
		assertEquals "$pkg: all root/root" "" "$(contents "$deb" | awk '$2 != "root/root"')"
		assertEquals "$pkg: directories 0755, files 0644, programs 0755" "" \
			"$(contents "$deb" | awk '$1 !~ /^(drwxr-xr-x|-rw-r--r--|lrwxrwxrwx)$/ &&
				!($1 == "-rwxr-xr-x" && $3 ~ /^\/usr\/bin\//)')"
		assertEquals "$pkg: copyright, DEP-5" \
			"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" \
			"$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/share/doc/$pkg/copyright" | head -1)"
		dir=$WORK/x-$pkg
		mkdir -p "$dir"
		dpkg-deb -x "$deb" "$dir"
		# gzip -9n: no flags (no file name), no time stamp, "maximum
		# compression" and Unix (header bytes 4 to 10).
		assertEquals "$pkg: changelog.Debian.gz without name or time" "00 00 00 00 00 02 03" \
			"$(od -An -tx1 -j3 -N7 "$dir/usr/share/doc/$pkg/changelog.Debian.gz" | xargs)"
		assertContains "$pkg: changelog names the version" \
			"$(zcat "$dir/usr/share/doc/$pkg/changelog.Debian.gz" | head -1)" "($VERSION-1)"
		assertTrue "$pkg: md5sums match the files" \
			"dpkg-deb --ctrl-tarfile '$deb' | tar -xOf - ./md5sums | (cd '$dir' && md5sum --quiet -c)"
		assertEquals "$pkg: md5sums lists every file" \
			"$(contents "$deb" | awk '$1 ~ /^-/ { print substr($3, 2) }' | sort)" \
			"$(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./md5sums | awk '{ print $2 }' | sort)"
	done
	# The split: the shared object and its SONAME link in libdcprobeN, the
	# link for -ldcprobe, the static library, headers, .pc and section 3 in
	# -dev; commands, sections 1 and 7, completions and examples in dcprobe.
	local lib=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
	assertEquals "$LIBPKG" "$lib/libdcprobe.so.$SOVERSION $lib/libdcprobe.so.$LIBVERSION" \
		"$(contents "${DEBS[1]}" | awk '$1 !~ /^d/ && $3 ~ /\.so/ { print $3 }' | sort | xargs)"
	local dev
	dev=$(contents "${DEBS[2]}" | awk '{ print $3 }')
	for p in "$lib/libdcprobe.so" "$lib/libdcprobe.a" "$lib/pkgconfig/dcprobe.pc" \
		/usr/include/dcprobe/dcprobe.h /usr/share/man/man3/dcprobe.3.gz /usr/share/man/man3/dcp_probe_at.3.gz; do
		has "$dev" "$p"
	done
	local main c
	main=$(contents "${DEBS[0]}" | awk '{ print $3 }')
	for c in "${COMMANDS[@]}"; do
		for p in "/usr/bin/$c" "/usr/share/man/man1/$c.1.gz" \
			"/usr/share/bash-completion/completions/$c" "/usr/share/zsh/vendor-completions/_$c"; do
			has "$main" "$p"
		done
	done
	for p in /usr/share/man/man7/dcprobe.7.gz /usr/share/doc/dcprobe/examples/warm-app.service \
		/usr/share/doc/dcprobe/examples/cron.d/dcprobe /usr/share/doc/dcprobe/examples/dcprobe.rules.yml \
		/usr/share/doc/dcprobe/examples/dcprobe.rules.test.yml; do
		has "$main" "$p"
	done
	# Every public header has its page in section 3.
	for p in "$DCP_SRC"/lib/dcp_*.h; do
		has "$dev" "/usr/share/man/man3/$(basename "$p" .h).3.gz"
	done
	assertEquals "nothing uncompressed in man" "" "$(grep '^/usr/share/man/man./.*[^z]$' <<<"$main$dev")"
	assertEquals "a function's page name links to its header's page" "dcp_probe.3.gz" \
		"$(dpkg-deb -c "${DEBS[2]}" | awk '$6 == "./usr/share/man/man3/dcp_probe_at.3.gz" { print $8 }')"
}

test_lintian_reports_no_errors() {
	[ -f "${DEBS[0]}" ] || return
	local deb out
	for deb in "${DEBS[@]}"; do
		out=$(lintian --no-cfg "$deb" 2>&1 | grep -v '^running with root privileges')
		assertEquals "$(basename "$deb"): lintian errors" "" "$(grep '^E:' <<<"$out")"
		assertEquals "$(basename "$deb"): lintian warnings not justified" "" \
			"$(grep '^W:' <<<"$out" | grep -vE ": ($LINTIAN_ALLOWED) ")"
	done
	# Control: lintian does see a package without its copyright file.
	local bad=$WORK/bad
	dpkg-deb -R "${DEBS[1]}" "$bad"
	rm "$bad/usr/share/doc/$LIBPKG/copyright"
	sed -i '/copyright/d' "$bad/DEBIAN/md5sums"
	dpkg-deb --root-owner-group -b "$bad" "$WORK/bad.deb" >/dev/null
	assertContains "control: no copyright file is an error" "$(lintian --no-cfg "$WORK/bad.deb" 2>&1)" \
		"E: $LIBPKG: no-copyright-file"
}

# What the packages put on the system, and which of those paths were there
# before: after the purge, only those may remain.
test_install_use_and_purge() {
	[ -f "${DEBS[0]}" ] || return
	local deb p path listed
	listed=$WORK/listed
	for deb in "${DEBS[@]}"; do contents "$deb" | awk '{ print $3 }' | sed 's|/$||' | grep .; done |
		sort -u >"$listed"
	while read -r path; do
		[ -e "$path" ] || [ -L "$path" ] && echo "$path"
	done <"$listed" >"$WORK/before"
	assertEquals "no file of the packages on the system before" "" \
		"$(while read -r p; do [ -d "$p" ] && [ ! -L "$p" ] || echo "$p"; done <"$WORK/before")"
	DEBIAN_FRONTEND=noninteractive "${APT[@]}" install --no-install-recommends "${DEBS[@]}" \
		>"$WORK/apt.log" 2>&1 || fail "apt-get install failed: $(tail -20 "$WORK/apt.log")"
	for p in "${PACKAGES[@]}"; do
		assertEquals "$p installed" "install ok installed" "$(dpkg-query -W -f='${Status}' "$p" 2>&1)"
		dpkg -L "$p" >>"$WORK/dpkg-L"
	done
	assertEquals "dpkg -L lists what the .debs hold" "$(cat "$listed")" \
		"$(grep -vx '/\.' "$WORK/dpkg-L" | sort -u)"
	# Installed in the suite's namespace alone: outside, the machine has
	# none of it (a file there was there before the suite too).
	for p in "${PACKAGES[@]}"; do
		assertNotEquals "outside, $p is not installed" "install ok installed" \
			"$(fixture_outside dpkg-query -W -f='${Status}' "$p" 2>&1)"
	done
	assertEquals "outside, not a file of the packages" "" \
		"$(fixture_outside sh -c 'while read -r p; do
			if [ -d "$p" ] && [ ! -L "$p" ]; then continue; fi
			if [ -e "$p" ] || [ -L "$p" ]; then echo "$p"; fi
		done' <"$listed")"

	# The commands.
	for p in "${COMMANDS[@]}"; do
		assertEquals "$p --version" "$p (dcprobe) $VERSION" "$("/usr/bin/$p" --version 2>&1)"
	done
	/usr/bin/dcache-probe / >/dev/null 2>&1
	assertEquals "dcache-probe / runs (cached)" 0 $?
	/usr/bin/dcache-probe -r --per-mount /usr/share/doc/dcprobe >/dev/null 2>&1
	assertEquals "a walk with the mount table (libmount loaded by dlopen)" 0 $?
	# The manual pages.
	assertEquals "man -w dcache-probe" /usr/share/man/man1/dcache-probe.1.gz "$(man -w dcache-probe 2>&1)"
	assertEquals "man -w 7 dcprobe" /usr/share/man/man7/dcprobe.7.gz "$(man -w 7 dcprobe 2>&1)"
	assertEquals "man -w 3 dcprobe" /usr/share/man/man3/dcprobe.3.gz "$(man -w 3 dcprobe 2>&1)"
	assertEquals "man -w 3 dcp_probe" /usr/share/man/man3/dcp_probe.3.gz "$(man -w 3 dcp_probe 2>&1)"
	assertEquals "man renders dcprobe(3) without a warning" "" \
		"$(MANWIDTH=80 man --warnings 3 dcprobe 2>&1 >/dev/null)"
	assertEquals "man -w 3 dcp_probe_at: its header's page" /usr/share/man/man3/dcp_probe.3.gz \
		"$(man -w 3 dcp_probe_at 2>&1)"
	# The installed pages name the installed commands and documents, never
	# /usr/local's; the cron line and the unit of dcprobe(7), copied as
	# they are, run commands that exist.
	local page text cmd out
	for page in $(dpkg -L dcprobe | grep '^/usr/share/man/man[17]/.*\.gz$'); do
		text=$(MANWIDTH=1000 man -l "$page" 2>/dev/null | col -bx)
		assertNotContains "$page names /usr/local" "$text" "/usr/local"
		for cmd in $(grep -oE '[^ =]*/bin/(cachedopen|dcache-probe|warm|uring-open)\b' <<<"$text" | sed 's/^-//' | sort -u); do
			assertTrue "$page: $cmd is installed" "[ -x '$cmd' ]"
		done
	done
	text=$(MANWIDTH=1000 man -l /usr/share/man/man7/dcprobe.7.gz 2>/dev/null | col -bx)
	cmd=$(grep -E '^ *\*/5 \* \* \* \* root ' <<<"$text" | grep -oE '/[^ ]*/dcache-probe')
	assertEquals "dcprobe(7)'s cron line runs the installed dcache-probe" /usr/bin/dcache-probe "$cmd"
	# The rules' unit tests, installed beside them, pass there.
	if command -v promtool >/dev/null; then
		out=$(cd / && promtool test rules /usr/share/doc/dcprobe/examples/dcprobe.rules.test.yml 2>&1)
		assertEquals "promtool test rules on the installed examples: $out" 0 $?
	else
		fail "promtool not found (Debian package prometheus)"
	fi
	# The completions, loaded by bash-completion and by zsh's compinit from
	# where they are installed.
	if [ -f /usr/share/bash-completion/bash_completion ]; then
		assertEquals "bash completes from the installed file" "--flags=" \
			"$(bash "$DCP_SRC/tests/lib/bash-complete.sh" /usr/share 'uring-open --fl')"
	else
		fail "bash-completion is not installed"
	fi
	if command -v zsh >/dev/null; then
		assertEquals "zsh's compinit finds _warm" "_warm" \
			"$(zsh -fc 'autoload -Uz compinit; compinit -u -D; print ${_comps[warm]}')"
	fi
	# A program built against the installed library through pkg-config.
	assertEquals "pkg-config --modversion" "$VERSION" "$(pkg-config --modversion dcprobe 2>&1)"
	local flags out
	# Clean paths of the prefix, as the compiler is given them.
	assertEquals "pkg-config --cflags" "-I/usr/include/dcprobe" "$(pkg-config --cflags dcprobe 2>&1 | xargs)"
	assertEquals "pkg-config --libs" "-ldcprobe" "$(pkg-config --libs dcprobe 2>&1 | xargs)"
	flags=$(pkg-config --cflags --libs dcprobe) || fail "pkg-config dcprobe failed"
	cc -std=c11 -Wall -Wextra -Werror "$DCP_SRC/tests/example/example.c" $flags -o "$WORK/example" ||
		fail "tests/example/example.c does not build against the installed package"
	out=$("$WORK/example" / 2>&1)
	assertEquals "the example runs: $out" 0 $?
	assertEquals "libdcprobe $VERSION
cached /" "$out"
	local lib=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
	assertEquals "linked with the installed libdcprobe.so.$SOVERSION" "$lib/libdcprobe.so.$LIBVERSION" \
		"$(readlink -f "$(ldd "$WORK/example" | awk -v so="libdcprobe.so.$SOVERSION" '$1 == so { print $3 }')")"
	flags=$(pkg-config --static --cflags --libs dcprobe) || fail "pkg-config --static dcprobe failed"
	cc -std=c11 -Wall -Wextra -Werror "$DCP_SRC/tests/example/example.c" ${flags/-ldcprobe/-l:libdcprobe.a} \
		-o "$WORK/example-static" || fail "the example does not build against the installed libdcprobe.a"
	assertEquals "the static example runs" "cached /" "$("$WORK/example-static" / 2>&1 | tail -1)"
	# The example of dcprobe(3), as the installed page shows it.
	zcat /usr/share/man/man3/dcprobe.3.gz | awk '/^\.SH EXAMPLES/ { on = 1 } on && /^\.EX/ { code = 1; next }
		code && /^\.EE/ { exit } code' | sed 's/\\-/-/g; s/\\e/\\/g; s/\\(aq/'"'"'/g' >"$WORK/man3-example.c"
	assertTrue "dcprobe(3) shows tests/example/example.c" "cmp '$DCP_SRC/tests/example/example.c' '$WORK/man3-example.c'"

	# Purge: every path the packages installed is gone, but the directories
	# that were there before.
	DEBIAN_FRONTEND=noninteractive "${APT[@]}" purge "${PACKAGES[@]}" >"$WORK/apt.log" 2>&1 ||
		fail "apt-get purge failed: $(tail -20 "$WORK/apt.log")"
	for p in "${PACKAGES[@]}"; do
		assertFalse "$p purged" "dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -q installed"
	done
	local left
	left=$(grep -vx '/\.' "$WORK/dpkg-L" | sort -u | while read -r path; do
		if [ -e "$path" ] || [ -L "$path" ]; then echo "$path"; fi
	done | comm -23 - "$WORK/before")
	assertEquals "nothing left after the purge" "" "$left"
	assertFalse "no /usr/share/doc/dcprobe" "[ -e /usr/share/doc/dcprobe ]"
}

. "$SHUNIT2"
