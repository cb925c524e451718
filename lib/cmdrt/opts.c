// SPDX-License-Identifier: MIT
/*
 * opts.c - the shared options of the four commands: one table, one parser,
 * one set of checks and messages (dcp_opts.h).
 */
#define _GNU_SOURCE
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcp_manifest.h"
#include "dcp_mounts.h"
#include "dcp_probe_report.h"
#include "dcp_msg.h"
#include "dcp_opts.h"
#include "dcp_output.h"
#include "dcp_pathlist.h"
#include "dcp_probe.h"
#include "dcp_prom.h"
#include "dcp_report.h"
#include "dcp_pages.h"
#include "dcp_util.h"
#include "dcp_walk.h"

/* Filesystems a walk does not go into unless --exclude-fstype says otherwise. */
#define DEFAULT_EXCLUDE_FSTYPE DCP_FS_PSEUDO_TYPES

enum {
	OPT_EXCLUDE = 0x1000,
	OPT_NAME,
	OPT_TYPE,
	OPT_MAX_DEPTH,
	OPT_MIN_DEPTH,
	OPT_EXCLUDE_FSTYPE,
	OPT_FROM,
	OPT_FILES0_FROM,
	OPT_JSON,
	OPT_PROMETHEUS,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_NO_HEADINGS,
	OPT_SI,
	OPT_EXPLAIN,
	OPT_OUTPUT,
	OPT_LABEL,
	OPT_MANIFEST,
};

/* One row of the table: the sets that take it, then argp's own fields. */
struct row {
	unsigned set; /* 0: every command */
	struct argp_option opt;
};

#define G_IN DCP_OPTS_GROUP_INPUT
#define G_REP DCP_OPTS_GROUP_REPORT
#define G_FMT DCP_OPTS_GROUP_FORMAT
#define WALK DCP_OPTS_WALK
#define FOLLOW (DCP_OPTS_WALK | DCP_OPTS_FOLLOW)

