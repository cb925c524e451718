// SPDX-License-Identifier: MIT
/*
 * walk.c - a parallel directory tree walker that never perturbs what it
 * hands out.
 *
 * Design:
 *  - Work is a LIFO stack of directories (depth-first keeps both the
 *    pending set and the number of open descriptors small) shared by
 *    worker threads under one lock.  Roots are work items too, so a long
 *    path list is walked in parallel and streams in flat memory.
 *  - A directory is a refcounted node: itself while it is listed, plus
 *    one reference per child directory still alive.  When the count drops
 *    to zero its subtree is complete: dir_done() runs, then the parent
 *    loses a reference (post-order, like du).
 *  - A node keeps its descriptor open while children still have to be
 *    opened relative to it.  When the descriptor budget (derived from
 *    RLIMIT_NOFILE) runs out, idle ("parked") descriptors are closed and
 *    reopened later with O_PATH from the nearest open ancestor, one
 *    component at a time, so depth is never limited by PATH_MAX.
 *  - Every entry is visited before the walker does anything to it; the
 *    walker only opens a directory after the visitor allowed it.
 *  - With DCP_WALK_PROBE an entry's probe stands for its full path: below
 *    a directory whose own lookup, or lookups inside it, missed ("cold"),
 *    every entry misses too, whatever a probe relative to the now open
 *    directory would say (opening it warmed it, and loaded its ACL).
 *  - Under DCP_WALK_FOLLOW, a link whose probe was not cached is followed
 *    only after everything else: following warms the target's whole path,
 *    which may hold entries the walk has not probed yet.
 *  - Several roots of a recursive walk share one measurement per entry
 *    ("one run, one truth"): they are gathered, probed and placed before
 *    anything is opened (plan_roots), cold ones are walked last, and every
 *    listed directory leaves its entries' probes in a table (struct seen)
 *    that a second listing of the same directory takes instead of probing.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dcp_batch.h"
#include "dcp_mounts.h"
#include "dcp_probe.h"
#include "dcp_report.h"
#include "dcp_util.h"
#include "dcp_walk.h"
#include "private/dcp_dirra.h"
#include "private/dcp_thread.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif
#ifndef RESOLVE_NO_XDEV
#define RESOLVE_NO_XDEV 0x01
#endif

#define DENTS_BUF (64 * 1024)
#define CHUNK_ENTS 4096 /* entries of a large directory read, probed and visited at once */
#define MAX_QUEUED_ROOTS 1024
#define FD_RESERVE 8	   /* stdio and the command's own descriptors */
#define FD_BUDGET_MAX 4096 /* leave most of a large limit to the command */

struct node {
	struct dcp_dir pub;
	struct node *parent;
	struct node *up;     /* set by needed_ancestor(): skips closed ancestors */
	char *name;	     /* relative to parent; a root's path as given */
	size_t namelen;
	uint64_t id;	     /* unique in the walk: names the node in path caches */
	size_t root;
	dev_t rootdev;
	int fd;		     /* -1 when closed (not yet opened, or evicted) */
	unsigned pins;	     /* threads using fd right now */
	unsigned refs;	     /* self while listed + live child nodes */
	unsigned pending;    /* queued children not yet opened: they need fd */
	bool counted;	     /* this node is in its parent's pending count */
	bool listing;	     /* fd in use by the thread listing it */
	bool listed;	     /* it was listed: dir_done reports it */
	bool via_link;	     /* reached by following a symlink */
	bool linked;	     /* it or an ancestor below its root was reached so */
	bool cold;	     /* its full path, or lookups inside it, missed */
	bool deferred;	     /* a link to follow once the rest is walked */
	bool entry_again;    /* its own entry was a repeat (dcp_entry.again) */
	bool same_mnt;	     /* opened with RESOLVE_NO_XDEV: on its parent's mount */
	struct node *lru_prev, *lru_next; /* parked: fd open, pins == 0 */
};

struct item {
	struct item *next;
	struct node *node; /* a directory to list, or NULL for a root */
	size_t root;
	bool planned;	   /* a root probed by plan_roots(): PROBE and INNER */
	bool again;	   /* a root whose own entry another visit counts */
	bool claim_late;   /* its parent was cold at plan time: claim it later */
	int probe, inner;
	dev_t dev;	   /* a root's identity: plan_roots(), release_cold_roots() */
	ino_t ino;
	struct item *alias_next; /* release_cold_roots(): placed cold roots */
	char path[];	   /* a root's path */
};

struct worker {
	struct dcp_walk *w;
	pthread_t thread;
	unsigned idx;
	struct dcp_buf path;	/* path of the directory being listed */
	uint64_t *pathids;	/* ids of the nodes whose paths prefix it... */
	size_t *pathends;	/* ...and where each of those paths ends */
	size_t pathdepth, pathcap; /* entries valid in pathids/pathends */
	struct node **climb;	/* scratch for worker_path() */
	size_t climbcap;
	struct dcp_buf names;	/* names of its entries, NUL-terminated */
	struct dcp_buf inames;	/* "NAME/." of the directories among them */
	struct ent *ents;
	size_t nents, cap;
	struct node **kids;
	size_t nkids, kidcap;
	char *dents;
	struct dcp_batch *batch;   /* with DCP_WALK_PROBE, made by the worker */
	const char **namev;	   /* one batch of names to probe... */
	unsigned *flagv;
	int *resv;		   /* ...and their results */
	size_t vcap;
	/*
	 * A large directory is read a chunk ahead while the other threads
	 * probe the current one: the next chunk's entries wait here
	 * (chunk_swap()), and the current chunk's shares in flight in SH.
	 */
	struct chunkbuf {
		struct dcp_buf names, inames;
		struct ent *ents;
		size_t nents, cap;
		const char **namev;
		unsigned *flagv;
		int *resv;
		size_t vcap;
	} spare;
	struct probe_share *sh;
	size_t nsh;
	int shfd;
	size_t nprobes;		   /* probes of the entries themselves (probe_entries) */
};

/*
 * A share of one chunk's probes, handed by the thread listing a large
 * directory to a worker that has nothing else to do (probe_entries()).
 * Its results land in the lister's vectors; the lister takes a share
 * back and probes it itself if no worker took it.  Under the walk lock.
 */
struct probe_share {
	struct probe_share *next;
	int dirfd;
	const char *const *names;
	const unsigned *flags;
	int *res;
	size_t n;
	bool taken, done;
};

struct ent {
	ino_t ino;
	size_t off; /* into names */
	int probe;
	int inner;  /* probe of "NAME/." (dcp_entry.inner) */
	unsigned char type;
	bool skip;  /* excluded */
	bool again; /* another visit counts it (dcp_entry.again) */
};

/*
 * What the run saw of one directory, by device and inode, when several
 * roots are walked: the probes of its entries made by its first listing
 * (by name hash, sorted), and the names that roots claimed (a root's own
 * entry, counted by the root's visit, lies in its parent directory).
 *
 * How often each root listed it, too.  A root counts every path of its
 * walk, and under -L (or through a bind mount inside it) one walk may list
 * a directory more than once, by several paths; the run's total counts a
 * directory's entries as often as the root that lists it most often (so
 * the total is never below any root's figures, and roots that share a tree
 * count it once): a listing is a repeat for the total (dcp_entry.again)
 * unless its root has now listed the directory more often than any root
 * before it (KMAX).  Listings reached through a link followed in the walk
 * are counted apart from the others (KMAX[1] and KMAX[0]), so that the
 * same path in two roots (T/sub/l reached from T and from T/sub) is the
 * same occurrence whichever root lists it first.  A root's own figures
 * never depend on the other roots.
 */
enum { SEEN_NEW, SEEN_LISTING, SEEN_DONE };
struct seen_ent {
	uint64_t hash;
	int probe, inner;
};
struct seen_root {
	size_t root;
	unsigned k[2];	    /* listings of the directory by that root: direct, linked */
};
struct seen_dir {
	struct seen_dir *next; /* hash chain */
	dev_t dev;
	ino_t ino;
	int state;
	bool entry_counted; /* a visit of its own entry counted it */
	struct seen_ent *ents;
	size_t n;
	uint64_t *claims;
	size_t nclaims;
	struct seen_root *by; /* listings per root (usually one root) */
	size_t nby;
	unsigned kmax[2];   /* the most listings of it by any one root, by class */
};

struct dcp_walk {
	struct dcp_walk_opts o;
	pthread_mutex_t lock;
	pthread_cond_t work;	/* an item was pushed, or the walk is ending */
	pthread_cond_t room;	/* a root was taken off the queue */
	struct item *stack;	/* directories, depth-first */
	struct item *deferred;	/* cold links to follow last (DCP_WALK_FOLLOW) */
	struct item *roots, **roots_tail; /* roots, first come first served */
	struct item *gathered, **gathered_tail; /* recursive roots, for plan_roots() */
	size_t ngathered;
	struct item *cold_roots;	/* roots whose probe missed: walked last */
	/* Several roots (plan_roots): the directories seen, under lock. */
	bool multi;
	bool late;		/* the deferred links and cold roots are out */
	struct seen_dir **seen;
	size_t nseen, seencap;
	pthread_cond_t seen_cv; /* a directory's first listing is done */
	size_t queued_roots;
	size_t nroots;
	unsigned active;	/* workers processing an item */
	bool closing;		/* no more roots will be added */
	bool aborted;
	int failure;		/* -errno of a walker failure (ENOMEM) */
	unsigned nfds, fd_budget;
	uint64_t next_id;	/* atomic */
	struct node lru;	/* sentinel of the parked list */
	struct node none;	/* needed_ancestor()'s shortcut to "no such ancestor" */
	struct dcp_buf donepath; /* for dir_done, under lock */
	unsigned nthreads;	/* workers running */
	unsigned nworkers;	/* workers allocated (>= nthreads) */
	struct worker *workers;
	size_t data_off;
	/* Under DCP_WALK_FOLLOW: the lookups the walk may have warmed. */
	pthread_mutex_t cold_lock;
	struct cold_ent **cold;
	size_t ncold, coldcap;
	bool any_cold;		/* atomic: ncold > 0 */
	bool no_openat2;	/* atomic: open_kid() cannot use openat2 here */
	/* Probes of a large directory shared out (probe_entries()), under lock. */
	struct probe_share *shares;
	pthread_cond_t share_done;
	unsigned idle;		/* workers waiting for work */
	struct dcp_dirra ra;	/* DCP_WALK_READAHEAD: the devices met */
};

/* ---- descriptors ---------------------------------------------------- */

static void lru_unlink(struct node *n)
{
	if (!n->lru_next)
		return;
	n->lru_prev->lru_next = n->lru_next;
	n->lru_next->lru_prev = n->lru_prev;
	n->lru_prev = n->lru_next = NULL;
}

static void lru_park(struct dcp_walk *w, struct node *n)
{
	n->lru_prev = w->lru.lru_prev;
	n->lru_next = &w->lru;
	w->lru.lru_prev->lru_next = n;
	w->lru.lru_prev = n;
}

static void node_close(struct dcp_walk *w, struct node *n)
{
	lru_unlink(n);
	if (n->fd >= 0) {
		close(n->fd);
		n->fd = -1;
		w->nfds--;
	}
}

/* Make room for one more directory descriptor.  Called with the lock held. */
static void fd_reserve(struct dcp_walk *w)
{
	while (w->nfds >= w->fd_budget && w->lru.lru_next != &w->lru)
		node_close(w, w->lru.lru_next); /* the longest parked */
	w->nfds++;
}

static int open_dir_at(int dirfd, const char *name, bool follow, bool opath)
{
	int flags = O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW) |
		    (opath ? O_PATH : O_RDONLY | O_NONBLOCK);
	int fd;

	do
		fd = openat(dirfd, name, flags);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/* FD's type, inode and mount, from statx without syncing: no daemon or server is asked. */
static int fd_statx(int fd, struct statx *stx)
{
	return statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		     STATX_TYPE | STATX_INO | STATX_MNT_ID, stx) < 0 ? -errno : 0;
}

/* fd_statx() as the type, device and inode of a struct stat, besides. */
static int fd_stat(int fd, struct stat *st, struct statx *stx)
{
	int ret = fd_statx(fd, stx);

	if (ret == 0) {
		memset(st, 0, sizeof(*st));
		st->st_mode = stx->stx_mode;
		st->st_dev = makedev(stx->stx_dev_major, stx->stx_dev_minor);
		st->st_ino = stx->stx_ino;
	}
	return ret;
}

