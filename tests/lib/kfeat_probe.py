#!/usr/bin/python3
# kfeat_probe.py - an independent prober of the kernel mechanisms that
# dcache-probe --diagnose reports: each asked here with ctypes and the
# system call numbers, not through libdcprobe.  Prints one line per
# mechanism it can ask: "NAME STATE ERRNO" (ERRNO "-" when present).
#   present  the call did its work
#   blocked  EPERM or EACCES (a filter, a sysctl, a missing privilege)
#   absent   any other refusal (ENOSYS, EINVAL, ENOTTY, EOPNOTSUPP...)
# Run it under the same faultinject filter as the command to compare.
import ctypes
import errno
import fcntl
import mmap
import os
import socket
import struct
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

NR = {"openat2": 437, "io_uring_setup": 425, "io_uring_register": 427,
      "cachestat": 451, "pidfd_open": 434, "open_by_handle_at": 304,
      "name_to_handle_at": 303, "statx": 332}
if os.uname().machine == "aarch64":
    NR.update({"open_by_handle_at": 265, "name_to_handle_at": 264, "statx": 291})


def call(nr, *args):
    ret = libc.syscall(ctypes.c_long(nr), *args)
    return ret, (ctypes.get_errno() if ret < 0 else 0)


def verdict(err):
    if err == POSTED:
        return "absent", "-"
    if err == 0:
        return "present", "-"
    name = errno.errorcode.get(err, str(err))
    return ("blocked" if err in (errno.EPERM, errno.EACCES) else "absent"), name


def close(fd):
    if fd >= 0:
        os.close(fd)


def resolve_cached():
    how = struct.pack("QQQ", os.O_PATH | os.O_CLOEXEC, 0, 0x20)
    fd, err = call(NR["openat2"], ctypes.c_int(-100), b"/", how, ctypes.c_size_t(len(how)))
    close(fd)
    return err


def statx_mnt_id():
    buf = ctypes.create_string_buffer(256)
    ret, err = call(NR["statx"], ctypes.c_int(-100), b"/", ctypes.c_int(0x2000),
                    ctypes.c_uint(0x1000), buf)
    if err:
        return err
    return 0 if struct.unpack_from("I", buf.raw, 0)[0] & 0x1000 else errno.EINVAL


def ring(flags=0):
    params = bytearray(120)
    struct.pack_into("I", params, 8, flags)
    p = ctypes.create_string_buffer(bytes(params), 120)
    return call(NR["io_uring_setup"], ctypes.c_uint(2), p)


def io_uring():
    fd, err = ring()
    close(fd)
    return err


POSTED = "posted"  # the flag exists, but an io-wq worker posts its completion itself


