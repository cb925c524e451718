// SPDX-License-Identifier: MIT
/*
 * fuzz_pathlist - dcp_pathlist over arbitrary input (a file given to
 * --from, or a pipe from find -print0), read through fmemopen.  The first
 * byte chooses the separator: odd for NUL, even for newline.
 *
 * Properties: the records returned are exactly the non-empty records of
 * the input, in order, each without its separator and NUL-terminated at
 * its length; a newline-separated record holding a NUL ends the list with
 * -EINVAL (bad input data) at that record; the record counter counts
 * empty records too; nothing leaks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcp_cmd.h"

#define ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dcp_pathlist *pl;
	const char *path;
	size_t len, off, records = 0;
	bool nul;
	FILE *f;
	int ret;

	if (size < 1)
		return 0;
	nul = data[0] & 1;
	data++, size--;
	/* fmemopen refuses a zero-sized buffer: read /dev/null instead. */
	f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	ASSERT(f);
	ASSERT(dcp_pathlist_fopen(f, nul, &pl) == 0);

	off = 0;
	for (;;) {
		/* The expected next record, from the raw input (empty ones too). */
		const uint8_t *rec = NULL;
		size_t rlen = 0;
		char sep = nul ? '\0' : '\n';

		if (off < size) {
			const uint8_t *end = memchr(data + off, sep, size - off);
			size_t n = end ? (size_t)(end - (data + off)) : size - off;

			records++;
			rec = data + off;
			rlen = n;
			off += n + (end ? 1 : 0);
		}
		ret = dcp_pathlist_next(pl, &path, &len);
		if (!rec) {
			ASSERT(ret == 0);
			break;
		}
		if (!rlen) {
			ASSERT(ret == -ENODATA);
			ASSERT(dcp_pathlist_record(pl) == records);
			continue;
		}
		if (!nul && memchr(rec, '\0', rlen)) {
			ASSERT(ret == -EINVAL);
			ASSERT(dcp_pathlist_record(pl) == records);
			break;
		}
		ASSERT(ret == 1);
		ASSERT(len == rlen && memcmp(path, rec, rlen) == 0);
		ASSERT(path[len] == '\0' && strlen(path) == len);
		ASSERT(dcp_pathlist_record(pl) == records);
	}
	dcp_pathlist_close(pl);
	fclose(f);
	return 0;
}