typedef int (*judge_fn)(uint64_t mnt_id, void *arg);

/* What JUDGE (a command's skip_mount) says of the mount of STX, DCP_WALK_MOUNT_*. */
static int judged(judge_fn judge, void *arg, const struct statx *stx)
{
	if (!judge || !(stx->stx_mask & STATX_MNT_ID))
		return DCP_WALK_MOUNT_ENTER;
	return judge(stx->stx_mnt_id, arg);
}

static int mount_verdict(const struct dcp_walk *w, const struct statx *stx)
{
	return judged(w->o.skip_mount, w->o.arg, stx);
}

/*
 * Look NAME up in DIRFD (following it when FOLLOW) without making any
 * lookup on a mount that JUDGE calls unsafe (dcp_walk_lookup()).  One
 * openat2 with RESOLVE_NO_XDEV settles a path that stays on DIRFD's mount
 * (nearly all of them); one that leaves it is looked up one component at
 * a time, as the kernel walks it, each with RESOLVE_NO_XDEV, so that a
 * mount point is met before anything behind it is looked up.  The mount's
 * root is then reached by an O_PATH open of the mount point (the lookup is
 * made on the mount before it) and judged before any name in it is looked
 * up; symlinks on the way are read only on mounts judged so.  A plain open
 * of a link into a FUSE mount whose daemon a user stopped would wait for
 * ever on the first name looked up there (a timed-out entry, or its
 * permission check).  Returns the object's O_PATH descriptor and its statx
 * in *STX, -EREMOTE when the path runs onto a mount where a lookup may
 * wait, or -errno.
 */
static int lookup_safely(int dirfd, const char *name, bool follow, judge_fn judge, void *arg,
			 struct statx *stx)
{
	enum { MAX_LINKS = 40 }; /* the kernel's MAXSYMLINKS */
	struct dcp_buf rest = DCP_BUF_INIT;
	char target[PATH_MAX];
	size_t pos = 0;
	uint64_t curmnt;
	int cur = dirfd, ret = 0, links = 0;

	ret = dcp_openat2(dirfd, name, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW), 0,
			  RESOLVE_NO_XDEV);
	if (ret != -EXDEV && ret != -ENOSYS && ret != -EINVAL && ret != -EPERM) {
		if (ret >= 0 && fd_statx(ret, stx) < 0) {
			close(ret);
			ret = -errno;
		}
		return ret;
	}
	if (name[0] == '/') {
		/* An absolute NAME starts at the process's root. */
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur < 0)
			return -errno;
		ret = fd_statx(cur, stx);
		if (ret == 0 && judged(judge, arg, stx) == DCP_WALK_MOUNT_UNSAFE)
			ret = -EREMOTE;
	} else {
		ret = fd_statx(dirfd, stx);
	}
	if (ret < 0) {
		if (cur != dirfd)
			close(cur);
		return ret;
	}
	curmnt = stx->stx_mnt_id;
	dcp_buf_puts(&rest, name);
	dcp_buf_putc(&rest, '\0');
	for (;;) {
		char *c = rest.data + pos, *end;
		bool last, crossed = false;
		ssize_t len;
		int fd;

		if (rest.oom) {
			ret = -ENOMEM;
			break;
		}
		while (*c == '/')
			c++;
		if (!*c) {
			/* The object reached: CUR (DIRFD itself for a link to "."). */
			ret = cur != dirfd ? cur : open_dir_at(dirfd, ".", false, true);
			cur = dirfd;
			if (ret >= 0 && fd_statx(ret, stx) < 0) {
				close(ret);
				ret = -errno;
			}
			break;
		}
		end = strchrnul(c, '/');
		last = !*end || !end[strspn(end, "/")];
		if (*end)
			*end = '\0', pos = (size_t)(end - rest.data) + 1;
		else
			pos = (size_t)(end - rest.data);
		if (strcmp(c, ".") == 0)
			continue;
		/*
		 * One name, looked up on CUR's mount: when it is a mount point
		 * (or ".." at a mount's root) the open ends on the mount
		 * behind, having looked nothing up there.
		 */
		fd = openat(cur, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
		if (fd >= 0 && fd_statx(fd, stx) < 0) {
			close(fd);
			fd = -errno;
		}
		crossed = fd >= 0 && (stx->stx_mnt_id != curmnt || !(stx->stx_mask & STATX_MNT_ID));
		/* Judged before anything in it is looked up; the object reached
		 * may be a mount's root: the caller judges that (-x first). */
		if (fd >= 0 && crossed && !last && judged(judge, arg, stx) == DCP_WALK_MOUNT_UNSAFE) {
			close(fd);
			fd = -EREMOTE;
		}
		if (fd >= 0 && S_ISLNK(stx->stx_mode) && (follow || !last)) {
			/* On a mount judged (CUR's, or the one just crossed into). */
			len = ++links > MAX_LINKS ? -ELOOP : readlinkat(fd, "", target, PATH_MAX);
			close(fd);
			fd = len < 0 ? (len == -ELOOP ? -ELOOP : -errno) :
			     len == 0 ? -ENOENT : len >= PATH_MAX ? -ENAMETOOLONG : 0;
			if (fd < 0) {
				ret = fd;
				break;
			}
			target[len] = '\0';
			/* The rest of the path now follows the link's text. */
			struct dcp_buf nr = DCP_BUF_INIT;

			dcp_buf_puts(&nr, target);
			dcp_buf_putc(&nr, '/');
			dcp_buf_puts(&nr, rest.data + pos);
			dcp_buf_putc(&nr, '\0');
			dcp_buf_free(&rest);
			rest = nr;
			pos = 0;
			if (target[0] != '/')
				continue;
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			fd = fd < 0 ? -errno : fd;
			if (fd >= 0 && (fd_statx(fd, stx) < 0 ||
					judged(judge, arg, stx) == DCP_WALK_MOUNT_UNSAFE)) {
				close(fd);
				fd = -EREMOTE;
			}
		}
		if (fd < 0) {
			ret = fd;
			break;
		}
		if (cur != dirfd)
			close(cur);
		cur = fd;
		curmnt = stx->stx_mnt_id;
	}
	if (cur != dirfd)
		close(cur);
	dcp_buf_free(&rest);
	return ret;
}

int dcp_walk_lookup(int dirfd, const char *name, bool follow,
		    int (*skip_mount)(uint64_t mnt_id, void *arg), void *arg, mode_t *mode)
{
	struct statx stx;
	int fd = lookup_safely(dirfd, name, follow, skip_mount, arg, &stx);

	if (fd >= 0 && mode)
		*mode = stx.stx_mode;
	return fd;
}

/*
 * Open directory NAME in DIRFD (a child being descended into) for listing.
 * Most children are on their parent's mount: one openat2 with
 * RESOLVE_NO_XDEV opens them.  One on another mount (a mount point, or a
 * link's target elsewhere) is first reached without a lookup on any mount
 * the walk would not enter (lookup_safely()), and its mount ID read from
 * statx without syncing, so no FUSE daemon or NFS server is asked; it is
 * entered only if neither -x nor the command's skip_mount() keeps it out:
 * an open on a FUSE mount whose daemon a user stopped would never return.
 * Then the checked descriptor itself is reopened ("." from it stays on the
 * same mount even if another mount covers the name meanwhile).  Returns
 * the descriptor, -EXDEV for a mount left unlisted, -EREMOTE for one left
 * unlisted as unsafe, or -errno.  *SAME_MNT is set when the open itself
 * proved the directory to be on DIRFD's mount (RESOLVE_NO_XDEV crosses
 * none, the last component included).
 */
static int open_kid(struct dcp_walk *w, int dirfd, const char *name, bool follow,
		    dev_t rootdev, bool *same_mnt)
{
	unsigned long long flags = O_DIRECTORY | O_CLOEXEC | O_RDONLY | O_NONBLOCK |
				   (follow ? 0 : O_NOFOLLOW);
	struct statx stx;
	int fd, pfd;

	*same_mnt = false;
	if ((!w->o.skip_mount && !(w->o.flags & DCP_WALK_XDEV)) ||
	    __atomic_load_n(&w->no_openat2, __ATOMIC_RELAXED))
		return open_dir_at(dirfd, name, follow, false);
	do
		fd = dcp_openat2(dirfd, name, flags, 0, RESOLVE_NO_XDEV);
	while (fd == -EINTR);
	if (fd == -ENOSYS || fd == -EPERM || fd == -EINVAL) {
		/* No openat2 here (a filter): list_dir() decides after the open. */
		__atomic_store_n(&w->no_openat2, true, __ATOMIC_RELAXED);
		return open_dir_at(dirfd, name, follow, false);
	}
	if (fd != -EXDEV) {
		*same_mnt = fd >= 0;
		return fd;
	}
	pfd = lookup_safely(dirfd, name, follow, w->o.skip_mount, w->o.arg, &stx);
	if (pfd < 0)
		return pfd;
	if (!S_ISDIR(stx.stx_mode)) {
		close(pfd);
		return -ENOTDIR;
	}
	if ((w->o.flags & DCP_WALK_XDEV) &&
	    makedev(stx.stx_dev_major, stx.stx_dev_minor) != rootdev) {
		close(pfd);
		return -EXDEV;
	}
	switch (mount_verdict(w, &stx)) {
	case DCP_WALK_MOUNT_ENTER:
		break;
	case DCP_WALK_MOUNT_EXCLUDE:
		close(pfd);
		return -EXDEV;
	default:
		close(pfd);
		return -EREMOTE;
	}
	fd = open_dir_at(pfd, ".", false, false);
	close(pfd);
	return fd;
}

/*
 * The nearest ancestor of N that is open or still has children to open
 * (NULL: none).  The ancestors passed on the way are closed for good (a
 * listed node's pending count never grows again), so they keep a shortcut
 * to the answer, union-find style, and repeated climbs stay cheap.
 */
static struct node *needed_ancestor(struct dcp_walk *w, struct node *n)
{
	struct node *none = &w->none, *t = n->parent, *a = n->parent, *next;

	while (t && t != none && t->fd < 0 && t->pending == 0)
		t = t->up ? t->up : t->parent;
	if (!t)
		t = none;
	for (; a && a != t; a = next) {
		next = a->up ? a->up : a->parent;
		a->up = t;
	}
	return t == none ? NULL : t;
}

/* Open the directory LEVELS levels above FD with O_PATH; -errno. */
static int open_up(int fd, size_t levels)
{
	enum { CHUNK = 1024 }; /* 3 KiB of "../": within PATH_MAX */
	char up[3 * CHUNK];
	int cur = fd;

	while (levels > 0) {
		size_t m = levels < CHUNK ? levels : CHUNK;
		int nfd;

		for (size_t i = 0; i < m; i++)
			memcpy(up + 3 * i, "../", 3);
		up[3 * m - 1] = '\0';
		nfd = open_dir_at(cur, up, false, true);
		if (cur != fd)
			close(cur);
		if (nfd < 0)
			return nfd;
		cur = nfd;
		levels -= m;
	}
	return cur;
}

/*
 * N's descriptor is no longer needed.  If the nearest ancestor that still
 * has children to open was evicted, first reopen it through N's "..": a
 * walk climbing back out of a deep chain under descriptor pressure then
 * pays one open per level, where reopening every level from the nearest
 * open ancestor down costs O(depth^2).  The ancestor must check out as the
 * same directory (not a symlink's target, not renamed away).  Lock held.
 */
static void node_retire(struct dcp_walk *w, struct node *n)
{
	struct node *t = n->parent ? needed_ancestor(w, n) : NULL;
	struct stat st;
	int fd;

	if (t && t->fd < 0 && !n->via_link) {
		fd = open_up(n->fd, (size_t)(n->pub.depth - t->pub.depth));
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == t->pub.dev &&
		    st.st_ino == t->pub.ino) {
			t->fd = fd; /* takes over N's place in the budget */
			w->nfds++;
			lru_park(w, t);
		} else if (fd >= 0) {
			close(fd);
		}
	}
	node_close(w, n);
}

