// SPDX-License-Identifier: MIT
/* probe_report.c - dcache-probe's output records in text, NUL and JSON form. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "dcp_probe_report.h"
#include "dcp_util.h"

void dcp_pr_counts_add(struct dcp_pr_counts *a, const struct dcp_pr_counts *b)
{
	for (int i = 0; i < DCP_NSTATES; i++)
		a->n[i] += b->n[i];
	a->not_visited += b->not_visited;
	a->walk_errors += b->walk_errors;
	a->unwalked_roots += b->unwalked_roots;
	a->lost += b->lost;
	for (int i = 0; i < DCP_NWHY; i++)
		a->why[i] += b->why[i];
}

unsigned long long dcp_pr_total(const struct dcp_pr_counts *c)
{
	unsigned long long t = 0;

	for (int i = 0; i < DCP_NSTATES; i++)
		t += c->n[i];
	return t;
}

/* NEVER as counted apart: never more than the misses it is part of. */
static unsigned long long apart(const struct dcp_pr_counts *c, unsigned long long never)
{
	return never < c->n[DCP_MISS] ? never : c->n[DCP_MISS];
}

bool dcp_pr_never_cached(int ret, const char *fstype)
{
	return dcp_state_of_errno(ret) == DCP_MISS &&
	       dcp_fs_cache_class(fstype, NULL) == DCP_FS_NEVER;
}

double dcp_pr_cached_pct(const struct dcp_pr_counts *c)
{
	return dcp_pr_cached_pct_split(c, 0);
}

double dcp_pr_cached_pct_split(const struct dcp_pr_counts *c, unsigned long long never)
{
	unsigned long long t = dcp_pr_total(c) - apart(c, never);

	if (!t || c->unwalked_roots)
		return -1.0; /* no share of nothing, nor of a tree not walked */
	return 100.0 * (double)(c->n[DCP_CACHED] + c->n[DCP_NEGATIVE]) / (double)t;
}

/* Percent with one decimal, never rounded up to 100.0 unless it is 100. */
static double pct1(const struct dcp_pr_counts *c, unsigned long long never)
{
	double p = dcp_pr_cached_pct_split(c, never);

	if (p < 100.0 && p > 99.95)
		return 99.9;
	if (p > 0.0 && p < 0.05)
		return 0.1;
	return p;
}

const char *dcp_pr_kind_name(unsigned char dtype)
{
	switch (dtype) {
	case DT_REG: return "file";
	case DT_DIR: return "dir";
	case DT_LNK: return "symlink";
	case DT_FIFO: return "fifo";
	case DT_SOCK: return "socket";
	case DT_CHR: return "char";
	case DT_BLK: return "block";
	default: return "unknown";
	}
}

/*
 * "miss" counts the cold misses; "never_cached" the misses on a filesystem
 * that never serves lookups from the cache, apart; the share is over the
 * paths a cache can serve (all but those).
 */
static void json_counts(struct dcp_buf *b, const struct dcp_pr_counts *c,
			unsigned long long never)
{
	never = apart(c, never);
	dcp_buf_printf(b, "\"paths\":%llu,\"cached\":%llu,\"negative\":%llu,"
		       "\"miss\":%llu,\"never_cached\":%llu,\"error\":%llu,\"not_visited\":%llu,"
		       "\"walk_errors\":%llu,\"cached_percent\":",
		       dcp_pr_total(c), c->n[DCP_CACHED], c->n[DCP_NEGATIVE],
		       c->n[DCP_MISS] - never, never, c->n[DCP_ERROR], c->not_visited,
		       c->walk_errors);
	if (dcp_pr_cached_pct_split(c, never) >= 0)
		dcp_buf_printf(b, "%.2f", dcp_pr_cached_pct_split(c, never));
	else
		dcp_buf_puts(b, "null");
	dcp_buf_printf(b, ",\"complete\":%s", dcp_pr_complete(c) ? "true" : "false");
}

static void json_errno(struct dcp_buf *b, int err)
{
	const char *msg = strerror(err);

	dcp_buf_printf(b, ",\"errno\":\"%s\",\"message\":", dcp_errno_name(err));
	dcp_buf_json_str(b, msg, strlen(msg));
}

