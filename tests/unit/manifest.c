// SPDX-License-Identifier: MIT
/*
 * unit/manifest - the residency manifest reader: what dcache-probe -r
 * --ranges --json writes is read back whole, each malformed record is
 * refused with its number, roots are assigned by path components, and
 * paths are folded by their text alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

struct bad {
	size_t rec[16];
	const char *what[16];
	size_t n;
};

static void bad(size_t record, const char *what, void *arg)
{
	struct bad *b = arg;

	if (b->n < 16) {
		b->rec[b->n] = record;
		b->what[b->n++] = what;
	}
}

static int read_str(const char *s, struct dcp_manifest *m, struct bad *b)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");
	int ret;

	CHECK(f != NULL);
	if (!f)
		return -errno;
	ret = dcp_manifest_fread(f, m, bad, b);
	fclose(f);
	return ret;
}

static void good(void)
{
	static const char in[] =
		"{\"type\":\"entry\",\"path\":\"/srv\",\"state\":\"cached\",\"kind\":\"dir\",\"depth\":0}\n"
		"{\"type\":\"entry\",\"path\":\"/srv/a\\\"b\\\\c\\u00e9\\ud83d\\ude00\",\"state\":\"cached\","
		"\"kind\":\"file\",\"depth\":1,\"data\":\"measured\",\"pages\":{\"resident\":2,\"total\":3},"
		"\"identity\":{\"dev\":\"259:3\",\"ino\":77,\"size\":9000,\"mtime_ns\":-12},"
		"\"ranges\":[[0,4096],[8192,4096],[12288,0]]}\n"
		"\n"
		"{\"type\":\"entry\",\"path\":{\"bytes\":\"L3Nydi9i/w==\"},\"state\":\"negative\",\"depth\":1}\n"
		"{\"type\":\"entry\",\"path\":\"/srvx/y\",\"state\":\"miss\",\"depth\":1}\n"
		"{\"type\":\"entry\",\"path\":\"/srvx/z\",\"state\":\"cached\",\"depth\":1,\"ranges\":null}\n"
		"{\"type\":\"root_data\",\"path\":\"/srv\",\"data\":{\"files\":1}}\n"
		"{\"type\":\"summary\",\"paths\":4,\"cached_percent\":null,\"x\":[1.5e3,-0.25,true]}\n";
	struct dcp_manifest m = { 0 };
	struct bad b = { 0 };

	CHECK_INT(read_str(in, &m, &b), 0);
	CHECK_INT(b.n, 0);
	CHECK_INT(m.n, 5);
	if (m.n != 5)
		return;
	CHECK_STR(m.v[1].path, "/srv/a\"b\\c\xc3\xa9\xf0\x9f\x98\x80");
	CHECK_INT(m.v[1].state, DCP_CACHED);
	CHECK_INT(m.v[1].kind, DT_REG);
	CHECK_INT(m.v[1].has_identity, 1);
	CHECK_INT(m.v[1].identity.dev, makedev(259, 3));
	CHECK_INT(m.v[1].identity.ino, 77);
	CHECK_INT(m.v[1].identity.mtime_ns, -12);
	CHECK_INT(m.v[1].nranges, 2); /* an empty range holds nothing */
	CHECK_INT(m.v[1].ranges[1][0], 8192);
	CHECK_INT(m.v[1].record, 2);
	CHECK_INT(m.v[2].len, 7);
	CHECK(memcmp(m.v[2].path, "/srv/b\xff", 7) == 0);
	CHECK_INT(m.v[2].state, DCP_NEGATIVE);
	CHECK_INT(m.v[2].record, 4);
	/* Roots: /srv for its entries; /srvx is not below /srv, so its
	 * entries, under no root, are roots of their own. */
	CHECK_INT(m.nroots, 3);
	CHECK_STR(m.roots[0], "/srv");
	CHECK_INT(m.v[1].root, 0);
	CHECK_INT(m.v[2].root, 0);
	CHECK_STR(m.roots[m.v[3].root], "/srvx/y");
	CHECK_STR(m.roots[m.v[4].root], "/srvx/z");
	CHECK_INT(dcp_manifest_counted(&m.v[3]), 0); /* a miss was not in memory */
	CHECK_INT(dcp_manifest_counted(&m.v[2]), 1);
	dcp_manifest_free(&m);
	CHECK_INT(m.n, 0);
}

