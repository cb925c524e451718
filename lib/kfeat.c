// SPDX-License-Identifier: MIT
/*
 * kfeat.c - each kernel mechanism dcprobe uses, asked of the running kernel
 * with one harmless call (dcp_kfeat.h), and what dcprobe does without it.
 *
 * The modules that use a mechanism keep their own fallback where they meet
 * it (pages.c: mincore; uring.c: no DEFER_TASKRUN; procs.c: /proc...);
 * this file only asks, for dcache-probe --diagnose and for programs that
 * embed the library, and says what each fallback costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/capability.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "dcp_kfeat.h"
#include "dcp_probe.h"
#include "dcp_uring.h"
#include "private/dcp_ring.h"

/* What old headers lack; the kernel's ABI fixes the values. */
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif
#ifndef FAN_REPORT_PIDFD
#define FAN_REPORT_PIDFD 0x00000080
#endif
#ifndef FAN_REPORT_DFID_NAME
#define FAN_REPORT_DIR_FID 0x00000400
#define FAN_REPORT_NAME 0x00000800
#define FAN_REPORT_DFID_NAME (FAN_REPORT_DIR_FID | FAN_REPORT_NAME)
#endif
#ifndef FAN_MARK_EVICTABLE
#define FAN_MARK_EVICTABLE 0x00000200
#endif
#ifndef FAN_MARK_IGNORE_SURV
#define FAN_MARK_IGNORE_SURV (0x00000400 | FAN_MARK_IGNORED_SURV_MODIFY)
#endif
#ifndef CN_IDX_PROC
#define CN_IDX_PROC 0x1
#endif
#define KF_PID_FS_MAGIC 0x50494446 /* pidfs */
#define KF_CAP_DAC_READ_SEARCH 2
#define KF_CAP_NET_ADMIN 12
#define KF_CAP_SYS_ADMIN 21

/* FS_IOC_GETFSUUID's argument (linux/fs.h, 6.7). */
struct kf_fsuuid2 {
	uint8_t len;
	uint8_t uuid[16];
};
#define KF_FS_IOC_GETFSUUID _IOR(0x15, 0, struct kf_fsuuid2)

/* PIDFD_GET_INFO's argument (linux/pidfd.h, 6.13): its first version. */
struct kf_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define KF_PIDFD_GET_INFO _IOWR(0xFF, 11, struct kf_pidfd_info)

