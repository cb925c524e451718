/*
 * Unit tests for lib/procs.c, on real processes (root: the fork events and
 * cgroups need it; 77 otherwise).
 *
 *  (a) --pid: a child of PID and a double-forked grandchild (reparented to
 *      us, a subreaper), both reaped before they are asked: YES through
 *      the lineage; a process of ours (outside), reaped: NO; live: by pidfd.
 *  (b) the same without the lineage: the reaped ones are UNKNOWN.
 *  (c) --cgroup (skipped without a writable cgroup2): a process that moved
 *      itself in is YES while alive, its reaped child YES; a process born
 *      outside that moved itself in and was reaped before its fork was
 *      read is UNKNOWN, never NO; our own live process is NO; a process
 *      seen outside that then moved itself in: its reaped child is YES,
 *      and such a process itself, reaped before it is asked, UNKNOWN.
 *  (d) two live processes' pidfds have different inodes (pidfs: the
 *      verdict cache's key).  A kernel without pidfs (before 6.9) gives
 *      every pidfd one anonymous inode: the part is skipped, naming pidfs,
 *      and what procs.c does there (no verdict cache) is (a)'s: A's pidfd
 *      is YES and ours, asked after it, NO.
 *  (e) with --no-pidfd-info (run under faultinject ioctl=ENOTTY by ctest),
 *      the same verdicts come from /proc.  A kernel without PIDFD_GET_INFO
 *      (before 6.13) gives the run without the option the same fallback:
 *      it checks that the answers came from /proc, and skips the
 *      PIDFD_GET_INFO part, naming it.
 *  (f) lost fork events: the smallest socket buffer, 300 forks unread:
 *      dcp_procs_drain() says -ENOBUFS, and a reaped child is UNKNOWN.
 *  (g) bad options: a reaped PID, a relative cgroup path, no cgroup2 mount.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

static bool no_info;  /* (e): PIDFD_GET_INFO fails */
static bool has_info; /* the kernel has PIDFD_GET_INFO and it is not failed */

/* Whether the running kernel has mechanism F (dcp_kfeat_probe()); a probe
 * that could not be asked fails the test. */
static bool kernel_has(enum dcp_kfeat f)
{
	struct dcp_kfeat_result r;
	const char *since = NULL;
	const char *call = dcp_kfeat_call(f, &since);

	CHECK_INT(dcp_kfeat_probe(f, &r), 0);
	if (r.state == DCP_KFEAT_PRESENT)
		return true;
	fprintf(stderr, "procs: %s (Linux %s) %s here: %s%s%s\n", call, since,
		dcp_kfeat_state_name(r.state), r.err ? strerror(r.err) : "-",
		r.why ? ", " : "", r.why ? r.why : "");
	return false;
}

static void reap(pid_t p)
{
	while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
		;
}

