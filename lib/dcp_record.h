/* SPDX-License-Identifier: MIT */
/*
 * dcp_record.h - a recording of the files and directories under some roots
 * that processes opened, read, executed or listed: fanotify watching their
 * filesystems, each event naming a directory by its file handle and the
 * entry by its name, so that nothing is opened while it watches.
 *
 * The life of a recording:
 *   dcp_record_new()    marks the roots' filesystems (watching starts);
 *   dcp_record_read()   whenever dcp_record_fd() is readable: the events
 *                       queued so far, each kept or not by its process
 *                       (struct dcp_procs, when given) and its directory;
 *   dcp_record_stop()   removes the marks and reads what was queued before;
 *                       the fanotify descriptor is closed (watching ended);
 *   dcp_record_items()  each recorded entry, by the path it was used by,
 *                       checked once more from the dentry cache
 *                       (RESOLVE_CACHED: a name that left it is not looked
 *                       up again): gone, replaced, or still there;
 *   dcp_record_free().
 *
 * A directory is resolved to its path when it is first used (an O_PATH
 * open by handle of a directory just used, and /proc/self/fd), so a file is
 * recorded under the path it was used by; a directory outside the roots
 * gets an evictable ignore mark, and so does each recorded file (its
 * later opens cost the watched processes nothing more).  What fanotify
 * does not report is not recorded: stat and other lookups without an open,
 * the symlinks a path went through, and the pages of a file mapped or
 * opened before the recording started.
 *
 * Needs CAP_SYS_ADMIN (filesystem marks) and CAP_DAC_READ_SEARCH (opens
 * by handle).  Prints nothing, installs no handler, starts no thread.
 * Functions return 0 or -errno.
 */
#ifndef DCP_RECORD_H
#define DCP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_mounts;
struct dcp_procs;
struct dcp_record;

enum {
	DCP_RECORD_NO_IGNORE_MARKS = 1 << 0, /* every event reaches the recorder (tests) */
	DCP_RECORD_LISTED = 1 << 1,	     /* also the cached names of the directories
					      * listed, as names only */
};

struct dcp_record_opts {
	const char *const *roots;	/* directories, absolute or not */
	size_t nroots;
	const struct dcp_mounts *mounts; /* the mount table (dcp_mounts_load());
					  * NULL: dcp_record_new() reads one */
	struct dcp_procs *procs;	/* whose events are kept; NULL: every process's */
	unsigned flags;			/* DCP_RECORD_* */
	size_t *failed_root;		/* optional: which root a failure of
					 * dcp_record_new() is about */
};

/*
 * dcp_record_new - open a fanotify group reporting directory handles and
 * names (Linux 5.9; with O->procs, pidfds too, 5.15) and mark the
 * filesystem of each root and of each mount below a root, but those of
 * pseudo filesystems (dcp_fs_is_pseudo()).  Each root is opened O_PATH,
 * must be a directory, and is recorded by its real path (symlinks
 * resolved); each marked filesystem's root directory is opened before any
 * mark exists (open_by_handle_at needs it).  Nothing on a FUSE, NFS, CIFS,
 * 9p, ceph... mount (dcp_pages_fstype_opens_safely(), by O->mounts) is
 * ever looked up, stat'ed, read or opened, then or later: a root on one,
 * or reached through one, is refused, and a mount below a root behind one
 * is not watched (nor is such a mount itself).  Returns 0 and *OUT,
 * watching; or -ENOTDIR/-ENOENT/... (a root; *O->failed_root says which),
 * -EREMOTE (a root on or through a FUSE, NFS... mount), -EPERM (no
 * CAP_SYS_ADMIN), -EINVAL (fanotify without directory handles: before
 * 5.9), -EXDEV (a root on a btrfs subvolume, which a filesystem mark
 * cannot watch), -EOPNOTSUPP or -ENODEV (a root's filesystem has no file
 * handles, *O->failed_root says which), -ENOMEM.  O->mounts must outlive
 * the recording; when it is NULL the recording reads /proc/self/mountinfo
 * itself (dcp_mounts_load()'s error if it cannot) and frees it with the
 * recording: the FUSE, NFS... rule holds the same either way.
 */
int dcp_record_new(const struct dcp_record_opts *o, struct dcp_record **out);

/* dcp_record_fd - the fanotify descriptor, to poll; -1 once stopped. */
int dcp_record_fd(const struct dcp_record *r);

/*
 * dcp_record_read - read every event queued now, until none is (the
 * descriptor is non-blocking).  With O->procs, its fork events are read
 * before each batch and dcp_procs_settled() is called once the queue is
 * empty.  Returns 0 or -errno (-ENOMEM: what was read before is kept).
 */
int dcp_record_read(struct dcp_record *r);

/*
 * dcp_record_stop - stop watching: remove the marks, read the events
 * queued before, close the fanotify descriptor.  Returns what the last
 * dcp_record_read() returned.  Nothing is watched after it returns.
 */
