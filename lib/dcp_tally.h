/* SPDX-License-Identifier: MIT */
/*
 * dcp_tally.h - the tallies of a run: per root, per directory, per mount.
 *
 * dcache-probe (lib/cmdrt/probe_run.c) and warm (warm.c) keep their roots
 * in the same table, each with its own counts per root: which root is
 * reported, and with whose figures, is decided here once for both.
 *
 * An entry's probe result is counted once for the run and once in each
 * table it belongs to: its root's tally (-s, -c, the per-root metrics), the
 * rows of the directories above it (--per-dir), its mount's row
 * (--per-mount).  These tables decide what is one row and in which
 * order rows come, so that a table says the same whatever the threads did:
 *  - roots are reported in the order given; a root given again by the same
 *    name once, at its first place; an alias of an earlier root (the same
 *    tree by another name) with that root's figures;
 *  - a directory has one --per-dir row, under the first root (in the order
 *    given) that holds it and its first path there, whichever listing came
 *    first; rows come in du's order (post-order, siblings by name).
 */
#ifndef DCP_TALLY_H
#define DCP_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dcp_pages.h"
#include "dcp_probe_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- per root ---- */

/*
 * One root: its name, whether it is an alias, and the command's counts for
 * its tree (DATA: the table's data_size bytes, zeroed; dcache-probe keeps
 * struct dcp_pr_counts and data counts there, warm its counters).
 */
struct dcp_root_tally {
	char *path;	/* as given */
	size_t same_as; /* an alias of root SAME_AS - 1 (0: none) */
	bool reported;	/* after dcp_root_table_settle(): has a line */
	void *data;	/* the counts, data_size bytes */
};

#define DCP_ROOT_CHUNK 1024
#define DCP_ROOT_CHUNKS 65536

/*
 * The roots of a run, in chunks hung off a fixed table: a tally never
 * moves, so walker threads may count into root I while the main thread
 * adds roots after it.  Zero it, then set data_size.
 */
struct dcp_root_table {
	struct dcp_root_tally *chunk[DCP_ROOT_CHUNKS];
	size_t n;
	size_t data_size; /* the counts of one root */
};

/* dcp_root_table_push - add root number T->n, named PATH.  0 or -errno. */
int dcp_root_table_push(struct dcp_root_table *t, const char *path);

/* dcp_root_table_pop - take back the last root pushed (the walk refused it). */
void dcp_root_table_pop(struct dcp_root_table *t);

/*
 * dcp_root_table_get - the tally of root I, pushed before; NULL when no
 * root of I's chunk was.  Reads no count: walker threads call it while the
 * main thread pushes more roots.
 */
struct dcp_root_tally *dcp_root_table_get(const struct dcp_root_table *t, size_t i);

/* dcp_root_table_alias - root ROOT is the tree of the earlier root SAME_AS. */
void dcp_root_table_alias(struct dcp_root_table *t, size_t root, size_t same_as);

/*
 * dcp_root_table_settle - after the run (no thread counts any more): an
 * alias takes a copy of its twin's counts; a root named as an earlier one
 * is not reported (as du -s).
 */
void dcp_root_table_settle(struct dcp_root_table *t);

/* dcp_root_table_free - free the names and chunks. */
void dcp_root_table_free(struct dcp_root_table *t);

/* ---- per directory (--per-dir) ---- */

struct dcp_dir_row {
	size_t root;	 /* the index of the root it was listed from */
	dev_t dev;	 /* the directory's identity */
	ino_t ino;
	int depth;	 /* below that root */
	char *path;	 /* owned by the rows */
	size_t pathlen;
	struct dcp_pr_counts c;	    /* the entries below it */
	struct dcp_pages_counts pc; /* --pages: their data */
};

struct dcp_dir_rows {
	struct dcp_dir_row *v;
	size_t n, cap;
};

/*
 * dcp_dir_rows_add - keep the row ROW of one listing of a directory (its
 * path is copied), every listing, whichever came first.  0 or -ENOMEM.
 */
int dcp_dir_rows_add(struct dcp_dir_rows *r, const struct dcp_dir_row *row);

/*
 * dcp_dir_rows_add_split - the same, with NEVER: how many of the row's
 * misses are never cached (dcp_pr_never_cached(), dcp_probe_report.h),
 * kept with the row (struct dcp_dir_row has no room for it) and given back
 * by dcp_dir_row_never().  dcp_dir_rows_add() keeps 0.  0 or -ENOMEM.
 */
int dcp_dir_rows_add_split(struct dcp_dir_rows *r, const struct dcp_dir_row *row,
			   unsigned long long never);

/* dcp_dir_row_never - the NEVER kept with ROW, a row of a struct dcp_dir_rows. */
unsigned long long dcp_dir_row_never(const struct dcp_dir_row *row);

/*
 * dcp_dir_rows_settle - one row per directory (device and inode): the one
 * of the first root, at its first path; then every row in du's order: by
 * root, post-order, siblings by the bytes of their names.
 */
void dcp_dir_rows_settle(struct dcp_dir_rows *r);

/* dcp_dir_rows_free - free the rows and their paths. */
void dcp_dir_rows_free(struct dcp_dir_rows *r);

/* ---- per mount (--per-mount) ---- */

/*
 * Counts per mount, keyed by mount ID (statx STATX_MNT_ID), for the
 * --per-mount table: a bind mount or a filesystem mounted twice is a row
 * of its own.
 */
struct dcp_mount_tally {
	uint64_t id;
	struct dcp_pr_counts c;
	struct dcp_pages_counts pc; /* --pages */
};

/* A small table of them: one per thread, merged at the end.  Zero it to start. */
struct dcp_mount_table {
	struct dcp_mount_tally *v;
	size_t n, cap, last;
};

/*
 * dcp_mount_table_row - the row of mount ID, added (zeroed) if new.
 * Returns NULL when memory runs out.
 */
struct dcp_mount_tally *dcp_mount_table_row(struct dcp_mount_table *t, uint64_t id);

/* dcp_mount_table_get - the probe counts of that row, or NULL. */
struct dcp_pr_counts *dcp_mount_table_get(struct dcp_mount_table *t, uint64_t id);

/* dcp_mount_table_merge - add FROM's counts (probes and data) into INTO.  Returns 0 or -ENOMEM. */
int dcp_mount_table_merge(struct dcp_mount_table *into, const struct dcp_mount_table *from);

/* dcp_mount_table_free - release the table's memory and zero it. */
void dcp_mount_table_free(struct dcp_mount_table *t);

#ifdef __cplusplus
}
#endif

#endif
