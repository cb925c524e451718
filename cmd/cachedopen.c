// SPDX-License-Identifier: MIT
/*
 * cachedopen - open paths with openat2(RESOLVE_CACHED) and say whether the
 * open was served from the dentry cache.  With one path the output is the
 * classic demo: "open: 3", or "open: -1" and "openat2: <strerror>".
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcp_cmd.h"

static struct dcp_opts o; /* the shared options (lib/cmdrt/opts.c) */

static struct env {
	bool retry;
	bool pages; /* --pages: data residency of the files opened */
	bool opath; /* --path */
	bool prefix; /* lines start with "PATH: " (several paths, or a list) */
	unsigned flags; /* DCP_FOLLOW, DCP_OPATH */
} env;

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

enum { OPT_RETRY = 0x100, OPT_PATH, OPT_PAGES };

/* Its own options; the shared ones (-L, -P, -q, --json...) come from lib/cmdrt/opts.c. */
static const struct argp_option options[] = {
	{ "path", OPT_PATH, NULL, 0,
	  "Probe with an O_PATH descriptor: resolve the path, do not open the object itself",
	  DCP_OPTS_GROUP_INPUT },
	{ "retry", OPT_RETRY, NULL, 0,
	  "After a miss, fall back to a normal (blocking) open and report it",
	  DCP_OPTS_GROUP_REPORT },
	{ "pages", OPT_PAGES, NULL, 0,
	  "Also say how much of each regular file's data is in the page cache (cachestat); "
	  "unknown when the lookup missed", DCP_OPTS_GROUP_REPORT },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case OPT_PATH:
		env.opath = true;
		break;
	case OPT_RETRY:
		env.retry = true;
		break;
	case OPT_PAGES:
		env.pages = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp_child children[] = { { NULL, 0, NULL, 0 }, { 0 } };

static const struct argp argp = {
	.options = options,
	.parser = parse_arg,
	.args_doc = args_doc,
	.doc = doc,
	.children = children,
};

static struct dcp_buf out = DCP_BUF_INIT;
static struct dcp_buf err = DCP_BUF_INIT;

/* Stdout first, so that a terminal shows the lines in order. */
static void flush(void)
{
	int ret = dcp_output_write(&out);

	if (ret < 0) {
		dcp_warn(-ret, "write error");
		exit(DCP_EXIT_ERROR);
	}
	dcp_msg_buf(&err);
}

static void prefix(struct dcp_buf *b, const char *path)
{
	if (!env.prefix)
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

/*
 * Lines of one path, in the order cachedopen(1) states: "open:", its
 * error ("openat2:", stderr), "data:", "retry: open:", its error ("open:",
 * stderr).  An error line goes out right after the stdout lines before it,
 * so that a terminal shows each reason next to its own path.
 */
static void err_line(const char *path, const char *what, int e)
{
	flush();
	dcp_msg_path(&err, path, strlen(path));
	dcp_buf_printf(&err, "%s: %s\n", what, strerror(-e));
	flush();
}

static void print_text(const char *path, const struct result *r)
{
	prefix(&out, path);
	dcp_buf_printf(&out, "open: %d\n", r->ret < 0 ? -1 : r->ret);
	if (r->explained)
		dcp_explain_insert(&out, false, &r->why);
	if (r->ret < 0)
		err_line(path, "openat2", r->ret);
	if (env.pages) {
		prefix(&out, path);
		dcp_buf_puts(&out, "data: ");
		dcp_pages_text(&out, r->pret, &r->pg, o.units);
		out.len--; /* the columns' last space */
		dcp_buf_putc(&out, '\n');
	}
	if (!r->retried)
		return;
	prefix(&out, path);
	dcp_buf_printf(&out, "retry: open: %d (blocking, %llu us)\n",
		       r->retry_ret < 0 ? -1 : r->retry_ret,
		       (unsigned long long)r->retry_us);
	if (r->retry_ret < 0)
		err_line(path, "open", r->retry_ret);
}

/*
 * -q: no lines, but every error still said, in the words of the lines
 * (a miss is the cold answer, not an error: the exit status tells it).
 */
static void print_errors(const char *path, const struct result *r)
{
	if (r->ret < 0 && r->ret != -EAGAIN)
		err_line(path, "openat2", r->ret);
	if (env.pages && dcp_pages_state_of(r->pret) == DCP_PAGES_FAILED) {
		dcp_msg_path(&err, path, strlen(path));
		dcp_buf_printf(&err, "data: %s\n", dcp_pages_error_message(r->pret));
	}
	if (r->retried && r->retry_ret < 0)
		err_line(path, "open", r->retry_ret);
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
static struct dcp_pages_run *pages_run; /* --pages */

static void measure(const char *path, struct result *r)
{
	if (r->ret == -EAGAIN)
		r->pret = -EAGAIN;
	else if (r->ret < 0)
		r->pret = -ENODEV;
	else if (env.opath)
		r->pret = dcp_pages_at(pages_run, AT_FDCWD, path,
				       (env.flags & DCP_FOLLOW) ? DCP_PAGES_FOLLOW | DCP_PAGES_ONCE : 0,
				       &r->pg);
	else if ((r->pret = dcp_pages_fd(r->ret, &r->pg)) == 0)
		/* Under -L two paths may lead to one file: its inode counts once. */
		(env.flags & DCP_FOLLOW) ? dcp_pages_claim_any(pages_run, &r->pg) :
					   dcp_pages_claim(pages_run, &r->pg);
}

static struct dcp_tally tally;
static struct dcp_pages_counts pc;
static unsigned long long npaths;
static struct dcp_explain *explain; /* --explain */
static unsigned long long why[DCP_NWHY];

static int open_one(const char *path, void *ctx)
{
	struct result r = { .retry_ret = -1 };

	(void)ctx;
	npaths++;
	r.ret = dcp_open_cached(AT_FDCWD, path, env.flags);
	if (r.ret < 0 && dcp_errno_unsupported(r.ret) && !env.opath) {
		/* EINVAL here can only be the kernel refusing the flag. */
		flush();
		dcp_warn(0, "%s", dcp_unsupported_reason(r.ret));
		exit(DCP_EXIT_UNSUPPORTED);
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
	if (o.json)
		print_json(path, &r);
	else if (!o.quiet)
		print_text(path, &r);
	else
		print_errors(path, &r);
	if (r.ret >= 0)
		close(r.ret);
	if (r.retry_ret >= 0)
		close(r.retry_ret);
	if (out.len > 65536)
		flush();
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long input_errors = 0;
	int ret, status;

	children[0].argp = dcp_opts_argp(&o, "cachedopen", DCP_OPTS_FOLLOW | DCP_OPTS_INPUT |
					  DCP_OPTS_EXPLAIN | DCP_OPTS_SIZES, DCP_FOLLOW_ALL);
	/* argp exits 64 itself on a usage error: a failure here is argp's own. */
	ret = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (ret) {
		dcp_warn(ret, "cannot parse the command line");
		return DCP_EXIT_ERROR;
	}
	env.flags = (o.follow != DCP_FOLLOW_NONE ? DCP_FOLLOW : 0) | (env.opath ? DCP_OPATH : 0);
	env.prefix = o.npaths > 1 || o.ninputs;

	ret = dcp_opts_can_probe(true, env.pages);
	if (ret != DCP_EXIT_OK)
		return ret;

	if (o.explain) {
		ret = dcp_explain_new(1, &explain);
		if (ret < 0)
			dcp_die(DCP_EXIT_ERROR, -ret, "--explain");
	}
	if (env.pages) {
		ret = dcp_pages_run_new(NULL, &pages_run);
		if (ret < 0)
			dcp_die(DCP_EXIT_ERROR, -ret, "--pages");
	}
	dcp_opts_each_path(&o, open_one, NULL, &input_errors);

	status = dcp_tally_status(&tally, DCP_NEGATIVE_IS_ERROR);
	if (pc.failed || input_errors)
		status = DCP_EXIT_ERROR;
	if (o.json) {
		dcp_opts_input_records(&out);
		dcp_buf_printf(&out,
			       "{\"type\":\"summary\",\"paths\":%llu,\"cached\":%llu,"
			       "\"negative\":%llu,\"miss\":%llu,\"error\":%llu,\"status\":%d}\n",
			       npaths,
			       tally.n[DCP_CACHED], tally.n[DCP_NEGATIVE],
			       tally.n[DCP_MISS], tally.n[DCP_ERROR], status);
		if (explain) {
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
	} else if (!o.quiet && tally.n[DCP_MISS] && !env.retry && isatty(STDERR_FILENO)) {
		/*
		 * A name never looked up is not in the cache either, absent or
		 * not: a hint for a person (a script has the exit status).
		 */
		flush();
		dcp_buf_printf(&err, "%s: a miss can also be a name that does not exist and was "
			       "never looked up; --retry tells\n", program_invocation_name);
	}
	flush();
	dcp_explain_free(explain);
	if (close(STDOUT_FILENO) < 0 && errno != EBADF) {
		dcp_warn(errno, "write error");
		return DCP_EXIT_ERROR;
	}
	return dcp_opts_finish(&o, status);
}
