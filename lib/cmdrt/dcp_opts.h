/* SPDX-License-Identifier: MIT */
/*
 * dcp_opts.h - the options the four commands share, parsed in one place.
 *
 * A command names the sets it takes (DCP_OPTS_*) and adds dcp_opts_argp()
 * as an argp child; the shared options then have the same names, aliases,
 * help text, checks and conflicts in every command that has them.  The
 * command's own parser handles only its own options.
 *
 * The grammar (dcprobe(7), "Options"):
 *   - --max-depth and --mindepth name depths, so they imply -r; the other
 *     walk options (-x, --exclude, --name, --type, --exclude-fstype) are a
 *     usage error without -r.
 *   - -0/--null changes output only; lists are read with --from (lines)
 *     or --files0-from (NUL-separated), "-" being standard input.
 *   - -q excludes --json, --prometheus and -v; --json excludes --prometheus
 *     and -0; -0 excludes --prometheus; --label needs --prometheus.
 *   - --output=FILE (every command): standard output goes to a temporary
 *     file beside FILE, renamed onto FILE by dcp_opts_finish() when the
 *     run ended and every write succeeded (dcp_output.h).  FILE must be
 *     a regular file or absent: anything else is refused (exit 2) before
 *     the run.
 *   - Below its descriptor floor (DCP_FLOOR_*) a command refuses to run
 *     (exit 2), saying so, once the options are read.
 *
 * A run that does not reach dcp_opts_finish() (exit 3 "cannot probe", a
 * fatal error, exit 64 for a usage error once --prometheus was read) ends
 * in an exit handler: with --prometheus it writes the run-level series
 * (dcp_prom_run(): exit status, duration, timestamp) as the whole output,
 * so that monitoring sees the failure; without, FILE is left as it was.
 */
#ifndef DCP_OPTS_H
#define DCP_OPTS_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcp_filter.h"
#include "dcp_probe_report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_buf;
struct dcp_manifest;

/* Which shared options a command takes; -q, --json and --output are always there. */
enum {
	DCP_OPTS_WALK = 1 << 0,	    /* -r -x -H -L -P --exclude --name --type
				     * --max-depth --mindepth --exclude-fstype -j */
	DCP_OPTS_FOLLOW = 1 << 1,   /* -L -P for one path (cachedopen) */
	DCP_OPTS_INPUT = 1 << 2,    /* --from --files0-from */
	DCP_OPTS_NUL = 1 << 3,	    /* -0: output records end with NUL */
	DCP_OPTS_PROM = 1 << 4,	    /* --prometheus */
	DCP_OPTS_PROGRESS = 1 << 5, /* --progress --no-progress */
	DCP_OPTS_SUMMARY = 1 << 6,  /* -s -c */
	DCP_OPTS_VERBOSE = 1 << 7,  /* -v */
	DCP_OPTS_PATHS_OPTIONAL = 1 << 8, /* no PATH is fine without a list */
	DCP_OPTS_EXPLAIN = 1 << 9,  /* --explain: why each miss missed */
	DCP_OPTS_SIZES = 1 << 10,   /* -h --human-readable --si: byte counts in text */
	DCP_OPTS_MANIFEST = 1 << 11, /* --manifest: the paths of a residency manifest
				      * (dcp_manifest.h) instead of PATHs, lists and -r */
};

/*
 * The fewest descriptors (RLIMIT_NOFILE, ulimit -n) each command runs
 * with, whatever its options, when only standard input, output and error
 * are open: measured (tests/cmd/test_limits.sh), written in each man page.
 * Below it a run does not start: it says so and exits 2.  Descriptors a
 * process was given beyond the standard three count against the limit
 * (dcp_fd_free()).
 */
