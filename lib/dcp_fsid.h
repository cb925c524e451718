/* SPDX-License-Identifier: MIT */
/*
 * dcp_fsid.h - what tells a file after a reboot: its filesystem's UUID and
 * the file's handle.
 *
 * A device number names a filesystem only until the next boot (loop
 * devices are numbered in attach order, btrfs gives every mount an
 * anonymous one, NVMe namespaces and device-mapper minors follow probe
 * order), and an inode number names a file only until it is deleted (ext4
 * gives a new file the number freed a moment before).  What survives both
 * is the filesystem's UUID (what blkid shows) and the file handle
 * (name_to_handle_at(2): the inode number with its generation, and on
 * btrfs the subvolume), which is what NFS gives its clients.  Both are
 * asked of a descriptor the caller holds, with no privilege and no I/O,
 * except where the kernel gives no UUID (before Linux 6.9, for a
 * filesystem without an ioctl of its own): then the filesystem's block
 * device is read (root), or /dev/disk/by-uuid names it.
 */
#ifndef DCP_FSID_H
#define DCP_FSID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a filesystem's UUID came from. */
enum dcp_fsid_from {
	DCP_FSID_NONE = 0,   /* it has none (tmpfs has a random one per mount, the
			      * kernel gives 16 zero bytes for some): the device
			      * number is all there is */
	DCP_FSID_FSUUID = 1, /* FS_IOC_GETFSUUID (Linux 6.9: ext4, xfs, overlay...) */
	DCP_FSID_BTRFS = 2,  /* btrfs: BTRFS_IOC_FS_INFO's fsid */
	DCP_FSID_EXT4 = 3,   /* ext4's EXT4_IOC_GETFSUUID (Linux 6.0) */
	DCP_FSID_XFS = 4,    /* xfs's XFS_IOC_FSGEOMETRY_V1 */
	DCP_FSID_BLKID = 5,  /* libblkid on the filesystem's block device */
	DCP_FSID_BYUUID = 6, /* the /dev/disk/by-uuid link to its block device */
};

/* A filesystem's UUID: 16 bytes, as blkid(8) shows it. */
struct dcp_fsid {
	enum dcp_fsid_from from;
	uint8_t uuid[16];
};

/* The text of a UUID: 8-4-4-4-12 hexadecimal digits and a NUL. */
#define DCP_FSID_TEXT 37

/*
 * dcp_fsid_of - the UUID of the filesystem FD is on.  FD must be open for
 * something (FS_IOC_GETFSUUID refuses an O_PATH descriptor: -EBADF); a
 * regular file's O_RDONLY|O_NONBLOCK or a directory's descriptor does.
 * Asks, in order, until one answers: FS_IOC_GETFSUUID (handled by the VFS
 * for every filesystem that has a UUID, Linux 6.9); the filesystem's own
 * ioctl, sent only where fstatfs(2) names that filesystem (btrfs's
 * BTRFS_IOC_FS_INFO, ext4's EXT4_IOC_GETFSUUID, xfs's geometry); and, for
 * a filesystem on a block device (not FUSE, network or pseudo: no daemon
 * is asked), dcp_fsid_of_device() of its device.  Returns 0, -ENODATA
 * when the filesystem has no UUID to give (OUT->from DCP_FSID_NONE: none,
 * or all zero), -EACCES when only its device could tell and this caller
 * may not read it, or -errno.
 */
int dcp_fsid_of(int fd, struct dcp_fsid *out);

/*
 * dcp_fsid_of_device - the UUID of the filesystem on the block device DEV
 * (a file's st_dev): its superblock read with libblkid (loaded with
 * dlopen at the first call) through a descriptor of the device node whose
 * type and number were checked on an O_PATH descriptor first (a name is
 * never trusted: /dev/block/MAJ:MIN, or the name sysfs gives); where that
 * cannot be read, the link of /dev/disk/by-uuid (root's directory) whose
 * target is that device.  Costs an open and a probe: a caller asking for
 * many files caches it by DEV.  Returns 0, -ENODEV when DEV is no block
 * device here, -ENODATA when its superblock has no UUID, -EACCES (not
 * root, no link), -ELIBACC (no libblkid.so.1, no link), or -errno.
 */
int dcp_fsid_of_device(uint64_t dev, struct dcp_fsid *out);

/* dcp_fsid_from_name - "fsuuid", "btrfs", "ext4", "xfs", "blkid", "by-uuid" ("none"). */
const char *dcp_fsid_from_name(enum dcp_fsid_from from);

/*
 * dcp_fsid_from_parse - the source named by S (LEN bytes, as
 * dcp_fsid_from_name() writes it; "none" is not one).  Returns it or -EINVAL.
 */
int dcp_fsid_from_parse(const char *s, size_t len);

/* dcp_fsid_equal - the same filesystem UUID (never true of two NONEs). */
bool dcp_fsid_equal(const struct dcp_fsid *a, const struct dcp_fsid *b);

/* dcp_fsid_text - ID's UUID as text into BUF (DCP_FSID_TEXT bytes). */
void dcp_fsid_text(const struct dcp_fsid *id, char *buf);

/*
 * dcp_fsid_parse - the UUID text S (LEN bytes: 8-4-4-4-12 hexadecimal
 * digits, either case) into OUT->uuid.  Returns 0 or -EINVAL.
 */
int dcp_fsid_parse(const char *s, size_t len, struct dcp_fsid *out);

/* The longest handle (MAX_HANDLE_SZ). */
#define DCP_HANDLE_MAX 128

/* A file handle (name_to_handle_at(2)): its type and bytes. */
struct dcp_handle {
	int32_t type;
	uint32_t len;
	uint8_t bytes[DCP_HANDLE_MAX];
};

/*
 * dcp_handle_of - the handle of the object open as FD (an O_PATH
 * descriptor will do: nothing is opened, nothing read), asked with
 * AT_HANDLE_FID where the kernel knows it (Linux 6.5: a filesystem that
 * cannot be exported, overlayfs, still gives one) and without it before.
 * Returns 0, -EOPNOTSUPP when the filesystem gives none, or -errno.
 */
int dcp_handle_of(int fd, struct dcp_handle *out);

/* dcp_handle_equal - the same type and bytes. */
bool dcp_handle_equal(const struct dcp_handle *a, const struct dcp_handle *b);

/*
 * The text of a handle: "TYPE:HEX", its type in decimal and its bytes in
 * lower-case hexadecimal: at most DCP_HANDLE_TEXT bytes with the NUL.
 */
#define DCP_HANDLE_TEXT (12 + 2 * DCP_HANDLE_MAX)

/* dcp_handle_text - H as text into BUF (DCP_HANDLE_TEXT bytes); its length. */
size_t dcp_handle_text(const struct dcp_handle *h, char *buf);

/*
 * dcp_handle_parse - the text S (LEN bytes, "TYPE:HEX": a type from 0 to
 * 2^31 - 1 without leading zeros, then 1 to DCP_HANDLE_MAX bytes in
 * lower-case hexadecimal) into OUT.  Returns 0 or -EINVAL.
 */
int dcp_handle_parse(const char *s, size_t len, struct dcp_handle *out);

#ifdef __cplusplus
}
#endif

#endif
