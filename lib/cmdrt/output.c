// SPDX-License-Identifier: MIT
/*
 * output.c - --output=FILE: a file beside FILE, renamed into place only
 * when whole, and only over a regular file (or nothing); and the writer
 * of standard output (dcp_output.h).
 *
 * Every name is looked up relative to FILE's directory, opened once
 * (O_PATH).  The new file is made there without a name (O_TMPFILE) and
 * linked under a temporary name only at the end, for the moment of the
 * rename; where the filesystem cannot (or the link could not be made),
 * it is made under that name from the start (O_CREAT|O_EXCL|O_NOFOLLOW)
 * and the signals that end a process remove it first.  FILE is checked
 * before the run and again at the rename, which exchanges the two names
 * atomically (RENAME_EXCHANGE) so that what left FILE is checked once
 * more after it left: a FIFO, a device or a link swapped in at the last
 * moment is put back, never replaced.  The new file gets what '>' would
 * give it (FILE's mode, owner and group; 0666 & ~umask for a new FILE),
 * set while it is empty or nameless, never wider than FILE's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dcp_output.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

struct dcp_output {
	char *name;	   /* FILE's last component */
	char tmp[NAME_MAX + 1]; /* the temporary name, in the same directory */
	int dirfd;	   /* FILE's directory (O_PATH): every name is relative to it */
	int fd;		   /* the new file (standard output is a copy) */
	bool anonymous;	   /* made with O_TMPFILE: no name until the end */
	dev_t dev;	   /* the new file's identity */
	ino_t ino;
	uid_t made_uid;	   /* its owner and group as made (those of a new FILE) */
	gid_t made_gid;
	mode_t new_mode;   /* 0666 & ~umask: the mode of a new FILE */
};

/*
 * The signals whose default action ends the process, which a run may
 * meet: each removes the temporary name (when there is one) before the
 * process ends as it would have.  SIGKILL cannot be caught: against it
 * only O_TMPFILE helps (no name but for the moment of the rename).
 */
static const int ending_signals[] = { SIGHUP,  SIGINT,	SIGQUIT, SIGTERM, SIGPIPE, SIGALRM,
				      SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM };
#define NSIGNALS (sizeof(ending_signals) / sizeof(ending_signals[0]))
static struct sigaction before[NSIGNALS]; /* the dispositions replaced */
static bool caught[NSIGNALS];
static struct dcp_output *volatile live; /* the file a signal handler removes */
static volatile sig_atomic_t named;	 /* live->tmp may name the new file */

static _Atomic int first_failure;

/*
 * Move FD up to the highest descriptors allowed (at most 1023), at or
 * above the second highest: the lowest ones stay free, so that the
 * descriptors a command reports (cachedopen's "fd 3") are those of a run
 * without --output.
 */
static int out_of_the_way(int fd)
{
	struct rlimit rl;
	rlim_t hi;
	int up;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= 5)
		return fd;
	hi = rl.rlim_cur < 1024 ? rl.rlim_cur - 1 : 1023;
	up = fcntl(fd, F_DUPFD_CLOEXEC, (int)hi - 1);
	if (up < 0)
		return fd;
	close(fd);
	return up;
}

/* Why an object (ST, in directory DIR) may not be replaced; NULL when it may. */
static const char *refusal(const struct stat *st, const struct stat *dir)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		break;
	case S_IFDIR:
		return "is a directory, not a regular file";
	case S_IFLNK:
		return "is a symbolic link, not a regular file";
	case S_IFIFO:
		return "is a FIFO, not a regular file";
	case S_IFCHR:
		return "is a character device, not a regular file";
	case S_IFBLK:
		return "is a block device, not a regular file";
	case S_IFSOCK:
		return "is a socket, not a regular file";
	default:
		return "is not a regular file";
	}
	/*
	 * A sticky directory (/tmp): only the caller's own file, or for root
	 * a file of the directory's owner, as fs.protected_regular=2 allows
	 * an O_CREAT open of it, whatever the sysctl says.  Root would
	 * otherwise replace any user's file; another user is refused by the
	 * kernel itself, but only at the rename, after the whole run.
	 */
	if ((dir->st_mode & S_ISVTX) && st->st_uid != geteuid() &&
	    !(geteuid() == 0 && st->st_uid == dir->st_uid))
		return "is another user's file in a sticky directory";
	return NULL;
}

/*
 * NAME in the open directory, its stat in *ST: 0 absent, 1 a file it may
 * replace, -EPERM and *WHY for anything else, or -errno.
 */
