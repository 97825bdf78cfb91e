#!/usr/bin/env python3
"""Instructions per Firestore get (REST and gRPC) and per gRPC Commit, counted by callgrind
(repeatable where wall-clock rates on a shared machine are not):
`python3 bench/callgrind_get.py [--hearth-bin B] [-n N] [--only rest,grpc,commit,light] [--width W] [--threads] [--loadgen]`.

Starts Hearth under `valgrind --tool=callgrind --instr-atstart=no` with the shipped rules and a
data directory (as `make bench` does), signs up
a user, stores users/{uid}/files/f0, then instruments (and so counts) only while the load runs:
N user-token gets over REST (one keep-alive connection) and over gRPC (h2load, one stream), and
gRPC Commits creating a valid users/{uid}/files document (bench/grpcload -mode commit, one stream,
as many as it completes in a few seconds; instructions are divided by its count of grpc-status 0
answers). `--width W` runs the gets W at a time instead (REST: W keep-alive connections; gRPC: W
streams in flight on h2load's or the light client's one connection), as the 16-wide rows run them;
`--threads` also prints the busiest threads' counts per call (a connection's HTTP/2 loop thread
carries a whole gRPC row). `--only query` counts runQuery instead, on a collection of QUERY_DOCS documents (larger
than a reader's page cache, so it shows what that cache's size costs, as reads are answered with
nothing written in between): the benchmark's query (status == "ready", newest 10 by n) and a range
query starting at a random n each time (same seed every run). Prints instructions per request for
each, and SQLite's page-cache bytes at the end from /emulator/v1/stats. `--rss C` runs the same
seed and range queries natively instead, from C clients at once (so C pooled readers), and prints
hearth's RSS and SQLite's bytes idle after the seed and after the queries. `--loadgen` counts the
load generators instead (h2load and wrk + replay.lua, one call in flight, each whole under callgrind
at two lengths: instructions per additional call), against a native Hearth.
Needs valgrind (Debian package valgrind), h2load (nghttp2-client) and for the Commit go with
golang-google-cloud-dev (the Makefile's DEB_PACKAGES); loopback only.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
import sys
import types

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench  # noqa: E402
from benchlib.context import DOC_NAME_PREFIX, DOCS  # noqa: E402
from benchlib.httpc import Client, expect  # noqa: E402
# control, total_ir and counted are imported here by name by the other callgrind scripts too.
from benchlib.instructions import control, counted, missing_tools, spread, total_ir  # noqa: E402,F401
from benchlib.procs import Hearth, Registry, proc_status  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def seed_user(h):
    """A signed-up user with users/{uid}/files/f0 stored."""
    c = Client(h.port("auth"))
    user = firebase.sign_up(c, "cg@example.com")
    c.close()
    c = Client(h.port("firestore"))
    expect(c.request("POST", f"{DOCS}:commit", headers={"Authorization": "Bearer owner"},
                     body={"writes": [{"update": {"name": f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0",
                                                  "fields": firebase.file_fields(user.uid, created="2024-01-01T00:00:00Z")}}]}),
           "seed commit")
    c.close()
    return user


def measure(label, hearth_bin, rules, n, load, keep=False, threads=False):
    """Instructions per request while `load(h, user, n)` runs user-token requests."""
    return counted(label, hearth_bin, n, seed_user, load, rules=rules, data_dir=True, keep=keep, threads=threads)


QUERY_DOCS = 8000


def seed_collection(h):
    """A user with QUERY_DOCS documents in users/{uid}/files (admin commits)."""
    c = Client(h.port("auth"))
    user = firebase.sign_up(c, "cgq@example.com")
    c.close()
    c = Client(h.port("firestore"))
    firebase.seed_docs(c, user.uid, QUERY_DOCS)
    c.close()
    return user


def query_load(ranged):
    """runQuery with the user's token: the benchmark's newest-10-ready query, or (ranged) the 10
    documents at or below a random n, from a fixed-seed generator (the same ranges every run)."""
    rng = random.Random(19)

    def load(h, user, n):
        c = Client(h.port("firestore"))
        try:
            for _ in range(n):
                if ranged:
                    where = {"fieldFilter": {"field": {"fieldPath": "n"}, "op": "LESS_THAN_OR_EQUAL",
                                             "value": {"integerValue": str(rng.randrange(QUERY_DOCS))}}}
                else:
                    where = {"fieldFilter": {"field": {"fieldPath": "status"}, "op": "EQUAL", "value": {"stringValue": "ready"}}}
                body = {"structuredQuery": {"from": [{"collectionId": "files"}], "where": where,
                                            "orderBy": [{"field": {"fieldPath": "n"}, "direction": "DESCENDING"}], "limit": 10}}
                r = c.request("POST", f"{DOCS}/users/{user.uid}:runQuery", body=body,
                              headers={"Authorization": f"Bearer {user.id_token}"})
                if r.status != 200 or len([x for x in (r.json() or []) if "document" in x]) != 10:
                    raise SystemExit(f"runQuery answered {r.status}: {r.snippet()}")
            caches = Client(h.port("hub")).request("GET", "/emulator/v1/stats").json()["memory"]
            print(f"  after {n} queries: SQLite {caches['sqliteBytes'] / 2**20:.1f} MiB, caches "
                  f"{json.dumps(caches.get('sqliteCaches'))}", file=sys.stderr)
        finally:
            c.close()
    return load


def query_rss(hearth_bin, rules, clients, n):
    """RSS and SQLite's caches of a native hearth: idle after the seed, then after `n` range queries
    from each of `clients` connections at once (each thread its own reader)."""
    work = tempfile.mkdtemp(prefix="rss-", dir=os.path.join(ROOT, ".build"))
    reg = Registry()
    h = Hearth(reg, hearth_bin, work, data_dir=os.path.join(work, "data"), rules=rules, log_name="hearth-rss")
    try:
        h.start()
        user = seed_collection(h)

        def figures(when):
            m = Client(h.port("hub")).request("GET", "/emulator/v1/stats").json()["memory"]
            print(f"{when}: RSS {proc_status(h.pid)['VmRSS'] / 1024:.1f} MiB, SQLite {m['sqliteBytes'] / 2**20:.1f} MiB, "
                  f"caches {json.dumps(m.get('sqliteCaches'))}")
        time.sleep(2)
        figures("idle after seeding")
        spread(n * clients, clients, lambda k, count: query_load(True)(h, user, count))
        figures(f"after {n} range queries on each of {clients} connections")
    finally:
        reg.stop_all()
        shutil.rmtree(work, ignore_errors=True)


def rest_load(h, user, n):
    c = Client(h.port("firestore"))
    try:
        for _ in range(n):
            r = c.request("GET", f"{DOCS}/users/{user.uid}/files/f0", headers={"Authorization": f"Bearer {user.id_token}"})
            if r.status != 200:
                raise SystemExit(f"REST get answered {r.status}: {r.snippet()}")
    finally:
        c.close()


def rest_wide_load(width):
    """`rest_load` on `width` connections at once (the REST c16 row's shape; one Python thread each,
    which under callgrind keeps every connection's next request waiting on Hearth)."""
    if width == 1:
        return rest_load
    failed = []

    def load(h, user, n):
        def one(_k, count):
            try:
                rest_load(h, user, count)
            except SystemExit as e:
                failed.append(e)
        spread(n, width, one)
        if failed:
            raise failed[0]
    return load


def grpc_load(frame_file, width=1):
    def load(h, user, n):
        r = subprocess.run(["h2load", "-n", str(n), "-c", "1", "-m", str(width), "-d", frame_file,
                            "-H", "content-type: application/grpc", "-H", "te: trailers",
                            "-H", f"authorization: Bearer {user.id_token}",
                            f"http://127.0.0.1:{h.port('firestore')}/google.firestore.v1.Firestore/GetDocument"],
                           capture_output=True, text=True, timeout=600)
        if f"{n} succeeded" not in r.stdout:
            raise SystemExit(f"h2load: {r.stdout[-400:]}")
    return load


def run_grpcload(grpcload_bin, h, user, n, mode, args, width=1):
    """One grpcload run in `mode` (`width` calls in flight) against Hearth `h`, briefly for the
    warm-up (n <= 50); returns how many calls succeeded, and stops the count on any failed call."""
    seconds = 1 if n <= 50 else max(2, n // 400)
    r = subprocess.run([grpcload_bin, "-addr", f"127.0.0.1:{h.port('firestore')}", "-token", user.id_token,
                        "-mode", mode, "-streams", str(width), "-duration", str(seconds)] + args,
                       capture_output=True, text=True, timeout=600)
    line = next((l for l in r.stdout.splitlines() if l.startswith("GRPCLOAD ")), None)
    if r.returncode != 0 or line is None:
        raise SystemExit(f"grpcload {mode} failed: {r.stderr[-400:]}")
    summary = json.loads(line[len("GRPCLOAD "):])
    if sum((summary.get("failed") or {}).values()) or not summary.get("ok"):
        raise SystemExit(f"grpcload {mode}: calls failed: {summary}")
    return summary["ok"]


def grpc_light_load(grpcload_bin, width=1):
    """GetDocument from grpcload's light client (-client h2: the token HPACK-indexed after the first
    call, as grpc-go sends it), `width` in flight on one connection, for a few seconds; returns how
    many succeeded."""
    def load(h, user, n):
        return run_grpcload(grpcload_bin, h, user, n, "get",
                            ["-doc", f"users/{user.uid}/files/f0", "-client", "h2", "-per-conn", "16"], width)
    return load


def grpc_commit_load(grpcload_bin):
    """Commits creating users/{uid}/files/<unique id> from grpcload, one in flight; returns how many
    succeeded (the warm-up call passes n=50 and runs briefly)."""
    runs = [0]

    def load(h, user, n):
        runs[0] += 1
        return run_grpcload(grpcload_bin, h, user, n, "commit", ["-uid", user.uid, "-tag", f"cg-{runs[0]}"])
    return load


def loadgen_counts(hearth_bin, rules, n):
    """Instructions per call of the load generators themselves (h2load for gRPC, wrk with replay.lua
    for REST, one connection, one call in flight, as the 1-stream / 1-connection rows run them),
    against a native Hearth. Each runs whole under callgrind twice, short and long, and the
    difference of instructions over the difference of calls is what one more call costs it (start-up,
    Lua set-up and the request file cancel out). At one call in flight the client's CPU is on every
    round trip, as much as the server's."""
    from benchlib.loadgen import REPLAY, write_requests
    work = tempfile.mkdtemp(prefix="cg-loadgen-", dir=os.path.join(ROOT, ".build"))
    reg = Registry()
    h = Hearth(reg, hearth_bin, work, data_dir=os.path.join(work, "data"), rules=rules, log_name="hearth-loadgen")
    try:
        h.start()
        user = seed_user(h)
        port = h.port("firestore")
        frame = os.path.join(work, "getdoc.bin")
        with open(frame, "wb") as f:
            f.write(framed_get(f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0"))
        requests = write_requests(os.path.join(work, "get.lua"), [{
            "method": "GET", "path": f"{DOCS}/users/{user.uid}/files/f0",
            "headers": {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {user.id_token}"}}])

        def under_callgrind(argv, tag):
            out = os.path.join(work, f"callgrind.{tag}")
            r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv,
                               capture_output=True, text=True, timeout=900)
            with open(out) as f:
                ir = next(int(m.group(1)) for m in (re.match(r"totals: (\d+)", l) for l in f) if m)
            return ir, r.stdout

        def h2load(calls, tag):
            ir, text = under_callgrind(["h2load", "-n", str(calls), "-c", "1", "-m", "1", "-t", "1", "-d", frame,
                                        "-H", "content-type: application/grpc", "-H", "te: trailers",
                                        "-H", f"authorization: Bearer {user.id_token}",
                                        "-H", f"google-cloud-resource-prefix: {DOC_NAME_PREFIX.rsplit('/documents', 1)[0]}",
                                        f"http://127.0.0.1:{port}/google.firestore.v1.Firestore/GetDocument"], tag)
            if f"{calls} succeeded" not in text:
                raise SystemExit(f"h2load under callgrind: {text[-400:]}")
            return ir, calls

        def wrk(seconds, tag):
            ir, text = under_callgrind(["wrk", "-t", "1", "-c", "1", "-d", f"{seconds}s", "-s", REPLAY,
                                        f"http://127.0.0.1:{port}/", "--", requests], tag)
            line = next((l for l in text.splitlines() if l.startswith("BENCHJSON ")), None)
            if line is None:
                raise SystemExit(f"wrk under callgrind: {text[-400:]}")
            s = json.loads(line[len("BENCHJSON "):])
            if s["status_errors"] or not s["requests"]:
                raise SystemExit(f"wrk under callgrind: {s}")
            return ir, s["requests"]

        for label, run, short, long in (("h2load, gRPC GetDocument, 1 stream", h2load, n, 3 * n),
                                        ("wrk + replay.lua, REST get, 1 connection", wrk, 2, 6)):
            (i1, c1), (i2, c2) = run(short, "a"), run(long, "b")
            print(f"{label}: {(i2 - i1) / (c2 - c1):,.0f} instructions per call of the load generator "
                  f"({c2 - c1:,} calls between the runs)")
    finally:
        reg.stop_all()
        shutil.rmtree(work, ignore_errors=True)


def framed_get(name):
    """A 5-byte-framed GetDocumentRequest{name} (field 1, length-delimited)."""
    body = bytes([0x0A]) + varint(len(name.encode())) + name.encode()
    return bytes([0]) + len(body).to_bytes(4, "big") + body


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--keep", action="store_true", help="keep the callgrind dumps (for callgrind_annotate)")
    ap.add_argument("--only", default="rest,grpc,commit",
                    help="comma-separated: rest, grpc, commit, query, light (GetDocument from grpcload -client h2)")
    ap.add_argument("--width", type=int, default=1,
                    help="gets in flight: REST connections, gRPC streams on one connection (rest, grpc, light)")
    ap.add_argument("--threads", action="store_true", help="also print the busiest threads' instructions per call")
    ap.add_argument("--loadgen", action="store_true",
                    help="count the load generators instead (h2load and wrk per call, against a native Hearth)")
    ap.add_argument("--rss", type=int, metavar="C", help="no callgrind: RSS idle and after range queries from C clients")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if args.loadgen:
        loadgen_counts(args.hearth_bin, os.path.join(ROOT, "rules", "firestore.rules"), args.n)
        return 0
    if args.rss:
        query_rss(args.hearth_bin, os.path.join(ROOT, "rules", "firestore.rules"), args.rss, args.n)
        return 0
    why = missing_tools(("h2load",))
    if why:
        print(why, file=sys.stderr)
        return 2
    rules = os.path.join(ROOT, "rules", "firestore.rules")
    if "query" in only:
        for ranged, label in ((False, "newest 10 ready"), (True, "10 at or below a random n")):
            counted(f"REST runQuery, {label}, on {QUERY_DOCS:,} documents (user token, rules on)", args.hearth_bin,
                    args.n, seed_collection, query_load(ranged), rules=rules, data_dir=True, keep=args.keep)
    wide = f", {args.width} at once" if args.width > 1 else ""
    if "rest" in only:
        measure(f"REST get (user token, rules on{wide})", args.hearth_bin, rules, args.n, rest_wide_load(args.width),
                args.keep, args.threads)
    if "commit" in only or "light" in only:
        ctx = types.SimpleNamespace(build=os.path.join(ROOT, ".build"), grpcload=None)
        try:
            grpcload_bin = grpcbench.build_grpcload(ctx)
        except grpcbench.NotAvailable as e:
            print(f"gRPC Commit, light GetDocument: n/a ({e})", file=sys.stderr)
        else:
            if "commit" in only:
                measure("gRPC Commit creating users/{uid}/files/* (user token, rules on)", args.hearth_bin, rules,
                        args.n, grpc_commit_load(grpcload_bin), args.keep)
            if "light" in only:
                measure(f"gRPC GetDocument from grpcload's light client (user token, rules on{wide})", args.hearth_bin,
                        rules, args.n, grpc_light_load(grpcload_bin, args.width), args.keep, args.threads)
    if "grpc" not in only:
        return 0

    def grpc(h, user, n):
        # A file of this run's own: two runs at once (main's binary and a branch's) shared one path,
        # and one asked for the other's document — NOT_FOUND at HTTP 200, which h2load counts as done.
        fd, path = tempfile.mkstemp(prefix="cg-getdoc-", suffix=".bin", dir=os.path.join(ROOT, ".build"))
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(framed_get(f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0"))
            grpc_load(path, args.width)(h, user, n)
        finally:
            os.unlink(path)
    measure(f"gRPC GetDocument (user token, rules on{wide})", args.hearth_bin, rules, args.n, grpc, args.keep,
            args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
