// SPDX-License-Identifier: MIT
/*
 * record_run.c - dcache-probe --record: the loop around a recording, its
 * messages, and its entries handed to the snapshot's writer
 * (dcp_record_run.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcp_cmd.h"
#include "dcp_notify.h"
#include "dcp_record_run.h"

/* Events are read this long after they wake the loop: a burst in few reads. */
#define COALESCE_NS 5000000L
/* STATUS= to the service manager this often. */
#define STATUS_NS (10 * 1000000000ULL)

static volatile int abandoned; /* a second SIGINT or SIGTERM while writing */

static void on_second_signal(int sig)
{
	(void)sig;
	abandoned = 1;
}

struct rr {
	const struct dcp_opts *o;
	const struct dcp_record_run_config *rc;
	struct dcp_record *rec;
	struct dcp_procs *procs;
	char *cgroup;		    /* --cgroup's hierarchy path */
	pid_t pid;		    /* --pid, or the command --start runs; 0: neither */
	int release;		    /* --start: the socket that lets the command exec */
	int wstatus;		    /* --start: how it ended (wait(2)), once ended_by is "exit" */
	struct dcp_record_stats st;
	struct dcp_procs_stats ps;
	uint64_t unresolved;	    /* events and entries not resolved (dcp_record_unresolved()) */
	int unresolved_err;
	int read_err;
	const char *ended_by;
	double elapsed_s;
	const char **roots;	    /* the real paths */
	size_t nroots;
	struct dcp_probe_given_entry *v;
	size_t n, cap;
	struct dcp_buf q;	    /* a name quoted for a message */
};

static const char *quoted(struct rr *r, const char *s)
{
	return dcp_quoted(&r->q, s);
}

static unsigned long read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned long v = 0;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Who is recorded, in words: "the processes of CGROUP"... */
static void whose(struct rr *r, struct dcp_buf *b)
{
	if (r->rc->start)
		dcp_buf_printf(b, "the command (process %d) and its descendants", (int)r->pid);
	else if (r->pid)
		dcp_buf_printf(b, "process %d and its descendants", (int)r->pid);
	else if (r->rc->cgroup)
		dcp_buf_printf(b, "the processes of %s", r->cgroup);
	else
		dcp_buf_puts(b, "any process");
}

/* ---- setting up ---- */

/* The recorder's floor (dcp_opts.h): the fewest descriptors it starts with. */
static unsigned record_floor(const struct rr *r)
{
	if (r->rc->start)
		return DCP_FLOOR_RECORD_START;
	return r->pid || r->rc->cgroup ? DCP_FLOOR_RECORD_PROCS : DCP_FLOOR_RECORD;
}

/* "(with --pid or --cgroup)", or what those need more, for the messages. */
static const char *floor_note(const struct rr *r)
{
	static char buf[80];

	if (r->rc->start)
		return " (with --start)";
	if (r->pid || r->rc->cgroup)
		return " (with --pid or --cgroup)";
	snprintf(buf, sizeof(buf), " (%u with --pid or --cgroup, %u with --start)",
		 DCP_FLOOR_RECORD_PROCS, DCP_FLOOR_RECORD_START);
	return buf;
}

/*
 * Too few descriptors, before anything is set up (RLIMIT_NOFILE below
 * the floor) or once EMFILE said it while setting up: in words, the
 * number needed included, exit 2.
 */
static int too_few_fds(const struct rr *r)
{
	unsigned floor = record_floor(r);
	unsigned long long need = floor;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY) {
		dcp_warn(EMFILE, "--record: too few open file descriptors to start the recording");
		return DCP_EXIT_ERROR;
	}
	/* At the floor or above, EMFILE all the same: descriptors given by the
	 * parent, or more filesystems watched: one more at least. */
	if (need <= rl.rlim_cur)
		need = rl.rlim_cur + 1;
	dcp_warn(0, "--record: too few open file descriptors to start the recording: "
		 "RLIMIT_NOFILE (ulimit -n) is %llu, at least %llu is needed here%s",
		 (unsigned long long)rl.rlim_cur, need, need == floor ? floor_note(r) : "");
	return DCP_EXIT_ERROR;
}