/* Release a directory's descriptor once nobody needs it.  Lock held. */
static void node_settle(struct dcp_walk *w, struct node *n)
{
	if (n->fd < 0 || n->pins || n->listing)
		return;
	if (n->pending == 0)
		node_retire(w, n);
	else if (!n->lru_next)
		lru_park(w, n);
}

static bool root_follow(const struct dcp_walk *w)
{
	return w->o.flags & (DCP_WALK_FOLLOW | DCP_WALK_FOLLOW_ROOTS);
}

/*
 * Reopen an evicted directory from its nearest open ancestor, one
 * component at a time with O_PATH, and check it is still the same
 * directory.  Lock held (this is rare: only under descriptor pressure).
 */
static int node_reopen(struct dcp_walk *w, struct node *n)
{
	struct node *a, **chain;
	size_t depth = 0, i;
	int base = AT_FDCWD, ret = 0;

	for (a = n; a->fd < 0 && a->parent; a = a->parent)
		depth++;
	if (a->fd < 0)
		depth++; /* a closed root: opened by its path */
	chain = malloc(depth * sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	i = depth;
	for (a = n; i > 0; a = a->parent)
		chain[--i] = a;
	if (a)
		base = a->fd; /* not evicted below: only fd_reserve() evicts */
	for (i = 0; i < depth; i++) {
		struct node *c = chain[i];
		bool follow = c->parent ? c->via_link : root_follow(w);
		/* A link is looked up again as when it was entered: never
		 * onto a mount where a lookup may wait (it may point there now). */
		struct statx stx;
		int nfd = c->parent && follow && w->o.skip_mount ?
				  lookup_safely(base, c->name, true, w->o.skip_mount, w->o.arg, &stx) :
				  open_dir_at(base, c->name, follow, true);

		if (base >= 0 && (!a || base != a->fd))
			close(base);
		base = AT_FDCWD;
		if (nfd < 0) {
			ret = nfd;
			break;
		}
		if (fd_statx(nfd, &stx) < 0 || !S_ISDIR(stx.stx_mode) ||
		    makedev(stx.stx_dev_major, stx.stx_dev_minor) != c->pub.dev ||
		    stx.stx_ino != c->pub.ino) {
			close(nfd);
			ret = -ESTALE; /* renamed or replaced meanwhile */
			break;
		}
		base = nfd;
	}
	free(chain);
	if (ret < 0)
		return ret;
	fd_reserve(w);
	n->fd = base;
	return 0;
}

/* Pin a node's descriptor for use outside the lock.  Lock held. */
static int node_pin(struct dcp_walk *w, struct node *n)
{
	if (n->fd < 0) {
		int ret = node_reopen(w, n);
		if (ret < 0)
			return ret;
	}
	lru_unlink(n);
	n->pins++;
	return n->fd;
}

static void node_unpin(struct dcp_walk *w, struct node *n)
{
	n->pins--;
	node_settle(w, n);
}

/* ---- one measurement per entry across roots ------------------------- */

/* FNV-1a over NAME, with a final mix: names within one directory. */
static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static size_t id_slot(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)ino;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

/* The entry of directory DEV:INO, made when absent (NULL: no memory).  Lock held. */
static struct seen_dir *seen_get(struct dcp_walk *w, dev_t dev, ino_t ino)
{
	struct seen_dir *sd;
	size_t i;

	if (w->seencap) {
		for (sd = w->seen[id_slot(dev, ino, w->seencap)]; sd; sd = sd->next)
			if (sd->dev == dev && sd->ino == ino)
				return sd;
	}
	if (w->nseen >= w->seencap / 2) {
		size_t cap = w->seencap ? 2 * w->seencap : 256;
		struct seen_dir **t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (i = 0; i < w->seencap; i++) {
			while ((sd = w->seen[i])) {
				size_t k = id_slot(sd->dev, sd->ino, cap);

				w->seen[i] = sd->next;
				sd->next = t[k];
				t[k] = sd;
			}
		}
		free(w->seen);
		w->seen = t;
		w->seencap = cap;
	}
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return NULL;
	sd->dev = dev;
	sd->ino = ino;
	i = id_slot(dev, ino, w->seencap);
	sd->next = w->seen[i];
	w->seen[i] = sd;
	w->nseen++;
	return sd;
}

static int cmp_seen(const void *a, const void *b)
{
	const struct seen_ent *x = a, *y = b;

	return (x->hash > y->hash) - (x->hash < y->hash);
}

/* The first listing's record of the name with hash H (SEEN_DONE only). */
static const struct seen_ent *seen_find(const struct seen_dir *sd, uint64_t h)
{
	struct seen_ent key = { .hash = h };

	return sd->n ? bsearch(&key, sd->ents, sd->n, sizeof(key), cmp_seen) : NULL;
}

static bool seen_claimed(const struct seen_dir *sd, uint64_t h)
{
	for (size_t i = 0; i < sd->nclaims; i++)
		if (sd->claims[i] == h)
			return true;
	return false;
}

/*
 * Root ROOT lists SD once more, through a link followed in the walk or not
 * (CLS 1 or 0): its count of such listings now, 0 out of memory.  Lock held.
 */
static unsigned seen_listed(struct seen_dir *sd, size_t root, int cls)
{
	struct seen_root *t;

	for (size_t i = 0; i < sd->nby; i++)
		if (sd->by[i].root == root)
			return ++sd->by[i].k[cls];
	t = realloc(sd->by, (sd->nby + 1) * sizeof(*t));
	if (!t)
		return 0;
	sd->by = t;
	sd->by[sd->nby] = (struct seen_root){ .root = root };
	return ++sd->by[sd->nby++].k[cls];
}

/*
 * Is an entry of the K-th listing of its class (CLS) by its root a repeat
 * for the run's total (KMAX: the most of that class by any root before)?
 * A name a root claimed was counted once, by that root's own visit.
 */
static bool seen_again(const struct seen_dir *sd, unsigned k, unsigned kmax, int cls, uint64_t h)
{
	return k <= kmax || (cls == 0 && k == 1 && sd->nclaims && seen_claimed(sd, h));
}

/*
 * Several roots: N was just listed and its entries probed.  The first
 * listing of a directory in the run records its probes; a later one (from
 * another root, a bind mount, a followed link) takes them instead of its
 * own, which the first walk's opens may have warmed.  Its entries are
 * repeats for the run's total unless its root has now listed the
 * directory more often than any root before (struct seen_dir: the total
 * counts what the root that lists it most often counts).  Entries that
 * roots claimed are repeats in a first listing: the root counts its own
 * entry.  Cold listings record too, for a warm listing of the same
 * directory by another path, until only cold walks are left.
 */
static void seen_share(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	struct seen_ent *v = NULL;
	struct seen_dir *sd;
	unsigned k = 0, kmax = 0;
	int cls = n->linked;
	size_t m = 0;

	pthread_mutex_lock(&w->lock);
	sd = seen_get(w, n->pub.dev, n->pub.ino);
	if (sd && !n->entry_again)
		sd->entry_counted = true;
	while (sd && sd->state == SEEN_LISTING)
		pthread_cond_wait(&w->seen_cv, &w->lock);
	if (sd) {
		/* Out of memory, counted as a repeat rather than twice. */
		k = seen_listed(sd, n->root, cls);
		kmax = k ? sd->kmax[cls] : UINT_MAX;
		if (k > sd->kmax[cls])
			sd->kmax[cls] = k;
	}
	if (!sd) {
		w->failure = -ENOMEM;
	} else if (sd->state == SEEN_NEW) {
		sd->state = SEEN_LISTING;
	} else {
		pthread_mutex_unlock(&w->lock);
		/* Recorded and never changed once SEEN_DONE: read unlocked. */
		n->pub.again = true;
		for (size_t i = 0; i < wk->nents; i++) {
			struct ent *en = &wk->ents[i];
			const char *name = wk->names.data + en->off;
			uint64_t h;
			const struct seen_ent *se;

			if (en->skip)
				continue;
			h = name_hash(name, strlen(name));
			se = seen_find(sd, h);
			if (!se)
				continue; /* new since, or excluded then: its own */
			en->again = seen_again(sd, k, kmax, cls, h);
			en->probe = se->probe;
			en->inner = se->inner;
		}
		return;
	}
	pthread_mutex_unlock(&w->lock);
	if (!sd)
		return;
	v = malloc((wk->nents ? wk->nents : 1) * sizeof(*v));
	for (size_t i = 0; i < wk->nents; i++) {
		struct ent *en = &wk->ents[i];
		const char *name = wk->names.data + en->off;
		uint64_t h;

		if (en->skip)
			continue;
		h = name_hash(name, strlen(name));
		en->again = seen_again(sd, k, kmax, cls, h);
		if (v)
			v[m++] = (struct seen_ent){ h, en->probe, en->inner };
	}
	if (m > 1)
		qsort(v, m, sizeof(*v), cmp_seen);
	pthread_mutex_lock(&w->lock);
	sd->ents = v;
	sd->n = v ? m : 0;
	sd->state = SEEN_DONE;
	pthread_cond_broadcast(&w->seen_cv);
	pthread_mutex_unlock(&w->lock);
}

static void seen_free(struct dcp_walk *w)
{
	for (size_t i = 0; i < w->seencap; i++) {
		struct seen_dir *sd, *next;

		for (sd = w->seen[i]; sd; sd = next) {
			next = sd->next;
			free(sd->ents);
			free(sd->claims);
			free(sd->by);
			free(sd);
		}
	}
	free(w->seen);
}

/* ---- nodes and work ------------------------------------------------- */

static struct node *node_new(struct dcp_walk *w, struct node *parent,
			     const char *name, size_t namelen)
{
	struct node *n = calloc(1, w->data_off + w->o.dir_data_size);

	if (!n)
		return NULL;
	n->name = strndup(name, namelen);
	if (!n->name) {
		free(n);
		return NULL;
	}
	n->namelen = namelen;
	n->parent = parent;
	n->pub.parent = parent ? &parent->pub : NULL;
	n->pub.depth = parent ? parent->pub.depth + 1 : 0;
	n->pub.data = w->o.dir_data_size ? (char *)n + w->data_off : NULL;
	n->fd = -1;
	n->refs = 1;
	n->id = __atomic_add_fetch(&w->next_id, 1, __ATOMIC_RELAXED);
	if (parent) {
		n->root = n->pub.root = parent->root;
		n->rootdev = parent->rootdev;
	}
	return n;
}

/* Does a separator go between N's parent's path and N's name? */
static bool needs_sep(const struct node *n)
{
	const struct node *p = n->parent;

	/* Only a root's name ("/", "dir/") can end with a slash. */
	return p->parent || !p->namelen || p->name[p->namelen - 1] != '/';
}

/* Build a node's path into B, filling it from the end (any depth). */
static void node_path(const struct node *n, struct dcp_buf *b)
{
	size_t len = 0, pos;

	for (const struct node *a = n; a; a = a->parent)
		len += a->namelen + (a->parent && needs_sep(a));
	dcp_buf_reset(b);
	dcp_buf_add(b, "", 1); /* make room: grow once, then fill */
	b->len = 0;
	if (len + 1 > b->cap) {
		char *p = realloc(b->data, len + 1);
		if (!p) {
			b->oom = true;
			return;
		}
		b->data = p;
		b->cap = len + 1;
	}
	pos = len;
	b->data[len] = '\0';
	for (const struct node *a = n; a; a = a->parent) {
		pos -= a->namelen;
		memcpy(b->data + pos, a->name, a->namelen);
		if (a->parent && needs_sep(a))
			b->data[--pos] = '/';
	}
	b->len = len;
}

static bool worker_path_room(struct worker *wk, size_t depth)
{
	size_t cap = wk->pathcap ? wk->pathcap : 64;
	uint64_t *ids;
	size_t *ends;
	struct node **climb;

	while (cap < depth)
		cap *= 2;
	if (cap == wk->pathcap)
		return true;
	ids = realloc(wk->pathids, cap * sizeof(*ids));
	if (ids)
		wk->pathids = ids;
	ends = realloc(wk->pathends, cap * sizeof(*ends));
	if (ends)
		wk->pathends = ends;
	climb = realloc(wk->climb, cap * sizeof(*climb));
	if (climb)
		wk->climb = climb;
	if (!ids || !ends || !climb)
		return false;
	wk->pathcap = cap;
	return true;
}

/*
 * Build directory N's path into wk->path at the cost of what changed since
 * the worker's previous directory: climb from N to the deepest ancestor
 * whose path still prefixes wk->path, cut there and append the names below
 * it.  A depth-first walk pays for each name once, whatever the depth
 * (node_path() from the root every time is quadratic in depth).  N's
 * ancestors are alive: every live node holds a reference on its parent.
 */
static void worker_path(struct worker *wk, const struct node *n)
{
	struct dcp_buf *b = &wk->path;
	const struct node *a = n;
	size_t k = 0;

	if (!worker_path_room(wk, (size_t)n->pub.depth + 1)) {
		b->oom = true;
		wk->pathdepth = 0;
		return;
	}
	while (a && !((size_t)a->pub.depth < wk->pathdepth &&
		      wk->pathids[a->pub.depth] == a->id)) {
		wk->climb[k++] = (struct node *)a;
		a = a->parent;
	}
	b->len = a ? wk->pathends[a->pub.depth] : 0;
	while (k-- > 0) {
		const struct node *c = wk->climb[k];

		if (c->parent && needs_sep(c))
			dcp_buf_putc(b, '/');
		dcp_buf_add(b, c->name, c->namelen);
		wk->pathids[c->pub.depth] = c->id;
		wk->pathends[c->pub.depth] = b->len;
	}
	dcp_buf_putc(b, '\0');
	b->len--;
	wk->pathdepth = b->oom ? 0 : (size_t)n->pub.depth + 1;
}

/* Drop a reference; completed subtrees report and release their parent. */
static void node_put(struct dcp_walk *w, struct node *n)
{
	while (n && --n->refs == 0) {
		struct node *parent = n->parent;

		node_close(w, n);
		if (n->listed && w->o.dir_done && !__atomic_load_n(&w->aborted, __ATOMIC_RELAXED)) {
			/* Built only when asked for: O(depth) per directory. */
			bool want = (w->o.flags & DCP_WALK_DONE_PATHS) &&
				    (w->o.done_path_depth < 0 ||
				     n->pub.depth <= w->o.done_path_depth);

			if (want)
				node_path(n, &w->donepath);
			if (want && w->donepath.oom)
				w->failure = -ENOMEM;
			else
				w->o.dir_done(&n->pub, want ? w->donepath.data : NULL,
					      want ? w->donepath.len : 0, w->o.arg);
		}
		if (n->counted) {
			/* A child that never opened no longer needs our fd. */
			n->counted = false;
			parent->pending--;
			node_settle(w, parent);
		}
		free(n->name);
		free(n);
		n = parent;
	}
}

/* ---- what the walk may have warmed (DCP_WALK_FOLLOW) ------------------ */

/*
 * Under -L a link's state is its whole followed path as it was before the
 * walk touched anything, but the walk may already have warmed that path:
 * it opens the cold directories it descends into (and stats entries of
 * unknown type).  Every such lookup is recorded, before it is made, in
 * the run's cold set: the directory it is made in (device and inode), the
 * name, and what missed (the lookup itself, or lookups inside the entry).
 * Only warm listings record: below a cold directory every path already
 * misses at the cold directory.  The listings that measure end before the
 * deferred links are followed and the cold roots opened (worker_main), so
 * those warm nothing a probe still reads.  A link whose probe was cached
 * is then retraced one component at a time with RESOLVE_CACHED (which
 * warms nothing), and misses if any of its lookups is in the set.
 */
enum { COLD_LOOKUP = 1, COLD_INSIDE = 2 };

struct cold_ent {
	struct cold_ent *next;
	dev_t dev;
	ino_t ino;
	uint64_t hash;
	unsigned what;
	char name[];
};

static size_t cold_slot(dev_t dev, ino_t ino, uint64_t h, size_t cap)
{
	return (id_slot(dev, ino, SIZE_MAX) ^ (size_t)h) & (cap - 1);
}

/* Record that looking NAME up in directory DEV:INO missed (WHAT). */
static bool cold_add(struct dcp_walk *w, dev_t dev, ino_t ino,
		     const char *name, unsigned what)
{
	size_t len = strlen(name), i;
	uint64_t h = name_hash(name, len);
	struct cold_ent *c = malloc(sizeof(*c) + len + 1);

	if (!c)
		return false;
	*c = (struct cold_ent){ .dev = dev, .ino = ino, .hash = h, .what = what };
	memcpy(c->name, name, len + 1);
	pthread_mutex_lock(&w->cold_lock);
	if (w->ncold >= w->coldcap / 2) {
		size_t cap = w->coldcap ? 2 * w->coldcap : 64;
		struct cold_ent **t = calloc(cap, sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&w->cold_lock);
			free(c);
			return false;
		}
		for (i = 0; i < w->coldcap; i++) {
			for (struct cold_ent *o = w->cold[i], *next; o; o = next) {
				size_t k = cold_slot(o->dev, o->ino, o->hash, cap);

				next = o->next;
				o->next = t[k];
				t[k] = o;
			}
		}
		free(w->cold);
		w->cold = t;
		w->coldcap = cap;
	}
	i = cold_slot(dev, ino, h, w->coldcap);
	c->next = w->cold[i];
	w->cold[i] = c;
	w->ncold++;
	__atomic_store_n(&w->any_cold, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&w->cold_lock);
	return true;
}

