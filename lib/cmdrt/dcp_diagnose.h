/* SPDX-License-Identifier: MIT */
/*
 * dcp_diagnose.h - dcache-probe --diagnose: each kernel mechanism dcprobe
 * uses, asked of the running kernel (dcp_kfeat.h), one line or one JSON
 * record each, then a summary.
 */
#ifndef DCP_DIAGNOSE_H
#define DCP_DIAGNOSE_H

#include "dcp_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * dcp_diagnose_run - print every mechanism (text, or --json records of
 * "type":"mechanism" then a "type":"summary"; nothing with -q) and return
 * the exit status: 0 when openat2(2) RESOLVE_CACHED is there, 3 when it
 * is not (this system cannot probe), 2 when a question could not be asked
 * or the output could not be written.
 */
int dcp_diagnose_run(const struct dcp_opts *o);

#ifdef __cplusplus
}
#endif

#endif