/* Below the recorder's floor: refused before anything is set up. */
static bool below_floor(const struct rr *r)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	       rl.rlim_cur < record_floor(r);
}

static int start_procs(struct rr *r, const struct dcp_mounts *mounts)
{
	struct dcp_procs_opts po = { .mounts = mounts };
	int ret;

	if (!r->pid && !r->rc->cgroup)
		return DCP_EXIT_OK;
	if (r->pid) {
		po.by = DCP_PROCS_PID;
		po.pid = r->pid;
	} else {
		r->cgroup = dcp_procs_cgroup_path(mounts, r->rc->cgroup);
		if (!r->cgroup)
			dcp_die(DCP_EXIT_ERROR, ENOMEM, "--cgroup");
		po.by = DCP_PROCS_CGROUP;
		po.cgroup = r->cgroup;
	}
	ret = dcp_procs_new(&po, &r->procs);
	if (ret == -ESRCH && r->rc->start) {
		dcp_warn(0, "--start: the command's process %d has gone before it was run",
			 (int)r->pid);
		return DCP_EXIT_ERROR;
	}
	if (ret == -ESRCH && kill(r->rc->pid, 0) == 0) {
		dcp_warn(0, "--pid: process %d has exited (a zombie): it opens nothing more",
			 (int)r->rc->pid);
		return DCP_EXIT_ERROR;
	}
	if (ret == -ESRCH) {
		dcp_warn(0, "--pid: no process %d", (int)r->rc->pid);
		return DCP_EXIT_ERROR;
	}
	if (ret == -ENOENT && !r->pid) {
		dcp_warn(0, "--cgroup needs a cgroup v2 hierarchy, and none is mounted");
		return DCP_EXIT_UNSUPPORTED;
	}
	if (ret == -EINVAL) {
		dcp_warn(0, "--cgroup %s: not a cgroup path", quoted(r, r->rc->cgroup));
		return DCP_EXIT_ERROR;
	}
	if (ret == -ENOTDIR) {
		dcp_warn(0, "--cgroup %s: not a cgroup (a file of the cgroup2 hierarchy, or below "
			 "one)", quoted(r, r->rc->cgroup));
		return DCP_EXIT_ERROR;
	}
	if (ret == -ENXIO) {
		char *parent = strdup(r->cgroup);
		char *slash = parent ? strrchr(parent, '/') : NULL;

		if (slash)
			*(slash == parent ? slash + 1 : slash) = '\0';
		dcp_warn(0, "--cgroup %s: no such cgroup, and no cgroup %s to make it in",
			 quoted(r, r->rc->cgroup), parent ? parent : "");
		free(parent);
		return DCP_EXIT_ERROR;
	}
	if (ret == -EMFILE)
		return too_few_fds(r);
	if (ret < 0) {
		dcp_warn(-ret, "cannot follow the processes to record");
		return DCP_EXIT_ERROR;
	}
	dcp_procs_stats(r->procs, &r->ps);
	if (!r->ps.lineage) {
		/* Said once: a process gone before its events are read is not known. */
		struct dcp_buf b = DCP_BUF_INIT;

		dcp_buf_printf(&b, "%s: process events cannot be followed here (%s): what a "
			       "process opened is kept only if it is still there when its "
			       "events are read\n", program_invocation_name,
			       r->ps.lineage_err == -ETIMEDOUT ?
			       "none came from the kernel's proc connector" :
			       strerror(-r->ps.lineage_err));
		dcp_msg_buf(&b);
		dcp_buf_free(&b);
	}
	return DCP_EXIT_OK;
}

