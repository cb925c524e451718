/* SPDX-License-Identifier: MIT */
/*
 * dcprobe.h - the public interface of libdcprobe.
 *
 * libdcprobe answers one question: would resolving a path block on I/O, or
 * is it served from the kernel's dentry cache?  Every command of the suite
 * links it; the commands only parse options and print.
 *
 * Conventions (liburing style):
 *  - every public symbol starts with dcp_ / DCP_;
 *  - functions that can fail return a negative errno value (-ENOENT...),
 *    never set errno for the caller and never print or exit;
 *  - results that are more than a number come back in a struct.
 *
 * This header only gathers the module headers, so that a program can
 * include one file; each module header documents its own entry points.
 * Read them in this order, which is the way an entry goes through a run:
 * dcp_probe.h (one probe: the states), dcp_walk.h (the walker, which
 * probes every entry before touching it), dcp_probe_run.h (a dcache-probe
 * run: an entry's journey from its probe through --explain, --pages and
 * its tallies to its record), then the writers (dcp_probe_report.h, and
 * dcp_report.h and dcp_prom.h under them) and warm's engine (dcp_warm.h).
 */
#ifndef DCPROBE_H
#define DCPROBE_H

#include "dcp_probe.h"	      /* one path: states, probes, exit statuses */
#include "dcp_batch.h"	      /* many names of one directory, via io_uring */
#include "dcp_walk.h"	      /* the parallel tree walker */
#include "dcp_filter.h"	      /* which entries count, which mounts are entered */
#include "dcp_probe_run.h"    /* a dcache-probe run: each entry's journey */
#include "dcp_tally.h"	      /* its tables: per root, per directory */
#include "dcp_warm.h"	      /* the stat priming engine behind warm */
#include "dcp_pages.h"	      /* page-cache residency of file data */
#include "dcp_manifest.h"     /* residency manifests: read, restore */
#include "dcp_mounts.h"	      /* mount and filesystem class of a path */
#include "dcp_explain.h"	      /* why a path is cold (--explain) */
#include "dcp_uring.h"	      /* one io_uring open: inline or punted */
#include "dcp_uring_run.h"    /* a uring-open run */
#include "dcp_trace.h"	      /* io_uring tracepoints from tracefs */
#include "dcp_report.h"	      /* buffers, quoting, JSON, Prometheus labels */
#include "dcp_prom.h"	      /* the Prometheus exposition of every command */
#include "dcp_probe_report.h" /* dcache-probe's output formats */
#include "dcp_latency.h"      /* min/median/p99/max */
#include "dcp_pathlist.h"     /* paths from a file or stdin */
#include "dcp_progress.h"     /* timer for progress lines */
#include "dcp_msg.h"	      /* every diagnostic on stderr, whole */
#include "dcp_util.h"	      /* strict parsing, errno names, clocks */
#include "dcp_opts.h"	      /* the options the commands share */
#include "dcp_output.h"      /* standard output, and --output=FILE */

#endif
