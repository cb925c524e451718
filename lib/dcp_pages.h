/* SPDX-License-Identifier: MIT */
/*
 * dcp_pages.h - data residency: how much of a regular file is in the page
 * cache, measured without reading it, and bringing it in on purpose.
 *
 * A file is measured only when its dentry is cached: it is looked up once
 * with openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_CACHED), which does no
 * lookup I/O and fails with EAGAIN instead; only when that descriptor is a
 * regular file is *it* opened for reading (O_RDONLY|O_NONBLOCK|O_NOCTTY,
 * through /proc/self/fd), so a FIFO or a device renamed in between is never
 * opened: the name is not looked up twice.  Without /proc the file is
 * unknown (-EAGAIN), and so is a file whose mount (the one reached, through
 * any symlinks: its statx mount ID) is FUSE, NFS... where an open may wait
 * on a daemon (dcp_pages_fstype_opens_safely()), or is not in the mount
 * table read at the first such question.  Residency comes from cachestat(2) (Linux 6.5) or, where that
 * system call is missing, from mincore(2) over a read-only shared mapping
 * (nothing is faulted in).  Neither reads the data nor changes its atime;
 * the open may be seen by fanotify/inotify watchers (IN_OPEN, IN_CLOSE).
 */
#ifndef DCP_PAGES_H
#define DCP_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dcp_fsid.h"
#include "dcp_prom.h"
#include "dcp_report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How residency was measured. */
enum dcp_pages_method {
	DCP_PAGES_NONE = 0,
	DCP_PAGES_CACHESTAT = 1, /* cachestat(2): dirty, writeback, evictions too */
	DCP_PAGES_MINCORE = 2,	 /* mincore(2): resident pages only */
};

/* The residency of one file. */
struct dcp_pages {
	uint64_t size;		   /* st_size in bytes */
	uint64_t pages;		   /* pages the size spans: ceil(size / page size) */
	uint64_t resident;	   /* of those, pages in the page cache */
	uint64_t resident_bytes;   /* their bytes, the file's last page counted up to
				    * its end: never more than size */
	uint64_t dirty;		   /* cachestat only, else 0 */
	uint64_t writeback;	   /* cachestat only, else 0 */
	uint64_t evicted;	   /* cachestat only: evicted since the inode was cached */
	uint64_t recently_evicted; /* cachestat only: evicted, would still be in a bigger cache */
	enum dcp_pages_method method;
	uint64_t dev, ino, nlink; /* the inode measured */
	int64_t mtime_ns;	  /* its st_mtim, in ns since the epoch */
	bool again;		  /* an inode this run counted under another name */
};

/* What a measurement attempt came to, for counting and output. */
enum dcp_pages_state {
	DCP_PAGES_MEASURED = 0, /* struct dcp_pages is valid */
	DCP_PAGES_UNKNOWN = 1,	/* not measured, for a reason: dcp_pages_unknown_reason() */
	DCP_PAGES_SKIPPED = 2,	/* not a regular file: nothing to measure */
	DCP_PAGES_FAILED = 3,	/* open or measurement failed (EACCES, EPERM...) */
};

/* Flags for dcp_pages_at(). */
enum {
	DCP_PAGES_FOLLOW = 1 << 0, /* follow a symlink in the final component */
	/*
	 * d_type says NAME is a regular file.  Alone a hint, never trusted:
	 * the type is checked on the descriptor that is opened.
	 */
	DCP_PAGES_ISREG = 1 << 1,
	/* dcp_pages_warm_at(): measure residency before and after, into the budget */
	DCP_PAGES_CHECK = 1 << 2,
	/*
	 * With DCP_PAGES_ISREG: nobody but the caller's user can rename or
	 * create entries in DIRFD (dcp_pages_dir_private()), so the name that
	 * getdents64 typed is still that file: it is opened by name, once,
	 * without the O_PATH look and the reopen (the cheap path).  The caller
	 * must also know DIRFD's mount to open safely (not FUSE, NFS...): the
	 * mount of the file reached is asked only on the O_PATH path.
	 */
	DCP_PAGES_DIR_PRIVATE = 1 << 3,
	/*
	 * Count (and, for dcp_pages_warm_at(), read) the file's inode once in
	 * the run even when it has one name: under -L a file is reached by
	 * several paths (a link to it, a link to a directory above it), as a
	 * file with hard links is by several names (dcp_pages_claim_any()).
	 */
	DCP_PAGES_ONCE = 1 << 4,
	/*
	 * Measure without claiming (P->again stays false): a name the caller
	 * counts in no run total, as a walk's repeat of a directory another
	 * root listed (e->again).  Claimed, it could take the claim from the
	 * name that counts, measured at the same time on another thread, and
	 * the file would count nowhere.
	 */
	DCP_PAGES_NO_CLAIM = 1 << 5,
};