/* cachestat(2)'s arguments (linux/mman.h, 6.5). */
struct kf_cachestat_range {
	uint64_t off, len;
};
struct kf_cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static const struct {
	const char *name, *call, *since, *without;
} feats[DCP_KFEAT_NFEATS] = {
	[DCP_KFEAT_RESOLVE_CACHED] = { "resolve-cached", "openat2(2) RESOLVE_CACHED", "5.12",
		"nothing can be probed: every command exits 3" },
	[DCP_KFEAT_STATX_MNT_ID] = { "statx-mnt-id", "statx(2) STATX_MNT_ID", "5.8",
		"a walk cannot judge a mount by its ID (--exclude-fstype, the FUSE and "
		"network rules); --pages data unknown" },
	[DCP_KFEAT_IO_URING] = { "io-uring", "io_uring_setup(2)", "5.1",
		"uring-open exits 3; a walk probes and warm reads one system call at a time "
		"(the same states, slower)" },
	[DCP_KFEAT_URING_OPENAT2] = { "uring-openat2", "io_uring IORING_OP_OPENAT2", "5.6",
		"uring-open exits 3; a walk probes one openat2(2) at a time (the same states, "
		"slower)" },
	[DCP_KFEAT_URING_DEFER_TASKRUN] = { "uring-defer-taskrun",
		"io_uring IORING_SETUP_DEFER_TASKRUN, io-wq's completions included", "6.2",
		"uring-open's inline and punted verdicts are not exact (\"exact\": false)" },
	[DCP_KFEAT_URING_SPARSE_FILES] = { "uring-sparse-files",
		"io_uring sparse registered files", "5.19",
		"a walk probes one openat2(2) at a time (the same states, slower)" },
	[DCP_KFEAT_CACHESTAT] = { "cachestat", "cachestat(2)", "6.5",
		"per-file dirty, writeback and evicted pages unknown (mincore(2))" },
	[DCP_KFEAT_FSUUID] = { "fsuuid", "ioctl FS_IOC_GETFSUUID", "6.9",
		"a filesystem's UUID comes from the fallback named (none: a manifest knows its "
		"files by device number, which a reboot or another loop device changes)" },
	[DCP_KFEAT_HANDLE_FID] = { "handle-fid", "name_to_handle_at(2) AT_HANDLE_FID", "6.5",
		"a file on a filesystem that cannot be exported (overlayfs) has no handle: a "
		"manifest knows it by inode number alone" },
	[DCP_KFEAT_OPEN_BY_HANDLE] = { "open-by-handle", "open_by_handle_at(2)", "2.6.39",
		"--record cannot name what was opened (it runs as root only)" },
	[DCP_KFEAT_FANOTIFY_DFID_NAME] = { "fanotify-dfid-name",
		"fanotify_init(2) FAN_REPORT_DFID_NAME", "5.9", "--record exits 3" },
	[DCP_KFEAT_FANOTIFY_PIDFD] = { "fanotify-pidfd", "fanotify_init(2) FAN_REPORT_PIDFD",
		"5.15", "--record with --pid or --cgroup exits 3" },
	[DCP_KFEAT_FANOTIFY_MARK_IGNORE] = { "fanotify-mark-ignore",
		"fanotify_mark(2) FAN_MARK_IGNORE, FAN_MARK_EVICTABLE", "6.0",
		"--record is woken by every open of what it recorded already (more CPU, the "
		"same manifest)" },
	[DCP_KFEAT_PIDFD_OPEN] = { "pidfd-open", "pidfd_open(2)", "5.3",
		"--record --pid cannot follow its process (exit 2)" },
	[DCP_KFEAT_PIDFD_INFO] = { "pidfd-info", "ioctl PIDFD_GET_INFO", "6.13",
		"--record --pid and --cgroup read each process's parent and cgroup from /proc "
		"(slower, the same verdicts)" },
	[DCP_KFEAT_PIDFS] = { "pidfs", "pidfs (one inode per process)", "6.9",
		"--record --pid and --cgroup judge a process again at each of its events "
		"(slower, the same verdicts)" },
	[DCP_KFEAT_PROC_CONNECTOR] = { "proc-connector", "the proc connector (NETLINK_CONNECTOR)",
		"2.6.15", "--record --pid and --cgroup keep what a process opened only if it is "
		"still there when its events are read" },
};

static const char *const state_names[] = {
	[DCP_KFEAT_PRESENT] = "present",
	[DCP_KFEAT_ABSENT] = "absent",
	[DCP_KFEAT_BLOCKED] = "blocked",
};

const char *dcp_kfeat_name(enum dcp_kfeat f)
{
	return (unsigned)f < DCP_KFEAT_NFEATS ? feats[f].name : NULL;
}

const char *dcp_kfeat_call(enum dcp_kfeat f, const char **since)
{
	if ((unsigned)f >= DCP_KFEAT_NFEATS)
		return NULL;
	if (since)
		*since = feats[f].since;
	return feats[f].call;
}

const char *dcp_kfeat_without(enum dcp_kfeat f)
{
	return (unsigned)f < DCP_KFEAT_NFEATS ? feats[f].without : NULL;
}

int dcp_kfeat_required(enum dcp_kfeat f)
{
	return f == DCP_KFEAT_RESOLVE_CACHED;
}

const char *dcp_kfeat_state_name(enum dcp_kfeat_state st)
{
	return (unsigned)st < sizeof(state_names) / sizeof(state_names[0]) ? state_names[st] : NULL;
}

/* ---- the questions ---- */

static int set(struct dcp_kfeat_result *out, enum dcp_kfeat_state st, int err, const char *why)
{
	*out = (struct dcp_kfeat_result){ st, err < 0 ? -err : err, why };
	return 0;
}

/* Whether this thread has capability CAP in its effective set (capget(2)). */
static bool has_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

/* EPERM or EACCES from a call that needs CAP (-1: none): blocked, and by what. */
static int blocked(struct dcp_kfeat_result *out, int err, int cap, const char *capname)
{
	if (cap >= 0 && !has_cap(cap))
		return set(out, DCP_KFEAT_BLOCKED, err, capname);
	return set(out, DCP_KFEAT_BLOCKED, err, "a seccomp filter or a security module");
}

static bool refused(int err)
{
	err = err < 0 ? -err : err;
	return err == EPERM || err == EACCES;
}


