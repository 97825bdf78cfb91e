#!/usr/bin/env python3
"""Instructions per REST transaction of the transaction rows' load generator, per client: the
repeatable measure of what the client takes from the two cores it shares with the servers
(docs/benchmarks.md, txnlight).

`python3 bench/callgrind_txnclient.py [--clients raw,grpc] [--seconds 2,6] [--hearth-bin B]`

Hearth's release binary runs natively on a fresh data directory with the shipped rules; for each client
(`raw`: grpcload's light HTTP/1.1 client, fs.txn.light.c16; `grpc`: Go's net/http, fs.txn.c16)
`grpcload -mode txn -streams 16` runs under `valgrind --tool=callgrind` twice, for the shortest and the
longest of --seconds, and the difference of the two runs' instructions over the difference of their
transactions is the client's user-space instructions per transaction (the set-up — Go's start, the 16
creates — cancels out). Go's asynchronous preemption is off under valgrind (`GODEBUG=asyncpreemptoff=1`:
callgrind aborts on its signals); the kernel's work is not counted. Every run must have no failed
transaction. Loopback only; every process started is stopped.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench  # noqa: E402
from benchlib.context import Context  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import BENCH_DIR, Hearth  # noqa: E402

ROOT = os.path.dirname(BENCH_DIR)


def counted_run(grpcload, port, user, client, seconds, out_file):
    """One grpcload run under callgrind: (successful transactions, instructions)."""
    argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", grpcload,
            "-addr", f"127.0.0.1:{port}", "-token", user.id_token, "-mode", "txn", "-uid", user.uid,
            "-streams", "16", "-duration", str(seconds), "-tag", f"cg-{client}-{int(time.time() * 1000)}",
            "-client", client]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, GODEBUG="asyncpreemptoff=1"))
    line = next((l for l in r.stdout.splitlines() if l.startswith("GRPCLOAD ")), None)
    if r.returncode != 0 or line is None:
        raise SystemExit(f"grpcload {client} under callgrind failed: {r.stderr.strip()[-600:]}")
    s = json.loads(line[len("GRPCLOAD "):])
    if s.get("failed") or not s.get("ok"):
        raise SystemExit(f"grpcload {client}: failed transactions {s.get('failed')} ({s.get('failed_example')})")
    with open(out_file) as f:
        total = int(re.search(r"^summary:\s+(\d+)", f.read(), re.M).group(1))
    return s["ok"], total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", default="raw,grpc")
    ap.add_argument("--seconds", default="2,6", help="the two run lengths, shortest first")
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    args = ap.parse_args()
    short, long_ = (float(s) for s in args.seconds.split(","))
    shipped = os.path.join(ROOT, "rules", "firestore.rules")
    ctx = Context(False, ROOT, os.path.abspath(args.hearth_bin), None, shipped)
    grpcload = grpcbench.build_grpcload(ctx)
    try:
        h = Hearth(ctx.registry, ctx.hearth_bin, ctx.run_dir, data_dir=os.path.join(ctx.run_dir, "hearth-txnclient"),
                   rules=shipped, log_name="hearth-txnclient").start()
        c = Client(h.port("auth"))
        try:
            user = firebase.sign_up(c, f"txnclient-{int(time.time())}@example.com")
        finally:
            c.close()
        for client in args.clients.split(","):
            runs = [counted_run(grpcload, h.port("firestore"), user, client, secs,
                                os.path.join(ctx.run_dir, f"callgrind-txnclient-{client}-{secs}.out"))
                    for secs in (short, long_)]
            (n0, i0), (n1, i1) = runs
            print(f"{client:5s} {(i1 - i0) / (n1 - n0):>10,.0f} instructions per transaction "
                  f"({n1 - n0} transactions; runs of {short:g} s and {long_:g} s: {n0} and {n1})", flush=True)
    finally:
        ctx.registry.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
