/* SPDX-License-Identifier: MIT */
/*
 * dcp_warm.h - the stat priming engine behind warm(1).
 *
 * Warming a path means looking it up once, so that later lookups are served
 * from the dentry cache.  A lookup of "a/b/c" looks up a, a/b and a/b/c, so
 * one stat of a full path warms the whole chain.  Trees are warmed with the
 * shared walker (dcp_walk.h): its worker threads are the pool of lookups in
 * flight, each entry is stat'ed relative to its directory's descriptor, in
 * inode order, and directories the walker is about to open are not stat'ed
 * (opening them looks them up).  Plain path lists go through a pool of
 * threads of the same size.
 *
 * With DCP_WARM_CHECK every entry is also probed with RESOLVE_CACHED before
 * and after its stat, so a run reports how much was cold and whether the
 * stat made it cached.
 */
#ifndef DCP_WARM_H
#define DCP_WARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcp_probe.h"
#include "dcp_pages.h"
#include "dcp_prom.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_warm;
struct dcp_filter;
struct dcp_mounts;

/* dcp_warm_opts.flags */
enum {
	DCP_WARM_RECURSIVE = 1 << 0,	/* -r: warm whole trees below each path */
	DCP_WARM_FOLLOW = 1 << 1,	/* -L: follow every symlink */
	DCP_WARM_FOLLOW_ROOTS = 1 << 2, /* -H: follow symlinks given as paths */
	DCP_WARM_XDEV = 1 << 3,		/* -x: stay on each path's filesystem */
	DCP_WARM_CHECK = 1 << 4,	/* probe before and after each stat */
	DCP_WARM_REPORT_ALL = 1 << 5,	/* call report() for every entry */
	DCP_WARM_PAGES = 1 << 6,	/* also read regular files' data into the
					 * page cache, within opts.pages (dcp_pages.h) */
	DCP_WARM_ROOT_STATS = 1 << 7,	/* with DCP_WARM_RECURSIVE: keep counts per
					 * root too (dcp_warm_root()) */
};

/* What an event is about. */
enum dcp_warm_op {
	DCP_WARM_OP_STAT = 0, /* the entry was warmed (or its stat failed) */
	DCP_WARM_OP_DIR = 1,  /* a directory could not be opened or listed */
};

/* One entry, as the report callback sees it. */
struct dcp_warm_event {
	const char *path; /* full path, NUL-terminated */
	size_t pathlen;
	enum dcp_warm_op op;
	int err;	   /* 0, or the positive errno of the failed operation */
	int before;	   /* DCP_WARM_CHECK: probe result before, 0 or -errno */
	int after;	   /* DCP_WARM_CHECK: probe result after, 0 or -errno */
	int probe_err;	   /* DCP_WARM_CHECK: positive errno of a probe that
			    * failed (state "error": EMFILE, ELOOP...), else 0;
			    * counted as an error like err */
	unsigned char type; /* DT_* as listed; DT_UNKNOWN for paths given */
	int depth;	   /* 0 for a path given */
	unsigned worker;   /* index of the calling thread */
	size_t root;	   /* DCP_WARM_RECURSIVE: index of the tree's root, in
			    * the order added; 0 for lists */
	bool again;	   /* reached from another root too (dcp_entry.again):
			    * counted for ROOT only, never reported */
};

struct dcp_pages_budget;

struct dcp_warm_opts {
	unsigned flags;
	struct dcp_pages_budget *pages; /* DCP_WARM_PAGES: limits and counts */
	unsigned threads; /* lookups in flight; 0 = dcp_warm_default_threads() */
	int max_depth;	  /* -r: deepest depth warmed, -1 unlimited */
	const char *const *excludes; /* -r: fnmatch(3) globs, as dcp_walk_opts */
	/*
	 * -r: which entries are warmed (dcp_filter_match(): a directory the
	 * walk goes through is looked up all the same), and which mounts are
	 * not gone into (dcp_filter_skip_mount(), by MOUNTS: without a
	 * filter too, a FUSE, NFS... mount is not).  Both optional: MOUNTS
	 * NULL, the run reads /proc/self/mountinfo itself (with -r or
	 * DCP_WARM_PAGES) and frees it with the run.
	 */
	const struct dcp_filter *filter;
	const struct dcp_mounts *mounts;
	/*
	 * report - called on the worker threads, concurrently (ev->worker tells
	 * which thread, 0 .. dcp_warm_threads()-1): for every failed entry,
	 * for every entry that still misses after DCP_WARM_CHECK, and for every
	 * entry with DCP_WARM_REPORT_ALL.  Optional.
	 */
	void (*report)(const struct dcp_warm_event *ev, void *arg);
	void *arg;
};

