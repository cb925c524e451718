// SPDX-License-Identifier: MIT
/*
 * probe_run.c - one dcache-probe run: every entry's journey from the
 * walker's probe to its output line and its tallies.
 *
 * An entry is probed (by the walker, before anything touches it), then
 * visit() explains a miss (--explain), measures a cached regular file's
 * data (--pages, through the descriptor it checked), counts it for its
 * root, its directory and its mount, and record() writes its line.  When a
 * directory is done, dir_done() adds its counts to its parent's and keeps
 * its --per-dir row.  At the end, the tables, the summary and the metrics
 * are written and the exit status decided.
 *
 * Worker threads fill their own output buffers and write them as whole
 * lines under one lock; per-directory counts ride on the walker's
 * directory data and are added up post-order.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "dcp_cmd.h"
#include "private/dcp_thread.h"
#include "dcp_tables.h"

static const struct dcp_opts *o;	    /* the shared options */
static struct dcp_probe_run_config env; /* dcache-probe's own */
static bool filtered;			    /* --type, --name or --mindepth */
static bool rooted;	/* lines and series per root: -r, or a manifest's roots */
static _Thread_local const struct dcp_manifest_entry *cur_entry; /* --manifest: being visited */
static bool cur_name_only; /* a given entry recorded by its name alone: no data */
static unsigned walk_flags;		    /* DCP_WALK_* from -L, -H, -x */

/* ---- run state ---- */

#define FLUSH_AT (64 * 1024)

struct rootcounts;

/* What one walker thread owns: no locking needed while it fills them. */
struct worker {
	struct dcp_buf out;
	struct dcp_rows sorted;	    /* --sort: its lines, held until the end */
	struct dcp_pr_counts c;
	unsigned long long never;   /* of c's misses, never cached (dcp_pr_never_cached) */
	uint64_t never_mnt;	    /* the last directory's mount looked at, and */
	int never_fs;		    /* whether it is never cached: 1 yes, 2 no, 0 not known */
	struct dcp_mount_table mount_rows; /* --per-mount, by mount ID (with --pages data) */
	struct dcp_pages_counts pc; /* --pages */
	uint64_t safe_mnt;	    /* --pages: the last mount looked at, and */
	int safe;		    /* whether files on it may be opened: 1 yes, 2 no, 0 not known */
	int pret;		    /* --pages: the entry being recorded */
	struct dcp_pages pg;
	struct dcp_pages_ranges ranges; /* --ranges: the entry's resident ranges */
	struct dcp_fsid fs_last;    /* --ranges: the last filesystem UUID written, */
	long fs_last_id;	    /* and its "fs" record's number (-1: none yet) */
	_Atomic unsigned long long seen; /* for the progress line */
	/* --manifest on threads (manifest_piece()): lines and messages held
	 * until the manifest's order writes them, and W's sums for the root
	 * ACC_ROOT, added to the root's when W counts another (acc_flush()). */
	bool hold;
	struct dcp_buf err;
	struct rootcounts *acc;
	size_t acc_root;
	bool acc_on;
	char pad[64];
};

static struct dcp_progress *progress;

/* Per-directory data (dcp_dir.data): own entries and finished subtrees. */
struct dirstat {
	struct dcp_pr_counts own; /* written by the thread visiting the dir */
	struct dcp_pr_counts sub; /* written by dir_done, serialised */
	unsigned long long own_never, sub_never; /* of their misses, never cached */
	size_t root;
	bool has_root;		  /* root is set: an entry was visited */
	struct dcp_pages_counts pown, psub; /* --pages, as own and sub */
	struct dcp_pages_links links;	    /* --pages: inodes with several names below */
};