def defer_taskrun():
    """A NOP forced to io-wq (IOSQE_ASYNC) on a SINGLE_ISSUER | DEFER_TASKRUN
    | TASKRUN_FLAG ring, and no call that asks for completions: a kernel
    that leaves the worker's completion to this task sets IORING_SQ_TASKRUN
    in the shared ring; one that does not posts the completion there."""
    params = bytearray(120)
    struct.pack_into("I", params, 8, (1 << 12) | (1 << 13) | (1 << 9))
    p = ctypes.create_string_buffer(bytes(params), 120)
    fd, err = call(NR["io_uring_setup"], ctypes.c_uint(2), p)
    if err:
        return err
    raw = p.raw
    sq_entries, cq_entries, _, _, _, features = struct.unpack_from("6I", raw, 0)
    sq_head, sq_tail, sq_mask, _, sq_flags, _, sq_array = struct.unpack_from("7I", raw, 40)
    cq_head, cq_tail, _, _, _, cqes = struct.unpack_from("6I", raw, 80)
    sq_size = sq_array + sq_entries * 4
    cq_size = cqes + cq_entries * 16
    single = features & 1  # IORING_FEAT_SINGLE_MMAP
    if single:
        sq_size = cq_size = max(sq_size, cq_size)
    sq = mmap.mmap(fd, sq_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
    cq = sq if single else mmap.mmap(fd, cq_size, mmap.MAP_SHARED,
                                     mmap.PROT_READ | mmap.PROT_WRITE, offset=0x8000000)
    sqes = mmap.mmap(fd, sq_entries * 64, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                     offset=0x10000000)
    try:
        # One NOP (opcode 0) with IOSQE_ASYNC (1 << 4), user_data 1.
        sqes[0:64] = struct.pack("BBHiQQIIQ", 0, 1 << 4, 0, -1, 0, 0, 0, 0, 1) + bytes(24)
        tail = struct.unpack_from("I", sq, sq_tail)[0]
        struct.pack_into("I", sq, sq_array + (tail & struct.unpack_from("I", sq, sq_mask)[0]) * 4, 0)
        struct.pack_into("I", sq, sq_tail, tail + 1)
        ret, err = call(426, ctypes.c_int(fd), ctypes.c_uint(1), ctypes.c_uint(0),
                        ctypes.c_uint(0), None, ctypes.c_size_t(0))  # io_uring_enter
        if err:
            return err
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5.0:
            if struct.unpack_from("I", cq, cq_tail)[0] != struct.unpack_from("I", cq, cq_head)[0]:
                return POSTED
            if struct.unpack_from("I", sq, sq_flags)[0] & 4:  # IORING_SQ_TASKRUN
                return 0
            time.sleep(0.0001)
        return POSTED  # neither within 5 s: not exact either
    finally:
        sqes.close()
        if not single:
            cq.close()
        sq.close()
        os.close(fd)


def sparse_files():
    fd, err = ring()
    if err:
        return err
    reg = ctypes.create_string_buffer(struct.pack("IIQQQ", 2, 1, 0, 0, 0), 32)
    ret, err = call(NR["io_uring_register"], ctypes.c_int(fd), ctypes.c_uint(13), reg,
                    ctypes.c_uint(32))  # IORING_REGISTER_FILES2, RSRC_REGISTER_SPARSE
    os.close(fd)
    return err


def memfd():
    fd = os.memfd_create("kfeat-probe")
    os.ftruncate(fd, 4096)
    return fd


def cachestat():
    fd = memfd()
    rng = ctypes.create_string_buffer(16)
    cs = ctypes.create_string_buffer(40)
    ret, err = call(NR["cachestat"], ctypes.c_int(fd), rng, cs, ctypes.c_uint(0))
    os.close(fd)
    return err


def fsuuid():
    FS_IOC_GETFSUUID = (2 << 30) | (17 << 16) | (0x15 << 8) | 0
    err = errno.ENOTTY
    for fd in (os.open("/", os.O_RDONLY | os.O_DIRECTORY), memfd()):
        try:
            fcntl.ioctl(fd, FS_IOC_GETFSUUID, bytearray(17))
            err = 0
        except OSError as e:
            if e.errno not in (errno.ENOTTY, errno.EINVAL, errno.EOPNOTSUPP):
                err = err and e.errno
        os.close(fd)
        if err == 0:
            break
    return err


def handle(flags, path=b"/", dirfd=-100):
    fh = ctypes.create_string_buffer(struct.pack("Ii", 128, 0) + bytes(128))
    mnt = ctypes.c_int(0)
    ret, err = call(NR["name_to_handle_at"], ctypes.c_int(dirfd), path, fh, ctypes.byref(mnt),
                    ctypes.c_int(flags))
    return fh, err


def handle_fid():
    fh, err = handle(0x200)  # AT_HANDLE_FID
    return 0 if err in (0, errno.EOPNOTSUPP, errno.EOVERFLOW) else err


def open_by_handle():
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    fh, err = handle(0)
    if err:
        fh = ctypes.create_string_buffer(struct.pack("Ii", 8, 1) + bytes(128))
    fd, err = call(NR["open_by_handle_at"], ctypes.c_int(root), fh,
                   ctypes.c_int(os.O_PATH | os.O_CLOEXEC))
    close(fd)
    os.close(root)
    return 0 if err not in (errno.ENOSYS, errno.EPERM, errno.EACCES) else err


FAN = 0x00000001 | 0x00000002 | 0x00000c00 | 0x00000200  # CLOEXEC NONBLOCK DFID_NAME FID


def fan_group(extra=0):
    fd = libc.fanotify_init(ctypes.c_uint(FAN | extra), ctypes.c_uint(os.O_RDONLY | 0o100000))
    return fd, (ctypes.get_errno() if fd < 0 else 0)


def fanotify(extra=0):
    fd, err = fan_group(extra)
    close(fd)
    return err


def mark_ignore():
    fd, err = fan_group()
    if err:
        return err
    # FAN_MARK_ADD | FAN_MARK_IGNORE | IGNORED_SURV_MODIFY | EVICTABLE on "/"
    mask = 0x20 | 0x40000000 | 0x08000000  # FAN_OPEN | FAN_ONDIR | FAN_EVENT_ON_CHILD
    ret = libc.fanotify_mark(ctypes.c_int(fd), ctypes.c_uint(0x1 | 0x400 | 0x40 | 0x200),
                             ctypes.c_uint64(mask), ctypes.c_int(-100), b"/")
    err = ctypes.get_errno() if ret < 0 else 0
    os.close(fd)
    return err


def pidfd(what):
    fd, err = call(NR["pidfd_open"], ctypes.c_int(os.getpid()), ctypes.c_uint(0))
    if err:
        return err
    if what == "info":
        PIDFD_GET_INFO = (3 << 30) | (64 << 16) | (0xFF << 8) | 11
        buf = bytearray(struct.pack("Q", 1) + bytes(56))
        try:
            fcntl.ioctl(fd, PIDFD_GET_INFO, buf)
        except OSError as e:
            err = e.errno
    elif what == "fs":
        sfs = ctypes.create_string_buffer(120)
        if libc.fstatfs(ctypes.c_int(fd), sfs) < 0:
            err = ctypes.get_errno()
        elif struct.unpack_from("l", sfs.raw, 0)[0] != 0x50494446:
            err = errno.ENOENT
    os.close(fd)
    return err


def proc_connector():
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 11)  # NETLINK_CONNECTOR
    except OSError as e:
        return e.errno
    try:
        s.bind((0, 1))  # CN_IDX_PROC
        return 0
    except OSError as e:
        return e.errno
    finally:
        s.close()


PROBES = [
    ("resolve-cached", resolve_cached),
    ("statx-mnt-id", statx_mnt_id),
    ("io-uring", io_uring),
    ("uring-defer-taskrun", defer_taskrun),
    ("uring-sparse-files", sparse_files),
    ("cachestat", cachestat),
    ("fsuuid", fsuuid),
    ("handle-fid", handle_fid),
    ("open-by-handle", open_by_handle),
    ("fanotify-dfid-name", fanotify),
    ("fanotify-pidfd", lambda: fanotify(0x80) if fanotify() == 0 else fanotify()),
    ("fanotify-mark-ignore", mark_ignore),
    ("pidfd-open", lambda: pidfd("open")),
    ("pidfd-info", lambda: pidfd("info")),
    ("pidfs", lambda: pidfd("fs")),
    ("proc-connector", proc_connector),
]

for name, probe in PROBES:
    state, err = verdict(probe())
    if name == "pidfs" and err == "ENOENT":
        err = "-"
    print(name, state, err)
