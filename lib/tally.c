// SPDX-License-Identifier: MIT
/* tally.c - the per-root and per-directory tables of a run (dcp_tally.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dcp_tally.h"

/* ---- per root ---- */

/* A chunk: DCP_ROOT_CHUNK tallies, then their counts, 64-byte aligned. */
static size_t data_stride(const struct dcp_root_table *t)
{
	return (t->data_size + 63) & ~(size_t)63;
}

int dcp_root_table_push(struct dcp_root_table *t, const char *path)
{
	size_t i = t->n, head = (DCP_ROOT_CHUNK * sizeof(struct dcp_root_tally) + 63) & ~(size_t)63;
	struct dcp_root_tally *chunk;

	if (i / DCP_ROOT_CHUNK >= DCP_ROOT_CHUNKS)
		return -E2BIG;
	chunk = t->chunk[i / DCP_ROOT_CHUNK];
	if (!chunk) {
		chunk = aligned_alloc(64, head + DCP_ROOT_CHUNK * data_stride(t));
		if (!chunk)
			return -ENOMEM;
		memset(chunk, 0, head + DCP_ROOT_CHUNK * data_stride(t));
		for (size_t k = 0; k < DCP_ROOT_CHUNK; k++)
			chunk[k].data = (char *)chunk + head + k * data_stride(t);
		t->chunk[i / DCP_ROOT_CHUNK] = chunk;
	}
	chunk[i % DCP_ROOT_CHUNK].path = strdup(path);
	if (!chunk[i % DCP_ROOT_CHUNK].path)
		return -ENOMEM;
	t->n++;
	return 0;
}

void dcp_root_table_pop(struct dcp_root_table *t)
{
	struct dcp_root_tally *rt = t->n ? dcp_root_table_get(t, t->n - 1) : NULL;

	if (!rt)
		return;
	free(rt->path);
	rt->path = NULL;
	rt->same_as = 0;
	memset(rt->data, 0, t->data_size);
	t->n--;
}

struct dcp_root_tally *dcp_root_table_get(const struct dcp_root_table *t, size_t i)
{
	struct dcp_root_tally *chunk =
		i / DCP_ROOT_CHUNK < DCP_ROOT_CHUNKS ? t->chunk[i / DCP_ROOT_CHUNK] : NULL;

	return chunk ? &chunk[i % DCP_ROOT_CHUNK] : NULL;
}

void dcp_root_table_alias(struct dcp_root_table *t, size_t root, size_t same_as)
{
	struct dcp_root_tally *rt = dcp_root_table_get(t, root);

	if (rt)
		rt->same_as = same_as + 1;
}

void dcp_root_table_settle(struct dcp_root_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct dcp_root_tally *rt = dcp_root_table_get(t, i), *twin;

		rt->reported = true;
		if (!rt->same_as)
			continue;
		twin = dcp_root_table_get(t, rt->same_as - 1);
		memcpy(rt->data, twin->data, t->data_size);
		rt->reported = strcmp(rt->path, twin->path) != 0;
	}
}

void dcp_root_table_free(struct dcp_root_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(dcp_root_table_get(t, i)->path);
	for (size_t k = 0; k < DCP_ROOT_CHUNKS && t->chunk[k]; k++) {
		free(t->chunk[k]);
		t->chunk[k] = NULL;
	}
	t->n = 0;
}

/* ---- per directory ---- */

/*
 * A row's path is the rows' own allocation: the never-cached misses of the
 * row (dcp_dir_rows_add_split) are kept after it, at the first multiple of
 * their alignment past its '\0', where no caller looks.
 */
static size_t never_at(size_t pathlen)
{
	return (pathlen + 1 + _Alignof(unsigned long long) - 1) &
	       ~(size_t)(_Alignof(unsigned long long) - 1);
}

int dcp_dir_rows_add(struct dcp_dir_rows *r, const struct dcp_dir_row *row)
{
	return dcp_dir_rows_add_split(r, row, 0);
}

unsigned long long dcp_dir_row_never(const struct dcp_dir_row *row)
{
	unsigned long long n;

	memcpy(&n, row->path + never_at(row->pathlen), sizeof(n));
	return n;
}

int dcp_dir_rows_add_split(struct dcp_dir_rows *r, const struct dcp_dir_row *row,
			   unsigned long long never)
{
	char *p;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct dcp_dir_row *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	p = malloc(never_at(row->pathlen) + sizeof(never));
	if (!p)
		return -ENOMEM;
	memcpy(p, row->path, row->pathlen);
	p[row->pathlen] = 0;
	memcpy(p + never_at(row->pathlen), &never, sizeof(never));
	r->v[r->n] = *row;
	r->v[r->n++].path = p;
	return 0;
}

/* By directory, then the first root, then the first path there. */
static int cmp_identity(const void *a, const void *b)
{
	const struct dcp_dir_row *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return dcp_path_cmp(x->path, x->pathlen, y->path, y->pathlen, DCP_ROWS_PREORDER);
}

/* du's order: by root, post-order. */
static int cmp_du(const void *a, const void *b)
{
	const struct dcp_dir_row *x = a, *y = b;

	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	return dcp_path_cmp(x->path, x->pathlen, y->path, y->pathlen, DCP_ROWS_POSTORDER);
}

void dcp_dir_rows_settle(struct dcp_dir_rows *r)
{
	size_t n = 0;

	if (!r->n)
		return;
	qsort(r->v, r->n, sizeof(*r->v), cmp_identity);
	for (size_t i = 0; i < r->n; i++) {
		if (n && r->v[i].dev == r->v[n - 1].dev && r->v[i].ino == r->v[n - 1].ino) {
			free(r->v[i].path);
			continue;
		}
		r->v[n++] = r->v[i];
	}
	r->n = n;
	qsort(r->v, n, sizeof(*r->v), cmp_du);
}

void dcp_dir_rows_free(struct dcp_dir_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	*r = (struct dcp_dir_rows){ 0 };
}

/* ---- per mount ---- */

struct dcp_mount_tally *dcp_mount_table_row(struct dcp_mount_table *t, uint64_t id)
{
	if (t->n && t->v[t->last].id == id)
		return &t->v[t->last];
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].id == id) {
			t->last = i;
			return &t->v[i];
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct dcp_mount_tally *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (struct dcp_mount_tally){ .id = id };
	t->last = t->n++;
	return &t->v[t->last];
}

struct dcp_pr_counts *dcp_mount_table_get(struct dcp_mount_table *t, uint64_t id)
{
	struct dcp_mount_tally *row = dcp_mount_table_row(t, id);

	return row ? &row->c : NULL;
}

int dcp_mount_table_merge(struct dcp_mount_table *into, const struct dcp_mount_table *from)
{
	for (size_t i = 0; i < from->n; i++) {
		struct dcp_mount_tally *row = dcp_mount_table_row(into, from->v[i].id);

		if (!row)
			return -ENOMEM;
		dcp_pr_counts_add(&row->c, &from->v[i].c);
		dcp_pages_counts_add(&row->pc, &from->v[i].pc);
	}
	return 0;
}

void dcp_mount_table_free(struct dcp_mount_table *t)
{
	free(t->v);
	*t = (struct dcp_mount_table){ 0 };
}