static struct {
	struct worker *w;
	unsigned nw;
	pthread_mutex_t out_lock;
	_Atomic bool stop;	   /* a write failed: abort the walk */
	_Atomic int write_err;	   /* first -errno of writing stdout */
	_Atomic bool short_said;   /* a probe failed for want of descriptors or memory: said */
	enum dcp_pr_format fmt;
	bool records;		   /* per-path records are printed */
	struct dcp_buf dirbuf;	   /* --per-dir rows, */
	struct dcp_dir_rows dirrows; /* held until the end, */
	pthread_mutex_t rows_lock;   /* added by dir_done and by visitors (unvisited) */
	struct dcp_pr_prom_series *dirs; /* --per-dir rows for --prometheus */
	unsigned long long *dirs_never;	 /* and their never-cached misses */
	size_t ndirs;
	struct dcp_root_table roots; /* written by the main thread only */
	size_t roots_added;	   /* roots handed to the walker */
	struct dcp_mounts *mounts;
	bool mounts_tried;	   /* loaded for the first miss (a run without -r) */
	pthread_mutex_t mounts_lock;
	struct dcp_pages_run *pages; /* --pages: the run's measuring context */
	struct dcp_explain *explain; /* --explain */
	pthread_mutex_t fs_lock;   /* --ranges: the filesystems given an "fs" record */
	struct dcp_fsid *fs;
	size_t nfs;
	uint64_t *nouuid;	   /* --ranges: the devices said to have no UUID */
	size_t nnouuid;
	unsigned long long input_errors;
	/* progress */
	_Atomic bool want_path;
	pthread_mutex_t path_lock;
	char cur[4096];
	uint64_t t0, last_t;
	unsigned long long last_seen;
} run = {
	.out_lock = PTHREAD_MUTEX_INITIALIZER,
	.path_lock = PTHREAD_MUTEX_INITIALIZER,
	.rows_lock = PTHREAD_MUTEX_INITIALIZER,
	.fs_lock = PTHREAD_MUTEX_INITIALIZER,
	.mounts_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* What dcache-probe counts for a root's tree (dcp_root_tally.data). */
struct rootcounts {
	struct dcp_pr_counts c;
	unsigned long long never; /* of c's misses, never cached */
	struct dcp_pages_counts pc; /* --pages */
};
#define RC(rr) ((struct rootcounts *)(rr)->data)

static struct dcp_root_tally *root_rec(size_t i)
{
	return dcp_root_table_get(&run.roots, i);
}

static pthread_mutex_t acc_lock = PTHREAD_MUTEX_INITIALIZER;

/* Add W's sums for its root to the root's counts (manifest_piece()). */
static void acc_flush(struct worker *w)
{
	struct dcp_root_tally *rr = w->acc_on ? root_rec(w->acc_root) : NULL;

	if (rr) {
		pthread_mutex_lock(&acc_lock);
		dcp_pr_counts_add(&RC(rr)->c, &w->acc->c);
		RC(rr)->never += w->acc->never;
		dcp_pages_counts_add(&RC(rr)->pc, &w->acc->pc);
		pthread_mutex_unlock(&acc_lock);
	}
	if (w->acc)
		memset(w->acc, 0, sizeof(*w->acc));
	w->acc_on = false;
}

/*
 * Where W counts a path given of root ROOT: the root's counts, or when
 * threads check a manifest (W->hold), W's own sums for that root, added
 * to the root's when W counts another root or ends a piece of work.
 */
static struct rootcounts *root_counts(struct worker *w, size_t root)
{
	struct dcp_root_tally *rr = root_rec(root);

	if (!rr || !w->hold)
		return rr ? RC(rr) : NULL;
	if (w->acc_on && w->acc_root != root)
		acc_flush(w);
	w->acc_on = true;
	w->acc_root = root;
	return w->acc;
}

static void set_write_error(int err)
{
	int none = 0;

	atomic_compare_exchange_strong(&run.write_err, &none, err);
	atomic_store(&run.stop, true);
}

/* Write B to stdout under the output lock; a failure stops the run. */
static void flush_buf(struct dcp_buf *b)
{
	int ret;

	if (!b->len)
		return;
	if (atomic_load_explicit(&run.stop, memory_order_relaxed)) {
		dcp_buf_reset(b);
		return;
	}
	pthread_mutex_lock(&run.out_lock);
	ret = dcp_output_write(b);
	pthread_mutex_unlock(&run.out_lock);
	if (ret < 0) {
		dcp_buf_reset(b);
		set_write_error(ret);
	}
}

/*
 * The mount a path given by the user is on.  A cached path can be
 * stat'ed without any I/O; anything else is placed by its text alone.
 */
static uint64_t root_mount(const char *path, int ret, bool follow)
{
	struct dcp_mount mt;
	uint64_t id = ret == 0 ? dcp_mnt_id_at(AT_FDCWD, path, follow) : 0;

	if (!id && dcp_mounts_by_path(run.mounts, path, &mt) == 0)
		id = (uint64_t)mt.id;
	return id;
}

/*
 * The mount table for telling a never-cached miss from a cold one: a run
 * that needs no table otherwise reads it at its first miss.  Without one
 * (libmount missing), misses count as cold, as before the table.
 */
static struct dcp_mounts *never_mounts(void)
{
	pthread_mutex_lock(&run.mounts_lock);
	if (!run.mounts && !run.mounts_tried) {
		run.mounts_tried = true;
		if (dcp_mounts_load(NULL, &run.mounts) < 0)
			run.mounts = NULL;
	}
	pthread_mutex_unlock(&run.mounts_lock);
	return run.mounts;
}

/*
 * Does entry E's probe RET count as never cached (dcp_pr_never_cached())?
 * An entry of a listed directory was looked up in that directory, on its
 * mount; a path given was looked up from "/" or the current directory
 * through every directory it names, placed by their text: its *MNT, the
 * mount it is counted in, becomes the first never-cached one it crosses.
 */
static bool never_cached(struct worker *w, const struct dcp_entry *e, int ret, uint64_t *mnt)
{
	struct dcp_mounts *m;
	struct dcp_mount mt;

	if (dcp_state_of_errno(ret) != DCP_MISS || !(m = never_mounts()))
		return false;
	if (!e->dir) {
		if (dcp_mounts_never_on_path(m, e->path, &mt) != 1)
			return false;
		*mnt = (uint64_t)mt.id;
		return dcp_pr_never_cached(ret, mt.fstype);
	}
	if (!w->never_fs || w->never_mnt != e->dir->mnt_id) {
		int r = e->dir->mnt_id ? dcp_mounts_by_id(m, e->dir->mnt_id, &mt)
				       : dcp_mounts_by_dev(m, e->dir->dev, &mt);

		w->never_mnt = e->dir->mnt_id;
		w->never_fs = r == 0 && dcp_pr_never_cached(ret, mt.fstype) ? 1 : 2;
	}
	return w->never_fs == 1;
}

static bool shown_bit(unsigned bit)
{
	return run.records && (!env.only || (env.only & (1u << bit)));
}

static bool shown(int ret)
{
	return shown_bit(dcp_state_of_errno(ret));
}

/* --pages: the residency members of the JSON record just written. */
/* --pages --prometheus: data series per directory and per mount, kept to the end. */
struct pages_series {
	struct dcp_pages_series *v;
	size_t n, cap;
};
static struct pages_series pdirs, pmounts;

/* Keep a copy of C labelled VALUE (which must outlive the run). */
static void pages_keep_series(struct pages_series *s, const char *value, size_t len,
			      const char *fstype, const uint64_t *mnt_id,
			      const struct dcp_pages_counts *c)
{
	struct dcp_pages_counts *copy;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct dcp_pages_series *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return;
		s->v = v;
		s->cap = cap;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return;
	*copy = *c;
	s->v[s->n++] = (struct dcp_pages_series){ value, len, fstype, copy, mnt_id != NULL,
						  mnt_id ? *mnt_id : 0 };
}

/* A manifest (--ranges) holds at most this many filesystems by UUID. */
#define MANIFEST_MAX_FS 4096

/*
 * Why the filesystem on device DEV (FSTYPE) gave its files no UUID, as a
 * code for the notice record and in words: asked again of its device
 * (once per filesystem in a run), since what dcp_fsid_of() met is not
 * kept per file.
 */
static const char *no_uuid_reason(uint64_t dev, const char *fstype, const char **words,
				  char *buf, size_t len)
{
	struct dcp_fsid id;
	int ret;

	if (fstype && !strncmp(fstype, "fuse", 4)) {
		*words = "a FUSE filesystem: neither its daemon nor its device is asked for one";
		return "fuse";
	}
	if (major((dev_t)dev) == 0) {
		*words = "the kernel gives it none (FS_IOC_GETFSUUID needs Linux 6.9 and a "
			 "filesystem that has one) and it is on no block device";
		return "no_device";
	}
	ret = dcp_fsid_of_device(dev, &id);
	switch (ret) {
	case -EACCES:
	case -EPERM:
		*words = geteuid() ? "no filesystem UUID on this kernel (FS_IOC_GETFSUUID needs "
				     "Linux 6.9) and its block device may not be read by this user "
				     "(not root), nor does /dev/disk/by-uuid name it"
				   : "no filesystem UUID on this kernel (FS_IOC_GETFSUUID needs "
				     "Linux 6.9) and its block device may not be read here (a "
				     "container's device rules?), nor does /dev/disk/by-uuid name it";
		return "device_denied";
	case -ENODATA:
		*words = "neither the kernel nor its block device gives one";
		return "none";
	case -ELIBACC:
		*words = "no filesystem UUID on this kernel (FS_IOC_GETFSUUID needs Linux 6.9), "
			 "and libblkid.so.1, which would read it from the device, cannot be "
			 "loaded, nor does /dev/disk/by-uuid name it";
		return "no_libblkid";
	case -ENODEV:
		*words = "no filesystem UUID on this kernel (FS_IOC_GETFSUUID needs Linux 6.9) "
			 "and no device node here is its block device";
		return "no_device";
	}
	snprintf(buf, len, "no filesystem UUID on this kernel (FS_IOC_GETFSUUID needs Linux 6.9) "
		 "and reading its block device failed: %s", strerror(ret < 0 ? -ret : EIO));
	*words = buf;
	return "error";
}

/*
 * --ranges: W's file has ranges but its filesystem no UUID: said once per
 * filesystem (by device number), on stderr and as a "notice" record
 * before the file's, under the lock that orders the "fs" records.  The
 * file is then recorded by device number, which a reboot or a move may
 * change; the run's verdict and exit status are not changed.
 */
static void manifest_no_uuid(struct worker *w)
{
	uint64_t dev = w->pg.dev;
	struct dcp_mount mt = { 0 };
	struct dcp_buf b = DCP_BUF_INIT, e = DCP_BUF_INIT;
	const char *code, *words, *mount;
	char why[256], num[32];
	uint64_t *v;
	size_t i;

	pthread_mutex_lock(&run.fs_lock);
	for (i = 0; i < run.nnouuid; i++)
		if (run.nouuid[i] == dev)
			break;
	if (i < run.nnouuid || run.nnouuid >= MANIFEST_MAX_FS ||
	    !(v = realloc(run.nouuid, (run.nnouuid + 1) * sizeof(*v)))) {
		pthread_mutex_unlock(&run.fs_lock);
		return;
	}
	run.nouuid = v;
	run.nouuid[run.nnouuid++] = dev;
	if (!run.mounts || dcp_mounts_by_dev(run.mounts, (dev_t)dev, &mt) < 0)
		mt = (struct dcp_mount){ 0 };
	mount = mt.target ? mt.target : "?";
	code = no_uuid_reason(dev, mt.fstype, &words, why, sizeof(why));
	snprintf(num, sizeof(num), "%u:%u", major((dev_t)dev), minor((dev_t)dev));
	dcp_buf_puts(&b, "{\"type\":\"notice\",\"mount\":");
	dcp_buf_json_str(&b, mount, strlen(mount));
	if (mt.fstype) {
		dcp_buf_puts(&b, ",\"fstype\":");
		dcp_buf_json_str(&b, mt.fstype, strlen(mt.fstype));
	}
	dcp_buf_printf(&b, ",\"dev\":\"%s\",\"no_uuid\":\"%s\",\"message\":", num, code);
	dcp_buf_json_str(&b, words, strlen(words));
	dcp_buf_puts(&b, "}\n");
	if (!b.oom)
		flush_buf(&b);
	pthread_mutex_unlock(&run.fs_lock);
	dcp_buf_free(&b);
	dcp_msg_path(&e, mount, strlen(mount));
	dcp_buf_printf(&e, "%s: files there are recorded by device number (%s) and will not "
		       "match after a reboot or a move\n", words, num);
	if (e.oom)
		dcp_warn(ENOMEM, "a filesystem without a UUID could not be said");
	dcp_msg_buf(&e);
	dcp_buf_free(&e);
}

/*
 * --ranges: the number of the manifest's "fs" record that gives the UUID
 * of W's file (its ranges' fs), or -1 when it has none.  The first file
 * of a filesystem writes its record, under the output lock, before the
 * number is published: every identity that names it comes after it in
 * the manifest, whichever thread writes it.
 */
static long manifest_fs(struct worker *w)
{
	const struct dcp_fsid *id = &w->ranges.fs;
	struct dcp_mount mt;
	struct dcp_buf b = DCP_BUF_INIT;
	char text[DCP_FSID_TEXT];
	size_t i;

	if (id->from == DCP_FSID_NONE) {
		/* Only a file with ranges was asked (and is named by it). */
		if (w->ranges.n && !w->ranges.failed)
			manifest_no_uuid(w);
		return -1;
	}
	if (w->fs_last_id >= 0 && w->fs_last.from == id->from &&
	    !memcmp(w->fs_last.uuid, id->uuid, sizeof(id->uuid)))
		return w->fs_last_id;
	pthread_mutex_lock(&run.fs_lock);
	for (i = 0; i < run.nfs; i++)
		if (run.fs[i].from == id->from && !memcmp(run.fs[i].uuid, id->uuid, sizeof(id->uuid)))
			break;
	if (i == run.nfs) {
		struct dcp_fsid *v = run.nfs < MANIFEST_MAX_FS ?
				     realloc(run.fs, (run.nfs + 1) * sizeof(*v)) : NULL;

		if (!v) { /* the device number will have to do */
			pthread_mutex_unlock(&run.fs_lock);
			return -1;
		}
		run.fs = v;
		dcp_fsid_text(id, text);
		dcp_buf_printf(&b, "{\"type\":\"fs\",\"fs\":%zu,\"uuid\":\"%s\",\"uuid_from\":\"%s\"",
			       i, text, dcp_fsid_from_name(id->from));
		if (dcp_mounts_by_dev(run.mounts, (dev_t)w->pg.dev, &mt) == 0 && mt.fstype) {
			dcp_buf_puts(&b, ",\"fstype\":");
			dcp_buf_json_str(&b, mt.fstype, strlen(mt.fstype));
		}
		dcp_buf_printf(&b, ",\"dev\":\"%u:%u\"}\n", major((dev_t)w->pg.dev),
			       minor((dev_t)w->pg.dev));
		if (b.oom) {
			pthread_mutex_unlock(&run.fs_lock);
			dcp_buf_free(&b);
			return -1;
		}
		flush_buf(&b);
		run.fs[run.nfs++] = *id;
	}
	pthread_mutex_unlock(&run.fs_lock);
	dcp_buf_free(&b);
	w->fs_last = *id;
	w->fs_last_id = (long)i;
	return (long)i;
}

/*
 * --pages --json: the residency members of the record just written.  A
 * snapshot (--ranges) writes a measured file as a manifest's file record
 * (format 2: its ranges, its identity when it has some, nothing else);
 * a file not measured says why, as without --ranges.
 */
static void pages_json_entry(struct worker *w)
{
	struct dcp_buf m = DCP_BUF_INIT;

	if (!env.ranges || w->pret != 0 || w->ranges.failed)
		dcp_pages_json(&m, w->pret, &w->pg);
	if (env.ranges && w->pret == 0)
		dcp_pages_json_ranges(&m, &w->pg, &w->ranges, manifest_fs(w));
	if (!m.oom)
		dcp_pages_json_insert(&w->out, m.data, m.len);
	dcp_buf_free(&m);
}

/* Ranks of the records of one path under --sort. */
enum { RANK_ENTRY, RANK_UNVISITED, RANK_WALK_ERROR };

/*
 * The record just written at AT in W's buffer: held back under --sort,
 * else written out once enough is buffered.
 */
static void held(struct worker *w, size_t at, size_t root, const char *path, size_t len,
		 int rank)
{
	if (env.sort)
		dcp_rows_cut(&w->sorted, &w->out, at, root, path, len, rank);
	else if (w->out.len >= FLUSH_AT && !w->hold)
		flush_buf(&w->out);
}

/*
 * An error whose record is not printed (-q, -s, --per-dir, --per-mount,
 * --prometheus, --only) is said on stderr, as a walk error is: the exit
 * status is 2 for it, and a run never fails without saying why.
 */
static void unsaid_error(struct worker *w, const char *path, size_t len, int ret, int pret)
{
	struct dcp_buf b = DCP_BUF_INIT;

	if (dcp_state_of_errno(ret) == DCP_ERROR) {
		dcp_msg_path(&b, path, len);
		dcp_buf_printf(&b, "%s\n", strerror(-ret));
	}
	if (dcp_pages_state_of(pret) == DCP_PAGES_FAILED) {
		dcp_msg_path(&b, path, len);
		dcp_buf_printf(&b, "data: %s\n", dcp_pages_error_message(pret));
	}
	if (b.oom)
		dcp_warn(ENOMEM, "an error of a path could not be said");
	if (w->hold && !b.oom) /* said in the manifest's order */
		dcp_buf_add(&w->err, b.data, b.len);
	else
		dcp_msg_buf(&b);
	dcp_buf_free(&b);
}

/* Count one probe result, and print it when asked. */
static void record(struct worker *w, size_t root, const char *path, size_t len, int ret,
		   unsigned char type, int depth, struct dcp_pr_counts *dirc,
		   unsigned long long *dirnever, struct dcp_pr_counts *mntc,
		   const struct dcp_why_info *why, bool never, bool again)
{
	enum dcp_state st = dcp_state_of_errno(ret);

	if (dirc) {
		dirc->n[st]++;
		*dirnever += never;
		if (why)
			dirc->why[why->why]++;
	}
	/* Reached from another root too: counted there, printed there. */
	if (again)
		return;
	w->c.n[st]++;
	w->never += never;
	if (why)
		w->c.why[why->why]++;
	if (mntc) {
		mntc->n[st]++;
		if (why)
			mntc->why[why->why]++;
	}
	atomic_store_explicit(&w->seen, atomic_load_explicit(&w->seen, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (shown(ret)) {
		size_t at = w->out.len;

		if (env.pages && run.fmt == DCP_PR_TEXT)
			dcp_pages_entry_text(&w->out, path, len, ret, w->pret, &w->pg, o->units);
		else
			dcp_pr_entry(&w->out, run.fmt, path, len, ret, type, depth);
		if (why)
			dcp_explain_insert(&w->out, run.fmt == DCP_PR_JSON, why);
		if (env.pages && run.fmt == DCP_PR_JSON && !cur_name_only)
			pages_json_entry(w);
		held(w, at, root, path, len, RANK_ENTRY);
	} else {
		unsaid_error(w, path, len, ret, env.pages ? w->pret : 0);
	}
}

/*
 * --pages: measure E's data if it is a regular file whose lookup was
 * cached, before the walk goes on.  A missed lookup leaves it unknown and
 * unopened; anything but a regular file is never opened (d_type, or an
 * O_PATH look for a path given, then fstat after the open).
 */
/*
 * May files in E's directory be opened without waiting on a daemon or a
 * server (not FUSE, not NFS...)?  Told by the mount table alone: nothing
 * on the filesystem itself is asked.  This spares the lookups in a
 * directory on such a mount; the library decides again from the mount of
 * the object each lookup reaches (through a symlink, or for a PATH given).
 */
static bool opens_safely(struct worker *w, const struct dcp_entry *e)
{
	struct dcp_mount mt;
	int ret;

	bool safe;

	if (!e->dir)
		return true; /* a PATH: dcp_pages_at() asks its object's mount */
	if (w->safe && w->safe_mnt == e->dir->mnt_id)
		return w->safe == 1;
	/* A mount not in the table was made after the run began: not known. */
	ret = e->dir->mnt_id ? dcp_mounts_by_id(run.mounts, e->dir->mnt_id, &mt)
			     : dcp_mounts_by_dev(run.mounts, e->dir->dev, &mt);
	safe = ret == 0 && dcp_pages_fstype_opens_safely(mt.fstype);
	w->safe_mnt = e->dir->mnt_id;
	w->safe = safe ? 1 : 2;
	return safe;
}

/*
 * Under -L a file is reached by several paths (a link to it, a link to a
 * directory above it): its inode counts once in every total, as a file
 * with several names does, whatever its link count.
 */
static unsigned pages_once(void)
{
	return (walk_flags & DCP_WALK_FOLLOW) ? DCP_PAGES_ONCE : 0;
}

/*
 * What a measurement claims: nothing for a repeat (an entry of a directory
 * another root listed first), which counts in no run total; its claim
 * could beat the first listing's, measured at the same time on another
 * thread, and the file would count nowhere.
 */
static unsigned pages_claim(const struct dcp_entry *e)
{
	return e->again ? DCP_PAGES_NO_CLAIM : pages_once();
}

static int measure_pages(struct worker *w, const struct dcp_entry *e, enum dcp_state st,
			 bool follow, struct dcp_pages *pg)
{
	bool maybe_reg = e->type == DT_REG || e->type == DT_UNKNOWN ||
			 (e->type == DT_LNK && follow);

	*pg = (struct dcp_pages){ 0 };
	if (cur_name_only)
		return -ENODEV; /* nothing of its data is recorded */
	if (cur_entry) {
		/* --manifest: the ranges it recorded, of the file it recorded. */
		if (!cur_entry->has_identity && !cur_entry->has_ranges)
			return -ENODEV; /* nothing recorded of it */
		if (st == DCP_NEGATIVE)
			return -ENOENT; /* gone since */
		if (st != DCP_CACHED)
			return st == DCP_MISS ? -EAGAIN : e->probe;
		if (!cur_entry->has_identity) {
			/* Measured with nothing resident: nothing of it to check,
			 * nothing opened (format 2 records no identity for it). */
			int m = dcp_pages_support();

			if (m < 0)
				return m;
			pg->method = (enum dcp_pages_method)m;
			return 0;
		}
		return dcp_pages_at_manifest(run.pages, e->dirfd, e->name,
					     (follow ? DCP_PAGES_FOLLOW : 0) | pages_claim(e),
					     &cur_entry->identity,
					     (const uint64_t (*)[2])cur_entry->ranges,
					     cur_entry->nranges, pg);
	}
	if (!maybe_reg || st == DCP_NEGATIVE || st == DCP_ERROR)
		return -ENODEV;
	if (st == DCP_MISS)
		return -EAGAIN;
	if (!opens_safely(w, e))
		return -EREMOTE;
	return dcp_pages_at_ranges(run.pages, e->dirfd, e->name,
				   (follow ? DCP_PAGES_FOLLOW : 0) | pages_claim(e) |
				   (e->type == DT_REG ? DCP_PAGES_ISREG : 0) |
				   (e->dir && dcp_pages_dir_private(e->dir->uid, e->dir->mode) ?
					    DCP_PAGES_DIR_PRIVATE : 0), pg,
				   env.ranges ? &w->ranges : NULL);
}

static void note_progress_path(const char *path)
{
	bool yes = true;

	if (!atomic_load_explicit(&run.want_path, memory_order_relaxed) ||
	    !atomic_compare_exchange_strong(&run.want_path, &yes, false))
		return;
	pthread_mutex_lock(&run.path_lock);
	snprintf(run.cur, sizeof(run.cur), "%s", path);
	pthread_mutex_unlock(&run.path_lock);
}

static bool follows(int depth)
{
	return (walk_flags & DCP_WALK_FOLLOW) ||
	       (depth == 0 && (walk_flags & DCP_WALK_FOLLOW_ROOTS));
}

static void walk_error(const struct dcp_entry *e, int err, void *arg);

/* Keep a --per-dir row; false when out of memory (said, and an error). */
static bool keep_row(const struct dcp_dir_row *row, unsigned long long never)
{
	int ret;

	pthread_mutex_lock(&run.rows_lock);
	ret = dcp_dir_rows_add_split(&run.dirrows, row, never);
	pthread_mutex_unlock(&run.rows_lock);
	if (ret == 0)
		return true;
	__atomic_fetch_add(&run.input_errors, 1, __ATOMIC_RELAXED);
	dcp_warn(ENOMEM, "--per-dir");
	return false;
}

/*
 * --per-dir: directory E was not listed (--no-perturb, or a mount where an
 * open may wait), so what it holds is unknown.  It still has its row, so
 * that the coldest subtrees are not the ones missing from the table:
 * nothing probed below it, and itself not visited ("-", "0/0+1?").  Its
 * identity is its parent's device and its d_ino (a root's is not known
 * without a stat, which would be a lookup: the root's index stands in).
 */
static void unvisited_row(const struct dcp_entry *e)
{
	if (env.per_dir < 0 || e->depth > env.per_dir || o->quiet || e->again)
		return;
	keep_row(&(struct dcp_dir_row){
		.root = e->root, .depth = e->depth,
		.dev = e->dir ? e->dir->dev : (dev_t)-1,
		.ino = e->dir ? e->ino : (ino_t)e->root,
		.path = (char *)e->path, .pathlen = e->pathlen,
		.c = { .not_visited = 1 } }, 0);
}

static int visit(const struct dcp_entry *e, void *arg)
{
	struct worker *w = &run.w[e->worker];
	struct dirstat *ds = e->dir ? e->dir->data : NULL;
	bool follow = follows(e->depth);
	bool maybe_dir = e->type == DT_DIR || e->type == DT_UNKNOWN ||
			 (e->type == DT_LNK && follow);
	enum dcp_state st;
	struct rootcounts *rc = NULL;
	struct dcp_why_info why;
	uint64_t mnt = 0;
	struct dcp_mount_tally *mrow; /* --per-mount: the row of the entry's mount */
	bool never;
	int ret;

	(void)arg;
	if (atomic_load_explicit(&run.stop, memory_order_relaxed))
		return DCP_WALK_ABORT;
	/*
	 * The walker probed the entry (a directory's entries in one batch)
	 * before anything touched it, following a root under -H or -L.
	 */
	ret = e->probe;
	st = dcp_state_of_errno(ret);
	if (ds) {
		ds->root = e->root;
		ds->has_root = true;
		mnt = e->dir->mnt_id;
	} else {
		rc = root_counts(w, e->root);
		if (env.per_mount)
			mnt = root_mount(e->path, ret, follow);
	}
	/*
	 * Before the walk opens anything below, which would warm the path;
	 * a filtered root too: what lies below it needs its explanation.
	 */
	if (run.explain && st == DCP_MISS) {
		int xr = o->recursive ?
			 dcp_explain_entry(run.explain, e, follow ? DCP_FOLLOW : 0, &why) :
			 dcp_explain_path(run.explain, 0, e->path, follow ? DCP_FOLLOW : 0, &why);

		if (xr < 0)
			why = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
	}
	if (filtered && !dcp_filter_match(&o->filter, e))
		goto walk_on; /* --type, --name, --mindepth: not counted */
	never = never_cached(w, e, ret, &mnt);
	mrow = env.per_mount && !e->again ? dcp_mount_table_row(&w->mount_rows, mnt) : NULL;
	if (env.pages) {
		bool run_again;

		w->pret = measure_pages(w, e, st, follow, &w->pg);
		/* An inode counts once in each total, as du counts it: in the
		 * run's and a mount's once in the run (whichever name came
		 * first, the figures are the same), in a directory's once in
		 * its subtree (dir_done takes back what two children share). */
		run_again = w->pg.again;
		if (!e->again)
			dcp_pages_count(&w->pc, w->pret, &w->pg);
		if (mrow)
			dcp_pages_count(&mrow->pc, w->pret, &w->pg);
		w->pg.again = false;
		if (ds) {
			w->pg.again = w->pret == 0 &&
				      (pages_once() || dcp_pages_shared(run.pages, &w->pg)) &&
				      !dcp_pages_links_add(&ds->links, &w->pg);
			dcp_pages_count(&ds->pown, w->pret, &w->pg);
		} else if (rc) {
			dcp_pages_count(&rc->pc, w->pret, &w->pg);
		}
		w->pg.again = run_again;
	}
	record(w, e->root, e->path, e->pathlen, ret, e->type, e->depth,
	       ds ? &ds->own : rc ? &rc->c : NULL,
	       ds ? &ds->own_never : rc ? &rc->never : NULL, mrow ? &mrow->c : NULL,
	       run.explain && st == DCP_MISS ? &why : NULL, never, e->again);
walk_on:
	note_progress_path(e->path);
	/* A tree that is not there is no tree: an error, never a warm one. */
	if (!ds && o->recursive && st == DCP_NEGATIVE) {
		walk_error(e, ENOENT, NULL);
		return DCP_WALK_PRUNE;
	}
	/*
	 * A probe that failed for want of descriptors or memory says nothing
	 * of the path: the run is short of something, which is said once, in
	 * every format (even -s and -q), on stderr.  A directory then cannot
	 * be walked: a walk error, so the run is not complete.
	 */
	if (st == DCP_ERROR && dcp_errno_resource(ret)) {
		if (!atomic_exchange(&run.short_said, true)) {
			struct dcp_buf q = DCP_BUF_INIT;

			dcp_buf_quote_msg(&q, e->path, e->pathlen);
			dcp_buf_putc(&q, '\0');
			dcp_warn(-ret, "the run is incomplete: cannot probe %s, perhaps not the only one",
				 q.oom ? "(path)" : q.data);
			dcp_buf_free(&q);
		}
		if (o->recursive && maybe_dir)
			walk_error(e, -ret, NULL);
	}
	/* Nothing to walk below an absent name or a failed lookup. */
	if (!o->recursive || !maybe_dir || st == DCP_NEGATIVE || st == DCP_ERROR)
		return DCP_WALK_PRUNE;
	/*
	 * --no-perturb lists only directories whose lookups inside are cached
	 * for this caller (the probe of "DIR/." tells): opening any other
	 * would warm it, or load its ACL.  What it holds stays unknown.
	 */
	if (env.no_perturb && (st != DCP_CACHED || e->inner != 0)) {
		if (!ds)
			dcp_explain_root_done(run.explain, e->root);
		if (ds)
			ds->own.not_visited++;
		else if (rc)
			rc->c.not_visited++;
		if (e->again)
			return DCP_WALK_PRUNE;
		w->c.not_visited++;
		unvisited_row(e);
		if (shown_bit(DCP_ONLY_UNVISITED)) {
			size_t at = w->out.len;

			dcp_pr_unvisited(&w->out, run.fmt, e->path, e->pathlen, ret, e->depth);
			held(w, at, e->root, e->path, e->pathlen, RANK_UNVISITED);
		}
		return DCP_WALK_PRUNE;
	}
	return DCP_WALK_DESCEND;
}

static void walk_error(const struct dcp_entry *e, int err, void *arg)
{
	struct worker *w = &run.w[e->worker];
	struct dirstat *ds = e->dir ? e->dir->data : NULL;
	struct dcp_root_tally *rr = e->dir ? NULL : root_rec(e->root);

	(void)arg;
	/*
	 * Siblings may fail on several threads at once: count atomically.  A
	 * directory inside the tree that could not be listed is also one not
	 * visited: what it holds is unknown ("+1?"), never left out of the
	 * share as if the tree were complete without it.  (A cycle under -L
	 * is not: its inside is the walk of an ancestor.)
	 */
	if (ds) {
		__atomic_fetch_add(&ds->own.walk_errors, 1, __ATOMIC_RELAXED);
		if (err != ELOOP)
			__atomic_fetch_add(&ds->own.not_visited, 1, __ATOMIC_RELAXED);
	} else if (rr) {
		/* The tree itself could not be walked: it has no share. */
		__atomic_fetch_add(&RC(rr)->c.walk_errors, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&RC(rr)->c.unwalked_roots, 1, __ATOMIC_RELAXED);
	}
	if (e->again)
		return; /* said by the walk of the root that met it first */
	w->c.walk_errors++;
	if (!e->dir)
		w->c.unwalked_roots++;
	if (ds && err != ELOOP) {
		w->c.not_visited++;
		unvisited_row(e);
	}
	if (run.fmt == DCP_PR_JSON) {
		size_t at = w->out.len;

		dcp_pr_walk_error(&w->out, run.fmt, e->path, e->pathlen, err);
		held(w, at, e->root, e->path, e->pathlen, RANK_WALK_ERROR);
	} else {
		/* An error is said even under -q: the run could not look everywhere. */
		struct dcp_buf q = DCP_BUF_INIT;

		dcp_buf_quote_msg(&q, e->path, e->pathlen);
		dcp_buf_putc(&q, '\0');
		dcp_warn(err, "cannot walk %s", q.oom ? "(path)" : q.data);
		dcp_buf_free(&q);
	}
}

static void dir_done(const struct dcp_dir *d, const char *path, size_t pathlen, void *arg)
{
	struct dirstat *ds = d->data;
	struct dcp_pr_counts tot = ds->own;
	unsigned long long never = ds->own_never + ds->sub_never;

	(void)arg;
	/* What --explain kept of a missed root is not needed below it any more. */
	if (!d->parent)
		dcp_explain_root_done(run.explain, d->root);
	dcp_pr_counts_add(&tot, &ds->sub);
	dcp_pages_counts_add(&ds->pown, &ds->psub); /* --pages: own + sub from here on */
	if (d->parent) {
		struct dirstat *up = d->parent->data;

		dcp_pr_counts_add(&up->sub, &tot);
		up->sub_never += never;
		dcp_pages_counts_add(&up->psub, &ds->pown);
		dcp_pages_links_merge(&up->links, &ds->links, &up->psub);
	} else {
		struct dcp_root_tally *rr = root_rec(d->root);

		/* The root's own probe is in rr already; add what lies below. */
		if (rr) {
			dcp_pr_counts_add(&RC(rr)->c, &tot);
			RC(rr)->never += never;
		}
		if (rr)
			dcp_pages_counts_add(&RC(rr)->pc, &ds->pown);
		dcp_pages_links_free(&ds->links);
	}
	/* A directory listed again keeps a row too: which listing was first
	 * depends on the threads, which row is written does not. */
	if (env.per_dir < 0 || d->depth > env.per_dir || o->quiet)
		return;
	keep_row(&(struct dcp_dir_row){
		.root = d->root, .dev = d->dev, .ino = d->ino, .depth = d->depth,
		.path = (char *)path, .pathlen = pathlen, .c = tot, .pc = ds->pown }, never);
}

/* The --per-dir rows: one per directory, in du's order, as text or JSON
 * in run.dirbuf, or as series for --prometheus. */
static void dir_rows(void)
{
	size_t n;

	dcp_dir_rows_settle(&run.dirrows);
	n = run.dirrows.n;
	if (!n)
		return;
	if (o->prometheus) {
		run.dirs = calloc(n, sizeof(*run.dirs));
		run.dirs_never = calloc(n, sizeof(*run.dirs_never));
		if (!run.dirs || !run.dirs_never) {
			run.input_errors++;
			dcp_warn(ENOMEM, "--per-dir");
			return;
		}
		for (size_t i = 0; i < n; i++) {
			struct dcp_dir_row *r = &run.dirrows.v[i];

			run.dirs[i] = (struct dcp_pr_prom_series){ .path = r->path,
								   .pathlen = r->pathlen, .c = &r->c };
			run.dirs_never[i] = dcp_dir_row_never(r);
			if (env.pages)
				pages_keep_series(&pdirs, r->path, r->pathlen, NULL, NULL, &r->pc);
		}
		run.ndirs = n;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct dcp_dir_row *r = &run.dirrows.v[i];
		size_t row = run.dirbuf.len;

		dcp_pr_dir_split(&run.dirbuf, run.fmt, r->path, r->pathlen, r->depth, &r->c,
				 dcp_dir_row_never(r));
		if (o->explain)
			dcp_tbl_why_row(&run.dirbuf, row, run.fmt, r->path, r->pathlen, r->c.why);
		if (env.pages)
			dcp_tbl_pages_row(&run.dirbuf, row, run.fmt, r->path, r->pathlen, &r->pc,
					  o->units);
		if (run.dirbuf.len >= FLUSH_AT)
			flush_buf(&run.dirbuf);
	}
}

/* ---- progress ---- */

static unsigned term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

static void tick(void *arg)
{
	struct dcp_buf line = DCP_BUF_INIT;
	unsigned long long seen = 0;
	uint64_t now = dcp_now_ns();
	double rate;

	(void)arg;
	for (unsigned i = 0; i < run.nw; i++)
		seen += atomic_load_explicit(&run.w[i].seen, memory_order_relaxed);
	rate = now > run.last_t ? (double)(seen - run.last_seen) * 1e9 / (double)(now - run.last_t)
				: 0;
	run.last_t = now;
	run.last_seen = seen;
	pthread_mutex_lock(&run.path_lock);
	dcp_pr_progress(&line, seen, rate, run.cur, term_width());
	pthread_mutex_unlock(&run.path_lock);
	dcp_msg_progress(&line);
	dcp_buf_free(&line);
	atomic_store(&run.want_path, true);
}

static bool want_progress(void)
{
	/* Lines streaming to the same terminal are progress enough. */
	return dcp_opts_progress(o, run.records || env.per_dir >= 0);
}

/* ---- driving the run ---- */

/* Feed every path (arguments, then lists) to ADD; stops early when it fails. */
static int for_each_path(int (*add)(const char *path, void *ctx), void *ctx)
{
	return dcp_opts_each_path(o, add, ctx, &run.input_errors);
}

/* Without -r: probe each path right here, in order. */
static int probe_one(const char *path, void *ctx)
{
	struct dcp_entry e = {
		.dirfd = AT_FDCWD,
		.name = path,
		.path = path,
		.pathlen = strlen(path),
		.type = DT_UNKNOWN,
		.root = run.roots.n,
		.probe = dcp_probe_at(AT_FDCWD, path, follows(0) ? DCP_FOLLOW : 0),
	};

	(void)ctx;
	return visit(&e, NULL) == DCP_WALK_ABORT ? -ECANCELED : 0;
}

static void manifest_bad(size_t record, const char *what, void *arg)
{
	(void)arg;
	dcp_opts_input_error(o, &run.input_errors, o->manifest, record, 0, what);
}

/*
 * --manifest on every core, a directory at a time, as a walk: a window of
 * the manifest is cut into pieces, runs of consecutive entries of one
 * directory (by their paths' text: a snapshot writes a directory's entries
 * together), and the threads take pieces.  A piece's directory is looked
 * up once (O_PATH, RESOLVE_CACHED: nothing is warmed) and each name is
 * probed relative to its descriptor, as the walk probes it; a directory
 * whose lookup misses makes every name in it miss, as their full paths
 * would (the walk's rule, dcp_entry.probe).  An entry followed as a root
 * (-H, -L) or whose directory could not be looked up otherwise is probed
 * by its full path, as before.  What a piece writes (lines, and messages
 * on stderr) is held, and written in the manifest's order once its window
 * is done: the output is that of one thread.
 */
#define PIECE_MAX 256 /* counted entries of a piece */
#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20 /* old userspace headers: the kernel's ABI value */
#endif

struct piece {
	size_t first, n;	   /* entries of the window */
	size_t lead;		   /* the first counted one, whose text names the directory */
	size_t slash;		   /* its last '/': the directory is the text before it */
	bool dir;		   /* probed relative to the directory; else each by its path */
	struct dcp_buf out, err;   /* what it wrote, held */
};

static struct {
	const struct dcp_manifest *win;
	struct piece *v;
	size_t n, cap;
	_Atomic size_t next;
	_Atomic bool abort;	   /* visit() said stop */
	unsigned threads;	   /* started, besides the calling one (worker 0) */
	pthread_t *tids;
	unsigned gen, running;
	bool closing;
	bool by_path;		   /* too few descriptors for a piece's directory */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	struct dcp_buf out;	   /* the pieces' lines, in order */
} mv = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.go = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/*
 * Where entry ME's name begins after its directory, or 0 when it has no
 * directory to be probed from (no '/', a name "." or empty, or followed
 * as a root).
 */
static size_t piece_slash(const struct dcp_manifest_entry *me, size_t *slash)
{
	const char *s = memrchr(me->path, '/', me->len), *name;

	if (!s || follows(me->depth > 0 ? me->depth : 0))
		return 0;
	name = s + 1;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || (size_t)(s - me->path) >= PATH_MAX)
		return 0;
	*slash = (size_t)(s - me->path);
	return 1;
}

/* Cut window WIN into pieces (mv.v); false when out of memory. */
static bool manifest_cut(const struct dcp_manifest *win)
{
	struct piece *p = NULL;
	size_t counted = 0;

	mv.n = 0;
	for (size_t i = 0; i < win->n; i++) {
		const struct dcp_manifest_entry *me = &win->v[i];
		size_t slash = 0;
		bool dir;

		if (!dcp_manifest_counted(me)) {
			if (p)
				p->n++;
			continue;
		}
		dir = piece_slash(me, &slash);
		if (p && counted < PIECE_MAX && p->dir == dir &&
		    (!dir || (slash == p->slash &&
			      !memcmp(me->path, win->v[p->lead].path, slash)))) {
			p->n = i + 1 - p->first;
			counted++;
			continue;
		}
		if (mv.n == mv.cap) {
			size_t cap = mv.cap ? 2 * mv.cap : 64;
			struct piece *v = realloc(mv.v, cap * sizeof(*v));

			if (!v)
				return false;
			memset(v + mv.cap, 0, (cap - mv.cap) * sizeof(*v));
			mv.v = v;
			mv.cap = cap;
		}
		p = &mv.v[mv.n++];
		p->first = p->lead = i;
		p->n = 1;
		p->slash = slash;
		p->dir = dir;
		counted = 1;
	}
	return true;
}

/* Open the directory of piece P, or say what every name in it is: *ALL. */
static int piece_dir(const struct piece *p, int *all)
{
	const struct dcp_manifest_entry *me = &mv.win->v[p->lead];
	char dir[PATH_MAX];
	int fd, r;

	*all = 0;
	if (!p->slash) {
		dir[0] = '/';
		dir[1] = '\0';
	} else {
		memcpy(dir, me->path, p->slash);
		dir[p->slash] = '\0';
	}
	fd = dcp_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_CACHED);
	if (fd != -EAGAIN && fd != -EACCES)
		return fd;
	/* Asked again, as a path's probe is (dcp_probe_at()): the same answer
	 * for each name below it, which its full path meets there. */
	r = dcp_probe_at(AT_FDCWD, dir, DCP_FOLLOW);
	if (r == 0)
		return dcp_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_CACHED);
	if (r == -EAGAIN || r == -EACCES)
		*all = r;
	return -EAGAIN;
}

