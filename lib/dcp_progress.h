/* SPDX-License-Identifier: MIT */
/*
 * dcp_progress.h - a timer thread for progress lines.  The library only
 * calls TICK every interval; the command formats and writes (to stderr,
 * and only when stderr is a terminal).
 */
#ifndef DCP_PROGRESS_H
#define DCP_PROGRESS_H

#include <stdint.h>

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

#ifdef __cplusplus
}
#endif

#endif