/* Each line is malformed: refused with its record number, nothing kept. */
static void malformed(void)
{
	static const char *const lines[] = {
		"not json",
		"{\"type\":\"entry\",\"path\":\"/a\"}",				/* no state */
		"{\"type\":\"entry\",\"path\":\"\",\"state\":\"cached\"}",
		"{\"type\":\"entry\",\"path\":\"/a\\u0000b\",\"state\":\"cached\"}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"warm\"}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"ranges\":[[0,1]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[-4096,4096]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[9223372036854775807,1]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[0.5,1]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":{}}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"dev\":\"x\",\"ino\":1,\"size\":1,\"mtime_ns\":1}}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"ino\":1}}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\"} trailing",
		"{\"type\":\"entry\",\"path\":\"/a\\ud800\",\"state\":\"cached\"}",
		"{\"type\":\"x\",\"deep\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
		"{\"type\":\"entry\",\"path\":{\"bytes\":\"@@@@\"},\"state\":\"cached\"}",
		"{\"type\":\"entry\",\"path\":\"/a/../b\",\"state\":\"cached\"}",
		"{\"type\":\"entry\",\"path\":\"..\",\"state\":\"negative\"}",
		/* format 2's own records, and an identity's new members */
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"fs\":3,\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[0,4096]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"fs\":1048576,\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[0,4096]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"handle\":\"1:0d0\",\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[0,4096]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"handle\":\"-1:0d\",\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[0,4096]]}",
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"identity\":{\"handle\":5,\"dev\":\"1:2\",\"ino\":1,\"size\":1,\"mtime_ns\":1},\"ranges\":[[0,4096]]}",
		"{\"type\":\"fs\",\"fs\":0,\"uuid\":\"zz22e3f7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"fsuuid\"}",
		"{\"type\":\"fs\",\"fs\":0,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"libblkid\"}",
		"{\"type\":\"fs\",\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"fsuuid\"}",
		"{\"type\":\"fs\",\"fs\":1048576,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"fsuuid\"}",
		"{\"type\":\"fs\",\"fs\":-1,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"fsuuid\"}",
		"{\"type\":\"manifest\",\"version\":2,\"page_size\":4096}",	/* not first */
		"{\"type\":\"manifest\",\"version\":1}",
		"{\"type\":\"manifest\"}",
		"{\"type\":\"manifest_root\",\"root\":0}",
		"{\"type\":\"manifest_root\",\"root\":0,\"path\":\"/a/../b\"}",
	};
	size_t n = sizeof(lines) / sizeof(lines[0]);

	for (size_t i = 0; i < n; i++) {
		struct dcp_manifest m = { 0 };
		struct bad b = { 0 };
		char *in = NULL;

		CHECK(asprintf(&in, "{\"type\":\"summary\"}\n%s\n", lines[i]) > 0);
		CHECK_INT(read_str(in, &m, &b), 0);
		if (b.n != 1 || m.n)
			fprintf(stderr, "line %zu: %s\n", i, lines[i]);
		CHECK_INT(b.n, 1);
		CHECK_INT(b.rec[0], 2);
		CHECK_INT(m.n, 0);
		dcp_manifest_free(&m);
		free(in);
	}
}

