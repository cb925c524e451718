/* SPDX-License-Identifier: MIT */
/*
 * dcp_tables.h - the data (--pages) columns of the commands' tables, and
 * the one rule for a figure counted in pages under -h and --si.
 *
 * A figure the kernel counts in pages (resident, total) is written in text
 * as that count by default, and under -h (--human-readable) or --si as the
 * bytes it stands for, as du -h and fincore's RES and SIZE columns write
 * them: every size column of a text table follows -h, not only those that
 * were bytes to begin with.  JSON and Prometheus always carry exact counts
 * and bytes.  dcache-probe and warm render through these functions only.
 */
#ifndef DCP_TABLES_H
#define DCP_TABLES_H

#include <stdint.h>

#include "dcp_explain.h"
#include "dcp_pages.h"
#include "dcp_probe_report.h"
#include "dcp_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * dcp_tbl_pages - a size the kernel counts in PAGES: with UNITS
 * DCP_UNITS_BYTES the count of pages, otherwise BYTES (what the pages hold,
 * never past a file's end when the caller knows it, else PAGES times the
 * page size: pass dcp_tbl_page_bytes()) as dcp_buf_bytes() writes it.
 */
void dcp_tbl_pages(struct dcp_buf *b, uint64_t pages, uint64_t bytes, enum dcp_units units);

/* dcp_tbl_page_bytes - N pages in bytes (N times the page size). */
uint64_t dcp_tbl_page_bytes(uint64_t n);

/*
 * dcp_tbl_heading - the line naming the columns of table T: "CACHED%
 * CACHED/PROBED" [FSTYPE] [MISSES] [DATA% RESIDENT/PAGES, under -h or --si
 * RESIDENT/SIZE] PATH or MOUNTPOINT, tab-separated.
 */
void dcp_tbl_heading(struct dcp_buf *b, enum dcp_pr_table t, bool why, bool pages,
		     enum dcp_units units);

/*
 * dcp_tbl_why_row - give the table row that starts at FROM of B, written
 * in FMT and ending in PATH (LEN bytes, as dcp_tbl_pages_row()), the
 * MISSES column of WHY (dcp_why_column()) before that path; in JSON the
 * "reasons" member (dcp_why_table_row()).  The same column in text and -0
 * rows.
 */
void dcp_tbl_why_row(struct dcp_buf *b, size_t from, enum dcp_pr_format fmt,
		     const char *path, size_t len, const unsigned long long why[DCP_NWHY]);

/*
 * dcp_tbl_pages_row - give the table row that starts at FROM of B, written
 * in FMT and ending in PATH (LEN bytes; dcp_pr_path() of it, NUL-terminated
 * with -0), the data columns of C before that path: "PCT%\tRESIDENT/PAGES"
 * (RESIDENT/SIZE in bytes under -h or --si), "+N?" when N files were not
 * measured, then a tab; in JSON the members of dcp_pages_json_counts().
 * The same columns in text and -0 rows.
 */
void dcp_tbl_pages_row(struct dcp_buf *b, size_t from, enum dcp_pr_format fmt,
		       const char *path, size_t len, const struct dcp_pages_counts *c,
		       enum dcp_units units);

#ifdef __cplusplus
}
#endif

#endif
