#!/usr/bin/env python3
"""Wall-clock A/B of `make bench`'s Firestore commit rows between Hearth binaries:
`python3 bench/commit_ab.py BIN_A BIN_B [--rounds 2] [--duration 5]`.

The rows as `make bench` runs them: fs.commit.c1 and fs.commit.c16 (wrk replaying a user-token REST
commit creating users/{uid}/files/* with serverTimestamp and `exists: false`), grpc.commit.s16 and
rt.write.s16 (bench/grpcload, 16 streams on one connection, 1 s warm-up; its light client `-client h2`
as make bench runs them, or grpc-go with `--client grpc`), each Hearth started fresh
on its own data directory with the shipped rules. Binaries alternate within every round (A, B, A, B,
…) so drifting background load falls on both. On a shared machine run it under the measure lock at
high priority (`flock … nice -n -15 python3 bench/commit_ab.py …`), as docs/benchmarks.md says.
"""
import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import types

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.loadgen import Wrk  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def fresh_hearth(binary, work, extra=()):
    """A Hearth started on its own data directory under `work` with the shipped rules (and `extra`
    start flags), and a signed-up user: yields (hearth, user, Firestore port); stops it on exit."""
    data = os.path.join(work, "data")
    os.makedirs(data)
    reg = Registry()
    h = Hearth(reg, binary, work, data_dir=data, rules=os.path.join(ROOT, "rules", "firestore.rules"),
               extra=extra)
    try:
        h.start(timeout=120)
        c = Client(h.port("auth"))
        user = firebase.sign_up(c, "ab@example.com")
        c.close()
        yield h, user, h.port("firestore")
    finally:
        reg.stop_all()


def rest_commit(port, user):
    """The bench's REST commit for wrk: a create of users/{uid}/files/<unique id> with the user's token."""
    body = json.dumps({"writes": [firebase.create_write(user.uid, "b-@@RUN@@-@@SEQ@@", firebase.file_fields(user.uid))]})
    return {"method": "POST", "path": f"{firebase.DOCS}:commit", "template": True, "body": body,
            "headers": {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {user.id_token}", "Content-Type": "application/json"}}


def one(binary, work, duration, ctx, client="h2"):
    """The four rows for one fresh Hearth; returns {row: rate}."""
    with fresh_hearth(binary, work) as (h, user, port):
        commit = rest_commit(port, user)
        wrk = Wrk(work, duration)
        out = {}
        wrk.run(port, [commit], 16, "warm", duration=1, profile=False)
        for conns in (1, 16):
            s = wrk.run(port, [commit], conns, f"c{conns}", profile=False)
            if s["error_count"]:
                raise SystemExit(f"{binary}: fs.commit.c{conns} had {s['error_count']} errors")
            out[f"fs.commit.c{conns}"] = s["rps"]
        for key, mode in (("grpc.commit.s16", "commit"), ("rt.write.s16", "write")):
            s = grpcbench.grpcload(ctx, port, user.id_token, mode, "-uid", user.uid, "-streams", 16, "-duration", duration,
                                   "-warmup", 1, "-tag", f"{mode}-{os.getpid()}-{len(out)}", "-per-conn", 16,
                                   "-client", client)
            grpcbench.require_ok(s, key)
            out[key] = s["rps"]
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--client", default="h2", help="grpcload's client for the gRPC rows: h2 (make bench's) or grpc (grpc-go)")
    args = ap.parse_args()
    build = os.path.abspath(os.path.join(ROOT, ".build"))
    ctx = types.SimpleNamespace(build=build, grpcload=None)
    grpcbench.build_grpcload(ctx)
    results = {b: [] for b in args.binaries}
    for r in range(args.rounds):
        for b in args.binaries:
            work = tempfile.mkdtemp(prefix="commit-ab-", dir=build)
            try:
                rates = one(b, work, args.duration, ctx, args.client)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            results[b].append(rates)
            print(f"round {r + 1} {b}: " + ", ".join(f"{k} {v:,.0f}" for k, v in rates.items()), flush=True)
    for b, runs in results.items():
        print(f"{b}: " + ", ".join(f"{k} " + " / ".join(f"{run[k]:,.0f}" for run in runs) for k in runs[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
