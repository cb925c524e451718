/* Unit tests for lib/cmdrt/progress.c: ticks come after the delay, stop waits. */
#define _GNU_SOURCE
#include <time.h>

#include "check.h"
#include "dcp_cmd.h"

static int ticks;

static void tick(void *arg)
{
	(void)arg;
	ticks++;
}

int main(void)
{
	struct dcp_progress *p;
	struct timespec ts = { 0, 120 * 1000000L };

	/* A run shorter than the delay never ticks. */
	CHECK_INT(dcp_progress_start(tick, NULL, 1000000000ULL, 1000000ULL, &p), 0);
	CHECK_INT(dcp_progress_stop(p), 0);
	CHECK_INT(ticks, 0);
	/* 10 ms delay, 10 ms interval, 120 ms run: several ticks. */
	CHECK_INT(dcp_progress_start(tick, NULL, 10000000ULL, 10000000ULL, &p), 0);
	nanosleep(&ts, NULL);
	CHECK_INT(dcp_progress_stop(p), 1);
	CHECK(ticks >= 3);
	CHECK_INT(dcp_progress_stop(NULL), 0);
	return CHECK_DONE();
}
