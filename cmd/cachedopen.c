// SPDX-License-Identifier: MIT
/*
 * cachedopen - open paths with openat2(RESOLVE_CACHED) and say whether the
 * open was served from the dentry cache.  With one path the output is the
 * classic demo: "open: 3", or "open: -1" and "openat2: <strerror>".
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <error.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcprobe.h"

static struct env {
	bool quiet;
	bool json;
	bool retry;
	bool pages; /* --pages: data residency of the files opened */
	bool explain; /* --explain: the first missing prefix of a miss, and why */
	unsigned flags; /* DCP_FOLLOW, DCP_OPATH */
	char **paths;
	int npaths;
} env = {
	.flags = DCP_FOLLOW,
};

const char *argp_program_version = "cachedopen (dcprobe) " DCP_VERSION;
const char *argp_program_bug_address = "<https://github.com/dcprobe/dcprobe/issues>";

static const char doc[] =
"Open each PATH with openat2(2) and RESOLVE_CACHED: the open succeeds only\n"
"if every component of the path is in the kernel's dentry cache, and fails\n"
"with EAGAIN, doing no I/O, when the lookup would have to block.\n"
"\n"
"Output, one path:  \"open: FD\" on success; \"open: -1\" and\n"
"\"openat2: MESSAGE\" (on stderr) on failure.  With several paths each line\n"
"starts with \"PATH: \".\n"
"\n"
"Exit status: 0 every open succeeded, 1 some lookup missed the cache (EAGAIN),\n"
"2 some open failed otherwise (ENOENT, EACCES...) or output failed, 3 this\n"
"kernel cannot answer (Linux 5.12 or later is needed), 64 usage error.\n"
"\n"
"EXAMPLES:\n"
"  cachedopen /etc/nanorc            # open: 3 when cached\n"
"  cachedopen -q /srv/app/config && echo warm\n"
"  cachedopen --retry /var/lib/db    # fall back to a blocking open on a miss\n"
"  cachedopen --json /usr/bin/*      # one JSON object per path\n"
"  cachedopen --pages /srv/db/index  # and how much of its data is in memory\n"
"\v"
"A probe never warms the cache it measures: a missed lookup does no I/O, so\n"
"running cachedopen twice on a cold path misses twice.  See dcprobe(7).";

static const char args_doc[] = "PATH...";

enum { OPT_JSON = 0x100, OPT_RETRY, OPT_PATH, OPT_PAGES, OPT_EXPLAIN };