enum {
	DCP_FLOOR_CACHEDOPEN = 10,
	DCP_FLOOR_DCACHE_PROBE = 9,
	DCP_FLOOR_WARM = 10,
	DCP_FLOOR_URING_OPEN = 7,
	/* dcache-probe --record, one filesystem watched (each more holds one
	 * more); with --pid or --cgroup, whose event reads take a pidfd each
	 * (lib/cmdrt/record_run.c, dcp_record_fds_needed()); with --start, which
	 * also keeps the command's standard output and the socket that holds
	 * the command until the marks exist. */
	DCP_FLOOR_RECORD = 12,
	DCP_FLOOR_RECORD_PROCS = 21,
	DCP_FLOOR_RECORD_START = 23,
};

/* Help groups, so that a command's own options sit under the same headers. */
enum {
	DCP_OPTS_GROUP_INPUT = 1,  /* what to look at */
	DCP_OPTS_GROUP_REPORT = 2, /* what to report */
	DCP_OPTS_GROUP_FORMAT = 3, /* how */
};

/* -H, -L, -P */
enum dcp_follow { DCP_FOLLOW_NONE, DCP_FOLLOW_ROOTS, DCP_FOLLOW_ALL };

/* A list of paths to read: --from (lines) or --files0-from (NUL). */
struct dcp_input {
	const char *file; /* "-": standard input */
	bool nul;
};

/* A --label=NAME=VALUE. */
struct dcp_label {
	char *name;
	const char *value;
};

struct dcp_opts {
	unsigned set;		/* DCP_OPTS_* given to dcp_opts_argp() */
	const char *command;	/* its name in metrics */
	bool recursive, xdev, quiet, json, prometheus, nul, summary, total, verbose;
	bool explain;
	int progress;		/* -1 never, 0 when it cannot mix (default), 1 always */
	bool no_headings;	/* --no-headings */
	enum dcp_units units;	/* byte counts in text: -h --human-readable, --si */
	enum dcp_follow follow;
	int max_depth;		/* -1: no limit */
	unsigned jobs;		/* 0: the command's default */
	const char **excludes;	/* --exclude: NULL-terminated, or NULL */
	size_t nexcludes;
	/* --type, --name, --mindepth, --exclude-fstype (default: the pseudo
	 * filesystems, dcprobe(7)): its lists live until exit */
	struct dcp_filter filter;
	bool fstypes_given;	/* --exclude-fstype was used */
	struct dcp_input *inputs;
	size_t ninputs;
	char **paths;		/* the PATH arguments */
	int npaths;
	const char *output;	/* --output=FILE, or NULL: standard output */
	const char *manifest;	/* --manifest=FILE, or NULL */
	struct dcp_label *labels; /* --label, in order */
	size_t nlabels;
};

/*
 * dcp_opts_argp - the argp of the shared options in SET of COMMAND (its
 * name in metrics: a static string), filling O (which must outlive the
 * process: the exit handler reads it).  FOLLOW is the default of
 * -L/-P/-H.  Add it to the command's argp as a child with header NULL and
 * group 0, so that its options merge into the command's DCP_OPTS_GROUP_*
 * headers.  The command's own ARGP_KEY_END checks may read O: shared
 * options are set by then.
 */
const struct argp *dcp_opts_argp(struct dcp_opts *o, const char *command, unsigned set,
				 enum dcp_follow follow);

/*
 * dcp_opts_finish - the end of a run that wrote all its output, with exit
 * STATUS: under --output, rename the file into place (or, when a write
 * failed, remove it and say that FILE was left as it was).  Returns STATUS,
 * or DCP_EXIT_ERROR when the file could not be published.
 */
int dcp_opts_finish(const struct dcp_opts *o, int status);

/*
 * dcp_opts_prom_new - the metrics of the run: dcp_prom_new() of the command
 * with the --label labels.  NULL when out of memory.
 */
struct dcp_prom *dcp_opts_prom_new(const struct dcp_opts *o);

/*
 * dcp_opts_number - the value of option OPT (its name, "--depth"), a whole
 * number from MIN to MAX, or a usage error in the words every command uses.
 */
int dcp_opts_number(struct argp_state *state, const char *opt, const char *arg, uint64_t min,
		    uint64_t max);