/*
 * dcp_pages_dir_private - may a directory with owner UID and mode MODE
 * (fstat of its descriptor) have entries renamed or created only by this
 * process's user?  Its owner is the effective user and neither group nor
 * others may write to it (a POSIX ACL's write grant shows in the group
 * bits).  Root's own trees (/usr) are; a tree users write to is not.
 */
bool dcp_pages_dir_private(uid_t uid, mode_t mode);

/*
 * One measuring context per run: every function below that opens a file
 * by name takes one.  It holds what a run keeps from one file to the next
 * and no other run sees: the inodes it claimed (dcp_pages_claim(): a
 * second run, before or at the same time, counts its hard links afresh),
 * its descriptor of /proc/self/fd (closed by dcp_pages_run_free(): a
 * program's descriptors are as they were), the mount table it judges
 * mounts by, and how many closes it may queue (from RLIMIT_NOFILE at its
 * start).  Any number of threads may use one run at once.
 */
struct dcp_pages_run;
struct dcp_mounts;

struct dcp_pages_run_opts {
	/* The mount table to judge a file's mount by (dcp_mounts_load()),
	 * borrowed: it must outlive the run.  NULL: the run reads one, on the
	 * calling thread. */
	const struct dcp_mounts *mounts;
};

/*
 * dcp_pages_run_new - a measuring context in *OUT (OPTS may be NULL).
 * Returns 0, -ENOMEM, or dcp_mounts_load()'s error.
 */
int dcp_pages_run_new(const struct dcp_pages_run_opts *opts, struct dcp_pages_run **out);

/*
 * dcp_pages_run_free - free R (NULL: nothing), closing its descriptors and
 * the closes the calling thread queued; the library's threads close theirs
 * when they end.
 */
void dcp_pages_run_free(struct dcp_pages_run *r);

/*
 * dcp_pages_fds_per_thread - the most descriptors one thread holds at once
 * while measuring or warming files with R (their looks and opens, its
 * io_uring and the closes queued in it): a walker or pool counts it per
 * thread in its RLIMIT_NOFILE budget, so that any -j completes under any
 * limit.  Made under a soft limit below 4096, R queues no close (3).
 */
unsigned dcp_pages_fds_per_thread(const struct dcp_pages_run *r);

/*
 * dcp_pages_support - which method works here: one cachestat(2), else one
 * mincore(2), on a one-page memfd.  Returns DCP_PAGES_CACHESTAT or
 * DCP_PAGES_MINCORE, or -ENOSYS (or the errno) when neither works.  The
 * result is remembered: dcp_pages_fd() uses the same method from then on.
 */
int dcp_pages_support(void);

/*
 * dcp_pages_unsupported_reason - the one sentence for a person when
 * dcp_pages_support() failed with ERR.  Returns a thread-local string.
 */
const char *dcp_pages_unsupported_reason(int err);

/* dcp_pages_method_name - "cachestat", "mincore" or "none". */
const char *dcp_pages_method_name(enum dcp_pages_method m);

/*
 * dcp_pages_fd - measure the open regular file FD (any open mode).
 * Returns 0, or -errno: -EPERM when the kernel reports residency only to
 * those who may write the file (cachestat and mincore, since Linux 5.2 and
 * 6.15, for a caller that is neither the owner nor privileged), -ENOSYS
 * when neither method exists, -EINVAL when FD is no regular file.
 */
int dcp_pages_fd(int fd, struct dcp_pages *out);

/*
 * dcp_pages_open_at - the measuring open of NAME relative to DIRFD: one
 * lookup, openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_CACHED) (no
 * O_NOFOLLOW with DCP_PAGES_FOLLOW); the type is checked on that
 * descriptor, and only a regular file's is reopened for reading
 * (O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC), so what is opened is the object
 * checked, whatever is renamed meanwhile.  With DCP_PAGES_ISREG and
 * DCP_PAGES_DIR_PRIVATE (no one else can rename in DIRFD) it is one
 * openat2(O_RDONLY|O_NONBLOCK|O_NOCTTY, RESOLVE_CACHED) of the name and an
 * fstat after.  Returns the descriptor, or -EAGAIN
 * (the lookup missed, or no /proc to reopen through), -ENODEV when it is
 * not a regular file, or -errno.
 */
