// SPDX-License-Identifier: MIT
/*
 * warm.c - the stat priming engine: lookups in flight on many threads.
 *
 * Trees go through the shared walker (walk.c), whose worker threads are the
 * pool: the visitor stats each entry relative to its directory's descriptor
 * before the walker touches it, in inode order.  Directories the walker is
 * about to open are not stat'ed, because opening them looks them up.  A
 * plain list of paths goes through a small pool of its own: one statx() of
 * the full path per entry warms every component of the chain.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcp_filter.h"
#include "dcp_mounts.h"
#include "dcp_pages.h"
#include "dcp_probe.h"
#include "dcp_probe_report.h"
#include "dcp_report.h"
#include "dcp_tally.h"
#include "dcp_util.h"
#include "dcp_walk.h"
#include "dcp_warm.h"
#include "private/dcp_thread.h"

/*
 * A lookup that misses sleeps on the disk, so the best count is set by the
 * storage's queue, not by the CPUs.  Measured cold on a copy of /usr
 * (157,661 entries, virtio disk, 2 CPUs; tests/bench/bench-warm.sh): medians
 * 1.85 s at -j8, 1.55 s at 16, 1.38 s at 32, 1.27 s at 64, and 32-128 within
 * noise of each other in a second sweep.
 */
#define WARM_DEFAULT_THREADS 64
#define WARM_MAX_THREADS 1024
#define WARM_QUEUE 1024 /* paths queued for the list pool */

enum { S_ENTRIES, S_ERRORS, S_COLD, S_CACHED_BEFORE, S_CACHED_AFTER,
       S_NEWLY, S_STILL_MISS, S_WALK_ERRORS, S_UNWALKED, S_AFTER, /* + dcp_state */
       S_N = S_AFTER + DCP_NSTATES };

/*
 * Counters of one worker: a single writer, read by snapshots.  With
 * DCP_WARM_ROOT_STATS the worker also sums what it counts for one root in
 * ACC, and adds that to the root's counters when it moves to another root
 * (and at the end): a big tree's root is not a cache line every thread
 * writes to.
 */
struct wstats {
	_Atomic uint64_t n[S_N];
	bool acc_on;
	size_t acc_root;
	uint64_t acc[S_N];
} __attribute__((aligned(64)));

/* What warm counts for a root's tree (DCP_WARM_ROOT_STATS), in the
 * tally module's root table (dcp_root_tally.data). */
struct rootcounts {
	_Atomic uint64_t n[S_N];
};
#define RC(r) ((struct rootcounts *)(r)->data)

/*
 * A cold link met under -L --check: warmed once the walk is done (late_links()),
 * as the walker follows it last, so that following it warms nothing the walk
 * has not probed yet.
 */
struct late {
	struct late *next;
	size_t pathlen, root;
	int before, depth;
	unsigned char type;
	bool again;
	char path[];
};

struct dcp_warm {
	struct dcp_warm_opts opts;
	unsigned nthreads;
	bool filtering; /* --type, --name or --mindepth */
	struct wstats *ws;
	uint64_t t0;
	int failed; /* -errno of the engine itself */
	_Atomic bool cancelled; /* dcp_warm_cancel(): drop the rest */
	_Atomic bool waited; /* dcp_warm_wait() ran: threads are gone, and
			      * elapsed_ns is final (release/acquire: a
			      * progress timer snapshots concurrently) */
	int wait_ret;
	uint64_t elapsed_ns;
	struct dcp_root_table *roots; /* DCP_WARM_ROOT_STATS with -r */
	struct dcp_pages_run *pages; /* DCP_WARM_PAGES: the measuring context */
	struct dcp_mounts *own_mounts; /* read when opts.mounts was NULL */
	pthread_mutex_t late_mu;
	struct late *late;	 /* cold links to warm last (-L --check) */

	/* recursive: the walker, and the stat pool its visitor feeds */
	struct dcp_walk *walk;
	unsigned walkers;	 /* walker threads: workers 0 .. walkers-1 */
	struct pending *pend;	 /* per walker thread: the batch being filled */
	struct batch *bq_head, **bq_tail;
	size_t bq_len;
	unsigned pool_sleeping;	 /* pool threads waiting for a batch (under mu) */
	_Atomic unsigned dups;	 /* directory descriptors held by the pool */
	unsigned max_dups;

	/* lists: a bounded queue of paths and the threads that stat them */
	pthread_t *tids;
	unsigned started;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	char *queue[WARM_QUEUE];
	size_t head, count;
	bool closing;
};

/*
 * The stat pool.  The walker visits all entries of a directory on one
 * thread; a directory of 20,000 files would be stat'ed one at a time, each
 * stat waiting for the disk.  So the visitor only collects the entries it
 * can hand off (those the walker will not touch again: not directories it
 * opens, not DT_UNKNOWN entries it stats) into batches of consecutive
 * inodes, and a pool of threads stats the batches in parallel, relative to
 * a duplicate of the directory's descriptor.  The walker's threads go on
 * listing directories meanwhile.  When no descriptor can be spared, the
 * visitor stats the entry itself.
 */
#define BATCH 64
#define INLINE 32 /* entries of a directory stat'ed by the visitor first */
#define MAX_QUEUED_BATCHES 256 /* 16,384 entries: 4 batches per pool thread at -j 64 */
#define WARM_DUPS_EXTRA 2 /* duplicates beyond two per walker thread */

struct sdir {
	int fd;		    /* dup() of the walker's directory descriptor */
	_Atomic unsigned refs; /* the pending slot + one per batch */
};

struct bent {
	size_t off;	  /* path in batch.paths */
	size_t pathlen;
	size_t namelen;
	int before;	  /* --check: the walker's probe */
	unsigned char type;
	bool again;	  /* dcp_entry.again */
};

