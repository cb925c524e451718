// SPDX-License-Identifier: MIT
/*
 * record.c - what processes opened under some roots: fanotify filesystem
 * marks reporting (directory handle, name) and the file's handle, so the
 * recorder opens nothing for reading while it watches.
 *
 * Each event's directory is found in the directory table by (filesystem,
 * handle); a new one is resolved once, by an O_PATH open of its handle and
 * /proc/self/fd: a directory just used is in the dentry cache, so this
 * reads nothing from the disk.  Under a root, its path at that moment is
 * kept (a file is recorded by the name it was used by); outside, it gets
 * an evictable ignore mark and its events stop.  A recorded entry is
 * (directory, name) in the entry table, with the handle of the file the
 * first event named; the file gets an ignore mark too, so its repeated
 * opens cost nothing more.  At the end each name is checked once more,
 * from the dentry cache only.
 *
 * Memory: one arena holds handles, names and directory paths; the entry
 * table is open addressing of 12-byte slots into it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "dcp_mounts.h"
#include "dcp_pages.h"
#include "dcp_procs.h"
#include "dcp_record.h"
#include "dcp_util.h"
#include "dcp_walk.h"
#include "private/dcp_churn.h"

#define READ_BUF (256 * 1024)
/*
 * The largest event (its metadata, a pidfd, a directory handle and name,
 * the file's handle) and the smallest one that carries a pidfd: a read
 * holds at most READ_MIN / EVENT_MIN events, each with a descriptor.
 */
#define READ_MIN                                                                            \
	(FAN_EVENT_METADATA_LEN + sizeof(struct fanotify_event_info_pidfd) +                \
	 2 * (sizeof(struct fanotify_event_info_fid) + sizeof(struct file_handle) +         \
	      MAX_HANDLE_SZ) + NAME_MAX + 8)
#define EVENT_MIN                                                                           \
	(FAN_EVENT_METADATA_LEN + sizeof(struct fanotify_event_info_pidfd) +                \
	 2 * (sizeof(struct fanotify_event_info_fid) + sizeof(struct file_handle)) + 4)
/* Descriptors an event needs besides its pidfd: an open by handle, and one spare. */
#define EVENT_FDS 2
#define MAX_FS 256

struct fsrec {
	fsid_t fsid;
	int mntfd;	/* the root directory it was marked from, O_RDONLY: for open_by_handle_at */
	char *path;
	char *fstype;
	int err;
};

enum { D_INSIDE = 1, D_OUTSIDE, D_STALE };
enum { D_OPENED = 1, D_LISTED = 2 };

struct dir {
	uint32_t hoff;	/* handle in the arena: type (4 bytes), then bytes */
	uint16_t hlen;
	uint8_t fs;
	uint8_t state;	/* D_INSIDE... */
	uint8_t used;	/* D_OPENED | D_LISTED, by their processes */
	uint8_t moved;	/* at the end: 0 not known, 1 at its path still, 2 moved or deleted */
	uint32_t poff;	/* D_INSIDE: its path at first use, in the arena */
	uint32_t plen;
	uint32_t root;
};

/* Entry flags. */
enum {
	E_YES = 1,	/* an event of theirs named it: recorded */
	E_UNATTR = 2,	/* an event of a process that could not be told named it */
	E_MARKED = 4,	/* its ignore mark was asked for */
};

struct slot {
	uint32_t h;	/* hash; 0 with off 0: empty */
	uint32_t off;	/* key in the arena: dir index (4 bytes), name; then the fid */
	uint16_t klen;
	uint8_t fidlen;
	uint8_t flags;
};

struct dcp_record {
	int fan;
	unsigned flags;
	pid_t self;
	struct dcp_procs *procs;
	char **roots;
	size_t *rootlen;
	size_t nroots;
	struct fsrec fs[MAX_FS];
	size_t nfs;
	bool ignore_marks;	/* off when the kernel has no FAN_MARK_IGNORE, or marks ran out */
	int err;		/* the first error of a read */
	const struct dcp_mounts *mounts; /* whose FUSE, NFS... mounts are never asked */
	struct dcp_mounts *own_mounts;	/* read by dcp_record_new() when O->mounts is NULL */
	uint64_t unresolved;	/* events, entries that could not be resolved */
	int unresolved_err;	/* the first reason */
	uint64_t paused_ns;	/* the last pause for a miss that was one (check_cached()) */
	unsigned char *arena;
	size_t alen, acap;
	struct dir *dirs;
	size_t ndirs, dcap;
	uint32_t *dhash;	/* dir index + 1 per slot; 0 empty */
	size_t dhcap;
	struct slot *tab;
	size_t tcap, tused;
	char *buf;
	struct dcp_record_stats st;
};

/* ---- the arena, the tables ---- */

static uint32_t hash(const void *p, size_t n, uint32_t h)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h ? h : 1;
}

/* Room for N more bytes; their offset, or -1. */
static int64_t arena_take(struct dcp_record *r, size_t n)
{
	size_t at = r->alen;

	if (r->alen + n > r->acap) {
		size_t ncap = r->acap ? r->acap : 1 << 16;
		unsigned char *na;

		while (ncap < r->alen + n)
			ncap *= 2;
		if (ncap > UINT32_MAX)
			return -1;
		na = realloc(r->arena, ncap);
		if (!na)
			return -1;
		r->arena = na;
		r->acap = ncap;
	}
	r->alen += n;
	return (int64_t)at;
}

