#!/usr/bin/env python3
"""Hearth's CPU by thread during each transaction load run (`grpcload -mode txn`), wherever the run
comes from (`bench/run.py`, `bench/rest_floor.py`): a watcher started beside the harness.

`python3 bench/txn_threads.py [--client raw|grpc] [--perf DIR] [--runs N]`

It waits for a `grpcload … -mode txn` process (with `--client`, only runs of that client), finds the
Hearth listening on its `-addr` port, reads every thread of that process (`/proc/PID/task/*/stat` and
`status`: user and system ticks, voluntary and involuntary switches) when it sees the run start and
again when the run ends, and prints the difference per thread name (libmicrohttpd's workers of every
listener share the name `MHD-worker`) in cores and switches per second of the run. Divide by the
round's transactions per second (the harness prints it) for µs per transaction: the split the
rounds' `machine.server` does not give (docs/benchmarks.md, txn34). It notices a run some tens of ms
after its start, so a short warm-up run may read nothing. With `--perf DIR` a `perf record -g` of
the Hearth process over the same window is kept as DIR/txn-N.data. It starts nothing but perf.
"""
import argparse
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def procs():
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    yield int(p), f.read().split(b"\0")
            except OSError:
                pass


def find_txn(client):
    for pid, argv in procs():
        if argv and argv[0].endswith(b"grpcload") and b"txn" in argv:
            c = argv[argv.index(b"-client") + 1].decode() if b"-client" in argv else "grpc"
            if client is None or c == client:
                addr = argv[argv.index(b"-addr") + 1].decode() if b"-addr" in argv else ""
                return pid, c, addr
    return None


def hearth_pid(port):
    """The hearth process listening on `port`."""
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True).stdout
    for tok in out.split("pid=")[1:]:
        return int(tok.split(",")[0])
    return None


def threads(pid):
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                s = f.read()
            with open(f"/proc/{pid}/task/{t}/status") as f:
                st = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        name = s[s.index("(") + 1:s.rindex(")")]
        rest = s[s.rindex(")") + 2:].split()
        out[int(t)] = (name, int(rest[11]), int(rest[12]), int(st["voluntary_ctxt_switches"]),
                       int(st["nonvoluntary_ctxt_switches"]))
    return out


def split(before, after):
    """{thread name: {user, system (seconds), voluntary, involuntary (switches), threads}} between two
    `threads()` readings; a thread that started in between counts from zero, one that ended is gone
    from `after` and counts nothing."""
    rows = {}
    for tid, (name, u, s, v, iv) in after.items():
        b = before.get(tid, (name, 0, 0, 0, 0))
        r = rows.setdefault(name, {"user": 0.0, "system": 0.0, "voluntary": 0, "involuntary": 0, "threads": 0})
        r["user"] += (u - b[1]) / TICK
        r["system"] += (s - b[2]) / TICK
        r["voluntary"] += v - b[3]
        r["involuntary"] += iv - b[4]
        r["threads"] += 1
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--client", default=None, help="only runs of this grpcload client (raw, grpc)")
    ap.add_argument("--perf", default=None, help="keep a perf record -g of each run here")
    ap.add_argument("--runs", type=int, default=100, help="stop after this many runs")
    a = ap.parse_args()
    n = 0
    while n < a.runs:
        found = find_txn(a.client)
        if not found:
            time.sleep(0.02)
            continue
        gpid, client, addr = found
        port = addr.rsplit(":", 1)[-1]
        hp = hearth_pid(port)
        if hp is None:
            time.sleep(0.05)
            continue
        before, t0 = threads(hp), time.time()
        perf = None
        if a.perf:
            os.makedirs(a.perf, exist_ok=True)
            perf = subprocess.Popen(["perf", "record", "-g", "-q", "-o", os.path.join(a.perf, f"txn-{n}.data"),
                                     "-p", str(hp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while os.path.exists(f"/proc/{gpid}"):
            time.sleep(0.01)
        after, t1 = threads(hp), time.time()
        if perf:
            perf.send_signal(2)
            perf.wait()
        secs = t1 - t0
        rows = split(before, after)
        total = sum(r["user"] + r["system"] for r in rows.values())
        print(f"run {n} client={client} hearth={hp} {secs:.2f}s: hearth {total / secs:.3f} cores "
              f"(user {sum(r['user'] for r in rows.values()) / secs:.3f})", flush=True)
        for name, r in sorted(rows.items(), key=lambda kv: -(kv[1]["user"] + kv[1]["system"])):
            if r["user"] + r["system"] > 0 or r["voluntary"] + r["involuntary"] > 100:
                print(f"  {name:28s} x{r['threads']:<3d} user {r['user'] / secs:.3f} sys {r['system'] / secs:.3f} cores, "
                      f"switches {r['voluntary'] / secs:8.0f}/s vol {r['involuntary'] / secs:8.0f}/s invol", flush=True)
        n += 1


if __name__ == "__main__":
    sys.exit(main())
