# Debian.cmake - the Debian 12 packages, built by CPack from the install
# components (included from CMakeLists.txt):
#
#   cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr && cmake --build build --target package
#
#   dcprobe         the commands, man pages (1, 7), bash and zsh completions,
#                   the examples and the JSON Schema: components commands,
#                   completions, examples, deb-dcprobe
#   libdcprobe1     libdcprobe.so.1: component library, deb-libdcprobe1
#                   (the number is the SONAME's, DCP_SOVERSION)
#   libdcprobe-dev  headers, libdcprobe.a, libdcprobe.so, dcprobe.pc, man
#                   pages (3): components devel, deb-libdcprobe-dev
#
# The deb-* components hold what only a package carries (EXCLUDE_FROM_ALL:
# "cmake --install" leaves them out): the manual pages compressed with
# gzip -9n, and each package's copyright and changelog.Debian.gz.
# Depends: dpkg-shlibdeps over each package's ELF files, plus libmount1
# and libblkid1, which lib/mounts.c and lib/fsid.c load with dlopen
# (invisible to dpkg-shlibdeps).

set(DCP_DEB_MAINTAINER "dcprobe developers <maintainers@users.noreply.a-seed-fb8ad67b.example>")
set(DCP_DEB_RELEASE 1)
set(DCP_DEB_VERSION "${PROJECT_VERSION}-${DCP_DEB_RELEASE}")
# The shared library's package is named after its SONAME (policy 8.1).
set(DCP_DEB_LIB libdcprobe${DCP_SOVERSION})
string(TOUPPER ${DCP_DEB_LIB} _dcp_deb_lib)
set(DCP_DEB_PACKAGES dcprobe ${DCP_DEB_LIB} libdcprobe-dev)

# Compressed as Debian policy asks (12.3, 12.7): gzip -9n, no name or time
# stamp, so the same sources always give the same bytes.
set(_dcp_deb ${CMAKE_BINARY_DIR}/deb)
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${_dcp_deb}/changelog @ONLY)
set(_dcp_deb_outputs ${_dcp_deb}/changelog.Debian.gz)
add_custom_command(OUTPUT ${_dcp_deb}/changelog.Debian.gz
  COMMAND gzip -9n -c changelog > changelog.Debian.gz
  DEPENDS ${_dcp_deb}/changelog WORKING_DIRECTORY ${_dcp_deb} VERBATIM)
foreach(_dcp_sec 1 3 7)
  set(DCP_DEB_MAN${_dcp_sec})
  foreach(_dcp_page ${DCP_MAN${_dcp_sec}})
    get_filename_component(_dcp_name ${_dcp_page} NAME)
    set(_dcp_gz ${_dcp_deb}/man${_dcp_sec}/${_dcp_name}.gz)
    add_custom_command(OUTPUT ${_dcp_gz}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_dcp_deb}/man${_dcp_sec}
      COMMAND sh -c "gzip -9n -c \"$0\" > \"$1\"" ${_dcp_page} ${_dcp_gz}
      DEPENDS ${_dcp_page} VERBATIM)
    list(APPEND DCP_DEB_MAN${_dcp_sec} ${_dcp_gz})
    list(APPEND _dcp_deb_outputs ${_dcp_gz})
  endforeach()
