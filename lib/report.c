// SPDX-License-Identifier: MIT
/* report.c - output buffers, terminal-safe quoting, JSON and label escaping. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcp_report.h"

void dcp_buf_free(struct dcp_buf *b)
{
	free(b->data);
	*b = (struct dcp_buf)DCP_BUF_INIT;
}

static bool buf_reserve(struct dcp_buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (b->oom)
		return false;
	if (extra <= b->cap - b->len)
		return true;
	want = b->len + extra;
	if (want < b->len) {
		b->oom = true;
		return false;
	}
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap * 2 > cap ? cap * 2 : want;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void dcp_buf_add(struct dcp_buf *b, const void *p, size_t n)
{
	if (!n || !buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void dcp_buf_puts(struct dcp_buf *b, const char *s)
{
	dcp_buf_add(b, s, strlen(s));
}

void dcp_buf_putc(struct dcp_buf *b, char c)
{
	if (buf_reserve(b, 1))
		b->data[b->len++] = c;
}

void dcp_buf_vprintf(struct dcp_buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || !buf_reserve(b, (size_t)n + 1))
		return;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void dcp_buf_printf(struct dcp_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dcp_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

int dcp_buf_write(struct dcp_buf *b, int fd)
{
	size_t off = 0;

	while (off < b->len) {
		ssize_t w = write(fd, b->data + off, b->len - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
	}
	b->len = 0;
	return b->oom ? -ENOMEM : 0;
}

/*
 * Length of the well-formed UTF-8 sequence at S (at most N bytes), and its
 * code point in *CP; 0 when the bytes are not UTF-8 (overlong forms,
 * surrogates and values past U+10FFFF included).
 */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2, c &= 0x1f, min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3, c &= 0x0f, min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

bool dcp_utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp = 0;

	for (size_t i = 0; i < n;) {
		if (u[i] < 0x80) {
			i++;
			continue;
		}
		size_t len = utf8_seq(u + i, n - i, &cp);
		if (!len)
			return false;
		i += len;
	}
	return true;
}

/*
 * Code points a terminal must not receive raw: C0, DEL, C1 (which include
 * CSI and OSC introducers), and the bidirectional overrides and isolates
 * that reorder what is shown.
 */
static bool cp_unsafe(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f;
}

static const char hexdig[] = "0123456789abcdef";

static void put_hex_byte(struct dcp_buf *b, unsigned char c)
{
	char e[4] = { '\\', 'x', hexdig[c >> 4], hexdig[c & 15] };

	dcp_buf_add(b, e, 4);
}

bool dcp_needs_quote(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp = 0;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(u + i, n - i, &cp);

		if (!len || cp_unsafe(cp) || cp == '\\')
			return true;
		i += len;
	}
	return false;
}

void dcp_buf_quote(struct dcp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t run = 0; /* start of the current run of bytes copied as is */
	uint32_t cp = 0;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(u + i, n - i, &cp);

		if (len && !cp_unsafe(cp) && cp != '\\') {
			i += len;
			continue;
		}
		dcp_buf_add(b, s + run, i - run);
		if (!len) {
			put_hex_byte(b, u[i]);
			len = 1;
		} else if (cp == '\\') {
			dcp_buf_add(b, "\\\\", 2);
		} else if (cp == '\n') {
			dcp_buf_add(b, "\\n", 2);
		} else if (cp == '\t') {
			dcp_buf_add(b, "\\t", 2);
		} else if (cp == '\r') {
			dcp_buf_add(b, "\\r", 2);
		} else if (cp == 0x1b) {
			dcp_buf_add(b, "\\e", 2);
		} else if (cp < 0x80) {
			/* A C0 control or DEL: the character is the byte. */
			put_hex_byte(b, (unsigned char)cp);
		} else {
			/* A character (C1 controls included), never \xHH, which
			 * stands for a raw byte that is not UTF-8: the raw byte
			 * 0x9b and U+009B (bytes c2 9b) must not look the same. */
			dcp_buf_printf(b, "\\u%04x", (unsigned)cp);
		}
		i += len;
		run = i;
	}
	dcp_buf_add(b, s + run, n - run);
}

void dcp_buf_quote_msg(struct dcp_buf *b, const char *s, size_t n)
{
	const char *q;

	dcp_buf_putc(b, '\'');
	while ((q = memchr(s, '\'', n))) {
		dcp_buf_quote(b, s, (size_t)(q - s));
		dcp_buf_puts(b, "\\'");
		n -= (size_t)(q - s) + 1;
		s = q + 1;
	}
	dcp_buf_quote(b, s, n);
	dcp_buf_putc(b, '\'');
}

