#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pin.py LIST - hold the cached state of the paths LIST names (one a line)
until killed, so that nothing between a prober and a program can change a
figure: this machine's DAMON pageout reclaims idle page cache within
seconds (tests/README.md, "Known limits"), and dentries go under memory
pressure.

For every path: an O_PATH descriptor (its dentry and inode stay), and for
a regular file exactly its resident pages mlock'ed (mlocked pages are
unevictable): the file is mapped read-only with MADV_RANDOM (a fault reads
no neighbour ahead), mincore says which pages are resident, and only those
are locked, so residency is held as it is, never changed.  Only the paths
the caller made cached belong in LIST: an open looks a path up.  Prints
"pinned FILES PAGES" on stdout when done, then sleeps.
"""
import ctypes
import mmap
import os
import resource
import signal
import stat
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
MAP_FAILED = ctypes.c_void_p(-1).value
PS = os.sysconf("SC_PAGESIZE")


def die(msg):
    sys.stderr.write("pin.py: %s\n" % msg)
    sys.exit(2)


def pin_pages(path, held):
    """mlock the resident pages of regular file PATH; how many."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    held.append(fd)
    size = os.fstat(fd).st_size
    if not size:
        return 0
    addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if addr in (None, MAP_FAILED):
        die("mmap %s: %s" % (path, os.strerror(ctypes.get_errno())))
    if libc.madvise(addr, size, mmap.MADV_RANDOM) != 0:
        die("madvise %s: %s" % (path, os.strerror(ctypes.get_errno())))
    npages = (size + PS - 1) // PS
    vec = ctypes.create_string_buffer(npages)
    if libc.mincore(addr, size, vec) != 0:
        die("mincore %s: %s" % (path, os.strerror(ctypes.get_errno())))
    n = 0
    i = 0
    while i < npages:
        if not vec.raw[i] & 1:
            i += 1
            continue
        j = i
        while j < npages and vec.raw[j] & 1:
            j += 1
        if libc.mlock(addr + i * PS, (j - i) * PS) != 0:
            die("mlock %s: %s" % (path, os.strerror(ctypes.get_errno())))
        n += j - i
        i = j
    return n


def main():
    if len(sys.argv) != 2:
        die("usage: pin.py LIST")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held, files, pages = [], 0, 0
    with open(sys.argv[1]) as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    for p in paths:
        fd = os.open(p, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        held.append(fd)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            files += 1
            pages += pin_pages(p, held)
    print("pinned %d %d" % (files, pages), flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
