// SPDX-License-Identifier: MIT
/* latency.c - a growing set of latencies and its quantiles. */
#include <errno.h>
#include <stdlib.h>

#include "dcp_latency.h"

int dcp_latency_add(struct dcp_latency *l, uint64_t ns)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		uint64_t *p = realloc(l->ns, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->ns = p;
		l->cap = cap;
	}
	if (l->n && ns < l->ns[l->n - 1])
		l->sorted = false;
	l->ns[l->n++] = ns;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t dcp_percentile(const uint64_t *sorted, size_t n, double p)
{
	double exact = p / 100.0 * (double)n;
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)exact;
	if ((double)rank < exact)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

void dcp_latency_summarize(struct dcp_latency *l, struct dcp_latency_summary *s)
{
	if (!l->sorted) {
		qsort(l->ns, l->n, sizeof(*l->ns), cmp_u64);
		l->sorted = true;
	}
	s->n = l->n;
	s->min = dcp_percentile(l->ns, l->n, 0);
	s->median = dcp_percentile(l->ns, l->n, 50);
	s->p99 = dcp_percentile(l->ns, l->n, 99);
	s->max = dcp_percentile(l->ns, l->n, 100);
}

void dcp_latency_free(struct dcp_latency *l)
{
	free(l->ns);
	*l = (struct dcp_latency)DCP_LATENCY_INIT;
}
