/* SPDX-License-Identifier: MIT */
/* dcp_latency.h - a growing set of latencies and its quantiles. */
#ifndef DCP_LATENCY_H
#define DCP_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_latency {
	uint64_t *ns;
	size_t n, cap;
	bool sorted;
};

#define DCP_LATENCY_INIT { NULL, 0, 0, true }

/* Minimum, median, 99th percentile and maximum (nearest rank), in ns. */
struct dcp_latency_summary {
	size_t n;
	uint64_t min, median, p99, max;
};

/* dcp_latency_add - record one latency.  Returns 0 or -ENOMEM. */
int dcp_latency_add(struct dcp_latency *l, uint64_t ns);

/*
 * dcp_latency_summarize - the quantiles of what L holds (all zero when it
 * is empty).  Sorts L in place.
 */
void dcp_latency_summarize(struct dcp_latency *l, struct dcp_latency_summary *s);

/* dcp_latency_free - release the memory and empty L. */
void dcp_latency_free(struct dcp_latency *l);

/*
 * dcp_percentile - the P-th percentile (0..100, nearest rank) of the N
 * values in SORTED (ascending).  Returns 0 for N == 0.
 */
uint64_t dcp_percentile(const uint64_t *sorted, size_t n, double p);

#ifdef __cplusplus
}
#endif

#endif
