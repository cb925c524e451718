/* SPDX-License-Identifier: MIT */
/*
 * dcp_filter.h - which entries of a walk count, and which mounts it goes
 * into: --type, --name, --mindepth and --exclude-fstype as data.
 *
 * A filter never stops a walk from going down: an entry it leaves out is
 * neither counted nor reported, but a directory it leaves out is listed
 * all the same (its entries may match).  Mounts are another matter: one
 * that dcp_filter_skip_mount() refuses is not gone into.
 */
#ifndef DCP_FILTER_H
#define DCP_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_entry;
struct dcp_mounts;

struct dcp_filter {
	unsigned types;		     /* bit (1 << DT_*) per type counted; 0: all */
	const char *const *names;    /* fnmatch(3) globs on the entry's name (a
				      * root's: the last component of its path),
				      * NULL-terminated; NULL: every name */
	int min_depth;		     /* entries shallower are not counted; 0: all */
	const char *const *fstypes;  /* filesystem types not gone into,
				      * NULL-terminated; NULL: none */
};

/* dcp_filter_active - whether F leaves any entry out (types, names or min_depth). */
bool dcp_filter_active(const struct dcp_filter *f);

/*
 * dcp_filter_match - whether entry E passes F's types, names and
 * min_depth: whether it is counted and reported.  An entry of unknown
 * type (DT_UNKNOWN) is typed with fstatat(2) when its probe was cached
 * (its inode is in memory: no I/O); otherwise it matches every type, as
 * finding out would be a lookup.
 */
bool dcp_filter_match(const struct dcp_filter *f, const struct dcp_entry *e);

/*
 * dcp_filter_skip_mount - what a walker's skip_mount() answers for the
 * mount with ID MNT_ID (a directory on another mount than its parent),
 * by MOUNTS, the mount table read at the start: DCP_WALK_MOUNT_EXCLUDE
 * when its type is in F's fstypes; DCP_WALK_MOUNT_UNSAFE when an open
 * there may wait on a daemon or a server (FUSE, NFS...:
 * dcp_pages_fstype_opens_safely()) or when it is not in MOUNTS (made
 * since: not known); else DCP_WALK_MOUNT_ENTER (also when MNT_ID is 0:
 * nothing to judge by).  MOUNTS NULL: the call reads /proc/self/mountinfo
 * itself and frees it before it returns (a mount's safety is judged all the
 * same; a table that cannot be read answers DCP_WALK_MOUNT_UNSAFE), once
 * per call: a walk that crosses many mounts passes a table.
 */
int dcp_filter_skip_mount(const struct dcp_filter *f, const struct dcp_mounts *mounts,
			  uint64_t mnt_id);

#ifdef __cplusplus
}
#endif

#endif
