// SPDX-License-Identifier: MIT
/*
 * pages.c - data residency of regular files (cachestat(2), else mincore(2)),
 * measured through a RESOLVE_CACHED open, and warming it on purpose.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dcp_mounts.h"
#include "dcp_pages.h"
#include "dcp_walk.h"
#include "dcp_probe.h"
#include "dcp_util.h"
#include "private/dcp_churn.h"
#include "private/dcp_fsid_cache.h"
#include "private/dcp_mounts_shared.h"
#include "private/dcp_ring.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* the same number on every architecture */
#endif
#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif
#ifndef RESOLVE_NO_XDEV
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#endif

/* The UAPI structures (linux/mman.h, 6.5), spelled out for old headers. */
struct dcp_cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct dcp_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

/* mincore(2) looks at this much of a file per mapping. */
#define MINCORE_WINDOW (64ULL << 20)

static _Atomic int method_found; /* enum dcp_pages_method, 0 until probed */

static long page_size(void)
{
	static _Atomic long ps; /* asked by any thread first */
	long p = atomic_load_explicit(&ps, memory_order_relaxed);

	if (!p) {
		p = sysconf(_SC_PAGESIZE);
		atomic_store_explicit(&ps, p, memory_order_relaxed);
	}
	return p;
}

static int sys_cachestat(int fd, uint64_t off, uint64_t len, struct dcp_cachestat *cs)
{
	struct dcp_cachestat_range r = { off, len };

	if (syscall(__NR_cachestat, fd, &r, cs, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Add to *RESIDENT the resident pages of FD's bytes [START, END) (START a
 * multiple of the page size), by mincore over read-only windows.
 */
/* Add the page at OFF (PS bytes) to RG, joined to the last range when they touch. */
static void range_add(struct dcp_pages_ranges *rg, uint64_t off, uint64_t ps)
{
	if (rg->n && rg->v[rg->n - 1][0] + rg->v[rg->n - 1][1] == off) {
		rg->v[rg->n - 1][1] += ps;
		return;
	}
	if (rg->n == rg->cap) {
		size_t cap = rg->cap ? rg->cap * 2 : 64;
		uint64_t (*v)[2] = realloc(rg->v, cap * sizeof(*v));

		if (!v) {
			rg->failed = -ENOMEM;
			return;
		}
		rg->v = v;
		rg->cap = cap;
	}
	rg->v[rg->n][0] = off;
	rg->v[rg->n++][1] = ps;
}

/* mincore_count()'s windows, each mapped, asked and unmapped in turn. */
static int mincore_windows(int fd, uint64_t start, uint64_t end, uint64_t *resident,
			   struct dcp_pages_ranges *rg)
{
	long ps = page_size();
	unsigned char vec[MINCORE_WINDOW / 4096];

	for (uint64_t off = start; off < end; off += MINCORE_WINDOW) {
		size_t len = end - off < MINCORE_WINDOW ? end - off : MINCORE_WINDOW;
		size_t npages = (len + ps - 1) / ps;
		unsigned char *v = npages <= sizeof(vec) ? vec : malloc(npages);
		void *m;
		int ret = 0;

		if (!v)
			return -ENOMEM;
		/* PROT_READ and no MAP_POPULATE: nothing is faulted in or read. */
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
		if (m == MAP_FAILED) {
			ret = -errno;
		} else {
			if (mincore(m, len, v) < 0)
				ret = -errno;
			munmap(m, len);
			dcp_ring_unmapped();
		}
		for (size_t i = 0; !ret && i < npages; i++) {
			*resident += v[i] & 1;
			if (rg && (v[i] & 1))
				range_add(rg, off + i * (uint64_t)ps, (uint64_t)ps);
		}
		if (v != vec)
			free(v);
		if (ret)
			return ret;
	}
	return 0;
}

/* mincore over [START, END) of FD: resident pages counted, and kept in RG too. */
static int mincore_count(int fd, uint64_t start, uint64_t end, uint64_t *resident,
			 struct dcp_pages_ranges *rg)
{
	/*
	 * A mapping updates the file's access time (mmap's file_accessed())
	 * unless the open file says O_NOATIME: set for the count and put back,
	 * where the kernel allows it (the file's owner, or CAP_FOWNER; for
	 * anyone else relatime's rule still applies, dcprobe(7)).
	 */
	int fl = fcntl(fd, F_GETFL);
	bool noatime = fl >= 0 && !(fl & O_NOATIME) && fcntl(fd, F_SETFL, fl | O_NOATIME) == 0;
	int ret = mincore_windows(fd, start, end, resident, rg);

	if (noatime)
		(void)fcntl(fd, F_SETFL, fl);
	return ret;
}

int dcp_pages_support(void)
{
	struct dcp_cachestat cs;
	int m = atomic_load(&method_found), fd, ret;
	uint64_t res;

	if (m)
		return m;
	fd = memfd_create("dcprobe-pages", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, page_size()) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = sys_cachestat(fd, 0, 0, &cs);
	if (ret == 0) {
		m = DCP_PAGES_CACHESTAT;
	} else {
		res = 0;
		ret = mincore_count(fd, 0, (uint64_t)page_size(), &res, NULL);
		if (ret == 0)
			m = DCP_PAGES_MINCORE;
	}
	close(fd);
	if (!m)
		return ret;
	atomic_store(&method_found, m);
	return m;
}

const char *dcp_pages_unsupported_reason(int err)
{
	static __thread char msg[160];

	snprintf(msg, sizeof(msg), "cannot measure page-cache residency here: neither "
		 "cachestat(2) nor mincore(2) works (%s)", strerror(err < 0 ? -err : err));
	return msg;
}

const char *dcp_pages_method_name(enum dcp_pages_method m)
{
	switch (m) {
	case DCP_PAGES_CACHESTAT: return "cachestat";
	case DCP_PAGES_MINCORE: return "mincore";
	default: return "none";
	}
}

/*
 * Since Linux 5.2 mincore() tells about a file's page cache only to a
 * caller who owns it or may write it: anyone else is told that every page
 * is resident, evicted or not (fincore(1) run as nobody shows a root file
 * just evicted as wholly resident).  cachestat() refuses such callers with
 * EPERM on recent kernels; mincore() would lie silently, so refuse.
 */
static bool may_see_residency(int fd, const struct stat *st)
{
	if (geteuid() == 0 || st->st_uid == geteuid())
		return true;
	return faccessat(fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

/*
 * A sparse file: its size is more than SPARSE_SLACK past what it has
 * allocated.  Its data extents are then found with SEEK_DATA/SEEK_HOLE, so
 * that measuring (without cachestat) and warming cost what the file holds,
 * never its apparent size (truncate -s 1T costs nothing).  Any other file
 * is taken whole: no lseek for the common case.
 */
#define SPARSE_SLACK (1ULL << 20)

static bool is_sparse(const struct stat *st)
{
	return (uint64_t)st->st_size > (uint64_t)st->st_blocks * 512 + SPARSE_SLACK;
}

/*
 * The next data extent of FD at or after *POS and below SIZE, into *OFF
 * and *LEN; *POS moves past it.  Returns 1, 0 when there is no more data,
 * or -errno.
 */
static int next_data(int fd, uint64_t size, uint64_t *pos, uint64_t *off, uint64_t *len)
{
	off_t d, h;

	if (*pos >= size)
		return 0;
	d = lseek(fd, (off_t)*pos, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? 0 : -errno;
	if ((uint64_t)d >= size)
		return 0;
	h = lseek(fd, d, SEEK_HOLE);
	if (h < 0)
		return errno == ENXIO ? 0 : -errno; /* truncated meanwhile */
	if (h <= d)
		return 0; /* changed meanwhile: no extent to move past */
	*off = (uint64_t)d;
	*len = ((uint64_t)h < size ? (uint64_t)h : size) - (uint64_t)d;
	*pos = (uint64_t)d + *len;
	return 1;
}

/* mincore over the data extents of FD (SIZE bytes): pages in holes are not asked. */
static int mincore_sparse(int fd, uint64_t size, uint64_t *resident,
			  struct dcp_pages_ranges *rg)
{
	uint64_t ps = (uint64_t)page_size(), pos = 0, off = 0, len = 0, done = 0;
	int ret;

	while ((ret = next_data(fd, size, &pos, &off, &len)) == 1) {
		uint64_t start = off / ps * ps, end = (off + len + ps - 1) / ps * ps;

		if (end > (size + ps - 1) / ps * ps)
			end = (size + ps - 1) / ps * ps;
		if (start < done)
			start = done; /* a page two extents share counts once */
		if (start < end && (ret = mincore_count(fd, start, end, resident, rg)) < 0)
			return ret;
		if (end > done)
			done = end;
	}
	return ret;
}

/*
 * The bytes of RESIDENT pages of FD's [S, E) (page-aligned) whose file is
 * SIZE bytes long: whole pages, but the file's last page counts only up to
 * the end of the file, so that resident bytes never exceed the size (a
 * 2003-byte file wholly in memory holds 2003 bytes, not 4096).  Whether
 * that page is resident is asked (METHOD's way, one page) only when the
 * count alone cannot tell; if it cannot be asked, the bytes past the end
 * are left out all the same.
 */
static uint64_t resident_bytes(int fd, int method, uint64_t s, uint64_t e, uint64_t size,
			       uint64_t resident)
{
	uint64_t ps = (uint64_t)page_size(), bytes = resident * ps, tail = e - ps, r = 0;
	struct dcp_cachestat cs = { 0 };
	bool last;

	if (e <= size || !resident || e - s < ps)
		return bytes; /* the range does not hold the file's partial last page */
	if (resident >= (e - s) / ps)
		last = true; /* all resident: the last page too */
	else if (method == DCP_PAGES_CACHESTAT)
		last = sys_cachestat(fd, tail, ps, &cs) < 0 || cs.nr_cache > 0;
	else /* the caller measured by mincore: the caller may see it */
		last = mincore_count(fd, tail, size, &r, NULL) < 0 || r > 0;
	if (last)
		bytes -= e - size;
	return bytes;
}

/* Measure FD, whose fstat is ST (a regular file). */
static int pages_of(int fd, const struct stat *stp, struct dcp_pages *out)
{
	struct dcp_cachestat cs = { 0 };
	const struct stat st = *stp;
	long ps = page_size();
	int m, ret;

	m = dcp_pages_support();
	if (m < 0)
		return m;
	out->size = (uint64_t)st.st_size;
	out->pages = (out->size + (uint64_t)ps - 1) / (uint64_t)ps;
	out->method = m;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->nlink = (uint64_t)st.st_nlink;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (m == DCP_PAGES_CACHESTAT) {
		/* Length 0 would mean "to the end of the file": nothing to ask. */
		if (!out->size)
			return 0;
		ret = sys_cachestat(fd, 0, out->size, &cs);
		if (ret == 0) {
			out->resident = cs.nr_cache;
			out->dirty = cs.nr_dirty;
			out->writeback = cs.nr_writeback;
			out->evicted = cs.nr_evicted;
			out->recently_evicted = cs.nr_recently_evicted;
			/* A file truncated meanwhile: never more than it spans. */
			if (out->resident > out->pages)
				out->resident = out->pages;
			out->resident_bytes = resident_bytes(fd, m, 0, out->pages * (uint64_t)ps,
							     out->size, out->resident);
			return 0;
		}
		if (ret != -ENOSYS)
			return ret;
		/* A filter or an old kernel after all: fall back for good. */
		atomic_store(&method_found, DCP_PAGES_MINCORE);
		out->method = DCP_PAGES_MINCORE;
	}
	if (!may_see_residency(fd, &st))
		return -EPERM;
	if (is_sparse(&st))
		ret = mincore_sparse(fd, out->size, &out->resident, NULL);
	else
		ret = mincore_count(fd, 0, out->size, &out->resident, NULL);
	if (ret == 0)
		out->resident_bytes = resident_bytes(fd, out->method, 0,
						     out->pages * (uint64_t)ps, out->size,
						     out->resident);
	return ret;
}

/*
 * Join RG's ranges closest to each other until at most DCP_PAGES_MAX_RANGES
 * remain: gaps of one page first, then of two, four...  The ranges then
 * hold every resident page and some that are not (what a restore reads of
 * the file grows by the gaps), and a manifest's record stays bounded.
 */
static void ranges_cap(struct dcp_pages_ranges *rg)
{
	for (uint64_t gap = (uint64_t)page_size(); rg->n > DCP_PAGES_MAX_RANGES; gap *= 2) {
		size_t k = 0;

		for (size_t i = 1; i < rg->n; i++) {
			uint64_t end = rg->v[k][0] + rg->v[k][1];

			if (rg->v[i][0] - end <= gap) {
				rg->v[k][1] = rg->v[i][0] + rg->v[i][1] - rg->v[k][0];
			} else {
				k++;
				rg->v[k][0] = rg->v[i][0];
				rg->v[k][1] = rg->v[i][1];
			}
		}
		rg->n = k + 1;
	}
}

/*
 * The resident ranges of FD (fstat ST), by mincore: asks nothing of the
 * disk.  Only after pages_of() measured FD: the caller may see its residency.
 */
static int ranges_of(int fd, const struct stat *st, struct dcp_pages_ranges *rg)
{
	uint64_t resident = 0, size = (uint64_t)st->st_size;
	int ret;

	rg->n = 0;
	rg->failed = 0;
	if (is_sparse(st))
		ret = mincore_sparse(fd, size, &resident, rg);
	else
		ret = mincore_count(fd, 0, size, &resident, rg);
	if (ret < 0 || rg->failed) {
		rg->failed = ret < 0 ? ret : rg->failed;
		rg->n = 0;
	}
	ranges_cap(rg);
	return rg->failed;
}

/*
 * The run's claim set: the one registry of "count this inode once" (by
 * device and inode), for every total, every read of warm and every restore
 * of the run.  It holds the inodes a run may meet by another path
 * (may_meet_again()), in shards that each have a lock and an
 * open-addressing table: a file with one name on a filesystem mounted
 * once, nearly all of them, costs nothing here.
 */
#define LINK_SHARDS 64

struct link_key {
	uint64_t dev, ino;
};

struct link_shard {
	pthread_mutex_t mu;
	struct link_key *v; /* ino 0 (no file has it): empty */
	size_t n, cap;
};

/*
 * One measuring context (dcp_pages.h): what a run keeps between the files
 * it measures, and nothing the process shares with another run.
 */
struct dcp_pages_run {
	struct link_shard shards[LINK_SHARDS]; /* the inodes claimed in this run */
	_Atomic int proc_fd;	/* /proc/self/fd (O_PATH) once needed; -2 not yet */
	pthread_mutex_t proc_mu; /* opening it */
	pid_t owner;		/* the process that opened it */
	unsigned close_batch;	/* 0: close at once (few descriptors allowed) */
	const struct dcp_mounts *mounts; /* the caller's, or own_mounts */
	struct dcp_mounts *own_mounts;
	struct fsid_cache fsid; /* what the block devices said of their UUIDs */
};

static uint64_t link_hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	return h ^ (h >> 32);
}

/* Insert KEY into S (locked, with room); false when it was there. */
static bool link_insert(struct link_shard *s, struct link_key k, uint64_t h)
{
	for (size_t i = (h >> 6) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		if (!s->v[i].ino) {
			s->v[i] = k;
			s->n++;
			return true;
		}
		if (s->v[i].ino == k.ino && s->v[i].dev == k.dev)
			return false;
	}
}

/* True the first time DEV:INO is seen in run R (and when out of memory). */
static bool link_first(struct dcp_pages_run *r, uint64_t dev, uint64_t ino)
{
	struct link_key k = { dev, ino ? ino : ~0ULL };
	uint64_t h = link_hash(k.dev, k.ino);
	struct link_shard *s = &r->shards[h % LINK_SHARDS];
	bool first = true;

	pthread_mutex_lock(&s->mu);
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct link_key *old = s->v, *v = calloc(cap, sizeof(*v));
		size_t ocap = s->cap;

		if (v) {
			s->v = v;
			s->cap = cap;
			s->n = 0;
			for (size_t i = 0; i < ocap; i++)
				if (old[i].ino)
					link_insert(s, old[i], link_hash(old[i].dev, old[i].ino));
			free(old);
		}
	}
	if (2 * (s->n + 1) <= s->cap)
		first = link_insert(s, k, h);
	pthread_mutex_unlock(&s->mu);
	return first;
}

/*
 * THE rule: may run R meet the inode on DEV with NLINK names by another
 * path, so that it must be remembered to count (read, restore) once?  Yes
 * when it has several names (hard links), when ANY (under -L every path
 * may lead to it), and when its filesystem is shown by two mounts that
 * overlap (a bind mount of a directory inside the tree walked, or two
 * roots on two mounts of one filesystem): the same st_dev and st_ino by
 * another path, which a single-link file then has too.  The walker's
 * repeat rule (dcp_entry.again: a directory another root listed) and root
 * aliasing decide which *paths* count; this decides which *data* does.
 */
static bool may_meet_again(const struct dcp_pages_run *r, uint64_t dev, uint64_t nlink, bool any)
{
	return nlink > 1 || any || mounts_dev_shared(r->mounts, (dev_t)dev);
}

bool dcp_pages_shared(const struct dcp_pages_run *r, const struct dcp_pages *p)
{
	return may_meet_again(r, p->dev, p->nlink, false);
}

/* Claim P's inode if it may be met again (ANY: by several paths, -L). */
static bool claim(struct dcp_pages_run *r, struct dcp_pages *p, bool any)
{
	p->again = may_meet_again(r, p->dev, p->nlink, any) && !link_first(r, p->dev, p->ino);
	return !p->again;
}

bool dcp_pages_claim(struct dcp_pages_run *r, struct dcp_pages *p)
{
	return claim(r, p, false);
}

bool dcp_pages_claim_any(struct dcp_pages_run *r, struct dcp_pages *p)
{
	return claim(r, p, true);
}

int dcp_pages_fd(int fd, struct dcp_pages *out)
{
	struct stat st;

	*out = (struct dcp_pages){ 0 };
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENODEV;
	return pages_of(fd, &st, out);
}

/*
 * One io_uring per thread, made on first use and freed with the thread:
 * DCP_PAGES_WARM_URING reads through it, and dcp_pages_at() hands it the
 * closes of the files it measured, CLOSE_BATCH at a time (one system call
 * instead of sixteen: system calls are most of what measuring costs).
 */
#define URING_DEPTH 32
#define CLOSE_TAG UINT64_MAX /* user_data of a close: no one waits for it */

struct uring_slot {
	struct io_uring ring;
	bool ok;
	unsigned pending; /* closes queued, not yet submitted */
};

static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;

/* Submit what is queued and drop the completions of closes. */
static void ring_flush(struct uring_slot *s)
{
	struct io_uring_cqe *cqe;

	if (s->pending && io_uring_submit(&s->ring) >= 0)
		s->pending = 0;
	while (io_uring_peek_cqe(&s->ring, &cqe) == 0)
		io_uring_cqe_seen(&s->ring, cqe);
}

static void ring_free(void *p)
{
	struct uring_slot *s = p;

	if (s->ok) {
		ring_flush(s);
		dcp_ring_exit(&s->ring);
	}
	free(s);
}

static void ring_init(void)
{
	pthread_key_create(&ring_key, ring_free);
}

unsigned dcp_pages_fds_per_thread(const struct dcp_pages_run *r)
{
	/* The O_PATH look, the descriptor read, the ring, its queued closes. */
	return 3 + r->close_batch;
}

static struct uring_slot *thread_slot(void)
{
	struct uring_slot *s;

	pthread_once(&ring_once, ring_init);
	s = pthread_getspecific(ring_key);
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->ok = io_uring_queue_init(URING_DEPTH, &s->ring, 0) == 0;
		if (s->ok)
			dcp_ring_fresh(&s->ring);
		if (pthread_setspecific(ring_key, s)) {
			ring_free(s);
			return NULL;
		}
	}
	return s;
}

static struct io_uring *thread_ring(void)
{
	struct uring_slot *s = thread_slot();

	return s && s->ok ? &s->ring : NULL;
}

/* close(FD), batched through the thread's ring where R allows it. */
static void close_later(struct dcp_pages_run *r, int fd)
{
	struct uring_slot *s;
	struct io_uring_sqe *sqe;

#ifdef DCP_RING_TSAN
	/* ThreadSanitizer sees no close submitted through io_uring: it would
	 * take the descriptor's next owner for a race with this one. */
	(void)r;
	s = NULL;
#else
	s = r->close_batch ? thread_slot() : NULL;
#endif
	sqe = s && s->ok ? io_uring_get_sqe(&s->ring) : NULL;
	if (!sqe) {
		close(fd);
		return;
	}
	io_uring_prep_close(sqe, fd);
	io_uring_sqe_set_data64(sqe, CLOSE_TAG);
	if (++s->pending >= r->close_batch)
		ring_flush(s);
}

/*
 * The run's /proc/self/fd, opened the first time a file is reopened
 * through it (a run that never needs it holds no descriptor for it) and
 * closed by dcp_pages_run_free(): reopening descriptor N through it is one
 * lookup in that directory, where /proc/self/fd/N would walk four
 * components each time.  In a child after fork (another pid: the parent's
 * table must never be used) one is opened for the call, *TEMP set to it
 * for the caller to close.  -1 without /proc.
 */
static int proc_fd_dir(struct dcp_pages_run *r, int *temp)
{
	int fd;

	*temp = -1;
	if (r->owner != getpid()) {
		*temp = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return *temp;
	}
	fd = atomic_load_explicit(&r->proc_fd, memory_order_acquire);
	if (fd != -2)
		return fd;
	pthread_mutex_lock(&r->proc_mu);
	fd = atomic_load_explicit(&r->proc_fd, memory_order_relaxed);
	if (fd == -2) {
		fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		atomic_store_explicit(&r->proc_fd, fd < 0 ? -1 : fd, memory_order_release);
	}
	pthread_mutex_unlock(&r->proc_mu);
	return fd;
}

int dcp_pages_run_new(const struct dcp_pages_run_opts *o, struct dcp_pages_run **out)
{
	struct dcp_pages_run *r = calloc(1, sizeof(*r));
	struct rlimit rl;
	int ret;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->proc_fd = -2;
	pthread_mutex_init(&r->proc_mu, NULL);
	pthread_mutex_init(&r->fsid.mu, NULL);
	for (size_t i = 0; i < LINK_SHARDS; i++)
		pthread_mutex_init(&r->shards[i].mu, NULL);
	r->mounts = o ? o->mounts : NULL;
	if (!r->mounts) {
		/* On the caller's thread, never on a worker (a static program's
		 * dlopen of libmount works on the main thread only). */
		ret = dcp_mounts_load(NULL, &r->own_mounts);
		if (ret < 0) {
			dcp_pages_run_free(r);
			return ret;
		}
		r->mounts = r->own_mounts;
	}
	/*
	 * Queued closes hold descriptors: only under a roomy limit, and
	 * counted in every thread's share (dcp_pages_fds_per_thread()), so a
	 * walker under 1024 (systemd's soft limit) keeps all its threads.
	 * The limit as it is at the run's start.
	 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		r->close_batch = rl.rlim_cur >= 4096 ? 16 : 0;
	else
		r->close_batch = 16;
	r->owner = getpid();
	*out = r;
	return 0;
}

void dcp_pages_run_free(struct dcp_pages_run *r)
{
	if (!r)
		return;
	/* The calling thread's queued closes: none of the run's left open
	 * (a thread that ends closes its own). */
	if (r->close_batch) {
		struct uring_slot *s;

		pthread_once(&ring_once, ring_init);
		s = pthread_getspecific(ring_key);
		if (s && s->ok)
			ring_flush(s);
	}
	for (size_t i = 0; i < LINK_SHARDS; i++) {
		free(r->shards[i].v);
		pthread_mutex_destroy(&r->shards[i].mu);
	}
	if (r->proc_fd >= 0 && r->owner == getpid())
		close(r->proc_fd);
	pthread_mutex_destroy(&r->proc_mu);
	pthread_mutex_destroy(&r->fsid.mu);
	dcp_mounts_free(r->own_mounts);
	free(r);
}

/*
 * May the object that STX describes be opened without waiting on a daemon
 * or a server?  Decided by the mount it is on (its mount ID, from the same
 * statx, which asks the filesystem nothing): not FUSE, NFS, CIFS...  A
 * mount missing from the table (made after it was read), or a kernel that
 * cannot tell the mount ID, is not known to be safe.
 */
static bool reached_opens_safely(const struct dcp_pages_run *r, const struct statx *stx)
{
	struct dcp_mount mt;

	if (!(stx->stx_mask & STATX_MNT_ID))
		return false;
	return r->mounts && dcp_mounts_by_id(r->mounts, stx->stx_mnt_id, &mt) == 0 &&
	       dcp_pages_fstype_opens_safely(mt.fstype);
}

/* A mount where a lookup may wait, for dcp_walk_lookup() (reached_opens_safely()). */
static int judge_mount(uint64_t mnt_id, void *arg)
{
	const struct dcp_pages_run *r = arg;
	struct dcp_mount mt;

	return r->mounts && dcp_mounts_by_id(r->mounts, mnt_id, &mt) == 0 &&
			       dcp_pages_fstype_opens_safely(mt.fstype) ?
		       DCP_WALK_MOUNT_ENTER : DCP_WALK_MOUNT_UNSAFE;
}

/*
 * The f_type (statfs(2)) of the pseudo filesystems (DCP_FS_PSEUDO_TYPES:
 * files the kernel makes up, where reading may have effects or reveal
 * what it should not) and of those where an open or a read may wait on a
 * daemon or a server (dcp_pages_fstype_opens_safely()).  Spelled out: old
 * headers lack some of them.
 */
static bool magic_refused(unsigned long type)
{
	static const unsigned long refused[] = {
		0x9fa0,	    /* proc */
		0x62656572, /* sysfs */
		0x27e0eb,   /* cgroup */
		0x63677270, /* cgroup2 */
		0x64626720, /* debugfs */
		0x74726163, /* tracefs */
		0x73636673, /* securityfs */
		0x6165676c, /* pstore */
		0xcafe4a11, /* bpf */
		0x62656570, /* configfs */
		0x65735543, /* fusectl */
		0x42494e4d, /* binfmt_misc */
		0xde5e81e4, /* efivarfs */
		0xf97cff8c, /* selinuxfs */
		0x43415d53, /* smackfs */
		0x19800202, /* mqueue */
		0x1cd1,	    /* devpts */
		0x0187,	    /* autofs */
		0x67596969, /* rpc_pipefs */
		0x6e736673, /* nsfs */
		0x958458f6, /* hugetlbfs */
		0x6e667364, /* nfsd */
		0x65735546, /* fuse, fuseblk, virtiofs */
		0x6969,	    /* nfs */
		0xff534d42, /* cifs */
		0xfe534d42, /* smb2 */
		0x517b,	    /* smbfs */
		0x01021997, /* 9p */
		0x00c36400, /* ceph */
		0x5346414f, /* afs */
		0x6b414653, /* kafs */
		0x73757245, /* coda */
		0x01161970, /* gfs2 */
		0x7461636f, /* ocfs2 */
		0x0bd00bd0, /* lustre */
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if ((type & 0xffffffffUL) == refused[i])
			return true;
	return false;
}

const char *dcp_pages_stale_text(enum dcp_pages_stale why)
{
	switch (why) {
	case DCP_PAGES_STALE_FS: return "another filesystem";
	case DCP_PAGES_STALE_DEV: return "another device number";
	case DCP_PAGES_STALE_FILE: return "another file of the same name";
	case DCP_PAGES_STALE_UNTOLD: return "cannot be told from another file now";
	case DCP_PAGES_STALE_CONTENT: return "size or mtime changed";
	case DCP_PAGES_STALE_TYPE: return "not a regular file now";
	default: return NULL;
	}
}

/*
 * Is the object the O_PATH descriptor PFD holds (its statx STX) the file
 * ID recorded, as far as PFD tells without opening anything?  Its device
 * number when no filesystem UUID was recorded (format 1, a filesystem
 * without one; else the UUID is asked of the reopened descriptor:
 * identity_fs()); its inode number and, when one was recorded, its handle
 * (name_to_handle_at takes an O_PATH descriptor: the inode's generation on
 * ext4 and xfs, its subvolume on btrfs); its size and mtime.  Returns
 * DCP_PAGES_STALE_NONE or why not.
 */
static enum dcp_pages_stale identity_of_path(int pfd, const struct statx *stx,
					     const struct dcp_pages_identity *id)
{
	if (id->fs.from == DCP_FSID_NONE &&
	    (uint64_t)makedev(stx->stx_dev_major, stx->stx_dev_minor) != id->dev)
		return DCP_PAGES_STALE_DEV;
	if (stx->stx_ino != id->ino)
		return DCP_PAGES_STALE_FILE;
	if (id->handle_len) {
		struct dcp_handle h;

		if (dcp_handle_of(pfd, &h) < 0)
			return DCP_PAGES_STALE_UNTOLD;
		if (h.type != id->handle_type || h.len != id->handle_len ||
		    memcmp(h.bytes, id->handle, h.len))
			return DCP_PAGES_STALE_FILE;
	}
	if (stx->stx_size != id->size ||
	    (int64_t)stx->stx_mtime.tv_sec * 1000000000 + stx->stx_mtime.tv_nsec != id->mtime_ns)
		return DCP_PAGES_STALE_CONTENT;
	return DCP_PAGES_STALE_NONE;
}

/*
 * The rest of ID once FD, the reopened descriptor of a file that
 * identity_of_path() passed, is open (nothing read yet, nothing
 * measured): its filesystem's UUID when one was recorded
 * (dcp_fsid_of()'s ioctls take no O_PATH descriptor; a device read for
 * it is read once per device in the run: R's cache),
 * and its size and mtime again (ST, its fstat), which a write between the
 * two may have changed.
 */
static enum dcp_pages_stale identity_fs(struct dcp_pages_run *r, int fd, const struct stat *st,
					const struct dcp_pages_identity *id)
{
	if (id->fs.from != DCP_FSID_NONE) {
		struct dcp_fsid now;

		if (fsid_of_cached(&r->fsid, fd, &now) < 0 || !dcp_fsid_equal(&now, &id->fs))
			return DCP_PAGES_STALE_FS;
	}
	if ((uint64_t)st->st_size != id->size ||
	    (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec != id->mtime_ns)
		return DCP_PAGES_STALE_CONTENT;
	return DCP_PAGES_STALE_NONE;
}

/*
 * A manifest's file (a manifest is input anyone may have written): may
 * the object that the O_PATH descriptor PFD holds (its statx in STX) be
 * opened for reading?  Decided before anything is opened, from PFD alone:
 *   - it is the file recorded, ID, as far as PFD tells
 *     (identity_of_path(): handle, inode, size, mtime; device number when
 *     no UUID was recorded): -ESTALE, why in *WHY;
 *   - its mount (by its mount ID, in the table: no I/O) is one where an
 *     open does not wait (not FUSE, NFS...) and not a mount the table
 *     lacks: -EREMOTE; nor a pseudo filesystem (proc, sysfs...):
 *     -EOPNOTSUPP (no table at all: why, -ENOMEM...);
 *   - its own superblock says the same (fstatfs of PFD, asked only now
 *     that the mount is known not to ask a daemon): -EOPNOTSUPP.
 */
static int manifest_may_open(const struct dcp_pages_run *r, int pfd, const struct statx *stx,
			     const struct dcp_pages_identity *id, enum dcp_pages_stale *why)
{
	struct dcp_mount mt;
	struct statfs sfs;

	if (!(stx->stx_mask & STATX_MNT_ID))
		return -EREMOTE;
	if (!r->mounts)
		return -EIO; /* not "FUSE": an error */
	if (dcp_mounts_by_id(r->mounts, stx->stx_mnt_id, &mt) < 0 ||
	    !dcp_pages_fstype_opens_safely(mt.fstype))
		return -EREMOTE;
	if (dcp_fs_is_pseudo(mt.fstype))
		return -EOPNOTSUPP;
	*why = identity_of_path(pfd, stx, id);
	if (*why != DCP_PAGES_STALE_NONE)
		return -ESTALE;
	if (fstatfs(pfd, &sfs) < 0)
		return -errno;
	if (magic_refused((unsigned long)sfs.f_type))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * Open NAME for reading only if it is a regular file, without a race: look
 * it up once, O_PATH (which opens nothing), check the type on that
 * descriptor, and open *that descriptor* again through /proc/self/fd.  A
 * rename between the look and the open (a FIFO or a device swapped in for
 * the file) cannot change what is opened: the name is never looked up
 * twice.  CACHED: the lookup uses RESOLVE_CACHED (no I/O).  The type comes
 * from statx without syncing, so a network or FUSE filesystem is not asked.
 * ID: a manifest's file, checked by manifest_may_open() before the reopen,
 * its filesystem's UUID after it (identity_fs()), before anything is read;
 * why it is not ID in *WHY.
 * Returns the descriptor (its fstat in *AFTER), -ENODEV when it is not a
 * regular file, -EREMOTE when its mount may wait (CACHED or ID only),
 * -ESTALE or -EOPNOTSUPP (ID only), -ENOMEDIUM
 * when it cannot be reopened (no /proc: unknown, never opened by name), or
 * -errno.
 */
static int open_checked_how(struct dcp_pages_run *r, int dirfd, const char *name,
			    unsigned flags, bool cached, unsigned long long more,
			    const struct dcp_pages_identity *id, enum dcp_pages_stale *why,
			    struct stat *after)
{
	unsigned long long nofollow = (flags & DCP_PAGES_FOLLOW) ? 0 : O_NOFOLLOW;
	unsigned long long resolve = (cached ? RESOLVE_CACHED : 0) | more;
	char num[16];
	struct statx stx;
	int pfd, fd, dir, temp, ret;

	if ((flags & DCP_PAGES_ISREG) && (flags & DCP_PAGES_DIR_PRIVATE) && !more && !id) {
		/* Nobody else renames here: the name getdents64 typed is the file. */
		/* Its probe said cached: a miss is the mount table changing. */
		fd = cached ? churn_openat2(dirfd, name,
					    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | nofollow,
					    resolve, NULL) :
			      dcp_openat2(dirfd, name,
					  O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | nofollow, 0,
					  resolve);
		if (fd >= 0 && (fstat(fd, after) < 0 || !S_ISREG(after->st_mode))) {
			close(fd);
			return -ENODEV;
		}
		return fd;
	}
	if (!cached && !more && !nofollow) {
		/* A link followed to be read: never looking a name up on a
		 * mount where that may wait (a stopped FUSE daemon). */
		pfd = dcp_walk_lookup(dirfd, name, true, judge_mount, r, NULL);
	} else {
		/* A mount or umount anywhere fails a cached walk too: asked again. */
		pfd = cached ? churn_openat2(dirfd, name, O_PATH | O_CLOEXEC | nofollow, resolve, NULL) :
			       dcp_openat2(dirfd, name, O_PATH | O_CLOEXEC | nofollow, 0, resolve);
	}
	if (pfd < 0)
		return pfd;
	if (statx(pfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_INO | STATX_MNT_ID | (id ? STATX_SIZE | STATX_MTIME : 0),
		  &stx) < 0) {
		ret = -errno;
		close(pfd);
		return ret;
	}
	if (!S_ISREG(stx.stx_mode)) {
		close(pfd);
		return -ENODEV; /* a FIFO, a device, a link not followed... */
	}
	/* A measurement never waits: the mount reached, not the one named. */
	ret = id ? manifest_may_open(r, pfd, &stx, id, why) :
	      cached && !reached_opens_safely(r, &stx) ? -EREMOTE : 0;
	if (ret < 0) {
		close(pfd);
		return ret;
	}
	snprintf(num, sizeof(num), "%d", pfd);
	dir = proc_fd_dir(r, &temp);
	fd = dir < 0 ? -ENOMEDIUM : openat(dir, num, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1)
		fd = -errno;
	if (temp >= 0)
		close(temp);
	close(pfd);
	if (fd < 0)
		return fd;
	if (fstat(fd, after) < 0 || !S_ISREG(after->st_mode) ||
	    after->st_ino != stx.stx_ino ||
	    major(after->st_dev) != stx.stx_dev_major || minor(after->st_dev) != stx.stx_dev_minor) {
		close(fd);
		return -ENODEV;
	}
	if (id && (*why = identity_fs(r, fd, after, id)) != DCP_PAGES_STALE_NONE) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static int open_checked(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
			bool cached, struct stat *after)
{
	return open_checked_how(r, dirfd, name, flags, cached, 0, NULL, NULL, after);
}

bool dcp_pages_dir_private(uid_t uid, mode_t mode)
{
	return uid == geteuid() && !(mode & (S_IWGRP | S_IWOTH));
}

/* dcp_pages_open_at(), keeping the fstat after the open in *AFTER. */
static int open_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
		   struct stat *after)
{
	return open_checked(r, dirfd, name, flags, true, after);
}

int dcp_pages_open_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags)
{
	struct stat st;

	return open_at(r, dirfd, name, flags, &st);
}

int dcp_pages_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
		 struct dcp_pages *out)
{
	return dcp_pages_at_ranges(r, dirfd, name, flags, out, NULL);
}

int dcp_pages_at_ranges(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
			struct dcp_pages *out, struct dcp_pages_ranges *rg)
{
	struct stat st;
	int fd = open_at(r, dirfd, name, flags, &st), ret;

	*out = (struct dcp_pages){ 0 };
	if (rg) {
		rg->n = 0;
		rg->failed = -ENODATA;
		rg->fs.from = DCP_FSID_NONE;
		rg->handle.len = 0;
	}
	if (fd < 0)
		return fd;
	/* One fstat for both the type check and the size: syscalls are the cost. */
	ret = pages_of(fd, &st, out);
	if (ret == 0 && rg) {
		/* cachestat's totals settle the common cases without a mapping:
		 * nothing resident, or all of a file without holes to leave out. */
		if (out->method == DCP_PAGES_CACHESTAT && !out->resident) {
			rg->failed = 0;
		} else if (out->method == DCP_PAGES_CACHESTAT && out->resident == out->pages &&
			   !is_sparse(&st)) {
			rg->failed = 0;
			range_add(rg, 0, out->pages * (uint64_t)page_size());
		} else {
			ranges_of(fd, &st, rg);
		}
		/* What tells this file after a reboot: only a file a manifest
		 * will restore data of needs it (one ioctl and one handle). */
		if (!rg->failed && rg->n) {
			fsid_of_cached(&r->fsid, fd, &rg->fs);
			if (dcp_handle_of(fd, &rg->handle) < 0)
				rg->handle.len = 0;
		}
	}
	close_later(r, fd);
	if (ret == 0 && !(flags & DCP_PAGES_NO_CLAIM))
		claim(r, out, flags & DCP_PAGES_ONCE);
	return ret;
}

void dcp_pages_ranges_free(struct dcp_pages_ranges *rg)
{
	free(rg->v);
	*rg = (struct dcp_pages_ranges){ 0 };
}

void dcp_pages_json_ranges(struct dcp_buf *b, const struct dcp_pages *p,
			   const struct dcp_pages_ranges *rg, long fs)
{
	/* Nothing resident: nothing to restore but its name, no identity. */
	if (!rg->failed && !rg->n) {
		dcp_buf_puts(b, ",\"ranges\":[]");
		return;
	}
	dcp_buf_puts(b, ",\"identity\":{");
	if (fs >= 0)
		dcp_buf_printf(b, "\"fs\":%ld,", fs);
	dcp_buf_printf(b, "\"dev\":\"%u:%u\",\"ino\":%llu", major((dev_t)p->dev),
		       minor((dev_t)p->dev), (unsigned long long)p->ino);
	if (!rg->failed && rg->handle.len) {
		char h[DCP_HANDLE_TEXT];

		dcp_handle_text(&rg->handle, h);
		dcp_buf_printf(b, ",\"handle\":\"%s\"", h);
	}
	dcp_buf_printf(b, ",\"size\":%llu,\"mtime_ns\":%lld},\"ranges\":",
		       (unsigned long long)p->size, (long long)p->mtime_ns);
	if (rg->failed) {
		dcp_buf_puts(b, "null");
		return;
	}
	dcp_buf_putc(b, '[');
	for (size_t i = 0; i < rg->n; i++)
		dcp_buf_printf(b, "%s[%llu,%llu]", i ? "," : "", (unsigned long long)rg->v[i][0],
			       (unsigned long long)rg->v[i][1]);
	dcp_buf_putc(b, ']');
}

bool dcp_pages_fstype_opens_safely(const char *fstype)
{
	static const char *const unsafe[] = {
		"fuse", "fuseblk", "virtiofs", "nfs", "nfs4", "cifs", "smb3", "smbfs",
		"9p", "ceph", "afs", "glusterfs", "lustre", "ocfs2", "gfs2", "ncpfs",
	};

	if (!fstype)
		return true;
	if (!strncmp(fstype, "fuse.", 5))
		return false;
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++)
		if (!strcmp(fstype, unsafe[i]))
			return false;
	return true;
}

const char *dcp_pages_unknown_reason(int ret)
{
	switch (ret) {
	case -EAGAIN: return "lookup";
	case -EREMOTE: return "filesystem";
	case -EPERM:
	case -EACCES: return "permission";
	case -ENOMEDIUM: return "no_proc";
	default: return NULL;
	}
}

const char *dcp_pages_error_message(int ret)
{
	return ret == -ESTALE ? DCP_PAGES_MSG_CHANGED : strerror(-ret);
}

enum dcp_pages_state dcp_pages_state_of(int ret)
{
	if (ret == 0)
		return DCP_PAGES_MEASURED;
	if (dcp_pages_unknown_reason(ret))
		return DCP_PAGES_UNKNOWN;
	if (ret == -ENODEV)
		return DCP_PAGES_SKIPPED;
	return DCP_PAGES_FAILED;
}

/* ---- counts ---- */

/*
 * The method of a sum: mincore as soon as one file was measured by it (a
 * fallback met in the middle of a run: those figures have no dirty,
 * writeback or evictions), else cachestat when one file was, else none.
 */
static enum dcp_pages_method counts_method(enum dcp_pages_method a, enum dcp_pages_method b)
{
	if (a == DCP_PAGES_MINCORE || b == DCP_PAGES_MINCORE)
		return DCP_PAGES_MINCORE;
	return a == DCP_PAGES_CACHESTAT || b == DCP_PAGES_CACHESTAT ? DCP_PAGES_CACHESTAT :
								     DCP_PAGES_NONE;
}

void dcp_pages_count(struct dcp_pages_counts *c, int ret, const struct dcp_pages *p)
{
	switch (dcp_pages_state_of(ret)) {
	case DCP_PAGES_MEASURED:
		if (p->again)
			break; /* counted under its first name */
		c->files++;
		c->size += p->size;
		c->pages += p->pages;
		c->resident += p->resident;
		c->resident_bytes += p->resident_bytes;
		c->dirty += p->dirty;
		c->writeback += p->writeback;
		c->evicted += p->evicted;
		c->recently_evicted += p->recently_evicted;
		c->method = counts_method(c->method, p->method);
		break;
	case DCP_PAGES_UNKNOWN:
		c->unknown++;
		break;
	case DCP_PAGES_FAILED:
		c->failed++;
		break;
	case DCP_PAGES_SKIPPED:
		break;
	}
}

/*
 * A dcp_pages_links set is an open-addressing hash table of CAP slots (a
 * power of two), N of them used, at most 7/8 full; a slot whose device and
 * inode are both 0 is empty (no file has them).
 */
static bool slot_empty(const struct dcp_pages_link *p)
{
	return !p->dev && !p->ino;
}

/* The slot of inode DEV:INO in V (CAP slots), or the empty one it would take. */
static size_t links_slot(const struct dcp_pages_link *v, size_t cap, uint64_t dev, uint64_t ino)
{
	size_t i = (size_t)link_hash(dev, ino) & (cap - 1);

	while (!slot_empty(&v[i]) && !(v[i].dev == dev && v[i].ino == ino))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Room for one more in L; false when out of memory. */
static bool links_room(struct dcp_pages_links *l)
{
	struct dcp_pages_link *v;
	size_t cap;

	if (8 * (l->n + 1) <= 7 * l->cap)
		return true;
	cap = l->cap ? 2 * l->cap : 16;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return false;
	for (size_t i = 0; i < l->cap; i++)
		if (!slot_empty(&l->v[i]))
			v[links_slot(v, cap, l->v[i].dev, l->v[i].ino)] = l->v[i];
	free(l->v);
	l->v = v;
	l->cap = cap;
	return true;
}

/* Add Q to L: false when its inode is there already. */
static bool links_put(struct dcp_pages_links *l, const struct dcp_pages_link *q)
{
	if (l->cap && !slot_empty(&l->v[links_slot(l->v, l->cap, q->dev, q->ino)]))
		return false;
	if (!links_room(l))
		return true; /* counted again rather than lost */
	l->v[links_slot(l->v, l->cap, q->dev, q->ino)] = *q;
	l->n++;
	return true;
}

bool dcp_pages_links_add(struct dcp_pages_links *l, const struct dcp_pages *p)
{
	struct dcp_pages_link q = {
		.dev = p->dev, .ino = p->ino, .size = p->size, .pages = p->pages,
		.resident = p->resident, .resident_bytes = p->resident_bytes,
		.dirty = p->dirty, .writeback = p->writeback,
		.evicted = p->evicted, .recently_evicted = p->recently_evicted,
	};

	if (slot_empty(&q))
		q.ino = ~0ULL; /* as link_first() keeps an inode 0 */
	return links_put(l, &q);
}

static void link_sub(struct dcp_pages_counts *c, const struct dcp_pages_link *p)
{
	c->files--;
	c->size -= p->size;
	c->pages -= p->pages;
	c->resident -= p->resident;
	c->resident_bytes -= p->resident_bytes;
	c->dirty -= p->dirty;
	c->writeback -= p->writeback;
	c->evicted -= p->evicted;
	c->recently_evicted -= p->recently_evicted;
}

/*
 * Merge CHILD into PARENT: the smaller set's inodes go into the larger
 * one (under -L every file of a tree is in its root's set, and moving the
 * smaller set each time moves a file O(log n) times); each inode both had
 * is taken out of SUM once, with the copy that is not kept.
 */
void dcp_pages_links_merge(struct dcp_pages_links *parent, struct dcp_pages_links *child,
			   struct dcp_pages_counts *sum)
{
	struct dcp_pages_links big = *parent, small = *child;

	if (small.n > big.n) {
		big = *child;
		small = *parent;
	}
	*parent = big;
	*child = (struct dcp_pages_links){ 0 };
	for (size_t i = 0; i < small.cap; i++) {
		if (slot_empty(&small.v[i]))
			continue;
		/* Out of memory, the parent keeps what it had: counted again. */
		if (!links_put(parent, &small.v[i]))
			link_sub(sum, &small.v[i]);
	}
	free(small.v);
}

void dcp_pages_links_free(struct dcp_pages_links *l)
{
	free(l->v);
	*l = (struct dcp_pages_links){ 0 };
}

void dcp_pages_counts_add(struct dcp_pages_counts *a, const struct dcp_pages_counts *b)
{
	a->files += b->files;
	a->unknown += b->unknown;
	a->failed += b->failed;
	a->size += b->size;
	a->pages += b->pages;
	a->resident += b->resident;
	a->resident_bytes += b->resident_bytes;
	a->dirty += b->dirty;
	a->writeback += b->writeback;
	a->evicted += b->evicted;
	a->recently_evicted += b->recently_evicted;
	a->method = counts_method(a->method, b->method);
}

double dcp_pages_resident_pct(const struct dcp_pages_counts *c)
{
	if (!c->pages)
		return NAN; /* a share of nothing: no figure */
	return 100.0 * (double)c->resident / (double)c->pages;
}

bool dcp_pages_verdict(const struct dcp_pages_counts *c, double min)
{
	/* Only on files it measured: none measured, or one unknown, fails.
	 * Files that span no page (empty) are wholly resident. */
	return !c->unknown && c->files && (!c->pages || dcp_pages_resident_pct(c) >= min);
}

/* Percent with one decimal, never shown as 100.0 (or 0.0) unless it is. */
static double pct1(const struct dcp_pages_counts *c)
{
	double p = dcp_pages_resident_pct(c);

	if (p < 100.0 && p > 99.95)
		return 99.9;
	if (p > 0.0 && p < 0.05)
		return 0.1;
	return p;
}

/* ---- output ---- */

void dcp_pages_text(struct dcp_buf *b, int ret, const struct dcp_pages *p, enum dcp_units units)
{

	switch (dcp_pages_state_of(ret)) {
	case DCP_PAGES_MEASURED:
		dcp_buf_printf(b, "pages=%llu/%llu bytes=", (unsigned long long)p->resident,
			       (unsigned long long)p->pages);
		dcp_buf_bytes(b, p->resident_bytes, units);
		dcp_buf_putc(b, '/');
		dcp_buf_bytes(b, p->size, units);
		dcp_buf_putc(b, ' ');
		if (p->method == DCP_PAGES_CACHESTAT)
			dcp_buf_printf(b, "dirty=%llu writeback=%llu evicted=%llu ",
				       (unsigned long long)p->dirty,
				       (unsigned long long)p->writeback,
				       (unsigned long long)p->recently_evicted);
		else
			dcp_buf_puts(b, "dirty=- writeback=- evicted=- ");
		break;
	case DCP_PAGES_UNKNOWN:
		/* The usual reason, a missed lookup, goes without saying. */
		if (ret == -EAGAIN)
			dcp_buf_puts(b, "pages=unknown ");
		else
			dcp_buf_printf(b, "pages=unknown:%s ", dcp_pages_unknown_reason(ret));
		break;
	case DCP_PAGES_SKIPPED:
		dcp_buf_puts(b, "pages=- ");
		break;
	case DCP_PAGES_FAILED:
		dcp_buf_printf(b, "pages=error:%s ", dcp_errno_name(-ret));
		break;
	}
}

void dcp_pages_entry_text(struct dcp_buf *b, const char *path, size_t len, int ret,
			  int pret, const struct dcp_pages *p, enum dcp_units units)
{
	enum dcp_state st = dcp_state_of_errno(ret);

	dcp_buf_puts(b, dcp_state_name(st));
	dcp_buf_putc(b, ' ');
	if (st == DCP_ERROR) {
		dcp_buf_puts(b, dcp_errno_name(-ret));
		dcp_buf_putc(b, ' ');
	}
	dcp_pages_text(b, pret, p, units);
	dcp_buf_quote(b, path, len);
	dcp_buf_putc(b, '\n');
}

static const char *const state_names[] = {
	[DCP_PAGES_MEASURED] = "measured",
	[DCP_PAGES_UNKNOWN] = "unknown",
	[DCP_PAGES_SKIPPED] = "not_regular",
	[DCP_PAGES_FAILED] = "error",
};

void dcp_pages_json(struct dcp_buf *b, int ret, const struct dcp_pages *p)
{
	enum dcp_pages_state st = dcp_pages_state_of(ret);

	dcp_buf_printf(b, ",\"data\":\"%s\"", state_names[st]);
	if (st == DCP_PAGES_UNKNOWN)
		dcp_buf_printf(b, ",\"data_reason\":\"%s\"", dcp_pages_unknown_reason(ret));
	if (st == DCP_PAGES_FAILED) {
		const char *msg = dcp_pages_error_message(ret);

		dcp_buf_printf(b, ",\"data_errno\":\"%s\",\"data_message\":",
			       dcp_errno_name(-ret));
		dcp_buf_json_str(b, msg, strlen(msg));
	}
	if (st != DCP_PAGES_MEASURED)
		return;
	dcp_buf_printf(b, ",\"pages\":{\"resident\":%llu,\"total\":%llu,\"resident_bytes\":%llu,"
		       "\"size\":%llu,", (unsigned long long)p->resident,
		       (unsigned long long)p->pages,
		       (unsigned long long)p->resident_bytes,
		       (unsigned long long)p->size);
	if (p->method == DCP_PAGES_CACHESTAT)
		dcp_buf_printf(b, "\"dirty\":%llu,\"writeback\":%llu,\"evicted\":%llu,"
			       "\"recently_evicted\":%llu,", (unsigned long long)p->dirty,
			       (unsigned long long)p->writeback, (unsigned long long)p->evicted,
			       (unsigned long long)p->recently_evicted);
	else
		dcp_buf_puts(b, "\"dirty\":null,\"writeback\":null,\"evicted\":null,"
			     "\"recently_evicted\":null,");
	dcp_buf_printf(b, "\"method\":\"%s\"}", dcp_pages_method_name(p->method));
}

/*
 * Whether the dirty, writeback and eviction totals of C are known: not when
 * one file counted in them was measured by mincore(2), which cannot tell
 * them (its files' figures are unknown, not 0, and a sum with an unknown
 * part is unknown: printed "?" in text, null in JSON, no Prometheus sample).
 * A sum of no file is 0.
 */
static bool counts_dirty_known(const struct dcp_pages_counts *c)
{
	return c->method != DCP_PAGES_MINCORE;
}

/* ,"NAME":V or ,"NAME":null when C's dirty... totals are unknown. */
static void json_dirty(struct dcp_buf *b, const struct dcp_pages_counts *c, const char *name,
		       uint64_t v)
{
	if (counts_dirty_known(c))
		dcp_buf_printf(b, ",\"%s\":%llu", name, (unsigned long long)v);
	else
		dcp_buf_printf(b, ",\"%s\":null", name);
}

void dcp_pages_json_counts(struct dcp_buf *b, const struct dcp_pages_counts *c, double min)
{
	dcp_buf_printf(b, ",\"data\":{\"files\":%llu,\"unknown\":%llu,\"errors\":%llu,"
		       "\"pages\":%llu,\"resident\":%llu,\"resident_bytes\":%llu,\"size\":%llu",
		       (unsigned long long)c->files, (unsigned long long)c->unknown,
		       (unsigned long long)c->failed, (unsigned long long)c->pages,
		       (unsigned long long)c->resident,
		       (unsigned long long)c->resident_bytes,
		       (unsigned long long)c->size);
	json_dirty(b, c, "dirty", c->dirty);
	json_dirty(b, c, "writeback", c->writeback);
	json_dirty(b, c, "recently_evicted", c->recently_evicted);
	dcp_buf_puts(b, ",\"resident_percent\":");
	if (c->pages)
		dcp_buf_printf(b, "%.2f", dcp_pages_resident_pct(c));
	else
		dcp_buf_puts(b, "null"); /* no page measured: no share */
	dcp_buf_printf(b, ",\"method\":\"%s\"", dcp_pages_method_name(c->method));
	if (min >= 0)
		dcp_buf_printf(b, ",\"min_resident\":%g", min);
	dcp_buf_putc(b, '}');
}

void dcp_pages_text_counts(struct dcp_buf *b, const struct dcp_pages_counts *c,
			   enum dcp_units units)
{
	dcp_buf_printf(b, "data: %llu/%llu pages resident",
		       (unsigned long long)c->resident, (unsigned long long)c->pages);
	if (c->pages) /* no share of nothing */
		dcp_buf_printf(b, " (%.1f%%)", pct1(c));
	dcp_buf_puts(b, ", ");
	dcp_buf_bytes(b, c->resident_bytes, units);
	dcp_buf_putc(b, '/');
	dcp_buf_bytes(b, c->size, units);
	if (counts_dirty_known(c))
		dcp_buf_printf(b, " bytes; %llu dirty, %llu writeback, %llu recently evicted; ",
			       (unsigned long long)c->dirty, (unsigned long long)c->writeback,
			       (unsigned long long)c->recently_evicted);
	else /* mincore cannot tell them: unknown, never 0 */
		dcp_buf_puts(b, " bytes; ? dirty, ? writeback, ? recently evicted; ");
	dcp_buf_printf(b, "%llu file%s measured, "
		       "%llu unknown (not measured), %llu error%s (%s)\n",
		       (unsigned long long)c->files, c->files == 1 ? "" : "s",
		       (unsigned long long)c->unknown, (unsigned long long)c->failed,
		       c->failed == 1 ? "" : "s", dcp_pages_method_name(c->method));
}

int dcp_pages_json_insert(struct dcp_buf *b, const char *text, size_t len)
{
	if (b->oom || b->len < 2 || b->data[b->len - 2] != '}' || b->data[b->len - 1] != '\n')
		return -EINVAL;
	b->len -= 2;
	dcp_buf_add(b, text, len);
	dcp_buf_puts(b, "}\n");
	return 0;
}

void dcp_pages_table_row(struct dcp_buf *b, size_t from, bool json,
			 const struct dcp_pages_counts *c)
{
	struct dcp_buf m = DCP_BUF_INIT;
	size_t tab;

	if (b->oom || b->len <= from)
		return;
	if (json) {
		dcp_pages_json_counts(&m, c, -1);
		if (!m.oom)
			dcp_pages_json_insert(b, m.data, m.len);
		dcp_buf_free(&m);
		return;
	}
	if (b->data[b->len - 1] != '\n')
		return; /* a NUL row */
	for (tab = b->len; tab > from && b->data[tab - 1] != '\t'; tab--)
		;
	if (tab == from)
		return;
	/* The share of the pages measured; files not measured (their lookup
	 * missed...) are "+N?" after the counts, as directories not visited
	 * are in the paths' columns: their pages are in no figure. */
	if (!c->pages)
		dcp_buf_puts(&m, "-\t"); /* no page measured below: no share */
	else
		dcp_buf_printf(&m, "%5.1f%%\t", pct1(c));
	dcp_buf_printf(&m, "%llu/%llu", (unsigned long long)c->resident,
		       (unsigned long long)c->pages);
	if (c->unknown)
		dcp_buf_printf(&m, "+%llu?", (unsigned long long)c->unknown);
	dcp_buf_putc(&m, '\t');
	/* Make room, then move the path along. */
	dcp_buf_add(b, m.data ? m.data : "", m.len);
	if (!b->oom && !m.oom) {
		memmove(b->data + tab + m.len, b->data + tab, b->len - m.len - tab);
		memcpy(b->data + tab, m.data, m.len);
	}
	dcp_buf_free(&m);
}

/* ---- Prometheus ---- */

static void prom_labels(struct dcp_prom *m, const char *label, const struct dcp_pages_series *s,
			const char *k, const char *v)
{
	if (s->value)
		dcp_prom_label(m, label, s->value, s->len);
	if (s->fstype)
		dcp_prom_labelz(m, "fstype", s->fstype);
	if (s->has_mnt_id) {
		char id[32];

		snprintf(id, sizeof(id), "%llu", (unsigned long long)s->mnt_id);
		dcp_prom_labelz(m, "mount_id", id);
	}
	if (k)
		dcp_prom_labelz(m, k, v);
}

void dcp_pages_prometheus(struct dcp_prom *m, enum dcp_pages_prom_scope scope,
			  const struct dcp_pages_series *s, size_t n)
{
	static const char *const kinds[] = { "total", "resident", "dirty", "writeback",
					     "recently_evicted" };
	static const char *const states[] = { "measured", "unknown", "error" };
	/* Family names are kept by the writer: static strings. */
	static const char *const names[][4] = {
		[DCP_PAGES_PROM_ROOT] = { "root", "dcprobe_data_pages", "dcprobe_data_files",
					  "dcprobe_data_resident_ratio" },
		[DCP_PAGES_PROM_MOUNT] = { "mountpoint", "dcprobe_mount_data_pages",
					   "dcprobe_mount_data_files",
					   "dcprobe_mount_data_resident_ratio" },
		[DCP_PAGES_PROM_DIR] = { "path", "dcprobe_dir_data_pages", "dcprobe_dir_data_files",
					 "dcprobe_dir_data_resident_ratio" },
	};
	const char *const *nm = names[scope];

	for (size_t i = 0; i < n; i++) {
		const struct dcp_pages_counts *c = s[i].c;
		uint64_t v[] = { c->pages, c->resident, c->dirty, c->writeback,
				 c->recently_evicted };
		uint64_t f[] = { c->files, c->unknown, c->failed };

		for (size_t k = 0; k < 5; k++) {
			if (k >= 2 && !counts_dirty_known(c))
				continue; /* unknown under mincore: no sample */
			dcp_prom_start(m, nm[1],
				       "Pages of regular files whose dentry was cached: spanned, and in the page cache.");
			prom_labels(m, nm[0], &s[i], "kind", kinds[k]);
			dcp_prom_u64(m, v[k]);
		}
		for (size_t k = 0; k < 3; k++) {
			dcp_prom_start(m, nm[2],
				       "Regular files by data residency: measured, unknown (lookup missed, FUSE or a network filesystem, or not the caller's to see), error.");
			prom_labels(m, nm[0], &s[i], "state", states[k]);
			dcp_prom_u64(m, f[k]);
		}
		if (!c->pages)
			continue; /* no page measured: no share, no sample */
		dcp_prom_start(m, nm[3], "Share of the measured files' pages that are in the page cache.");
		prom_labels(m, nm[0], &s[i], NULL, NULL);
		dcp_prom_value(m, dcp_pages_resident_pct(c) / 100.0, -1);
	}
}

/* ---- warming ---- */

#define SCRATCH (256 * 1024)

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_init(void)
{
	pthread_key_create(&scratch_key, free);
}

/* One scratch buffer per thread, freed when the thread ends. */
static char *scratch(void)
{
	char *p;

	pthread_once(&scratch_once, scratch_init);
	p = pthread_getspecific(scratch_key);
	if (!p) {
		p = malloc(SCRATCH);
		if (p && pthread_setspecific(scratch_key, p)) {
			free(p);
			p = NULL;
		}
	}
	return p;
}

int dcp_pages_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmgtpe";
	uint64_t v = 0, mul = 1;
	const char *p = s, *u;

	if (!*p)
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return -EINVAL;
	if (*p) {
		u = strchr(units, *p | 0x20);
		if (!u)
			return -EINVAL;
		/* coreutils' rules: K, KiB powers of 1024; KB powers of 1000. */
		unsigned base = strcmp(p + 1, "B") == 0 ? 1000 : 1024;

		p++;
		if (!strcmp(p, "iB") || !strcmp(p, "B"))
			p += strlen(p);
		if (*p)
			return -EINVAL;
		for (const char *q = units; q <= u; q++) {
			if (mul > UINT64_MAX / base)
				return -EINVAL;
			mul *= base;
		}
	}
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

/*
 * Read LEN bytes of FD with up to URING_DEPTH reads in flight, all into
 * the same scratch buffer (the data is not wanted, only its pages).
 * Returns the bytes read, or -errno; -ENOSYS when there is no ring.
 */
static int64_t uring_read_all(int fd, uint64_t off, uint64_t len, char *buf)
{
	struct io_uring *ring = thread_ring();
	uint64_t next = 0, done = 0;
	unsigned inflight = 0;
	int err = 0;

	if (!ring)
		return -ENOSYS;
	while (inflight || (!err && next < len)) {
		struct io_uring_cqe *cqe;
		int ret;

		while (!err && next < len && inflight < URING_DEPTH) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
			unsigned n = len - next < SCRATCH ? (unsigned)(len - next) : SCRATCH;

			if (!sqe)
				break;
			io_uring_prep_read(sqe, fd, buf, n, off + next);
			io_uring_sqe_set_data64(sqe, 0);
			next += n;
			inflight++;
		}
		ret = io_uring_submit_and_wait(ring, 1);
		if (ret < 0 && ret != -EINTR) {
			/* Nothing more can be reaped: forget what is in flight. */
			return ret;
		}
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			bool read = io_uring_cqe_get_data64(cqe) != CLOSE_TAG;

			if (read && cqe->res < 0 && !err)
				err = cqe->res;
			else if (read && cqe->res > 0)
				done += (uint64_t)cqe->res;
			io_uring_cqe_seen(ring, cqe);
			inflight -= read;
		}
	}
	return err ? err : (int64_t)done;
}

uint64_t dcp_pages_default_max_bytes(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024 / 2;
}

int dcp_pages_warm_method_parse(const char *name)
{
	if (!strcmp(name, "willneed"))
		return DCP_PAGES_WARM_WILLNEED;
	if (!strcmp(name, "readahead"))
		return DCP_PAGES_WARM_READAHEAD;
	if (!strcmp(name, "read"))
		return DCP_PAGES_WARM_READ;
	if (!strcmp(name, "uring"))
		return DCP_PAGES_WARM_URING;
	return -EINVAL;
}

/*
 * Take LEN bytes (whole pages) from the run's budget; returns how many may
 * be read, in whole pages too: a read brings a page in whole however few
 * of its bytes it asks for, so the budget is charged what is brought in,
 * never more than its limit.
 */
static uint64_t budget_take(struct dcp_pages_budget *bu, uint64_t len)
{
	uint64_t ps = (uint64_t)page_size(), used = __atomic_load_n(&bu->used, __ATOMIC_SEQ_CST);
	uint64_t grant;

	if (!bu->max_bytes)
		return len;
	do {
		if (used >= bu->max_bytes)
			return 0;
		grant = (bu->max_bytes - used) / ps * ps;
		if (grant > len)
			grant = len;
		if (!grant)
			return 0;
	} while (!__atomic_compare_exchange_n(&bu->used, &used, used + grant, true,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return grant;
}

/*
 * Count in BU's bytes read the pages brought in when a read from a page
 * boundary has got from DONE to DONE + GOT bytes: the unit the budget is
 * charged in (a file's last page counts whole, as it is read whole).
 */
static void count_read(struct dcp_pages_budget *bu, uint64_t done, uint64_t got)
{
	uint64_t ps = (uint64_t)page_size();
	uint64_t a = (done + ps - 1) / ps, b = (done + got + ps - 1) / ps;

	if (b > a)
		__atomic_fetch_add(&bu->bytes, (b - a) * ps, __ATOMIC_SEQ_CST);
}

/* Plain reads of FD's bytes [START, START + LEN); they wait for read-ahead I/O. */
static int pread_all(int fd, uint64_t start, uint64_t len, char *buf,
		     struct dcp_pages_budget *bu)
{
	for (uint64_t off = 0; off < len;) {
		size_t n = len - off < SCRATCH ? (size_t)(len - off) : SCRATCH;
		ssize_t got = pread(fd, buf, n, (off_t)(start + off));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break; /* truncated meanwhile */
		count_read(bu, off, (uint64_t)got);
		off += (uint64_t)got;
	}
	return 0;
}

/*
 * Bring FD's bytes [OFF, OFF + LEN) in with BU's method; 0 or -errno.
 * EXACT: only those (a limit, or a sparse file's extent): no read-ahead
 * past them.
 */
static int read_in(int fd, uint64_t off, uint64_t len, bool exact, struct dcp_pages_budget *bu)
{
	char *buf = scratch();

	if (!buf)
		return -ENOMEM;
	if (exact)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	/* The file's reads go out at once, instead of one window at a time... */
	if (bu->method == DCP_PAGES_WARM_WILLNEED)
		posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
	else if (bu->method == DCP_PAGES_WARM_READAHEAD)
		readahead(fd, (off64_t)off, (size_t)len);
	if (bu->method == DCP_PAGES_WARM_URING) {
		int64_t got = uring_read_all(fd, off, len, buf);

		if (got >= 0)
			count_read(bu, 0, (uint64_t)got);
		if (got != -ENOSYS)
			return got < 0 ? (int)got : 0;
		/* no io_uring here: plain reads */
	}
	/* ...and reading waits for that I/O (and reads anything it left out). */
	return pread_all(fd, off, len, buf, bu);
}

/* ---- what is missing ---- */

/*
 * The page-aligned part of [OFF, OFF + LEN) below the end of SIZE's last
 * page, as [*S, *E); false when nothing is left (a range past the end: the
 * file shrank, or a manifest that anyone may have edited).
 */
static bool clip(uint64_t off, uint64_t len, uint64_t size, uint64_t *s, uint64_t *e)
{
	uint64_t ps = (uint64_t)page_size(), top = size / ps * ps + (size % ps ? ps : 0);
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;

	*s = off / ps * ps;
	*e = end >= top ? top : (end + ps - 1) / ps * ps;
	return *s < *e;
}

/* Add to RG the parts of [S, E) that the resident ranges RES do not cover. */
static void complement(struct dcp_pages_ranges *rg, const struct dcp_pages_ranges *res,
		       uint64_t s, uint64_t e)
{
	uint64_t cur = s;

	for (size_t i = 0; i < res->n; i++) {
		if (res->v[i][0] > cur)
			range_add(rg, cur, res->v[i][0] - cur);
		if (res->v[i][0] + res->v[i][1] > cur)
			cur = res->v[i][0] + res->v[i][1];
	}
	if (cur < e)
		range_add(rg, cur, e - cur);
}

/*
 * Add to RG the pages of FD's [S, E) (page-aligned) that are not resident
 * now, asked without reading anything: cachestat's count settles a range
 * that is all or nothing, mincore tells the rest.  Where the caller may
 * not see the file's residency (*VISIBLE false from then on), all of it.
 */
static int missing_in(int fd, const struct stat *st, uint64_t s, uint64_t e,
		      struct dcp_pages_ranges *rg, bool *visible)
{
	uint64_t pages = (e - s) / (uint64_t)page_size(), resident = 0;
	struct dcp_pages_ranges res = { 0 };
	struct dcp_cachestat cs;
	int ret;

	if (*visible && dcp_pages_support() == DCP_PAGES_CACHESTAT) {
		ret = sys_cachestat(fd, s, e - s, &cs);
		if (ret == 0 && !cs.nr_cache) {
			range_add(rg, s, e - s);
			return rg->failed;
		}
		if (ret == 0 && cs.nr_cache >= pages)
			return 0;
		if (ret == -EPERM)
			*visible = false;
	}
	if (*visible && !may_see_residency(fd, st))
		*visible = false;
	if (!*visible) {
		range_add(rg, s, e - s);
		return rg->failed;
	}
	ret = mincore_count(fd, s, e, &resident, &res);
	if (ret == 0 && !res.failed)
		complement(rg, &res, s, e);
	else
		range_add(rg, s, e - s); /* not known: read it all */
	free(res.v);
	return rg->failed;
}

/* What a file holds: its size, or a sparse file's allocated bytes. */
static uint64_t file_bytes(const struct stat *st)
{
	return is_sparse(st) ? (uint64_t)st->st_blocks * 512 : (uint64_t)st->st_size;
}

/* The bytes of RG. */
static uint64_t ranges_bytes(const struct dcp_pages_ranges *rg)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < rg->n; i++)
		sum += rg->v[i][1];
	return sum;
}

/*
 * The first LEN bytes of FD's ranges RG read in.  A single range from 0
 * that the budget did not cut is the whole file: it may be read ahead
 * (one stream); anything else is read exactly.
 */
static int read_ranges(int fd, const struct dcp_pages_ranges *rg, uint64_t len, bool whole,
		       struct dcp_pages_budget *bu)
{
	int ret = 0;

	for (size_t i = 0; i < rg->n && len && ret == 0; i++) {
		uint64_t n = rg->v[i][1] < len ? rg->v[i][1] : len;

		ret = read_in(fd, rg->v[i][0], n, !whole, bu);
		len -= n;
	}
	return ret;
}

/*
 * The pages of FD (fstat ST) that are not resident, into RG: the whole
 * file, or a sparse file's data extents, less what is in memory now.
 */
/*
 * Call FN(FD, ST, A, B, ARG) on each page-aligned part of FD's [S, E) that
 * holds data: all of it for a file without many holes, else its data
 * extents (SEEK_DATA/SEEK_HOLE), a page two extents share once.  So what
 * a file costs (and what a range of it counts) follows the data it holds,
 * never its apparent size, whatever range a caller (or a manifest anyone
 * may have edited) asks for.  Returns 0, or FN's or lseek's -errno.
 */
static int data_parts(int fd, const struct stat *st, uint64_t s, uint64_t e,
		      int (*fn)(int fd, const struct stat *st, uint64_t a, uint64_t b, void *arg),
		      void *arg)
{
	uint64_t pos = s, off = 0, len = 0, a, b, done = s;
	int ret;

	if (!is_sparse(st))
		return fn(fd, st, s, e, arg);
	while ((ret = next_data(fd, e, &pos, &off, &len)) == 1) {
		if (!clip(off, len, (uint64_t)st->st_size, &a, &b))
			continue;
		if (a < done)
			a = done;
		if (b > e)
			b = e;
		if (a < b && (ret = fn(fd, st, a, b, arg)) < 0)
			return ret;
		if (b > done)
			done = b;
	}
	return ret;
}

/* What missing_in() needs beside the range, for data_parts(). */
struct missing_arg {
	struct dcp_pages_ranges *rg;
	bool visible;
};

static int missing_part(int fd, const struct stat *st, uint64_t a, uint64_t b, void *arg)
{
	struct missing_arg *m = arg;

	return missing_in(fd, st, a, b, m->rg, &m->visible);
}

/* The pages of FD (fstat ST) that hold data and are not resident, into RG. */
static int missing_of_file(int fd, const struct stat *st, struct dcp_pages_ranges *rg)
{
	struct missing_arg m = { rg, true };
	uint64_t s, e;

	return clip(0, (uint64_t)st->st_size, (uint64_t)st->st_size, &s, &e) ?
		       data_parts(fd, st, s, e, missing_part, &m) : 0;
}

int dcp_pages_warm_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
		      struct dcp_pages_budget *bu)
{
	struct dcp_pages before = { 0 }, after = { 0 };
	struct dcp_pages_ranges miss = { 0 };
	bool check = flags & DCP_PAGES_CHECK;
	uint64_t len, want;
	struct stat st;
	int fd, ret = 0;
	bool big;

