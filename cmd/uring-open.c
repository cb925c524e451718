// SPDX-License-Identifier: MIT
/*
 * uring-open - open a path through io_uring, time it, and say whether the
 * kernel completed it inline (the lookup was cached) or punted it to an
 * io-wq worker (the lookup needed I/O).  --bench opens a whole list with a
 * queue of requests in flight, to compare inline-first with forced async.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <stdbool.h>
#include <stdint.h>

#include "dcp_cmd.h"

#define DEFAULT_FLAGS DCP_URING_RUN_DEFAULT_FLAGS

static struct dcp_uring_run_config env = {
	.count = 1,
	.depth = 32,
	.timeout_ns = DCP_URING_RUN_DEFAULT_TIMEOUT_NS,
	.how = { .dirfd = AT_FDCWD, .flags = DEFAULT_FLAGS, .mode = 0666 },
};

static struct dcp_opts o; /* the shared options (lib/cmdrt/opts.c) */
static struct dcp_buf qbuf; /* a name quoted for a message */

const char *argp_program_version = "uring-open (dcprobe) " DCP_VERSION;
const char *argp_program_bug_address = "<https://github.com/dcprobe/dcprobe/issues>";

static const char doc[] =
"Open PATH with io_uring (IORING_OP_OPENAT) on a fresh ring, time it from\n"
"submit to completion, and say how the kernel completed it: \"inline\" (the\n"
"path was in the dentry cache, the open finished inside the submit call) or\n"
"\"punted\" (the lookup would block, an io-wq worker finished it later).\n"
"\n"
"Output, one line per open:  VERDICT LATENCY us fd N PATH, or\n"
"VERDICT LATENCY us error ERRNO PATH.  With -n or several paths, a\n"
"summary (min/median/p99/max) follows on stderr.\n"
"\n"
"Exit status: 0 every open succeeded inline (or was forced async), 1 some\n"
"open was punted because its path was not cached (or --cached gave EAGAIN),\n"
"2 some open failed otherwise, output failed, or --trace disagreed, 3 io_uring\n"
"(or, with --trace, tracefs) cannot be used here, 64 usage error.\n"
"\n"
"EXAMPLES:\n"
"  uring-open /etc/nanorc             # punted 65.0 us fd 4 /etc/nanorc\n"
"  uring-open /etc/nanorc             # inline 6.1 us fd 4 /etc/nanorc\n"
"  uring-open --async /etc/nanorc     # always punted: the pre-5.12 way\n"
"  uring-open --cached /srv/cold      # EAGAIN instead of a punt\n"
"  uring-open -n 1000 --json /etc/hosts | tail -1\n"
"  sudo uring-open --trace /etc/nanorc   # what io_uring's tracepoints say\n"
"  find /usr/lib -type f -print0 |\n"
"    uring-open --bench --files0-from=- --depth 64\n"
"\v"
"The verdict is exact on Linux 6.2 and later: the ring uses\n"
"IORING_SETUP_DEFER_TASKRUN, so a worker's completion only reaches the ring\n"
"when this process waits for it; a completion already there when submit\n"
"returns was made inline.  Elsewhere (6.1 and older) JSON says\n"
"\"exact\":false.  See uring-open(1) for more.";

static const char args_doc[] = "PATH...\n--bench [PATH...] [--from=FILE|--files0-from=FILE]";

enum {
	OPT_ASYNC = 0x100,
	OPT_CACHED,
	OPT_FLAGS,
	OPT_TRACE,
	OPT_BENCH,
	OPT_DEPTH,
	OPT_NO_DEFER,
	OPT_DIRECT,
	OPT_PAGES,
	OPT_TIMEOUT,
};