static int start_recording(struct rr *r, const struct dcp_mounts *mounts)
{
	const struct dcp_opts *o = r->o;
	size_t bad = 0;
	int ret = dcp_record_new(&(struct dcp_record_opts){
					 .roots = (const char *const *)o->paths,
					 .nroots = (size_t)o->npaths,
					 .mounts = mounts, .procs = r->procs,
					 .flags = r->rc->listed ? DCP_RECORD_LISTED : 0,
					 .failed_root = &bad }, &r->rec);
	const char *root = bad < (size_t)o->npaths ? o->paths[bad] : "?";

	switch (ret) {
	case 0:
		break;
	case -EPERM:
		dcp_warn(0, "--record needs CAP_SYS_ADMIN (fanotify filesystem marks)");
		return DCP_EXIT_UNSUPPORTED;
	case -EINVAL:
	case -ENOSYS:
		dcp_warn(0, "--record needs fanotify reporting directories and names "
			 "(Linux 5.9%s)", r->procs ? ", and 5.15 with --pid or --cgroup" : "");
		return DCP_EXIT_UNSUPPORTED;
	case -EMFILE:
		return too_few_fds(r);
	case -EREMOTE: {
		struct dcp_mount mt;

		dcp_warn(0, "%s: on a %s mount, or reached through one: the recorder never asks its "
			 "daemon or server, which may not answer (record the filesystem beneath it)",
			 quoted(r, root), dcp_mounts_by_path(mounts, root, &mt) == 0 ? mt.fstype :
			 "FUSE or network");
		return DCP_EXIT_UNSUPPORTED;
	}
	case -EXDEV:
		dcp_warn(0, "%s: a root on a btrfs subvolume cannot be watched by filesystem "
			 "(EXDEV)", quoted(r, root));
		return DCP_EXIT_UNSUPPORTED;
	case -EOPNOTSUPP:
	case -ENODEV:
		dcp_warn(0, "%s: its filesystem has no file handles: fanotify cannot name what "
			 "is opened there", quoted(r, root));
		return DCP_EXIT_UNSUPPORTED;
	case -ENOTDIR:
		dcp_warn(0, "%s: not a directory (a root to record is one)", quoted(r, root));
		return DCP_EXIT_ERROR;
	case -ENOENT:
	case -EACCES:
	case -ELOOP:
	case -ENAMETOOLONG:
		dcp_warn(-ret, "%s", quoted(r, root));
		return DCP_EXIT_ERROR;
	default:
		dcp_warn(-ret, "cannot start the recording");
		return DCP_EXIT_ERROR;
	}
	/* Descriptors to read its events with, beside those it holds now. */
	{
		struct rlimit rl;
		uint32_t free_fds = dcp_fd_free();
		unsigned need = dcp_record_fds_needed(r->procs != NULL);

		if (free_fds < need && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY) {
			unsigned long long k = rl.rlim_cur + need - free_fds;

			if (k < record_floor(r))
				k = record_floor(r);
			dcp_warn(0, "--record needs %u open file descriptors free to read its events "
				 "once it watches (%u free): RLIMIT_NOFILE (ulimit -n) is %llu, at least "
				 "%llu is needed here", need, free_fds, (unsigned long long)rl.rlim_cur, k);
			return DCP_EXIT_ERROR;
		}
	}
	/* A mount below a root that cannot be watched is said once. */
	for (size_t i = 0;; i++) {
		struct dcp_record_fs f;

		if (dcp_record_fs(r->rec, i, &f) < 0)
			break;
		if (f.err)
			dcp_warn(-f.err, "%s (%s) is not watched", quoted(r, f.path), f.fstype);
	}
	return DCP_EXIT_OK;
}

/* ---- the loop ---- */

/* Whether process PID is stopped (state T: SIGSTOP, SIGTSTP...). */
static bool is_stopped(pid_t pid)
{
	char name[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] == 'T';
}

