// SPDX-License-Identifier: MIT
/*
 * faultinject - run a command with chosen system calls failing.
 *
 *   faultinject [-v] SYSCALL[:REQUEST]=ERRNO... -- COMMAND [ARG...]
 *
 * Installs a seccomp BPF filter (no_new_privs + SECCOMP_SET_MODE_FILTER)
 * whose rule for each SYSCALL is SECCOMP_RET_ERRNO(ERRNO), then execs
 * COMMAND: the filter is inherited across execve and by every thread and
 * child, so the command meets exactly the kernel a restrictive container
 * profile or an old kernel would show it.  SYSCALL is a name from the
 * table below or a number; ERRNO a symbolic name (ENOSYS) or a number.
 *
 * BPF sees only the syscall number and register arguments, not the
 * memory they point to: "openat2=EINVAL" fails every openat2 call, which
 * is what a kernel without RESOLVE_CACHED does to the calls that use it
 * (and dcprobe uses openat2 for nothing else).  SYSCALL:REQUEST fails
 * only the calls whose second argument is REQUEST (a number, or a name
 * from the table of ioctl requests below): "ioctl:FS_IOC_GETFSUUID=ENOTTY"
 * is a kernel before Linux 6.9 to a program asking a filesystem's UUID,
 * while every other ioctl still works.  (The low 32 bits are compared:
 * the kernel takes an ioctl's request as an unsigned int.)  "tmpfile" is
 * no system call: it fails the openat (and open) calls whose flags hold
 * O_TMPFILE, as a filesystem that makes no unnamed file does
 * ("tmpfile=EOPNOTSUPP"), every other open working.
 *
 * A test tool, built into build/tests, never installed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FI_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FI_ARCH AUDIT_ARCH_AARCH64
#else
#error "faultinject: add this architecture's AUDIT_ARCH value"
#endif

/* Numbers that old headers may lack; the ABI fixes them (asm-generic). */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#define SYS_io_uring_register 427
#endif

static const struct {
	const char *name;
	long nr;
} syscalls[] = {
	{ "openat2", SYS_openat2 },
	{ "openat", SYS_openat },
	{ "io_uring_setup", SYS_io_uring_setup },
	{ "io_uring_enter", SYS_io_uring_enter },
	{ "io_uring_register", SYS_io_uring_register },
	{ "getdents64", SYS_getdents64 },
	{ "newfstatat", SYS_newfstatat },
	{ "statx", SYS_statx },
	{ "fstat", SYS_fstat },
	{ "close", SYS_close },
	{ "read", SYS_read },
	{ "write", SYS_write },
	{ "readlinkat", SYS_readlinkat },
	{ "fadvise64", SYS_fadvise64 },
	{ "readahead", SYS_readahead },
	{ "mmap", SYS_mmap },
	{ "mincore", SYS_mincore },
	{ "cachestat", SYS_cachestat },
	{ "memfd_create", SYS_memfd_create },
	{ "clone3", SYS_clone3 },
	{ "ioctl", SYS_ioctl },
	{ "socket", SYS_socket },
	{ "bind", SYS_bind },
	{ "fanotify_init", SYS_fanotify_init },
	{ "fanotify_mark", SYS_fanotify_mark },
	{ "open_by_handle_at", SYS_open_by_handle_at },
	{ "name_to_handle_at", SYS_name_to_handle_at },
	{ "pidfd_open", SYS_pidfd_open },
#ifdef SYS_open
	{ "open", SYS_open },
	{ "stat", SYS_stat },
	{ "lstat", SYS_lstat },
#endif
};

/* ioctl requests by name (their numbers on every architecture dcprobe builds for). */
static const struct {
	const char *name;
	unsigned long req;
} requests[] = {
	{ "FS_IOC_GETFSUUID", 0x80111500UL },	   /* _IOR(0x15, 0, struct fsuuid2) */
	{ "EXT4_IOC_GETFSUUID", 0x8008662cUL },    /* _IOR('f', 44, struct fsuuid) */
	{ "XFS_IOC_FSGEOMETRY_V1", 0x80705864UL }, /* _IOR('X', 100, xfs_fsop_geom_v1) */
	{ "BTRFS_IOC_FS_INFO", 0x8400941fUL },	   /* _IOR(0x94, 31, 1024 bytes) */
};

#define MAX_RULES 32

static void usage(void)
{
	fprintf(stderr, "usage: faultinject [-v] SYSCALL[:REQUEST]=ERRNO... -- COMMAND [ARG...]\n"
			"       (SYSCALL \"tmpfile\": the opens with O_TMPFILE)\n");
	exit(64);
}