endforeach()
# The page names of section 3 functions: links to the compressed pages.
set(DCP_DEB_MAN3_LINKS)
file(GLOB _dcp_old ${_dcp_deb}/man3/*.gz)
foreach(_dcp_gz ${_dcp_old})
  if(IS_SYMLINK ${_dcp_gz})
    file(REMOVE ${_dcp_gz})
  endif()
endforeach()
foreach(_dcp_link ${DCP_MAN3_LINK_FILES})
  get_filename_component(_dcp_name ${_dcp_link} NAME)
  file(READ_SYMLINK ${_dcp_link} _dcp_target)
  file(MAKE_DIRECTORY ${_dcp_deb}/man3)
  file(CREATE_LINK ${_dcp_target}.gz ${_dcp_deb}/man3/${_dcp_name}.gz SYMBOLIC)
  list(APPEND DCP_DEB_MAN3_LINKS ${_dcp_deb}/man3/${_dcp_name}.gz)
endforeach()
add_custom_target(deb-files ALL DEPENDS ${_dcp_deb_outputs})

foreach(_dcp_pkg ${DCP_DEB_PACKAGES})
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright ${_dcp_deb}/changelog.Debian.gz
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${_dcp_pkg} COMPONENT deb-${_dcp_pkg} EXCLUDE_FROM_ALL)
endforeach()
install(FILES ${DCP_DEB_MAN1} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT deb-dcprobe EXCLUDE_FROM_ALL)
install(FILES ${DCP_DEB_MAN7} DESTINATION ${CMAKE_INSTALL_MANDIR}/man7 COMPONENT deb-dcprobe EXCLUDE_FROM_ALL)
install(FILES ${DCP_DEB_MAN3} ${DCP_DEB_MAN3_LINKS} DESTINATION ${CMAKE_INSTALL_MANDIR}/man3
  COMPONENT deb-libdcprobe-dev EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dcprobe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${DCP_DEB_MAINTAINER}")
# No summary for all packages: each package's description starts with its
# own (CPack would put this one in front of each).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
# The paths written into the examples and the zsh directory were chosen
# for CMAKE_INSTALL_PREFIX: the packages use that prefix (checked below).
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_COMPONENTS_ALL commands completions examples deb-dcprobe
  library deb-${DCP_DEB_LIB} devel deb-libdcprobe-dev)
foreach(_dcp_comp commands completions examples deb-dcprobe)
  string(TOUPPER ${_dcp_comp} _dcp_up)
  set(CPACK_COMPONENT_${_dcp_up}_GROUP dcprobe)
endforeach()
set(CPACK_COMPONENT_LIBRARY_GROUP ${DCP_DEB_LIB})
set(CPACK_COMPONENT_DEB-${_dcp_deb_lib}_GROUP ${DCP_DEB_LIB})
set(CPACK_COMPONENT_DEVEL_GROUP libdcprobe-dev)
set(CPACK_COMPONENT_DEB-LIBDCPROBE-DEV_GROUP libdcprobe-dev)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${DCP_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${DCP_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/dcprobe/dcprobe")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DCPROBE_PACKAGE_NAME dcprobe)
set(CPACK_DEBIAN_DCPROBE_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_DCPROBE_PACKAGE_DEPENDS "libmount1, libblkid1")
# A static PIE cachedopen (DCP_LINK_COMMANDS) carries its libc, which
# dpkg-shlibdeps cannot see, and its dlopen of libmount needs the libc6 of
# the glibc release it was linked with.
if(DCP_LINK_COMMANDS STREQUAL "static-pie")
  execute_process(COMMAND getconf GNU_LIBC_VERSION OUTPUT_VARIABLE _dcp_glibc
    OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  if(NOT _dcp_glibc MATCHES "^glibc ([0-9]+)\\.([0-9]+)")
    message(FATAL_ERROR "cannot tell the glibc release from '${_dcp_glibc}'")
  endif()
  math(EXPR _dcp_next "${CMAKE_MATCH_2} + 1")
  set(CPACK_DEBIAN_DCPROBE_PACKAGE_DEPENDS
    "libc6 (>= ${CMAKE_MATCH_1}.${CMAKE_MATCH_2}), libc6 (<< ${CMAKE_MATCH_1}.${_dcp_next}), libmount1, libblkid1")
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/dcprobe.lintian-overrides
    DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME dcprobe
    COMPONENT deb-dcprobe EXCLUDE_FROM_ALL)
endif()
set(CPACK_DEBIAN_DCPROBE_DESCRIPTION "tell whether path lookups are served from the dentry cache
dcprobe is a suite of four commands that tell whether resolving a path
would block on I/O or is served from the kernel's dentry cache, using
openat2(2) with RESOLVE_CACHED (Linux 5.12 or later): cachedopen opens a
path only if it is cached, dcache-probe reports per path, directory and
mount how warm a tree is (and how much of its data is in the page cache),
warm primes a tree into the cache, and uring-open shows whether an
io_uring open completes inline or is handed to a worker.

The probes do no I/O, so they never warm what they measure. Output is
text, JSON Lines or node_exporter textfile metrics; a systemd unit, a cron
file and Prometheus alerting rules are included as examples.")

set(CPACK_DEBIAN_${_dcp_deb_lib}_PACKAGE_NAME ${DCP_DEB_LIB})
set(CPACK_DEBIAN_${_dcp_deb_lib}_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_${_dcp_deb_lib}_PACKAGE_DEPENDS "libmount1, libblkid1")
# The loader's cache is updated by libc's ldconfig trigger (policy 8.1.1).
set(CPACK_DEBIAN_${_dcp_deb_lib}_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/${DCP_DEB_LIB}/triggers)
set(CPACK_DEBIAN_${_dcp_deb_lib}_DESCRIPTION "dentry cache probing library
libdcprobe answers whether resolving a path would block on I/O or is
served from the kernel's dentry cache (openat2 with RESOLVE_CACHED), walks
trees probing every entry, measures how much of a file's data is in the
page cache and explains why a lookup misses.

This package contains the shared library.")

set(CPACK_DEBIAN_LIBDCPROBE-DEV_PACKAGE_NAME libdcprobe-dev)
set(CPACK_DEBIAN_LIBDCPROBE-DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_LIBDCPROBE-DEV_PACKAGE_DEPENDS "${DCP_DEB_LIB} (= ${DCP_DEB_VERSION}), liburing-dev")
set(CPACK_DEBIAN_LIBDCPROBE-DEV_DESCRIPTION "dentry cache probing library - development files
libdcprobe answers whether resolving a path would block on I/O or is
served from the kernel's dentry cache (openat2 with RESOLVE_CACHED), walks
trees probing every entry, measures how much of a file's data is in the
page cache and explains why a lookup misses.

This package contains the headers, the static library, the pkg-config
file and the manual pages of the API (dcprobe(3)).")

# A package for another prefix would name paths that its files do not
# have: refuse it at "package" time, not at configure time.
set(DCP_DEB_CONFIGURED_PREFIX ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_CURRENT_LIST_DIR}/CPackProject.cmake.in ${CMAKE_BINARY_DIR}/CPackProject.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/CPackProject.cmake)

include(CPack)