/* Ranges come back sorted, each byte once: a restore never reads a page twice. */
static void ranges_joined(void)
{
	static const char in[] =
		"{\"type\":\"entry\",\"path\":\"/f\",\"state\":\"cached\",\"depth\":0,"
		"\"identity\":{\"dev\":\"8:1\",\"ino\":2,\"size\":20000,\"mtime_ns\":3},"
		"\"ranges\":[[8192,4096],[0,4096],[4096,100],[0,1],[8192,4096],[12288,4096]]}\n";
	struct dcp_manifest m = { 0 };
	struct bad b = { 0 };

	CHECK_INT(read_str(in, &m, &b), 0);
	CHECK_INT(b.n, 0);
	CHECK_INT(m.n, 1);
	if (m.n == 1) {
		CHECK_INT(m.v[0].nranges, 2);
		CHECK_INT(m.v[0].ranges[0][0], 0);
		CHECK_INT(m.v[0].ranges[0][1], 4196);
		CHECK_INT(m.v[0].ranges[1][0], 8192);
		CHECK_INT(m.v[0].ranges[1][1], 8192);
	}
	dcp_manifest_free(&m);
}

/*
 * A record longer than DCP_MANIFEST_MAX_RECORD is refused by its number and
 * never held whole: the records around it are read, and so is every line.
 */
static void over_the_bound(void)
{
	static const char rec[] = "{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\"}\n";
	size_t long_len = DCP_MANIFEST_MAX_RECORD + 1, n = 2 * strlen(rec) + long_len + 1;
	char *in = malloc(n + 1), *p = in;
	struct dcp_manifest m = { 0 };
	struct bad b = { 0 };

	CHECK(in != NULL);
	if (!in)
		return;
	p = stpcpy(p, rec);
	memset(p, ' ', long_len); /* blanks: a record of nothing, but too long */
	p[0] = '{';
	p += long_len;
	*p++ = '\n';
	p = stpcpy(p, rec);
	CHECK_INT(read_str(in, &m, &b), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.rec[0], 2);
	CHECK(b.n == 1 && strstr(b.what[0], "longer than " DCP_MANIFEST_MAX_RECORD_TEXT) != NULL);
	CHECK_INT(m.n, 2);
	CHECK_INT(m.lines, 3);
	CHECK(m.n == 2 && m.v[1].record == 3);
	dcp_manifest_free(&m);
	/* Exactly the bound is a record like any other (here malformed JSON). */
	memset(in, ' ', DCP_MANIFEST_MAX_RECORD);
	in[0] = '{';
	in[DCP_MANIFEST_MAX_RECORD] = '\0';
	b.n = 0;
	CHECK_INT(read_str(in, &m, &b), 0);
	CHECK(b.n == 1 && strstr(b.what[0], "longer than") == NULL);
	dcp_manifest_free(&m);
	free(in);
}

/* A read error is an error (never the end of the manifest), at its line. */
static void read_error(void)
{
	struct dcp_manifest m = { 0 };
	struct bad b = { 0 };
	FILE *f = fopen("/", "r"); /* a directory: read(2) fails with EISDIR */

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(dcp_manifest_fread(f, &m, bad, &b), -EISDIR);
	CHECK_INT(m.lines, 1);
	CHECK_INT(b.n, 0);
	fclose(f);
	dcp_manifest_free(&m);
	CHECK_INT(dcp_manifest_read("/nonexistent/manifest", &m, bad, &b), -ENOENT);
	CHECK_INT(m.lines, 0);
}