/* What missed, before the walk, of looking NAME up in DEV:INO (0: nothing). */
static unsigned cold_get(struct dcp_walk *w, dev_t dev, ino_t ino, const char *name)
{
	uint64_t h = name_hash(name, strlen(name));
	unsigned what = 0;

	pthread_mutex_lock(&w->cold_lock);
	if (w->coldcap) {
		for (const struct cold_ent *c = w->cold[cold_slot(dev, ino, h, w->coldcap)];
		     c; c = c->next) {
			if (c->hash == h && c->ino == ino && c->dev == dev &&
			    strcmp(c->name, name) == 0)
				what |= c->what;
		}
	}
	pthread_mutex_unlock(&w->cold_lock);
	return what;
}

static void cold_free(struct dcp_walk *w)
{
	for (size_t i = 0; i < w->coldcap; i++) {
		for (struct cold_ent *c = w->cold[i], *next; c; c = next) {
			next = c->next;
			free(c);
		}
	}
	free(w->cold);
	pthread_mutex_destroy(&w->cold_lock);
}

/* Record the lookups of a warm listing that missed and that the walk
 * may make: into the entries it can descend into.  Before any of them. */
static void cold_record(struct worker *wk, const struct node *n)
{
	struct dcp_walk *w = wk->w;

	for (size_t i = 0; i < wk->nents; i++) {
		const struct ent *en = &wk->ents[i];
		unsigned what = en->probe == -EAGAIN ? COLD_LOOKUP :
				en->inner == -EAGAIN ? COLD_INSIDE : 0;

		if (en->skip || !what || (en->type != DT_DIR && en->type != DT_UNKNOWN))
			continue;
		if (!cold_add(w, n->pub.dev, n->pub.ino, wk->names.data + en->off, what))
			w->failure = -ENOMEM;
	}
}

/* One directory entered on a retraced path: its own lookup, for COLD_INSIDE. */
struct hop {
	dev_t dev;
	ino_t ino;
	size_t name; /* into the names buffer */
	bool known;
};

/*
 * Retrace the followed path of NAME in DIRFD (whose probe, now, was
 * cached) as the kernel walks it, one component at a time, with
 * RESOLVE_CACHED: every lookup is cached now, and none is made that the
 * probe did not make.  Returns -EAGAIN if a lookup on the way missed
 * before the walk (in the cold set), 0 if none did; *INSIDE is set to
 * -EAGAIN if lookups inside the object reached missed before the walk.
 * A path that no longer resolves as it did (a race) is left as probed.
 */
static int retrace(struct dcp_walk *w, int dirfd, const char *name, int *inside)
{
	enum { MAX_LINKS = 40 }; /* the kernel's MAXSYMLINKS */
	struct dcp_buf rest = DCP_BUF_INIT, names = DCP_BUF_INIT;
	struct hop *hops = NULL, top = { 0 };
	size_t nhops = 0, caphops = 0, pos = 0;
	struct statx sx;
	struct stat cst;
	int cur = dirfd, ret = 0, links = 0;
	char target[PATH_MAX];

	*inside = 0;
	/* statx without syncing throughout: fstat(2) of a FUSE object whose
	 * attributes timed out asks its daemon, which a user may have stopped. */
	if (fd_stat(dirfd, &cst, &sx) < 0)
		return 0;
	dcp_buf_puts(&rest, name);
	dcp_buf_putc(&rest, '\0');
	while (!rest.oom && !names.oom) {
		char *c = rest.data + pos, *end;
		bool last;

		while (*c == '/')
			c++;
		if (!*c)
			break;
		end = strchrnul(c, '/');
		last = !*end || !end[strspn(end, "/")];
		if (*end)
			*end = '\0', pos = (size_t)(end - rest.data) + 1;
		else
			pos = (size_t)(end - rest.data);
		top = nhops ? hops[nhops - 1] : (struct hop){ 0 };
		/* A lookup inside CUR: was it cold inside before the walk? */
		if (top.known && (cold_get(w, top.dev, top.ino, names.data + top.name) & COLD_INSIDE)) {
			ret = -EAGAIN;
			break;
		}
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") != 0 &&
		    (cold_get(w, cst.st_dev, cst.st_ino, c) & COLD_LOOKUP)) {
			ret = -EAGAIN;
			break;
		}
		int fd = dcp_openat2(cur, c, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, RESOLVE_CACHED);
		struct stat st = { 0 }; /* GCC 12 -O3 cannot see that fd_stat() filled it */

		if (fd < 0 || fd_stat(fd, &st, &sx) < 0) {
			if (fd >= 0)
				close(fd);
			break; /* changed since the probe: as probed */
		}
		if (S_ISLNK(st.st_mode)) {
			/* Reading a link asks FUSE's daemon (or NFS's server):
			 * only on a mount the walk would enter; else as probed. */
			ssize_t len = ++links > MAX_LINKS ||
						  mount_verdict(w, &sx) == DCP_WALK_MOUNT_UNSAFE ?
					      -1 : readlinkat(fd, "", target, PATH_MAX);

			close(fd);
			if (len <= 0 || len >= PATH_MAX)
				break;
			target[len] = '\0';
			/* The rest of the path now follows the link's text. */
			struct dcp_buf nr = DCP_BUF_INIT;

			dcp_buf_puts(&nr, target);
			dcp_buf_putc(&nr, '/');
			dcp_buf_puts(&nr, rest.data + pos);
			dcp_buf_putc(&nr, '\0');
			dcp_buf_free(&rest);
			rest = nr;
			pos = 0;
			if (target[0] == '/') {
				fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0 || fd_stat(fd, &st, &sx) < 0) {
					if (fd >= 0)
						close(fd);
					break;
				}
				nhops = 0; /* the root: nothing the walk warmed */
				goto enter;
			}
			continue;
		}
		if (strcmp(c, "..") == 0) {
			if (nhops)
				nhops--;
		} else {
			if (nhops == caphops) {
				size_t cap = caphops ? 2 * caphops : 16;
				struct hop *t = realloc(hops, cap * sizeof(*t));

				if (!t) {
					close(fd);
					break;
				}
				hops = t;
				caphops = cap;
			}
			hops[nhops++] = (struct hop){ cst.st_dev, cst.st_ino, names.len, true };
			dcp_buf_puts(&names, c);
			dcp_buf_putc(&names, '\0');
		}
enter:
		if (cur != dirfd)
			close(cur);
		cur = fd;
		cst = st;
		if (last) {
			top = nhops ? hops[nhops - 1] : (struct hop){ 0 };
			if (S_ISDIR(st.st_mode) && top.known &&
			    (cold_get(w, top.dev, top.ino, names.data + top.name) & COLD_INSIDE))
				*inside = -EAGAIN;
		}
	}
	if (cur != dirfd)
		close(cur);
	free(hops);
	dcp_buf_free(&rest);
	dcp_buf_free(&names);
	return ret;
}

/*
 * A warm listing under DCP_WALK_FOLLOW, once probed: correct the entries
 * whose lookups the walk itself warmed (a directory listed a second time,
 * through a link), retrace the links whose probe was cached, then record
 * the lookups the walk may warm next.
 */
