// SPDX-License-Identifier: MIT
/*
 * walkprint - print every entry the library walker visits, as the commands
 * would: terminal-safe text (dcp_buf_quote) or JSON Lines (dcp_buf_json_str),
 * walk errors on stderr, exit 2 when any error was reported.  A test tool
 * (built into build/tests, never installed) so the hostile-tree suites can
 * exercise lib/walk.c and lib/report.c directly, besides the commands.
 *
 *   walkprint [-L] [-j] [-p|-s] [-t THREADS] ROOT...
 *
 * -p probes every entry in the walker (DCP_WALK_PROBE, batched through
 * io_uring where it can) and -s the same with plain openat2 calls
 * (DCP_WALK_PROBE_SYNC); each line then starts with the state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcprobe.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dcp_buf out = DCP_BUF_INIT, err = DCP_BUF_INIT;
static bool json, probe;
static unsigned long long entries, errors;
static int write_failed;

/* Under the lock: write whole lines, remember the first write error. */
static void flush_locked(bool force)
{
	int ret;

	if (!force && out.len < 65536)
		return;
	ret = dcp_buf_write(&out, STDOUT_FILENO);
	if (ret < 0 && !write_failed)
		write_failed = ret;
	dcp_buf_reset(&out);
	dcp_buf_write(&err, STDERR_FILENO);
}

static int visit(const struct dcp_entry *e, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	entries++;
	if (json) {
		dcp_buf_puts(&out, "{\"type\":\"entry\",\"path\":");
		dcp_buf_json_str(&out, e->path, e->pathlen);
		dcp_buf_printf(&out, ",\"depth\":%d,\"dtype\":%u", e->depth, e->type);
		if (probe)
			dcp_buf_printf(&out, ",\"state\":\"%s\",\"errno\":\"%s\"",
				       dcp_state_name(dcp_state_of_errno(e->probe)),
				       e->probe ? dcp_errno_name(e->probe) : "");
		dcp_buf_puts(&out, "}\n");
	} else {
		if (probe)
			dcp_buf_printf(&out, "%s\t", e->probe ? dcp_errno_name(e->probe) : "cached");
		dcp_buf_quote(&out, e->path, e->pathlen);
		dcp_buf_putc(&out, '\n');
	}
	flush_locked(false);
	pthread_mutex_unlock(&lock);
	return write_failed ? DCP_WALK_ABORT : DCP_WALK_DESCEND;
}

static void on_error(const struct dcp_entry *e, int error, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	errors++;
	dcp_buf_puts(&err, "walkprint: ");
	dcp_buf_quote(&err, e->path, e->pathlen);
	dcp_buf_printf(&err, ": %s (%s)\n", strerror(error), dcp_errno_name(error));
	pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
	struct dcp_walk_opts o = { .max_depth = -1, .visit = visit, .error = on_error };
	int opt, ret;

	while ((opt = getopt(argc, argv, "Ljpst:")) != -1) {
		switch (opt) {
		case 'L':
			o.flags |= DCP_WALK_FOLLOW;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			o.flags |= DCP_WALK_PROBE;
			probe = true;
			break;
		case 's':
			o.flags |= DCP_WALK_PROBE | DCP_WALK_PROBE_SYNC;
			probe = true;
			break;
		case 't':
			o.threads = (unsigned)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: walkprint [-L] [-j] [-p|-s] [-t THREADS] ROOT...\n");
			return 64;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: walkprint [-L] [-j] [-p|-s] [-t THREADS] ROOT...\n");
		return 64;
	}
	ret = dcp_walk((const char *const *)argv + optind, (size_t)(argc - optind), &o);
	pthread_mutex_lock(&lock);
	if (json)
		dcp_buf_printf(&out, "{\"type\":\"summary\",\"entries\":%llu,\"errors\":%llu}\n",
			       entries, errors);
	flush_locked(true);
	pthread_mutex_unlock(&lock);
	dcp_buf_free(&out);
	dcp_buf_free(&err);
	if (write_failed) {
		fprintf(stderr, "walkprint: write error: %s\n", strerror(-write_failed));
		return 2;
	}
	if (ret < 0 && ret != -ECANCELED) {
		fprintf(stderr, "walkprint: walk failed: %s\n", strerror(-ret));
		return 2;
	}
	return errors ? 2 : 0;
}
