// SPDX-License-Identifier: MIT
/* uring.c - io_uring opens, timed, with an exact inline/punted verdict. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dcp_uring.h"
#include "dcp_util.h"
#include "private/dcp_ring.h"

/* Descriptors dcp_uring_open_all() leaves to its caller beside the opens in flight. */
#define URING_FD_SPARE 5

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

struct dcp_uring {
	struct io_uring ring;
	unsigned entries;
	bool exact;
	uint64_t timeout_ns; /* a wait for a completion at most this long; 0: for good */
	uint64_t timed_out;  /* the last dcp_uring_open_all()'s requests cancelled after it */
};

/* The user_data of a cancel request (never a request's index). */
#define CANCEL_DATA UINT64_MAX
/* The user_data of the NOP that asks how io-wq completes (in traces too). */
#define PROBE_DATA (UINT64_MAX - 1)

/*
 * Does an io-wq worker leave its completion to the submitting task on a
 * DEFER_TASKRUN ring (Linux 6.2 and later), or post it itself (6.1, where
 * the flag exists but only the task work of inline requests is deferred)?
 * Only the first makes the verdict exact, so it is asked, once per process:
 * a NOP forced to io-wq on a ring with IORING_SETUP_TASKRUN_FLAG, and no
 * call that asks for completions.  A kernel that defers sets
 * IORING_SQ_TASKRUN in the shared ring when the worker is done; one that
 * does not posts the completion there.  Whichever shows first answers
 * (microseconds); neither within 5 s answers no.  The question runs on a
 * thread of its own: io-wq workers belong to a thread, so the ones it
 * starts end with it, and the first punted open of the caller still pays
 * for its own worker, as it would without the question.
 */
enum { DEFER_UNASKED = 0, DEFER_YES, DEFER_NO };
static _Atomic int iowq_deferred = DEFER_UNASKED;

static void *ask_iowq_deferred(void *arg)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SINGLE_ISSUER |
					      IORING_SETUP_DEFER_TASKRUN |
					      IORING_SETUP_TASKRUN_FLAG };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int *answer = arg;

	*answer = DEFER_NO;
	if (io_uring_queue_init_params(2, &ring, &p) < 0)
		return NULL;
	dcp_ring_fresh(&ring);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags |= IOSQE_ASYNC;
	io_uring_sqe_set_data64(sqe, PROBE_DATA);
	if (io_uring_submit(&ring) == 1) {
		/* 5 s in steps from 10 us, doubling to 10 ms. */
		for (uint64_t waited = 0, step = 10000; waited < 5000000000ULL; waited += step) {
			struct timespec ts = { 0, (long)step };

			if (io_uring_cq_ready(&ring))
				break; /* posted by the worker itself */
			if (IO_URING_READ_ONCE(*ring.sq.kflags) & IORING_SQ_TASKRUN) {
				*answer = DEFER_YES;
				break;
			}
			nanosleep(&ts, NULL);
			if (step < 10000000ULL)
				step *= 2;
		}
		/* Its completion (the task work runs here), at most a second. */
		struct __kernel_timespec kt = { 1, 0 };

		if (io_uring_wait_cqe_timeout(&ring, &cqe, &kt) == 0)
			io_uring_cqe_seen(&ring, cqe);
	}
	dcp_ring_exit(&ring);
	return NULL;
}

static bool iowq_completion_deferred(void)
{
	int v = atomic_load(&iowq_deferred), answer = DEFER_NO;
	pthread_t t;

	if (v != DEFER_UNASKED)
		return v == DEFER_YES;
	if (pthread_create(&t, NULL, ask_iowq_deferred, &answer) == 0)
		pthread_join(t, NULL);
	atomic_store(&iowq_deferred, answer);
	return answer == DEFER_YES;
}

int dcp_uring_new(unsigned entries, unsigned flags, struct dcp_uring **out)
{
	struct io_uring_params p;
	struct dcp_uring *r;
	int ret = -EINVAL;

	if (entries < 1 || entries > 4096)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (!(flags & DCP_URING_NO_DEFER)) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
		ret = io_uring_queue_init_params(entries, &r->ring, &p);
		r->exact = ret == 0 && iowq_completion_deferred();
	}
	/* Before 6.1 the kernel refuses unknown setup flags with EINVAL. */
	if (ret == -EINVAL) {
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(entries, &r->ring, &p);
	}
	if (ret < 0) {
		free(r);
		return ret;
	}
	dcp_ring_fresh(&r->ring);
	r->entries = entries;
	*out = r;
	return 0;
}

