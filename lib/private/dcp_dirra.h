/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_dirra.h - a directory's blocks read ahead (not installed:
 * lib/private/ is the library's own; the functions are hidden, never
 * exported by libdcprobe.so).
 *
 * ext4 lists an indexed directory, and looks a name up in it, one block at
 * a time, waiting for each read.  dcp_dirra_dir() asks FIEMAP where the
 * blocks of a directory of 64 KiB or more are and reads them ahead with
 * posix_fadvise(WILLNEED) on its block device (which only root can usually
 * open): the same blocks, in a few large requests, no dentry or inode
 * touched.  The devices met are remembered in a struct dcp_dirra, which
 * any thread may use.
 */
#ifndef DCP_PRIVATE_DIRRA_H
#define DCP_PRIVATE_DIRRA_H

#include <stdbool.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>

#define DCP_DIRRA_DEVS 16 /* block devices remembered */

/* A block device met, and its node (none: not usable). */
struct dcp_dirra_dev {
	dev_t dev;
	bool none;
	char path[72];
};

struct dcp_dirra {
	pthread_mutex_t lock;
	struct dcp_dirra_dev dev[DCP_DIRRA_DEVS];
	unsigned n;
};

#define DCP_HIDDEN __attribute__((visibility("hidden")))

DCP_HIDDEN void dcp_dirra_init(struct dcp_dirra *ra);
DCP_HIDDEN void dcp_dirra_fini(struct dcp_dirra *ra);
/* dcp_dirra_dir - read directory DIRFD's blocks ahead; ST is its fstat(). */
DCP_HIDDEN void dcp_dirra_dir(struct dcp_dirra *ra, int dirfd, const struct stat *st);

#endif
