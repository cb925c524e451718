#!/bin/bash
# abicheck.sh BUILD SRC [--baseline] - libdcprobe.so's interface against the
# baseline committed in tests/abi/ (abidiff, from Debian's abigail-tools),
# so that a change to the public interface is seen, and the SONAME bumped
# when it must be.
#
#   abicheck.sh BUILD SRC             the check (ctest abi/libdcprobe)
#   abicheck.sh BUILD SRC --baseline  write tests/abi/libdcprobe.so.N.abi
#                                     (cmake --build BUILD --target abi-baseline)
#
# The interface is what the installed headers declare (the devel component
# installed into a scratch DESTDIR): types used only inside the library
# are left out (--drop-private-types).  A change is compatible when
# abidiff's summaries count only additions (a function added): regenerate
# the baseline in the same commit.  Anything removed or changed (a
# function, its signature, a public struct's size or layout, an enum's
# value; abidiff's status has bit 4, or bit 8 for a symbol gone) is
# incompatible: bump the SONAME as well (the rule is printed below).
# Sanitizer builds
# and builds without debug information (Release) are skipped (77): the
# check reads DWARF.
set -u
build=$1 src=$2 mode=${3:-check}
soversion=$(sed -n 's/^set(DCP_SOVERSION \([0-9]*\))$/\1/p' "$src/CMakeLists.txt")
so=$build/libdcprobe.so.$soversion
baseline=$src/tests/abi/libdcprobe.so.$soversion.abi

die() { echo "abicheck: $*" >&2; exit 2; }
command -v abidiff >/dev/null && command -v abidw >/dev/null ||
	die "abidw and abidiff are needed (Debian: abigail-tools, in bootstrap's TEST_PACKAGES)"
[ -n "$soversion" ] || die "no DCP_SOVERSION in $src/CMakeLists.txt"
[ -f "$so" ] || die "no $so (a SONAME of $soversion built?)"
if grep -Eq '^DCP_SANITIZE:[A-Z]*=(ON|address|thread)$' "$build/CMakeCache.txt"; then
	echo "SKIP: a sanitizer build (its objects carry the sanitizer's own symbols)"
	exit 77
fi
if ! readelf -S "$so" | grep -q '\.debug_info'; then
	echo "SKIP: $so has no debug information (a Release build)"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/dcprobe-abi.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
DESTDIR=$work/dest cmake --install "$build" --component devel >"$work/install.log" 2>&1 ||
	die "cmake --install --component devel: $(cat "$work/install.log")"
headers=$(find "$work/dest" -name dcprobe.h -printf '%h\n' | head -1)
[ -n "$headers" ] || die "no installed dcprobe.h"

if [ "$mode" = --baseline ]; then
	mkdir -p "$(dirname "$baseline")"
	abidw --no-corpus-path --no-comp-dir-path --no-show-locs --type-id-style hash \
		--headers-dir "$headers" --drop-private-types --out-file "$baseline" "$so" ||
		die "abidw failed"
	echo "abicheck: wrote $baseline"
	exit 0
fi

# incompatible REPORT - abidiff's summaries count something removed or changed.
incompatible() {
	grep -Eq '(^|[^0-9])[1-9][0-9]* (Removed|Changed)' "$1"
}

# The check can fail: throwaway libraries, a struct grown (incompatible),
# a function added (compatible).
printf '%s\n' 'struct s { int a; };' 'int f(struct s *p) { return p->a; }' >"$work/v1.c"
printf '%s\n' 'struct s { int a; long b; };' 'int f(struct s *p) { return p->a + (int)p->b; }' >"$work/v2.c"
printf '%s\n' 'struct s { int a; };' 'int f(struct s *p) { return p->a; }' \
	'int g(struct s *p) { return -p->a; }' >"$work/v3.c"
for v in v1 v2 v3; do
	cc -g -shared -fPIC -o "$work/$v.so" "$work/$v.c" || die "cannot build the control"
done
abidiff "$work/v1.so" "$work/v2.so" >"$work/control"
rc=$?
{ [ $((rc & 4)) = 4 ] && incompatible "$work/control"; } ||
	die "control: a struct grown is not seen as incompatible (abidiff $rc: $(cat "$work/control"))"
abidiff "$work/v1.so" "$work/v3.so" >"$work/control"
rc=$?
{ [ $((rc & 4)) = 4 ] && ! incompatible "$work/control"; } ||
	die "control: a function added is not seen as compatible (abidiff $rc: $(cat "$work/control"))"

[ -f "$baseline" ] || {
	echo "abicheck: no baseline for libdcprobe.so.$soversion: $baseline"
	echo "  a new SONAME needs its baseline: cmake --build $build --target abi-baseline"
	exit 1
}
base_soname=$(sed -n 's/.*soname=.\([^"'\'']*\).*/\1/p' "$baseline" | head -1)
[ "$base_soname" = "libdcprobe.so.$soversion" ] ||
	die "$baseline is the baseline of '$base_soname', not libdcprobe.so.$soversion"

abidiff --hd2 "$headers" --drop-private-types --no-show-locs "$baseline" "$so" >"$work/report"
rc=$?
cat "$work/report"
if [ $rc = 0 ]; then
	echo "abicheck: libdcprobe.so.$soversion's interface is its baseline's"
	exit 0
fi
if [ $((rc & 3)) != 0 ]; then
	echo "abicheck: abidiff failed ($rc)"
	exit 1
fi
if [ $((rc & 8)) = 8 ] || incompatible "$work/report"; then
	cat <<EOF
abicheck: an INCOMPATIBLE change to libdcprobe's interface (abidiff $rc): a
program built against libdcprobe.so.$soversion would break.  Bump the SONAME, once
per release (if the release being made has bumped it already, only regenerate):
  - CMakeLists.txt: DCP_SOVERSION $soversion -> $((soversion + 1));
  - lib/libdcprobe.map and tests/cmd/test_install.sh: node DCPROBE_$((soversion + 1));
  - man/debian: the package libdcprobe$((soversion + 1)) (Debian.cmake, the
    man/debian/libdcprobe$soversion directory renamed);
  - git rm $baseline, then cmake --build BUILD --target abi-baseline.
EOF
else
	cat <<EOF
abicheck: the interface grew compatibly (abidiff $rc): regenerate the baseline
in the same commit: cmake --build BUILD --target abi-baseline
EOF
fi
exit 1
