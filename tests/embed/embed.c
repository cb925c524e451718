// SPDX-License-Identifier: MIT
/*
 * embed - a program of someone else's that embeds libdcprobe (linked with
 * the installed shared library), as a server checking its own files before
 * it serves them would:
 *
 *   embed RESULTS A B BADMANIFEST
 *
 * It writes nothing on descriptors 1 and 2: what it found goes to RESULTS
 * (its own fopen), so that the suite (tests/cmd/test_embed.sh) can tell
 * that the library printed nothing on any path, errors included.
 *
 *  - Two rounds; in each, two threads walk trees A and B at once, each
 *    with its own walk and measuring context, probing every entry and
 *    measuring the data of every cached regular file (dcache-probe -r
 *    --pages's work), and write their figures:
 *      round R fixture X cached N negative N miss N error N files N
 *      pages N resident N unknown N failed N repeats N
 *    The suite holds them against the independent prober; round 2 must
 *    equal round 1 (no state carried from one run to the next).  The
 *    walking threads take SIGINT and SIGTERM; the library's must not.
 *  - Meanwhile a third thread sends the process SIGTERM and SIGINT every
 *    millisecond: its own handlers (no SA_RESTART) must stay in place, and
 *    never run on a thread of the library ("handlers ok N M foreign 0").
 *  - Error paths, each followed by "alive after NAME" and the count of
 *    open descriptors back where it was: a missing root, no descriptor to
 *    spare (a context cannot be made: -EMFILE; a walk meets EMFILE and
 *    returns), 1 to 8 to spare (any error EMFILE), then round 1's figures
 *    again; a malformed manifest, one that is missing and one that is a
 *    directory.
 * Exit 0 when every check inside passed, else 1 with the reason in RESULTS.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <dcprobe.h>

enum { THREADS = 2 };

static FILE *results;
static int failures;

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(results, fmt, ap);
	va_end(ap);
	fputc('\n', results);
	fflush(results);
}

static void fail_at(int line, const char *fmt, ...)
{
	va_list ap;

	failures++;
	fprintf(results, "FAIL line %d: ", line);
	va_start(ap, fmt);
	vfprintf(results, fmt, ap);
	va_end(ap);
	fputc('\n', results);
	fflush(results);
}

#define CHECK(cond, ...)                                 \
	do {                                             \
		if (!(cond))                             \
			fail_at(__LINE__, __VA_ARGS__);  \
	} while (0)

/* ---- signals: the program's own handlers, and where they run ---- */

/* Lock-free atomics: safe in a handler, and two handlers on two threads
 * at once do not race. */
static atomic_int got_int, got_term, foreign;
/* Set on every thread this program made itself: a handler running where it
 * is not set runs on a thread of the library. */
static __thread volatile sig_atomic_t ours;

static void on_signal(int sig)
{
	atomic_fetch_add(sig == SIGINT ? &got_int : &got_term, 1);
	if (!ours)
		atomic_fetch_add(&foreign, 1);
}

static atomic_bool walking;

/* Sends SIGTERM and SIGINT to the process every millisecond while the walks run. */
static void *sender(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	sigset_t both;

	(void)arg;
	ours = 1;
	/* Delivered to a thread that does not block them: not this one. */
	sigemptyset(&both);
	sigaddset(&both, SIGINT);
	sigaddset(&both, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &both, NULL);
	while (atomic_load(&walking)) {
		kill(getpid(), SIGTERM);
		kill(getpid(), SIGINT);
		nanosleep(&ms, NULL);
	}
	return NULL;
}

/* ---- one walk with --pages measuring ---- */

struct figures {
	struct dcp_tally t;
	struct dcp_pages_counts pc;
	unsigned long long repeats, errors, emfile;
};

struct walk_job {
	const char *root;
	struct dcp_pages_run *pages; /* this walk's measuring context */
	struct dcp_pages_run *given; /* one made by the caller, or NULL */
	int ret;		/* dcp_walk_finish() */
	struct figures w[THREADS]; /* per worker */
	struct figures sum;
};