void dcp_uring_free(struct dcp_uring *r)
{
	if (!r)
		return;
	dcp_ring_exit(&r->ring);
	free(r);
}

void dcp_uring_set_timeout(struct dcp_uring *r, uint64_t ns)
{
	r->timeout_ns = ns;
}

uint64_t dcp_uring_timed_out(const struct dcp_uring *r)
{
	return r->timed_out;
}

bool dcp_uring_exact(const struct dcp_uring *r)
{
	return r->exact;
}

int dcp_uring_ring_fd(const struct dcp_uring *r)
{
	return r->ring.ring_fd;
}

bool dcp_uring_forced_async(const struct dcp_uring_how *how)
{
	return how->async ||
	       (how->flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~O_DIRECTORY)));
}

/*
 * The how is copied by the kernel while the SQE is consumed, in submit.
 * SLOT >= 0 opens into that fixed-file slot (a direct descriptor).
 */
static void prep(struct io_uring_sqe *sqe, const char *path,
		 const struct dcp_uring_how *how, struct open_how *oh,
		 uint64_t user_data, int slot)
{
	/* openat2(2) refuses a mode that the flags do not use. */
	unsigned long long mode =
		how->flags & (O_CREAT | (O_TMPFILE & ~O_DIRECTORY)) ? how->mode : 0;
	/* Direct descriptors are not in the file table: no close-on-exec. */
	unsigned long long flags = slot >= 0 ? how->flags & ~(unsigned long long)O_CLOEXEC
					     : how->flags;

	if (how->cached) {
		oh->flags = flags;
		oh->mode = mode;
		oh->resolve = RESOLVE_CACHED;
		if (slot >= 0)
			io_uring_prep_openat2_direct(sqe, how->dirfd, path, oh, (unsigned)slot);
		else
			io_uring_prep_openat2(sqe, how->dirfd, path, oh);
	} else if (slot >= 0) {
		io_uring_prep_openat_direct(sqe, how->dirfd, path, (int)flags,
					    (mode_t)mode, (unsigned)slot);
	} else {
		io_uring_prep_openat(sqe, how->dirfd, path, (int)flags, (mode_t)mode);
	}
	if (how->async)
		sqe->flags |= IOSQE_ASYNC;
	io_uring_sqe_set_data64(sqe, user_data);
}

/* Submit without IORING_ENTER_GETEVENTS: deferred task work does not run. */
/*
 * Submit WANT queued SQEs.  A request that fails while the kernel reads
 * its SQE (a path longer than PATH_MAX: ENAMETOOLONG) ends that submit
 * early: its CQE is posted as a failed open and the SQEs after it stay in
 * the ring, so submit again until all are in.
 */
static int submit(struct dcp_uring *r, unsigned want)
{
	while (want > 0) {
		int ret;

		do
			ret = io_uring_submit(&r->ring);
		while (ret == -EINTR);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -EIO; /* nothing taken: do not spin */
		want -= (unsigned)ret < want ? (unsigned)ret : want;
	}
	return 0;
}

/*
 * Wait for a completion, at most the ring's timeout (then -ETIME).  A
 * completion of a cancel request (CANCEL_DATA) is retired here: only the
 * opens' own are left for the caller.
 */
static int wait_one(struct dcp_uring *r)
{
	uint64_t deadline = r->timeout_ns ? dcp_now_ns() + r->timeout_ns : 0;
	struct io_uring_cqe *cqe;
	int ret;

	for (;;) {
		if (deadline) {
			uint64_t now = dcp_now_ns(), left = deadline > now ? deadline - now : 0;
			struct __kernel_timespec ts = {
				.tv_sec = (long long)(left / 1000000000ULL),
				.tv_nsec = (long long)(left % 1000000000ULL),
			};

			if (!left)
				return -ETIME;
			ret = io_uring_wait_cqe_timeout(&r->ring, &cqe, &ts);
		} else {
			ret = io_uring_wait_cqe(&r->ring, &cqe);
		}
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		if (cqe->user_data != CANCEL_DATA)
			return 0;
		io_uring_cqe_seen(&r->ring, cqe);
	}
}

