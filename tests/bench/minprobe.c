// SPDX-License-Identifier: MIT
/*
 * minprobe.c - the least a prober can do per entry, for bench-wide.sh: one
 * thread lists each directory (readdir) and probes every name in it with
 * RESOLVE_CACHED, 64 at a time through io_uring into direct descriptors,
 * a non-directory as O_WRONLY|O_DIRECTORY (refused right after the lookup,
 * no file opened), as dcache-probe does.  No options, no output per entry,
 * no report: its CPU time divided by the cores is the floor of any walk
 * that probes every entry on this kernel.
 *
 * Usage: minprobe DIR   (prints "cached/entries")
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BATCH 64

static struct io_uring ring;
static struct open_how how_dir = { .flags = O_PATH | O_NOFOLLOW, .resolve = RESOLVE_CACHED };
static struct open_how how_other = { .flags = O_WRONLY | O_DIRECTORY | O_NOFOLLOW,
				     .resolve = RESOLVE_CACHED };
static unsigned long cached, entries;

static void probe(int dfd, char (*names)[256], const unsigned char *isdir, unsigned n)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;

	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_openat2_direct(sqe, dfd, names[i], isdir[i] ? &how_dir : &how_other, i);
	}
	io_uring_submit_and_wait(&ring, n);
	io_uring_for_each_cqe(&ring, head, cqe) {
		if (cqe->res >= 0 || cqe->res == -ENOTDIR || cqe->res == -EISDIR)
			cached++;
		seen++;
	}
	io_uring_cq_advance(&ring, seen);
}

static void walk(int dfd)
{
	static char names[BATCH][256];
	unsigned char isdir[BATCH];
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	unsigned n = 0;

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		entries++;
		snprintf(names[n], sizeof(names[n]), "%s", de->d_name);
		isdir[n++] = de->d_type == DT_DIR;
		if (n == BATCH) {
			probe(dfd, names, isdir, n);
			n = 0;
		}
		if (de->d_type == DT_DIR) {
			/* Probed before it is opened; then depth first (the
			 * names buffer is free again: every name was probed). */
			int sub;

			probe(dfd, names, isdir, n);
			n = 0;
			sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				walk(sub);
		}
	}
	if (n)
		probe(dfd, names, isdir, n);
	closedir(d);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: minprobe DIR\n");
		return 2;
	}
	if (io_uring_queue_init(BATCH, &ring, IORING_SETUP_SINGLE_ISSUER) < 0 ||
	    io_uring_register_files_sparse(&ring, BATCH) < 0) {
		fprintf(stderr, "minprobe: no io_uring\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	walk(fd);
	printf("%lu/%lu\n", cached, entries);
	return 0;
}