	/* Only the regular file that was checked is opened (open_checked). */
	fd = open_checked(r, dirfd, name, flags, false, &st);
	if (fd < 0)
		return fd;
	/* A second name of an inode this run saw (a hard link), or a second
	 * path to it (DCP_PAGES_ONCE: -L; a bind mount): it was read under the
	 * first, and its "before" would be after that read. */
	if (may_meet_again(r, (uint64_t)st.st_dev, (uint64_t)st.st_nlink, flags & DCP_PAGES_ONCE) &&
	    !link_first(r, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
		close(fd);
		return 0;
	}
	fcntl(fd, F_SETFL, 0); /* reads of a regular file may wait */
	if (check && (ret = dcp_pages_fd(fd, &before)) == 0) {
		__atomic_fetch_add(&bu->pages, before.pages, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&bu->resident_before, before.resident, __ATOMIC_SEQ_CST);
	} else {
		/* Not the caller's to see (EPERM): read, but not in the figures. */
		if (check && dcp_pages_state_of(ret) == DCP_PAGES_UNKNOWN)
			__atomic_fetch_add(&bu->unmeasured, 1, __ATOMIC_SEQ_CST);
		check = false;
		ret = 0;
	}
	/*
	 * What it costs: the pages it holds that are not in memory now, not
	 * its apparent size (a sparse file's holes are never read) nor what
	 * is resident already (a warm file costs no read).
	 */
	ret = missing_of_file(fd, &st, &miss);
	want = ret < 0 ? 0 : ranges_bytes(&miss);
	/* --max-file-size judges what the file holds: a sparse file its data. */
	big = bu->max_file_size && file_bytes(&st) > bu->max_file_size;
	len = ret < 0 || big ? 0 : budget_take(bu, want);
	if (len < want || big)
		__atomic_fetch_add(&bu->skipped, 1, __ATOMIC_SEQ_CST);
	if (len)
		ret = read_ranges(fd, &miss, len, len == want && miss.n == 1 && !miss.v[0][0] &&
				  !is_sparse(&st), bu);
	if (check)
		__atomic_fetch_add(&bu->resident_after, dcp_pages_fd(fd, &after) == 0 ?
				 after.resident : before.resident, __ATOMIC_SEQ_CST);
	close(fd);
	free(miss.v);
	if (ret < 0) {
		__atomic_fetch_add(&bu->errors, 1, __ATOMIC_SEQ_CST);
		return ret;
	}
	if (len || (!want && !big))
		__atomic_fetch_add(&bu->files, 1, __ATOMIC_SEQ_CST);
	return len < want || big ? 1 : 0;
}

/* ---- manifests ---- */

/*
 * Add FD's [S, E) to OUT, for data_parts(): its bytes and pages, and those
 * resident (with OUT's method); 0 or -errno.
 */
static int resident_in(int fd, const struct stat *st, uint64_t s, uint64_t e, void *arg)
{
	struct dcp_pages *out = arg;
	struct dcp_cachestat cs = { 0 };
	uint64_t size = (uint64_t)st->st_size, r = 0;
	int ret;

	/* The bytes of the file it spans: [S, E) ends with the page that
	 * holds the file's end, not past it. */
	out->size += (e < size ? e : size) - s;
	out->pages += (e - s) / (uint64_t)page_size();
	if (out->method == DCP_PAGES_CACHESTAT) {
		ret = sys_cachestat(fd, s, e - s, &cs);
		if (ret == 0) {
			out->resident += cs.nr_cache;
			out->resident_bytes += resident_bytes(fd, out->method, s, e, size,
							      cs.nr_cache);
			out->dirty += cs.nr_dirty;
			out->writeback += cs.nr_writeback;
			out->evicted += cs.nr_evicted;
			out->recently_evicted += cs.nr_recently_evicted;
			return 0;
		}
		if (ret != -ENOSYS)
			return ret;
		atomic_store(&method_found, DCP_PAGES_MINCORE);
		out->method = DCP_PAGES_MINCORE;
		out->dirty = out->writeback = out->evicted = out->recently_evicted = 0;
	}
	if (!may_see_residency(fd, st))
		return -EPERM;
	ret = mincore_count(fd, s, e, &r, NULL);
	if (ret == 0) {
		out->resident += r;
		out->resident_bytes += resident_bytes(fd, out->method, s, e, size, r);
	}
	return ret;
}

int dcp_pages_at_manifest(struct dcp_pages_run *run, int dirfd, const char *name,
			  unsigned flags, const struct dcp_pages_identity *id,
			  const uint64_t (*r)[2], size_t n, struct dcp_pages *out)
{
	uint64_t s, e;
	struct stat st;
	/* Checked to be ID, on a filesystem that may be read, before the open. */
	enum dcp_pages_stale why = DCP_PAGES_STALE_NONE;
	int fd = open_checked_how(run, dirfd, name, flags, true, 0, id, &why, &st), m, ret = 0;

	*out = (struct dcp_pages){ 0 };
	if (fd == -EOPNOTSUPP)
		return -EREMOTE; /* a pseudo filesystem: not measured, "filesystem" */
	if (fd < 0)
		return fd == -ENODEV ? -ESTALE : fd; /* not even a regular file now */
	m = dcp_pages_support();
	if (m < 0) {
		close_later(run, fd);
		return m;
	}
	out->method = m;
	out->dev = (uint64_t)st.st_dev;
	out->ino = (uint64_t)st.st_ino;
	out->nlink = (uint64_t)st.st_nlink;
	out->mtime_ns = id->mtime_ns;
	/* What the manifest recorded, clipped to the file's data: its bytes and pages. */
	for (size_t i = 0; i < n && ret == 0; i++)
		if (clip(r[i][0], r[i][1], (uint64_t)st.st_size, &s, &e))
			ret = data_parts(fd, &st, s, e, resident_in, out);
	if (out->resident > out->pages)
		out->resident = out->pages; /* ranges that overlap: never more than recorded */
	if (out->resident_bytes > out->size)
		out->resident_bytes = out->size;
	close_later(run, fd);
	if (ret == 0 && !(flags & DCP_PAGES_NO_CLAIM))
		claim(run, out, flags & DCP_PAGES_ONCE);
	return ret;
}

/* The physical offset of FD's byte OFF (FIEMAP), or UINT64_MAX when unknown. */
static uint64_t physical_of(int fd, uint64_t off)
{
	struct fiemap *f = calloc(1, sizeof(*f) + sizeof(struct fiemap_extent));
	uint64_t at = UINT64_MAX;

	if (!f)
		return at;
	f->fm_start = off;
	f->fm_length = 1;
	f->fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, f) == 0 && f->fm_mapped_extents &&
	    !(f->fm_extents[0].fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC)))
		at = f->fm_extents[0].fe_physical +
		     (off > f->fm_extents[0].fe_logical ? off - f->fm_extents[0].fe_logical : 0);
	free(f);
	return at;
}