static void cold_settle(struct worker *wk, const struct node *n)
{
	struct dcp_walk *w = wk->w;

	if (__atomic_load_n(&w->any_cold, __ATOMIC_ACQUIRE)) {
		for (size_t i = 0; i < wk->nents; i++) {
			struct ent *en = &wk->ents[i];
			const char *name = wk->names.data + en->off;
			unsigned what;
			int inside;

			if (en->skip || en->probe != 0)
				continue;
			what = cold_get(w, n->pub.dev, n->pub.ino, name);
			if (what & COLD_LOOKUP)
				en->probe = en->inner = -EAGAIN;
			else if (what & COLD_INSIDE)
				en->inner = -EAGAIN;
			else if (en->type == DT_LNK || en->type == DT_UNKNOWN) {
				if (retrace(w, n->fd, name, &inside) < 0)
					en->probe = en->inner = -EAGAIN;
				else if (inside < 0)
					en->inner = inside;
			}
		}
	}
	cold_record(wk, n);
}

static void push_item(struct dcp_walk *w, struct item *it)
{
	it->next = w->stack;
	w->stack = it;
}

static bool excluded(const struct dcp_walk *w, const char *name,
		     const char *path)
{
	const char *const *g = w->o.excludes;

	for (; g && *g; g++)
		if (fnmatch(*g, strchr(*g, '/') ? path : name, 0) == 0)
			return true;
	return false;
}

static void report(struct dcp_walk *w, const struct dcp_entry *e, int err)
{
	if (w->o.error)
		w->o.error(e, err < 0 ? -err : err, w->o.arg);
}

/*
 * The type of NAME in DIRFD into *MODE, from statx without syncing: a
 * FUSE daemon or an NFS server is not asked (the type of an inode never
 * changes), and no automount is triggered, as fstatat(2).  Followed, the
 * path is looked up with RESOLVE_CACHED (and its descriptor statx'ed), so
 * that a link into a FUSE mount whose entries timed out since its probe
 * fails with EAGAIN instead of asking the daemon.  0 or -1 (errno).
 */
static int type_at(int dirfd, const char *name, bool follow, mode_t *mode)
{
	struct statx stx;
	int fd, ret;

	fd = follow ? dcp_openat2(dirfd, name, O_PATH | O_CLOEXEC, 0, RESOLVE_CACHED) : -ENOSYS;
	if (fd == -EAGAIN) /* a mount or umount anywhere: ask once more */
		fd = dcp_openat2(dirfd, name, O_PATH | O_CLOEXEC, 0, RESOLVE_CACHED);
	if (fd == -ENOSYS || fd == -EINVAL || fd == -EPERM) {
		/* Not followed, or no openat2 here (a filter): a plain statx. */
		if (statx(dirfd, name, AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT |
			  (follow ? 0 : AT_SYMLINK_NOFOLLOW), STATX_TYPE, &stx) < 0)
			return -1;
		*mode = stx.stx_mode;
		return 0;
	}
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	ret = fd_statx(fd, &stx);
	close(fd);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	*mode = stx.stx_mode;
	return 0;
}

/* Is the entry a directory to descend into?  0 no, 1 yes, -errno. */
static int entry_is_dir(struct dcp_walk *w, int dirfd, const char *name,
			unsigned char type, bool *via_link)
{
	bool follow = w->o.flags & DCP_WALK_FOLLOW;
	mode_t mode;

	*via_link = false;
	if (type == DT_DIR)
		return 1;
	if (type != DT_UNKNOWN && !(type == DT_LNK && follow))
		return 0;
	if (type_at(dirfd, name, follow, &mode) < 0) {
		/* A dangling link is a link, not an error. */
		if (follow && errno == ENOENT)
			return 0;
		/* No longer cached since its probe: followed last (EAGAIN). */
		return -errno;
	}
	if (!S_ISDIR(mode))
		return 0;
	*via_link = type == DT_LNK ||
		    (type == DT_UNKNOWN && follow &&
		     type_at(dirfd, name, false, &mode) == 0 && S_ISLNK(mode));
	return 1;
}

static int cmp_ino(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return (x->ino > y->ino) - (x->ino < y->ino);
}

static bool worker_add_ent(struct worker *wk, ino_t ino, unsigned char type,
			   const char *name, size_t len)
{
	if (wk->nents == wk->cap) {
		size_t cap = wk->cap ? wk->cap * 2 : 256;
		struct ent *p = realloc(wk->ents, cap * sizeof(*p));

		if (!p)
			return false;
		wk->ents = p;
		wk->cap = cap;
	}
	wk->ents[wk->nents++] = (struct ent){
		.ino = ino, .off = wk->names.len, .type = type };
	dcp_buf_add(&wk->names, name, len + 1);
	return !wk->names.oom;
}

static bool worker_add_kid(struct worker *wk, struct node *kid)
{
	if (wk->nkids == wk->kidcap) {
		size_t cap = wk->kidcap ? wk->kidcap * 2 : 64;
		struct node **p = realloc(wk->kids, cap * sizeof(*p));

		if (!p)
			return false;
		wk->kids = p;
		wk->kidcap = cap;
	}
	wk->kids[wk->nkids++] = kid;
	return true;
}

/*
 * Read a directory's next entries into the worker: all of them, or at
 * least MAX (a chunk) when there are more.  Returns 0 at the end, 1 when
 * more may follow, or -errno.
 */
static int read_dir(struct worker *wk, int fd, size_t max)
{
	wk->nents = 0;
	dcp_buf_reset(&wk->names);
	for (;;) {
		ssize_t n;

		if (wk->nents >= max)
			return 1; /* a chunk: more may follow */
		n = getdents64(fd, wk->dents, DENTS_BUF);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(wk->dents + off);
			const char *nm = d->d_name;

			off += d->d_reclen;
			if (nm[0] == '.' && (nm[1] == 0 || (nm[1] == '.' && nm[2] == 0)))
				continue;
			if (!worker_add_ent(wk, d->d_ino, d->d_type, nm, strlen(nm)))
				return -ENOMEM;
		}
	}
}

/* Open a listed directory relative to its parent; 0 or -errno. */
static int open_node(struct dcp_walk *w, struct node *n)
{
	struct node *p = n->parent;
	bool same_mnt = false;
	int pfd, fd;

	pthread_mutex_lock(&w->lock);
	pfd = node_pin(w, p);
	if (pfd >= 0)
		fd_reserve(w);
	pthread_mutex_unlock(&w->lock);
	if (pfd < 0)
		fd = pfd;
	else
		fd = open_kid(w, pfd, n->name, n->via_link || n->deferred, n->rootdev,
			      &same_mnt);

	pthread_mutex_lock(&w->lock);
	if (pfd >= 0) {
		if (fd < 0)
			w->nfds--;
		node_unpin(w, p);
	}
	p->pending--;
	n->counted = false;
	node_settle(w, p);
	pthread_mutex_unlock(&w->lock);
	if (fd < 0)
		return fd;
	n->fd = fd;
	n->listing = true;
	n->same_mnt = same_mnt;
	n->via_link |= n->deferred; /* reopened the same way */
	n->linked |= n->via_link;
	return 0;
}

static int open_root(struct dcp_walk *w, struct node *n)
{
	int fd;

	pthread_mutex_lock(&w->lock);
	fd_reserve(w);
	pthread_mutex_unlock(&w->lock);
	fd = open_dir_at(AT_FDCWD, n->name, root_follow(w), false);
	if (fd < 0) {
		pthread_mutex_lock(&w->lock);
		w->nfds--;
		pthread_mutex_unlock(&w->lock);
		return fd;
	}
	n->fd = fd;
	n->listing = true;
	return 0;
}

static void fill_dir_entry(struct dcp_entry *e, struct worker *wk, struct node *n)
{
	*e = (struct dcp_entry){
		.dirfd = -1,
		.name = n->name,
		.path = wk->path.data,
		.pathlen = wk->path.len,
		.dir = n->pub.parent,
		.type = DT_DIR,
		.depth = n->pub.depth,
		.worker = wk->idx,
		.root = n->root,
		.again = n->entry_again,
	};
}

/* Append NAME to the directory path in wk->path (kept NUL-terminated). */
static void path_join(struct worker *wk, size_t dirlen, bool slash,
		      const char *name)
{
	wk->path.len = dirlen;
	if (slash)
		dcp_buf_putc(&wk->path, '/');
	dcp_buf_puts(&wk->path, name);
	dcp_buf_putc(&wk->path, '\0');
	wk->path.len--;
}

static bool worker_vectors(struct worker *wk, size_t n)
{
	if (n <= wk->vcap)
		return true;
	const char **nv = realloc(wk->namev, n * sizeof(*nv));
	if (nv)
		wk->namev = nv;
	unsigned *fv = realloc(wk->flagv, n * sizeof(*fv));
	if (fv)
		wk->flagv = fv;
	int *rv = realloc(wk->resv, n * sizeof(*rv));
	if (rv)
		wk->resv = rv;
	if (!nv || !fv || !rv)
		return false;
	wk->vcap = n;
	return true;
}

/*
 * Is NAME not a directory?  Only asked of a path whose probe (with the
 * same FOLLOW) was cached, so the stat does no I/O; false when it cannot
 * be told without a lookup that may wait (no longer cached).
 */
static bool not_dir_at(int dirfd, const char *name, bool follow)
{
	mode_t mode;

	return type_at(dirfd, name, follow, &mode) == 0 && !S_ISDIR(mode);
}

/* Could the walk descend into an entry of this type? */
static bool maybe_dir(const struct dcp_walk *w, unsigned char type)
{
	return type == DT_DIR || type == DT_UNKNOWN ||
	       (type == DT_LNK && (w->o.flags & DCP_WALK_FOLLOW));
}

/* Probes below this many are not shared: a handoff costs more than it saves. */
#define SHARE_MIN 512
#define MAX_SHARES 8

/* Exchange the worker's chunk with the spare one (chunkbuf). */
static void chunk_swap(struct worker *wk)
{
	struct chunkbuf *c = &wk->spare, t = *c;

#define SWAP(f) do { c->f = wk->f; wk->f = t.f; } while (0)
	SWAP(names);
	SWAP(inames);
	SWAP(ents);
	SWAP(nents);
	SWAP(cap);
	SWAP(namev);
	SWAP(flagv);
	SWAP(resv);
	SWAP(vcap);
#undef SWAP
}

/* A worker probes a share handed to it, with its own prober. */
static void probe_share_run(struct worker *wk, struct probe_share *sh)
{
	struct dcp_walk *w = wk->w;

	if (!wk->batch && dcp_batch_new((w->o.flags & DCP_WALK_PROBE_SYNC) ?
					DCP_BATCH_SYNC : 0, &wk->batch) < 0) {
		for (size_t i = 0; i < sh->n; i++)
			sh->res[i] = -ENOMEM;
		return;
	}
	dcp_batch_probe(wk->batch, sh->dirfd, sh->names, sh->flags, sh->n, sh->res);
}

/*
 * Start probing wk->namev[0..K) relative to DIRFD into wk->resv: a large
 * batch (one chunk of a wide directory) is cut into shares that the idle
 * workers take, so that every core probes.  With AHEAD the caller reads
 * the next chunk meanwhile, so every share is offered; otherwise the
 * caller probes the first one itself at once.  probe_finish() takes back
 * what nobody took and waits for the rest.  The probes are the same
 * RESOLVE_CACHED opens whoever makes them; only the visits stay on this
 * thread, in order.
 */