int dcp_pages_open_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags);

/*
 * dcp_pages_at - dcp_pages_open_at(), dcp_pages_fd() and close.
 * Returns 0, or -errno as those (-EAGAIN: residency unknown; -ENODEV: not
 * a regular file).
 */
int dcp_pages_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
		 struct dcp_pages *out);

/*
 * Resident byte ranges of a file: [offset, length] pairs, page-aligned,
 * coalesced, ascending (a residency manifest's snapshot).  Owned by the
 * caller, reused from file to file.
 */
/*
 * The most ranges kept of one file: where more pages lie apart, the ranges
 * closest to each other are joined (the gaps of one page first, then of
 * two, four...) until no more remain than this, so that the ranges are a
 * superset of the resident pages and a manifest's record stays bounded
 * (DCP_MANIFEST_MAX_RECORD).  Only a file of more than half a GiB with
 * every other page resident comes near it.
 */
#define DCP_PAGES_MAX_RANGES 65536

struct dcp_pages_ranges {
	uint64_t (*v)[2];
	size_t n, cap;
	int failed; /* 0, or why there are no ranges (-ENOMEM) */
	/* What tells the file after a reboot (dcp_fsid.h), asked of the
	 * measured descriptor only when it has ranges (N > 0): its
	 * filesystem's UUID (fs.from DCP_FSID_NONE: none) and its handle
	 * (handle.len 0: the filesystem gives none). */
	struct dcp_fsid fs;
	struct dcp_handle handle;
};

/*
 * dcp_pages_at_ranges - dcp_pages_at(), and when RG is not NULL and the file
 * was measured, its resident ranges in RG: from cachestat's totals when
 * nothing or all of a file without holes is resident, else from mincore(2)
 * over its data extents through the same descriptor.  Nothing is read.  A
 * file whose residency the caller may not see is not measured at all
 * (-EPERM); RG->failed is set only when memory ran out.  A file with
 * ranges also gets its filesystem's UUID and its handle in RG
 * (dcp_fsid_of(), dcp_handle_of() of the same descriptor).
 */
int dcp_pages_at_ranges(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
			struct dcp_pages *out, struct dcp_pages_ranges *rg);

/* dcp_pages_ranges_free - free RG's memory. */
void dcp_pages_ranges_free(struct dcp_pages_ranges *rg);

/*
 * dcp_pages_json_ranges - the members of a manifest's file record (format
 * 2, dcprobe(7)): ,"ranges":[] for a file with nothing resident, else
 * ,"identity":{"fs":FS,"dev":"M:m","ino":N,"handle":"T:HEX","size":N,
 * "mtime_ns":N},"ranges":[[O,L],...]; "fs" only when FS >= 0 (the number
 * of the manifest's "fs" record that gives RG->fs), "handle" only when RG
 * has one.  When RG->failed: the identity, and "ranges":null.
 */
void dcp_pages_json_ranges(struct dcp_buf *b, const struct dcp_pages *p,
			   const struct dcp_pages_ranges *rg, long fs);

/*
 * dcp_pages_fstype_opens_safely - false for filesystem types on which an
 * open(2) may wait for a userspace daemon or a server however cached the
 * dentries are (fuse, fuseblk, fuse.*, virtiofs, nfs, nfs4, cifs, smb3,
 * 9p, ceph, afs, glusterfs, lustre, ocfs2, gfs2): a tree walked by root
 * may hold a FUSE mount made by a user, whose daemon never answers.
 * NULL (type not known) is safe.
 */
bool dcp_pages_fstype_opens_safely(const char *fstype);