static void lexical(void)
{
	char *p;

	CHECK_STR(p = dcp_manifest_lexical("/a//b/./c/"), "/a/b/c");
	free(p);
	CHECK_STR(p = dcp_manifest_lexical("/"), "/");
	free(p);
	CHECK_STR(p = dcp_manifest_lexical("/."), "/");
	free(p);
	errno = 0;
	CHECK(dcp_manifest_lexical("/a/../b") == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK(chdir("/tmp") == 0);
	CHECK_STR(p = dcp_manifest_lexical("x/./y"), "/tmp/x/y");
	free(p);
	CHECK(chdir("/") == 0);
	CHECK_STR(p = dcp_manifest_lexical("x"), "/x");
	free(p);
}

/*
 * Two restores at once, in two threads, each of its own manifest (files
 * whose pages were dropped, so that each restore plans, sorts and reads):
 * each reads its own files whole, and under TSan nothing is shared (the
 * device-order sort kept its items in a file-scope pointer before).
 */
enum { RFILES = 4, RSIZE = 64 * 1024 };

struct restore_job {
	struct dcp_manifest m;
	const struct dcp_mounts *mounts;
	struct dcp_pages_budget budget;
	struct dcp_manifest_restore_stats st;
	int ret;
};

static void *restore_thread(void *arg)
{
	struct restore_job *j = arg;
	struct dcp_manifest_restore_opts o = { .threads = 2, .pages = &j->budget,
					       .mounts = j->mounts };

	j->ret = dcp_manifest_restore(&j->m, &o, &j->st);
	return NULL;
}

/* A file of RSIZE random bytes, written, synced and dropped from the page cache. */
static bool cold_file(const char *path, struct stat *st)
{
	static char data[RSIZE];
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	bool ok;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 131 + 7);
	if (fd < 0)
		return false;
	ok = write(fd, data, sizeof(data)) == (ssize_t)sizeof(data) && fsync(fd) == 0 &&
	     posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 && fstat(fd, st) == 0;
	close(fd);
	return ok;
}

