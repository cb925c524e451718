// SPDX-License-Identifier: MIT
/*
 * fsid.c - a filesystem's UUID and a file's handle: what tells a file
 * after a reboot (dcp_fsid.h).
 */
#define _GNU_SOURCE
#include <blkid.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/btrfs.h>

#include "dcp_fsid.h"
#include "private/dcp_dl.h"
#include "private/dcp_fsid_cache.h"

/* Linux 6.9's, absent from older headers. */
struct dcp_fsuuid2 {
	uint8_t len;
	uint8_t uuid[16];
};
#ifndef FS_IOC_GETFSUUID
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct dcp_fsuuid2)
#endif
/* ext4's own (Linux 6.0, include/uapi/linux/ext4.h): FSU_LEN in, 16 out. */
struct dcp_ext4_fsuuid {
	uint32_t fsu_len;
	uint32_t fsu_flags; /* the kernel's struct ends in a flexible fsu_uuid[] */
};
#define DCP_EXT4_IOC_GETFSUUID _IOR('f', 44, struct dcp_ext4_fsuuid)
/* What is passed: the header and room for a 16-byte UUID. */
struct dcp_ext4_fsuuid16 {
	struct dcp_ext4_fsuuid h;
	uint8_t uuid[16];
};
/* xfs's geometry, version 1 (every kernel xfs runs on: fs/xfs/libxfs/xfs_fs.h). */
struct dcp_xfs_geom_v1 {
	uint32_t blocksize, rtextsize, agblocks, agcount, logblocks, sectsize, inodesize,
		imaxpct;
	uint64_t datablocks, rtblocks, rtextents, logstart;
	uint8_t uuid[16];
	uint32_t sunit, swidth;
	int32_t version;
	uint32_t flags, logsectsize, rtsectsize, dirblocksize;
};
_Static_assert(sizeof(struct dcp_xfs_geom_v1) == 112, "xfs_fsop_geom_v1 is 112 bytes");
#define DCP_XFS_IOC_FSGEOMETRY_V1 _IOR('X', 100, struct dcp_xfs_geom_v1)
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif
#define BTRFS_MAGIC 0x9123683eUL
#define EXT4_MAGIC 0xef53UL    /* ext2, ext3 and ext4 */
#define XFS_MAGIC 0x58465342UL
#define FUSE_MAGIC 0x65735546UL /* fuse and fuseblk */

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* An ioctl's "this is not mine": the request is unknown to the kernel or the filesystem. */
static bool not_known(int err)
{
	return err == ENOTTY || err == EINVAL || err == EOPNOTSUPP;
}

/* OUT from FROM's 16 bytes U: 0, or -ENODATA for 16 zero bytes (the VM's root here). */
static int found(struct dcp_fsid *out, enum dcp_fsid_from from, const uint8_t *u)
{
	if (all_zero(u, 16))
		return -ENODATA;
	out->from = from;
	memcpy(out->uuid, u, 16);
	return 0;
}

/*
 * What the kernel tells of FD's filesystem: FS_IOC_GETFSUUID, then the
 * filesystem's own ioctl, each sent only to the filesystem that fstatfs(2)
 * names (no FUSE daemon is ever sent an ioctl of another filesystem's).
 * Returns 0, -errno, or -ENODATA with *BLKDEV the block device that the
 * filesystem lives on when its superblock may be read from there (0: none:
 * an anonymous device number, FUSE, network and pseudo filesystems).
 */
