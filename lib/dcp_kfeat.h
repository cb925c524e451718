/* SPDX-License-Identifier: MIT */
/*
 * dcp_kfeat.h - the kernel mechanisms dcprobe uses, each asked of the
 * running kernel (never judged by its version number), and what dcprobe
 * does without each (dcprobe(7), "KERNELS").
 *
 * Each probe is one harmless call that the kernel refuses with ENOSYS,
 * EINVAL, ENOTTY or EOPNOTSUPP when it lacks the mechanism: on "/", on a
 * memfd of the probe's own, on the caller's own pidfd, or on a ring of two
 * entries; nothing outside the process is changed and nothing is read
 * from a disk.
 */
#ifndef DCP_KFEAT_H
#define DCP_KFEAT_H

#ifdef __cplusplus
extern "C" {
#endif

/* The mechanisms, in the order dcache-probe --diagnose lists them. */
enum dcp_kfeat {
	DCP_KFEAT_RESOLVE_CACHED = 0,	 /* openat2(2) with RESOLVE_CACHED (5.12) */
	DCP_KFEAT_STATX_MNT_ID,		 /* statx(2) STATX_MNT_ID (5.8) */
	DCP_KFEAT_IO_URING,		 /* io_uring_setup(2) (5.1) */
	DCP_KFEAT_URING_OPENAT2,	 /* IORING_OP_OPENAT2 (5.6) */
	DCP_KFEAT_URING_DEFER_TASKRUN,	 /* IORING_SETUP_DEFER_TASKRUN (6.1) */
	DCP_KFEAT_URING_SPARSE_FILES,	 /* sparse registered files (5.19) */
	DCP_KFEAT_CACHESTAT,		 /* cachestat(2) (6.5) */
	DCP_KFEAT_FSUUID,		 /* FS_IOC_GETFSUUID (6.9) */
	DCP_KFEAT_HANDLE_FID,		 /* name_to_handle_at(2) AT_HANDLE_FID (6.5) */
	DCP_KFEAT_OPEN_BY_HANDLE,	 /* open_by_handle_at(2) (2.6.39) */
	DCP_KFEAT_FANOTIFY_DFID_NAME,	 /* fanotify FAN_REPORT_DFID_NAME (5.9) */
	DCP_KFEAT_FANOTIFY_PIDFD,	 /* fanotify FAN_REPORT_PIDFD (5.15) */
	DCP_KFEAT_FANOTIFY_MARK_IGNORE, /* FAN_MARK_IGNORE, evictable (6.0) */
	DCP_KFEAT_PIDFD_OPEN,		 /* pidfd_open(2) (5.3) */
	DCP_KFEAT_PIDFD_INFO,		 /* ioctl PIDFD_GET_INFO (6.13) */
	DCP_KFEAT_PIDFS,		 /* pidfs: one inode per process (6.9) */
	DCP_KFEAT_PROC_CONNECTOR,	 /* the proc connector's fork events */
	DCP_KFEAT_NFEATS
};

/* What the kernel answered. */
enum dcp_kfeat_state {
	DCP_KFEAT_PRESENT = 0, /* the call did what the mechanism does */
	DCP_KFEAT_ABSENT = 1,  /* this kernel does not have it */
	DCP_KFEAT_BLOCKED = 2, /* it may exist, but this process may not use
				* it: a seccomp filter, a security module, a
				* sysctl or a missing privilege */
};

/* One mechanism's answer. */
struct dcp_kfeat_result {
	enum dcp_kfeat_state state;
	int err;	 /* what the kernel answered (a positive errno), 0 when present */
	const char *why; /* BLOCKED (or ABSENT, when it is known): by what, a
			  * static string; else NULL */
};

/*
 * dcp_kfeat_probe - ask the running kernel for mechanism F and store the
 * answer in *OUT.  Returns 0, -EINVAL for an F out of range, or -errno
 * when the question itself could not be asked (-EMFILE, -ENOMEM: no
 * descriptor or memory for the probe): then nothing is known about F.
 */
int dcp_kfeat_probe(enum dcp_kfeat f, struct dcp_kfeat_result *out);

/*
 * dcp_kfeat_name - a short stable name for F ("resolve-cached",
 * "cachestat", "fsuuid"...), as dcache-probe --diagnose prints it.
 * Returns a static string; NULL for an F out of range.
 */
const char *dcp_kfeat_name(enum dcp_kfeat f);

/*
 * dcp_kfeat_call - the kernel interface F is, as its man page names it
 * ("openat2(2) RESOLVE_CACHED"), and the first Linux release that has it
 * ("5.12"; a distribution may have it earlier, as Debian 11's 5.10 has
 * RESOLVE_CACHED: only dcp_kfeat_probe() knows).  Static strings; NULL for
 * an F out of range.
 */
const char *dcp_kfeat_call(enum dcp_kfeat f, const char **since);

/*
 * dcp_kfeat_without - one clause saying what dcprobe does without F and
 * what that changes in its numbers ("per-file dirty, writeback and evicted
 * pages unknown (mincore(2))").  A static string; NULL for an F out of
 * range.
 */
const char *dcp_kfeat_without(enum dcp_kfeat f);

/* dcp_kfeat_required - nonzero when nothing can be probed without F. */
int dcp_kfeat_required(enum dcp_kfeat f);

/*
 * dcp_kfeat_state_name - "present", "absent" or "blocked".  A static
 * string; NULL for a value out of range.
 */
const char *dcp_kfeat_state_name(enum dcp_kfeat_state st);

#ifdef __cplusplus
}
#endif

#endif