struct batch {
	struct batch *next;
	struct sdir *dir;
	int depth;
	size_t root;	  /* of the directory: every entry's */
	unsigned n;
	struct bent ent[BATCH];
	struct dcp_buf paths;
};

struct worker_arg {
	struct dcp_warm *w;
	unsigned index;
};

/* What a walker thread is filling: entries of one directory. */
struct pending {
	const struct dcp_dir *dir; /* identity of the directory: pointer, dev, ino */
	dev_t dev;
	ino_t ino;
	struct sdir *sd;	   /* NULL: stat in the visitor (no descriptor) */
	struct batch *b;
	unsigned seen;		   /* entries of this directory so far */
	bool nodup;		   /* no descriptor could be had for it */
} __attribute__((aligned(64)));

unsigned dcp_warm_default_threads(void)
{
	return WARM_DEFAULT_THREADS;
}

static struct dcp_root_tally *root_at(const struct dcp_warm *w, size_t i)
{
	return w->roots ? dcp_root_table_get(w->roots, i) : NULL;
}

/* Add a worker's sums for its current root to the root's counters. */
static void root_flush(struct dcp_warm *w, struct wstats *s)
{
	struct dcp_root_tally *r = s->acc_on ? root_at(w, s->acc_root) : NULL;

	for (int i = 0; r && i < S_N; i++)
		if (s->acc[i])
			atomic_fetch_add_explicit(&RC(r)->n[i], s->acc[i], memory_order_relaxed);
	memset(s->acc, 0, sizeof(s->acc));
	s->acc_on = false;
}

/* Count I for ROOT, and in the run's totals unless AGAIN (another root's). */
static inline void bump_root(struct dcp_warm *w, struct wstats *s, size_t root, int i,
			     bool again)
{
	/* One writer per counter: a relaxed load and store, no locked add. */
	if (!again)
		atomic_store_explicit(&s->n[i],
				      atomic_load_explicit(&s->n[i], memory_order_relaxed) + 1,
				      memory_order_relaxed);
	if (!w->roots)
		return;
	if (s->acc_on && s->acc_root != root)
		root_flush(w, s);
	s->acc_on = true;
	s->acc_root = root;
	s->acc[i]++;
}

static int skip_mount(uint64_t mnt_id, void *arg);

/*
 * Look NAME up relative to DIRFD and tell whether it is a directory.  The
 * lookup reads the inode itself, so statx() costs nothing more; no
 * automount is triggered.  Following a dangling or looping symlink still
 * warms the link itself: only a failure of the link's own lookup is an
 * error.  BELOW a root, a link is followed by dcp_walk_lookup(), which
 * looks nothing up on a mount where a lookup may wait (a FUSE daemon that
 * its user stopped): the target of a link onto one is not warmed.
 */
static int warm_one(struct dcp_warm *w, int dirfd, const char *name, bool follow, bool below,
		    bool *isdir)
{
	struct statx stx;
	int flags = AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, fd;
	mode_t mode;

	*isdir = false;
	if (follow && w && below) {
		fd = dcp_walk_lookup(dirfd, name, true, skip_mount, w, &mode);
		if (fd >= 0) {
			close(fd);
			*isdir = S_ISDIR(mode);
			return 0;
		}
		if (fd != -ENOENT && fd != -ELOOP && fd != -EREMOTE)
			return -fd;
	} else if (statx(dirfd, name, flags | (follow ? 0 : AT_SYMLINK_NOFOLLOW), STATX_TYPE,
			 &stx) == 0) {
		*isdir = S_ISDIR(stx.stx_mode);
		return 0;
	} else if (!follow || (errno != ENOENT && errno != ELOOP)) {
		return errno;
	}
	if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) == 0)
		return 0;
	return errno;
}

static void account(struct dcp_warm *w, struct dcp_warm_event *ev)
{
	struct wstats *s = &w->ws[ev->worker];
	unsigned fl = w->opts.flags;
	bool tell = fl & DCP_WARM_REPORT_ALL;
#define bump(s, i) bump_root(w, s, ev->root, i, ev->again)

	bump(s, S_ENTRIES);
	if (ev->err || ev->probe_err) {
		bump(s, S_ERRORS);
		tell = true;
	}
	/* A root that cannot even be looked up (absent, through a file, not
	 * searchable) is a tree that could not be walked: a walk error, as
	 * dcache-probe -r counts it (one family, one meaning). */
	if ((fl & DCP_WARM_RECURSIVE) && ev->depth == 0 && ev->err)
		bump(s, S_WALK_ERRORS);
	/* A PATH that could not be warmed has no share: its tree, or it
	 * alone, is not there to be cached (warm --check /nonexistent). */
	if (ev->depth == 0 && ev->err)
		bump(s, S_UNWALKED);
	if (fl & DCP_WARM_CHECK) {
		bool was = ev->before == 0 || ev->before == -ENOENT;
		/* An entry warm failed on is an error, never "now cached",
		 * though its name is now known to be absent. */
		bool is = !ev->err && (ev->after == 0 || ev->after == -ENOENT);

		if (ev->before == -EAGAIN)
			bump(s, S_COLD);
		if (was)
			bump(s, S_CACHED_BEFORE);
		if (is)
			bump(s, S_CACHED_AFTER);
		if (ev->before == -EAGAIN && is)
			bump(s, S_NEWLY);
		if (ev->after == -EAGAIN) {
			bump(s, S_STILL_MISS);
			tell = true;
		}
		bump(s, S_AFTER + (int)(ev->err ? DCP_ERROR : dcp_state_of_errno(ev->after)));
	}
#undef bump
	if (tell && w->opts.report && !ev->again)
		w->opts.report(ev, w->opts.arg);
}

