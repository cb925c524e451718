/* SPDX-License-Identifier: MIT */
/*
 * dcp_uring_run.h - one uring-open run: open each path through io_uring,
 * time it, and say whether the kernel completed it inline (its lookup was
 * cached) or punted it to an io-wq worker (its lookup needed I/O).
 *
 * A path goes: one IORING_OP_OPENAT2 (dcp_uring.h) -> its verdict from the
 * completion, and under --trace from the kernel's tracepoints (dcp_trace.h)
 * -> the explanation of a miss (--explain) -> its data (--pages) -> its
 * line.  --bench opens the whole list with a queue of requests in flight
 * (dcp_uring.h's batch) to compare inline-first with forced async.
 */
#ifndef DCP_URING_RUN_H
#define DCP_URING_RUN_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>

#include "dcp_opts.h"
#include "dcp_uring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The open flags of a run without --flags. */
#define DCP_URING_RUN_DEFAULT_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

/* How long a run waits for an open's completion without --timeout. */
#define DCP_URING_RUN_DEFAULT_TIMEOUT_NS (10ULL * 1000000000ULL)

/* uring-open's own choices; the shared ones are in struct dcp_opts. */
struct dcp_uring_run_config {
	uint64_t count;		 /* -n: opens of each path */
	unsigned depth;		 /* --depth: requests in flight (--bench) */
	bool depth_given;
	bool trace;		 /* --trace: the kernel's tracepoints too */
	bool no_defer;		 /* --no-defer */
	bool pages;		 /* --pages: data residency of each file opened */
	bool bench;		 /* --bench: the whole list, timed as one */
	uint64_t timeout_ns;	 /* --timeout: the longest wait for a completion */
	struct dcp_uring_how how; /* how to open: flags, --async, --cached... */
};

/*
 * dcp_uring_run - open every path of O (arguments, then lists) as CFG says
 * and write the lines and the summary (stdout, or --output; stderr).
 * Returns the exit status (DCP_EXIT_*), the output published
 * (dcp_opts_finish()); exits itself on a fatal error.  One run per process.
 */
int dcp_uring_run(const struct dcp_opts *o, const struct dcp_uring_run_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