/*
 * Recording has begun: a --pid process started stopped is resumed now, so
 * that it is recorded from its first open; at a terminal, one line says
 * what ends the recording.
 */
static void began(struct rr *r)
{
	bool resumed = r->rc->pid && is_stopped(r->rc->pid) && kill(r->rc->pid, SIGCONT) == 0;
	struct dcp_buf b = DCP_BUF_INIT;

	if (!r->o->quiet && isatty(STDERR_FILENO)) {
		dcp_buf_printf(&b, "%s: recording what ", program_invocation_name);
		whose(r, &b);
		dcp_buf_puts(&b, " open");
		if (!r->pid && !r->rc->cgroup)
			dcp_buf_puts(&b, "s");
		dcp_buf_printf(&b, "%s; %s%s%sSIGINT (Ctrl-C) or SIGTERM ends it\n",
			       resumed ? " (resumed)" : "", r->rc->start ? "its exit, " : "",
			       r->rc->for_ns ? "--for" : "", r->rc->for_ns ? ", " : "");
		dcp_msg_buf(&b);
		dcp_buf_free(&b);
	}
	/* The line said first: the command's own output comes after it. */
	if (r->rc->start) {
		/* EPIPE: the command is gone already (its exit ends the loop). */
		if (send(r->release, "x", 1, MSG_NOSIGNAL) != 1 && errno != EPIPE &&
		    errno != ECONNRESET)
			dcp_die(DCP_EXIT_ERROR, errno, "--start");
		close(r->release);
		r->release = -1;
	}
}

/*
 * --start: fork the command's process, held in a read of a socket until
 * began() writes to it (EOF, the recorder gone or failed: it exits 127
 * without running anything), then exec /bin/sh -c COMMAND with the signal
 * mask MASK the recorder was started with.  It inherits standard input and
 * error, and the standard output the recorder was given (--record's FILE
 * took its place); the recorder's other descriptors are close-on-exec.
 */
static void fork_command(struct rr *r, const sigset_t *mask)
{
	int p[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
		dcp_die(DCP_EXIT_ERROR, errno, "--start");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		dcp_die(DCP_EXIT_ERROR, errno, "--start: fork");
	if (pid == 0) {
		char c;
		ssize_t n;

		close(p[1]);
		sigprocmask(SIG_SETMASK, mask, NULL);
		/* The standard output given to the recorder, not FILE. */
		if (r->rc->start_stdout >= 0 ? dup2(r->rc->start_stdout, STDOUT_FILENO) < 0 :
		    close(STDOUT_FILENO) < 0)
			_exit(127);
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);
		execl("/bin/sh", "sh", "-c", r->rc->start, (char *)NULL);
		dprintf(STDERR_FILENO, "%s: --start: /bin/sh: %s\n", program_invocation_name,
			strerror(errno));
		_exit(127);
	}
	close(p[0]);
	r->pid = pid;
	r->release = p[1];
}

/* --start: whether the command has exited (left a zombie until its events are read). */
static bool command_exited(struct rr *r)
{
	siginfo_t si = { 0 };

	return r->rc->start && r->release < 0 && r->pid > 0 &&
	       waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == r->pid;
}

