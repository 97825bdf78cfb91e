#!/usr/bin/env python3
"""Wall-clock time of the first runQuery on fields no query has used before, against the same
query again: `python3 bench/first_query.py [--hearth-bin B] [--docs 1000,10000,100000]`.

Since index rows exist only for (collection id, field) pairs a query has needed (docs/firestore.md,
*Storage and indexes*), the first query on a field builds its rows for every document of the
collection id in one write transaction before it answers. For each size: a fresh Hearth with a data
directory (admin only, no rules), users/u/files seeded with the bench's documents (`seed_docs`), then
the bench's runQuery (`status == "ready"` newest 10 by `n`) timed once (it builds `status` and `n`),
then 5 more times (median). Run it under the measure lock: these are wall-clock times.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase  # noqa: E402
from benchlib.context import DOCS  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402
from callgrind_list import QUERY, ROOT  # noqa: E402  the bench's runQuery


def timed_query(c):
    t = time.perf_counter()
    r = c.request("POST", f"{DOCS}/users/u:runQuery", body=json.dumps(QUERY),
                  headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
    elapsed = time.perf_counter() - t
    if r.status != 200 or len([x for x in (r.json() or []) if "document" in x]) != 10:
        raise SystemExit(f"runQuery answered {r.status}: {r.snippet()}")
    return elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--docs", default="1000,10000,100000")
    args = ap.parse_args()
    for size in [int(s) for s in args.docs.split(",")]:
        reg = Registry()
        with tempfile.TemporaryDirectory(prefix="firstq-") as work:
            try:
                h = Hearth(reg, args.hearth_bin, work, data_dir=os.path.join(work, "data"))
                h.start(timeout=120)
                c = Client(h.port("firestore"))
                firebase.seed_docs(c, "u", size)
                first = timed_query(c)
                again = statistics.median(timed_query(c) for _ in range(5))
                c.close()
                print(f"{size:,} documents: first runQuery {first * 1000:,.1f} ms (builds status and n), "
                      f"then {again * 1000:,.2f} ms (median of 5)", flush=True)
            finally:
                reg.stop_all()


if __name__ == "__main__":
    main()