static int check_name(int dirfd, const char *name, struct stat *st, const char **why)
{
	struct stat dir;

	if (fstat(dirfd, &dir) < 0)
		return -errno;
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	*why = refusal(st, &dir);
	return *why ? -EPERM : 1;
}

/* A name for the temporary file: ".NAME.XXXXXX", within NAME_MAX. */
static int tmp_name(char *buf, size_t size, const char *name)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];
	int keep = (int)strnlen(name, NAME_MAX - 8);

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 20 ^
		    (uint64_t)(uintptr_t)buf;
		for (size_t i = 0; i < sizeof(r); i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	return snprintf(buf, size, ".%.*s.%c%c%c%c%c%c", keep, name, set[r[0] % 62],
			set[r[1] % 62], set[r[2] % 62], set[r[3] % 62], set[r[4] % 62],
			set[r[5] % 62]);
}

/* Whether ST is the new file. */
static bool ours(const struct dcp_output *o, const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_dev == o->dev && st->st_ino == o->ino;
}

/*
 * Remove the temporary name, if it is still the new file.  Async-signal
 * safe: a signal handler calls it too.
 */
static void remove_tmp(struct dcp_output *out)
{
	struct stat st;

	if (named && fstatat(out->dirfd, out->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ours(out, &st))
		unlinkat(out->dirfd, out->tmp, 0);
	named = 0;
}

/*
 * A signal that ends the process: the temporary name goes first, then the
 * disposition it replaced acts (a handler of its own is called; the
 * default action, restored, ends the process once this handler returns).
 */
static void on_signal(int sig, siginfo_t *info, void *ctx)
{
	int saved = errno;
	struct dcp_output *o = live;

	if (o)
		remove_tmp(o);
	for (size_t i = 0; i < NSIGNALS; i++) {
		if (ending_signals[i] != sig)
			continue;
		if (before[i].sa_flags & SA_SIGINFO) {
			before[i].sa_sigaction(sig, info, ctx);
		} else if (before[i].sa_handler != SIG_DFL && before[i].sa_handler != SIG_IGN) {
			before[i].sa_handler(sig);
		} else {
			sigaction(sig, &before[i], NULL);
			raise(sig); /* blocked until the handler returns */
		}
	}
	errno = saved;
}

void dcp_output_signalled(void)
{
	struct dcp_output *o = live;

	if (o)
		remove_tmp(o);
}

/* Catch the ending signals (those not ignored), once. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&sa.sa_mask, ending_signals[i]);
	for (size_t i = 0; i < NSIGNALS; i++) {
		if (caught[i] || sigaction(ending_signals[i], NULL, &before[i]) < 0 ||
		    (!(before[i].sa_flags & SA_SIGINFO) && before[i].sa_handler == SIG_IGN))
			continue;
		caught[i] = sigaction(ending_signals[i], &sa, NULL) == 0;
	}
}

/* Give the dispositions back, unless another handler was put in ours' place. */
static void release_signals(void)
{
	for (size_t i = 0; i < NSIGNALS; i++) {
		struct sigaction now;

		if (!caught[i] || sigaction(ending_signals[i], NULL, &now) < 0)
			continue;
		if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_signal)
			sigaction(ending_signals[i], &before[i], NULL);
		caught[i] = false;
	}
}