static void two_restores(void)
{
	char dir[] = "/var/tmp/dcp-restore.XXXXXX", path[64];
	struct restore_job *j = calloc(2, sizeof(*j));
	struct dcp_mounts *mounts = NULL;
	pthread_t t[2];

	/* A restore looks its paths up with openat2(2), which valgrind 3.19
	 * does not know (ENOSYS: tests/README.md, "Known limits"). */
	if (dcp_probe_support() < 0) {
		fprintf(stderr, "two_restores: no openat2 here (valgrind?): skipped\n");
		free(j);
		return;
	}
	if (!j || !mkdtemp(dir) || dcp_mounts_load(NULL, &mounts) < 0) {
		fprintf(stderr, "two_restores: no temporary directory or mount table: skipped\n");
		free(j);
		return;
	}
	for (int k = 0; k < 2; k++) {
		struct dcp_buf in = DCP_BUF_INIT;
		struct bad b = { 0 };
		FILE *f;

		for (int i = 0; i < RFILES; i++) {
			struct stat st;

			snprintf(path, sizeof(path), "%s/f%d%d", dir, k, i);
			CHECK(cold_file(path, &st));
			dcp_buf_printf(&in, "{\"type\":\"entry\",\"path\":\"%s\",\"state\":\"cached\","
				       "\"kind\":\"file\",\"depth\":1,\"data\":\"measured\","
				       "\"identity\":{\"dev\":\"%u:%u\",\"ino\":%llu,\"size\":%lld,"
				       "\"mtime_ns\":%lld},\"ranges\":[[0,%d]]}\n", path,
				       major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
				       (long long)st.st_size,
				       (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
				       RSIZE);
		}
		f = fmemopen(in.data, in.len, "r");
		CHECK(f != NULL);
		if (f) {
			CHECK_INT(dcp_manifest_fread(f, &j[k].m, bad, &b), 0);
			fclose(f);
		}
		CHECK_INT(b.n, 0);
		dcp_buf_free(&in);
		j[k].mounts = mounts;
	}
	for (int k = 0; k < 2; k++)
		CHECK_INT(pthread_create(&t[k], NULL, restore_thread, &j[k]), 0);
	for (int k = 0; k < 2; k++) {
		pthread_join(t[k], NULL);
		CHECK_INT(j[k].ret, 0);
		CHECK_INT(j[k].st.errors, 0);
		CHECK_INT(j[k].st.files, RFILES);
		CHECK_INT(j[k].budget.bytes, RFILES * RSIZE);
		dcp_manifest_free(&j[k].m);
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < RFILES; i++) {
			snprintf(path, sizeof(path), "%s/f%d%d", dir, k, i);
			unlink(path);
		}
	rmdir(dir);
	dcp_mounts_free(mounts);
	free(j);
}

/*
 * Format 2: its roots come from its manifest_root records (an entry at
 * depth 0 is one too), an identity gets the UUID of the fs record it
 * names and its handle; a filesystem number given twice, a root after an
 * entry are refused; a manifest of a later format is read not at all.
 */
static void format2(void)
{
	static const char in[] =
		"{\"type\":\"manifest\",\"version\":2,\"page_size\":4096}\n"
		"{\"type\":\"manifest_root\",\"root\":0,\"path\":\"/srv\"}\n"
		"{\"type\":\"manifest_root\",\"root\":1,\"path\":\"/srv/app\"}\n"
		"{\"type\":\"fs\",\"fs\":5,\"uuid\":\"8822E3F7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"btrfs\",\"x\":1}\n"
		"{\"type\":\"entry\",\"path\":\"/srv/app/a\",\"state\":\"cached\",\"kind\":\"file\",\"depth\":1,"
		"\"identity\":{\"fs\":5,\"dev\":\"0:44\",\"ino\":258,\"handle\":\"77:0201000000000000\","
		"\"size\":6,\"mtime_ns\":1},\"ranges\":[[0,4096]]}\n"
		"{\"type\":\"entry\",\"path\":\"/srv/b\",\"state\":\"cached\",\"kind\":\"file\",\"depth\":1,\"ranges\":[]}\n"
		"{\"type\":\"fs\",\"fs\":5,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197d\",\"uuid_from\":\"fsuuid\"}\n"
		"{\"type\":\"manifest_root\",\"root\":2,\"path\":\"/srv/b\"}\n"
		"{\"type\":\"entry\",\"path\":\"/opt\",\"state\":\"cached\",\"depth\":0}\n";
	static const uint8_t uuid[16] = { 0x88, 0x22, 0xe3, 0xf7, 0x33, 0x7c, 0x4f, 0x8b,
					  0x8b, 0x3f, 0xf1, 0x77, 0xb1, 0xcc, 0x19, 0x7c };
	static const uint8_t handle[8] = { 2, 1, 0, 0, 0, 0, 0, 0 };
	struct dcp_manifest m = { 0 };
	struct bad b = { 0 };
	char *later = NULL;

	CHECK_INT(read_str(in, &m, &b), 0);
	CHECK_INT(m.format, 2);
	CHECK_INT(b.n, 2);
	CHECK_INT(b.rec[0], 7); /* fs 5 again */
	CHECK_INT(b.rec[1], 8); /* a root after an entry */
	CHECK_INT(m.n, 3);
	if (m.n == 3) {
		const struct dcp_pages_identity *id = &m.v[0].identity;

		CHECK_INT(m.v[0].has_identity, 1);
		CHECK_INT(id->fs.from, DCP_FSID_BTRFS);
		CHECK(!memcmp(id->fs.uuid, uuid, 16));
		CHECK_INT(id->handle_type, 77);
		CHECK_INT(id->handle_len, 8);
		CHECK(id->handle && !memcmp(id->handle, handle, 8));
		CHECK_INT(m.v[1].has_identity, 0);
		CHECK_INT(m.v[1].has_ranges, 1);
		CHECK_INT(m.v[1].nranges, 0);
		CHECK_INT(m.v[1].identity.fs.from, DCP_FSID_NONE);
		CHECK_INT(m.v[1].identity.handle_len, 0);
		/* The longest root by components; /opt, at depth 0, one too. */
		CHECK_INT(m.nroots, 3);
		CHECK_STR(m.roots[0], "/srv");
		CHECK_STR(m.roots[1], "/srv/app");
		CHECK_STR(m.roots[2], "/opt");
		CHECK_INT(m.v[0].root, 1);
		CHECK_INT(m.v[1].root, 0);
		CHECK_INT(m.v[2].root, 2);
	}
	dcp_manifest_free(&m);

	/* A format without the manifest record is 1. */
	b.n = 0;
	CHECK_INT(read_str("{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\"}\n", &m, &b), 0);
	CHECK_INT(m.format, 1);
	CHECK_INT(m.n, 1);
	dcp_manifest_free(&m);

	/* A later format: said once, nothing read. */
	b.n = 0;
	CHECK(asprintf(&later, "{\"type\":\"manifest\",\"version\":3}\n%s", in + strlen(
		"{\"type\":\"manifest\",\"version\":2,\"page_size\":4096}\n")) > 0);
	CHECK_INT(read_str(later, &m, &b), 0);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.rec[0], 1);
	CHECK_INT(m.n, 0);
	CHECK_INT(m.nroots, 0);
	dcp_manifest_free(&m);
	free(later);
}

