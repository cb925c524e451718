// SPDX-License-Identifier: MIT
/*
 * oprobe - an independent RESOLVE_CACHED prober for the tests.
 *
 * It calls openat2(2) itself and does not link libdcprobe, so the suites
 * can hold every command's answer against the kernel's.
 *
 *   oprobe [-L] [--once] PATH...   one "STATE PATH" line per path
 *   oprobe [-L] [--once] -         the paths from stdin, one per line
 *   oprobe --pages ...             "STATE ID RESIDENT PAGES PATH" lines:
 *                                  for a cached regular file its identity
 *                                  (MAJ:MIN:INO), its resident pages and
 *                                  its pages (size rounded up); "-" else
 *
 * STATE is cached, negative, miss or error:ENAME (DESIGN.md): the probe is
 * openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_CACHED); -L drops
 * O_NOFOLLOW.  O_PATH opens nothing for real and RESOLVE_CACHED does no
 * I/O: probing changes nothing it measures.
 *
 * A miss is a miss only once it has missed in every round (unless
 * --once): every path is probed, then the misses again after 2, 4 and
 * 8 ms.  A mount or unmount anywhere on the machine, in any namespace,
 * fails every RCU path walk that overlaps it (the kernel's global
 * mount_lock sequence count), and a mount namespace made or torn down
 * changes it once per mount, for up to milliseconds: a probe asked again
 * at once fails again about one time in three then.  A real miss misses
 * every time: a probe warms nothing, and no other program looks names up
 * in a suite's fixtures (tests/lib/fixture.sh).  The lines come out in the
 * order of the paths, after the last round.
 *
 * With --pages a cached regular file is measured by its own cachestat(2)
 * (mincore(2) over a read-only mapping where the kernel lacks it), on the
 * probe's O_PATH descriptor reopened through /proc/self/fd O_RDONLY |
 * O_NONBLOCK: no second lookup, no read, no state changed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 3, FIRST_PAUSE_MS = 2 };

static int pages_mode;
static char (*figs)[64]; /* --pages: " ID RESIDENT PAGES" of each path */

/* Resident pages of FD (SIZE bytes, PAGES pages), or -1. */
static long long resident(int fd, long long size, long long pages)
{
	struct { unsigned long long off, len; } range = { 0, (unsigned long long)size };
	struct { unsigned long long cache, dirty, writeback, evicted, recent; } cs;
	unsigned char *v;
	long long n = 0;
	void *m;

	if (!size)
		return 0;
	if (syscall(451 /* cachestat */, fd, &range, &cs, 0) == 0)
		return (long long)cs.cache;
	if (errno != ENOSYS)
		return -1;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	v = malloc((size_t)pages);
	if (m == MAP_FAILED || !v || mincore(m, (size_t)size, v) < 0)
		n = -1;
	for (long long i = 0; n >= 0 && i < pages; i++)
		n += v[i] & 1;
	if (m != MAP_FAILED)
		munmap(m, (size_t)size);
	free(v);
	return n;
}

/* " ID RESIDENT PAGES" of the object O_PATH descriptor PFD holds into OUT. */
static void measure(int pfd, char out[64])
{
	long ps = sysconf(_SC_PAGESIZE);
	char num[64];
	struct stat st;
	long long pages, r;
	int fd;

	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(out, 64, " - - -");
		return;
	}
	snprintf(num, sizeof(num), "/proc/self/fd/%d", pfd);
	fd = open(num, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	pages = (st.st_size + ps - 1) / ps;
	r = fd < 0 ? -1 : resident(fd, st.st_size, pages);
	if (fd >= 0)
		close(fd);
	snprintf(out, 64, " %u:%u:%llu %lld %lld", major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino, r, pages);
}

/* Probe PATH (the K-th); with --pages a cached one is measured on the spot. */
static int probe_once(const char *path, int follow, size_t k)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_CACHED,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0)
		return errno;
	if (pages_mode)
		measure((int)fd, figs[k]);
	close((int)fd);
	return 0;
}

static void print(const char *path, int err, const char *fig)
{
	if (pages_mode)
		printf("%s%s %s\n", err == 0 ? "cached" : err == ENOENT ? "negative" :
			   err == EAGAIN ? "miss" : "error", err == 0 ? fig : " - - -", path);
	else if (err == 0)
		printf("cached %s\n", path);
	else if (err == ENOENT)
		printf("negative %s\n", path);
	else if (err == EAGAIN)
		printf("miss %s\n", path);
	else
		printf("error:%s %s\n", strerrorname_np(err) ? strerrorname_np(err) : "?", path);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("oprobe");
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	int follow = 0, once = 0, i = 1, *res;
	char **paths;
	size_t n = 0, cap = 0, k;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "-L") == 0)
			follow = 1;
		else if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else if (strcmp(argv[i], "--pages") == 0)
			pages_mode = 1;
		else
			return fprintf(stderr, "usage: oprobe [-L] [--once] [--pages] PATH...|-\n"), 64;
	}
	if (i + 1 == argc && strcmp(argv[i], "-") == 0) {
		char *line = NULL;
		size_t lcap = 0;
		ssize_t len;

		paths = NULL;
		while ((len = getline(&line, &lcap, stdin)) > 0) {
			if (line[len - 1] == '\n')
				line[--len] = '\0';
			if (!len)
				continue;
			if (n == cap)
				paths = xrealloc(paths, (cap = cap ? 2 * cap : 1024) * sizeof(*paths));
			if (!(paths[n++] = strdup(line)))
				return perror("oprobe"), 2;
		}
		free(line);
		if (ferror(stdin))
			return perror("oprobe: stdin"), 2;
	} else {
		paths = argv + i;
		n = (size_t)(argc - i);
	}
	res = xrealloc(NULL, (n ? n : 1) * sizeof(*res));
	figs = xrealloc(NULL, (n ? n : 1) * sizeof(*figs));
	for (k = 0; k < n; k++)
		res[k] = probe_once(paths[k], follow, k);
	for (int round = 0; !once && round < ROUNDS; round++) {
		struct timespec pause = { 0, (long)(FIRST_PAUSE_MS << round) * 1000000 };
		int left = 0;

		for (k = 0; k < n && !left; k++)
			left = res[k] == EAGAIN;
		if (!left)
			break;
		nanosleep(&pause, NULL);
		for (k = 0; k < n; k++)
			if (res[k] == EAGAIN)
				res[k] = probe_once(paths[k], follow, k);
	}
	for (k = 0; k < n; k++)
		print(paths[k], res[k], figs[k]);
	free(res);
	free(figs);
	if (paths != argv + i) {
		for (k = 0; k < n; k++)
			free(paths[k]);
		free(paths);
	}
	return fflush(stdout) ? 2 : 0;
}
