/* SPDX-License-Identifier: MIT */
/*
 * dcp_walk.h - the parallel tree walker shared by dcache-probe and warm.
 *
 * The walker lists directories with getdents64 and hands every entry to a
 * visitor callback *before* doing anything else to it, so a probe in the
 * visitor sees the entry exactly as the walk found it.  Work is relative to
 * open directory descriptors (no full-path lookups, no PATH_MAX limit);
 * directory descriptors are recycled when the descriptor budget runs low.
 *
 * Callbacks run concurrently on the worker threads; e->worker tells which
 * (0 .. dcp_walk_threads()-1), so per-thread state needs no locking.
 * All entries of one directory are visited by one thread, in order.
 */
#ifndef DCP_WALK_H
#define DCP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_walk;

/* A directory being walked, as callbacks see it. */
struct dcp_dir {
	const struct dcp_dir *parent; /* NULL for a root */
	int depth;		      /* 0 for a root */
	dev_t dev;		      /* from fstat of the open directory */
	ino_t ino;
	uint64_t mnt_id;	      /* statx STATX_MNT_ID: the mount it is on */
	uid_t uid;		      /* its owner and mode, from the same fstat */
	mode_t mode;
	/* With DCP_WALK_PROBE, as its own entry was visited (for dcp_explain): */
	size_t pathlen;		      /* length of its path: a prefix of its entries' */
	int probe, inner;	      /* its entry's dcp_entry.probe and .inner */
	bool link;		      /* its entry was a symlink, followed */
	/*
	 * The topmost cold directory from its root down to it (itself
	 * included): one whose own lookup, or lookups inside it, missed, so
	 * that every entry below misses; NULL when it is not cold.  It stays
	 * valid while this directory does (a directory outlives its children).
	 */
	const struct dcp_dir *cold_top;
	/*
	 * Several roots: this directory was listed before in the run (from
	 * another root, or through a bind mount or a followed link), so its
	 * entries take the first listing's probes, and are repeats
	 * (dcp_entry.again) unless its root now lists it more often than any
	 * root before; a per-directory row for it was already due to the
	 * first listing.
	 */
	bool again;
	size_t root;		      /* index of its root, as dcp_entry.root */
	void *data;		      /* opts.dir_data_size bytes, zeroed */
};

/* One entry handed to the visitor. */
struct dcp_entry {
	int dirfd;	   /* the parent's descriptor; AT_FDCWD for a root */
	const char *name;  /* relative to dirfd; a root's path as given */
	const char *path;  /* full path for output (NUL-terminated, any length) */
	size_t pathlen;
	const struct dcp_dir *dir; /* the parent directory; NULL for a root */
	unsigned char type; /* DT_* from getdents64; DT_UNKNOWN for roots */
	ino_t ino;	   /* d_ino; 0 for roots */
	int depth;	   /* 0 for a root */
	unsigned worker;   /* index of the calling thread */
	size_t root;	   /* index of the root, in the order added */
	int probe;	   /* with DCP_WALK_PROBE: the dcp_probe_at() result
			    * (0 cached, -ENOENT, -EAGAIN, -errno) of the
			    * entry's full path, made before anything else
			    * touched the entry; a root is followed under
			    * DCP_WALK_FOLLOW(_ROOTS).  Below a directory whose
			    * own lookup or whose inside missed (see INNER),
			    * every entry is -EAGAIN: its full path misses. */
	int inner;	   /* with DCP_WALK_PROBE, for a directory, a DT_UNKNOWN
			    * entry or a followed link whose probe was 0: the
			    * probe of "NAME/.", i.e. whether lookups *inside*
			    * it run from the cache for this caller (a POSIX
			    * ACL not yet loaded fails them for non-owners,
			    * root included); else equal to PROBE */
	/*
	 * Several roots: this entry was (or will be) visited from another
	 * root as well, and the other visit counts it.  Its PROBE and INNER
	 * are the one measurement of the run, made before the run touched
	 * it, whichever root got there first.  Count it for e->root only:
	 * never in a total, a per-mount row or a printed record (as du -c
	 * counts an inode once).  A root that reaches an entry by several
	 * paths (-L, a bind mount inside it) visits it each time; the total
	 * counts it as often as the root that visits it most often, so a
	 * visit is a repeat only once another root has counted as many.
	 */
	bool again;
};

/* What the visitor returns. */
enum {
	DCP_WALK_DESCEND = 0, /* list this entry if it is a directory */
	DCP_WALK_PRUNE = 1,   /* do not descend into it */
	DCP_WALK_ABORT = 2,   /* stop the whole walk as soon as possible */
};

/* What skip_mount() answers. */
enum {
	DCP_WALK_MOUNT_ENTER = 0,
	DCP_WALK_MOUNT_EXCLUDE = 1,
	DCP_WALK_MOUNT_UNSAFE = 2,
};