static int dir_hash_grow(struct dcp_record *r)
{
	size_t ncap = r->dhcap ? r->dhcap * 2 : 1024;
	uint32_t *nh = calloc(ncap, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < r->ndirs; i++) {
		const struct dir *d = &r->dirs[i];
		uint32_t h = hash(r->arena + d->hoff, d->hlen, 2166136261u ^ d->fs);
		size_t j = h & (ncap - 1);

		while (nh[j])
			j = (j + 1) & (ncap - 1);
		nh[j] = (uint32_t)i + 1;
	}
	free(r->dhash);
	r->dhash = nh;
	r->dhcap = ncap;
	return 0;
}

/* The directory (FS, handle H of LEN bytes: type then bytes); *FRESH when new. */
static struct dir *dir_get(struct dcp_record *r, unsigned fs, const unsigned char *h, size_t len,
			   bool *fresh)
{
	uint32_t hv = hash(h, len, 2166136261u ^ fs);
	size_t j;
	int64_t off;
	struct dir *d;

	*fresh = false;
	if (2 * (r->ndirs + 1) > r->dhcap && dir_hash_grow(r) < 0)
		return NULL;
	for (j = hv & (r->dhcap - 1); r->dhash[j]; j = (j + 1) & (r->dhcap - 1)) {
		d = &r->dirs[r->dhash[j] - 1];
		if (d->fs == fs && d->hlen == len && memcmp(r->arena + d->hoff, h, len) == 0)
			return d;
	}
	if (r->ndirs == r->dcap) {
		size_t ncap = r->dcap ? r->dcap * 2 : 256;
		struct dir *nd = realloc(r->dirs, ncap * sizeof(*nd));

		if (!nd)
			return NULL;
		r->dirs = nd;
		r->dcap = ncap;
	}
	off = arena_take(r, len);
	if (off < 0)
		return NULL;
	memcpy(r->arena + off, h, len);
	d = &r->dirs[r->ndirs];
	*d = (struct dir){ .hoff = (uint32_t)off, .hlen = (uint16_t)len, .fs = (uint8_t)fs };
	r->dhash[j] = (uint32_t)++r->ndirs;
	*fresh = true;
	return d;
}

static int tab_grow(struct dcp_record *r)
{
	size_t ncap = r->tcap ? r->tcap * 2 : 4096;
	struct slot *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < r->tcap; i++) {
		size_t j;

		if (!r->tab[i].h)
			continue;
		for (j = r->tab[i].h & (ncap - 1); nt[j].h; j = (j + 1) & (ncap - 1))
			;
		nt[j] = r->tab[i];
	}
	free(r->tab);
	r->tab = nt;
	r->tcap = ncap;
	return 0;
}

/* The entry (DIRIDX, NAME); a new one keeps FID (FIDLEN bytes). */
static struct slot *entry_get(struct dcp_record *r, uint32_t diridx, const char *name,
			      const unsigned char *fid, size_t fidlen, bool *fresh)
{
	size_t nlen = strlen(name), klen = sizeof(diridx) + nlen;
	uint32_t h;
	size_t j;
	int64_t off;

	*fresh = false;
	if (klen > UINT16_MAX || fidlen > UINT8_MAX)
		return NULL;
	h = hash(name, nlen, hash(&diridx, sizeof(diridx), 2166136261u));
	if (2 * (r->tused + 1) > r->tcap && tab_grow(r) < 0)
		return NULL;
	for (j = h & (r->tcap - 1); r->tab[j].h; j = (j + 1) & (r->tcap - 1)) {
		struct slot *s = &r->tab[j];
		const unsigned char *k = r->arena + s->off;

		if (s->h == h && s->klen == klen && memcmp(k, &diridx, sizeof(diridx)) == 0 &&
		    memcmp(k + sizeof(diridx), name, nlen) == 0)
			return s;
	}
	off = arena_take(r, klen + fidlen);
	if (off < 0)
		return NULL;
	memcpy(r->arena + off, &diridx, sizeof(diridx));
	memcpy(r->arena + off + sizeof(diridx), name, nlen);
	if (fidlen)
		memcpy(r->arena + off + klen, fid, fidlen);
	r->tab[j] = (struct slot){ .h = h, .off = (uint32_t)off, .klen = (uint16_t)klen,
				   .fidlen = (uint8_t)fidlen };
	r->tused++;
	*fresh = true;
	return &r->tab[j];
}

/* An event or an entry that could not be resolved (not a deleted one): counted. */
static void unresolved(struct dcp_record *r, int err)
{
	r->unresolved++;
	if (!r->unresolved_err)
		r->unresolved_err = err > 0 ? -err : err;
}

/*
 * The type and mount of the object open as FD, without syncing: a FUSE
 * daemon or an NFS server is never asked (fstat(2) of a FUSE object whose
 * attributes timed out waits on its daemon, for ever if it is stopped).
 * Whether an open, a stat or a readlink of it may wait on one goes to
 * *UNSAFE (its mount by the mount table: not FUSE, NFS...).
 */
static int fd_statx(const struct dcp_record *r, int fd, struct statx *stx, bool *unsafe)
{
	struct dcp_mount mt;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_NLINK | STATX_MNT_ID,
		  stx) < 0)
		return -errno;
	*unsafe = r->mounts && (stx->stx_mask & STATX_MNT_ID) &&
		  dcp_mounts_by_id(r->mounts, stx->stx_mnt_id, &mt) == 0 &&
		  !dcp_pages_fstype_opens_safely(mt.fstype);
	return 0;
}

/* A mount where a lookup may wait (dcp_walk_lookup()): FUSE, NFS... */
static int judge_mount(uint64_t mnt_id, void *arg)
{
	const struct dcp_mounts *mounts = arg;
	struct dcp_mount mt;

	return mounts && dcp_mounts_by_id(mounts, mnt_id, &mt) == 0 &&
			       !dcp_pages_fstype_opens_safely(mt.fstype) ?
		       DCP_WALK_MOUNT_UNSAFE : DCP_WALK_MOUNT_ENTER;
}

