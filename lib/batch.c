// SPDX-License-Identifier: MIT
/* batch.c - RESOLVE_CACHED probes batched through io_uring direct opens. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcp_batch.h"
#include "dcp_probe.h"
#include "dcp_util.h"
#include "private/dcp_ring.h"

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

#define BATCH 64

struct dcp_batch {
	struct io_uring ring;
	bool uring;
	/* open_how must stay valid until submission: one per flag combination. */
	struct open_how how[4];
};

static unsigned how_index(unsigned flags)
{
	return ((flags & DCP_FOLLOW) ? 1 : 0) | ((flags & DCP_NOTDIR) ? 2 : 0);
}

static bool ring_init(struct dcp_batch *b)
{
	struct io_uring_params p;

	/* Single issuer and deferred task work where the kernel has them. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	if (io_uring_queue_init_params(BATCH, &b->ring, &p) < 0) {
		memset(&p, 0, sizeof(p));
		if (io_uring_queue_init_params(BATCH, &b->ring, &p) < 0)
			return false;
	}
	dcp_ring_fresh(&b->ring);
	/* Direct descriptors: slot i is reused (and its file closed) by the
	 * next batch, so probes never touch the process's file table. */
	if (io_uring_register_files_sparse(&b->ring, BATCH) < 0) {
		dcp_ring_exit(&b->ring);
		return false;
	}
	return true;
}

int dcp_batch_new(unsigned flags, struct dcp_batch **out)
{
	struct dcp_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (unsigned i = 0; i < 4; i++) {
		/* As dcp_probe_at(); no O_CLOEXEC, which direct opens refuse. */
		b->how[i].flags = ((i & 2) ? O_WRONLY | O_DIRECTORY : O_PATH) |
				  ((i & 1) ? 0 : O_NOFOLLOW);
		b->how[i].resolve = RESOLVE_CACHED;
	}
	if (!(flags & DCP_BATCH_SYNC))
		b->uring = ring_init(b);
	*out = b;
	return 0;
}

void dcp_batch_free(struct dcp_batch *b)
{
	if (!b)
		return;
	if (b->uring)
		dcp_ring_exit(&b->ring);
	free(b);
}

bool dcp_batch_uses_uring(const struct dcp_batch *b)
{
	return b->uring;
}

/*
 * Ask every miss of RESULTS again (unless openat2 itself is missing, as under
 * valgrind), and every denial (6.1's EACCES goes through the same rule as a
 * later kernel's EAGAIN: dcp_probe_again()).  True when a miss was not a
 * miss after all: the mount table was changing meanwhile.
 */
/* When this thread last met a miss that was not one (the mount table changing). */
static __thread uint64_t churn_ns;
enum { CHURN_NS = 1000000000, SETTLE_NS = 2000000 };

static bool ask_again(int dirfd, const char *const *names, const unsigned *flags,
		      size_t n, int *results)
{
	bool spurious = false;

	for (size_t i = 0; i < n; i++) {
		int again;

		if (results[i] != -EAGAIN && results[i] != -EACCES)
			continue;
		again = dcp_probe_again(dirfd, names[i], flags ? flags[i] : 0);
		if (dcp_errno_unsupported(again))
			continue;
		spurious |= results[i] == -EAGAIN && again != -EAGAIN && again != -EACCES;
		results[i] = again;
	}
	if (spurious)
		churn_ns = dcp_now_ns();
	return spurious;
}

static size_t misses(const int *results, size_t n)
{
	size_t left = 0;

	for (size_t i = 0; i < n; i++)
		left += results[i] == -EAGAIN;
	return left;
}

static void probe_sync(int dirfd, const char *const *names,
		       const unsigned *flags, size_t n, int *results)
{
	for (size_t i = 0; i < n; i++)
		results[i] = dcp_probe_at(dirfd, names[i], (flags ? flags[i] : 0) | DCP_ONCE);
}

/* One batch of at most BATCH probes; false if io_uring failed us. */
static bool probe_ring(struct dcp_batch *b, int dirfd, const char *const *names,
		       const unsigned *flags, size_t n, int *results)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int ret;

	for (size_t i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
		unsigned f = flags ? flags[i] : 0;

		if (!sqe)
			return false;
		io_uring_prep_openat2_direct(sqe, dirfd, names[i],
					     &b->how[how_index(f)], (unsigned)i);
		io_uring_sqe_set_data64(sqe, i);
	}
	do
		ret = io_uring_submit_and_wait(&b->ring, (unsigned)n);
	while (ret == -EINTR);
	if (ret < 0)
		return false;
	io_uring_for_each_cqe(&b->ring, head, cqe) {
		size_t i = (size_t)cqe->user_data;
		int res = cqe->res;

		if (i < n) {
			unsigned f = flags ? flags[i] : 0;

			if (res >= 0 || ((f & DCP_NOTDIR) && dcp_probe_refused(res)))
				res = 0;
			results[i] = res;
		}
		seen++;
	}
	io_uring_cq_advance(&b->ring, seen);
	return seen == n;
}

void dcp_batch_probe(struct dcp_batch *b, int dirfd, const char *const *names,
		     const unsigned *flags, size_t n, int *results)
{
	for (size_t off = 0; off < n; off += BATCH) {
		size_t m = n - off < BATCH ? n - off : BATCH;
		const unsigned *f = flags ? flags + off : NULL;

		if (b->uring &&
		    probe_ring(b, dirfd, names + off, f, m, results + off))
			continue;
		if (b->uring) {
			/* The ring failed us once: do not trust it again. */
			dcp_ring_exit(&b->ring);
			b->uring = false;
		}
		probe_sync(dirfd, names + off, f, m, results + off);
	}
	/*
	 * Every miss is asked again, as by dcp_probe_at(), but after all the
	 * others: a mount namespace made or torn down somewhere changes the
	 * mount table for tens of microseconds, which the probes of the
	 * other names outlast, where a probe asked again at once can miss
	 * again.  While namespaces come and go, two probes of a cached name
	 * can still both meet a change, one after the other: a few misses
	 * among many cached names (at most one in 16) are asked a third
	 * time, which costs little.  When any of these answers was cached
	 * after all, the mount table was changing meanwhile: every miss left
	 * is asked once more, once it has been still (dcp_probe_again()
	 * waits).  A real miss in a cold directory is asked twice, as by
	 * dcp_probe_at(), and never waits on a machine whose mount table is
	 * still.
	 */
	bool spurious = ask_again(dirfd, names, flags, n, results);
	size_t left = misses(results, n);

	if (!spurious && left && left * 16 <= n)
		spurious = ask_again(dirfd, names, flags, n, results);
	if (spurious)
		ask_again(dirfd, names, flags, n, results);
	/*
	 * While namespaces keep coming and going (this thread met a miss that
	 * was not one within the last second), three probes of a cached name
	 * in a row can still each meet a change (one in 200,001 under a
	 * loaded CI machine, cmd/hostile): the misses left are asked once more
	 * after a pause of SETTLE_NS, once per batch.  A machine whose mount
	 * table is still never pauses.
	 */
	if (churn_ns && dcp_now_ns() - churn_ns < CHURN_NS && misses(results, n)) {
		struct timespec ts = { 0, SETTLE_NS };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		ask_again(dirfd, names, flags, n, results);
	}
}
