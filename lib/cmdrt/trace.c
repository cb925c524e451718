// SPDX-License-Identifier: MIT
/* trace.c - io_uring tracepoints of one process, in a private tracefs instance. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcp_trace.h"

enum { EV_SUBMIT, EV_ASYNC, EV_COMPLETE, NEVENTS };

struct dcp_trace {
	char dir[256];			/* .../instances/dcprobe-PID */
	char enable[NEVENTS][PATH_MAX]; /* events/io_uring/NAME/enable */
	const char *names[NEVENTS];	/* event names as printed */
	struct dcp_trace_req *reqs;
	size_t nreqs, cap;
	size_t *slots;			/* hash of user_data: index + 1, 0 empty */
	size_t nslots;			/* a power of two, > 2 * cap */
};

static const char *const tracefs_roots[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

/* Write a short string to a tracefs file (async-signal-safe). */
static int put(const char *path, const char *s, int oflags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | oflags);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int putf(const struct dcp_trace *t, const char *file, const char *s)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", t->dir, file);
	return put(path, s, O_TRUNC);
}

/* Find the tracefs root that has instances; -ENOENT or -EACCES. */
static int find_root(const char **root)
{
	int ret = -ENOENT;

	for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(*tracefs_roots); i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/instances", tracefs_roots[i]);
		if (access(path, F_OK) == 0) {
			*root = tracefs_roots[i];
			return 0;
		}
		if (errno == EACCES || errno == EPERM)
			ret = -errno;
	}
	return ret;
}

/* Point enable[EV] at the first event of NAMES that this kernel has. */
static int pick_event(struct dcp_trace *t, int ev, const char *const *names)
{
	for (; *names; names++) {
		char path[sizeof(t->enable[ev])];

		snprintf(path, sizeof(path), "%s/events/io_uring/%s/enable",
			 t->dir, *names);
		if (access(path, W_OK) == 0) {
			memcpy(t->enable[ev], path, sizeof(path));
			t->names[ev] = *names;
			return 0;
		}
	}
	t->enable[ev][0] = '\0';
	return -EOPNOTSUPP;
}

int dcp_trace_start(pid_t pid, unsigned buffer_kb, struct dcp_trace **out)
{
	static const char *const submit[] = { "io_uring_submit_req", "io_uring_submit_sqe", NULL };
	static const char *const async[] = { "io_uring_queue_async_work", NULL };
	static const char *const complete[] = { "io_uring_complete", NULL };
	struct dcp_trace *t;
	const char *root;
	char num[32];
	int ret;

	ret = find_root(&root);
	if (ret < 0)
		return ret;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	snprintf(t->dir, sizeof(t->dir), "%s/instances/dcprobe-%ld", root, (long)pid);
	if (mkdir(t->dir, 0700) < 0) {
		/* Left behind by a killed process that had our pid: reuse the name. */
		if (errno != EEXIST || rmdir(t->dir) < 0 || mkdir(t->dir, 0700) < 0) {
			ret = -errno;
			free(t);
			return ret;
		}
	}
	ret = pick_event(t, EV_SUBMIT, submit);
	if (!ret)
		ret = pick_event(t, EV_ASYNC, async);
	if (!ret)
		ret = pick_event(t, EV_COMPLETE, complete);
	/* Our pid and every thread it forks: the io-wq workers. */
	snprintf(num, sizeof(num), "%ld", (long)pid);
	if (!ret)
		ret = putf(t, "set_event_pid", num);
	if (!ret)
		ret = putf(t, "options/event-fork", "1");
	if (!ret && buffer_kb) {
		snprintf(num, sizeof(num), "%u", buffer_kb);
		ret = putf(t, "buffer_size_kb", num);
	}
	for (int ev = 0; ev < NEVENTS && !ret; ev++)
		ret = put(t->enable[ev], "1", O_TRUNC);
	if (!ret)
		ret = putf(t, "tracing_on", "1");
	if (ret < 0) {
		dcp_trace_stop(t);
		return ret;
	}
	*out = t;
	return 0;
}

