/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_fsid_cache.h - a run's memory of what the block devices of
 * its filesystems said (not installed: lib/private/ is the library's own).
 *
 * dcp_fsid_of() asks the kernel first (one ioctl: no cost worth keeping);
 * only where the kernel gives no UUID does it read the filesystem's block
 * device (libblkid) or /dev/disk/by-uuid, which costs an open and a probe
 * of the superblock: asked once per device in a run, not once per file.
 * The cache belongs to one run (a dcp_pages_run), never to the process.
 */
#ifndef DCP_PRIVATE_FSID_CACHE_H
#define DCP_PRIVATE_FSID_CACHE_H

#include <pthread.h>
#include <stdint.h>

#include "dcp_fsid.h"

#define FSID_CACHE_SLOTS 32

struct fsid_cache {
	pthread_mutex_t mu;
	unsigned n;
	struct {
		uint64_t dev; /* the block device asked */
		int ret;      /* what dcp_fsid_of_device() returned */
		struct dcp_fsid id;
	} v[FSID_CACHE_SLOTS];
};

/* dcp_fsid_of(FD, OUT), the device step remembered in C (not NULL). */
int fsid_of_cached(struct fsid_cache *c, int fd, struct dcp_fsid *out);

#endif
