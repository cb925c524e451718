/*
 * Unit tests for lib/pages.c: residency of a file in the working directory
 * against an independent mincore() count, FIFOs and symlinks never opened,
 * counts, verdicts and output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

#define TMPFS_MAGIC 0x01021994

/* Resident pages of PATH, counted here with mincore (no library code). */
static long ref_resident(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	long ps = sysconf(_SC_PAGESIZE), n = 0;
	unsigned char *v;
	void *m;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	m = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	v = malloc((st.st_size + ps - 1) / ps);
	if (m == MAP_FAILED || !v || mincore(m, st.st_size, v) < 0)
		return -1;
	for (long i = 0; i < (st.st_size + ps - 1) / ps; i++)
		n += v[i] & 1;
	munmap(m, st.st_size);
	free(v);
	close(fd);
	return n;
}

/* Open descriptors of this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/*
 * Measuring contexts: what one run claimed, no other run sees; a run's
 * descriptors go with it; its close batch follows the limit at its start.
 */
static void runs(const char *file, const char *name2)
{
	struct dcp_pages_run *r1, *r2, *low;
	struct dcp_pages p;
	struct rlimit old, lim;
	int fd0 = count_fds();

	for (int round = 0; round < 2; round++) {
		/* Each run counts the inode once, under its first name. */
		CHECK_INT(dcp_pages_run_new(NULL, &r1), 0);
		CHECK_INT(dcp_pages_at(r1, AT_FDCWD, file, 0, &p), 0);
		CHECK(!p.again);
		CHECK_INT(dcp_pages_at(r1, AT_FDCWD, name2, 0, &p), 0);
		CHECK(p.again);
		/* Another run at the same time: its own first claim. */
		CHECK_INT(dcp_pages_run_new(NULL, &r2), 0);
		CHECK_INT(dcp_pages_at(r2, AT_FDCWD, name2, 0, &p), 0);
		CHECK(!p.again);
		CHECK(!dcp_pages_claim(r2, &p) && p.again);
		dcp_pages_run_free(r2);
		dcp_pages_run_free(r1);
		CHECK_INT(count_fds(), fd0);
	}
	getrlimit(RLIMIT_NOFILE, &old);
	if (old.rlim_cur < 4096)
		return; /* no run queues closes here */
	CHECK_INT(dcp_pages_run_new(NULL, &r1), 0);
	CHECK_INT(dcp_pages_fds_per_thread(r1), 3 + 16);
	lim = old;
	lim.rlim_cur = 1024;
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &lim), 0);
	CHECK_INT(dcp_pages_run_new(NULL, &low), 0);
	CHECK_INT(dcp_pages_fds_per_thread(low), 3);
	CHECK_INT(dcp_pages_fds_per_thread(r1), 3 + 16);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &old), 0);
	CHECK_INT(dcp_pages_fds_per_thread(low), 3);
	dcp_pages_run_free(low);
	dcp_pages_run_free(r1);
	CHECK_INT(count_fds(), fd0);
}

/*
 * The rule a run counts an inode once by (dcp_pages_shared()): several
 * names, or a filesystem two mounts of the run's table show in part alike
 * (one mount's root the other's or above it: a bind mount of a directory,
 * the same filesystem mounted twice).  A bind mount of a file, or of two
 * directories apart (/etc/hosts in a container), reaches no file twice.
 */
