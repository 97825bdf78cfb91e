#!/usr/bin/env python3
"""Wall-clock A/B of `make bench`'s S3 small-object rows for two or more Hearth binaries, with moto
beside them: `python3 bench/s3_small_ab.py BIN_A BIN_B [--rounds N] [--kinds K,...] [--conns 1,16]
[--no-moto] [--nginx] [--cpu] [--duration S]`.

Each round starts every binary on a fresh data directory (as `make bench` runs Hearth) and runs
the same wrk points as `make bench` (the very requests, `bench/benchlib/s3.py`), the binaries
alternating point by point so that whatever else the machine does weighs on all alike; moto (the
peer) runs each point too, its failures reported as `make bench` reports them, and with `--nginx` the
GET ceiling (`make bench`'s nginx, same bytes) in the same rounds; `--cpu` adds the served process's
CPU time per request (user + system, all its processes and threads: on a machine others load, a
steadier figure than the rate). Prints one line per
point and run. For a rate worth quoting, run it under the measure lock at a high priority:
`flock /work/wt/notes/measure.lock nice -n -15 python3 bench/s3_small_ab.py …`.
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import s3  # noqa: E402
from benchlib.context import Context  # noqa: E402
from benchlib.procs import Hearth, Moto, Nginx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tree_cpu_seconds(pid):
    """User + system CPU seconds of `pid` and its child processes (nginx's workers)."""
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    total = 0.0
    for p in [str(pid)] + children:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bins", nargs="+", help="hearth binaries (named by their position: A, B, …)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--kinds", default="put_presigned", help=f"comma-separated subset of {', '.join(s3.KINDS)}")
    ap.add_argument("--conns", default="16", help="comma-separated connection counts (default 16)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (make bench: 5)")
    ap.add_argument("--no-moto", action="store_true", help="leave the peer out")
    ap.add_argument("--nginx", action="store_true", help="nginx's static GET beside the GET rows (the ceiling)")
    ap.add_argument("--cpu", action="store_true", help="also print the server's CPU µs per request")
    ap.add_argument("--moto-bin", default=os.path.join(ROOT, ".build", "venv", "bin", "moto_server"))
    args = ap.parse_args()
    ctx = Context(False, ROOT, args.bins[0], args.moto_bin, None)
    ctx.wrk.duration, ctx.wrk.reps = args.duration, 1
    kinds = args.kinds.split(",")
    conns = [int(c) for c in args.conns.split(",")]
    names = [chr(ord("A") + i) for i in range(len(args.bins))]
    try:
        for r in range(args.rounds):
            systems = []
            if not args.no_moto:
                moto = Moto(ctx.registry, args.moto_bin, ctx.run_dir).start()
                systems.append(("moto", moto.port, s3.s3_small_requests(ctx, moto.port, "moto"), "peer"))
                ctx.server_pids["moto"] = moto.pid
            if args.nginx:
                nginx = Nginx(ctx.registry, ctx.run_dir, ctx.data).start()
                get = [{"method": "GET", "path": "/obj4k", "headers": {"Host": f"127.0.0.1:{nginx.port}"}}]
                systems.append(("nginx", nginx.port, {"get_presigned": get, "get_signed": get}, "ceiling"))
                pids = {"nginx": nginx.proc.pid}
            else:
                pids = {}
            for name, binary in zip(names, args.bins):
                data_dir = os.path.join(ctx.run_dir, f"ab-{name}")
                shutil.rmtree(data_dir, ignore_errors=True)
                h = Hearth(ctx.registry, os.path.abspath(binary), ctx.run_dir, data_dir=data_dir, log_name=f"ab-{name}").start()
                port = h.port("s3")
                systems.append((name, port, s3.s3_small_requests(ctx, port, name), "hearth"))
                pids[name] = h.pid
            # One-connection points pinned as `make bench` pins them (layout.py), for every system.
            ctx.server_pids.update(pids)
            for kind in kinds:
                for c in conns:
                    key = f"s3.{kind}.c{c}"
                    for system, port, reqs, role in systems:
                        if kind not in reqs:
                            continue
                        cpu0 = tree_cpu_seconds(pids[system]) if args.cpu and system in pids else None
                        s = s3.run_point(ctx, system, port, reqs[kind], key, c, role)
                        cpu = "" if cpu0 is None else \
                            f"{(tree_cpu_seconds(pids[system]) - cpu0) / max(1, s['requests']) * 1e6:.2f} CPU µs/request, "
                        print(f"round {r + 1} {key} {system}: {s['rps']:,.0f} req/s, {cpu}{s['error_count']} of "
                              f"{s['requests']} failed (status≥400 {s['status_errors']}), p50 {s['lat_p50_us']} µs, "
                              f"p99 {s['lat_p99_us']} µs", flush=True)
            ctx.registry.stop_all()
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