/* ---- paths ---- */

/* The root (longest) that PATH (LEN bytes) is or lies under; -1 when none. */
static ssize_t root_of(const struct dcp_record *r, const char *path, size_t len)
{
	ssize_t best = -1;

	for (size_t i = 0; i < r->nroots; i++) {
		size_t rl = r->rootlen[i];

		if (rl == 1) /* "/" */
			rl = 0;
		if (len < rl || memcmp(path, r->roots[i], rl) != 0 ||
		    (len > rl && path[rl] != '/'))
			continue;
		if (best < 0 || r->rootlen[i] > r->rootlen[best])
			best = (ssize_t)i;
	}
	return best;
}

/* The path of open descriptor FD into BUF; its length, or -errno. */
static ssize_t fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (buf[0] != '/')
		return -ENOENT; /* not reachable from our root */
	return n;
}

/* An evictable ignore mark on the object open as FD (O_PATH), by its magic link. */
static void ignore_mark(struct dcp_record *r, int fd, bool dir)
{
	char link[64];
	unsigned flags = FAN_MARK_ADD | FAN_MARK_IGNORE_SURV | FAN_MARK_EVICTABLE;
	uint64_t mask = FAN_OPEN | FAN_ACCESS | (dir ? FAN_ONDIR | FAN_EVENT_ON_CHILD : 0);

	if (!r->ignore_marks)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (fanotify_mark(r->fan, flags, mask, AT_FDCWD, link) == 0) {
		r->st.ignore_marks++;
		return;
	}
	r->st.ignore_marks_failed++;
	if (errno == EINVAL || errno == ENOSPC)
		r->ignore_marks = false; /* no FAN_MARK_IGNORE (before 6.0), or no more marks */
}

/* A file handle (type, then bytes) as open_by_handle_at wants it. */
struct handle {
	struct file_handle fh;
	unsigned char bytes[MAX_HANDLE_SZ];
};

static bool to_handle(const unsigned char *h, size_t len, struct handle *out)
{
	int type;

	if (len < sizeof(type) || len - sizeof(type) > MAX_HANDLE_SZ)
		return false;
	memcpy(&type, h, sizeof(type));
	out->fh.handle_type = type;
	out->fh.handle_bytes = (unsigned)(len - sizeof(type));
	memcpy(out->fh.f_handle, h + sizeof(type), len - sizeof(type));
	return true;
}

static int open_handle(struct dcp_record *r, unsigned fs, const unsigned char *h, size_t len)
{
	struct handle hd;

	if (!to_handle(h, len, &hd))
		return -EINVAL;
	return (int)syscall(SYS_open_by_handle_at, r->fs[fs].mntfd, &hd.fh, O_PATH | O_CLOEXEC);
}

/* A new directory: its path now, inside a root or not. */
static void resolve(struct dcp_record *r, struct dir *d)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n, root;
	int64_t off;
	int fd = open_handle(r, d->fs, r->arena + d->hoff, d->hlen);

	d->state = D_STALE;
	if (fd < 0 && errno != ESTALE) {
		/* EMFILE, ENOMEM...: not known, tried again at its next event. */
		d->state = 0;
		unresolved(r, errno);
		return;
	}
	if (fd < 0)
		goto stale; /* ESTALE: deleted already */
	n = fd_path(fd, path, sizeof(path));
	if (n < 0 || fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);
		goto stale;
	}
	root = root_of(r, path, (size_t)n);
	if (root < 0) {
		d->state = D_OUTSIDE;
		r->st.outside_dirs++;
		ignore_mark(r, fd, true);
		close(fd);
		return;
	}
	close(fd);
	off = arena_take(r, (size_t)n);
	if (off < 0) {
		r->err = -ENOMEM;
		goto stale;
	}
	memcpy(r->arena + off, path, (size_t)n);
	d->poff = (uint32_t)off;
	d->plen = (uint32_t)n;
	d->root = (uint32_t)root;
	d->state = D_INSIDE;
	return;
stale:
	r->st.stale_dirs++;
}

/* ---- events ---- */

static int fs_index(const struct dcp_record *r, const void *fsid)
{
	for (size_t i = 0; i < r->nfs; i++)
		if (!r->fs[i].err && memcmp(&r->fs[i].fsid, fsid, sizeof(r->fs[i].fsid)) == 0)
			return (int)i;
	return -1;
}

