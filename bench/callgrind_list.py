#!/usr/bin/env python3
"""Instructions per Firestore documents.list first page and per the bench's runQuery, counted by
callgrind (repeatable where wall-clock rates on a shared machine are not):
`python3 bench/callgrind_list.py [--hearth-bin B] [-n N] [--docs 1000,10000]
[--only list,query,coldquery,grpcquery,grpcquerylight,grpcbatchget] [--keep] [--threads]`.

For each collection size: a fresh Hearth under `valgrind --tool=callgrind --instr-atstart=no` with the
shipped rules and a data directory (as `make bench` runs it), a user whose users/{uid}/files holds that
many documents (seeded as `make bench` seeds them), then N of the bench's requests one at a time over
one keep-alive connection with the user's token — `GET …/files?pageSize=50` (fs.list.*) or the
`status == "ready"` newest-10 runQuery (fs.query.*) — counted after a warm-up. `grpcquery` and
`grpcbatchget` count the gRPC rows of `benchlib/grpcreads.py` the same way: the same RunQuery, and
BatchGetDocuments of the collection's first 10 documents, from bench/grpcload (grpc-go, one call in
flight, every answer checked) for a few seconds, divided by the calls it completed; `grpcquerylight`
the same RunQuery from grpcload's light client (`-client h2`, the `.light` row). `--threads` also
prints the busiest threads' counts per call. `coldquery` counts
the REST runQuery after an admin write to another document each time (the write empties the read
cache, so every query reads its 10 documents afresh): per write + query pair. `--keep` keeps
the dumps for `callgrind_annotate`.
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench, listing  # noqa: E402
from benchlib.context import DOCS  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.instructions import counted, missing_tools  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUERY = {"structuredQuery": {
    "from": [{"collectionId": "files"}],
    "where": {"fieldFilter": {"field": {"fieldPath": "status"}, "op": "EQUAL", "value": {"stringValue": "ready"}}},
    "orderBy": [{"field": {"fieldPath": "n"}, "direction": "DESCENDING"}], "limit": 10}}


def seeder(size):
    def prepare(h):
        c = Client(h.port("auth"))
        user = firebase.sign_up(c, f"cgl{size}@example.com")
        c.close()
        c = Client(h.port("firestore"))
        firebase.seed_docs(c, user.uid, size)
        c.close()
        return user
    return prepare


def list_load(h, user, n):
    c = Client(h.port("firestore"))
    try:
        for _ in range(n):
            r = c.request("GET", f"{DOCS}/users/{user.uid}/files?pageSize={listing.PAGE}",
                          headers={"Authorization": f"Bearer {user.id_token}"})
            if r.status != 200 or len((r.json() or {}).get("documents", [])) != listing.PAGE:
                raise SystemExit(f"documents.list answered {r.status}: {r.snippet()}")
    finally:
        c.close()


def run_query(c, user):
    """The bench's runQuery once; stops the count unless it answers its 10 documents."""
    r = c.request("POST", f"{DOCS}/users/{user.uid}:runQuery", body=json.dumps(QUERY),
                  headers={"Authorization": f"Bearer {user.id_token}", "Content-Type": "application/json"})
    if r.status != 200 or len([x for x in (r.json() or []) if "document" in x]) != 10:
        raise SystemExit(f"runQuery answered {r.status}: {r.snippet()}")


def query_load(h, user, n):
    c = Client(h.port("firestore"))
    try:
        for _ in range(n):
            run_query(c, user)
    finally:
        c.close()


def cold_query_load(h, user, n):
    c = Client(h.port("firestore"))
    try:
        for i in range(n):
            r = c.request("PATCH", f"{DOCS}/other/x", body=json.dumps({"fields": {"i": {"integerValue": str(i)}}}),
                          headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
            if r.status != 200:
                raise SystemExit(f"the write answered {r.status}: {r.snippet()}")
            run_query(c, user)
    finally:
        c.close()


def grpc_loads():
    """The gRPC RunQuery and BatchGetDocuments loads (grpcload built on first use)."""
    import types
    from callgrind_get import run_grpcload
    built = []

    def binary():
        if not built:
            built.append(grpcbench.build_grpcload(types.SimpleNamespace(build=os.path.join(ROOT, ".build"), grpcload=None)))
        return built[0]

    def query(h, user, n):
        return run_grpcload(binary(), h, user, n, "query", ["-uid", user.uid, "-expect", "10"])

    def query_light(h, user, n):
        return run_grpcload(binary(), h, user, n, "query", ["-uid", user.uid, "-expect", "10", "-client", "h2"])

    def batchget(h, user, n):
        docs = ",".join(f"users/{user.uid}/files/f{i:06d}" for i in range(10))
        return run_grpcload(binary(), h, user, n, "batchget", ["-uid", user.uid, "-doc", docs])
    return query, query_light, batchget


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("--docs", default="1000,10000")
    ap.add_argument("--only", default="list,query")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind dumps (for callgrind_annotate)")
    ap.add_argument("--threads", action="store_true", help="also print the busiest threads' counts per call")
    args = ap.parse_args()
    rules = os.path.join(ROOT, "rules", "firestore.rules")
    if missing_tools():
        print(missing_tools(), file=sys.stderr)
        return 2
    grpc_query, grpc_query_light, grpc_batchget = grpc_loads()
    loads = {"list": (f"REST documents.list first page (pageSize {listing.PAGE})", list_load),
             "query": ("REST runQuery (status == ready, newest 10 by n)", query_load),
             "coldquery": ("an admin write, then REST runQuery (status == ready, newest 10 by n)", cold_query_load),
             "grpcquery": ("gRPC RunQuery (status == ready, newest 10 by n)", grpc_query),
             "grpcquerylight": ("gRPC RunQuery (status == ready, newest 10 by n), light client", grpc_query_light),
             "grpcbatchget": ("gRPC BatchGetDocuments of 10", grpc_batchget)}
    for size in (int(s) for s in args.docs.split(",")):
        for kind in args.only.split(","):
            label, load = loads[kind]
            counted(f"{label}, {size:,} documents (user token, rules on)", args.hearth_bin, args.n, seeder(size), load,
                    rules=rules, data_dir=True, keep=args.keep, unit="call" if kind.startswith("grpc") else "request",
                    threads=args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