/* DCP_WARM_PAGES: read a regular file's data in (lib/pages.c). */
static void warm_data(struct dcp_warm *w, struct dcp_warm_event *ev, int dirfd,
		      const char *name, bool follow)
{
	/* -L reaches a file by several paths: it is read (and counted) once. */
	unsigned pf = (follow ? DCP_PAGES_FOLLOW : 0) | (ev->type == DT_REG ? DCP_PAGES_ISREG : 0) |
		      ((w->opts.flags & DCP_WARM_FOLLOW) ? DCP_PAGES_ONCE : 0) |
		      ((w->opts.flags & DCP_WARM_CHECK) ? DCP_PAGES_CHECK : 0);
	int ret = dcp_pages_warm_at(w->pages, dirfd, name, pf, w->opts.pages);

	/* Not a regular file, or reached through a link onto a mount where
	 * an open may wait (FUSE, NFS...): nothing to read. */
	if (ret < 0 && ret != -ENODEV && ret != -EREMOTE)
		ev->err = -ret;
}

/*
 * Warm one entry and account for it.  STAT false: the walker opens this
 * directory next, which looks it up, so a stat would be a wasted syscall.
 */
static int warm_entry(struct dcp_warm *w, struct dcp_warm_event *ev, int dirfd,
		      const char *name, bool follow, bool stat, bool *isdir,
		      const int *before)
{
	unsigned pflags = follow ? DCP_FOLLOW : 0;
	bool check = w->opts.flags & DCP_WARM_CHECK;

	/* d_type says it is no directory: the cheaper probe applies. */
	if (ev->type != DT_DIR && ev->type != DT_UNKNOWN && !(follow && ev->type == DT_LNK))
		pflags |= DCP_NOTDIR;
	/* dcp_probe_at() and the walker's batches ask a miss twice already
	 * (a concurrent mount fails a cached walk with EAGAIN too). */
	if (check && before)
		ev->before = *before; /* the walker probed it, in a batch */
	else if (check)
		ev->before = dcp_probe_at(dirfd, name, pflags);
	if (stat || check)
		ev->err = warm_one(w, dirfd, name, follow, ev->depth > 0, isdir);
	/* A repeat (reached from another root too) had its data read there. */
	if ((w->opts.flags & DCP_WARM_PAGES) && (stat || check) && !ev->err && !*isdir &&
	    !ev->again)
		warm_data(w, ev, dirfd, name, follow);
	if (check)
		ev->after = dcp_probe_at(dirfd, name, pflags);
	/* A probe that failed (EMFILE...) measured nothing: an error. */
	if (check && dcp_state_of_errno(ev->before) == DCP_ERROR)
		ev->probe_err = -ev->before;
	else if (check && dcp_state_of_errno(ev->after) == DCP_ERROR)
		ev->probe_err = -ev->after;
	account(w, ev);
	return ev->err;
}

/* --- trees: the walker's visitor and the stat pool ---------------------- */

static void sdir_put(struct dcp_warm *w, struct sdir *sd)
{
	if (atomic_fetch_sub(&sd->refs, 1) == 1) {
		close(sd->fd);
		atomic_fetch_sub(&w->dups, 1);
		free(sd);
	}
}

static struct sdir *sdir_new(struct dcp_warm *w, int dirfd)
{
	struct sdir *sd;

	if (atomic_fetch_add(&w->dups, 1) >= w->max_dups)
		goto none;
	sd = malloc(sizeof(*sd));
	if (!sd)
		goto none;
	sd->fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (sd->fd < 0) {
		free(sd);
		goto none;
	}
	atomic_init(&sd->refs, 1);
	return sd;
none:
	atomic_fetch_sub(&w->dups, 1);
	return NULL;
}

static void batch_submit(struct dcp_warm *w, struct batch *b)
{
	pthread_mutex_lock(&w->mu);
	while (w->bq_len >= MAX_QUEUED_BATCHES)
		pthread_cond_wait(&w->not_full, &w->mu);
	b->next = NULL;
	*w->bq_tail = b;
	w->bq_tail = &b->next;
	w->bq_len++;
	/*
	 * Wake a sleeping pool thread only when more batches wait than pool
	 * threads are awake to take them.  On a cached disk every stat is
	 * CPU and a few threads keep up (each wakeup is two futex calls and
	 * a context switch: issue 22 counted 34,000 for 68,000 stats); on a
	 * slow disk the awake ones sleep in their stats, batches pile up and
	 * more threads are woken, as many as the backlog asks for.
	 */
	if (w->pool_sleeping && w->bq_len > w->started - w->pool_sleeping)
		pthread_cond_signal(&w->not_empty);
	pthread_mutex_unlock(&w->mu);
}

/* The walker thread moves on: hand off what it collected. */
static void pending_flush(struct dcp_warm *w, struct pending *p)
{
	if (p->b) {
		batch_submit(w, p->b);
		p->b = NULL;
	}
	if (p->sd)
		sdir_put(w, p->sd);
	p->sd = NULL;
	p->dir = NULL;
}

