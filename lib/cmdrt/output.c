// SPDX-License-Identifier: MIT
/*
 * output.c - --output=FILE: a temporary file beside FILE, renamed into
 * place only when whole, and only over a regular file (or nothing); and
 * the writer of standard output (dcp_output.h).
 *
 * Every name is looked up relative to FILE's directory, opened once
 * (O_PATH): the temporary file is made there (O_CREAT|O_EXCL|O_NOFOLLOW),
 * and FILE is checked there before the run and again at the rename,
 * which exchanges the two names atomically (RENAME_EXCHANGE) so that
 * what left FILE is checked once more after it left: a FIFO, a device or
 * a link swapped in at the last moment is put back, never replaced.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
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
	char *name;  /* FILE's last component */
	char *tmp;   /* the temporary file's name, in the same directory */
	int dirfd;   /* FILE's directory (O_PATH): every name is relative to it */
	int fd;	     /* the temporary file (standard output is a copy) */
	dev_t dev;   /* the temporary file's identity */
	ino_t ino;
};

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

static void release(struct dcp_output *out)
{
	if (out->fd >= 0)
		close(out->fd);
	if (out->dirfd >= 0)
		close(out->dirfd);
	free(out->name);
	free(out->tmp);
	free(out);
}

/* Remove the temporary file, if the name is still the file made. */
static void remove_tmp(struct dcp_output *out)
{
	struct stat st;

	if (fstatat(out->dirfd, out->tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == out->dev && st.st_ino == out->ino)
		unlinkat(out->dirfd, out->tmp, 0);
}

int dcp_output_open(const char *file, struct dcp_output **out, const char **why)
{
	struct dcp_output *o;
	const char *slash = strrchr(file, '/');
	char *dir = NULL;
	struct stat st;
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
	o->tmp = malloc(NAME_MAX + 1);
	if (slash)
		dir = slash == file ? strdup("/") : strndup(file, (size_t)(slash - file));
	if (!o->name || !o->tmp || (slash && !dir)) {
		ret = -ENOMEM;
		goto fail;
	}
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
	for (int tries = 0; tries < 100; tries++) {
		tmp_name(o->tmp, NAME_MAX + 1, o->name);
		o->fd = openat(o->dirfd, o->tmp,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (o->fd >= 0 || errno != EEXIST)
			break;
	}
	if (o->fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (fstat(o->fd, &st) < 0) {
		ret = -errno;
		unlinkat(o->dirfd, o->tmp, 0);
		goto fail;
	}
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->fd = out_of_the_way(o->fd);
	/* Readable by the collector, whatever the umask (as a file written by '>'). */
	if (fchmod(o->fd, 0644) < 0 || dup2(o->fd, STDOUT_FILENO) < 0) {
		ret = -errno;
		unlinkat(o->dirfd, o->tmp, 0);
		goto fail;
	}
	free(dir);
	*out = o;
	return 0;
fail:
	free(dir);
	release(o);
	return ret;
}

int dcp_output_truncate(struct dcp_output *out)
{
	if (ftruncate(out->fd, 0) < 0 || lseek(out->fd, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

/*
 * Put the temporary file (closed) in FILE's place, FILE being checked
 * again: absent (RENAME_NOREPLACE), or a regular file it may replace,
 * exchanged with it (RENAME_EXCHANGE) and checked once more under the
 * temporary name, put back if it changed in between.  A filesystem
 * without these flags gets a plain rename after the check.  On failure
 * the temporary file is removed (unless it is no longer the one made).
 */
static int place(struct dcp_output *o, const char **why)
{
	struct stat st;
	int ret;

	for (int tries = 0; tries < 8; tries++) {
		if (fstatat(o->dirfd, o->tmp, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode) || st.st_dev != o->dev || st.st_ino != o->ino) {
			*why = "had its temporary file replaced";
			return -EPERM; /* not the file made: left alone */
		}
		ret = check_name(o->dirfd, o->name, &st, why);
		if (ret < 0)
			goto fail;
		if (ret == 0) {
			if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_NOREPLACE) == 0)
				return 0;
			if (errno == EEXIST)
				continue; /* made meanwhile: look at it */
		} else {
			if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_EXCHANGE) == 0) {
				/* What was FILE is now under the temporary name. */
				if (check_name(o->dirfd, o->tmp, &st, why) != -EPERM) {
					unlinkat(o->dirfd, o->tmp, 0);
					return 0;
				}
				/* Swapped in after the check: put it back. */
				if (renameat2(o->dirfd, o->tmp, o->dirfd, o->name, RENAME_EXCHANGE) < 0)
					return -errno; /* FILE holds the new file, the name the other */
				ret = -EPERM;
				goto fail;
			}
			if (errno == ENOENT)
				continue; /* gone meanwhile */
		}
		if (errno != EINVAL && errno != ENOSYS)
			goto fail_errno;
		/* A filesystem without RENAME_NOREPLACE or RENAME_EXCHANGE. */
		if (renameat(o->dirfd, o->tmp, o->dirfd, o->name) < 0)
			goto fail_errno;
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
	int ret = 0;

	*why = NULL;
	/* A full disk may show only here (delayed allocation): fsync says. */
	if (fsync(out->fd) < 0 || close(out->fd) < 0) {
		ret = -errno;
		out->fd = -1;
		remove_tmp(out);
	} else {
		out->fd = -1;
		ret = place(out, why);
	}
	release(out);
	return ret;
}

void dcp_output_discard(struct dcp_output *out)
{
	remove_tmp(out);
	release(out);
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
