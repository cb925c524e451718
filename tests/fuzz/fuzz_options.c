// SPDX-License-Identifier: MIT
/*
 * fuzz_options - the parsers of option values typed by people and
 * scripts: numbers (-j, -n, --max-depth), percentages (thresholds),
 * durations (intervals, timeouts) and residency state names.  The first
 * two bytes pick bounds for dcp_parse_u64; the rest is the text.
 *
 * Properties, each checked against an independent reference:
 *  - dcp_parse_u64 accepts exactly the non-empty all-digit strings whose
 *    value fits 64 bits, and among those exactly the ones in [MIN, MAX]
 *    (-ERANGE otherwise); the value is strtoull's.
 *  - dcp_parse_percent accepts only DIGITS[.DIGITS][%] with 0 <= v <= 100
 *    and agrees with strtod within rounding.
 *  - dcp_parse_duration_ns accepts DIGITS followed by exactly one of
 *    "", ns, us, ms, s, m, h, and returns DIGITS * unit when it fits.
 *  - dcp_state_parse accepts exactly the names dcp_state_name gives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcprobe.h"

#define ASSERT(c) do { if (!(c)) __builtin_trap(); } while (0)

/* Leading digits of S, their count in *N, overflow in *OVER. */
static unsigned __int128 digits(const char *s, size_t *n, bool *over)
{
	unsigned __int128 v = 0;
	size_t i = 0;

	*over = false;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > UINT64_MAX) {
			*over = true;
			v = (unsigned __int128)UINT64_MAX + 1;
		}
	}
	*n = i;
	return v;
}

static void check_u64(const char *s, uint64_t min, uint64_t max)
{
	uint64_t v = 12345;
	size_t n;
	bool over;
	unsigned __int128 ref = digits(s, &n, &over);
	int ret = dcp_parse_u64(s, min, max, &v);

	if (n == 0 || s[n] != '\0') {
		ASSERT(ret == -EINVAL && v == 12345);
	} else if (over || ref < min || ref > max) {
		ASSERT(ret == -ERANGE && v == 12345);
	} else {
		ASSERT(ret == 0 && v == (uint64_t)ref);
		ASSERT(v == strtoull(s, NULL, 10));
	}
}

static void check_percent(const char *s)
{
	double v = -1;
	int ret = dcp_parse_percent(s, &v);
	size_t n, m = 0;
	bool over;

	digits(s, &n, &over);
	if (ret != 0) {
		ASSERT(ret == -EINVAL || ret == -ERANGE);
		ASSERT(v == -1);
		return;
	}
	/* Accepted: the grammar and the range hold. */
	ASSERT(n > 0 && !over);
	if (s[n] == '.') {
		digits(s + n + 1, &m, &over);
		ASSERT(m > 0);
		n += 1 + m;
	}
	if (s[n] == '%')
		n++;
	ASSERT(s[n] == '\0');
	ASSERT(v >= 0.0 && v <= 100.0);
	ASSERT(fabs(v - strtod(s, NULL)) <= 1e-9 * (v + 1));
}

static void check_duration(const char *s)
{
	static const struct { const char *sfx; uint64_t ns; } units[] = {
		{ "", 1000000000ULL }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ULL }, { "m", 60000000000ULL }, { "h", 3600000000000ULL },
	};
	uint64_t v = 777;
	size_t n;
	bool over;
	unsigned __int128 ref = digits(s, &n, &over);
	int ret = dcp_parse_duration_ns(s, &v);
	int unit = -1;

	for (int i = 0; n > 0 && i < 7; i++)
		if (strcmp(s + n, units[i].sfx) == 0)
			unit = i;
	if (unit < 0) {
		ASSERT(ret == -EINVAL && v == 777);
		return;
	}
	ref *= units[unit].ns;
	if (over || ref > UINT64_MAX) {
		ASSERT(ret == -ERANGE && v == 777);
	} else {
		ASSERT(ret == 0 && v == (uint64_t)ref);
	}
}

static void check_state(const char *s)
{
	int ret = dcp_state_parse(s);

	if (ret >= 0) {
		ASSERT(ret < DCP_NSTATES);
		ASSERT(strcmp(dcp_state_name((enum dcp_state)ret), s) == 0);
	} else {
		ASSERT(ret == -EINVAL);
		for (int i = 0; i < DCP_NSTATES; i++)
			ASSERT(strcmp(dcp_state_name((enum dcp_state)i), s) != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t bounds[] = { 0, 1, 2, 9, 10, 64, 100, 1000, 65535,
					   UINT32_MAX, UINT64_MAX - 1, UINT64_MAX };
	uint64_t min, max;
	char *s;

	if (size < 2)
		return 0;
	min = bounds[data[0] % 12];
	max = bounds[data[1] % 12];
	if (min > max) {
		uint64_t t = min;
		min = max;
		max = t;
	}
	s = strndup((const char *)data + 2, size - 2); /* stops at a NUL, as argv does */
	ASSERT(s);
	check_u64(s, min, max);
	check_percent(s);
	check_duration(s);
	check_state(s);
	free(s);
	return 0;
}