/*
 * dcp_pages_state_of - the state for a dcp_pages_at() result.  A file is
 * unknown, never an error, when its residency cannot be had without I/O,
 * waiting, or a privilege the caller lacks; the result says why:
 *   -EAGAIN     "lookup": its lookup missed; opening it would read the disk
 *   -EREMOTE    "filesystem": FUSE, NFS... (or a mount the table did not
 *               hold): an open there may wait on a daemon or a server
 *   -EPERM, -EACCES  "permission": the kernel reports page-cache residency
 *               only to a caller who owns the file or may write it
 *               (cachestat and mincore, for an unprivileged caller), or the
 *               caller may not open it
 *   -ENOMEDIUM  "no_proc": no /proc to reopen the checked descriptor
 */
enum dcp_pages_state dcp_pages_state_of(int ret);

/* dcp_pages_unknown_reason - "lookup", "filesystem", "permission" or
 * "no_proc" for a result whose state is DCP_PAGES_UNKNOWN, else NULL. */
const char *dcp_pages_unknown_reason(int ret);

/* dcp_pages_error_message - the words of a result whose state is
 * DCP_PAGES_FAILED: "changed since the manifest" for -ESTALE, else
 * strerror(-RET).  The JSON records' "data_message" and the messages of
 * a file whose record is not printed (-q, -s) say the same. */
const char *dcp_pages_error_message(int ret);

/* Sums over many files. */
struct dcp_pages_counts {
	uint64_t files;		   /* measured */
	uint64_t unknown;	   /* not opened: the dentry missed, FUSE, NFS... */
	uint64_t failed;	   /* open or measurement failed */
	uint64_t size, pages, resident, dirty, writeback, evicted, recently_evicted;
	uint64_t resident_bytes;   /* never more than size (struct dcp_pages) */
	enum dcp_pages_method method; /* how the files counted were measured:
				       * mincore if any one was, cachestat if
				       * all were, none for no file */
};

/*
 * dcp_pages_claim - count P's inode once in run R, as du does: false (and
 * P->again set) when another name of it (a hard link), or another path to
 * it (a bind mount: dcp_pages_shared()), was claimed before in R.
 * dcp_pages_at() claims what it measures; a caller of dcp_pages_fd()
 * claims itself.  Thread-safe.
 */
bool dcp_pages_claim(struct dcp_pages_run *r, struct dcp_pages *p);

/*
 * dcp_pages_claim_any - the same for an inode with one name too: a file
 * that may be reached by several paths (under -L) counts once per run.
 * dcp_pages_at() with DCP_PAGES_ONCE claims so.  Thread-safe.
 */
bool dcp_pages_claim_any(struct dcp_pages_run *r, struct dcp_pages *p);

/*
 * dcp_pages_shared - the rule run R counts an inode once by: may P's inode
 * (P->dev, P->ino, P->nlink as measured) be reached again in R by another
 * name or path?  True when it has several names, or when its filesystem is
 * shown by two mounts of R's mount table where one's root is the other's
 * or above it (a bind mount of a directory: the same device and inode by
 * another path, even with one name).  Files with one name on a filesystem
 * mounted once, nearly all, are not: R remembers nothing of them.  A
 * caller keeping sets of its own (per directory, dcp_pages_links_add())
 * enters what this says, and under -L every file.
 */
bool dcp_pages_shared(const struct dcp_pages_run *r, const struct dcp_pages *p);

/*
 * The inodes with several names measured in one subtree, for totals per
 * directory that count each once: a directory's set takes its own files'
 * (dcp_pages_links_add, by the one thread that visits it) and, when a
 * child is done, the child's (dcp_pages_links_merge, serialised), taking
 * back from the running sum what the two had in common.  A hash set by
 * device and inode (V: CAP slots, N used, an empty one all zero); files with
 * one name enter only when a file may be reached by several paths (under
 * -L, dcp_pages_shared()); a merge moves the smaller set into the larger.
 */
struct dcp_pages_link {
	uint64_t dev, ino;	   /* the inode, and the figures counted for it */
	uint64_t size, pages, resident, resident_bytes, dirty, writeback, evicted,
		recently_evicted;
};
struct dcp_pages_links {
	struct dcp_pages_link *v;
	size_t n, cap;
};

/* dcp_pages_links_add - add P's inode to L: false when it is there already. */
bool dcp_pages_links_add(struct dcp_pages_links *l, const struct dcp_pages *p);

/*
 * dcp_pages_links_merge - move CHILD's inodes into PARENT (CHILD is then
 * empty); each one PARENT had already is taken back out of SUM, to which
 * the child's total was added.  Out of memory, the parent keeps what it had.
 */