/* One event: its directory and name, the file's handle, who did it. */
static void event(struct dcp_record *r, const struct fanotify_event_metadata *m, const char *raw)
{
	const char *at = raw + m->metadata_len, *end = raw + m->event_len;
	const struct fanotify_event_info_fid *dfid = NULL, *fid = NULL;
	const char *name = NULL;
	unsigned char dh[sizeof(int) + MAX_HANDLE_SZ], fh[sizeof(int) + MAX_HANDLE_SZ];
	size_t dhlen = 0, fhlen = 0;
	int pidfd = FAN_NOPIDFD, fs;
	struct dir *d;
	bool fresh;

	/* The info records, each checked to lie within the event. */
	while (end - at >= (ptrdiff_t)sizeof(struct fanotify_event_info_header)) {
		const struct fanotify_event_info_header *h = (const void *)at;

		if (h->len < sizeof(*h) || h->len > end - at)
			break;
		if (h->info_type == FAN_EVENT_INFO_TYPE_PIDFD &&
		    h->len >= sizeof(struct fanotify_event_info_pidfd)) {
			pidfd = ((const struct fanotify_event_info_pidfd *)h)->pidfd;
		} else if ((h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ||
			    h->info_type == FAN_EVENT_INFO_TYPE_FID) &&
			   h->len >= sizeof(struct fanotify_event_info_fid) + sizeof(struct file_handle)) {
			const struct fanotify_event_info_fid *f = (const void *)h;
			struct file_handle hd;
			size_t room = h->len - sizeof(*f) - sizeof(hd);

			memcpy(&hd, f->handle, sizeof(hd));
			if (hd.handle_bytes <= MAX_HANDLE_SZ && hd.handle_bytes <= room) {
				unsigned char *to = h->info_type == FAN_EVENT_INFO_TYPE_FID ? fh : dh;

				memcpy(to, &hd.handle_type, sizeof(int));
				memcpy(to + sizeof(int), f->handle + sizeof(hd), hd.handle_bytes);
				if (h->info_type == FAN_EVENT_INFO_TYPE_FID) {
					fid = f;
					fhlen = sizeof(int) + hd.handle_bytes;
				} else {
					const char *nm = (const char *)f->handle + sizeof(hd) +
							 hd.handle_bytes;

					if (memchr(nm, '\0', room - hd.handle_bytes)) {
						dfid = f;
						dhlen = sizeof(int) + hd.handle_bytes;
						name = nm;
					}
				}
			}
		}
		at += h->len;
	}
	if (m->pid == r->self) {
		r->st.own++;
		goto out;
	}
	if (!dfid)
		goto out;
	fs = fs_index(r, &dfid->fsid);
	if (fs < 0)
		goto out;
	d = dir_get(r, (unsigned)fs, dh, dhlen, &fresh);
	if (!d) {
		r->err = -ENOMEM;
		goto out;
	}
	if (fresh || !d->state)
		resolve(r, d);
	if (!d->state)
		goto out; /* counted: its directory could not be resolved */
	if (d->state == D_OUTSIDE) {
		r->st.outside++;
		goto out;
	}
	if (r->procs) {
		enum dcp_procs_verdict v = dcp_procs_decide(r->procs, m->pid, pidfd);

		if (v == DCP_PROCS_NO) {
			r->st.other++;
			goto out;
		}
		if (v == DCP_PROCS_UNKNOWN) {
			r->st.unattributed++;
			if (strcmp(name, ".") != 0) {
				struct slot *s = entry_get(r, (uint32_t)(d - r->dirs), name, fh,
							   fid ? fhlen : 0, &fresh);

				if (s)
					s->flags |= E_UNATTR;
			}
			goto out;
		}
	}
	if (strcmp(name, ".") == 0) {
		/* The directory's own event: opened, or read (listed). */
		d->used |= (m->mask & FAN_ACCESS) ? D_LISTED | D_OPENED : D_OPENED;
	} else if (d->state == D_INSIDE) {
		struct slot *s = entry_get(r, (uint32_t)(d - r->dirs), name, fh, fid ? fhlen : 0,
					   &fresh);

		if (!s) {
			r->err = -ENOMEM;
			goto out;
		}
		s->flags |= E_YES;
		if (!(s->flags & E_MARKED) && fid && r->ignore_marks) {
			int ffd = open_handle(r, d->fs, fh, fhlen);

			s->flags |= E_MARKED;
			if (ffd >= 0) {
				ignore_mark(r, ffd, false);
				close(ffd);
			}
		}
	}
out:
	if (pidfd >= 0)
		close(pidfd);
}

/*
 * How much one read may take: with pidfds, the kernel opens one per event
 * read, all at once; each event then needs EVENT_FDS more.  A read bounded
 * by the descriptors free leaves them (dcp_record_fds_needed()).
 */
static size_t read_size(const struct dcp_record *r)
{
	uint32_t free_fds;
	size_t n;

	if (!r->procs)
		return READ_BUF;
	free_fds = dcp_fd_free();
	if (free_fds == UINT32_MAX)
		return READ_BUF;
	n = free_fds > EVENT_FDS ? (free_fds - EVENT_FDS) * EVENT_MIN : 0;
	return n < READ_MIN ? READ_MIN : n > READ_BUF ? READ_BUF : n;
}

unsigned dcp_record_fds_needed(bool pidfds)
{
	return pidfds ? EVENT_FDS + (unsigned)((READ_MIN + EVENT_MIN - 1) / EVENT_MIN) : EVENT_FDS;
}

uint64_t dcp_record_unresolved(const struct dcp_record *r, int *err)
{
	if (err)
		*err = r->unresolved_err;
	return r->unresolved;
}

int dcp_record_read(struct dcp_record *r)
{
	if (r->fan < 0)
		return r->err;
	for (;;) {
		ssize_t n;

		/* Fork events first: a child's fork is queued before its opens. */
		if (r->procs)
			dcp_procs_drain(r->procs);
		n = read(r->fan, r->buf, read_size(r));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (!r->err)
				r->err = -errno;
			return r->err;
		}
		if (n == 0)
			break;
		r->st.reads++;
		/* Events are aligned to 4 bytes only: each header is copied. */
		for (const char *at = r->buf; n >= (ssize_t)FAN_EVENT_METADATA_LEN;) {
			struct fanotify_event_metadata m;

			memcpy(&m, at, sizeof(m));
			if (m.event_len < FAN_EVENT_METADATA_LEN || m.event_len > n)
				break;
			if (m.vers != FANOTIFY_METADATA_VERSION || m.metadata_len < sizeof(m)) {
				r->err = -EPROTO;
				return r->err;
			}
			r->st.events++;
			if (m.mask & FAN_Q_OVERFLOW)
				r->st.overflows++;
			else
				event(r, &m, at);
			at += m.event_len;
			n -= m.event_len;
		}
	}
	/* Every event queued before the last drain is read. */
	if (r->procs)
		dcp_procs_settled(r->procs);
	return r->err;
}