/* Queue E for the pool; false when it must be stat'ed right here. */
static bool pending_add(struct dcp_warm *w, const struct dcp_entry *e)
{
	struct pending *p = &w->pend[e->worker];
	struct batch *b;
	size_t namelen;

	if (p->dir != e->dir || p->dev != e->dir->dev || p->ino != e->dir->ino) {
		pending_flush(w, p);
		p->dir = e->dir;
		p->dev = e->dir->dev;
		p->ino = e->dir->ino;
		p->seen = 0;
		p->nodup = false;
	}
	/*
	 * Most directories are small: handing their entries to another
	 * thread costs more than it saves.  Only past INLINE entries is a
	 * directory big enough to be split.
	 */
	if (++p->seen <= INLINE || p->nodup)
		return false;
	if (!p->sd) {
		p->sd = sdir_new(w, e->dirfd);
		if (!p->sd) {
			p->nodup = true;
			return false;
		}
	}
	if (!p->b) {
		p->b = calloc(1, sizeof(*p->b));
		if (!p->b)
			return false;
		p->b->dir = p->sd;
		p->b->depth = e->depth;
		p->b->root = e->root;
		atomic_fetch_add(&p->sd->refs, 1);
	}
	b = p->b;
	namelen = strlen(e->name);
	b->ent[b->n] = (struct bent){ b->paths.len, e->pathlen, namelen, e->probe, e->type,
				      e->again };
	dcp_buf_add(&b->paths, e->path, e->pathlen + 1);
	if (b->paths.oom) {
		/* Keep what was queued; this entry is stat'ed here. */
		b->paths.oom = false;
		b->paths.len = b->ent[b->n].off;
		return false;
	}
	if (++b->n == BATCH) {
		batch_submit(w, b);
		p->b = NULL;
	}
	return true;
}

static void *pool_worker(void *arg)
{
	struct worker_arg *wa = arg;
	struct dcp_warm *w = wa->w;
	unsigned index = wa->index;
	bool follow = w->opts.flags & DCP_WARM_FOLLOW;

	free(wa);
	for (;;) {
		struct batch *b;
		bool isdir;

		pthread_mutex_lock(&w->mu);
		while (!w->bq_head && !w->closing) {
			w->pool_sleeping++;
			pthread_cond_wait(&w->not_empty, &w->mu);
			w->pool_sleeping--;
		}
		b = w->bq_head;
		if (!b) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		w->bq_head = b->next;
		if (!w->bq_head)
			w->bq_tail = &w->bq_head;
		w->bq_len--;
		pthread_cond_signal(&w->not_full);
		pthread_mutex_unlock(&w->mu);

		for (unsigned i = 0; i < b->n && !atomic_load_explicit(&w->cancelled,
							       memory_order_relaxed); i++) {
			const struct bent *be = &b->ent[i];
			const char *path = b->paths.data + be->off;
			struct dcp_warm_event ev = {
				.path = path, .pathlen = be->pathlen, .op = DCP_WARM_OP_STAT,
				.type = be->type, .depth = b->depth, .worker = index,
				.root = b->root, .again = be->again,
			};

			warm_entry(w, &ev, b->dir->fd, path + be->pathlen - be->namelen,
				   follow, true, &isdir, &be->before);
		}
		sdir_put(w, b->dir);
		dcp_buf_free(&b->paths);
		free(b);
	}
}

/* Keep cold link E for late_links(); false when out of memory (warm it now). */
static bool late_add(struct dcp_warm *w, const struct dcp_entry *e)
{
	struct late *l = malloc(sizeof(*l) + e->pathlen + 1);

	if (!l)
		return false;
	*l = (struct late){ .pathlen = e->pathlen, .root = e->root, .before = e->probe,
			    .depth = e->depth, .type = e->type, .again = e->again };
	memcpy(l->path, e->path, e->pathlen + 1);
	pthread_mutex_lock(&w->late_mu);
	l->next = w->late;
	w->late = l;
	pthread_mutex_unlock(&w->late_mu);
	return true;
}

/*
 * The walk is done (its threads gone): warm the cold links it kept, by
 * their full paths, on worker 0's counts, their "before" the walker's probe.
 */
static void late_links(struct dcp_warm *w)
{
	for (struct late *l = w->late, *next; l; l = next) {
		struct dcp_warm_event ev = {
			.path = l->path, .pathlen = l->pathlen, .op = DCP_WARM_OP_STAT,
			.type = l->type, .depth = l->depth, .worker = 0, .root = l->root,
			.again = l->again,
		};
		bool isdir;

		next = l->next;
		if (!atomic_load_explicit(&w->cancelled, memory_order_relaxed))
			warm_entry(w, &ev, AT_FDCWD, l->path, true, true, &isdir, &l->before);
		free(l);
	}
	w->late = NULL;
}

static int visit(const struct dcp_entry *e, void *arg)
{
	struct dcp_warm *w = arg;
	unsigned fl = w->opts.flags;
	bool root = e->depth == 0;
	bool follow = (fl & DCP_WARM_FOLLOW) || (root && (fl & DCP_WARM_FOLLOW_ROOTS));
	bool opens = !root && e->type == DT_DIR &&
		     (w->opts.max_depth < 0 || e->depth < w->opts.max_depth);
	struct dcp_warm_event ev = {
		.path = e->path, .pathlen = e->pathlen, .op = DCP_WARM_OP_STAT,
		.type = e->type, .depth = e->depth, .worker = e->worker, .root = e->root,
		.again = e->again,
	};
	bool isdir = true;

	if (atomic_load_explicit(&w->cancelled, memory_order_relaxed))
		return DCP_WALK_ABORT;
	/* Filtered out: not warmed, but the walk goes on through directories. */
	if (w->filtering && !dcp_filter_match(w->opts.filter, e))
		return e->type == DT_DIR || e->type == DT_UNKNOWN || (follow && e->type == DT_LNK)
			       ? DCP_WALK_DESCEND : DCP_WALK_PRUNE;
	/*
	 * -L --check: a link whose probe missed is warmed once the walk is
	 * done, as the walker follows it last: following it now would warm
	 * its target's path, whose entries the walk may not have probed yet
	 * (a link to b/e1/g1 met before b is listed made b/e1 look cached).
	 */
	if (!root && follow && (fl & DCP_WARM_CHECK) && e->probe != 0 &&
	    (e->type == DT_LNK || e->type == DT_UNKNOWN) && late_add(w, e))
		return DCP_WALK_DESCEND;
	/*
	 * The walker stats DT_UNKNOWN entries (and, with -L, symlinks) right
	 * after this returns: those must be warmed (and probed) here, first.
	 */
	if (!root && !opens && e->type != DT_UNKNOWN && !(follow && e->type == DT_LNK) &&
	    pending_add(w, e))
		return DCP_WALK_DESCEND;
	/*
	 * A root is stat'ed by its full path: that warms its whole chain.  A
	 * root that failed or is no directory is not for the walker to open.
	 * With --check the walker probed every entry, roots included, before
	 * the run touched it (several roots: before any was opened).
	 */
	if (warm_entry(w, &ev, e->dirfd, e->name, follow, !opens, &isdir, &e->probe) ||
	    (root && !isdir))
		return DCP_WALK_PRUNE;
	return DCP_WALK_DESCEND;
}

