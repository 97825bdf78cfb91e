#!/usr/bin/env python3
"""Wall-clock time of the first runQuery on fields no query has used before, against the same
query again: `python3 bench/first_query.py [--hearth-bin B] [--docs 1000,10000,100000]`.

Since index rows exist only for (collection id, field) pairs a query has needed (docs/firestore.md,
*Storage and indexes*), the first query on a field builds its rows for every document of the
collection id in one write transaction before it answers. For each size: a fresh Hearth with a data
directory (admin only, no rules), users/u/files seeded with the bench's documents (`seed_docs`), then
the bench's runQuery (`status == "ready"` newest 10 by `n`) timed once (it builds `status` and `n`),
then 5 more times (median). Run it under the measure lock: these are wall-clock times.
`--group`: a count over the collection group `files` (every seeded document) and over a 10-document
group `notes` beside it, each timed once and then 5 more times: the first collection-group query
builds the group scan index (docs/benchmarks.md, commit28).
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
from benchlib.context import DOC_NAME_PREFIX, DOCS  # noqa: E402
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


def timed_group(c, collection_id, expected):
    """A count of every document of the collection group `collection_id` (it reads them all)."""
    body = {"structuredAggregationQuery": {
        "structuredQuery": {"from": [{"collectionId": collection_id, "allDescendants": True}]},
        "aggregations": [{"alias": "n", "count": {}}]}}
    t = time.perf_counter()
    r = c.request("POST", f"{DOCS}:runAggregationQuery", body=json.dumps(body),
                  headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
    elapsed = time.perf_counter() - t
    rows = (r.json() or []) if r.status == 200 else []
    counts = [x["result"]["aggregateFields"]["n"]["integerValue"] for x in rows if "result" in x]
    if r.status != 200 or counts != [str(expected)]:
        raise SystemExit(f"runAggregationQuery answered {r.status}: {r.snippet()}")
    return elapsed


def group_sizes(c, size, args):
    """`--group`: the first collection-group query (it may build the group's scan index) against the
    same again, on the seeded collection group and on a small one (10 documents) beside it."""
    headers = {"Authorization": "Bearer owner"}
    writes = [{"update": {"name": f"{DOC_NAME_PREFIX}/users/u/notes/n{i}", "fields": {"i": {"integerValue": str(i)}}}}
              for i in range(10)]
    r = c.request("POST", f"{DOCS}:commit", body=json.dumps({"writes": writes}), headers=headers)
    if r.status != 200:
        raise SystemExit(f"commit answered {r.status}: {r.snippet()}")
    for collection_id, expected in (("notes", 10), ("files", size)) if args.small_first else (("files", size), ("notes", 10)):
        first = timed_group(c, collection_id, expected)
        again = statistics.median(timed_group(c, collection_id, expected) for _ in range(5))
        print(f"{size:,} documents: first count of group {collection_id} ({expected:,}) {first * 1000:,.1f} ms, "
              f"then {again * 1000:,.2f} ms (median of 5)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--docs", default="1000,10000,100000")
    ap.add_argument("--group", action="store_true", help="time collection-group counts instead (group_sizes)")
    ap.add_argument("--small-first", action="store_true", help="with --group: the small group's count first")
    args = ap.parse_args()
    for size in [int(s) for s in args.docs.split(",")]:
        reg = Registry()
        with tempfile.TemporaryDirectory(prefix="firstq-") as work:
            try:
                h = Hearth(reg, args.hearth_bin, work, data_dir=os.path.join(work, "data"))
                h.start(timeout=120)
                c = Client(h.port("firestore"))
                firebase.seed_docs(c, "u", size)
                if args.group:
                    group_sizes(c, size, args)
                    continue
                first = timed_query(c)
                again = statistics.median(timed_query(c) for _ in range(5))
                c.close()
                print(f"{size:,} documents: first runQuery {first * 1000:,.1f} ms (builds status and n), "
                      f"then {again * 1000:,.2f} ms (median of 5)", flush=True)
            finally:
                reg.stop_all()


if __name__ == "__main__":
    main()
