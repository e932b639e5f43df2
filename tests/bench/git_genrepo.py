#!/usr/bin/env python3
"""Writes a git fast-import stream of a synthetic kernel-like history.

    git_genrepo.py NCOMMITS [MARKREF=N ...] | git fast-import --quiet

The history is linear on refs/heads/master: commit i changes one file
picked by a fixed stride over ~2,000 files in kernel-like directories,
so about 1 commit in 60 touches mm/memcontrol.c and the tree has the
depth of a real one.  Each MARKREF=N argument also creates the ref
refs/heads/MARKREF at commit N (1-based), so a benchmark can start a
mirror there and fetch the rest.  Deterministic: the same arguments give
the same commit ids.
"""
import sys

DIRS = ["mm", "net/core", "net/ipv4", "include/linux", "kernel", "fs",
        "fs/ext4", "drivers/net", "drivers/block", "arch/x86/mm",
        "block", "lib", "init", "security", "sound/core", "tools/perf"]
FIXED = ["mm/memcontrol.c", "mm/memcontrol-v1.c", "mm/page_counter.c",
         "include/linux/memcontrol.h", "net/core/sock.c"]


def files():
    out = list(FIXED)
    for d in DIRS:
        for i in range(125):
            out.append("%s/f%03d.c" % (d, i))
    return out


def main():
    n = int(sys.argv[1])
    marks = {}
    for a in sys.argv[2:]:
        name, at = a.split("=")
        marks.setdefault(int(at), []).append(name)
    fl = files()
    w = sys.stdout.buffer.write
    t0 = 1500000000
    for i in range(1, n + 1):
        # Every 60th commit touches one of the watched files.
        if i % 60 == 0:
            path = FIXED[(i // 60) % len(FIXED)]
        else:
            path = fl[(i * 7919) % len(fl)]
        body = ("/* %s revision %d */\n" % (path, i)) * 4
        msg = "%s: change number %d\n\nSigned-off-by: Dev <dev@example.org>\n" % (
            path.split("/")[0], i)
        ts = t0 + i * 60
        parts = ["commit refs/heads/master\n", "mark :%d\n" % i,
                 "author Dev %d <dev%d@example.org> %d +0000\n" % (i % 7, i % 7, ts),
                 "committer Maint <maint@example.org> %d +0000\n" % ts,
                 "data %d\n%s" % (len(msg.encode()), msg)]
        if i > 1:
            parts.append("from :%d\n" % (i - 1))
        parts.append("M 100644 inline %s\ndata %d\n%s\n" % (
            path, len(body.encode()), body))
        w("".join(parts).encode())
        for name in marks.get(i, []):
            w(("reset refs/heads/%s\nfrom :%d\n\n" % (name, i)).encode())


if __name__ == "__main__":
    main()
