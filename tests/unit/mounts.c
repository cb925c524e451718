/* Unit tests for lib/mounts.c: mountinfo snapshot, lookups, fs classes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

/* A mountinfo with stacked mounts, a bind mount and a mount point with a space. */
static const char mountinfo[] =
	"21 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"22 21 0:20 / /proc rw,nosuid - proc proc rw\n"
	"23 21 8:2 / /srv rw - xfs /dev/sda2 rw\n"
	"24 23 0:30 / /srv/nfs rw - nfs4 server:/export rw\n"
	"25 21 0:40 / /mnt/with\\040space rw - vfat /dev/sdb1 rw\n"
	"26 21 0:41 / /srv rw - tmpfs tmpfs rw\n"
	"27 21 8:2 /sub /bind rw - xfs /dev/sda2 rw\n";

int main(void)
{
	char tmpl[] = "/tmp/dcp-mountinfo.XXXXXX";
	struct dcp_mounts *m = NULL;
	struct dcp_mount mt;
	const char *why;
	int fd = mkstemp(tmpl);
	FILE *f;

	if (fd < 0)
		return 77;
	f = fdopen(fd, "w");
	fputs(mountinfo, f);
	fclose(f);

	CHECK_INT(dcp_mounts_load(tmpl, &m), 0);
	unlink(tmpl);
	if (!m)
		return 1;

	CHECK_INT(dcp_mounts_by_path(m, "/usr/bin/ls", &mt), 0);
	CHECK_STR(mt.target, "/");
	CHECK_STR(mt.fstype, "ext4");
	CHECK_STR(mt.source, "/dev/sda1");
	CHECK_INT(mt.id, 21);
	/* The tmpfs mounted on /srv last hides the xfs below it. */
	CHECK_INT(dcp_mounts_by_path(m, "/srv/data", &mt), 0);
	CHECK_STR(mt.fstype, "tmpfs");
	CHECK_INT(dcp_mounts_by_path(m, "/srv", &mt), 0);
	CHECK_STR(mt.fstype, "tmpfs");
	CHECK_INT(dcp_mounts_by_path(m, "/srv/nfs/x", &mt), 0);
	CHECK_STR(mt.fstype, "nfs4");
	/* A prefix of a name is not a parent directory. */
	CHECK_INT(dcp_mounts_by_path(m, "/srvx", &mt), 0);
	CHECK_STR(mt.target, "/");
	CHECK_INT(dcp_mounts_by_path(m, "/proc/../srv/nfs/./a//b", &mt), 0);
	CHECK_STR(mt.target, "/srv/nfs");
	CHECK_INT(dcp_mounts_by_path(m, "/../../proc/sys", &mt), 0);
	CHECK_STR(mt.target, "/proc");
	CHECK_INT(dcp_mounts_by_path(m, "/mnt/with space/f", &mt), 0);
	CHECK_STR(mt.fstype, "vfat");

	CHECK_INT(dcp_mounts_by_dev(m, makedev(0, 30), &mt), 0);
	CHECK_STR(mt.target, "/srv/nfs");
	/* Of a bind mount and its source, the later one. */
	CHECK_INT(dcp_mounts_by_dev(m, makedev(8, 2), &mt), 0);
	CHECK_STR(mt.target, "/bind");
	CHECK_INT(dcp_mounts_by_dev(m, makedev(9, 9), &mt), -ENOENT);
	/* Every mount, in mountinfo order, then -ENOENT. */
	for (size_t i = 0; i < 7; i++) {
		CHECK_INT(dcp_mounts_get(m, i, &mt), 0);
		CHECK_INT(mt.id, 21 + (int)i);
	}
	CHECK_INT(dcp_mounts_get(m, 1, &mt), 0);
	CHECK_STR(mt.fstype, "proc");
	CHECK_INT(dcp_mounts_get(m, 7, &mt), -ENOENT);

	dcp_mounts_free(m);

	/* The real table: "/" is on a mount, the cwd resolves too. */
	CHECK_INT(dcp_mounts_load(NULL, &m), 0);
	if (m) {
		struct stat st;

		CHECK_INT(dcp_mounts_by_path(m, "/", &mt), 0);
		CHECK_STR(mt.target, "/");
		CHECK_INT(dcp_mounts_by_path(m, "relative/name", &mt), 0);
		if (stat("/proc/self", &st) == 0) {
			CHECK_INT(dcp_mounts_by_dev(m, st.st_dev, &mt), 0);
			CHECK_STR(mt.fstype, "proc");
		}
		dcp_mounts_free(m);
	}
	dcp_mounts_free(NULL);
	CHECK_INT(dcp_mounts_load("/nonexistent/mountinfo", &m), -ENOENT);

	CHECK_INT(dcp_fs_cache_class("ext4", &why), DCP_FS_CACHEABLE);
	CHECK(why == NULL);
	CHECK_INT(dcp_fs_cache_class("vfat", &why), DCP_FS_NEVER);
	CHECK(why != NULL);
	CHECK_INT(dcp_fs_cache_class("sysfs", NULL), DCP_FS_NEVER);
	CHECK_INT(dcp_fs_cache_class("proc", NULL), DCP_FS_PARTIAL);
	CHECK(dcp_fs_is_pseudo("proc") && dcp_fs_is_pseudo("sysfs") && dcp_fs_is_pseudo("hugetlbfs"));
	CHECK(!dcp_fs_is_pseudo("ext4") && !dcp_fs_is_pseudo("nfs") && !dcp_fs_is_pseudo(NULL));
	CHECK(!dcp_fs_is_pseudo("cgroup2x") && !dcp_fs_is_pseudo("group") && !dcp_fs_is_pseudo("") &&
	      !dcp_fs_is_pseudo(",proc"));
	CHECK_INT(dcp_fs_cache_class("nfs4", NULL), DCP_FS_REVALIDATE);
	CHECK_INT(dcp_fs_cache_class("fuse.sshfs", NULL), DCP_FS_REVALIDATE);
	CHECK_INT(dcp_fs_cache_class("fusectl", NULL), DCP_FS_CACHEABLE);
	CHECK_INT(dcp_fs_cache_class(NULL, &why), DCP_FS_CACHEABLE);
	CHECK(dcp_fs_flagged("cifs"));
	CHECK(dcp_fs_flagged("tmpfs")); /* no negative dentries */
	CHECK_INT(dcp_fs_cache_class("ramfs", NULL), DCP_FS_NO_NEGATIVE);
	CHECK(!dcp_fs_flagged("ext4"));
	return CHECK_DONE();
}
