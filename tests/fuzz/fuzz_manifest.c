// SPDX-License-Identifier: MIT
/*
 * fuzz_manifest - dcp_manifest_fread over arbitrary input: a residency
 * manifest is a file anyone may have edited (warm --manifest,
 * dcache-probe --manifest), read through fmemopen.
 *
 * Properties: no crash, no leak, no hang; every entry kept has a
 * non-empty path of its stated length without a NUL byte, a cached or
 * negative... state in range, ranges of positive length that end within
 * 2^63 - 1 and only with an identity, a root that exists and is its path
 * or a prefix of it by components, a handle (format 2) of at most 128
 * bytes only with an identity; bad records are reported in ascending
 * order, each at most once, never past the last line; every line is read
 * (a line holding NUL bytes, one without its newline, the last one), and
 * the reader's count of lines is the input's, but for a manifest record
 * of a later format, where reading stops (said, and nothing after it).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcprobe.h"

#define ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	size_t last, lines;
	size_t stop;	/* the record of a later format, where reading stops */
};

static void bad(size_t record, const char *what, void *arg)
{
	struct seen *s = arg;

	ASSERT(record > s->last && record <= s->lines);
	ASSERT(what && *what);
	ASSERT(!s->stop); /* nothing is read after a later format */
	if (strstr(what, "later format"))
		s->stop = record;
	s->last = record;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dcp_manifest m = { 0 };
	struct seen s = { 0, 0, 0 };
	FILE *f;

	for (size_t i = 0; i < size; i++)
		s.lines += data[i] == '\n';
	s.lines += size && data[size - 1] != '\n';
	/* fmemopen refuses a zero-sized buffer: read /dev/null instead. */
	f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	ASSERT(f);
	ASSERT(dcp_manifest_fread(f, &m, bad, &s) == 0);
	fclose(f);
	/* Every line is read, up to a record of a later format. */
	ASSERT(m.lines == (s.stop ? s.stop : s.lines));
	for (size_t i = 0; i < m.n; i++) {
		const struct dcp_manifest_entry *e = &m.v[i];
		const char *root;
		size_t rl;

		ASSERT(e->len && strlen(e->path) == e->len);
		ASSERT((unsigned)e->state < DCP_NSTATES);
		ASSERT(e->record >= 1 && e->record <= s.lines);
		ASSERT(!e->nranges || e->has_identity);
		/* Format 2: a handle of 1 to 128 bytes, only with an identity. */
		ASSERT(e->identity.handle_len <= DCP_HANDLE_MAX);
		ASSERT(!e->identity.handle_len == !e->identity.handle);
		ASSERT(!e->identity.handle_len || e->has_identity);
		ASSERT(e->identity.fs.from == DCP_FSID_NONE || e->has_identity);
		for (size_t k = 0; k < e->nranges; k++) {
			ASSERT(e->ranges[k][1] > 0);
			ASSERT(e->ranges[k][0] + e->ranges[k][1] <= (uint64_t)INT64_MAX);
		}
		ASSERT(e->root < m.nroots);
		root = m.roots[e->root];
		rl = strlen(root);
		ASSERT(rl <= e->len && !memcmp(root, e->path, rl));
		ASSERT(rl == e->len || e->path[rl] == '/' || (rl == 1 && root[0] == '/'));
	}
	dcp_manifest_free(&m);
	return 0;
}