int dcp_record_stop(struct dcp_record *r)
{
	if (r->fan < 0)
		return r->err;
	fanotify_mark(r->fan, FAN_MARK_FLUSH | FAN_MARK_FILESYSTEM, 0, AT_FDCWD, NULL);
	fanotify_mark(r->fan, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
	dcp_record_read(r);
	close(r->fan);
	r->fan = -1;
	for (size_t i = 0; i < r->tcap; i++) {
		const struct slot *s = &r->tab[i];

		if (s->h && (s->flags & (E_UNATTR | E_YES)) == E_UNATTR) {
			uint32_t di;

			memcpy(&di, r->arena + s->off, sizeof(di));
			r->st.unattributed_files += r->dirs[di].state == D_INSIDE;
		}
	}
	return r->err;
}

/* ---- the end: the entries ---- */

struct item {
	char *path;
	size_t len;
	uint32_t root;
	unsigned char kind;
	unsigned flags;
};

struct items {
	struct item *v;
	size_t n, cap;
};

static int items_add(struct items *it, const char *path, size_t len, uint32_t root,
		     unsigned char kind, unsigned flags)
{
	struct item *x;

	if (it->n == it->cap) {
		size_t ncap = it->cap ? it->cap * 2 : 256;
		struct item *nv = realloc(it->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		it->v = nv;
		it->cap = ncap;
	}
	x = &it->v[it->n];
	x->path = strndup(path, len);
	if (!x->path)
		return -ENOMEM;
	x->len = len;
	x->root = root;
	x->kind = kind;
	x->flags = flags;
	it->n++;
	return 0;
}

/* A walk's order: '/' before every other byte, so a directory comes right before what it holds. */
static int pathcmp(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct item *)a)->path;
	const unsigned char *y = (const unsigned char *)((const struct item *)b)->path;

	for (;; x++, y++) {
		if (*x == *y) {
			if (!*x)
				return 0;
			continue;
		}
		if (!*x)
			return -1; /* a prefix first */
		if (!*y)
			return 1;
		if (*x == '/')
			return -1; /* a shorter component first */
		if (*y == '/')
			return 1;
		return *x < *y ? -1 : 1;
	}
}

static unsigned char dt_of(mode_t m)
{
	return S_ISREG(m) ? DT_REG : S_ISDIR(m) ? DT_DIR : S_ISLNK(m) ? DT_LNK : S_ISFIFO(m) ? DT_FIFO :
	       S_ISCHR(m) ? DT_CHR : S_ISBLK(m) ? DT_BLK : S_ISSOCK(m) ? DT_SOCK : DT_UNKNOWN;
}

/*
 * Whether directory D still has the path it was used by: its handle opened
 * again (O_PATH) names the same path.  Kept in D->moved once known.
 */
static bool dir_moved(struct dcp_record *r, struct dir *d)
{
	char path[PATH_MAX];
	ssize_t n;
	struct stat st;
	int fd;

	if (d->moved)
		return d->moved == 2;
	fd = open_handle(r, d->fs, r->arena + d->hoff, d->hlen);
	d->moved = 2;
	if (fd < 0 && errno != ESTALE) {
		/* EMFILE, ENOMEM...: not known, so not called moved. */
		unresolved(r, errno);
		d->moved = 0;
		return false;
	}
	if (fd < 0)
		return true; /* deleted */
	n = fd_path(fd, path, sizeof(path));
	if (n == (ssize_t)d->plen && memcmp(path, r->arena + d->poff, d->plen) == 0 &&
	    fstat(fd, &st) == 0 && st.st_nlink > 0)
		d->moved = 1;
	close(fd);
	return d->moved == 2;
}

/*
 * A name the dentry cache does not have (EAGAIN): gone when that is known
 * without looking the name up: its directory was deleted or moved, or the
 * file it named (by its handle) was deleted or lives at another name now
 * (a cached path to the same inode, its only link).  Else evicted.
 */
static bool gone_elsewhere(struct dcp_record *r, struct dir *d, const char *path,
			   const unsigned char *fid, size_t fidlen)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .resolve = RESOLVE_CACHED };
	char now[PATH_MAX];
	struct stat st;
	struct statx sx2;
	ssize_t n;
	bool gone = false, unsafe = false;
	int fd, fd2;

	if (dir_moved(r, d))
		return true;
	if (fidlen <= sizeof(int))
		return false;
	fd = open_handle(r, d->fs, fid, fidlen);
	if (fd < 0 && errno != ESTALE)
		unresolved(r, errno);
	if (fd < 0)
		return errno == ESTALE; /* the file is deleted */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);
		return true;
	}
	n = fd_path(fd, now, sizeof(now));
	if (n > 0 && st.st_nlink == 1 && strcmp(now, path) != 0) {
		fd2 = (int)syscall(SYS_openat2, AT_FDCWD, now, &how, sizeof(how));
		if (fd2 >= 0) {
			/* Another mount at the name now (FUSE...) is not asked. */
			gone = fd_statx(r, fd2, &sx2, &unsafe) == 0 && !unsafe &&
			       makedev(sx2.stx_dev_major, sx2.stx_dev_minor) == st.st_dev &&
			       sx2.stx_ino == st.st_ino;
			close(fd2);
		}
	}
	close(fd);
	return gone;
}

/*
 * Recorded PATH (of directory D; FID the handle of the file used) from the
 * dentry cache only: 0 there, -ENOENT gone, -EAGAIN evicted; *KIND from
 * the object found, *REPLACED when another file is at the name now.
 */
