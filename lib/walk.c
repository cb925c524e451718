// SPDX-License-Identifier: MIT
/* walk.c - placeholder until the parallel walker lands (returns -ENOSYS). */
#define _GNU_SOURCE
#include <errno.h>

#include "dcp_walk.h"

int dcp_walk_new(const struct dcp_walk_opts *opts, struct dcp_walk **out)
{
	(void)opts;
	(void)out;
	return -ENOSYS;
}

int dcp_walk_add(struct dcp_walk *w, const char *path)
{
	(void)w;
	(void)path;
	return -ENOSYS;
}

int dcp_walk_finish(struct dcp_walk *w)
{
	(void)w;
	return -ENOSYS;
}

unsigned dcp_walk_threads(const struct dcp_walk *w)
{
	(void)w;
	return 1;
}

int dcp_walk(const char *const *roots, size_t nroots, const struct dcp_walk_opts *opts)
{
	(void)roots;
	(void)nroots;
	(void)opts;
	return -ENOSYS;
}