static int visit(const struct dcp_entry *e, void *arg)
{
	struct walk_job *j = arg;
	struct figures *f = &j->w[e->worker];
	struct dcp_pages pg;
	int pret;

	if (e->again) {
		f->repeats++;
		return DCP_WALK_DESCEND;
	}
	dcp_tally_add(&f->t, e->probe);
	if (e->probe == -EMFILE)
		f->emfile++;
	if (e->type != DT_REG)
		return DCP_WALK_DESCEND;
	if (e->probe != 0) {
		/* As dcache-probe counts it: a file whose lookup missed has
		 * unknown data, and is never opened. */
		if (e->probe == -EAGAIN)
			dcp_pages_count(&f->pc, -EAGAIN, NULL);
		return DCP_WALK_DESCEND;
	}
	pret = dcp_pages_at(j->pages, e->dirfd, e->name, DCP_PAGES_ISREG, &pg);
	if (pret == -EMFILE)
		f->emfile++;
	dcp_pages_count(&f->pc, pret, &pg);
	return DCP_WALK_DESCEND;
}

static void walk_error(const struct dcp_entry *e, int err, void *arg)
{
	struct walk_job *j = arg;

	j->w[e->worker].errors++;
	if (err == EMFILE)
		j->w[e->worker].emfile++;
}

static void *walk_one(void *arg)
{
	struct walk_job *j = arg;
	struct dcp_walk_opts wo = {
		.flags = DCP_WALK_PROBE,
		.threads = THREADS,
		.max_depth = -1,
		.visit = visit,
		.error = walk_error,
		.arg = j,
	};
	struct dcp_walk *w;
	sigset_t both;

	/* This thread takes the signals the main thread blocks: a library
	 * thread started from here would too, were its mask inherited. */
	ours = 1;
	sigemptyset(&both);
	sigaddset(&both, SIGINT);
	sigaddset(&both, SIGTERM);
	pthread_sigmask(SIG_UNBLOCK, &both, NULL);
	memset(j->w, 0, sizeof(j->w));
	memset(&j->sum, 0, sizeof(j->sum));
	j->pages = j->given;
	j->ret = j->given ? 0 : dcp_pages_run_new(NULL, &j->pages);
	if (j->ret < 0)
		return NULL;
	wo.fds_per_thread = dcp_pages_fds_per_thread(j->pages);
	j->ret = dcp_walk_new(&wo, &w);
	if (j->ret == 0) {
		j->ret = dcp_walk_add(w, j->root);
		int fin = dcp_walk_finish(w);

		if (!j->ret)
			j->ret = fin;
	}
	if (!j->given)
		dcp_pages_run_free(j->pages);
	j->pages = NULL;
	for (int i = 0; i < THREADS; i++) {
		struct figures *f = &j->w[i];

		for (int s = 0; s < DCP_NSTATES; s++)
			j->sum.t.n[s] += f->t.n[s];
		dcp_pages_counts_add(&j->sum.pc, &f->pc);
		j->sum.repeats += f->repeats;
		j->sum.errors += f->errors;
		j->sum.emfile += f->emfile;
	}
	return NULL;
}

static void print_figures(int round, const char *name, const struct figures *f)
{
	say("round %d fixture %s cached %llu negative %llu miss %llu error %llu files %llu "
	    "pages %llu resident %llu unknown %llu failed %llu repeats %llu",
	    round, name, f->t.n[DCP_CACHED], f->t.n[DCP_NEGATIVE],
	    f->t.n[DCP_MISS], f->t.n[DCP_ERROR],
	    (unsigned long long)f->pc.files, (unsigned long long)f->pc.pages,
	    (unsigned long long)f->pc.resident, (unsigned long long)f->pc.unknown,
	    (unsigned long long)f->pc.failed, f->repeats);
}

/* ---- descriptors ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

static void alive_after(const char *what, int fd0)
{
	int n = count_fds();

	say("alive after %s fds %d", what, n);
	CHECK(n == fd0, "%s: %d descriptors open, %d before", what, n, fd0);
}

/* ---- manifests ---- */

struct bad_records {
	size_t n, record[16];
};

