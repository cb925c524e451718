/* SPDX-License-Identifier: MIT */
/*
 * dcp_trace.h - what the kernel's io_uring tracepoints say about our rings.
 *
 * A private tracefs instance (instances/dcprobe-PID) records the
 * io_uring_submit_req, io_uring_queue_async_work and io_uring_complete
 * events of one process and the threads it forks (its io-wq workers), so
 * the global trace buffer and other tracers are not disturbed.  Requests
 * are told apart by their user_data.  Needs root and a mounted tracefs.
 */
#ifndef DCP_TRACE_H
#define DCP_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_trace;

/* What the kernel traced for one request (one user_data). */
struct dcp_trace_req {
	uint64_t user_data;
	unsigned submitted; /* io_uring_submit_req events */
	unsigned punted;    /* io_uring_queue_async_work events */
	unsigned completed; /* io_uring_complete events */
	int result;	    /* res of the last io_uring_complete */
};

/*
 * dcp_trace_start - create the instance and enable the events for PID.
 * BUFFER_KB sets the instance's per-CPU buffer size (0: tracefs default).
 * Returns 0 and stores *OUT, or -errno: -ENOENT (tracefs is not mounted),
 * -EACCES / -EPERM (not root), -EOPNOTSUPP (no io_uring tracepoints).
 */
int dcp_trace_start(pid_t pid, unsigned buffer_kb, struct dcp_trace **out);

/*
 * dcp_trace_collect - read and clear the instance's buffer, replacing the
 * records of the previous collection.  Returns the number of io_uring
 * events read, or -errno.
 */
int dcp_trace_collect(struct dcp_trace *t);

/*
 * dcp_trace_find - the record of USER_DATA in the last collection, or NULL
 * when the kernel traced nothing for it.
 */
const struct dcp_trace_req *dcp_trace_find(const struct dcp_trace *t,
					   uint64_t user_data);

/* dcp_trace_dir - the instance directory, for messages. */
const char *dcp_trace_dir(const struct dcp_trace *t);

/*
 * dcp_trace_stop - disable the events, remove the instance, free T
 * (NULL is accepted).  Returns 0 or the -errno of the removal.
 */
int dcp_trace_stop(struct dcp_trace *t);

/*
 * dcp_trace_abort - disable and remove the instance without freeing
 * anything: only open/write/close/rmdir, so it may run in a signal handler.
 */
void dcp_trace_abort(const struct dcp_trace *t);

#ifdef __cplusplus
}
#endif

#endif
