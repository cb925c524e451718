/* SPDX-License-Identifier: MIT */
/* dcp_util.h - strict parsing of numbers and durations, errno names. */
#ifndef DCP_UTIL_H
#define DCP_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * dcp_parse_u64 - parse a whole decimal number in [MIN, MAX].
 * No sign, no leading or trailing garbage or blanks, no empty string.
 * Returns 0 and stores *OUT; -EINVAL for malformed text; -ERANGE when the
 * value does not fit or lies outside [MIN, MAX].
 */
int dcp_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * dcp_parse_percent - parse a percentage 0..100, with an optional fraction
 * ("95", "99.5") and an optional trailing '%'.  Returns 0 or -EINVAL/-ERANGE.
 */
int dcp_parse_percent(const char *s, double *out);

/*
 * dcp_parse_duration_ns - parse a duration: a whole number with a unit
 * suffix ns, us, ms, s, m, h (no suffix means seconds).  Returns 0 and stores
 * nanoseconds in *OUT, or -EINVAL/-ERANGE.
 */
int dcp_parse_duration_ns(const char *s, uint64_t *out);

/*
 * dcp_errno_name - the symbolic name of an errno value ("EAGAIN"), or
 * "E<number>" for an unknown one.  Returns a static or thread-local string.
 */
const char *dcp_errno_name(int err);

/*
 * The sentence for a path that names nothing (an empty argument, list
 * record or manifest path), the same from the library and the commands.
 */
#define DCP_MSG_EMPTY_PATH "an empty PATH names nothing"

/* dcp_version - the library's version string ("0.1.0"). */
const char *dcp_version(void);

/* dcp_now_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t dcp_now_ns(void);

/*
 * dcp_errno_resource - true for the errors that say the process ran out
 * of something (EMFILE, ENFILE, ENOMEM), not that the object is so: an
 * entry or a directory that failed with one was not seen, and a run that
 * met one did not see everything.  ERR may be positive or negative.
 */
bool dcp_errno_resource(int err);

/* Below this RLIMIT_NOFILE, dcp_fd_free() counts the open descriptors. */
#define DCP_FD_COUNTED 256

/*
 * dcp_fd_free - how many more descriptors this process may open:
 * RLIMIT_NOFILE less the descriptors open below it, counted (one fcntl
 * per number) when the limit is under DCP_FD_COUNTED; above, the limit
 * less the three standard streams.  UINT32_MAX without a limit.
 */
uint32_t dcp_fd_free(void);

#ifdef __cplusplus
}
#endif

#endif
