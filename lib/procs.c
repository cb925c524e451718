// SPDX-License-Identifier: MIT
/*
 * procs.c - who did it: one process and its descendants, or the processes
 * of one cgroup v2, followed through pidfds and the kernel's fork events.
 *
 * Two sources, because neither is enough alone:
 *  - a pidfd (the recorder's events carry one while the process exists,
 *    a zombie included) answers for a live process: PIDFD_GET_INFO gives
 *    its parent and its cgroup now;
 *  - a process that was reaped before its events were read has none: the
 *    lineage answers, built from the proc connector's fork events (each
 *    is queued before anything the child does, so draining the connector
 *    before reading the events to judge is enough).  A child is judged
 *    when its fork is read: under --pid by its parent's verdict; under
 *    --cgroup by its own cgroup while it can still be asked, else by its
 *    parent's, "inherited".  Under --cgroup a "no" of a process gone
 *    by the time its events are read may be wrong (a process seen
 *    outside may have moved itself in before it exited), so it is
 *    UNKNOWN, never NO.
 * What the lineage keeps of a process is forgotten once its exit was read
 * and the caller has read everything queued before (dcp_procs_settled()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "dcp_mounts.h"
#include "dcp_procs.h"

/* Linux 6.13's pidfd info (Debian 12's headers predate it). */
struct dcp_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
	uint32_t coredump_mask, spare1;
};
#define DCP_PIDFD_GET_INFO _IOWR(0xFF, 11, struct dcp_pidfd_info)
#define DCP_PIDFD_INFO_PID 1ULL
#define DCP_PIDFD_INFO_CGROUPID 4ULL
#define DCP_PID_FS_MAGIC 0x50494446	/* pidfs: one inode per process (6.9) */
#define DCP_FILEID_KERNFS 0xfe		/* a cgroup's file handle: its 64-bit id */

/* A verdict the lineage keeps. */
enum {
	V_IN = 1,	/* one of them: seen so, or a child of one under --pid */
	V_IN_INH,	/* under --cgroup: gone at its fork, its parent was in */
	V_OUT,		/* not one of them: seen so */
	V_OUT_INH,	/* under --cgroup: gone at its fork, its parent was out */
};

struct lin {
	int32_t pid;	  /* 0: free slot */
	uint8_t v;
	uint32_t exited;  /* the epoch its exit was read in; 0 while alive */
};

/* Verdicts of live processes by pidfs inode, and of cgroups by id: caches
 * (a collision only costs asking again). */
#define VCACHE 4096
struct vslot {
	uint64_t key; /* 0: empty */
	uint8_t yes;
};

struct dcp_procs {
	enum dcp_procs_by by;
	pid_t pid;
	char *cgroup;		/* hierarchy path, no trailing slash ("" for the root) */
	size_t cglen;
	char *cgmnt;		/* the cgroup2 mount point */
	size_t cgmntlen;
	int cgroot;		/* the cgroup2 mount's root, O_RDONLY (open_by_handle_at) */
	int cn;			/* the connector, or -1 */
	uint32_t cn_ack;	/* our LISTEN's ack number (the kernel answers ack + 1) */
	pid_t self;
	bool lost;		/* fork events were dropped once: absence tells nothing */
	bool no_info;		/* no PIDFD_GET_INFO: /proc */
	bool pidfs;		/* pidfd inodes identify processes */
	uint32_t epoch;
	struct lin *lin;
	size_t lincap, linused, linexited;
	struct vslot byino[VCACHE];
	struct vslot bycg[VCACHE];
	struct dcp_procs_stats st;
};

/* ---- the lineage table: open addressing by pid ---- */

static size_t lin_slot(const struct dcp_procs *p, int32_t pid)
{
	size_t i = ((uint32_t)pid * 2654435761u) & (p->lincap - 1);

	while (p->lin[i].pid && p->lin[i].pid != pid)
		i = (i + 1) & (p->lincap - 1);
	return i;
}

static struct lin *lin_get(const struct dcp_procs *p, pid_t pid)
{
	size_t i;

	if (!p->lincap || pid <= 0)
		return NULL;
	i = lin_slot(p, pid);
	return p->lin[i].pid ? &p->lin[i] : NULL;
}