/* dcp_opts_percent - the value of OPT, a percentage, or a usage error. */
double dcp_opts_percent(struct argp_state *state, const char *opt, const char *arg);

/*
 * dcp_opts_each_path - hand every path to ADD, in order: the PATH
 * arguments, then each list.  A list that cannot be read or a bad record
 * (empty, a NUL byte in a line, longer than PATH_MAX) is an input error:
 * said on stderr (even under -q) in the same words in every command,
 * counted in *ERRORS, and skipped; under --json also kept as an
 * "input_error" record for dcp_opts_input_records().  A list that holds no
 * path is no error: there is nothing to do.  Stops when ADD returns < 0
 * and returns that; else 0.
 */
int dcp_opts_each_path(const struct dcp_opts *o, int (*add)(const char *path, void *ctx),
		       void *ctx, unsigned long long *errors);

/*
 * dcp_opts_manifest_notice - a manifest FILE of FORMAT 1 (written before
 * format 2): said once on stderr (not an error), and under --json kept as
 * a "notice" record beside the input errors.  Nothing for format 2.
 */
void dcp_opts_manifest_notice(const struct dcp_opts *o, const char *file, int format);

/*
 * dcp_opts_input_error - one input error of list FILE, in the words of
 * dcp_opts_each_path(): RECORD (from 1; 0: the whole list), and ERR (a
 * positive errno, said with strerror) or WHAT (a sentence).  Counted in
 * *ERRORS, said on stderr, kept as a record under --json.
 */
void dcp_opts_input_error(const struct dcp_opts *o, unsigned long long *errors, const char *file,
			  size_t record, int err, const char *what);

/*
 * dcp_opts_input_records - append to OUT the "input_error" records kept
 * by dcp_opts_each_path() under --json (before the summary), and forget them.
 */
void dcp_opts_input_records(struct dcp_buf *out);

/*
 * dcp_opts_can_probe - whether this kernel has what the run needs:
 * openat2 RESOLVE_CACHED when PROBES, page-cache residency when PAGES.
 * Returns DCP_EXIT_OK, or says why not (in the same words in every
 * command) and returns DCP_EXIT_UNSUPPORTED.
 */
int dcp_opts_can_probe(bool probes, bool pages);

/*
 * dcp_opts_format - the format of the command's records: JSON, or with -0
 * NUL-ended raw paths (quoted, still NUL-ended, when standard output is a
 * terminal: -0 is for a program), else quoted lines.
 */
enum dcp_pr_format dcp_opts_format(const struct dcp_opts *o);

/*
 * dcp_opts_manifest_fopen - the stream of --manifest=FILE ("-": standard
 * input), or NULL with errno; dcp_opts_manifest_fclose() closes it (not
 * standard input).
 */
FILE *dcp_opts_manifest_fopen(const struct dcp_opts *o);
void dcp_opts_manifest_fclose(const struct dcp_opts *o, FILE *f);

/*
 * dcp_opts_manifest_read - dcp_manifest_read() of --manifest=FILE, "-"
 * being standard input.
 */
int dcp_opts_manifest_read(const struct dcp_opts *o, struct dcp_manifest *m,
			   void (*bad)(size_t record, const char *what, void *arg), void *arg);

/*
 * dcp_opts_headings - whether a table gets a heading line: text output to a
 * terminal (not -0, --json, --prometheus, --output or -q), and not
 * --no-headings.  A program reading the table sees no heading.
 */
bool dcp_opts_headings(const struct dcp_opts *o);

/*
 * dcp_opts_progress - whether to draw a progress line on stderr: --progress
 * always, --no-progress or -q never; else only when it cannot mix with
 * output: stderr is a terminal and stdout is neither a pipe (its reader may
 * write to that terminal) nor a terminal that STREAMS lines.
 */
bool dcp_opts_progress(const struct dcp_opts *o, bool streams);

#ifdef __cplusplus
}
#endif

#endif
