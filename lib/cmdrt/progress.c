// SPDX-License-Identifier: MIT
/* progress.c - a timer thread that calls the command's progress callback. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcp_progress.h"
#include "dcp_report.h"

struct dcp_progress {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void (*tick)(void *arg);
	void *arg;
	uint64_t delay_ns, interval_ns;
	bool stop;
	bool ticked;
};

static void add_ns(struct timespec *ts, uint64_t ns)
{
	ts->tv_sec += (time_t)(ns / 1000000000ULL);
	ts->tv_nsec += (long)(ns % 1000000000ULL);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *progress_main(void *arg)
{
	struct dcp_progress *p = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	add_ns(&next, p->delay_ns);
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		if (pthread_cond_timedwait(&p->cond, &p->lock, &next) != ETIMEDOUT)
			continue;
		if (p->stop)
			break;
		p->ticked = true;
		/* Ticking under the lock makes stop() wait for a running tick. */
		p->tick(p->arg);
		add_ns(&next, p->interval_ns);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int dcp_progress_start(void (*tick)(void *arg), void *arg, uint64_t delay_ns,
		       uint64_t interval_ns, struct dcp_progress **out)
{
	struct dcp_progress *p = calloc(1, sizeof(*p));
	pthread_condattr_t attr;
	int ret;

	if (!p)
		return -ENOMEM;
	p->tick = tick;
	p->arg = arg;
	p->delay_ns = delay_ns;
	p->interval_ns = interval_ns ? interval_ns : 1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&p->thread, NULL, progress_main, p);
	if (ret) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return -ret;
	}
	*out = p;
	return 0;
}

int dcp_progress_stop(struct dcp_progress *p)
{
	int ticked;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	ticked = p->ticked;
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return ticked;
}

/* ---- the line ---- */

void dcp_pr_progress(struct dcp_buf *b, unsigned long long seen, double rate,
		     const char *path, unsigned width)
{
	struct dcp_buf q = DCP_BUF_INIT;
	size_t start, head, keep;

	dcp_buf_puts(b, "\r\033[K");
	start = b->len;
	dcp_buf_count(b, seen, "path", "paths");
	dcp_buf_printf(b, ", %.0f/s: ", rate);
	head = b->len - start;
	dcp_buf_quote(&q, path, strlen(path));
	keep = width > head + 1 ? width - head - 1 : 0; /* never the last column */
	if (q.oom) {
		/* nothing */
	} else if (q.len <= keep) {
		dcp_buf_add(b, q.data, q.len);
	} else if (keep > 3) {
		/* The end of a long path says where the walk is. */
		size_t from = q.len - (keep - 3);

		while (from < q.len && ((unsigned char)q.data[from] & 0xc0) == 0x80)
			from++;
		dcp_buf_puts(b, "...");
		dcp_buf_add(b, q.data + from, q.len - from);
	}
	dcp_buf_free(&q);
}
