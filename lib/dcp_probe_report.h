/* SPDX-License-Identifier: MIT */
/*
 * dcp_probe_report.h - dcache-probe's records: per-path lines, per-directory
 * and per-mount tables, summaries and Prometheus metrics, as text, NUL-
 * terminated text or JSON Lines.  Everything is appended to a dcp_buf; the
 * caller writes it.  The formats are documented in dcache-probe(1).
 */
#ifndef DCP_PROBE_REPORT_H
#define DCP_PROBE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "dcp_explain.h"
#include "dcp_mounts.h"
#include "dcp_pages.h"
#include "dcp_probe.h"
#include "dcp_prom.h"
#include "dcp_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output formats of the per-path, per-directory and per-mount records. */
enum dcp_pr_format {
	DCP_PR_TEXT = 0, /* "STATE PATH\n", paths quoted for a terminal */
	DCP_PR_NUL,	 /* raw paths ending in '\0' (xargs -0) */
	DCP_PR_JSON,	 /* JSON Lines */
	DCP_PR_NUL_TTY,	 /* -0 with stdout a terminal: paths quoted, each
			  * ending in '\0' (nothing raw reaches a screen) */
};

/* Counts over a set of probed paths. */
struct dcp_pr_counts {
	unsigned long long n[DCP_NSTATES]; /* probes by state */
	unsigned long long not_visited;	   /* dirs not listed: what lies below is unknown */
	unsigned long long walk_errors;	   /* dirs that could not be opened or listed */
	unsigned long long unwalked_roots; /* of those, trees given (-r) that could not be
					    * walked at all: absent, not a directory one may
					    * list... what they hold is unknown */
	unsigned long long why[DCP_NWHY];  /* --explain: misses by reason */
	unsigned long long lost;	   /* a recording lost events (its queue overflowed,
					    * fork events were dropped): what was used then
					    * is unknown */
};

/* dcp_pr_counts_add - add B into A. */
void dcp_pr_counts_add(struct dcp_pr_counts *a, const struct dcp_pr_counts *b);

/*
 * dcp_pr_kind_name - the "kind" of an entry record for a DT_* type: "file",
 * "dir", "symlink", "fifo", "socket", "char", "block", else "unknown".
 */
const char *dcp_pr_kind_name(unsigned char dtype);

/* dcp_pr_total - the number of paths probed. */
unsigned long long dcp_pr_total(const struct dcp_pr_counts *c);

/*
 * dcp_pr_cached_pct - the cached share in percent: cached and negative
 * paths over all probed paths; -1 when nothing was probed or a tree given
 * could not be walked (unwalked_roots): a share of nothing, or of a tree
 * that is not there, is absent ("-" in text, null in JSON, no Prometheus
 * sample), never the share of its root's own lookup.
 */
double dcp_pr_cached_pct(const struct dcp_pr_counts *c);

/*
 * Misses counted apart.  A lookup on a filesystem whose lookups the kernel
 * never serves from the cache (DCP_FS_NEVER: 9p, CIFS, vfat, sysfs...)
 * misses however warm it is: such a miss keeps its state (miss, exit
 * status 1: the lookup does block), but the tables and summaries count it
 * as "never cached", apart from the cold misses, and the cached share is
 * over the paths a cache can serve.  The *_split functions take NEVER, how
 * many of C->n[DCP_MISS] are such misses (the caller counts them with
 * dcp_pr_never_cached()); the functions without it are the same with
 * NEVER 0.  Their records then say:
 *   text:  "CACHED/PROBED, N never cached" (PROBED without them);
 *          "..., M miss, N never cached, E error" in the summary line
 *   JSON:  "miss": the cold misses, "never_cached": N (always present)
 *   Prometheus: state="never_cached" beside state="miss" (the cold ones)
 * A --per-mount row (dcp_pr_mount()) counts every miss on a DCP_FS_NEVER
 * mount so: each probe counts in the mount its lookup ran in.
 */

/*
 * dcp_pr_never_cached - does the probe result RET (0 or -errno) of a lookup
 * in a directory on filesystem type FSTYPE count as never cached: a miss
 * there, and FSTYPE of class DCP_FS_NEVER (dcp_fs_cache_class())?
 */
bool dcp_pr_never_cached(int ret, const char *fstype);

/*
 * dcp_pr_cached_pct_split - dcp_pr_cached_pct() over the paths a cache can
 * serve: NEVER of C's misses left out of the total; -1 when none is left.
 */
double dcp_pr_cached_pct_split(const struct dcp_pr_counts *c, unsigned long long never);

