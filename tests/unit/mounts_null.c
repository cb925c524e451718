// SPDX-License-Identifier: MIT
/*
 * A NULL mount table means one thing (dcp_mounts(3)): the call reads
 * /proc/self/mountinfo itself.  Each entry point that takes a table, given
 * NULL, answers as it does given a loaded one, on a FUSE mount whose
 * daemon never answers (made here, in a mount namespace of our own, on a
 * /dev/fuse descriptor nobody reads): the recorder refuses a root on it,
 * the filter and warm do not go into it, a restore runs, the cgroup
 * lookups agree.  (Before: the recorder given NULL looked the FUSE root up
 * and stat'ed it, dcp_filter_skip_mount() entered every mount, warm without
 * a filter entered it, a restore answered -EINVAL, procs found no cgroup2
 * mount.)  Needs root and /dev/fuse, else skips (77).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

static char dir[64], fz[96];

/* A FUSE mount at FZ that no daemon serves: a lookup below it would wait. */
static int fuse_mount(void)
{
	char opts[128];
	int fd;

	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (!mkdtemp(strcpy(dir, "/tmp/dcp-mounts-null.XXXXXX")))
		return -1;
	snprintf(fz, sizeof(fz), "%s/fz", dir);
	if (mkdir(fz, 0700) < 0 ||
	    mount("dcpnull", fz, "fuse.dcpnull", MS_NOSUID | MS_NODEV, opts) < 0)
		return -1;
	return 0; /* fd stays open: the mount lives, unanswered */
}

static atomic_int warm_remote; /* warm: directories not entered (EREMOTE) */

static void warm_report(const struct dcp_warm_event *ev, void *arg)
{
	(void)arg;
	if (ev->err == EREMOTE && strcmp(ev->path, fz) == 0)
		atomic_fetch_add(&warm_remote, 1);
}

static int warm_fuse(const struct dcp_mounts *mounts)
{
	const char *const roots[] = { dir };
	struct dcp_warm_opts o = { .flags = DCP_WARM_RECURSIVE, .threads = 2, .max_depth = -1,
				   .mounts = mounts, .report = warm_report };
	struct dcp_warm_stats st;
	struct dcp_warm *w;

	atomic_store(&warm_remote, 0);
	if (dcp_warm_new(&o, &w) < 0)
		return -1;
	CHECK_INT(dcp_warm_add(w, roots[0]), 0);
	dcp_warm_finish(w, &st);
	return atomic_load(&warm_remote);
}

int main(void)
{
	const char *const roots[] = { NULL };
	struct dcp_mounts *tab = NULL;
	struct dcp_mount mt;
	struct dcp_filter none = { 0 };
	struct dcp_record *rec = NULL;
	struct dcp_manifest m = { 0 };
	struct dcp_manifest_restore_stats rst;
	char *a, *b;

	if (fuse_mount() < 0) {
		fprintf(stderr, "skip: needs root, a mount namespace and /dev/fuse\n");
		return 77;
	}
	alarm(60); /* a lookup on the FUSE mount would wait for ever */
	CHECK_INT(dcp_mounts_load(NULL, &tab), 0);
	if (!tab || dcp_mounts_by_path(tab, fz, &mt) < 0 || strncmp(mt.fstype, "fuse", 4) != 0) {
		fprintf(stderr, "skip: the FUSE mount is not in the table\n");
		return 77;
	}

	/* dcp_filter_skip_mount(): the FUSE mount is unsafe either way. */
	CHECK_INT(dcp_filter_skip_mount(&none, tab, (uint64_t)mt.id), DCP_WALK_MOUNT_UNSAFE);
	CHECK_INT(dcp_filter_skip_mount(&none, NULL, (uint64_t)mt.id), DCP_WALK_MOUNT_UNSAFE);

	/* dcp_record_new(): a FUSE root is refused at once, either way. */
	{
		const char *const r[] = { fz };
		struct dcp_record_opts o = { .roots = r, .nroots = 1, .mounts = tab };

		CHECK_INT(dcp_record_new(&o, &rec), -EREMOTE);
		o.mounts = NULL;
		CHECK_INT(dcp_record_new(&o, &rec), -EREMOTE);
	}

	/* dcp_warm (-r, no filter): the FUSE directory is not gone into. */
	CHECK_INT(warm_fuse(tab), 1);
	CHECK_INT(warm_fuse(NULL), 1);

	/* dcp_manifest_restore(): an empty manifest restores, either way. */
	{
		struct dcp_manifest_restore_opts o = { .threads = 1, .mounts = tab };

		CHECK_INT(dcp_manifest_restore(&m, &o, &rst), 0);
		o.mounts = NULL;
		CHECK_INT(dcp_manifest_restore(&m, &o, &rst), 0);
	}

	/* dcp_procs_cgroup_path() and dcp_procs_new(): the same cgroup2 mount. */
	a = dcp_procs_cgroup_path(tab, "/sys/fs/cgroup/system.slice/x");
	b = dcp_procs_cgroup_path(NULL, "/sys/fs/cgroup/system.slice/x");
	CHECK(a && b && strcmp(a, b) == 0);
	free(a);
	free(b);
	{
		struct dcp_procs_opts o = { .by = DCP_PROCS_CGROUP, .cgroup = "/",
					    .mounts = tab, .flags = DCP_PROCS_NO_LINEAGE };
		struct dcp_procs *p = NULL;
		int with = dcp_procs_new(&o, &p), without;

		dcp_procs_free(p);
		p = NULL;
		o.mounts = NULL;
		without = dcp_procs_new(&o, &p);
		dcp_procs_free(p);
		CHECK_INT(without, with);
	}

	/* dcp_pages_run_new(): NULL reads one (as before). */
	{
		struct dcp_pages_run *r = NULL;

		CHECK_INT(dcp_pages_run_new(NULL, &r), 0);
		dcp_pages_run_free(r);
	}
	(void)roots;
	dcp_mounts_free(tab);
	umount2(fz, MNT_DETACH);
	rmdir(fz);
	rmdir(dir);
	return CHECK_DONE();
}
