// SPDX-License-Identifier: MIT
/*
 * mkwide - make the fixtures of bench-wide.sh quickly: empty files made
 * with mknodat(2) relative to a directory descriptor (no path lookups,
 * nothing opened), several threads at once on different directories.
 *
 *   mkwide flat DIR N          DIR/f0000000 .. N empty files in one directory
 *   mkwide tree DIR D F [J]    DIR/d00000/f000 .. D directories of F files,
 *                              on J threads (default 2)
 *
 * Compiled by the bench itself (cc -O2 -pthread); not installed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int files(int dirfd, unsigned long first, unsigned long n)
{
	char name[32];

	for (unsigned long i = first; i < first + n; i++) {
		snprintf(name, sizeof(name), "f%07lu", i);
		if (mknodat(dirfd, name, S_IFREG | 0644, 0) < 0 && errno != EEXIST) {
			perror(name);
			return -1;
		}
	}
	return 0;
}

struct job {
	int top;
	unsigned long from, to, per;
	int ret;
};

static void *tree_part(void *arg)
{
	struct job *j = arg;
	char name[32];

	for (unsigned long d = j->from; d < j->to && !j->ret; d++) {
		int fd;

		snprintf(name, sizeof(name), "d%05lu", d);
		if (mkdirat(j->top, name, 0755) < 0 && errno != EEXIST) {
			perror(name);
			j->ret = -1;
			break;
		}
		fd = openat(j->top, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			perror(name);
			j->ret = -1;
			break;
		}
		j->ret = files(fd, 0, j->per);
		close(fd);
	}
	return NULL;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "mkwide: not a number: %s\n", s);
		exit(64);
	}
	return v;
}

int main(int argc, char **argv)
{
	int top;

	if (argc < 4 || (strcmp(argv[1], "flat") && strcmp(argv[1], "tree")) ||
	    (!strcmp(argv[1], "tree") && argc < 5)) {
		fprintf(stderr, "usage: mkwide flat DIR N | mkwide tree DIR D F [J]\n");
		return 64;
	}
	if (mkdir(argv[2], 0755) < 0 && errno != EEXIST) {
		perror(argv[2]);
		return 1;
	}
	top = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "flat"))
		return files(top, 0, num(argv[3])) ? 1 : 0;

	unsigned long dirs = num(argv[3]), per = num(argv[4]);
	unsigned long nj = argc > 5 ? num(argv[5]) : 2;
	struct job *jobs;
	pthread_t *t;
	int ret = 0;

	if (nj < 1 || nj > 64)
		nj = 2;
	jobs = calloc(nj, sizeof(*jobs));
	t = calloc(nj, sizeof(*t));
	if (!jobs || !t)
		return 1;
	for (unsigned long i = 0; i < nj; i++) {
		jobs[i] = (struct job){ top, dirs * i / nj, dirs * (i + 1) / nj, per, 0 };
		if (pthread_create(&t[i], NULL, tree_part, &jobs[i]))
			return 1;
	}
	for (unsigned long i = 0; i < nj; i++) {
		pthread_join(t[i], NULL);
		ret |= jobs[i].ret;
	}
	free(jobs);
	free(t);
	return ret ? 1 : 0;
}
