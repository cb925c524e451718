// SPDX-License-Identifier: MIT
/* pathlist.c - paths from a file or stdin, newline or NUL separated. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dcp_pathlist.h"

struct dcp_pathlist {
	FILE *f;
	bool owned;
	int delim;
	char *line;
	size_t cap;
	size_t record;
	size_t paths;
};

int dcp_pathlist_fopen(FILE *f, bool nul, struct dcp_pathlist **out)
{
	struct dcp_pathlist *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return -ENOMEM;
	pl->f = f;
	pl->delim = nul ? '\0' : '\n';
	*out = pl;
	return 0;
}

int dcp_pathlist_open(const char *file, bool nul, struct dcp_pathlist **out)
{
	FILE *f;
	int ret;

	if (strcmp(file, "-") == 0)
		return dcp_pathlist_fopen(stdin, nul, out);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	ret = dcp_pathlist_fopen(f, nul, out);
	if (ret < 0) {
		fclose(f);
		return ret;
	}
	(*out)->owned = true;
	return 0;
}

int dcp_pathlist_next(struct dcp_pathlist *pl, const char **path, size_t *len)
{
	for (;;) {
		ssize_t n;

		errno = 0;
		n = getdelim(&pl->line, &pl->cap, pl->delim, pl->f);
		/*
		 * Only a clean end of file ends the list.  getdelim() fails
		 * with ENOMEM on a huge record without setting the stream's
		 * error flag (glibc 2.36): that is an error, not the end.
		 */
		if (n < 0 && feof(pl->f) && !ferror(pl->f))
			return 0;
		if (n < 0) {
			pl->record++; /* the record that could not be read */
			return -(errno ? errno : EIO);
		}
		pl->record++;
		if (n > 0 && pl->line[n - 1] == pl->delim)
			pl->line[--n] = '\0';
		if (n == 0)
			return -ENODATA;
		if (pl->delim == '\n' && memchr(pl->line, '\0', (size_t)n))
			return -EINVAL;
		*path = pl->line;
		pl->paths++;
		if (len)
			*len = (size_t)n;
		return 1;
	}
}

size_t dcp_pathlist_record(const struct dcp_pathlist *pl)
{
	return pl->record;
}

size_t dcp_pathlist_paths(const struct dcp_pathlist *pl)
{
	return pl->paths;
}

void dcp_pathlist_close(struct dcp_pathlist *pl)
{
	if (!pl)
		return;
	if (pl->owned)
		fclose(pl->f);
	free(pl->line);
	free(pl);
}
