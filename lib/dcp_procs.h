/* SPDX-License-Identifier: MIT */
/*
 * dcp_procs.h - who did it: whether a process belongs to the ones a
 * recording keeps (one process and its descendants, or the processes of
 * one cgroup v2 and the cgroups below it), also after it has exited.
 *
 * A live process is asked through a pidfd (PIDFD_GET_INFO, Linux 6.13:
 * its parent and its cgroup; before, /proc/PID/status and /proc/PID/cgroup,
 * checked against the pidfd so that the answer is that process's).  A
 * process that has exited and was reaped has no pidfd: its verdict comes
 * from the lineage, the fork events of the kernel's proc connector
 * (netlink CN_IDX_PROC; CAP_NET_ADMIN in the initial network and pid
 * namespace), each child judged when its fork is read: by its own cgroup
 * while it can still be asked, else by its parent's verdict.  A verdict
 * that cannot be known is DCP_PROCS_UNKNOWN, never a guess.
 *
 * The object owns a netlink socket (dcp_procs_fd(), to poll), a few
 * descriptors and its tables; it prints nothing, installs no handler and
 * starts no thread.  Functions return 0 or -errno.
 */
#ifndef DCP_PROCS_H
#define DCP_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dcp_mounts;
struct dcp_procs;

/* Which processes are kept. */
enum dcp_procs_by {
	DCP_PROCS_PID,	  /* PID and its descendants */
	DCP_PROCS_CGROUP, /* the processes of a cgroup v2 and of the cgroups below it */
};

enum {
	DCP_PROCS_NO_LINEAGE = 1 << 0, /* do not listen to fork events (tests) */
};

struct dcp_procs_opts {
	enum dcp_procs_by by;
	pid_t pid;		/* DCP_PROCS_PID: it must exist now */
	const char *cgroup;	/* DCP_PROCS_CGROUP: its path in the hierarchy
				 * ("/system.slice/app.service", as /proc/PID/cgroup
				 * says it); it need not exist yet */
	const struct dcp_mounts *mounts; /* to find the cgroup2 mount; NULL:
					  * dcp_procs_new() reads one */
	unsigned flags;		/* DCP_PROCS_* */
	int rcvbuf;		/* the fork events' socket buffer in bytes once the
				 * self-test passed (with 4 MiB); 0: 4 MiB */
};

/* The verdict on one process. */
enum dcp_procs_verdict {
	DCP_PROCS_NO,	   /* not one of them */
	DCP_PROCS_YES,	   /* one of them */
	DCP_PROCS_UNKNOWN, /* gone before it could be asked, and the lineage does not tell */
};

struct dcp_procs_stats {
	bool lineage;		 /* fork events are followed (the self-test passed) */
	int lineage_err;	 /* why not: -errno of the socket or of the
				  * kernel's answer to our LISTEN (the self-test),
				  * or -ETIMEDOUT when it did not answer */
	uint64_t lineage_lost;	 /* times the kernel dropped fork events (ENOBUFS) */
	uint64_t forks;		 /* fork events read */
	uint64_t asked;		 /* dcp_procs_decide() calls */
	uint64_t yes, no, unknown;
	uint64_t by_lineage;	 /* verdicts the lineage gave (the process was gone) */
	uint64_t seeded;	 /* processes that were theirs at the start */
	uint64_t fallback;	 /* answers read from /proc (no PIDFD_GET_INFO) */
};

/*
 * dcp_procs_new - start following the processes of O: open the fork
 * events' socket (unless DCP_PROCS_NO_LINEAGE) and test it with one fork of
 * our own; then note the processes that are theirs now (PID's descendants
 * from /proc/PID/task/TID/children, or the members of the cgroup and the
 * cgroups below it).  Fork events that cannot be had (no CAP_NET_ADMIN,
 * another network namespace, no CONFIG_PROC_EVENTS) are no error: the
 * stats say why.  Returns 0 and *OUT, or -ESRCH (no process PID, or only
 * its zombie: it opens nothing more), -ENOENT (DCP_PROCS_CGROUP and no
 * cgroup2 mount in O->mounts, or with O->mounts NULL in
 * /proc/self/mountinfo, read and freed by the call), -EINVAL (a cgroup path that is not
 * absolute, or has "." or ".." components), -ENOTDIR (the cgroup path
 * names a file of the hierarchy, or lies below one), -ENXIO (neither the
 * cgroup nor its parent exists: a cgroup that does not exist yet is
 * followed once made, in a parent that exists), -ENOMEM.
 */
int dcp_procs_new(const struct dcp_procs_opts *o, struct dcp_procs **out);

/* dcp_procs_fd - the fork events' socket, to poll; -1 without lineage. */
int dcp_procs_fd(const struct dcp_procs *p);

/*
 * dcp_procs_drain - read the fork and exit events queued now.  Call it
 * before reading the events to be judged: a child's fork is queued before
 * anything the child does.  Returns 0, or -ENOBUFS when the kernel dropped
 * some (counted in lineage_lost: a verdict the lineage would have given is
 * then DCP_PROCS_UNKNOWN).
 */
int dcp_procs_drain(struct dcp_procs *p);

/*
 * dcp_procs_settled - the caller has read every event queued before the
 * last dcp_procs_drain(): what the lineage keeps of processes whose exit it
 * had read by then may be forgotten (the table stays the size of the live
 * processes).
 */
void dcp_procs_settled(struct dcp_procs *p);

/*
 * dcp_procs_decide - the verdict on process PID (its thread group ID as
 * the caller's pid namespace sees it; 0 when not seen), with PIDFD a pidfd
 * of it, or -1 when there is none (the process was reaped).  PIDFD stays
 * the caller's.
 */
enum dcp_procs_verdict dcp_procs_decide(struct dcp_procs *p, pid_t pid, int pidfd);

/* dcp_procs_stats - what P did so far. */
void dcp_procs_stats(const struct dcp_procs *p, struct dcp_procs_stats *st);

/* dcp_procs_free - stop listening and release P (NULL is accepted). */
void dcp_procs_free(struct dcp_procs *p);

/*
 * dcp_procs_cgroup_path - the hierarchy path of cgroup PATH: PATH itself
 * when it is not a directory under a mounted cgroup2 filesystem of MOUNTS
 * (only its text is looked at: no lookup is made), else PATH without the
 * mount point ("/sys/fs/cgroup/system.slice/x" -> "/system.slice/x").
 * MOUNTS NULL: the call reads /proc/self/mountinfo itself and frees it.
 * Returns a malloc'd string, or NULL with errno ENOMEM (or the errno of
 * a table that could not be read).
 */
char *dcp_procs_cgroup_path(const struct dcp_mounts *mounts, const char *path);

#ifdef __cplusplus
}
#endif

#endif
