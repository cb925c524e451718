/* SPDX-License-Identifier: MIT */
/*
 * json_check.h - a strict RFC 8259 validator for the fuzz targets: one
 * JSON value (objects, arrays, strings with escapes, numbers, literals),
 * nothing but whitespace around it, strings valid UTF-8 without raw
 * control characters and without lone surrogate escapes.  Recursion is
 * bounded (depth 64).
 */
#ifndef DCP_JSON_CHECK_H
#define DCP_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "dcp_report.h"

struct jc {
	const unsigned char *s;
	size_t n, i;
	int depth;
};

static bool jc_value(struct jc *j);

static void jc_ws(struct jc *j)
{
	while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' ||
			       j->s[j->i] == '\n' || j->s[j->i] == '\r'))
		j->i++;
}

static bool jc_lit(struct jc *j, const char *lit)
{
	size_t l = strlen(lit);

	if (j->n - j->i < l || memcmp(j->s + j->i, lit, l) != 0)
		return false;
	j->i += l;
	return true;
}

static int jc_hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool jc_u4(struct jc *j, unsigned *v)
{
	*v = 0;
	if (j->n - j->i < 4)
		return false;
	for (int k = 0; k < 4; k++) {
		int h = jc_hex(j->s[j->i + k]);
		if (h < 0)
			return false;
		*v = *v << 4 | (unsigned)h;
	}
	j->i += 4;
	return true;
}

static bool jc_string(struct jc *j)
{
	size_t start;

	if (j->i >= j->n || j->s[j->i] != '"')
		return false;
	start = ++j->i;
	while (j->i < j->n && j->s[j->i] != '"') {
		unsigned c = j->s[j->i], v, w;

		if (c < 0x20)
			return false;
		if (c != '\\') {
			j->i++;
			continue;
		}
		if (++j->i >= j->n)
			return false;
		c = j->s[j->i++];
		if (c == 'u') {
			if (!jc_u4(j, &v))
				return false;
			if (v >= 0xdc00 && v <= 0xdfff)
				return false; /* a lone low surrogate */
			if (v >= 0xd800 && v <= 0xdbff) {
				if (!jc_lit(j, "\\u") || !jc_u4(j, &w) || w < 0xdc00 || w > 0xdfff)
					return false;
			}
		} else if (!strchr("\"\\/bfnrt", (int)c) || c == 0) {
			return false;
		}
	}
	if (j->i >= j->n)
		return false;
	if (!dcp_utf8_valid((const char *)j->s + start, j->i - start))
		return false;
	j->i++;
	return true;
}

static bool jc_number(struct jc *j)
{
	size_t d;

	if (j->i < j->n && j->s[j->i] == '-')
		j->i++;
	if (j->i >= j->n)
		return false;
	if (j->s[j->i] == '0') {
		j->i++;
	} else {
		for (d = 0; j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9'; d++)
			j->i++;
		if (!d)
			return false;
	}
	if (j->i < j->n && j->s[j->i] == '.') {
		j->i++;
		for (d = 0; j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9'; d++)
			j->i++;
		if (!d)
			return false;
	}
	if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
		j->i++;
		if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
			j->i++;
		for (d = 0; j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9'; d++)
			j->i++;
		if (!d)
			return false;
	}
	return true;
}

static bool jc_container(struct jc *j, char open, char close, bool object)
{
	if (++j->depth > 64)
		return false;
	j->i++; /* open */
	(void)open;
	jc_ws(j);
	if (j->i < j->n && j->s[j->i] == (unsigned char)close) {
		j->i++;
		j->depth--;
		return true;
	}
	for (;;) {
		jc_ws(j);
		if (object) {
			if (!jc_string(j))
				return false;
			jc_ws(j);
			if (j->i >= j->n || j->s[j->i] != ':')
				return false;
			j->i++;
		}
		if (!jc_value(j))
			return false;
		jc_ws(j);
		if (j->i >= j->n)
			return false;
		if (j->s[j->i] == ',') {
			j->i++;
			continue;
		}
		if (j->s[j->i] != (unsigned char)close)
			return false;
		j->i++;
		j->depth--;
		return true;
	}
}

static bool jc_value(struct jc *j)
{
	jc_ws(j);
	if (j->i >= j->n)
		return false;
	switch (j->s[j->i]) {
	case '{': return jc_container(j, '{', '}', true);
	case '[': return jc_container(j, '[', ']', false);
	case '"': return jc_string(j);
	case 't': return jc_lit(j, "true");
	case 'f': return jc_lit(j, "false");
	case 'n': return jc_lit(j, "null");
	default: return jc_number(j);
	}
}

/* json_valid - S[0..N) is exactly one JSON value (whitespace around it). */
static inline bool json_valid(const char *s, size_t n)
{
	struct jc j = { (const unsigned char *)s, n, 0, 0 };

	if (!jc_value(&j))
		return false;
	jc_ws(&j);
	return j.i == n;
}

#endif