/*
 * After a wait that timed out: ask the kernel to cancel the request tagged
 * USER_DATA (every request of the ring with ALL), and give a request that
 * had not started yet a moment to complete as cancelled.  A request whose
 * io-wq worker is already blocked (in a FUSE daemon that does not answer)
 * is not cancelled (-EALREADY): its worker stays until the process exits,
 * which kills it (the wait of a FUSE request is killable).  The ring must
 * then not be waited for again.
 */
static void cancel(struct dcp_uring *r, uint64_t user_data, bool all)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	struct __kernel_timespec ts = { .tv_nsec = 50 * 1000000 };
	struct io_uring_cqe *cqe;

	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, user_data, all ? IORING_ASYNC_CANCEL_ANY : 0);
	io_uring_sqe_set_data64(sqe, CANCEL_DATA);
	if (submit(r, 1) < 0)
		return;
	/* The cancel's own completion (and the cancelled open's), if they come. */
	(void)io_uring_wait_cqe_timeout(&r->ring, &cqe, &ts);
}

int dcp_uring_open(struct dcp_uring *r, const char *path,
		   const struct dcp_uring_how *how, uint64_t user_data,
		   struct dcp_uring_result *res)
{
	struct open_how oh;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t t0;
	int ret;

	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		return -EBUSY;
	prep(sqe, path, how, &oh, user_data, -1);

	t0 = dcp_now_ns();
	ret = submit(r, 1);
	if (ret < 0)
		return ret;
	/*
	 * A plain read of the shared CQ tail: no system call, no task work.
	 * (A forced punt is punted whatever the tail says: where a worker
	 * posts its completion itself, 6.1, a fast one can beat the check.)
	 */
	if (io_uring_cq_ready(&r->ring)) {
		res->verdict = dcp_uring_forced_async(how) ? DCP_URING_PUNTED : DCP_URING_INLINE;
	} else {
		ret = wait_one(r);
		if (ret == -ETIME) {
			res->verdict = DCP_URING_PUNTED;
			res->latency_ns = dcp_now_ns() - t0;
			res->res = -ETIME;
			cancel(r, user_data, false);
			/* An open that completed meanwhile is not given: close it. */
			while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
				if (cqe->user_data != CANCEL_DATA && cqe->res >= 0)
					close(cqe->res);
				io_uring_cqe_seen(&r->ring, cqe);
			}
			return -ETIME;
		}
		if (ret < 0)
			return ret;
		res->verdict = DCP_URING_PUNTED;
	}
	res->latency_ns = dcp_now_ns() - t0;
	for (;;) {
		ret = io_uring_peek_cqe(&r->ring, &cqe);
		if (ret < 0)
			return ret;
		if (cqe->user_data != CANCEL_DATA)
			break;
		io_uring_cqe_seen(&r->ring, cqe);
	}
	res->res = cqe->res;
	io_uring_cqe_seen(&r->ring, cqe);
	return 0;
}

/* io-wq workers are threads of this process: their time counts here. */
static uint64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* State of one dcp_uring_open_all() run. */
struct batch {
	struct dcp_uring *r;
	unsigned char *verdicts;
	struct dcp_uring_batch *out;
	unsigned *free_slots; /* direct: fixed-file slots not in use */
	unsigned nfree;
	unsigned *slot_of;    /* direct: slot of request i */
};

