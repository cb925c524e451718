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
 */
#ifndef DCPROBE_H
#define DCPROBE_H

#include "dcp_probe.h"
#include "dcp_uring.h"
#include "dcp_trace.h"
#include "dcp_latency.h"
#include "dcp_util.h"
#include "dcp_report.h"
#include "dcp_pathlist.h"
#include "dcp_walk.h"
#include "dcp_progress.h"
#include "dcp_batch.h"
#include "dcp_warm.h"

#endif
