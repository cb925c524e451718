/* Unit tests for lib/uring.c and lib/cmdrt/trace.c: flags, percentiles, rings, opens. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dcp_cmd.h"

static void test_flags(void)
{
	unsigned long long f = 0;
	const char *bad = NULL;
	char buf[256];

	CHECK_INT(dcp_open_flags_parse("rdonly", &f, NULL), 0);
	CHECK_INT(f, O_RDONLY);
	CHECK_INT(dcp_open_flags_parse("rdwr,creat,trunc,cloexec", &f, NULL), 0);
	CHECK_INT(f, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC);
	CHECK_STR(dcp_open_flags_format(f, buf, sizeof(buf)), "rdwr,creat,trunc,cloexec");
	CHECK_INT(dcp_open_flags_parse("rdonly,nonblock,noctty,cloexec", &f, NULL), 0);
	CHECK_STR(dcp_open_flags_format(f, buf, sizeof(buf)), "rdonly,nonblock,noctty,cloexec");
	CHECK_INT(dcp_open_flags_parse("wronly,tmpfile", &f, NULL), 0);
	CHECK_STR(dcp_open_flags_format(f, buf, sizeof(buf)), "wronly,tmpfile");
	CHECK_INT(dcp_open_flags_parse("directory,path,nofollow", &f, NULL), 0);
	CHECK_STR(dcp_open_flags_format(f, buf, sizeof(buf)), "rdonly,nofollow,directory,path");
	CHECK_INT(dcp_open_flags_parse("rdonly,bogus", &f, &bad), -EINVAL);
	CHECK_STR(bad, "bogus");
	CHECK_INT(dcp_open_flags_parse("rdonly,wronly", &f, NULL), -EINVAL);
	CHECK_INT(dcp_open_flags_parse("", &f, NULL), -EINVAL);
	CHECK_INT(dcp_open_flags_parse("rdonly,", &f, NULL), -EINVAL);
	CHECK_INT(dcp_open_flags_parse("RDONLY", &f, NULL), -EINVAL);
	CHECK_INT(dcp_open_flags_parse("rd", &f, NULL), -EINVAL);
	/* A short buffer is truncated, never overrun. */
	dcp_open_flags_format(O_RDWR | O_CREAT, buf, 6);
	CHECK(strlen(buf) < 6);
}

static void test_reasons(void)
{
	CHECK(dcp_uring_errno_unsupported(-ENOSYS));
	CHECK(dcp_uring_errno_unsupported(-EPERM));
	CHECK(dcp_uring_errno_unsupported(EOPNOTSUPP));
	CHECK(!dcp_uring_errno_unsupported(-ENOENT));
	CHECK(strstr(dcp_uring_unsupported_reason(-ENOSYS), "seccomp") != NULL);
	CHECK(strstr(dcp_uring_unsupported_reason(-EOPNOTSUPP), "OPENAT") != NULL);
}

