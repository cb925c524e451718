#!/usr/bin/env python3
"""manifest.py - the residency-manifest suite's fixture, workload and checks
(tests/cmd/test_manifest.sh, tests/bench/bench-manifest.sh).

Independent of the code under test: it reads files with pread, asks the
kernel with cachestat(2) (syscall 451, called here through ctypes) and
reads dcache-probe's JSON Lines with Python's own parser.

Before Linux 6.5 (no cachestat: ENOSYS) residency is asked of mincore(2)
over a read-only shared mapping (which faults nothing in), and the
evicted count is unknown (None): a check that needs it is not made, said
once on standard error by a line "SKIP test part: needs cachestat (Linux
6.5): WHAT", with lines "unsure: ..." naming what could not be told
apart (pages evicted or never read); the rest of the check is made.
"evicted" prints "unknown" then.  DCP_NO_CACHESTAT=1 takes that path on
any kernel.

  manifest.py make ROOT PLAN [COUNT [SEED]]
      COUNT (2000) files in directories of 100 below ROOT, of five kinds:
      untouched (never looked up), stat (looked up, no data read), whole
      (read whole), ranges (1 to 4 scattered page ranges read) and sparse
      (a hole with one written extent far in; pages read in the extent
      and in the hole).  PLAN gets one JSON object per file: path
      (relative), kind, size, reads [[page, count]...], extent.
  manifest.py big ROOT PLAN [COUNT [SEED]]
      COUNT (48) files of 12 MiB below ROOT, appended to PLAN as kind
      "big": of each, 28% of its pages to be read in runs of 1 to 64
      pages at random places (bench-manifest.sh's large files).
  manifest.py workload ROOT PLAN
      what the plan says: stat, or pread one page at a time (what
      dd bs=PAGESIZE skip=PAGE count=COUNT does), in plan order.
  manifest.py expect ROOT PLAN MANIFEST
      the snapshot is what the workload did: each untouched file a miss,
      each other file cached with the plan's pages as its ranges
      (coalesced, clipped to the last page; of a sparse file only those
      in its data extent), but for pages reclaimed since they were read
      (cachestat: evicted); prints one line per difference.
  manifest.py check MANIFEST [MISS]
      after a restore: every file entry of the manifest whose snapshot
      state is cached has, in each recorded range (clipped to its size
      now), every page resident, and no resident page outside its ranges;
      with MISS=1 the files the snapshot saw as misses have no page
      resident.  Pages evicted since they were read (cachestat's
      nr_evicted: a reclaim left a shadow entry; a remount leaves none)
      count as read, and their number is printed ("evicted N").
      Prints one line per difference, then "files F pages P bytes B
      evicted E".
  manifest.py expect-recording ROOT PLAN MANIFEST [OTHER_PLAN [ALSO...]]
      a recording (dcache-probe --record) of the workload of PLAN is exactly
      it: each file PLAN opened (whole, ranges, sparse) an entry, cached,
      with the plan's pages as its ranges (as expect computes them); no
      file PLAN only looked up (stat) or left alone, and none of
      OTHER_PLAN ("-": none) unless PLAN opened it too; the directories
      exactly ROOT and those on the way to what it opened.  Each ALSO (a
      path under ROOT the workload opened besides, or !PATH, one it must
      not have recorded) is checked to be there, with its own directories
      on the way.  One line per difference.
  manifest.py split PLAN EVEN ODD
      the plan's even lines to EVEN, its odd lines to ODD: two workloads
      over the same directories.
  manifest.py noresident ROOT PLAN
      the files of PLAN with pages resident now, one line each.
  manifest.py fincore MANIFEST
      the same per-file comparison with fincore(1) (util-linux): pages
      resident per file equal the recorded pages (evicted ones counted
      as read); one line per difference.
  manifest.py v1 ROOT
      an independent writer of a manifest of format 1 (before format 2:
      no manifest record, no fs records, every measured file with an
      identity of device, inode, size and mtime only): one entry per name
      below ROOT (os.walk; ROOT at depth 0), each "cached", each regular
      file with its resident pages (cachestat per page) as its ranges.
  manifest.py handle MANIFEST PATH
      the handle recorded in PATH's identity ("TYPE:HEX"), or nothing
  manifest.py paths MANIFEST [STATES]
      the entry paths whose snapshot state is in STATES (cached,negative)
  manifest.py ranges MANIFEST
      "PATH OFFSET LENGTH" per recorded range, in manifest order
  manifest.py resident MANIFEST
      pages resident now in the files the snapshot saw cached (whole files)
  manifest.py evicted MANIFEST [BLOCKDEV]
      pages of the recorded ranges evicted now (shadow entries), plus
      those of the block device's own cache (metadata)
  manifest.py pin MANIFEST [BLOCKDEV]
      holds the pages resident now of the recorded ranges (and of the
      block device's own cache) locked in memory (mlock of a shared
      mapping, resident pages only: nothing is read) until its standard
      input closes; prints "pinned N" once they are.  The machine's DAMON
      pageout cannot then reclaim one while a command is measured, so a
      check of "reads nothing" has no window to lose (cachestat's evicted
      count, taken after the pin, is exact for the run).
  manifest.py rangeres MANIFEST OPROBE_OUT
      pages resident now within the recorded ranges of the files the
      prober found cached (each opened only then: a lookup of a cached
      name and an open read nothing)
  manifest.py verify MANIFEST VERIFY_JSON OPROBE_OUT
      dcache-probe --manifest's JSON against the prober's states
      (OPROBE_OUT: oprobe's "STATE PATH" lines, taken after it) and
      cachestat per recorded range of each file the prober found cached
      (opened only then): each entry's state, each file's pages total and
      resident, the summary's counts and data totals; one line per
      difference, then "expect paths=... cached=... negative=... miss=...
      pages=... resident=...".
  manifest.py record PATH [RANGES [WRONG [PAD]]]
      a hand-written entry record of PATH, as dcache-probe writes one: state
      cached, its identity from lstat(2) (anyone may stat a file in a
      directory they can search), RANGES (JSON; default the whole file in
      pages); WRONG=1: a size one byte off, the identity of no file there;
      PAD: a member of that many bytes more ("pad"), a record that long.
"""
import collections
import ctypes
import errno
import json
import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True

