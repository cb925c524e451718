// SPDX-License-Identifier: MIT
/* msg.c - every diagnostic whole, in one write(2) under one lock. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcp_msg.h"

#define CLEAR_LINE "\r\033[K"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool progress_shown; /* under lock */

/* Write N bytes at P to stderr, short writes and EINTR retried (stderr's
 * failures have nowhere to be reported: they are ignored, as error(3) does). */
static void write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/*
 * Write TEXT (N bytes) after erasing a progress line, in one write when
 * memory allows, in any case under the lock: no other message comes between.
 * With PROGRESS, TEXT is the new progress line.
 */
static void emit(const char *text, size_t n, bool progress)
{
	int saved = errno;

	pthread_mutex_lock(&lock);
	if (progress_shown && !progress) {
		char *one = malloc(n + sizeof(CLEAR_LINE) - 1);

		if (one) {
			memcpy(one, CLEAR_LINE, sizeof(CLEAR_LINE) - 1);
			memcpy(one + sizeof(CLEAR_LINE) - 1, text, n);
			write_all(one, n + sizeof(CLEAR_LINE) - 1);
			free(one);
			n = 0;
		} else {
			write_all(CLEAR_LINE, sizeof(CLEAR_LINE) - 1);
		}
	}
	write_all(text, n);
	progress_shown = progress;
	pthread_mutex_unlock(&lock);
	errno = saved;
}

__attribute__((format(printf, 2, 0)))
static void vwarn(int err, const char *fmt, va_list ap)
{
	static const char lost[] = "(a message was lost: out of memory)\n";
	struct dcp_buf b = DCP_BUF_INIT;
	int saved = errno;
	char ebuf[128];

	dcp_buf_puts(&b, program_invocation_name);
	dcp_buf_puts(&b, ": ");
	dcp_buf_vprintf(&b, fmt, ap);
	if (err) {
		dcp_buf_puts(&b, ": ");
		dcp_buf_puts(&b, strerror_r(err, ebuf, sizeof(ebuf)));
	}
	dcp_buf_putc(&b, '\n');
	if (b.oom)
		emit(lost, sizeof(lost) - 1, false);
	else
		emit(b.data, b.len, false);
	dcp_buf_free(&b);
	errno = saved;
}

void dcp_warn(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(err, fmt, ap);
	va_end(ap);
}

void dcp_die(int status, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(err, fmt, ap);
	va_end(ap);
	exit(status);
}

void dcp_msg_path(struct dcp_buf *b, const char *path, size_t len)
{
	dcp_buf_puts(b, program_invocation_name);
	dcp_buf_puts(b, ": ");
	dcp_buf_quote_msg(b, path, len);
	dcp_buf_puts(b, ": ");
}

void dcp_msg_buf(struct dcp_buf *b)
{
	if (b->len)
		emit(b->data, b->len, false);
	dcp_buf_reset(b);
}

void dcp_msg_progress(struct dcp_buf *b)
{
	if (!b->oom)
		emit(b->data ? b->data : "", b->len, true);
	dcp_buf_reset(b);
}

void dcp_msg_progress_clear(void)
{
	emit("", 0, false);
}
