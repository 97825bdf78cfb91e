#!/usr/bin/env python3
"""`python3 bench/parent_scan.py [--hearth-bin B ...] [--users 100] [--files 1000] [-n 20]`: collection
scans beside sub-collections, on the shape `users` (100 documents) with 1,000 files under each.

Without `--hearth-bin`: how a scan by the primary key (keys under the collection's key, filtered by
parent) compares with the parent index `(space, parent, key)`, on fs_documents' shape in Python's
sqlite3 (keys as Hearth encodes segments: escaped, ended 00 01) — the measurement that named the skip
scan (docs/benchmarks.md, commit28).

With `--hearth-bin B` (repeatable; the binaries alternate within every round): the same shapes
through Hearth itself (a fresh data directory each, seeded by admin commits of 500 writes), each
request's wall clock, best and median of N: `GET users` (one page: the users), a runQuery of
`users` by name, `GET users?showMissing=true`, `GET users/u042/files` (1,000 documents, no
sub-collections), `listCollectionIds` under the root and under users/u042. A Hearth that reads a
collection's documents by skipping past their sub-collections (parentidx33) or by the parent index
lists the users in time proportional to the users; one that walked the files would not. Wall-clock:
run it under the measure lock.
"""
import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def seg(s): return s.encode().replace(b"\x00", b"\x00\xff") + b"\x00\x01"
def key(parts): return b"".join(seg(p) for p in parts)
def end(p): return p[:-1] + b"\x02"  # past every key that starts with p (its last byte 01 -> 02)


def sqlite_shapes(args):
    path = os.path.join(tempfile.mkdtemp(), "t.sqlite")
    db = sqlite3.connect(path)
    db.executescript("""PRAGMA page_size=4096; PRAGMA journal_mode=WAL;
    CREATE TABLE fs_documents (space INTEGER NOT NULL, key BLOB NOT NULL, parent BLOB NOT NULL, collection_id TEXT NOT NULL,
     fields BLOB NOT NULL, create_time INTEGER NOT NULL, update_time INTEGER NOT NULL, PRIMARY KEY (space, key)) WITHOUT ROWID;
    CREATE INDEX fs_documents_parent ON fs_documents (space, parent, key);""")
    rows = []
    for u in range(args.users):
        rows.append((1, key(["users", f"u{u:03d}"]), key(["users"]), "users", os.urandom(200), 0, 0))
        for f in range(args.files):
            rows.append((1, key(["users", f"u{u:03d}", "files", f"f{f:04d}"]), key(["users", f"u{u:03d}", "files"]), "files",
                         os.urandom(200), 0, 0))
    db.executemany("INSERT INTO fs_documents VALUES (?,?,?,?,?,?,?)", rows)
    db.commit()

    def timed(sql, a):
        best = 1e9
        for _ in range(args.n):
            t = time.perf_counter(); got = db.execute(sql, a).fetchall(); best = min(best, time.perf_counter() - t)
        return best * 1000, len(got)

    for name, coll in ((f"users ({args.users} docs, {args.users * args.files:,} descendants)", ["users"]),
                       (f"users/u042/files ({args.files:,} docs, none)", ["users", "u042", "files"])):
        p = key(coll)
        a = timed("SELECT key, fields FROM fs_documents INDEXED BY fs_documents_parent WHERE space = 1 AND parent = ? ORDER BY key", (p,))
        b = timed("SELECT key, fields FROM fs_documents WHERE space = 1 AND key > ? AND key < ? AND parent = ? ORDER BY key", (p, end(p), p))
        print(f"{name}: parent index {a[0]:.2f} ms ({a[1]} rows), primary key walk {b[0]:.2f} ms ({b[1]} rows)")


