/* SPDX-License-Identifier: MIT */
/*
 * dcp_probe.h - classify one path lookup with openat2(RESOLVE_CACHED).
 *
 * The library's overview, with a complete example, is dcprobe(3); the
 * states and the kernel's caveats are in dcprobe(7).
 */
#ifndef DCP_PROBE_H
#define DCP_PROBE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses shared by every command (see dcprobe(3) and dcprobe(7)). */
enum {
	DCP_EXIT_OK = 0,	   /* everything cached / action succeeded */
	DCP_EXIT_COLD = 1,	   /* at least one miss, or threshold not met */
	DCP_EXIT_ERROR = 2,	   /* another errno, write error, bad input data */
	DCP_EXIT_UNSUPPORTED = 3,  /* this system cannot answer */
	DCP_EXIT_USAGE = 64,	   /* bad command line (argp's default) */
};

/* The residency state of one path: exactly one per probe. */
enum dcp_state {
	DCP_CACHED = 0,	  /* the whole walk ran from the dcache */
	DCP_NEGATIVE = 1, /* a cached negative dentry: absent, lookup cached */
	DCP_MISS = 2,	  /* resolution would need I/O or a blocking step */
	DCP_ERROR = 3,	  /* any other errno */
	DCP_NSTATES
};

/* Flags for dcp_probe_at() and dcp_open_cached(). */
enum {
	DCP_FOLLOW = 1 << 0, /* follow a symlink in the final component */
	DCP_OPATH = 1 << 1,  /* dcp_open_cached(): an O_PATH descriptor */
	/*
	 * dcp_probe_at(): probe without opening anything (the walker uses it
	 * for every entry).  The probe asks for O_WRONLY|O_DIRECTORY instead
	 * of O_PATH: the kernel checks both only after the whole walk
	 * completed in RCU mode, and then refuses with ENOTDIR (not a
	 * directory) or EISDIR (a directory may not be opened for writing),
	 * which both prove a cached lookup.  Nothing stays open, so nothing
	 * can keep a filesystem busy, and no device or FIFO is ever opened.
	 */
	DCP_NOTDIR = 1 << 2,
	/*
	 * dcp_probe_at(): do not ask again after EAGAIN.  By default a miss
	 * is probed a second time, because a concurrent mount, unmount or
	 * rename anywhere fails a cached RCU walk with EAGAIN too; and when
	 * the thread has just seen a miss the next probe did not repeat (a
	 * mount namespace made or torn down changes the mount table for up
	 * to milliseconds), once more after the table has been still for
	 * two milliseconds; then after pauses of 50 and 200 microseconds,
	 * which a real miss waits at most once per 20 milliseconds.
	 */
	DCP_ONCE = 1 << 3,
};

/* Counts of states over a run, and the exit status they add up to. */
struct dcp_tally {
	unsigned long long n[DCP_NSTATES];
};

/* Flags for dcp_tally_status(). */
enum {
	/* A negative path is a failure (cachedopen: "could I open it?"). */
	DCP_NEGATIVE_IS_ERROR = 1 << 0,
};

/* dcp_tally_add - count one probe result (0 or -errno from a probe). */
static inline void dcp_tally_add(struct dcp_tally *t, int ret);

/*
 * dcp_tally_status - the exit status for the counts, as in dcprobe(7):
 * 2 if any error (or negative with DCP_NEGATIVE_IS_ERROR), else 1 if any
 * miss, else 0.
 */
int dcp_tally_status(const struct dcp_tally *t, unsigned flags);

/*
 * dcp_state_name - "cached", "negative", "miss" or "error".
 * Returns a static string; NULL for a value out of range.
 */
const char *dcp_state_name(enum dcp_state st);

/*
 * dcp_state_parse - the inverse of dcp_state_name().
 * Returns the state, or -EINVAL for an unknown name.
 */
int dcp_state_parse(const char *name);

/*
 * dcp_state_of_errno - classify the result of a RESOLVE_CACHED lookup:
 * 0 is cached, ENOENT negative, EAGAIN miss, anything else error.
 */
