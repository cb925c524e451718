/* SPDX-License-Identifier: MIT */
/*
 * dcp_record_run.h - dcache-probe --record: watch what processes open under
 * some roots, then write it as a residency manifest.
 *
 * The commands' runtime.  A run: the options checked and FILE made (by
 * the shared options), the processes to keep (dcp_procs.h) and the
 * recording (dcp_record.h) set up, READY=1 to the service manager, the
 * loop (the recording's events, its fork events, SIGINT/SIGTERM, the
 * --for timer; events read 5 ms after they wake it, so that a burst is
 * read in few calls), the stop, and the entries handed to the snapshot's
 * writer (dcp_probe_run() with dcp_probe_given): a recording is a
 * manifest like a snapshot's, with one "recording" record before the
 * summary.
 *
 * With --start, the command is forked before anything is set up, held
 * (blocked reading a pipe) until the marks exist, attributed by its pid as
 * --pid is, then released to exec /bin/sh -c COMMAND; its exit ends the
 * loop (it is reaped once its events are read), and a command that failed
 * makes the exit status 2.  SIGINT or SIGTERM sent to the recorder (not a
 * terminal's, which reaches both) is passed on to it; at --for it is left
 * running.
 */
#ifndef DCP_RECORD_RUN_H
#define DCP_RECORD_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dcp_opts.h"
#include "dcp_probe_run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What --record and its options asked for. */
struct dcp_record_run_config {
	const char *file;	/* --record=FILE ("-": standard output) */
	uint64_t for_ns;	/* --for; 0: until SIGINT or SIGTERM */
	pid_t pid;		/* --pid; 0: not given */
	const char *cgroup;	/* --cgroup, as given; NULL: not given */
	const char *start;	/* --start: a command for /bin/sh -c; NULL: not given */
	int start_stdout;	/* --start: the standard output given, kept before FILE
				 * took its place (close-on-exec); -1: none was open */
	bool listed;		/* --listed */
};

/*
 * dcp_record_run - record what the processes asked for open under the
 * PATH arguments of O (the roots), until --for runs out or SIGINT or
 * SIGTERM comes, then write the manifest as CFG asks (--ranges is implied)
 * to standard output (or FILE, made by the shared options).  A second
 * SIGINT or SIGTERM while it is written stops the run: nothing is
 * published, exit 2.  Returns the exit status (dcache-probe(1)).
 */
int dcp_record_run(const struct dcp_opts *o, const struct dcp_probe_run_config *cfg,
		   const struct dcp_record_run_config *rc);

#ifdef __cplusplus
}
#endif

#endif