/* A ring that could not be made: what that says of io_uring. */
static int ring_failed(struct dcp_kfeat_result *out, int err)
{
	if (err == -ENOSYS)
		return set(out, DCP_KFEAT_ABSENT, err, NULL);
	if (refused(err))
		switch (dcp_uring_disabled_sysctl()) {
		case 2:
			return set(out, DCP_KFEAT_BLOCKED, err, "sysctl kernel.io_uring_disabled = 2");
		case 1:
			return set(out, DCP_KFEAT_BLOCKED, err, "sysctl kernel.io_uring_disabled = 1 "
				   "(root and kernel.io_uring_group only)");
		default:
			return blocked(out, err, -1, NULL);
		}
	if (err == -ENOMEM || err == -EMFILE || err == -ENFILE)
		return err; /* no memory (RLIMIT_MEMLOCK before 5.12) or descriptor: unknown */
	return set(out, DCP_KFEAT_ABSENT, err, NULL);
}

static int ask_resolve_cached(struct dcp_kfeat_result *out)
{
	int ret = dcp_probe_support();

	if (ret == 0)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	if (ret == -EPERM)
		return blocked(out, ret, -1, NULL);
	return set(out, DCP_KFEAT_ABSENT, ret, ret == -ENOSYS ? "no openat2(2)" :
		   "openat2(2) without RESOLVE_CACHED");
}

