// SPDX-License-Identifier: MIT
/*
 * unit/fsid - a filesystem's UUID and a file's handle as a manifest writes
 * and reads them: the text forms round trip and refuse every malformed
 * spelling; an O_PATH descriptor gives a handle but no UUID (EBADF); the
 * handle of a file is the same from an O_PATH and a reading descriptor,
 * and another file's differs.  (The UUIDs of real ext4, xfs and btrfs
 * images, against blkid, are cmd/identity's.)
 *
 * As root, with loop devices and mkfs.ext4: each step of dcp_fsid_of()'s
 * chain on an ext4 image, the steps before it refused by a seccomp filter
 * in a child (as faultinject does: the ioctl request fails with ENOTTY,
 * as on a kernel without it): FS_IOC_GETFSUUID, ext4's own ioctl, the
 * device read with libblkid, and, for nobody, /dev/disk/by-uuid (in a
 * /dev of the test's own, in a mount namespace of its own), whose links
 * count only when they lead to the very device and the directory is root's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dcprobe.h"

static void uuid_text(void)
{
	struct dcp_fsid id = { DCP_FSID_FSUUID, { 0x88, 0x22, 0xe3, 0xf7, 0x33, 0x7c, 0x4f, 0x8b,
						  0x8b, 0x3f, 0xf1, 0x77, 0xb1, 0xcc, 0x19, 0x7c } };
	struct dcp_fsid back = { 0 };
	char buf[DCP_FSID_TEXT];
	static const char *const bad[] = {
		"", "8822e3f7-337c-4f8b-8b3f-f177b1cc197",   /* short */
		"8822e3f7-337c-4f8b-8b3f-f177b1cc197c0",      /* long */
		"8822e3f7337c-4f8b-8b3f-f177b1cc197c-",	      /* dashes elsewhere */
		"8822e3f7-337c-4f8b-8b3f-f177b1cc197g",	      /* not hex */
		"8822e3f7-337c-4f8b-8b3f f177b1cc197c",	      /* a space */
		"8822e3f-7337c-4f8b-8b3f-f177b1cc197c",	      /* a dash in a pair */
	};

	dcp_fsid_text(&id, buf);
	CHECK_STR(buf, "8822e3f7-337c-4f8b-8b3f-f177b1cc197c");
	CHECK_INT(dcp_fsid_parse(buf, strlen(buf), &back), 0);
	CHECK(!memcmp(back.uuid, id.uuid, 16));
	CHECK_INT(dcp_fsid_parse("8822E3F7-337C-4F8B-8B3F-F177B1CC197C", 36, &back), 0);
	CHECK(!memcmp(back.uuid, id.uuid, 16));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dcp_fsid_parse(bad[i], strlen(bad[i]), &back) != -EINVAL) {
			fprintf(stderr, "uuid \"%s\" was accepted\n", bad[i]);
			check_failures++;
		}
	back.from = DCP_FSID_FSUUID;
	CHECK(dcp_fsid_equal(&id, &back));
	back.uuid[15] ^= 1;
	CHECK(!dcp_fsid_equal(&id, &back));
	/* No UUID is never the same filesystem as another without one. */
	struct dcp_fsid none = { 0 };
	CHECK(!dcp_fsid_equal(&none, &none));
}

static void handle_text(void)
{
	struct dcp_handle h = { 1, 8, { 0x0d, 0, 0, 0, 0x50, 0x9b, 0x6a, 0x4e } }, back;
	char buf[DCP_HANDLE_TEXT];
	static const char *const bad[] = {
		"", ":0d", "1:", "1", "1:0", "1:0d0", "-1:0d", "01:0d", "1:0D", "1:0g", "x:0d",
		"2147483648:0d", "1 :0d", "1:0d ",
	};
	char big[12 + 2 * 129 + 1];

	CHECK_INT(dcp_handle_text(&h, buf), 18);
	CHECK_STR(buf, "1:0d000000509b6a4e");
	CHECK_INT(dcp_handle_parse(buf, strlen(buf), &back), 0);
	CHECK(dcp_handle_equal(&h, &back));
	CHECK_INT(dcp_handle_parse("2147483647:00", 13, &back), 0);
	CHECK_INT(back.type, 2147483647);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (dcp_handle_parse(bad[i], strlen(bad[i]), &back) != -EINVAL) {
			fprintf(stderr, "handle \"%s\" was accepted\n", bad[i]);
			check_failures++;
		}
	/* 128 bytes is the most; 129 is refused. */
	strcpy(big, "77:");
	for (int i = 0; i < 128; i++)
		strcat(big, "ab");
	CHECK_INT(dcp_handle_parse(big, strlen(big), &back), 0);
	CHECK_INT(back.len, 128);
	CHECK_INT(dcp_handle_text(&back, buf), strlen(big));
	CHECK_STR(buf, big);
	strcat(big, "ab");
	CHECK_INT(dcp_handle_parse(big, strlen(big), &back), -EINVAL);
	back = h;
	back.bytes[7] ^= 1;
	CHECK(!dcp_handle_equal(&h, &back));
	back = h;
	back.type = 2;
	CHECK(!dcp_handle_equal(&h, &back));
}

