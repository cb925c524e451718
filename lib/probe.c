// SPDX-License-Identifier: MIT
/* probe.c - RESOLVE_CACHED classification and feature detection. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dcp_probe.h"
#include "dcp_util.h"
#include "private/dcp_churn.h"

/* Old userspace headers: the ABI values are fixed by the kernel. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

struct dcp_open_how {
	unsigned long long flags;
	unsigned long long mode;
	unsigned long long resolve;
};

static const char *const state_names[DCP_NSTATES] = {
	[DCP_CACHED] = "cached",
	[DCP_NEGATIVE] = "negative",
	[DCP_MISS] = "miss",
	[DCP_ERROR] = "error",
};

const char *dcp_state_name(enum dcp_state st)
{
	if ((unsigned)st >= DCP_NSTATES)
		return NULL;
	return state_names[st];
}

int dcp_state_parse(const char *name)
{
	for (int i = 0; i < DCP_NSTATES; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return -EINVAL;
}

enum dcp_state dcp_state_of_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return DCP_CACHED;
	case ENOENT:
		return DCP_NEGATIVE;
	case EAGAIN:
		return DCP_MISS;
	default:
		return DCP_ERROR;
	}
}

int dcp_openat2(int dirfd, const char *path, unsigned long long flags,
		unsigned long long mode, unsigned long long resolve)
{
	struct dcp_open_how how = {
		.flags = flags,
		.mode = mode,
		.resolve = resolve,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
}

bool dcp_errno_unsupported(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOSYS || err == EINVAL;
}

int dcp_probe_support(void)
{
	/* "/" is pinned in every dcache, so only the kernel can fail this. */
	int fd = dcp_openat2(AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0,
			     RESOLVE_CACHED);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -ENOSYS || fd == -EINVAL || fd == -EPERM)
		return fd;
	/* Anything else about "/" is odd, but says nothing against probing. */
	return 0;
}

const char *dcp_unsupported_reason(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOSYS:
		return "this kernel has no openat2(2) system call (or a filter hides it); dcprobe needs Linux 5.12 or later";
	case EINVAL:
		return "this kernel's openat2(2) does not know RESOLVE_CACHED; dcprobe needs Linux 5.12 or later";
	case EPERM:
		return "openat2(2) is blocked on this system (a seccomp filter or security module refuses it)";
	default:
		return "this system cannot answer RESOLVE_CACHED probes";
	}
}

bool dcp_probe_refused(int err)
{
	return err == -ENOTDIR || err == -EISDIR;
}

static unsigned long long nofollow(unsigned flags)
{
	return (flags & DCP_FOLLOW) ? 0 : O_NOFOLLOW;
}

static int probe_once(int dirfd, const char *path, unsigned flags)
{
	unsigned long long how = O_CLOEXEC | nofollow(flags);
	int fd;

	how |= (flags & DCP_NOTDIR) ? O_WRONLY | O_DIRECTORY : O_PATH;
	fd = dcp_openat2(dirfd, path, how, 0, RESOLVE_CACHED);
	if (fd < 0)
		return (flags & DCP_NOTDIR) && dcp_probe_refused(fd) ? 0 : fd;
	close(fd);
	return 0;
}

/*
 * A denied search, one state on every kernel.  A name looked up in a
 * directory the caller may not search fails RESOLVE_CACHED with EACCES on
 * Linux 6.1 (the RCU walk's permission check answers for good), but with
 * EAGAIN on later kernels (6.18: a failed check in RCU mode is confirmed
 * only after leaving it, which the flag forbids).  The decided state is
 * error EACCES, on every kernel: warming cannot fix it, and a real open
 * fails with EACCES too.  So after a miss, a caller who may not search
 * every directory (no CAP_DAC_READ_SEARCH or CAP_DAC_OVERRIDE) looks at
 * the directory where the cached walk stopped: the deepest prefix of the
 * path that resolves from the cache (DIRFD itself for a single name, as
 * the walker probes).  Its mode, owner and group come from statx(2) with
 * AT_STATX_DONT_SYNC on its O_PATH descriptor: no lookup, no I/O, no FUSE
 * daemon or NFS server asked, and no POSIX ACL loaded (faccessat2(2) would
 * load a non-owner's ACL, and so warm the very path it measures: the next
 * probe would be cached, and --explain would no longer see why it missed).
 * So only a denial no ACL can lift is called one: the owner without
 * S_IXUSR, a member of the group without S_IXGRP, anyone else when neither
 * S_IXGRP (an ACL's mask) nor S_IXOTH is set.  A denial that only an ACL
 * entry could make or lift (someone outside the owner and the group of a
 * directory whose group class may search, 0750) is a miss, on every kernel:
 * 6.1 answers EACCES there when the directory's ACL is in memory and EAGAIN
 * when it is not, later kernels always EAGAIN, so the kernel's own EACCES
 * goes through the same rule.  Only misses and denials pay for this, and
 * only for unprivileged callers.
 */