/* Rebuild into NCAP slots, leaving out what settled() may forget (DROP). */
static int lin_rehash(struct dcp_procs *p, size_t ncap, bool drop)
{
	struct lin *old = p->lin;
	size_t ocap = p->lincap;
	struct lin *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	p->lin = nv;
	p->lincap = ncap;
	p->linused = p->linexited = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].pid || (drop && old[i].exited && old[i].exited < p->epoch))
			continue;
		p->lin[lin_slot(p, old[i].pid)] = old[i];
		p->linused++;
		p->linexited += old[i].exited != 0;
	}
	free(old);
	return 0;
}

static int lin_put(struct dcp_procs *p, pid_t pid, uint8_t v)
{
	size_t i;

	if (pid <= 0)
		return 0;
	if (2 * (p->linused + 1) > p->lincap) {
		int ret = lin_rehash(p, p->lincap ? p->lincap * 2 : 1024, false);

		if (ret < 0)
			return ret;
	}
	i = lin_slot(p, pid);
	if (!p->lin[i].pid) {
		p->lin[i].pid = pid;
		p->linused++;
	} else if (p->lin[i].exited) {
		p->linexited--; /* a pid used again: a new process */
	}
	p->lin[i].v = v;
	p->lin[i].exited = 0;
	return 0;
}

/* ---- caches ---- */

static struct vslot *vget(struct vslot *c, uint64_t key)
{
	struct vslot *s = &c[(key * 0x9e3779b97f4a7c15ULL) >> 52 & (VCACHE - 1)];

	return s->key == key ? s : NULL;
}

static void vput(struct vslot *c, uint64_t key, bool yes)
{
	struct vslot *s = &c[(key * 0x9e3779b97f4a7c15ULL) >> 52 & (VCACHE - 1)];

	s->key = key;
	s->yes = yes;
}

/* ---- what a live process is ---- */

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Whether hierarchy path PATH (LEN bytes) is the cgroup or below it. */
static bool under(const struct dcp_procs *p, const char *path, size_t len)
{
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 1 && path[0] == '/')
		len = 0; /* the root: "" as p->cgroup has it */
	if (len < p->cglen || memcmp(path, p->cgroup, p->cglen) != 0)
		return false;
	return len == p->cglen || path[p->cglen] == '/';
}

