/* SPDX-License-Identifier: MIT */
/*
 * dcp_uring.h - io_uring opens, timed, with an exact inline/punted verdict.
 *
 * Since Linux 5.12 io_uring first tries IORING_OP_OPENAT(2) inline, during
 * the submit system call, with a cached-only lookup (LOOKUP_CACHED); only
 * when that lookup would block is the request punted to an io-wq worker.
 * This module makes that visible.
 *
 * How the verdict is exact: the ring is created with
 * IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN (Linux 6.1+).  On
 * such a ring a request finished by an io-wq worker is not posted to the
 * completion queue by the worker: it is queued as task work that runs only
 * when the submitting task enters the kernel to wait for completions.  The
 * submit call is made without IORING_ENTER_GETEVENTS, so a completion that
 * is in the CQ when submit returns (read from the shared ring, no system
 * call) can only have been posted inline; one that is not went to io-wq.
 * That holds from Linux 6.2: 6.1 accepts the flags but lets an io-wq
 * worker post its completion itself.  Which kernel this is, is asked once
 * per process (a NOP forced to io-wq on a ring of a thread of its own).  On
 * 6.1, or an older kernel where the ring falls back to no flags, the
 * verdict relies on timing (a fast worker could post before submit
 * returns) and dcp_uring_exact() says so.
 */
#ifndef DCP_URING_H
#define DCP_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_uring;

/* How one request completed. */
enum dcp_uring_verdict {
	DCP_URING_INLINE = 0, /* completion posted during the submit call */
	DCP_URING_PUNTED = 1, /* completion came later, from an io-wq worker */
};

/* Flags for dcp_uring_new(). */
enum {
	/* A plain ring, as before Linux 6.1: verdicts are not exact. */
	DCP_URING_NO_DEFER = 1 << 0,
};

/* What to open and how. */
struct dcp_uring_how {
	int dirfd;		  /* AT_FDCWD or a directory descriptor */
	unsigned long long flags; /* open(2) flags */
	unsigned long long mode;  /* for O_CREAT / O_TMPFILE */
	bool cached;		  /* IORING_OP_OPENAT2 with RESOLVE_CACHED */
	bool async;		  /* IOSQE_ASYNC: punt without trying inline */
	bool direct;		  /* dcp_uring_open_all() only: open into fixed-file
				     slots (direct descriptors), nothing to close */
};

/* The outcome of one open. */
struct dcp_uring_result {
	int res;		       /* descriptor, or -errno of the open */
	enum dcp_uring_verdict verdict;
	uint64_t latency_ns;	       /* submit call to completion seen */
};

/*
 * dcp_uring_new - a ring of ENTRIES (1..4096) entries for opens.  Tries
 * SINGLE_ISSUER|DEFER_TASKRUN first (unless DCP_URING_NO_DEFER), falls back
 * to a plain ring on a kernel that refuses them with EINVAL.  The ring may
 * only be used by the thread that created it.
 * Returns 0 and stores *OUT, or -errno: -ENOSYS (no io_uring, or a filter
 * hides it), -EPERM (kernel.io_uring_disabled, seccomp, LSM), -ENOMEM...
 * dcp_uring_errno_unsupported() tells which mean "cannot probe here".
 */
int dcp_uring_new(unsigned entries, unsigned flags, struct dcp_uring **out);

/* dcp_uring_free - tear the ring down (NULL is accepted). */
void dcp_uring_free(struct dcp_uring *r);

/*
 * dcp_uring_set_timeout - wait at most NS nanoseconds for a completion of
 * R (0, the default: for good).  When none comes in time, the requests in
 * flight are cancelled (IORING_OP_ASYNC_CANCEL) and the call returns
 * -ETIME: an open punted to io-wq whose worker waits on a FUSE daemon or a
 * network server that does not answer.  Such a worker cannot be cancelled;
 * it ends when the process exits (its wait is killable).
 */
void dcp_uring_set_timeout(struct dcp_uring *r, uint64_t ns);

/* dcp_uring_exact - true when the ring's verdicts are exact (DEFER_TASKRUN, io-wq's completions included: 6.2+). */
bool dcp_uring_exact(const struct dcp_uring *r);

/* dcp_uring_ring_fd - the ring's own descriptor (for reports). */
int dcp_uring_ring_fd(const struct dcp_uring *r);

/*
 * dcp_uring_forced_async - true when the kernel punts this open whatever
 * the cache holds: IOSQE_ASYNC, or O_CREAT / O_TRUNC / O_TMPFILE in FLAGS
 * (the kernel never tries those inline).
 */
bool dcp_uring_forced_async(const struct dcp_uring_how *how);

