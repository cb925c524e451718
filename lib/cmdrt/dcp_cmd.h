/* SPDX-License-Identifier: MIT */
/*
 * dcp_cmd.h - the commands' runtime: what the four commands (one file
 * each in cmd/) share beside libdcprobe, and include.
 *
 * lib/ is libdcprobe, the public library (dcprobe.h): it never prints,
 * never exits, installs no signal handler and keeps its state in objects
 * its caller makes.  lib/cmdrt/ is not that library: it is the commands'
 * own code, linked into them as a static library (libdcprobe-cmdrt.a),
 * never installed and never exported.  It may print, exit, install
 * handlers, and keep process-wide state where the process has one thing
 * (one command line, one standard output, one standard error):
 *
 *   opts.c       the shared options: one argp table, the grammar's checks,
 *                the exit handler that publishes --output and --prometheus
 *   msg.c        every diagnostic on standard error, each written whole;
 *                dcp_die()
 *   output.c     standard output, and --output=FILE (a temporary file
 *                renamed into place)
 *   pathlist.c   --from and --files0-from ("-": standard input)
 *   progress.c   the progress timer thread, and its line
 *   latency.c    min/median/p99/max of uring-open's timings
 *   trace.c      io_uring tracepoints through a tracefs instance named
 *                after the process (uring-open --trace)
 *   probe_run.c  dcache-probe's run: each entry's journey
 *   warm_run.c   warm's run, over the stat priming engine (dcp_warm.h)
 *   uring_run.c  uring-open's run
 *   record_run.c dcache-probe --record's run: the loop around a recording
 *                (dcp_record.h), its messages, its entries to probe_run.c
 *   notify.c     READY=1 and STATUS= to the service manager (sd_notify)
 *   diagnose.c   dcache-probe --diagnose: the kernel mechanisms, asked
 *
 * A command file is its own options and one call: dcp_probe_run(),
 * dcp_warm_run(), dcp_uring_run(), or (cachedopen) its loop over the paths.
 */
#ifndef DCP_CMD_H
#define DCP_CMD_H

#include "dcprobe.h"

#include "dcp_opts.h"	   /* the options the commands share */
#include "dcp_msg.h"	   /* every diagnostic on stderr, whole */
#include "dcp_output.h"	   /* standard output, and --output=FILE */
#include "dcp_pathlist.h"  /* paths from a file or stdin */
#include "dcp_progress.h"  /* timer and line for progress */
#include "dcp_latency.h"   /* min/median/p99/max */
#include "dcp_trace.h"	   /* io_uring tracepoints from tracefs */
#include "dcp_probe_run.h" /* a dcache-probe run: each entry's journey */
#include "dcp_warm_run.h"  /* a warm run */
#include "dcp_uring_run.h" /* a uring-open run */
#include "dcp_diagnose.h"  /* dcache-probe --diagnose */

#endif