/* Check piece P on worker WI. */
static void manifest_piece(unsigned wi, struct piece *p)
{
	struct worker *w = &run.w[wi];
	struct dcp_buf t;
	int dfd = -1, all = 0;

	if (p->dir && !mv.by_path)
		dfd = piece_dir(p, &all);
	w->hold = true;
	for (size_t i = p->first; i < p->first + p->n; i++) {
		const struct dcp_manifest_entry *me = &mv.win->v[i];
		struct dcp_entry e = {
			.dirfd = AT_FDCWD, .name = me->path, .path = me->path, .pathlen = me->len,
			.type = me->kind, .root = me->root, .depth = me->depth > 0 ? me->depth : 0,
			.worker = wi,
		};
		int ret;

		if (!dcp_manifest_counted(me))
			continue;
		if (atomic_load_explicit(&mv.abort, memory_order_relaxed))
			break;
		if (dfd >= 0) {
			e.dirfd = dfd;
			e.name = me->path + p->slash + 1;
			e.probe = dcp_probe_at(dfd, e.name, 0);
		} else if (all) {
			e.probe = all;
		} else {
			e.probe = dcp_probe_at(AT_FDCWD, me->path, follows(e.depth) ? DCP_FOLLOW : 0);
		}
		cur_entry = me;
		ret = visit(&e, NULL);
		cur_entry = NULL;
		if (ret == DCP_WALK_ABORT) {
			atomic_store(&mv.abort, true);
			break;
		}
	}
	if (dfd >= 0)
		close(dfd);
	acc_flush(w);
	t = p->out, p->out = w->out, w->out = t;
	t = p->err, p->err = w->err, w->err = t;
}

