// SPDX-License-Identifier: MIT
/* explain.c - the first missing prefix of a cold path, and why it missed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcp_explain.h"
#include "dcp_mounts.h"
#include "dcp_pages.h"
#include "dcp_probe.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

#define MAX_HOPS 40 /* symlinks followed, as the kernel's MAXSYMLINKS */
#define ROOT_BUCKETS 1024

/* A missed root's explanation, for the directories below it. */
struct rootmemo {
	struct rootmemo *next;
	size_t root;
	enum dcp_why why, link_why;
	char *first_miss, *link;
	size_t len, linklen;
};

/* One thread's scratch: result strings and the last classified directory. */
struct xworker {
	struct dcp_buf pfx, par, res, link;
	const struct dcp_dir *memo_dir;
	dev_t memo_dev;
	ino_t memo_ino;
	bool memo_inner;
	enum dcp_why memo_why;
	char pad[64];
};

struct dcp_explain {
	struct dcp_mounts *mounts;
	unsigned nw;
	struct xworker *w;
	pthread_mutex_t lock; /* roots */
	struct rootmemo *roots[ROOT_BUCKETS]; /* by root index */
};

static const char *const why_names[DCP_NWHY] = {
	[DCP_WHY_NOT_CACHED] = "not-cached",
	[DCP_WHY_MOUNT_POINT] = "mount-point",
	[DCP_WHY_SYMLINK] = "symlink",
	[DCP_WHY_INSIDE_MISS] = "inside-miss",
	[DCP_WHY_NO_NEGATIVE] = "no-negative",
	[DCP_WHY_REVALIDATING] = "revalidating",
	[DCP_WHY_PSEUDO] = "pseudo",
	[DCP_WHY_UNKNOWN] = "unknown",
};

const char *dcp_why_name(enum dcp_why why)
{
	return (unsigned)why < DCP_NWHY ? why_names[why] : NULL;
}

int dcp_why_parse(const char *name)
{
	for (int i = 0; i < DCP_NWHY; i++)
		if (strcmp(name, why_names[i]) == 0)
			return i;
	return -EINVAL;
}

int dcp_explain_new(unsigned nworkers, struct dcp_explain **out)
{
	struct dcp_explain *x = calloc(1, sizeof(*x));
	int ret;

	if (!x)
		return -ENOMEM;
	x->nw = nworkers ? nworkers : 1;
	x->w = calloc(x->nw, sizeof(*x->w));
	if (!x->w) {
		free(x);
		return -ENOMEM;
	}
	pthread_mutex_init(&x->lock, NULL);
	ret = dcp_mounts_load(NULL, &x->mounts);
	if (ret < 0) {
		dcp_explain_free(x);
		return ret;
	}
	*out = x;
	return 0;
}

void dcp_explain_free(struct dcp_explain *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < x->nw; i++) {
		dcp_buf_free(&x->w[i].pfx);
		dcp_buf_free(&x->w[i].par);
		dcp_buf_free(&x->w[i].res);
		dcp_buf_free(&x->w[i].link);
	}
	for (size_t i = 0; i < ROOT_BUCKETS; i++) {
		while (x->roots[i]) {
			struct rootmemo *m = x->roots[i];

			x->roots[i] = m->next;
			free(m->first_miss);
			free(m->link);
			free(m);
		}
	}
	dcp_mounts_free(x->mounts);
	pthread_mutex_destroy(&x->lock);
	free(x->w);
	free(x);
}

/* ---- classifying a miss ---- */

/*
 * The reason a name looked up in a cached directory missed.  What the
 * filesystem always does comes first; then what was observed of this
 * directory (lookups inside it miss), then what its class allows (no
 * negative dentries), then where it is (a mount's root).
 */