static void shared_rule(void)
{
	static const char mountinfo[] =
		"21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		"22 21 8:2 / /srv rw - xfs /dev/sda2 rw\n"
		"23 21 8:2 /data/sub /srv/data/bind rw - xfs /dev/sda2 rw\n"
		"24 21 8:3 /a /x rw - ext4 /dev/sdc1 rw\n"
		"25 21 8:3 /ab /y rw - ext4 /dev/sdc1 rw\n"
		"26 21 8:3 /c/hosts /etc/hosts rw - ext4 /dev/sdc1 rw\n"
		"27 21 8:4 /d /m1 rw - ext4 /dev/sdd1 rw\n"
		"28 21 8:4 /d/ /m2 rw - ext4 /dev/sdd1 rw\n"
		"29 21 8:5 / /n1 rw - ext4 /dev/sde1 rw\n"
		"30 21 8:5 / /n2 rw - ext4 /dev/sde1 rw\n";
	char tmpl[] = "/tmp/dcp-mountinfo.XXXXXX";
	struct dcp_mounts *m = NULL;
	struct dcp_pages_run *r;
	struct dcp_pages p = { .nlink = 1 };
	int fd = mkstemp(tmpl);
	FILE *f;

	if (fd < 0 || !(f = fdopen(fd, "w")))
		return;
	fputs(mountinfo, f);
	fclose(f);
	CHECK_INT(dcp_mounts_load(tmpl, &m), 0);
	unlink(tmpl);
	if (!m)
		return;
	CHECK_INT(dcp_pages_run_new(&(struct dcp_pages_run_opts){ .mounts = m }, &r), 0);
	p.dev = makedev(8, 1); /* mounted once */
	CHECK(!dcp_pages_shared(r, &p));
	p.nlink = 2; /* a hard link: always */
	CHECK(dcp_pages_shared(r, &p));
	p.nlink = 1;
	p.dev = makedev(8, 2); /* / and a directory of it bind-mounted */
	CHECK(dcp_pages_shared(r, &p));
	p.dev = makedev(8, 3); /* /a, /ab, /c/hosts: apart ("/a" is not above "/ab") */
	CHECK(!dcp_pages_shared(r, &p));
	p.dev = makedev(8, 4); /* the same directory twice */
	CHECK(dcp_pages_shared(r, &p));
	p.dev = makedev(8, 5); /* the same filesystem mounted twice */
	CHECK(dcp_pages_shared(r, &p));
	/* Claims follow the rule: a single-link file on 8:5 counts once. */
	p.ino = 12;
	CHECK(dcp_pages_claim(r, &p) && !p.again);
	CHECK(!dcp_pages_claim(r, &p) && p.again);
	p.dev = makedev(8, 3);
	CHECK(dcp_pages_claim(r, &p) && dcp_pages_claim(r, &p)); /* not remembered */
	dcp_pages_run_free(r);
	dcp_mounts_free(m);
}