static int check_cached(struct dcp_record *r, struct dir *d, const char *path,
			const unsigned char *fid, size_t fidlen, unsigned char *kind, bool *replaced)
{
	struct handle now = { .fh.handle_bytes = MAX_HANDLE_SZ };
	struct statx sx;
	bool unsafe = false;
	/* A name used a moment ago: a miss may be the mount table changing
	 * (private/dcp_churn.h); names really evicted pay the pauses at most
	 * once per CHURN_EVERY_NS. */
	int mnt, fd = churn_openat2(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC, RESOLVE_CACHED,
				    &r->paused_ns);

	*replaced = false;
	if (fd < 0) {
		if (fd == -ENOENT || fd == -ENOTDIR)
			return -ENOENT;
		if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM) {
			unresolved(r, -fd); /* kept, as not known to be cached */
			return -EAGAIN;
		}
		return gone_elsewhere(r, d, path, fid, fidlen) ? -ENOENT : -EAGAIN;
	}
	/* statx without syncing: a FUSE mount now at the name is not asked. */
	if (fd_statx(r, fd, &sx, &unsafe) == 0)
		*kind = dt_of(sx.stx_mode);
	if (unsafe) {
		*replaced = true; /* another filesystem's object at the name */
		close(fd);
		return 0;
	}
	if (fidlen > sizeof(int) &&
	    syscall(SYS_name_to_handle_at, fd, "", &now.fh, &mnt, AT_EMPTY_PATH) == 0) {
		int type;

		memcpy(&type, fid, sizeof(type));
		*replaced = type != now.fh.handle_type ||
			    now.fh.handle_bytes != fidlen - sizeof(int) ||
			    memcmp(now.fh.f_handle, fid + sizeof(int), fidlen - sizeof(int)) != 0;
	}
	close(fd);
	return 0;
}

