/*
 * Unit tests for lib/cmdrt/probe_run.c, the engine of dcache-probe, without the
 * command: each run in a child process (one run per process), its standard
 * output in a file.  What is checked does not depend on what is cached
 * (the machine's cache is not this test's to control): the rows, their
 * order, their totals, the share of nothing, the verdict on nothing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dcp_cmd.h"

static char root[PATH_MAX], outfile[PATH_MAX], text[65536];

/* Run the engine on PATH in a child; its output in text[]; its status. */
static int run(const struct dcp_opts *tmpl, const struct dcp_probe_run_config *cfg,
	       const char *path)
{
	int status, fd;
	ssize_t n;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct dcp_opts o = *tmpl;
		char *paths[] = { (char *)path, NULL };

		fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(99);
		close(fd);
		o.paths = path ? paths : NULL;
		o.npaths = path ? 1 : 0;
		_exit(dcp_probe_run(&o, cfg));
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	fd = open(outfile, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	text[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	return WEXITSTATUS(status);
}

/* The rows' last column (the path) and their totals, with ROOT as "R". */
static const char *rows(void)
{
	static char buf[65536];
	char *line, *save = NULL, *p = buf;
	size_t rl = strlen(root);

	buf[0] = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *share = line, *count = strchr(line, '\t'), *path, *slash;

		if (!count)
			continue;
		*count++ = 0;
		path = strchr(count, '\t');
		if (!path)
			continue;
		*path++ = 0;
		slash = strchr(count, '/');
		if (strncmp(path, root, rl) == 0)
			path += rl - 1, *path = 'R';
		p += sprintf(p, "%s %s %s;", strchr(share, '-') ? "-" : "%",
			     slash ? slash + 1 : count, path);
	}
	return buf;
}

int main(void)
{
	static const char *const dirs[] = { "a", "b", "e", "a-b" };
	static const char *const files[] = { "a/x", "a/y", "b/z", "a-b/w" };
	struct dcp_opts o = { .command = "dcache-probe", .max_depth = -1, .recursive = true };
	struct dcp_probe_run_config cfg = { .per_dir = INT_MAX, .min_cached = -1,
					    .min_resident = -1 };
	char p[PATH_MAX];

	if (dcp_probe_support() < 0)
		return 77; /* no openat2 RESOLVE_CACHED here */
	strcpy(root, "/tmp/dcp-probe-run.XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	snprintf(outfile, sizeof(outfile), "%s.out", root);
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		CHECK(mkdir(p, 0755) == 0);
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		CHECK(close(open(p, O_WRONLY | O_CREAT, 0644)) == 0);
	}

	/* --per-dir: du's order (a before a-b: '/' sorts first), totals below
	 * each directory, and no share over the empty one. */
	CHECK_INT(run(&o, &cfg, root) >= 0, 1);
	CHECK_STR(rows(), "% 2 R/a;% 1 R/a-b;% 1 R/b;- 0 R/e;% 8 R;");
	/* The same from 8 threads, again and again. */
	o.jobs = 8;
	for (int i = 0; i < 5; i++) {
		CHECK_INT(run(&o, &cfg, root) >= 0, 1);
		CHECK_STR(rows(), "% 2 R/a;% 1 R/a-b;% 1 R/b;- 0 R/e;% 8 R;");
	}

	/* -s: one line for the root, itself included. */
	cfg.per_dir = -1;
	o.summary = true;
	CHECK_INT(run(&o, &cfg, root) >= 0, 1);
	CHECK_STR(rows(), "% 9 R;");
	o.summary = false;

	/* --sort: every entry, directories before what they hold. */
	o.quiet = false;
	cfg.sort = true;
	CHECK_INT(run(&o, &cfg, root) >= 0, 1);
	{
		char want[4096], *w = want;
		static const char *const order[] = { "", "/a", "/a/x", "/a/y", "/a-b", "/a-b/w",
						     "/b", "/b/z", "/e" };
		char *line, *save = NULL, got[4096], *g = got;

		for (size_t i = 0; i < 9; i++)
			w += sprintf(w, "%s%s;", root, order[i]);
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			g += sprintf(g, "%s;", strchr(line, ' ') + 1);
		CHECK_STR(got, want);
	}
	cfg.sort = false;

	/* A verdict on nothing fails; without one, nothing probed is no error. */
	o.recursive = false;
	o.quiet = true;
	cfg.min_cached = 0;
	CHECK_INT(run(&o, &cfg, NULL), DCP_EXIT_COLD);
	cfg.min_cached = -1;
	CHECK_INT(run(&o, &cfg, NULL), DCP_EXIT_OK);

	for (size_t i = 4; i-- > 0;) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		unlink(p);
	}
	for (size_t i = 4; i-- > 0;) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		rmdir(p);
	}
	rmdir(root);
	unlink(outfile);
	return CHECK_DONE();
}