static void probe_start(struct worker *wk, int dirfd, size_t k, bool ahead)
{
	struct dcp_walk *w = wk->w;
	size_t parts = 1, per, off, first;

	wk->nsh = 0;
	wk->shfd = dirfd;
	if (k >= 2 * SHARE_MIN && w->nthreads > 1) {
		pthread_mutex_lock(&w->lock);
		/* Reading ahead, the caller picks up what is left: finer shares. */
		parts = w->idle ? (ahead ? k / SHARE_MIN : 1 + w->idle) : 1;
		pthread_mutex_unlock(&w->lock);
		if (parts > MAX_SHARES)
			parts = MAX_SHARES;
		if (parts > k / SHARE_MIN)
			parts = k / SHARE_MIN;
	}
	if (parts <= 1) {
		dcp_batch_probe(wk->batch, dirfd, wk->namev, wk->flagv, k, wk->resv);
		return;
	}
	if (!wk->sh) {
		wk->sh = calloc(MAX_SHARES, sizeof(*wk->sh));
		if (!wk->sh) {
			dcp_batch_probe(wk->batch, dirfd, wk->namev, wk->flagv, k, wk->resv);
			return;
		}
	}
	per = (k + parts - 1) / parts;
	first = ahead ? 0 : 1;
	pthread_mutex_lock(&w->lock);
	/* Pushed last first: the workers take them from the front, in order. */
	for (size_t i = parts; i-- > first;) {
		off = i * per;
		if (off >= k)
			continue;
		wk->sh[wk->nsh] = (struct probe_share){
			.next = w->shares, .dirfd = dirfd, .names = wk->namev + off,
			.flags = wk->flagv + off, .res = wk->resv + off,
			.n = off + per <= k ? per : k - off,
		};
		w->shares = &wk->sh[wk->nsh++];
	}
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	if (!ahead)
		dcp_batch_probe(wk->batch, dirfd, wk->namev, wk->flagv, per, wk->resv);
}

/* The shares of probe_start(): probe those nobody took, wait for the others. */
static void probe_finish(struct worker *wk)
{
	struct dcp_walk *w = wk->w;

	if (!wk->nsh)
		return;
	pthread_mutex_lock(&w->lock);
	for (size_t i = wk->nsh; i-- > 0;) {
		struct probe_share *sh = &wk->sh[i];

		if (sh->taken)
			continue;
		for (struct probe_share **pp = &w->shares; *pp; pp = &(*pp)->next) {
			if (*pp == sh) {
				*pp = sh->next;
				break;
			}
		}
		sh->taken = true;
		pthread_mutex_unlock(&w->lock);
		dcp_batch_probe(wk->batch, wk->shfd, sh->names, sh->flags, sh->n, sh->res);
		pthread_mutex_lock(&w->lock);
		sh->done = true;
	}
	for (size_t i = 0; i < wk->nsh; i++)
		while (!wk->sh[i].done)
			pthread_cond_wait(&w->share_done, &w->lock);
	pthread_mutex_unlock(&w->lock);
	wk->nsh = 0;
}

/*
 * Probe every entry that is not excluded, in batches, with DCP_NOTDIR:
 * the probe opens nothing whatever the entry is (see dcp_probe.h).  Each
 * entry that may be a directory is probed a second time as "NAME/.", in
 * the same batch: whether lookups inside it are cached for this caller.
 */
static int probe_entries(struct worker *wk, int dirfd, bool ahead)
{
	struct dcp_walk *w = wk->w;
	unsigned flags = w->o.probe_flags | DCP_NOTDIR;
	size_t m = 0, k;

	if (!wk->batch) {
		int ret = dcp_batch_new((w->o.flags & DCP_WALK_PROBE_SYNC) ?
					DCP_BATCH_SYNC : 0, &wk->batch);
		if (ret < 0)
			return ret;
	}
	if (!worker_vectors(wk, 2 * wk->nents))
		return -ENOMEM;
	dcp_buf_reset(&wk->inames);
	for (size_t i = 0; i < wk->nents; i++) {
		const struct ent *en = &wk->ents[i];
		const char *name = wk->names.data + en->off;

		if (en->skip)
			continue;
		wk->namev[m] = name;
		wk->flagv[m++] = flags;
		if (maybe_dir(w, en->type)) {
			dcp_buf_puts(&wk->inames, name);
			dcp_buf_add(&wk->inames, "/.", 3);
		}
	}
	if (wk->inames.oom)
		return -ENOMEM;
	k = m;
	for (size_t i = 0, off = 0; i < wk->nents; i++) {
		if (wk->ents[i].skip || !maybe_dir(w, wk->ents[i].type))
			continue;
		wk->namev[k] = wk->inames.data + off;
		wk->flagv[k++] = flags;
		off += strlen(wk->inames.data + off) + 1;
	}
	probe_start(wk, dirfd, k, ahead);
	wk->nprobes = m;
	return 0;
}

/* The results of probe_entries(), once probe_finish() has them all. */
static void probe_entries_done(struct worker *wk, int dirfd)
{
	struct dcp_walk *w = wk->w;
	unsigned flags = w->o.probe_flags | DCP_NOTDIR;
	size_t m = 0, k = wk->nprobes;

	for (size_t i = 0; i < wk->nents; i++) {
		struct ent *en = &wk->ents[i];

		if (en->skip)
			continue;
		en->probe = wk->resv[m++];
		en->inner = maybe_dir(w, en->type) ? wk->resv[k++] : en->probe;
		if (en->probe != 0)
			en->inner = en->probe;
		else if (en->inner == -EAGAIN && en->type != DT_DIR &&
			 not_dir_at(dirfd, wk->names.data + en->off, flags & DCP_FOLLOW))
			en->inner = 0; /* "FILE/." misses: not a directory, nothing inside */
	}
}

/* Everything below a cold directory misses: its full paths would block. */
static void probe_cold(struct worker *wk)
{
	for (size_t i = 0; i < wk->nents; i++)
		wk->ents[i].probe = wk->ents[i].inner = -EAGAIN;
}

static void mount_unsafe(struct worker *wk, struct node *n);

/*
 * Should the entries of N be probed (DCP_WALK_PROBE)?  Below a cold
 * directory every entry misses, probed or not.  With several roots a cold
 * listing still probes, for the record (seen_share), while another root
 * may list it warm later.
 */
static bool chunk_measure(const struct worker *wk, const struct node *n)
{
	const struct dcp_walk *w = wk->w;

	return (w->o.flags & DCP_WALK_PROBE) &&
	       (!n->cold || (w->multi && !__atomic_load_n(&w->late, __ATOMIC_RELAXED)));
}

/*
 * One chunk of directory N's entries, read into the worker: leave out the
 * excluded ones and start probing the others (list_chunk() finishes).
 * AHEAD: the caller reads the next chunk before list_chunk().  Returns
 * false when probing could not start (no memory).
 */
static bool chunk_start(struct worker *wk, struct node *n, bool ahead)
{
	struct dcp_walk *w = wk->w;
	size_t dirlen = wk->path.len;
	bool slash = dirlen && wk->path.data[dirlen - 1] != '/';

	if ((w->o.flags & DCP_WALK_INODE_ORDER) && wk->nents > 1)
		qsort(wk->ents, wk->nents, sizeof(*wk->ents), cmp_ino);
	if (w->o.excludes) {
		for (size_t i = 0; i < wk->nents; i++) {
			const char *name = wk->names.data + wk->ents[i].off;

			path_join(wk, dirlen, slash, name);
			wk->ents[i].skip = excluded(w, name, wk->path.data);
		}
		wk->path.len = dirlen;
		wk->path.data[dirlen] = '\0';
	}
	wk->nsh = 0;
	wk->nprobes = 0;
	if (chunk_measure(wk, n) && probe_entries(wk, n->fd, ahead) < 0) {
		w->failure = -ENOMEM;
		wk->nents = 0;
		return false;
	}
	return true;
}

/*
 * The chunk of chunk_start(), once probed: visit its entries, and add the
 * subdirectories to descend into to wk->kids.
 */
static void list_chunk(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	struct dcp_entry e;
	int ret;
	size_t dirlen = wk->path.len;
	bool slash = dirlen && wk->path.data[dirlen - 1] != '/';
	bool descend_ok = w->o.max_depth < 0 || n->pub.depth + 1 < w->o.max_depth;
	bool probe = w->o.flags & DCP_WALK_PROBE;
	bool measure = chunk_measure(wk, n);

	if (measure) {
		probe_finish(wk);
		probe_entries_done(wk, n->fd);
	}
	if (probe && !measure && n->cold) {
		probe_cold(wk);
	} else if (measure && !n->cold && (w->o.flags & DCP_WALK_FOLLOW)) {
		cold_settle(wk, n);
	}
	if (w->multi)
		seen_share(wk, n);
	if (probe && n->cold)
		probe_cold(wk);

	for (size_t i = 0; i < wk->nents && !__atomic_load_n(&w->aborted, __ATOMIC_RELAXED); i++) {
		const struct ent *en = &wk->ents[i];
		const char *name = wk->names.data + en->off;
		bool via_link = false;

		if (en->skip)
			continue;
		path_join(wk, dirlen, slash, name);
		if (wk->path.oom) {
			w->failure = -ENOMEM;
			break;
		}
		e = (struct dcp_entry){
			.dirfd = n->fd,
			.name = name,
			.path = wk->path.data,
			.pathlen = wk->path.len,
			.dir = &n->pub,
			.type = en->type,
			.ino = en->ino,
			.depth = n->pub.depth + 1,
			.worker = wk->idx,
			.root = n->root,
			.probe = en->probe,
			.inner = en->inner,
			.again = en->again,
		};
		ret = w->o.visit(&e, w->o.arg);
		if (ret == DCP_WALK_ABORT) {
			__atomic_store_n(&w->aborted, true, __ATOMIC_RELAXED);
			break;
		}
		if (ret != DCP_WALK_DESCEND || !descend_ok)
			continue;
		bool cold = (w->o.flags & DCP_WALK_PROBE) &&
			    (n->cold || en->probe != 0 || en->inner == -EAGAIN);
		bool defer = cold && (w->o.flags & DCP_WALK_FOLLOW) &&
			     (en->type == DT_LNK || en->type == DT_UNKNOWN);
		if (!defer) {
			ret = entry_is_dir(w, n->fd, name, en->type, &via_link);
			/* A link no longer cached since its probe (a FUSE
			 * entry timed out): followed last, with care. */
			if (ret == -EAGAIN && (w->o.flags & DCP_WALK_FOLLOW) &&
			    (en->type == DT_LNK || en->type == DT_UNKNOWN)) {
				defer = true;
			} else {
				if (ret < 0)
					report(w, &e, ret);
				if (ret <= 0)
					continue;
			}
		}
		struct node *kid = node_new(w, n, name, strlen(name));
		if (!kid || !worker_add_kid(wk, kid)) {
			free(kid ? kid->name : NULL);
			free(kid);
			w->failure = -ENOMEM;
			break;
		}
		kid->via_link = !defer && via_link;
		kid->linked = n->linked || kid->via_link || defer;
		kid->cold = cold;
		kid->deferred = defer;
		kid->entry_again = en->again;
		kid->pub.pathlen = wk->path.len;
		kid->pub.probe = en->probe;
		kid->pub.inner = en->inner;
		kid->pub.link = en->type == DT_LNK;
		kid->pub.cold_top = n->cold ? n->pub.cold_top : cold ? &kid->pub : NULL;
	}
}

/*
 * List directory N (its descriptor already open), visit every entry, and
 * queue the subdirectories the visitor let us descend into.
 */