static void text_path(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len)
{
	if (fmt == DCP_PR_NUL) {
		dcp_buf_add(b, path, len);
		dcp_buf_putc(b, '\0');
	} else if (fmt == DCP_PR_NUL_TTY) {
		dcp_buf_quote(b, path, len);
		dcp_buf_putc(b, '\0');
	} else {
		dcp_buf_quote(b, path, len);
		dcp_buf_putc(b, '\n');
	}
}

void dcp_pr_entry(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		  size_t len, int ret, unsigned char dtype, int depth)
{
	enum dcp_state st = dcp_state_of_errno(ret);

	switch (fmt) {
	case DCP_PR_TEXT:
		dcp_buf_puts(b, dcp_state_name(st));
		dcp_buf_putc(b, ' ');
		if (st == DCP_ERROR) {
			dcp_buf_puts(b, dcp_errno_name(-ret));
			dcp_buf_putc(b, ' ');
		}
		/* fall through */
	case DCP_PR_NUL:
	case DCP_PR_NUL_TTY:
		text_path(b, fmt, path, len);
		break;
	case DCP_PR_JSON:
		dcp_buf_puts(b, "{\"type\":\"entry\",\"path\":");
		dcp_buf_json_str(b, path, len);
		dcp_buf_printf(b, ",\"state\":\"%s\",\"kind\":\"%s\",\"depth\":%d",
			       dcp_state_name(st), dcp_pr_kind_name(dtype), depth);
		if (st == DCP_ERROR)
			json_errno(b, -ret);
		dcp_buf_puts(b, "}\n");
		break;
	}
}

void dcp_pr_unvisited(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		      size_t len, int ret, int depth)
{
	switch (fmt) {
	case DCP_PR_TEXT:
		dcp_buf_puts(b, "unvisited ");
		/* fall through */
	case DCP_PR_NUL:
	case DCP_PR_NUL_TTY:
		text_path(b, fmt, path, len);
		break;
	case DCP_PR_JSON:
		dcp_buf_puts(b, "{\"type\":\"unvisited\",\"path\":");
		dcp_buf_json_str(b, path, len);
		dcp_buf_printf(b, ",\"depth\":%d,\"reason\":\"%s\"}\n", depth,
			       ret == 0 ? "inside-miss" : ret == -EREMOTE ? "mount-may-wait" : "miss");
		break;
	}
}

void dcp_pr_walk_error(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		       size_t len, int err)
{
	if (fmt != DCP_PR_JSON)
		return;
	dcp_buf_puts(b, "{\"type\":\"error\",\"path\":");
	dcp_buf_json_str(b, path, len);
	json_errno(b, err);
	dcp_buf_puts(b, "}\n");
}

/*
 * The "PCT%\tCACHED/TOTAL\t" columns of the text tables; TOTAL leaves out
 * the misses on a filesystem never served from the cache, written after
 * it as ", N never cached".
 */
static void text_share(struct dcp_buf *b, const struct dcp_pr_counts *c,
		       unsigned long long never)
{
	never = apart(c, never);
	if (dcp_pr_cached_pct_split(c, never) >= 0)
		dcp_buf_printf(b, "%5.1f%%\t", pct1(c, never));
	else
		dcp_buf_puts(b, "     -\t"); /* nothing probed, or not walked: no share */
	dcp_buf_printf(b, "%llu/%llu", c->n[DCP_CACHED] + c->n[DCP_NEGATIVE],
		       dcp_pr_total(c) - never);
	if (c->not_visited)
		dcp_buf_printf(b, "+%llu?", c->not_visited);
	if (never)
		dcp_buf_printf(b, ", %llu never cached", never);
	dcp_buf_putc(b, '\t');
}


void dcp_pr_heading(struct dcp_buf *b, enum dcp_pr_table t, bool why, bool pages)
{
	dcp_buf_puts(b, "CACHED%\tCACHED/PROBED\t");
	if (t == DCP_PR_TABLE_MOUNT)
		dcp_buf_puts(b, "FSTYPE\t");
	if (why)
		dcp_buf_puts(b, "MISSES\t");
	if (pages)
		dcp_buf_puts(b, "DATA%\tRESIDENT/PAGES\t");
	dcp_buf_puts(b, t == DCP_PR_TABLE_MOUNT ? "MOUNTPOINT\n" : "PATH\n");
}

