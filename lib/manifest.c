// SPDX-License-Identifier: MIT
/*
 * manifest.c - residency manifests: read back dcache-probe's JSON Lines
 * (a small strict JSON reader: a manifest is input anyone may have edited),
 * and restore what they recorded, safely and in device order.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dcp_manifest.h"
#include "dcp_mounts.h"
#include "dcp_probe_report.h"
#include "dcp_report.h"
#include "dcp_util.h"
#include "dcp_warm.h"
#include "private/dcp_dirra.h"
#include "private/dcp_thread.h"

#ifndef RESOLVE_NO_XDEV
#define RESOLVE_NO_XDEV 0x01
#define RESOLVE_NO_MAGICLINKS 0x02
#define RESOLVE_NO_SYMLINKS 0x04
#endif

/* Values nested deeper than this are refused (an edited file's stack). */
#define MAX_NEST 32

/* ---- a strict JSON reader ---- */

struct js {
	const char *p, *end;
	const char *err; /* the first error's sentence */
	int nest;
	bool oom;	 /* out of memory: an error of the reading, not of the record */
};

static void js_fail(struct js *j, const char *what)
{
	if (!j->err)
		j->err = what;
	j->p = j->end;
}

static void js_oom(struct js *j)
{
	j->oom = true;
	js_fail(j, "out of memory");
}

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'))
		j->p++;
}

static bool js_eat(struct js *j, char c)
{
	js_ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static unsigned js_hex4(struct js *j)
{
	unsigned v = 0;

	if (j->end - j->p < 4) {
		js_fail(j, "a \\u escape is cut short");
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		int h = hexval(*j->p++);

		if (h < 0) {
			js_fail(j, "a \\u escape is not hexadecimal");
			return 0;
		}
		v = v << 4 | (unsigned)h;
	}
	return v;
}

static void put_utf8(struct dcp_buf *b, unsigned c)
{
	if (c < 0x80) {
		dcp_buf_putc(b, (char)c);
	} else if (c < 0x800) {
		dcp_buf_putc(b, (char)(0xc0 | c >> 6));
		dcp_buf_putc(b, (char)(0x80 | (c & 0x3f)));
	} else if (c < 0x10000) {
		dcp_buf_putc(b, (char)(0xe0 | c >> 12));
		dcp_buf_putc(b, (char)(0x80 | (c >> 6 & 0x3f)));
		dcp_buf_putc(b, (char)(0x80 | (c & 0x3f)));
	} else {
		dcp_buf_putc(b, (char)(0xf0 | c >> 18));
		dcp_buf_putc(b, (char)(0x80 | (c >> 12 & 0x3f)));
		dcp_buf_putc(b, (char)(0x80 | (c >> 6 & 0x3f)));
		dcp_buf_putc(b, (char)(0x80 | (c & 0x3f)));
	}
}

/* A string (the opening quote next) into OUT when not NULL (reset first). */
static bool js_string(struct js *j, struct dcp_buf *out)
{
	if (out)
		out->len = 0;
	if (!js_eat(j, '"')) {
		js_fail(j, "a string is expected");
		return false;
	}
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p++;

		if (c < 0x20) {
			js_fail(j, "a control character in a string");
			return false;
		}
		if (c != '\\') {
			if (out)
				dcp_buf_putc(out, (char)c);
			continue;
		}
		if (j->p == j->end)
			break;
		switch (c = (unsigned char)*j->p++) {
		case '"': case '\\': case '/': break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case 'u': {
			unsigned u = js_hex4(j);

			if (u >= 0xd800 && u < 0xdc00) {
				unsigned lo;

				if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
					js_fail(j, "a lone surrogate in a \\u escape");
					return false;
				}
				j->p += 2;
				lo = js_hex4(j);
				if (lo < 0xdc00 || lo >= 0xe000) {
					js_fail(j, "a lone surrogate in a \\u escape");
					return false;
				}
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			} else if (u >= 0xdc00 && u < 0xe000) {
				js_fail(j, "a lone surrogate in a \\u escape");
				return false;
			}
			if (j->err)
				return false;
			if (out)
				put_utf8(out, u);
			continue;
		}
		default:
			js_fail(j, "an unknown escape in a string");
			return false;
		}
		if (out)
			dcp_buf_putc(out, (char)c);
	}
	if (j->p == j->end) {
		js_fail(j, "a string is not closed");
		return false;
	}
	j->p++;
	if (out && out->oom) {
		js_oom(j);
		return false;
	}
	return true;
}

/*
 * An integer in [MIN, 2^63 - 1] (MIN 0 or INT64_MIN): JSON's grammar, no
 * fraction or exponent (an offset is a whole number of bytes).
 */
static bool js_int(struct js *j, int64_t min, int64_t *out)
{
	bool neg = false;
	uint64_t v = 0;
	const char *start;

	js_ws(j);
	if (j->p < j->end && *j->p == '-') {
		neg = true;
		j->p++;
	}
	start = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		if (v > ((uint64_t)INT64_MAX + neg - (uint64_t)(*j->p - '0')) / 10) {
			js_fail(j, "a number is out of range");
			return false;
		}
		v = v * 10 + (uint64_t)(*j->p++ - '0');
	}
	if (j->p == start || (j->p - start > 1 && *start == '0')) {
		js_fail(j, "an integer is expected");
		return false;
	}
	if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) {
		js_fail(j, "an integer is expected, not a fraction");
		return false;
	}
	if (neg && min == 0 && v) {
		js_fail(j, "a negative number where none can be");
		return false;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

static bool js_lit(struct js *j, const char *lit)
{
	size_t n = strlen(lit);

	js_ws(j);
	if ((size_t)(j->end - j->p) >= n && memcmp(j->p, lit, n) == 0) {
		j->p += n;
		return true;
	}
	return false;
}

/* Any value, checked and skipped. */
static void js_skip(struct js *j)
{
	js_ws(j);
	if (j->p == j->end) {
		js_fail(j, "a value is missing");
		return;
	}
	if (++j->nest > MAX_NEST) {
		js_fail(j, "values are nested too deeply");
		return;
	}
	switch (*j->p) {
	case '"':
		js_string(j, NULL);
		break;
	case '{':
		j->p++;
		if (!js_eat(j, '}')) {
			do {
				js_string(j, NULL);
				if (!js_eat(j, ':'))
					js_fail(j, "a ':' is missing");
				js_skip(j);
			} while (!j->err && js_eat(j, ','));
			if (!j->err && !js_eat(j, '}'))
				js_fail(j, "an object is not closed");
		}
		break;
	case '[':
		j->p++;
		if (!js_eat(j, ']')) {
			do
				js_skip(j);
			while (!j->err && js_eat(j, ','));
			if (!j->err && !js_eat(j, ']'))
				js_fail(j, "an array is not closed");
		}
		break;
	default:
		if (js_lit(j, "true") || js_lit(j, "false") || js_lit(j, "null"))
			break;
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
			/* A number of any form: sign, digits, fraction, exponent. */
			if (*j->p == '-')
				j->p++;
			if (j->p == j->end || *j->p < '0' || *j->p > '9') {
				js_fail(j, "a number is malformed");
				break;
			}
			while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' ||
						 *j->p == 'e' || *j->p == 'E' || *j->p == '+' ||
						 *j->p == '-'))
				j->p++;
			break;
		}
		js_fail(j, "a value is malformed");
	}
	j->nest--;
}

/* ---- entry records ---- */

static int b64val(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
	       c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard padded base64 in S (LEN bytes) into OUT; false when malformed. */
static bool unbase64(const char *s, size_t len, struct dcp_buf *out)
{
	out->len = 0;
	if (len % 4)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		int pad = 0;

		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = b64val(s[i + k])) < 0) {
				return false;
			}
		}
		dcp_buf_putc(out, (char)(v[0] << 2 | v[1] >> 4));
		if (pad < 2)
			dcp_buf_putc(out, (char)((v[1] & 15) << 4 | v[2] >> 2));
		if (pad < 1)
			dcp_buf_putc(out, (char)((v[2] & 3) << 6 | v[3]));
	}
	return !out->oom;
}

