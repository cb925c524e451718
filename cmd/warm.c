// SPDX-License-Identifier: MIT
/*
 * warm - prime paths and trees into the dentry cache, as fast as the storage
 * allows, so that later lookups (and RESOLVE_CACHED probes) hit the cache.
 * Its options, then one run (lib/cmdrt/warm_run.c over the engine of lib/warm.c).
 */
#define _GNU_SOURCE
#include <argp.h>
#include <stdbool.h>
#include <string.h>

#include "dcp_cmd.h"

static struct dcp_opts o; /* the shared options (lib/cmdrt/opts.c) */

static struct dcp_warm_run_config env;

static struct dcp_buf qbuf; /* a name quoted for a message */

const char *argp_program_version = "warm (dcprobe) " DCP_VERSION;
const char *argp_program_bug_address = "<https://github.com/dcprobe/dcprobe/issues>";

static const char doc[] =
"Prime each PATH into the kernel's dentry cache by looking it up (a stat of\n"
"the full path warms every component of it), or with -r every entry of the\n"
"trees below, with many lookups in flight at once so that a cold disk is kept\n"
"busy.  Later lookups of these paths are served from the cache.\n"
"\n"
"Quiet by default: errors, and a summary on stderr (entries, errors, elapsed\n"
"time, entries/s).  --check probes every entry with RESOLVE_CACHED before and\n"
"after its stat and reports how many were cold, how many are now cached, and\n"
"lists those that still miss.\n"
"\n"
"With --manifest, what a residency manifest recorded (a snapshot that\n"
"dcache-probe takes, see dcprobe(7)) is put back: each path's dentry and\n"
"exactly the file ranges that were resident, reading only what is not\n"
"resident now; a file that changed since is skipped and reported, and so is\n"
"one whose data a limit (--max-bytes, --max-file-size) left out.\n"
"\n"
"Exit status: 0 done, 1 (--check) some entries still miss the cache, or\n"
"(--manifest) a limit left some data out, 2 some path or directory failed\n"
"(missing, unreadable, out of descriptors, a manifest's file changed) or\n"
"output failed, 3 (--check) this kernel cannot probe, 64 usage error.\n"
"\n"
"EXAMPLES:\n"
"  warm -r /usr/lib/python3            # warm a whole tree\n"
"  warm -r -x --check /srv/app         # and say how cold it was\n"
"  find /srv -newer /srv/.stamp -print0 | warm --files0-from=-\n"
"  warm -r -j 64 --exclude '*.pyc' /opt/venv\n"
"  warm -r --prometheus /srv               # metrics; for cron see dcprobe(7)\n"
"  warm -r --pages --max-bytes 2G --check /srv/db   # data too, at most 2 GiB\n"
"  warm --manifest=/var/lib/app/warm.jsonl   # what a snapshot held, back again";

static const char args_doc[] = "[PATH...]";

enum { OPT_CHECK = 0x100, OPT_PAGES, OPT_MAX_BYTES, OPT_MAX_FILE_SIZE, OPT_PAGES_METHOD };

/* Its own options; the shared ones (-r, -x, -L, --json...) come from lib/cmdrt/opts.c. */
static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "What to warm:", DCP_OPTS_GROUP_INPUT },
	{ "pages", OPT_PAGES, NULL, 0,
	  "Also read regular files' data into the page cache, many files at once",
	  DCP_OPTS_GROUP_INPUT },
	{ "max-bytes", OPT_MAX_BYTES, "SIZE", 0,
	  "--pages: read at most SIZE bytes in all, in whole pages (K, M, G, T suffixes; "
	  "default: half the available memory); implies --pages", DCP_OPTS_GROUP_INPUT },
	{ "max-file-size", OPT_MAX_FILE_SIZE, "SIZE", 0,
	  "--pages: leave out every file larger than SIZE; implies --pages", DCP_OPTS_GROUP_INPUT },
	{ "pages-method", OPT_PAGES_METHOD, "METHOD", 0,
	  "--pages: how reads are made: read (plain reads, default), willneed (posix_fadvise "
	  "first), readahead (readahead(2) first), uring (reads through io_uring)",
	  DCP_OPTS_GROUP_INPUT },
	{ NULL, 0, NULL, 0, "What to report:", DCP_OPTS_GROUP_REPORT },
	{ "check", OPT_CHECK, NULL, 0,
	  "Probe each entry before and after: count the cold ones, list any still missing",
	  DCP_OPTS_GROUP_REPORT },
	{ NULL, 0, NULL, 0, "Output format:", DCP_OPTS_GROUP_FORMAT },
	{ 0 },
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	uint64_t n;

	switch (key) {
	case OPT_CHECK:
		env.flags |= DCP_WARM_CHECK;
		break;
	case OPT_PAGES:
		env.flags |= DCP_WARM_PAGES;
		break;
	case OPT_MAX_BYTES:
	case OPT_MAX_FILE_SIZE:
		if (dcp_pages_parse_size(arg, &n) < 0 || !n)
			argp_error(state, "invalid %s %s: a positive number of bytes, "
				   "with K, M, G... (or KiB...) for powers of 1024, KB, MB, GB... for powers "
				   "of 1000, is needed",
				   key == OPT_MAX_BYTES ? "--max-bytes" : "--max-file-size",
				   dcp_quoted(&qbuf, arg));
		*(key == OPT_MAX_BYTES ? &env.pages.max_bytes : &env.pages.max_file_size) = n;
		env.flags |= DCP_WARM_PAGES;
		break;
	case OPT_PAGES_METHOD:
		if (dcp_pages_warm_method_parse(arg) < 0)
			argp_error(state, "invalid --pages-method %s: read, willneed, readahead "
				   "or uring is needed", dcp_quoted(&qbuf, arg));
		env.pages.method = dcp_pages_warm_method_parse(arg);
		env.flags |= DCP_WARM_PAGES;
		break;
	case ARGP_KEY_END:
		if (o.manifest && (env.flags & DCP_WARM_CHECK))
			argp_error(state, "--manifest excludes --check (dcache-probe --manifest "
				   "says what a restore brought back)");
		/* A restore has no trees for -s lines, and looks each path up as
		 * recorded, following no link it ends in. */
		if (o.manifest && (o.summary || o.total || o.verbose || o.follow != DCP_FOLLOW_NONE))
			argp_error(state, "--manifest excludes %s", o.summary || o.total ? "-s and -c" :
				   o.verbose ? "-v" : "-L and -H");
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


	children[0].argp = dcp_opts_argp(&o, "warm", DCP_OPTS_WALK | DCP_OPTS_INPUT |
					  DCP_OPTS_NUL | DCP_OPTS_PROM | DCP_OPTS_PROGRESS |
					  DCP_OPTS_VERBOSE | DCP_OPTS_SUMMARY | DCP_OPTS_SIZES |
					  DCP_OPTS_MANIFEST, DCP_FOLLOW_NONE);
	/* argp exits 64 itself on a usage error: a failure here is argp's own. */
	ret = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (ret) {
		dcp_warn(ret, "cannot parse the command line");
		return DCP_EXIT_ERROR;
	}
	return dcp_warm_run(&o, &env);
}