/* The tables of dcache-probe, for dcp_pr_heading(). */
enum dcp_pr_table {
	DCP_PR_TABLE_TREE,  /* -s, -c, --per-dir: dcp_pr_root(), dcp_pr_dir() */
	DCP_PR_TABLE_MOUNT, /* --per-mount: dcp_pr_mount() */
};

/*
 * dcp_pr_heading - the heading line of table T in text: its columns' names,
 * with the reasons column of --explain (WHY) and the data columns of
 * --pages (PAGES) where those modules insert them, before the last one.
 */
void dcp_pr_heading(struct dcp_buf *b, enum dcp_pr_table t, bool why, bool pages);

/*
 * dcp_pr_entry - one probed path.  RET is the probe's result (0 or -errno),
 * DTYPE the DT_* type from the directory listing (DT_UNKNOWN for a path
 * given by the user), DEPTH its depth below its root.
 *   text: "cached PATH", "negative PATH", "miss PATH", "error ENAME PATH"
 *   NUL:  "PATH\0"
 *   JSON: {"type":"entry","path":...,"state":...,"kind":...,"depth":N
 *          [,"errno":"ENAME","message":"..."]}
 */
void dcp_pr_entry(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		  size_t len, int ret, unsigned char dtype, int depth);

/*
 * dcp_pr_unvisited - directory PATH was not listed (--no-perturb: its own
 * lookup missed, or lookups inside it miss for this caller), so what lies
 * below it is unknown.  RET is the directory's probe, INNER the probe of
 * "PATH/." (dcp_entry.inner).
 *   text: "unvisited PATH"
 *   NUL:  "PATH\0"
 *   JSON: {"type":"unvisited","path":...,"depth":N,"reason":"miss"|"inside-miss"|
 *          "mount-may-wait"}
 * RET -EREMOTE: a directory on a FUSE or network mount, or one made since
 * the run began, that the walk does not go into (an open may wait).
 */
void dcp_pr_unvisited(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		      size_t len, int ret, int depth);

/*
 * dcp_pr_complete - true when nothing below the counted paths is unknown:
 * no directory left unvisited, none that could not be opened or listed,
 * no tree that could not be walked, no event of a recording lost.
 */
static inline bool dcp_pr_complete(const struct dcp_pr_counts *c)
{
	return c->not_visited == 0 && c->walk_errors == 0 && c->unwalked_roots == 0 &&
	       c->lost == 0;
}

/*
 * dcp_pr_walk_error - the walk could not go on at PATH (ERR a positive
 * errno), as a JSON object {"type":"error",...}.  Text formats report walk
 * errors on stderr instead (the command's job): this appends nothing.
 */
void dcp_pr_walk_error(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		       size_t len, int err);

/* dcp_pr_path - PATH as a line in text format FMT (not JSON). */
void dcp_pr_path(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len);

/*
 * dcp_pr_root - the -s line of one PATH given (its own probe and, with -r,
 * everything below it), or with PATH NULL the -c grand total, like du -s
 * and du -c:
 *   text: "PCT%\tCACHED/TOTAL\tPATH\n" as dcp_pr_dir, "total" for the total
 *   JSON: {"type":"root","path":...,"paths":N,...}, {"type":"total",...}
 */
void dcp_pr_root(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len,
		 const struct dcp_pr_counts *c);
void dcp_pr_root_split(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len,
		       const struct dcp_pr_counts *c, unsigned long long never);

/*
 * dcp_pr_dir - one row of the --per-dir table: the paths below directory
 * PATH (not PATH itself).
 *   text: "PCT%\tCACHED/TOTAL\tPATH\n" (PCT with one decimal, width 5);
 *         "CACHED/TOTAL+N?" when N directories below were not visited
 *   JSON: {"type":"dir","path":...,"depth":N,"paths":N,"cached":N,...}
 */
void dcp_pr_dir(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		size_t len, int depth, const struct dcp_pr_counts *c);
void dcp_pr_dir_split(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		      size_t len, int depth, const struct dcp_pr_counts *c,
		      unsigned long long never);

/*
 * dcp_pr_mount - one row of the --per-mount table.  MT is NULL when the
 * device DEV is in no mount of the table.
 *   text: "PCT%\tCACHED/TOTAL\tFSTYPE\tMOUNTPOINT\n", FSTYPE followed by '*'
 *         when dcp_fs_flagged()
 *   JSON: {"type":"mount","mountpoint":...,"fstype":...,"source":...,
 *          "resolve_cached":"yes|never|partial|revalidate",["note":...,]
 *          "paths":N,"cached":N,...}
 * On a mount whose "resolve_cached" is "never", every miss is counted as
 * never cached (dcp_pr_never_cached()), apart from the cold ones.
 */
void dcp_pr_mount(struct dcp_buf *b, enum dcp_pr_format fmt, const struct dcp_mount *mt,
		  dev_t dev, const struct dcp_pr_counts *c);