static int watch(struct rr *r, int sfd, int tfd)
{
	uint64_t start = dcp_now_ns(), next_status = start + STATUS_NS;
	bool status_said = false;

	if (tfd >= 0) {
		struct itimerspec its = { .it_value = { (time_t)(r->rc->for_ns / 1000000000ULL),
							(long)(r->rc->for_ns % 1000000000ULL) } };

		if (timerfd_settime(tfd, 0, &its, NULL) < 0)
			dcp_die(DCP_EXIT_ERROR, errno, "--for");
	}
	/* The marks exist: the service may start. */
	dcp_notify("READY=1");
	began(r);
	for (;;) {
		struct pollfd p[4] = {
			{ dcp_record_fd(r->rec), POLLIN, 0 },
			{ r->procs ? dcp_procs_fd(r->procs) : -1, POLLIN, 0 },
			{ sfd, POLLIN, 0 },
			{ tfd, POLLIN, 0 },
		};
		uint64_t now = dcp_now_ns();
		int n = poll(p, 4, (int)((next_status - now) / 1000000ULL) + 1);

		if (n < 0 && errno != EINTR)
			dcp_die(DCP_EXIT_ERROR, errno, "poll");
		if (p[2].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				si.ssi_signo = SIGTERM, si.ssi_code = SI_USER;
			if (si.ssi_signo == SIGCHLD) {
				if (command_exited(r)) {
					r->ended_by = "exit";
					break;
				}
				continue;
			}
			r->ended_by = si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM";
			/* --start: passed on to the command, unless it came from the
			 * terminal (Ctrl-C), which sent it to both. */
			if (r->rc->start && si.ssi_code != SI_KERNEL && !command_exited(r))
				kill(r->pid, (int)si.ssi_signo);
			break;
		}
		if (p[3].revents) {
			r->ended_by = "for";
			break;
		}
		if (p[0].revents || p[1].revents) {
			/* Let a burst gather: one read for many events. */
			struct timespec ts = { 0, COALESCE_NS };

			nanosleep(&ts, NULL);
			r->read_err = dcp_record_read(r->rec);
			if (r->read_err < 0) {
				dcp_warn(-r->read_err, "reading the recording's events");
				r->ended_by = "error";
				break;
			}
		}
		now = dcp_now_ns();
		if (now >= next_status) {
			struct dcp_buf b = DCP_BUF_INIT;

			dcp_record_stats(r->rec, &r->st);
			dcp_buf_printf(&b, "STATUS=recording: %llu events", (unsigned long long)r->st.events);
			if (!b.oom && dcp_notify(b.data) < 0 && !status_said)
				status_said = true;
			dcp_buf_free(&b);
			next_status = now + STATUS_NS;
		}
	}
	if (tfd >= 0)
		close(tfd);
	r->elapsed_s = (double)(dcp_now_ns() - start) / 1e9;
	dcp_notify("STOPPING=1");
	{
		int ret = dcp_record_stop(r->rec);

		if (ret < 0 && !r->read_err) {
			dcp_warn(-ret, "reading the recording's events");
			r->read_err = ret;
		}
	}
	return DCP_EXIT_OK;
}

/* ---- the entries ---- */