static const struct argp_option options[] = {
	{ "count", 'n', "N", 0, "Open each PATH N times, each on a fresh ring (default 1)", 0 },
	{ "async", OPT_ASYNC, NULL, 0,
	  "Set IOSQE_ASYNC: always punt to io-wq, never try inline (the pre-5.12 behaviour)", 0 },
	{ "cached", OPT_CACHED, NULL, 0,
	  "Use IORING_OP_OPENAT2 with RESOLVE_CACHED: a miss returns EAGAIN instead of being punted", 0 },
	{ "flags", OPT_FLAGS, "LIST", 0,
	  "Open flags, comma separated, e.g. rdonly,nofollow (default rdonly,nonblock,noctty,cloexec)", 0 },
	{ "trace", OPT_TRACE, NULL, 0,
	  "Also read the kernel's io_uring tracepoints (root, tracefs) and report what they say", 0 },
	{ "bench", OPT_BENCH, NULL, 0,
	  "Open all the paths (PATHs and the lists of --from or --files0-from) with "
	  "many requests in flight", 0 },
	{ "depth", OPT_DEPTH, "N", 0, "With --bench: requests in flight (default 32)", 0 },
	{ "direct", OPT_DIRECT, NULL, 0,
	  "With --bench: open into fixed-file slots (direct descriptors), no close calls", 0 },
	{ "pages", OPT_PAGES, NULL, 0,
	  "Also say how much of each regular file's data is in the page cache (cachestat), "
	  "measured on the descriptor opened", 0 },
	{ "timeout", OPT_TIMEOUT, "DURATION", 0,
	  "Wait at most DURATION for an open to complete (default 10s; ms, s, m): an open "
	  "punted to a worker that waits on a FUSE daemon or a server that does not answer "
	  "is then cancelled and reported (exit 2)", 0 },
	{ "no-defer", OPT_NO_DEFER, NULL, 0,
	  "Use a plain ring without DEFER_TASKRUN, as before Linux 6.1: the verdict is then a race", 0 },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	const char *bad = NULL;

	switch (key) {
	case 'n':
		env.count = (uint64_t)dcp_opts_number(state, "-n", arg, 1, 10000000);
		break;
	case OPT_ASYNC:
		env.how.async = true;
		break;
	case OPT_CACHED:
		env.how.cached = true;
		break;
	case OPT_FLAGS:
		if (dcp_open_flags_parse(arg, &env.how.flags, &bad) < 0)
			argp_error(state, "invalid --flags at %s: a comma-separated list of rdonly, "
				   "wronly, rdwr, creat, excl, trunc, append, nonblock, nofollow, directory, "
				   "path, cloexec, noctty, noatime, sync, dsync, direct, tmpfile (one access "
				   "mode) is needed", dcp_quoted(&qbuf, bad));
		break;
	case OPT_TRACE:
		env.trace = true;
		break;
	case OPT_BENCH:
		env.bench = true;
		break;
	case OPT_DEPTH:
		env.depth = (unsigned)dcp_opts_number(state, "--depth", arg, 1, 4096);
		env.depth_given = true;
		break;
	case OPT_NO_DEFER:
		env.no_defer = true;
		break;
	case OPT_DIRECT:
		env.how.direct = true;
		break;
	case OPT_PAGES:
		env.pages = true;
		break;
	case OPT_TIMEOUT: {
		uint64_t ns;

		/* Up to a day: beyond it a wait is not bounded in any useful sense. */
		if (dcp_parse_duration_ns(arg, &ns) < 0 || ns < 1000000 ||
		    ns > 24ULL * 3600 * 1000000000ULL)
			argp_error(state, "invalid --timeout %s: a duration from 1ms to 24h is needed "
				   "(500ms, 10s, 2m; 10 is 10s)", dcp_quoted(&qbuf, arg));
		env.timeout_ns = ns;
		break;
	}
	case ARGP_KEY_END:
		/* Before 0.9, --bench took the list as its argument. */
		if (env.bench && o.npaths == 1 && !o.ninputs)
			argp_error(state, "--bench opens many paths: give a list with --from=FILE "
				   "or --files0-from=FILE (the old --bench LIST is --bench --from=LIST)");
		if (!env.bench && (env.depth_given || env.how.direct))
			argp_error(state, "--depth and --direct apply only to --bench");
		if (env.bench && env.count != 1)
			argp_error(state, "-n does not apply to --bench (run it again instead)");
		if (env.bench && env.pages)
			argp_error(state, "--pages does not apply to --bench");
		if (env.bench && o.explain)
			argp_error(state, "--explain does not apply to --bench");
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

int main(int argc, char **argv)
{
	int ret;


	children[0].argp = dcp_opts_argp(&o, "uring-open", DCP_OPTS_INPUT | DCP_OPTS_EXPLAIN | DCP_OPTS_SIZES,
					  DCP_FOLLOW_ALL);
	/* argp exits 64 itself on a usage error: a failure here is argp's own. */
	ret = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (ret) {
		dcp_warn(ret, "cannot parse the command line");
		return DCP_EXIT_ERROR;
	}

	return dcp_uring_run(&o, &env);
}
