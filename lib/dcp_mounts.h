/* SPDX-License-Identifier: MIT */
/*
 * dcp_mounts.h - which mount a path or a device is on, its filesystem type,
 * and whether RESOLVE_CACHED lookups can succeed on that filesystem at all.
 *
 * A snapshot of /proc/self/mountinfo is read once with libmount, loaded
 * only when a snapshot is first asked for (a run that needs no mount table
 * loads and reads none); lookups
 * in it are pure memory work and never touch the filesystem, so they do not
 * perturb the dentry cache being measured.
 */
#ifndef DCP_MOUNTS_H
#define DCP_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_mounts;

/* One mount, as the snapshot holds it (strings live as long as the snapshot). */
struct dcp_mount {
	int id;		    /* mount ID (mountinfo's first field) */
	dev_t dev;	    /* st_dev of files on it */
	const char *target; /* mount point */
	const char *fstype; /* "ext4", "fuse.sshfs"... */
	const char *source; /* "/dev/sda1", "server:/export"... ("none" if unset) */
};

/*
 * dcp_mounts_load - read FILE in mountinfo format (NULL: /proc/self/mountinfo).
 * Returns 0 and stores the snapshot in *OUT, or -errno: -ELIBACC when
 * libmount.so.1, which the first call loads (dlopen), cannot be loaded.
 */
int dcp_mounts_load(const char *file, struct dcp_mounts **out);

/* dcp_mounts_free - release a snapshot (NULL is accepted). */
void dcp_mounts_free(struct dcp_mounts *m);

/*
 * dcp_mounts_by_dev - the mount whose files carry st_dev DEV; when several
 * do (bind mounts), the one mounted last.  Returns 0 or -ENOENT.
 */
int dcp_mounts_by_dev(const struct dcp_mounts *m, dev_t dev, struct dcp_mount *out);

/*
 * dcp_mounts_by_id - the mount with mount ID ID (as statx's STATX_MNT_ID
 * and mountinfo's first field give it).  Returns 0 or -ENOENT.
 */
int dcp_mounts_by_id(const struct dcp_mounts *m, uint64_t id, struct dcp_mount *out);

/*
 * dcp_mounts_get - the mount at index I, in mountinfo order (a mount
 * stacked on another comes after it): for a caller that looks at every
 * mount, from 0 until -ENOENT.  Returns 0 or -ENOENT.
 */
int dcp_mounts_get(const struct dcp_mounts *m, size_t i, struct dcp_mount *out);

/*
 * dcp_mnt_id - the mount ID of the object open as FD (statx STATX_MNT_ID,
 * Linux 5.8; no I/O).  Returns the ID, or 0 when the kernel cannot tell.
 */
uint64_t dcp_mnt_id(int fd);

/*
 * dcp_mnt_id_at - the mount ID of PATH relative to DIRFD, without following
 * a final symlink unless FOLLOW.  PATH is looked up with RESOLVE_CACHED and
 * its descriptor statx'ed without syncing: no I/O, and no FUSE daemon or
 * NFS server is asked.  Returns the ID, or 0 (also when PATH is not cached).
 */
uint64_t dcp_mnt_id_at(int dirfd, const char *path, bool follow);

/*
 * dcp_mounts_by_path - the mount PATH lies on, found from the text of the
 * path alone (longest mount point that is a prefix of it, the topmost of
 * stacked mounts): no lookup is made, so symlinks in PATH are not followed.
 * A relative PATH is taken from the current directory; "." and ".." are
 * folded lexically.  Returns 0, -ENOENT, or -ENOMEM.
 */
int dcp_mounts_by_path(const struct dcp_mounts *m, const char *path, struct dcp_mount *out);

/* How RESOLVE_CACHED fares on a filesystem type. */
enum dcp_fs_cache {
	DCP_FS_CACHEABLE = 0, /* cached lookups succeed once the dentries are in memory */
	DCP_FS_NEVER,	      /* every lookup is revalidated outside RCU mode: always a miss */
	DCP_FS_PARTIAL,	      /* parts of the filesystem always miss (/proc/sys...) */
	DCP_FS_REVALIDATE,    /* cached only until a revalidation timeout or lease expires */
	DCP_FS_NO_NEGATIVE,   /* keeps no negative dentries: an absent name always misses */
};

/*
 * dcp_fs_cache_class - classify filesystem type FSTYPE (as in mountinfo).
 * When WHY is not NULL it receives a one-line reason for a person (NULL
 * for DCP_FS_CACHEABLE).
 */
enum dcp_fs_cache dcp_fs_cache_class(const char *fstype, const char **why);

/*
 * dcp_mounts_never_on_path - does a lookup of PATH look a name up in a
 * directory on a filesystem whose lookups the kernel never serves from the
 * cache (DCP_FS_NEVER)?  The directories are the start ("/", or the current
 * directory for a relative PATH) and each one PATH names before its last
 * name, placed by their text alone (dcp_mounts_by_path(): no lookup, no
 * I/O, symlinks not followed).  Returns 1 and, when OUT is not NULL, the
 * first such mount in *OUT; 0 when there is none; or -ENOMEM.
 */
int dcp_mounts_never_on_path(const struct dcp_mounts *m, const char *path, struct dcp_mount *out);

/*
 * The kernel's pseudo filesystems, whose entries are made up by the kernel
 * rather than stored: walks stay out of them by default (--exclude-fstype)
 * and --explain calls their misses "pseudo".
 */
#define DCP_FS_PSEUDO_TYPES                                                            \
	"proc,sysfs,cgroup,cgroup2,debugfs,tracefs,securityfs,pstore,bpf,configfs,"   \
	"fusectl,binfmt_misc,efivarfs,selinuxfs,mqueue,devpts,autofs,rpc_pipefs,nsfs," \
	"hugetlbfs"

/* dcp_fs_is_pseudo - yes/no: is FSTYPE one of DCP_FS_PSEUDO_TYPES? */
bool dcp_fs_is_pseudo(const char *fstype);

/*
 * dcp_fs_flagged - yes/no: can a RESOLVE_CACHED lookup on FSTYPE fail
 * although every dentry is in memory?  (Every class but DCP_FS_CACHEABLE.)
 */
static inline bool dcp_fs_flagged(const char *fstype)
{
	return dcp_fs_cache_class(fstype, NULL) != DCP_FS_CACHEABLE;
}

#ifdef __cplusplus
}
#endif

#endif
