// SPDX-License-Identifier: MIT
/*
 * dirra.c - a large ext2/3/4 directory's blocks read ahead, in a few large
 * requests, before it is listed or its names looked up: the walk's
 * DCP_WALK_READAHEAD and a manifest's restore (private/dcp_dirra.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "private/dcp_dirra.h"

#define RA_MIN (64 * 1024)	   /* a directory this large... */
#define RA_MAX (64u << 20)	   /* ...has at most this much read ahead */
#define RA_EXTENTS 32		   /* FIEMAP extents asked at once */
/* posix_fadvise(WILLNEED) reads at most the device's read-ahead window or
 * largest request (max(read_ahead_kb, max_sectors_kb)) per call: a longer
 * extent is asked for in pieces below either. */
#define RA_PIECE (128u << 10)
#define EXT_SUPER_MAGIC 0xEF53	   /* ext2, ext3 and ext4 */

void dcp_dirra_init(struct dcp_dirra *ra)
{
	memset(ra, 0, sizeof(*ra));
	pthread_mutex_init(&ra->lock, NULL);
}

void dcp_dirra_fini(struct dcp_dirra *ra)
{
	pthread_mutex_destroy(&ra->lock);
}

/* "/dev/NAME" for block device DEV, from /sys/dev/block: false if none. */
static bool ra_dev_path(dev_t dev, char *path, size_t size)
{
	char ue[64], buf[512];
	const char *p, *name;
	size_t n;
	ssize_t len;
	int fd;

	snprintf(ue, sizeof(ue), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	fd = open(ue, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	if (!strncmp(buf, "DEVNAME=", 8))
		name = buf + 8;
	else if ((p = strstr(buf, "\nDEVNAME=")))
		name = p + 9;
	else
		return false;
	n = strcspn(name, "\n");
	if (!n || n + 6 > size || memmem(name, n, "..", 2))
		return false;
	snprintf(path, size, "/dev/%.*s", (int)n, name);
	return true;
}

/*
 * The block device DEV, opened read-only, or -1.  Only the node whose
 * fstat says it is DEV is kept; a device that cannot be opened (not root)
 * is remembered and not tried again.
 */
static int ra_dev_open(struct dcp_dirra *w, dev_t dev)
{
	struct dcp_dirra_dev d = { .dev = dev };
	bool known = false;
	struct stat st;
	int fd = -1, err = 0;

	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < w->n; i++) {
		if (w->dev[i].dev == dev) {
			d = w->dev[i];
			known = true;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	if (d.none)
		return -1;
	if (known || ra_dev_path(dev, d.path, sizeof(d.path))) {
		fd = open(d.path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		err = fd < 0 ? errno : 0;
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev)) {
			close(fd);
			fd = -1;
			err = ENODEV;
		}
	} else {
		err = ENODEV;
	}
	/* Out of descriptors or memory: try again with the next directory. */
	if (err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR)
		return -1;
	d.none = fd < 0;
	pthread_mutex_lock(&w->lock);
	known = false;
	for (unsigned i = 0; i < w->n && !known; i++)
		known = w->dev[i].dev == dev;
	if (!known && w->n < DCP_DIRRA_DEVS)
		w->dev[w->n++] = d;
	pthread_mutex_unlock(&w->lock);
	return fd;
}

/*
 * Read directory DIRFD's blocks ahead, before it is listed (the walk's
 * DCP_WALK_READAHEAD) or its names are looked up (a manifest's restore).  ext4 lists an indexed directory one block at a
 * time in hash order, waiting for each read and reading nothing ahead, so
 * the thread listing a directory of 200,000 entries waits for over a
 * thousand reads in series while the other threads run out of entries.
 * The blocks of an ext2/3/4 directory live in the page cache of its block
 * device: FIEMAP says where they are, and posix_fadvise(WILLNEED) on the
 * device reads them in a few large requests, which the listing then finds
 * cached.  Nothing else changes: the same blocks are read (at most RA_MAX
 * of them ahead), no dentry or inode is touched.  Only directories of
 * RA_MIN bytes or more, and only when the device can be opened read-only
 * (usually by root only); otherwise the directory is listed as before.
 */
void dcp_dirra_dir(struct dcp_dirra *w, int dirfd, const struct stat *st)
{
	union {
		struct fiemap fm;
		char raw[sizeof(struct fiemap) + RA_EXTENTS * sizeof(struct fiemap_extent)];
	} b;
	struct fiemap *fm = &b.fm;
	uint64_t start = 0, done = 0;
	struct statfs sfs;
	bool last = false;
	int dev;

	/* No block device (tmpfs, NFS, FUSE, overlay...): nothing to ask. */
	if (st->st_size < RA_MIN || !major(st->st_dev) || fstatfs(dirfd, &sfs) < 0 ||
	    sfs.f_type != EXT_SUPER_MAGIC)
		return;
	dev = ra_dev_open(w, st->st_dev);
	if (dev < 0)
		return;
	while (!last && done < RA_MAX) {
		uint64_t asked = start;

		memset(&b, 0, sizeof(b));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = RA_EXTENTS;
		if (ioctl(dirfd, FS_IOC_FIEMAP, fm) < 0 || !fm->fm_mapped_extents)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents && !last; i++) {
			const struct fiemap_extent *e = &fm->fm_extents[i];

			last = e->fe_flags & FIEMAP_EXTENT_LAST;
			start = e->fe_logical + e->fe_length;
			/* Only blocks where FIEMAP says, as they are on disk. */
			if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
					   FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
					   FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_UNWRITTEN |
					   FIEMAP_EXTENT_NOT_ALIGNED))
				continue;
			/* Never a length of 0: to posix_fadvise it means "to the end". */
			for (uint64_t off = 0, len; off < e->fe_length && done < RA_MAX; off += len) {
				len = e->fe_length - off;
				len = len < RA_PIECE ? len : RA_PIECE;
				len = len < RA_MAX - done ? len : RA_MAX - done;
				(void)posix_fadvise(dev, (off_t)(e->fe_physical + off), (off_t)len,
						    POSIX_FADV_WILLNEED);
				done += len;
			}
			last = last || done >= RA_MAX;
		}
		/* An extent of length 0 (a directory changing under us)
		 * would ask for the same extents forever. */
		if (start <= asked)
			break;
	}
	close(dev);
}