static const struct argp_option options[] = {
	{ "quiet", 'q', NULL, 0, "Print nothing; only the exit status tells", 0 },
	{ "silent", 0, NULL, OPTION_ALIAS, NULL, 0 },
	{ "path", OPT_PATH, NULL, 0,
	  "Probe with an O_PATH descriptor: resolve the path, do not open the object itself", 0 },
	{ "follow", 'L', NULL, 0, "Follow a symlink in the final component (default)", 0 },
	{ "no-follow", 'P', NULL, 0, "Do not follow a symlink in the final component", 0 },
	{ "retry", OPT_RETRY, NULL, 0,
	  "After a miss, fall back to a normal (blocking) open and report it", 0 },
	{ "json", OPT_JSON, NULL, 0, "JSON Lines: one object per path and a summary", 0 },
	{ "explain", OPT_EXPLAIN, NULL, 0,
	  "After a miss, name the first path prefix whose lookup misses and why (dcprobe(7))", 0 },
	{ "pages", OPT_PAGES, NULL, 0,
	  "Also say how much of each regular file's data is in the page cache (cachestat); "
	  "unknown when the lookup missed", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	switch (key) {
	case 'q':
		env.quiet = true;
		break;
	case OPT_PATH:
		env.flags |= DCP_OPATH;
		break;
	case 'L':
		env.flags |= DCP_FOLLOW;
		break;
	case 'P':
		env.flags &= ~DCP_FOLLOW;
		break;
	case OPT_RETRY:
		env.retry = true;
		break;
	case OPT_JSON:
		env.json = true;
		break;
	case OPT_PAGES:
		env.pages = true;
		break;
	case OPT_EXPLAIN:
		env.explain = true;
		break;
	case ARGP_KEY_ARGS:
		env.paths = state->argv + state->next;
		env.npaths = state->argc - state->next;
		if (dcp_args_have_empty(env.paths, env.npaths))
			argp_error(state, DCP_MSG_EMPTY_PATH);
		break;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no PATH given");
		break;
	case ARGP_KEY_END:
		if (env.quiet && env.json)
			argp_error(state, "--quiet and --json exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	.options = options,
	.parser = parse_arg,
	.args_doc = args_doc,
	.doc = doc,
};

static struct dcp_buf out = DCP_BUF_INIT;
static struct dcp_buf err = DCP_BUF_INIT;

/* Stdout first, so that a terminal shows the lines in order. */
static void flush(void)
{
	int ret = dcp_buf_write(&out, STDOUT_FILENO);

	if (ret < 0) {
		error(0, -ret, "write error");
		exit(DCP_EXIT_ERROR);
	}
	dcp_buf_write(&err, STDERR_FILENO);
}

static void prefix(struct dcp_buf *b, const char *path)
{
	if (env.npaths < 2)
		return;
	dcp_buf_quote(b, path, strlen(path));
	dcp_buf_puts(b, ": ");
}

struct result {
	int ret;	 /* descriptor or -errno of the cached open */
	int retry_ret;	 /* descriptor or -errno of the blocking open */
	uint64_t retry_us;
	bool retried;
	int pret;	 /* --pages: 0, -EAGAIN (unknown), -ENODEV (not regular), -errno */
	struct dcp_pages pg;
	bool explained;	 /* --explain after a miss: */
	struct dcp_why_info why;
};

static void print_text(const char *path, const struct result *r)
{
	prefix(&out, path);
	dcp_buf_printf(&out, "open: %d\n", r->ret < 0 ? -1 : r->ret);
	if (r->explained)
		dcp_explain_insert(&out, &r->why);
	if (r->ret < 0) {
		prefix(&err, path);
		dcp_buf_printf(&err, "openat2: %s\n", strerror(-r->ret));
	}
	if (env.pages) {
		prefix(&out, path);
		dcp_buf_puts(&out, "data: ");
		dcp_pages_text(&out, r->pret, &r->pg);
		out.len--; /* the columns' last space */
		dcp_buf_putc(&out, '\n');
	}
	if (!r->retried)
		return;
	prefix(&out, path);
	dcp_buf_printf(&out, "retry: open: %d (blocking, %llu us)\n",
		       r->retry_ret < 0 ? -1 : r->retry_ret,
		       (unsigned long long)r->retry_us);
	if (r->retry_ret < 0) {
		prefix(&err, path);
		dcp_buf_printf(&err, "open: %s\n", strerror(-r->retry_ret));
	}
}

static void json_errno(int e)
{
	dcp_buf_printf(&out, ",\"errno\":\"%s\",\"message\":", dcp_errno_name(e));
	dcp_buf_json_str(&out, strerror(-e), strlen(strerror(-e)));
}

static void print_json(const char *path, const struct result *r)
{
	dcp_buf_puts(&out, "{\"type\":\"open\",\"path\":");
	dcp_buf_json_str(&out, path, strlen(path));
	dcp_buf_printf(&out, ",\"state\":\"%s\",\"fd\":%d",
		       dcp_state_name(dcp_state_of_errno(r->ret < 0 ? r->ret : 0)),
		       r->ret < 0 ? -1 : r->ret);
	if (r->ret < 0)
		json_errno(r->ret);
	if (r->retried) {
		dcp_buf_printf(&out, ",\"retry\":{\"fd\":%d,\"elapsed_us\":%llu",
			       r->retry_ret < 0 ? -1 : r->retry_ret,
			       (unsigned long long)r->retry_us);
		if (r->retry_ret < 0)
			json_errno(r->retry_ret);
		dcp_buf_putc(&out, '}');
	}
	if (env.pages)
		dcp_pages_json(&out, r->pret, &r->pg);
	if (r->explained)
		dcp_explain_json(&out, &r->why);
	dcp_buf_puts(&out, "}\n");
}

/*
 * --pages: the residency of what the cached open gave.  With --path the
 * descriptor cannot be measured; a regular file is opened for it then
 * (never a FIFO or device).  A missed lookup leaves it unknown.
 */
static void measure(const char *path, struct result *r)
{
	if (r->ret == -EAGAIN)
		r->pret = -EAGAIN;
	else if (r->ret < 0)
		r->pret = -ENODEV;
	else if (env.flags & DCP_OPATH)
		r->pret = dcp_pages_at(AT_FDCWD, path,
				       (env.flags & DCP_FOLLOW) ? DCP_PAGES_FOLLOW : 0, &r->pg);
	else
		r->pret = dcp_pages_fd(r->ret, &r->pg);
}

int main(int argc, char **argv)
{
	struct dcp_tally tally = { 0 };
	struct dcp_pages_counts pc = { 0 };
	unsigned long long why[DCP_NWHY] = { 0 };
	struct dcp_explain *explain = NULL;
	int ret, status;

	/* argp exits 64 itself on a usage error: a failure here is argp's own. */
	ret = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (ret) {
		error(0, ret, "cannot parse the command line");
		return DCP_EXIT_ERROR;
	}

	ret = dcp_probe_support();
	if (ret < 0) {
		error(0, 0, "%s", dcp_unsupported_reason(ret));
		return DCP_EXIT_UNSUPPORTED;
	}
	if (env.pages) {
		ret = dcp_pages_support();
		if (ret < 0) {
			error(0, 0, "%s", dcp_pages_unsupported_reason(ret));
			return DCP_EXIT_UNSUPPORTED;
		}
	}

	if (env.explain) {
		ret = dcp_explain_new(1, &explain);
		if (ret < 0)
			error(DCP_EXIT_ERROR, -ret, "--explain");
	}

	for (int i = 0; i < env.npaths; i++) {
		const char *path = env.paths[i];
		struct result r = { .retry_ret = -1 };

		r.ret = dcp_open_cached(AT_FDCWD, path, env.flags);
		if (r.ret < 0 && dcp_errno_unsupported(r.ret) && !(env.flags & DCP_OPATH)) {
			/* EINVAL here can only be the kernel refusing the flag. */
			flush();
			error(0, 0, "%s", dcp_unsupported_reason(r.ret));
			return DCP_EXIT_UNSUPPORTED;
		}
		dcp_tally_add(&tally, r.ret < 0 ? r.ret : 0);
		/* The miss did no I/O: the path is as cold as it was, until --retry. */
		if (r.ret == -EAGAIN && explain) {
			if (dcp_explain_path(explain, 0, path, env.flags & DCP_FOLLOW, &r.why) < 0)
				r.why = (struct dcp_why_info){ .why = DCP_WHY_UNKNOWN };
			r.explained = true;
			why[r.why.why]++;
		}
		if (r.ret == -EAGAIN && env.retry) {
			uint64_t t0 = dcp_now_ns();

			r.retried = true;
			r.retry_ret = dcp_open_blocking(AT_FDCWD, path, env.flags);
			r.retry_us = (dcp_now_ns() - t0 + 500) / 1000;
			if (r.retry_ret < 0)
				tally.n[DCP_ERROR]++;
		}
		if (env.pages) {
			measure(path, &r);
			dcp_pages_count(&pc, r.pret, &r.pg);
		}
		if (env.json)
			print_json(path, &r);
		else if (!env.quiet)
			print_text(path, &r);
		if (r.ret >= 0)
			close(r.ret);
		if (r.retry_ret >= 0)
			close(r.retry_ret);
		if (out.len > 65536)
			flush();
	}

	status = dcp_tally_status(&tally, DCP_NEGATIVE_IS_ERROR);
	if (pc.failed)
		status = DCP_EXIT_ERROR;
	if (env.json) {
		dcp_buf_printf(&out,
			       "{\"type\":\"summary\",\"paths\":%d,\"cached\":%llu,"
			       "\"negative\":%llu,\"miss\":%llu,\"error\":%llu,\"status\":%d}\n",
			       env.npaths, tally.n[DCP_CACHED], tally.n[DCP_NEGATIVE],
			       tally.n[DCP_MISS], tally.n[DCP_ERROR], status);
		if (env.explain) {
			out.len -= 2;
			dcp_why_counts_json(&out, why);
			dcp_buf_puts(&out, "}\n");
		}
		if (env.pages) {
			struct dcp_buf m = DCP_BUF_INIT;

			dcp_pages_json_counts(&m, &pc, -1);
			if (!m.oom)
				dcp_pages_json_insert(&out, m.data, m.len);
			dcp_buf_free(&m);
		}
	}
	flush();
	dcp_explain_free(explain);
	if (close(STDOUT_FILENO) < 0 && errno != EBADF) {
		error(0, errno, "write error");
		return DCP_EXIT_ERROR;
	}
	return status;
}
