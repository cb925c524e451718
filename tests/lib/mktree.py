#!/usr/bin/env python3
"""mktree.py - build the trees the reliability suites walk, in one process.

  mktree.py deepwide DIR [DEPTH [WIDTH]]
      a chain DEPTH directories deep, each level with 3 files and 2 side
      directories holding 2 files each, plus a directory of WIDTH
      subdirectories with one file each: many directories open at once
      for a walker that keeps descriptors
  mktree.py hostile DIR
      names with newlines, tabs, terminal escapes (an OSC retitle, CSI,
      C1 controls, bidi overrides), invalid UTF-8, 255-byte names, FIFOs,
      sockets, device nodes, dangling and looping symlinks
  mktree.py deep DIR BYTES
      one chain of 255-byte directory names whose full path is longer than
      BYTES (past PATH_MAX), built with directory descriptors
  mktree.py chain DIR LEVELS [SIDEDIRS]
      a chain LEVELS directories deep, each level holding the next one
      ("d") and two siblings: empty files, or empty directories with
      SIDEDIRS=1 (whose parent a walker must keep or reopen); made
      relative to descriptors
  mktree.py grid DIR DIRS FILES
      DIRS directories of FILES empty files each (big directories, many
      at once, in one process)
  mktree.py many DIR COUNT [HOSTILE]
      COUNT empty regular files in one directory (mknod: one syscall each);
      with HOSTILE=1 each name holds an OSC retitle, a CSI and a byte that
      is not UTF-8
  mktree.py list DIR
      print every path below DIR (DIR included) as JSON list of base64
      strings, the expected set for a walk: os.walk without following links
  mktree.py follow DIR
      print every path a walk that follows symlinks (-L) reaches from DIR,
      one per line (DIR included): every entry, and below every directory
      reached, by its name or through links, except one that is already
      being walked on the way down from DIR (a loop: the link is a path,
      what lies behind it is not walked again).  The loops go to stderr,
      one per line.  Names must hold no newline.

Prints the number of entries created (or the list) on stdout.
"""
import base64
import json
import os
import socket
import stat
import sys


def deepwide(root, depth=64, width=200):
    n = 0
    d = root
    for i in range(depth):
        for f in range(3):
            open(os.path.join(d, "f%d" % f), "w").close()
            n += 1
        for s in range(2):
            side = os.path.join(d, "side%d" % s)
            os.mkdir(side)
            n += 1
            for f in range(2):
                open(os.path.join(side, "g%d" % f), "w").close()
                n += 1
        d = os.path.join(d, "d%d" % i)
        os.mkdir(d)
        n += 1
    wide = os.path.join(root, "wide")
    os.mkdir(wide)
    n += 1
    for i in range(width):
        sub = os.path.join(wide, "w%d" % i)
        os.mkdir(sub)
        open(os.path.join(sub, "x"), "w").close()
        n += 2
    return n


HOSTILE_NAMES = [
    b"new\nline",
    b"tab\tname",
    b"cr\rname",
    b"\x1b]0;pwned by a file name\x07",          # OSC: retitle the terminal
    b"\x1b[31mred\x1b[0m",                       # CSI colour
    b"\x1b[2J\x1b[Hclear",                       # clear the screen
    b"c1\xc2\x9b31mcsi",                         # U+009B, the 8-bit CSI
    b"bidi\xe2\x80\xaetxt.exe",                  # U+202E right-to-left override
    b"del\x7fname",
    b"bell\x07",
    b"back\\slash",
    b'quote"name',
    b"invalid\xff\xfeutf8",
    b"overlong\xc0\xaf",
    b"surrogate\xed\xa0\x80",
    b"lone\x80cont",
    b"x" * 255,                                  # the longest name
    "é".encode() * 127 + b"e",                   # 255 bytes of UTF-8
    b"\xff" * 255,                               # 255 bytes, none UTF-8
    b"-n",
    b" leading space",
    b"trailing space ",
    b"emoji\xf0\x9f\x92\xa5",
]


