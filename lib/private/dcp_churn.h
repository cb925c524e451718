/* SPDX-License-Identifier: MIT */
/*
 * private/dcp_churn.h - the pause after which a cached lookup that missed
 * twice is asked again (not installed: lib/private/ is the library's own).
 *
 * A mount namespace made or torn down anywhere on the machine changes the
 * mount table once per mount it holds, in a burst of tens of microseconds;
 * an RCU path walk that overlaps a change fails, and RESOLVE_CACHED says
 * EAGAIN although every component is cached.  A pause of CHURN_GAP_NS
 * outlasts a burst (dcp_probe_again(), lib/probe.c, has the measurements).
 * The callers that pause for a name they have no reason to think cached
 * keep the time of their last pause that found a real miss.
 */
#ifndef DCP_PRIVATE_CHURN_H
#define DCP_PRIVATE_CHURN_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "dcp_probe.h"
#include "dcp_util.h"

/*
 * Two pauses, CHURN_GAP_NS then four times that; a real miss pays them at
 * most once per CHURN_EVERY_NS (with the timer's slack, under 2% of the time).
 */
enum { CHURN_GAP_NS = 50000, CHURN_GAPS = 2, CHURN_EVERY_NS = 20000000 };

/* The pause before asking again the Ith time (0, 1). */
static inline uint64_t churn_gap_ns(unsigned i)
{
	return (uint64_t)CHURN_GAP_NS << (2 * i);
}

static inline void churn_pause_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * openat2() of a name that should be cached (its probe said so, or it was
 * used a moment ago): a miss is asked again at once, then after the two
 * pauses.  PAUSED, when not NULL, is when the caller's last pauses found a
 * real miss: they are skipped less than CHURN_EVERY_NS after it, and it is
 * set when they find one.  Returns the descriptor or -errno.
 */
static inline int churn_openat2(int dirfd, const char *path, unsigned long long flags,
				unsigned long long resolve, uint64_t *paused)
{
	int fd = dcp_openat2(dirfd, path, flags, 0, resolve);

	if (fd == -EAGAIN)
		fd = dcp_openat2(dirfd, path, flags, 0, resolve);
	if (fd != -EAGAIN || (paused && dcp_now_ns() - *paused < CHURN_EVERY_NS))
		return fd;
	for (unsigned i = 0; fd == -EAGAIN && i < CHURN_GAPS; i++) {
		churn_pause_ns(churn_gap_ns(i));
		fd = dcp_openat2(dirfd, path, flags, 0, resolve);
	}
	if (fd == -EAGAIN && paused)
		*paused = dcp_now_ns();
	return fd;
}

#endif