/* A child that waits until its pipe closes. */
static pid_t sleeper(int *wfd)
{
	int fds[2];
	pid_t p;
	char c;

	if (pipe2(fds, O_CLOEXEC) < 0)
		abort();
	p = fork();
	if (p == 0) {
		close(fds[1]);
		while (read(fds[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(fds[0]);
	*wfd = fds[1];
	return p;
}

/*
 * In process A (PID): fork B, which forks C and exits at once (C is
 * reparented to the subreaper, us); C reports and exits.  A reaps B; we
 * reap C.  Returns B and C.
 */
static void family(pid_t *b, pid_t *c)
{
	int rep[2];
	pid_t got[2];

	if (pipe(rep) < 0)
		abort();
	pid_t a2 = fork();

	if (a2 == 0) { /* B */
		pid_t cc = fork();

		if (cc == 0) { /* C */
			pid_t me = getpid();

			if (write(rep[1], &me, sizeof(me)) < 0)
				_exit(1);
			_exit(0);
		}
		_exit(0); /* C is an orphan now */
	}
	got[0] = a2;
	if (read(rep[0], &got[1], sizeof(got[1])) != sizeof(got[1]))
		abort();
	reap(a2);
	close(rep[0]);
	close(rep[1]);
	*b = got[0];
	*c = got[1];
}

/* The process under --pid: runs family() when told, sends back B and C. */
static pid_t start_a(int *cmd, int *res)
{
	int c[2], r[2];
	pid_t a;

	if (pipe(c) < 0 || pipe(r) < 0)
		abort();
	a = fork();
	if (a == 0) {
		char x;
		pid_t bc[2];

		close(c[1]);
		close(r[0]);
		/* Our own children are reaped here; C (an orphan) goes to the
		 * test, the subreaper. */
		while (read(c[0], &x, 1) == 1) {
			family(&bc[0], &bc[1]);
			if (write(r[1], bc, sizeof(bc)) < 0)
				_exit(1);
		}
		_exit(0);
	}
	close(c[0]);
	close(r[1]);
	*cmd = c[1];
	*res = r[0];
	return a;
}

/* Wait for the orphan C (the subreaper's child now). */
static void reap_orphan(pid_t c)
{
	reap(c);
}

static void pid_mode(bool lineage)
{
	struct dcp_procs *p = NULL;
	struct dcp_procs_stats st;
	int cmd, res, fd;
	pid_t a = start_a(&cmd, &res), bc[2], d;

	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_PID, .pid = a,
				.flags = lineage ? 0 : DCP_PROCS_NO_LINEAGE }, &p), 0);
	if (!p)
		return;
	dcp_procs_stats(p, &st);
	CHECK_INT(st.lineage, lineage);
	if (write(cmd, "x", 1) != 1 || read(res, bc, sizeof(bc)) != sizeof(bc))
		abort();
	reap_orphan(bc[1]);
	/* One of ours, outside A's tree, reaped. */
	d = fork();
	if (d == 0)
		_exit(0);
	reap(d);
	CHECK_INT(dcp_procs_drain(p), 0);
	if (lineage) {
		CHECK_INT(dcp_procs_decide(p, bc[0], -1), DCP_PROCS_YES);
		CHECK_INT(dcp_procs_decide(p, bc[1], -1), DCP_PROCS_YES); /* double-forked */
		CHECK_INT(dcp_procs_decide(p, d, -1), DCP_PROCS_NO);
	} else {
		CHECK_INT(dcp_procs_decide(p, bc[0], -1), DCP_PROCS_UNKNOWN);
		CHECK_INT(dcp_procs_decide(p, bc[1], -1), DCP_PROCS_UNKNOWN);
		CHECK_INT(dcp_procs_decide(p, d, -1), DCP_PROCS_UNKNOWN);
	}
	/* Live ones by their pidfds: A itself, and us (outside). */
	fd = (int)syscall(SYS_pidfd_open, a, 0);
	CHECK_INT(dcp_procs_decide(p, a, fd), DCP_PROCS_YES);
	close(fd);
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	CHECK_INT(dcp_procs_decide(p, getpid(), fd), DCP_PROCS_NO);
	close(fd);
	dcp_procs_stats(p, &st);
	CHECK_INT(st.asked, 5);
	CHECK_INT(st.unknown, lineage ? 0 : 3);
	if (lineage)
		CHECK_INT(st.by_lineage, 2);
	CHECK(st.seeded >= 1);
	if (has_info)
		CHECK_INT(st.fallback, 0);
	else
		CHECK(st.fallback > 0); /* every live answer came from /proc */
	/* settled() forgets exited processes only when they are many. */
	dcp_procs_settled(p);
	if (lineage)
		CHECK_INT(dcp_procs_decide(p, bc[0], -1), DCP_PROCS_YES);
	dcp_procs_free(p);
	close(cmd);
	close(res);
	reap(a);
}

/* Under MNT (a cgroup2 mount), the test's cgroup; "" when none can be made. */
static char cgdir[4096];

static bool make_cgroup(const char *mnt)
{
	snprintf(cgdir, sizeof(cgdir), "%s/dcp-unit-procs-%d", mnt, (int)getpid());
	if (mkdir(cgdir, 0755) < 0) {
		cgdir[0] = '\0';
		return false;
	}
	return true;
}

/* Move the calling process into the test's cgroup. */
static void join_cgroup(void)
{
	char f[4200];
	int fd;

	snprintf(f, sizeof(f), "%s/cgroup.procs", cgdir);
	fd = open(f, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		_exit(3);
	close(fd);
}

static void cgroup_mode(struct dcp_mounts *mounts)
{
	struct dcp_mount mt;
	struct dcp_procs *p = NULL;
	struct dcp_procs_stats st;
	char *hier;
	int fd, rep[2];
	pid_t e, f, g;

	for (size_t i = 0;; i++) {
		if (dcp_mounts_get(mounts, i, &mt) < 0) {
			fprintf(stderr, "procs: no cgroup2 mount: --cgroup part skipped\n");
			return;
		}
		if (strcmp(mt.fstype, "cgroup2") == 0)
			break;
	}
	if (!make_cgroup(mt.target)) {
		fprintf(stderr, "procs: cannot make a cgroup under %s: --cgroup part skipped\n",
			mt.target);
		return;
	}
	hier = dcp_procs_cgroup_path(mounts, cgdir);
	CHECK(hier && hier[0] == '/' && strstr(hier, "/dcp-unit-procs-"));
	CHECK(hier && strncmp(hier, mt.target, strlen(mt.target)) != 0);
	/* The cgroup exists, empty: nothing to note at the start. */
	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_CGROUP, .cgroup = hier,
				.mounts = mounts }, &p), 0);
	if (!p)
		goto out;
	dcp_procs_stats(p, &st);
	CHECK(st.lineage);
	CHECK_INT(st.seeded, 0);
	/* E moves itself in, forks F, which exits; E reaps F and waits. */
	if (pipe(rep) < 0)
		abort();
	e = fork();
	if (e == 0) {
		pid_t ff;

		join_cgroup();
		ff = fork();
		if (ff == 0)
			_exit(0);
		reap(ff);
		if (write(rep[1], &ff, sizeof(ff)) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(rep[0], &f, sizeof(f)) != sizeof(f))
		abort();
	/* G: born outside, moves itself in, exits, reaped: its fork read after. */
	g = fork();
	if (g == 0) {
		join_cgroup();
		_exit(0);
	}
	reap(g);
	CHECK_INT(dcp_procs_drain(p), 0);
	fd = (int)syscall(SYS_pidfd_open, e, 0);
	CHECK_INT(dcp_procs_decide(p, e, fd), DCP_PROCS_YES);
	close(fd);
	CHECK_INT(dcp_procs_decide(p, f, -1), DCP_PROCS_YES);
	CHECK_INT(dcp_procs_decide(p, g, -1), DCP_PROCS_UNKNOWN);
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	CHECK_INT(dcp_procs_decide(p, getpid(), fd), DCP_PROCS_NO);
	close(fd);
	dcp_procs_stats(p, &st);
	CHECK_INT(st.yes, 2);
	CHECK_INT(st.no, 1);
	CHECK_INT(st.unknown, 1);
	{
		/* H: born outside and seen so (its fork read while it is
		 * outside), then it moves itself in and forks I, which exits
		 * and is reaped before its fork is read: I is H's, YES (as a
		 * service's first process, started outside, forks its helpers). */
		int go[2], rep2[2];
		pid_t h, i = 0;
		char c = 0;

		if (pipe(go) < 0 || pipe(rep2) < 0)
			abort();
		h = fork();
		if (h == 0) {
			pid_t ii;

			if (read(go[0], &c, 1) != 1)
				_exit(1);
			join_cgroup();
			ii = fork();
			if (ii == 0)
				_exit(0);
			reap(ii);
			if (write(rep2[1], &ii, sizeof(ii)) < 0)
				_exit(1);
			pause();
			_exit(0);
		}
		CHECK_INT(dcp_procs_drain(p), 0); /* H's fork, while H is outside */
		if (write(go[1], &c, 1) != 1 || read(rep2[0], &i, sizeof(i)) != sizeof(i))
			abort();
		CHECK_INT(dcp_procs_drain(p), 0);
		CHECK_INT(dcp_procs_decide(p, i, -1), DCP_PROCS_YES);
		kill(h, SIGKILL);
		reap(h);
		close(go[0]);
		close(go[1]);
		close(rep2[0]);
		close(rep2[1]);
	}
	{
		/* J: seen outside (its fork read while it is outside), then it
		 * moves itself in, exits and is reaped before it is asked: it
		 * may have been theirs, so UNKNOWN, never NO. */
		int go[2];
		pid_t j;
		char c = 0;

		if (pipe(go) < 0)
			abort();
		j = fork();
		if (j == 0) {
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			join_cgroup();
			_exit(0);
		}
		CHECK_INT(dcp_procs_drain(p), 0); /* J's fork, while J is outside */
		if (write(go[1], &c, 1) != 1)
			abort();
		reap(j);
		CHECK_INT(dcp_procs_drain(p), 0);
		CHECK_INT(dcp_procs_decide(p, j, -1), DCP_PROCS_UNKNOWN);
		close(go[0]);
		close(go[1]);
	}
	dcp_procs_free(p);
	p = NULL;
	/* Made before the recording: E is noted at the start. */
	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_CGROUP, .cgroup = hier,
				.mounts = mounts }, &p), 0);
	if (p) {
		dcp_procs_stats(p, &st);
		CHECK_INT(st.seeded, 1);
		kill(e, SIGKILL);
		reap(e);
		dcp_procs_drain(p);
		CHECK_INT(dcp_procs_decide(p, e, -1), DCP_PROCS_YES);
		dcp_procs_free(p);
	} else {
		kill(e, SIGKILL);
		reap(e);
	}
	close(rep[0]);
	close(rep[1]);
