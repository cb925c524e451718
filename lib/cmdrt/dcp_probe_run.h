/* SPDX-License-Identifier: MIT */
/*
 * dcp_probe_run.h - one dcache-probe run, the journey of every entry.
 *
 * An entry goes: probe (openat2 RESOLVE_CACHED, by the walker, before
 * anything touches it; dcp_walk.h, dcp_probe.h) -> explanation of a miss
 * (--explain; dcp_explain.h) -> data measurement of a cached regular file
 * (--pages; dcp_pages.h) -> tallies of its root, directory, mount and
 * reason -> its record (dcp_probe_report.h), unless a table was asked for.
 * At the end come the tables (roots -s/-c, directories --per-dir, mounts
 * --per-mount), the summary, the metrics (dcp_prom.h) and the exit status.
 *
 * Where to add things: a column or a record field in dcp_probe_report.h
 * (text, NUL and JSON writers) and the schema (man/dcprobe.schema.json); a
 * reason for a miss in dcp_explain.h; a metric family in
 * dcp_probe_report.h's dcp_pr_prometheus(); a new kind of per-entry work
 * in visit() of probe_run.c, between the probe and record().
 */
#ifndef DCP_PROBE_RUN_H
#define DCP_PROBE_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "dcp_opts.h"
#include "dcp_probe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The --only bit of unvisited directories, after the states' bits. */
#define DCP_ONLY_UNVISITED DCP_NSTATES

struct dcp_buf;
struct dcp_pages_counts;
struct dcp_pr_counts;

/* One entry given instead of a PATH: a recording's (dcp_record_run.h). */
struct dcp_probe_given_entry {
	const char *path;
	size_t len;
	size_t root;		/* index in dcp_probe_given.roots */
	int depth;		/* below that root */
	unsigned char kind;	/* DT_*, or DT_UNKNOWN */
	bool name_only;		/* written by its name alone: no data, no identity */
};

/*
 * Entries given instead of PATHs, lists, a manifest or a walk: each is
 * probed and written by the snapshot's own writer (record(), with --ranges
 * its data and identity), so a recording is a manifest like a snapshot's.
 */
struct dcp_probe_given {
	const struct dcp_probe_given_entry *v;
	size_t n;
	const char *const *roots;
	size_t nroots;
	bool incomplete;	/* events were lost: the summary is not complete */
	/* records - JSON records to add before the summary.  Optional. */
	void (*records)(struct dcp_buf *out, void *arg);
	/* status - the run's exit status from the one computed.  Optional. */
	int (*status)(int status, const struct dcp_pr_counts *tot, void *arg);
	/* said - once the output is published whole: a line for a person.  Optional. */
	void (*said)(const struct dcp_pr_counts *tot, const struct dcp_pages_counts *pt,
		     void *arg);
	volatile int *abandon;	/* when set non-zero: stop, publish nothing, exit 2 */
	void *arg;
};

/* dcache-probe's own choices; the shared ones are in struct dcp_opts. */
struct dcp_probe_run_config {
	bool no_perturb;       /* list only directories whose inside is cached */
	bool ignore_unvisited; /* verdicts judge the probed paths alone */
	bool per_mount;	       /* a table per mount */
	bool sort;	       /* per-path lines by path, after the walk */
	bool pages;	       /* data residency of cached regular files */
	bool ranges;	       /* --pages --json: each file's resident ranges and
				* identity (a residency manifest) */
	int per_dir;	       /* deepest directory with a row; -1: no --per-dir */
	unsigned only;	       /* bit (1 << state) per state shown, and
				* DCP_ONLY_UNVISITED; 0: all */
	double min_cached;     /* verdict on the cached share; -1: none */
	double min_resident;   /* verdict on the resident data; -1: none */
	const struct dcp_probe_given *given; /* entries given instead of PATHs, or NULL */
};

/*
 * dcp_probe_run - probe every path of O (arguments, then lists), walking
 * trees under -r, and write what O and CFG ask for on standard output (or
 * --output), the summary on standard error.  Returns the exit status
 * (DCP_EXIT_*), the output published (dcp_opts_finish()).
 */
int dcp_probe_run(const struct dcp_opts *o, const struct dcp_probe_run_config *cfg);

/* dcp_probe_run_prints_paths - whether the run writes per-path records. */
bool dcp_probe_run_prints_paths(const struct dcp_opts *o, const struct dcp_probe_run_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