void dcp_pages_links_merge(struct dcp_pages_links *parent, struct dcp_pages_links *child,
			   struct dcp_pages_counts *sum);

/* dcp_pages_links_free - release the set's memory; it is then empty. */
void dcp_pages_links_free(struct dcp_pages_links *l);

/*
 * dcp_pages_count - add one dcp_pages_at() result RET (with P when 0) to C;
 * an inode counted before under another name (P->again) adds nothing.
 */
void dcp_pages_count(struct dcp_pages_counts *c, int ret, const struct dcp_pages *p);

/* dcp_pages_counts_add - add B into A. */
void dcp_pages_counts_add(struct dcp_pages_counts *a, const struct dcp_pages_counts *b);

/* dcp_pages_resident_pct - resident over spanned pages of measured files;
 * 100 when there were none. */
double dcp_pages_resident_pct(const struct dcp_pages_counts *c);

/*
 * dcp_pages_verdict - the --min-resident verdict: true when the resident
 * share is at least MIN percent and no file's residency is unknown (an
 * unknown file's lookup would block: it is not warm).
 */
bool dcp_pages_verdict(const struct dcp_pages_counts *c, double min);

/* ---- output ---- */

/*
 * dcp_pages_text - the residency columns of a per-path text line, each
 * followed by a space, byte counts in UNITS (dcp_buf_bytes()):
 *   measured: "pages=R/N bytes=B/S dirty=D writeback=W evicted=E "
 *             (E: recently evicted; dirty, writeback, evicted are "-" under mincore)
 *   unknown:  "pages=unknown "     failed: "pages=error:ENAME "
 *   skipped:  "pages=- "
 */
void dcp_pages_text(struct dcp_buf *b, int ret, const struct dcp_pages *p, enum dcp_units units);

/*
 * dcp_pages_entry_text - a whole per-path text line with residency: the
 * probe's state (and errno name), the columns of dcp_pages_text(), the
 * quoted path: "cached pages=3/12 bytes=... PATH\n", "miss pages=unknown PATH\n".
 * RET is the dentry probe's result, PRET and P the measurement's; byte
 * counts in UNITS.
 */
void dcp_pages_entry_text(struct dcp_buf *b, const char *path, size_t len, int ret,
			  int pret, const struct dcp_pages *p, enum dcp_units units);

/*
 * dcp_pages_json - the members for a JSON object, each preceded by a comma:
 *   ,"data":"measured|unknown|not_regular|error"
 *   measured: ,"pages":{"resident":R,"total":N,"resident_bytes":B,"size":S,
 *             "dirty":D,"writeback":W,"evicted":E,"recently_evicted":RE,
 *             "method":"cachestat|mincore"}  (mincore: dirty... are null)
 *   error:    ,"data_errno":"ENAME","data_message":"..."
 */
void dcp_pages_json(struct dcp_buf *b, int ret, const struct dcp_pages *p);

/*
 * dcp_pages_json_counts - ,"data":{"files":N,"unknown":U,"errors":F,
 * "pages":N,"resident":R,"resident_bytes":B,"size":S,"dirty":D,
 * "writeback":W,"recently_evicted":RE,"resident_percent":P,"method":M}
 * and, with MIN >= 0, "min_resident":MIN inside it.  D, W and RE are null
 * when a file counted was measured by mincore (METHOD "mincore"): a total
 * with an unknown part is unknown, never 0.
 */
void dcp_pages_json_counts(struct dcp_buf *b, const struct dcp_pages_counts *c, double min);

/*
 * dcp_pages_text_counts - "data: R/N pages resident (P%), B/S bytes; D
 * dirty, W writeback, E recently evicted; F files measured, U unknown
 * (not opened), X errors (METHOD)\n", byte counts in UNITS; METHOD and M
 * are C's method ("cachestat", "mincore", or "none" when no file was
 * measured).  D, W and E are "?" under mincore: unknown, never 0.
 */
void dcp_pages_text_counts(struct dcp_buf *b, const struct dcp_pages_counts *c,
			   enum dcp_units units);

/*
 * dcp_pages_json_insert - insert TEXT (LEN bytes) before the closing brace
 * of the last JSON object in B, which must end with "}\n": so an object
 * written by another module gains members without that module knowing.
 * Returns 0, or -EINVAL when B does not end that way.
 */
int dcp_pages_json_insert(struct dcp_buf *b, const char *text, size_t len);