out:
	free(hier);
	if (rmdir(cgdir) < 0)
		fprintf(stderr, "procs: rmdir %s: %s\n", cgdir, strerror(errno));
}

/* (f) A socket buffer too small for 300 forks read late. */
static void lost_events(void)
{
	struct dcp_procs *p = NULL;
	struct dcp_procs_stats st;
	int cmd, res;
	pid_t a = start_a(&cmd, &res), last = 0;

	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_PID, .pid = a,
				.rcvbuf = 1 }, &p), 0);
	if (!p)
		return;
	dcp_procs_stats(p, &st);
	CHECK(st.lineage); /* the self-test passed: the small buffer comes after it */
	for (int i = 0; i < 300; i++) {
		last = fork();
		if (last == 0)
			_exit(0);
		reap(last);
	}
	CHECK_INT(dcp_procs_drain(p), -ENOBUFS);
	dcp_procs_stats(p, &st);
	CHECK(st.lineage_lost >= 1);
	/* Outside, but absence from the lineage tells nothing now. */
	CHECK_INT(dcp_procs_decide(p, last, -1), DCP_PROCS_UNKNOWN);
	dcp_procs_free(p);
	close(cmd);
	close(res);
	reap(a);
}

int main(int argc, char **argv)
{
	struct dcp_mounts *mounts = NULL;
	struct dcp_procs *p = NULL;
	struct stat s1, s2;
	int w1, w2, f1, f2;
	pid_t x, y;

	if (geteuid() != 0) {
		fprintf(stderr, "procs: needs root (fork events, pidfds of others, cgroups)\n");
		return 77;
	}
	no_info = argc > 1 && strcmp(argv[1], "--no-pidfd-info") == 0;
	has_info = !no_info && kernel_has(DCP_KFEAT_PIDFD_INFO);
	if (!no_info && !has_info)
		printf("SKIP test part: needs PIDFD_GET_INFO (Linux 6.13): "
		       "the fallback's answers (/proc) are checked instead\n");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return 77;
	signal(SIGPIPE, SIG_IGN);
	CHECK_INT(dcp_mounts_load(NULL, &mounts), 0);
	if (!mounts)
		return 1;

	pid_mode(true);
	pid_mode(false);
	cgroup_mode(mounts);
	if (!no_info)
		lost_events();

	/* (d) */
	x = sleeper(&w1);
	y = sleeper(&w2);
	f1 = (int)syscall(SYS_pidfd_open, x, 0);
	f2 = (int)syscall(SYS_pidfd_open, y, 0);
	CHECK(f1 >= 0 && f2 >= 0 && fstat(f1, &s1) == 0 && fstat(f2, &s2) == 0);
	if (kernel_has(DCP_KFEAT_PIDFS))
		CHECK(s1.st_ino != s2.st_ino);
	else
		printf("SKIP test part: needs pidfs (Linux 6.9): pidfds share one inode "
		       "(procs.c keeps no verdict cache; (a) checked two processes in turn)\n");
	close(f1);
	close(f2);
	close(w1);
	close(w2);
	reap(x);
	reap(y);

	/* (g) */
	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_PID, .pid = x }, &p),
		  -ESRCH);
	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_CGROUP,
				.cgroup = "system.slice", .mounts = mounts }, &p), -EINVAL);
	CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_CGROUP,
				.cgroup = "/a/../b", .mounts = mounts }, &p), -EINVAL);
	{
		char tmpl[] = "/tmp/dcp-procs-mountinfo.XXXXXX";
		int fd = mkstemp(tmpl);
		struct dcp_mounts *none = NULL;

		if (fd >= 0) {
			dprintf(fd, "21 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
			close(fd);
			CHECK_INT(dcp_mounts_load(tmpl, &none), 0);
			unlink(tmpl);
			CHECK_INT(dcp_procs_new(&(struct dcp_procs_opts){ .by = DCP_PROCS_CGROUP,
						.cgroup = "/x", .mounts = none }, &p), -ENOENT);
			dcp_mounts_free(none);
		}
	}
	{
		char *h = dcp_procs_cgroup_path(mounts, "/system.slice/app.service");

		CHECK_STR(h, "/system.slice/app.service");
		free(h);
	}
	dcp_mounts_free(mounts);
	return CHECK_DONE();
}