static bool may_search_all(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[0].effective & ((1u << CAP_DAC_READ_SEARCH) | (1u << CAP_DAC_OVERRIDE));
}

static bool in_group(gid_t gid)
{
	gid_t small[64], *v = small;
	int n;
	bool in = false;

	if (getegid() == gid)
		return true;
	n = getgroups(0, NULL);
	if (n <= 0)
		return false;
	if ((size_t)n > sizeof(small) / sizeof(small[0]) && !(v = malloc(n * sizeof(*v))))
		return false;
	n = getgroups(n, v);
	for (int i = 0; i < n && !in; i++)
		in = v[i] == gid;
	if (v != small)
		free(v);
	return in;
}

/* Does directory FD's mode deny this caller search, whatever its ACL says? */
static bool search_denied(int fd)
{
	struct statx stx;
	mode_t m;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID, &stx) < 0 ||
	    (stx.stx_mask & (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID)) !=
		    (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID) ||
	    !S_ISDIR(stx.stx_mode))
		return false;
	m = stx.stx_mode;
	if (geteuid() == stx.stx_uid)
		return !(m & S_IXUSR);
	if (in_group(stx.stx_gid))
		return !(m & S_IXGRP);
	return !(m & (S_IXGRP | S_IXOTH));
}

/*
 * A miss or a denial of PATH (relative to DIRFD; RET is the kernel's
 * -EAGAIN or -EACCES): -EACCES when it is a search no ACL can allow,
 * else -EAGAIN.
 */
static int confirm_miss(int dirfd, const char *path, int ret)
{
	size_t n = strlen(path), i = 0, stop = 0;
	char buf[PATH_MAX];
	bool denied;
	int fd;

	if (n >= sizeof(buf) || may_search_all())
		return ret;
	memcpy(buf, path, n + 1);
	/* The deepest prefix that resolves from the cache, shortest first. */
	for (;;) {
		size_t e;

		while (i < n && buf[i] == '/')
			i++;
		while (i < n && buf[i] != '/')
			i++;
		e = i;
		while (i < n && buf[i] == '/')
			i++;
		if (i >= n)
			break; /* the whole path: that missed */
		buf[e] = '\0';
		fd = dcp_openat2(dirfd, buf, O_PATH | O_CLOEXEC, 0, RESOLVE_CACHED);
		buf[e] = '/';
		if (fd < 0)
			break; /* a miss, or 6.1's EACCES: the search stops here */
		close(fd);
		stop = e;
	}
	if (stop) {
		buf[stop] = '\0';
		fd = dcp_openat2(dirfd, buf, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_CACHED);
	} else if (path[0] == '/') {
		fd = dcp_openat2(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_CACHED);
	} else {
		return search_denied(dirfd) ? -EACCES : -EAGAIN;
	}
	if (fd < 0)
		return -EAGAIN;
	denied = search_denied(fd);
	close(fd);
	return denied ? -EACCES : -EAGAIN;
}