/* Root ROOT is the tree of root SAME_AS: not walked (dcp_walk_opts.alias). */
static void root_alias(size_t root, size_t same_as, void *arg)
{
	struct dcp_warm *w = arg;

	if (w->roots)
		dcp_root_table_alias(w->roots, root, same_as);
}

static int skip_mount(uint64_t mnt_id, void *arg)
{
	struct dcp_warm *w = arg;

	static const struct dcp_filter none; /* no filter: the FUSE, NFS... rule still holds */

	return dcp_filter_skip_mount(w->opts.filter ? w->opts.filter : &none, w->opts.mounts,
				     mnt_id);
}

static void walk_error(const struct dcp_entry *e, int err, void *arg);

/* A directory on a mount where an open may wait (FUSE, NFS...): not warmed,
 * and said as a directory that could not be read (EREMOTE). */
static void mount_unvisited(const struct dcp_entry *e, void *arg)
{
	walk_error(e, EREMOTE, arg);
}

static void walk_error(const struct dcp_entry *e, int err, void *arg)
{
	struct dcp_warm *w = arg;
	struct wstats *s = &w->ws[e->worker];
	struct dcp_warm_event ev = {
		.path = e->path, .pathlen = e->pathlen, .op = DCP_WARM_OP_DIR,
		.err = err, .type = e->type, .depth = e->depth, .worker = e->worker,
		.root = e->root, .again = e->again,
	};

	/*
	 * The visitor left this directory to the walker's open, which failed
	 * before looking it up when no descriptor was left: warm it by its
	 * path now (best effort: a path longer than PATH_MAX stays cold).
	 */
	if (err == EMFILE || err == ENFILE) {
		bool isdir;

		warm_one(w, AT_FDCWD, e->path, false, false, &isdir);
	}
	bump_root(w, s, e->root, S_ERRORS, e->again);
	bump_root(w, s, e->root, S_WALK_ERRORS, e->again);
	if (!e->dir)
		bump_root(w, s, e->root, S_UNWALKED, e->again);
	if (w->opts.report && !e->again)
		w->opts.report(&ev, w->opts.arg);
}

/* --- lists: a pool of threads stat'ing full paths ----------------------- */

static void *list_worker(void *p)
{
	struct worker_arg *wa = p;
	struct dcp_warm *w = wa->w;
	unsigned index = wa->index;
	bool follow = w->opts.flags & (DCP_WARM_FOLLOW | DCP_WARM_FOLLOW_ROOTS);

	free(wa);
	for (;;) {
		char *path;

		pthread_mutex_lock(&w->mu);
		while (!w->count && !w->closing)
			pthread_cond_wait(&w->not_empty, &w->mu);
		if (!w->count) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		path = w->queue[w->head];
		w->head = (w->head + 1) % WARM_QUEUE;
		w->count--;
		pthread_cond_signal(&w->not_full);
		pthread_mutex_unlock(&w->mu);

		struct dcp_warm_event ev = {
			.path = path, .pathlen = strlen(path), .op = DCP_WARM_OP_STAT,
			.type = DT_UNKNOWN, .worker = index,
		};
		bool isdir;

		if (!atomic_load_explicit(&w->cancelled, memory_order_relaxed))
			warm_entry(w, &ev, AT_FDCWD, path, follow, true, &isdir, NULL);
		free(path);
	}
}

static void list_stop(struct dcp_warm *w)
{
	pthread_mutex_lock(&w->mu);
	w->closing = true;
	pthread_cond_broadcast(&w->not_empty);
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < w->started; i++)
		pthread_join(w->tids[i], NULL);
	w->started = 0;
}

/* Start threads BASE .. nthreads-1 running FN. */
static int pool_start(struct dcp_warm *w, unsigned base, void *(*fn)(void *))
{
	int ret;

	w->tids = calloc(w->nthreads, sizeof(*w->tids));
	if (!w->tids)
		return -ENOMEM;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->not_empty, NULL);
	pthread_cond_init(&w->not_full, NULL);
	for (unsigned i = base; i < w->nthreads; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));

		if (!wa) {
			ret = -ENOMEM;
			goto fail;
		}
		wa->w = w;
		wa->index = i;
		ret = -dcp_thread_create(&w->tids[w->started], fn, wa);
		if (ret == -EAGAIN && (w->started > 0 || base > 0)) {
			/* A task limit: go on with the threads we have, as
			 * the walker does (see dcp_walk_threads()); with no
			 * stat pool, the walker's threads stat everything. */
			free(wa);
			break;
		}
		if (ret) {
			free(wa);
			goto fail;
		}
		w->started++;
	}
	if (base == 0)
		w->nthreads = w->started; /* lists: the pool is every thread */
	return 0;
