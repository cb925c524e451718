// SPDX-License-Identifier: MIT
/*
 * fuzz_probe_report - dcache-probe's records (lib/probe_report.c) for any
 * path bytes, probe result, d_type, depth and terminal width.
 *
 * Properties: text records (entries, --per-dir rows) are one line, valid
 * UTF-8, with nothing a terminal interprets (TAB only as the table's
 * separator); JSON records are one line holding exactly one JSON object
 * (strict RFC 8259 validator, json_check.h) whose "path" decodes back to
 * the input; NUL records are the raw path and one NUL; a progress line is
 * "\r ESC [ K" and then terminal-safe text no wider than WIDTH bytes.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcp_cmd.h"
#include "json_check.h"

#define ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

static bool unsafe(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x200e || cp == 0x200f;
}

/* One line: valid UTF-8, the only control the final newline (TAB allowed
 * in text tables). */
static void check_line(const char *s, size_t n, bool tab_ok)
{
	const unsigned char *u = (const unsigned char *)s;

	ASSERT(n > 0 && s[n - 1] == '\n');
	ASSERT(dcp_utf8_valid(s, n));
	for (size_t i = 0; i + 1 < n;) {
		uint32_t cp;
		size_t len;

		if (u[i] < 0x80) {
			cp = u[i], len = 1;
		} else {
			len = (u[i] & 0xe0) == 0xc0 ? 2 : (u[i] & 0xf0) == 0xe0 ? 3 : 4;
			cp = u[i] & (0x7f >> len);
			for (size_t k = 1; k < len; k++)
				cp = cp << 6 | (u[i + k] & 0x3f);
		}
		ASSERT(!unsafe(cp) || (tab_ok && cp == '\t'));
		i += len;
	}
}

static void check_json_line(const char *s, size_t n)
{
	check_line(s, n, false);
	ASSERT(s[0] == '{');
	ASSERT(json_valid(s, n - 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int rets[] = { 0, -2, -11, -20, -40, -13, -36, -24, -5, -4095 };
	struct dcp_buf b = DCP_BUF_INIT;
	const char *path;
	size_t len;
	int ret, depth;
	unsigned char dtype;

	if (size < 3)
		return 0;
	ret = rets[data[0] % 10];
	dtype = data[1] % 16;
	depth = data[2];
	path = (const char *)data + 3;
	len = size - 3;

	dcp_pr_entry(&b, DCP_PR_TEXT, path, len, ret, dtype, depth);
	check_line(b.data, b.len, false);
	ASSERT(memchr(b.data, '\n', b.len) == b.data + b.len - 1);

	dcp_buf_reset(&b);
	dcp_pr_entry(&b, DCP_PR_JSON, path, len, ret, dtype, depth);
	check_json_line(b.data, b.len);

	dcp_buf_reset(&b);
	dcp_pr_walk_error(&b, DCP_PR_JSON, path, len, -ret ? -ret : 5);
	check_json_line(b.data, b.len);

	dcp_buf_reset(&b);
	dcp_pr_unvisited(&b, DCP_PR_TEXT, path, len, ret, depth);
	check_line(b.data, b.len, false);
	ASSERT(memchr(b.data, '\n', b.len) == b.data + b.len - 1);
	dcp_buf_reset(&b);
	dcp_pr_unvisited(&b, DCP_PR_JSON, path, len, ret, depth);
	check_json_line(b.data, b.len);

	struct dcp_pr_counts c = { .n = { data[0], data[1], data[2], len },
				   .not_visited = data[1], .walk_errors = data[0] };
	dcp_buf_reset(&b);
	dcp_pr_dir(&b, DCP_PR_TEXT, path, len, depth, &c);
	check_line(b.data, b.len, true);
	ASSERT(memchr(b.data, '\n', b.len) == b.data + b.len - 1);
	dcp_buf_reset(&b);
	dcp_pr_dir(&b, DCP_PR_JSON, path, len, depth, &c);
	check_json_line(b.data, b.len);

	/* A progress line: the path may hold NUL bytes here; cut at the first. */
	unsigned width = data[2] % 2 ? 0 : 20 + data[1] % 200;
	char *cpath = strndup(path, len);
	ASSERT(cpath);
	dcp_buf_reset(&b);
	dcp_pr_progress(&b, (unsigned long long)len * 1000, data[0] * 10.5, cpath, width);
	ASSERT(b.len >= 4 && memcmp(b.data, "\r\033[K", 4) == 0);
	dcp_buf_putc(&b, '\n');
	check_line(b.data + 4, b.len - 4, false);
	if (width) {
		/* The path never reaches the last column (the counts alone may,
		 * on an absurdly narrow terminal: then no path is shown). */
		const char *colon = memmem(b.data, b.len, ": ", 2);
		size_t head = colon ? (size_t)(colon + 2 - b.data) - 4 : 0;

		ASSERT(colon);
		ASSERT(b.len - 5 < width || b.len - 5 == head);
	}
	free(cpath);

	dcp_buf_reset(&b);
	dcp_pr_entry(&b, DCP_PR_NUL, path, len, ret, dtype, depth);
	ASSERT(b.len == len + 1 && b.data[len] == '\0' && memcmp(b.data, path, len) == 0);
	dcp_buf_free(&b);
	return 0;
}