/* A path: a string, or {"bytes":"<base64>"} for one that is not UTF-8. */
static bool js_path(struct js *j, struct dcp_buf *out, struct dcp_buf *tmp)
{
	js_ws(j);
	if (j->p < j->end && *j->p == '"')
		return js_string(j, out);
	if (!js_eat(j, '{') || !js_string(j, tmp) || tmp->len != 5 || memcmp(tmp->data, "bytes", 5) ||
	    !js_eat(j, ':') || !js_string(j, tmp) || !js_eat(j, '}')) {
		js_fail(j, "\"path\" is neither a string nor {\"bytes\":BASE64}");
		return false;
	}
	if (!unbase64(tmp->data, tmp->len, out)) {
		js_fail(j, "\"path\" has malformed base64");
		return false;
	}
	return true;
}

static bool js_dev(struct js *j, struct dcp_buf *tmp, uint64_t *dev)
{
	unsigned long ma, mi;
	int n = 0;

	if (!js_string(j, tmp))
		return false;
	dcp_buf_putc(tmp, '\0');
	if (tmp->oom || sscanf(tmp->data, "%lu:%lu%n", &ma, &mi, &n) != 2 ||
	    (size_t)n != tmp->len - 1 || ma > 0xfffff || mi > 0xfffff || tmp->data[0] == '-' ||
	    strchr(tmp->data, '-') || strchr(tmp->data, ' ') || strchr(tmp->data, '+')) {
		js_fail(j, "\"dev\" is not MAJOR:MINOR");
		return false;
	}
	*dev = (uint64_t)makedev(ma, mi);
	return true;
}

/*
 * An "identity" object into *ID; its "fs" number into *FS (-1 when none),
 * its "handle" into *H (H->len 0 when none).
 */
static bool js_identity(struct js *j, struct dcp_buf *key, struct dcp_buf *tmp,
			struct dcp_pages_identity *id, int64_t *fs, struct dcp_handle *h)
{
	unsigned seen = 0;
	int64_t v;

	if (!js_eat(j, '{')) {
		js_fail(j, "\"identity\" is not an object");
		return false;
	}
	if (!js_eat(j, '}')) {
		do {
			if (!js_string(j, key) || !js_eat(j, ':')) {
				js_fail(j, "\"identity\" is malformed");
				return false;
			}
			dcp_buf_putc(key, '\0');
			if (!strcmp(key->data, "dev")) {
				seen |= 1;
				js_dev(j, tmp, &id->dev);
			} else if (!strcmp(key->data, "ino") && js_int(j, 0, &v)) {
				seen |= 2;
				id->ino = (uint64_t)v;
			} else if (!strcmp(key->data, "size") && js_int(j, 0, &v)) {
				seen |= 4;
				id->size = (uint64_t)v;
			} else if (!strcmp(key->data, "mtime_ns") && js_int(j, INT64_MIN, &v)) {
				seen |= 8;
				id->mtime_ns = v;
			} else if (!strcmp(key->data, "fs") && js_int(j, 0, &v)) {
				if (v >= DCP_MANIFEST_MAX_FS_ID)
					js_fail(j, "\"fs\" of \"identity\" is out of range");
				*fs = v;
			} else if (!strcmp(key->data, "handle")) {
				if (js_string(j, tmp) && dcp_handle_parse(tmp->data, tmp->len, h) < 0)
					js_fail(j, "\"handle\" is not TYPE:HEX of at most 128 bytes");
			} else if (!j->err) {
				js_skip(j);
			}
		} while (!j->err && js_eat(j, ','));
		if (!j->err && !js_eat(j, '}'))
			js_fail(j, "\"identity\" is not closed");
	}
	if (!j->err && seen != 15)
		js_fail(j, "\"identity\" needs dev, ino, size and mtime_ns");
	return !j->err;
}