/*
 * A mount or unmount anywhere on the machine (in any mount namespace), or a
 * rename, fails an RCU walk that runs at that moment with EAGAIN although
 * everything is cached: the kernel's mount_lock (or rename_lock) sequence
 * count changed under it, and it would simply walk again.  So do we: a lone
 * mount is over before a second probe.  But a mount namespace made or torn
 * down (a container started or stopped, unshare -m) changes the mount
 * table once per mount it holds, a few microseconds apart, and a probe
 * asked again at once then misses again about one time in three.  Measured
 * under `unshare -m` in a loop: a cached name that missed twice in a row
 * missed a third time 206 times in 412 when asked at once, 0 in 412 after
 * a pause of 20 or 100 us (the burst is over), 7 in 411 after 500 us (the
 * next one).  So a miss that repeats is asked again:
 *  - twice, once the table has been still for SETTLE_NS, when this thread
 *    saw it change less than SETTLE_NS ago (a miss the next probe did not
 *    repeat);
 *  - then after a pause of CHURN_GAP_NS and one of four times that
 *    (private/dcp_churn.h).  A real miss pays these at most once per
 *    CHURN_EVERY_NS: a cold tree's misses, one after another, wait under
 *    2% of the time (--from of 10,000 cold names: 0.4% and 4% slower,
 *    medians of 7); a thread whose last pauses found a real miss less
 *    than that ago answers at once.
 * A real miss costs no I/O any time.
 */
enum { SETTLE_NS = 2000000 };

/* When this thread last saw a miss that the next probe did not repeat. */
static __thread uint64_t spurious_ns;
/* When this thread last paused CHURN_GAP_NS for a miss that was one. */
static __thread uint64_t paused_ns;

static int probe_next(int dirfd, const char *path, unsigned flags)
{
	int ret = probe_once(dirfd, path, flags);

	if (ret != -EAGAIN)
		spurious_ns = dcp_now_ns();
	return ret;
}

int dcp_probe_again(int dirfd, const char *path, unsigned flags)
{
	int ret = probe_next(dirfd, path, flags);
	uint64_t now;

	if (ret == -EACCES)
		return confirm_miss(dirfd, path, ret);
	if (ret != -EAGAIN)
		return ret;
	now = dcp_now_ns();
	if (spurious_ns && now < spurious_ns + SETTLE_NS) {
		churn_pause_ns(spurious_ns + SETTLE_NS - now);
		ret = probe_next(dirfd, path, flags);
		if (ret == -EAGAIN)
			ret = probe_next(dirfd, path, flags);
		if (ret != -EAGAIN && ret != -EACCES)
			return ret;
		now = dcp_now_ns();
	}
	if (!paused_ns || now - paused_ns >= CHURN_EVERY_NS) {
		for (unsigned i = 0; i < CHURN_GAPS; i++) {
			churn_pause_ns(churn_gap_ns(i));
			ret = probe_next(dirfd, path, flags);
			if (ret != -EAGAIN && ret != -EACCES)
				return ret;
		}
		paused_ns = dcp_now_ns();
	}
	return confirm_miss(dirfd, path, ret);
}

int dcp_probe_at(int dirfd, const char *path, unsigned flags)
{
	int ret = probe_once(dirfd, path, flags);

	if (ret == -EAGAIN && !(flags & DCP_ONCE))
		ret = dcp_probe_again(dirfd, path, flags);
	else if (ret == -EACCES)
		ret = confirm_miss(dirfd, path, ret);
	return ret;
}

/* Never block on a FIFO, never acquire a controlling terminal. */
static unsigned long long open_flags(unsigned flags)
{
	unsigned long long f = O_CLOEXEC | nofollow(flags);

	if (flags & DCP_OPATH)
		return f | O_PATH;
	return f | O_RDONLY | O_NOCTTY | O_NONBLOCK;
}

int dcp_open_cached(int dirfd, const char *path, unsigned flags)
{
	int fd = dcp_openat2(dirfd, path, open_flags(flags), 0, RESOLVE_CACHED);

	return fd == -EAGAIN || fd == -EACCES ? confirm_miss(dirfd, path, fd) : fd;
}

int dcp_open_blocking(int dirfd, const char *path, unsigned flags)
{
	int fd;

	do
		fd = openat(dirfd, path, (int)open_flags(flags));
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

int dcp_tally_status(const struct dcp_tally *t, unsigned flags)
{
	if (t->n[DCP_ERROR] ||
	    ((flags & DCP_NEGATIVE_IS_ERROR) && t->n[DCP_NEGATIVE]))
		return DCP_EXIT_ERROR;
	if (t->n[DCP_MISS])
		return DCP_EXIT_COLD;
	return DCP_EXIT_OK;
}