int main(void)
{
	struct dcp_uring_how how = { .dirfd = AT_FDCWD, .flags = O_RDONLY | O_CLOEXEC };
	const char *const paths[] = { "/", ".", "/dcprobe-unit-absent", "/" };
	unsigned char verdicts[4];
	struct dcp_uring_result res;
	struct dcp_uring_batch b;
	struct dcp_uring *r;
	int ret;

	test_flags();
	test_reasons();

	ret = dcp_uring_support(true);
	if (ret < 0) {
		fprintf(stderr, "skip: %s\n", dcp_uring_unsupported_reason(ret));
		return check_failures ? 1 : 77;
	}
	CHECK_INT(dcp_uring_new(0, 0, &r), -EINVAL);
	CHECK_INT(dcp_uring_new(8, 0, &r), 0);
	CHECK(dcp_uring_ring_fd(r) >= 0);

	/* "/" is always in the dcache: inline, with a descriptor. */
	CHECK_INT(dcp_uring_open(r, "/", &how, 7, &res), 0);
	CHECK(res.res >= 0);
	CHECK_INT(res.verdict, DCP_URING_INLINE);
	CHECK(res.latency_ns > 0);
	if (res.res >= 0)
		close(res.res);
	/* Forced async is punted whatever the cache holds. */
	how.async = true;
	CHECK(dcp_uring_forced_async(&how));
	CHECK_INT(dcp_uring_open(r, "/", &how, 8, &res), 0);
	CHECK_INT(res.verdict, DCP_URING_PUNTED);
	if (res.res >= 0)
		close(res.res);
	how.async = false;
	/* RESOLVE_CACHED from the application: a negative dentry is ENOENT inline. */
	how.cached = true;
	CHECK(access("/dcprobe-unit-absent", F_OK) < 0);
	CHECK_INT(dcp_uring_open(r, "/dcprobe-unit-absent", &how, 9, &res), 0);
	CHECK_INT(res.res, -ENOENT);
	CHECK_INT(res.verdict, DCP_URING_INLINE);
	how.cached = false;
	how.flags |= O_CREAT;
	CHECK(dcp_uring_forced_async(&how));
	how.flags &= ~(unsigned long long)O_CREAT;
	CHECK(!dcp_uring_forced_async(&how));

	/* A batch: every completion counted once, the failure remembered. */
	memset(verdicts, 0xff, sizeof(verdicts));
	CHECK_INT(dcp_uring_open_all(r, paths, 4, 9, &how, verdicts, &b), -EINVAL);
	CHECK_INT(dcp_uring_open_all(r, paths, 4, 2, &how, verdicts, &b), 0);
	CHECK_INT(b.opens, 4);
	CHECK_INT(b.inlined + b.punted, 4);
	CHECK_INT(b.failed, 1);
	CHECK_INT(b.first_error, -ENOENT);
	CHECK_INT(b.first_error_index, 2);
	CHECK_INT(verdicts[0], DCP_URING_INLINE);
	CHECK_INT(verdicts[3], DCP_URING_INLINE);
	dcp_uring_free(r);
	dcp_uring_free(NULL);

	/* A plain ring works too, but cannot promise an exact verdict. */
	CHECK_INT(dcp_uring_new(4, DCP_URING_NO_DEFER, &r), 0);
	CHECK(!dcp_uring_exact(r));
	CHECK_INT(dcp_uring_open(r, "/", &how, 1, &res), 0);
	CHECK(res.res >= 0);
	if (res.res >= 0)
		close(res.res);
	dcp_uring_free(r);

	/*
	 * The tracer, where it can run (root, tracefs).  The forced-async open
	 * above made this process's io-wq worker before the trace began: where
	 * an async request completes in the worker (5.10, 6.1), the tracer must
	 * follow the threads that exist already, not only the ones forked
	 * after it starts; on 5.10 the punt event names no user_data, only the
	 * request's address.
	 */
	struct dcp_trace *t;

	ret = dcp_trace_start(getpid(), 0, &t);
	if (ret == 0) {
		const struct dcp_trace_req *q;

		CHECK_INT(dcp_uring_new(8, 0, &r), 0);
		how.async = true;
		CHECK_INT(dcp_uring_open(r, "/", &how, 0xdc01, &res), 0);
		if (res.res >= 0)
			close(res.res);
		how.async = false;
		CHECK_INT(dcp_uring_open(r, "/", &how, 0xdc02, &res), 0);
		if (res.res >= 0)
			close(res.res);
		dcp_uring_free(r);
		CHECK(dcp_trace_collect(t) >= 4);
		q = dcp_trace_find(t, 0xdc01);
		CHECK(q && q->submitted == 1 && q->punted == 1 && q->completed == 1);
		q = dcp_trace_find(t, 0xdc02);
		CHECK(q && q->submitted == 1 && q->punted == 0 && q->completed == 1);
		CHECK(dcp_trace_find(t, 0xdc03) == NULL);
		/* Collecting cleared the buffer. */
		CHECK_INT(dcp_trace_collect(t), 0);
		CHECK(access(dcp_trace_dir(t), F_OK) == 0);
		char dir[300];
		snprintf(dir, sizeof(dir), "%s", dcp_trace_dir(t));
		CHECK_INT(dcp_trace_stop(t), 0);
		CHECK(access(dir, F_OK) < 0);
	} else {
		fprintf(stderr, "note: tracer not tested: %s\n", strerror(-ret));
	}
	return CHECK_DONE();
}
