#!/usr/bin/env python3
"""`python3 bench/parent_scan.py`: How a collection scan by the primary key (keys under the collection's key, filtered by parent)
compares with the parent index, on fs_documents' shape: `users` (100 documents) with 1,000 files under
each, and the files of one user. Python's sqlite3; keys as Hearth encodes segments (escaped, ended 00 01)."""
import os, sqlite3, tempfile, time

def seg(s): return s.encode().replace(b"\x00", b"\x00\xff") + b"\x00\x01"
def key(parts): return b"".join(seg(p) for p in parts)

path = os.path.join(tempfile.mkdtemp(), "t.sqlite")
db = sqlite3.connect(path)
db.executescript("""PRAGMA page_size=4096; PRAGMA journal_mode=WAL;
CREATE TABLE fs_documents (space INTEGER NOT NULL, key BLOB NOT NULL, parent BLOB NOT NULL, collection_id TEXT NOT NULL,
 fields BLOB NOT NULL, create_time INTEGER NOT NULL, update_time INTEGER NOT NULL, PRIMARY KEY (space, key)) WITHOUT ROWID;
CREATE INDEX fs_documents_parent ON fs_documents (space, parent, key);""")
rows = []
for u in range(100):
    rows.append((1, key(["users", f"u{u:03d}"]), key(["users"]), "users", os.urandom(200), 0, 0))
    for f in range(1000):
        rows.append((1, key(["users", f"u{u:03d}", "files", f"f{f:04d}"]), key(["users", f"u{u:03d}", "files"]), "files", os.urandom(200), 0, 0))
db.executemany("INSERT INTO fs_documents VALUES (?,?,?,?,?,?,?)", rows)
db.commit()

def end(p): return p[:-1] + b"\x02"  # past every key that starts with p (its last byte 01 -> 02)

def timed(sql, args, n=20):
    best = 1e9
    for _ in range(n):
        t = time.perf_counter(); got = db.execute(sql, args).fetchall(); best = min(best, time.perf_counter() - t)
    return best * 1000, len(got)

for name, coll in (("users (100 docs, 100,000 descendants)", ["users"]), ("users/u042/files (1,000 docs, none)", ["users", "u042", "files"])):
    p = key(coll)
    a = timed("SELECT key, fields FROM fs_documents INDEXED BY fs_documents_parent WHERE space = 1 AND parent = ? ORDER BY key", (p,))
    b = timed("SELECT key, fields FROM fs_documents WHERE space = 1 AND key > ? AND key < ? AND parent = ? ORDER BY key", (p, end(p), p))
    print(f"{name}: parent index {a[0]:.2f} ms ({a[1]} rows), primary key walk {b[0]:.2f} ms ({b[1]} rows)")