/* Whether cgroup ID is the cgroup or below it: its path through its handle. */
static int cgroup_in(struct dcp_procs *p, uint64_t id)
{
	/* A file_handle ends in a flexible array: its 8 bytes in one buffer. */
	_Alignas(struct file_handle) unsigned char hb[sizeof(struct file_handle) + sizeof(uint64_t)];
	struct file_handle *fh = (struct file_handle *)(void *)hb;
	char link[64], path[PATH_MAX];
	struct vslot *s = vget(p->bycg, id);
	ssize_t n;
	int fd;

	if (s)
		return s->yes;
	memset(hb, 0, sizeof(hb));
	fh->handle_bytes = sizeof(uint64_t);
	fh->handle_type = DCP_FILEID_KERNFS;
	memcpy(fh->f_handle, &id, sizeof(id));
	fd = (int)syscall(SYS_open_by_handle_at, p->cgroot, fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno; /* removed: whoever was in it has moved or gone */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	/* The path is the mount point's, then the hierarchy's. */
	if ((size_t)n < p->cgmntlen || memcmp(path, p->cgmnt, p->cgmntlen) != 0)
		return -ENOENT; /* not below the mount: not ours to judge */
	n = under(p, path + p->cgmntlen, (size_t)n - p->cgmntlen) ? 1 : 0;
	vput(p->bycg, id, n);
	return (int)n;
}

/* A live process: its thread group, its parent, its cgroup. */
struct pinfo {
	pid_t pid, ppid;
	int in_cgroup; /* 1, 0, or -errno (--cgroup only) */
};

/* /proc/PID/FILE into BUF (NUL-terminated); the bytes, or -errno. */
static ssize_t read_proc(pid_t pid, const char *file, char *buf, size_t size)
{
	char name[64];
	ssize_t n, len = 0;
	int fd;

	snprintf(name, sizeof(name), "/proc/%d/%s", (int)pid, file);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - (size_t)len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

/*
 * Without PIDFD_GET_INFO (before 6.13): /proc/PID, then the pidfd still
 * names a live process, so what was read was that process's (a pid is
 * not used again while its process exists, a zombie included).
 */
static int info_proc(struct dcp_procs *p, int pidfd, pid_t pid, struct pinfo *pi)
{
	char buf[4096], *at;

	if (pid <= 0)
		return -ESRCH;
	if (read_proc(pid, "status", buf, sizeof(buf)) < 0)
		return -ESRCH;
	at = strstr(buf, "\nTgid:");
	if (!at || (pid_t)strtol(at + 6, NULL, 10) != pid)
		return -ESRCH; /* a thread's id, or not the one */
	at = strstr(buf, "\nPPid:");
	if (!at)
		return -ESRCH;
	pi->pid = pid;
	pi->ppid = (pid_t)strtol(at + 6, NULL, 10);
	pi->in_cgroup = -ENOENT;
	if (p->by == DCP_PROCS_CGROUP) {
		ssize_t n = read_proc(pid, "cgroup", buf, sizeof(buf));
		char *line = n >= 0 ? buf : NULL;

		while (line && *line) {
			char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line) : strlen(line);

			if (len >= 3 && memcmp(line, "0::", 3) == 0) {
				pi->in_cgroup = under(p, line + 3, len - 3);
				break;
			}
			line = end ? end + 1 : NULL;
		}
	}
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return -ESRCH;
	p->st.fallback++;
	return 0;
}

/* What process PIDFD (pid PID when known, else 0) is now. */
static int info(struct dcp_procs *p, int pidfd, pid_t pid, struct pinfo *pi)
{
	struct dcp_pidfd_info ki = { .mask = DCP_PIDFD_INFO_PID | DCP_PIDFD_INFO_CGROUPID };

	if (p->no_info)
		return info_proc(p, pidfd, pid, pi);
	if (ioctl(pidfd, DCP_PIDFD_GET_INFO, &ki) < 0) {
		if (errno != ENOTTY && errno != EINVAL)
			return -errno; /* ESRCH: reaped */
		p->no_info = true;
		return info_proc(p, pidfd, pid, pi);
	}
	if (!(ki.mask & DCP_PIDFD_INFO_PID))
		return -ESRCH;
	pi->pid = (pid_t)ki.tgid;
	pi->ppid = (pid_t)ki.ppid;
	pi->in_cgroup = -ENOENT;
	if (p->by == DCP_PROCS_CGROUP && (ki.mask & DCP_PIDFD_INFO_CGROUPID))
		pi->in_cgroup = cgroup_in(p, ki.cgroupid);
	return 0;
}

/*
 * --pid, for a live process the lineage does not know: up its parents, each
 * through a pidfd of its own, to PID (yes) or to the top (no).  A parent's
 * pidfd is trusted once the child still has it as its parent: a live
 * parent's pid cannot have been taken by another process.
 */
static int walk_up(struct dcp_procs *p, int pidfd, pid_t pid)
{
	struct pinfo pi;
	int fd = pidfd, ret = 0;

	if (info(p, fd, pid, &pi) < 0)
		return -ESRCH;
	for (int depth = 0; depth < 4096; depth++) {
		struct pinfo again, up;
		int pfd;

		if (pi.pid == p->pid) {
			ret = 1;
			break;
		}
		if (pi.ppid <= 0) {
			ret = 0; /* the top, or a parent outside our pid namespace */
			break;
		}
		pfd = pidfd_open_(pi.ppid);
		if (pfd < 0 || info(p, fd, pi.pid, &again) < 0 || again.ppid != pi.ppid ||
		    info(p, pfd, pi.ppid, &up) < 0) {
			if (pfd >= 0)
				close(pfd);
			ret = -ESRCH;
			break;
		}
		if (fd != pidfd)
			close(fd);
		fd = pfd;
		pi = up;
	}
	if (fd != pidfd)
		close(fd);
	return ret;
}

/* --cgroup: whether live process PID is in the cgroup now (1, 0, -errno). */
static int cgroup_of_pid(struct dcp_procs *p, pid_t pid)
{
	struct pinfo pi;
	int fd = pidfd_open_(pid), ret;

	if (fd < 0)
		return -errno;
	ret = info(p, fd, pid, &pi);
	close(fd);
	return ret < 0 ? ret : pi.in_cgroup;
}

/* ---- the fork events ---- */

static void on_fork(struct dcp_procs *p, pid_t parent, pid_t child)
{
	struct lin *pl = lin_get(p, parent);

	p->st.forks++;
	if (p->by == DCP_PROCS_PID) {
		/* Every descendant was noted at the start or at its fork: a
		 * parent not known is not one of them. */
		if (pl && pl->v == V_IN)
			lin_put(p, child, V_IN);
		else if (lin_get(p, child))
			lin_put(p, child, V_OUT); /* its pid, used again */
		return;
	}
	int own = cgroup_of_pid(p, child);

	if (own >= 0) {
		lin_put(p, child, own ? V_IN : V_OUT);
		return;
	}
	/* The child is gone: it was where its parent was when it forked.  A
	 * parent still there is asked now (it may have moved itself in since
	 * its own fork, as a service's first process does); one gone is
	 * judged by what the lineage kept. */
	if (!pl || !pl->exited) {
		int up = cgroup_of_pid(p, parent);

		if (up >= 0)
			lin_put(p, parent, up ? V_IN : V_OUT);
		pl = lin_get(p, parent);
	}
	if (pl)
		lin_put(p, child, pl->v == V_IN || pl->v == V_IN_INH ? V_IN_INH : V_OUT_INH);
	else if (lin_get(p, child))
		lin_put(p, child, V_OUT_INH); /* its pid, used again: not known */
}

static void on_exit_(struct dcp_procs *p, pid_t pid)
{
	struct lin *l = lin_get(p, pid);

	if (l && !l->exited) {
		l->exited = p->epoch;
		p->linexited++;
	}
}

/* Read what is queued; ACK (when the self-test waits): set to the kernel's
 * answer to our LISTEN, 0 or -errno, when it is read. */
static int drain(struct dcp_procs *p, int *ack)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	int lost = 0;

	if (p->cn < 0)
		return 0;
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(p->cn, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
				     &fl);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				p->st.lineage_lost++;
				p->lost = true;
				lost = -ENOBUFS;
				continue;
			}
			return lost; /* EAGAIN: all read */
		}
		if (fl != sizeof(from) || from.nl_pid != 0)
			continue; /* only the kernel speaks for the connector */
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct cn_msg *c = NLMSG_DATA(h);
			struct proc_event ev; /* copied: the message aligns it to 4 bytes only */

			size_t least = offsetof(struct proc_event, event_data) +
				       sizeof(ev.event_data.fork);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*c)) ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(*c) + c->len) ||
			    c->id.idx != CN_IDX_PROC || c->id.val != CN_VAL_PROC || c->len < least)
				continue;
			memset(&ev, 0, sizeof(ev));
			memcpy(&ev, c->data, c->len < sizeof(ev) ? c->len : sizeof(ev));
			if (ev.what == PROC_EVENT_FORK &&
			    ev.event_data.fork.child_pid == ev.event_data.fork.child_tgid) {
				pid_t parent = ev.event_data.fork.parent_tgid;
				pid_t child = ev.event_data.fork.child_tgid;

				on_fork(p, parent, child);
			} else if (ev.what == PROC_EVENT_NONE && ack && c->ack == p->cn_ack + 1) {
				*ack = -(int)ev.event_data.ack.err;
			} else if (ev.what == PROC_EVENT_EXIT &&
				   ev.event_data.exit.process_pid == ev.event_data.exit.process_tgid) {
				on_exit_(p, ev.event_data.exit.process_tgid);
			}
		}
	}
}

