/* SPDX-License-Identifier: MIT */
/*
 * dcp_report.h - building output safely: a growable byte buffer, terminal-
 * safe quoting of names, JSON strings (with the {"bytes": base64} form for
 * names that are not UTF-8), and Prometheus label escaping.
 *
 * The library never writes to a stream itself; commands fill a dcp_buf and
 * write it, so that output stays whole-line and errors are theirs to report.
 */
#ifndef DCP_REPORT_H
#define DCP_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom; /* an allocation failed: contents are truncated */
};

#define DCP_BUF_INIT { NULL, 0, 0, false }

/* dcp_buf_free - release the buffer's memory and reset it to empty. */
void dcp_buf_free(struct dcp_buf *b);

/* dcp_buf_reset - empty the buffer, keeping its memory. */
static inline void dcp_buf_reset(struct dcp_buf *b) { b->len = 0; }

/*
 * Append raw bytes / a C string / one char / printf-formatted text.
 * On allocation failure the buffer sets ->oom and drops the data; callers
 * check ->oom once, when they flush.
 */
void dcp_buf_add(struct dcp_buf *b, const void *p, size_t n);
void dcp_buf_puts(struct dcp_buf *b, const char *s);
void dcp_buf_putc(struct dcp_buf *b, char c);
void dcp_buf_printf(struct dcp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dcp_buf_vprintf(struct dcp_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * dcp_buf_write - write the whole buffer to FD (retrying short writes and
 * EINTR) and empty it.  Returns 0 or -errno (-EPIPE, -ENOSPC...).
 */
int dcp_buf_write(struct dcp_buf *b, int fd);

/* dcp_utf8_valid - true when the N bytes at S are well-formed UTF-8. */
bool dcp_utf8_valid(const char *s, size_t n);

/*
 * dcp_buf_quote - append name S (N bytes) so that a terminal shows it
 * without interpreting anything: C0 controls and DEL become \n \t \r \e
 * or \xHH, bytes that are not UTF-8 \xHH (HH 80 to ff), C1 controls and
 * bidi controls \uXXXX, a backslash \\.  Printable UTF-8 is copied as it
 * is.  So \xHH is always one byte and \uXXXX one character (its UTF-8
 * bytes): two names never quote the same (0x9b is \x9b, U+009B \u009b).
 */
void dcp_buf_quote(struct dcp_buf *b, const char *s, size_t n);

/*
 * dcp_buf_quote_msg - append name S (N bytes) for a message, as GNU tools
 * quote: between single quotes, escaped as dcp_buf_quote() does, a quote
 * inside as \'  ('/srv/a b', 'it\'s').
 */
void dcp_buf_quote_msg(struct dcp_buf *b, const char *s, size_t n);

/*
 * dcp_quoted - S quoted as dcp_buf_quote_msg() does, NUL-terminated, in B
 * (reset first): for messages that name a path or echo an argument.
 * Returns B's text, or a placeholder if memory ran out.
 */
const char *dcp_quoted(struct dcp_buf *b, const char *s);

/*
 * dcp_rows - records held back to be written in a fixed order, whatever
 * order the walker's threads produced them in: the --per-dir rows, and
 * every per-path line under --sort.  Each record has a key: the index of
 * its root (roots in the order given), its path, and a rank that orders
 * records of the same path (an entry before what is said of its listing).
 * Memory: every record held, until dcp_rows_write().
 */
struct dcp_row {
	size_t root;
	size_t at, keylen, reclen; /* key, then record, at AT in the arena */
	int rank;
};

struct dcp_rows {
	struct dcp_row *v;
	size_t n, cap;
	struct dcp_buf arena;
	bool oom;
};

enum dcp_rows_order {
	DCP_ROWS_PREORDER,  /* a directory before what it holds (find -s, bfs -s) */
	DCP_ROWS_POSTORDER, /* what a directory holds before it (du) */
};

/*
 * dcp_rows_add - hold the record REC (RECLEN bytes) under the key ROOT,
 * PATH (LEN bytes), RANK.  Out of memory, R->oom is set and the record lost.
 */
void dcp_rows_add(struct dcp_rows *r, size_t root, const char *path, size_t len, int rank,
		  const char *rec, size_t reclen);

/*
 * dcp_rows_cut - dcp_rows_add() of the bytes of B from AT on (the record
 * just written there), which leave B.
 */
void dcp_rows_cut(struct dcp_rows *r, struct dcp_buf *b, size_t at, size_t root,
		  const char *path, size_t len, int rank);

/* dcp_rows_merge - move every record of FROM into INTO (FROM is emptied). */
void dcp_rows_merge(struct dcp_rows *into, struct dcp_rows *from);

/*
 * dcp_rows_write - append the records to OUT by root, then by path in
 * ORDER (siblings by the bytes of their names), then by rank; empty R.
 */
void dcp_rows_write(struct dcp_rows *r, enum dcp_rows_order order, struct dcp_buf *out);

/*
 * dcp_path_cmp - compare paths A and B (AN, BN bytes) by their components,
 * siblings by the bytes of their names ('/' before every byte), an ancestor
 * before or after what it holds as ORDER says: < 0, 0 or > 0.
 */
int dcp_path_cmp(const char *a, size_t an, const char *b, size_t bn, enum dcp_rows_order order);

/* dcp_rows_free - forget every record and free R's memory. */
void dcp_rows_free(struct dcp_rows *r);

/* How byte counts read in text output (JSON and metrics keep bytes). */
enum dcp_units {
	DCP_UNITS_BYTES, /* 1610612736 (the default) */
	DCP_UNITS_IEC,	 /* 1.5G: powers of 1024 (--human-readable) */
	DCP_UNITS_SI,	 /* 1.7G: powers of 1000 (--si) */
};

/*
 * dcp_buf_bytes - append byte count N in UNITS: digits, or as du -h and
 * du --si print it (rounded up; one decimal below 10; "k" for 1000, "K"
 * for 1024).
 */
void dcp_buf_bytes(struct dcp_buf *b, uint64_t n, enum dcp_units units);

/* dcp_needs_quote - true when dcp_buf_quote() would change S. */
bool dcp_needs_quote(const char *s, size_t n);

/*
 * dcp_buf_json_str - append a JSON value for a name: a JSON string when S is
 * valid UTF-8 (with \" \\ \n \uXXXX escapes), otherwise the object
 * {"bytes":"<base64 of the raw bytes>"} so no byte is lost.
 */
void dcp_buf_json_str(struct dcp_buf *b, const char *s, size_t n);

/* dcp_buf_base64 - append the standard base64 (RFC 4648, padded) of S. */
void dcp_buf_base64(struct dcp_buf *b, const void *s, size_t n);

/*
 * dcp_buf_prom_label - append S escaped as a Prometheus label value
 * (\\, \", \n); bytes that are not UTF-8, C0 controls and DEL become
 * the text \xHH, other control characters (C1, bidi) the text \uXXXX, and
 * a backslash the text \\, so that two names never give the same label
 * value.
 */
void dcp_buf_prom_label(struct dcp_buf *b, const char *s, size_t n);

/*
 * dcp_buf_count - append "1 path", "2 paths": N and the noun, singular or
 * plural, as every message of the suite counts things.
 */
void dcp_buf_count(struct dcp_buf *b, unsigned long long n, const char *one, const char *many);

#ifdef __cplusplus
}
#endif

#endif