enum dcp_state dcp_state_of_errno(int err);

/*
 * dcp_probe_support - can this kernel answer RESOLVE_CACHED probes?
 * Makes one cached openat2() of "/" (always in the dcache).
 * Returns 0 when it can; -ENOSYS when openat2(2) is missing (before 5.6,
 * or filtered), -EINVAL when RESOLVE_CACHED is unknown (before 5.12),
 * -EPERM when a seccomp filter or security module blocks the call.
 */
int dcp_probe_support(void);

/*
 * dcp_unsupported_reason - one sentence explaining a dcp_probe_support()
 * failure to a person.  Returns a static string.
 */
const char *dcp_unsupported_reason(int err);

/*
 * dcp_errno_unsupported - true when an errno from a probe means "the kernel
 * cannot answer" rather than anything about the path (ENOSYS, EINVAL).
 */
bool dcp_errno_unsupported(int err);

/*
 * dcp_probe_refused - true when ERR (negative) is the refusal a DCP_NOTDIR
 * probe ends with after a cached walk (-ENOTDIR, -EISDIR).
 */
bool dcp_probe_refused(int err);

/*
 * dcp_probe_at - probe PATH relative to DIRFD without perturbing it:
 * openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_CACHED), the descriptor is
 * closed at once.  DCP_FOLLOW drops O_NOFOLLOW.
 * Returns 0 when the lookup was cached, or the negative errno of the
 * failed lookup: -ENOENT (negative dentry), -EAGAIN (miss), other -errno.
 * dcp_state_of_errno(-ret) gives the state.  A path below a directory the
 * caller may not search is -EACCES on every kernel (Linux 6.1 says so,
 * later ones miss): after a miss, for a caller without CAP_DAC_READ_SEARCH
 * or CAP_DAC_OVERRIDE, the mode of the directory where the cached walk
 * stopped (statx AT_STATX_DONT_SYNC: no I/O, no ACL loaded) decides a
 * denial no ACL can lift; one an ACL entry could lift stays -EAGAIN.
 * dcp_probe_again() and dcp_open_cached() do the same.
 */
int dcp_probe_at(int dirfd, const char *path, unsigned flags);

/*
 * dcp_probe_again - what dcp_probe_at() does after its first probe of PATH
 * missed, for a caller that made that first probe itself (through
 * io_uring, dcp_batch_probe()): ask again at once and, if this thread has
 * just seen the machine's mount table change, once more after it has been
 * still for two milliseconds; then after pauses of 50 and 200 microseconds
 * (see dcp_probe_at() in dcp_probe(3)).  The
 * same flags and return value as dcp_probe_at().
 */
int dcp_probe_again(int dirfd, const char *path, unsigned flags);

/*
 * dcp_open_cached - a real read-only open of PATH with RESOLVE_CACHED, as
 * an application would make it: O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK, so
 * a FIFO, a terminal or a device never blocks the caller and never becomes
 * its controlling terminal.  With DCP_OPATH the descriptor is O_PATH
 * instead (the object itself is not opened).  Without DCP_FOLLOW a symlink
 * in the final component is not followed.  Returns the descriptor or -errno.
 */
int dcp_open_cached(int dirfd, const char *path, unsigned flags);

/*
 * dcp_open_blocking - the same open without RESOLVE_CACHED: the fallback
 * an application takes after -EAGAIN.  Returns the descriptor or -errno.
 */
int dcp_open_blocking(int dirfd, const char *path, unsigned flags);

/*
 * dcp_openat2 - a thin openat2(2) wrapper that works with old headers.
 * Returns the descriptor or -errno.
 */
int dcp_openat2(int dirfd, const char *path, unsigned long long flags,
		unsigned long long mode, unsigned long long resolve);

static inline void dcp_tally_add(struct dcp_tally *t, int ret)
{
	t->n[dcp_state_of_errno(ret)]++;
}

#ifdef __cplusplus
}
#endif

#endif