/* OP to the proc connector; the kernel answers (to every listener) with a
 * PROC_EVENT_NONE carrying ACK + 1 and an errno (and SEQ, on older kernels). */
static int cn_send(int fd, enum proc_cn_mcast_op op, uint32_t seq, uint32_t ack)
{
	/* The header, the connector message and its operation, in one buffer
	 * (struct cn_msg ends in a flexible array). */
	_Alignas(struct nlmsghdr) unsigned char buf[NLMSG_LENGTH(sizeof(struct cn_msg) + sizeof(op))];
	struct nlmsghdr *h = (struct nlmsghdr *)(void *)buf;
	struct cn_msg *c = NLMSG_DATA(h);

	memset(buf, 0, sizeof(buf));
	h->nlmsg_len = sizeof(buf);
	h->nlmsg_type = NLMSG_DONE;
	c->id.idx = CN_IDX_PROC;
	c->id.val = CN_VAL_PROC;
	c->seq = seq;
	c->ack = ack;
	c->len = sizeof(op);
	memcpy(c->data, &op, sizeof(op));
	return send(fd, buf, sizeof(buf), 0) < 0 ? -errno : 0;
}

/* Listen to fork events; -errno when they cannot be had. */
static int cn_open(struct dcp_procs *p, int rcvbuf)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR), ret;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* Beyond rmem_max with CAP_NET_ADMIN; the kernel's own limit else. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* Our ack number: this object's address and our pid, so that two
	 * objects, each of which reads every listener's answer, tell theirs
	 * apart (the kernel keeps the ack, not always the sequence number). */
	p->cn_ack = (uint32_t)(uintptr_t)p ^ ((uint32_t)p->self << 16);
	ret = cn_send(fd, PROC_CN_MCAST_LISTEN, (uint32_t)p->self, p->cn_ack);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	p->cn = fd;
	return 0;
}