/*
 * dcp_pr_summary_text - "N paths: C cached, G negative, M miss, E error;
 * P% cached" and, when not zero, "; W walk errors", then '\n'.  When D
 * directories were not visited the share is "at most P% cached" and
 * "; D directories not visited (what they hold is unknown)" follows.
 */
void dcp_pr_summary_text(struct dcp_buf *b, const struct dcp_pr_counts *c);
void dcp_pr_summary_text_split(struct dcp_buf *b, const struct dcp_pr_counts *c,
			       unsigned long long never);

/*
 * dcp_pr_summary_json - {"type":"summary","paths":N,...,"cached_percent":P,
 * "complete":true|false,
 * ["min_cached":T,]"elapsed_s":S,"status":X}.  MIN_CACHED < 0: none.
 */
void dcp_pr_summary_json(struct dcp_buf *b, const struct dcp_pr_counts *c,
			 double min_cached, double elapsed_s, int status);
void dcp_pr_summary_json_split(struct dcp_buf *b, const struct dcp_pr_counts *c,
			       unsigned long long never, double min_cached, double elapsed_s,
			       int status);

/* One labelled set of counts for dcp_pr_prometheus(). */
struct dcp_pr_prom_series {
	const char *path;	   /* root, mount point or directory */
	size_t pathlen;
	const char *fstype;	   /* mounts only */
	const struct dcp_pr_counts *c;
	bool has_mnt_id;	   /* mounts: label mount_id="N" too, so that two
				    * mounts never share a series (two not in
				    * the mount table are both mountpoint="?") */
	uint64_t mnt_id;
};

/* What dcp_pr_prometheus() writes. */
struct dcp_pr_prom {
	const struct dcp_pr_prom_series *roots; /* label root="..."; with NROOTS 0 */
	size_t nroots;				/* the run's TOTAL has no root label */
	const struct dcp_pr_counts *total;
	const struct dcp_pr_prom_series *mounts; /* label mountpoint, fstype, mount_id */
	size_t nmounts;
	const struct dcp_pr_prom_series *dirs; /* label path */
	size_t ndirs;
	bool states_unknown; /* no paths were probed (warm without --check):
			      * no dcprobe_paths, dcprobe_cached_ratio */
	bool no_unvisited;   /* the command never leaves a directory unvisited
			      * on purpose (warm): no dcprobe_not_visited_dirs */
	double duration_s;
	int status;	    /* the run's exit status */
};

/*
 * dcp_pr_prometheus - the shared metric families of dcache-probe and warm
 * into M (dcp_prom.h: every series also has command="..."), all gauges:
 *   dcprobe_paths{[root,]state}                 paths by probe state
 *   dcprobe_cached_ratio{[root]}                0..1
 *   dcprobe_not_visited_dirs{[root]}            directories not listed
 *   dcprobe_complete{[root]}                    1, or 0 if dirs were not visited
 *   dcprobe_walk_errors{[root]}                 directories not opened or listed
 *   dcprobe_mount_paths{mountpoint,fstype,mount_id,state}      (--per-mount)
 *   dcprobe_mount_resolve_cached{mountpoint,fstype,mount_id}   1 can succeed, 0 flagged
 *   dcprobe_dir_paths{path,state}               (--per-dir)
 *   dcprobe_dir_not_visited_dirs{path}          (--per-dir) directories not listed
 *   dcprobe_duration_seconds, dcprobe_exit_status,
 *   dcprobe_last_run_timestamp_seconds,
 *   dcprobe_build_info{version}                 (dcp_prom_run())
 * A root or directory given twice is one series: the first one's counts.
 */
void dcp_pr_prometheus(struct dcp_prom *m, const struct dcp_pr_prom *p);

/* The never-cached misses (see dcp_pr_never_cached()) of a dcp_pr_prom's sets. */
struct dcp_pr_prom_never {
	const unsigned long long *roots; /* of roots[i], NROOTS of them */
	unsigned long long total;	 /* of total */
	const unsigned long long *dirs;	 /* of dirs[i], NDIRS of them */
};

/*
 * dcp_pr_prometheus_split - dcp_pr_prometheus() with the never-cached misses
 * of NV apart: state="never_cached" in dcprobe_paths, dcprobe_mount_paths
 * (every miss on a DCP_FS_NEVER mount) and dcprobe_dir_paths, state="miss"
 * the cold ones, dcprobe_cached_ratio over the paths a cache can serve.
 */
void dcp_pr_prometheus_split(struct dcp_prom *m, const struct dcp_pr_prom *p,
			     const struct dcp_pr_prom_never *nv);

#ifdef __cplusplus
}
#endif

#endif