static const struct row table[] = {
	{ WALK, { "recursive", 'r', NULL, 0,
		  "Walk the tree below each PATH that is a directory", G_IN } },
	{ WALK, { "one-file-system", 'x', NULL, 0,
		  "-r: stay on the filesystem of each PATH", G_IN } },
	{ WALK, { "xdev", 0, NULL, OPTION_ALIAS, NULL, G_IN } },
	{ WALK, { "exclude", OPT_EXCLUDE, "GLOB", 0,
		  "-r: leave out the entries whose name (or path, if GLOB has a '/') "
		  "matches GLOB, and what is below them; repeatable", G_IN } },
	{ WALK, { "name", OPT_NAME, "GLOB", 0,
		  "-r: count and report only entries whose name matches GLOB (the walk "
		  "still goes down every directory); repeatable: any may match", G_IN } },
	{ WALK, { "type", OPT_TYPE, "LIST", 0,
		  "-r: count and report only entries of these types: f (file), d, l, b, c, "
		  "p, s, comma-separated", G_IN } },
	{ WALK, { "max-depth", OPT_MAX_DEPTH, "N", 0,
		  "Go at most N levels below each PATH (0: PATH only); implies -r", G_IN } },
	{ WALK, { "maxdepth", 0, NULL, OPTION_ALIAS | OPTION_HIDDEN, NULL, G_IN } },
	{ WALK, { "mindepth", OPT_MIN_DEPTH, "N", 0,
		  "Count and report only entries at least N levels below each PATH; "
		  "implies -r", G_IN } },
	{ WALK, { "min-depth", 0, NULL, OPTION_ALIAS | OPTION_HIDDEN, NULL, G_IN } },
	{ WALK, { "exclude-fstype", OPT_EXCLUDE_FSTYPE, "LIST", 0,
		  "-r: do not go into mounts of these filesystem types, comma-separated "
		  "(default: proc, sysfs and the other pseudo filesystems of dcprobe(7); "
		  "none: every mount); the first use replaces the default", G_IN } },
	{ WALK, { "dereference", 'L', NULL, 0,
		  "Follow every symbolic link, in PATHs and in the walk (cycles are detected)",
		  G_IN } },
	{ WALK, { "follow", 0, NULL, OPTION_ALIAS, NULL, G_IN } },
	{ DCP_OPTS_FOLLOW, { "dereference", 'L', NULL, 0,
			     "Follow a symbolic link in the last component of PATH (the "
			     "default)", G_IN } },
	{ DCP_OPTS_FOLLOW, { "follow", 0, NULL, OPTION_ALIAS, NULL, G_IN } },
	{ WALK, { "dereference-args", 'H', NULL, 0,
		  "Follow symbolic links given as PATH or in a list, no others", G_IN } },
	{ FOLLOW, { "no-dereference", 'P', NULL, 0,
		    "Follow no symbolic link", G_IN } },
	{ FOLLOW, { "no-follow", 0, NULL, OPTION_ALIAS, NULL, G_IN } },
	{ WALK, { "jobs", 'j', "N", 0, "Run N lookups at once (1 to 1024)", G_IN } },
	{ DCP_OPTS_INPUT, { "from", OPT_FROM, "FILE", 0,
			    "Also read paths from FILE, one per line (- for standard input); "
			    "repeatable", G_IN } },
	{ DCP_OPTS_MANIFEST, { "manifest", OPT_MANIFEST, "FILE", 0,
			       "Instead of PATHs, the paths of a residency manifest, a snapshot "
			       "dcache-probe took (- for standard input): see dcprobe(7)", G_IN } },
	{ DCP_OPTS_INPUT, { "files0-from", OPT_FILES0_FROM, "FILE", 0,
			    "Also read paths from FILE, each ended by a NUL byte, as find "
			    "-print0 writes them (- for standard input); repeatable", G_IN } },

	{ DCP_OPTS_SUMMARY, { "summary", 's', NULL, 0,
			      "One summary line per PATH on standard output instead of a "
			      "line per entry", G_REP } },
	{ DCP_OPTS_SUMMARY, { "total", 'c', NULL, 0,
			      "Add a line with the grand total of all PATHs", G_REP } },
	{ DCP_OPTS_SUMMARY, { "no-headings", OPT_NO_HEADINGS, NULL, 0,
			      "Print no heading line over a table (there is one only when "
			      "standard output is a terminal)", G_REP } },
	{ DCP_OPTS_SUMMARY, { "noheadings", 0, NULL, OPTION_ALIAS | OPTION_HIDDEN, NULL, G_REP } },
	{ DCP_OPTS_SIZES, { "human-readable", 'h', NULL, 0,
			    "Byte counts in text as 1.5K, 234M, 2.0G (powers of 1024, rounded up, "
			    "as du -h)", G_REP } },
	{ DCP_OPTS_SIZES, { "si", OPT_SI, NULL, 0,
			    "Byte counts in text as 1.6k, 246M, 2.2G (powers of 1000, rounded up, "
			    "as du --si); the last of -h and --si wins", G_REP } },
	{ DCP_OPTS_VERBOSE, { "verbose", 'v', NULL, 0,
			      "List each path handled on standard output", G_REP } },
	{ DCP_OPTS_EXPLAIN, { "explain", OPT_EXPLAIN, NULL, 0,
			      "For each miss, name the first path prefix whose lookup misses and "
			      "why (dcprobe(7), \"Why is it cold?\"); summaries count misses by "
			      "reason", G_REP } },
	{ 0, { "quiet", 'q', NULL, 0,
	       "Print no results and no summary, only errors (a list or a directory that "
	       "could not be read...); the exit status tells", G_REP } },
	{ 0, { "silent", 0, NULL, OPTION_ALIAS, NULL, G_REP } },

	{ 0, { "json", OPT_JSON, NULL, 0,
	       "JSON Lines on standard output: one object per record, then a summary "
	       "object (dcprobe(7) has their schema)", G_FMT } },
	{ DCP_OPTS_NUL, { "null", '0', NULL, 0,
			  "End each output line with a NUL byte, not a newline, as xargs -0r "
			  "reads (and --files0-from)", G_FMT } },
	{ DCP_OPTS_PROM, { "prometheus", OPT_PROMETHEUS, NULL, 0,
			   "Metrics on standard output in the Prometheus text format, for "
			   "node_exporter's textfile collector", G_FMT } },
	{ DCP_OPTS_PROM, { "label", OPT_LABEL, "NAME=VALUE", 0,
			   "--prometheus: add the label NAME=\"VALUE\" to every series (as "
			   "tree=app), so that two runs' files never collide; repeatable", G_FMT } },
	{ 0, { "output", OPT_OUTPUT, "FILE", 0,
	       "Write the output to a temporary file beside FILE and rename it to FILE once "
	       "all of it is written; FILE is left as it was if a write fails; FILE must be "
	       "a regular file (not a link) or absent", G_FMT } },
	{ DCP_OPTS_PROGRESS, { "progress", OPT_PROGRESS, NULL, 0,
			       "Draw a progress line on standard error even when it could mix "
			       "with output", G_FMT } },
	{ DCP_OPTS_PROGRESS, { "no-progress", OPT_NO_PROGRESS, NULL, 0,
			       "Never draw a progress line", G_FMT } },
};

