/* Unit tests for lib/cmdrt/pathlist.c: newline and NUL records, bad input. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "check.h"
#include "dcp_cmd.h"

static FILE *mem(const char *s, size_t n)
{
	return fmemopen((void *)s, n, "r");
}

int main(void)
{
	static const char nl[] = "/a\n\n/b c\n/last-without-newline";
	static const char nul[] = "/x\nwith newline\0\0/y\0";
	static const char bad[] = "/ok\n/has\0nul\n";
	struct dcp_pathlist *pl;
	const char *p;
	size_t len;
	FILE *f;

	f = mem(nl, sizeof(nl) - 1);
	CHECK_INT(dcp_pathlist_fopen(f, false, &pl), 0);
	CHECK_INT(dcp_pathlist_next(pl, &p, &len), 1);
	CHECK_STR(p, "/a");
	CHECK_INT(len, 2);
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), -ENODATA); /* an empty record */
	CHECK_INT(dcp_pathlist_record(pl), 2);
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), 1);
	CHECK_STR(p, "/b c");
	CHECK_INT(dcp_pathlist_record(pl), 3);
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), 1);
	CHECK_STR(p, "/last-without-newline");
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), 0);
	dcp_pathlist_close(pl);
	fclose(f);

	f = mem(nul, sizeof(nul) - 1);
	CHECK_INT(dcp_pathlist_fopen(f, true, &pl), 0);
	CHECK_INT(dcp_pathlist_next(pl, &p, &len), 1);
	CHECK_STR(p, "/x\nwith newline");
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), -ENODATA);
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), 1);
	CHECK_STR(p, "/y");
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), 0);
	dcp_pathlist_close(pl);
	fclose(f);

	f = mem(bad, sizeof(bad) - 1);
	CHECK_INT(dcp_pathlist_fopen(f, false, &pl), 0);
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), 1);
	CHECK_INT(dcp_pathlist_next(pl, &p, NULL), -EINVAL);
	CHECK_INT(dcp_pathlist_record(pl), 2);
	dcp_pathlist_close(pl);
	fclose(f);

	CHECK_INT(dcp_pathlist_open("/nonexistent/list", false, &pl), -ENOENT);
	return CHECK_DONE();
}