/*
 * A manifest read a window at a time: the windows are its entries in
 * order, at most MAX each, each entry with the root dcp_manifest_read()
 * gives it (the roots known before the first entry: a pre-pass, as the
 * depth-0 entry /b comes last), bad records said once; from a pipe a
 * reader that wants roots is refused (-ESPIPE), one that does not reads.
 */
static void windows(void)
{
	static const char in[] =
		"{\"type\":\"entry\",\"path\":\"/a/x\",\"state\":\"cached\",\"depth\":1}\n"
		"{\"type\":\"entry\",\"path\":\"/b/y\",\"state\":\"negative\",\"depth\":1}\n"
		"not json\n"
		"{\"type\":\"entry\",\"path\":\"/a\",\"state\":\"cached\",\"depth\":0}\n"
		"{\"type\":\"entry\",\"path\":\"/c/z\",\"state\":\"cached\",\"depth\":2}\n"
		"{\"type\":\"entry\",\"path\":\"/b\",\"state\":\"cached\",\"depth\":0}\n";
	char file[] = "/tmp/unit-manifest.XXXXXX";
	struct dcp_manifest whole = { 0 };
	struct dcp_manifest_reader *x;
	const struct dcp_manifest *w;
	struct bad b = { 0 }, bw = { 0 };
	size_t seen = 0;
	FILE *f;
	int fd = mkstemp(file), n, pipefd[2];

	CHECK(fd >= 0);
	CHECK(write(fd, in, sizeof(in) - 1) == (ssize_t)(sizeof(in) - 1));
	close(fd);
	CHECK_INT(dcp_manifest_read(file, &whole, bad, &b), 0);
	f = fopen(file, "re");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(dcp_manifest_open(f, true, bad, &bw, &x), 0);
	if (!x)
		return;
	while ((n = dcp_manifest_next(x, 2, &w)) > 0) {
		CHECK(n <= 2);
		for (int i = 0; i < n && seen < whole.n; i++, seen++) {
			CHECK_STR(w->v[i].path, whole.v[seen].path);
			CHECK_INT(w->v[i].record, whole.v[seen].record);
			CHECK_STR(w->roots[w->v[i].root], whole.roots[whole.v[seen].root]);
			CHECK_INT(w->v[i].root, whole.v[seen].root);
		}
	}
	CHECK_INT(n, 0);
	CHECK_INT(seen, 5);
	CHECK_INT(whole.n, 5);
	CHECK_INT(dcp_manifest_entries(x), 5);
	CHECK_INT(dcp_manifest_format(x), 1);
	CHECK_INT(b.n, 1);
	CHECK_INT(bw.n, 1); /* the pre-pass says nothing */
	CHECK_INT(bw.rec[0], 3);
	dcp_manifest_close(x);
	fclose(f);
	dcp_manifest_free(&whole);

	/* From a pipe: no pre-pass. */
	CHECK_INT(pipe(pipefd), 0);
	CHECK(write(pipefd[1], in, sizeof(in) - 1) == (ssize_t)(sizeof(in) - 1));
	close(pipefd[1]);
	f = fdopen(pipefd[0], "r");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(dcp_manifest_open(f, true, bad, &bw, &x), -ESPIPE);
	CHECK_INT(dcp_manifest_open(f, false, bad, &bw, &x), 0);
	if (x) {
		CHECK_INT(dcp_manifest_next(x, 0, &w), 5);
		CHECK_INT(dcp_manifest_next(x, 0, &w), 0);
		dcp_manifest_close(x);
	}
	fclose(f);
	unlink(file);
}

