// SPDX-License-Identifier: MIT
/*
 * mmaprestore - the restorer a user would write instead of warm --manifest
 * (bench-manifest.sh's "mmap32" rows): THREADS threads (32) each take the
 * next file of LIST, map it (PROT_READ, MAP_SHARED), advise MADV_RANDOM
 * (no read-around past a page), ask mincore(2) which pages of each listed
 * range are missing, and fault exactly those in by reading one byte of
 * each.  With --willneed, each run of missing pages is first asked for at
 * once with MADV_WILLNEED (so a range is read in large requests, as the
 * kernel's read-ahead would); without it, each page is one fault and one
 * 4 KiB read.
 *
 * Usage: mmaprestore [--willneed] [-j THREADS] LIST
 *   LIST: "PATH OFFSET LENGTH" lines, a file's ranges together
 *   (tests/lib/manifest.py ranges MANIFEST); PATH may hold spaces.
 * Prints "files F pages P faulted" on stderr.  Not a test: a bench tool.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct file {
	char *path;
	size_t first, n; /* its ranges */
};

static struct file *files;
static size_t nfiles;
static uint64_t (*ranges)[2];
static size_t nranges;
static _Atomic size_t next;
static _Atomic uint64_t faulted;
static int willneed;
static long ps;

static void *worker(void *arg)
{
	unsigned char *vec = NULL;
	size_t vcap = 0;
	volatile char sink;

	(void)arg;
	for (;;) {
		size_t i = atomic_fetch_add(&next, 1);
		struct file *f;
		struct stat st;
		char *p;
		int fd;

		if (i >= nfiles)
			break;
		f = &files[i];
		fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (p == MAP_FAILED)
			continue;
		madvise(p, (size_t)st.st_size, MADV_RANDOM);
		for (size_t r = f->first; r < f->first + f->n; r++) {
			uint64_t off = ranges[r][0] / (uint64_t)ps * (uint64_t)ps;
			uint64_t end = ranges[r][0] + ranges[r][1];
			size_t np;

			if (end > (uint64_t)st.st_size)
				end = (uint64_t)st.st_size;
			if (end <= off)
				continue;
			np = (size_t)((end - off + (uint64_t)ps - 1) / (uint64_t)ps);
			if (np > vcap) {
				unsigned char *v = realloc(vec, np);

				if (!v)
					break;
				vec = v;
				vcap = np;
			}
			if (mincore(p + off, end - off, vec) < 0)
				memset(vec, 0, np);
			for (size_t k = 0; k < np;) {
				size_t e = k;

				if (vec[k] & 1) {
					k++;
					continue;
				}
				while (e < np && !(vec[e] & 1))
					e++;
				/* Pages [k, e) are missing: ask for them, then fault each. */
				if (willneed)
					madvise(p + off + k * (uint64_t)ps, (e - k) * (size_t)ps, MADV_WILLNEED);
				for (size_t q = k; q < e; q++)
					sink = p[off + q * (uint64_t)ps];
				atomic_fetch_add(&faulted, e - k);
				k = e;
			}
		}
		munmap(p, (size_t)st.st_size);
	}
	(void)sink;
	free(vec);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 32, a = 1;
	char *line = NULL;
	size_t cap = 0, fcap = 0, rcap = 0;
	ssize_t n;
	pthread_t *tid;
	FILE *in;

	ps = sysconf(_SC_PAGESIZE);
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--willneed"))
			willneed = 1;
		else if (!strcmp(argv[a], "-j") && a + 1 < argc)
			threads = atoi(argv[++a]);
		else
			break;
	}
	if (a != argc - 1 || threads < 1 || threads > 1024) {
		fprintf(stderr, "usage: mmaprestore [--willneed] [-j THREADS] LIST\n");
		return 64;
	}
	in = fopen(argv[a], "re");
	if (!in) {
		perror(argv[a]);
		return 2;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		char *s2, *s1;
		unsigned long long off, len;

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		s2 = strrchr(line, ' ');
		if (!s2)
			continue;
		*s2 = '\0';
		s1 = strrchr(line, ' ');
		if (!s1)
			continue;
		*s1 = '\0';
		off = strtoull(s1 + 1, NULL, 10);
		len = strtoull(s2 + 1, NULL, 10);
		if (!nfiles || strcmp(files[nfiles - 1].path, line)) {
			if (nfiles == fcap) {
				fcap = fcap ? 2 * fcap : 1024;
				files = realloc(files, fcap * sizeof(*files));
			}
			files[nfiles++] = (struct file){ strdup(line), nranges, 0 };
		}
		if (nranges == rcap) {
			rcap = rcap ? 2 * rcap : 4096;
			ranges = realloc(ranges, rcap * sizeof(*ranges));
		}
		ranges[nranges][0] = off;
		ranges[nranges][1] = len;
		nranges++;
		files[nfiles - 1].n++;
	}
	fclose(in);
	free(line);
	tid = calloc((size_t)threads, sizeof(*tid));
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	fprintf(stderr, "files %zu pages %llu faulted\n", nfiles,
		(unsigned long long)atomic_load(&faulted));
	return 0;
}
