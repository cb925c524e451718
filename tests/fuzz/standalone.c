// SPDX-License-Identifier: MIT
/*
 * standalone.c - run a fuzz target over files without libFuzzer, so that
 * every build (gcc, plain or ASan+UBSan) replays the seed corpus as a
 * regression test.  Arguments are files or directories of files.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	for (;;) {
		if (len == cap) {
			uint8_t *p = realloc(buf, cap = cap ? cap * 2 : 4096);
			if (!p) {
				fclose(f);
				free(buf);
				return 1;
			}
			buf = p;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		if (n == 0)
			break;
		len += n;
	}
	fclose(f);
	/* An exact-size copy, so that ASan sees a read past the input. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return 1;
	}
	for (size_t i = 0; i < len; i++)
		exact[i] = buf[i];
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0, n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **ents;
		int m;

		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			ret |= run_file(argv[i]);
			n++;
			continue;
		}
		m = scandir(argv[i], &ents, NULL, alphasort);
		if (m < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int k = 0; k < m; k++) {
			char *p;

			if (ents[k]->d_name[0] != '.' &&
			    asprintf(&p, "%s/%s", argv[i], ents[k]->d_name) >= 0) {
				ret |= run_file(p);
				n++;
				free(p);
			}
			free(ents[k]);
		}
		free(ents);
	}
	printf("%d inputs replayed\n", n);
	return ret || n == 0;
}