/* Take pieces until none is left. */
static void manifest_work(unsigned wi)
{
	for (size_t i; (i = atomic_fetch_add(&mv.next, 1)) < mv.n;)
		manifest_piece(wi, &mv.v[i]);
}

static void *manifest_thread(void *arg)
{
	unsigned wi = (unsigned)(uintptr_t)arg, seen = 0;

	for (;;) {
		bool closing;

		pthread_mutex_lock(&mv.mu);
		while (mv.gen == seen && !mv.closing)
			pthread_cond_wait(&mv.go, &mv.mu);
		seen = mv.gen;
		closing = mv.closing;
		pthread_mutex_unlock(&mv.mu);
		if (closing)
			return NULL;
		manifest_work(wi);
		pthread_mutex_lock(&mv.mu);
		if (--mv.running == 0)
			pthread_cond_signal(&mv.done);
		pthread_mutex_unlock(&mv.mu);
	}
}

/*
 * The workers of a manifest's check: one per CPU (-j), fewer when the
 * descriptors are short (each holds a directory and a file open), one
 * with --explain (its state is one thread's).  Made before the progress
 * line reads them.
 */
enum { MANIFEST_FDS_BY_DIR = 5 }; /* a directory, a file, its reopening, 2 spare */

static void manifest_workers(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned want = o->jobs ? o->jobs : cpus > 0 ? (unsigned)cpus : 1;
	struct rlimit rl;

	if (want > 256)
		want = 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t spare = rl.rlim_cur > 64 ? (rl.rlim_cur - 32) / 8 : 1;

		if (want > spare)
			want = spare ? (unsigned)spare : 1;
	}
	if (o->explain)
		want = 1;
	/* At the descriptor floor a piece's directory is one descriptor too
	 * many (beside a file's O_PATH descriptor and its reopening): every
	 * name is then probed by its full path, as one thread did before. */
	if (dcp_fd_free() < MANIFEST_FDS_BY_DIR) {
		want = 1;
		mv.by_path = true;
	}
	run.w = calloc(want, sizeof(*run.w));
	mv.tids = calloc(want, sizeof(*mv.tids));
	if (!run.w || !mv.tids)
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "--manifest");
	run.nw = want;
	for (unsigned i = 0; i < want; i++) {
		run.w[i].acc = calloc(1, sizeof(struct rootcounts));
		if (!run.w[i].acc)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "--manifest");
	}
}