/* dcp_walk_opts.flags */
enum {
	/*
	 * -L: follow every symlink (cycles detected on entry).  A link whose
	 * (followed) probe was not cached is followed only once everything
	 * else is walked: following it would warm its target's path before
	 * the walk probed the entries on that path.
	 */
	DCP_WALK_FOLLOW = 1 << 0,
	DCP_WALK_FOLLOW_ROOTS = 1 << 1, /* -H: follow symlinks given as roots */
	DCP_WALK_XDEV = 1 << 2,		/* -x: stay on each root's filesystem */
	DCP_WALK_INODE_ORDER = 1 << 3,	/* visit a directory's entries by inode */
	/*
	 * Probe every entry with RESOLVE_CACHED before visiting it and pass
	 * the result in e->probe.  A directory's entries are probed in
	 * batches through io_uring where available (see dcp_batch.h), which
	 * is cheaper than one openat2(2) per entry and warms nothing.
	 */
	DCP_WALK_PROBE = 1 << 4,
	DCP_WALK_PROBE_SYNC = 1 << 5,	/* ...but never through io_uring */
	/*
	 * Pass dir_done the directory's path (to depth done_path_depth).
	 * Building it costs O(depth) per directory, so a walk that does not
	 * print per-directory rows leaves it out and stays linear.
	 */
	DCP_WALK_DONE_PATHS = 1 << 6,
	/*
	 * The visitor never descends into a directory that was not cached
	 * (--no-perturb): the walker then opens nothing to learn where a
	 * cold root lies either.
	 */
	DCP_WALK_NO_PERTURB = 1 << 7,
	/*
	 * Read a large directory's blocks ahead, in a few large requests,
	 * before listing it: a directory of 64 KiB or more on ext2/3/4,
	 * through its block device where that can be opened read-only
	 * (usually by root only).  ext4 lists an indexed directory one
	 * waited-for block at a time.  The same blocks are read, sooner;
	 * no dentry or inode is touched.  warm sets it; a probe never does.
	 */
	DCP_WALK_READAHEAD = 1 << 8,
};

struct dcp_walk_opts {
	unsigned flags;
	unsigned threads;   /* worker threads; 0 = one per online CPU */
	int max_depth;	    /* deepest depth listed; -1 unlimited, 0 = roots only */
	const char *const *excludes; /* fnmatch(3) globs, NULL-terminated: matched
				      * against the name, or against the full
				      * path when the glob contains a '/'.  An
				      * excluded entry is neither visited nor
				      * descended into. */
	size_t dir_data_size; /* bytes of per-directory user data (dcp_dir.data) */
	unsigned probe_flags; /* dcp_probe_at() flags for DCP_WALK_PROBE (DCP_FOLLOW) */
	int done_path_depth;  /* with DCP_WALK_DONE_PATHS: deepest directory
			       * whose path dir_done gets; -1 every one */
	/*
	 * Descriptors the caller holds besides the walker's, per walker
	 * thread and in all: the walker keeps its budget of directory
	 * descriptors (and its thread count) within the descriptors still
	 * free (dcp_fd_free()) less these.
	 */
	unsigned fds_per_thread, fds_extra;

	/*
	 * visit - called once per entry (roots included), before the walker
	 * touches it.  Returns DCP_WALK_DESCEND, DCP_WALK_PRUNE or DCP_WALK_ABORT.
	 */
	int (*visit)(const struct dcp_entry *e, void *arg);
	/*
	 * error - the walk could not go on at E: ERR is the positive errno of
	 * opening or listing a directory (EACCES, ENOENT for an entry that
	 * vanished, EMFILE...), of finding a DT_UNKNOWN entry's type, or ELOOP
	 * for a directory cycle under DCP_WALK_FOLLOW.  Optional.
	 */
	void (*error)(const struct dcp_entry *e, int err, void *arg);
	/*
	 * dir_done - directory D and everything below it are finished; PATH
	 * is its path under DCP_WALK_DONE_PATHS (within done_path_depth),
	 * else NULL.  Calls are serialised (one at a time), children before
	 * their parent, so D->data may be added into D->parent->data without
	 * locking.  Optional.
	 */
	void (*dir_done)(const struct dcp_dir *d, const char *path, size_t pathlen,
			 void *arg);
	/*
	 * skip_mount - a directory below a root is on another mount than its
	 * parent (MNT_ID), asked before it is opened: DCP_WALK_MOUNT_ENTER,
	 * DCP_WALK_MOUNT_EXCLUDE to leave it unlisted (it was visited, like a
	 * mount point under DCP_WALK_XDEV), or DCP_WALK_MOUNT_UNSAFE to leave
	 * it unlisted and say so through unvisited() (an open there may wait
	 * on a FUSE daemon or a server).  Optional.
	 */
	int (*skip_mount)(uint64_t mnt_id, void *arg);
	/*
	 * unvisited - directory E was not listed because skip_mount() said
	 * DCP_WALK_MOUNT_UNSAFE: what it holds is unknown.  E->probe is its
	 * own entry's probe.  Optional.
	 */
	void (*unvisited)(const struct dcp_entry *e, void *arg);
	/*
	 * alias - root ROOT is the same tree as the earlier root SAME_AS (the
	 * same name, or the same cached directory by another path: "./T",
	 * a bind mount, a symlink followed under -H or -L; or two cold roots
	 * that are one directory, which both miss everywhere).  ROOT is not
	 * walked and not visited: it stands for SAME_AS's figures.  Called
	 * from dcp_walk_finish() or, for cold roots, from a worker once
	 * everything warm is walked; never concurrently.  Optional.
	 */
	void (*alias)(size_t root, size_t same_as, void *arg);
	void *arg;
};