/*
 * dcp_uring_open - submit one open of PATH on R, wait for it, and say how
 * it completed.  USER_DATA tags the request (visible in the io_uring trace
 * events).  The caller owns the descriptor in res->res (close it).
 * Returns 0 with *RES filled, or -errno when the ring itself failed
 * (-EPERM / -ENOSYS from a filter on io_uring_enter, -EBUSY...); the
 * result of the open is in res->res, never in the return value.  -ETIME:
 * the open was punted and had not completed after the ring's timeout
 * (dcp_uring_set_timeout()); it was cancelled, *RES holds the time waited
 * (res->res is -ETIME, nothing to close).
 */
int dcp_uring_open(struct dcp_uring *r, const char *path,
		   const struct dcp_uring_how *how, uint64_t user_data,
		   struct dcp_uring_result *res);

/* Counts and time of dcp_uring_open_all(). */
struct dcp_uring_batch {
	uint64_t opens;	     /* requests completed */
	uint64_t inlined;    /* of which completed inline */
	uint64_t punted;     /* of which completed by io-wq */
	uint64_t missed;     /* of which returned -EAGAIN (RESOLVE_CACHED) */
	uint64_t failed;     /* of which returned another error */
	uint64_t elapsed_ns; /* first submit to last completion */
	uint64_t cpu_ns;     /* CPU time of the process meanwhile, io-wq workers included */
	int first_error;     /* -errno of the first failed open (not EAGAIN) */
	size_t first_error_index;
	unsigned depth;	     /* requests in flight at most: DEPTH, or fewer
			      * when RLIMIT_NOFILE caps the fixed-file table
			      * (HOW->direct) or the descriptors the opens
			      * in flight hold (dcp_fd_free(), less 5) */
};

/*
 * dcp_uring_timed_out - the requests of R's last dcp_uring_open_all() that
 * were in flight when no completion came for the ring's timeout, and were
 * cancelled (not in its OPENS); 0 when it ended otherwise.  (A getter, not
 * a member of struct dcp_uring_batch: that struct is the caller's, and its
 * size is the ABI's.)
 */
uint64_t dcp_uring_timed_out(const struct dcp_uring *r);

/*
 * dcp_uring_open_all - open the N PATHS through R with up to DEPTH
 * (1..R's entries) requests in flight, as an application would, closing
 * every descriptor as it completes (with HOW->direct, each open goes into
 * a free slot of a fixed-file table of DEPTH slots, registered for the
 * run, and replaces the file left there: no close calls; O_CLOEXEC is
 * dropped, direct descriptors are not in the process's file table).  Each completion is classified inline
 * or punted as in dcp_uring_open(): what is in the CQ right after a submit
 * was posted inline during it; what a later wait brings was punted.  The
 * request of PATHS[i] has user_data I; when VERDICTS is not NULL,
 * VERDICTS[i] receives its enum dcp_uring_verdict.
 * Returns 0 with *OUT filled, or -errno when the ring failed; -ETIME (*OUT
 * filled, dcp_uring_timed_out() > 0) when no completion came for the ring's
 * timeout (dcp_uring_set_timeout()): the requests in flight were
 * cancelled and the paths not yet submitted were not opened.
 */
int dcp_uring_open_all(struct dcp_uring *r, const char *const *paths,
		       size_t n, unsigned depth, const struct dcp_uring_how *how,
		       unsigned char *verdicts, struct dcp_uring_batch *out);

/*
 * dcp_uring_support - can this system run io_uring opens?  Creates and
 * destroys one ring and checks the OPENAT (and, with NEED_OPENAT2, the
 * OPENAT2) opcode.  Returns 0, or -ENOSYS / -EPERM / -EACCES (io_uring
 * unavailable or blocked), -EOPNOTSUPP (the opcode is missing), -errno.
 */
int dcp_uring_support(bool need_openat2);

/*
 * dcp_uring_errno_unsupported - true when ERR from dcp_uring_new(),
 * dcp_uring_support() or a ring operation means io_uring cannot be used
 * here at all (ENOSYS, EPERM, EACCES, EOPNOTSUPP).
 */
bool dcp_uring_errno_unsupported(int err);

/*
 * dcp_uring_unsupported_reason - one sentence for a person explaining such
 * an error; it reads kernel.io_uring_disabled to name the cause.
 * Returns a static string.
 */
const char *dcp_uring_unsupported_reason(int err);

/*
 * dcp_open_flags_parse - parse a comma-separated list of open(2) flag
 * names, lower case without the O_ prefix: rdonly wronly rdwr creat excl
 * trunc append nonblock nofollow directory path noctty cloexec noatime
 * sync dsync direct tmpfile largefile.  At most one access mode.
 * Returns 0 and stores the flags, or -EINVAL and points *BAD (if not NULL)
 * at the offending name in S.
 */
int dcp_open_flags_parse(const char *s, unsigned long long *flags,
			 const char **bad);

/*
 * dcp_open_flags_format - the inverse: write the names of FLAGS, comma
 * separated, into BUF of SIZE bytes (always terminated).  Returns BUF.
 */
char *dcp_open_flags_format(unsigned long long flags, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
