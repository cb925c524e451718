/* SPDX-License-Identifier: MIT */
/*
 * dcp_progress.h - a timer thread for progress lines, and the line: the
 * timer calls TICK every interval; the command formats the line with
 * dcp_pr_progress() and writes it (to stderr, and only when stderr is a
 * terminal).
 */
#ifndef DCP_PROGRESS_H
#define DCP_PROGRESS_H

#include <stdint.h>

#include "dcp_report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_progress;

/*
 * dcp_progress_start - call TICK(ARG) every INTERVAL_NS on a thread of its
 * own, the first time after DELAY_NS (so short runs show nothing).
 * Returns 0 and stores the timer in *OUT, or -errno.
 */
int dcp_progress_start(void (*tick)(void *arg), void *arg, uint64_t delay_ns,
		       uint64_t interval_ns, struct dcp_progress **out);

/*
 * dcp_progress_stop - stop the timer and wait for a running TICK to end;
 * returns whether TICK ever ran (so the caller can clear the line).
 * NULL is accepted and returns 0.
 */
int dcp_progress_stop(struct dcp_progress *p);

/*
 * dcp_pr_progress - a progress line for a terminal of WIDTH columns:
 * "\r\e[K" (return, clear line), "N paths, R/s: PATH", PATH quoted and cut
 * at the front to fit ("...end/of/path").
 */
void dcp_pr_progress(struct dcp_buf *b, unsigned long long seen, double rate,
		     const char *path, unsigned width);

#ifdef __cplusplus
}
#endif

#endif
