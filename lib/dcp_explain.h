/* SPDX-License-Identifier: MIT */
/*
 * dcp_explain.h - why a path is cold: the first prefix of it whose lookup
 * misses the dentry cache, and a reason from what can be observed without
 * perturbing anything (--explain of cachedopen, dcache-probe, uring-open).
 *
 * Prefixes are probed with openat2(O_PATH|O_NOFOLLOW, RESOLVE_CACHED), which
 * does no I/O; the filesystem class comes from a mount table snapshot, a
 * cached prefix is opened O_PATH with RESOLVE_CACHED and its descriptor
 * statx'ed with AT_STATX_DONT_SYNC (no I/O either, and no FUSE daemon or
 * NFS server is asked: a stopped daemon cannot stall it), and a symlink is
 * read only when its target lives in the inode (a "fast" symlink,
 * st_blocks 0) on a filesystem whose reads ask no daemon or server.  So an
 * explanation changes nothing it explains.  The reasons are listed, with
 * what each means, in dcprobe(7) "Why is it cold?".
 */
#ifndef DCP_EXPLAIN_H
#define DCP_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "dcp_report.h"
#include "dcp_walk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a lookup missed.  The names (dcp_why_name) are a stable interface. */
enum dcp_why {
	DCP_WHY_NOT_CACHED = 0, /* "not-cached": simply not in the dcache */
	DCP_WHY_MOUNT_POINT,	/* "mount-point": first name looked up past a mount
				 * point (the parent is a mount's root), or an
				 * automount point */
	DCP_WHY_SYMLINK,	/* "symlink": a symlink was followed and its
				 * target holds the first miss */
	DCP_WHY_INSIDE_MISS,	/* "inside-miss": the parent's entry is cached, but
				 * lookups inside it miss for this caller (search
				 * permission or ACL not checkable in RCU mode) */
	DCP_WHY_NO_NEGATIVE,	/* "no-negative": tmpfs, ramfs, devtmpfs keep no
				 * negative dentries: the name is absent */
	DCP_WHY_REVALIDATING,	/* "revalidating": NFS, CIFS, FUSE, 9p, vfat...
				 * revalidate lookups outside RCU mode */
	DCP_WHY_PSEUDO,		/* "pseudo": proc, sysfs, cgroup, tracefs...
				 * entries revalidated on every lookup */
	DCP_WHY_UNKNOWN,	/* "unknown": no prefix misses alone, or the
				 * part that does could not be told */
	DCP_NWHY
};

/* One explanation.  Strings are not NUL-terminated; see their lifetime below. */
struct dcp_why_info {
	enum dcp_why why;
	const char *first_miss; /* the first prefix whose lookup misses; its parent */
	size_t len;		/* prefix is cached (NULL with DCP_WHY_UNKNOWN) */
	const char *link;	/* DCP_WHY_SYMLINK: the link (in the path given)... */
	size_t linklen;
	enum dcp_why link_why;	/* ...and why its target's FIRST_MISS missed */
};

struct dcp_explain;

/*
 * dcp_explain_new - an explainer for NWORKERS threads (worker 0..N-1 may
 * call it concurrently, each with its own index); reads the mount table.
 * Returns 0 and stores it in *OUT, or -errno.
 */
int dcp_explain_new(unsigned nworkers, struct dcp_explain **out);

/* dcp_explain_free - release it (NULL is accepted). */
void dcp_explain_free(struct dcp_explain *x);

/*
 * dcp_explain_path - explain why PATH (relative to the current directory)
 * missed, probing its prefixes; FLAGS DCP_FOLLOW when its last component
 * was followed.  Call it before anything opens PATH (that would warm it).
 * The strings in *OUT stay valid until the next call for WORKER.
 * Returns 0, or -ENOMEM.
 */
int dcp_explain_path(struct dcp_explain *x, unsigned worker, const char *path,
		     unsigned flags, struct dcp_why_info *out);

/*
 * dcp_explain_entry - explain the miss of walk entry E (e->probe -EAGAIN,
 * from a DCP_WALK_PROBE walk; FLAGS its probe_flags), from what the walk
 * knows: below a cold directory the first miss is the topmost cold
 * directory (dcp_dir.cold_top), found without any probe.  A root, or a
 * followed link in a warm directory, is explained as dcp_explain_path().
 * Call it from the visitor, for every missed root (directories below it
 * reuse its explanation, kept until dcp_explain_root_done()); a root
 * explained before (called for it ahead of the walk, while nothing had
 * warmed its prefixes) gets that explanation again.  Strings in *OUT live until the next call for
 * e->worker, or as long as E.  Returns 0, -EINVAL (E did not miss), -ENOMEM.
 */
int dcp_explain_entry(struct dcp_explain *x, const struct dcp_entry *e, unsigned flags,
		      struct dcp_why_info *out);

/*
 * dcp_explain_root_done - forget what dcp_explain_entry() kept of root
 * number ROOT for the directories below it (call it once the root's walk
 * is done, e.g. from dir_done, or when it is not descended into).
 */
void dcp_explain_root_done(struct dcp_explain *x, size_t root);

/* dcp_why_name - "not-cached", "mount-point"...; NULL out of range. */
const char *dcp_why_name(enum dcp_why why);

/* dcp_why_parse - the inverse of dcp_why_name(): the reason, or -EINVAL. */
int dcp_why_parse(const char *name);

/*
 * dcp_explain_text - append "(first miss: PREFIX: REASON)", with
 * ", via LINK (LINK_REASON)" for a symlink; "(first miss: unknown)".
 * Names are quoted for a terminal.
 */
void dcp_explain_text(struct dcp_buf *b, const struct dcp_why_info *r);

/*
 * dcp_explain_json - append the JSON members
 * ,"first_miss":PATH|null,"reason":"REASON"[,"link":PATH,"link_reason":"R"].
 */
void dcp_explain_json(struct dcp_buf *b, const struct dcp_why_info *r);

/*
 * dcp_explain_insert - add the explanation to the record just appended to B,
 * in the format the caller wrote it in (never guessed from its bytes, which
 * a name can make look like either): with JSON the members before its final
 * "}\n", in text two spaces and dcp_explain_text() before its final '\n'.
 * A record ending otherwise (a NUL-terminated path) is left alone.
 */
void dcp_explain_insert(struct dcp_buf *b, bool json, const struct dcp_why_info *r);

/*
 * dcp_why_counts_text - "misses by reason: N REASON, N REASON..." (reasons
 * with a count only, in enum order) and '\n'; "misses by reason: none".
 */
void dcp_why_counts_text(struct dcp_buf *b, const unsigned long long n[DCP_NWHY]);

/* dcp_why_counts_json - append ,"reasons":{"not-cached":N,...} (every reason). */
void dcp_why_counts_json(struct dcp_buf *b, const unsigned long long n[DCP_NWHY]);

/*
 * dcp_why_column - append the reasons as a table column: "REASON:N,REASON:N"
 * (reasons with a count only, in enum order; "-" when nothing missed) and
 * a tab.
 */
void dcp_why_column(struct dcp_buf *b, const unsigned long long n[DCP_NWHY]);

/*
 * dcp_why_table_row - add the reasons to the table row that starts at FROM
 * in B: JSON members before its "}\n", or in text a column
 * "REASON:N,REASON:N" ("-" when nothing missed) before its last column
 * (the path).
 */
void dcp_why_table_row(struct dcp_buf *b, size_t from, bool json,
		       const unsigned long long n[DCP_NWHY]);

#ifdef __cplusplus
}
#endif

#endif