/* Count, close (or free the slot of) and retire every completion visible now. */
static unsigned reap(struct batch *b, enum dcp_uring_verdict v)
{
	struct dcp_uring_batch *out = b->out;
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, seen = 0;

	io_uring_for_each_cqe(&b->r->ring, head, cqe) {
		size_t i = (size_t)cqe->user_data;

		seen++;
		if (cqe->user_data == CANCEL_DATA)
			continue;
		n++;
		if (b->verdicts)
			b->verdicts[i] = (unsigned char)v;
		if (b->slot_of)
			b->free_slots[b->nfree++] = b->slot_of[i];
		if (cqe->res == -ECANCELED) {
			/* Cancelled after the ring's timeout: not an open. */
			b->r->timed_out++;
			out->opens--;
			continue;
		}
		if (cqe->res >= 0) {
			if (!b->slot_of)
				close(cqe->res);
		} else if (cqe->res == -EAGAIN) {
			out->missed++;
		} else if (out->failed++ == 0) {
			out->first_error = cqe->res;
			out->first_error_index = i;
		}
		if (v == DCP_URING_INLINE)
			out->inlined++;
		else
			out->punted++;
	}
	io_uring_cq_advance(&b->r->ring, seen);
	out->opens += n;
	return n;
}

int dcp_uring_open_all(struct dcp_uring *r, const char *const *paths,
		       size_t n, unsigned depth, const struct dcp_uring_how *how,
		       unsigned char *verdicts, struct dcp_uring_batch *out)
{
	struct batch b = { .r = r, .verdicts = verdicts, .out = out };
	struct rlimit rl;
	struct open_how *ohs;
	size_t next = 0, inflight = 0;
	uint64_t t0, c0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	r->timed_out = 0;
	if (depth < 1 || depth > r->entries)
		return -EINVAL;
	/* One open_how per SQE of a submit: each must live until it is consumed. */
	ohs = calloc(depth, sizeof(*ohs));
	if (!ohs)
		return -ENOMEM;
	if (how->direct) {
		b.free_slots = calloc(depth, sizeof(*b.free_slots));
		b.slot_of = calloc(n ? n : 1, sizeof(*b.slot_of));
		if (!b.free_slots || !b.slot_of) {
			ret = -ENOMEM;
			goto out;
		}
		/* The kernel refuses a table larger than RLIMIT_NOFILE
		 * (EMFILE): fewer slots, and as few opens in flight. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur < depth)
			depth = rl.rlim_cur ? (unsigned)rl.rlim_cur : 1;
		ret = io_uring_register_files_sparse(&r->ring, depth);
		if (ret < 0)
			goto out;
		for (unsigned i = 0; i < depth; i++)
			b.free_slots[b.nfree++] = depth - 1 - i;
	} else {
		/* Each open in flight holds a descriptor until it is reaped:
		 * as many as may be opened, less a few for the caller. */
		uint32_t room = dcp_fd_free();

		room = room > URING_FD_SPARE ? room - URING_FD_SPARE : 1;
		if (room < depth)
			depth = room;
	}
	out->depth = depth;
	c0 = cpu_now_ns();
	t0 = dcp_now_ns();
	while (next < n || inflight) {
		unsigned queued = 0;

		while (next < n && inflight < depth) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
			int slot = -1;

			if (!sqe)
				break;
			if (b.slot_of) {
				slot = (int)b.free_slots[--b.nfree];
				b.slot_of[next] = (unsigned)slot;
			}
			prep(sqe, paths[next], how, &ohs[queued], next, slot);
			next++;
			inflight++;
			queued++;
		}
		if (queued) {
			ret = submit(r, queued);
			if (ret < 0)
				break;
		}
		/*
		 * What is in the CQ now was posted inline by that submit (the
		 * CQ was empty before it); io-wq completions wait, as task work,
		 * for the next call that asks for events.
		 */
		inflight -= reap(&b, dcp_uring_forced_async(how) ? DCP_URING_PUNTED
								 : DCP_URING_INLINE);
		if (queued && next < n && inflight < depth)
			continue;
		if (!inflight)
			continue;
		ret = wait_one(r);
		if (ret == -ETIME) {
			/* Nothing completed for the ring's timeout: cancel what is
			 * in flight, keep what the cancels bring, stop. */
			cancel(r, 0, true);
			inflight -= reap(&b, DCP_URING_PUNTED);
			r->timed_out += inflight;
			break;
		}
		if (ret < 0)
			break;
		inflight -= reap(&b, DCP_URING_PUNTED);
	}
	out->elapsed_ns = dcp_now_ns() - t0;
	out->cpu_ns = cpu_now_ns() - c0;
	/* (Not after a timeout: unregistering waits for the requests that
	 * hold a slot, and one may be blocked for good.) */
	if (how->direct && !r->timed_out)
		io_uring_unregister_files(&r->ring);