static int ask_statx_mnt_id(struct dcp_kfeat_result *out)
{
	struct statx stx;

	memset(&stx, 0, sizeof(stx));
	if (statx(AT_FDCWD, "/", AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
		return refused(errno) ? blocked(out, errno, -1, NULL) :
		       set(out, DCP_KFEAT_ABSENT, errno, NULL);
	return set(out, (stx.stx_mask & STATX_MNT_ID) ? DCP_KFEAT_PRESENT : DCP_KFEAT_ABSENT, 0,
		   NULL);
}

static int ask_uring(enum dcp_kfeat f, struct dcp_kfeat_result *out)
{
	struct dcp_uring *r;
	struct io_uring ring;
	int ret;

	switch (f) {
	case DCP_KFEAT_IO_URING:
		ret = dcp_uring_new(2, DCP_URING_NO_DEFER, &r);
		if (ret < 0)
			return ring_failed(out, ret);
		dcp_uring_free(r);
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	case DCP_KFEAT_URING_OPENAT2:
		ret = dcp_uring_support(true);
		if (ret == -EOPNOTSUPP)
			return set(out, DCP_KFEAT_ABSENT, ret, NULL);
		return ret < 0 ? ring_failed(out, ret) : set(out, DCP_KFEAT_PRESENT, 0, NULL);
	case DCP_KFEAT_URING_DEFER_TASKRUN:
		ret = dcp_uring_new(2, 0, &r);
		if (ret < 0)
			return ring_failed(out, ret);
		ret = dcp_uring_exact(r);
		dcp_uring_free(r);
		if (ret)
			return set(out, DCP_KFEAT_PRESENT, 0, NULL);
		/* The flag accepted (6.1) or refused (EINVAL, before 6.1)? */
		ret = io_uring_queue_init_params(2, &ring, &(struct io_uring_params){
			.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN });
		if (ret == 0) {
			dcp_ring_fresh(&ring);
			dcp_ring_exit(&ring);
		}
		return ret == 0 ? set(out, DCP_KFEAT_ABSENT, 0,
				     "the flag is accepted, but an io-wq worker posts its "
				     "completion itself (Linux 6.1)") :
				 set(out, DCP_KFEAT_ABSENT, ret < 0 ? ret : EINVAL, NULL);
	default: /* DCP_KFEAT_URING_SPARSE_FILES */
		ret = io_uring_queue_init(2, &ring, 0);
		if (ret < 0)
			return ring_failed(out, ret);
		ret = io_uring_register_files_sparse(&ring, 2);
		io_uring_queue_exit(&ring);
		if (ret == 0)
			return set(out, DCP_KFEAT_PRESENT, 0, NULL);
		return refused(ret) ? blocked(out, ret, -1, NULL) :
		       set(out, DCP_KFEAT_ABSENT, ret, NULL);
	}
}

/* A memfd of one page (a hole), the probe's own: no file of anyone else's is asked. */
static int own_memfd(void)
{
	int fd = memfd_create("dcprobe-kfeat", MFD_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, 4096) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int ask_cachestat(struct dcp_kfeat_result *out)
{
	struct kf_cachestat_range r = { 0, 0 };
	struct kf_cachestat cs;
	int fd = own_memfd(), err;

	if (fd < 0)
		return fd;
	err = syscall(__NR_cachestat, fd, &r, &cs, 0) < 0 ? errno : 0;
	close(fd);
	if (!err)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	/* EPERM of a file one may write (our own memfd) is a filter's. */
	return refused(err) ? blocked(out, err, -1, NULL) :
	       set(out, DCP_KFEAT_ABSENT, err, NULL);
}

/*
 * FS_IOC_GETFSUUID: the VFS answers it for a filesystem that has a UUID,
 * and ENOTTY both for one without and on a kernel without the ioctl; so
 * the root is asked, then a memfd (tmpfs has a UUID).
 */
static int ask_fsuuid(struct dcp_kfeat_result *out)
{
	int fds[2] = { open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), own_memfd() }, err = ENOTTY;

	for (int i = 0; i < 2; i++) {
		struct kf_fsuuid2 u;

		if (fds[i] < 0)
			continue;
		memset(&u, 0, sizeof(u));
		if (ioctl(fds[i], KF_FS_IOC_GETFSUUID, &u) == 0)
			err = 0;
		else if (err && errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
			err = errno;
		close(fds[i]);
		if (!err)
			break;
	}
	if (!err)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	return refused(err) ? blocked(out, err, -1, NULL) : set(out, DCP_KFEAT_ABSENT, err, NULL);
}

static int ask_handle_fid(struct dcp_kfeat_result *out)
{
	struct {
		struct file_handle h;
		unsigned char b[128];
	} fh;
	int mnt, err;

	fh.h.handle_bytes = sizeof(fh.b);
	err = name_to_handle_at(AT_FDCWD, "/", &fh.h, &mnt, AT_HANDLE_FID) < 0 ? errno : 0;
	/* The flag is known when the answer is a handle or "none here". */
	if (!err || err == EOPNOTSUPP || err == EOVERFLOW)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	return refused(err) ? blocked(out, err, -1, NULL) : set(out, DCP_KFEAT_ABSENT, err, NULL);
}

static int ask_open_by_handle(struct dcp_kfeat_result *out)
{
	struct {
		struct file_handle h;
		unsigned char b[128];
	} fh;
	int mnt, root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, err;

	if (root < 0)
		return -errno;
	fh.h.handle_bytes = sizeof(fh.b);
	if (name_to_handle_at(root, "", &fh.h, &mnt, AT_EMPTY_PATH) < 0) {
		/* No handle of "/": a stale one still passes the privilege check. */
		fh.h.handle_type = 1;
		fh.h.handle_bytes = 8;
		memset(fh.b, 0, 8);
	}
	fd = (int)syscall(SYS_open_by_handle_at, root, &fh.h, O_PATH | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	close(root);
	if (err == ENOSYS)
		return set(out, DCP_KFEAT_ABSENT, err, NULL);
	if (refused(err))
		return blocked(out, err, KF_CAP_DAC_READ_SEARCH, "needs CAP_DAC_READ_SEARCH (root)");
	return set(out, DCP_KFEAT_PRESENT, 0, NULL);
}

#define KF_FAN_FLAGS (FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | \
		   FAN_REPORT_FID)

/* A fanotify group as the recorder makes it (with PIDFD: with --pid/--cgroup). */
static int fan_group(bool pidfd, struct dcp_kfeat_result *out)
{
	int fd = fanotify_init(KF_FAN_FLAGS | (pidfd ? FAN_REPORT_PIDFD : 0),
			       O_RDONLY | O_LARGEFILE | O_CLOEXEC);

	if (fd >= 0) {
		set(out, DCP_KFEAT_PRESENT, 0, NULL);
		return fd;
	}
	if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
		return -errno;
	if (refused(errno))
		blocked(out, errno, KF_CAP_SYS_ADMIN, "needs CAP_SYS_ADMIN (root)");
	else
		set(out, DCP_KFEAT_ABSENT, errno, NULL);
	return -1;
}

static int ask_fanotify(enum dcp_kfeat f, struct dcp_kfeat_result *out)
{
	int fan = fan_group(f == DCP_KFEAT_FANOTIFY_PIDFD, out), err;

	if (fan < -1)
		return fan;
	if (f == DCP_KFEAT_FANOTIFY_PIDFD && fan < 0 && out->state == DCP_KFEAT_ABSENT) {
		/* Absent because of the PIDFD flag, or of fanotify itself? */
		int base = fan_group(false, out);

		if (base < -1)
			return base;
		if (base >= 0) {
			close(base);
			set(out, DCP_KFEAT_ABSENT, EINVAL, NULL);
		}
	}
	if (f != DCP_KFEAT_FANOTIFY_MARK_IGNORE || fan < 0) {
		if (fan >= 0)
			close(fan);
		return 0;
	}
	/* An evictable ignore mark on "/" in a group of our own, closed at once. */
	err = fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_IGNORE_SURV | FAN_MARK_EVICTABLE,
			    FAN_OPEN | FAN_ONDIR | FAN_EVENT_ON_CHILD, AT_FDCWD, "/") < 0 ? errno : 0;
	close(fan);
	if (!err)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	return refused(err) ? blocked(out, err, -1, NULL) : set(out, DCP_KFEAT_ABSENT, err, NULL);
}

static int ask_pidfd(enum dcp_kfeat f, struct dcp_kfeat_result *out)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0), err;

	if (fd < 0) {
		err = errno;
		if (err == EMFILE || err == ENFILE || err == ENOMEM)
			return -err;
		if (refused(err))
			return blocked(out, err, -1, NULL);
		return set(out, DCP_KFEAT_ABSENT, err, f == DCP_KFEAT_PIDFD_OPEN ? NULL :
			   "no pidfd_open(2)");
	}
	if (f == DCP_KFEAT_PIDFD_OPEN) {
		err = 0;
	} else if (f == DCP_KFEAT_PIDFS) {
		struct statfs sfs;

		err = fstatfs(fd, &sfs) < 0 ? errno : sfs.f_type == KF_PID_FS_MAGIC ? 0 : ENOENT;
	} else {
		struct kf_pidfd_info ki = { .mask = 1 };

		err = ioctl(fd, KF_PIDFD_GET_INFO, &ki) < 0 ? errno : 0;
	}
	close(fd);
	if (!err)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	return refused(err) ? blocked(out, err, -1, NULL) :
	       set(out, DCP_KFEAT_ABSENT, err == ENOENT ? 0 : err, NULL);
}

