// SPDX-License-Identifier: MIT
/*
 * trace.c - io_uring tracepoints of one process, in a private tracefs instance.
 *
 * The events' text changed with the kernel: a request's user_data is
 * "user_data 0x..." in every event since the tracepoints' rework of 5.18
 * (6.1: io_uring_submit_sqe; 6.4 on: io_uring_submit_req); before (5.10),
 * io_uring_submit_sqe says "data 0x..." and io_uring_queue_async_work has
 * no user_data at all, only the request's address ("request %p"), which
 * its io_uring_submit_sqe ("req %p") gave: the punt is counted for the
 * request last submitted at that address on that ring.  Which text this
 * kernel prints is read from the event's format, not judged by a version.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
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
	bool async_by_addr;		/* io_uring_queue_async_work has no user_data */
	struct addr_slot {		/* then: the request at (ring, address) */
		uint64_t ring, req, user_data;
	} *addrs;
	size_t naddrs, addr_slots;	/* used; a power of two, > 2 * naddrs */
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

/*
 * set_event_pid filters by thread, and options/event-fork adds only the
 * threads made after it is written: PID's threads that exist already
 * (io-wq workers, iou-wrk-PID, made for an earlier ring: a task's workers
 * serve all its rings, and on 6.1 an async request completes in one) are
 * added here.  The threads are read again until no new one appears, so
 * one made while they were written is not missed.  Returns 0 or -errno.
 */
static int filter_threads(const struct dcp_trace *t, pid_t pid)
{
	char path[PATH_MAX + 64], task[64], num[32];
	long *tids = NULL;
	size_t n = 0, cap = 0;
	int ret = 0, added = 1;

	snprintf(path, sizeof(path), "%s/set_event_pid", t->dir);
	snprintf(task, sizeof(task), "/proc/%ld/task", (long)pid);
	for (int round = 0; added && round < 64 && !ret; round++) {
		struct dirent *de;
		DIR *d = opendir(task);

		added = 0;
		if (!d) {
			ret = errno == ENOENT ? 0 : -errno; /* PID is gone: nothing to add */
			break;
		}
		while (!ret && (de = readdir(d))) {
			char *end;
			long tid = strtol(de->d_name, &end, 10);
			size_t i;

			if (*end || tid <= 0 || tid == pid)
				continue;
			for (i = 0; i < n && tids[i] != tid; i++)
				;
			if (i < n)
				continue;
			if (n == cap) {
				long *p = realloc(tids, (cap = cap ? 2 * cap : 16) * sizeof(*p));

				if (!p) {
					ret = -ENOMEM;
					break;
				}
				tids = p;
			}
			tids[n++] = tid;
			snprintf(num, sizeof(num), "%ld", tid);
			ret = put(path, num, O_APPEND);
			added++;
		}
		closedir(d);
	}
	free(tids);
	return ret;
}

/*
 * The events of PID's threads and of their io-wq workers, by an event
 * filter on each event: "common_pid == T || comm == \"iou-wrk-T\"" for
 * each thread T.  set_event_pid cannot say it: an io-wq worker is made by
 * create_io_thread(), which options/event-fork does not see, and on 5.10
 * and 6.1 an async request completes in its worker (io_uring_complete);
 * its name is "iou-wrk-" and the submitting thread's id, whenever it is
 * made.  Returns 0, or -errno when this kernel's filters cannot say it
 * (then nothing is left set) or PID has too many threads for one filter.
 */
static int filter_events(const struct dcp_trace *t, pid_t pid)
{
	char expr[2048], path[PATH_MAX], task[64];
	size_t len = 0, nthreads = 0;
	struct dirent *de;
	int ret = 0, ev;
	DIR *d;

	snprintf(task, sizeof(task), "/proc/%ld/task", (long)pid);
	d = opendir(task);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		int n;

		if (*end || tid <= 0)
			continue;
		n = snprintf(expr + len, sizeof(expr) - len,
			     "%scommon_pid == %ld || comm == \"iou-wrk-%ld\"",
			     len ? " || " : "", tid, tid);
		if (n < 0 || (size_t)n >= sizeof(expr) - len || ++nthreads > 16) {
			closedir(d);
			return -E2BIG;
		}
		len += (size_t)n;
	}
	closedir(d);
	if (!len)
		return -ESRCH;
	for (ev = 0; ev < NEVENTS && !ret; ev++) {
		size_t dl = strlen(t->enable[ev]) - strlen("enable");

		snprintf(path, sizeof(path), "%.*sfilter", (int)dl, t->enable[ev]);
		ret = put(path, expr, O_TRUNC);
	}
	if (ret < 0) {
		while (ev-- > 0) {
			size_t dl = strlen(t->enable[ev]) - strlen("enable");

			snprintf(path, sizeof(path), "%.*sfilter", (int)dl, t->enable[ev]);
			put(path, "0", O_TRUNC);
		}
	}
	return ret;
}