static int keep(const struct dcp_record_item *it, void *arg)
{
	struct rr *r = arg;
	struct dcp_probe_given_entry *e;

	if (r->n == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 256;
		struct dcp_probe_given_entry *nv = realloc(r->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = ncap;
	}
	e = &r->v[r->n];
	*e = (struct dcp_probe_given_entry){ .len = it->len, .root = it->root, .depth = it->depth,
					     .kind = it->kind,
					     .name_only = it->flags & DCP_RECORD_ITEM_NAME };
	e->path = strndup(it->path, it->len);
	if (!e->path)
		return -ENOMEM;
	r->n++;
	return 0;
}

/* ---- what the writer adds ---- */

static void json_u(struct dcp_buf *b, const char *name, uint64_t v)
{
	dcp_buf_printf(b, ",\"%s\":%llu", name, (unsigned long long)v);
}

/* The "recording" record, before the summary. */
static void records(struct dcp_buf *b, void *arg)
{
	struct rr *r = arg;
	const struct dcp_record_stats *st = &r->st;

	dcp_buf_puts(b, "{\"type\":\"recording\",\"roots\":[");
	for (size_t i = 0; i < r->nroots; i++) {
		if (i)
			dcp_buf_putc(b, ',');
		dcp_buf_json_str(b, r->roots[i], strlen(r->roots[i]));
	}
	dcp_buf_puts(b, "],\"filesystems\":[");
	for (size_t i = 0;; i++) {
		struct dcp_record_fs f;

		if (dcp_record_fs(r->rec, i, &f) < 0)
			break;
		dcp_buf_puts(b, i ? ",{\"path\":" : "{\"path\":");
		dcp_buf_json_str(b, f.path, strlen(f.path));
		dcp_buf_puts(b, ",\"fstype\":");
		dcp_buf_json_str(b, f.fstype, strlen(f.fstype));
		if (f.err)
			dcp_buf_printf(b, ",\"mark\":\"none\",\"errno\":\"%s\"}", dcp_errno_name(-f.err));
		else
			dcp_buf_puts(b, ",\"mark\":\"filesystem\"}");
	}
	dcp_buf_puts(b, "],\"attribution\":{");
	if (r->pid) {
		dcp_buf_printf(b, "\"by\":\"pid\",\"pid\":%d", (int)r->pid);
		if (r->rc->start) {
			dcp_buf_puts(b, ",\"command\":");
			dcp_buf_json_str(b, r->rc->start, strlen(r->rc->start));
		}
	} else if (r->rc->cgroup) {
		dcp_buf_puts(b, "\"by\":\"cgroup\",\"cgroup\":");
		dcp_buf_json_str(b, r->cgroup, strlen(r->cgroup));
	} else {
		dcp_buf_puts(b, "\"by\":\"all\"");
	}
	if (r->procs)
		dcp_buf_printf(b, ",\"lineage\":%s", r->ps.lineage ? "true" : "false");
	dcp_buf_printf(b, "},\"elapsed_s\":%.3f,\"ended_by\":\"%s\"", r->elapsed_s, r->ended_by);
	json_u(b, "events", st->events);
	json_u(b, "overflows", st->overflows);
	json_u(b, "unattributed", st->unattributed);
	json_u(b, "unattributed_files", st->unattributed_files);
	json_u(b, "lineage_lost", r->ps.lineage_lost);
	json_u(b, "other", st->other);
	json_u(b, "own", st->own);
	json_u(b, "outside", st->outside);
	json_u(b, "files", st->files);
	json_u(b, "dirs", st->dirs);
	json_u(b, "listed_names", st->listed_names);
	json_u(b, "gone", st->gone);
	json_u(b, "replaced", st->replaced);
	json_u(b, "evicted", st->evicted);
	json_u(b, "stale_dirs", st->stale_dirs);
	json_u(b, "unresolved", r->unresolved);
	json_u(b, "ignore_marks", st->ignore_marks);
	json_u(b, "ignore_marks_failed", st->ignore_marks_failed);
	dcp_buf_puts(b, "}\n");
}

static bool lost_events(const struct rr *r)
{
	return r->st.overflows || r->ps.lineage_lost || r->unresolved;
}

/* --start: the command exited with a status other than 0, or was killed. */
static bool command_failed(const struct rr *r)
{
	return r->rc->start && !strcmp(r->ended_by, "exit") &&
	       !(WIFEXITED(r->wstatus) && WEXITSTATUS(r->wstatus) == 0);
}

/* 2 for lost events or a failed read, 1 for an entry not in the cache at the end. */
static int status(int st, const struct dcp_pr_counts *tot, void *arg)
{
	struct rr *r = arg;

	if (st == DCP_EXIT_ERROR || lost_events(r) || r->read_err || command_failed(r))
		return DCP_EXIT_ERROR;
	return tot->n[DCP_MISS] ? DCP_EXIT_COLD : DCP_EXIT_OK;
}

/* At a terminal, once the manifest is published: what it holds. */
static void said(const struct dcp_pr_counts *tot, const struct dcp_pages_counts *pt, void *arg)
{
	struct rr *r = arg;
	struct dcp_buf b = DCP_BUF_INIT;

	(void)tot;
	if (r->o->quiet || !isatty(STDERR_FILENO))
		return;
	dcp_buf_printf(&b, "%s: recorded ", program_invocation_name);
	dcp_buf_count(&b, r->st.files, "file", "files");
	dcp_buf_puts(&b, " and ");
	dcp_buf_count(&b, r->st.dirs, "directory", "directories");
	dcp_buf_puts(&b, " under ");
	for (size_t i = 0; i < r->nroots; i++)
		dcp_buf_printf(&b, "%s%s", i ? ", " : "", quoted(r, r->roots[i]));
	dcp_buf_printf(&b, " in %s (", strcmp(r->rc->file, "-") ? quoted(r, r->rc->file) :
		       "standard output");
	dcp_buf_bytes(&b, pt->resident_bytes, r->o->units);
	dcp_buf_puts(&b, " bytes resident); ");
	dcp_buf_count(&b, r->st.events, "event", "events");
	dcp_buf_printf(&b, ", %llu overflows, %llu unattributed\n",
		       (unsigned long long)r->st.overflows, (unsigned long long)r->st.unattributed);
	dcp_msg_buf(&b);
	dcp_buf_free(&b);
}

/* What a recording says on stderr, whatever -q: what it may have missed. */
static void warnings(struct rr *r)
{
	struct dcp_buf b = DCP_BUF_INIT;
	const char *me = program_invocation_name;

	if (r->st.overflows)
		dcp_buf_printf(&b, "%s: the event queue overflowed %llu time%s: what was opened "
			       "then is missing from the recording (fs.fanotify.max_queued_events "
			       "is %lu)\n", me, (unsigned long long)r->st.overflows,
			       r->st.overflows == 1 ? "" : "s",
			       read_sysctl("/proc/sys/fs/fanotify/max_queued_events"));
	if (r->unresolved)
		dcp_buf_printf(&b, "%s: %llu event%s or entr%s could not be resolved (%s): what "
			       "they named may be missing from the recording\n", me,
			       (unsigned long long)r->unresolved, r->unresolved == 1 ? "" : "s",
			       r->unresolved == 1 ? "y" : "ies", strerror(-r->unresolved_err));
	if (r->ps.lineage_lost)
		dcp_buf_printf(&b, "%s: process events were lost %llu time%s: what a process "
			       "born then opened may be missing from the recording\n", me,
			       (unsigned long long)r->ps.lineage_lost,
			       r->ps.lineage_lost == 1 ? "" : "s");
	if (r->st.unattributed) {
		dcp_buf_printf(&b, "%s: ", me);
		dcp_buf_count(&b, r->st.unattributed, "event", "events");
		dcp_buf_puts(&b, " of ");
		dcp_buf_count(&b, r->st.unattributed_files, "file", "files");
		dcp_buf_puts(&b, " came from processes that exited before they could be "
			     "attributed; these files are not recorded\n");
	}
	if (command_failed(r) && WIFEXITED(r->wstatus))
		dcp_buf_printf(&b, "%s: the command exited %d\n", me, WEXITSTATUS(r->wstatus));
	else if (command_failed(r))
		dcp_buf_printf(&b, "%s: the command was killed by SIG%s\n", me,
			       sigabbrev_np(WTERMSIG(r->wstatus)) ? : "?");
	if (r->st.ignore_marks_failed)
		dcp_buf_printf(&b, "%s: %llu ignore mark%s could not be placed "
			       "(fs.fanotify.max_user_marks): repeated opens kept costing events\n",
			       me, (unsigned long long)r->st.ignore_marks_failed,
			       r->st.ignore_marks_failed == 1 ? "" : "s");
	if (!r->st.files && !r->st.dirs) {
		dcp_buf_printf(&b, "%s: nothing under ", me);
		for (size_t i = 0; i < r->nroots; i++)
			dcp_buf_printf(&b, "%s%s", i ? ", " : "", quoted(r, r->roots[i]));
		dcp_buf_puts(&b, " was opened by ");
		whose(r, &b);
		dcp_buf_putc(&b, '\n');
	}
	dcp_msg_buf(&b);
	dcp_buf_free(&b);
}

int dcp_record_run(const struct dcp_opts *opts, const struct dcp_probe_run_config *cfg,
		   const struct dcp_record_run_config *rc)
{
	/* Static: what they own stays reachable until exit. */
	static struct rr r;
	static struct dcp_opts o;
	static struct dcp_probe_given g;
	struct dcp_probe_run_config wcfg = *cfg;
	static struct dcp_mounts *mounts;
	struct sigaction sa = { .sa_handler = on_second_signal };
	sigset_t sigs, mask;
	int ret, sfd, tfd = -1;

	r.o = opts;
	r.rc = rc;
	r.pid = rc->pid;
	r.release = -1;
	ret = dcp_opts_can_probe(true, true);
	if (ret != DCP_EXIT_OK)
		return ret;
	if (below_floor(&r))
		return too_few_fds(&r);
	/* SIGINT and SIGTERM end the watching: read from a descriptor. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	/* --start: the command's exit too (SIGCHLD not ignored, or it is reaped unseen). */
	if (rc->start) {
		signal(SIGCHLD, SIG_DFL);
		sigaddset(&sigs, SIGCHLD);
	}
	if (sigprocmask(SIG_BLOCK, &sigs, &mask) < 0 ||
	    (sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		dcp_die(DCP_EXIT_ERROR, errno, "signals");
	/* The command's process first: it is attributed by its pid, as --pid's. */
	if (rc->start)
		fork_command(&r, &mask);
	ret = dcp_mounts_load(NULL, &mounts);
	if (ret < 0)
		dcp_die(DCP_EXIT_ERROR, -ret, "cannot read the mount table");
	ret = start_procs(&r, mounts);
	if (ret != DCP_EXIT_OK)
		return ret;
	/* The --for timer before the recording counts what is left free. */
	if (rc->for_ns && (tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) < 0)
		dcp_die(DCP_EXIT_ERROR, errno, "--for");
	ret = start_recording(&r, mounts);
	if (ret != DCP_EXIT_OK)
		return ret;
	watch(&r, sfd, tfd);
	/* Its events are read: the command that exited is reaped now. */
	if (!strcmp(r.ended_by, "exit") && waitpid(r.pid, &r.wstatus, 0) < 0)
		dcp_die(DCP_EXIT_ERROR, errno, "--start");
	/* Watching is over.  A second SIGINT or SIGTERM abandons the writing. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	close(sfd);
	sigprocmask(SIG_UNBLOCK, &sigs, NULL);

	r.nroots = (size_t)opts->npaths;
	r.roots = calloc(r.nroots ? r.nroots : 1, sizeof(*r.roots));
	if (!r.roots)
		dcp_die(DCP_EXIT_ERROR, ENOMEM, "--record");
	for (size_t i = 0; i < r.nroots; i++)
		r.roots[i] = dcp_record_root(r.rec, i);
	ret = dcp_record_items(r.rec, keep, &r);
	if (ret < 0)
		dcp_die(DCP_EXIT_ERROR, -ret, "--record");
	dcp_record_stats(r.rec, &r.st);
	r.unresolved = dcp_record_unresolved(r.rec, &r.unresolved_err);
	if (r.procs)
		dcp_procs_stats(r.procs, &r.ps);
	warnings(&r);

	/* The snapshot's writer: JSON with ranges, whatever -q says of stderr. */
	o = *opts;
	o.json = true;
	o.quiet = false;
	wcfg.pages = wcfg.ranges = true;
	g = (struct dcp_probe_given){ .v = r.v, .n = r.n, .roots = r.roots, .nroots = r.nroots,
				      .incomplete = lost_events(&r), .records = records,
				      .status = status, .said = said, .abandon = &abandoned,
				      .arg = &r };
	wcfg.given = &g;
	return dcp_probe_run(&o, &wcfg);
}