/* Add the directories between ROOT and PATH (not PATH itself). */
static int add_ancestors(const struct dcp_record *r, struct items *it, const char *path, size_t len,
			 uint32_t root)
{
	size_t rl = r->rootlen[root] == 1 ? 0 : r->rootlen[root];

	for (size_t i = len; i-- > rl + 1;) {
		if (path[i] != '/')
			continue;
		int ret = items_add(it, path, i, root, DT_DIR, 0);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* DCP_RECORD_LISTED: the names of directory PATH that are in the dentry cache. */
static int add_listed(struct dcp_record *r, struct items *it, struct dir *d, const char *path,
		      size_t len, uint32_t root)
{
	/*
	 * The directory used, opened by its handle (the watched filesystem's
	 * own object: never a mount now covering its name), at its path still.
	 */
	struct handle hd;
	char now[PATH_MAX];
	int fd = to_handle(r->arena + d->hoff, d->hlen, &hd) ?
			 (int)syscall(SYS_open_by_handle_at, r->fs[d->fs].mntfd, &hd.fh,
				      O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int ret = 0;
	DIR *dir;
	struct dirent *de;
	char full[PATH_MAX];

	if (fd < 0 && errno != ESTALE)
		unresolved(r, errno);
	if (fd >= 0 && (fd_path(fd, now, sizeof(now)) != (ssize_t)len || memcmp(now, path, len))) {
		close(fd);
		return 0; /* moved since */
	}
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (ret == 0 && (de = readdir(dir))) {
		/* Cached names only, and none that is a mount point (FUSE...). */
		struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
					.resolve = RESOLVE_CACHED | RESOLVE_BENEATH |
						   RESOLVE_NO_XDEV };
		int nfd;
		struct statx sx;
		bool unsafe = false;
		int n;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		nfd = (int)syscall(SYS_openat2, dirfd(dir), de->d_name, &how, sizeof(how));
		if (nfd < 0)
			continue; /* not cached: nobody looked it up */
		n = snprintf(full, sizeof(full), "%.*s/%s", (int)len == 1 ? 0 : (int)len, path,
			     de->d_name);
		if (n > 0 && (size_t)n < sizeof(full)) {
			unsigned char kind = fd_statx(r, nfd, &sx, &unsafe) == 0 ? dt_of(sx.stx_mode) :
										   DT_UNKNOWN;

			ret = items_add(it, full, (size_t)n, root, kind, DCP_RECORD_ITEM_NAME);
		}
		close(nfd);
	}
	closedir(dir);
	return ret;
}

int dcp_record_items(struct dcp_record *r, int (*each)(const struct dcp_record_item *it, void *arg),
		     void *arg)
{
	struct items it = { 0 };
	char path[PATH_MAX];
	size_t kept;
	int ret = 0;

	if (r->fan >= 0)
		return -EBUSY;
	r->st.files = r->st.dirs = r->st.gone = r->st.replaced = r->st.evicted = 0;
	r->st.listed_names = 0;
	for (size_t i = 0; ret == 0 && i < r->nroots; i++)
		ret = items_add(&it, r->roots[i], r->rootlen[i], (uint32_t)i, DT_DIR, 0);
	/* The directories they opened or listed. */
	for (size_t i = 0; ret == 0 && i < r->ndirs; i++) {
		struct dir *d = &r->dirs[i];
		unsigned char kind = DT_DIR;
		bool replaced;
		int c;

		if (d->state != D_INSIDE || !d->used)
			continue;
		memcpy(path, r->arena + d->poff, d->plen);
		path[d->plen] = '\0';
		c = check_cached(r, d, path, NULL, 0, &kind, &replaced);
		if (c == -ENOENT) {
			r->st.gone++;
			continue;
		}
		r->st.dirs++;
		r->st.evicted += c == -EAGAIN;
		ret = items_add(&it, path, d->plen, d->root, DT_DIR,
				DCP_RECORD_ITEM_USED |
				(d->used & D_LISTED ? DCP_RECORD_ITEM_LISTED : 0) |
				(c == -EAGAIN ? DCP_RECORD_ITEM_EVICTED : 0));
		if (ret == 0 && c == 0 && (r->flags & DCP_RECORD_LISTED) && (d->used & D_LISTED))
			ret = add_listed(r, &it, d, path, d->plen, d->root);
	}
	/* The files (and whatever else they opened: FIFOs, devices). */
	for (size_t i = 0; ret == 0 && i < r->tcap; i++) {
		const struct slot *s = &r->tab[i];
		struct dir *d;
		unsigned char kind = DT_UNKNOWN;
		uint32_t di;
		size_t nlen, plen;
		bool replaced;
		int c;

		if (!s->h || !(s->flags & E_YES))
			continue;
		memcpy(&di, r->arena + s->off, sizeof(di));
		d = &r->dirs[di];
		if (d->state != D_INSIDE)
			continue;
		nlen = s->klen - sizeof(di);
		plen = d->plen == 1 ? 0 : d->plen; /* the directory "/" */
		if (plen + 1 + nlen >= sizeof(path)) {
			r->st.gone++; /* no name that long can be looked up */
			continue;
		}
		memcpy(path, r->arena + d->poff, plen);
		path[plen] = '/';
		memcpy(path + plen + 1, r->arena + s->off + sizeof(di), nlen);
		path[plen + 1 + nlen] = '\0';
		c = check_cached(r, d, path, r->arena + s->off + s->klen, s->fidlen, &kind, &replaced);
		if (c == -ENOENT) {
			r->st.gone++;
			continue;
		}
		r->st.files++;
		r->st.evicted += c == -EAGAIN;
		r->st.replaced += replaced;
		ret = items_add(&it, path, plen + 1 + nlen, d->root, kind,
				DCP_RECORD_ITEM_USED | (c == -EAGAIN ? DCP_RECORD_ITEM_EVICTED : 0));
	}
	/* The directories on the way to each. */
	kept = it.n;
	for (size_t i = 0; ret == 0 && i < kept; i++)
		ret = add_ancestors(r, &it, it.v[i].path, it.v[i].len, it.v[i].root);
	if (ret == 0 && it.n)
		qsort(it.v, it.n, sizeof(*it.v), pathcmp);
	for (size_t i = 0; ret == 0 && i < it.n; i++) {
		struct item *x = &it.v[i];
		struct dcp_record_item out;
		size_t rl;
		int depth = 0;

		/* One item per path: the flags of every copy. */
		while (i + 1 < it.n && strcmp(x->path, it.v[i + 1].path) == 0) {
			it.v[i + 1].flags |= x->flags;
			if (x->kind != DT_DIR || it.v[i + 1].kind == DT_UNKNOWN)
				it.v[i + 1].kind = x->kind;
			x = &it.v[++i];
		}
		/* A file they opened keeps its data, whatever listed its name too. */
		if (x->flags & DCP_RECORD_ITEM_USED)
			x->flags &= ~(unsigned)DCP_RECORD_ITEM_NAME;
		r->st.listed_names += !!(x->flags & DCP_RECORD_ITEM_NAME);
		rl = r->rootlen[x->root] == 1 ? 0 : r->rootlen[x->root];
		for (size_t k = rl; x->len > r->rootlen[x->root] && k < x->len; k++)
			depth += x->path[k] == '/';
		out = (struct dcp_record_item){ .path = x->path, .len = x->len, .root = x->root,
						.depth = depth, .kind = x->kind, .flags = x->flags };
		ret = each(&out, arg);
	}
	for (size_t i = 0; i < it.n; i++)
		free(it.v[i].path);
	free(it.v);
	return ret;
}

/* ---- setting up ---- */

/* Whether PATH lies strictly below ROOT (both absolute, by components). */
static bool below(const char *path, const char *root, size_t rl)
{
	if (rl == 1)
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, root, rl) == 0 && path[rl] == '/' && path[rl + 1] != '\0';
}

/*
 * Mark the filesystem of directory PATH (open O_PATH as FD), unless one is
 * marked already.  Returns 0, or -errno when the mark failed.
 */
static int mark_fs(struct dcp_record *r, int fd, const char *path, const char *fstype)
{
	struct statfs sfs;
	char link[64];
	struct fsrec *f;
	int ret;

	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	for (size_t i = 0; i < r->nfs; i++)
		if (!r->fs[i].err && memcmp(&r->fs[i].fsid, &sfs.f_fsid, sizeof(sfs.f_fsid)) == 0)
			return 0;
	if (r->nfs == MAX_FS)
		return -EMFILE;
	f = &r->fs[r->nfs];
	*f = (struct fsrec){ .fsid = sfs.f_fsid, .mntfd = -1 };
	f->path = strdup(path);
	f->fstype = strdup(fstype ? fstype : "unknown");
	r->nfs++;
	if (!f->path || !f->fstype)
		return -ENOMEM;
	/* Before any mark exists: open_by_handle_at refuses an O_PATH descriptor. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	f->mntfd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->mntfd < 0) {
		f->err = -errno;
		return f->err;
	}
	ret = fanotify_mark(r->fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			    FAN_OPEN | FAN_ACCESS | FAN_ONDIR, AT_FDCWD, link);
	if (ret < 0) {
		f->err = -errno;
		close(f->mntfd);
		f->mntfd = -1;
		return f->err;
	}
	return 0;
}

int dcp_record_new(const struct dcp_record_opts *o, struct dcp_record **out)
{
	struct dcp_record *r = calloc(1, sizeof(*r));
	char path[PATH_MAX];
	int *fds = NULL;
	int ret = 0;

	if (!r)
		return -ENOMEM;
	r->fan = -1;
	r->flags = o->flags;
	r->procs = o->procs;
	r->self = getpid();
	r->ignore_marks = !(o->flags & DCP_RECORD_NO_IGNORE_MARKS);
	r->buf = malloc(READ_BUF);
	r->roots = calloc(o->nroots ? o->nroots : 1, sizeof(*r->roots));
	r->rootlen = calloc(o->nroots ? o->nroots : 1, sizeof(*r->rootlen));
	fds = calloc(o->nroots ? o->nroots : 1, sizeof(*fds));
	if (!r->buf || !r->roots || !r->rootlen || !fds) {
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < o->nroots; i++)
		fds[i] = -1;
	/* No table given: read one, so the FUSE, NFS... rule below holds the
	 * same (a NULL table would judge no mount unsafe). */
	r->mounts = o->mounts;
	if (!r->mounts) {
		ret = dcp_mounts_load(NULL, &r->own_mounts);
		if (ret < 0)
			goto fail;
		r->mounts = r->own_mounts;
	}
	/*
	 * Each root: a directory, by its real path, reached without a lookup
	 * on a FUSE, NFS... mount and not on one itself: nothing there is
	 * asked of a daemon or a server, which may never answer (-EREMOTE).
	 */
	for (size_t i = 0; i < o->nroots; i++) {
		struct statx sx;
		mode_t mode = 0;
		bool unsafe = false;
		ssize_t n;

		if (o->failed_root)
			*o->failed_root = i;
		fds[i] = dcp_walk_lookup(AT_FDCWD, o->roots[i], true, judge_mount,
					 (void *)r->mounts, &mode);
		if (fds[i] < 0) {
			ret = fds[i];
			fds[i] = -1;
			goto fail;
		}
		if (fd_statx(r, fds[i], &sx, &unsafe) == 0 && unsafe) {
			ret = -EREMOTE;
			goto fail;
		}
		if (!S_ISDIR(mode)) {
			ret = -ENOTDIR;
			goto fail;
		}
		n = fd_path(fds[i], path, sizeof(path));
		if (n < 0) {
			ret = (int)n;
			goto fail;
		}
		r->roots[i] = strdup(path);
		if (!r->roots[i]) {
			ret = -ENOMEM;
			goto fail;
		}
		r->rootlen[i] = (size_t)n;
		r->nroots++;
	}
	r->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME |
				       FAN_REPORT_FID | (o->procs ? FAN_REPORT_PIDFD : 0),
			       O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (r->fan < 0) {
		ret = -errno;
		if (o->failed_root)
			*o->failed_root = 0;
		goto fail;
	}
	for (size_t i = 0; i < r->nroots; i++) {
		struct dcp_mount mt;
		const char *fstype = dcp_mounts_by_path(r->mounts, r->roots[i], &mt) == 0 ?
				     mt.fstype : NULL;

		if (o->failed_root)
			*o->failed_root = i;
		ret = mark_fs(r, fds[i], r->roots[i], fstype);
		if (ret < 0)
			goto fail;
	}
	/* The mounts below a root: theirs are other filesystems. */
	for (size_t m = 0;; m++) {
		struct dcp_mount mt;
		bool in = false;
		int fd;

		if (dcp_mounts_get(r->mounts, m, &mt) < 0)
			break;
		for (size_t i = 0; i < r->nroots && !in; i++)
			in = below(mt.target, r->roots[i], r->rootlen[i]);
		if (!in || dcp_fs_is_pseudo(mt.fstype) || !dcp_pages_fstype_opens_safely(mt.fstype))
			continue;
		{
			mode_t mode = 0;

			/* Not through a FUSE mount between the root and it. */
			fd = dcp_walk_lookup(AT_FDCWD, mt.target, false, judge_mount,
					     (void *)r->mounts, &mode);
			if (fd < 0)
				continue; /* behind a FUSE mount, or one hidden since */
			if (S_ISDIR(mode)) /* not a mount on a file */
				mark_fs(r, fd, mt.target, mt.fstype); /* a failure is said in its record */
			close(fd);
		}
	}

	for (size_t i = 0; i < o->nroots; i++)
		close(fds[i]);
	free(fds);
	*out = r;
	return 0;
fail:
	for (size_t i = 0; fds && i < o->nroots; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	dcp_record_free(r);
	return ret;
}

int dcp_record_fd(const struct dcp_record *r)
{
	return r->fan;
}

void dcp_record_stats(const struct dcp_record *r, struct dcp_record_stats *st)
{
	*st = r->st;
}

int dcp_record_fs(const struct dcp_record *r, size_t i, struct dcp_record_fs *out)
{
	if (i >= r->nfs)
		return -ENOENT;
	*out = (struct dcp_record_fs){ .path = r->fs[i].path, .fstype = r->fs[i].fstype,
				       .err = r->fs[i].err };
	return 0;
}

const char *dcp_record_root(const struct dcp_record *r, size_t i)
{
	return i < r->nroots ? r->roots[i] : NULL;
}

void dcp_record_free(struct dcp_record *r)
{
	if (!r)
		return;
	if (r->fan >= 0)
		close(r->fan);
	for (size_t i = 0; i < r->nfs; i++) {
		if (r->fs[i].mntfd >= 0)
			close(r->fs[i].mntfd);
		free(r->fs[i].path);
		free(r->fs[i].fstype);
	}
	for (size_t i = 0; i < r->nroots; i++)
		free(r->roots[i]);
	free(r->roots);
	free(r->rootlen);
	free(r->arena);
	free(r->dirs);
	free(r->dhash);
	free(r->tab);
	free(r->buf);
	dcp_mounts_free(r->own_mounts);
	free(r);
}
