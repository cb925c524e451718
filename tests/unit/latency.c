/* Unit tests for lib/cmdrt/latency.c: nearest-rank quantiles of a latency set. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "dcp_cmd.h"

int main(void)
{
	const uint64_t v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct dcp_latency l = DCP_LATENCY_INIT;
	struct dcp_latency_summary s;

	CHECK_INT(dcp_percentile(v, 0, 50), 0);
	CHECK_INT(dcp_percentile(v, 10, 0), 1);
	CHECK_INT(dcp_percentile(v, 10, 50), 5);
	CHECK_INT(dcp_percentile(v, 10, 99), 10);
	CHECK_INT(dcp_percentile(v, 10, 100), 10);
	CHECK_INT(dcp_percentile(v, 1, 99), 1);
	CHECK_INT(dcp_percentile(v, 3, 50), 2);

	dcp_latency_summarize(&l, &s);
	CHECK_INT(s.n, 0);
	CHECK_INT(s.max, 0);
	/* 200 values given in descending order: 200, 199, ... 1. */
	for (uint64_t i = 200; i > 0; i--)
		CHECK_INT(dcp_latency_add(&l, i), 0);
	dcp_latency_summarize(&l, &s);
	CHECK_INT(s.n, 200);
	CHECK_INT(s.min, 1);
	CHECK_INT(s.median, 100);
	CHECK_INT(s.p99, 198);
	CHECK_INT(s.max, 200);
	CHECK_INT(dcp_latency_add(&l, 0), 0);
	dcp_latency_summarize(&l, &s);
	CHECK_INT(s.min, 0);
	CHECK_INT(s.n, 201);
	dcp_latency_free(&l);
	CHECK_INT(l.n, 0);
	return CHECK_DONE();
}