/*
 * dcp_pages_table_row - give the table row that starts at offset FROM of B
 * (a --per-dir or --per-mount row written by another module) the data
 * figures of C: in text, "RPCT%\tRESIDENT/PAGES\t" inserted before the
 * row's last column (the path: tabs in names are escaped, so the last tab
 * precedes it), "unknown" for RPCT when a file's residency is unknown; in
 * JSON, the members of dcp_pages_json_counts().  NUL rows are left alone.
 * JSON says whether the row is JSON.
 */
void dcp_pages_table_row(struct dcp_buf *b, size_t from, bool json,
			 const struct dcp_pages_counts *c);

/* One labelled set of counts for dcp_pages_prometheus(). */
struct dcp_pages_series {
	const char *value;  /* the label's value (root, mount point, directory); NULL: none */
	size_t len;
	const char *fstype; /* adds fstype="..." when not NULL */
	const struct dcp_pages_counts *c;
	bool has_mnt_id;    /* adds mount_id="N" (two mounts never share a series) */
	uint64_t mnt_id;
};

/* Which series dcp_pages_prometheus() writes. */
enum dcp_pages_prom_scope {
	DCP_PAGES_PROM_ROOT,  /* dcprobe_data_*{[root]} */
	DCP_PAGES_PROM_MOUNT, /* dcprobe_mount_data_*{mountpoint,fstype,mount_id} */
	DCP_PAGES_PROM_DIR,   /* dcprobe_dir_data_*{path} (--per-dir) */
};

/*
 * dcp_pages_prometheus - three gauge families into M (dcp_prom.h), one
 * sample set per series, labelled as SCOPE says (no root label for a series
 * without a value):
 *   PREFIX_pages{...,kind="total|resident|dirty|writeback|recently_evicted"}
 *   PREFIX_files{...,state="measured|unknown|error"}
 *   PREFIX_resident_ratio{...}  0..1
 * (no dirty, writeback or recently_evicted sample for counts measured by
 * mincore: those totals are unknown)
 * PREFIX is dcprobe_data, dcprobe_mount_data or dcprobe_dir_data.
 */
void dcp_pages_prometheus(struct dcp_prom *m, enum dcp_pages_prom_scope scope,
			  const struct dcp_pages_series *s, size_t n);

/* ---- warming ---- */

/*
 * How warm --pages brings data in.  Measured on a cold copy of /usr/share
 * (59,833 files, 1.2 GB, loop device with direct I/O on a virtio disk, 2
 * CPUs, 64 threads; tests/bench/bench-pages.sh, medians of 5): read 2.68 s,
 * uring 2.86 s, readahead 3.09 s, willneed 3.38 s, within each other's
 * noise; vmtouch -t 25.9 s.  Plain reads are the default.
 */
enum dcp_pages_warm_method {
	DCP_PAGES_WARM_READ = 0,     /* pread(2) into a scratch buffer */
	DCP_PAGES_WARM_WILLNEED = 1, /* posix_fadvise(POSIX_FADV_WILLNEED) first */
	DCP_PAGES_WARM_READAHEAD = 2,/* readahead(2) first */
	DCP_PAGES_WARM_URING = 3,    /* io_uring reads, many per file in flight
				      * (plain reads where io_uring is missing) */
};

/*
 * Limits shared by every thread of one run.  The counters from "used" on
 * are updated by those threads with the compiler's __atomic builtins (plain
 * types here, so that the header is C99 and C++): read them with
 * dcp_pages_budget_read() while a run may still be going.
 */
struct dcp_pages_budget {
	uint64_t max_bytes;	/* total bytes to bring in, charged in whole pages (a
				 * read brings a page in whole); 0 = no limit */
	uint64_t max_file_size; /* files larger than this are skipped; 0 = no limit */
	enum dcp_pages_warm_method method;
	uint64_t used;		/* bytes asked for so far (whole pages) */
	/* BYTES: read, counted as the budget is charged: pages brought in
	 * times the page size (a 101-byte file read costs a page). */
	uint64_t files, skipped, bytes, errors;
	/* DCP_PAGES_CHECK: pages spanned by the files, resident before and after */
	uint64_t pages, resident_before, resident_after;
	/* DCP_PAGES_CHECK: files read whose residency the kernel shows only to
	 * who may write them (not counted in the pages above) */
	uint64_t unmeasured;
};

