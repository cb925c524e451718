// SPDX-License-Identifier: MIT
/*
 * dcache-probe - report which paths resolve from the kernel's dentry cache,
 * for single paths or whole trees, without warming what it measures.
 *
 * Its options, then one run of the engine (lib/cmdrt/probe_run.c), which takes
 * every entry from the walker's probe to its line, its tallies and the exit
 * status.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dcp_cmd.h"
#include "dcp_record_run.h"

static struct dcp_opts o; /* the shared options (lib/cmdrt/opts.c) */

static struct dcp_probe_run_config env = {
	.per_dir = -1,
	.min_cached = -1,
	.min_resident = -1,
};

static struct dcp_record_run_config rec; /* --record and its options */

static bool diagnose; /* --diagnose: the kernel's mechanisms, no PATH */

static struct dcp_buf qbuf; /* a name quoted for a message (main thread) */

const char *argp_program_version = "dcache-probe (dcprobe) " DCP_VERSION;
const char *argp_program_bug_address = "<https://github.com/dcprobe/dcprobe/issues>";

static const char doc[] =
"Probe each PATH with openat2(2) RESOLVE_CACHED and report whether its lookup\n"
"is served from the kernel's dentry cache; with -r, walk each tree and probe\n"
"every entry before the walk touches it.\n"
"\n"
"Output: one line per path, state first: \"cached PATH\", \"negative PATH\"\n"
"(absent, and known absent from the cache), \"miss PATH\" or \"error ENAME PATH\";\n"
"then a summary line on stderr.\n"
"\n"
"Exit status: 0 every path was cached or negative (or --min-cached was met;\n"
"with --ranges, the snapshot was written), 1 some path missed or a directory\n"
"was left unvisited (or --min-cached was not met), 2 an error (a probe failed\n"
"otherwise, a tree to walk is missing or could not be walked, bad input, a\n"
"write error), 3 this kernel cannot probe (Linux 5.12 or later is needed),\n"
"64 usage error.\n"
"\n"
"With --manifest, the paths a residency manifest recorded as cached or\n"
"negative (dcache-probe -r --ranges --json) are probed instead, each under\n"
"its manifest root, and a file's data is measured within the ranges recorded:\n"
"how much of a snapshot is in memory now.  A file changed since is an error.\n"
"\n"
"With --record=FILE (root only), the PATHs are watched with fanotify instead,\n"
"and what was opened, read or listed under them (by --pid or --cgroup's\n"
"processes, or by the command --start runs) is written to FILE as such a\n"
"manifest when --for runs out, on SIGINT or SIGTERM, or when that command exits:\n"
"what one service used, for warm --manifest.\n"
"\n"
"With --diagnose, no PATH: each kernel mechanism dcprobe uses, asked of the\n"
"running kernel, is listed as present, absent or blocked, with what its\n"
"absence changes in the numbers; exit 0, or 3 when this kernel cannot probe.\n"
"\n"
"EXAMPLES:\n"
"  dcache-probe /etc/passwd /usr/bin/ls    # one line per path\n"
"  dcache-probe -r -s /usr                  # how warm is /usr?\n"
"  dcache-probe -r --per-dir=1 /srv         # which subtrees are cold\n"
"  dcache-probe -r --no-perturb /srv        # measure, leave the cache as found\n"
"  dcache-probe -rq --min-cached 95 /srv/app && echo warm\n"
"  dcache-probe -r -0 --only=miss /srv | xargs -0r warm\n"
"  dcache-probe -r --prometheus /srv        # metrics; for cron see dcprobe(7)\n"
"  dcache-probe -r -s --pages /srv/app      # and how much data is in memory\n"
"  dcache-probe -q --manifest=M --min-resident 99   # is a restore complete?\n"
"  dcache-probe --record=M --for=1m --cgroup=/system.slice/app.service /srv\n"
"  dcache-probe --record=M --start='python3 -c \"import json\"' /usr/lib/python3\n"
"\v"
"Opening a directory to list it puts that directory's own dentry in the cache\n"
"(and, for a caller who is not its owner, its ACL); --no-perturb only lists\n"
"directories whose inside is cached already, and reports the others as\n"
"unvisited: what they hold is unknown, and the exit status is 1 (dcprobe(7)).";