/* Start the threads (fewer if the system refuses): worker 0 is the caller. */
static void manifest_start(void)
{
	for (unsigned i = 1; i < run.nw; i++) {
		if (dcp_thread_create(&mv.tids[mv.threads], manifest_thread,
				      (void *)(uintptr_t)(mv.threads + 1)))
			break;
		mv.threads++;
	}
}

static void manifest_stop(void)
{
	pthread_mutex_lock(&mv.mu);
	mv.closing = true;
	pthread_cond_broadcast(&mv.go);
	pthread_mutex_unlock(&mv.mu);
	for (unsigned i = 0; i < mv.threads; i++)
		pthread_join(mv.tids[i], NULL);
	mv.threads = 0;
	flush_buf(&mv.out);
	for (unsigned i = 0; i < run.nw; i++)
		run.w[i].hold = false;
}

/*
 * Check window WIN on every worker, then write what its pieces held, in
 * order.  Returns false when the run stops.
 */
static bool manifest_window(const struct dcp_manifest *win)
{
	if (!manifest_cut(win))
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "--manifest");
	mv.win = win;
	atomic_store(&mv.next, 0);
	pthread_mutex_lock(&mv.mu);
	mv.running = mv.threads;
	mv.gen++;
	pthread_cond_broadcast(&mv.go);
	pthread_mutex_unlock(&mv.mu);
	manifest_work(0);
	pthread_mutex_lock(&mv.mu);
	while (mv.running)
		pthread_cond_wait(&mv.done, &mv.mu);
	pthread_mutex_unlock(&mv.mu);
	for (size_t i = 0; i < mv.n; i++) {
		struct piece *p = &mv.v[i];

		dcp_buf_add(&mv.out, p->out.data, p->out.len);
		if (mv.out.len >= FLUSH_AT)
			flush_buf(&mv.out);
		dcp_msg_buf(&p->err);
		/* A large buffer goes back to the heap: what is held follows a window. */
		if (p->out.cap > FLUSH_AT)
			dcp_buf_free(&p->out);
		dcp_buf_reset(&p->out);
	}
	return !atomic_load(&mv.abort);
}