static void descriptors(void)
{
	char dir[] = "/tmp/unit-fsid-XXXXXX", a[64], b[64];
	struct dcp_handle ha, hpath, hb;
	struct dcp_fsid id;
	int fa, pa, fb, ret;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	fa = open(a, O_RDWR | O_CREAT | O_EXCL, 0600);
	fb = open(b, O_RDWR | O_CREAT | O_EXCL, 0600);
	pa = open(a, O_PATH);
	CHECK(fa >= 0 && fb >= 0 && pa >= 0);
	/* An O_PATH descriptor takes no ioctl: no UUID from it, said. */
	CHECK_INT(dcp_fsid_of(pa, &id), -EBADF);
	CHECK_INT(id.from, DCP_FSID_NONE);
	ret = dcp_fsid_of(fa, &id);
	CHECK(ret == 0 || ret == -ENODATA);
	CHECK(ret == 0 ? id.from != DCP_FSID_NONE : id.from == DCP_FSID_NONE);
	ret = dcp_handle_of(fa, &ha);
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr, "unit/fsid: %s gives no handles: the handle checks skipped\n", dir);
	} else {
		CHECK_INT(ret, 0);
		CHECK_INT(dcp_handle_of(pa, &hpath), 0);
		CHECK(dcp_handle_equal(&ha, &hpath));
		CHECK_INT(dcp_handle_of(fb, &hb), 0);
		CHECK(!dcp_handle_equal(&ha, &hb));
	}
	CHECK_INT(dcp_handle_of(-1, &hb), -EBADF);
	close(fa);
	close(fb);
	close(pa);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/* The ioctl requests a kernel may lack (their numbers: tests/faultinject.c). */
#define REQ_FSUUID 0x80111500u /* FS_IOC_GETFSUUID, Linux 6.9 */
#define REQ_EXT4 0x8008662cu   /* EXT4_IOC_GETFSUUID, Linux 6.0 */

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

/* In this (child) process, every ioctl of the requests in REQS fails with ENOTTY. */
static int refuse(const unsigned *reqs, size_t n)
{
#ifdef ARCH
	struct sock_filter f[16];
	unsigned k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, args[1]));
	for (size_t i = 0; i < n && i < 4; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, reqs[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
#else
	(void)reqs;
	(void)n;
	return -ENOSYS;
#endif
}

struct answer {
	int ret;
	struct dcp_fsid id;
};

/*
 * dcp_fsid_of() of FILE in a child with the requests REQS refused, as UID
 * (0: root; else that user, no capabilities).
 */
static struct answer ask(const char *file, const unsigned *reqs, size_t n, uid_t uid)
{
	struct answer a = { -EPROTO, { 0 } };
	int p[2], st;
	pid_t pid;

	if (pipe(p) < 0)
		return a;
	pid = fork();
	if (pid == 0) {
		int fd;

		close(p[0]);
		if (uid && (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0))
			_exit(2);
		if (refuse(reqs, n) < 0)
			_exit(3);
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(4);
		a.ret = dcp_fsid_of(fd, &a.id);
		_exit(write(p[1], &a, sizeof(a)) == sizeof(a) ? 0 : 5);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &a, sizeof(a)) != sizeof(a))
		a.ret = -EPROTO;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	return a;
}