static void list_dir(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	struct dcp_entry e;
	struct stat st;

	worker_path(wk, n);
	fill_dir_entry(&e, wk, n);
	if (fstat(n->fd, &st) < 0) {
		report(w, &e, errno);
		return;
	}
	n->pub.dev = st.st_dev;
	n->pub.ino = st.st_ino;
	n->pub.uid = st.st_uid;
	n->pub.mode = st.st_mode;
	/* A statx per directory saved where the open already said it. */
	n->pub.mnt_id = n->same_mnt ? n->parent->pub.mnt_id : dcp_mnt_id(n->fd);
	if (!n->parent)
		n->rootdev = st.st_dev;
	if ((w->o.flags & DCP_WALK_XDEV) && st.st_dev != n->rootdev)
		return; /* a mount point: visited, not listed */
	if (n->parent && w->o.skip_mount && n->pub.mnt_id != n->parent->pub.mnt_id) {
		/* Only without openat2 (open_kid() asked before the open). */
		int why = w->o.skip_mount(n->pub.mnt_id, w->o.arg);

		if (why == DCP_WALK_MOUNT_UNSAFE)
			mount_unsafe(wk, n);
		if (why != DCP_WALK_MOUNT_ENTER)
			return; /* an excluded filesystem type: likewise */
	}
	if (w->o.flags & DCP_WALK_FOLLOW) {
		for (const struct node *a = n->parent; a; a = a->parent) {
			if (a->pub.dev == st.st_dev && a->pub.ino == st.st_ino) {
				report(w, &e, ELOOP);
				return;
			}
		}
	}
	n->listed = true;
	if (w->o.flags & DCP_WALK_READAHEAD)
		dcp_dirra_dir(&w->ra, n->fd, &st);
	/*
	 * A large directory is read, probed and visited a chunk at a time, so
	 * memory follows the chunk, not the directory.  Several roots share a
	 * directory's probes whole (seen_share): read at once.
	 */
	size_t max = w->multi ? SIZE_MAX : CHUNK_ENTS;
	size_t dirlen = wk->path.len;
	int more = read_dir(wk, n->fd, max);

	wk->nkids = 0;
	/*
	 * While the other threads probe a chunk, this one reads the next:
	 * getdents64 touches no entry, and the next chunk's probes start
	 * only after this chunk's visits.
	 */
	for (;;) {
		bool ahead = more > 0 && !__atomic_load_n(&w->aborted, __ATOMIC_RELAXED);
		int next = 0;

		if (more < 0) {
			report(w, &e, more);
			if (more == -ENOMEM)
				w->failure = more;
		}
		if (wk->nents && !chunk_start(wk, n, ahead))
			ahead = false;
		if (ahead) {
			chunk_swap(wk);
			next = read_dir(wk, n->fd, max);
			chunk_swap(wk);
		}
		if (wk->nents)
			list_chunk(wk, n);
		wk->path.len = dirlen;
		wk->path.data[dirlen] = '\0';
		if (!ahead || __atomic_load_n(&w->aborted, __ATOMIC_RELAXED))
			break;
		chunk_swap(wk);
		more = next;
	}
}
/* Queue the children found by list_dir() and settle N.  Lock held. */
static int queue_kids(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	int pushed = 0;

	/* Pushed in reverse, so the first entry is listed first (LIFO). */
	for (size_t i = wk->nkids; i-- > 0;) {
		struct item *it = calloc(1, sizeof(*it));
		struct node *kid = wk->kids[i];

		if (!it) {
			w->failure = -ENOMEM;
			free(kid->name);
			free(kid);
			continue;
		}
		it->node = kid;
		it->root = kid->root;
		n->refs++;
		n->pending++;
		kid->counted = true;
		if (kid->deferred) {
			it->next = w->deferred;
			w->deferred = it;
			continue;
		}
		push_item(w, it);
		pushed++;
	}
	wk->nkids = 0;
	return pushed;
}

static void finish_dir(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	int pushed;

	pthread_mutex_lock(&w->lock);
	pushed = queue_kids(wk, n);
	n->listing = false;
	node_settle(w, n);
	node_put(w, n);
	/*
	 * One wakeup per new item, for as many idle workers as there are: a
	 * broadcast woke every idle thread (63 for warm's default) to find
	 * one or two items, each a futex call and a context switch.
	 */
	for (unsigned i = 0; i < (unsigned)pushed && i < w->idle; i++)
		pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
}

/* N is on a mount where an open may wait: not listed, and said. */
static void mount_unsafe(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	struct dcp_entry e;

	if (!w->o.unvisited)
		return;
	worker_path(wk, n);
	fill_dir_entry(&e, wk, n);
	e.probe = n->pub.probe;
	e.inner = n->pub.inner;
	w->o.unvisited(&e, w->o.arg);
}

static void do_dir(struct worker *wk, struct node *n)
{
	struct dcp_walk *w = wk->w;
	int ret = open_node(w, n);

	/* A deferred link that is not a directory, or dangles: nothing to list. */
	if (n->deferred && (ret == -ENOTDIR || ret == -ENOENT))
		ret = 0, n->fd = -1;
	/* A mount kept out (-x, skip_mount): visited, not listed. */
	if (ret == -EXDEV)
		ret = 0, n->fd = -1;
	if (ret == -EREMOTE) {
		mount_unsafe(wk, n);
		ret = 0, n->fd = -1;
	}
	if (ret < 0) {
		struct dcp_entry e;

		worker_path(wk, n);
		fill_dir_entry(&e, wk, n);
		report(w, &e, ret);
	} else if (n->fd >= 0 && !__atomic_load_n(&w->aborted, __ATOMIC_RELAXED)) {
		list_dir(wk, n);
	}
	finish_dir(wk, n);
}

/* The probe of "PATH/." for a root: are lookups inside it cached? */
static int probe_inner(struct dcp_buf *b, const char *path, unsigned flags)
{
	int ret;

	dcp_buf_reset(b);
	dcp_buf_puts(b, path);
	dcp_buf_add(b, "/.", 3);
	if (b->oom)
		return -ENOMEM;
	ret = dcp_probe_at(AT_FDCWD, b->data, flags | DCP_NOTDIR);
	if (ret == -EAGAIN && not_dir_at(AT_FDCWD, path, flags & DCP_FOLLOW))
		ret = 0; /* not a directory: nothing inside */
	return ret;
}

/* A root's probes: the path, and inside it when it may be listed. */
static void probe_root(struct dcp_walk *w, struct dcp_buf *b, const char *path,
		       int *probe, int *inner)
{
	unsigned pf = w->o.probe_flags | (root_follow(w) ? DCP_FOLLOW : 0);

	*probe = *inner = dcp_probe_at(AT_FDCWD, path, pf);
	if (*probe == 0 && w->o.max_depth != 0)
		*inner = probe_inner(b, path, pf);
}

/* Does PATH name anything (a lookup that may do I/O: after the probes)? */
static bool exists_at(const char *path, bool follow)
{
	struct stat st;

	return fstatat(AT_FDCWD, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0;
}

static void do_root(struct worker *wk, struct item *it)
{
	struct dcp_walk *w = wk->w;
	struct dcp_entry e = {
		.dirfd = AT_FDCWD,
		.name = it->path,
		.path = it->path,
		.pathlen = strlen(it->path),
		.type = DT_UNKNOWN,
		.worker = wk->idx,
		.root = it->root,
	};
	struct node *n;
	int ret;

	if (it->planned) {
		e.probe = it->probe; /* made before the run opened anything */
		e.inner = it->inner;
	} else if (w->o.flags & DCP_WALK_PROBE) {
		probe_root(w, &wk->inames, it->path, &e.probe, &e.inner);
	}
	e.again = it->again;
	ret = w->o.visit(&e, w->o.arg);

	if (ret == DCP_WALK_ABORT) {
		__atomic_store_n(&w->aborted, true, __ATOMIC_RELAXED);
		return;
	}
	if (ret != DCP_WALK_DESCEND || w->o.max_depth == 0)
		return;
	n = node_new(w, NULL, it->path, e.pathlen);
	if (!n) {
		w->failure = -ENOMEM;
		return;
	}
	n->root = n->pub.root = it->root;
	n->entry_again = it->again;
	n->cold = (w->o.flags & DCP_WALK_PROBE) && (e.probe != 0 || e.inner == -EAGAIN);
	n->pub.pathlen = e.pathlen;
	n->pub.probe = e.probe;
	n->pub.inner = e.inner;
	n->pub.cold_top = n->cold ? &n->pub : NULL;
	ret = open_root(w, n);
	/*
	 * ENOTDIR also comes from a path that does not resolve (FILE/x: a
	 * component before the last is not a directory): that root is not
	 * there to walk, as a missing one.  (Its probe could only miss.)
	 */
	if (ret == -ENOTDIR && !exists_at(it->path, root_follow(w)))
		report(w, &e, ret);
	else if (ret == 0) {
		list_dir(wk, n);
	} else if (ret != -ENOTDIR && !(ret == -ELOOP && !root_follow(w))) {
		/* Not a directory, or a symlink we do not follow: nothing to list. */
		report(w, &e, ret);
	}
	finish_dir(wk, n);
}

/* ---- several roots: planned before anything is opened ---------------- */

/*
 * A root's own entry lies in its parent directory, where the walk of
 * another root meets it as well: claim it there, by the last name of the
 * path as given, so that the root's visit counts it and a listing of the
 * parent does not.  The parent is opened with RESOLVE_CACHED (which warms
 * nothing) unless OPEN_COLD; a root whose parent is cold tries again when
 * only cold walks are left.  Lock held, or no worker has work yet.
 */
static void root_claim(struct dcp_walk *w, struct item *it, bool open_cold)
{
	const char *p = it->path;
	size_t len = strlen(p), b, e;
	struct seen_dir *sd;
	struct stat st;
	uint64_t h, *c;
	char *parent;
	int fd;

	while (len > 1 && p[len - 1] == '/')
		len--;
	for (b = len; b > 0 && p[b - 1] != '/'; b--)
		;
	if (len == b || (len - b == 1 && p[b] == '.') ||
	    (len - b == 2 && p[b] == '.' && p[b + 1] == '.'))
		return; /* "/", ".", "..": no name in a parent to claim */
	for (e = b; e > 1 && p[e - 1] == '/'; e--)
		;
	parent = b ? strndup(p, e) : strdup(".");
	if (!parent)
		return;
	fd = dcp_openat2(AT_FDCWD, parent, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
			 open_cold ? 0 : RESOLVE_CACHED);
	free(parent);
	it->claim_late = fd == -EAGAIN && !open_cold;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	close(fd);
	h = name_hash(p + b, len - b);
	sd = seen_get(w, st.st_dev, st.st_ino);
	if (!sd)
		return;
	if (seen_claimed(sd, h) ||
	    (sd->state == SEEN_DONE && sd->kmax[0] && seen_find(sd, h) != NULL)) {
		it->again = true; /* claimed by another root, or listed already */
		return;
	}
	c = realloc(sd->claims, (sd->nclaims + 1) * sizeof(*c));
	if (!c)
		return;
	c[sd->nclaims++] = h;
	sd->claims = c;
}

/* The root in T (CAP slots) equal to IT, or NULL after adding IT. */
static struct item *root_map(struct item **t, size_t cap, uint64_t h,
			     struct item *it, bool by_id)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1)) {
		struct item *o = t[i];

		if (!o) {
			t[i] = it;
			return NULL;
		}
		if (by_id ? o->dev == it->dev && o->ino == it->ino :
			    strcmp(o->path, it->path) == 0)
			return o;
	}
}

/*
 * Several roots of a recursive walk (dcp_walk_add): probe every root
 * before anything is opened; drop a root that names an earlier one again
 * (the same text, or the same warm directory by another path) as its
 * alias; place warm roots with RESOLVE_CACHED opens and claim their own
 * entries; hold back the cold ones, whose opening warms their path, until
 * everything warm is walked (see worker_main).  Then hand the warm ones to
 * the workers.  Called by the one thread that adds roots.
 */
