/*
 * Unit tests for lib/record.c, on a tmpfs (and an ext4 image when
 * mkfs.ext4 and loop devices are there) in a mount namespace of its own
 * (root; 77 otherwise).  The workloads run in child processes: the
 * recorder's own events are not recorded.
 *
 *  - opens, reads, listings and an exec under the root are recorded, each
 *    once, with the directories on the way; stat, O_PATH opens and lookups
 *    are not; a FIFO opened is recorded as a FIFO;
 *  - a directory outside the root on the same filesystem is outside, with
 *    an ignore mark: a second open there adds no event;
 *  - a file deleted after use is gone, one replaced by rename is replaced
 *    (and kept), a directory renamed after use leaves its file gone, a
 *    directory deleted before its events were read is a stale directory;
 *  - repeated opens of a recorded file add no event (ignore marks), and
 *    with DCP_RECORD_NO_IGNORE_MARKS they do, the recording the same;
 *  - after dcp_record_stop(), an open is not seen;
 *  - DCP_RECORD_LISTED adds the cached names of a listed directory only;
 *  - 100,000 distinct names are kept in under 12 MB of heap (mallinfo2).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

static char base[256]; /* the tmpfs */
static struct dcp_mounts *mounts;

static void put(const char *rel, const char *text)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		abort();
	close(fd);
}

static void mkd(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		abort();
}