/* Push the roots of M from number *PUSHED on. */
static void manifest_roots(const struct dcp_manifest *m, size_t *pushed)
{
	for (; *pushed < m->nroots; (*pushed)++)
		if (dcp_root_table_push(&run.roots, m->roots[*pushed]) < 0)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "--manifest");
}

/*
 * One path given with its root and depth (a manifest's entry, a
 * recording's): probed as a path given (nothing is walked), counted under
 * its root, written by the same record() as a walk's entries.  Returns
 * visit()'s answer.
 */
static int visit_path(const char *path, size_t len, size_t root, int depth, unsigned char kind)
{
	struct dcp_entry e = {
		.dirfd = AT_FDCWD, .name = path, .path = path, .pathlen = len,
		.type = kind, .root = root, .depth = depth > 0 ? depth : 0,
	};

	e.probe = dcp_probe_at(AT_FDCWD, path, follows(e.depth) ? DCP_FOLLOW : 0);
	return visit(&e, NULL);
}

/* The roots of paths given: they are the run's, in order. */
static void given_roots(const char *const *roots, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (dcp_root_table_push(&run.roots, roots[i]) < 0)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "%s", what);
	dcp_root_table_settle(&run.roots);
}

/*
 * --manifest: probe each path it recorded as cached or negative, as a path
 * given (nothing is walked), counted under its manifest root; a file's data
 * is measured within the ranges recorded (measure_pages()).  Read a window
 * at a time, its roots known first (a pre-pass over the file): memory does
 * not follow the manifest.  From a pipe (no pre-pass), read whole.
 */
static void probe_manifest(void)
{
	static struct dcp_manifest m; /* static: reachable until exit */
	struct dcp_manifest_reader *x;
	const struct dcp_manifest *w;
	size_t pushed = 0;
	FILE *f = dcp_opts_manifest_fopen(o);
	int ret = f ? dcp_manifest_open(f, true, manifest_bad, NULL, &x) : -errno, n;

	if (ret == -ESPIPE) {
		ret = dcp_manifest_fread(f, &m, manifest_bad, NULL);
		dcp_opts_manifest_fclose(o, f);
		/* A read error (ENOMEM too) names its line; what came before is checked. */
		if (ret < 0)
			dcp_opts_input_error(o, &run.input_errors, o->manifest, m.lines, -ret, NULL);
		if (m.n)
			dcp_opts_manifest_notice(o, o->manifest, m.format);
		manifest_roots(&m, &pushed);
		dcp_root_table_settle(&run.roots);
		manifest_start();
		manifest_window(&m);
		manifest_stop();
		return;
	}
	if (ret < 0) {
		dcp_opts_input_error(o, &run.input_errors, o->manifest, 0, -ret, NULL);
		dcp_opts_manifest_fclose(o, f);
		return;
	}
	/* The roots the pre-pass found, before any entry. */
	ret = dcp_manifest_next(x, 0, &w);
	manifest_roots(w, &pushed);
	dcp_root_table_settle(&run.roots);
	manifest_start();
	for (n = ret; n > 0; n = dcp_manifest_next(x, 0, &w)) {
		size_t before = pushed;

		manifest_roots(w, &pushed); /* an entry under no root is one */
		if (pushed != before)
			dcp_root_table_settle(&run.roots);
		if (!manifest_window(w)) {
			n = 0;
			break;
		}
	}
	manifest_stop();
	/* A read error (ENOMEM too) names its line; what came before is checked. */
	if (n < 0)
		dcp_opts_input_error(o, &run.input_errors, o->manifest, dcp_manifest_line(x), -n, NULL);
	if (dcp_manifest_entries(x))
		dcp_opts_manifest_notice(o, o->manifest, dcp_manifest_format(x));
	dcp_manifest_close(x);
	dcp_opts_manifest_fclose(o, f);
}

/*
 * Entries given (a recording, dcp_probe_given): each written as a
 * snapshot writes a walk's entry, its data measured in full (--ranges);
 * one recorded by its name alone is written without data.
 */
static void probe_given(const struct dcp_probe_given *g)
{
	given_roots(g->roots, g->nroots, "the entries given");
	for (size_t i = 0; i < g->n; i++) {
		const struct dcp_probe_given_entry *ge = &g->v[i];
		int ret;

		if (g->abandon && *g->abandon)
			break;
		cur_name_only = ge->name_only;
		ret = visit_path(ge->path, ge->len, ge->root, ge->depth, ge->kind);
		cur_name_only = false;
		if (ret == DCP_WALK_ABORT)
			break;
	}
}

static int walk_one(const char *path, void *ctx)
{
	int ret = o->prometheus || env.pages || o->summary ? dcp_root_table_push(&run.roots, path) : 0;

	if (ret < 0) {
		run.input_errors++;
		dcp_warn(-ret, "cannot keep the metrics of more roots");
		return ret;
	}
	/*
	 * --explain: a root that misses is explained now, before the walk
	 * of another root can warm a prefix of it (the walker gathers the
	 * roots of a recursive walk: no worker runs yet).  Its visit
	 * recalls this explanation.
	 */
	if (run.explain) {
		struct dcp_entry e = {
			.dirfd = AT_FDCWD, .name = path, .path = path, .pathlen = strlen(path),
			.type = DT_UNKNOWN, .root = run.roots_added,
			.probe = dcp_probe_at(AT_FDCWD, path, follows(0) ? DCP_FOLLOW : 0),
		};
		struct dcp_why_info why;

		if (e.probe == -EAGAIN)
			dcp_explain_entry(run.explain, &e, follows(0) ? DCP_FOLLOW : 0, &why);
	}
	if (env.ranges) {
		/* A manifest names its roots before any entry (format 2). */
		struct dcp_buf b = DCP_BUF_INIT;

		dcp_buf_printf(&b, "{\"type\":\"manifest_root\",\"root\":%zu,\"path\":", run.roots_added);
		dcp_buf_json_str(&b, path, strlen(path));
		dcp_buf_puts(&b, "}\n");
		if (b.oom)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "--ranges");
		flush_buf(&b);
		dcp_buf_free(&b);
	}
	run.roots_added++;
	return dcp_walk_add(ctx, path);
}

/* Root ROOT is the tree of the earlier root SAME_AS (dcp_walk_opts.alias). */
static void root_alias(size_t root, size_t same_as, void *arg)
{
	(void)arg;
	dcp_root_table_alias(&run.roots, root, same_as);
}

/* Start the progress timer once the workers' counters exist. */
static void start_progress(void)
{
	if (want_progress())
		dcp_progress_start(tick, NULL, 1000000000ULL, 200000000ULL, &progress);
}

/* --exclude-fstype, FUSE and network mounts: the walk does not go in. */
static int skip_mount(uint64_t mnt_id, void *arg)
{
	(void)arg;
	return dcp_filter_skip_mount(&o->filter, run.mounts, mnt_id);
}

/* A directory on a mount where an open may wait: not listed, unvisited. */
static void mount_unvisited(const struct dcp_entry *e, void *arg)
{
	struct worker *w = &run.w[e->worker];
	struct dirstat *ds = e->dir ? e->dir->data : NULL;

	(void)arg;
	/* Siblings may be left on several threads at once: count atomically. */
	if (ds)
		__atomic_fetch_add(&ds->own.not_visited, 1, __ATOMIC_RELAXED);
	if (e->again)
		return;
	w->c.not_visited++;
	unvisited_row(e);
	if (shown_bit(DCP_ONLY_UNVISITED)) {
		size_t at = w->out.len;

		dcp_pr_unvisited(&w->out, run.fmt, e->path, e->pathlen, -EREMOTE, e->depth);
		held(w, at, e->root, e->path, e->pathlen, RANK_UNVISITED);
	}
}