int dcp_pages_plan_at(struct dcp_pages_run *run, int dirfd, const char *name,
		      const struct dcp_pages_identity *id, const uint64_t (*r)[2], size_t n,
		      struct dcp_pages_plan *p)
{
	struct missing_arg m = { &p->missing, true };
	struct stat st;
	uint64_t s, e;
	int fd, ret = 0;

	p->fd = -1;
	p->stale = DCP_PAGES_STALE_NONE;
	p->bytes = 0;
	p->data = 0;
	p->physical = UINT64_MAX;
	p->missing.n = 0;
	p->missing.failed = 0;
	/* The regular file checked, reached without leaving DIRFD's mount. */
	fd = open_checked_how(run, dirfd, name, 0, false, RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS, id,
			      &p->stale, &st);
	if (fd < 0)
		return fd;
	/* Another name (or path) of an inode restored in this run: nothing more to read. */
	if (may_meet_again(run, (uint64_t)st.st_dev, (uint64_t)st.st_nlink, false) &&
	    !link_first(run, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < n && ret == 0; i++)
		if (clip(r[i][0], r[i][1], (uint64_t)st.st_size, &s, &e))
			ret = data_parts(fd, &st, s, e, missing_part, &m);
	p->unmeasured = !m.visible;
	if (ret < 0 || !p->missing.n) {
		close(fd);
		return ret;
	}
	p->bytes = ranges_bytes(&p->missing);
	p->data = file_bytes(&st);
	p->physical = physical_of(fd, p->missing.v[0][0]);
	fcntl(fd, F_SETFL, 0); /* reads of a regular file may wait */
	p->fd = fd;
	return 0;
}

int dcp_pages_plan_read(struct dcp_pages_plan *p, struct dcp_pages_budget *bu)
{
	uint64_t len;
	int ret = 0;

	if (p->fd < 0)
		return 0;
	/* --max-file-size judges what the file holds, as dcp_pages_warm_at(). */
	if (bu->max_file_size && p->data > bu->max_file_size) {
		__atomic_fetch_add(&bu->skipped, 1, __ATOMIC_SEQ_CST);
		close(p->fd);
		p->fd = -1;
		return DCP_PAGES_LIMIT_FILE_SIZE;
	}
	len = budget_take(bu, p->bytes);
	if (len < p->bytes)
		__atomic_fetch_add(&bu->skipped, 1, __ATOMIC_SEQ_CST);
	/* Exactly the ranges: no read-ahead past them. */
	if (len)
		ret = read_ranges(p->fd, &p->missing, len, false, bu);
	close(p->fd);
	p->fd = -1;
	if (ret < 0) {
		__atomic_fetch_add(&bu->errors, 1, __ATOMIC_SEQ_CST);
		return ret;
	}
	if (len)
		__atomic_fetch_add(&bu->files, 1, __ATOMIC_SEQ_CST);
	return len < p->bytes ? DCP_PAGES_LIMIT_BYTES : 0;
}

void dcp_pages_plan_free(struct dcp_pages_plan *p)
{
	if (p->fd >= 0)
		close(p->fd);
	dcp_pages_ranges_free(&p->missing);
	p->fd = -1;
}