/*
 * A snapshot taken where a filesystem gave no UUID (issue 43): its notice
 * record is skipped (no bad record), its files are read by device number;
 * a UUID from any source dcp_fsid_from_name() names is the same UUID (one
 * of "blkid" matches one of "fsuuid"); an unknown source is a bad record.
 */
static void no_uuid_notice(void)
{
	static const char in[] =
		"{\"type\":\"manifest\",\"version\":2,\"page_size\":4096}\n"
		"{\"type\":\"manifest_root\",\"root\":0,\"path\":\"/m\"}\n"
		"{\"type\":\"notice\",\"mount\":\"/m\",\"fstype\":\"ext4\",\"dev\":\"7:0\","
		"\"no_uuid\":\"device_denied\",\"message\":\"no filesystem UUID on this kernel\"}\n"
		"{\"type\":\"entry\",\"path\":\"/m/a\",\"state\":\"cached\",\"kind\":\"file\",\"depth\":1,"
		"\"identity\":{\"dev\":\"7:0\",\"ino\":13,\"handle\":\"1:0d000000e8407922\","
		"\"size\":6,\"mtime_ns\":1},\"ranges\":[[0,4096]]}\n"
		"{\"type\":\"fs\",\"fs\":0,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197c\",\"uuid_from\":\"blkid\"}\n"
		"{\"type\":\"fs\",\"fs\":1,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197d\",\"uuid_from\":\"by-uuid\"}\n"
		"{\"type\":\"fs\",\"fs\":2,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197e\",\"uuid_from\":\"ext4\"}\n"
		"{\"type\":\"fs\",\"fs\":3,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc197f\",\"uuid_from\":\"xfs\"}\n"
		"{\"type\":\"fs\",\"fs\":4,\"uuid\":\"8822e3f7-337c-4f8b-8b3f-f177b1cc1970\",\"uuid_from\":\"none\"}\n"
		"{\"type\":\"entry\",\"path\":\"/m/b\",\"state\":\"cached\",\"kind\":\"file\",\"depth\":1,"
		"\"identity\":{\"fs\":0,\"dev\":\"7:0\",\"ino\":14,\"handle\":\"1:0e000000e8407922\","
		"\"size\":6,\"mtime_ns\":1},\"ranges\":[[0,4096]]}\n"
		"{\"type\":\"entry\",\"path\":\"/m/c\",\"state\":\"cached\",\"kind\":\"file\",\"depth\":1,"
		"\"identity\":{\"fs\":2,\"dev\":\"7:0\",\"ino\":15,\"handle\":\"1:0f000000e8407922\","
		"\"size\":6,\"mtime_ns\":1},\"ranges\":[[0,4096]]}\n";
	struct dcp_manifest m = { 0 };
	struct bad b = { 0 };
	struct dcp_fsid fsuuid = { DCP_FSID_FSUUID, { 0x88, 0x22, 0xe3, 0xf7, 0x33, 0x7c, 0x4f, 0x8b,
						     0x8b, 0x3f, 0xf1, 0x77, 0xb1, 0xcc, 0x19, 0x7c } };

	CHECK_INT(read_str(in, &m, &b), 0);
	CHECK_INT(m.format, 2);
	CHECK_INT(b.n, 1);
	CHECK_INT(b.rec[0], 9); /* uuid_from "none": no source */
	CHECK_INT(m.n, 3);
	if (m.n == 3) {
		CHECK_INT(m.v[0].identity.fs.from, DCP_FSID_NONE);
		CHECK_INT(m.v[0].identity.dev, makedev(7, 0));
		CHECK_INT(m.v[1].identity.fs.from, DCP_FSID_BLKID);
		CHECK(dcp_fsid_equal(&m.v[1].identity.fs, &fsuuid));
		CHECK_INT(m.v[2].identity.fs.from, DCP_FSID_EXT4);
	}
	dcp_manifest_free(&m);
}

int main(void)
{
	good();
	malformed();
	format2();
	no_uuid_notice();
	windows();
	ranges_joined();
	over_the_bound();
	read_error();
	lexical();
	two_restores();
	return CHECK_DONE();
}