def seed_users(c, users, files, text=100):
    """`users/uNNN` and `files` under each (an integer and a string of `text` bytes), by admin commits
    of 500 writes through the Client `c`."""
    from benchlib.context import DOC_NAME_PREFIX, DOCS
    headers = {"Authorization": "Bearer owner", "Content-Type": "application/json"}
    writes = []

    def flush():
        r = c.request("POST", f"{DOCS}:commit", body=json.dumps({"writes": writes}), headers=headers)
        if r.status != 200:
            raise SystemExit(f"commit answered {r.status}: {r.snippet()}")
        writes.clear()
    for u in range(users):
        writes.append({"update": {"name": f"{DOC_NAME_PREFIX}/users/u{u:03d}", "fields": {"u": {"integerValue": str(u)}}}})
        for f in range(files):
            writes.append({"update": {"name": f"{DOC_NAME_PREFIX}/users/u{u:03d}/files/f{f:04d}",
                                      "fields": {"f": {"integerValue": str(f)}, "s": {"stringValue": "x" * text}}}})
            if len(writes) >= 500:
                flush()
    if writes:
        flush()


def hearth_shapes(args):
    from benchlib.context import DOCS
    from benchlib.httpc import Client
    from benchlib.procs import Hearth, Registry

    headers = {"Authorization": "Bearer owner"}
    json_headers = {**headers, "Content-Type": "application/json"}

    def seed(c):
        seed_users(c, args.users, args.files)

    query = {"structuredQuery": {"from": [{"collectionId": "users"}], "orderBy": [{"field": {"fieldPath": "__name__"}}]}}
    shapes = [
        (f"GET users (pageSize {args.users + 1})", "GET", f"{DOCS}/users?pageSize={args.users + 1}", None,
         lambda j: len(j.get("documents", [])) == args.users),
        ("runQuery users by name", "POST", f"{DOCS}:runQuery", json.dumps(query),
         lambda j: len([x for x in j if "document" in x]) == args.users),
        ("GET users?showMissing=true", "GET", f"{DOCS}/users?pageSize={args.users + 1}&showMissing=true", None,
         lambda j: len(j.get("documents", [])) == args.users),
        (f"GET users/u042/files ({args.files:,})", "GET", f"{DOCS}/users/u042/files?pageSize={args.files + 1}", None,
         lambda j: len(j.get("documents", [])) == args.files),
        ("listCollectionIds root", "POST", f"{DOCS}:listCollectionIds", "{}", lambda j: j.get("collectionIds") == ["users"]),
        ("listCollectionIds users/u042", "POST", f"{DOCS}/users/u042:listCollectionIds", "{}",
         lambda j: j.get("collectionIds") == ["files"]),
    ]
    times = {(b, s[0]): [] for b in args.hearth_bin for s in shapes}
    for r in range(args.rounds):
        for b in args.hearth_bin:
            reg = Registry()
            with tempfile.TemporaryDirectory(prefix="parentscan-") as work:
                try:
                    h = Hearth(reg, b, work, data_dir=os.path.join(work, "data"))
                    h.start(timeout=120)
                    c = Client(h.port("firestore"))
                    seed(c)
                    for name, method, path, body, check in shapes:
                        for i in range(args.n + 2):
                            t = time.perf_counter()
                            resp = c.request(method, path, body=body, headers=json_headers if body else headers)
                            elapsed = time.perf_counter() - t
                            if resp.status != 200 or not check(resp.json() or {}):
                                raise SystemExit(f"{name} answered {resp.status}: {resp.snippet()}")
                            if i >= 2:  # two warm-ups
                                times[(b, name)].append(elapsed * 1000)
                    c.close()
                finally:
                    reg.stop_all()
    for name, *_ in shapes:
        for b in args.hearth_bin:
            t = times[(b, name)]
            print(f"{name:34s} {b}: best {min(t):8.2f} ms, median {statistics.median(t):8.2f} ms ({len(t)} requests)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", action="append", default=[], help="time through this Hearth binary (repeatable)")
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("-n", type=int, default=20, help="timed runs of each request (best and median)")
    ap.add_argument("--rounds", type=int, default=1, help="with --hearth-bin: rounds of every binary in turn")
    args = ap.parse_args()
    if args.hearth_bin:
        hearth_shapes(args)
    else:
        sqlite_shapes(args)


if __name__ == "__main__":
    main()
