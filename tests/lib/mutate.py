#!/usr/bin/env python3
"""mutate.py - change a tree while it is being walked, for a bounded time.

  mutate.py setup ROOT OUTSIDE
      make ROOT (churn/, swap/, swap_alt -> OUTSIDE, mv_a/) and OUTSIDE
      (with the file SENTINEL-outside-the-root, which no walk of ROOT
      without -L may ever report)
  mutate.py run ROOT SECONDS STOPFILE
      until SECONDS passed or STOPFILE exists: exchange swap/ with the
      symlink swap_alt (renameat2 RENAME_EXCHANGE, atomic: the name "swap"
      is a directory one instant and a symlink out of the tree the next),
      delete and re-create directories under churn/, rename mv_a <-> mv_b,
      create and delete files.  Prints the number of rounds.
"""
import ctypes
import os
import random
import shutil
import sys
import time

RENAME_EXCHANGE = 2
AT_FDCWD = -100
libc = ctypes.CDLL(None, use_errno=True)


def exchange(a, b):
    if libc.renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


def fill(d, n):
    os.mkdir(d)
    for i in range(n):
        open(os.path.join(d, "f%d" % i), "w").close()


def setup(root, outside):
    os.mkdir(outside)
    open(os.path.join(outside, "SENTINEL-outside-the-root"), "w").close()
    os.mkdir(os.path.join(outside, "SENTINEL-dir"))
    open(os.path.join(outside, "SENTINEL-dir", "SENTINEL-deeper"), "w").close()
    os.mkdir(root)
    os.mkdir(os.path.join(root, "churn"))
    for i in range(40):
        fill(os.path.join(root, "churn", "d%d" % i), 3)
    fill(os.path.join(root, "swap"), 3)
    os.symlink(os.path.relpath(outside, root), os.path.join(root, "swap_alt"))
    fill(os.path.join(root, "mv_a"), 5)


def run(root, seconds, stopfile):
    deadline = time.monotonic() + seconds
    rnd = random.Random(1)
    rounds = 0
    churn = os.path.join(root, "churn")
    while time.monotonic() < deadline and not os.path.exists(stopfile):
        exchange(os.path.join(root, "swap"), os.path.join(root, "swap_alt"))
        for _ in range(4):
            d = os.path.join(churn, "d%d" % rnd.randrange(40))
            shutil.rmtree(d, ignore_errors=True)
            fill(d, 3)
        a, b = os.path.join(root, "mv_a"), os.path.join(root, "mv_b")
        if os.path.exists(a):
            os.rename(a, b)
        else:
            os.rename(b, a)
        t = os.path.join(root, "tmp%d" % (rounds % 8))
        if os.path.exists(t):
            os.unlink(t)
        else:
            open(t, "w").close()
        rounds += 1
    print(rounds)


def main():
    if sys.argv[1] == "setup":
        setup(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "run":
        run(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        sys.exit("mutate.py: unknown mode")


if __name__ == "__main__":
    main()
