/* SPDX-License-Identifier: MIT */
/*
 * tables.c - the data (--pages) columns of the commands' tables and the
 * rendering of page counts under -h (see dcp_tables.h).
 */
#include <string.h>
#include <unistd.h>

#include "dcp_tables.h"

uint64_t dcp_tbl_page_bytes(uint64_t n)
{
	long ps = sysconf(_SC_PAGESIZE);

	return n * (uint64_t)(ps > 0 ? ps : 4096);
}

void dcp_tbl_pages(struct dcp_buf *b, uint64_t pages, uint64_t bytes, enum dcp_units units)
{
	if (units == DCP_UNITS_BYTES)
		dcp_buf_printf(b, "%llu", (unsigned long long)pages);
	else
		dcp_buf_bytes(b, bytes, units);
}

void dcp_tbl_heading(struct dcp_buf *b, enum dcp_pr_table t, bool why, bool pages,
		     enum dcp_units units)
{
	dcp_buf_puts(b, "CACHED%\tCACHED/PROBED\t");
	if (t == DCP_PR_TABLE_MOUNT)
		dcp_buf_puts(b, "FSTYPE\t");
	if (why)
		dcp_buf_puts(b, "MISSES\t");
	if (pages)
		dcp_buf_puts(b, units == DCP_UNITS_BYTES ? "DATA%\tRESIDENT/PAGES\t" :
			     "DATA%\tRESIDENT/SIZE\t");
	dcp_buf_puts(b, t == DCP_PR_TABLE_MOUNT ? "MOUNTPOINT\n" : "PATH\n");
}

/* The share with one decimal, never shown as 100.0 (or 0.0) unless it is. */
static double pct1(const struct dcp_pages_counts *c)
{
	double p = dcp_pages_resident_pct(c);

	if (p < 100.0 && p > 99.95)
		return 99.9;
	if (p > 0.0 && p < 0.05)
		return 0.1;
	return p;
}

/*
 * Put the columns COLS into the text row that starts at FROM of B, before
 * its path: the row ends in PATH as dcp_pr_path() writes it (escaped or
 * raw, '\n' or '\0'), so the columns go before it whatever bytes the path
 * holds.  A row that does not end so is left alone.
 */
static void before_path(struct dcp_buf *b, size_t from, enum dcp_pr_format fmt,
			const char *path, size_t len, const struct dcp_buf *cols)
{
	struct dcp_buf p = DCP_BUF_INIT;

	dcp_pr_path(&p, fmt, path, len);
	if (!b->oom && !p.oom && !cols->oom && b->len >= from + p.len &&
	    memcmp(b->data + b->len - p.len, p.data, p.len) == 0) {
		b->len -= p.len;
		dcp_buf_add(b, cols->data ? cols->data : "", cols->len);
		dcp_buf_add(b, p.data, p.len);
	}
	dcp_buf_free(&p);
}

void dcp_tbl_pages_row(struct dcp_buf *b, size_t from, enum dcp_pr_format fmt,
		       const char *path, size_t len, const struct dcp_pages_counts *c,
		       enum dcp_units units)
{
	struct dcp_buf m = DCP_BUF_INIT;

	if (fmt == DCP_PR_JSON) {
		dcp_pages_table_row(b, from, true, c);
		return;
	}
	/* The share of the pages measured; files not measured (their lookup
	 * missed...) are "+N?" after the figures, as directories not visited
	 * are in the paths' columns: their pages are in no figure. */
	if (!c->pages)
		dcp_buf_puts(&m, "-\t"); /* no page measured below: no share */
	else
		dcp_buf_printf(&m, "%5.1f%%\t", pct1(c));
	dcp_tbl_pages(&m, c->resident, c->resident_bytes, units);
	dcp_buf_putc(&m, '/');
	dcp_tbl_pages(&m, c->pages, c->size, units);
	if (c->unknown)
		dcp_buf_printf(&m, "+%llu?", (unsigned long long)c->unknown);
	dcp_buf_putc(&m, '\t');
	before_path(b, from, fmt, path, len, &m);
	dcp_buf_free(&m);
}

void dcp_tbl_why_row(struct dcp_buf *b, size_t from, enum dcp_pr_format fmt,
		     const char *path, size_t len, const unsigned long long why[DCP_NWHY])
{
	struct dcp_buf m = DCP_BUF_INIT;

	if (fmt == DCP_PR_JSON) {
		dcp_why_table_row(b, from, true, why);
		return;
	}
	dcp_why_column(&m, why);
	before_path(b, from, fmt, path, len, &m);
	dcp_buf_free(&m);
}