static void plan_roots(struct dcp_walk *w)
{
	struct item *list = w->gathered, *it, *next, *same;
	struct item *warm = NULL, **wt = &warm, **ct = &w->cold_roots, *dead = NULL;
	struct item **byname = NULL, **byid = NULL;
	bool probe = w->o.flags & DCP_WALK_PROBE;
	size_t n = w->ngathered, cap = 16, nwarm = 0;
	struct dcp_buf b = DCP_BUF_INIT;

	w->gathered = NULL;
	w->gathered_tail = &w->gathered;
	w->ngathered = 0;
	if (n > 1) {
		while (cap < 2 * n)
			cap *= 2;
		byname = calloc(cap, sizeof(*byname));
		byid = calloc(cap, sizeof(*byid));
		w->multi = byname && byid;
		if (!w->multi)
			w->failure = -ENOMEM;
	}
	for (it = list; it; it = next) {
		bool cold = false;

		next = it->next;
		it->next = NULL;
		if (!w->multi) {
			*wt = it;
			wt = &it->next;
			nwarm++;
			continue;
		}
		if (probe) {
			it->planned = true;
			probe_root(w, &b, it->path, &it->probe, &it->inner);
			cold = it->probe != 0 || it->inner == -EAGAIN;
		}
		same = root_map(byname, cap, name_hash(it->path, strlen(it->path)), it, false);
		if (!same && !cold) {
			unsigned long long fl = O_PATH | O_CLOEXEC | (root_follow(w) ? 0 : O_NOFOLLOW);
			int fd = dcp_openat2(AT_FDCWD, it->path, fl, 0, probe ? RESOLVE_CACHED : 0);
			struct stat st;

			if (fd >= 0 && fstat(fd, &st) == 0) {
				it->dev = st.st_dev;
				it->ino = st.st_ino;
				same = root_map(byid, cap, id_slot(it->dev, it->ino, cap), it, true);
			} else if (probe) {
				cold = true; /* not placed without a lookup: last */
			}
			if (fd >= 0)
				close(fd);
		}
		if (same) {
			if (w->o.alias)
				w->o.alias(it->root, same->root, w->o.arg);
			it->next = dead; /* byname may point at it: freed below */
			dead = it;
			continue;
		}
		root_claim(w, it, !probe);
		if (cold) {
			*ct = it;
			ct = &it->next;
		} else {
			*wt = it;
			wt = &it->next;
			nwarm++;
		}
	}
	free(byname);
	free(byid);
	dcp_buf_free(&b);
	for (; dead; dead = next) {
		next = dead->next;
		free(dead);
	}
	pthread_mutex_lock(&w->lock);
	if (warm) {
		*w->roots_tail = warm;
		w->roots_tail = wt;
		w->queued_roots += nwarm;
	}
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Everything warm is walked (every worker idle, lock held): the cold
 * roots go out, after their claims that had to wait for a cold parent.
 * Opening them warms nothing a walk still has to measure now, so they are
 * placed too: a cold root that is a directory whose own entry a visit
 * counted already (the target of a cold symlink followed under -L, a
 * bind mount of a root) is a repeat; one that is the same directory as an earlier
 * cold root is its alias (both miss everywhere).  Not under
 * DCP_WALK_NO_PERTURB, which opens nothing cold.
 */
static void release_cold_roots(struct dcp_walk *w)
{
	bool open_cold = !(w->o.flags & DCP_WALK_NO_PERTURB);
	struct item *placed = NULL;

	while (w->cold_roots) {
		struct item *it = w->cold_roots, *o;
		struct seen_dir *sd = NULL;
		struct stat st;
		int fd = -1;

		w->cold_roots = it->next;
		it->next = NULL;
		if (it->claim_late)
			root_claim(w, it, open_cold);
		if (open_cold)
			fd = dcp_openat2(AT_FDCWD, it->path,
					 O_PATH | O_CLOEXEC | (root_follow(w) ? 0 : O_NOFOLLOW), 0, 0);
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			it->dev = st.st_dev;
			it->ino = st.st_ino;
			for (o = placed; o && !(o->dev == it->dev && o->ino == it->ino); o = o->alias_next)
				;
			if (o) {
				close(fd);
				if (w->o.alias)
					w->o.alias(it->root, o->root, w->o.arg);
				free(it);
				continue;
			}
			it->alias_next = placed;
			placed = it;
			sd = seen_get(w, it->dev, it->ino);
			if (sd && sd->entry_counted)
				it->again = true;
		}
		if (fd >= 0)
			close(fd);
		*w->roots_tail = it;
		w->roots_tail = &it->next;
		w->queued_roots++;
	}
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct dcp_walk *w = wk->w;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct item *it;

		while (!w->shares && !w->stack && !w->roots && !(w->closing && w->active == 0)) {
			w->idle++;
			pthread_cond_wait(&w->work, &w->lock);
			w->idle--;
		}
		if (w->shares) {
			struct probe_share *sh = w->shares;

			w->shares = sh->next;
			sh->taken = true;
			pthread_mutex_unlock(&w->lock);
			probe_share_run(wk, sh);
			pthread_mutex_lock(&w->lock);
			sh->done = true;
			pthread_cond_broadcast(&w->share_done);
			continue;
		}
		if (w->stack) {
			it = w->stack;
			w->stack = it->next;
		} else if (w->roots) {
			/* Depth first within a root, roots in the order given. */
			it = w->roots;
			w->roots = it->next;
			if (!w->roots)
				w->roots_tail = &w->roots;
			w->queued_roots--;
			pthread_cond_signal(&w->room);
		} else if (w->deferred || w->cold_roots) {
			/*
			 * Everything else is walked: now follow the cold
			 * links, and walk the cold roots.
			 */
			w->stack = w->deferred;
			w->deferred = NULL;
			release_cold_roots(w);
			__atomic_store_n(&w->late, true, __ATOMIC_RELAXED);
			pthread_cond_broadcast(&w->work);
			continue;
		} else {
			break;
		}
		w->active++;
		pthread_mutex_unlock(&w->lock);

		if (it->node) {
			if (__atomic_load_n(&w->aborted, __ATOMIC_RELAXED)) {
				pthread_mutex_lock(&w->lock);
				node_put(w, it->node);
				pthread_mutex_unlock(&w->lock);
			} else {
				do_dir(wk, it->node);
			}
		} else if (!__atomic_load_n(&w->aborted, __ATOMIC_RELAXED)) {
			do_root(wk, it);
		}
		free(it);

		pthread_mutex_lock(&w->lock);
		w->active--;
		if (!w->stack && !w->roots && w->active == 0)
			pthread_cond_broadcast(&w->work);
	}
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	dcp_batch_free(wk->batch); /* the ring belongs to this thread */
	wk->batch = NULL;
	return NULL;
}

/* ---- public interface ------------------------------------------------ */

/*
 * Descriptors the walk may use: those still free (dcp_fd_free(): the
 * limit less those open, counted under a small limit, so that
 * descriptors given by the parent count too) less a reserve for the
 * command's transient ones; RLIM_INFINITY without a limit.
 */
static rlim_t fds_avail(void)
{
	uint32_t f = dcp_fd_free();

	if (f == UINT32_MAX)
		return RLIM_INFINITY;
	return f > FD_RESERVE - 3 ? f - (FD_RESERVE - 3) : 0;
}

/*
 * The directory descriptor budget, from the descriptors free less what
 * others hold: each worker a probe descriptor and a transient one, plus
 * the caller's own (o->fds_per_thread each, o->fds_extra in all).  Lowers
 * *THREADS until every worker can also hold two directory descriptors.
 */
static unsigned fd_budget(const struct dcp_walk_opts *o, unsigned *threads)
{
	/* Under FOLLOW, retrace() holds one more, besides the transient one. */
	rlim_t per = 2 + ((o->flags & DCP_WALK_FOLLOW) ? 1 : 0) + (rlim_t)o->fds_per_thread;
	rlim_t t = *threads, avail = fds_avail();

	if (avail == RLIM_INFINITY)
		return FD_BUDGET_MAX;
	avail = avail > (rlim_t)o->fds_extra ? avail - o->fds_extra : 0;
	if (t * (per + 2) > avail)
		t = avail / (per + 2) ? avail / (per + 2) : 1;
	*threads = (unsigned)t;
	avail = avail > t * per ? avail - t * per : 0;
	if (avail > FD_BUDGET_MAX)
		avail = FD_BUDGET_MAX;
	return avail < 2 ? 2 : (unsigned)avail;
}

unsigned dcp_fd_threads(unsigned threads, unsigned per_thread)
{
	rlim_t avail = fds_avail();

	if (!per_thread || avail == RLIM_INFINITY)
		return threads;
	if ((rlim_t)threads * per_thread > avail)
		threads = (unsigned)(avail / per_thread);
	return threads;
}

static void items_free(struct item *it)
{
	for (struct item *next; it; it = next) {
		next = it->next;
		free(it);
	}
}

static void walk_free(struct dcp_walk *w)
{
	for (unsigned i = 0; i < w->nworkers; i++) {
		struct worker *wk = &w->workers[i];

		dcp_buf_free(&wk->path);
		free(wk->pathids);
		free(wk->pathends);
		free(wk->climb);
		dcp_buf_free(&wk->names);
		dcp_buf_free(&wk->inames);
		free(wk->ents);
		free(wk->kids);
		free(wk->dents);
		free(wk->namev);
		free(wk->flagv);
		free(wk->resv);
		dcp_buf_free(&wk->spare.names);
		dcp_buf_free(&wk->spare.inames);
		free(wk->spare.ents);
		free(wk->spare.namev);
		free(wk->spare.flagv);
		free(wk->spare.resv);
		free(wk->sh);
	}
	items_free(w->roots);
	items_free(w->gathered);
	items_free(w->cold_roots);
	seen_free(w);
	cold_free(w);
	dcp_buf_free(&w->donepath);
	pthread_mutex_destroy(&w->lock);
	dcp_dirra_fini(&w->ra);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->room);
	pthread_cond_destroy(&w->seen_cv);
	pthread_cond_destroy(&w->share_done);
	free(w->workers);
	free(w);
}

int dcp_walk_new(const struct dcp_walk_opts *opts, struct dcp_walk **out)
{
	struct dcp_walk *w;
	unsigned threads = opts->threads;
	long ncpu;
	int ret = 0;

	if (!opts->visit)
		return -EINVAL;
	if (!threads) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		threads = ncpu > 0 ? (unsigned)ncpu : 1;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->o = *opts;
	w->data_off = (sizeof(struct node) + 15) & ~(size_t)15;
	/* Every worker may hold two directory descriptors at once. */
	w->fd_budget = fd_budget(opts, &threads);
	w->lru.lru_next = w->lru.lru_prev = &w->lru;
	w->roots_tail = &w->roots;
	/* Adaptive: the lock is held for microseconds; spinning a little
	 * beats sleeping, measured as 5x fewer context switches under load. */
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&w->lock, &ma);
	pthread_mutex_init(&w->cold_lock, &ma);
	dcp_dirra_init(&w->ra);
	pthread_mutexattr_destroy(&ma);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->room, NULL);
	pthread_cond_init(&w->seen_cv, NULL);
	pthread_cond_init(&w->share_done, NULL);
	w->gathered_tail = &w->gathered;
	w->workers = calloc(threads, sizeof(*w->workers));
	if (!w->workers) {
		walk_free(w);
		return -ENOMEM;
	}
	w->nworkers = threads;
	for (unsigned i = 0; i < threads; i++) {
		struct worker *wk = &w->workers[i];

		wk->w = w;
		wk->idx = i;
		wk->dents = malloc(DENTS_BUF);
		if (!wk->dents) {
			ret = -ENOMEM;
			break;
		}
		ret = -dcp_thread_create(&wk->thread, worker_main, wk);
		if (ret == -EAGAIN && w->nthreads > 0) {
			/* A task limit (ulimit -u, pids.max): walk with the
			 * threads we have, as long as there is one. */
			ret = 0;
			break;
		}
		if (ret < 0)
			break;
		w->nthreads++;
	}
	if (ret < 0) {
		dcp_walk_finish(w);
		return ret;
	}
	*out = w;
	return 0;
}

unsigned dcp_walk_threads(const struct dcp_walk *w)
{
	return w->nthreads;
}

int dcp_walk_add(struct dcp_walk *w, const char *path)
{
	size_t len = strlen(path);
	struct item *it = calloc(1, sizeof(*it) + len + 1);

	if (!it)
		return -ENOMEM;
	memcpy(it->path, path, len + 1);
	if (w->o.max_depth != 0) {
		/* Recursive: gathered for plan_roots(), walked from finish. */
		if (__atomic_load_n(&w->aborted, __ATOMIC_RELAXED)) {
			free(it);
			return -ECANCELED;
		}
		it->root = w->nroots++;
		*w->gathered_tail = it;
		w->gathered_tail = &it->next;
		w->ngathered++;
		return 0;
	}
	pthread_mutex_lock(&w->lock);
	while (w->queued_roots >= MAX_QUEUED_ROOTS && !__atomic_load_n(&w->aborted, __ATOMIC_RELAXED))
		pthread_cond_wait(&w->room, &w->lock);
	if (__atomic_load_n(&w->aborted, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&w->lock);
		free(it);
		return -ECANCELED;
	}
	it->root = w->nroots++;
	it->next = NULL;
	*w->roots_tail = it;
	w->roots_tail = &it->next;
	w->queued_roots++;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

int dcp_walk_finish(struct dcp_walk *w)
{
	int ret;

	if (w->gathered)
		plan_roots(w);
	pthread_mutex_lock(&w->lock);
	w->closing = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->workers[i].thread, NULL);
	ret = w->failure ? w->failure : w->aborted ? -ECANCELED : 0;
	walk_free(w);
	return ret;
}

int dcp_walk(const char *const *roots, size_t nroots,
	     const struct dcp_walk_opts *opts)
{
	struct dcp_walk *w;
	int ret = dcp_walk_new(opts, &w);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < nroots; i++)
		if (dcp_walk_add(w, roots[i]) < 0)
			break;
	return dcp_walk_finish(w);
}