#define NROWS (sizeof(table) / sizeof(table[0]))

static struct argp_option options[NROWS + 1];
static struct dcp_opts *opts;
static bool r_given; /* -r itself, not implied */
static char *default_fstypes; /* what the default --exclude-fstype list points into */
/* The lists of o->filter, as parsed (NULL-terminated; they live until exit). */
static const char **names;    /* --name */
static size_t nnames;
static char **fstypes;	      /* --exclude-fstype */
static struct dcp_buf qbuf;   /* an argument quoted for a message */
static uint64_t started;      /* when the parse began: the run's duration */
static bool parsed;	      /* the command line was read whole */
static bool finished;	      /* dcp_opts_finish() was called */
static struct dcp_output *outfile; /* --output's temporary file */

/* True when one of the N strings of V is empty. */
static bool args_have_empty(char *const *v, int n)
{
	for (int i = 0; i < n; i++)
		if (!v[i][0])
			return true;
	return false;
}

static const char *quoted(const char *s)
{
	return dcp_quoted(&qbuf, s);
}

static void *push(struct argp_state *state, void *v, size_t *n, size_t size, const void *item)
{
	char *nv = realloc(v, (*n + 2) * size);

	if (!nv)
		argp_failure(state, DCP_EXIT_ERROR, ENOMEM, "options");
	memcpy(nv + *n * size, item, size);
	memset(nv + (*n + 1) * size, 0, size); /* NULL-terminated lists */
	(*n)++;
	return nv;
}

int dcp_opts_number(struct argp_state *state, const char *opt, const char *arg, uint64_t min,
		    uint64_t max)
{
	uint64_t v;

	if (dcp_parse_u64(arg, min, max, &v) < 0)
		argp_error(state, "invalid %s %s: a whole number from %llu to %llu is needed",
			   opt, quoted(arg), (unsigned long long)min, (unsigned long long)max);
	return (int)v;
}

double dcp_opts_percent(struct argp_state *state, const char *opt, const char *arg)
{
	double v;

	if (dcp_parse_percent(arg, &v) < 0)
		argp_error(state, "invalid %s %s: a percentage from 0 to 100 is needed", opt,
			   quoted(arg));
	return v;
}

static unsigned parse_types(struct argp_state *state, const char *arg)
{
	static const struct { char c; unsigned char dt; } types[] = {
		{ 'f', DT_REG }, { 'd', DT_DIR }, { 'l', DT_LNK }, { 'b', DT_BLK },
		{ 'c', DT_CHR }, { 'p', DT_FIFO }, { 's', DT_SOCK },
	};
	unsigned mask = 0;
	const char *p = arg;

	for (;;) {
		size_t i;

		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (p[0] == types[i].c && (p[1] == ',' || !p[1]))
				break;
		if (i == sizeof(types) / sizeof(types[0]))
			argp_error(state, "invalid --type %s: a comma-separated list of "
				   "f, d, l, b, c, p, s is needed", quoted(arg));
		mask |= 1u << types[i].dt;
		if (!p[1])
			return mask;
		p += 2;
	}
}

static void parse_fstypes(struct argp_state *state, struct dcp_opts *o, const char *arg,
			  bool replace)
{
	char *copy = strdup(arg), *save = NULL;
	size_t n = 0;

	if (!copy)
		argp_failure(state, DCP_EXIT_ERROR, ENOMEM, "options");
	if (replace) {
		free(fstypes);
		fstypes = NULL;
	} else {
		while (fstypes && fstypes[n])
			n++;
	}
	if (strcmp(arg, "none") == 0 || !*arg) {
		free(copy);
	} else {
		/* The list points into COPY: both live until exit. */
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			fstypes = push(state, fstypes, &n, sizeof(char *), &t);
	}
	o->filter.fstypes = (const char *const *)fstypes;
}

static void add_input(struct argp_state *state, struct dcp_opts *o, const char *file, bool nul)
{
	struct dcp_input in = { file, nul };

	if (!*file)
		argp_error(state, "%s needs a file name (- for standard input)",
			   nul ? "--files0-from" : "--from");
	for (size_t i = 0; i < o->ninputs; i++)
		if (strcmp(file, "-") == 0 && strcmp(o->inputs[i].file, "-") == 0)
			argp_error(state, "standard input can be read only once");
	o->inputs = push(state, o->inputs, &o->ninputs, sizeof(in), &in);
}