void dcp_pr_path(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len)
{
	text_path(b, fmt, path, len);
}

void dcp_pr_root(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len,
		 const struct dcp_pr_counts *c)
{
	dcp_pr_root_split(b, fmt, path, len, c, 0);
}

void dcp_pr_root_split(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path, size_t len,
		       const struct dcp_pr_counts *c, unsigned long long never)
{
	if (fmt == DCP_PR_JSON) {
		dcp_buf_puts(b, path ? "{\"type\":\"root\",\"path\":" : "{\"type\":\"total\",");
		if (path) {
			dcp_buf_json_str(b, path, len);
			dcp_buf_putc(b, ',');
		}
		json_counts(b, c, never);
		dcp_buf_puts(b, "}\n");
		return;
	}
	text_share(b, c, never);
	text_path(b, fmt, path ? path : "total", path ? len : 5);
}

void dcp_pr_dir(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		size_t len, int depth, const struct dcp_pr_counts *c)
{
	dcp_pr_dir_split(b, fmt, path, len, depth, c, 0);
}

void dcp_pr_dir_split(struct dcp_buf *b, enum dcp_pr_format fmt, const char *path,
		      size_t len, int depth, const struct dcp_pr_counts *c,
		      unsigned long long never)
{
	if (fmt == DCP_PR_JSON) {
		dcp_buf_puts(b, "{\"type\":\"dir\",\"path\":");
		dcp_buf_json_str(b, path, len);
		dcp_buf_printf(b, ",\"depth\":%d,", depth);
		json_counts(b, c, never);
		dcp_buf_puts(b, "}\n");
		return;
	}
	text_share(b, c, never);
	text_path(b, fmt, path, len);
}

static const char *const class_names[] = {
	[DCP_FS_CACHEABLE] = "yes",
	[DCP_FS_NEVER] = "never",
	[DCP_FS_PARTIAL] = "partial",
	[DCP_FS_REVALIDATE] = "revalidate",
	[DCP_FS_NO_NEGATIVE] = "no-negative",
};

void dcp_pr_mount(struct dcp_buf *b, enum dcp_pr_format fmt, const struct dcp_mount *mt,
		  dev_t dev, const struct dcp_pr_counts *c)
{
	const char *fstype = mt ? mt->fstype : "unknown";
	const char *target = mt ? mt->target : "?";
	const char *why;
	enum dcp_fs_cache cls = dcp_fs_cache_class(mt ? fstype : NULL, &why);
	/* Every miss on such a mount is one (the walk counts a lookup in
	 * the mount of the directory it ran in). */
	unsigned long long never = cls == DCP_FS_NEVER ? c->n[DCP_MISS] : 0;

	if (fmt == DCP_PR_JSON) {
		dcp_buf_puts(b, "{\"type\":\"mount\",\"mountpoint\":");
		dcp_buf_json_str(b, target, strlen(target));
		dcp_buf_puts(b, ",\"fstype\":");
		dcp_buf_json_str(b, fstype, strlen(fstype));
		dcp_buf_puts(b, ",\"source\":");
		if (mt)
			dcp_buf_json_str(b, mt->source, strlen(mt->source));
		else
			dcp_buf_puts(b, "null");
		dcp_buf_printf(b, ",\"dev\":\"%u:%u\",\"resolve_cached\":\"%s\",",
			       major(dev), minor(dev), class_names[cls]);
		if (why) {
			dcp_buf_puts(b, "\"note\":");
			dcp_buf_json_str(b, why, strlen(why));
			dcp_buf_putc(b, ',');
		}
		json_counts(b, c, never);
		dcp_buf_puts(b, "}\n");
		return;
	}
	text_share(b, c, never);
	dcp_buf_quote(b, fstype, strlen(fstype));
	if (cls != DCP_FS_CACHEABLE)
		dcp_buf_putc(b, '*');
	dcp_buf_putc(b, '\t');
	text_path(b, fmt, target, strlen(target));
}