fail:
	list_stop(w);
	return ret;
}

/* --- the run ------------------------------------------------------------ */

/* Zeroed per-thread slots on cache lines of their own (N * SIZE fits). */
static void *calloc_aligned(size_t n, size_t size)
{
	void *p = aligned_alloc(64, n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

static void warm_free(struct dcp_warm *w)
{
	if (w->tids) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->not_empty);
		pthread_cond_destroy(&w->not_full);
		free(w->tids);
	}
	if (w->roots)
		dcp_root_table_free(w->roots);
	for (struct late *l = w->late, *next; l; l = next) {
		next = l->next;
		free(l);
	}
	pthread_mutex_destroy(&w->late_mu);
	dcp_pages_run_free(w->pages);
	dcp_mounts_free(w->own_mounts);
	free(w->roots);
	free(w->ws);
	free(w);
}

static int warm_new(const struct dcp_warm_opts *opts, unsigned threads,
		    struct dcp_warm **out)
{
	struct dcp_warm *w;
	bool pool = false;
	int ret = 0;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->opts = *opts;
	pthread_mutex_init(&w->late_mu, NULL);
	w->filtering = opts->filter && dcp_filter_active(opts->filter);
	w->nthreads = threads;
	w->t0 = dcp_now_ns();
	/* No table given: the run reads one (mounts are judged by a walk and
	 * by --pages), freed with the run. */
	if (!opts->mounts && (opts->flags & (DCP_WARM_RECURSIVE | DCP_WARM_PAGES))) {
		ret = dcp_mounts_load(NULL, &w->own_mounts);
		if (ret < 0) {
			free(w);
			return ret;
		}
		w->opts.mounts = w->own_mounts;
	}
	if (opts->flags & DCP_WARM_PAGES) {
		struct dcp_pages_run_opts po = { .mounts = w->opts.mounts };

		ret = dcp_pages_run_new(&po, &w->pages);
		if (ret < 0) {
			dcp_mounts_free(w->own_mounts);
			free(w);
			return ret;
		}
	}
	if ((opts->flags & DCP_WARM_ROOT_STATS) && (opts->flags & DCP_WARM_RECURSIVE)) {
		w->roots = calloc(1, sizeof(*w->roots));
		if (!w->roots) {
			dcp_pages_run_free(w->pages);
			dcp_mounts_free(w->own_mounts);
			free(w);
			return -ENOMEM;
		}
		w->roots->data_size = sizeof(struct rootcounts);
	}

	if (opts->flags & DCP_WARM_RECURSIVE) {
		struct dcp_walk_opts wo = {
			.flags = DCP_WALK_INODE_ORDER | DCP_WALK_READAHEAD,
			.threads = w->nthreads,
			.max_depth = opts->max_depth,
			.excludes = opts->excludes,
			.visit = visit,
			.error = walk_error,
			.skip_mount = skip_mount,
			.unvisited = mount_unvisited,
			.alias = root_alias,
			.arg = w,
		};

		if (opts->flags & DCP_WARM_FOLLOW)
			wo.flags |= DCP_WALK_FOLLOW;
		if (opts->flags & DCP_WARM_FOLLOW_ROOTS)
			wo.flags |= DCP_WALK_FOLLOW_ROOTS;
		if (opts->flags & DCP_WARM_XDEV)
			wo.flags |= DCP_WALK_XDEV;
		/* --check: the walker probes a directory's entries in a batch. */
		if (opts->flags & DCP_WARM_CHECK) {
			wo.flags |= DCP_WALK_PROBE;
			wo.probe_flags = (opts->flags & DCP_WARM_FOLLOW) ? DCP_FOLLOW : 0;
		}
		/*
		 * Our descriptors, out of the walker's budget: per walker
		 * thread two duplicates for the pool (max_dups below), with
		 * --check the probe of its pool thread, and with --pages the
		 * files that it and its pool thread read.  Under a limit too
		 * tight for even one such pair, there is no pool: the walker's
		 * threads do everything.
		 */
		unsigned pg = w->pages ? dcp_pages_fds_per_thread(w->pages) : 0;
		unsigned twin = 2 + ((opts->flags & DCP_WARM_CHECK) ? 1 : 0) + pg;

		pool = dcp_fd_threads(1, 4 + pg + twin + WARM_DUPS_EXTRA) > 0;
		wo.fds_per_thread = pg + (pool ? twin : 0);
		wo.fds_extra = WARM_DUPS_EXTRA;
		ret = dcp_walk_new(&wo, &w->walk);
		if (ret < 0) {
			dcp_pages_run_free(w->pages);
			dcp_mounts_free(w->own_mounts);
			free(w->roots);
			free(w);
			return ret;
		}
		/*
		 * No entry is visited before the first root is added.  The
		 * pool has as many threads as the walker (which may have
		 * fewer than asked, for lack of descriptors); it may hold
		 * about as many descriptors as the walker keeps in reserve
		 * for its visitor, which warm's visitor does not use.
		 */
		w->walkers = dcp_walk_threads(w->walk);
		w->nthreads = (pool ? 2 : 1) * w->walkers;
		w->max_dups = 2 * w->walkers + WARM_DUPS_EXTRA;
		w->bq_tail = &w->bq_head;
		w->ws = calloc_aligned(w->nthreads, sizeof(*w->ws));
		w->pend = calloc_aligned(w->walkers, sizeof(*w->pend));
		if (!w->ws || !w->pend ||
		    (ret = pool_start(w, w->walkers, pool_worker)) < 0) {
			dcp_walk_finish(w->walk);
			free(w->pend);
			warm_free(w);
			return ret < 0 ? ret : -ENOMEM;
		}
		if (!w->started)
			w->max_dups = 0; /* no pool: nothing is handed off */
	} else {
		w->ws = calloc_aligned(w->nthreads, sizeof(*w->ws));
		if (!w->ws) {
			dcp_pages_run_free(w->pages);
			dcp_mounts_free(w->own_mounts);
			free(w);
			return -ENOMEM;
		}
		/* Each thread stats (with --check, probes) and with --pages reads. */
		w->nthreads = dcp_fd_threads(w->nthreads, 1 + ((opts->flags & DCP_WARM_CHECK) ? 1 : 0) +
					 (w->pages ? dcp_pages_fds_per_thread(w->pages) : 0));
		if (!w->nthreads)
			w->nthreads = 1;
		ret = pool_start(w, 0, list_worker);
		if (ret < 0) {
			warm_free(w);
			return ret;
		}
	}
	*out = w;
	return 0;
}