/* Whether event EV's format (the "print fmt" line) names FIELD. */
static bool format_has(const struct dcp_trace *t, int ev, const char *field)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, len = strlen(t->enable[ev]) - strlen("enable");
	bool has = false;
	FILE *f;

	snprintf(path, sizeof(path), "%.*sformat", (int)len, t->enable[ev]);
	f = fopen(path, "re");
	if (!f)
		return true; /* unknown: the modern text */
	while (!has && getline(&line, &cap, f) > 0)
		has = strncmp(line, "print fmt:", 10) == 0 && strstr(line, field);
	free(line);
	fclose(f);
	return has;
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
	if (!ret)
		t->async_by_addr = !format_has(t, EV_ASYNC, "user_data");
	/*
	 * PID's threads and their io-wq workers by an event filter; where the
	 * kernel's filters cannot say it, PID and every thread it forks
	 * (set_event_pid, options/event-fork), which misses a worker made
	 * after the start.
	 */
	if (!ret && filter_events(t, pid) < 0) {
		snprintf(num, sizeof(num), "%ld", (long)pid);
		ret = putf(t, "set_event_pid", num);
		if (!ret)
			ret = putf(t, "options/event-fork", "1");
		if (!ret)
			ret = filter_threads(t, pid);
	}
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

static size_t addr_slot_of(const struct dcp_trace *t, uint64_t ring, uint64_t req)
{
	uint64_t h = (req ^ (ring * 0xff51afd7ed558ccdULL)) * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 17) & (t->addr_slots - 1);

	while (t->addrs[i].req && (t->addrs[i].req != req || t->addrs[i].ring != ring))
		i = (i + 1) & (t->addr_slots - 1);
	return i;
}

/* Remember that the request at (RING, REQ) is USER_DATA now. */
static int addr_put(struct dcp_trace *t, uint64_t ring, uint64_t req, uint64_t user_data)
{
	size_t i;

	if (!req)
		return 0;
	if (2 * (t->naddrs + 1) >= t->addr_slots) {
		size_t n = t->addr_slots ? 2 * t->addr_slots : 256;
		struct addr_slot *old = t->addrs, *a = calloc(n, sizeof(*a));
		size_t oldn = t->addr_slots;

		if (!a)
			return -ENOMEM;
		t->addrs = a;
		t->addr_slots = n;
		for (size_t j = 0; j < oldn; j++)
			if (old[j].req)
				t->addrs[addr_slot_of(t, old[j].ring, old[j].req)] = old[j];
		free(old);
	}
	i = addr_slot_of(t, ring, req);
	t->naddrs += !t->addrs[i].req;
	t->addrs[i] = (struct addr_slot){ .ring = ring, .req = req, .user_data = user_data };
	return 0;
}

/* The hexadecimal number after KEY in LINE (0 when there is none). */
static uint64_t hex_after(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* One line of the trace file: "task-pid [cpu] flags ts: EVENT: fields". */
static int parse_line(struct dcp_trace *t, const char *line)
{
	char key[96];
	const char *p;
	struct dcp_trace_req *r;
	uint64_t user_data;
	int ev;

	for (ev = 0; ev < NEVENTS; ev++) {
		snprintf(key, sizeof(key), " %s: ", t->names[ev]);
		p = strstr(line, key);
		if (p)
			break;
	}
	if (ev == NEVENTS)
		return 0;
	line = p + strlen(key); /* the fields */
	if (ev == EV_ASYNC && t->async_by_addr) {
		size_t i;

		if (!t->addr_slots)
			return 0;
		i = addr_slot_of(t, hex_after(line, "ring "), hex_after(line, "request "));
		if (!t->addrs[i].req)
			return 0; /* submitted before the trace began */
		user_data = t->addrs[i].user_data;
	} else if ((p = strstr(line, "user_data 0x"))) {
		user_data = strtoull(p + 12, NULL, 16);
	} else if (ev == EV_SUBMIT && (p = strstr(line, ", data 0x"))) {
		user_data = strtoull(p + 9, NULL, 16); /* before 5.18 */
	} else {
		return 0;
	}
	if (ev == EV_SUBMIT && t->async_by_addr &&
	    addr_put(t, hex_after(line, "ring "), hex_after(line, "req "), user_data) < 0)
		return -ENOMEM;
	r = req_of(t, user_data);
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
	free(t->addrs);
	free(t);
	return ret;
}
