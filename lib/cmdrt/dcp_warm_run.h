/* SPDX-License-Identifier: MIT */
/*
 * dcp_warm_run.h - one warm run, the command's whole work: the paths of
 * the shared options through the stat priming engine (dcp_warm.h), and
 * the lines, tables, summary and metrics the options ask for.  Part of the
 * commands' runtime: it prints, and may exit.
 */
#ifndef DCP_WARM_RUN_H
#define DCP_WARM_RUN_H

#include "dcp_opts.h"
#include "dcp_pages.h"
#include "dcp_warm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* warm's own choices; the shared ones are in struct dcp_opts. */
struct dcp_warm_run_config {
	unsigned flags;		       /* DCP_WARM_CHECK, DCP_WARM_PAGES */
	struct dcp_pages_budget pages; /* --pages: limits, method, counts */
};

/*
 * dcp_warm_run - warm every path of O (arguments, then lists), walking
 * trees under -r, and write the lines, the -s/-c table, the summary and the
 * metrics that O asks for.  Returns the exit status (DCP_EXIT_*), the
 * output published (dcp_opts_finish()).  One run per process.
 */
int dcp_warm_run(const struct dcp_opts *o, const struct dcp_warm_run_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