void dcp_pr_summary_text(struct dcp_buf *b, const struct dcp_pr_counts *c)
{
	dcp_pr_summary_text_split(b, c, 0);
}

void dcp_pr_summary_text_split(struct dcp_buf *b, const struct dcp_pr_counts *c,
			       unsigned long long never)
{
	unsigned long long t = dcp_pr_total(c);

	never = apart(c, never);
	dcp_buf_count(b, t, "path", "paths");
	dcp_buf_printf(b, ": %llu cached, %llu negative, %llu miss, ", c->n[DCP_CACHED],
		       c->n[DCP_NEGATIVE], c->n[DCP_MISS] - never);
	if (never)
		dcp_buf_printf(b, "%llu never cached, ", never);
	dcp_buf_printf(b, "%llu error", c->n[DCP_ERROR]);
	if (dcp_pr_cached_pct_split(c, never) >= 0) {
		dcp_buf_printf(b, "; %s%.1f%% cached", dcp_pr_complete(c) ? "" : "at most ",
			       pct1(c, never));
	} else if (never && !c->unwalked_roots) {
		dcp_buf_puts(b, "; no share: no path probed is on a filesystem the cache can serve");
	} else if (c->unwalked_roots) {
		dcp_buf_puts(b, "; no share: ");
		dcp_buf_count(b, c->unwalked_roots, "tree", "trees");
		dcp_buf_puts(b, " could not be walked");
	}
	if (c->not_visited) {
		dcp_buf_puts(b, "; ");
		dcp_buf_count(b, c->not_visited, "directory", "directories");
		dcp_buf_printf(b, " not visited (what %s is unknown)",
			       c->not_visited == 1 ? "it holds" : "they hold");
	}
	if (c->walk_errors) {
		dcp_buf_puts(b, "; ");
		dcp_buf_count(b, c->walk_errors, "walk error", "walk errors");
	}
	dcp_buf_putc(b, '\n');
}

void dcp_pr_summary_json(struct dcp_buf *b, const struct dcp_pr_counts *c,
			 double min_cached, double elapsed_s, int status)
{
	dcp_pr_summary_json_split(b, c, 0, min_cached, elapsed_s, status);
}

void dcp_pr_summary_json_split(struct dcp_buf *b, const struct dcp_pr_counts *c,
			       unsigned long long never, double min_cached, double elapsed_s,
			       int status)
{
	dcp_buf_puts(b, "{\"type\":\"summary\",");
	json_counts(b, c, never);
	if (min_cached >= 0)
		dcp_buf_printf(b, ",\"min_cached\":%g", min_cached);
	dcp_buf_printf(b, ",\"elapsed_s\":%.6f,\"status\":%d}\n", elapsed_s, status);
}

/* ---- Prometheus text exposition format (dcp_prom.h) ---- */

/* The labels of series S (root, mount or dir); none for the run's total. */
static void prom_series_labels(struct dcp_prom *m, const char *pathlabel,
			       const struct dcp_pr_prom_series *s)
{
	if (!s)
		return;
	dcp_prom_label(m, pathlabel, s->path, s->pathlen);
	if (s->fstype)
		dcp_prom_labelz(m, "fstype", s->fstype);
	if (s->has_mnt_id) {
		char id[32];

		snprintf(id, sizeof(id), "%llu", (unsigned long long)s->mnt_id);
		dcp_prom_labelz(m, "mount_id", id);
	}
}

/*
 * SPLIT: the misses on a filesystem never served from the cache (NEVER of
 * them) are state="never_cached", apart from the cold ones (state="miss").
 */
static void prom_states(struct dcp_prom *m, const char *name, const char *help,
			const char *pathlabel, const struct dcp_pr_prom_series *s,
			const struct dcp_pr_counts *c, bool split, unsigned long long never)
{
	never = split ? apart(c, never) : 0;
	for (int st = 0; st < DCP_NSTATES; st++) {
		dcp_prom_start(m, name, help);
		prom_series_labels(m, pathlabel, s);
		dcp_prom_labelz(m, "state", dcp_state_name(st));
		dcp_prom_u64(m, c->n[st] - (st == DCP_MISS ? never : 0));
	}
	if (split) {
		dcp_prom_start(m, name, help);
		prom_series_labels(m, pathlabel, s);
		dcp_prom_labelz(m, "state", "never_cached");
		dcp_prom_u64(m, never);
	}
}