int main(void)
{
	struct dcp_pages_run *pr;
	char file[] = "pages-unit.XXXXXX", fifo[64], link[64], dir[64];
	long ps = sysconf(_SC_PAGESIZE);
	struct dcp_pages p;
	struct dcp_pages_counts c = { 0 };
	struct dcp_buf b = DCP_BUF_INIT;
	struct statfs sf;
	char *data;
	int fd, m, ret;

	CHECK_STR(dcp_pages_method_name(DCP_PAGES_CACHESTAT), "cachestat");
	CHECK_STR(dcp_pages_method_name(DCP_PAGES_MINCORE), "mincore");
	CHECK_INT(dcp_pages_state_of(0), DCP_PAGES_MEASURED);
	CHECK_INT(dcp_pages_state_of(-EAGAIN), DCP_PAGES_UNKNOWN);
	CHECK_INT(dcp_pages_state_of(-ENODEV), DCP_PAGES_SKIPPED);
	CHECK_INT(dcp_pages_state_of(-EIO), DCP_PAGES_FAILED);
	/* Unknown for a reason, never an error (issue 18 item 10). */
	CHECK_INT(dcp_pages_state_of(-EACCES), DCP_PAGES_UNKNOWN);
	CHECK_INT(dcp_pages_state_of(-EPERM), DCP_PAGES_UNKNOWN);
	CHECK_INT(dcp_pages_state_of(-EREMOTE), DCP_PAGES_UNKNOWN);
	CHECK_INT(dcp_pages_state_of(-ENOMEDIUM), DCP_PAGES_UNKNOWN);
	CHECK_STR(dcp_pages_unknown_reason(-EAGAIN), "lookup");
	CHECK_STR(dcp_pages_unknown_reason(-EREMOTE), "filesystem");
	CHECK_STR(dcp_pages_unknown_reason(-EPERM), "permission");
	CHECK_STR(dcp_pages_unknown_reason(-EACCES), "permission");
	CHECK_STR(dcp_pages_unknown_reason(-ENOMEDIUM), "no_proc");
	CHECK(dcp_pages_unknown_reason(-EIO) == NULL);
	CHECK(dcp_pages_unknown_reason(0) == NULL);
	CHECK(dcp_pages_fstype_opens_safely("ext4"));
	CHECK(dcp_pages_fstype_opens_safely(NULL));
	CHECK(!dcp_pages_fstype_opens_safely("fuse.sshfs"));
	CHECK(!dcp_pages_fstype_opens_safely("fuse"));
	CHECK(!dcp_pages_fstype_opens_safely("nfs4"));
	CHECK(dcp_pages_fstype_opens_safely("fusectl"));
	CHECK_INT(dcp_pages_warm_method_parse("willneed"), DCP_PAGES_WARM_WILLNEED);
	CHECK_INT(dcp_pages_warm_method_parse("read"), DCP_PAGES_WARM_READ);
	CHECK_INT(dcp_pages_warm_method_parse("Read"), -EINVAL);

	{
		uint64_t v;

		CHECK_INT(dcp_pages_parse_size("0", &v), 0);
		CHECK_INT(v, 0);
		CHECK_INT(dcp_pages_parse_size("12K", &v), 0);
		CHECK_INT(v, 12 * 1024);
		CHECK_INT(dcp_pages_parse_size("3MiB", &v), 0);
		CHECK_INT(v, 3 << 20);
		CHECK_INT(dcp_pages_parse_size("2g", &v), 0);
		CHECK_INT(v, 2ULL << 30);
		/* coreutils' rules: GB is 10^9, G and GiB 2^30; never one for the other */
		CHECK_INT(dcp_pages_parse_size("2GB", &v), 0);
		CHECK(v == 2000000000ULL);
		CHECK_INT(dcp_pages_parse_size("2GiB", &v), 0);
		CHECK(v == 2ULL << 30);
		CHECK_INT(dcp_pages_parse_size("5kB", &v), 0);
		CHECK(v == 5000);
		CHECK_INT(dcp_pages_parse_size("1E", &v), 0);
		CHECK(v == 1ULL << 60);
		CHECK_INT(dcp_pages_parse_size("16E", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("2Gb", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("K", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("1X", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("1KX", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("-1", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("18446744073709551616", &v), -EINVAL);
		CHECK_INT(dcp_pages_parse_size("17179869184G", &v), -EINVAL);
	}

	/* Counts and the verdict: an unknown file is never warm. */
	p = (struct dcp_pages){ .size = 10 * ps, .pages = 10, .resident = 4, .dirty = 1 };
	dcp_pages_count(&c, 0, &p);
	dcp_pages_count(&c, -ENODEV, NULL);
	CHECK_INT(c.files, 1);
	CHECK_INT(c.resident, 4);
	CHECK(dcp_pages_resident_pct(&c) > 39.9 && dcp_pages_resident_pct(&c) < 40.1);
	CHECK(dcp_pages_verdict(&c, 40));
	CHECK(!dcp_pages_verdict(&c, 40.1));
	dcp_pages_count(&c, -EAGAIN, NULL);
	CHECK_INT(c.unknown, 1);
	CHECK(!dcp_pages_verdict(&c, 0));
	dcp_pages_count(&c, -EPERM, NULL);
	CHECK_INT(c.unknown, 2);
	dcp_pages_count(&c, -EIO, NULL);
	CHECK_INT(c.failed, 1);

	/*
	 * Per-subtree sets: a child's inodes merged into its parent's, those
	 * the two share taken back from the sum once.
	 */
	{
		struct dcp_pages_links par = { 0 }, kid = { 0 }, one = { 0 };
		struct dcp_pages_counts sum = { 0 };
		uint64_t inos[] = { 9, 3, 7, 1, 5 }, kinos[] = { 4, 7, 2, 9, 10 };
		uint64_t want[] = { 1, 2, 3, 4, 5, 7, 9, 10 };
		bool all = true;

		for (size_t i = 0; i < 5; i++) {
			struct dcp_pages f = { .dev = 1, .ino = inos[i], .pages = 1, .nlink = 1 };

			CHECK(dcp_pages_links_add(&par, &f));
			dcp_pages_count(&sum, 0, &f);
		}
		CHECK(!dcp_pages_links_add(&par, &(struct dcp_pages){ .dev = 1, .ino = 7 }));
		for (size_t i = 0; i < 5; i++) {
			struct dcp_pages f = { .dev = 1, .ino = kinos[i], .pages = 1, .nlink = 1 };

			CHECK(dcp_pages_links_add(&kid, &f));
			dcp_pages_count(&sum, 0, &f);
		}
		CHECK_INT(sum.files, 10);
		dcp_pages_links_merge(&par, &kid, &sum);
		CHECK_INT(sum.files, 8); /* 7 and 9 in both */
		CHECK_INT(sum.pages, 8);
		CHECK_INT(par.n, 8);
		CHECK_INT(kid.n, 0);
		for (size_t i = 0; i < 8; i++)
			all = all && !dcp_pages_links_add(&par, &(struct dcp_pages){ .dev = 1, .ino = want[i] });
		CHECK(all);
		CHECK_INT(par.n, 8);
		/* Into an empty set, and from one: nothing taken back. */
		dcp_pages_links_merge(&one, &par, &sum);
		CHECK_INT(one.n, 8);
		CHECK_INT(sum.files, 8);
		dcp_pages_links_merge(&one, &kid, &sum);
		CHECK_INT(one.n, 8);
		CHECK(!dcp_pages_links_add(&one, &(struct dcp_pages){ .dev = 1, .ino = 10 }));
		CHECK(dcp_pages_links_add(&one, &(struct dcp_pages){ .dev = 2, .ino = 10 }));
		dcp_pages_links_free(&one);
		dcp_pages_links_free(&par);
	}

	/*
	 * A sum says how its own files were measured (before, every sum said
	 * the method the process had found last): none for no file, mincore
	 * as soon as one file was measured by it.
	 */
	{
		struct dcp_pages_counts none = { 0 }, cs = { 0 }, mix = { 0 };
		struct dcp_pages q = { .size = 1, .pages = 1, .method = DCP_PAGES_CACHESTAT };

		dcp_pages_count(&none, -EAGAIN, NULL);
		CHECK_INT(none.method, DCP_PAGES_NONE);
		dcp_buf_reset(&b);
		dcp_pages_json_counts(&b, &none, -1);
		dcp_buf_putc(&b, '\0');
		CHECK(b.data && strstr(b.data, "\"method\":\"none\"") != NULL);
		dcp_pages_count(&cs, 0, &q);
		CHECK_INT(cs.method, DCP_PAGES_CACHESTAT);
		q.method = DCP_PAGES_MINCORE;
		dcp_pages_count(&mix, 0, &q);
		dcp_pages_counts_add(&mix, &cs);
		CHECK_INT(mix.method, DCP_PAGES_MINCORE);
		dcp_pages_counts_add(&cs, &none);
		CHECK_INT(cs.method, DCP_PAGES_CACHESTAT);
		dcp_buf_reset(&b);
		dcp_pages_text_counts(&b, &mix, DCP_UNITS_BYTES);
		dcp_buf_putc(&b, '\0');
		CHECK(b.data && strstr(b.data, "(mincore)\n") != NULL);
		dcp_buf_reset(&b);
	}

	/* Output pieces. */
	p.method = DCP_PAGES_CACHESTAT;
	dcp_pages_text(&b, 0, &p, DCP_UNITS_BYTES);
	dcp_buf_putc(&b, '\0');
	CHECK(b.data && strncmp(b.data, "pages=4/10 bytes=", 17) == 0);
	CHECK(b.data && strstr(b.data, " dirty=1 writeback=0 evicted=0 ") != NULL);
	dcp_buf_reset(&b);
	dcp_pages_text(&b, -EAGAIN, NULL, DCP_UNITS_BYTES);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, "pages=unknown ");
	dcp_buf_reset(&b);
	dcp_pages_text(&b, -EPERM, NULL, DCP_UNITS_BYTES);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, "pages=unknown:permission ");
	dcp_buf_reset(&b);
	dcp_pages_text(&b, -EREMOTE, NULL, DCP_UNITS_BYTES);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, "pages=unknown:filesystem ");
	dcp_buf_reset(&b);
	dcp_pages_text(&b, -EIO, NULL, DCP_UNITS_BYTES);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, "pages=error:EIO ");
	dcp_buf_reset(&b);
	dcp_pages_json(&b, -EPERM, NULL);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, ",\"data\":\"unknown\",\"data_reason\":\"permission\"");
	dcp_buf_reset(&b);
	dcp_pages_json(&b, -EAGAIN, NULL);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, ",\"data\":\"unknown\",\"data_reason\":\"lookup\"");
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, "{\"type\":\"x\"}\n");
	CHECK_INT(dcp_pages_json_insert(&b, ",\"a\":1", 6), 0);
	dcp_buf_putc(&b, '\0');
	CHECK_STR(b.data, "{\"type\":\"x\",\"a\":1}\n");
	dcp_buf_reset(&b);
	dcp_buf_puts(&b, "x\n");
	CHECK_INT(dcp_pages_json_insert(&b, "y", 1), -EINVAL);
	dcp_buf_free(&b);

	m = dcp_pages_support();
	if (m < 0) {
		fprintf(stderr, "skip: no cachestat or mincore (%d)\n", m);
		return CHECK_DONE() ? 1 : 77;
	}
	CHECK(m == DCP_PAGES_CACHESTAT || m == DCP_PAGES_MINCORE);
	if (dcp_probe_support() < 0)
		return CHECK_DONE() ? 1 : 77;

	CHECK_INT(dcp_pages_run_new(NULL, &pr), 0);
	/* A file of 10 pages and a bit, evicted, then 2 pages read back. */
	fd = mkstemp(file);
	CHECK(fd >= 0);
	if (fd < 0)
		return 1;
	data = calloc(1, 10 * ps + 100);
	CHECK(write(fd, data, 10 * ps + 100) == 10 * ps + 100);
	free(data);
	CHECK_INT(fsync(fd), 0);
	CHECK_INT(fstatfs(fd, &sf), 0);
	CHECK_INT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	ret = dcp_pages_at(pr, AT_FDCWD, file, 0, &p);
	CHECK_INT(ret, 0);
	CHECK_INT(p.size, 10 * ps + 100);
	CHECK_INT(p.pages, 11);
	CHECK_INT(p.resident, ref_resident(file));
	if (sf.f_type != TMPFS_MAGIC) {
		/* tmpfs keeps its pages: only a disk filesystem drops them. */
		CHECK_INT(p.resident, 0);
		char c1;

		CHECK_INT(pread(fd, &c1, 1, 3 * ps), 1);
		ret = dcp_pages_at(pr, AT_FDCWD, file, DCP_PAGES_ISREG, &p);
		CHECK_INT(ret, 0);
		CHECK(p.resident >= 1);
		CHECK_INT(p.resident, ref_resident(file));
	}
	/*
	 * Warming brings in all of it, within a byte budget, reading only
	 * what is not resident (tmpfs holds all of it: nothing to read).
	 */
	{
		bool disk = sf.f_type != TMPFS_MAGIC;
		/* Charged in whole pages: 4.5 pages of budget read 4. */
		struct dcp_pages_budget bu = { .max_bytes = 4 * ps + ps / 2 };

		CHECK_INT(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
		CHECK_INT(dcp_pages_warm_at(pr, AT_FDCWD, file, 0, &bu), disk ? 1 : 0);
		CHECK_INT(dcp_pages_budget_read(&bu.bytes), disk ? 4 * ps : 0);
		CHECK_INT(dcp_pages_budget_read(&bu.used), disk ? 4 * ps : 0);
		if (disk)
			CHECK_INT(ref_resident(file), 4);
		bu = (struct dcp_pages_budget){ .max_file_size = ps };
		CHECK_INT(dcp_pages_warm_at(pr, AT_FDCWD, file, 0, &bu), 1);
		CHECK_INT(dcp_pages_budget_read(&bu.bytes), 0);
		bu = (struct dcp_pages_budget){ 0 };
		CHECK_INT(dcp_pages_warm_at(pr, AT_FDCWD, file, 0, &bu), 0);
		/* The 4 pages read first are not read again; the last page,
		 * 100 bytes of the file, is brought in whole and counts so. */
		CHECK_INT(dcp_pages_budget_read(&bu.bytes), disk ? 7 * ps : 0);
		CHECK_INT(dcp_pages_at(pr, AT_FDCWD, file, 0, &p), 0);
		CHECK_INT(p.resident, 11);
		CHECK_INT(ref_resident(file), 11);
		/* A file all resident costs no read and none of the budget. */
		bu = (struct dcp_pages_budget){ .max_bytes = ps };
		CHECK_INT(dcp_pages_warm_at(pr, AT_FDCWD, file, 0, &bu), 0);
		CHECK_INT(dcp_pages_budget_read(&bu.bytes), 0);
		CHECK_INT(dcp_pages_budget_read(&bu.used), 0);
		CHECK_INT(dcp_pages_budget_read(&bu.files), 1);
	}
	close(fd);

	/* Never opened: a FIFO (an open for reading would block without
	 * O_NONBLOCK), a directory, a symlink not followed. */
	snprintf(fifo, sizeof(fifo), "%s.fifo", file);
	snprintf(link, sizeof(link), "%s.link", file);
	snprintf(dir, sizeof(dir), "%s.dir", file);
	CHECK_INT(mkfifo(fifo, 0600), 0);
	CHECK_INT(symlink(file, link), 0);
	CHECK_INT(mkdir(dir, 0700), 0);
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, fifo, 0, &p), -ENODEV);
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, dir, 0, &p), -ENODEV);
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, link, 0, &p), -ENODEV);
	/* Following a link may update its atime, which a cached walk refuses
	 * (EAGAIN) until done once. */
	CHECK(access(link, R_OK) == 0);
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, link, DCP_PAGES_FOLLOW, &p), 0);
	/* A wrong d_type hint is caught by the fstat after the open. */
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, dir, DCP_PAGES_ISREG, &p), -ENODEV);
	{
		struct dcp_pages_budget bu = { 0 };

		CHECK_INT(dcp_pages_warm_at(pr, AT_FDCWD, fifo, 0, &bu), -ENODEV);
		CHECK_INT(dcp_pages_warm_at(pr, AT_FDCWD, link, 0, &bu), -ENODEV);
	}
	/* An absent name: the cached negative dentry answers. */
	CHECK(access("pages-unit-absent", F_OK) != 0);
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, "pages-unit-absent", 0, &p), -ENOENT);
	CHECK_INT(dcp_pages_at(pr, AT_FDCWD, "pages-unit-absent", 0, &p), -ENOENT);
	dcp_pages_run_free(pr);
	/* Two names of one inode, measured by runs one after the other and
	 * at once. */
	{
		char hard[80];

		snprintf(hard, sizeof(hard), "%s.hard", file);
		CHECK_INT(linkat(AT_FDCWD, file, AT_FDCWD, hard, 0), 0);
		runs(file, hard);
		unlink(hard);
	}
	shared_rule();
	unlink(fifo);
	unlink(link);
	rmdir(dir);
	unlink(file);
	return CHECK_DONE();
}
