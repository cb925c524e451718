// SPDX-License-Identifier: MIT
/*
 * output.c - --output=FILE: a temporary file beside FILE, renamed into
 * place only when whole; and the writer of standard output (dcp_output.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcp_output.h"

struct dcp_output {
	char *file; /* FILE as given */
	char *tmp;  /* the temporary file's path */
	int fd;	    /* the temporary file (standard output is a copy) */
};

static _Atomic int first_failure;

/*
 * Move FD to the highest descriptor allowed (at most 1023): the lowest ones
 * stay free, so that the descriptors a command reports (cachedopen's "fd
 * 3") are those of a run without --output.
 */
static int out_of_the_way(int fd)
{
	struct rlimit rl;
	int hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= 4)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)(rl.rlim_cur < 1024 ? rl.rlim_cur - 1 : 1023));
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

int dcp_output_open(const char *file, struct dcp_output **out)
{
	struct dcp_output *o;
	char *d = strdup(file), *b = strdup(file);
	int ret;

	o = calloc(1, sizeof(*o));
	if (!o || !d || !b)
		goto nomem;
	o->file = strdup(file);
	/* ".NAME.XXXXXX" in FILE's directory: the rename stays in one filesystem. */
	if (!o->file || asprintf(&o->tmp, "%s/.%s.XXXXXX", dirname(d), basename(b)) < 0) {
		o->tmp = NULL;
		goto nomem;
	}
	free(d);
	free(b);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		ret = -errno;
		goto fail;
	}
	o->fd = out_of_the_way(o->fd);
	/* Readable by the collector, whatever the umask (as a file written by '>'). */
	if (fchmod(o->fd, 0644) < 0 || dup2(o->fd, STDOUT_FILENO) < 0) {
		ret = -errno;
		unlink(o->tmp);
		close(o->fd);
		goto fail;
	}
	*out = o;
	return 0;
nomem:
	free(d);
	free(b);
	ret = -ENOMEM;
fail:
	if (o) {
		free(o->file);
		free(o->tmp);
		free(o);
	}
	return ret;
}

int dcp_output_truncate(struct dcp_output *out)
{
	if (ftruncate(out->fd, 0) < 0 || lseek(out->fd, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

static void release(struct dcp_output *out)
{
	free(out->file);
	free(out->tmp);
	free(out);
}

int dcp_output_commit(struct dcp_output *out)
{
	int ret = 0;

	/* A full disk may show only here (delayed allocation): fsync says. */
	if (fsync(out->fd) < 0 || close(out->fd) < 0) {
		ret = -errno;
		unlink(out->tmp);
	} else if (rename(out->tmp, out->file) < 0) {
		ret = -errno;
		unlink(out->tmp);
	}
	release(out);
	return ret;
}

void dcp_output_discard(struct dcp_output *out)
{
	unlink(out->tmp);
	close(out->fd);
	release(out);
}

int dcp_output_write(struct dcp_buf *b)
{
	int ret = dcp_buf_write(b, STDOUT_FILENO);

	if (ret < 0) {
		int none = 0;

		atomic_compare_exchange_strong(&first_failure, &none, ret);
	}
	return ret;
}

int dcp_output_failed(void)
{
	return atomic_load(&first_failure);
}