int dcp_warm_new(const struct dcp_warm_opts *opts, struct dcp_warm **out)
{
	unsigned threads = opts->threads ? opts->threads : dcp_warm_default_threads();
	int ret;

	if (opts->threads > WARM_MAX_THREADS || opts->max_depth < -1 ||
	    ((opts->flags & DCP_WARM_PAGES) && !opts->pages))
		return -EINVAL;
	/* Under a task limit (ulimit -u, a container's pids.max), the walker
	 * and the pool each run with the threads that could be created. */
	ret = warm_new(opts, threads, out);
	return ret;
}

int dcp_warm_add(struct dcp_warm *w, const char *path)
{
	char *copy;

	if (w->failed || w->waited || atomic_load(&w->cancelled))
		return -ECANCELED;
	if (w->walk) {
		int ret;

		/* The root's record exists before the walker can see the root. */
		if (w->roots) {
			ret = dcp_root_table_push(w->roots, path);
			if (ret < 0)
				return ret;
		}
		ret = dcp_walk_add(w->walk, path);
		if (ret < 0 && ret != -ENOMEM)
			w->failed = ret;
		if (w->roots && ret < 0)
			dcp_root_table_pop(w->roots);
		return ret;
	}
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&w->mu);
	while (w->count == WARM_QUEUE)
		pthread_cond_wait(&w->not_full, &w->mu);
	w->queue[(w->head + w->count) % WARM_QUEUE] = copy;
	w->count++;
	pthread_cond_signal(&w->not_empty);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

void dcp_warm_cancel(struct dcp_warm *w)
{
	atomic_store(&w->cancelled, true);
}

unsigned dcp_warm_threads(const struct dcp_warm *w)
{
	return w->nthreads;
}

static void stats_of(const uint64_t *n, struct dcp_warm_stats *st)
{
	*st = (struct dcp_warm_stats){
		.entries = n[S_ENTRIES],
		.errors = n[S_ERRORS],
		.walk_errors = n[S_WALK_ERRORS],
		.unwalked_roots = n[S_UNWALKED],
		.cold = n[S_COLD],
		.cached_before = n[S_CACHED_BEFORE],
		.cached_after = n[S_CACHED_AFTER],
		.newly_warmed = n[S_NEWLY],
		.still_miss = n[S_STILL_MISS],
	};
	for (int i = 0; i < DCP_NSTATES; i++)
		st->after[i] = n[S_AFTER + i];
}

void dcp_warm_snapshot(const struct dcp_warm *w, struct dcp_warm_stats *st)
{
	uint64_t n[S_N] = { 0 };

	for (unsigned t = 0; t < w->nthreads; t++)
		for (int i = 0; i < S_N; i++)
			n[i] += atomic_load_explicit(&w->ws[t].n[i], memory_order_relaxed);
	stats_of(n, st);
	st->elapsed_ns = atomic_load_explicit(&w->waited, memory_order_acquire) ?
				 w->elapsed_ns : dcp_now_ns() - w->t0;
	st->jobs = w->walkers ? w->walkers : w->nthreads;
}

size_t dcp_warm_nroots(const struct dcp_warm *w)
{
	return w->roots ? w->roots->n : 0;
}

const char *dcp_warm_root(const struct dcp_warm *w, size_t i, struct dcp_warm_stats *st)
{
	/* Settled by dcp_warm_wait(): an alias has its twin's counts, and a
	 * tree added again by the same name is not reported. */
	const struct dcp_root_tally *r = i < dcp_warm_nroots(w) ? root_at(w, i) : NULL;
	uint64_t n[S_N];

	if (!r || !r->reported)
		return NULL;
	for (int k = 0; k < S_N; k++)
		n[k] = atomic_load_explicit(&RC(r)->n[k], memory_order_relaxed);
	stats_of(n, st);
	return r->path;
}

int dcp_warm_wait(struct dcp_warm *w)
{
	int ret = 0;

	if (w->waited)
		return w->wait_ret;
	if (w->walk) {
		ret = dcp_walk_finish(w->walk);
		w->walk = NULL;
		if (ret == -ECANCELED) /* the visitor aborts only when cancelled */
			ret = w->failed ? w->failed : ret;
		/* The walker's threads are gone: hand off what they left. */
		for (unsigned i = 0; i < w->walkers; i++)
			pending_flush(w, &w->pend[i]);
		list_stop(w);
		late_links(w);
		free(w->pend);
		w->pend = NULL;
	} else {
		list_stop(w);
	}
	if (!ret && atomic_load(&w->cancelled))
		ret = -ECANCELED;
	/* Every thread is gone: their sums per root are final. */
	for (unsigned t = 0; w->roots && t < w->nthreads; t++)
		root_flush(w, &w->ws[t]);
	if (w->roots)
		dcp_root_table_settle(w->roots);
	w->elapsed_ns = dcp_now_ns() - w->t0;
	w->wait_ret = ret;
	atomic_store_explicit(&w->waited, true, memory_order_release);
	return ret;
}

