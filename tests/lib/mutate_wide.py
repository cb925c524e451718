#!/usr/bin/env python3
"""mutate_wide.py - rename and remove entries of one wide directory while a
walk lists it (issue 26), touching nothing else.

  mutate_wide.py DIR READY STOP
      Works relative to a descriptor of DIR (DIR itself is looked up once,
      so nothing outside its own names is warmed).  Round after round until
      the file STOP exists: renames every mNNNN to rNNNN and back, unlinks
      every uNNNN and makes it again, removes every empty directory eNN and
      makes it again, in a shuffled order.  Creates READY after its first
      change.  On STOP it puts every name back as it was (mNNNN, uNNNN,
      eNN present; no rNNNN), so the next run starts from the same tree,
      and prints the number of changes it made.
"""
import os
import random
import sys


def main():
    d, ready, stop = sys.argv[1:4]
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    names = os.listdir(fd)
    ms = sorted(n for n in names if n.startswith("m"))
    us = sorted(n for n in names if n.startswith("u"))
    es = sorted(n for n in names if n.startswith("e"))
    ops = [("m", n) for n in ms] + [("u", n) for n in us] + [("e", n) for n in es]
    rnd = random.Random(26)
    changes = 0
    state = {}  # name -> True when changed (renamed away, removed)
    while not os.path.exists(stop):
        rnd.shuffle(ops)
        for i, (kind, n) in enumerate(ops):
            if i % 64 == 0 and os.path.exists(stop):
                break
            gone = state.get(n, False)
            if kind == "m":
                r = "r" + n[1:]
                os.rename(r if gone else n, n if gone else r, src_dir_fd=fd, dst_dir_fd=fd)
            elif kind == "u":
                if gone:
                    os.close(os.open(n, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=fd))
                else:
                    os.unlink(n, dir_fd=fd)
            else:
                if gone:
                    os.mkdir(n, 0o755, dir_fd=fd)
                else:
                    os.rmdir(n, dir_fd=fd)
            state[n] = not gone
            changes += 1
            if changes == 1:
                open(ready, "w").close()
    for kind, n in ops:  # put back what is changed
        if not state.get(n):
            continue
        if kind == "m":
            os.rename("r" + n[1:], n, src_dir_fd=fd, dst_dir_fd=fd)
        elif kind == "u":
            os.close(os.open(n, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644, dir_fd=fd))
        else:
            os.mkdir(n, 0o755, dir_fd=fd)
    if not changes:
        open(ready, "w").close()
    print(changes)


if __name__ == "__main__":
    main()
