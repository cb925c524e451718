// SPDX-License-Identifier: MIT
/* util.c - strict number and duration parsing, errno names, clocks. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dcp_util.h"
#include "private/dcp_ring.h"

#ifdef DCP_RING_TSAN
/* What orders one io_uring ring's end before the next one's start (private/dcp_ring.h). */
char dcp_ring_token;
#endif

/* Parse leading decimal digits; returns how many were consumed, 0 on none. */
static size_t parse_digits(const char *s, uint64_t *out, bool *overflow)
{
	uint64_t v = 0;
	size_t i = 0;

	*overflow = false;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			*overflow = true;
		else
			v = v * 10 + d;
	}
	*out = v;
	return i;
}

int dcp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	bool overflow;
	size_t n;

	if (!s)
		return -EINVAL;
	n = parse_digits(s, &v, &overflow);
	if (n == 0 || s[n] != '\0')
		return -EINVAL;
	if (overflow || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int dcp_parse_percent(const char *s, double *out)
{
	uint64_t whole, frac = 0, scale = 1;
	bool overflow;
	size_t n, m;

	if (!s)
		return -EINVAL;
	n = parse_digits(s, &whole, &overflow);
	if (n == 0)
		return -EINVAL;
	if (overflow)
		return -ERANGE;
	if (s[n] == '.') {
		n++;
		m = parse_digits(s + n, &frac, &overflow);
		if (m == 0 || m > 9)
			return m == 0 ? -EINVAL : -ERANGE;
		for (size_t i = 0; i < m; i++)
			scale *= 10;
		n += m;
	}
	if (s[n] == '%')
		n++;
	if (s[n] != '\0')
		return -EINVAL;
	double v = (double)whole + (double)frac / (double)scale;
	if (v > 100.0)
		return -ERANGE;
	*out = v;
	return 0;
}

int dcp_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 },	     { "us", 1000 },	   { "ms", 1000000 },
		{ "s", 1000000000 }, { "", 1000000000 },   { "m", 60000000000ULL },
		{ "h", 3600000000000ULL },
	};
	uint64_t v;
	bool overflow;
	size_t n;

	if (!s)
		return -EINVAL;
	n = parse_digits(s, &v, &overflow);
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].suffix) != 0)
			continue;
		if (overflow || (v && units[i].ns > UINT64_MAX / v))
			return -ERANGE;
		*out = v * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

const char *dcp_errno_name(int err)
{
	static __thread char unknown[24];
	const char *name;

	if (err < 0)
		err = -err;
	name = strerrorname_np(err);
	if (name)
		return name;
	snprintf(unknown, sizeof(unknown), "E%d", err);
	return unknown;
}

const char *dcp_version(void)
{
	return DCP_VERSION;
}

uint64_t dcp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool dcp_errno_resource(int err)
{
	if (err < 0)
		err = -err;
	return err == EMFILE || err == ENFILE || err == ENOMEM;
}

uint32_t dcp_fd_free(void)
{
	struct rlimit rl;
	rlim_t open = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= UINT32_MAX)
		return UINT32_MAX;
	if (rl.rlim_cur >= DCP_FD_COUNTED)
		return (uint32_t)rl.rlim_cur - 3;
	for (int fd = 0; fd < (int)rl.rlim_cur; fd++)
		open += fcntl(fd, F_GETFD) >= 0;
	return (uint32_t)(rl.rlim_cur - open);
}