/*
 * dcp_walk_new - start a walk: spawns the worker threads, which wait for
 * roots.  Returns 0 and stores the walk in *OUT, or -errno.
 */
int dcp_walk_new(const struct dcp_walk_opts *opts, struct dcp_walk **out);

/*
 * dcp_walk_add - queue one root PATH (copied).  With max_depth 0 (no
 * recursion) roots stream: this may block while many are queued, so a
 * long path list is probed in flat memory.  Otherwise roots are gathered
 * and walked from dcp_walk_finish(), so that roots that overlap share one
 * measurement:
 *  - every root is probed first, before the run opens anything;
 *  - a root whose probe was cached is placed (device and inode) by opens
 *    with RESOLVE_CACHED, which warm nothing; one equal to an earlier
 *    root is an alias (opts.alias) and is not walked;
 *  - roots whose probe missed are walked last: opening them warms their
 *    path, which may run through another root's tree;
 *  - a directory listed a second time takes the first listing's probes,
 *    and its entries are repeats (dcp_entry.again) unless its root now
 *    lists it more often than any root before (under -L a root may list
 *    a directory by several paths, and counts each).
 * Returns 0, or -ECANCELED once the walk was aborted.
 */
int dcp_walk_add(struct dcp_walk *w, const char *path);

/*
 * dcp_walk_finish - wait until every queued root is walked, stop the
 * threads and free the walk.  Returns 0, -ECANCELED when a visitor
 * aborted, or the -errno of a failure of the walker itself (-ENOMEM).
 */
int dcp_walk_finish(struct dcp_walk *w);

/*
 * dcp_walk_threads - how many worker threads the walk runs: fewer than
 * asked when descriptors are short, or when a task limit (ulimit -u,
 * pids.max) let only some be created; dcp_walk_new() fails with -EAGAIN
 * only when not even one could.
 */
unsigned dcp_walk_threads(const struct dcp_walk *w);

/*
 * dcp_fd_threads - how many of THREADS threads, each holding up to
 * PER_THREAD descriptors at once, fit in the descriptors still free
 * (dcp_fd_free(): descriptors given by the parent count) less a small
 * reserve (the command's own); 0 when not even one does.  For
 * pools that open files outside a walk (lists of paths), and to size a
 * walker's helpers.
 */
unsigned dcp_fd_threads(unsigned threads, unsigned per_thread);

/*
 * dcp_walk_lookup - look NAME up relative to DIRFD (following symlinks,
 * the last component included, when FOLLOW) without looking any name up
 * on a mount that SKIP_MOUNT (as in struct dcp_walk_opts, called with ARG)
 * calls DCP_WALK_MOUNT_UNSAFE: a path that leaves DIRFD's mount is walked
 * one component at a time, so that each mount met is judged by its mount
 * point before anything behind it is looked up, and symlinks are read only
 * on mounts so judged.  A FUSE daemon that its user stopped is then never
 * asked (a plain lookup through a link into its mount waits for ever).
 * What is looked up is warmed, as by any lookup.  SKIP_MOUNT may be NULL
 * (every mount entered).  The object reached may itself be the root of
 * an unsafe mount (nothing in it was looked up): its caller judges that.
 * Returns an O_PATH descriptor of the object reached and its type in *MODE
 * (when not NULL), -EREMOTE when the path runs through an unsafe mount, or
 * -errno.
 */
int dcp_walk_lookup(int dirfd, const char *name, bool follow,
		    int (*skip_mount)(uint64_t mnt_id, void *arg), void *arg, mode_t *mode);

/*
 * dcp_walk - convenience: walk NROOTS paths with OPTS and finish.
 * Returns as dcp_walk_finish().
 */
int dcp_walk(const char *const *roots, size_t nroots,
	     const struct dcp_walk_opts *opts);

#ifdef __cplusplus
}
#endif

#endif
