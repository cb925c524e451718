// SPDX-License-Identifier: MIT
/* mounts.c - mount table snapshot (libmount) and RESOLVE_CACHED fs classes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libmount.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcp_mounts.h"
#include "dcp_probe.h"
#include "private/dcp_dl.h"
#include "private/dcp_mounts_shared.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

struct mount_rec {
	int id;
	dev_t dev;
	char *target;
	char *fstype;
	char *source;
	char *root; /* the directory of the filesystem mounted (mountinfo's 4th field) */
};

struct dcp_mounts {
	struct mount_rec *v; /* in mountinfo order: later entries are on top */
	size_t n;
	dev_t *shared;	     /* sorted: superblocks a file may be reached on by two mounts */
	size_t nshared;
};

void dcp_mounts_free(struct dcp_mounts *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].target);
		free(m->v[i].fstype);
		free(m->v[i].source);
		free(m->v[i].root);
	}
	free(m->v);
	free(m->shared);
	free(m);
}

/*
 * libmount is loaded on the first mount table a run needs (dlopen, as
 * systemd does with its optional libraries), not linked: linking it loads
 * libblkid, libselinux and pcre2 and reads /proc/filesystems at every
 * start, which doubled the cost of "cachedopen -q PATH".  A run that
 * needs no mount table loads and reads none.
 */
#define LM_FUNCS(X)                                                        \
	X(new_table_from_file) X(new_iter) X(table_next_fs) X(fs_get_id)  \
	X(fs_get_devno) X(fs_get_target) X(fs_get_fstype) X(fs_get_source) \
	X(fs_get_root) X(free_iter) X(unref_table)

static struct {
#define LM_FIELD(f) __typeof__(mnt_##f) *f;
	LM_FUNCS(LM_FIELD)
#undef LM_FIELD
} lm;
static int lm_status = -ELIBACC; /* 0 once every function is there */
static pthread_once_t lm_once = PTHREAD_ONCE_INIT;