static size_t slot_of(const struct dcp_trace *t, uint64_t user_data)
{
	uint64_t h = user_data * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 17) & (t->nslots - 1);

	while (t->slots[i] && t->reqs[t->slots[i] - 1].user_data != user_data)
		i = (i + 1) & (t->nslots - 1);
	return i;
}

/* Grow the request table and its hash together (rehashing every entry). */
static int reqs_grow(struct dcp_trace *t)
{
	size_t cap = t->cap ? 2 * t->cap : 16, nslots = 4 * cap;
	struct dcp_trace_req *p = realloc(t->reqs, cap * sizeof(*p));
	size_t *slots;

	if (!p)
		return -ENOMEM;
	t->reqs = p;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	t->cap = cap;
	for (size_t i = 0; i < t->nreqs; i++)
		t->slots[slot_of(t, t->reqs[i].user_data)] = i + 1;
	return 0;
}

/* The request with USER_DATA, added if new: O(1), so a trace of n
 * requests is read in O(n) (a linear search made --bench quadratic). */
static struct dcp_trace_req *req_of(struct dcp_trace *t, uint64_t user_data)
{
	size_t i;

	if (t->nreqs == t->cap && reqs_grow(t) < 0)
		return NULL;
	i = slot_of(t, user_data);
	if (t->slots[i])
		return &t->reqs[t->slots[i] - 1];
	t->reqs[t->nreqs] = (struct dcp_trace_req){ .user_data = user_data };
	t->slots[i] = ++t->nreqs;
	return &t->reqs[t->nreqs - 1];
}

/* One line of the trace file: "task-pid [cpu] flags ts: EVENT: fields". */
static int parse_line(struct dcp_trace *t, const char *line)
{
	char key[96];
	const char *p;
	struct dcp_trace_req *r;
	int ev;

	for (ev = 0; ev < NEVENTS; ev++) {
		snprintf(key, sizeof(key), " %s: ", t->names[ev]);
		if (strstr(line, key))
			break;
	}
	if (ev == NEVENTS)
		return 0;
	p = strstr(line, "user_data 0x");
	if (!p)
		return 0;
	r = req_of(t, strtoull(p + 12, NULL, 16));
	if (!r)
		return -ENOMEM;
	switch (ev) {
	case EV_SUBMIT:
		r->submitted++;
		break;
	case EV_ASYNC:
		r->punted++;
		break;
	case EV_COMPLETE:
		r->completed++;
		p = strstr(line, "result ");
		if (p)
			r->result = (int)strtol(p + 7, NULL, 10);
		break;
	}
	return 1;
}

int dcp_trace_collect(struct dcp_trace *t)
{
	char path[PATH_MAX + 16];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int n = 0, ret;

	t->nreqs = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
	snprintf(path, sizeof(path), "%s/trace", t->dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		ret = parse_line(t, line);
		if (ret < 0) {
			n = ret;
			break;
		}
		n += ret;
	}
	if (ferror(f) && n >= 0)
		n = -EIO;
	free(line);
	fclose(f);
	/* Opening "trace" for writing with O_TRUNC empties the buffer. */
	ret = put(path, "", O_TRUNC);
	return n < 0 ? n : ret < 0 ? ret : n;
}

const struct dcp_trace_req *dcp_trace_find(const struct dcp_trace *t,
					   uint64_t user_data)
{
	size_t i;

	if (!t->nslots)
		return NULL;
	i = slot_of(t, user_data);
	return t->slots[i] ? &t->reqs[t->slots[i] - 1] : NULL;
}

const char *dcp_trace_dir(const struct dcp_trace *t)
{
	return t->dir;
}

void dcp_trace_abort(const struct dcp_trace *t)
{
	for (int ev = 0; ev < NEVENTS; ev++)
		if (t->enable[ev][0])
			put(t->enable[ev], "0", O_TRUNC);
	rmdir(t->dir);
}

int dcp_trace_stop(struct dcp_trace *t)
{
	int ret = 0;

	if (!t)
		return 0;
	for (int ev = 0; ev < NEVENTS; ev++)
		if (t->enable[ev][0])
			put(t->enable[ev], "0", O_TRUNC);
	if (rmdir(t->dir) < 0)
		ret = -errno;
	free(t->reqs);
	free(t->slots);
	free(t);
	return ret;
}