/* A netlink socket joined to the proc connector's group, and closed: no LISTEN is sent. */
static int ask_proc_connector(struct dcp_kfeat_result *out)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR), err;

	if (fd < 0) {
		err = errno;
		if (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS)
			return -err;
		return refused(err) ? blocked(out, err, -1, NULL) :
		       set(out, DCP_KFEAT_ABSENT, err, "no connector in this network namespace");
	}
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	close(fd);
	if (!err)
		return set(out, DCP_KFEAT_PRESENT, 0, NULL);
	return refused(err) ? blocked(out, err, KF_CAP_NET_ADMIN, "needs CAP_NET_ADMIN (root)") :
	       set(out, DCP_KFEAT_ABSENT, err, NULL);
}

int dcp_kfeat_probe(enum dcp_kfeat f, struct dcp_kfeat_result *out)
{
	switch (f) {
	case DCP_KFEAT_RESOLVE_CACHED:
		return ask_resolve_cached(out);
	case DCP_KFEAT_STATX_MNT_ID:
		return ask_statx_mnt_id(out);
	case DCP_KFEAT_IO_URING:
	case DCP_KFEAT_URING_OPENAT2:
	case DCP_KFEAT_URING_DEFER_TASKRUN:
	case DCP_KFEAT_URING_SPARSE_FILES:
		return ask_uring(f, out);
	case DCP_KFEAT_CACHESTAT:
		return ask_cachestat(out);
	case DCP_KFEAT_FSUUID:
		return ask_fsuuid(out);
	case DCP_KFEAT_HANDLE_FID:
		return ask_handle_fid(out);
	case DCP_KFEAT_OPEN_BY_HANDLE:
		return ask_open_by_handle(out);
	case DCP_KFEAT_FANOTIFY_DFID_NAME:
	case DCP_KFEAT_FANOTIFY_PIDFD:
	case DCP_KFEAT_FANOTIFY_MARK_IGNORE:
		return ask_fanotify(f, out);
	case DCP_KFEAT_PIDFD_OPEN:
	case DCP_KFEAT_PIDFD_INFO:
	case DCP_KFEAT_PIDFS:
		return ask_pidfd(f, out);
	case DCP_KFEAT_PROC_CONNECTOR:
		return ask_proc_connector(out);
	default:
		return -EINVAL;
	}
}
