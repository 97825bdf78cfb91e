#!/usr/bin/env python3
"""The HTTP/1.1 rows that a per-request change moves, for one or more Hearth binaries alternated round
by round (an A/B on a shared machine): `python3 bench/http1_rows.py --bin A --bin B [--rounds N]`.

- the Firestore REST commit at one connection (`make bench`'s fs.commit.c1: user token, rules on,
  serverTimestamp, a new document per request);
- the S3 4 KiB presigned GET at 1 and 16 connections (s3.get_presigned.c1/c16).

Requests and wrk settings are `benchlib.firebase`'s and `benchlib.s3`'s, unchanged; each round starts
a fresh Hearth on a fresh data directory with the bench rules. Loopback only.
"""
import argparse
import contextlib
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, s3  # noqa: E402
from benchlib.context import DOCS, Context  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.loadgen import require_clean  # noqa: E402
from benchlib.procs import Hearth  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def fresh_hearth(ctx, binary, label):
    """A Hearth of its own on an empty data directory with the bench rules; stopped and removed after."""
    data_dir = os.path.join(ctx.run_dir, f"hearth-http1-{label}")
    shutil.rmtree(data_dir, ignore_errors=True)
    h = Hearth(ctx.registry, binary, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth, log_name=f"hearth-{label}")
    h.start()
    try:
        yield h
    finally:
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def one_round(ctx, binary, label):
    out = {}
    with fresh_hearth(ctx, binary, label) as h:
        c = Client(h.port("auth"))
        try:
            user = firebase.sign_up(c, f"http1-{label}@example.com")
        finally:
            c.close()
        port = h.port("firestore")
        body = json.dumps({"writes": [firebase.create_write(user.uid, "b-@@RUN@@-@@SEQ@@", firebase.file_fields(user.uid))]})
        commit = {"method": "POST", "path": f"{DOCS}:commit", "template": True, "body": body,
                  "headers": {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {user.id_token}",
                              "Content-Type": "application/json"}}
        s = require_clean(ctx.wrk.run(port, [commit], 1, f"http1-commit-{label}", profile=False), "REST commit c1")
        out["commit c1"] = s["rps"]
        reqs = s3.s3_small_requests(ctx, h.port("s3"), "hearth")
        for conns in (1, 16):
            s = require_clean(ctx.wrk.run(h.port("s3"), reqs["get_presigned"], conns, f"http1-s3get-{label}-c{conns}",
                                          profile=False), f"S3 presigned GET c{conns}")
            out[f"s3 GET c{conns}"] = s["rps"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", help="hearth binary (repeat for an A/B; default .build/release/hearth)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in (args.bin or [os.path.join(ROOT, ".build", "release", "hearth")])]
    ctx = Context(False, ROOT, bins[0], None, None)
    ctx.rules_for_hearth = os.path.join(ROOT, "bench", "bench.rules")
    try:
        for r in range(args.rounds):
            for i, b in enumerate(bins):
                out = one_round(ctx, b, f"{i}")
                print(f"round {r + 1} bin {i} ({b}): " + ", ".join(f"{k} {v:,.0f}" for k, v in out.items()), flush=True)
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
