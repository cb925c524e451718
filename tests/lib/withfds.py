#!/usr/bin/env python3
"""withfds.py LIMIT FREE CMD [ARG...] - run CMD under RLIMIT_NOFILE LIMIT
(soft and hard) with descriptors inherited from its parent, so that only
FREE descriptor numbers below LIMIT are left free (the lowest ones above
those given): as a leaky parent (a cron wrapper, a daemon) runs a command.
The descriptors given are /dev/null, read-only."""
import os
import resource
import sys

limit, free = int(sys.argv[1]), int(sys.argv[2])
cmd = sys.argv[3:]
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


# Close what Python itself holds beyond the standard streams, then fill
# the table from the top down to leave FREE numbers free right above 2.
for fd in range(3, limit):
    if is_open(fd):
        os.close(fd)
null = os.open("/dev/null", os.O_RDONLY)
for fd in range(3 + free, limit):
    if fd != null:
        os.dup2(null, fd, inheritable=True)
if null < 3 + free:
    os.close(null)
os.execvp(cmd[0], cmd)
