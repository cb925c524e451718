/* SPDX-License-Identifier: MIT */
/*
 * dcp_batch.h - probe many names of one directory at once.
 *
 * A batch prober submits RESOLVE_CACHED opens through io_uring, 64 at a
 * time, into direct descriptors (no file-table work, no close calls).
 * The flag is set by the application, so io_uring never retries a miss
 * in a worker: a batch does no I/O and warms nothing, exactly like
 * dcp_probe_at().  Where io_uring is unavailable (old kernel, seccomp,
 * kernel.io_uring_disabled) the prober silently uses dcp_probe_at().
 * A prober belongs to one thread.
 */
#ifndef DCP_BATCH_H
#define DCP_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_batch;

/* dcp_batch_new() flags */
enum {
	DCP_BATCH_SYNC = 1 << 0, /* never use io_uring */
};

/*
 * dcp_batch_new - make a prober.  Never fails for want of io_uring.
 * Returns 0 and stores the prober in *OUT, or -ENOMEM.
 */
int dcp_batch_new(unsigned flags, struct dcp_batch **out);

/* dcp_batch_free - release the prober (NULL is accepted). */
void dcp_batch_free(struct dcp_batch *b);

/* dcp_batch_uses_uring - true when probes go through io_uring. */
bool dcp_batch_uses_uring(const struct dcp_batch *b);

/*
 * dcp_batch_probe - probe N names relative to DIRFD.  FLAGS[i] takes
 * the dcp_probe_at() flags for NAMES[i] (DCP_FOLLOW, DCP_NOTDIR), or FLAGS
 * is NULL for none.  RESULTS[i] receives what dcp_probe_at() would
 * return: 0 for cached, or -errno.  A miss is asked again after all the
 * names were probed once (dcp_probe_again()), which outlasts the changes
 * a mount namespace made or torn down brings to the mount table; when one
 * of them was not a miss after all, every miss left once more, after the
 * table has been still.
 */
void dcp_batch_probe(struct dcp_batch *b, int dirfd, const char *const *names,
		     const unsigned *flags, size_t n, int *results);

#ifdef __cplusplus
}
#endif

#endif
