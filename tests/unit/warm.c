/*
 * Unit tests for lib/warm.c on a scratch tree: every entry reported once
 * with DCP_WARM_REPORT_ALL (big directories go through the stat pool),
 * counts, errors for missing paths and unreadable directories, lists,
 * --check counts on entries that are already cached, bad options.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

#define BIG 300 /* entries of the big directory: several pool batches */

struct seen {
	pthread_mutex_t lock;
	unsigned events, stat_errors, dir_errors, bad_worker, still_miss;
	unsigned nthreads;
	unsigned char *big; /* how often each big/fNNN was reported */
	char last_error[PATH_MAX + 32];
};

static char root[PATH_MAX];

static void report(const struct dcp_warm_event *ev, void *arg)
{
	struct seen *s = arg;
	const char *base = strrchr(ev->path, '/');
	unsigned n;

	pthread_mutex_lock(&s->lock);
	s->events++;
	if (ev->worker >= s->nthreads)
		s->bad_worker++;
	if (ev->err) {
		if (ev->op == DCP_WARM_OP_DIR)
			s->dir_errors++;
		else
			s->stat_errors++;
		snprintf(s->last_error, sizeof(s->last_error), "%s:%d", ev->path, ev->err);
	}
	if (ev->after == -EAGAIN)
		s->still_miss++;
	if (strlen(ev->path) != ev->pathlen)
		s->bad_worker++;
	if (base && sscanf(base, "/f%u", &n) == 1 && strstr(ev->path, "/big/") && n < BIG)
		s->big[n]++;
	pthread_mutex_unlock(&s->lock);
}