/* Counts over a run (from a snapshot or at the end). */
struct dcp_warm_stats {
	uint64_t entries;	/* entries warmed (stat'ed or opened) */
	uint64_t errors;	/* failed stats, failed probes, unreadable directories */
	uint64_t walk_errors;	/* of those, directories not opened or listed */
	uint64_t unwalked_roots; /* PATHs that could not be warmed, or (-r) whose
				  * tree could not be walked: no share */
	/* DCP_WARM_CHECK only: */
	uint64_t cold;		/* missed the cache before (EAGAIN) */
	uint64_t cached_before; /* cached or negative before */
	uint64_t cached_after;	/* cached or negative after */
	uint64_t newly_warmed;	/* missed before, cached after */
	uint64_t still_miss;	/* still EAGAIN after the stat */
	uint64_t after[DCP_NSTATES]; /* entries by probe state after the stat */
	uint64_t elapsed_ns;	/* since dcp_warm_new() */
	unsigned jobs;		/* lookups in flight: -j, or fewer when the
				 * walker lacked descriptors for that many */
};

/*
 * dcp_warm_default_threads - how many lookups a run keeps in flight by
 * default: many more than CPUs, because a cold lookup waits on the disk.
 */
unsigned dcp_warm_default_threads(void);

/*
 * dcp_warm_new - start a run with OPTS: spawns the threads, which wait for
 * paths; when the system refuses that many threads (EAGAIN: a task limit),
 * it tries again with half as many (dcp_warm_snapshot() tells the count).
 * Returns 0 and stores the run in *OUT, or -errno (-EINVAL for bad
 * options, -ENOMEM, or the walker's error).
 */
int dcp_warm_new(const struct dcp_warm_opts *opts, struct dcp_warm **out);

/*
 * dcp_warm_add - queue PATH (copied): a tree root with DCP_WARM_RECURSIVE,
 * otherwise one path.  Blocks while many paths are queued, so a long list
 * streams in flat memory.  Returns 0, -ECANCELED after a failure of the
 * run, or -ENOMEM.
 */
int dcp_warm_add(struct dcp_warm *w, const char *path);

/*
 * dcp_warm_cancel - stop the run as soon as possible (the caller's output
 * failed): no new entry is warmed or reported, queued paths are dropped,
 * dcp_warm_add() returns -ECANCELED.  Safe from report() on any thread.
 * dcp_warm_wait() then returns -ECANCELED; the counts cover what was done.
 */
void dcp_warm_cancel(struct dcp_warm *w);

/*
 * dcp_warm_threads - the number of threads that may call report(): with
 * DCP_WARM_RECURSIVE the walker's and the stat pool's, ev->worker below it.
 */
unsigned dcp_warm_threads(const struct dcp_warm *w);

/*
 * dcp_warm_snapshot - the counts so far, safe to call from another thread
 * while the run goes on (for progress lines); a moment's counts, not exact.
 */
void dcp_warm_snapshot(const struct dcp_warm *w, struct dcp_warm_stats *st);

/*
 * dcp_warm_wait - wait until every queued path is warmed and stop the
 * threads; the run stays valid (dcp_warm_snapshot() gives the final counts)
 * until dcp_warm_finish(), so a progress timer can be stopped in between.
 * No path can be added afterwards.  Returns as dcp_warm_finish().
 */
int dcp_warm_wait(struct dcp_warm *w);

/*
 * dcp_warm_nroots - with DCP_WARM_ROOT_STATS, the number of trees added;
 * else 0.
 */
size_t dcp_warm_nroots(const struct dcp_warm *w);

/*
 * dcp_warm_root - after dcp_warm_wait(), the counts of the tree with index
 * I (dcp_warm_nroots()) in *ST (elapsed_ns and jobs zero); returns its path
 * as added (valid until dcp_warm_finish()), or NULL for no such tree and
 * for a tree added again by the same name (reported once, at its first
 * place).  A tree that is an earlier one by another name (dcp_walk_opts
 * alias) has that tree's counts: each entry was looked up once.
 */
const char *dcp_warm_root(const struct dcp_warm *w, size_t i, struct dcp_warm_stats *st);

/*
 * dcp_warm_finish - dcp_warm_wait() if not done yet, store the final counts
 * in *ST (if not NULL) and free the run.  Returns 0, or the -errno of a
 * failure of the engine itself (not of a path: those are counted as errors
 * and reported).
 */
int dcp_warm_finish(struct dcp_warm *w, struct dcp_warm_stats *st);

/*
 * dcp_warm_prometheus - after dcp_warm_wait(), the run's metrics into M
 * (dcp_prom.h), TOTAL its final counts and STATUS its exit status: the
 * families shared with dcache-probe (dcp_pr_prometheus(): dcprobe_paths by
 * state after warming, only with DCP_WARM_CHECK; dcprobe_complete,
 * dcprobe_walk_errors, the run's duration, status and time), per root with
 * DCP_WARM_ROOT_STATS, else for the whole run; then warm's own:
 *   dcprobe_warm_entries, dcprobe_warm_errors{[root]}
 *   dcprobe_warm_cold_entries, dcprobe_warm_newly_warmed_entries{[root]} (check)
 *   dcprobe_warm_data_read_bytes, _read_files, _left_out_files (pages)
 *   dcprobe_warm_data_pages{kind="total|resident_before|resident_after"} (pages, check)
 * Returns 0 or -ENOMEM.
 */
int dcp_warm_prometheus(struct dcp_prom *m, const struct dcp_warm *w,
			const struct dcp_warm_stats *total, int status);

#ifdef __cplusplus
}
#endif

#endif
