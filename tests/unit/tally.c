/*
 * Unit tests for lib/tally.c: what is one row and in which order rows
 * come, whatever order the threads added them in.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dcprobe.h"

static struct dcp_root_table roots; /* large: not on the stack */
#define C(i) ((struct dcp_pr_counts *)dcp_root_table_get(&roots, (i))->data)

static const char *joined(const struct dcp_dir_rows *r)
{
	static char buf[1024];
	char *p = buf;

	buf[0] = 0;
	for (size_t i = 0; i < r->n; i++)
		p += sprintf(p, "%zu:%s:%llu;", r->v[i].root, r->v[i].path,
			     r->v[i].c.n[DCP_CACHED]);
	return buf;
}

int main(void)
{
	/* One listing per (root, path); T/a reached from root 0 (T) and
	 * root 1 (T/a), T/b also as T/b-link through a followed link. */
	static const struct {
		size_t root;
		unsigned long ino;
		const char *path;
		unsigned long long cached;
	} add[] = {
		{ 1, 20, "T/a", 2 },	   /* root 1 finished first */
		{ 0, 30, "T/b-link", 3 }, /* the link's listing came first */
		{ 0, 30, "T/b", 3 },
		{ 0, 20, "T/a", 2 },
		{ 0, 40, "T/a-b", 1 },
		{ 0, 50, "T/a/x", 1 },
		{ 1, 50, "T/a/x", 1 },
		{ 0, 10, "T", 9 },
	};
	struct dcp_dir_rows rows = { 0 };

	/* Every order of arrival gives the same rows. */
	for (unsigned shift = 0; shift < 8; shift++) {
		for (size_t k = 0; k < 8; k++) {
			size_t i = (k + shift) % 8;
			struct dcp_dir_row r = { .root = add[i].root, .dev = 1, .ino = add[i].ino,
						 .path = (char *)add[i].path,
						 .pathlen = strlen(add[i].path) };

			r.c.n[DCP_CACHED] = add[i].cached;
			CHECK_INT(dcp_dir_rows_add(&rows, &r), 0);
		}
		dcp_dir_rows_settle(&rows);
		/* One row per directory, under the first root and first path;
		 * du's order: a before a-b ('/' sorts first), T last. */
		CHECK_STR(joined(&rows), "0:T/a/x:1;0:T/a:2;0:T/a-b:1;0:T/b:3;0:T:9;");
		dcp_dir_rows_free(&rows);
	}

	/* A row's never-cached misses go with it, whatever the order. */
	{
		struct dcp_dir_row r1 = { .dev = 2, .ino = 7, .path = (char *)"/z/y", .pathlen = 4 };
		struct dcp_dir_row r2 = { .dev = 2, .ino = 5, .path = (char *)"/z/y/xxxxxxx", .pathlen = 12 };

		CHECK_INT(dcp_dir_rows_add_split(&rows, &r1, 41), 0);
		CHECK_INT(dcp_dir_rows_add_split(&rows, &r2, 1ULL << 40), 0);
		CHECK_INT(dcp_dir_rows_add(&rows, &(struct dcp_dir_row){ .dev = 2, .ino = 6,
			.path = (char *)"/z", .pathlen = 2 }), 0);
		dcp_dir_rows_settle(&rows);
		CHECK_STR(rows.v[0].path, "/z/y/xxxxxxx");
		CHECK(dcp_dir_row_never(&rows.v[0]) == 1ULL << 40);
		CHECK(dcp_dir_row_never(&rows.v[1]) == 41);
		CHECK(dcp_dir_row_never(&rows.v[2]) == 0);
		dcp_dir_rows_free(&rows);
	}

	/* Roots: an alias takes its twin's figures; the same name, one line. */
	roots.data_size = sizeof(struct dcp_pr_counts);
	CHECK_INT(dcp_root_table_push(&roots, "/srv"), 0);
	CHECK_INT(dcp_root_table_push(&roots, "/srv/."), 0);
	CHECK_INT(dcp_root_table_push(&roots, "/srv"), 0);
	CHECK_INT(dcp_root_table_push(&roots, "/etc"), 0);
	CHECK(dcp_root_table_get(&roots, DCP_ROOT_CHUNK) == NULL); /* no such chunk */
	C(0)->n[DCP_MISS] = 7;
	C(3)->n[DCP_CACHED] = 2;
	dcp_root_table_alias(&roots, 1, 0);
	dcp_root_table_alias(&roots, 2, 0);
	dcp_root_table_settle(&roots);
	CHECK(dcp_root_table_get(&roots, 0)->reported);
	CHECK(dcp_root_table_get(&roots, 1)->reported);
	CHECK_INT(C(1)->n[DCP_MISS], 7);
	CHECK(!dcp_root_table_get(&roots, 2)->reported);
	CHECK(dcp_root_table_get(&roots, 3)->reported);
	CHECK_INT(C(3)->n[DCP_MISS], 0);
	CHECK_INT(C(3)->n[DCP_CACHED], 2);
	/* More roots than one chunk: tallies never move. */
	{
		struct dcp_root_tally *first = dcp_root_table_get(&roots, 0);

		for (int i = 0; i < 3000; i++)
			CHECK_INT(dcp_root_table_push(&roots, "/x"), 0);
		CHECK(dcp_root_table_get(&roots, 0) == first);
		CHECK(strcmp(dcp_root_table_get(&roots, 3003)->path, "/x") == 0);
		/* Counts are the table's, zeroed, aligned for atomics. */
		CHECK(C(3003)->n[DCP_CACHED] == 0);
		CHECK(((uintptr_t)C(3003) & 63) == 0);
		/* A root the walk refused is taken back. */
		dcp_root_table_pop(&roots);
		CHECK(roots.n == 3003);
		CHECK_INT(dcp_root_table_push(&roots, "/y"), 0);
		CHECK(strcmp(dcp_root_table_get(&roots, 3003)->path, "/y") == 0);
	}
	dcp_root_table_free(&roots);
	CHECK(roots.n == 0);
	return CHECK_DONE();
}