static int run_walk(void)
{
	struct dcp_walk_opts wo = {
		.flags = walk_flags | DCP_WALK_PROBE |
			 (env.per_dir >= 0 ? DCP_WALK_DONE_PATHS : 0) |
			 (env.no_perturb ? DCP_WALK_NO_PERTURB : 0),
		.done_path_depth = env.per_dir,
		.probe_flags = (walk_flags & DCP_WALK_FOLLOW) ? DCP_FOLLOW : 0,
		.threads = o->jobs,
		.max_depth = o->max_depth,
		.excludes = o->excludes,
		.dir_data_size = sizeof(struct dirstat),
		.visit = visit,
		.error = walk_error,
		.dir_done = dir_done,
		.skip_mount = skip_mount,
		.unvisited = mount_unvisited,
		.alias = root_alias,
	};
	struct dcp_walk *w;
	int ret;

	if (env.pages) /* the files it opens, out of the walker's descriptor budget */
		wo.fds_per_thread = dcp_pages_fds_per_thread(run.pages);
	ret = dcp_walk_new(&wo, &w);
	if (ret < 0)
		return ret;
	run.nw = dcp_walk_threads(w);
	run.w = calloc(run.nw, sizeof(*run.w));
	if (run.w && o->explain && (ret = dcp_explain_new(run.nw, &run.explain)) < 0) {
		dcp_walk_finish(w);
		return ret;
	}
	if (!run.w) {
		/* Nothing was queued: the walk ends at once. */
		dcp_walk_finish(w);
		return -ENOMEM;
	}
	start_progress();
	for_each_path(walk_one, w);
	ret = dcp_walk_finish(w);
	dcp_root_table_settle(&run.roots);
	return ret;
}

/* One row of the --per-mount table: one mount (ID), not one device. */
struct mountrow {
	uint64_t id;
	struct dcp_pr_counts c;
	struct dcp_pages_counts pc; /* --pages */
	struct dcp_mount mt;
	bool found;
};

static int cmp_mountrow(const void *a, const void *b)
{
	const struct mountrow *x = a, *y = b;
	int d = strcmp(x->found ? x->mt.target : "?", y->found ? y->mt.target : "?");

	return d ? d : (x->id > y->id) - (x->id < y->id);
}

/*
 * The --per-mount table from all workers' per-device counts: rows in OUT,
 * or series in PROM for --prometheus (kept until exit).
 */
static void per_mount(struct dcp_buf *out, struct dcp_pr_prom *prom)
{
	struct dcp_mount_table all = { 0 };
	struct mountrow *rows = NULL;
	struct dcp_pr_prom_series *ser;
	size_t n;

	for (unsigned i = 0; i < run.nw; i++)
		if (dcp_mount_table_merge(&all, &run.w[i].mount_rows) < 0)
			goto oom;
	n = all.n;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows)
		goto oom;
	for (size_t k = 0; k < n; k++) {
		rows[k].id = all.v[k].id;
		rows[k].c = all.v[k].c;
		rows[k].pc = all.v[k].pc;
		rows[k].found = dcp_mounts_by_id(run.mounts, rows[k].id, &rows[k].mt) == 0;
	}
	dcp_mount_table_free(&all);
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_mountrow);
	if (!prom) {
		for (size_t k = 0; k < n; k++) {
			size_t row = out->len;

			dcp_pr_mount(out, run.fmt, rows[k].found ? &rows[k].mt : NULL,
				     rows[k].found ? rows[k].mt.dev : 0, &rows[k].c);
			if (o->explain)
				dcp_tbl_why_row(out, row, run.fmt,
						rows[k].found ? rows[k].mt.target : "?",
						rows[k].found ? strlen(rows[k].mt.target) : 1,
						rows[k].c.why);
			if (env.pages)
				dcp_tbl_pages_row(out, row, run.fmt,
						  rows[k].found ? rows[k].mt.target : "?",
						  rows[k].found ? strlen(rows[k].mt.target) : 1,
						  &rows[k].pc, o->units);
		}
		free(rows);
		return;
	}
	ser = calloc(n ? n : 1, sizeof(*ser));
	if (!ser)
		goto oom;
	for (size_t k = 0; k < n; k++) {
		const char *target = rows[k].found ? rows[k].mt.target : "?";

		ser[k] = (struct dcp_pr_prom_series){
			.path = target,
			.pathlen = strlen(target),
			.fstype = rows[k].found ? rows[k].mt.fstype : "unknown",
			.c = &rows[k].c,
			.has_mnt_id = true,
			.mnt_id = rows[k].id,
		};
	}
	prom->mounts = ser;
	prom->nmounts = n;
	for (size_t k = 0; env.pages && k < n; k++)
		pages_keep_series(&pmounts, ser[k].path, ser[k].pathlen, ser[k].fstype,
				  &rows[k].id, &rows[k].pc);
	return;
oom:
	dcp_mount_table_free(&all);
	free(rows);
	run.input_errors++;
	dcp_warn(ENOMEM, "--per-mount");
}

/* Whether per-path records are printed. */
bool dcp_probe_run_prints_paths(const struct dcp_opts *opts, const struct dcp_probe_run_config *cfg)
{
	return !opts->summary && !opts->quiet && !opts->prometheus && cfg->per_dir < 0 &&
	       !cfg->per_mount;
}

/* Held records, in ORDER; out of memory, some are lost: said, and an error. */
static void rows_out(struct dcp_rows *r, enum dcp_rows_order order, struct dcp_buf *out)
{
	if (r->oom) {
		run.input_errors++;
		dcp_warn(ENOMEM, "some lines were not kept to be sorted");
	}
	dcp_rows_write(r, order, out);
}

static int exit_status(const struct dcp_pr_counts *tot, unsigned long long never)
{
	bool err = tot->n[DCP_ERROR] || tot->walk_errors || run.input_errors ||
		   atomic_load(&run.write_err);

	if (err)
		return DCP_EXIT_ERROR;
	/*
	 * A snapshot (--ranges) is an action, "write a manifest": its answer
	 * is the manifest, misses and directories not visited included, so it
	 * succeeds when written (a timer unit, a set -e script go on); a gate
	 * asked for still judges.
	 */
	if (env.ranges && env.min_cached < 0 && env.min_resident < 0)
		return DCP_EXIT_OK;
	/* Below an unvisited directory every lookup misses: how many is unknown. */
	if (!dcp_pr_complete(tot) && !env.ignore_unvisited)
		return DCP_EXIT_COLD;
	/* A gate passes on what was probed, never on nothing. */
	if (env.min_cached >= 0 && !dcp_pr_total(tot)) {
		if (!o->quiet)
			dcp_warn(0, "--min-cached: no path was probed, there is no share to judge");
		return DCP_EXIT_COLD;
	}
	if (env.min_cached >= 0)
		return dcp_pr_cached_pct_split(tot, never) >= env.min_cached ? DCP_EXIT_OK
									    : DCP_EXIT_COLD;
	return tot->n[DCP_MISS] ? DCP_EXIT_COLD : DCP_EXIT_OK;
}

/* ---- --pages totals ---- */

/* The --pages part of the exit status: errors, and --min-resident. */
static int pages_status(int status, const struct dcp_pages_counts *pt,
			const struct dcp_pr_counts *tot)
{
	if (pt->failed)
		return DCP_EXIT_ERROR;
	/* Files below a directory not visited are unknown too, whatever
	 * --ignore-unvisited says of the paths (it never lets a data verdict
	 * pass on files that were not measured). */
	if (env.min_resident >= 0 && status == DCP_EXIT_OK &&
	    (!dcp_pages_verdict(pt, env.min_resident) || !dcp_pr_complete(tot)))
		return DCP_EXIT_COLD;
	return status;
}

/* Summary lines on stderr: not under -q; under -s (whose lines on stdout
 * say it all) only for a person at a terminal. */
static bool stderr_summary(void)
{
	return !o->quiet && (!o->summary || isatty(STDERR_FILENO));
}

/* Per-root data totals (-r): JSON objects before the summary, text lines. */
static void pages_roots(struct dcp_buf *out, struct dcp_buf *err)
{
	if (!rooted || o->quiet || o->prometheus || (!o->json && run.roots.n < 2))
		return;
	for (size_t i = 0; i < run.roots.n; i++) {
		struct dcp_root_tally *rr = root_rec(i);

		if (!rr || !rr->reported)
			continue;
		if (o->json) {
			dcp_buf_puts(out, "{\"type\":\"root_data\",\"path\":");
			dcp_buf_json_str(out, rr->path, strlen(rr->path));
			dcp_pages_json_counts(out, &RC(rr)->pc, -1);
			dcp_buf_puts(out, "}\n");
		} else if (stderr_summary()) {
			dcp_buf_printf(err, "%s: ", program_invocation_name);
			dcp_buf_quote(err, rr->path, strlen(rr->path));
			dcp_buf_puts(err, ": ");
			dcp_pages_text_counts(err, &RC(rr)->pc, o->units);
		}
	}
}

/* The run's data totals: in the JSON summary, a text line, or metrics in M. */
static void pages_total(struct dcp_buf *out, struct dcp_buf *err, struct dcp_prom *m,
			const struct dcp_pages_counts *pt)
{
	struct dcp_buf j = DCP_BUF_INIT;

	if (o->quiet)
		return;
	if (o->json) {
		dcp_pages_json_counts(&j, pt, env.min_resident);
		if (!j.oom)
			dcp_pages_json_insert(out, j.data, j.len);
		dcp_buf_free(&j);
	} else if (m) {
		struct dcp_pages_series *ser = NULL;
		size_t n = 0;

		if (rooted && run.roots.n)
			ser = calloc(run.roots.n, sizeof(*ser));
		for (size_t i = 0; ser && i < run.roots.n; i++) {
			struct dcp_root_tally *rr = root_rec(i);

			if (!rr->reported)
				continue;
			ser[n++] = (struct dcp_pages_series){ rr->path, strlen(rr->path), NULL,
							      &RC(rr)->pc, false, 0 };
		}
		if (ser)
			dcp_pages_prometheus(m, DCP_PAGES_PROM_ROOT, ser, n);
		else
			dcp_pages_prometheus(m, DCP_PAGES_PROM_ROOT,
					     &(struct dcp_pages_series){ .c = pt }, 1);
		free(ser);
		dcp_pages_prometheus(m, DCP_PAGES_PROM_MOUNT, pmounts.v, pmounts.n);
		dcp_pages_prometheus(m, DCP_PAGES_PROM_DIR, pdirs.v, pdirs.n);
	} else if (stderr_summary()) {
		dcp_buf_printf(err, "%s: ", program_invocation_name);
		dcp_pages_text_counts(err, pt, o->units);
	}
}

/*
 * --ranges at a terminal: what the snapshot recorded, in one line on
 * stderr (its JSON says it to a program), once it is written.
 */
