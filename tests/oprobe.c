// SPDX-License-Identifier: MIT
/*
 * oprobe - an independent RESOLVE_CACHED prober for the tests.
 *
 * It calls openat2(2) itself and does not link libdcprobe, so the suites
 * can hold every command's answer against the kernel's.
 *
 *   oprobe [-L] [--once] PATH...   one "STATE PATH" line per path
 *   oprobe [-L] [--once] -         the paths from stdin, one per line
 *
 * STATE is cached, negative, miss or error:ENAME (DESIGN.md): the probe is
 * openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_CACHED); -L drops
 * O_NOFOLLOW.  A miss is probed once more (a mount anywhere on the machine
 * fails an RCU walk too) unless --once.  O_PATH opens nothing for real and
 * RESOLVE_CACHED does no I/O: probing changes nothing it measures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int probe_once(const char *path, int follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_CACHED,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static void probe(const char *path, int follow, int once)
{
	int err = probe_once(path, follow);

	if (err == EAGAIN && !once)
		err = probe_once(path, follow);
	if (err == 0)
		printf("cached %s\n", path);
	else if (err == ENOENT)
		printf("negative %s\n", path);
	else if (err == EAGAIN)
		printf("miss %s\n", path);
	else
		printf("error:%s %s\n", strerrorname_np(err) ? strerrorname_np(err) : "?", path);
}

int main(int argc, char **argv)
{
	int follow = 0, once = 0, i = 1;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "-L") == 0)
			follow = 1;
		else if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else
			return fprintf(stderr, "usage: oprobe [-L] [--once] PATH...|-\n"), 64;
	}
	if (i + 1 == argc && strcmp(argv[i], "-") == 0) {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		while ((n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[--n] = '\0';
			if (n)
				probe(line, follow, once);
		}
		free(line);
	} else {
		for (; i < argc; i++)
			probe(argv[i], follow, once);
	}
	return fflush(stdout) ? 2 : 0;
}
