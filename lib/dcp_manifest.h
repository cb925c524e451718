/* SPDX-License-Identifier: MIT */
/*
 * dcp_manifest.h - residency manifests: what a warm service held, read back
 * from dcache-probe's own JSON Lines, restored, and checked.
 *
 * A manifest is the output of `dcache-probe -r --ranges --json TREE...`:
 * one "entry" record per path with its probe state, and for each measured
 * regular file its identity (device, inode, size, mtime) and the byte
 * ranges that were resident.  Every other record is ignored.  Entries at
 * depth 0 are the manifest's roots; an entry belongs to the longest root
 * that is a prefix of its path (by components), or is a root of its own.
 *
 * A manifest is input that anyone may have edited: a record that is not
 * what dcache-probe writes is refused with its record number, and the
 * restore gives its paths the safety of a walk (dcp_manifest_restore()).
 */
#ifndef DCP_MANIFEST_H
#define DCP_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dcp_pages.h"
#include "dcp_probe.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_mounts;

/*
 * The format dcache-probe --ranges writes (its first record:
 * {"type":"manifest","version":2,...}).  A manifest without that record is
 * of format 1 (before dcprobe 0.2): its files are told by device number.
 */
#define DCP_MANIFEST_VERSION 2

/* Bounds of a manifest's "fs" records: their numbers, and how many. */
#define DCP_MANIFEST_MAX_FS_ID (1 << 20)
#define DCP_MANIFEST_MAX_FS 4096

/* One "entry" record. */
struct dcp_manifest_entry {
	char *path;		     /* NUL-terminated */
	size_t len;
	enum dcp_state state;	     /* the probe's state when recorded */
	int depth;		     /* -1 when the record gave none */
	unsigned char kind;	     /* DT_*; DT_UNKNOWN when not given */
	bool has_identity;	     /* a measured regular file with resident ranges:
				      * IDENTITY and RANGES */
	bool has_ranges;	     /* a measured regular file: RANGES recorded, maybe
				      * none (format 2 gives no identity then) */
	struct dcp_pages_identity identity;
	uint64_t (*ranges)[2];	     /* [offset, length] pairs, as recorded but sorted,
				      * overlapping ones joined: each byte once */
	size_t nranges;
	size_t root;		     /* index in dcp_manifest.roots */
	size_t record;		     /* its line number, from 1 */
};

struct dcp_manifest {
	struct dcp_manifest_entry *v;
	size_t n, cap;
	char **roots;		     /* the roots' paths, in the order first seen */
	size_t nroots;
	size_t lines;		     /* lines read; after a read error, the one that
				      * could not be read */
	int format;		     /* 2 (its first record says so) or 1 */
};

/*
 * The longest record read, in bytes: a longer line is refused as malformed
 * without being held in memory.  The longest record dcache-probe writes is
 * a file's entry: its path (below PATH_MAX, 4096 bytes, each byte at most
 * 6 in JSON, a control character's escape: 24,570), its identity and
 * counts (under 1 KiB) and at most DCP_PAGES_MAX_RANGES ranges of at most
 * 42 bytes each ("[OFFSET,LENGTH]," with 19 digits each: 2,752,512): under
 * 2.8 MB, so 4 MiB refuses no record dcache-probe wrote.
 */
#define DCP_MANIFEST_MAX_RECORD (4u << 20)
#define DCP_MANIFEST_MAX_RECORD_TEXT "4 MiB"

/*
 * dcp_manifest_read - read the manifest in file FILE into
 * M (zeroed by the caller).  A record that is no JSON object, or an entry
 * record that is malformed (no path or state, a path with a NUL byte, an
 * identity or a range that is not a pair of non-negative integers within
 * 2^63, ranges without an identity...), is handed to BAD with its record
 * number and a sentence, and skipped.  So is a path with a ".." component:
 * what it names depends on the symlinks along it.  So is a record longer
 * than DCP_MANIFEST_MAX_RECORD, which is never held in memory whole.
 * Returns 0, or the -errno of reading FILE or of the memory (-ENOMEM): an
 * error, never the end of the manifest; M->lines is then the line that
 * could not be read, and what was read before stays in M.
 */
int dcp_manifest_read(const char *file, struct dcp_manifest *m,
		      void (*bad)(size_t record, const char *what, void *arg), void *arg);

/* dcp_manifest_fread - dcp_manifest_read() from the open stream F. */
int dcp_manifest_fread(FILE *f, struct dcp_manifest *m,
		       void (*bad)(size_t record, const char *what, void *arg), void *arg);

/*
 * A manifest read a window at a time, in memory bounded whatever its size:
 * dcp_manifest_open() of the open stream F (left open, read from where it
 * stands; close it after dcp_manifest_close()); with ROOTS, its roots are
 * known before its first entry (as dcp_manifest_read() gives them, the
 * entries' root indexes the same): from a file by a pre-pass that keeps
 * nothing else, and -ESPIPE from a pipe (read it whole then).  A bad
 * record is handed to BAD as dcp_manifest_read() does, once.
 * dcp_manifest_next() empties the window *WIN and fills it with the next
 * entries, at most MAX (0: 4096) and about 8 MiB of records (one record
 * may be larger); returns their number, 0 at the end, or -errno (a read
 * error, ENOMEM too, after the entries before it: never an end; its line
 * is dcp_manifest_line()).  (*WIN)->roots are the roots so far: they only
 * grow.  The window is the reader's, valid until the next call.
 */
struct dcp_manifest_reader;
int dcp_manifest_open(FILE *f, bool roots,
		      void (*bad)(size_t record, const char *what, void *arg), void *arg,
		      struct dcp_manifest_reader **out);