static void prom_value(struct dcp_prom *m, const char *name, const char *help,
		       const char *pathlabel, const struct dcp_pr_prom_series *s, bool ratio,
		       double v)
{
	dcp_prom_start(m, name, help);
	prom_series_labels(m, pathlabel, s);
	dcp_prom_value(m, v, ratio ? -1 : 0);
}

void dcp_pr_prometheus(struct dcp_prom *m, const struct dcp_pr_prom *p)
{
	dcp_pr_prometheus_split(m, p, NULL);
}

void dcp_pr_prometheus_split(struct dcp_prom *m, const struct dcp_pr_prom *p,
			     const struct dcp_pr_prom_never *nv)
{
	size_t n = p->nroots ? p->nroots : 1;

	/* Per-root series, or one series without a root for the whole run. */
	for (size_t i = 0; i < n; i++) {
		const struct dcp_pr_prom_series *s = p->nroots ? &p->roots[i] : NULL;
		const struct dcp_pr_counts *c = p->nroots ? p->roots[i].c : p->total;
		unsigned long long never = !nv ? 0 : p->nroots ? nv->roots[i] : nv->total;

		if (!p->states_unknown) {
			prom_states(m, "dcprobe_paths",
				    "Paths probed with openat2 RESOLVE_CACHED, by residency state "
				    "(warm: after warming); never_cached: misses on a filesystem "
				    "whose lookups the kernel never serves from the cache.",
				    "root", s, c, nv != NULL, never);
			/* No sample for a share of nothing, or of a tree
			 * that could not be walked. */
			if (dcp_pr_cached_pct_split(c, never) >= 0)
				prom_value(m, "dcprobe_cached_ratio",
					   "Share of probed paths resolved from the dentry cache "
					   "(cached or negative), of those a cache can serve.",
					   "root", s, true, dcp_pr_cached_pct_split(c, never) / 100.0);
		}
		if (!p->no_unvisited)
			prom_value(m, "dcprobe_not_visited_dirs",
				   "Directories not listed (--no-perturb): what they hold is unknown.",
				   "root", s, false, (double)c->not_visited);
		prom_value(m, "dcprobe_complete",
			   "1 if the root was walked and every directory below it was visited and "
			   "listed, 0 if what some hold is unknown.",
			   "root", s, false, dcp_pr_complete(c) ? 1.0 : 0.0);
		prom_value(m, "dcprobe_walk_errors", "Directories that could not be opened or listed.",
			   "root", s, false, (double)c->walk_errors);
	}
	for (size_t i = 0; i < p->nmounts; i++) {
		const struct dcp_pr_counts *mc = p->mounts[i].c;

		prom_states(m, "dcprobe_mount_paths", "Paths probed per mount, by residency state.",
			    "mountpoint", &p->mounts[i], mc, nv != NULL,
			    dcp_fs_cache_class(p->mounts[i].fstype, NULL) == DCP_FS_NEVER ?
				    mc->n[DCP_MISS] : 0);
		prom_value(m, "dcprobe_mount_resolve_cached",
			   "1 if RESOLVE_CACHED lookups can succeed on the mount's filesystem type, "
			   "0 if they can miss although cached.",
			   "mountpoint", &p->mounts[i], false,
			   dcp_fs_flagged(p->mounts[i].fstype) ? 0.0 : 1.0);
	}
	for (size_t i = 0; i < p->ndirs; i++) {
		prom_states(m, "dcprobe_dir_paths",
			    "Paths probed below a directory (--per-dir), by residency state.", "path",
			    &p->dirs[i], p->dirs[i].c, nv != NULL, nv ? nv->dirs[i] : 0);
		prom_value(m, "dcprobe_dir_not_visited_dirs",
			   "Directories not listed at or below a directory (--per-dir): what they "
			   "hold is unknown; 1 with no path below for a directory not listed itself.",
			   "path", &p->dirs[i], false, (double)p->dirs[i].c->not_visited);
	}
	dcp_prom_run(m, p->duration_s, p->status);
}