int dcp_record_stop(struct dcp_record *r);

/* One entry of a recording. */
struct dcp_record_item {
	const char *path;    /* absolute, the one it was used by */
	size_t len;
	size_t root;	     /* index of the root (longest) it lies under */
	int depth;	     /* its components below that root: 0 for the root */
	unsigned char kind;  /* DT_*: DT_DIR for a directory on the way */
	unsigned flags;	     /* DCP_RECORD_ITEM_* */
};

enum {
	DCP_RECORD_ITEM_USED = 1 << 0,	 /* opened, read, executed or listed by them */
	DCP_RECORD_ITEM_LISTED = 1 << 1, /* a directory they listed */
	DCP_RECORD_ITEM_NAME = 1 << 2,	 /* DCP_RECORD_LISTED: a cached name in a
					  * listed directory: a name only, no data */
	DCP_RECORD_ITEM_EVICTED = 1 << 3, /* no longer in the dentry cache */
};

/*
 * dcp_record_items - after dcp_record_stop(), hand EACH every entry, in
 * the order of a walk (a directory before what it holds, names in byte
 * order): the roots (depth 0), every directory between a root and a
 * recorded entry, the recorded directories and files, and with
 * DCP_RECORD_LISTED the cached names of the directories listed.  A
 * recorded name is checked with RESOLVE_CACHED: absent now, it is gone
 * (left out, counted); not in the cache, it is kept and counted evicted;
 * another file now than the one used (its file handle), it is kept and
 * counted replaced.  Stops when EACH returns < 0 and returns that;
 * else 0, or -ENOMEM.
 */
int dcp_record_items(struct dcp_record *r, int (*each)(const struct dcp_record_item *it, void *arg),
		     void *arg);

/* What a recording saw (counts of events are of fanotify's, merged ones once). */
struct dcp_record_stats {
	uint64_t events;	     /* events read, overflows included */
	uint64_t reads;		     /* read() calls that returned events */
	uint64_t overflows;	     /* the queue overflowed: events were lost */
	uint64_t own;		     /* the recorder's own (expected 0) */
	uint64_t other;		     /* of processes not theirs */
	uint64_t unattributed;	     /* of processes that could not be told */
	uint64_t unattributed_files; /* distinct entries only such events named */
	uint64_t outside;	     /* in directories outside the roots */
	uint64_t outside_dirs;	     /* those directories */
	uint64_t files;		     /* entries recorded (not directories) */
	uint64_t dirs;		     /* directories opened or listed */
	uint64_t listed_names;	     /* DCP_RECORD_LISTED: names added */
	uint64_t gone;		     /* recorded names absent at the end */
	uint64_t replaced;	     /* another file at the name at the end */
	uint64_t evicted;	     /* recorded names out of the dentry cache at the end */
	uint64_t stale_dirs;	     /* directories deleted before they were resolved */
	uint64_t ignore_marks;	     /* ignore marks placed */
	uint64_t ignore_marks_failed; /* ... that could not be (max_user_marks) */
};

/*
 * dcp_record_fds_needed - the descriptors a recording needs free, besides
 * those it holds, to read its events: an open by handle per event and one
 * spare, and with PIDFDS (O->procs given) one pidfd per event the kernel
 * opens for a read, which is bounded by the descriptors free (at least
 * one event).  A caller checks dcp_fd_free() against it once
 * dcp_record_new() returned: with fewer, events go unresolved (counted,
 * dcp_record_unresolved()).
 */
unsigned dcp_record_fds_needed(bool pidfds);

/*
 * dcp_record_unresolved - how many events and entries R could not resolve
 * (an open by handle or a lookup that failed with EMFILE, ENFILE, ENOMEM...:
 * not a directory or file deleted, which is counted as stale or gone): what
 * they named may be missing from the recording, which is then incomplete.
 * The first such error (-errno) goes to *ERR when ERR is not NULL.
 */
uint64_t dcp_record_unresolved(const struct dcp_record *r, int *err);

/* dcp_record_stats - what R saw so far (the end's counts after dcp_record_items()). */
void dcp_record_stats(const struct dcp_record *r, struct dcp_record_stats *st);

/* One watched filesystem. */
struct dcp_record_fs {
	const char *path;   /* the root, or the mount below a root, it was marked from */
	const char *fstype;
	int err;	    /* 0: marked; else -errno: a mount below a root not watched */
};

/* dcp_record_fs - the watched filesystem I, from 0 until -ENOENT. */
int dcp_record_fs(const struct dcp_record *r, size_t i, struct dcp_record_fs *out);

/* dcp_record_root - the real path of root I (NULL past the last). */
const char *dcp_record_root(const struct dcp_record *r, size_t i);

/* dcp_record_free - release R (NULL is accepted); stops it first. */
void dcp_record_free(struct dcp_record *r);

#ifdef __cplusplus
}
#endif

#endif