int dcp_manifest_next(struct dcp_manifest_reader *x, size_t max, const struct dcp_manifest **win);
/* dcp_manifest_line - the line of the read error dcp_manifest_next() returned, else 0. */
size_t dcp_manifest_line(const struct dcp_manifest_reader *x);
/* dcp_manifest_format - 2 once its first record said so, else 1. */
int dcp_manifest_format(const struct dcp_manifest_reader *x);
/* dcp_manifest_entries - the entries read so far. */
uint64_t dcp_manifest_entries(const struct dcp_manifest_reader *x);
void dcp_manifest_close(struct dcp_manifest_reader *x);

/* dcp_manifest_free - free what M holds; M is then empty. */
void dcp_manifest_free(struct dcp_manifest *m);

/* dcp_manifest_counted - whether entry E is part of what a manifest restores
 * and checks: its state was cached or negative (a miss was not in memory). */
bool dcp_manifest_counted(const struct dcp_manifest_entry *e);

/* What happened to one entry of a restore, for the report callback. */
struct dcp_manifest_event {
	const struct dcp_manifest_entry *entry;
	int err;	   /* positive errno: ESTALE changed since the manifest,
			    * ENODEV not a regular file now, ENOENT gone,
			    * EREMOTE on a mount where a lookup may wait (FUSE,
			    * NFS...), EOPNOTSUPP on a pseudo filesystem (proc,
			    * sysfs...), EXDEV reached through another mount,
			    * EINVAL a path with "..", or what the lookup or a read
			    * failed with; 0 for LEFT_OUT */
	const char *what;  /* a sentence for ERR or LEFT_OUT, or NULL for strerror's */
	/* Not an error (ERR 0): the entry was looked up, and a limit of the
	 * budget left some or all of its recorded data out. */
	enum dcp_pages_limit left_out;
};

struct dcp_manifest_restore_opts {
	unsigned threads;		  /* lookups and reads in flight; 0: warm's default */
	struct dcp_pages_budget *pages;	  /* limits and counts of the data read */
	const struct dcp_mounts *mounts;  /* the mount table (dcp_mounts_load());
					   * NULL: the restore reads one */
	/* report - called for every entry that was not restored (an error, or
	 * data a limit left out), one call at a time (from any thread).
	 * Optional. */
	void (*report)(const struct dcp_manifest_event *ev, void *arg);
	void *arg;
};

/* What a restore did. */
struct dcp_manifest_restore_stats {
	uint64_t recorded;    /* entries of the manifest */
	uint64_t skipped;     /* of those, recorded as missed (or failed): not restored,
			       * left as they are */
	uint64_t skipped_errors; /* of those, recorded as failed (state error) */
	uint64_t entries;     /* entries looked up as recorded (a negative one absent) */
	uint64_t errors;      /* entries not restored (reported) */
	uint64_t changed;     /* of those, files changed since the manifest (ESTALE) */
	uint64_t files;	      /* files whose recorded ranges were checked */
	uint64_t elapsed_ns;
	unsigned jobs;	      /* threads used */
	uint64_t left_out;    /* files whose recorded data a limit left out, in whole
			       * or in part (reported; looked up, not errors) */
};

/*
 * dcp_manifest_restore - put back what M recorded: each counted entry is
 * looked up again (so its dentry, or its negative dentry, is cached), and
 * each file's recorded ranges that are not resident now are read, exactly
 * those, within OPTS->pages' limits, in batches ordered by where the data
 * lies on the device (FIEMAP).  A lookup starts at the root of the mount
 * that is its path's longest mount-point prefix and never leaves it
 * (RESOLVE_NO_XDEV), so a symlink cannot lead it into another mount; a
 * path on (or below) FUSE, NFS..., or on a pseudo filesystem (proc,
 * sysfs...), is not looked up; a file is opened for reading only as the
 * regular file that was checked on its O_PATH descriptor, and only when
 * that descriptor shows the file recorded (device, inode, size, mtime) on
 * a filesystem that may be read (dcp_pages_plan_at()): a FIFO, a device,
 * another file or a pseudo file is never opened.  A file whose data a
 * limit (max_bytes, max_file_size) left out is reported, not an error.
 * With OPTS->mounts NULL the call reads /proc/self/mountinfo itself and
 * frees it before it returns (dcp_mounts_load()'s error if it cannot).
 * Returns 0 or -errno (-ENOMEM, -EINVAL for bad options); what it did is
 * in *ST.
 */
int dcp_manifest_restore(const struct dcp_manifest *m, const struct dcp_manifest_restore_opts *opts,
			 struct dcp_manifest_restore_stats *st);

/*
 * dcp_manifest_restore_from - dcp_manifest_restore() of the manifest X
 * reads, a window at a time (dcp_manifest_next(): the batches are its
 * windows), so that memory does not follow the manifest's size.  Returns
 * 0, the -errno of reading X (what came before was restored; the line is
 * dcp_manifest_line()), or as dcp_manifest_restore(); ST->recorded counts
 * the entries read.
 */
int dcp_manifest_restore_from(struct dcp_manifest_reader *x,
			      const struct dcp_manifest_restore_opts *opts,
			      struct dcp_manifest_restore_stats *st);

/*
 * dcp_manifest_lexical - PATH made absolute (from the current directory)
 * and folded by its text alone: "." and empty components dropped.  Returns
 * a malloc'd string, or NULL with errno EINVAL (a ".." component: what it
 * names depends on symlinks) or ENOMEM.
 */
char *dcp_manifest_lexical(const char *path);

#ifdef __cplusplus
}
#endif

#endif
