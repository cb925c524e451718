/* Unit tests for lib/cmdrt/msg.c: every message whole on one line, from many threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dcp_cmd.h"

#define THREADS 16
#define EACH 500

static void *warner(void *arg)
{
	long t = (long)arg;
	struct dcp_buf b = DCP_BUF_INIT;

	for (int i = 0; i < EACH; i++) {
		if (i % 50 == 0) { /* a progress line now and then, erased by the next message */
			dcp_buf_printf(&b, "\r\033[Kprogress %ld", t);
			dcp_msg_progress(&b);
		}
		if (i % 2)
			dcp_warn(EMFILE, "cannot walk /some/path/%ld/%d", t, i);
		else {
			dcp_buf_printf(&b, "line %ld/%d\n", t, i);
			dcp_msg_buf(&b);
		}
	}
	dcp_buf_free(&b);
	return NULL;
}

int main(void)
{
	char name[] = "/tmp/dcp-unit-msg.XXXXXX", *line = NULL, want[128];
	int fd = mkstemp(name), saved = dup(STDERR_FILENO), errors = 0, lines = 0, bufs = 0;
	pthread_t th[THREADS];
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	if (fd < 0 || saved < 0)
		return 77;
	unlink(name);
	program_invocation_name = "prog";
	dup2(fd, STDERR_FILENO);
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, warner, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	errno = EINTR;
	dcp_warn(0, "%s", "no errno");
	CHECK_INT(errno, EINTR); /* the writer keeps errno */
	dcp_msg_progress_clear();
	dup2(saved, STDERR_FILENO);

	f = fdopen(fd, "r");
	rewind(f);
	while ((n = getline(&line, &cap, f)) > 0) {
		long t;
		int i;
		char *s = line;

		lines++;
		/* Only a message may follow an erased progress line. */
		while (strncmp(s, "\r\033[Kprogress ", 13) == 0) {
			s += 13;
			while (*s >= '0' && *s <= '9')
				s++;
		}
		if (strncmp(s, "\r\033[K", 4) == 0)
			s += 4;
		if (sscanf(s, "prog: cannot walk /some/path/%ld/%d", &t, &i) == 2) {
			snprintf(want, sizeof(want), "prog: cannot walk /some/path/%ld/%d: %s\n", t, i,
				 strerror(EMFILE));
			errors += strcmp(s, want) == 0;
		} else if (sscanf(s, "line %ld/%d", &t, &i) == 2) {
			snprintf(want, sizeof(want), "line %ld/%d\n", t, i);
			bufs += strcmp(s, want) == 0;
		} else {
			CHECK_STR(s, "prog: no errno\n");
		}
	}
	CHECK_INT(errors, THREADS * EACH / 2);
	CHECK_INT(bufs, THREADS * EACH / 2);
	CHECK_INT(lines, THREADS * EACH + 1);
	free(line);
	fclose(f);
	return CHECK_DONE();
}
