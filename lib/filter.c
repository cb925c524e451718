// SPDX-License-Identifier: MIT
/* filter.c - which entries count and which mounts a walk enters (dcp_filter.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>

#include "dcp_filter.h"
#include "dcp_mounts.h"
#include "dcp_pages.h"
#include "dcp_walk.h"

bool dcp_filter_active(const struct dcp_filter *f)
{
	return f->types || (f->names && *f->names) || f->min_depth > 0;
}

bool dcp_filter_match(const struct dcp_filter *f, const struct dcp_entry *e)
{
	if (e->depth < f->min_depth)
		return false;
	if (f->types) {
		unsigned char type = e->type;

		/* A cached entry's inode is in memory: fstatat does no I/O. */
		if (type == DT_UNKNOWN && e->probe == 0) {
			struct stat st;

			if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = (unsigned char)IFTODT(st.st_mode);
		}
		if (type != DT_UNKNOWN && !(f->types & (1u << type)))
			return false;
	}
	if (f->names && *f->names) {
		const char *name = e->depth ? e->name : strrchr(e->path, '/');
		const char *const *g;

		/* A root's name is the last component of its path ("/" for "/"). */
		name = !name ? e->path : e->depth ? name : name[1] ? name + 1 : name;
		for (g = f->names; *g; g++)
			if (fnmatch(*g, name, 0) == 0)
				break;
		if (!*g)
			return false;
	}
	return true;
}

int dcp_filter_skip_mount(const struct dcp_filter *f, const struct dcp_mounts *mounts,
			  uint64_t mnt_id)
{
	struct dcp_mounts *own = NULL;
	struct dcp_mount mt;
	int ret = DCP_WALK_MOUNT_ENTER;

	if (!mnt_id)
		return DCP_WALK_MOUNT_ENTER; /* nothing to judge by */
	/* No table given: this call reads one (the FUSE, NFS... rule below
	 * holds all the same); not read, nothing is known of the mount. */
	if (!mounts) {
		if (dcp_mounts_load(NULL, &own) < 0)
			return DCP_WALK_MOUNT_UNSAFE;
		mounts = own;
	}
	/* Made after the table was read: what it is, and whether an open
	 * there may wait, is not known. */
	if (dcp_mounts_by_id(mounts, mnt_id, &mt) < 0) {
		ret = DCP_WALK_MOUNT_UNSAFE;
		goto out;
	}
	for (const char *const *t = f->fstypes; t && *t; t++)
		if (strcmp(*t, mt.fstype) == 0) {
			ret = DCP_WALK_MOUNT_EXCLUDE;
			goto out;
		}
	/* FUSE, NFS...: an open may wait on a daemon whoever mounted it can stop. */
	if (!dcp_pages_fstype_opens_safely(mt.fstype))
		ret = DCP_WALK_MOUNT_UNSAFE;
out:
	dcp_mounts_free(own);
	return ret;
}