PS = os.sysconf("SC_PAGESIZE")
libc = ctypes.CDLL(None, use_errno=True)


class Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class Cachestat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("nr_cache", "nr_dirty", "nr_writeback", "nr_evicted", "nr_recently_evicted")]


# Unknown until the first call; False: ENOSYS (before Linux 6.5), or
# DCP_NO_CACHESTAT=1 (the fallback tried on a kernel that has it).
HAVE_CACHESTAT = False if os.environ.get("DCP_NO_CACHESTAT") == "1" else None
SKIPPED = set()


def skip(what):
    """Say, once, on standard error, that a part of a check cannot be made
    here (the kernel matrix collects the lines starting with "SKIP")."""
    if what not in SKIPPED:
        SKIPPED.add(what)
        print("SKIP test part: needs cachestat (Linux 6.5): " + what, file=sys.stderr, flush=True)


def _size(fd):
    st = os.fstat(fd)
    return os.lseek(fd, 0, os.SEEK_END) if (st.st_mode & 0o170000) == 0o060000 else st.st_size


def mincore_map(fd, first, count):
    """(address, [0/1 per page]) of a read-only shared mapping of FD's pages
    [first, first + count) (count > 0, within the file) and what
    mincore(2) says of each: mapping a file and asking faults nothing in.
    The caller unmaps (libc.munmap(address, count * PS)) or keeps it."""
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    addr = libc.mmap(None, count * PS, 1, 1, fd, first * PS)  # PROT_READ, MAP_SHARED
    if addr in (None, ctypes.c_void_p(-1).value):
        e = ctypes.get_errno()
        raise OSError(e, "mmap: " + os.strerror(e))
    vec = (ctypes.c_ubyte * count)()
    if libc.mincore(ctypes.c_void_p(addr), count * PS, vec) != 0:
        e = ctypes.get_errno()
        libc.munmap(ctypes.c_void_p(addr), ctypes.c_size_t(count * PS))
        raise OSError(e, "mincore: " + os.strerror(e))
    return addr, [v & 1 for v in vec]