/*
 * The fork events work when the kernel answers our LISTEN with 0: it
 * answers on the very path its events take (a multicast from the
 * connector of the initial network namespace), and not at all from a pid
 * or user namespace of our own, so no CONFIG_PROC_EVENTS, a network, pid
 * or user namespace of our own, or an answer lost to a full buffer all
 * show as silence (-ETIMEDOUT), and no CAP_NET_ADMIN where the kernel
 * wants it as -EPERM (or silence when no one else listens).  An answer,
 * not an event of our making: the library starts no process (a child's
 * SIGCHLD or its reaping would be the embedding program's to see).
 */
static int cn_selftest(struct dcp_procs *p)
{
	uint64_t deadline;
	struct timespec ts;
	int ack = 1; /* 1: not answered yet */

	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + 1000;
	for (;;) {
		struct pollfd pfd = { p->cn, POLLIN, 0 };
		uint64_t now;

		drain(p, &ack);
		if (ack <= 0)
			return ack;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
		if (now >= deadline)
			return -ETIMEDOUT;
		poll(&pfd, 1, (int)(deadline - now));
	}
}

/* ---- who is theirs at the start ---- */

/* All of file NAME (relative to DIRFD), NUL-terminated, or NULL. */
static char *slurp(int dirfd, const char *name)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0)
		goto fail;
	for (;;) {
		if (len + 1 == cap) {
			char *nb = cap < (64u << 20) ? realloc(buf, 2 * cap) : NULL;

			if (!nb)
				goto fail; /* a list never read in part: a cut pid is another pid */
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* Each whole number of list S to ADD; stops at its first error. */
static int each_pid(struct dcp_procs *p, const char *s, int (*add)(struct dcp_procs *, pid_t, void *),
		    void *arg)
{
	for (char *end;; s = end) {
		long v = strtol(s, &end, 10);
		int ret;

		if (end == s)
			return 0;
		if (v > 0 && v <= INT_MAX && (ret = add(p, (pid_t)v, arg)) < 0)
			return ret;
	}
}

/* --pid: PID and its descendants now, through each task's children. */
struct queue {
	pid_t *v;
	size_t n, cap;
};

static int queue_child(struct dcp_procs *p, pid_t c, void *arg)
{
	struct queue *q = arg;

	if (lin_get(p, c))
		return 0;
	if (q->n == q->cap) {
		size_t nc = q->cap ? 2 * q->cap : 64;
		pid_t *nv = realloc(q->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		q->v = nv;
		q->cap = nc;
	}
	q->v[q->n++] = c;
	return lin_put(p, c, V_IN); /* once in the queue */
}

static int seed_pid(struct dcp_procs *p)
{
	struct queue q = { 0 };
	size_t at = 0;
	int ret = lin_put(p, p->pid, V_IN);

	for (pid_t next = p->pid; ret == 0; next = q.v[at++]) {
		char dir[64];
		DIR *d;
		struct dirent *de;

		p->st.seeded++;
		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)next);
		d = opendir(dir);
		while (ret == 0 && d && (de = readdir(d))) {
			char file[300], *list;

			if (de->d_name[0] == '.')
				continue;
			snprintf(file, sizeof(file), "%s/children", de->d_name);
			list = slurp(dirfd(d), file);
			if (list)
				ret = each_pid(p, list, queue_child, &q);
			free(list);
		}
		if (d)
			closedir(d);
		if (at == q.n)
			break;
	}
	free(q.v);
	return ret;
}

static int seed_one(struct dcp_procs *p, pid_t pid, void *arg)
{
	(void)arg;
	p->st.seeded++;
	return lin_put(p, pid, V_IN);
}

/* --cgroup: the members of DIRFD's cgroup and of those below, when it exists. */
static int seed_cgroup(struct dcp_procs *p, int dirfd, int depth)
{
	char *list = slurp(dirfd, "cgroup.procs");
	int fd, ret = 0;
	DIR *d;
	struct dirent *de;

	if (list)
		ret = each_pid(p, list, seed_one, NULL);
	free(list);
	if (ret < 0 || depth > 64)
		return ret;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (ret == 0 && (de = readdir(d))) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		ret = seed_cgroup(p, sub, depth + 1);
		close(sub);
	}
	closedir(d);
	return ret;
}