static int fsid_kernel(int fd, struct dcp_fsid *out, uint64_t *blkdev)
{
	struct dcp_fsuuid2 u = { 0 };
	struct statfs sfs;
	struct stat st;

	*out = (struct dcp_fsid){ DCP_FSID_NONE, { 0 } };
	*blkdev = 0;
	if (ioctl(fd, FS_IOC_GETFSUUID, &u) == 0) {
		/* A UUID is 16 bytes. */
		if (u.len != 16)
			return -ENODATA;
		return found(out, DCP_FSID_FSUUID, u.uuid);
	}
	if (!not_known(errno))
		return -errno;
	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	switch ((unsigned long)sfs.f_type) {
	case BTRFS_MAGIC: {
		/* btrfs keeps its fsid to itself. */
		struct btrfs_ioctl_fs_info_args bi;

		memset(&bi, 0, sizeof(bi));
		if (ioctl(fd, BTRFS_IOC_FS_INFO, &bi) < 0)
			return -errno;
		return found(out, DCP_FSID_BTRFS, bi.fsid);
	}
	case EXT4_MAGIC: {
		/* Linux 6.0 to 6.8: ext4 answers its own request (the ext2 and
		 * ext3 drivers of old kernels do not: then the device). */
		struct dcp_ext4_fsuuid16 e = { { 16, 0 }, { 0 } };

		if (ioctl(fd, DCP_EXT4_IOC_GETFSUUID, &e) == 0) {
			if (e.h.fsu_len != 16)
				return -ENODATA;
			return found(out, DCP_FSID_EXT4, e.uuid);
		}
		if (!not_known(errno))
			return -errno;
		break;
	}
	case XFS_MAGIC: {
		struct dcp_xfs_geom_v1 g;

		memset(&g, 0, sizeof(g));
		if (ioctl(fd, DCP_XFS_IOC_FSGEOMETRY_V1, &g) == 0)
			return found(out, DCP_FSID_XFS, g.uuid);
		if (!not_known(errno))
			return -errno;
		break;
	}
	case FUSE_MAGIC:
		/* fuseblk has a device, but what is on it is the daemon's to say. */
		return -ENODATA;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	if (major(st.st_dev) != 0)
		*blkdev = st.st_dev;
	return -ENODATA;
}

/* "MAJ:MIN" of DEV into BUF. */
static void dev_text(uint64_t dev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", major((dev_t)dev), minor((dev_t)dev));
}

/*
 * The block device DEV, open O_RDONLY|O_NONBLOCK: the node NAME names,
 * taken only when what it is (fstat of an O_PATH descriptor, no open yet)
 * is a block device of number DEV, then opened through that descriptor
 * (/proc/self/fd), never by the name again.  Returns the descriptor,
 * -ENODEV when NAME is not that device, or -errno (-EACCES: not root).
 */
static int open_dev_at(int dirfd, const char *name, uint64_t dev)
{
	char via[64];
	struct stat st;
	int pfd, fd;

	pfd = openat(dirfd, name, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
	if (fstat(pfd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev) {
		close(pfd);
		return -ENODEV;
	}
	snprintf(via, sizeof(via), "/proc/self/fd/%d", pfd);
	fd = open(via, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(pfd);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != dev)) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/*
 * The block device DEV, open for reading: /dev/block/MAJ:MIN (udev's
 * link), else /dev/DEVNAME as sysfs names it (/sys/dev/block/MAJ:MIN/uevent).
 * Returns a descriptor, -ENODEV when no node here is that device, or -errno.
 */
static int open_dev(uint64_t dev)
{
	char num[32], path[300], line[256];
	int fd, ret = -ENODEV;
	FILE *f;

	dev_text(dev, num, sizeof(num));
	snprintf(path, sizeof(path), "/dev/block/%s", num);
	fd = open_dev_at(AT_FDCWD, path, dev);
	if (fd != -ENODEV)
		return fd;
	snprintf(path, sizeof(path), "/sys/dev/block/%s/uevent", num);
	f = fopen(path, "re");
	if (!f)
		return -ENODEV; /* no such block device (or no sysfs) */
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		line[n] = '\0';
		if (strncmp(line, "DEVNAME=", 8) || !line[8] || line[8] == '/' ||
		    strstr(line + 8, ".."))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", line + 8);
		ret = open_dev_at(AT_FDCWD, path, dev);
		break;
	}
	fclose(f);
	return ret;
}

/*
 * libblkid, loaded when a device is first read (dlopen, as libmount in
 * mounts.c): a kernel that gives every UUID never loads it.
 */
#define BK_FUNCS(X)                                                                         \
	X(new_probe) X(free_probe) X(probe_set_device) X(probe_enable_superblocks)          \
	X(probe_set_superblocks_flags) X(probe_filter_superblocks_usage) X(do_safeprobe)    \
	X(probe_lookup_value)

static struct {
#define BK_FIELD(f) __typeof__(blkid_##f) *f;
	BK_FUNCS(BK_FIELD)
#undef BK_FIELD
} bk;
static int bk_status = -ELIBACC; /* 0 once every function is there */
static pthread_once_t bk_once = PTHREAD_ONCE_INIT;

static void bk_open(void)
{
	void *h = dlopen("libblkid.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		bk_status = dcp_dlopen_errno(); /* ENOMEM under ulimit -v, not ELIBACC */
		return;
	}
#define BK_SYM(f)                                                   \
	if (!(bk.f = (__typeof__(bk.f))dlsym(h, "blkid_" #f))) {    \
		dlclose(h);                                         \
		return;                                             \
	}
	BK_FUNCS(BK_SYM)
#undef BK_SYM
	bk_status = 0; /* kept open for the rest of the process */
}

/* The UUID of the filesystem whose superblock is on the open device FD. */
static int blkid_uuid(int fd, struct dcp_fsid *out)
{
	const char *v = NULL;
	size_t len = 0;
	blkid_probe pr;
	int ret;

	pthread_once(&bk_once, bk_open);
	if (bk_status < 0)
		return bk_status;
	pr = bk.new_probe();
	if (!pr)
		return -ENOMEM;
	if (bk.probe_set_device(pr, fd, 0, 0) < 0) {
		bk.free_probe(pr);
		return -EIO;
	}
	bk.probe_enable_superblocks(pr, 1);
	bk.probe_set_superblocks_flags(pr, BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE |
					   BLKID_SUBLKS_USAGE);
	bk.probe_filter_superblocks_usage(pr, BLKID_FLTR_ONLYIN, BLKID_USAGE_FILESYSTEM);
	/* safeprobe: two signatures on one device (ambiguous) give none. */
	ret = bk.do_safeprobe(pr);
	if (ret == 0 && bk.probe_lookup_value(pr, "UUID", &v, &len) == 0 && v) {
		struct dcp_fsid id = { DCP_FSID_BLKID, { 0 } };

		/* LEN counts the NUL; a FAT volume's serial is no UUID. */
		len = strnlen(v, len);
		ret = dcp_fsid_parse(v, len, &id) == 0 ? found(out, DCP_FSID_BLKID, id.uuid) :
							 -ENODATA;
	} else {
		ret = ret < 0 ? -EIO : -ENODATA;
	}
	bk.free_probe(pr);
	return ret;
}

/*
 * The UUID that a link of /dev/disk/by-uuid (udev's, from blkid) gives
 * the block device DEV: the link whose target is a block device of that
 * number (followed by fstatat; its name is the UUID).  The directory must
 * be root's and writable by no one else.  Returns 0, -ENOENT (no such
 * directory), -ENODATA (no link names DEV, or two name it otherwise).
 */
static int by_uuid(uint64_t dev, struct dcp_fsid *out)
{
	struct dcp_fsid got = { DCP_FSID_NONE, { 0 } };
	struct dirent *d;
	struct stat st;
	int dfd, ret = -ENODATA;
	DIR *dir;

	dfd = open("/dev/disk/by-uuid", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(dfd);
		return -EPERM;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -ENOMEM;
	}
	while ((d = readdir(dir))) {
		struct dcp_fsid id = { DCP_FSID_BYUUID, { 0 } };
		size_t len = strlen(d->d_name);

		if (dcp_fsid_parse(d->d_name, len, &id) < 0 || all_zero(id.uuid, 16))
			continue;
		if (fstatat(dirfd(dir), d->d_name, &st, 0) < 0 || !S_ISBLK(st.st_mode) ||
		    st.st_rdev != dev)
			continue;
		if (got.from != DCP_FSID_NONE && memcmp(got.uuid, id.uuid, 16)) {
			ret = -ENODATA; /* two UUIDs for one device: neither */
			break;
		}
		got = id;
		ret = 0;
	}
	closedir(dir);
	if (ret == 0)
		*out = got;
	return ret;
}

int dcp_fsid_of_device(uint64_t dev, struct dcp_fsid *out)
{
	int fd, ret, alt;

	*out = (struct dcp_fsid){ DCP_FSID_NONE, { 0 } };
	if (major((dev_t)dev) == 0)
		return -ENODEV; /* an anonymous device number: no device */
	fd = open_dev(dev);
	if (fd >= 0) {
		ret = blkid_uuid(fd, out);
		close(fd);
		/* The device was read: what it says is the answer. */
		if (ret != -ELIBACC)
			return ret;
	} else {
		ret = fd;
	}
	/* Not readable here (not root, no node, no libblkid): udev's links. */
	alt = by_uuid(dev, out);
	if (alt == 0)
		return 0;
	/* -ENODEV, -EACCES, -ELIBACC: why the device told nothing. */
	return ret;
}

int dcp_fsid_of(int fd, struct dcp_fsid *out)
{
	uint64_t dev;
	int ret = fsid_kernel(fd, out, &dev);

	if (ret != -ENODATA || !dev)
		return ret;
	ret = dcp_fsid_of_device(dev, out);
	return ret == -ENODEV ? -ENODATA : ret;
}

int fsid_of_cached(struct fsid_cache *c, int fd, struct dcp_fsid *out)
{
	uint64_t dev;
	int ret = fsid_kernel(fd, out, &dev);
	unsigned i;

	if (ret != -ENODATA || !dev)
		return ret;
	pthread_mutex_lock(&c->mu);
	for (i = 0; i < c->n; i++)
		if (c->v[i].dev == dev)
			break;
	if (i == c->n) {
		/* Asked under the lock: one probe per device, whichever thread. */
		struct dcp_fsid id;
		int r = dcp_fsid_of_device(dev, &id);

		if (c->n == FSID_CACHE_SLOTS) {
			pthread_mutex_unlock(&c->mu);
			*out = id;
			return r == -ENODEV ? -ENODATA : r;
		}
		c->v[c->n].dev = dev;
		c->v[c->n].ret = r;
		c->v[c->n].id = id;
		c->n++;
	}
	*out = c->v[i].id;
	ret = c->v[i].ret;
	pthread_mutex_unlock(&c->mu);
	return ret == -ENODEV ? -ENODATA : ret;
}

static const char *const from_names[] = {
	[DCP_FSID_NONE] = "none",     [DCP_FSID_FSUUID] = "fsuuid", [DCP_FSID_BTRFS] = "btrfs",
	[DCP_FSID_EXT4] = "ext4",     [DCP_FSID_XFS] = "xfs",       [DCP_FSID_BLKID] = "blkid",
	[DCP_FSID_BYUUID] = "by-uuid",
};

const char *dcp_fsid_from_name(enum dcp_fsid_from from)
{
	return (unsigned)from < sizeof(from_names) / sizeof(from_names[0]) ? from_names[from] :
									    "?";
}

int dcp_fsid_from_parse(const char *s, size_t len)
{
	for (size_t i = 1; i < sizeof(from_names) / sizeof(from_names[0]); i++)
		if (strlen(from_names[i]) == len && !memcmp(from_names[i], s, len))
			return (int)i;
	return -EINVAL;
}

bool dcp_fsid_equal(const struct dcp_fsid *a, const struct dcp_fsid *b)
{
	return a->from != DCP_FSID_NONE && b->from != DCP_FSID_NONE &&
	       !memcmp(a->uuid, b->uuid, 16);
}

void dcp_fsid_text(const struct dcp_fsid *id, char *buf)
{
	const uint8_t *u = id->uuid;

	snprintf(buf, DCP_FSID_TEXT,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
}

static int hexval(char c, bool upper)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       upper && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int dcp_fsid_parse(const char *s, size_t len, struct dcp_fsid *out)
{
	size_t k = 0;

	if (len != DCP_FSID_TEXT - 1)
		return -EINVAL;
	for (size_t i = 0; i < len;) {
		int hi, lo;

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i++] != '-')
				return -EINVAL;
			continue;
		}
		hi = hexval(s[i], true);
		lo = i + 1 < len ? hexval(s[i + 1], true) : -1;
		if (hi < 0 || lo < 0 || (i + 1 == 8 || i + 1 == 13 || i + 1 == 18 || i + 1 == 23))
			return -EINVAL;
		out->uuid[k++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return k == 16 ? 0 : -EINVAL;
}

int dcp_handle_of(int fd, struct dcp_handle *out)
{
	struct {
		struct file_handle h;
		unsigned char b[DCP_HANDLE_MAX];
	} fh;
	int mnt, ret;

	fh.h.handle_bytes = DCP_HANDLE_MAX;
	ret = name_to_handle_at(fd, "", &fh.h, &mnt, AT_EMPTY_PATH | AT_HANDLE_FID);
	if (ret < 0 && errno == EINVAL) {
		/* Before Linux 6.5: no AT_HANDLE_FID (the same handle where it exports). */
		fh.h.handle_bytes = DCP_HANDLE_MAX;
		ret = name_to_handle_at(fd, "", &fh.h, &mnt, AT_EMPTY_PATH);
	}
	if (ret < 0)
		return errno == ENOSYS ? -EOPNOTSUPP : -errno;
	if (!fh.h.handle_bytes || fh.h.handle_bytes > DCP_HANDLE_MAX || fh.h.handle_type < 0)
		return -EOPNOTSUPP;
	out->type = fh.h.handle_type;
	out->len = fh.h.handle_bytes;
	memcpy(out->bytes, fh.h.f_handle, out->len);
	return 0;
}

bool dcp_handle_equal(const struct dcp_handle *a, const struct dcp_handle *b)
{
	return a->type == b->type && a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

size_t dcp_handle_text(const struct dcp_handle *h, char *buf)
{
	int n = snprintf(buf, DCP_HANDLE_TEXT, "%d:", (int)h->type);

	for (uint32_t i = 0; i < h->len && i < DCP_HANDLE_MAX; i++)
		n += snprintf(buf + n, DCP_HANDLE_TEXT - (size_t)n, "%02x", h->bytes[i]);
	return (size_t)n;
}

int dcp_handle_parse(const char *s, size_t len, struct dcp_handle *out)
{
	size_t i = 0;
	int64_t type = 0;

	while (i < len && s[i] >= '0' && s[i] <= '9') {
		type = type * 10 + (s[i] - '0');
		if (type > INT32_MAX || (i == 1 && s[0] == '0'))
			return -EINVAL;
		i++;
	}
	if (!i || i >= len || s[i++] != ':')
		return -EINVAL;
	if (len - i < 2 || (len - i) % 2 || (len - i) / 2 > DCP_HANDLE_MAX)
		return -EINVAL;
	out->type = (int32_t)type;
	out->len = (uint32_t)((len - i) / 2);
	for (uint32_t k = 0; k < out->len; k++, i += 2) {
		int hi = hexval(s[i], false), lo = hexval(s[i + 1], false);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out->bytes[k] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