/* Each step of the chain on an ext4 image, in a mount namespace of its own. */
static int fallbacks(void)
{
	char dir[] = "/tmp/unit-fsid-chain-XXXXXX", img[96], mnt[96], file[128], dev[160],
	     link[400], text[DCP_FSID_TEXT], want_text[64] = "";
	static const unsigned fsuuid[] = { REQ_FSUUID }, both[] = { REQ_FSUUID, REQ_EXT4 };
	struct dcp_fsid want = { DCP_FSID_NONE, { 0 } }, id;
	struct answer a;
	struct stat st;
	FILE *f;
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "unit/fsid: not root: the fallback chain is left out\n");
		return 77;
	}
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    !mkdtemp(dir) || mount("unit-fsid", dir, "tmpfs", 0, "mode=0755") < 0) {
		fprintf(stderr, "unit/fsid: no mount namespace of its own: %s\n", strerror(errno));
		return 77;
	}
	snprintf(img, sizeof(img), "%s/e.img", dir);
	snprintf(mnt, sizeof(mnt), "%s/m", dir);
	snprintf(file, sizeof(file), "%s/m/f", dir);
	snprintf(link, sizeof(link), "truncate -s 32M %s && mkfs.ext4 -q -F %s >/dev/null 2>&1",
		 img, img);
	if (system(link) != 0 || mkdir(mnt, 0755) < 0 ||
	    (snprintf(link, sizeof(link), "mount -o loop %s %s", img, mnt), system(link)) != 0) {
		fprintf(stderr, "unit/fsid: no ext4 image (mkfs.ext4, loop devices)\n");
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		return 77;
	}
	fd = open(file, O_RDWR | O_CREAT, 0644);
	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	close(fd);
	/* The UUID, as blkid (the program, not the library) reads it. */
	snprintf(dev, sizeof(dev), "blkid -p -o value -s UUID %s", img);
	f = popen(dev, "r");
	if (f) {
		if (fgets(want_text, sizeof(want_text), f))
			want_text[strcspn(want_text, "\n")] = '\0';
		pclose(f);
	}
	CHECK_INT(dcp_fsid_parse(want_text, strlen(want_text), &want), 0);
	want.from = DCP_FSID_BLKID; /* (parse leaves the source to the caller) */

	/* 1. Nothing refused: FS_IOC_GETFSUUID where the kernel has it. */
	fd = open(file, O_RDONLY);
	{
		struct { uint8_t len, uuid[16]; } u = { 0 };
		bool has = ioctl(fd, REQ_FSUUID, &u) == 0;

		a = ask(file, NULL, 0, 0);
		CHECK_INT(a.ret, 0);
		if (has)
			CHECK_INT(a.id.from, DCP_FSID_FSUUID);
		CHECK(dcp_fsid_equal(&a.id, &want));
	}
	close(fd);

	/* 2. FS_IOC_GETFSUUID refused (Linux 6.1): ext4's own ioctl (6.0). */
	a = ask(file, fsuuid, 1, 0);
	CHECK_INT(a.ret, 0);
	CHECK(a.id.from == DCP_FSID_EXT4 || a.id.from == DCP_FSID_BLKID); /* 5.10: no ext4 ioctl */
	CHECK(dcp_fsid_equal(&a.id, &want));

	/* 3. Both refused (5.10, or a filesystem without an ioctl): root reads
	 * the loop device with libblkid. */
	a = ask(file, both, 2, 0);
	CHECK_INT(a.ret, 0);
	CHECK_INT(a.id.from, DCP_FSID_BLKID);
	CHECK(dcp_fsid_equal(&a.id, &want));
	dcp_fsid_text(&a.id, text);
	CHECK_STR(text, want_text);
	CHECK_INT(dcp_fsid_of_device(st.st_dev, &id), 0);
	CHECK_INT(id.from, DCP_FSID_BLKID);
	CHECK(dcp_fsid_equal(&id, &want));

	/* An anonymous device number (tmpfs, FUSE, NFS): no device to read. */
	CHECK_INT(dcp_fsid_of_device(makedev(0, 42), &id), -ENODEV);
	CHECK_INT(id.from, DCP_FSID_NONE);
	snprintf(link, sizeof(link), "%s/t", dir);
	fd = open(link, O_RDWR | O_CREAT, 0644);
	close(fd);
	a = ask(link, both, 2, 0);
	CHECK_INT(a.ret, -ENODATA);
	CHECK_INT(a.id.from, DCP_FSID_NONE);

	/* A /dev of our own (the image stays mounted): the loop device's node
	 * root's alone, and no /dev/disk/by-uuid yet. */
	snprintf(dev, sizeof(dev), "/dev/loop%u", minor(st.st_dev));
	if (major(st.st_dev) != 7 || mount("unit-fsid-dev", "/dev", "tmpfs", 0, "mode=0755") < 0 ||
	    mknod(dev, S_IFBLK | 0600, st.st_dev) < 0) {
		fprintf(stderr, "unit/fsid: no /dev of its own (%s): by-uuid left out\n", dev);
		umount2(mnt, MNT_DETACH);
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		return 0;
	}
	/* Root still reads it (its node, found through sysfs's DEVNAME). */
	a = ask(file, both, 2, 0);
	CHECK_INT(a.ret, 0);
	CHECK_INT(a.id.from, DCP_FSID_BLKID);

	/* 4. nobody may not open the device, and no link names it: -EACCES. */
	a = ask(file, both, 2, 65534);
	CHECK_INT(a.ret, -EACCES);
	CHECK_INT(a.id.from, DCP_FSID_NONE);

	/* Links that must not count: one to another device, one whose name
	 * is no UUID, one to a character device of the same number. */
	CHECK_INT(mkdir("/dev/disk", 0755), 0);
	CHECK_INT(mkdir("/dev/disk/by-uuid", 0755), 0);
	CHECK_INT(mknod("/dev/other", S_IFBLK | 0600, makedev(7, 250)), 0);
	CHECK_INT(mknod("/dev/chr", S_IFCHR | 0600, st.st_dev), 0);
	CHECK_INT(symlink("../../other", "/dev/disk/by-uuid/11111111-2222-3333-4444-555555555555"), 0);
	CHECK_INT(symlink("../../chr", "/dev/disk/by-uuid/11111111-2222-3333-4444-666666666666"), 0);
	snprintf(link, sizeof(link), "../../loop%u", minor(st.st_dev));
	CHECK_INT(symlink(link, "/dev/disk/by-uuid/ABCD-1234"), 0);
	a = ask(file, both, 2, 65534);
	CHECK_INT(a.ret, -EACCES);

	/* 5. The link udev makes: nobody has the UUID from its name. */
	snprintf(text, sizeof(text), "%s", want_text);
	{
		char name[128];

		snprintf(name, sizeof(name), "/dev/disk/by-uuid/%s", want_text);
		CHECK_INT(symlink(link, name), 0);
	}
	a = ask(file, both, 2, 65534);
	CHECK_INT(a.ret, 0);
	CHECK_INT(a.id.from, DCP_FSID_BYUUID);
	CHECK(dcp_fsid_equal(&a.id, &want));

	/* A directory anyone may write is no one's word: not read. */
	CHECK_INT(chmod("/dev/disk/by-uuid", 0777), 0);
	a = ask(file, both, 2, 65534);
	CHECK_INT(a.ret, -EACCES);
	CHECK_INT(chmod("/dev/disk/by-uuid", 0755), 0);

	/* Two links naming the device with two UUIDs: neither. */
	CHECK_INT(symlink(link, "/dev/disk/by-uuid/99999999-2222-3333-4444-555555555555"), 0);
	a = ask(file, both, 2, 65534);
	CHECK_INT(a.ret, -EACCES);

	/* The names dcp_fsid_from_name() gives read back. */
	for (int k = DCP_FSID_FSUUID; k <= DCP_FSID_BYUUID; k++) {
		const char *nm = dcp_fsid_from_name((enum dcp_fsid_from)k);

		CHECK_INT(dcp_fsid_from_parse(nm, strlen(nm)), k);
	}
	CHECK_INT(dcp_fsid_from_parse("none", 4), -EINVAL);
	CHECK_INT(dcp_fsid_from_parse("blkidx", 6), -EINVAL);
	umount2("/dev", MNT_DETACH);
	umount2(mnt, MNT_DETACH); /* the loop device goes with it (autoclear) */
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	return 0;
}

int main(void)
{
	int ret;

	uuid_text();
	handle_text();
	descriptors();
	/* Last: it leaves this process in a mount namespace of its own. */
	ret = fallbacks();
	if (ret == 77 && !check_failures)
		fprintf(stderr, "unit/fsid: the fallback chain was not tested here\n");
	return CHECK_DONE();
}