/* Block (or unblock) the ending signals in this thread: the rename is not cut in two. */
static void hold_signals(bool hold, sigset_t *old)
{
	sigset_t set;

	if (!hold) {
		pthread_sigmask(SIG_SETMASK, old, NULL);
		return;
	}
	sigemptyset(&set);
	for (size_t i = 0; i < NSIGNALS; i++)
		sigaddset(&set, ending_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

static void release(struct dcp_output *out)
{
	live = NULL;
	named = 0;
	if (out->fd >= 0)
		close(out->fd);
	if (out->dirfd >= 0)
		close(out->dirfd);
	free(out->name);
	free(out);
}

/*
 * Give the new file what '>' would give it: the mode, owner and group of
 * TARGET, the file it replaces, or for a new FILE (TARGET NULL) its
 * owner and group as made and 0666 & ~umask.  It is never wider than it
 * was nor than TARGET meanwhile: the mode is narrowed first, the owner
 * changed, the mode set.  A caller that may not give the file to
 * TARGET's owner (not root) keeps it; when it may not give it TARGET's
 * group either, the group's permissions are dropped (they were meant
 * for another group).  The set-user-ID and set-group-ID bits are not
 * copied (writing would clear them).
 */
static int give_attrs(struct dcp_output *o, const struct stat *target)
{
	uid_t uid = target ? target->st_uid : o->made_uid;
	gid_t gid = target ? target->st_gid : o->made_gid;
	mode_t mode = target ? target->st_mode & 0777 : o->new_mode;
	struct stat now;

	if (fstat(o->fd, &now) < 0)
		return -errno;
	if (now.st_uid != uid || now.st_gid != gid) {
		if (fchmod(o->fd, now.st_mode & mode & 0777) < 0)
			return -errno;
		if (fchown(o->fd, uid, gid) < 0) {
			if (errno != EPERM)
				return -errno;
			if (now.st_gid != gid && fchown(o->fd, (uid_t)-1, gid) < 0)
				mode &= ~(mode_t)0070;
		}
	}
	if ((now.st_mode & 07777) != mode && fchmod(o->fd, mode) < 0)
		return -errno;
	return 0;
}

/*
 * The new file without a name (O_TMPFILE), when the filesystem makes one
 * and it can be linked later: by AT_EMPTY_PATH or through
 * /proc/self/fd.  -1 when it cannot: the caller makes a named one.
 */
static int anonymous_file(int dirfd)
{
	char proc[40];
	struct stat st, via;
	int fd = openat(dirfd, ".", O_WRONLY | O_TMPFILE | O_NOCTTY | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) == 0 && stat(proc, &via) == 0 && st.st_dev == via.st_dev &&
	    st.st_ino == via.st_ino)
		return fd;
	close(fd);
	return -1;
}

/* Link the anonymous file under a new temporary name. */
static int link_anonymous(struct dcp_output *o)
{
	char proc[40];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (int tries = 0; tries < 100; tries++) {
		tmp_name(o->tmp, sizeof(o->tmp), o->name);
		named = 1;
		if (linkat(o->fd, "", o->dirfd, o->tmp, AT_EMPTY_PATH) == 0)
			return 0;
		/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH before Linux 6.10. */
		if (errno != EEXIST &&
		    linkat(AT_FDCWD, proc, o->dirfd, o->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		named = 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int dcp_output_open(const char *file, struct dcp_output **out, const char **why)
{
	struct dcp_output *o;
	const char *slash = strrchr(file, '/');
	char *dir = NULL;
	struct stat st, made;
	sigset_t held;
	mode_t mask;
	int ret;

	*why = NULL;
	if (!*file)
		return -ENOENT;
	if (slash && !slash[1]) {
		*why = "names a directory (it ends with '/')";
		return -EPERM;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->fd = o->dirfd = -1;
	o->name = strdup(slash ? slash + 1 : file);
	if (slash)
		dir = slash == file ? strdup("/") : strndup(file, (size_t)(slash - file));
	if (!o->name || (slash && !dir)) {
		ret = -ENOMEM;
		goto fail;
	}
	/* The umask, read before any thread could make a file (umask() sets it). */
	mask = umask(0077);
	umask(mask);
	o->new_mode = 0666 & ~mask;
	/* The directory may be reached through symbolic links; FILE may not be one. */
	o->dirfd = open(dir ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0) {
		ret = -errno;
		goto fail;
	}
	o->dirfd = out_of_the_way(o->dirfd);
	ret = check_name(o->dirfd, o->name, &st, why);
	if (ret < 0)
		goto fail;
	catch_signals();
	/* No signal between the making of a name and the handlers knowing it. */
	hold_signals(true, &held);
	o->fd = anonymous_file(o->dirfd);
	o->anonymous = o->fd >= 0;
	for (int tries = 0; o->fd < 0 && tries < 100; tries++) {
		tmp_name(o->tmp, sizeof(o->tmp), o->name);
		o->fd = openat(o->dirfd, o->tmp,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (o->fd < 0 && errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		ret = -errno;
		hold_signals(false, &held);
		goto fail;
	}
	if (fstat(o->fd, &made) < 0) {
		ret = -errno;
		if (!o->anonymous)
			unlinkat(o->dirfd, o->tmp, 0);
		hold_signals(false, &held);
		goto fail;
	}
	o->dev = made.st_dev;
	o->ino = made.st_ino;
	o->made_uid = made.st_uid;
	o->made_gid = made.st_gid;
	named = !o->anonymous;
	live = o;
	hold_signals(false, &held);
	/* '>' would keep FILE's mode, owner and group: given while the file is empty. */
	ret = give_attrs(o, ret == 1 ? &st : NULL);
	if (ret < 0)
		goto fail_made;
	o->fd = out_of_the_way(o->fd);
	if (dup2(o->fd, STDOUT_FILENO) < 0) {
		ret = -errno;
		goto fail_made;
	}
	free(dir);
	*out = o;
	return 0;
fail_made:
	remove_tmp(o);
fail:
	free(dir);
	release(o);
	release_signals();
	return ret;
}

int dcp_output_truncate(struct dcp_output *out)
{
	if (ftruncate(out->fd, 0) < 0 || lseek(out->fd, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

/*
 * After an exchange, the temporary name holds what left FILE: a file FILE
 * may be (what was replaced, or the new file itself, back from FILE) is
 * removed; anything else is put back in FILE's place (exchanged again, or
 * renamed back if FILE went).  RET is the result so far (0: published);
 * -EPERM and *WHY once something was put back.  Nothing stays under the
 * temporary name unless the directory keeps changing under the run.
 */
static int settle(struct dcp_output *o, int ret, const char **why)
{
	for (int tries = 0; tries < 16; tries++) {
		const char *what = NULL;
		struct stat st;
		int r = check_name(o->dirfd, o->tmp, &st, &what);

		if (r == 0)
			return ret; /* nothing left under the name */
		if (r == 1 || (r == -EPERM && ours(o, &st))) {
			unlinkat(o->dirfd, o->tmp, 0);
			return ret;
		}
		if (r != -EPERM)
			return ret < 0 ? ret : r;
		/* Swapped in after the check: put it back. */
		*why = what;
		ret = -EPERM;
		if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_EXCHANGE) == 0)
			continue;
		if (errno != ENOENT ||
		    renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_NOREPLACE) < 0)
			return errno == EEXIST ? ret : -errno;
	}
	return ret;
}

/*
 * Put the temporary file in FILE's place, FILE being checked again:
 * absent (RENAME_NOREPLACE), or a regular file it may replace, exchanged
 * with it (RENAME_EXCHANGE) and checked once more under the temporary
 * name (settle()).  The new file gets FILE's mode, owner and group (as
 * checked) before the rename.  A filesystem without these flags gets a
 * plain rename after the check.  On failure the temporary name is
 * removed (unless it is no longer the new file).
 */
static int place(struct dcp_output *o, const char **why)
{
	struct stat st;
	int ret;

	for (int tries = 0; tries < 8; tries++) {
		if (fstatat(o->dirfd, o->tmp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			named = 0;
			return -errno;
		}
		if (!ours(o, &st)) {
			named = 0;
			*why = "had its temporary file replaced";
			return -EPERM; /* not the file made: left alone */
		}
		ret = check_name(o->dirfd, o->name, &st, why);
		if (ret < 0)
			goto fail;
		if (give_attrs(o, ret == 1 ? &st : NULL) < 0)
			goto fail_errno;
		if (ret == 0) {
			if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_NOREPLACE) == 0) {
				named = 0;
				return 0;
			}
			if (errno == EEXIST)
				continue; /* made meanwhile: look at it */
		} else {
			if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_EXCHANGE) == 0) {
				/* What was FILE is now under the temporary name. */
				ret = settle(o, 0, why);
				named = 0;
				return ret;
			}
			if (errno == ENOENT)
				continue; /* gone meanwhile */
		}
		if (errno != EINVAL && errno != ENOSYS)
			goto fail_errno;
		/* A filesystem without RENAME_NOREPLACE or RENAME_EXCHANGE. */
		if (renameat(o->dirfd, o->tmp, o->dirfd, o->name) < 0)
			goto fail_errno;
		named = 0;
		return 0;
	}
	ret = -EAGAIN; /* FILE kept changing */
	goto fail;
fail_errno:
	ret = -errno;
fail:
	remove_tmp(o);
	return ret;
}

int dcp_output_commit(struct dcp_output *out, const char **why)
{
	sigset_t mask;
	int ret;

	*why = NULL;
	/* A full disk may show only here (delayed allocation): fsync says. */
	if (fsync(out->fd) < 0) {
		ret = -errno;
		remove_tmp(out);
		release(out);
		return ret;
	}
	/* From the link to the rename, no signal cuts in (in this thread). */
	hold_signals(true, &mask);
	ret = out->anonymous ? link_anonymous(out) : 0;
	if (ret == 0)
		ret = place(out, why);
	release(out); /* closes it: flushed already, nothing more to say */
	release_signals();
	hold_signals(false, &mask);
	return ret;
}

void dcp_output_discard(struct dcp_output *out)
{
	remove_tmp(out);
	release(out);
	release_signals();
}

int dcp_output_write(struct dcp_buf *b)
{
	int ret = dcp_buf_write(b, STDOUT_FILENO);

	if (ret < 0) {
		int none = 0;

		atomic_compare_exchange_strong(&first_failure, &none, ret);
	}
	return ret;
}

int dcp_output_failed(void)
{
	return atomic_load(&first_failure);
}
