// SPDX-License-Identifier: MIT
/*
 * fsid.c - a filesystem's UUID and a file's handle: what tells a file
 * after a reboot (dcp_fsid.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <linux/btrfs.h>

#include "dcp_fsid.h"

/* Linux 6.5's, absent from older headers. */
struct dcp_fsuuid2 {
	uint8_t len;
	uint8_t uuid[16];
};
#ifndef FS_IOC_GETFSUUID
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct dcp_fsuuid2)
#endif
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif
#define BTRFS_MAGIC 0x9123683eUL

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int dcp_fsid_of(int fd, struct dcp_fsid *out)
{
	struct dcp_fsuuid2 u = { 0 };
	struct statfs sfs;

	*out = (struct dcp_fsid){ DCP_FSID_NONE, { 0 } };
	if (ioctl(fd, FS_IOC_GETFSUUID, &u) == 0) {
		/* A UUID is 16 bytes; the VM's root here answers 16 zeros. */
		if (u.len != 16 || all_zero(u.uuid, 16))
			return -ENODATA;
		out->from = DCP_FSID_FSUUID;
		memcpy(out->uuid, u.uuid, 16);
		return 0;
	}
	if (errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
		return -errno;
	/* btrfs keeps its fsid to itself: asked only of a btrfs superblock, so
	 * that no other filesystem (or daemon) gets a btrfs ioctl. */
	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	if ((unsigned long)sfs.f_type == BTRFS_MAGIC) {
		struct btrfs_ioctl_fs_info_args bi;

		memset(&bi, 0, sizeof(bi));
		if (ioctl(fd, BTRFS_IOC_FS_INFO, &bi) < 0)
			return -errno;
		if (all_zero(bi.fsid, 16))
			return -ENODATA;
		out->from = DCP_FSID_BTRFS;
		memcpy(out->uuid, bi.fsid, 16);
		return 0;
	}
	return -ENODATA;
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
