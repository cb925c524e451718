/* SPDX-License-Identifier: MIT */
/* dcp_pathlist.h - paths read from a file or stdin, newline or NUL separated. */
#ifndef DCP_PATHLIST_H
#define DCP_PATHLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_pathlist;

/*
 * dcp_pathlist_open - read paths from FILE ("-" for standard input).
 * NUL: records end with '\0' (find -print0, dcache-probe -0) instead of
 * '\n'.  Returns 0 and stores the list in *OUT, or -errno.
 */
int dcp_pathlist_open(const char *file, bool nul, struct dcp_pathlist **out);

/*
 * dcp_pathlist_fopen - the same over an open stream (not closed at the end).
 */
int dcp_pathlist_fopen(FILE *f, bool nul, struct dcp_pathlist **out);

/*
 * dcp_pathlist_next - the next path, valid until the next call.  Returns 1 and stores *PATH (and *LEN,
 * if LEN is not NULL); 0 at the end; -errno on a read error (-ENOMEM for
 * a record too long for memory: never a silent end); -EINVAL for a
 * newline-separated record that contains a NUL byte, -ENODATA for an empty
 * record (bad input data: the list goes on after both).
 */
int dcp_pathlist_next(struct dcp_pathlist *pl, const char **path, size_t *len);

/* dcp_pathlist_record - 1-based number of the record last returned or failed. */
size_t dcp_pathlist_record(const struct dcp_pathlist *pl);

/* dcp_pathlist_paths - how many paths dcp_pathlist_next() returned. */
size_t dcp_pathlist_paths(const struct dcp_pathlist *pl);

/* dcp_pathlist_close - free the list (and close its file, if it opened one). */
void dcp_pathlist_close(struct dcp_pathlist *pl);

#ifdef __cplusplus
}
#endif

#endif