/* dcp_pages_budget_read - one counter of a dcp_pages_budget, read atomically. */
static inline uint64_t dcp_pages_budget_read(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
}

/*
 * dcp_pages_warm_at - bring the data of regular file NAME (relative to
 * DIRFD) into the page cache within BUDGET: opened as dcp_pages_open_at()
 * opens (one O_PATH lookup, without RESOLVE_CACHED here, the type checked
 * on that descriptor, and that descriptor reopened), so a FIFO or a device
 * is never opened; only its pages that are not resident now are read (a
 * sparse file's data extents, less what is in memory: asked of cachestat,
 * and of mincore for a file partly resident, without reading), so a warm
 * file costs no read and none of BUDGET.  A cold file is asked for at once
 * with BUDGET's method (read-ahead I/O of the whole range in flight), then
 * read through a scratch buffer, which waits for that I/O, so that the
 * data is resident when the call returns.
 * Returns 0, 1 when a limit skipped it (entirely or in part), or -errno.
 */
int dcp_pages_warm_at(struct dcp_pages_run *r, int dirfd, const char *name, unsigned flags,
		      struct dcp_pages_budget *budget);

/* ---- manifests (dcp_manifest.h) ---- */

/* What -ESTALE means here: the file is not the one the manifest recorded. */
#define DCP_PAGES_MSG_CHANGED "changed since the manifest"

/* Who a file was when a manifest recorded it (dcp_pages_json_ranges()). */
struct dcp_pages_identity {
	uint64_t dev;	   /* st_dev */
	uint64_t ino;	   /* st_ino */
	uint64_t size;	   /* st_size */
	int64_t mtime_ns;  /* st_mtim in ns since the epoch */
	/* Format 2: what survives a reboot.  FS: its filesystem's UUID
	 * (fs.from DCP_FSID_NONE: none recorded, the device number DEV tells
	 * the filesystem, as in format 1); HANDLE_LEN bytes at HANDLE: its
	 * file handle of type HANDLE_TYPE (HANDLE_LEN 0: none recorded). */
	struct dcp_fsid fs;
	int32_t handle_type;
	uint32_t handle_len;
	const uint8_t *handle;
};

/*
 * A manifest's file is opened for reading only after its O_PATH
 * descriptor showed, without opening anything: a regular file; the one
 * recorded (its handle, inode number, size and mtime; its device number
 * when no filesystem UUID was recorded: else -ESTALE); on a mount in the
 * table where an open does not wait (not FUSE, NFS...: else -EREMOTE) and
 * no pseudo filesystem (proc, sysfs, debugfs, tracefs, securityfs,
 * configfs, cgroup... by the mount table's type, then by fstatfs(2) of
 * that descriptor: else -EOPNOTSUPP).  Then that descriptor is reopened
 * (/proc/self/fd), never the name looked up again, and the filesystem's
 * UUID, when one was recorded, is asked of the reopened descriptor
 * (FS_IOC_GETFSUUID takes no O_PATH one) before anything is read or
 * measured: another one closes it (-ESTALE).
 */

/*
 * Why a file is not the one recorded (-ESTALE), in the words a report
 * gives after DCP_PAGES_MSG_CHANGED: the filesystem (its UUID, or without
 * one its device number), the file (its handle, else its inode number: a
 * file deleted and made again under the same name, even on the same inode
 * number, has another generation), its size and mtime.
 */
enum dcp_pages_stale {
	DCP_PAGES_STALE_NONE = 0,
	DCP_PAGES_STALE_FS,	  /* another filesystem (UUID) */
	DCP_PAGES_STALE_DEV,	  /* another device number (no UUID recorded) */
	DCP_PAGES_STALE_FILE,	  /* another file (handle or inode number) */
	DCP_PAGES_STALE_UNTOLD,	  /* a handle recorded, none to be had now */
	DCP_PAGES_STALE_CONTENT,  /* another size or mtime */
	DCP_PAGES_STALE_TYPE,	  /* no regular file now */
};

/* dcp_pages_stale_text - the words for WHY ("another filesystem"...), or NULL for NONE. */
const char *dcp_pages_stale_text(enum dcp_pages_stale why);