static void add_label(struct argp_state *state, struct dcp_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct dcp_label l;
	int ret;

	if (!eq)
		argp_error(state, "invalid --label %s: NAME=VALUE is needed", quoted(arg));
	l.name = strndup(arg, (size_t)(eq - arg));
	l.value = eq + 1;
	if (!l.name)
		argp_failure(state, DCP_EXIT_ERROR, ENOMEM, "options");
	ret = dcp_prom_label_name_ok(l.name);
	if (ret == -EINVAL)
		argp_error(state, "invalid --label name %s: a Prometheus label name is a letter "
			   "or '_', then letters, digits and '_'", quoted(l.name));
	if (ret == -EPERM)
		argp_error(state, "invalid --label name %s: names starting with __ are "
			   "reserved by Prometheus", quoted(l.name));
	if (ret == -EEXIST)
		argp_error(state, "invalid --label name %s: the series already carry it "
			   "(command, root, state, fstype, mount_id, mountpoint, path, kind)",
			   quoted(l.name));
	for (size_t i = 0; i < o->nlabels; i++)
		if (!strcmp(o->labels[i].name, l.name))
			argp_error(state, "--label %s given twice", quoted(l.name));
	if (!*l.value)
		argp_error(state, "invalid --label %s: an empty VALUE is no label to Prometheus",
			   quoted(arg));
	o->labels = push(state, o->labels, &o->nlabels, sizeof(l), &l);
}

/*
 * --output's file, made before the run (dcp_output_open() checks FILE):
 * false, said, when it cannot be.
 */
static bool open_output(const struct dcp_opts *o)
{
	const char *why = NULL;
	int ret = dcp_output_open(o->output, &outfile, &why);

	if (ret < 0 && why)
		dcp_warn(0, "--output: %s %s: not replaced", quoted(o->output), why);
	else if (ret < 0)
		dcp_warn(-ret, "--output: cannot create a file beside %s", quoted(o->output));
	return ret == 0;
}

/*
 * The fewest descriptors each command needs (RLIMIT_NOFILE, with only
 * standard input, output and error open): measured with every option
 * that holds descriptors (tests/cmd/test_limits.sh runs each under every
 * limit up to its floor + 2), and written in each man page.
 */
static const struct {
	const char *command;
	unsigned floor;
} floors[] = {
	{ "cachedopen", DCP_FLOOR_CACHEDOPEN },
	{ "dcache-probe", DCP_FLOOR_DCACHE_PROBE },
	{ "warm", DCP_FLOOR_WARM },
	{ "uring-open", DCP_FLOOR_URING_OPEN },
};

/*
 * Whether this run has the descriptors its command needs.  Below the floor
 * no run is tried (a walk would report entries it could not probe as
 * errors, a mount table it could not load as "unknown"): it says so, in
 * words.  Descriptors the process was given beyond the standard three
 * count against the limit (dcp_fd_free()).
 */