static const char args_doc[] = "[PATH...]";

enum {
	OPT_ONLY = 0x100,
	OPT_PER_DIR,
	OPT_PER_MOUNT,
	OPT_NO_PERTURB,
	OPT_MIN_CACHED,
	OPT_IGNORE_UNVISITED,
	OPT_PAGES,
	OPT_MIN_RESIDENT,
	OPT_SORT,
	OPT_RANGES,
	OPT_RECORD,
	OPT_FOR,
	OPT_PID,
	OPT_CGROUP,
	OPT_START,
	OPT_LISTED,
	OPT_DIAGNOSE,
};

/* The recorder's options, under their own heading after the shared ones. */
enum { GROUP_RECORD = DCP_OPTS_GROUP_FORMAT + 1 };

/* Its own options; the shared ones (-r, -x, -L, --json...) come from lib/cmdrt/opts.c. */
static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "What to probe:", DCP_OPTS_GROUP_INPUT },
	{ "no-perturb", OPT_NO_PERTURB, NULL, 0,
	  "Only list directories whose lookups inside are already cached for this caller: "
	  "leave the dentry cache as found", DCP_OPTS_GROUP_INPUT },
	{ "pages", OPT_PAGES, NULL, 0,
	  "Also measure how much of each cached regular file's data is in the page cache "
	  "(cachestat, without reading it); 'unknown' for files whose lookup missed",
	  DCP_OPTS_GROUP_INPUT },
	{ "ranges", OPT_RANGES, NULL, 0,
	  "With --json, add to each measured file its resident byte ranges and its identity "
	  "(device, inode, size, mtime): a snapshot of what is in memory; implies --pages",
	  DCP_OPTS_GROUP_INPUT },

	{ NULL, 0, NULL, 0, "Recording (--record; root only):", GROUP_RECORD },
	{ "record", OPT_RECORD, "FILE", 0,
	  "Instead of probing, watch the PATHs (directories; fanotify) and, when the "
	  "recording ends, write what was opened, read or listed under them as a manifest "
	  "to FILE (- for standard output)", GROUP_RECORD },
	{ "for", OPT_FOR, "DURATION", 0,
	  "End the recording after DURATION: whole seconds, minutes or hours (30s, 10m, "
	  "1h; 30 is 30s); else on SIGINT or SIGTERM", GROUP_RECORD },
	{ "start", OPT_START, "COMMAND", 0,
	  "Run COMMAND (/bin/sh -c) once the PATHs are watched and keep only what it and "
	  "its descendants open; its exit ends the recording (a failing command: exit 2). "
	  "Needs --record=FILE: the command has standard output", GROUP_RECORD },
	{ "pid", OPT_PID, "PID", 0,
	  "Keep only what process PID and its descendants open (a process stopped when "
	  "the recording begins is resumed; to record a command, see --start)", GROUP_RECORD },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "Keep only what the processes of cgroup v2 PATH open, and of the cgroups below "
	  "it (/system.slice/app.service; it may not exist yet, its parent must)",
	  GROUP_RECORD },
	{ "listed", OPT_LISTED, NULL, 0,
	  "Also record the cached names of the directories they listed, as names only "
	  "(what they looked up without opening it: stat)", GROUP_RECORD },

	{ "diagnose", OPT_DIAGNOSE, NULL, 0,
	  "Instead of probing, list each kernel mechanism dcprobe uses: present, absent "
	  "or blocked here, and what its absence changes in the numbers (no PATH)",
	  DCP_OPTS_GROUP_INPUT },

	{ NULL, 0, NULL, 0, "What to report:", DCP_OPTS_GROUP_REPORT },
	{ "only", OPT_ONLY, "STATE[,STATE]", 0,
	  "Only list paths in these states: cached, negative, miss, error, and "
	  "unvisited directories", DCP_OPTS_GROUP_REPORT },
	{ "per-dir", OPT_PER_DIR, "DEPTH", OPTION_ARG_OPTIONAL,
	  "Instead of paths, a table of cached/total per directory, down to DEPTH; implies -r",
	  DCP_OPTS_GROUP_REPORT },
	{ "per-mount", OPT_PER_MOUNT, NULL, 0,
	  "Instead of paths, a table of cached/total per mount with its filesystem type",
	  DCP_OPTS_GROUP_REPORT },
	{ "sort", OPT_SORT, NULL, 0,
	  "Write the per-path lines sorted by path, a directory before what it holds (as "
	  "bfs -s), once the walk is done: they are held in memory until the end",
	  DCP_OPTS_GROUP_REPORT },
	{ "min-cached", OPT_MIN_CACHED, "PCT", 0,
	  "Exit 0 if at least PCT percent of the paths were cached and no directory was "
	  "left unvisited, else 1; implies -r (a gate judges trees)", DCP_OPTS_GROUP_REPORT },
	{ "ignore-unvisited", OPT_IGNORE_UNVISITED, NULL, 0,
	  "Let the exit status and --min-cached judge the probed paths alone, although "
	  "unvisited directories hold an unknown number of misses", DCP_OPTS_GROUP_REPORT },
	{ "min-resident", OPT_MIN_RESIDENT, "PCT", 0,
	  "Exit 0 only if at least PCT percent of the files' pages are in the page cache "
	  "and no file's residency is unknown; implies --pages and -r", DCP_OPTS_GROUP_REPORT },

	{ NULL, 0, NULL, 0, "Output format:", DCP_OPTS_GROUP_FORMAT },
	{ 0 },
};