def mincore_resident(fd, off, ln):
    """Pages of [off, off+ln) (ln 0: to the end) resident per mincore(2),
    only those of the file (a mapping holds no page past its end; a file
    of size 0 none).  mincore does not see folios not marked up to date
    (a block device's metadata: see pin): a kernel without cachestat."""
    last = -(-_size(fd) // PS)
    first = off // PS
    end = last if ln == 0 else min(last, -(-(off + ln) // PS))
    if end <= first:
        return 0
    addr, vec = mincore_map(fd, first, end - first)
    libc.munmap(ctypes.c_void_p(addr), ctypes.c_size_t((end - first) * PS))
    return sum(vec)


def cachestat(fd, off, ln):
    """(resident, evicted) pages of [off, off+ln) (ln 0: to the end).
    Without cachestat(2) (ENOSYS: Linux before 6.5) resident per mincore(2)
    and evicted None: only cachestat counts pages recently evicted, and a
    check needing them says it is skipped (skip()), never takes 0."""
    global HAVE_CACHESTAT
    if HAVE_CACHESTAT is not False:
        cs = Cachestat()
        libc.syscall.restype = ctypes.c_long
        r = libc.syscall(ctypes.c_long(451), ctypes.c_int(fd), ctypes.byref(Range(off, ln)),
                         ctypes.byref(cs), ctypes.c_uint(0))
        if r == 0:
            HAVE_CACHESTAT = True
            return cs.nr_cache, cs.nr_evicted
        e = ctypes.get_errno()
        if e != errno.ENOSYS or HAVE_CACHESTAT:
            raise OSError(e, "cachestat: " + os.strerror(e))
        HAVE_CACHESTAT = False
    return mincore_resident(fd, off, ln), None


def pages_of(off, ln, size):
    """Pages of a recorded range clipped to size (bytes): [first, end)."""
    end = min(off + ln, -(-size // PS) * PS)
    return (off // PS, max(off // PS, -(-end // PS)))


def records(name):
    with open(name, "rb") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def entries(name):
    for o in records(name):
        if o.get("type") == "entry":
            yield o


def coalesce(pages, last):
    """Sorted page numbers (below last) as [[offset, length]] in bytes."""
    out = []
    for p in sorted(set(p for p in pages if p < last)):
        if out and out[-1][0] + out[-1][1] == p * PS:
            out[-1][1] += PS
        else:
            out.append([p * PS, PS])
    return out


def make(root, plan, count=2000, seed=20):
    rng = random.Random(seed)
    blob = os.urandom(1 << 20)
    with open(plan, "w") as out:
        for i in range(count):
            d = "d%02d" % (i // 100)
            rel = "%s/f%04d" % (d, i)
            os.makedirs(os.path.join(root, d), exist_ok=True)
            x = rng.random()
            kind = ("untouched" if x < 0.15 else "stat" if x < 0.30 else
                    "whole" if x < 0.50 else "ranges" if x < 0.85 else "sparse")
            extent = None
            if kind == "sparse":
                npages = rng.randint(512, 2048)          # 2 to 8 MiB apparent
                size = npages * PS - rng.choice((0, 1000))
                epages = rng.randint(4, 16)
                estart = npages * 3 // 4
                extent = [estart * PS, epages * PS]
                reads = [[estart + rng.randint(0, epages - 2), 2],  # in the extent
                         [rng.randint(8, npages // 2), rng.randint(1, 3)],  # in the hole
                         [estart - 1, 2]]                # straddling its start
            elif kind == "whole":
                size = rng.choice((0, 1, 100, PS, PS + 1, rng.randint(1, 64 << 10)))
                reads = [[0, -(-size // PS)]] if size else []
            elif kind == "ranges":
                size = rng.randint(8 << 10, 128 << 10)
                npages = -(-size // PS)
                reads = []
                for _ in range(rng.randint(1, 4)):
                    c = rng.randint(1, min(8, npages))
                    reads.append([rng.randint(0, npages - c), c])
            else:
                size = rng.randint(0, 64 << 10)
                reads = []
            p = os.path.join(root, rel)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            if extent:
                os.ftruncate(fd, size)
                os.pwrite(fd, blob[:extent[1]], extent[0])
            else:
                off = 0
                while off < size:
                    n = os.write(fd, blob[(off * 7) % (1 << 19):][:min(size - off, 1 << 19)])
                    off += n
            os.close(fd)
            out.write(json.dumps({"path": rel, "kind": kind, "size": size,
                                  "reads": reads, "extent": extent}) + "\n")


def big(root, plan, count=48, seed=7):
    rng = random.Random(seed)
    blob = os.urandom(1 << 20)
    size = 12 << 20
    os.makedirs(root, exist_ok=True)
    with open(plan, "a") as out:
        for i in range(count):
            rel = "b%02d" % i
            with open(os.path.join(root, rel), "wb") as f:
                for _ in range(size >> 20):
                    f.write(blob)
            npages, reads, got = size // PS, [], 0
            while got < npages * 28 // 100:
                c = rng.randint(1, 64)
                reads.append([rng.randint(0, npages - c), c])
                got += c
            out.write(json.dumps({"path": rel, "kind": "big", "size": size,
                                  "reads": reads, "extent": None}) + "\n")


def workload(root, plan):
    for o in records(plan):
        p = os.path.join(root, o["path"])
        if o["kind"] == "untouched":
            continue
        if o["kind"] == "stat":
            os.stat(p)
            continue
        fd = os.open(p, os.O_RDONLY)
        for page, count in o["reads"]:
            for k in range(count):
                os.pread(fd, PS, (page + k) * PS)
        os.close(fd)


def expect(root, plan, manifest):
    snap = {o["path"]: o for o in entries(manifest)}
    bad = 0
    for o in records(plan):
        p = os.path.join(root, o["path"])
        e = snap.get(p)
        if e is None:
            print("%s: not in the manifest" % p)
            bad += 1
            continue
        if o["kind"] == "untouched":
            if e["state"] != "miss":
                print("%s: untouched, snapshot says %s" % (p, e["state"]))
                bad += 1
            continue
        last = -(-o["size"] // PS)
        read = [pg + k for pg, c in o["reads"] for k in range(c)]
        if o["extent"]:
            # A file with more than 1 MiB of holes is asked only for its
            # data extents: pages of its holes are not listed (documented).
            a, n = o["extent"][0] // PS, o["extent"][1] // PS
            read = [pg for pg in read if a <= pg < a + n]
        want = coalesce(read, last)
        if e["state"] != "cached" or e.get("ranges") is None:
            print("%s: snapshot %s %s, the workload read %s" % (p, e["state"], e.get("ranges"), want))
            bad += 1
            continue
        got = set(pg for off, ln in e["ranges"] for pg in range(off // PS, (off + ln) // PS))
        read = set(pg for pg in read if pg < last)
        # A page the snapshot lacks must have been reclaimed since it was
        # read (cachestat counts its shadow entry as evicted now).
        lost = not_evicted(p, read - got, "expect")
        if e["ranges"] != coalesce(got, last) or got - read or lost:
            print("%s: snapshot %s, the workload read %s (not evicted: %s)" % (p, e["ranges"], want, lost))
            bad += 1
    return bad


def not_evicted(p, pages, what):
    """Of PAGES of file P (read by the workload, not in the snapshot), those
    not evicted since (cachestat: no shadow entry).  Without cachestat none
    can be told from one evicted: skipped, said, none returned."""
    if not pages:
        return []
    fd = os.open(p, os.O_RDONLY)
    try:
        out = []
        for pg in sorted(pages):
            ev = cachestat(fd, pg * PS, PS)[1]
            if ev is None:
                skip("%s: pages read and not in the snapshot, evicted or missed: not told apart" % what)
                print("unsure: %s: %d pages read and not in the snapshot (evicted or missed: not told apart)"
                      % (p, len(pages)), file=sys.stderr)
                return []
            if ev != 1:
                out.append(pg)
        return out
    finally:
        os.close(fd)


def want_ranges(root, o):
    """The ranges a snapshot holds of plan entry O just after its workload."""
    last = -(-o["size"] // PS)
    read = [pg + k for pg, c in o["reads"] for k in range(c)]
    if o["extent"]:
        a, n = o["extent"][0] // PS, o["extent"][1] // PS
        read = [pg for pg in read if a <= pg < a + n]
    return read, last


def ancestors(root, path):
    out = []
    while path != root and path.startswith(root + "/"):
        path = os.path.dirname(path)
        out.append(path)
    return out


def expect_recording(root, plan, manifest, other=None, also=()):
    snap = {e["path"]: e for e in entries(manifest)}
    opened = {os.path.join(root, o["path"]): o for o in records(plan)
              if o["kind"] in ("whole", "ranges", "sparse")}
    looked = {os.path.join(root, o["path"]) for o in records(plan)} - set(opened)
    others = set()
    if other and other != "-":
        others = {os.path.join(root, o["path"]) for o in records(other)}
    present = {os.path.join(root, a) for a in also if not a.startswith("!")}
    absent = {os.path.join(root, a[1:]) for a in also if a.startswith("!")}
    dirs = {root}
    for p in list(opened) + list(present):
        dirs.update(ancestors(root, p))
    bad = 0
    for p, o in sorted(opened.items()):
        e = snap.get(p)
        if e is None:
            print("%s: opened by the workload, not recorded" % p)
            bad += 1
            continue
        read, last = want_ranges(root, o)
        if e.get("state") != "cached" or e.get("ranges") is None:
            print("%s: recorded %s %s, the workload read %s" % (p, e.get("state"), e.get("ranges"),
                                                                 coalesce(read, last)))
            bad += 1
            continue
        got = set(pg for off, ln in e["ranges"] for pg in range(off // PS, (off + ln) // PS))
        read = set(pg for pg in read if pg < last)
        lost = not_evicted(p, read - got, "expect-recording")
        if e["ranges"] != coalesce(got, last) or got - read or lost:
            print("%s: recorded %s, the workload read %s (not evicted: %s)"
                  % (p, e["ranges"], coalesce(read, last), lost))
            bad += 1
    for p in sorted(present):
        if p not in snap:
            print("%s: opened by the workload, not recorded" % p)
            bad += 1
    for p in sorted(absent):
        if p in snap:
            print("%s: recorded, the workload did not open it" % p)
            bad += 1
    for p, e in sorted(snap.items()):
        if p in opened or p in present or p in dirs:
            continue
        why = ("read by the other process only" if p in others else
               "only looked up by the workload" if p in looked else
               "a directory the workload did not open or go through" if e.get("kind") == "dir"
               else "not opened by the workload")
        if p not in absent:
            print("%s: recorded, %s" % (p, why))
            bad += 1
    for p in sorted(dirs):
        if p not in snap:
            print("%s: a directory on the way, not recorded" % p)
            bad += 1
        elif snap[p].get("kind") != "dir":
            print("%s: recorded as %s, a directory" % (p, snap[p].get("kind")))
            bad += 1
    return bad


def file_entries(manifest, states=("cached",)):
    """The measured files: ranges recorded (format 2: [] and no identity
    for a file with nothing resident; format 1: an identity always)."""
    for e in entries(manifest):
        if e.get("state") in states and isinstance(e.get("ranges"), list):
            yield e


def size_of(e):
    """The recorded size, or (format 2, nothing resident) the size now."""
    return e["identity"]["size"] if "identity" in e else os.stat(e["path"]).st_size


def check(manifest, miss=False):
    """Without cachestat (evicted None) only resident pages are held
    against the ranges: a page resident outside them (or of a miss) is a
    difference; a recorded page not resident may have been evicted or
    never read, not told apart: said on standard error with a SKIP line,
    as is that pages read and evicted since are not seen at all."""
    files = pages = evicted = 0
    unsure = 0
    for e in file_entries(manifest):
        size = size_of(e)
        fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
        try:
            want = inside = 0
            for off, ln in e["ranges"]:
                a, b = pages_of(off, ln, size)
                if b <= a:
                    continue
                res, ev = cachestat(fd, a * PS, (b - a) * PS)
                inside += res
                if ev is None:
                    if res != b - a:
                        print("unsure: %s: range [%d,%d]: %d of %d pages resident (evicted unknown)"
                              % (e["path"], off, ln, res, b - a), file=sys.stderr)
                        unsure += 1
                elif res + ev != b - a:
                    print("%s: range [%d,%d]: %d of %d pages resident (%d evicted)"
                          % (e["path"], off, ln, res, b - a, ev))
                want += b - a
            res, ev = cachestat(fd, 0, 0)
            if ev is None:
                if res > inside:
                    print("%s: %d pages resident, %d of them outside the %d recorded"
                          % (e["path"], res, res - inside, want))
                if res < want:
                    print("unsure: %s: %d pages resident (evicted unknown), %d recorded" % (e["path"], res, want),
                          file=sys.stderr)
                    unsure += 1
                evicted = None
            elif res + ev != want:
                print("%s: %d pages resident (%d evicted), %d recorded" % (e["path"], res, ev, want))
            files += 1
            pages += want
            if evicted is not None:
                evicted += ev
        finally:
            os.close(fd)
    if miss:
        for e in entries(manifest):
            if e.get("state") == "miss" and e.get("kind") in ("file", "unknown") \
                    and os.path.isfile(e["path"]):
                fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
                res, ev = cachestat(fd, 0, 0)
                os.close(fd)
                if res + (ev or 0):
                    print("%s: a miss of the snapshot, %d pages resident" % (e["path"], res + (ev or 0)))
                evicted = None if ev is None else evicted
    if evicted is None:
        skip("check: pages read and evicted since are not seen (resident pages checked)")
        if unsure:
            skip("check: %d recorded ranges or files not wholly resident, evicted or never read:"
                 " not told apart (lines above)" % unsure)
    print("files %d pages %d bytes %d evicted %s" % (files, pages, pages * PS,
                                                     "unknown" if evicted is None else evicted))


def fincore(manifest):
    want, ev = {}, {}
    for e in file_entries(manifest):
        size = size_of(e)
        want[e["path"]] = sum(max(0, b - a) for a, b in
                              (pages_of(off, ln, size) for off, ln in e["ranges"]))
        fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
        ev[e["path"]] = cachestat(fd, 0, 0)[1]
        os.close(fd)
    names = list(want)
    got = {}
    for i in range(0, len(names), 500):
        out = subprocess.run(["fincore", "-n", "-r", "-o", "PAGES,FILE"] + names[i:i + 500],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            n, path = line.split(" ", 1)
            got[path] = int(n)
    for p in names:
        if ev[p] is None:  # no cachestat: resident beyond the recorded is a difference
            if got.get(p, -1) > want[p] or got.get(p, -1) < 0:
                print("%s: fincore %s pages (evicted unknown), recorded %d" % (p, got.get(p), want[p]))
            elif got[p] < want[p]:
                print("unsure: %s: fincore %s pages (evicted unknown), recorded %d" % (p, got.get(p), want[p]),
                      file=sys.stderr)
                skip("fincore: files with fewer pages resident than recorded, evicted or never read:"
                     " not told apart (lines above)")
        elif got.get(p, -1) + ev[p] != want[p]:
            print("%s: fincore %s pages (%d evicted), recorded %d" % (p, got.get(p), ev[p], want[p]))


def evicted(manifest, bdev=None):
    """Prints the count, or "unknown" without cachestat where it cannot be
    had: a range wholly resident has none evicted (mincore tells), any
    other range, and the block device's cache, an unknown number."""
    n = 0
    for e in file_entries(manifest):
        size = size_of(e)
        fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
        for off, ln in e["ranges"]:
            a, b = pages_of(off, ln, size)
            if b > a:
                res, ev = cachestat(fd, a * PS, (b - a) * PS)
                if ev is None and res != b - a:
                    n = None
                elif n is not None:
                    n += ev or 0
        os.close(fd)
    if bdev:
        fd = os.open(bdev, os.O_RDONLY)
        ev = cachestat(fd, 0, 0)[1]
        n = None if ev is None or n is None else n + ev
        os.close(fd)
    print("unknown" if n is None else n)


def verify(manifest, vjson, oprobe_out):
    states = {}
    with open(oprobe_out) as f:
        for line in f:
            st, p = line.rstrip("\n").split(" ", 1)
            states[p] = st
    v = list(records(vjson))
    ventries = {o["path"]: o for o in v if o.get("type") == "entry"}
    summary = [o for o in v if o.get("type") == "summary"]
    count = collections.Counter()
    pages = resident = files = unknown = evicted = 0
    seen_ino = set()
    for e in entries(manifest):
        if e.get("state") not in ("cached", "negative"):
            if e["path"] in ventries:
                print("%s: a %s of the snapshot is reported" % (e["path"], e.get("state")))
            continue
        p = e["path"]
        st = states.get(p, "?")
        count[st.split(":")[0]] += 1
        o = ventries.get(p)
        if o is None:
            print("%s: no record" % p)
            continue
        if o.get("state") != st:
            print("%s: reported %s, the prober says %s" % (p, o.get("state"), st))
        if not isinstance(e.get("ranges"), list):
            continue
        if st != "cached":
            unknown += 1
            if o.get("data") != "unknown" or o.get("data_reason") != "lookup":
                print("%s: dentry %s, data %s reason %s (want unknown, lookup)"
                      % (p, st, o.get("data"), o.get("data_reason")))
            continue
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            fst = os.fstat(fd)
            size = e["identity"]["size"] if "identity" in e else fst.st_size
            if "identity" in e and (fst.st_ino, fst.st_size) != (e["identity"]["ino"], size):
                print("%s: changed since the manifest (the test's own check)" % p)
                continue
            total = res = ev = span = rbytes = 0
            tail = False  # a range holds the file's partial last page
            for off, ln in e["ranges"]:
                a, b = pages_of(off, ln, size)
                if b > a:
                    r, x = cachestat(fd, a * PS, (b - a) * PS)
                    total += b - a
                    res += r
                    ev = None if x is None or ev is None else ev + x
                    # The bytes of the file the range spans, and those
                    # resident: the last page only up to the file's end.
                    span += min(b * PS, size) - a * PS
                    rbytes += r * PS
                    if b * PS > size:
                        tail = True
                        if cachestat(fd, (b - 1) * PS, PS)[0]:
                            rbytes -= b * PS - size
        finally:
            os.close(fd)
        pg = o.get("pages") or {}
        rb = pg.get("resident_bytes", -1)
        # dcache-probe measured first: pages reclaimed since then are
        # resident in its figure and evicted (a shadow entry) in ours.
        # Resident bytes never exceed the size: whole pages but the last,
        # which counts up to the end of the file.
        # Without cachestat (ev None) more resident in its figure than in
        # ours may be pages evicted since or a wrong figure: not told apart.
        if ev is None and total >= pg.get("resident", -1) > res:
            skip("verify: files measured with more pages resident than now, evicted since"
                 " or a wrong figure: not told apart (lines above)")
            print("unsure: %s: data %s pages %s; %d of %d resident now (evicted unknown)"
                  % (p, o.get("data"), pg, res, total), file=sys.stderr)
            res_hi = pg.get("resident")
        else:
            res_hi = res + (total - res if ev is None else ev)
        if o.get("data") != "measured" or pg.get("total") != total \
                or not res <= pg.get("resident", -1) <= res_hi \
                or pg.get("size") != span or not 0 <= rb <= span \
                or not pg.get("resident", -1) * PS - (PS - 1 if tail else 0) <= rb \
                <= pg.get("resident", -1) * PS \
                or (not ev and pg.get("resident") == res and rb != rbytes):
            print("%s: data %s pages %s; cachestat: %d of %d resident (%s evicted), %d of %d bytes"
                  % (p, o.get("data"), pg, res, total, ev, rbytes, span))
        # A file recorded without identity (nothing resident) is not
        # opened by dcache-probe: each name counts (it has no pages).
        if "identity" not in e or (fst.st_dev, fst.st_ino) not in seen_ino:
            seen_ino.add((fst.st_dev, fst.st_ino))
            pages += total
            resident += res
            evicted = None if ev is None or evicted is None else evicted + ev
            files += 1
    n = sum(count.values())
    if len(summary) != 1:
        print("%d summary records" % len(summary))
    else:
        s = summary[0]
        d = s.get("data") or {}
        want = {"paths": n, "cached": count["cached"], "negative": count["negative"],
                "miss": count["miss"], "error": count["error"]}
        for k, w in want.items():
            if s.get(k) != w:
                print("summary %s: %s, the prober: %d" % (k, s.get(k), w))
        share = round(100.0 * (count["cached"] + count["negative"]) / n, 2) if n else None
        if s.get("cached_percent") is None or share is None \
                or abs(s["cached_percent"] - share) > 0.006:
            print("summary cached_percent: %s, the prober: %s" % (s.get("cached_percent"), share))
        per_file = sum((o.get("pages") or {}).get("resident", 0)
                       for o in ventries.values() if o.get("data") == "measured")
        per_file_bytes = sum((o.get("pages") or {}).get("resident_bytes", 0)
                             for o in ventries.values() if o.get("data") == "measured")
        if evicted is None and pages >= per_file > resident:
            skip("verify: summary with more pages resident than now, evicted since or a wrong"
                 " figure: not told apart")
            res_hi = per_file
        else:
            res_hi = resident + (pages - resident if evicted is None else evicted)
        if d.get("pages") != pages or d.get("files") != files or d.get("unknown") != unknown \
                or d.get("resident") != per_file or not resident <= per_file <= res_hi \
                or d.get("resident_bytes") != per_file_bytes \
                or not 0 <= d.get("resident_bytes", -1) <= d.get("size", -1):
            print("summary data %s; expected files %d unknown %d pages %d resident %d (cachestat, %s evicted)"
                  % (d, files, unknown, pages, resident, evicted))
    print("expect paths=%d cached=%d negative=%d miss=%d pages=%d resident=%d"
          % (n, count["cached"], count["negative"], count["miss"], pages, resident))


def pin(manifest, bdev=None):
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    PROT_READ, MAP_SHARED = 1, 1

    def resident(fd, first, count, out):
        """Append to OUT the resident pages of [first, first + count), as
        cachestat(2) tells (mincore(2) does not see a block device's
        metadata pages: their folios are not marked up to date)."""
        res = cachestat(fd, first * PS, count * PS)[0]
        if not HAVE_CACHESTAT:
            return False  # mincore over the mapping instead (lock_resident)
        if res == count:
            out.extend(range(first, first + count))
        elif res and count > 1:
            half = count // 2
            resident(fd, first, half, out)
            resident(fd, first + half, count - half, out)

    def lock_resident(fd, first, count):
        """mlock the resident pages of FD's pages [first, first + count)."""
        if count <= 0:
            return 0
        pages = []
        if resident(fd, first, count, pages) is False:
            # No cachestat (before Linux 6.5): what mincore(2) sees of a
            # read-only shared mapping (asking faults nothing in), only the
            # pages of the file; a block device's metadata folios not up
            # to date are not seen, so not pinned: a check that relies on
            # the pin also needs the evicted count, skipped without it.
            count = min(count, -(-_size(fd) // PS) - first)
            if count <= 0:
                return 0
            addr, present = mincore_map(fd, first, count)
            if not any(present):
                libc.munmap(ctypes.c_void_p(addr), ctypes.c_size_t(count * PS))
                return 0
        else:
            if not pages:
                return 0
            addr = libc.mmap(None, count * PS, PROT_READ, MAP_SHARED, fd, first * PS)
            if addr in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "mmap")
            present = bytearray(count)
            for p in pages:
                present[p - first] = 1
        n, i = 0, 0
        while i < count:
            if not present[i]:
                i += 1
                continue
            j = i
            while j < count and present[j]:
                j += 1
            if libc.mlock(ctypes.c_void_p(addr + i * PS), (j - i) * PS) != 0:
                raise OSError(ctypes.get_errno(), "mlock")
            n += j - i
            i = j
        return n  # the mapping stays until the process ends

    # Each descriptor is closed once its ranges are mapped: a mapping holds
    # its file (a manifest's files outnumber a descriptor limit of 1024).
    n = 0
    for e in file_entries(manifest):
        if not e["ranges"]:
            continue  # nothing to hold (and no descriptor spent: a manifest may have millions)
        size = size_of(e)
        fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
        try:
            for off, ln in e["ranges"]:
                a, b = pages_of(off, ln, size)
                n += lock_resident(fd, a, b - a)
        finally:
            os.close(fd)
    if bdev:
        fd = os.open(bdev, os.O_RDONLY)
        try:
            n += lock_resident(fd, 0, -(-os.lseek(fd, 0, os.SEEK_END) // PS))
        finally:
            os.close(fd)
    print("pinned %d" % n, flush=True)
    sys.stdin.read()


KINDS = {0o100000: "file", 0o040000: "dir", 0o120000: "symlink", 0o010000: "fifo",
         0o140000: "socket", 0o020000: "char", 0o060000: "block"}


def v1(root):
    def entry(path, depth):
        st = os.lstat(path)
        kind = KINDS.get(st.st_mode & 0o170000, "unknown")
        o = {"type": "entry", "path": path, "state": "cached", "kind": kind, "depth": depth}
        if kind == "file":
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            pages, off = [], 0
            try:
                # Pages of the data extents only: those of a hole cost no
                # I/O to read again, and a restore reads no hole.
                while off < st.st_size:
                    try:
                        a = os.lseek(fd, off, os.SEEK_DATA)
                    except OSError:
                        break
                    b = os.lseek(fd, a, os.SEEK_HOLE)
                    pages += [p for p in range(a // PS, -(-b // PS)) if cachestat(fd, p * PS, PS)[0]]
                    off = b
            finally:
                os.close(fd)
            o["data"] = "measured"
            o["identity"] = {"dev": "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)),
                             "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
            o["ranges"] = coalesce(pages, -(-st.st_size // PS))
        print(json.dumps(o, separators=(",", ":")))

    entry(root, 0)
    base = root.rstrip("/").count("/")
    for d, dirs, files in os.walk(root):
        for n in sorted(dirs) + sorted(files):
            p = os.path.join(d, n)
            entry(p, p.count("/") - base)


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "make":
        make(args[0], args[1], *(int(a) for a in args[2:4]))
    elif cmd == "big":
        big(args[0], args[1], *(int(a) for a in args[2:4]))
    elif cmd == "workload":
        workload(*args)
    elif cmd == "expect":
        expect(*args)
    elif cmd == "check":
        check(args[0], len(args) > 1 and args[1] == "1")
    elif cmd == "expect-recording":
        expect_recording(args[0], args[1], args[2], args[3] if len(args) > 3 else None, args[4:])
    elif cmd == "split":
        with open(args[0]) as f, open(args[1], "w") as ev, open(args[2], "w") as od:
            for i, line in enumerate(f):
                (ev if i % 2 == 0 else od).write(line)
    elif cmd == "noresident":
        for o in records(args[1]):
            p = os.path.join(args[0], o["path"])
            fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
            res, ev = cachestat(fd, 0, 0)
            os.close(fd)
            if res:
                print("%s: %d pages resident" % (p, res))
    elif cmd == "fincore":
        fincore(args[0])
    elif cmd == "v1":
        v1(args[0])
    elif cmd == "handle":
        for e in entries(args[0]):
            if e["path"] == args[1] and "handle" in e.get("identity", {}):
                print(e["identity"]["handle"])
    elif cmd == "paths":
        want = (args[1] if len(args) > 1 else "cached,negative").split(",")
        for e in entries(args[0]):
            if e.get("state") in want:
                print(e["path"])
    elif cmd == "ranges":
        for e in file_entries(args[0]):
            for off, ln in e["ranges"]:
                print(e["path"], off, ln)
    elif cmd == "rangeres":
        cached = set()
        with open(args[1]) as f:
            for line in f:
                st, p = line.rstrip("\n").split(" ", 1)
                if st == "cached":
                    cached.add(p)
        n = 0
        for e in file_entries(args[0]):
            if e["path"] in cached:
                fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
                for off, ln in e["ranges"]:
                    a, b = pages_of(off, ln, size_of(e))
                    if b > a:
                        n += cachestat(fd, a * PS, (b - a) * PS)[0]
                os.close(fd)
        print(n)
    elif cmd == "resident":
        n = 0
        for e in file_entries(args[0]):
            fd = os.open(e["path"], os.O_RDONLY | os.O_NOFOLLOW)
            n += cachestat(fd, 0, 0)[0]
            os.close(fd)
        print(n)
    elif cmd == "evicted":
        evicted(*args)
    elif cmd == "pin":
        pin(*args)
    elif cmd == "verify":
        verify(*args)
    elif cmd == "record":
        st = os.lstat(args[0])
        rec = {"type": "entry", "path": args[0], "state": "cached", "kind": "file", "depth": 0,
               "identity": {"dev": "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)),
                            "ino": st.st_ino,
                            "size": st.st_size + (len(args) > 2 and args[2] == "1"),
                            "mtime_ns": st.st_mtime_ns},
               "ranges": json.loads(args[1]) if len(args) > 1 and args[1] else
               ([[0, -(-st.st_size // PS) * PS]] if st.st_size else [])}
        line = json.dumps(rec, separators=(",", ":"))
        if len(args) > 3:
            line = line[:-1] + ',"pad":"' + "x" * int(args[3]) + '"}'
        sys.stdout.write(line + "\n")
    else:
        sys.exit("manifest.py: unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
