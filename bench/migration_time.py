#!/usr/bin/env python3
"""`python3 bench/migration_time.py --old-bin A --new-bin B [--users 100] [--files 1000] [--rounds 3]`:
how long a newer binary's schema migrations take on a Firestore file an older binary wrote.

The older binary seeds a data directory (admin commits of 500 writes: `users/uNNN` and 1,000
`files` under each, 100,000 documents by default) and stops. Each round copies that directory and
starts the newer binary on the copy twice: the first start runs the migrations the older binary did
not know, the second finds none to run; the difference of the two times to the ready file is the
migrations' time. Then the older binary is started on the migrated copy (it must refuse it; its
message is printed). Prints firestore.sqlite's size and `fs_documents`' pages and payload bytes per
row (SQLite's `dbstat`) before and after. Wall-clock: run it under the measure lock.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, NotAvailable, Registry  # noqa: E402
from parent_scan import seed_users  # noqa: E402


def shape(data_dir):
    """(file bytes, fs_documents pages, rows, payload bytes a row, migrations, columns) of a stopped data dir."""
    path = os.path.join(data_dir, "firestore.sqlite")
    db = sqlite3.connect(path)
    try:
        pages, payload = db.execute("SELECT count(*), sum(payload) FROM dbstat WHERE name = 'fs_documents'").fetchone()
        rows = db.execute("SELECT count(*) FROM fs_documents").fetchone()[0]
        migrations = [r[0] for r in db.execute("SELECT id FROM hearth_migrations ORDER BY applied_at, rowid")]
        columns = [r[1] for r in db.execute("PRAGMA table_info(fs_documents)")]
    finally:
        db.close()
    return os.path.getsize(path), pages, rows, payload / max(rows, 1), migrations, columns


def timed_start(binary, work, data_dir, name):
    reg = Registry()
    try:
        h = Hearth(reg, binary, work, data_dir=data_dir, log_name=name)
        t = time.perf_counter()
        h.start(timeout=600)
        return time.perf_counter() - t
    finally:
        reg.stop_all()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old-bin", required=True)
    ap.add_argument("--new-bin", required=True)
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="migrationtime-") as work:
        template = os.path.join(work, "template")
        reg = Registry()
        try:
            h = Hearth(reg, args.old_bin, work, data_dir=template, log_name="seed")
            h.start(timeout=120)
            c = Client(h.port("firestore"))
            t = time.perf_counter()
            seed_users(c, args.users, args.files, text=40)
            print(f"seeded {args.users * (args.files + 1):,} documents with {args.old_bin} in {time.perf_counter() - t:.1f} s")
            c.close()
        finally:
            reg.stop_all()
        before = shape(template)
        print(f"before: {before[0]:,} B file, fs_documents {before[1]:,} pages, {before[2]:,} rows, "
              f"{before[3]:.1f} B payload a row; columns {before[5]}")
        for r in range(args.rounds):
            copy = os.path.join(work, f"copy{r}")
            shutil.copytree(template, copy)
            first = timed_start(args.new_bin, work, copy, f"first{r}")
            second = timed_start(args.new_bin, work, copy, f"second{r}")
            print(f"round {r + 1}: first start {first * 1000:.0f} ms, second {second * 1000:.0f} ms: "
                  f"migrations {(first - second) * 1000:.0f} ms")
            if r == args.rounds - 1:
                after = shape(copy)
                print(f"after: {after[0]:,} B file, fs_documents {after[1]:,} pages, {after[2]:,} rows, "
                      f"{after[3]:.1f} B payload a row; columns {after[5]}; migrations {after[4]}")
                try:
                    timed_start(args.old_bin, work, copy, "older")
                    print("the older binary started on the migrated file (it should refuse it)")
                except NotAvailable as e:
                    print(f"the older binary refuses the migrated file: {str(e).strip()[-300:]}")
            shutil.rmtree(copy)


if __name__ == "__main__":
    main()