def hostile(root):
    n = 0
    for name in HOSTILE_NAMES:
        open(os.path.join(os.fsencode(root), name), "w").close()
        n += 1
    # A directory with a hostile name holding one more hostile file.
    d = os.path.join(os.fsencode(root), b"dir\n\x1b]0;x\x07\xff")
    os.mkdir(d)
    open(os.path.join(d, b"inner\x1b[1m\xfe"), "w").close()
    n += 2
    os.mkfifo(os.path.join(root, "fifo"))
    n += 1
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(os.path.join(root, "socket"))
    s.close()
    n += 1
    os.mknod(os.path.join(root, "null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(os.path.join(root, "blockdev"), 0o600 | stat.S_IFBLK, os.makedev(7, 250))
    n += 2
    os.symlink("nowhere", os.path.join(root, "dangling"))
    os.symlink("loop_b", os.path.join(root, "loop_a"))
    os.symlink("loop_a", os.path.join(root, "loop_b"))
    os.symlink("self", os.path.join(root, "self"))
    os.symlink(".", os.path.join(root, "dot"))          # a directory cycle under -L
    os.symlink("..", os.path.join(d, b"up"))
    os.symlink(os.path.join(os.fsencode(root), b"new\nline"),
               os.path.join(os.fsencode(root), b"link\x1b[5m"))
    n += 7
    return n


def deep(root, nbytes):
    """A chain whose full path exceeds NBYTES, made relative to descriptors."""
    name = b"d" * 255
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    total, n = len(os.fsencode(root)), 0
    while total <= nbytes:
        os.mkdir(name, dir_fd=fd)
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
        total += 256
        n += 1
    # A file at the bottom, so the deepest entry is not a directory.
    os.close(os.open(b"bottom", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.close(fd)
    return n + 1


def chain(root, levels, sidedirs=0):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(levels):
        for s in ("a", "b"):
            if sidedirs:
                os.mkdir(s, dir_fd=fd)
            else:
                os.close(os.open(s, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        os.mkdir("d", dir_fd=fd)
        nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)
    return 3 * levels


def many(root, count, hostile=0):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    mode = stat.S_IFREG | 0o644
    fmt = b"\x1b]0;pwn\x07%07d\x1b[31m\xff" if hostile else b"%07d"
    for i in range(count):
        os.mknod(fmt % i, mode, dir_fd=fd)
    os.close(fd)
    return count


def grid(root, dirs, files):
    for d in range(dirs):
        sub = os.path.join(root, "d%d" % d)
        os.mkdir(sub)
        many(sub, files)
    return dirs * (files + 1)


def listing(root):
    out = [os.fsencode(root)]
    for d, dirs, files in os.walk(os.fsencode(root)):
        for x in dirs + files:
            out.append(os.path.join(d, x))
    return [base64.b64encode(p).decode() for p in out]


def follow(root):
    out, loops = [root], []

    def walk(d, above):
        for e in sorted(os.scandir(d), key=lambda e: e.name):
            out.append(e.path)
            try:
                if not e.is_dir(follow_symlinks=True):
                    continue
                st = os.stat(e.path)
            except OSError:
                continue  # a dangling link: a path, nothing below
            key = (st.st_dev, st.st_ino)
            if key in above:
                loops.append(e.path)
            else:
                walk(e.path, above | {key})

    st = os.stat(root)
    walk(root, {(st.st_dev, st.st_ino)})
    return out, loops


def main():
    mode, root = sys.argv[1], sys.argv[2]
    args = [int(a) for a in sys.argv[3:]]
    if mode == "deepwide":
        print(deepwide(root, *args))
    elif mode == "hostile":
        print(hostile(root))
    elif mode == "deep":
        print(deep(root, *args))
    elif mode == "chain":
        print(chain(root, *args))
    elif mode == "grid":
        print(grid(root, *args))
    elif mode == "many":
        print(many(root, *args))
    elif mode == "list":
        print(json.dumps(listing(root)))
    elif mode == "follow":
        paths, loops = follow(root)
        print("\n".join(paths))
        for p in loops:
            print(p, file=sys.stderr)
    else:
        sys.exit("mktree.py: unknown mode " + mode)


if __name__ == "__main__":
    main()