static void lm_open(void)
{
	void *h = dlopen("libmount.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		lm_status = dcp_dlopen_errno(); /* ENOMEM under ulimit -v, not ELIBACC */
		return;
	}
#define LM_SYM(f)                                     \
	if (!(lm.f = (__typeof__(lm.f))dlsym(h, "mnt_" #f))) { \
		dlclose(h);                           \
		return;                               \
	}
	LM_FUNCS(LM_SYM)
#undef LM_SYM
	lm_status = 0; /* kept open for the rest of the process */
}

static char *dup_or(const char *s, const char *dflt)
{
	return strdup(s ? s : dflt);
}

/* Is directory A (a mount's root, "/x/y") B or above it? */
static bool root_above(const char *a, const char *b)
{
	size_t n = strlen(a);

	while (n > 1 && a[n - 1] == '/')
		n--;
	if (n == 1 && a[0] == '/')
		return true;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static int cmp_rec_dev(const void *x, const void *y)
{
	const struct mount_rec *a = *(const struct mount_rec *const *)x;
	const struct mount_rec *b = *(const struct mount_rec *const *)y;

	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

/*
 * The superblocks mounted more than once where one mount's root is the
 * other's or above it (a bind mount of a directory, the same filesystem
 * mounted twice): a file with one name below both is reached by two paths.
 * Mounts of one filesystem's directories apart from each other (a bind
 * mount of a file, /etc/hosts in a container) reach no file twice.
 */
static int find_shared(struct dcp_mounts *m)
{
	const struct mount_rec **by = malloc((m->n ? m->n : 1) * sizeof(*by));

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		by[i] = &m->v[i];
	qsort(by, m->n, sizeof(*by), cmp_rec_dev);
	for (size_t i = 0, j; i < m->n; i = j) {
		bool shared = false;

		for (j = i + 1; j < m->n && by[j]->dev == by[i]->dev; j++)
			;
		for (size_t a = i; a < j && !shared; a++)
			for (size_t b = a + 1; b < j && !shared; b++)
				shared = root_above(by[a]->root, by[b]->root) ||
					 root_above(by[b]->root, by[a]->root);
		if (shared && by[i]->dev) {
			dev_t *v = realloc(m->shared, (m->nshared + 1) * sizeof(*v));

			if (!v) {
				free(by);
				return -ENOMEM;
			}
			m->shared = v;
			m->shared[m->nshared++] = by[i]->dev; /* in order: by[] is sorted */
		}
	}
	free(by);
	return 0;
}

bool mounts_dev_shared(const struct dcp_mounts *m, dev_t dev)
{
	size_t lo = 0, hi = m ? m->nshared : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->shared[mid] == dev)
			return true;
		if (m->shared[mid] < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

int dcp_mounts_load(const char *file, struct dcp_mounts **out)
{
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	struct libmnt_fs *fs;
	struct dcp_mounts *m;
	size_t cap = 0;
	int ret = 0;

	pthread_once(&lm_once, lm_open);
	if (lm_status < 0)
		return lm_status;
	errno = 0;
	tb = lm.new_table_from_file(file ? file : "/proc/self/mountinfo");
	if (!tb)
		return errno ? -errno : -EINVAL;
	it = lm.new_iter(MNT_ITER_FORWARD);
	m = calloc(1, sizeof(*m));
	if (!it || !m) {
		ret = -ENOMEM;
		goto out;
	}
	while (lm.table_next_fs(tb, it, &fs) == 0) {
		struct mount_rec *r;

		if (m->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct mount_rec *v = realloc(m->v, ncap * sizeof(*v));

			if (!v) {
				ret = -ENOMEM;
				goto out;
			}
			m->v = v;
			cap = ncap;
		}
		r = &m->v[m->n];
		r->id = lm.fs_get_id(fs);
		r->dev = lm.fs_get_devno(fs);
		r->target = dup_or(lm.fs_get_target(fs), "?");
		r->fstype = dup_or(lm.fs_get_fstype(fs), "unknown");
		r->source = dup_or(lm.fs_get_source(fs), "none");
		r->root = dup_or(lm.fs_get_root(fs), "/");
		m->n++;
		if (!r->target || !r->fstype || !r->source || !r->root) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = find_shared(m);
out:
	lm.free_iter(it);
	lm.unref_table(tb);
	if (ret < 0) {
		dcp_mounts_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

static void fill(const struct mount_rec *r, struct dcp_mount *out)
{
	out->id = r->id;
	out->dev = r->dev;
	out->target = r->target;
	out->fstype = r->fstype;
	out->source = r->source;
}

int dcp_mounts_by_dev(const struct dcp_mounts *m, dev_t dev, struct dcp_mount *out)
{
	for (size_t i = m->n; i-- > 0;) {
		if (m->v[i].dev == dev) {
			fill(&m->v[i], out);
			return 0;
		}
	}
	return -ENOENT;
}

int dcp_mounts_by_id(const struct dcp_mounts *m, uint64_t id, struct dcp_mount *out)
{
	for (size_t i = 0; i < m->n; i++) {
		if ((uint64_t)m->v[i].id == id) {
			fill(&m->v[i], out);
			return 0;
		}
	}
	return -ENOENT;
}

int dcp_mounts_get(const struct dcp_mounts *m, size_t i, struct dcp_mount *out)
{
	if (i >= m->n)
		return -ENOENT;
	fill(&m->v[i], out);
	return 0;
}

uint64_t dcp_mnt_id_at(int dirfd, const char *path, bool follow)
{
	struct statx stx;
	uint64_t id = 0;
	int fd = dirfd;

	/*
	 * The path is looked up with RESOLVE_CACHED, the descriptor statx'ed
	 * without syncing: a statx of the path itself would revalidate an
	 * entry that timed out since its probe, and wait on a stopped FUSE
	 * daemon.  What is not cached now has no mount ID here.
	 */
	if (*path) {
		fd = dcp_openat2(dirfd, path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW), 0,
				 RESOLVE_CACHED);
		if (fd < 0)
			return 0;
	}
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID))
		id = stx.stx_mnt_id;
	if (fd != dirfd)
		close(fd);
	return id;
}

uint64_t dcp_mnt_id(int fd)
{
	return dcp_mnt_id_at(fd, "", false);
}

/* Fold "//", "/./" and "/../" of an absolute path in place (lexically). */
static void fold_path(char *p)
{
	char *w = p, *r = p;

	while (*r) {
		while (*r == '/')
			r++;
		if (!*r)
			break;
		char *end = strchrnul(r, '/');
		size_t n = (size_t)(end - r);

		if (n == 1 && r[0] == '.') {
			/* skip */
		} else if (n == 2 && r[0] == '.' && r[1] == '.') {
			while (w > p && *--w != '/')
				;
		} else {
			*w++ = '/';
			memmove(w, r, n);
			w += n;
		}
		r = end;
	}
	if (w == p)
		*w++ = '/';
	*w = '\0';
}

/* Is mount point T (folded, no trailing slash but "/") a prefix of path P? */
static size_t target_match(const char *t, const char *p)
{
	size_t n = strlen(t);

	if (n == 1 && t[0] == '/')
		return 1;
	if (strncmp(t, p, n) != 0 || (p[n] != '/' && p[n] != '\0'))
		return 0;
	return n;
}

int dcp_mounts_by_path(const struct dcp_mounts *m, const char *path, struct dcp_mount *out)
{
	const struct mount_rec *best = NULL;
	size_t bestlen = 0;
	char *abs;

	if (path[0] == '/') {
		abs = strdup(path);
	} else {
		char *cwd = getcwd(NULL, 0);

		if (!cwd)
			return -errno;
		if (asprintf(&abs, "%s/%s", cwd, path) < 0)
			abs = NULL;
		free(cwd);
	}
	if (!abs)
		return -ENOMEM;
	fold_path(abs);
	for (size_t i = 0; i < m->n; i++) {
		size_t len = target_match(m->v[i].target, abs);

		/* ">=": of mounts stacked on one point, the last is on top. */
		if (len && len >= bestlen) {
			best = &m->v[i];
			bestlen = len;
		}
	}
	free(abs);
	if (!best)
		return -ENOENT;
	fill(best, out);
	return 0;
}

int dcp_mounts_never_on_path(const struct dcp_mounts *m, const char *path, struct dcp_mount *out)
{
	size_t len = strlen(path), i = 0;
	char *dir = malloc(len + 2);
	int found = 0;

	if (!dir)
		return -ENOMEM;
	/* The lookup starts in "/" or in the current directory... */
	strcpy(dir, path[0] == '/' ? "/" : ".");
	for (;;) {
		struct dcp_mount mt;
		int ret = dcp_mounts_by_path(m, dir, &mt);
		size_t j;

		if (ret == -ENOMEM) {
			found = ret;
			break;
		}
		if (ret == 0 && dcp_fs_cache_class(mt.fstype, NULL) == DCP_FS_NEVER) {
			if (out)
				*out = mt;
			found = 1;
			break;
		}
		/* ...and goes on in each directory named before the last name. */
		while (i < len && path[i] == '/')
			i++;
		while (i < len && path[i] != '/')
			i++;
		for (j = i; j < len && path[j] == '/'; j++)
			;
		if (j >= len)
			break;
		memcpy(dir, path, i);
		dir[i] = '\0';
	}
	free(dir);
	return found;
}

/*
 * Why a type is flagged.  The kernel drops out of RCU-walk mode (which
 * RESOLVE_CACHED requires) whenever a dentry's d_revalidate cannot answer
 * without blocking: these filesystems' revalidate methods refuse RCU mode
 * always, or once a timeout or lease has run out.  DCP_FS_NEVER: the
 * revalidate method returns -ECHILD whenever flags & LOOKUP_RCU, positive
 * dentries included, in 5.10, 6.1, 6.12 and current kernels (9p's
 * v9fs_lookup_revalidate for its caching modes; without a cache 9p keeps no
 * dentry past its last reference at all: v9fs_dentry_delete; cifs_d_revalidate;
 * vfat_revalidate; exfat_d_revalidate; kernfs_dop_revalidate).  FUSE and NFS
 * revalidate in RCU mode while their entry/attribute timeout holds
 * (measured on 6.18 with bindfs: cached after a stat, a miss 1.2 s later
 * with the default 1 s timeout, always a miss with entry_timeout=0).
 */
static const struct {
	const char *glob;
	enum dcp_fs_cache cls;
	const char *why;
} fs_classes[] = {
	{ "vfat", DCP_FS_NEVER, "vfat revalidates every lookup outside RCU mode" },
	{ "msdos", DCP_FS_NEVER, "msdos revalidates every lookup outside RCU mode" },
	{ "exfat", DCP_FS_NEVER, "exfat revalidates every lookup outside RCU mode" },
	{ "cifs", DCP_FS_NEVER, "CIFS/SMB revalidates every lookup outside RCU mode" },
	{ "smb3", DCP_FS_NEVER, "CIFS/SMB revalidates every lookup outside RCU mode" },
	{ "9p", DCP_FS_NEVER, "9p revalidates every lookup outside RCU mode" },
	{ "sysfs", DCP_FS_NEVER, "kernfs (sysfs) revalidates every lookup outside RCU mode" },
	{ "cgroup", DCP_FS_NEVER, "kernfs (cgroup) revalidates every lookup outside RCU mode" },
	{ "cgroup2", DCP_FS_NEVER, "kernfs (cgroup2) revalidates every lookup outside RCU mode" },
	{ "tracefs", DCP_FS_NEVER, "tracefs revalidates its lookups outside RCU mode" },
	{ "autofs", DCP_FS_NEVER, "automount points need the automounter, outside RCU mode" },
	{ "proc", DCP_FS_PARTIAL,
	  "/proc/sys, /proc files and magic links (/proc/*/fd/*) always miss" },
	{ "nfs", DCP_FS_REVALIDATE, "NFS revalidates lookups once the attribute cache times out" },
	{ "nfs4", DCP_FS_REVALIDATE, "NFS revalidates lookups once the attribute cache times out" },
	{ "fuse", DCP_FS_REVALIDATE, "FUSE revalidates lookups once the entry timeout expires" },
	{ "fuseblk", DCP_FS_REVALIDATE, "FUSE revalidates lookups once the entry timeout expires" },
	{ "fuse.*", DCP_FS_REVALIDATE, "FUSE revalidates lookups once the entry timeout expires" },
	{ "ceph", DCP_FS_REVALIDATE, "CephFS revalidates lookups once their lease expires" },
	{ "tmpfs", DCP_FS_NO_NEGATIVE,
	  "tmpfs keeps no negative dentries: an absent name always misses, without any I/O" },
	{ "ramfs", DCP_FS_NO_NEGATIVE,
	  "ramfs keeps no negative dentries: an absent name always misses, without any I/O" },
	{ "devtmpfs", DCP_FS_NO_NEGATIVE,
	  "devtmpfs keeps no negative dentries: an absent name always misses, without any I/O" },
};

bool dcp_fs_is_pseudo(const char *fstype)
{
	static const char list[] = "," DCP_FS_PSEUDO_TYPES ",";
	size_t n = fstype ? strlen(fstype) : 0;

	for (const char *p = list; n && (p = strstr(p, fstype)); p++)
		if (p > list && p[-1] == ',' && p[n] == ',')
			return true;
	return false;
}

enum dcp_fs_cache dcp_fs_cache_class(const char *fstype, const char **why)
{
	for (size_t i = 0; fstype && i < sizeof(fs_classes) / sizeof(fs_classes[0]); i++) {
		if (fnmatch(fs_classes[i].glob, fstype, 0) == 0) {
			if (why)
				*why = fs_classes[i].why;
			return fs_classes[i].cls;
		}
	}
	if (why)
		*why = NULL;
	return DCP_FS_CACHEABLE;
}