static enum dcp_why classify(const char *fstype, bool inner_miss, bool mount_root)
{
	if (fstype && strcmp(fstype, "autofs") == 0)
		return DCP_WHY_MOUNT_POINT;
	switch (dcp_fs_cache_class(fstype, NULL)) {
	case DCP_FS_NEVER:
	case DCP_FS_REVALIDATE:
		return dcp_fs_is_pseudo(fstype) ? DCP_WHY_PSEUDO : DCP_WHY_REVALIDATING;
	case DCP_FS_PARTIAL:
		return DCP_WHY_PSEUDO;
	case DCP_FS_NO_NEGATIVE:
		return inner_miss ? DCP_WHY_INSIDE_MISS : DCP_WHY_NO_NEGATIVE;
	case DCP_FS_CACHEABLE:
		break;
	}
	if (inner_miss)
		return DCP_WHY_INSIDE_MISS;
	return mount_root ? DCP_WHY_MOUNT_POINT : DCP_WHY_NOT_CACHED;
}

static const char *fstype_of(const struct dcp_explain *x, uint64_t mnt_id)
{
	struct dcp_mount mt;

	return mnt_id && dcp_mounts_by_id(x->mounts, mnt_id, &mt) == 0 ? mt.fstype : NULL;
}

/*
 * What can be seen of a cached PATH without asking its filesystem anything.
 * It is opened O_PATH with RESOLVE_CACHED, so a lookup that would
 * revalidate or wait fails instead, and the descriptor is statx'ed with
 * AT_STATX_DONT_SYNC, so FUSE, NFS, CIFS, 9p and ceph answer from what they
 * hold: a stopped FUSE daemon is never asked.  lstat(2) or statx(2) of the
 * path itself would revalidate a timed-out FUSE or NFS entry, and fstat(2)
 * refreshes timed-out attributes: either waits on the daemon for ever.
 */
struct peek {
	int fd;		  /* the O_PATH descriptor when KEEP, else -1 */
	mode_t mode;
	uint64_t blocks, size, mnt_id;
	bool mount_root;
};

