/* SPDX-License-Identifier: MIT */
/*
 * dcprobe.h - the public interface of libdcprobe.
 *
 * libdcprobe answers one question: would resolving a path block on I/O, or
 * is it served from the kernel's dentry cache?  And for a file's data:
 * how much of it is in the page cache?
 *
 * Conventions (liburing style):
 *  - every public symbol starts with dcp_ / DCP_;
 *  - functions that can fail return a negative errno value (-ENOENT...),
 *    never set errno for the caller;
 *  - results that are more than a number come back in a struct, or
 *    through a callback.
 *
 * The promise: the library never prints, never exits, installs no signal
 * handler, changes no thread's signal mask and reads no environment
 * variable; the threads it starts run with every asynchronous signal
 * blocked, so a program's handlers run on the program's own threads
 * (SIGPIPE and the fault signals, sent to the thread that caused them,
 * act by the process's disposition).  The commands of the suite
 * are built on it; their options, messages, output files, progress lines
 * and run engines are the commands' own code (lib/cmdrt/ in the sources),
 * neither installed nor exported.
 *
 * This header only gathers the module headers, so that a program can
 * include one file; each module header documents its own entry points.
 * Read them in this order, which is the way an entry goes through a run:
 * dcp_probe.h (one probe: the states), dcp_walk.h (the walker, which
 * probes every entry before touching it) and dcp_filter.h (which entries
 * count), dcp_explain.h (why a miss missed), dcp_pages.h (a cached file's
 * data), dcp_tally.h (the tables per root, directory and mount), then the
 * writers (dcp_probe_report.h, and dcp_report.h and dcp_prom.h under
 * them) and warm's engine (dcp_warm.h).
 */
#ifndef DCPROBE_H
#define DCPROBE_H

#include "dcp_probe.h"	      /* one path: states, probes, exit statuses */
#include "dcp_batch.h"	      /* many names of one directory, via io_uring */
#include "dcp_walk.h"	      /* the parallel tree walker */
#include "dcp_filter.h"	      /* which entries count, which mounts are entered */
#include "dcp_tally.h"	      /* tables: per root, per directory, per mount */
#include "dcp_warm.h"	      /* the stat priming engine behind warm */
#include "dcp_pages.h"	      /* page-cache residency of file data */
#include "dcp_manifest.h"     /* residency manifests: read, restore */
#include "dcp_mounts.h"	      /* mount and filesystem class of a path */
#include "dcp_procs.h"	      /* who did it: a process tree, a cgroup */
#include "dcp_record.h"	      /* what processes opened under some roots */
#include "dcp_fsid.h"	      /* what tells a file after a reboot */
#include "dcp_kfeat.h"	      /* the kernel mechanisms, asked */
#include "dcp_explain.h"      /* why a path is cold (--explain) */
#include "dcp_uring.h"	      /* one io_uring open: inline or punted */
#include "dcp_report.h"	      /* buffers, quoting, JSON, Prometheus labels */
#include "dcp_prom.h"	      /* the Prometheus exposition of every command */
#include "dcp_probe_report.h" /* dcache-probe's records and tables */
#include "dcp_util.h"	      /* strict parsing, errno names, clocks */

#endif