/*
 * --cgroup: the cgroup is a directory of the hierarchy, or may become one:
 * it is absent but its parent is a directory (where a service manager
 * makes it).  -ENOTDIR: a file is on the way; -ENXIO: neither exists.
 */
static int cgroup_can_be(struct dcp_procs *p)
{
	struct stat st;
	char *parent, *slash;
	int ret;

	if (!p->cglen)
		return 0; /* the root */
	if (fstatat(p->cgroot, p->cgroup + 1, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (errno != ENOENT)
		return errno == ENOTDIR ? -ENOTDIR : -errno;
	parent = strdup(p->cgroup);
	if (!parent)
		return -ENOMEM;
	slash = strrchr(parent, '/');
	*slash = '\0';
	ret = 0;
	if (slash != parent && fstatat(p->cgroot, parent + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
		ret = errno == ENOENT ? -ENXIO : errno == ENOTDIR ? -ENOTDIR : -errno;
	else if (slash != parent && !S_ISDIR(st.st_mode))
		ret = -ENOTDIR;
	free(parent);
	return ret;
}

/* ---- the interface ---- */

static bool cgroup_path_ok(const char *s)
{
	if (s[0] != '/')
		return false;
	for (const char *c = s; *c;) {
		size_t len;

		while (*c == '/')
			c++;
		len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += len;
	}
	return true;
}

/*
 * The first cgroup2 mount of MOUNTS, into *OUT; with MOUNTS NULL, of
 * /proc/self/mountinfo, read into *OWN (*OUT points into it: the caller
 * frees it, with dcp_mounts_free(), once done with *OUT).
 */
static int cgroup2_mount(const struct dcp_mounts *mounts, struct dcp_mount *out,
			 struct dcp_mounts **own)
{
	struct dcp_mount mt;

	*own = NULL;
	if (!mounts) {
		int ret = dcp_mounts_load(NULL, own);

		if (ret < 0)
			return ret;
		mounts = *own;
	}
	for (size_t i = 0; dcp_mounts_get(mounts, i, &mt) == 0; i++) {
		if (strcmp(mt.fstype, "cgroup2") == 0) {
			*out = mt;
			return 0;
		}
	}
	return -ENOENT;
}

char *dcp_procs_cgroup_path(const struct dcp_mounts *mounts, const char *path)
{
	struct dcp_mounts *own;
	struct dcp_mount mt;
	char *ret = NULL;
	size_t len;
	int err = cgroup2_mount(mounts, &mt, &own);

	if (err == 0) {
		len = strlen(mt.target);
		while (len > 1 && mt.target[len - 1] == '/')
			len--;
		if (len == 1)
			len = 0; /* a cgroup2 mount on "/": every path is its own */
		if (len && strncmp(path, mt.target, len) == 0 && (path[len] == '/' || !path[len]))
			ret = strdup(path[len] ? path + len : "/");
		else
			ret = strdup(path);
	} else if (err == -ENOENT) {
		ret = strdup(path); /* no cgroup2 mount */
	}
	dcp_mounts_free(own);
	if (!ret)
		errno = err < 0 && err != -ENOENT ? -err : ENOMEM;
	return ret;
}

int dcp_procs_new(const struct dcp_procs_opts *o, struct dcp_procs **out)
{
	struct dcp_procs *p;
	struct statfs sfs;
	int ret = 0, fd;

	if (o->by == DCP_PROCS_CGROUP && (!o->cgroup || !cgroup_path_ok(o->cgroup)))
		return -EINVAL;
	if (o->by == DCP_PROCS_PID && o->pid <= 0)
		return -ESRCH;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->by = o->by;
	p->pid = o->pid;
	p->cn = p->cgroot = -1;
	p->self = getpid();
	p->epoch = 1;
	if (o->by == DCP_PROCS_PID) {
		fd = pidfd_open_(o->pid);
		if (fd < 0) {
			ret = errno == ESRCH ? -ESRCH : -errno;
			goto fail;
		}
		p->pidfs = fstatfs(fd, &sfs) == 0 && sfs.f_type == DCP_PID_FS_MAGIC;
		close(fd);
		/* A zombie has a pidfd, and opens nothing more: as gone. */
		{
			char st[512], *rp;

			if (read_proc(o->pid, "stat", st, sizeof(st)) > 0 && (rp = strrchr(st, ')')) &&
			    (rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))) {
				ret = -ESRCH;
				goto fail;
			}
		}
	} else {
		struct dcp_mounts *own;
		struct dcp_mount mt;
		size_t len;

		ret = cgroup2_mount(o->mounts, &mt, &own);
		if (ret < 0) {
			dcp_mounts_free(own);
			goto fail;
		}
		p->cgmnt = strdup(mt.target);
		dcp_mounts_free(own); /* read for this call (O->mounts NULL) */
		len = strlen(o->cgroup);
		while (len > 0 && o->cgroup[len - 1] == '/')
			len--;
		p->cgroup = strndup(o->cgroup, len);
		if (!p->cgmnt || !p->cgroup) {
			ret = -ENOMEM;
			goto fail;
		}
		p->cglen = len;
		p->cgmntlen = strlen(p->cgmnt);
		/* open_by_handle_at wants a descriptor that is not O_PATH. */
		p->cgroot = open(p->cgmnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (p->cgroot < 0) {
			ret = -errno;
			goto fail;
		}
		ret = cgroup_can_be(p);
		if (ret < 0)
			goto fail;
		fd = pidfd_open_(p->self);
		p->pidfs = fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == DCP_PID_FS_MAGIC;
		if (fd >= 0)
			close(fd);
	}
	if ((ret = lin_rehash(p, 1024, false)) < 0)
		goto fail;
	p->st.lineage_err = -EPERM;
	if (!(o->flags & DCP_PROCS_NO_LINEAGE))
		p->st.lineage_err = cn_open(p, 4 << 20);
	/* After the listening starts, so that a fork meanwhile is seen. */
	if (p->by == DCP_PROCS_PID) {
		ret = seed_pid(p);
	} else {
		int cg = openat(p->cgroot, p->cglen ? p->cgroup + 1 : ".",
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (cg >= 0) {
			ret = seed_cgroup(p, cg, 0);
			close(cg);
		}
	}
	if (ret < 0)
		goto fail;
	if (p->cn >= 0) {
		p->st.lineage_err = cn_selftest(p);
		if (p->st.lineage_err < 0) {
			cn_send(p->cn, PROC_CN_MCAST_IGNORE, 0, 0);
			close(p->cn);
			p->cn = -1;
		}
	}
	/* A buffer of the caller's size once the self-test has passed with the
	 * default one: a small buffer on a busy machine would drop the
	 * kernel's answer to our LISTEN and turn the lineage off. */
	if (p->cn >= 0 && o->rcvbuf > 0 &&
	    setsockopt(p->cn, SOL_SOCKET, SO_RCVBUFFORCE, &o->rcvbuf, sizeof(o->rcvbuf)) < 0)
		setsockopt(p->cn, SOL_SOCKET, SO_RCVBUF, &o->rcvbuf, sizeof(o->rcvbuf));
	p->st.lineage = p->cn >= 0;
	if (p->st.lineage)
		p->st.lineage_err = 0;
	*out = p;
	return 0;
fail:
	dcp_procs_free(p);
	return ret;
}

int dcp_procs_fd(const struct dcp_procs *p)
{
	return p->cn;
}

int dcp_procs_drain(struct dcp_procs *p)
{
	return drain(p, NULL);
}

void dcp_procs_settled(struct dcp_procs *p)
{
	/* Forget exited processes when they are many: a sweep costs the table. */
	if (p->linexited > 4096 && 4 * p->linexited > p->linused) {
		p->epoch++;
		lin_rehash(p, p->lincap, true); /* on ENOMEM, kept: still right */
		return;
	}
	p->epoch++;
}

enum dcp_procs_verdict dcp_procs_decide(struct dcp_procs *p, pid_t pid, int pidfd)
{
	enum dcp_procs_verdict v = DCP_PROCS_UNKNOWN;
	struct lin *l;
	struct stat st;
	uint64_t ino = 0;

	p->st.asked++;
	if (p->by == DCP_PROCS_PID) {
		/* The lineage first: it knows a reparented child's ancestry. */
		l = p->cn >= 0 ? lin_get(p, pid) : NULL;
		if (l) {
			v = l->v == V_IN ? DCP_PROCS_YES : DCP_PROCS_NO;
			p->st.by_lineage += pidfd < 0;
		} else if (pidfd >= 0) {
			struct vslot *s = NULL;
			int yes;

			if (p->pidfs && fstat(pidfd, &st) == 0) {
				ino = (uint64_t)st.st_ino;
				s = vget(p->byino, ino);
			}
			yes = s ? s->yes : walk_up(p, pidfd, pid);
			if (yes >= 0) {
				v = yes ? DCP_PROCS_YES : DCP_PROCS_NO;
				if (ino && !s)
					vput(p->byino, ino, yes);
			}
		}
		if (v == DCP_PROCS_UNKNOWN && p->cn >= 0 && !p->lost && !l)
			v = DCP_PROCS_NO; /* neither noted at the start nor born of one */
	} else {
		if (pidfd >= 0) {
			struct pinfo pi;

			if (info(p, pidfd, pid, &pi) == 0 && pi.in_cgroup >= 0) {
				v = pi.in_cgroup ? DCP_PROCS_YES : DCP_PROCS_NO;
				/* Kept for its events read after it is gone. */
				if (p->cn >= 0)
					lin_put(p, pi.pid, pi.in_cgroup ? V_IN : V_OUT);
			}
		}
		/* Gone: once in, its events are theirs (a process leaves a
		 * service's cgroup only when moved out, which services do not
		 * do); seen outside, it may have moved itself in since, as a
		 * service's first process does, so it cannot be told. */
		if (v == DCP_PROCS_UNKNOWN && p->cn >= 0 && (l = lin_get(p, pid))) {
			v = l->v == V_IN || l->v == V_IN_INH ? DCP_PROCS_YES : DCP_PROCS_UNKNOWN;
			p->st.by_lineage += v != DCP_PROCS_UNKNOWN;
		}
	}
	if (v == DCP_PROCS_YES)
		p->st.yes++;
	else if (v == DCP_PROCS_NO)
		p->st.no++;
	else
		p->st.unknown++;
	return v;
}

void dcp_procs_stats(const struct dcp_procs *p, struct dcp_procs_stats *st)
{
	*st = p->st;
}

void dcp_procs_free(struct dcp_procs *p)
{
	if (!p)
		return;
	if (p->cn >= 0) {
		cn_send(p->cn, PROC_CN_MCAST_IGNORE, 0, 0);
		close(p->cn);
	}
	if (p->cgroot >= 0)
		close(p->cgroot);
	free(p->lin);
	free(p->cgroup);
	free(p->cgmnt);
	free(p);
}