static bool enough_descriptors(const struct dcp_opts *o)
{
	uint32_t floor = 0, free_fds = dcp_fd_free();
	struct rlimit rl;

	for (size_t i = 0; i < sizeof(floors) / sizeof(floors[0]); i++)
		if (!strcmp(floors[i].command, o->command))
			floor = floors[i].floor;
	if (!floor || free_fds >= floor - 3 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return true;
	if (rl.rlim_cur < floor)
		dcp_warn(0, "needs at least %u open file descriptors, RLIMIT_NOFILE (ulimit -n) "
			 "is %llu", floor, (unsigned long long)rl.rlim_cur);
	else
		dcp_warn(0, "needs at least %u open file descriptors, RLIMIT_NOFILE (ulimit -n) "
			 "is %llu and %llu are open already (%llu besides standard input, output "
			 "and error)", floor, (unsigned long long)rl.rlim_cur,
			 (unsigned long long)(rl.rlim_cur - free_fds),
			 (unsigned long long)(rl.rlim_cur - free_fds - 3));
	return false;
}

/* The checks that hold in every command, once every option is known. */
static void check(struct argp_state *state, struct dcp_opts *o)
{
	if (o->manifest) {
		/* The manifest says which paths: nothing to walk or to add. */
		if (o->npaths || o->ninputs || r_given || o->max_depth >= 0 || o->filter.min_depth > 0)
			argp_error(state, "--manifest excludes %s", r_given ? "-r" :
				   o->npaths ? "PATH arguments" : o->ninputs ? "--from and --files0-from" :
				   o->max_depth >= 0 ? "--max-depth" : "--mindepth");
	} else if (!o->npaths && !o->ninputs && !(o->set & DCP_OPTS_PATHS_OPTIONAL)) {
		argp_error(state, (o->set & DCP_OPTS_INPUT) ?
			   "no PATH given (and no --from or --files0-from)" : "no PATH given");
	}
	if (o->quiet && (o->json || o->prometheus || o->verbose))
		argp_error(state, "-q excludes %s", o->json ? "--json" :
			   o->prometheus ? "--prometheus" : "-v");
	if (o->json && (o->prometheus || o->nul))
		argp_error(state, "--json excludes %s", o->prometheus ? "--prometheus" : "-0");
	if (o->nul && o->prometheus)
		argp_error(state, "-0 excludes --prometheus");
	if (o->prometheus && o->verbose)
		argp_error(state, "--prometheus excludes -v");
	if (o->nlabels && !o->prometheus)
		argp_error(state, "--label needs --prometheus");
	if (o->total && !o->summary && (o->set & DCP_OPTS_SUMMARY))
		o->summary = true; /* -c alone: the roots' lines and the total */
	/* A root's line covers its tree, as du -s: -s and -c imply -r.  A
	 * manifest's lines cover its roots: nothing is walked. */
	if (o->manifest)
		o->recursive = false;
	else if (o->summary && (o->set & DCP_OPTS_WALK))
		o->recursive = true;
	if (!o->recursive && (o->set & DCP_OPTS_WALK)) {
		const char *which = o->xdev ? "-x" : o->nexcludes ? "--exclude" :
				    nnames ? "--name" : o->filter.types ? "--type" :
				    o->fstypes_given ? "--exclude-fstype" : NULL;

		if (which)
			argp_error(state, "%s needs -r", which);
	}
}

/*
 * argp's usage errors end with glibc's old "Try `PROG --help' or `PROG
 * --usage' for more information."  They go through this stream, which
 * says it as GNU tools say it today ("Try 'PROG --help' for more
 * information.") and passes every other line to stderr as it is.
 */
static char err_line[1024];
static size_t err_len;

static void err_flush(void)
{
	static const char head[] = "Try `", tail[] = "' or `";
	char *end;

	if (err_len >= sizeof(head) - 1 && memcmp(err_line, head, sizeof(head) - 1) == 0 &&
	    (end = memmem(err_line, err_len, tail, sizeof(tail) - 1))) {
		dprintf(STDERR_FILENO, "Try '%.*s' for more information.\n",
			(int)(end - err_line - (sizeof(head) - 1)), err_line + sizeof(head) - 1);
	} else if (err_len) {
		ssize_t w = write(STDERR_FILENO, err_line, err_len);

		(void)w; /* nothing better to do with a message that cannot be said */
	}
	err_len = 0;
}

static ssize_t err_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	for (size_t i = 0; i < n; i++) {
		if (err_len == sizeof(err_line))
			err_flush();
		err_line[err_len++] = buf[i];
		if (buf[i] == '\n')
			err_flush();
	}
	return (ssize_t)n;
}