static void make_tree(void)
{
	char p[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s/dcp-warm-unit.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(p, sizeof(p), "%s/big", root);
	mkdir(p, 0755);
	for (int i = 0; i < BIG; i++) {
		snprintf(p, sizeof(p), "%s/big/f%03d", root, i);
		close(open(p, O_CREAT | O_WRONLY, 0644));
	}
	snprintf(p, sizeof(p), "%s/a", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/a/b", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/a/b/file", root);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	snprintf(p, sizeof(p), "%s/a/link", root);
	if (symlink("b", p) < 0)
		perror("symlink");
}

static void remove_tree(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
}

static int run(unsigned flags, unsigned threads, const char *const *paths,
	       struct seen *s, struct dcp_warm_stats *st)
{
	struct dcp_warm_opts o = {
		.flags = flags, .threads = threads, .max_depth = -1,
		.report = report, .arg = s,
	};
	struct dcp_warm *w;
	int ret;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->big = calloc(BIG, 1);
	ret = dcp_warm_new(&o, &w);
	if (ret < 0)
		return ret;
	s->nthreads = dcp_warm_threads(w);
	for (; *paths; paths++)
		CHECK_INT(dcp_warm_add(w, *paths), 0);
	/* After wait the run is still there: its snapshot is final. */
	ret = dcp_warm_wait(w);
	struct dcp_warm_stats snap;
	dcp_warm_snapshot(w, &snap);
	CHECK_INT(dcp_warm_add(w, "/"), -ECANCELED);
	CHECK_INT(dcp_warm_finish(w, st), ret);
	CHECK_INT(snap.entries, st->entries);
	CHECK_INT(snap.elapsed_ns, st->elapsed_ns);
	return ret;
}

int main(void)
{
	struct dcp_warm_stats st;
	struct seen s;
	char big[PATH_MAX + 8], a[PATH_MAX + 4], missing[PATH_MAX + 16], file[PATH_MAX + 16];
	bool once = true;

	make_tree();
	snprintf(big, sizeof(big), "%s/big", root);
	snprintf(a, sizeof(a), "%s/a", root);
	snprintf(missing, sizeof(missing), "%s/missing", root);
	snprintf(file, sizeof(file), "%s/a/b/file", root);

	/* A tree: every entry reported exactly once, on a valid worker. */
	{
		const char *paths[] = { root, NULL };

		CHECK_INT(run(DCP_WARM_RECURSIVE | DCP_WARM_REPORT_ALL, 4, paths, &s, &st), 0);
		CHECK_INT(st.entries, 1 + 1 + BIG + 1 + 1 + 1 + 1);
		CHECK_INT(s.events, st.entries);
		CHECK_INT(st.errors, 0);
		CHECK_INT(st.jobs, 4);
		CHECK_INT(s.nthreads, 8); /* 4 walkers and a pool of 4 */
		CHECK_INT(s.bad_worker, 0);
		for (int i = 0; i < BIG; i++)
			once = once && s.big[i] == 1;
		CHECK(once);
		free(s.big);
	}
	/* --check on a tree just warmed: nothing cold, nothing missing. */
	{
		const char *paths[] = { root, NULL };

		CHECK_INT(run(DCP_WARM_RECURSIVE | DCP_WARM_CHECK, 3, paths, &s, &st), 0);
		CHECK_INT(st.entries, BIG + 6);
		CHECK_INT(st.cold, 0);
		CHECK_INT(st.cached_before, st.entries);
		CHECK_INT(st.cached_after, st.entries);
		CHECK_INT(st.still_miss, 0);
		CHECK_INT(s.events, 0); /* nothing to report */
		free(s.big);
	}
	/* Lists: errors are reported and counted, the rest is warmed. */
	{
		const char *paths[] = { missing, file, a, NULL };

		CHECK_INT(run(DCP_WARM_REPORT_ALL, 2, paths, &s, &st), 0);
		CHECK_INT(st.entries, 3);
		CHECK_INT(st.errors, 1);
		CHECK_INT(s.stat_errors, 1);
		CHECK(strstr(s.last_error, "/missing:2") != NULL);
		CHECK_INT(st.jobs, 2);
		free(s.big);
	}
	/* A missing root of a tree: one error, not two (the walker is spared). */
	{
		const char *paths[] = { missing, a, NULL };

		CHECK_INT(run(DCP_WARM_RECURSIVE, 2, paths, &s, &st), 0);
		CHECK_INT(st.errors, 1);
		CHECK_INT(s.events, 1);
		CHECK_INT(st.entries, 1 + 4);
		free(s.big);
	}
	/* -L: the link is followed into b (visited twice: as a/b and a/link). */
	{
		const char *paths[] = { a, NULL };

		CHECK_INT(run(DCP_WARM_RECURSIVE | DCP_WARM_FOLLOW, 2, paths, &s, &st), 0);
		CHECK_INT(st.entries, 1 + 2 + 1 + 1);
		CHECK_INT(st.errors, 0);
		free(s.big);
	}
	/* Unreadable directory, when not root... root reads everything. */
	if (geteuid() != 0) {
		const char *paths[] = { a, NULL };
		char b[PATH_MAX + 16];

		snprintf(b, sizeof(b), "%s/b", a);
		chmod(b, 0);
		CHECK_INT(run(DCP_WARM_RECURSIVE, 2, paths, &s, &st), 0);
		CHECK_INT(s.dir_errors, 1);
		chmod(b, 0755);
		free(s.big);
	}
	/*
	 * Counts per root (DCP_WARM_ROOT_STATS, for the metrics): each tree's
	 * own, the big directory's entries through the stat pool included; a
	 * tree given again by the same name is walked once and reported once
	 * (its first index), and the total counts each entry once, as du -c.
	 */
	{
		struct dcp_warm_opts o = {
			.flags = DCP_WARM_RECURSIVE | DCP_WARM_CHECK | DCP_WARM_ROOT_STATS,
			.threads = 4, .max_depth = -1,
		};
		struct dcp_warm_stats r[4], tot;
		struct dcp_warm *w;
		const char *p[4];

		CHECK_INT(dcp_warm_new(&o, &w), 0);
		CHECK_INT(dcp_warm_add(w, big), 0);
		CHECK_INT(dcp_warm_add(w, a), 0);
		CHECK_INT(dcp_warm_add(w, big), 0);
		CHECK_INT(dcp_warm_add(w, missing), 0);
		CHECK_INT(dcp_warm_wait(w), 0);
		dcp_warm_snapshot(w, &tot);
		CHECK_INT(dcp_warm_nroots(w), 4);
		for (int i = 0; i < 4; i++)
			p[i] = dcp_warm_root(w, i, &r[i]);
		CHECK(dcp_warm_root(w, 4, &r[0]) == NULL);
		CHECK_STR(p[0], big);
		CHECK_STR(p[1], a);
		CHECK(p[2] == NULL);
		CHECK_INT(r[0].entries, 1 + BIG);
		CHECK_INT(r[1].entries, 1 + 1 + 1 + 1);
		CHECK_INT(r[3].entries, 1);
		CHECK_INT(r[3].errors, 1);
		CHECK_INT(r[0].after[DCP_CACHED], 1 + BIG);
		CHECK_INT(tot.entries, r[0].entries + r[1].entries + r[3].entries);
		CHECK_INT(tot.after[DCP_CACHED] + tot.after[DCP_NEGATIVE], tot.cached_after);

		struct dcp_prom *m = dcp_prom_new("warm");
		struct dcp_buf b = DCP_BUF_INIT;
		char want[PATH_MAX + 128];

		CHECK_INT(dcp_warm_prometheus(m, w, &tot, 2), 0);
		CHECK_INT(dcp_prom_write(m, &b), 0);
		dcp_buf_putc(&b, '\0');
		snprintf(want, sizeof(want), "dcprobe_warm_entries{command=\"warm\",root=\"%s\"} %d\n",
			 big, 1 + BIG);
		CHECK(strstr(b.data, want) != NULL);
		CHECK(strstr(strstr(b.data, want) + 1, want) == NULL); /* once */
		CHECK(strstr(b.data, "dcprobe_exit_status{command=\"warm\"} 2\n") != NULL);
		dcp_buf_free(&b);
		dcp_prom_free(m);
		CHECK_INT(dcp_warm_finish(w, NULL), 0);
	}
	/* Bad options. */
	{
		struct dcp_warm_opts o = { .threads = 5000, .max_depth = -1 };
		struct dcp_warm *w;

		CHECK_INT(dcp_warm_new(&o, &w), -EINVAL);
		o.threads = 1;
		o.max_depth = -2;
		CHECK_INT(dcp_warm_new(&o, &w), -EINVAL);
	}
	CHECK(dcp_warm_default_threads() >= 8);

	remove_tree();
	return CHECK_DONE();
}