/* The --only bit of unvisited directories, after the states' bits. */
#define ONLY_UNVISITED DCP_ONLY_UNVISITED

static int parse_only(const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	unsigned mask = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int st = strcmp(tok, "unvisited") == 0 ? ONLY_UNVISITED : dcp_state_parse(tok);

		if (st < 0) {
			free(copy);
			return -EINVAL;
		}
		mask |= 1u << st;
	}
	free(copy);
	if (!mask)
		return -EINVAL;
	env.only = mask;
	return 0;
}

/* A cgroup v2 path: absolute, without "." or ".." components. */
static bool cgroup_path(const char *s)
{
	if (s[0] != '/')
		return false;
	for (const char *c = s; *c;) {
		size_t len;

		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return true;
}

/* --diagnose asks the kernel, not about paths: only -q, --json and --output go with it. */
static void check_diagnose(struct argp_state *state)
{
	const char *x = o.npaths ? "PATH arguments" : o.ninputs ? "--from and --files0-from" :
			o.manifest ? "--manifest" : rec.file ? "--record" : env.min_cached >= 0 ?
			"--min-cached" : env.min_resident >= 0 ? "--min-resident" :
			env.per_dir >= 0 ? "--per-dir" : o.summary || o.total ? "-s and -c" :
			o.recursive ? "-r" : o.explain ? "--explain" : o.prometheus ?
			"--prometheus" : o.nul ? "-0" : env.per_mount ? "--per-mount" :
			o.follow != DCP_FOLLOW_NONE ? "-L and -H" : env.no_perturb ?
			"--no-perturb" : env.pages ? "--pages" : env.only ? "--only" : env.sort ?
			"--sort" : env.ignore_unvisited ? "--ignore-unvisited" : o.progress > 0 ?
			"--progress" : NULL;

	if (x)
		argp_error(state, "--diagnose excludes %s: it asks the kernel, probing no path", x);
}

/* --record's own checks, once every option is known: it walks nothing. */
static void check_record(struct argp_state *state)
{
	const char *x = o.manifest ? "--manifest" : o.summary || o.total ? "-s and -c" :
			env.min_cached >= 0 ? "--min-cached" : env.min_resident >= 0 ?
			"--min-resident" : env.per_dir >= 0 ? "--per-dir" : o.recursive ? "-r" :
			o.explain ? "--explain" : o.prometheus ? "--prometheus" : o.nul ? "-0" :
			env.per_mount ? "--per-mount" : o.ninputs ? "--from and --files0-from" :
			o.follow != DCP_FOLLOW_NONE ? "-L and -H" : env.no_perturb ? "--no-perturb" :
			env.only ? "--only" : env.sort ? "--sort" : env.ignore_unvisited ?
			"--ignore-unvisited" : NULL;
	const char *what = rec.for_ns ? "--for" : rec.pid ? "--pid" : rec.cgroup ? "--cgroup" :
			   rec.start ? "--start" : rec.listed ? "--listed" : NULL;

	if (!rec.file) {
		if (what)
			argp_error(state, "%s needs --record", what);
		return;
	}
	if (!x && o.output != (strcmp(rec.file, "-") ? rec.file : NULL))
		x = "--output";
	if (x)
		argp_error(state, "--record excludes %s: it records what is opened under the "
			   "PATHs, walking nothing", x);
	if (rec.pid && rec.cgroup)
		argp_error(state, "--pid excludes --cgroup");
	if (rec.start && (rec.pid || rec.cgroup))
		argp_error(state, "--start excludes %s: the command started is the one recorded",
			   rec.pid ? "--pid" : "--cgroup");
	if (rec.start && !strcmp(rec.file, "-"))
		argp_error(state, "--start needs --record=FILE, not standard output: the "
			   "command writes there");
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_RECORD:
		if (!*arg)
			argp_error(state, "--record needs a file name (- for standard output)");
		if (rec.file)
			argp_error(state, "--record given twice");
		rec.file = arg;
		/* FILE is written as --output writes (checked now, renamed when whole). */
		if (strcmp(arg, "-") != 0) {
			if (o.output)
				argp_error(state, "--record excludes --output: it writes FILE");
			o.output = arg;
		}
		break;
	case OPT_FOR: {
		uint64_t ns;

		/* Whole seconds, minutes or hours: a recording shorter than its
		 * start and end (a second at most) would mean nothing. */
		size_t len = strlen(arg);

		if (dcp_parse_duration_ns(arg, &ns) < 0 || ns == 0 ||
		    (len >= 2 && (arg[len - 1] == 's' || arg[len - 1] == 'S') &&
		     strchr("nuNUmM", arg[len - 2])))
			argp_error(state, "invalid --for %s: a whole number of seconds, minutes or "
				   "hours above 0 is needed (30s, 10m, 1h; 30 is 30s)",
				   dcp_quoted(&qbuf, arg));
		rec.for_ns = ns;
		break;
	}
	case OPT_PID:
		rec.pid = dcp_opts_number(state, "--pid", arg, 1, INT_MAX);
		break;
	case OPT_CGROUP:
		if (!cgroup_path(arg))
			argp_error(state, "invalid --cgroup %s: an absolute cgroup path is needed "
				   "(/system.slice/app.service, or a directory of the cgroup2 "
				   "mount)", dcp_quoted(&qbuf, arg));
		rec.cgroup = arg;
		break;
	case OPT_START: {
		struct rlimit rl;

		if (!arg[strspn(arg, " \t\n")])
			argp_error(state, "--start needs a command (run with /bin/sh -c)");
		if (rec.start)
			argp_error(state, "--start given twice");
		rec.start = arg;
		/* The command's standard output is the one given: kept now, before
		 * --record's FILE takes its place (at the end of the parse).  Below
		 * the recorder's floor the run refuses before the command exists,
		 * saying the floor: no descriptor taken for it then. */
		rec.start_stdout = -1;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur < DCP_FLOOR_RECORD_START)
			break;
		rec.start_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (rec.start_stdout < 0 && errno != EBADF)
			dcp_die(DCP_EXIT_ERROR, errno, "--start");
		break;
	}
	case OPT_LISTED:
		rec.listed = true;
		break;
	case OPT_DIAGNOSE:
		diagnose = true;
		o.set |= DCP_OPTS_PATHS_OPTIONAL; /* and check_diagnose() refuses one */
		break;
	case OPT_NO_PERTURB:
		env.no_perturb = true;
		break;
	case OPT_IGNORE_UNVISITED:
		env.ignore_unvisited = true;
		break;
	case OPT_ONLY:
		if (parse_only(arg) < 0)
			argp_error(state, "invalid --only %s: a comma-separated list of "
				   "cached, negative, miss, error, unvisited is needed",
				   dcp_quoted(&qbuf, arg));
		break;
	case OPT_PER_DIR:
		env.per_dir = arg ? dcp_opts_number(state, "--per-dir", arg, 0, INT_MAX) : INT_MAX;
		o.recursive = true;
		break;
	case OPT_PER_MOUNT:
		env.per_mount = true;
		break;
	case OPT_MIN_CACHED:
		env.min_cached = dcp_opts_percent(state, "--min-cached", arg);
		o.recursive = true; /* a gate judges trees, never one entry */
		break;
	case OPT_PAGES:
		env.pages = true;
		break;
	case OPT_SORT:
		env.sort = true;
		break;
	case OPT_RANGES:
		env.ranges = env.pages = true;
		break;
	case OPT_MIN_RESIDENT:
		env.min_resident = dcp_opts_percent(state, "--min-resident", arg);
		env.pages = true;
		o.recursive = true;
		break;
	case ARGP_KEY_END:
		if (diagnose) {
			check_diagnose(state);
			break;
		}
		check_record(state);
		if (rec.file) {
			env.pages = env.ranges = true; /* a manifest */
			break;
		}
		if (o.manifest && (env.per_dir >= 0 || env.ranges || env.no_perturb))
			argp_error(state, "--manifest excludes %s: it probes the paths recorded, "
				   "walking nothing", env.per_dir >= 0 ? "--per-dir" :
				   env.ranges ? "--ranges" : "--no-perturb");
		if (o.manifest)
			env.pages = true; /* a manifest is checked in both halves */
		if (env.per_dir >= 0 && o.summary)
			argp_error(state, "--per-dir excludes -s");
		if (env.ranges && (!o.json || !dcp_probe_run_prints_paths(&o, &env)))
			argp_error(state, "--ranges adds to the JSON record of each file: it needs "
				   "--json and per-path records (not -s, -q, --per-dir, --per-mount)");
		/* One text table per stream: each has its own columns (JSON
		 * records and metrics say what they are). */
		if (!o.json && !o.prometheus && env.per_mount && (env.per_dir >= 0 || o.summary))
			argp_error(state, "--per-mount excludes %s in text (run the command twice, "
				   "or use --json)", o.summary ? "-s" : "--per-dir");
		if (env.sort && !dcp_probe_run_prints_paths(&o, &env))
			argp_error(state, "--sort orders per-path lines: -s, -q, --per-dir, "
				   "--per-mount and --prometheus print none");
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

	children[0].argp = dcp_opts_argp(&o, "dcache-probe", DCP_OPTS_WALK | DCP_OPTS_INPUT |
					  DCP_OPTS_NUL | DCP_OPTS_PROM | DCP_OPTS_PROGRESS |
					  DCP_OPTS_SUMMARY | DCP_OPTS_EXPLAIN | DCP_OPTS_SIZES |
					  DCP_OPTS_MANIFEST, DCP_FOLLOW_NONE);
	/* argp exits 64 itself on a usage error: a failure here is argp's own. */
	ret = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (ret) {
		dcp_warn(ret, "cannot parse the command line");
		return DCP_EXIT_ERROR;
	}

	if (diagnose)
		return dcp_diagnose_run(&o);
	if (rec.file)
		return dcp_record_run(&o, &env, &rec);
	return dcp_probe_run(&o, &env);
}