void dcp_buf_base64(struct dcp_buf *b, const void *p, size_t n)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	char out[4];

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		size_t left = n - i;

		if (left > 1)
			v |= (uint32_t)s[i + 1] << 8;
		if (left > 2)
			v |= s[i + 2];
		out[0] = tbl[(v >> 18) & 63];
		out[1] = tbl[(v >> 12) & 63];
		out[2] = left > 1 ? tbl[(v >> 6) & 63] : '=';
		out[3] = left > 2 ? tbl[v & 63] : '=';
		dcp_buf_add(b, out, 4);
	}
}

void dcp_buf_json_str(struct dcp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t run = 0;
	uint32_t cp = 0;

	if (!dcp_utf8_valid(s, n)) {
		dcp_buf_puts(b, "{\"bytes\":\"");
		dcp_buf_base64(b, s, n);
		dcp_buf_puts(b, "\"}");
		return;
	}
	dcp_buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(u + i, n - i, &cp); /* valid: never 0 */
		const char *esc = NULL;
		char e[7];

		/*
		 * JSON Lines end up on terminals too: besides what JSON must
		 * escape, C1 controls, bidi overrides and the line separators
		 * U+2028/9 go out as \uXXXX (the decoded string is the same).
		 */
		if (!cp_unsafe(cp) && cp != '"' && cp != '\\' && cp != 0x2028 && cp != 0x2029) {
			i += len;
			continue;
		}
		dcp_buf_add(b, s + run, i - run);
		switch (cp) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\t': esc = "\\t"; break;
		case '\r': esc = "\\r"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		default:
			e[0] = '\\', e[1] = 'u';
			e[2] = hexdig[(cp >> 12) & 15], e[3] = hexdig[(cp >> 8) & 15];
			e[4] = hexdig[(cp >> 4) & 15], e[5] = hexdig[cp & 15], e[6] = 0;
			esc = e;
		}
		dcp_buf_puts(b, esc);
		i += len;
		run = i;
	}
	dcp_buf_add(b, s + run, n - run);
	dcp_buf_putc(b, '"');
}

const char *dcp_quoted(struct dcp_buf *b, const char *s)
{
	dcp_buf_reset(b);
	b->oom = false;
	dcp_buf_quote_msg(b, s, strlen(s));
	dcp_buf_putc(b, '\0');
	return b->oom ? "(name not shown: out of memory)" : b->data;
}

void dcp_buf_prom_label(struct dcp_buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp = 0;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(u + i, n - i, &cp);

		if (!len) {
			/* A label value is UTF-8 text: show the byte as text. */
			dcp_buf_puts(b, "\\\\x");
			dcp_buf_putc(b, hexdig[u[i] >> 4]);
			dcp_buf_putc(b, hexdig[u[i] & 15]);
			i++;
			continue;
		}
		if (cp == '\\')
			/* Doubled in the value (four in the text), so that a
			 * name's backslash never reads like the \\xHH standing
			 * for an escaped byte: the escaping stays injective. */
			dcp_buf_add(b, "\\\\\\\\", 4);
		else if (cp == '"')
			dcp_buf_add(b, "\\\"", 2);
		else if (cp == '\n')
			dcp_buf_add(b, "\\n", 2);
		else if (cp_unsafe(cp))
			/* Terminal-safe like the rest, shown as text as above:
			 * \\xHH for C0 and DEL (the character is the byte),
			 * \\uXXXX for a C1 control, as in dcp_buf_quote(). */
			dcp_buf_printf(b, cp < 0x80 ? "\\\\x%02x" : "\\\\u%04x", (unsigned)cp);
		else
			dcp_buf_add(b, s + i, len);
		i += len;
	}
}

void dcp_buf_count(struct dcp_buf *b, unsigned long long n, const char *one, const char *many)
{
	dcp_buf_printf(b, "%llu %s", n, n == 1 ? one : many);
}

/* ---- records in a fixed order ---- */