static void readf(const char *rel)
{
	char p[512], b[64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		_exit(10);
	if (read(fd, b, sizeof(b)) < 0)
		_exit(11);
	close(fd);
}

static const char *abs_(const char *rel)
{
	static char p[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", base, rel);
	return p[k];
}

/* Run FN in a child; wait for it. */
static void in_child(void (*fn)(void))
{
	pid_t c = fork();
	int st;

	if (c == 0) {
		fn();
		_exit(0);
	}
	waitpid(c, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The items of a recording, as "KIND DEPTH PATH" lines relative to base. */
static char got[65536];
static size_t gotlen;

static int collect(const struct dcp_record_item *it, void *arg)
{
	size_t bl = strlen(base);
	const char *rel = strncmp(it->path, base, bl) == 0 ? it->path + bl : it->path;
	int n;

	(void)arg;
	n = snprintf(got + gotlen, sizeof(got) - gotlen, "%c%s %d %s\n",
		     it->kind == DT_DIR ? 'd' : it->kind == DT_REG ? 'f' : it->kind == DT_FIFO ? 'p' : '?',
		     it->flags & DCP_RECORD_ITEM_NAME ? "n" :
		     it->flags & DCP_RECORD_ITEM_LISTED ? "l" :
		     it->flags & DCP_RECORD_ITEM_USED ? "u" : "-",
		     it->depth, *rel ? rel : "/");
	if (n > 0 && (size_t)n < sizeof(got) - gotlen)
		gotlen += (size_t)n;
	return 0;
}

static struct dcp_record *start(const char *root, unsigned flags)
{
	struct dcp_record *r = NULL;
	const char *roots[] = { root };

	CHECK_INT(dcp_record_new(&(struct dcp_record_opts){ .roots = roots, .nroots = 1,
				 .mounts = mounts, .flags = flags }, &r), 0);
	return r;
}

static const char *items(struct dcp_record *r)
{
	gotlen = 0;
	got[0] = '\0';
	CHECK_INT(dcp_record_stop(r), 0);
	CHECK_INT(dcp_record_items(r, collect, NULL), 0);
	return got;
}

/* ---- the main recording ---- */

static void work(void)
{
	char p[512];
	struct stat st;
	int fd;
	DIR *d;

	readf("e/r/a/f1");
	readf("e/r/a/sub/f2");
	readf("e/o/x");	 /* outside */
	snprintf(p, sizeof(p), "%s/e/r/s", base);
	stat(p, &st);	 /* stat only */
	snprintf(p, sizeof(p), "%s/e/r/p", base);
	fd = open(p, O_PATH | O_CLOEXEC); /* O_PATH only */
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/e/r/look/deep/none", base);
	stat(p, &st);	 /* lookups through directories */
	d = opendir(abs_("e/r/ls"));
	while (d && readdir(d))
		;
	if (d)
		closedir(d);
	readf("e/r/del");
	readf("e/r/rep");
	readf("e/r/ren/x");
	fd = open(abs_("e/r/fifo"), O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	/* exec: the kernel opens and reads r/bin/true */
	if (fork() == 0) {
		execl(abs_("e/r/bin/true"), "true", (char *)NULL);
		_exit(12);
	}
	wait(NULL);
}

/* After the recorder read the first events: what happens to used names. */
static void work_then(void)
{
	unlink(abs_("e/r/del"));
	put("e/r/rep.new", "new");
	rename(abs_("e/r/rep.new"), abs_("e/r/rep"));
	rename(abs_("e/r/ren"), abs_("e/r/ren2"));
}

static void work_stale(void)
{
	readf("e/r/st/z");
	unlink(abs_("e/r/st/z"));
	rmdir(abs_("e/r/st"));
}

static void work_after(void)
{
	readf("e/r/a/f1");
	readf("e/r/s");
}

static void outside_again(void)
{
	readf("e/o/x");
	readf("e/o/y");
}

static void main_recording(void)
{
	struct dcp_record *r;
	struct dcp_record_stats st;
	uint64_t before;
	const char *want =
		"d- 0 /e/r\n"
		"d- 1 /e/r/a\n"
		"fu 2 /e/r/a/f1\n"
		"d- 2 /e/r/a/sub\n"
		"fu 3 /e/r/a/sub/f2\n"
		"d- 1 /e/r/bin\n"
		"fu 2 /e/r/bin/true\n"
		"pu 1 /e/r/fifo\n"
		"dl 1 /e/r/ls\n"
		"fu 1 /e/r/rep\n";

	mkd("e/r");
	mkd("e/r/a");
	mkd("e/r/a/sub");
	mkd("e/r/ls");
	mkd("e/r/look");
	mkd("e/r/look/deep");
	mkd("e/r/ren");
	mkd("e/r/st");
	mkd("e/r/bin");
	mkd("e/o");
	put("e/r/a/f1", "one");
	put("e/r/a/sub/f2", "two");
	put("e/r/s", "s");
	put("e/r/p", "p");
	put("e/r/ls/in", "in");
	put("e/r/del", "del");
	put("e/r/rep", "old");
	put("e/r/ren/x", "x");
	put("e/r/st/z", "z");
	put("e/o/x", "x");
	put("e/o/y", "y");
	if (mkfifo(abs_("e/r/fifo"), 0644) < 0)
		abort();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "cp /bin/true %s/e/r/bin/true", base);
		if (system(cmd) != 0)
			abort();
	}
	r = start(abs_("e/r"), 0);
	if (!r)
		return;
	CHECK(dcp_record_fd(r) >= 0);
	in_child(work);
	CHECK_INT(dcp_record_read(r), 0);
	in_child(work_then);
	CHECK_INT(dcp_record_read(r), 0);
	/* The outside directory is marked ignored: nothing more from it. */
	dcp_record_stats(r, &st);
	CHECK_INT(st.outside_dirs, 1);
	before = st.events;
	in_child(outside_again);
	CHECK_INT(dcp_record_read(r), 0);
	dcp_record_stats(r, &st);
	CHECK_INT(st.events, before);
	/* A directory deleted before its events are read. */
	in_child(work_stale);
	CHECK_INT(dcp_record_read(r), 0);
	CHECK_STR(items(r), want);
	dcp_record_stats(r, &st);
	CHECK_INT(st.own, 0);
	CHECK_INT(st.overflows, 0);
	CHECK_INT(st.files, 5); /* f1, f2, true, fifo, rep */
	CHECK_INT(st.dirs, 1);	/* ls */
	CHECK_INT(st.gone, 3);	/* del, ren/x, rep.new (renamed onto rep) */
	CHECK_INT(st.replaced, 1);
	CHECK_INT(st.evicted, 0);
	CHECK_INT(st.stale_dirs, 1);
	CHECK(st.ignore_marks >= 5);
	CHECK_INT(st.ignore_marks_failed, 0);
	CHECK_INT(dcp_record_fd(r), -1);
	/* Stopped: an open now is not seen. */
	before = st.events;
	in_child(work_after);
	CHECK_INT(dcp_record_read(r), 0);
	dcp_record_stats(r, &st);
	CHECK_INT(st.events, before);
	{
		struct dcp_record_fs f;

		CHECK_INT(dcp_record_fs(r, 0, &f), 0);
		CHECK_STR(f.fstype, "ext4");
		CHECK_INT(f.err, 0);
		CHECK_INT(dcp_record_fs(r, 1, &f), -ENOENT);
		CHECK_STR(dcp_record_root(r, 0), abs_("e/r"));
	}
	dcp_record_free(r);
}

/* ---- repeated opens ---- */

/* 50 rounds of opening 100 files; after each, the recorder reads what
 * was queued before the next (DONE, GO): events of one round never wait in
 * the queue beside the next round's, where fanotify would merge them. */
static void rep_work(int done, int go)
{
	char c = 0;

	for (int k = 0; k < 50; k++) {
		for (int i = 0; i < 100; i++) {
			char rel[64];

			snprintf(rel, sizeof(rel), "rep/f%d", i);
			readf(rel);
		}
		if (write(done, &c, 1) != 1 || read(go, &c, 1) != 1)
			_exit(1);
	}
}

static uint64_t repeated(unsigned flags, char *out, size_t size)
{
	struct dcp_record *r = start(abs_("rep"), flags);
	struct dcp_record_stats st;
	int done[2], go[2], status;
	pid_t c;
	char ch = 0;

	if (!r)
		return 0;
	if (pipe(done) < 0 || pipe(go) < 0)
		abort();
	c = fork();
	if (c == 0) {
		rep_work(done[1], go[0]);
		_exit(0);
	}
	/* Each round's events are queued when the round says so: read them all. */
	for (int k = 0; k < 50; k++) {
		if (read(done[0], &ch, 1) != 1)
			break;
		CHECK_INT(dcp_record_read(r), 0);
		if (write(go[1], &ch, 1) != 1)
			break;
	}
	waitpid(c, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(done[0]);
	close(done[1]);
	close(go[0]);
	close(go[1]);
	snprintf(out, size, "%s", items(r));
	dcp_record_stats(r, &st);
	CHECK_INT(st.overflows, 0);
	CHECK_INT(st.files, 100);
	dcp_record_free(r);
	return st.events;
}

static void repeated_opens(void)
{
	static char a[16384], b[16384];
	uint64_t with, without;

	mkd("rep");
	for (int i = 0; i < 100; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "rep/f%d", i);
		put(rel, "x");
	}
	with = repeated(0, a, sizeof(a));
	without = repeated(DCP_RECORD_NO_IGNORE_MARKS, b, sizeof(b));
	fprintf(stderr, "record: 100 files x 50 opens: %llu events with ignore marks, %llu without\n",
		(unsigned long long)with, (unsigned long long)without);
	/* Without: at least one event per file and round (a file's open and
	 * read may merge), 5,000; with: about one per file. */
	CHECK(with <= 2 * 100 + 10);
	CHECK(without >= 5000);
	CHECK_STR(a, b);
}

/* ---- --listed ---- */

static void listed_work(void)
{
	struct stat st;
	DIR *d = opendir(abs_("lst/D"));

	while (d && readdir(d))
		;
	if (d)
		closedir(d);
	stat(abs_("lst/D/a"), &st); /* looked up, never opened */
}

static void listed(void)
{
	struct dcp_record *r;

	mkd("lst");
	mkd("lst/D");
	put("lst/D/a", "a");
	put("lst/D/b", "b");
	/* A tmpfs keeps every name in the cache: both are names of D (the
	 * name nobody looked up is left out on ext4: cmd/record). */
	r = start(abs_("lst"), DCP_RECORD_LISTED);
	if (!r)
		return;
	in_child(listed_work);
	CHECK_INT(dcp_record_read(r), 0);
	CHECK_STR(items(r), "d- 0 /lst\ndl 1 /lst/D\nfn 2 /lst/D/a\nfn 2 /lst/D/b\n");
	dcp_record_free(r);
	r = start(abs_("lst"), 0);
	if (!r)
		return;
	in_child(listed_work);
	CHECK_INT(dcp_record_read(r), 0);
	CHECK_STR(items(r), "d- 0 /lst\ndl 1 /lst/D\n");
	dcp_record_free(r);
}

/* ---- 100,000 names ---- */

static int go[2], done[2]; /* chunks: the child waits for the recorder */

static void many_work(void)
{
	char c;

	for (int i = 0; i < 100000; i++) {
		/* 8,000 opens at most wait in the queue (16,384). */
		if (i % 8000 == 0) {
			if (i && write(done[1], "d", 1) != 1)
				_exit(21);
			if (read(go[0], &c, 1) != 1)
				_exit(22);
		}
		char rel[512];
		int fd;

		snprintf(rel, sizeof(rel), "%s/many/d%d/file-%06d", base, i % 200, i);
		fd = open(rel, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(20);
		close(fd);
	}
}

static int count(const struct dcp_record_item *it, void *arg)
{
	(void)it;
	++*(size_t *)arg;
	return 0;
}

static void many(void)
{
	struct dcp_record *r;
	struct dcp_record_stats st;
	struct mallinfo2 m0, m1;
	pid_t c;
	int status;

	mkd("many");
	for (int i = 0; i < 200; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "many/d%d", i);
		mkd(rel);
	}
	for (int i = 0; i < 100000; i++) {
		char p[512];
		int fd;

		snprintf(p, sizeof(p), "%s/many/d%d/file-%06d", base, i % 200, i);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			abort();
		close(fd);
	}
	m0 = mallinfo2();
	r = start(abs_("many"), 0);
	if (!r)
		return;
	if (pipe(go) < 0 || pipe(done) < 0)
		abort();
	c = fork();
	if (c == 0) {
		close(go[1]);
		close(done[0]);
		many_work();
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	for (char x;;) {
		if (write(go[1], "g", 1) != 1 || read(done[0], &x, 1) != 1)
			break; /* the child exited: its last chunk is queued */
		CHECK_INT(dcp_record_read(r), 0);
	}
	waitpid(c, &status, 0);
	close(go[1]);
	close(done[0]);
	CHECK_INT(dcp_record_read(r), 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_INT(dcp_record_stop(r), 0);
	m1 = mallinfo2();
	dcp_record_stats(r, &st);
	fprintf(stderr, "record: 100,000 names: %llu events, %llu overflows, heap %.1f MB\n",
		(unsigned long long)st.events, (unsigned long long)st.overflows,
		(double)(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd) / 1e6);
	CHECK_INT(st.overflows, 0);
	CHECK(m1.uordblks + m1.hblkhd - m0.uordblks - m0.hblkhd < 12000000);
	gotlen = 0;
	{
		size_t n = 0;

		CHECK_INT(dcp_record_items(r, count, &n), 0);
		CHECK_INT(n, 100000 + 200 + 1);
	}
	dcp_record_stats(r, &st);
	CHECK_INT(st.files, 100000);
	dcp_record_free(r);
}

int main(void)
{
	char tmpl[] = "/tmp/dcp-unit-record.XXXXXX";
	bool tmpfs_fid = true; /* fanotify can watch the tmpfs */

	if (geteuid() != 0) {
		fprintf(stderr, "record: needs root (fanotify filesystem marks)\n");
		return 77;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "record: no mount namespace of its own: %s\n", strerror(errno));
		return 77;
	}
	if (!mkdtemp(tmpl))
		return 77;
	snprintf(base, sizeof(base), "%s", tmpl);
	if (mount("dcp-unit-record", base, "tmpfs", 0, "size=512m,nr_inodes=200000") < 0) {
		fprintf(stderr, "record: tmpfs: %s\n", strerror(errno));
		rmdir(tmpl);
		return 77;
	}
	{
		/* An ext4 image beside: it keeps negative dentries (gone names). */
		char cmd[2048];

		mkd("e");
		snprintf(cmd, sizeof(cmd), "truncate -s 64M %s/e.img && mkfs.ext4 -q -F %s/e.img "
			 ">/dev/null 2>&1 && mount -o loop %s/e.img %s/e", base, base, base, base);
		if (system(cmd) != 0) {
			fprintf(stderr, "record: no ext4 image (mkfs.ext4, loop devices)\n");
			umount2(base, MNT_DETACH);
			rmdir(tmpl);
			return 77;
		}
	}
	CHECK_INT(dcp_mounts_load(NULL, &mounts), 0);
	if (!mounts)
		return 1;
	{
		/*
		 * fanotify with directory handles, or skip.  A tmpfs has an fsid,
		 * which fanotify needs, only from 5.13 (Debian's 5.10 refuses it,
		 * ENODEV): then the parts on the tmpfs are skipped, naming that,
		 * and the recording on the ext4 image still runs.  A tmpfs with an
		 * fsid that fanotify refuses is a failure, not a skip.
		 */
		struct dcp_record *r = NULL;
		const char *roots[] = { base };
		int ret = dcp_record_new(&(struct dcp_record_opts){ .roots = roots, .nroots = 1,
					 .mounts = mounts }, &r);

		dcp_record_free(r);
		if (ret == -EINVAL || ret == -ENOSYS || ret == -EOPNOTSUPP || ret == -ENODEV) {
			struct statfs sfs;
			int ext4;

			r = NULL;
			roots[0] = abs_("e");
			ext4 = dcp_record_new(&(struct dcp_record_opts){ .roots = roots, .nroots = 1,
					      .mounts = mounts }, &r);
			dcp_record_free(r);
			if (ext4 < 0) {
				fprintf(stderr, "record: fanotify cannot watch a tmpfs (%s) or an ext4 "
					"image (%s) here: needs fanotify with directory handles "
					"(FAN_REPORT_DFID_NAME)\n", strerror(-ret), strerror(-ext4));
				umount2(abs_("e"), 0);
				umount2(base, MNT_DETACH);
				rmdir(tmpl);
				return 77;
			}
			CHECK(statfs(base, &sfs) == 0);
			if (sfs.f_fsid.__val[0] || sfs.f_fsid.__val[1]) {
				fprintf(stderr, "record: fanotify refuses a tmpfs that has an fsid: %s\n",
					strerror(-ret));
				check_failures++;
			} else {
				printf("SKIP test part: needs a tmpfs fsid for fanotify's file handles "
				       "(Linux 5.13): repeated opens, listed names, 100,000 names and "
				       "bad roots (on the tmpfs) not tested; the recording on ext4 is\n");
			}
			tmpfs_fid = false;
		}
	}
	main_recording();
	if (tmpfs_fid) {
		repeated_opens();
		listed();
		many();
	}
	if (tmpfs_fid) {
		/* A root that is not a directory, and one that is not there. */
		struct dcp_record *r = NULL;
		size_t bad = 9;
		const char *roots[] = { abs_("lst"), abs_("lst/D/a") };

		CHECK_INT(dcp_record_new(&(struct dcp_record_opts){ .roots = roots, .nroots = 2,
					 .mounts = mounts, .failed_root = &bad }, &r), -ENOTDIR);
		CHECK_INT(bad, 1);
		roots[1] = abs_("nothere");
		CHECK_INT(dcp_record_new(&(struct dcp_record_opts){ .roots = roots, .nroots = 2,
					 .mounts = mounts, .failed_root = &bad }, &r), -ENOENT);
	}
	dcp_mounts_free(mounts);
	umount2(abs_("e"), 0);
	umount2(base, MNT_DETACH);
	rmdir(tmpl);
	return CHECK_DONE();
}