/* 0 and *P, or -errno (-EAGAIN: PATH is not cached, nothing was asked). */
static int peek_at(const char *path, bool follow, bool keep, struct peek *p)
{
	struct statx stx;
	int fd, ret = 0;

	*p = (struct peek){ .fd = -1 };
	fd = dcp_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW), 0,
			 RESOLVE_CACHED);
	if (fd < 0)
		return fd;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_BLOCKS | STATX_SIZE | STATX_MNT_ID, &stx) < 0) {
		ret = -errno;
	} else {
		p->mode = stx.stx_mode;
		p->blocks = stx.stx_blocks;
		p->size = stx.stx_size;
		p->mnt_id = (stx.stx_mask & STATX_MNT_ID) ? stx.stx_mnt_id : 0;
		p->mount_root = (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
				(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	}
	if (keep && ret == 0)
		p->fd = fd;
	else
		close(fd);
	return ret;
}

/* The mount ID of a cached path (0: unknown), and whether it is a mount's root. */
static uint64_t mount_of(const char *path, bool *root)
{
	struct peek p;

	*root = false;
	if (peek_at(path, true, false, &p) < 0)
		return 0;
	*root = p.mount_root;
	return p.mnt_id;
}

/* Put the N bytes at S, NUL-terminated, in B. */
static const char *set_str(struct dcp_buf *b, const char *s, size_t n)
{
	dcp_buf_reset(b);
	dcp_buf_add(b, s, n);
	dcp_buf_putc(b, '\0');
	return b->oom ? NULL : b->data;
}

/*
 * Is PATH a cached symlink whose target can be read without any I/O and
 * without asking a daemon or a server?  Its target must live in its inode
 * (a "fast" link: no blocks) on a filesystem of the mount table where an
 * open never waits on one (dcp_pages_fstype_opens_safely(): not FUSE, NFS,
 * CIFS...; their readlink asks them).  Then *FD is its O_PATH descriptor,
 * for readlinkat(*FD, ""), and *SIZE the target's length.
 */
static bool fast_link(const struct dcp_explain *x, const char *path, int *fd, size_t *size)
{
	struct dcp_mount mt;
	struct peek p;

	*fd = -1;
	if (peek_at(path, false, true, &p) < 0)
		return false;
	if (S_ISLNK(p.mode) && p.blocks == 0 && p.size > 0 && p.size < PATH_MAX && p.mnt_id &&
	    dcp_mounts_by_id(x->mounts, p.mnt_id, &mt) == 0 &&
	    dcp_pages_fstype_opens_safely(mt.fstype)) {
		*fd = p.fd;
		*size = (size_t)p.size;
		return true;
	}
	close(p.fd);
	return false;
}

/* Is PATH a symlink, seen without asking its filesystem (peek_at)? */
static bool is_link(const char *path)
{
	struct peek p;

	return peek_at(path, false, false, &p) == 0 && S_ISLNK(p.mode);
}

static int explain_at(struct dcp_explain *x, struct xworker *xw, const char *path,
		      unsigned flags, int hops, struct dcp_why_info *out);

/*
 * LINK (cached itself) was followed and its target misses: explain the
 * target joined with REST (what followed the link in the path).  A link
 * whose target is not in its inode would have to be read from the
 * filesystem: then the link itself is named, and the reason is unknown.
 */
static int via_link(struct dcp_explain *x, struct xworker *xw, const char *link,
		    const char *rest, unsigned flags, int hops, struct dcp_why_info *out)
{
	char *lk = strdup(link), *target = NULL, *next = NULL;
	size_t size = 0;
	ssize_t n;
	int ret = 0, fd = -1;

	if (!lk)
		return -ENOMEM;
	*out = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
	if (hops < MAX_HOPS && fast_link(x, lk, &fd, &size) && (target = malloc(size + 1)) &&
	    (n = readlinkat(fd, "", target, size + 1)) > 0 && (size_t)n <= size) {
		char *slash = strrchr(lk, '/');
		int dirlen = target[0] == '/' || !slash ? 0 : (int)(slash - lk) + 1;

		target[n] = '\0';
		if (asprintf(&next, "%.*s%s%s%s", dirlen, lk, target, *rest ? "/" : "", rest) < 0)
			next = NULL;
		ret = next ? explain_at(x, xw, next, flags, hops + 1, out) : -ENOMEM;
	}
	if (ret == 0) {
		/* Of a chain of links, the reason is that of the last target. */
		if (out->why != DCP_WHY_SYMLINK)
			out->link_why = out->why;
		out->why = DCP_WHY_SYMLINK;
		out->link = set_str(&xw->link, lk, strlen(lk));
		out->linklen = out->link ? strlen(lk) : 0;
		if (out->link_why == DCP_WHY_UNKNOWN || !out->first_miss) {
			/* Only the link itself can be named. */
			out->first_miss = set_str(&xw->res, lk, strlen(lk));
			out->len = out->first_miss ? strlen(lk) : 0;
		}
		if (!out->link || !out->first_miss)
			ret = -ENOMEM;
	}
	if (fd >= 0)
		close(fd);
	free(lk);
	free(target);
	free(next);
	return ret;
}

/* Probe the prefixes of PATH, shortest first, until one misses. */
static int explain_at(struct dcp_explain *x, struct xworker *xw, const char *path,
		      unsigned flags, int hops, struct dcp_why_info *out)
{
	size_t n = strlen(path), i = 0, parent_end = 0;
	bool abs = path[0] == '/';

	*out = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
	while (i < n) {
		size_t s, e, j;
		const char *pfx, *par;
		int ret;

		while (i < n && path[i] == '/')
			i++;
		if (i >= n)
			break;
		s = i;
		while (i < n && path[i] != '/')
			i++;
		e = i;
		for (j = e; j < n && path[j] == '/'; j++)
			;
		bool last = j >= n;

		pfx = set_str(&xw->pfx, path, e);
		if (!pfx)
			return -ENOMEM;
		ret = dcp_probe_at(AT_FDCWD, pfx, last ? (flags & DCP_FOLLOW) : 0);
		if (ret == 0) {
			parent_end = e;
			continue;
		}
		if (ret != -EAGAIN)
			return 0; /* absent or failing: no miss to explain here */
		/* The last component, followed: the link itself may be cached. */
		if (last && (flags & DCP_FOLLOW) && dcp_probe_at(AT_FDCWD, pfx, 0) == 0 &&
		    is_link(pfx))
			return via_link(x, xw, pfx, "", flags, hops, out);
		par = parent_end ? set_str(&xw->par, path, parent_end) : abs ? "/" : ".";
		if (!par)
			return -ENOMEM;
		/* The name was looked up in what the parent (a cached link) points to. */
		if (parent_end && is_link(par) &&
		    dcp_probe_at(AT_FDCWD, par, DCP_FOLLOW) == -EAGAIN)
			return via_link(x, xw, par, path + s, flags, hops, out);

		bool mount_root, inner_miss;
		uint64_t id = mount_of(par, &mount_root);
		struct dcp_mount mt;

		/*
		 * A parent on a filesystem whose lookups the kernel never serves
		 * from the cache (9p, CIFS, vfat...: DCP_FS_NEVER, lib/mounts.c)
		 * missed for that reason, whatever the name is: that comes before
		 * a mount on the name (with a guest's root on 9p, "/tmp" missed
		 * because "/" is 9p, not because a tmpfs is mounted on it).
		 */
		const char *pfs = fstype_of(x, id);

		if (dcp_fs_cache_class(pfs, NULL) == DCP_FS_NEVER) {
			out->why = classify(pfs, false, mount_root);
		/* An automount point, or a mount the name is itself: crossing it missed. */
		} else if (abs && dcp_mounts_by_path(x->mounts, pfx, &mt) == 0 &&
			   (uint64_t)mt.id != id && strcmp(mt.target, pfx) == 0) {
			out->why = DCP_WHY_MOUNT_POINT;
		} else {
			if (par != xw->par.data && !set_str(&xw->par, par, strlen(par)))
				return -ENOMEM;
			xw->par.len = strlen(xw->par.data);
			dcp_buf_add(&xw->par, "/.", 3);
			if (xw->par.oom)
				return -ENOMEM;
			inner_miss = dcp_probe_at(AT_FDCWD, xw->par.data, DCP_NOTDIR) == -EAGAIN;
			out->why = classify(pfs, inner_miss, mount_root);
		}
		out->first_miss = set_str(&xw->res, path, e);
		out->len = e;
		return out->first_miss ? 0 : -ENOMEM;
	}
	return 0; /* every prefix is cached: the miss is not in a name lookup */
}

int dcp_explain_path(struct dcp_explain *x, unsigned worker, const char *path,
		     unsigned flags, struct dcp_why_info *out)
{
	return explain_at(x, &x->w[worker % x->nw], path, flags, 0, out);
}

/* ---- walks ---- */

/* Why a name looked up in listed directory D (of E's path) missed; memoised. */
static enum dcp_why dir_why(struct dcp_explain *x, struct xworker *xw,
			    const struct dcp_entry *e, const struct dcp_dir *d, bool inner_miss)
{
	bool root = false;

	if (xw->memo_dir == d && xw->memo_dev == d->dev && xw->memo_ino == d->ino &&
	    xw->memo_inner == inner_miss)
		return xw->memo_why;
	if (d->parent) {
		root = d->mnt_id != d->parent->mnt_id;
	} else {
		const char *p = set_str(&xw->par, e->path, d->pathlen);

		if (p)
			mount_of(p, &root);
	}
	xw->memo_dir = d;
	xw->memo_dev = d->dev;
	xw->memo_ino = d->ino;
	xw->memo_inner = inner_miss;
	xw->memo_why = classify(fstype_of(x, d->mnt_id), inner_miss, root);
	return xw->memo_why;
}

static int memo_root(struct dcp_explain *x, size_t root, const struct dcp_why_info *r)
{
	struct rootmemo *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->root = root;
	m->why = r->why;
	m->link_why = r->link_why;
	m->len = r->len;
	m->linklen = r->linklen;
	m->first_miss = r->first_miss ? strndup(r->first_miss, r->len) : NULL;
	m->link = r->link ? strndup(r->link, r->linklen) : NULL;
	if ((r->first_miss && !m->first_miss) || (r->link && !m->link)) {
		free(m->first_miss);
		free(m->link);
		free(m);
		return -ENOMEM;
	}
	pthread_mutex_lock(&x->lock);
	m->next = x->roots[root % ROOT_BUCKETS];
	x->roots[root % ROOT_BUCKETS] = m;
	pthread_mutex_unlock(&x->lock);
	return 0;
}

void dcp_explain_root_done(struct dcp_explain *x, size_t root)
{
	struct rootmemo **pp, *m = NULL;

	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	for (pp = &x->roots[root % ROOT_BUCKETS]; *pp; pp = &(*pp)->next) {
		if ((*pp)->root == root) {
			m = *pp;
			*pp = m->next;
			break;
		}
	}
	pthread_mutex_unlock(&x->lock);
	if (m) {
		free(m->first_miss);
		free(m->link);
		free(m);
	}
}

/* The kept explanation of root ROOT into *OUT: 0, -ENOENT (none), -ENOMEM. */
static int recall_root(struct dcp_explain *x, struct xworker *xw, size_t root,
		       struct dcp_why_info *out)
{
	int ret = -ENOENT;

	*out = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
	pthread_mutex_lock(&x->lock);
	for (const struct rootmemo *m = x->roots[root % ROOT_BUCKETS]; m; m = m->next) {
		if (m->root != root)
			continue;
		ret = 0;
		out->why = m->why;
		out->link_why = m->link_why;
		if (m->first_miss) {
			out->first_miss = set_str(&xw->res, m->first_miss, m->len);
			out->len = m->len;
		}
		if (m->link) {
			out->link = set_str(&xw->link, m->link, m->linklen);
			out->linklen = m->linklen;
		}
		if ((m->first_miss && !out->first_miss) || (m->link && !out->link))
			ret = -ENOMEM;
		break;
	}
	pthread_mutex_unlock(&x->lock);
	return ret;
}

int dcp_explain_entry(struct dcp_explain *x, const struct dcp_entry *e, unsigned flags,
		      struct dcp_why_info *out)
{
	struct xworker *xw = &x->w[e->worker % x->nw];
	const struct dcp_dir *d = e->dir, *top;
	int ret;

	*out = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
	if (e->probe != -EAGAIN)
		return -EINVAL;
	if (!d) {
		/* Explained once, before the walk warmed anything. */
		ret = recall_root(x, xw, e->root, out);
		if (ret != -ENOENT)
			return ret;
		ret = explain_at(x, xw, e->path, flags, 0, out);
		return ret < 0 ? ret : memo_root(x, e->root, out);
	}
	top = d->cold_top;
	if (!top) {
		/* A warm directory: the entry is the first miss. */
		if (e->type == DT_LNK && (flags & DCP_FOLLOW))
			return explain_at(x, xw, e->path, flags, 0, out);
		out->why = dir_why(x, xw, e, d, false);
		out->first_miss = e->path;
		out->len = e->pathlen;
	} else if (top->probe == 0) {
		/* Lookups inside TOP miss: the first miss is its child on the way. */
		const char *p = e->path + top->pathlen;
		const char *end;

		while (*p == '/')
			p++;
		end = strchrnul(p, '/');
		out->why = dir_why(x, xw, e, top, true);
		out->first_miss = e->path;
		out->len = (size_t)(end - e->path);
	} else if (!top->parent) {
		ret = recall_root(x, xw, e->root, out);
		return ret == -ENOENT ? 0 : ret;
	} else if (top->link) {
		out->why = DCP_WHY_SYMLINK;
		out->link_why = DCP_WHY_UNKNOWN;
		out->first_miss = out->link = e->path;
		out->len = out->linklen = top->pathlen;
	} else {
		out->why = dir_why(x, xw, e, top->parent, false);
		out->first_miss = e->path;
		out->len = top->pathlen;
	}
	return 0;
}

/* ---- output ---- */

void dcp_explain_text(struct dcp_buf *b, const struct dcp_why_info *r)
{
	dcp_buf_puts(b, "(first miss: ");
	if (!r->first_miss) {
		dcp_buf_puts(b, "unknown)");
		return;
	}
	dcp_buf_quote(b, r->first_miss, r->len);
	dcp_buf_puts(b, ": ");
	dcp_buf_puts(b, dcp_why_name(r->why));
	if (r->why == DCP_WHY_SYMLINK && r->link) {
		dcp_buf_puts(b, ", via ");
		dcp_buf_quote(b, r->link, r->linklen);
		dcp_buf_printf(b, " (%s)", dcp_why_name(r->link_why));
	}
	dcp_buf_putc(b, ')');
}

void dcp_explain_json(struct dcp_buf *b, const struct dcp_why_info *r)
{
	dcp_buf_puts(b, ",\"first_miss\":");
	if (r->first_miss)
		dcp_buf_json_str(b, r->first_miss, r->len);
	else
		dcp_buf_puts(b, "null");
	dcp_buf_printf(b, ",\"reason\":\"%s\"", dcp_why_name(r->why));
	if (r->why == DCP_WHY_SYMLINK && r->link) {
		dcp_buf_puts(b, ",\"link\":");
		dcp_buf_json_str(b, r->link, r->linklen);
		dcp_buf_printf(b, ",\"link_reason\":\"%s\"", dcp_why_name(r->link_why));
	}
}

/* Insert the output of FN(R) before the last TAIL_LEN bytes of B. */
static void insert_before(struct dcp_buf *b, size_t tail_len, const char *pre,
			  void (*fn)(struct dcp_buf *, const struct dcp_why_info *),
			  const struct dcp_why_info *r)
{
	char tail[2];

	memcpy(tail, b->data + b->len - tail_len, tail_len);
	b->len -= tail_len;
	dcp_buf_puts(b, pre);
	fn(b, r);
	dcp_buf_add(b, tail, tail_len);
}

void dcp_explain_insert(struct dcp_buf *b, bool json, const struct dcp_why_info *r)
{
	if (b->oom || b->len < 2 || b->data[b->len - 1] != '\n')
		return;
	if (!json)
		insert_before(b, 1, "  ", dcp_explain_text, r);
	else if (b->data[b->len - 2] == '}')
		insert_before(b, 2, "", dcp_explain_json, r);
}

void dcp_why_counts_text(struct dcp_buf *b, const unsigned long long n[DCP_NWHY])
{
	bool any = false;

	dcp_buf_puts(b, "misses by reason:");
	for (int i = 0; i < DCP_NWHY; i++) {
		if (!n[i])
			continue;
		dcp_buf_printf(b, "%s %llu %s", any ? "," : "", n[i], why_names[i]);
		any = true;
	}
	dcp_buf_puts(b, any ? "\n" : " none\n");
}

void dcp_why_counts_json(struct dcp_buf *b, const unsigned long long n[DCP_NWHY])
{
	dcp_buf_puts(b, ",\"reasons\":{");
	for (int i = 0; i < DCP_NWHY; i++)
		dcp_buf_printf(b, "%s\"%s\":%llu", i ? "," : "", why_names[i], n[i]);
	dcp_buf_putc(b, '}');
}

void dcp_why_column(struct dcp_buf *b, const unsigned long long n[DCP_NWHY])
{
	bool any = false;

	for (int i = 0; i < DCP_NWHY; i++) {
		if (!n[i])
			continue;
		dcp_buf_printf(b, "%s%s:%llu", any ? "," : "", why_names[i], n[i]);
		any = true;
	}
	dcp_buf_puts(b, any ? "\t" : "-\t");
}

void dcp_why_table_row(struct dcp_buf *b, size_t from, bool json,
		       const unsigned long long n[DCP_NWHY])
{
	struct dcp_buf m = DCP_BUF_INIT;
	size_t tab;

	if (b->oom || b->len <= from + 1 || b->data[b->len - 1] != '\n')
		return;
	if (json) {
		if (b->data[b->len - 2] != '}')
			return;
		b->len -= 2;
		dcp_why_counts_json(b, n);
		dcp_buf_puts(b, "}\n");
		return;
	}
	for (tab = b->len; tab > from && b->data[tab - 1] != '\t'; tab--)
		;
	if (tab == from)
		return;
	dcp_why_column(&m, n);
	/* Make room, then move the path along. */
	dcp_buf_add(b, m.data ? m.data : "", m.len);
	if (!b->oom && !m.oom) {
		memmove(b->data + tab + m.len, b->data + tab, b->len - m.len - tab);
		memcpy(b->data + tab, m.data, m.len);
	}
	dcp_buf_free(&m);
}