static FILE *usage_stream(void)
{
	static FILE *f;

	if (!f) {
		f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = err_write });
		if (f)
			setvbuf(f, NULL, _IONBF, 0);
	}
	return f ? f : stderr;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	struct dcp_opts *o = opts;

	switch (key) {
	case ARGP_KEY_INIT:
		state->err_stream = usage_stream();
		break;
	case 'r':
		o->recursive = true;
		r_given = true;
		break;
	case OPT_MANIFEST:
		if (o->manifest)
			argp_error(state, "--manifest given twice");
		o->manifest = arg;
		break;
	case 'x':
		o->xdev = true;
		break;
	case OPT_EXCLUDE:
		if (!*arg)
			argp_error(state, "an empty --exclude GLOB matches nothing");
		o->excludes = push(state, o->excludes, &o->nexcludes, sizeof(char *), &arg);
		break;
	case OPT_NAME:
		if (!*arg)
			argp_error(state, "an empty --name GLOB matches nothing");
		names = push(state, names, &nnames, sizeof(char *), &arg);
		o->filter.names = names;
		break;
	case OPT_TYPE:
		o->filter.types |= parse_types(state, arg);
		break;
	case OPT_MAX_DEPTH:
		o->max_depth = dcp_opts_number(state, "--max-depth", arg, 0, INT_MAX);
		o->recursive = true;
		break;
	case OPT_MIN_DEPTH:
		o->filter.min_depth = dcp_opts_number(state, "--mindepth", arg, 0, INT_MAX);
		o->recursive = true;
		break;
	case OPT_EXCLUDE_FSTYPE:
		parse_fstypes(state, o, arg, !o->fstypes_given);
		o->fstypes_given = true;
		break;
	case 'L':
		o->follow = DCP_FOLLOW_ALL;
		break;
	case 'H':
		o->follow = DCP_FOLLOW_ROOTS;
		break;
	case 'P':
		o->follow = DCP_FOLLOW_NONE;
		break;
	case 'j':
		o->jobs = (unsigned)dcp_opts_number(state, "--jobs", arg, 1, 1024);
		break;
	case OPT_FROM:
	case OPT_FILES0_FROM:
		add_input(state, o, arg, key == OPT_FILES0_FROM);
		break;
	case 's':
		o->summary = true;
		break;
	case 'c':
		o->total = true;
		break;
	case 'v':
		o->verbose = true;
		break;
	case OPT_EXPLAIN:
		o->explain = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case '0':
		o->nul = true;
		break;
	case OPT_PROMETHEUS:
		o->prometheus = true;
		break;
	case OPT_OUTPUT:
		if (!*arg)
			argp_error(state, "--output needs a file name");
		o->output = arg;
		break;
	case OPT_LABEL:
		add_label(state, o, arg);
		break;
	case OPT_PROGRESS:
		o->progress = 1;
		break;
	case OPT_NO_PROGRESS:
		o->progress = -1;
		break;
	case OPT_NO_HEADINGS:
		o->no_headings = true;
		break;
	case 'h':
	case OPT_SI:
		o->units = key == OPT_SI ? DCP_UNITS_SI : DCP_UNITS_IEC;
		break;
	case ARGP_KEY_ARGS:
		o->paths = state->argv + state->next;
		o->npaths = state->argc - state->next;
		if (args_have_empty(o->paths, o->npaths))
			argp_error(state, DCP_MSG_EMPTY_PATH);
		break;
	case ARGP_KEY_END:
		check(state, o);
		/* Before anything that needs a descriptor: the output file first. */
		if (!enough_descriptors(o))
			exit(DCP_EXIT_ERROR);
		if (o->output && !open_output(o))
			exit(DCP_EXIT_ERROR);
		parsed = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct argp shared = { .options = options, .parser = parse };

/* ---- the end of the run: --output, and the metrics of a run that stopped ---- */

struct dcp_prom *dcp_opts_prom_new(const struct dcp_opts *o)
{
	struct dcp_prom *m = dcp_prom_new(o->command);

	for (size_t i = 0; m && i < o->nlabels; i++)
		if (dcp_prom_add_label(m, o->labels[i].name, o->labels[i].value) < 0) {
			dcp_prom_free(m);
			return NULL;
		}
	return m;
}

/* Publish the output file (if any) of a run that ends with STATUS. */
static int publish(const struct dcp_opts *o, int status)
{
	struct dcp_output *f = outfile;
	const char *why;
	int ret;

	outfile = NULL;
	if (!f)
		return status;
	if (dcp_output_failed()) {
		dcp_output_discard(f);
		dcp_warn(0, "%s left as it was: the output could not be written whole",
			 quoted(o->output));
		return DCP_EXIT_ERROR;
	}
	ret = dcp_output_commit(f, &why);
	if (ret < 0 && why) {
		dcp_warn(0, "%s left as it was: since the run began, it %s", quoted(o->output), why);
		return DCP_EXIT_ERROR;
	}
	if (ret < 0) {
		dcp_warn(-ret, "%s left as it was: cannot write it", quoted(o->output));
		return DCP_EXIT_ERROR;
	}
	return status;
}

int dcp_opts_finish(const struct dcp_opts *o, int status)
{
	finished = true;
	return publish(o, status);
}

/*
 * A run that exits without dcp_opts_finish(): exit 3, a fatal error, or a
 * usage error (64, when --prometheus was read before it).  With
 * --prometheus its whole output is the run-level series, which say the
 * exit status; without, FILE stays as it was.
 */
static void at_exit(int status, void *arg)
{
	const struct dcp_opts *o = arg;
	/* With another output (--json, -0, -q, -v), metrics are not what was asked. */
	bool metrics = o->prometheus && !(status == DCP_EXIT_USAGE &&
					  (o->json || o->nul || o->quiet || o->verbose));

	if (finished || (!parsed && status != DCP_EXIT_USAGE))
		return; /* --help, --version, or a failure of the parse itself */
	if (!metrics || dcp_output_failed()) {
		/* Nothing whole to publish: a failed write is said, FILE stays. */
		if (outfile && dcp_output_failed()) {
			publish(o, status);
		} else if (outfile) {
			dcp_output_discard(outfile);
			outfile = NULL;
		}
		return;
	}
	/* A usage error before --output's file was made: make it now. */
	if (o->output && !outfile && !open_output(o))
		return;
	if (!outfile || dcp_output_truncate(outfile) == 0) {
		struct dcp_prom *m = dcp_opts_prom_new(o);
		struct dcp_buf b = DCP_BUF_INIT;

		if (m) {
			dcp_prom_run(m, (double)(dcp_now_ns() - started) / 1e9, status);
			dcp_prom_write(m, &b);
			dcp_output_write(&b);
		}
		dcp_prom_free(m);
		dcp_buf_free(&b);
	}
	if (publish(o, status) != status)
		_exit(DCP_EXIT_ERROR); /* exit() again from a handler is undefined */
}

const struct argp *dcp_opts_argp(struct dcp_opts *o, const char *command, unsigned set,
				 enum dcp_follow follow)
{
	static bool handler;
	size_t n = 0;

	*o = (struct dcp_opts){ .set = set, .command = command, .max_depth = -1,
				.follow = follow };
	/*
	 * The help is written for argp's 79 columns, its lines shorter than
	 * that: a line of exactly 79 makes glibc's argp read the byte after
	 * its buffer to decide where to break it, so a width of the user's
	 * choice would make the text's breaks a matter of chance.  The same
	 * text in every environment (dcprobe(7), ENVIRONMENT).
	 */
	unsetenv("ARGP_HELP_FMT");
	started = dcp_now_ns();
	if (!handler)
		handler = on_exit(at_exit, o) == 0;
	if (set & DCP_OPTS_WALK) {
		char *save = NULL;
		size_t k = 0;

		free(default_fstypes);
		default_fstypes = strdup(DEFAULT_EXCLUDE_FSTYPE);
		for (char *t = default_fstypes ? strtok_r(default_fstypes, ",", &save) : NULL; t;
		     t = strtok_r(NULL, ",", &save)) {
			char **v = realloc(fstypes, (k + 2) * sizeof(*v));

			if (!v)
				break;
			fstypes = v;
			v[k++] = t;
			v[k] = NULL;
		}
		o->filter.fstypes = (const char *const *)fstypes;
	}
	for (size_t i = 0; i < NROWS; i++) {
		const struct row *r = &table[i];

		/* cachedopen's -L/-P come from FOLLOW; -H and the rest from WALK. */
		if (r->set && !(r->set & set))
			continue;
		if (r->set == DCP_OPTS_FOLLOW && (set & DCP_OPTS_WALK))
			continue; /* the walk's -L says more */
		options[n++] = r->opt;
	}
	options[n] = (struct argp_option){ 0 };
	opts = o;
	return &shared;
}

/* ---- lists of paths ---- */

static const char *list_name(struct dcp_buf *b, const char *file)
{
	return strcmp(file, "-") == 0 ? "standard input" : dcp_quoted(b, file);
}

static struct dcp_buf input_records; /* --json: the lists' errors, as records */

/* Said under -q too: an error is not a result. */
void dcp_opts_input_error(const struct dcp_opts *o, unsigned long long *errors, const char *file,
			  size_t record, int err, const char *what)
{
	struct dcp_buf b = DCP_BUF_INIT;

	(*errors)++;
	if (o->json) {
		const char *msg = err ? strerror(err) : what + (what[0] == ':' ? 2 : 0);

		dcp_buf_puts(&input_records, "{\"type\":\"input_error\",\"list\":");
		dcp_buf_json_str(&input_records, file, strlen(file));
		if (record)
			dcp_buf_printf(&input_records, ",\"record\":%zu", record);
		if (err)
			dcp_buf_printf(&input_records, ",\"errno\":\"%s\"", dcp_errno_name(err));
		dcp_buf_puts(&input_records, ",\"message\":");
		dcp_buf_json_str(&input_records, msg, strlen(msg));
		dcp_buf_puts(&input_records, "}\n");
	}
	if (record)
		dcp_warn(err, "%s: record %zu%s%s", list_name(&b, file), record, what ? ": " : "",
			 what ? what : "");
	else
		dcp_warn(err, "%s%s%s", what && !err ? "" : "cannot read ", list_name(&b, file),
			 what ? what : "");
	dcp_buf_free(&b);
}

void dcp_opts_manifest_notice(const struct dcp_opts *o, const char *file, int format)
{
	static const char what[] = "a manifest of format 1 (no filesystem UUIDs, no file "
				   "handles): its files are told by device number, which a reboot "
				   "may change; take a new snapshot";
	struct dcp_buf b = DCP_BUF_INIT;

	if (format != 1)
		return;
	if (o->json) {
		dcp_buf_puts(&input_records, "{\"type\":\"notice\",\"list\":");
		dcp_buf_json_str(&input_records, file, strlen(file));
		dcp_buf_puts(&input_records, ",\"manifest_format\":1,\"message\":");
		dcp_buf_json_str(&input_records, what, strlen(what));
		dcp_buf_puts(&input_records, "}\n");
	}
	dcp_warn(0, "%s: %s", list_name(&b, file), what);
	dcp_buf_free(&b);
}

int dcp_opts_each_path(const struct dcp_opts *o, int (*add)(const char *path, void *ctx),
		       void *ctx, unsigned long long *errors)
{
	int ret;

	for (int i = 0; i < o->npaths; i++) {
		ret = add(o->paths[i], ctx);
		if (ret < 0)
			return ret;
	}
	for (size_t i = 0; i < o->ninputs; i++) {
		const struct dcp_input *in = &o->inputs[i];
		struct dcp_pathlist *pl;
		const char *p;
		size_t len;

		ret = dcp_pathlist_open(in->file, in->nul, &pl);
		if (ret < 0) {
			dcp_opts_input_error(o, errors, in->file, 0, -ret, NULL);
			continue;
		}
		while ((ret = dcp_pathlist_next(pl, &p, &len)) != 0) {
			size_t rec = dcp_pathlist_record(pl);

			if (ret == -EINVAL || ret == -ENODATA) {
				dcp_opts_input_error(o, errors, in->file, rec, 0, ret == -EINVAL ?
					    "a path contains a NUL byte (use --files0-from)" :
					    DCP_MSG_EMPTY_PATH);
				continue;
			}
			if (ret < 0) {
				/* Unreadable (EISDIR for a directory): the rest is lost. */
				dcp_opts_input_error(o, errors, in->file, 0, -ret, NULL);
				break;
			}
			if (len >= PATH_MAX) {
				dcp_opts_input_error(o, errors, in->file, rec, 0,
					    "the path is longer than PATH_MAX (4096 bytes)");
				continue;
			}
			ret = add(p, ctx);
			if (ret < 0) {
				dcp_pathlist_close(pl);
				return ret;
			}
		}
		/* An empty list is no error (as du --files0-from): nothing
		 * to do is done; a gate over nothing fails by itself. */
		dcp_pathlist_close(pl);
	}
	return 0;
}

void dcp_opts_input_records(struct dcp_buf *out)
{
	dcp_buf_add(out, input_records.data, input_records.len);
	dcp_buf_free(&input_records);
}

/* ---- progress ---- */

int dcp_opts_can_probe(bool probes, bool pages)
{
	int ret = probes ? dcp_probe_support() : 0;

	if (ret < 0) {
		dcp_warn(0, "%s", dcp_unsupported_reason(ret));
		return DCP_EXIT_UNSUPPORTED;
	}
	ret = pages ? dcp_pages_support() : 0;
	if (ret < 0) {
		dcp_warn(0, "%s", dcp_pages_unsupported_reason(ret));
		return DCP_EXIT_UNSUPPORTED;
	}
	return DCP_EXIT_OK;
}

enum dcp_pr_format dcp_opts_format(const struct dcp_opts *o)
{
	if (o->json)
		return DCP_PR_JSON;
	if (o->nul)
		return isatty(STDOUT_FILENO) ? DCP_PR_NUL_TTY : DCP_PR_NUL;
	return DCP_PR_TEXT;
}

FILE *dcp_opts_manifest_fopen(const struct dcp_opts *o)
{
	return strcmp(o->manifest, "-") == 0 ? stdin : fopen(o->manifest, "re");
}

void dcp_opts_manifest_fclose(const struct dcp_opts *o, FILE *f)
{
	if (f && f != stdin)
		fclose(f);
	(void)o;
}

int dcp_opts_manifest_read(const struct dcp_opts *o, struct dcp_manifest *m,
			   void (*bad)(size_t record, const char *what, void *arg), void *arg)
{
	if (strcmp(o->manifest, "-") == 0)
		return dcp_manifest_fread(stdin, m, bad, arg);
	return dcp_manifest_read(o->manifest, m, bad, arg);
}

bool dcp_opts_headings(const struct dcp_opts *o)
{
	return !o->no_headings && !o->json && !o->prometheus && !o->nul && !o->quiet &&
	       !o->output && isatty(STDOUT_FILENO);
}

bool dcp_opts_progress(const struct dcp_opts *o, bool streams)
{
	struct stat st;

	if (o->progress)
		return o->progress > 0;
	if (o->quiet || !isatty(STDERR_FILENO))
		return false;
	if (fstat(STDOUT_FILENO, &st) == 0 && S_ISFIFO(st.st_mode))
		return false; /* its reader may well print to this terminal */
	return !(streams && isatty(STDOUT_FILENO));
}
