/* Unit tests for lib/probe.c: states, feature detection, probes of / and /proc. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

int main(void)
{
	char self[4096];
	ssize_t len;
	int ret, fd;

	CHECK_STR(dcp_state_name(DCP_CACHED), "cached");
	CHECK_STR(dcp_state_name(DCP_NEGATIVE), "negative");
	CHECK_STR(dcp_state_name(DCP_MISS), "miss");
	CHECK_STR(dcp_state_name(DCP_ERROR), "error");
	CHECK(dcp_state_name(DCP_NSTATES) == NULL);
	CHECK_INT(dcp_state_parse("miss"), DCP_MISS);
	CHECK_INT(dcp_state_parse("Miss"), -EINVAL);
	CHECK_INT(dcp_state_of_errno(0), DCP_CACHED);
	CHECK_INT(dcp_state_of_errno(-ENOENT), DCP_NEGATIVE);
	CHECK_INT(dcp_state_of_errno(EAGAIN), DCP_MISS);
	CHECK_INT(dcp_state_of_errno(-ENOTDIR), DCP_ERROR);
	CHECK(dcp_errno_unsupported(-ENOSYS));
	CHECK(dcp_errno_unsupported(EINVAL));
	CHECK(!dcp_errno_unsupported(-EAGAIN));
	CHECK(dcp_unsupported_reason(-EINVAL) != NULL);

	ret = dcp_probe_support();
	if (ret < 0) {
		fprintf(stderr, "skip: %s\n", dcp_unsupported_reason(ret));
		return 77;
	}
	/* "/" and the directory we run in are always cached. */
	CHECK_INT(dcp_probe_at(AT_FDCWD, "/", 0), 0);
	CHECK_INT(dcp_probe_at(AT_FDCWD, ".", 0), 0);
	/* A name looked up once and found absent is a cached negative dentry. */
	CHECK(access("/dcprobe-unit-test-absent", F_OK) != 0);
	CHECK_INT(dcp_probe_at(AT_FDCWD, "/dcprobe-unit-test-absent", 0), -ENOENT);
	/* The d_type hint: ENOTDIR of a cached file means cached; a wrong
	 * hint on a directory still answers cached.  The file is this test's
	 * own program, which exec just looked up (not a file of /proc: on
	 * 5.10 no name under /proc is ever found by RESOLVE_CACHED, EAGAIN). */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(len > 0 && self[0] == '/');
	self[len > 0 ? len : 0] = '\0';
	CHECK(access(self, R_OK) == 0);
	CHECK_INT(dcp_probe_at(AT_FDCWD, self, DCP_NOTDIR), 0);
	CHECK_INT(dcp_probe_at(AT_FDCWD, "/", DCP_NOTDIR), 0);
	CHECK_INT(dcp_probe_at(AT_FDCWD, "/dcprobe-unit-test-absent", DCP_NOTDIR), -ENOENT);
	/* A file used as a directory is an error, not a miss. */
	CHECK(access("/proc/self/status", F_OK) == 0);
	ret = dcp_probe_at(AT_FDCWD, "/proc/self/status/x", 0);
	CHECK(ret == -ENOTDIR || ret == -EAGAIN);
	/* Magic links never resolve in cached mode. */
	CHECK_INT(dcp_probe_at(AT_FDCWD, "/proc/self/fd/0", DCP_FOLLOW), -EAGAIN);
	/* O_CREAT can never be satisfied with RESOLVE_CACHED. */
	CHECK_INT(dcp_openat2(AT_FDCWD, "/tmp", O_RDONLY | O_CREAT, 0600, 0x20), -EAGAIN);
	/* A real cached open hands back a descriptor. */
	fd = dcp_open_cached(AT_FDCWD, "/", 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	fd = dcp_open_blocking(AT_FDCWD, "/", 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	return CHECK_DONE();
}