static void bad(size_t record, const char *what, void *arg)
{
	struct bad_records *b = arg;

	(void)what;
	if (b->n < 16)
		b->record[b->n] = record;
	b->n++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }, now;
	sigset_t m0, m1;
	struct walk_job jobs[2], first[2];
	const char *names[2] = { "A", "B" };
	pthread_t th[2], snd;
	int fd0;

	if (argc != 5)
		return 64;
	results = fopen(argv[1], "we");
	if (!results)
		return 2;
	ours = 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &m0);
	fd0 = count_fds();

	for (int round = 1; round <= 2; round++) {
		sigset_t both;

		/* The main thread waits with the signals blocked, so that they go
		 * to the threads walking: theirs, or the library's. */
		sigemptyset(&both);
		sigaddset(&both, SIGINT);
		sigaddset(&both, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &both, NULL);
		atomic_store(&walking, true);
		pthread_create(&snd, NULL, sender, NULL);
		for (int i = 0; i < 2; i++) {
			jobs[i] = (struct walk_job){ .root = argv[2 + i] };
			pthread_create(&th[i], NULL, walk_one, &jobs[i]);
		}
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		atomic_store(&walking, false);
		pthread_join(snd, NULL);
		pthread_sigmask(SIG_SETMASK, &m0, NULL);
		for (int i = 0; i < 2; i++) {
			CHECK(jobs[i].ret == 0, "round %d, %s: walk returned %d", round, names[i],
			      jobs[i].ret);
			CHECK(jobs[i].sum.errors == 0, "round %d, %s: %llu walk errors", round,
			      names[i], jobs[i].sum.errors);
			print_figures(round, names[i], &jobs[i].sum);
			if (round == 1)
				first[i] = jobs[i];
		}
	}
	for (int i = 0; i < 2; i++)
		CHECK(!memcmp(&first[i].sum.t, &jobs[i].sum.t, sizeof(first[i].sum.t)) &&
		      !memcmp(&first[i].sum.pc, &jobs[i].sum.pc, sizeof(first[i].sum.pc)),
		      "%s: round 2 differs from round 1", names[i]);

	/* The handlers are the program's, its mask as it was, and they still run. */
	sigaction(SIGINT, NULL, &now);
	CHECK(now.sa_handler == on_signal, "SIGINT's handler replaced");
	sigaction(SIGTERM, NULL, &now);
	CHECK(now.sa_handler == on_signal, "SIGTERM's handler replaced");
	pthread_sigmask(SIG_BLOCK, NULL, &m1);
	CHECK(sigismember(&m1, SIGINT) == sigismember(&m0, SIGINT) &&
	      sigismember(&m1, SIGTERM) == sigismember(&m0, SIGTERM), "signal mask changed");
	{
		int before = atomic_load(&got_int);

		raise(SIGINT);
		CHECK(atomic_load(&got_int) == before + 1, "raise(SIGINT) did not reach the handler");
	}
	say("handlers ok %d %d foreign %d", atomic_load(&got_int), atomic_load(&got_term),
	    atomic_load(&foreign));
	CHECK(atomic_load(&got_int) > 0 && atomic_load(&got_term) > 0,
	      "no signal delivered during the walks");
	CHECK(atomic_load(&foreign) == 0, "%d handler calls ran on a thread of the library",
	      atomic_load(&foreign));
	alive_after("walks", fd0);

	/* A root that is not there: one entry (a miss, or a negative dentry),
	 * the error of opening it, no exit. */
	{
		struct walk_job j = { 0 };
		char path[4096];

		snprintf(path, sizeof(path), "%s/does-not-exist", argv[2]);
		j.root = path;
		walk_one(&j);
		say("missing entries %llu errors %llu files %llu ret %d",
		    j.sum.t.n[DCP_NEGATIVE] + j.sum.t.n[DCP_MISS] + j.sum.t.n[DCP_CACHED] +
			    j.sum.t.n[DCP_ERROR],
		    j.sum.errors, (unsigned long long)j.sum.pc.files, j.ret);
		CHECK(j.ret == 0 && j.sum.t.n[DCP_NEGATIVE] + j.sum.t.n[DCP_MISS] == 1 &&
		      j.sum.t.n[DCP_CACHED] + j.sum.t.n[DCP_ERROR] == 0 && j.sum.errors == 1 &&
		      j.sum.pc.files == 0, "missing root");
		alive_after("missing", fd0);
	}

	/*
	 * Short of descriptors.  Under a soft limit at the lowest free
	 * descriptor (no open can succeed): a measuring context cannot be made
	 * (-EMFILE: it reads the mount table), and a walk with one made before
	 * meets EMFILE at its root and returns.  Then under limits 1 to 8
	 * above it: each walk returns, any error it met is EMFILE.  Every time
	 * the program is alive, its descriptors as they were.  The limit back,
	 * the same walk gives round 1's figures again.
	 */
	{
		struct walk_job j = { .root = argv[2] };
		struct dcp_pages_run *made = NULL;
		struct rlimit rl, low;
		int lowest = dup(0);
		unsigned long long errs;

		close(lowest);
		getrlimit(RLIMIT_NOFILE, &rl);
		low = rl;
		low.rlim_cur = (rlim_t)lowest;
		CHECK(dcp_pages_run_new(NULL, &made) == 0, "a measuring context");
		setrlimit(RLIMIT_NOFILE, &low);
		walk_one(&j);
		say("emfile no-context ret %d", j.ret);
		CHECK(j.ret == -EMFILE, "no descriptor: dcp_pages_run_new() returned %d", j.ret);
		j.given = made;
		walk_one(&j);
		setrlimit(RLIMIT_NOFILE, &rl);
		errs = j.sum.errors + j.sum.t.n[DCP_ERROR] + j.sum.pc.failed;
		say("emfile no-descriptor ret %d errors %llu emfile %llu", j.ret, errs, j.sum.emfile);
		CHECK((j.ret == -EMFILE || errs > 0) && errs == j.sum.emfile,
		      "no descriptor: the walk returned %d, %llu errors, %llu of them EMFILE", j.ret,
		      errs, j.sum.emfile);
		dcp_pages_run_free(made);
		j.given = NULL;
		alive_after("emfile", fd0);
		for (int extra = 1; extra <= 8; extra++) {
			low.rlim_cur = (rlim_t)(lowest + extra);
			setrlimit(RLIMIT_NOFILE, &low);
			walk_one(&j);
			setrlimit(RLIMIT_NOFILE, &rl);
			errs = j.sum.errors + j.sum.t.n[DCP_ERROR] + j.sum.pc.failed;
			say("emfile limit +%d ret %d errors %llu emfile %llu", extra, j.ret, errs,
			    j.sum.emfile);
			CHECK(j.ret == 0 || j.ret == -EMFILE, "limit +%d: returned %d", extra, j.ret);
			CHECK(errs == j.sum.emfile, "limit +%d: %llu errors, %llu of them EMFILE",
			      extra, errs, j.sum.emfile);
			alive_after("emfile", fd0);
		}
		walk_one(&j);
		CHECK(!memcmp(&j.sum.t, &first[0].sum.t, sizeof(j.sum.t)) &&
		      !memcmp(&j.sum.pc, &first[0].sum.pc, sizeof(j.sum.pc)),
		      "after EMFILE, the walk of A differs from round 1");
		print_figures(3, "A", &j.sum);
		alive_after("emfile-again", fd0);
	}

	/* Manifests: bad records named, unreadable ones an error, no exit. */
	{
		struct dcp_manifest m = { 0 };
		struct bad_records b = { 0 };
		int ret = dcp_manifest_read(argv[4], &m, bad, &b);

		say("manifest ret %d good %zu bad %zu first %zu", ret, m.n, b.n, b.n ? b.record[0] : 0);
		CHECK(ret == 0 && m.n == 3 && b.n == 5, "malformed manifest");
		dcp_manifest_free(&m);
		memset(&m, 0, sizeof(m));
		ret = dcp_manifest_read("/nonexistent/manifest", &m, bad, &b);
		CHECK(ret == -ENOENT, "a missing manifest: %d", ret);
		dcp_manifest_free(&m);
		memset(&m, 0, sizeof(m));
		ret = dcp_manifest_read(argv[2], &m, bad, &b);
		CHECK(ret == -EISDIR, "a directory as manifest: %d", ret);
		dcp_manifest_free(&m);
		alive_after("manifest", fd0);
	}

	say(failures ? "failures %d" : "ok", failures);
	fclose(results);
	return failures ? 1 : 0;
}