out:
	free(b.free_slots);
	free(b.slot_of);
	free(ohs);
	return ret;
}

int dcp_uring_support(bool need_openat2)
{
	struct io_uring_probe *probe;
	struct dcp_uring *r;
	int ret;

	ret = dcp_uring_new(2, 0, &r);
	if (ret < 0)
		return ret;
	/* A kernel (or a filter) that cannot probe opcodes: try the open. */
	probe = io_uring_get_probe_ring(&r->ring);
	if (probe) {
		if (!io_uring_opcode_supported(probe, IORING_OP_OPENAT) ||
		    (need_openat2 &&
		     !io_uring_opcode_supported(probe, IORING_OP_OPENAT2)))
			ret = -EOPNOTSUPP;
		io_uring_free_probe(probe);
	}
	dcp_uring_free(r);
	return ret;
}

bool dcp_uring_errno_unsupported(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOSYS || err == EPERM || err == EACCES ||
	       err == EOPNOTSUPP;
}

/* kernel.io_uring_disabled: 0, 1 or 2; -1 when it cannot be read (private/dcp_ring.h). */
int dcp_uring_disabled_sysctl(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

const char *dcp_uring_unsupported_reason(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOSYS:
		return "io_uring is not available: this kernel has no io_uring system calls, or a seccomp filter hides them";
	case EPERM:
	case EACCES:
		switch (dcp_uring_disabled_sysctl()) {
		case 2:
			return "io_uring is disabled on this system (sysctl kernel.io_uring_disabled = 2)";
		case 1:
			return "io_uring is restricted to privileged users and the kernel.io_uring_group group on this system (sysctl kernel.io_uring_disabled = 1)";
		default:
			return "io_uring is blocked for this process: a seccomp filter (as in default container profiles) or a security module refuses it";
		}
	case EOPNOTSUPP:
		return "this kernel's io_uring cannot open files (IORING_OP_OPENAT needs Linux 5.6, OPENAT2 with RESOLVE_CACHED 5.12)";
	default:
		return "io_uring cannot be used on this system";
	}
}

static const struct {
	const char *name;
	unsigned long long flag;
} open_flag_names[] = {
	/* Access modes first; tmpfile before directory (it contains it). */
	{ "rdonly", O_RDONLY },	    { "wronly", O_WRONLY },
	{ "rdwr", O_RDWR },	    { "tmpfile", O_TMPFILE },
	{ "creat", O_CREAT },	    { "excl", O_EXCL },
	{ "trunc", O_TRUNC },	    { "append", O_APPEND },
	{ "nonblock", O_NONBLOCK }, { "nofollow", O_NOFOLLOW },
	{ "directory", O_DIRECTORY }, { "path", O_PATH },
	{ "noctty", O_NOCTTY },	    { "cloexec", O_CLOEXEC },
	{ "noatime", O_NOATIME },   { "sync", O_SYNC },
	{ "dsync", O_DSYNC },	    { "direct", O_DIRECT },
};

#define NFLAGS (sizeof(open_flag_names) / sizeof(open_flag_names[0]))

int dcp_open_flags_parse(const char *s, unsigned long long *flags,
			 const char **bad)
{
	unsigned long long f = 0;
	int modes = 0;
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < NFLAGS; i++)
			if (strlen(open_flag_names[i].name) == len &&
			    strncmp(p, open_flag_names[i].name, len) == 0)
				break;
		if (i == NFLAGS || (i < 3 && ++modes > 1)) {
			if (bad)
				*bad = p;
			return -EINVAL;
		}
		f |= open_flag_names[i].flag;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*flags = f;
	return 0;
}

char *dcp_open_flags_format(unsigned long long flags, char *buf, size_t size)
{
	size_t len = 0;

	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < NFLAGS; i++) {
		unsigned long long fl = open_flag_names[i].flag;
		bool on;

		if (i < 3)
			on = (flags & O_ACCMODE) == fl;
		else
			on = fl && (flags & fl) == fl;
		if (!on)
			continue;
		flags &= ~fl;
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0,
					"%s%s", len ? "," : "",
					open_flag_names[i].name);
		if (len >= size)
			break;
	}
	return buf;
}