void dcp_rows_add(struct dcp_rows *r, size_t root, const char *path, size_t len, int rank,
		  const char *rec, size_t reclen)
{
	size_t at = r->arena.len;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct dcp_row *v = realloc(r->v, cap * sizeof(*v));

		if (!v) {
			r->oom = true;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	dcp_buf_add(&r->arena, path, len);
	dcp_buf_add(&r->arena, rec, reclen);
	if (r->arena.oom) {
		r->oom = true;
		return;
	}
	r->v[r->n++] = (struct dcp_row){ root, at, len, reclen, rank };
}

void dcp_rows_cut(struct dcp_rows *r, struct dcp_buf *b, size_t at, size_t root,
		  const char *path, size_t len, int rank)
{
	if (b->len > at)
		dcp_rows_add(r, root, path, len, rank, b->data + at, b->len - at);
	b->len = at;
}

void dcp_rows_merge(struct dcp_rows *into, struct dcp_rows *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct dcp_row *w = &from->v[i];

		dcp_rows_add(into, w->root, from->arena.data + w->at, w->keylen, w->rank,
			     from->arena.data + w->at + w->keylen, w->reclen);
	}
	into->oom |= from->oom;
	dcp_rows_free(from);
}

int dcp_path_cmp(const char *a, size_t an, const char *b, size_t bn, enum dcp_rows_order order)
{
	bool post = order == DCP_ROWS_POSTORDER;
	size_t i = 0, n = an < bn ? an : bn;

	while (i < n && a[i] == b[i])
		i++;
	if (i == an && i == bn)
		return 0;
	if (i == an || i == bn) {
		const char *l = i == an ? a : b, *m = i == an ? b : a; /* l is a prefix of m */
		bool ancestor = m[i] == '/' || (i && l[i - 1] == '/');
		int sign = i == an ? -1 : 1;

		return ancestor && post ? -sign : sign;
	}
	if (a[i] == '/' || b[i] == '/')
		return a[i] == '/' ? -1 : 1;
	return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
}

struct rows_sort {
	const char *base;
	enum dcp_rows_order order;
};

static int row_cmp(const void *x, const void *y, void *arg)
{
	const struct dcp_row *a = x, *b = y;
	const struct rows_sort *s = arg;
	int d;

	if (a->root != b->root)
		return a->root < b->root ? -1 : 1;
	d = dcp_path_cmp(s->base + a->at, a->keylen, s->base + b->at, b->keylen, s->order);
	if (d)
		return d;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return (a->at > b->at) - (a->at < b->at); /* held first, written first */
}

void dcp_rows_write(struct dcp_rows *r, enum dcp_rows_order order, struct dcp_buf *out)
{
	struct rows_sort s = { r->arena.data, order };

	if (r->n)
		qsort_r(r->v, r->n, sizeof(*r->v), row_cmp, &s);
	for (size_t i = 0; i < r->n; i++)
		dcp_buf_add(out, r->arena.data + r->v[i].at + r->v[i].keylen, r->v[i].reclen);
	r->n = 0;
	r->arena.len = 0;
}

void dcp_rows_free(struct dcp_rows *r)
{
	free(r->v);
	dcp_buf_free(&r->arena);
	*r = (struct dcp_rows){ 0 };
}

/* ---- byte counts ---- */

void dcp_buf_bytes(struct dcp_buf *b, uint64_t n, enum dcp_units units)
{
	static const char iec[] = "KMGTPE", si[] = "kMGTPE";
	const char *suffix = units == DCP_UNITS_SI ? si : iec;
	unsigned base = units == DCP_UNITS_SI ? 1000 : 1024;
	uint64_t whole = n, div = 1;
	int k = -1;

	if (units == DCP_UNITS_BYTES || n < base) {
		dcp_buf_printf(b, "%llu", (unsigned long long)n);
		return;
	}
	while (whole >= base && k < 5) {
		whole /= base;
		div *= base;
		k++;
	}
	/* Rounded up, as du: a size never reads smaller than it is. */
	if (whole < 10) {
		uint64_t tenths = (uint64_t)(((unsigned __int128)n * 10 + div - 1) / div);

		if (tenths < 100) {
			dcp_buf_printf(b, "%llu.%llu%c", (unsigned long long)(tenths / 10),
				       (unsigned long long)(tenths % 10), suffix[k]);
			return;
		}
	}
	whole = (uint64_t)(((unsigned __int128)n + div - 1) / div);
	if (whole >= base && k < 5) { /* 1023.9K rounds up to 1.0M */
		dcp_buf_printf(b, "1.0%c", suffix[k + 1]);
		return;
	}
	dcp_buf_printf(b, "%llu%c", (unsigned long long)whole, suffix[k]);
}