static void snapshot_text(struct dcp_buf *b, const struct dcp_pr_counts *tot,
			  const struct dcp_pages_counts *pt)
{
	struct dcp_buf q = DCP_BUF_INIT;

	dcp_buf_printf(b, "%s: recorded ", program_invocation_name);
	dcp_buf_count(b, dcp_pr_total(tot), "path", "paths");
	dcp_buf_printf(b, " (%llu cached, %llu negative, %llu miss, %llu error) and the "
		       "resident ranges of ", tot->n[DCP_CACHED], tot->n[DCP_NEGATIVE],
		       tot->n[DCP_MISS], tot->n[DCP_ERROR]);
	dcp_buf_count(b, pt->files, "file", "files");
	dcp_buf_puts(b, " (");
	dcp_buf_bytes(b, pt->resident_bytes, o->units);
	dcp_buf_puts(b, " of ");
	dcp_buf_bytes(b, pt->size, o->units);
	dcp_buf_printf(b, " bytes) in %s\n", o->output ? dcp_quoted(&q, o->output) :
		       "standard output");
	dcp_buf_free(&q);
}

int dcp_probe_run(const struct dcp_opts *opts, const struct dcp_probe_run_config *cfg)
{
	/* Static: what they own stays reachable until exit. */
	static struct dcp_buf out = DCP_BUF_INIT, err = DCP_BUF_INIT;
	static struct dcp_pr_prom prom;
	struct dcp_prom *metrics = NULL;
	static struct worker single;
	static struct dcp_pr_prom_never prom_never;
	struct dcp_pr_counts tot = { 0 };
	unsigned long long never = 0; /* of tot's misses, never cached */
	struct dcp_pages_counts ptot = { 0 };
	int ret, status, werr;

	o = opts;
	env = *cfg;
	run.roots.data_size = sizeof(struct rootcounts);
	walk_flags = (o->follow == DCP_FOLLOW_ALL ? DCP_WALK_FOLLOW : 0) |
			 (o->follow == DCP_FOLLOW_ROOTS ? DCP_WALK_FOLLOW_ROOTS : 0) |
			 (o->xdev ? DCP_WALK_XDEV : 0);
	ret = dcp_opts_can_probe(true, env.pages);
	if (ret != DCP_EXIT_OK)
		return ret;
	filtered = dcp_filter_active(&o->filter);
	rooted = o->recursive || o->manifest || env.given;
	if (env.per_mount || env.pages || o->recursive) {
		ret = dcp_mounts_load(NULL, &run.mounts);
		if (ret < 0)
			dcp_die(DCP_EXIT_ERROR, -ret, "cannot read the mount table");
	}
	if (env.pages) {
		struct dcp_pages_run_opts po = { .mounts = run.mounts };

		ret = dcp_pages_run_new(&po, &run.pages);
		if (ret < 0)
			dcp_die(DCP_EXIT_ERROR, -ret, "--pages");
	}
	/* -0 is for a program (xargs -0r); on a terminal, names are quoted. */
	run.fmt = dcp_opts_format(o);
	run.records = dcp_probe_run_prints_paths(o, &env);

	run.t0 = run.last_t = dcp_now_ns();
	if (env.ranges) {
		/* A manifest's first record: its format (dcprobe(7) MANIFESTS). */
		dcp_buf_printf(&out, "{\"type\":\"manifest\",\"version\":%d,\"page_size\":%ld}\n",
			       DCP_MANIFEST_VERSION, sysconf(_SC_PAGESIZE));
		flush_buf(&out);
	}
	if (o->recursive) {
		ret = run_walk();
		if (ret < 0 && ret != -ECANCELED) {
			dcp_progress_stop(progress);
			dcp_warn(-ret, "the walk failed");
			return DCP_EXIT_ERROR;
		}
	} else {
		run.w = &single;
		run.nw = 1;
		if (o->explain) {
			ret = dcp_explain_new(1, &run.explain);
			if (ret < 0)
				dcp_die(DCP_EXIT_ERROR, -ret, "--explain");
		}
		if (o->manifest && !env.given)
			manifest_workers();
		start_progress();
		if (env.given)
			probe_given(env.given);
		else if (o->manifest)
			probe_manifest();
		else
			for_each_path(probe_one, NULL);
	}
	if (dcp_progress_stop(progress))
		dcp_msg_progress_clear();

	for (unsigned i = 0; i < run.nw; i++) {
		flush_buf(&run.w[i].out);
		if (i)
			dcp_rows_merge(&run.w[0].sorted, &run.w[i].sorted);
		dcp_pr_counts_add(&tot, &run.w[i].c);
		never += run.w[i].never;
		dcp_pages_counts_add(&ptot, &run.w[i].pc);
	}
	if (env.sort) {
		rows_out(&run.w[0].sorted, DCP_ROWS_PREORDER, &out);
		flush_buf(&out);
	}
	if (env.per_dir >= 0 && dcp_opts_headings(o))
		dcp_tbl_heading(&run.dirbuf, DCP_PR_TABLE_TREE, o->explain, env.pages, o->units);
	dir_rows();
	flush_buf(&run.dirbuf);
	if (run.nw)
		dcp_rows_free(&run.w[0].sorted);

	if (o->prometheus) {
		struct dcp_pr_prom_series *roots = NULL;
		unsigned long long *roots_never = NULL;

		if (rooted && run.roots.n) {
			size_t n = 0;

			roots = calloc(run.roots.n, sizeof(*roots));
			roots_never = calloc(run.roots.n, sizeof(*roots_never));
			for (size_t i = 0; roots && roots_never && i < run.roots.n; i++) {
				struct dcp_root_tally *rr = root_rec(i);

				if (!rr->reported)
					continue;
				roots_never[n] = RC(rr)->never;
				roots[n++] = (struct dcp_pr_prom_series){
					.path = rr->path, .pathlen = strlen(rr->path),
					.c = &RC(rr)->c };
			}
			prom.roots = roots;
			prom.nroots = n;
			prom_never.roots = roots_never;
		}
		prom.total = &tot;
		prom_never.total = never;
		if (env.per_mount)
			per_mount(&out, &prom);
		prom.dirs = run.dirs;
		prom.ndirs = run.ndirs;
		prom_never.dirs = run.dirs_never;
	} else if (env.per_mount && !o->quiet) {
		if (dcp_opts_headings(o))
			dcp_tbl_heading(&out, DCP_PR_TABLE_MOUNT, o->explain, env.pages, o->units);
		per_mount(&out, NULL);
	}

	if (o->summary && !o->quiet && !o->prometheus) {
		if (dcp_opts_headings(o))
			dcp_tbl_heading(&out, DCP_PR_TABLE_TREE, o->explain, env.pages, o->units);
		/* -s: a line per root, as du -s; -c: and the grand total. */
		for (size_t i = 0; rooted && i < run.roots.n; i++) {
			struct dcp_root_tally *rr = root_rec(i);
			size_t row = out.len;

			if (!rr->reported)
				continue;
			dcp_pr_root_split(&out, run.fmt, rr->path, strlen(rr->path), &RC(rr)->c,
					  RC(rr)->never);
			if (o->explain)
				dcp_tbl_why_row(&out, row, run.fmt, rr->path, strlen(rr->path),
						RC(rr)->c.why);
			if (env.pages)
				dcp_tbl_pages_row(&out, row, run.fmt, rr->path, strlen(rr->path),
						  &RC(rr)->pc, o->units);
		}
		if (o->total) {
			size_t row = out.len;

			dcp_pr_root_split(&out, run.fmt, NULL, 0, &tot, never);
			if (o->explain)
				dcp_tbl_why_row(&out, row, run.fmt, "total", 5, tot.why);
			if (env.pages)
				dcp_tbl_pages_row(&out, row, run.fmt, "total", 5, &ptot, o->units);
		}
	}
	if (env.given && env.given->incomplete)
		tot.lost++; /* a recording that lost events: not all is known */
	status = exit_status(&tot, never);
	if (env.pages) {
		status = pages_status(status, &ptot, &tot);
		pages_roots(&out, &err);
	}
	if (env.given && env.given->status)
		status = env.given->status(status, &tot, env.given->arg);
	if (o->prometheus) {
		metrics = dcp_opts_prom_new(o);
		if (!metrics)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "--prometheus");
		prom.duration_s = (double)(dcp_now_ns() - run.t0) / 1e9;
		prom.status = status;
		dcp_pr_prometheus_split(metrics, &prom, &prom_never);
	} else if (o->json) {
		size_t at;

		dcp_opts_input_records(&out);
		if (env.given && env.given->records)
			env.given->records(&out, env.given->arg);
		at = out.len;
		dcp_pr_summary_json_split(&out, &tot, never, env.min_cached,
				    (double)(dcp_now_ns() - run.t0) / 1e9, status);
		if (o->explain)
			dcp_why_table_row(&out, at, true, tot.why);
	} else if (stderr_summary()) {
		dcp_buf_puts(&err, program_invocation_name);
		dcp_buf_puts(&err, ": ");
		dcp_pr_summary_text_split(&err, &tot, never);
		if (o->explain) {
			dcp_buf_puts(&err, program_invocation_name);
			dcp_buf_puts(&err, ": ");
			dcp_why_counts_text(&err, tot.why);
		}
	}
	if (env.pages)
		pages_total(&out, &err, metrics, &ptot);
	if (metrics && dcp_prom_write(metrics, &out) < 0)
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "--prometheus");
	dcp_prom_free(metrics);
	flush_buf(&out);
	werr = atomic_load(&run.write_err);
	if (!werr && close(STDOUT_FILENO) < 0 && errno != EBADF)
		werr = -errno;
	if (werr) {
		/* A reader that went away (| head) wants no message. */
		if (werr != -EPIPE)
			dcp_warn(-werr, "write error");
		return DCP_EXIT_ERROR;
	}
	dcp_msg_buf(&err);
	if (env.given && env.given->abandon && *env.given->abandon) {
		/* Stopped before it was whole: FILE stays as it was (at_exit). */
		dcp_warn(0, "stopped: %s left as it was", o->output ? o->output : "the output");
		exit(DCP_EXIT_ERROR);
	}
	if (env.given && env.given->said) {
		ret = dcp_opts_finish(o, status);
		if (ret == status)
			env.given->said(&tot, &ptot, env.given->arg);
		return ret;
	}
	if (!env.ranges || !isatty(STDERR_FILENO))
		return dcp_opts_finish(o, status);
	snapshot_text(&err, &tot, &ptot);
	ret = dcp_opts_finish(o, status);
	if (ret == status) /* written whole: say what it holds */
		dcp_msg_buf(&err);
	dcp_buf_free(&err);
	return ret;
}
