/*
 * Unit tests for lib/walk.c on a scratch tree: every entry visited once
 * with the right path, depth and type; pruning, max depth, excludes,
 * symlinks and cycles, post-order dir_done sums, a tree deeper than
 * PATH_MAX, and a walk under a tiny descriptor limit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

struct tally {
	pthread_mutex_t lock;
	unsigned entries, dirs_done, errors, pruned_dirs, not_cached;
	unsigned max_depth;
	size_t max_pathlen;
	int last_error;
	unsigned long long sum_from_done; /* entries counted via dir_done at depth 0 */
	bool prune_b;
	bool bad_path;
	char seen_error_path[256];
};

struct dirdata {
	unsigned long long entries; /* entries in this subtree */
};

static char root[PATH_MAX];

static int visit(const struct dcp_entry *e, void *arg)
{
	struct tally *t = arg;
	struct stat st;

	pthread_mutex_lock(&t->lock);
	t->entries++;
	if ((unsigned)e->depth > t->max_depth)
		t->max_depth = (unsigned)e->depth;
	if (e->pathlen > t->max_pathlen)
		t->max_pathlen = e->pathlen;
	if (strlen(e->path) != e->pathlen)
		t->bad_path = true;
	pthread_mutex_unlock(&t->lock);
	/* The name must resolve relative to dirfd to the same object as path. */
	if (e->depth > 0 && e->pathlen < PATH_MAX) {
		struct stat a, b;

		if (fstatat(e->dirfd, e->name, &a, AT_SYMLINK_NOFOLLOW) < 0 ||
		    lstat(e->path, &b) < 0 || a.st_ino != b.st_ino)
			t->bad_path = true;
	}
	if (e->dir)
		((struct dirdata *)e->dir->data)->entries++;
	/* Everything here was just created: all of it is in the dcache. */
	if (e->probe != 0)
		__atomic_add_fetch(&t->not_cached, 1, __ATOMIC_RELAXED);
	(void)st;
	if (t->prune_b && strcmp(e->name, "b") == 0) {
		__atomic_add_fetch(&t->pruned_dirs, 1, __ATOMIC_RELAXED);
		return DCP_WALK_PRUNE;
	}
	return DCP_WALK_DESCEND;
}

static void on_error(const struct dcp_entry *e, int err, void *arg)
{
	struct tally *t = arg;

	pthread_mutex_lock(&t->lock);
	t->errors++;
	t->last_error = err;
	snprintf(t->seen_error_path, sizeof(t->seen_error_path), "%s", e->path);
	pthread_mutex_unlock(&t->lock);
}

static void dir_done(const struct dcp_dir *d, const char *path, size_t len, void *arg)
{
	struct tally *t = arg;
	struct dirdata *dd = d->data;

	(void)path;
	(void)len;
	t->dirs_done++; /* serialised by the walker */
	if (d->parent)
		((struct dirdata *)d->parent->data)->entries += dd->entries;
	else
		t->sum_from_done += dd->entries;
}

static struct tally run(const char *path, unsigned flags, int max_depth,
			unsigned threads, const char *const *excludes, bool prune_b)
{
	struct tally t = { .lock = PTHREAD_MUTEX_INITIALIZER, .prune_b = prune_b };
	struct dcp_walk_opts o = {
		.flags = flags,
		.threads = threads,
		.max_depth = max_depth,
		.excludes = excludes,
		.dir_data_size = sizeof(struct dirdata),
		.visit = visit,
		.error = on_error,
		.dir_done = dir_done,
		.arg = &t,
	};
	const char *roots[] = { path };
	int ret = dcp_walk(roots, 1, &o);

	CHECK_INT(ret, 0);
	return t;
}

/* Several roots: visits, repeats and aliases. */
struct multi {
	pthread_mutex_t lock;
	unsigned visits, again, dirs_again, dirs_done, not_cached;
	size_t alias_root, alias_of;
	unsigned aliases;
};

static int multi_visit(const struct dcp_entry *e, void *arg)
{
	struct multi *m = arg;

	pthread_mutex_lock(&m->lock);
	m->visits++;
	m->again += e->again;
	m->not_cached += e->probe != 0;
	pthread_mutex_unlock(&m->lock);
	return DCP_WALK_DESCEND;
}

static void multi_done(const struct dcp_dir *d, const char *path, size_t len, void *arg)
{
	struct multi *m = arg;

	(void)path, (void)len;
	m->dirs_done++; /* serialised */
	m->dirs_again += d->again;
}

static void multi_alias(size_t r, size_t of, void *arg)
{
	struct multi *m = arg;

	m->aliases++;
	m->alias_root = r;
	m->alias_of = of;
}

