/* check.h - minimal assertions for the C unit tests (0 pass, 1 fail, 77 skip). */
#ifndef DCP_CHECK_H
#define DCP_CHECK_H
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			check_failures++;                                      \
		}                                                              \
	} while (0)

#define CHECK_INT(got, want)                                                   \
	do {                                                                   \
		long long g_ = (long long)(got), w_ = (long long)(want);       \
		if (g_ != w_) {                                                \
			fprintf(stderr, "%s:%d: %s = %lld, want %lld\n",       \
				__FILE__, __LINE__, #got, g_, w_);             \
			check_failures++;                                      \
		}                                                              \
	} while (0)

#define CHECK_STR(got, want)                                                   \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		if (!g_ || strcmp(g_, w_) != 0) {                              \
			fprintf(stderr, "%s:%d: %s = \"%s\", want \"%s\"\n",   \
				__FILE__, __LINE__, #got, g_ ? g_ : "(null)",   \
				w_);                                           \
			check_failures++;                                      \
		}                                                              \
	} while (0)

#define CHECK_DONE() (check_failures ? 1 : 0)
#endif
