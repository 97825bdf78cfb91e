#!/usr/bin/env python3
"""Which pages a Firestore create writes to the WAL, by b-tree: `python3 bench/wal_pages.py
[--hearth-bin B] [-n N] [-c C] [--page-size P] [--file-docs M]`.

The commit is callgrind_commit.py's (the bench's fs.commit row: a user-token REST create of
users/{uid}/files/{id} under the shipped rules, on a data directory). After a warm-up, N commits
from C clients; then the WAL is copied while Hearth still runs (what `kill -9` would leave), its
frames past the warm-up parsed (a frame: a 24-byte header — page number, the database size on a
commit frame, salts, checksums — and the page), and each page number named with SQLite's `dbstat`
table on the copy (the b-tree it belongs to now, and whether it is a leaf, an interior or an
overflow page; page 1 is also the file header). Prints frames and WAL bytes per commit and, per
b-tree, the frames per commit. `--file-docs M` then makes M more creates (16 clients) and prints
firestore.sqlite's size after a checkpoint, per document. `--page-size` creates Firestore's file with
P-byte pages first (an experiment: Hearth keeps a file's page size).
No valgrind needed; wall-clock rates are not measured.
"""
import argparse
import collections
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402
from callgrind_commit import commits  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def frames(wal_path, start):
    """(page number, is a commit frame) of each valid frame at or past byte `start` of the WAL."""
    with open(wal_path, "rb") as f:
        data = f.read()
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    size = 24 + page_size
    out = []
    off = 32 + max(0, (start - 32 + size - 1) // size) * size
    while off + size <= len(data):
        pgno, commit = struct.unpack(">II", data[off:off + 8])
        if data[off + 8:off + 16] != salts:
            break  # a frame of an older WAL generation: the log ends here
        out.append((pgno, commit != 0))
        off += size
    return page_size, out


def page_names(db_path):
    db = sqlite3.connect(db_path)
    try:
        return {p: (n, t) for n, p, t in db.execute("SELECT name, pageno, pagetype FROM dbstat")}
    finally:
        db.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("-c", type=int, default=1)
    ap.add_argument("--page-size", type=int)
    ap.add_argument("--file-docs", type=int, default=0)
    args = ap.parse_args()
    if args.page_size:
        os.environ["BENCH_FIRESTORE_PAGE_SIZE"] = str(args.page_size)
    work = tempfile.mkdtemp(prefix="wal-pages-", dir=os.path.join(ROOT, ".build"))
    data = os.path.join(work, "data")
    reg = Registry()
    h = Hearth(reg, args.hearth_bin, work, data_dir=data, rules=os.path.join(ROOT, "rules", "firestore.rules"),
               log_name="hearth-wal")
    try:
        h.start(timeout=120)
        c = Client(h.port("auth"))
        user = firebase.sign_up(c, "wal@example.com")
        c.close()
        port = h.port("firestore")
        commits(port, user, 50, args.c, "warm")
        wal = os.path.join(data, "firestore.sqlite-wal")
        start = os.path.getsize(wal)
        commits(port, user, args.n, args.c, "m")
        copy = os.path.join(work, "copy")
        os.makedirs(copy)
        shutil.copy(os.path.join(data, "firestore.sqlite"), copy)
        shutil.copy(wal, copy)
        if args.file_docs:
            commits(port, user, args.file_docs, 16, "file")
    finally:
        reg.stop_all()  # SIGTERM: the shutdown checkpoint leaves everything in firestore.sqlite
    page_size, fs = frames(os.path.join(copy, "firestore.sqlite-wal"), start)
    if not fs:
        raise SystemExit("no frames past the warm-up (a checkpoint restarted the WAL: lower -n)")
    names = page_names(os.path.join(copy, "firestore.sqlite"))
    n_commits = sum(1 for _, commit in fs if commit)
    print(f"page size {page_size}: {len(fs)} frames in {n_commits} WAL commits for {args.n} creates from {args.c} "
          f"client(s): {len(fs) / args.n:.2f} frames, {len(fs) * (24 + page_size) / args.n:,.0f} WAL bytes per create")
    by = collections.Counter()
    for pgno, _ in fs:
        name, kind = names.get(pgno, ("(free or new since)", ""))
        if pgno == 1:
            name = "page 1 (header, sqlite_schema)"
        by[(name, kind)] += 1
    for (name, kind), k in by.most_common():
        print(f"  {k / args.n:6.2f}  {name} {kind}")
    if args.file_docs:
        size = os.path.getsize(os.path.join(data, "firestore.sqlite"))
        docs = 50 + args.n + args.file_docs
        print(f"firestore.sqlite after {docs} creates, checkpointed: {size:,} bytes ({size / docs:,.0f} per document)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