/*
 * dcp_pages_at_manifest - measure regular file NAME (relative to DIRFD,
 * looked up as dcp_pages_at() does: RESOLVE_CACHED, never waiting; opened
 * by the rule above) within the N byte ranges R a manifest recorded for it
 * (each [offset, length], clipped to the file's size now): OUT's size and
 * pages are the recorded bytes and pages, its resident count those in
 * memory now.  Returns 0, -ESTALE when the file is not ID any more
 * (another filesystem, file, size or mtime, or no regular file at all:
 * enum dcp_pages_stale), -EREMOTE on a filesystem that is not read (FUSE,
 * NFS..., or pseudo: residency "filesystem" unknown), or as dcp_pages_at().
 */
int dcp_pages_at_manifest(struct dcp_pages_run *run, int dirfd, const char *name,
			  unsigned flags, const struct dcp_pages_identity *id,
			  const uint64_t (*r)[2], size_t n, struct dcp_pages *out);

/* What a restore reads of one file: dcp_pages_plan_at(), then dcp_pages_plan_read(). */
struct dcp_pages_plan {
	int fd;			/* the checked file while reads are pending, else -1 */
	enum dcp_pages_stale stale; /* -ESTALE: why */
	uint64_t bytes;		/* bytes of MISSING */
	uint64_t data;		/* what the file holds (its size, or a sparse file's
				 * allocated bytes): what max_file_size judges */
	uint64_t physical;	/* where MISSING begins on the device (FIEMAP), or
				 * UINT64_MAX: reads are issued in this order */
	bool unmeasured;	/* residency not the caller's to see: all recorded */
	struct dcp_pages_ranges missing; /* the recorded pages not resident now */
};

/*
 * dcp_pages_plan_at - open regular file NAME relative to DIRFD without
 * leaving DIRFD's mount (RESOLVE_NO_XDEV; the lookup may do I/O), by the
 * rule above (ID and the filesystem checked on the O_PATH descriptor, then
 * that descriptor reopened, its UUID asked), and find which pages of the
 * N recorded ranges R (clipped to its size) are not resident now, without
 * reading them.  Leaves P->fd open when there is something to read.
 * Returns 0 (P->bytes may be 0: nothing missing, or another name of an
 * inode planned before), -ESTALE (why in P->stale), -ENODEV (not a
 * regular file), -EREMOTE, -EOPNOTSUPP, -errno.
 */
int dcp_pages_plan_at(struct dcp_pages_run *run, int dirfd, const char *name,
		      const struct dcp_pages_identity *id, const uint64_t (*r)[2], size_t n,
		      struct dcp_pages_plan *p);

/* Which limit of a dcp_pages_budget left a file's data out. */
enum dcp_pages_limit {
	DCP_PAGES_LIMIT_NONE = 0,
	DCP_PAGES_LIMIT_BYTES = 1,     /* max_bytes ran out: read in part, or not at all */
	DCP_PAGES_LIMIT_FILE_SIZE = 2, /* it holds more than max_file_size: not read */
};

/*
 * dcp_pages_plan_read - read P's missing pages exactly (no read-ahead past
 * them) within BUDGET, counting there, and close P->fd.  Returns 0,
 * DCP_PAGES_LIMIT_BYTES or DCP_PAGES_LIMIT_FILE_SIZE when a limit left
 * some or all of them out, or -errno.
 */
int dcp_pages_plan_read(struct dcp_pages_plan *p, struct dcp_pages_budget *budget);

/* dcp_pages_plan_free - close what P holds open and free its ranges. */
void dcp_pages_plan_free(struct dcp_pages_plan *p);

/*
 * dcp_pages_parse_size - a byte count: digits and an optional suffix as
 * coreutils reads one: K, M, G, T, P, E or KiB, MiB... for powers of 1024,
 * KB, MB... for powers of 1000 (the letter in either case).  Returns 0 or
 * -EINVAL (also for an overflow).
 */
int dcp_pages_parse_size(const char *s, uint64_t *out);

/*
 * dcp_pages_default_max_bytes - the data budget of a warm run that names
 * none: half of MemAvailable in /proc/meminfo, so that a tree holding a huge
 * (or sparse) file cannot push the whole page cache out.  0 when unknown.
 */
uint64_t dcp_pages_default_max_bytes(void);

/* dcp_pages_warm_method_parse - "willneed", "readahead", "read"; -EINVAL. */
int dcp_pages_warm_method_parse(const char *name);

#ifdef __cplusplus
}
#endif

#endif
