// SPDX-License-Identifier: MIT
/*
 * fuzz_openflags - uring-open's --flags LIST parser (dcp_open_flags_parse)
 * and its inverse (dcp_open_flags_format).
 *
 * Properties: a rejected list points *BAD inside the text; an accepted
 * list formats to names that parse back to the same flags; formatting
 * into any buffer size stays terminated and within the buffer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcprobe.h"

#define ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long flags = 0, again = 0;
	const char *bad = NULL;
	char buf[512], small[17];
	char *s;
	int ret;

	s = strndup((const char *)data, size);
	ASSERT(s);
	ret = dcp_open_flags_parse(s, &flags, &bad);
	if (ret < 0) {
		ASSERT(ret == -EINVAL);
		ASSERT(bad == NULL || (bad >= s && bad <= s + strlen(s)));
	} else {
		ASSERT(ret == 0);
		dcp_open_flags_format(flags, buf, sizeof(buf));
		ASSERT(memchr(buf, '\0', sizeof(buf)));
		ASSERT(dcp_open_flags_parse(buf, &again, NULL) == 0 || buf[0] == '\0');
		if (buf[0])
			ASSERT(again == flags);
		for (size_t n = 1; n <= sizeof(small); n++) {
			memset(small, 'x', sizeof(small));
			dcp_open_flags_format(flags, small, n);
			ASSERT(memchr(small, '\0', n));
		}
	}
	free(s);
	return 0;
}
