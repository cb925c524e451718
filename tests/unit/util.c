/* Unit tests for lib/util.c: strict parsing and errno names. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "dcprobe.h"

int main(void)
{
	uint64_t v = 7;
	double d = -1;

	CHECK_INT(dcp_parse_u64("0", 0, 10, &v), 0);
	CHECK_INT(v, 0);
	CHECK_INT(dcp_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK_INT(dcp_parse_u64("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT(dcp_parse_u64("11", 0, 10, &v), -ERANGE);
	CHECK_INT(dcp_parse_u64("0", 1, 10, &v), -ERANGE);
	v = 5;
	CHECK_INT(dcp_parse_u64("", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64("-1", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64("+1", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64(" 1", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64("1 ", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64("1x", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64("0x1", 0, 10, &v), -EINVAL);
	CHECK_INT(dcp_parse_u64(NULL, 0, 10, &v), -EINVAL);
	CHECK_INT(v, 5); /* untouched on failure */

	CHECK_INT(dcp_parse_percent("95", &d), 0);
	CHECK(d == 95.0);
	CHECK_INT(dcp_parse_percent("99.5%", &d), 0);
	CHECK(d == 99.5);
	CHECK_INT(dcp_parse_percent("100", &d), 0);
	CHECK_INT(dcp_parse_percent("100.1", &d), -ERANGE);
	CHECK_INT(dcp_parse_percent("101", &d), -ERANGE);
	CHECK_INT(dcp_parse_percent("-1", &d), -EINVAL);
	CHECK_INT(dcp_parse_percent("1.", &d), -EINVAL);
	CHECK_INT(dcp_parse_percent(".5", &d), -EINVAL);
	CHECK_INT(dcp_parse_percent("5%%", &d), -EINVAL);
	CHECK_INT(dcp_parse_percent("nan", &d), -EINVAL);
	CHECK_INT(dcp_parse_percent("", &d), -EINVAL);

	CHECK_INT(dcp_parse_duration_ns("5", &v), 0);
	CHECK(v == 5000000000ULL);
	CHECK_INT(dcp_parse_duration_ns("250ms", &v), 0);
	CHECK(v == 250000000ULL);
	CHECK_INT(dcp_parse_duration_ns("3us", &v), 0);
	CHECK(v == 3000);
	CHECK_INT(dcp_parse_duration_ns("2m", &v), 0);
	CHECK(v == 120000000000ULL);
	CHECK_INT(dcp_parse_duration_ns("1h", &v), 0);
	CHECK(v == 3600000000000ULL);
	CHECK_INT(dcp_parse_duration_ns("90m", &v), 0);
	CHECK(v == 5400000000000ULL);
	CHECK_INT(dcp_parse_duration_ns("5124096h", &v), -ERANGE); /* 2^64 ns is 5124095.6 h */
	CHECK_INT(dcp_parse_duration_ns("5124095h", &v), 0);
	CHECK_INT(dcp_parse_duration_ns("1H", &v), -EINVAL);
	CHECK_INT(dcp_parse_duration_ns("1d", &v), -EINVAL);
	CHECK_INT(dcp_parse_duration_ns("ms", &v), -EINVAL);
	CHECK_INT(dcp_parse_duration_ns("99999999999999999999s", &v), -ERANGE);
	CHECK_INT(dcp_parse_duration_ns("999999999999m", &v), -ERANGE);

	CHECK_STR(dcp_errno_name(EAGAIN), "EAGAIN");
	CHECK_STR(dcp_errno_name(-ENOENT), "ENOENT");
	CHECK_STR(dcp_errno_name(4000), "E4000");
	return CHECK_DONE();
}