static struct multi run_multi(const char *const *roots, size_t n, unsigned threads)
{
	struct multi m = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct dcp_walk_opts o = {
		.flags = DCP_WALK_PROBE, .threads = threads, .max_depth = -1,
		.visit = multi_visit, .dir_done = multi_done, .alias = multi_alias, .arg = &m,
	};

	CHECK_INT(dcp_walk(roots, n, &o), 0);
	return m;
}

/*
 * The signal mask a visit runs under: the walker's threads block every
 * signal, whatever the caller's mask, so a program's handlers never run on
 * them (and never interrupt their system calls).
 */
static pthread_t caller;
static atomic_uint on_workers, sigint_open, sigterm_open, sigpipe_blocked;

static int mask_visit(const struct dcp_entry *e, void *arg)
{
	sigset_t m;

	(void)e, (void)arg;
	if (pthread_equal(pthread_self(), caller))
		return DCP_WALK_DESCEND;
	atomic_fetch_add(&on_workers, 1);
	pthread_sigmask(SIG_BLOCK, NULL, &m);
	if (!sigismember(&m, SIGINT))
		atomic_fetch_add(&sigint_open, 1);
	if (!sigismember(&m, SIGTERM))
		atomic_fetch_add(&sigterm_open, 1);
	/* Sent to the thread that wrote to a closed pipe: as on any thread. */
	if (sigismember(&m, SIGPIPE))
		atomic_fetch_add(&sigpipe_blocked, 1);
	return DCP_WALK_DESCEND;
}

/* dcp_walk_lookup's judge: /proc's mount is one where a lookup may wait. */
static uint64_t proc_mnt;

static int not_proc(uint64_t mnt_id, void *arg)
{
	(void)arg;
	return mnt_id == proc_mnt ? DCP_WALK_MOUNT_UNSAFE : DCP_WALK_MOUNT_ENTER;
}

static void mk(const char *rel, int kind)
{
	char p[PATH_MAX * 2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (kind == 'd') {
		CHECK(mkdir(p, 0755) == 0);
	} else {
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0);
		close(fd);
	}
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	CHECK(symlink(target, p) == 0);
}

