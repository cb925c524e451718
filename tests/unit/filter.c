/* Unit tests for lib/filter.c: --type, --name, --mindepth, --exclude-fstype as data. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

static const char mountinfo[] =
	"21 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
	"22 21 0:20 / /proc rw - proc proc rw\n"
	"23 21 0:44 / /home/u/fuse rw - fuse.sshfs me@host: rw\n"
	"24 21 8:2 / /srv rw - xfs /dev/sda2 rw\n";

static struct dcp_entry entry(const char *path, const char *name, unsigned char type, int depth)
{
	struct dcp_entry e = { .dirfd = AT_FDCWD, .name = name, .path = path,
			       .pathlen = strlen(path), .type = type, .depth = depth };
	return e;
}

int main(void)
{
	char dir[] = "/tmp/dcp-filter.XXXXXX", tmpl[] = "/tmp/dcp-mountinfo.XXXXXX", file[64];
	const char *globs[] = { "*.c", "Makefile", NULL };
	const char *none[] = { NULL };
	const char *pseudo[] = { "proc", "sysfs", NULL };
	struct dcp_filter all = { 0 }, f = { 0 };
	struct dcp_mounts *m = NULL;
	struct dcp_entry e;
	FILE *out;
	int fd;

	/* Nothing given: every entry counts, the filter is not active. */
	CHECK(!dcp_filter_active(&all));
	e = entry("/a/b.h", "b.h", DT_REG, 1);
	CHECK(dcp_filter_match(&all, &e));
	f.names = none; /* an empty list is no --name */
	CHECK(!dcp_filter_active(&f));
	CHECK(dcp_filter_match(&f, &e));

	/* --type f,d */
	f = (struct dcp_filter){ .types = 1u << DT_REG | 1u << DT_DIR };
	CHECK(dcp_filter_active(&f));
	CHECK(dcp_filter_match(&f, &e));
	e = entry("/a/l", "l", DT_LNK, 1);
	CHECK(!dcp_filter_match(&f, &e));
	/* DT_UNKNOWN and missed: finding the type would be a lookup; it matches. */
	e = entry("/nonexistent/x", "/nonexistent/x", DT_UNKNOWN, 1);
	e.probe = -EAGAIN;
	CHECK(dcp_filter_match(&f, &e));
	/* DT_UNKNOWN and cached: typed with fstatat (a FIFO is no f or d). */
	if (!mkdtemp(dir))
		return 77;
	snprintf(file, sizeof(file), "%s/fifo", dir);
	CHECK_INT(mkfifo(file, 0600), 0);
	e = entry(file, file, DT_UNKNOWN, 1);
	CHECK(!dcp_filter_match(&f, &e));
	f.types = 1u << DT_FIFO;
	CHECK(dcp_filter_match(&f, &e));
	unlink(file);
	rmdir(dir);

	/* --name: an entry's own name; a root's last component. */
	f = (struct dcp_filter){ .names = globs };
	CHECK(dcp_filter_active(&f));
	e = entry("/src/x/main.c", "main.c", DT_REG, 2);
	CHECK(dcp_filter_match(&f, &e));
	e = entry("/src/x/main.h", "main.h", DT_REG, 2);
	CHECK(!dcp_filter_match(&f, &e));
	e = entry("/src/Makefile", "/src/Makefile", DT_UNKNOWN, 0);
	CHECK(dcp_filter_match(&f, &e));
	e = entry("Makefile", "Makefile", DT_UNKNOWN, 0);
	CHECK(dcp_filter_match(&f, &e));
	e = entry("/", "/", DT_UNKNOWN, 0);
	CHECK(!dcp_filter_match(&f, &e));
	f.names = (const char *const[]){ "/", NULL };
	CHECK(dcp_filter_match(&f, &e));

	/* --mindepth 2 */
	f = (struct dcp_filter){ .min_depth = 2 };
	CHECK(dcp_filter_active(&f));
	e = entry("/a/b", "b", DT_REG, 1);
	CHECK(!dcp_filter_match(&f, &e));
	e.depth = 2;
	CHECK(dcp_filter_match(&f, &e));

	/* --exclude-fstype, FUSE, a mount made since the table was read. */
	fd = mkstemp(tmpl);
	if (fd < 0)
		return 77;
	out = fdopen(fd, "w");
	fputs(mountinfo, out);
	fclose(out);
	CHECK_INT(dcp_mounts_load(tmpl, &m), 0);
	unlink(tmpl);
	if (!m)
		return CHECK_DONE();
	f = (struct dcp_filter){ .fstypes = pseudo };
	CHECK(!dcp_filter_active(&f)); /* mounts are not entries */
	CHECK_INT(dcp_filter_skip_mount(&f, m, 22), DCP_WALK_MOUNT_EXCLUDE);
	CHECK_INT(dcp_filter_skip_mount(&f, m, 24), DCP_WALK_MOUNT_ENTER);
	CHECK_INT(dcp_filter_skip_mount(&f, m, 23), DCP_WALK_MOUNT_UNSAFE);
	CHECK_INT(dcp_filter_skip_mount(&f, m, 99), DCP_WALK_MOUNT_UNSAFE);
	CHECK_INT(dcp_filter_skip_mount(&all, m, 22), DCP_WALK_MOUNT_ENTER);
	/* NULL: the call reads /proc/self/mountinfo, and answers as that
	 * table does (before: every mount entered). */
	{
		struct dcp_mounts *self = NULL;

		CHECK_INT(dcp_mounts_load(NULL, &self), 0);
		for (uint64_t id = 1; self && id < 64; id++)
			CHECK_INT(dcp_filter_skip_mount(&f, NULL, id),
				  dcp_filter_skip_mount(&f, self, id));
		dcp_mounts_free(self);
	}
	CHECK_INT(dcp_filter_skip_mount(&f, m, 0), DCP_WALK_MOUNT_ENTER);
	dcp_mounts_free(m);
	return CHECK_DONE();
}
