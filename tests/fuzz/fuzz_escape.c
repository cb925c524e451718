// SPDX-License-Identifier: MIT
/*
 * fuzz_escape - the output escapings of lib/report.c against arbitrary
 * names (a file name is any bytes but '/' and NUL; we allow both).
 *
 * Properties:
 *  - dcp_buf_quote: the output is valid UTF-8 and holds no C0 control, no
 *    DEL, no C1 control, no bidi override (nothing a terminal interprets);
 *    it equals the input exactly when dcp_needs_quote() says "no".
 *  - dcp_buf_json_str: the output is one JSON value that a strict parser
 *    (below) accepts whole: a string that decodes back to the input, or,
 *    only for input that is not UTF-8, {"bytes":"BASE64"} whose base64
 *    decodes back to the input.  No raw control or unsafe code point.
 *  - dcp_buf_prom_label: no newline, every '"' escaped, valid UTF-8, no
 *    control or unsafe code point.
 *  - dcp_buf_base64: decodes back to the input.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcprobe.h"
#include "json_check.h"

#define ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

/* Decode one UTF-8 sequence (input known valid); returns its length. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	size_t len = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : 4;
	uint32_t c = s[0] & (0x7f >> len);

	ASSERT(len <= n);
	for (size_t i = 1; i < len; i++)
		c = (c << 6) | (s[i] & 0x3f);
	*cp = c;
	return len;
}

static bool unsafe(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f;
}

/* Output text must be valid UTF-8 without unsafe code points (ALLOW: one
 * code point that is allowed anyway, e.g. nothing). */
static void check_terminal_safe(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;

	ASSERT(dcp_utf8_valid(s, n));
	for (size_t i = 0; i < n;) {
		i += utf8_next(u + i, n - i, &cp);
		ASSERT(!unsafe(cp));
	}
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Strict RFC 4648 decoding (padding required); returns bytes or -1. */
static long b64decode(const char *s, size_t n, unsigned char *out)
{
	size_t o = 0;

	if (n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		int pad = 0;

		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else {
				if (pad)
					return -1;
				v[k] = b64val((unsigned char)s[i + k]);
				if (v[k] < 0)
					return -1;
			}
		}
		uint32_t w = (uint32_t)v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3];
		out[o++] = (unsigned char)(w >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(w >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)w;
	}
	return (long)o;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * A strict JSON string parser (RFC 8259): S[*POS] must be '"'; decodes
 * into OUT (UTF-8) and advances *POS past the closing quote.  Returns the
 * decoded length, or -1 for anything a JSON parser would reject.
 */
static long json_string(const char *s, size_t n, size_t *pos, unsigned char *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = *pos, o = 0;
	uint32_t cp;

	if (i >= n || s[i] != '"')
		return -1;
	for (i++; i < n;) {
		if (u[i] == '"') {
			*pos = i + 1;
			return (long)o;
		}
		if (u[i] < 0x20)
			return -1; /* raw control characters are invalid JSON */
		if (u[i] != '\\') {
			size_t len = utf8_next(u + i, n - i, &cp);

			memcpy(out + o, u + i, len);
			o += len;
			i += len;
			continue;
		}
		if (++i >= n)
			return -1;
		switch (s[i++]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			if (i + 4 > n)
				return -1;
			cp = 0;
			for (int k = 0; k < 4; k++) {
				int h = hexval(u[i + k]);
				if (h < 0)
					return -1;
				cp = cp << 4 | (uint32_t)h;
			}
			i += 4;
			/* We never emit surrogates: a lone one would not be UTF-8. */
			if (cp >= 0xd800 && cp <= 0xdfff)
				return -1;
			o += put_utf8(out + o, cp);
			break;
		default:
			return -1;
		}
	}
	return -1; /* unterminated */
}

static void check_json(const char *in, size_t n, const char *s, size_t len)
{
	unsigned char *dec = malloc(len * 4 + 4);
	size_t pos = 0;
	long got;

	ASSERT(dec);
	ASSERT(len > 0);
	ASSERT(json_valid(s, len)); /* the whole value, by a general parser */
	check_terminal_safe(s, len);
	if (s[0] == '"') {
		ASSERT(dcp_utf8_valid(in, n));
		got = json_string(s, len, &pos, dec);
		ASSERT(got >= 0 && pos == len);
		ASSERT((size_t)got == n && memcmp(dec, in, n) == 0);
	} else {
		static const char pre[] = "{\"bytes\":\"";

		ASSERT(!dcp_utf8_valid(in, n));
		ASSERT(len >= sizeof(pre) + 1);
		ASSERT(memcmp(s, pre, sizeof(pre) - 1) == 0);
		ASSERT(s[len - 1] == '}' && s[len - 2] == '"');
		got = b64decode(s + sizeof(pre) - 1, len - (sizeof(pre) - 1) - 2, dec);
		ASSERT(got >= 0 && (size_t)got == n && memcmp(dec, in, n) == 0);
	}
	free(dec);
}

static void check_label(const char *s, size_t len)
{
	check_terminal_safe(s, len);
	for (size_t i = 0; i < len; i++) {
		ASSERT(s[i] != '\n');
		if (s[i] == '\\') {
			ASSERT(i + 1 < len);
			ASSERT(s[i + 1] == '\\' || s[i + 1] == '"' || s[i + 1] == 'n');
			i++;
		} else {
			ASSERT(s[i] != '"');
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	struct dcp_buf b = DCP_BUF_INIT;
	unsigned char *dec;
	long got;

	dcp_buf_quote(&b, in, size);
	ASSERT(!b.oom);
	check_terminal_safe(b.data ? b.data : "", b.len);
	ASSERT(dcp_needs_quote(in, size) ==
	       !(b.len == size && (size == 0 || memcmp(b.data, in, size) == 0)));

	dcp_buf_reset(&b);
	dcp_buf_json_str(&b, in, size);
	check_json(in, size, b.data, b.len);

	dcp_buf_reset(&b);
	dcp_buf_prom_label(&b, in, size);
	check_label(b.data ? b.data : "", b.len);

	dcp_buf_reset(&b);
	dcp_buf_base64(&b, in, size);
	ASSERT(b.len == (size + 2) / 3 * 4);
	dec = malloc(size + 4);
	ASSERT(dec);
	got = b64decode(b.data ? b.data : "", b.len, dec);
	ASSERT(got >= 0 && (size_t)got == size && (size == 0 || memcmp(dec, in, size) == 0));
	free(dec);
	dcp_buf_free(&b);
	return 0;
}