int main(void)
{
	struct tally t;
	char sub[PATH_MAX * 2];

	snprintf(root, sizeof(root), "%s/dcprobe-walk-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 77;
	/* root/{a/{b/{f1,f2},c/f3},d/{b/f4},f5,link->a,loop->.} */
	mk("a", 'd');
	mk("a/b", 'd');
	mk("a/b/f1", 'f');
	mk("a/b/f2", 'f');
	mk("a/c", 'd');
	mk("a/c/f3", 'f');
	mk("d", 'd');
	mk("d/b", 'd');
	mk("d/b/f4", 'f');
	mk("f5", 'f');
	ln("a", "link");

	for (unsigned threads = 1; threads <= 4; threads *= 2) {
		/* 1 root + a b f1 f2 c f3 d b f4 f5 link = 12 entries */
		t = run(root, 0, -1, threads, NULL, false);
		CHECK_INT(t.entries, 12);
		CHECK_INT(t.errors, 0);
		CHECK_INT(t.dirs_done, 6); /* root a b c d d/b */
		CHECK_INT(t.sum_from_done, 11);
		CHECK_INT(t.max_depth, 3);
		CHECK(!t.bad_path);
	}
	/*
	 * Several roots (a warm tree): the same root again is an alias, not
	 * walked; a nested root's entries are visited from both roots, once
	 * as repeats (again), so that 12 entries count once; the directories
	 * listed twice (a, a/b, a/c) are repeats once each.
	 */
	for (unsigned threads = 1; threads <= 4; threads *= 2) {
		char a[PATH_MAX + 8];
		struct multi m;

		snprintf(a, sizeof(a), "%s/a", root);
		const char *roots[] = { root, a, root };
		m = run_multi(roots, 3, threads);
		CHECK_INT(m.aliases, 1);
		CHECK_INT(m.alias_root, 2);
		CHECK_INT(m.alias_of, 0);
		CHECK_INT(m.visits, 12 + 1 + 5);
		CHECK_INT(m.visits - m.again, 12);
		CHECK_INT(m.dirs_done, 6 + 3);
		CHECK_INT(m.dirs_again, 3);
		CHECK_INT(m.not_cached, 0);
		/* Inner root first: the same counts. */
		const char *inner[] = { a, root };
		m = run_multi(inner, 2, threads);
		CHECK_INT(m.aliases, 0);
		CHECK_INT(m.visits - m.again, 12);
		CHECK_INT(m.dirs_again, 3);
	}
	/* The walker's threads block every signal; the caller's mask is left as it was. */
	{
		struct dcp_walk_opts o = {
			.flags = DCP_WALK_PROBE, .threads = 4, .max_depth = -1,
			.visit = mask_visit,
		};
		const char *roots[] = { root };
		sigset_t none, after;

		sigemptyset(&none);
		CHECK(pthread_sigmask(SIG_SETMASK, &none, NULL) == 0);
		caller = pthread_self();
		CHECK_INT(dcp_walk(roots, 1, &o), 0);
		CHECK(atomic_load(&on_workers) > 0);
		CHECK_INT(atomic_load(&sigint_open), 0);
		CHECK_INT(atomic_load(&sigterm_open), 0);
		CHECK_INT(atomic_load(&sigpipe_blocked), 0);
		pthread_sigmask(SIG_BLOCK, NULL, &after);
		CHECK(!sigismember(&after, SIGINT) && !sigismember(&after, SIGTERM));
	}
	/* Root given with a trailing slash: no double slash in paths. */
	snprintf(sub, sizeof(sub), "%s/", root);
	t = run(sub, 0, -1, 2, NULL, false);
	CHECK_INT(t.entries, 12);
	CHECK(!t.bad_path);

	t = run(root, 0, 0, 2, NULL, false);
	CHECK_INT(t.entries, 1);
	CHECK_INT(t.dirs_done, 0);
	t = run(root, 0, 1, 2, NULL, false);
	CHECK_INT(t.entries, 5); /* root + a d f5 link */
	t = run(root, 0, -1, 2, NULL, true);
	CHECK_INT(t.entries, 9); /* b's contents f1 f2 f4 skipped */
	CHECK_INT(t.pruned_dirs, 2);

	const char *ex_name[] = { "b", NULL };
	t = run(root, 0, -1, 2, ex_name, false);
	CHECK_INT(t.entries, 7); /* no a/b, d/b, nor what is inside */
	const char *ex_glob[] = { "f[12]", "*/d/*", NULL };
	t = run(root, 0, -1, 2, ex_glob, false);
	CHECK_INT(t.entries, 8); /* no f1 f2, nothing under d */

	/* -L follows link -> a (a b f1 f2 c f3 again: +5 under link). */
	t = run(root, DCP_WALK_FOLLOW, -1, 2, NULL, false);
	CHECK_INT(t.entries, 17);
	CHECK_INT(t.errors, 0);
	/* A symlink cycle under -L is reported as ELOOP, not followed forever. */
	ln(".", "loop");
	t = run(root, DCP_WALK_FOLLOW, -1, 2, NULL, false);
	CHECK_INT(t.errors, 1);
	CHECK_INT(t.last_error, ELOOP);
	t = run(root, 0, -1, 2, NULL, false);
	CHECK_INT(t.entries, 13);
	CHECK_INT(t.errors, 0);

	/* A missing root is an error; a file root is visited, not listed. */
	snprintf(sub, sizeof(sub), "%s/absent", root);
	t = run(sub, 0, -1, 1, NULL, false);
	CHECK_INT(t.entries, 1);
	CHECK_INT(t.errors, 1);
	CHECK_INT(t.last_error, ENOENT);
	snprintf(sub, sizeof(sub), "%s/f5", root);
	t = run(sub, 0, -1, 1, NULL, false);
	CHECK_INT(t.entries, 1);
	CHECK_INT(t.errors, 0);
	/* A symlink root is not followed without -H, followed with it. */
	snprintf(sub, sizeof(sub), "%s/link", root);
	t = run(sub, 0, -1, 1, NULL, false);
	CHECK_INT(t.entries, 1);
	t = run(sub, DCP_WALK_FOLLOW_ROOTS, -1, 1, NULL, false);
	CHECK_INT(t.entries, 6); /* link + b f1 f2 c f3 */

	/* An empty directory first, in inode order (no qsort of nothing). */
	mk("a/c/empty", 'd');
	snprintf(sub, sizeof(sub), "%s/a/c/empty", root);
	t = run(sub, DCP_WALK_INODE_ORDER | DCP_WALK_PROBE, -1, 1, NULL, false);
	CHECK_INT(t.entries, 1);
	CHECK_INT(t.dirs_done, 1);
	CHECK(rmdir(sub) == 0);

	/* Probing in the walker: io_uring batches and plain syscalls agree. */
	t = run(root, DCP_WALK_PROBE, -1, 2, NULL, false);
	CHECK_INT(t.entries, 13);
	CHECK_INT(t.not_cached, 0);
	t = run(root, DCP_WALK_PROBE | DCP_WALK_PROBE_SYNC, -1, 2, NULL, false);
	CHECK_INT(t.entries, 13);
	CHECK_INT(t.not_cached, 0);
	snprintf(sub, sizeof(sub), "%s/absent-twice", root);
	CHECK(access(sub, F_OK) != 0); /* now a negative dentry */
	t = run(sub, DCP_WALK_PROBE, -1, 1, NULL, false);
	CHECK_INT(t.not_cached, 1);

	/* Deeper than PATH_MAX: 1500 levels of 5-character names. */
	int dfd = open(root, O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK(mkdirat(dfd, "deep", 0755) == 0);
	int cur = openat(dfd, "deep", O_DIRECTORY);
	for (int i = 0; i < 1500 && cur >= 0; i++) {
		int next;

		CHECK(mkdirat(cur, "level", 0755) == 0);
		next = openat(cur, "level", O_DIRECTORY);
		close(cur);
		cur = next;
	}
	CHECK(cur >= 0);
	close(cur);
	close(dfd);
	snprintf(sub, sizeof(sub), "%s/deep", root);
	t = run(sub, 0, -1, 2, NULL, false);
	CHECK_INT(t.entries, 1501);
	CHECK_INT(t.errors, 0);
	CHECK(t.max_pathlen > PATH_MAX);
	CHECK_INT(t.dirs_done, 1501);
	CHECK_INT(t.sum_from_done, 1500);

	/* The same under a descriptor limit of 16: descriptors are recycled. */
	struct rlimit old, lim = { 16, 16 };
	getrlimit(RLIMIT_NOFILE, &old);
	lim.rlim_max = old.rlim_max;
	CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0);
	t = run(sub, 0, -1, 2, NULL, false);
	CHECK_INT(t.entries, 1501);
	CHECK_INT(t.errors, 0);
	t = run(root, 0, -1, 4, NULL, false);
	CHECK_INT(t.errors, 0);
	CHECK_INT(t.entries, 13 + 1501);
	setrlimit(RLIMIT_NOFILE, &old);

	/*
	 * dcp_walk_lookup: nothing looked up on a mount judged unsafe (here
	 * /proc), the object reached may be such a mount's root.
	 */
	{
		struct statx px;
		mode_t m = 0;
		char abs[PATH_MAX * 2];
		int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;

		CHECK(rfd >= 0);
		CHECK(statx(AT_FDCWD, "/proc", 0, STATX_MNT_ID, &px) == 0);
		proc_mnt = px.stx_mnt_id;
		ln("/proc/self/status", "plink");
		ln("/proc", "proot");
		ln("nowhere", "dang");
		ln("self", "self");
		fd = dcp_walk_lookup(rfd, "a/b/f1", false, not_proc, NULL, &m);
		CHECK(fd >= 0 && S_ISREG(m));
		close(fd);
		fd = dcp_walk_lookup(rfd, "link/b", true, not_proc, NULL, &m);
		CHECK(fd >= 0 && S_ISDIR(m));
		close(fd);
		fd = dcp_walk_lookup(rfd, "link", false, not_proc, NULL, &m);
		CHECK(fd >= 0 && S_ISLNK(m));
		close(fd);
		fd = dcp_walk_lookup(rfd, "loop/loop/a/c/f3", true, not_proc, NULL, &m);
		CHECK(fd >= 0 && S_ISREG(m));
		close(fd);
		snprintf(abs, sizeof(abs), "%s/link/c/f3", root);
		fd = dcp_walk_lookup(AT_FDCWD, abs, true, not_proc, NULL, &m);
		CHECK(fd >= 0 && S_ISREG(m));
		close(fd);
		CHECK_INT(dcp_walk_lookup(rfd, "plink", true, not_proc, NULL, &m), -EREMOTE);
		fd = dcp_walk_lookup(rfd, "plink", true, NULL, NULL, &m);
		CHECK(fd >= 0 && S_ISREG(m)); /* no judge: every mount entered */
		close(fd);
		fd = dcp_walk_lookup(rfd, "proot", true, not_proc, NULL, &m);
		CHECK(fd >= 0 && S_ISDIR(m)); /* the root of it, nothing in it */
		close(fd);
		/* An absolute path that crosses a mount, looked up name by name. */
		snprintf(abs, sizeof(abs), "%s/proot/self/status", root);
		CHECK_INT(dcp_walk_lookup(AT_FDCWD, abs, true, not_proc, NULL, &m), -EREMOTE);
		fd = dcp_walk_lookup(AT_FDCWD, abs, true, NULL, NULL, &m);
		CHECK(fd >= 0 && S_ISREG(m));
		close(fd);
		CHECK_INT(dcp_walk_lookup(rfd, "dang", true, not_proc, NULL, &m), -ENOENT);
		CHECK_INT(dcp_walk_lookup(rfd, "self", true, not_proc, NULL, &m), -ELOOP);
		close(rfd);
	}

	/* Clean up with a walk-free rm: the tree is too deep for most tools. */
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", root);
	return CHECK_DONE();
}
