/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_mounts_shared.h - which filesystems of a mount table a file
 * with one name may be reached on by two paths (not installed: lib/private/
 * is the library's own).
 *
 * A bind mount shows the same files (st_dev and st_ino) through another
 * mount: a tree that holds a bind mount of one of its own directories, or
 * two roots on two mounts of one filesystem, reach a file with one name
 * twice.  dcp_mounts_load() notes the superblocks mounted more than once
 * where one mount's root (mountinfo's 4th field) is another's or above it;
 * a run's claim set (pages.c) remembers every file on them, and only on
 * them, so that its data counts once.
 */
#ifndef DCP_PRIVATE_MOUNTS_SHARED_H
#define DCP_PRIVATE_MOUNTS_SHARED_H

#include <stdbool.h>
#include <sys/types.h>

struct dcp_mounts;

/* Is DEV (st_dev) a filesystem that two mounts of M show in part alike?  (M NULL: no.) */
bool mounts_dev_shared(const struct dcp_mounts *m, dev_t dev);

#endif