int dcp_warm_finish(struct dcp_warm *w, struct dcp_warm_stats *st)
{
	int ret = dcp_warm_wait(w);

	if (st)
		dcp_warm_snapshot(w, st);
	warm_free(w);
	return ret;
}

/* --- metrics ----------------------------------------------------------- */

static void warm_counts(const struct dcp_warm_stats *st, struct dcp_pr_counts *c)
{
	*c = (struct dcp_pr_counts){ .walk_errors = st->walk_errors,
				     .unwalked_roots = st->unwalked_roots };
	for (int i = 0; i < DCP_NSTATES; i++)
		c->n[i] = st->after[i];
}

/* warm's own families for one series (a root, or the run without a root). */
static void warm_own(struct dcp_prom *m, unsigned fl, const char *root,
		     const struct dcp_warm_stats *st)
{
	static const struct {
		const char *name, *help;
		size_t off;
		bool check;
	} fam[] = {
		{ "dcprobe_warm_entries", "Entries looked up (warmed) by warm.",
		  offsetof(struct dcp_warm_stats, entries), false },
		{ "dcprobe_warm_errors",
		  "Entries and directories that failed in warm (stat, probe, listing).",
		  offsetof(struct dcp_warm_stats, errors), false },
		{ "dcprobe_warm_cold_entries", "Entries that missed the dentry cache before warm.",
		  offsetof(struct dcp_warm_stats, cold), true },
		{ "dcprobe_warm_newly_warmed_entries",
		  "Entries that missed before warm and were cached after.",
		  offsetof(struct dcp_warm_stats, newly_warmed), true },
	};

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		if (fam[i].check && !(fl & DCP_WARM_CHECK))
			continue;
		dcp_prom_start(m, fam[i].name, fam[i].help);
		if (root)
			dcp_prom_labelz(m, "root", root);
		dcp_prom_u64(m, *(const uint64_t *)((const char *)st + fam[i].off));
	}
}

static void prom_data(struct dcp_prom *m, unsigned fl, const struct dcp_pages_budget *p)
{
	static const char *const kinds[] = { "total", "resident_before", "resident_after" };
	uint64_t pages[] = { dcp_pages_budget_read(&p->pages), dcp_pages_budget_read(&p->resident_before),
			     dcp_pages_budget_read(&p->resident_after) };

	dcp_prom_start(m, "dcprobe_warm_data_read_bytes", "Bytes of file data read by warm --pages.");
	dcp_prom_u64(m, dcp_pages_budget_read(&p->bytes));
	dcp_prom_start(m, "dcprobe_warm_data_read_files", "Regular files read by warm --pages.");
	dcp_prom_u64(m, dcp_pages_budget_read(&p->files));
	dcp_prom_start(m, "dcprobe_warm_data_left_out_files",
		       "Files left out (in part) by --max-bytes or --max-file-size.");
	dcp_prom_u64(m, dcp_pages_budget_read(&p->skipped));
	if (!(fl & DCP_WARM_CHECK))
		return;
	for (int k = 0; k < 3; k++) {
		dcp_prom_start(m, "dcprobe_warm_data_pages",
			       "Pages spanned by the files read, and of those in the page cache before and after warm.");
		dcp_prom_labelz(m, "kind", kinds[k]);
		dcp_prom_u64(m, pages[k]);
	}
}

int dcp_warm_prometheus(struct dcp_prom *m, const struct dcp_warm *w,
			const struct dcp_warm_stats *total, int status)
{
	unsigned fl = w->opts.flags;
	size_t n = dcp_warm_nroots(w);
	struct dcp_pr_counts tc, *rc = NULL;
	struct dcp_warm_stats *rs = NULL;
	struct dcp_pr_prom_series *ser = NULL;
	struct dcp_pr_prom p;
	size_t nser = 0;

	if (n) {
		rc = calloc(n, sizeof(*rc));
		rs = calloc(n, sizeof(*rs));
		ser = calloc(n, sizeof(*ser));
		if (!rc || !rs || !ser) {
			free(rc);
			free(rs);
			free(ser);
			return -ENOMEM;
		}
	}
	for (size_t i = 0, k = 0; i < n; i++) {
		const char *path = dcp_warm_root(w, i, &rs[k]);

		if (!path)
			continue; /* given again by the same name: reported once */
		warm_counts(&rs[k], &rc[k]);
		ser[k] = (struct dcp_pr_prom_series){ .path = path, .pathlen = strlen(path),
						      .c = &rc[k] };
		nser = ++k;
	}
	warm_counts(total, &tc);
	p = (struct dcp_pr_prom){
		.roots = ser, .nroots = nser, .total = &tc,
		.states_unknown = !(fl & DCP_WARM_CHECK), .no_unvisited = true,
		.duration_s = (double)total->elapsed_ns / 1e9, .status = status,
	};
	dcp_pr_prometheus(m, &p);
	for (size_t i = 0; i < nser; i++)
		warm_own(m, fl, ser[i].path, &rs[i]);
	if (!n)
		warm_own(m, fl, NULL, total);
	if ((fl & DCP_WARM_PAGES) && w->opts.pages)
		prom_data(m, fl, w->opts.pages);
	free(rc);
	free(rs);
	free(ser);
	return 0;
}