static bool js_ranges(struct js *j, struct dcp_manifest_entry *e)
{
	size_t cap = 0;

	if (js_lit(j, "null"))
		return true;
	if (!js_eat(j, '[')) {
		js_fail(j, "\"ranges\" is not an array");
		return false;
	}
	if (js_eat(j, ']'))
		return true;
	do {
		int64_t off, len;

		if (!js_eat(j, '[') || !js_int(j, 0, &off) || !js_eat(j, ',') || !js_int(j, 0, &len) ||
		    !js_eat(j, ']')) {
			js_fail(j, "a range is not [OFFSET,LENGTH] of non-negative integers");
			return false;
		}
		if ((uint64_t)off + (uint64_t)len > (uint64_t)INT64_MAX) {
			js_fail(j, "a range ends past 2^63 - 1");
			return false;
		}
		if (!len)
			continue;
		if (e->nranges == cap) {
			uint64_t (*v)[2] = realloc(e->ranges, (cap ? 2 * cap : 8) * sizeof(*v));

			if (!v) {
				js_oom(j);
				return false;
			}
			e->ranges = v;
			cap = cap ? 2 * cap : 8;
		}
		e->ranges[e->nranges][0] = (uint64_t)off;
		e->ranges[e->nranges++][1] = (uint64_t)len;
	} while (js_eat(j, ','));
	if (!js_eat(j, ']'))
		js_fail(j, "\"ranges\" is not closed");
	return !j->err;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* E's ranges ascending, overlapping or touching ones joined: each byte once. */
static void coalesce(struct dcp_manifest_entry *e)
{
	size_t n = 0;

	if (e->nranges < 2)
		return; /* qsort may not be given no array */
	qsort(e->ranges, e->nranges, sizeof(*e->ranges), cmp_range);
	for (size_t i = 0; i < e->nranges; i++) {
		uint64_t end = e->ranges[i][0] + e->ranges[i][1];

		if (n && e->ranges[i][0] <= e->ranges[n - 1][0] + e->ranges[n - 1][1]) {
			if (end > e->ranges[n - 1][0] + e->ranges[n - 1][1])
				e->ranges[n - 1][1] = end - e->ranges[n - 1][0];
			continue;
		}
		e->ranges[n][0] = e->ranges[i][0];
		e->ranges[n++][1] = e->ranges[i][1];
	}
	e->nranges = n;
}

/* The DT_* type of a record's "kind" (dcp_pr_kind_name()'s names), or -1. */
static int kind_of(const char *s)
{
	static const unsigned char types[] = {
		DT_UNKNOWN, DT_REG, DT_DIR, DT_LNK, DT_FIFO, DT_SOCK, DT_CHR, DT_BLK,
	};

	for (size_t i = 0; i < sizeof(types); i++)
		if (!strcmp(s, dcp_pr_kind_name(types[i])))
			return types[i];
	return -1;
}

/* Whether the LEN bytes at P hold a ".." component. */
static bool has_dotdot(const char *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (p[i] == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/') &&
		    (i + 2 == len || p[i + 2] == '/'))
			return true;
	return false;
}

struct bufs {
	struct dcp_buf key, val, tmp, path;
};

/* What a record is (its "type"). */
enum rec_type { REC_OTHER, REC_ENTRY, REC_MANIFEST, REC_ROOT, REC_FS };

/* The members of a record other than an entry's own, and an entry's identity's. */
struct rec {
	enum rec_type type;
	int64_t version;       /* manifest: -1 when absent */
	int64_t fs;	       /* fs: its number (-1: absent) */
	int64_t ident_fs;      /* entry: its identity's "fs" (-1: none) */
	int64_t root;	       /* manifest_root: its number (-1: absent) */
	bool has_path;
	struct dcp_fsid fsid;  /* fs: the UUID (from NONE when absent) */
	struct dcp_handle handle; /* entry: its identity's handle (len 0: none) */
};

static enum rec_type type_of(const struct dcp_buf *v)
{
	static const struct {
		const char *name;
		enum rec_type type;
	} types[] = {
		{ "entry", REC_ENTRY }, { "manifest", REC_MANIFEST },
		{ "manifest_root", REC_ROOT }, { "fs", REC_FS },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (v->len == strlen(types[i].name) && !memcmp(v->data, types[i].name, v->len))
			return types[i].type;
	return REC_OTHER;
}

/* A path member's checks (entry, manifest_root): false with J->err set. */
static bool path_ok(struct js *j, const struct dcp_buf *path)
{
	if (!path->len)
		js_fail(j, DCP_MSG_EMPTY_PATH);
	else if (memchr(path->data, 0, path->len))
		js_fail(j, "a path contains a NUL byte");
	else if (path->len >= PATH_MAX)
		js_fail(j, "the path is longer than PATH_MAX (4096 bytes)");
	else if (has_dotdot(path->data, path->len))
		js_fail(j, "a path with a '..' component: what it names depends on symlinks");
	return !j->err;
}

/*
 * One record: an entry into *E (REC_ENTRY), a manifest's own record's
 * members into *R (its type in R->type), anything else skipped
 * (REC_OTHER); J->err when malformed.  An entry's identity's "fs" number
 * is left in R->ident_fs for the caller, which knows the fs records before
 * it, and its handle in R->handle.
 */
static enum rec_type parse_record(struct js *j, struct bufs *b, struct dcp_manifest_entry *e,
				  struct rec *r)
{
	bool has_path = false, has_state = false, has_ranges = false, has_uuid_from = false;
	bool has_uuid = false;
	int64_t v;

	*e = (struct dcp_manifest_entry){ .depth = -1, .kind = DT_UNKNOWN };
	*r = (struct rec){ .type = REC_OTHER, .version = -1, .fs = -1, .ident_fs = -1, .root = -1 };
	if (!js_eat(j, '{')) {
		js_fail(j, "a record is not a JSON object");
		return REC_OTHER;
	}
	if (!js_eat(j, '}')) {
		do {
			if (!js_string(j, &b->key) || !js_eat(j, ':')) {
				js_fail(j, "a member is malformed");
				break;
			}
			dcp_buf_putc(&b->key, '\0');
			if (b->key.oom) {
				js_oom(j);
				break;
			}
			if (!strcmp(b->key.data, "type")) {
				if (js_string(j, &b->val))
					r->type = type_of(&b->val);
			} else if (!strcmp(b->key.data, "path")) {
				has_path = js_path(j, &b->path, &b->tmp);
			} else if (!strcmp(b->key.data, "state")) {
				if (js_string(j, &b->val)) {
					int st;

					dcp_buf_putc(&b->val, '\0');
					st = b->val.oom || memchr(b->val.data, 0, b->val.len - 1) ? -1 :
					     dcp_state_parse(b->val.data);
					if (st < 0)
						js_fail(j, "\"state\" is not cached, negative, miss or error");
					e->state = (enum dcp_state)st;
					has_state = true;
				}
			} else if (!strcmp(b->key.data, "kind")) {
				if (js_string(j, &b->val)) {
					int k;

					dcp_buf_putc(&b->val, '\0');
					k = b->val.oom ? -1 : kind_of(b->val.data);
					if (k < 0)
						js_fail(j, "\"kind\" is not a kind dcache-probe writes");
					e->kind = (unsigned char)k;
				}
			} else if (!strcmp(b->key.data, "depth")) {
				if (js_int(j, 0, &v))
					e->depth = v > INT_MAX ? INT_MAX : (int)v;
			} else if (!strcmp(b->key.data, "identity")) {
				e->has_identity = js_identity(j, &b->key, &b->tmp, &e->identity,
							      &r->ident_fs, &r->handle);
			} else if (!strcmp(b->key.data, "ranges")) {
				has_ranges = true;
				e->has_ranges = !js_lit(j, "null");
				if (e->has_ranges)
					js_ranges(j, e);
			} else if (!strcmp(b->key.data, "version")) {
				/* Any number: a later format may be written otherwise. */
				if (js_int(j, INT64_MIN, &v))
					r->version = v;
			} else if (!strcmp(b->key.data, "fs")) {
				if (js_int(j, 0, &v))
					r->fs = v;
			} else if (!strcmp(b->key.data, "root")) {
				if (js_int(j, 0, &v))
					r->root = v;
			} else if (!strcmp(b->key.data, "uuid")) {
				has_uuid = js_string(j, &b->val) &&
					   dcp_fsid_parse(b->val.data, b->val.len, &r->fsid) == 0;
				if (!j->err && !has_uuid)
					js_fail(j, "\"uuid\" is not a UUID (8-4-4-4-12 hexadecimal digits)");
			} else if (!strcmp(b->key.data, "uuid_from")) {
				if (js_string(j, &b->val)) {
					int from = dcp_fsid_from_parse(b->val.data, b->val.len);

					has_uuid_from = true;
					if (from > 0)
						r->fsid.from = (enum dcp_fsid_from)from;
					else
						js_fail(j, "\"uuid_from\" is not fsuuid, btrfs, ext4, xfs, "
							   "blkid or by-uuid");
				}
			} else {
				js_skip(j);
			}
		} while (!j->err && js_eat(j, ','));
		if (!j->err && !js_eat(j, '}'))
			js_fail(j, "a record is not closed");
	}
	js_ws(j);
	if (!j->err && j->p != j->end)
		js_fail(j, "something follows the record's object");
	if (j->err)
		return REC_OTHER;
	switch (r->type) {
	case REC_OTHER:
		return REC_OTHER;
	case REC_MANIFEST:
		if (r->version < 0)
			js_fail(j, "a manifest record needs \"version\"");
		return j->err ? REC_OTHER : REC_MANIFEST;
	case REC_FS:
		if (r->fs < 0 || !has_uuid || !has_uuid_from)
			js_fail(j, "an fs record needs \"fs\", \"uuid\" and \"uuid_from\"");
		else if (r->fs >= DCP_MANIFEST_MAX_FS_ID)
			js_fail(j, "\"fs\" is out of range");
		return j->err ? REC_OTHER : REC_FS;
	case REC_ROOT:
		if (!has_path || r->root < 0)
			js_fail(j, "a manifest_root record needs \"root\" and \"path\"");
		else
			path_ok(j, &b->path);
		r->has_path = true;
		return j->err ? REC_OTHER : REC_ROOT;
	case REC_ENTRY:
		break;
	}
	if (!has_path || !has_state)
		js_fail(j, "an entry record needs \"path\" and \"state\"");
	else if (path_ok(j, &b->path) && e->nranges && !e->has_identity)
		js_fail(j, "\"ranges\" without \"identity\": whose ranges they are is not known");
	else if (has_ranges && e->has_identity && e->state != DCP_CACHED)
		js_fail(j, "\"ranges\" of a path that was not cached");
	else if (!e->has_identity && (r->ident_fs >= 0 || r->handle.len))
		js_fail(j, "\"identity\" is malformed");
	if (j->err)
		return REC_OTHER;
	coalesce(e);
	e->path = strndup(b->path.data, b->path.len);
	if (!e->path) {
		js_oom(j);
		return REC_OTHER;
	}
	e->len = b->path.len;
	return REC_ENTRY;
}

/* ---- roots ---- */

struct rootset {
	size_t *slot; /* index + 1 into m->roots, 0 empty */
	size_t cap;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

/* The root with path S (N bytes): its index, or SIZE_MAX. */
static size_t root_find(const struct dcp_manifest *m, const struct rootset *rs, const char *s,
			size_t n)
{
	if (!rs->cap)
		return SIZE_MAX;
	for (size_t i = hash_bytes(s, n) & (rs->cap - 1);; i = (i + 1) & (rs->cap - 1)) {
		size_t r = rs->slot[i];

		if (!r)
			return SIZE_MAX;
		if (strlen(m->roots[r - 1]) == n && !memcmp(m->roots[r - 1], s, n))
			return r - 1;
	}
}

static int root_add(struct dcp_manifest *m, struct rootset *rs, const char *path)
{
	char **v;
	size_t n = strlen(path);

	if (root_find(m, rs, path, n) != SIZE_MAX)
		return 0;
	if (2 * (m->nroots + 1) > rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 64;
		size_t *slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		free(rs->slot);
		rs->slot = slot;
		rs->cap = cap;
		for (size_t r = 0; r < m->nroots; r++) {
			size_t i = hash_bytes(m->roots[r], strlen(m->roots[r])) & (cap - 1);

			while (slot[i])
				i = (i + 1) & (cap - 1);
			slot[i] = r + 1;
		}
	}
	v = realloc(m->roots, (m->nroots + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->roots = v;
	m->roots[m->nroots] = strdup(path);
	if (!m->roots[m->nroots])
		return -ENOMEM;
	for (size_t i = hash_bytes(path, n) & (rs->cap - 1);; i = (i + 1) & (rs->cap - 1))
		if (!rs->slot[i]) {
			rs->slot[i] = ++m->nroots;
			return 0;
		}
}

/*
 * Each entry's root: the longest root that is its path or a prefix of it
 * by components.  The roots: the NR root records' paths GIVEN (format 2), then
 * the entries at depth 0.
 */
static int assign_roots(struct dcp_manifest *m, char **given, size_t nr)
{
	struct rootset rs = { 0 };
	int ret = 0;

	for (size_t i = 0; i < nr && !ret; i++)
		ret = root_add(m, &rs, given[i]);
	for (size_t i = 0; i < m->n && !ret; i++)
		if (m->v[i].depth == 0)
			ret = root_add(m, &rs, m->v[i].path);
	for (size_t i = 0; i < m->n && !ret; i++) {
		struct dcp_manifest_entry *e = &m->v[i];
		size_t r = root_find(m, &rs, e->path, e->len);

		for (size_t n = e->len; r == SIZE_MAX && n > 0; n--)
			if (e->path[n - 1] == '/')
				r = root_find(m, &rs, e->path, n - 1 ? n - 1 : 1);
		if (r == SIZE_MAX) {
			ret = root_add(m, &rs, e->path);
			r = m->nroots - 1;
		}
		e->root = r;
	}
	free(rs.slot);
	return ret;
}

int dcp_manifest_read(const char *file, struct dcp_manifest *m,
		      void (*bad)(size_t record, const char *what, void *arg), void *arg)
{
	FILE *f = fopen(file, "re");
	int ret;

	if (!f)
		return -errno;
	ret = dcp_manifest_fread(f, m, bad, arg);
	fclose(f);
	return ret;
}

/* A manifest's lines, read from F in blocks (memchr finds each line's end). */
struct lines {
	FILE *f;
	char *buf;
	size_t pos, len;
};

#define LINES_BLOCK (64u << 10)

/*
 * The next line into LINE, without its newline, keeping at most MAX bytes:
 * a longer line is read to its end and dropped, never held in memory.
 * Returns 1 (a line), 0 (the end of the file, nothing read), -E2BIG (a
 * line longer than MAX), or -errno of the reading or of the memory
 * (-ENOMEM): never an end of input.
 */
static int read_line(struct lines *r, struct dcp_buf *line, size_t max)
{
	bool any = false, over = false;

	dcp_buf_reset(line);
	for (;;) {
		const char *s, *nl;
		size_t n;

		if (r->pos == r->len) {
			errno = 0;
			r->len = fread(r->buf, 1, LINES_BLOCK, r->f);
			r->pos = 0;
			if (!r->len && ferror(r->f))
				return -(errno ? errno : EIO);
			if (!r->len)
				break;
		}
		s = r->buf + r->pos;
		nl = memchr(s, '\n', r->len - r->pos);
		n = nl ? (size_t)(nl - s) : r->len - r->pos;
		any = true;
		if (over || n > max - line->len)
			over = true;
		else
			dcp_buf_add(line, s, n);
		if (line->oom)
			return -ENOMEM;
		r->pos += n + (nl != NULL);
		if (nl)
			break;
	}
	return !any ? 0 : over ? -E2BIG : 1;
}

/* A manifest's "fs" records by number (at most DCP_MANIFEST_MAX_FS). */
#define FS_SLOTS (2 * DCP_MANIFEST_MAX_FS)
struct fstab {
	uint32_t id[FS_SLOTS];	     /* number + 1, 0 empty */
	struct dcp_fsid v[FS_SLOTS];
	size_t n;
};

static size_t fs_slot(const struct fstab *t, uint32_t id)
{
	size_t i = (id * 2654435761u) % FS_SLOTS;

	while (t->id[i] && t->id[i] != id + 1)
		i = (i + 1) % FS_SLOTS;
	return i;
}

/* What reading a manifest keeps between its records. */
struct reading {
	struct dcp_manifest *m;
	size_t records;		/* non-empty records so far */
	bool entries;		/* an entry was read */
	struct fstab *fs;
	char **roots;		/* the manifest_root records' paths */
	size_t nroots;
};

/*
 * A record that is not an entry: the format, a root, a filesystem.
 * Returns 0, 1 when reading must stop (a later format), or -ENOMEM; a
 * malformed one is handed to BAD.
 */
static int take_record(struct reading *rd, const struct rec *r, const struct dcp_buf *path,
		       size_t record, void (*bad)(size_t record, const char *what, void *arg),
		       void *arg)
{
	switch (r->type) {
	case REC_MANIFEST:
		if (r->version > DCP_MANIFEST_VERSION) {
			bad(record, "a manifest of a later format than this dcprobe reads (2): "
				    "nothing of it is read", arg);
			return 1;
		}
		if (r->version != DCP_MANIFEST_VERSION)
			bad(record, "a manifest record of a format this dcprobe does not write", arg);
		else if (rd->records != 1)
			bad(record, "a manifest record that is not the first", arg);
		else
			rd->m->format = DCP_MANIFEST_VERSION;
		return 0;
	case REC_ROOT: {
		char **v;

		if (rd->entries) {
			bad(record, "a manifest_root record after an entry", arg);
			return 0;
		}
		v = realloc(rd->roots, (rd->nroots + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		rd->roots = v;
		rd->roots[rd->nroots] = strndup(path->data, path->len);
		if (!rd->roots[rd->nroots])
			return -ENOMEM;
		rd->nroots++;
		return 0;
	}
	case REC_FS: {
		size_t i;

		if (!rd->fs && !(rd->fs = calloc(1, sizeof(*rd->fs))))
			return -ENOMEM;
		i = fs_slot(rd->fs, (uint32_t)r->fs);
		if (rd->fs->id[i])
			bad(record, "an fs record whose number an earlier one gives", arg);
		else if (rd->fs->n == DCP_MANIFEST_MAX_FS)
			bad(record, "more than 4096 fs records", arg);
		else {
			rd->fs->id[i] = (uint32_t)r->fs + 1;
			rd->fs->v[i] = r->fsid;
			rd->fs->n++;
		}
		return 0;
	}
	default:
		return 0;
	}
}

/*
 * Entry E's identity from R: the UUID of the fs record it names (which
 * must come before it) and its handle (copied).  Returns 0, 1 when it
 * names no fs record given before (handed to BAD), or -ENOMEM.
 */
static int take_identity(struct reading *rd, const struct rec *r, struct dcp_manifest_entry *e,
			 size_t record, void (*bad)(size_t record, const char *what, void *arg),
			 void *arg)
{
	if (r->ident_fs >= 0) {
		size_t i = rd->fs ? fs_slot(rd->fs, (uint32_t)r->ident_fs) : 0;

		if (!rd->fs || !rd->fs->id[i]) {
			bad(record, "\"identity\" names a filesystem (\"fs\") that no record before it gives",
			    arg);
			return 1;
		}
		e->identity.fs = rd->fs->v[i];
	}
	if (r->handle.len) {
		uint8_t *h = malloc(r->handle.len);

		if (!h)
			return -ENOMEM;
		memcpy(h, r->handle.bytes, r->handle.len);
		e->identity.handle = h;
		e->identity.handle_len = r->handle.len;
		e->identity.handle_type = r->handle.type;
	}
	return 0;
}

static void entry_free(struct dcp_manifest_entry *e)
{
	free(e->path);
	free(e->ranges);
	free((void *)e->identity.handle);
}

/* A manifest being read: what reading keeps between its records. */
struct dcp_manifest_reader {
	FILE *f;		/* the caller's */
	struct lines r;
	struct dcp_buf line;
	struct bufs b;
	struct reading rd;	/* rd.m: the manifest the records' format and lines go to */
	size_t record;		/* lines read */
	bool end;		/* the end, or a later format: no more entries */
	int err;		/* a read error (-errno): the line is rd.m->lines */
	void (*bad)(size_t record, const char *what, void *arg);
	void *arg;
	/* dcp_manifest_next(): the window, its roots' index, the roots given
	 * by manifest_root records already in it, the entries read. */
	struct dcp_manifest win;
	struct rootset rs;
	size_t given;
	uint64_t entries;
};

static void no_bad(size_t record, const char *what, void *arg)
{
	(void)record, (void)what, (void)arg;
}

static int reader_init(struct dcp_manifest_reader *x, FILE *f, struct dcp_manifest *m,
		       void (*bad)(size_t record, const char *what, void *arg), void *arg)
{
	*x = (struct dcp_manifest_reader){
		.f = f, .r = { f, malloc(LINES_BLOCK), 0, 0 }, .line = DCP_BUF_INIT,
		.b = { DCP_BUF_INIT, DCP_BUF_INIT, DCP_BUF_INIT, DCP_BUF_INIT },
		.rd = { .m = m }, .bad = bad ? bad : no_bad, .arg = arg,
	};
	m->format = 1;
	if (!x->r.buf) {
		m->lines = 1; /* the first line could not be read */
		return -ENOMEM;
	}
	return 0;
}

/* Free what reading holds (not F, not the window). */
static void reader_fini(struct dcp_manifest_reader *x)
{
	free(x->r.buf);
	x->r.buf = NULL;
	dcp_buf_free(&x->line);
	dcp_buf_free(&x->b.key);
	dcp_buf_free(&x->b.val);
	dcp_buf_free(&x->b.tmp);
	dcp_buf_free(&x->b.path);
	for (size_t i = 0; i < x->rd.nroots; i++)
		free(x->rd.roots[i]);
	free(x->rd.roots);
	free(x->rd.fs);
	x->rd.roots = NULL;
	x->rd.nroots = 0;
	x->rd.fs = NULL;
}

/*
 * The next entry of the manifest into *OUT: 1, 0 at its end (or at a
 * manifest of a later format: nothing of it is read), or -errno (a read
 * error, ENOMEM too: never an end; the line is X->rd.m->lines).  A
 * malformed record is handed to BAD and skipped.
 */
static int next_entry(struct dcp_manifest_reader *x, struct dcp_manifest_entry *out)
{
	struct dcp_manifest *m = x->rd.m;
	int ret;

	if (x->end)
		return 0;
	while ((ret = read_line(&x->r, &x->line, DCP_MANIFEST_MAX_RECORD)) != 0) {
		struct dcp_manifest_entry e;
		struct js j;
		struct rec rc;
		enum rec_type t;

		m->lines = ++x->record;
		if (ret == -E2BIG) {
			x->bad(x->record, "the record is longer than " DCP_MANIFEST_MAX_RECORD_TEXT,
			       x->arg);
			continue;
		}
		if (ret < 0)
			return ret; /* the line that could not be read: m->lines */
		if (!x->line.len)
			continue; /* an empty line (no buffer yet, maybe) */
		j = (struct js){ x->line.data, x->line.data + x->line.len, NULL, 0, false };
		js_ws(&j);
		if (j.p == j.end)
			continue; /* an empty line holds no record */
		x->rd.records++;
		if (memchr(x->line.data, '\0', x->line.len)) {
			x->bad(x->record, "the record contains a NUL byte", x->arg);
			continue;
		}
		t = parse_record(&j, &x->b, &e, &rc);
		if (t != REC_ENTRY) {
			free(e.ranges);
			if (j.oom || x->b.key.oom || x->b.val.oom || x->b.tmp.oom || x->b.path.oom)
				return -ENOMEM;
			if (j.err) {
				x->bad(x->record, j.err, x->arg);
				continue;
			}
			ret = take_record(&x->rd, &rc, &x->b.path, x->record, x->bad, x->arg);
			if (ret > 0) { /* a later format: nothing of it is read */
				x->end = true;
				return 0;
			}
			if (ret < 0)
				return ret;
			continue;
		}
		x->rd.entries = true;
		ret = take_identity(&x->rd, &rc, &e, x->record, x->bad, x->arg);
		if (ret) {
			entry_free(&e);
			if (ret > 0)
				continue;
			return ret;
		}
		e.record = x->record;
		*out = e;
		return 1;
	}
	x->end = true;
	return 0;
}

int dcp_manifest_fread(FILE *f, struct dcp_manifest *m,
		       void (*bad)(size_t record, const char *what, void *arg), void *arg)
{
	struct dcp_manifest_reader x;
	struct dcp_manifest_entry e;
	int ret = reader_init(&x, f, m, bad, arg), roots;

	while (!ret && (ret = next_entry(&x, &e)) > 0) {
		ret = 0;
		if (m->n == m->cap) {
			size_t c = m->cap ? 2 * m->cap : 256;
			struct dcp_manifest_entry *v = realloc(m->v, c * sizeof(*v));

			if (!v) {
				entry_free(&e);
				ret = -ENOMEM;
				break;
			}
			m->v = v;
			m->cap = c;
		}
		m->v[m->n++] = e;
	}
	/* What was read before an error is kept, each entry with its root. */
	roots = assign_roots(m, x.rd.roots, x.rd.nroots);
	reader_fini(&x);
	return ret ? ret : roots;
}

/* ---- a manifest read a window at a time ---- */

/*
 * The roots of X's window so far: the manifest_root records read and not
 * yet in it, then E's path when it is at depth 0.  0 or -ENOMEM.
 */
static int window_roots(struct dcp_manifest_reader *x, const struct dcp_manifest_entry *e)
{
	int ret = 0;

	for (; x->given < x->rd.nroots && !ret; x->given++)
		ret = root_add(&x->win, &x->rs, x->rd.roots[x->given]);
	if (!ret && e && e->depth == 0)
		ret = root_add(&x->win, &x->rs, e->path);
	return ret;
}

/*
 * A pre-pass over a manifest in a file (seekable): its roots, in the
 * order dcp_manifest_read() gives them (the manifest_root records, then
 * the entries at depth 0), nothing else kept; then back to its start.  A
 * read error ends it: the main pass meets it again and says it.
 */
static int prepass_roots(struct dcp_manifest_reader *x, off_t start)
{
	struct dcp_manifest_entry e;
	char **depth0 = NULL;
	size_t n0 = 0;
	int ret = 0;

	x->bad = no_bad;
	while (next_entry(x, &e) > 0) {
		if (e.depth == 0) {
			char **v = realloc(depth0, (n0 + 1) * sizeof(*v));

			if (!v) {
				entry_free(&e);
				ret = -ENOMEM; /* the roots cannot be kept */
				break;
			}
			depth0 = v;
			depth0[n0++] = e.path;
			e.path = NULL;
		}
		entry_free(&e);
	}
	if (!ret)
		ret = window_roots(x, NULL);
	for (size_t i = 0; i < n0; i++) {
		if (!ret)
			ret = root_add(&x->win, &x->rs, depth0[i]);
		free(depth0[i]);
	}
	free(depth0);
	if (ret)
		return ret;
	/* The main pass: from the start, as if nothing had been read. */
	for (size_t i = 0; i < x->rd.nroots; i++)
		free(x->rd.roots[i]);
	free(x->rd.roots);
	free(x->rd.fs);
	x->rd = (struct reading){ .m = &x->win };
	dcp_buf_free(&x->line); /* as long as the longest record: grown again as needed */
	x->line = (struct dcp_buf)DCP_BUF_INIT;
	x->given = 0;
	x->record = 0;
	x->end = false;
	x->r.pos = x->r.len = 0;
	x->win.format = 1;
	x->win.lines = 0;
	clearerr(x->f);
	if (fseeko(x->f, start, SEEK_SET) < 0)
		return -errno;
	return 0;
}

int dcp_manifest_open(FILE *f, bool roots,
		      void (*bad)(size_t record, const char *what, void *arg), void *arg,
		      struct dcp_manifest_reader **out)
{
	struct dcp_manifest_reader *x = calloc(1, sizeof(*x));
	struct stat st;
	off_t start = -1;
	int ret;

	*out = NULL;
	if (!x)
		return -ENOMEM;
	ret = reader_init(x, f, &x->win, bad, arg);
	if (!ret && roots) {
		/* Roots before the first entry: from a file, a pre-pass. */
		if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
			start = ftello(f);
		ret = start < 0 ? -ESPIPE : prepass_roots(x, start);
		x->bad = bad ? bad : no_bad;
	}
	if (ret) {
		dcp_manifest_close(x);
		return ret;
	}
	*out = x;
	return 0;
}

/* The bytes of records a window holds at most (one record may be larger). */
#define WINDOW_BYTES (8u << 20)

int dcp_manifest_next(struct dcp_manifest_reader *x, size_t max, const struct dcp_manifest **win)
{
	size_t bytes = 0;
	int ret = 0;

	*win = &x->win;
	for (size_t i = 0; i < x->win.n; i++)
		entry_free(&x->win.v[i]);
	x->win.n = 0;
	if (x->err)
		return x->err;
	if (!max)
		max = 4096;
	while (x->win.n < max && bytes < WINDOW_BYTES) {
		struct dcp_manifest_entry *e;
		size_t r;

		if (x->win.n == x->win.cap) {
			/* Grown as entries come: a short manifest costs little. */
			size_t c = x->win.cap ? 2 * x->win.cap : 64;
			struct dcp_manifest_entry *v = realloc(x->win.v, (c < max ? c : max) * sizeof(*v));

			if (!v) {
				ret = -ENOMEM;
				break;
			}
			x->win.v = v;
			x->win.cap = c < max ? c : max;
		}
		e = &x->win.v[x->win.n];
		ret = next_entry(x, e);
		if (ret <= 0)
			break;
		bytes += x->line.len;
		x->win.n++;
		x->entries++;
		/* Its root: the longest one that is its path or a prefix of it. */
		ret = window_roots(x, e);
		r = root_find(&x->win, &x->rs, e->path, e->len);
		for (size_t n = e->len; !ret && r == SIZE_MAX && n > 0; n--)
			if (e->path[n - 1] == '/')
				r = root_find(&x->win, &x->rs, e->path, n - 1 ? n - 1 : 1);
		if (!ret && r == SIZE_MAX) {
			ret = root_add(&x->win, &x->rs, e->path);
			r = x->win.nroots - 1;
		}
		e->root = r;
		if (ret < 0)
			break;
	}
	if (ret < 0) {
		x->err = ret; /* said after the entries before it */
		if (!x->win.n)
			return ret;
	}
	return (int)x->win.n;
}

size_t dcp_manifest_line(const struct dcp_manifest_reader *x)
{
	return x->err ? x->win.lines : 0;
}

int dcp_manifest_format(const struct dcp_manifest_reader *x)
{
	return x->win.format;
}

uint64_t dcp_manifest_entries(const struct dcp_manifest_reader *x)
{
	return x->entries;
}

void dcp_manifest_close(struct dcp_manifest_reader *x)
{
	if (!x)
		return;
	reader_fini(x);
	dcp_manifest_free(&x->win);
	free(x->rs.slot);
	free(x);
}

void dcp_manifest_free(struct dcp_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		entry_free(&m->v[i]);
	for (size_t i = 0; i < m->nroots; i++)
		free(m->roots[i]);
	free(m->v);
	free(m->roots);
	*m = (struct dcp_manifest){ 0 };
}

bool dcp_manifest_counted(const struct dcp_manifest_entry *e)
{
	return e->state == DCP_CACHED || e->state == DCP_NEGATIVE;
}

char *dcp_manifest_lexical(const char *path)
{
	struct dcp_buf b = DCP_BUF_INIT;
	const char *p = path;

	if (*path != '/') {
		char *cwd = getcwd(NULL, 0);

		if (!cwd)
			return NULL;
		dcp_buf_puts(&b, cwd);
		free(cwd);
	}
	while (*p) {
		const char *s;
		size_t n;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - s);
		if (!n || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			dcp_buf_free(&b);
			errno = EINVAL;
			return NULL;
		}
		if (!(b.len == 1 && b.data[0] == '/'))
			dcp_buf_putc(&b, '/');
		dcp_buf_add(&b, s, n);
	}
	if (!b.len)
		dcp_buf_putc(&b, '/');
	/* A cwd of "/" and a path: "/" + "/x" would double the slash. */
	dcp_buf_putc(&b, '\0');
	if (b.oom) {
		dcp_buf_free(&b);
		errno = ENOMEM;
		return NULL;
	}
	return b.data;
}

/* ---- restore ---- */

/* A mount a restore looks up from: its root, opened once. */
struct mroot {
	int id;
	int fd;		/* O_PATH of its root, or -errno why there is none */
	size_t tlen;	/* its mount point's length */
};

/* One entry's work in a batch. */
struct item {
	size_t entry;
	size_t group;	/* its directory's in the batch, or NO_GROUP */
	int err;
	enum dcp_pages_limit left_out; /* a limit left some of its data out */
	struct dcp_pages_plan plan;
};

/*
 * A restore is a walk: the entries of one directory that come together in
 * a batch (a snapshot writes a directory's entries together) are a group,
 * whose directory is looked up once from its mount's root and each name
 * from its descriptor, on any thread.  A group of many names has its
 * directory's blocks read ahead first, once in the run, as a walk reads
 * them before listing it (dcp_dirra_dir()): the lookups then find them in
 * memory instead of reading them one at a time.
 */
#define NO_GROUP ((size_t)-1)
#define GROUP_LIST_MIN 32 /* names of a group whose directory is read ahead */
#define LISTED_MAX 64	  /* directories remembered as read ahead (the latest) */

struct group {
	size_t lead;	/* its first entry: the text before NAME names the directory */
	size_t name;	/* where the name begins in each of its entries' paths */
	size_t n;	/* its entries */
	bool open;	/* its directory is to be opened (make_groups()) */
	int fd;		/* O_PATH of the directory, or -errno (-1: not opened): each
			 * entry looked up alone */
};

struct restore {
	const struct dcp_manifest *m;
	const struct dcp_manifest_restore_opts *o;
	struct dcp_pages_run *pages; /* this restore's: an inode planned once */
	pthread_mutex_t lock; /* mroots and reports */
	struct mroot *mr;
	size_t nmr;
	struct item *items;
	size_t nitems;
	size_t *order;	     /* the read phase's order */
	size_t norder;
	struct group *groups; /* the batch's directories */
	size_t ngroups;
	size_t maxgroups;     /* of them, held open at once (fit_descriptors()) */
	struct { dev_t dev; ino_t ino; } listed[LISTED_MAX]; /* under lock */
	size_t nlisted;
	struct dcp_dirra ra;	/* the devices met by read_ahead_once() */
	_Atomic size_t next;
	int phase;	     /* 0 directories, 1 look up and plan, 2 read, 3 stop */
	unsigned gen, running;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	_Atomic uint64_t entries, errors, changed, files, left_out;
};

/*
 * The root of the mount that PATH's text lies on, and that mount's
 * mount-point length: every mount from it up to "/" must be one where a
 * lookup does not wait on a daemon or a server.
 */
static int mount_root(struct restore *r, const char *path, size_t *tlen)
{
	struct dcp_mount mt, up;
	int fd, ret;

	ret = dcp_mounts_by_path(r->o->mounts, path, &mt);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->nmr; i++)
		if (r->mr[i].id == mt.id) {
			*tlen = r->mr[i].tlen;
			fd = r->mr[i].fd;
			pthread_mutex_unlock(&r->lock);
			return fd;
		}
	fd = 0;
	up = mt;
	for (;;) {
		char *parent;
		const char *slash;

		if (!dcp_pages_fstype_opens_safely(up.fstype)) {
			fd = -EREMOTE;
			break;
		}
		if (!strcmp(up.target, "/"))
			break;
		slash = strrchr(up.target, '/');
		parent = slash && slash != up.target ? strndup(up.target, (size_t)(slash - up.target)) :
			 strdup("/");
		if (!parent) {
			fd = -ENOMEM;
			break;
		}
		ret = dcp_mounts_by_path(r->o->mounts, parent, &up);
		free(parent);
		if (ret < 0) {
			fd = ret;
			break;
		}
	}
	/* Files the kernel makes up (proc, sysfs...) are not a manifest's to read. */
	if (fd == 0 && dcp_fs_is_pseudo(mt.fstype))
		fd = -EOPNOTSUPP;
	if (fd == 0) {
		/* The mount point's text names it: no symlink is followed. */
		fd = dcp_openat2(AT_FDCWD, mt.target, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				 RESOLVE_NO_SYMLINKS);
		if (fd >= 0 && dcp_mnt_id(fd) != (uint64_t)mt.id && dcp_mnt_id(fd) != 0) {
			close(fd);
			fd = -EXDEV; /* another mount over it since the table was read */
		}
	}
	struct mroot *v = realloc(r->mr, (r->nmr + 1) * sizeof(*v));

	if (v) {
		r->mr = v;
		r->mr[r->nmr++] = (struct mroot){ mt.id, fd, strlen(mt.target) };
	} else if (fd >= 0) {
		close(fd);
		fd = -ENOMEM;
	}
	*tlen = strlen(mt.target);
	pthread_mutex_unlock(&r->lock);
	return fd;
}

/*
 * Say what befell ENTRY: an error ERR (-ESTALE: why in WHY), or with ERR 0
 * a limit LEFT_OUT.
 */
static void report(struct restore *r, size_t entry, int err, enum dcp_pages_stale why,
		   enum dcp_pages_limit left_out)
{
	char changed[128];
	const char *what = err == ESTALE && dcp_pages_stale_text(why) ?
			   (snprintf(changed, sizeof(changed), "%s, not restored (%s)",
				     DCP_PAGES_MSG_CHANGED, dcp_pages_stale_text(why)), changed) :
			   err == ESTALE ? DCP_PAGES_MSG_CHANGED ", not restored" :
			   err == ENODEV ? "not a regular file now, not restored" :
			   err == EREMOTE ? "on a filesystem where a lookup may wait (FUSE, NFS...), "
					    "not restored" :
			   err == EOPNOTSUPP ? "on a pseudo filesystem (proc, sysfs...), not restored" :
			   err == EXDEV ? "reached through another mount, not restored" :
			   err == EINVAL ? "a path with '..' is not restored" :
			   left_out == DCP_PAGES_LIMIT_BYTES ? "left out by --max-bytes, not restored" :
			   left_out == DCP_PAGES_LIMIT_FILE_SIZE ?
				   "larger than --max-file-size, not restored" : NULL;
	struct dcp_manifest_event ev = { &r->m->v[entry], err, what, err ? 0 : left_out };

	if (!err) {
		atomic_fetch_add(&r->left_out, 1);
	} else {
		atomic_fetch_add(&r->errors, 1);
		if (err == ESTALE)
			atomic_fetch_add(&r->changed, 1);
	}
	if (!r->o->report)
		return;
	pthread_mutex_lock(&r->lock);
	r->o->report(&ev, r->o->arg);
	pthread_mutex_unlock(&r->lock);
}

/*
 * Look IT's entry up as REST from DIRFD (its mount's root, or its
 * directory on that mount), never leaving that mount; plan a file's
 * reads.  Returns what IT->err says, negated.
 */
static int plan_at(struct restore *r, struct item *it, int dirfd, const char *rest)
{
	const struct dcp_manifest_entry *e = &r->m->v[it->entry];
	int fd;

	if (e->has_identity && e->nranges && e->state == DCP_CACHED && r->o->pages) {
		fd = dcp_pages_plan_at(r->pages, dirfd, rest, &e->identity,
				       (const uint64_t (*)[2])e->ranges, e->nranges, &it->plan);
		if (fd == 0)
			atomic_fetch_add(&r->files, 1);
	} else {
		fd = dcp_openat2(dirfd, rest, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0,
				 RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS);
		if (fd >= 0)
			close(fd);
		/* An absent name looked up is what a negative entry records. */
		if (fd == -ENOENT && e->state == DCP_NEGATIVE)
			fd = 0;
	}
	it->err = fd < 0 ? -fd : 0;
	return fd < 0 ? fd : 0;
}

/*
 * Read directory FD's (O_PATH) blocks ahead, once in the run, as a walk
 * reads them before listing it (dcp_dirra_dir()), before its names are
 * looked up one by one.
 */
static void read_ahead_once(struct restore *r, int fd)
{
	struct stat st;
	size_t i;
	int dfd;

	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->nlisted && i < LISTED_MAX; i++)
		if (r->listed[i].dev == st.st_dev && r->listed[i].ino == st.st_ino)
			break;
	if (i == r->nlisted || i == LISTED_MAX) {
		r->listed[r->nlisted % LISTED_MAX].dev = st.st_dev;
		r->listed[r->nlisted % LISTED_MAX].ino = st.st_ino;
		r->nlisted++;
		i = LISTED_MAX + 1; /* not seen: list it */
	}
	pthread_mutex_unlock(&r->lock);
	if (i != LISTED_MAX + 1)
		return;
	/* "." of the checked descriptor: the directory itself, no name looked up. */
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (dfd < 0)
		return;
	dcp_dirra_dir(&r->ra, dfd, &st);
	close(dfd);
}

/* Phase 0 for one group: its directory looked up from its mount's root. */
static void group_open(struct restore *r, struct group *g)
{
	const struct dcp_manifest_entry *e = &r->m->v[g->lead];
	char *dir = g->name > 1 ? strndup(e->path, g->name - 1) : strdup(g->name ? "/" : ".");
	char *abs = dir ? dcp_manifest_lexical(dir) : NULL;
	const char *rest;
	size_t tlen = 0;
	int root;

	free(dir);
	g->fd = -ENOMEM;
	if (!abs)
		return;
	root = mount_root(r, abs, &tlen);
	if (root >= 0) {
		rest = abs + tlen;
		while (*rest == '/')
			rest++;
		g->fd = dcp_openat2(root, *rest ? rest : ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
				    RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS);
		if (g->fd >= 0 && g->n >= GROUP_LIST_MIN)
			read_ahead_once(r, g->fd);
	}
	free(abs);
}

/* Where ENTRY's name begins after its directory's text; 0 with no name of its own. */
static bool name_of(const struct dcp_manifest_entry *e, size_t *name)
{
	const char *s = memrchr(e->path, '/', e->len), *n = s ? s + 1 : e->path;

	if (!*n || !strcmp(n, ".") || !strcmp(n, ".."))
		return false;
	*name = (size_t)(n - e->path);
	return true;
}

/*
 * The batch's items in groups: consecutive entries of one directory's
 * text.  Only a group of several names has its directory opened, and
 * only as many as R->maxgroups; the others' entries are looked up alone.
 * Returns the number to open.
 */
static size_t make_groups(struct restore *r)
{
	struct group *g = NULL;
	size_t open = 0;

	r->ngroups = 0;
	for (size_t i = 0; i < r->nitems; i++) {
		struct item *it = &r->items[i];
		const struct dcp_manifest_entry *e = &r->m->v[it->entry];
		size_t name;

		it->group = NO_GROUP;
		if (!name_of(e, &name))
			continue;
		if (g && g->name == name && !memcmp(r->m->v[g->lead].path, e->path, name)) {
			g->n++;
		} else {
			g = &r->groups[r->ngroups++];
			*g = (struct group){ .lead = it->entry, .name = name, .n = 1, .fd = -1 };
		}
		it->group = (size_t)(g - r->groups);
	}
	for (size_t i = 0; i < r->ngroups; i++) {
		r->groups[i].open = r->groups[i].n > 1 && open < r->maxgroups;
		open += r->groups[i].open;
	}
	return open;
}

static void close_groups(struct restore *r)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i].fd >= 0)
			close(r->groups[i].fd);
	r->ngroups = 0;
}

/* Phase 1 for one entry: look it up from its directory or its mount's root; plan a file's reads. */
static void plan_one(struct restore *r, struct item *it)
{
	const struct dcp_manifest_entry *e = &r->m->v[it->entry];
	char *abs;
	const char *rest;
	size_t tlen = 0;
	int root;

	it->err = 0;
	it->left_out = DCP_PAGES_LIMIT_NONE;
	it->plan.fd = -1;
	it->plan.stale = DCP_PAGES_STALE_NONE;
	if (it->group != NO_GROUP && r->groups[it->group].fd >= 0) {
		/* From its directory's descriptor; a name that is a mount point
		 * (EXDEV: it is not on that mount) is looked up alone, below. */
		if (plan_at(r, it, r->groups[it->group].fd, e->path + r->groups[it->group].name) !=
		    -EXDEV)
			return;
		it->err = 0;
		it->plan.stale = DCP_PAGES_STALE_NONE;
	}
	abs = dcp_manifest_lexical(e->path);
	if (!abs) {
		it->err = errno;
		return;
	}
	root = mount_root(r, abs, &tlen);
	if (root < 0) {
		it->err = -root;
		free(abs);
		return;
	}
	rest = abs + tlen;
	while (*rest == '/')
		rest++;
	if (!*rest)
		rest = ".";
	plan_at(r, it, root, rest);
	free(abs);
}

/* Take items of PHASE (1 look up and plan, 2 read) until none is left. */
static void work(struct restore *r, int phase)
{
	for (;;) {
		size_t i = atomic_fetch_add(&r->next, 1);

		if (phase == 0 && i < r->ngroups) {
			if (r->groups[i].open)
				group_open(r, &r->groups[i]);
		} else if (phase == 1 && i < r->nitems) {
			plan_one(r, &r->items[i]);
		} else if (phase == 2 && i < r->norder) {
			struct item *it = &r->items[r->order[i]];
			int ret = dcp_pages_plan_read(&it->plan, r->o->pages);

			if (ret < 0)
				it->err = -ret;
			else
				it->left_out = (enum dcp_pages_limit)ret;
		} else {
			return;
		}
	}
}

static void *worker(void *arg)
{
	struct restore *r = arg;
	unsigned seen = 0;

	for (;;) {
		int phase;

		pthread_mutex_lock(&r->mu);
		while (r->gen == seen)
			pthread_cond_wait(&r->go, &r->mu);
		seen = r->gen;
		phase = r->phase;
		pthread_mutex_unlock(&r->mu);
		if (phase == 3)
			return NULL;
		work(r, phase);
		pthread_mutex_lock(&r->mu);
		if (--r->running == 0)
			pthread_cond_signal(&r->done);
		pthread_mutex_unlock(&r->mu);
	}
}

/*
 * Run PHASE on every thread and wait for all of them; with no thread (none
 * could be made), on the calling one.
 */
static void run_phase(struct restore *r, unsigned threads, int phase)
{
	if (!threads) {
		atomic_store(&r->next, 0);
		if (phase != 3)
			work(r, phase);
		return;
	}
	pthread_mutex_lock(&r->mu);
	atomic_store(&r->next, 0);
	r->phase = phase;
	r->running = threads;
	r->gen++;
	pthread_cond_broadcast(&r->go);
	while (phase != 3 && r->running)
		pthread_cond_wait(&r->done, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

/* Device order of ITEMS' indices: the physical offset where the reads begin, then the file. */
static int cmp_order(const void *a, const void *b, void *items)
{
	const struct item *x = (const struct item *)items + *(const size_t *)a;
	const struct item *y = (const struct item *)items + *(const size_t *)b;

	if (x->plan.physical != y->plan.physical)
		return x->plan.physical < y->plan.physical ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* What a thread holds open at once: a look, the file read, its ring, one spare. */
#define FDS_PER_THREAD 4
#define MAX_BATCH 1024

/*
 * Fit *THREADS and *BATCH (files held open between planning and reading)
 * in RLIMIT_NOFILE: beyond a reserve (standard streams, the mount roots,
 * the library's own), the threads take at most half of what is left and
 * the batch the rest, so that any -j completes under any limit.  An
 * eighth of the batch's share goes to *GROUPS, the directories held open
 * while their names are looked up (none under a small limit).
 */
static void fit_descriptors(unsigned *threads, size_t *batch, size_t *groups)
{
	struct rlimit rl;
	size_t avail = 4096, t;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		avail = rl.rlim_cur > 64 ? (size_t)rl.rlim_cur - 32 : (size_t)rl.rlim_cur / 2;
	t = avail / 2 / FDS_PER_THREAD;
	if (t < *threads)
		*threads = t ? (unsigned)t : 1;
	*batch = avail > *threads * FDS_PER_THREAD ? avail - *threads * FDS_PER_THREAD : 1;
	*groups = *batch / 8;
	*batch -= *groups;
	if (*batch > MAX_BATCH)
		*batch = MAX_BATCH;
	if (*groups > MAX_BATCH / 4)
		*groups = MAX_BATCH / 4;
}

/* The address space a restore keeps from its threads' stacks under ulimit -v. */
#define RESERVE (24u << 20)

/* A restore of M whole, or of what X reads, a window at a time. */
static int restore_run(const struct dcp_manifest *m, struct dcp_manifest_reader *x,
		       const struct dcp_manifest_restore_opts *o, struct dcp_manifest_restore_stats *st)
{
	struct dcp_manifest_restore_opts own = *o;
	struct dcp_mounts *own_mounts = NULL;
	struct restore r = {
		.m = m, .o = &own,
		.lock = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER,
		.go = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER,
	};
	unsigned want = o->threads ? o->threads : dcp_warm_default_threads(), threads = 0;
	uint64_t t0 = dcp_now_ns();
	pthread_t *tids;
	size_t batch, pos = 0, end, recorded = 0;
	void *reserve = MAP_FAILED;
	struct rlimit as;
	int ret = 0;

	*st = (struct dcp_manifest_restore_stats){ 0 };
	if (want > 4096)
		return -EINVAL;
	/* No table given: this call reads one, and frees it at its end. */
	if (!own.mounts) {
		ret = dcp_mounts_load(NULL, &own_mounts);
		if (ret < 0)
			return ret;
		own.mounts = own_mounts;
	}
	o = &own;
	if (o->pages) {
		struct dcp_pages_run_opts po = { .mounts = o->mounts };

		ret = dcp_pages_run_new(&po, &r.pages);
		if (ret < 0) {
			dcp_mounts_free(own_mounts);
			return ret;
		}
	}
	fit_descriptors(&want, &batch, &r.maxgroups);
	tids = calloc(want, sizeof(*tids));
	r.items = calloc(batch, sizeof(*r.items));
	r.order = calloc(batch, sizeof(*r.order));
	r.groups = calloc(batch, sizeof(*r.groups));
	dcp_dirra_init(&r.ra);
	if (!tids || !r.items || !r.order || !r.groups) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < batch; i++)
		r.items[i].plan.fd = -1;
	/*
	 * Fewer threads when the system refuses that many (a task limit, the
	 * address space): with none, the calling thread does the work.  Under
	 * an address-space limit (ulimit -v) the threads' stacks would take
	 * all there is: RESERVE is kept out of their reach meanwhile, for what
	 * the run itself needs (a window of records, the longest record, the
	 * reads' rings).
	 */
	if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
		reserve = mmap(NULL, RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
	for (; threads < want; threads++) {
		if (dcp_thread_create(&tids[threads], worker, &r))
			break;
	}
	if (reserve != MAP_FAILED)
		munmap(reserve, RESERVE);
	for (;;) {
		/* The next batch: BATCH entries of M, or X's next window. */
		if (x) {
			int n = dcp_manifest_next(x, batch, &r.m);

			if (n <= 0) {
				ret = n;
				break;
			}
			pos = 0;
			end = (size_t)n;
		} else if (pos < m->n) {
			end = m->n - pos > batch ? pos + batch : m->n;
		} else {
			break;
		}
		recorded += end - pos;
		r.nitems = 0;
		for (; pos < end; pos++) {
			if (dcp_manifest_counted(&r.m->v[pos])) {
				r.items[r.nitems++].entry = pos;
			} else {
				st->skipped++;
				st->skipped_errors += r.m->v[pos].state == DCP_ERROR;
			}
		}
		/* A phase wakes every thread: none without work, and one
		 * directory is opened here. */
		if (make_groups(&r) > 1)
			run_phase(&r, threads, 0);
		else
			run_phase(&r, 0, 0);
		run_phase(&r, threads, 1);
		close_groups(&r);
		r.norder = 0;
		for (size_t i = 0; i < r.nitems; i++) {
			struct item *it = &r.items[i];

			if (it->err)
				report(&r, it->entry, it->err, it->plan.stale, DCP_PAGES_LIMIT_NONE);
			else
				atomic_fetch_add(&r.entries, 1);
			if (it->plan.fd >= 0)
				r.order[r.norder++] = i;
		}
		qsort_r(r.order, r.norder, sizeof(*r.order), cmp_order, r.items);
		if (r.norder)
			run_phase(&r, threads, 2);
		for (size_t i = 0; i < r.norder; i++) {
			struct item *it = &r.items[r.order[i]];

			if (it->err) {
				report(&r, it->entry, it->err, it->plan.stale, DCP_PAGES_LIMIT_NONE);
				atomic_fetch_sub(&r.entries, 1);
			} else if (it->left_out) {
				/* Looked up, its data not all back: named, not an error. */
				report(&r, it->entry, 0, DCP_PAGES_STALE_NONE, it->left_out);
			}
		}
	}
	run_phase(&r, threads, 3);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
out:
	for (size_t i = 0; r.items && i < batch; i++)
		dcp_pages_plan_free(&r.items[i].plan);
	for (size_t i = 0; i < r.nmr; i++)
		if (r.mr[i].fd >= 0)
			close(r.mr[i].fd);
	free(r.mr);
	free(r.items);
	free(r.order);
	free(r.groups);
	dcp_dirra_fini(&r.ra);
	free(tids);
	dcp_pages_run_free(r.pages);
	dcp_mounts_free(own_mounts);
	st->recorded = recorded;
	st->entries = atomic_load(&r.entries);
	st->errors = atomic_load(&r.errors);
	st->changed = atomic_load(&r.changed);
	st->files = atomic_load(&r.files);
	st->left_out = atomic_load(&r.left_out);
	st->jobs = threads ? threads : 1;
	st->elapsed_ns = dcp_now_ns() - t0;
	return ret;
}

int dcp_manifest_restore(const struct dcp_manifest *m, const struct dcp_manifest_restore_opts *o,
			 struct dcp_manifest_restore_stats *st)
{
	return restore_run(m, NULL, o, st);
}

int dcp_manifest_restore_from(struct dcp_manifest_reader *x,
			      const struct dcp_manifest_restore_opts *o,
			      struct dcp_manifest_restore_stats *st)
{
	return restore_run(NULL, x, o, st);
}