static long parse_num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return -1;
	return v;
}

static long syscall_nr(const char *name)
{
	for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
		if (strcmp(syscalls[i].name, name) == 0)
			return syscalls[i].nr;
	return parse_num(name);
}

static long request_value(const char *name)
{
	char *end;
	unsigned long v;

	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		if (strcmp(requests[i].name, name) == 0)
			return (long)requests[i].req;
	errno = 0;
	v = strtoul(name, &end, 0);
	if (errno || end == name || *end || v > 0xffffffffUL)
		return -1;
	return (long)v;
}

static int errno_value(const char *name)
{
	long v = parse_num(name);

	if (v > 0 && v <= SECCOMP_RET_DATA)
		return (int)v;
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return -1;
}

/* __O_TMPFILE without O_DIRECTORY (the uapi's value on x86-64 and arm64). */
#define FI_O_TMPFILE 020000000u

/*
 * Append to PROG at N: call NR whose argument ARG (its flags) holds
 * O_TMPFILE fails with ERR; the number loaded again for the rules after.
 */
static unsigned tmpfile_rule(struct sock_filter *prog, unsigned n, long nr, unsigned arg, int err)
{
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 3);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 (unsigned)offsetof(struct seccomp_data, args[0]) +
							 8 * arg);
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, FI_O_TMPFILE, 0, 1);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
	return n;
}

int main(int argc, char **argv)
{
	struct sock_filter prog[4 + 6 * MAX_RULES + 1];
	unsigned n = 0, nrules = 0;
	bool verbose = false;
	int i = 1;

	if (i < argc && strcmp(argv[i], "-v") == 0) {
		verbose = true;
		i++;
	}
	/* Refuse foreign-architecture calls: their numbers mean other things. */
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FI_ARCH, 1, 0);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		char *eq = strchr(argv[i], '='), *colon;
		long nr, req = -1;
		int err;

		if (!eq || nrules >= MAX_RULES)
			usage();
		*eq = '\0';
		if (strcmp(argv[i], "tmpfile") == 0) {
			if (nrules + 2 > MAX_RULES)
				usage();
			err = errno_value(eq + 1);
			if (err < 0) {
				fprintf(stderr, "faultinject: unknown errno: %s\n", eq + 1);
				exit(64);
			}
			n = tmpfile_rule(prog, n, SYS_openat, 2, err);
#ifdef SYS_open
			n = tmpfile_rule(prog, n, SYS_open, 1, err);
#endif
			nrules += 2;
			continue;
		}
		colon = strchr(argv[i], ':');
		if (colon) {
			*colon = '\0';
			req = request_value(colon + 1);
			if (req < 0) {
				fprintf(stderr, "faultinject: unknown request: %s\n", colon + 1);
				exit(64);
			}
		}
		nr = syscall_nr(argv[i]);
		err = errno_value(eq + 1);
		if (nr < 0 || err < 0) {
			fprintf(stderr, "faultinject: unknown %s: %s\n",
				nr < 0 ? "system call" : "errno", nr < 0 ? argv[i] : eq + 1);
			exit(64);
		}
		if (verbose)
			fprintf(stderr, "faultinject: %s (%ld)%s%s fails with %s (%d)\n",
				argv[i], nr, colon ? " request " : "", colon ? colon + 1 : "",
				strerrorname_np(err), err);
		if (req < 0) {
			prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								 (unsigned)nr, 0, 1);
			prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
								 SECCOMP_RET_ERRNO | (unsigned)err);
		} else {
			/* The call, then its second argument's low word (little
			 * endian), then the number again for the rules after. */
			prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								 (unsigned)nr, 0, 3);
			prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
								 offsetof(struct seccomp_data, args[1]));
			prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								 (unsigned)req, 0, 1);
			prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
								 SECCOMP_RET_ERRNO | (unsigned)err);
			prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
								 offsetof(struct seccomp_data, nr));
		}
		nrules++;
	}
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	if (i >= argc - 1 || nrules == 0)
		usage();

	struct sock_fprog fprog = { .len = (unsigned short)n, .filter = prog };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("faultinject: PR_SET_NO_NEW_PRIVS");
		exit(70);
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) < 0) {
		perror("faultinject: seccomp");
		exit(70);
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "faultinject: %s: %s\n", argv[i + 1], strerror(errno));
	exit(errno == ENOENT ? 127 : 126);
}
