#!/usr/bin/env python3
"""The one-connection GET points in each vCPU layout, for every system alike: `python3
bench/c1_layout.py HEARTH_BIN [--rounds N] [--modes free,split,same] [--kind get_presigned]
[--duration S] [--swap] [--offset K] [--moto]`.

Starts nginx, bare libmicrohttpd (4 KiB and hello) and one Hearth on a fresh data directory, as
`make bench` does, and runs wrk at one connection against each — `make bench`'s very requests
(`bench/benchlib/s3.py`) — in every mode of each round: `free` (no pinning: wherever the kernel puts
wrk and the server), `split` (wrk on one vCPU, every server thread on the other) and `same` (wrk and
every server thread on one vCPU: `make bench`'s layout, `bench/benchlib/layout.py`). Modes and systems rotate from round to
round so none always goes first. Every run prints its rate, p50 and the layout it actually had (the
share of 50 ms samples in which wrk's and the server's busiest threads last ran on one vCPU).
`--swap` swaps the two vCPUs (`same` then runs on the other one). For rates worth quoting run it under the measure
lock: `flock /work/wt/notes/measure.lock nice -n -15 python3 bench/c1_layout.py …` (one round of
the three modes and four systems is ~70 s).
"""
import argparse
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import layout, s3  # noqa: E402
from benchlib.context import Context  # noqa: E402
from benchlib.procs import BareMHD, Hearth, Moto, Nginx, compile_c  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hearth_bin")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--modes", default="free,split,same")
    ap.add_argument("--kind", default="get_presigned", choices=("get_presigned", "get_signed"))
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--swap", action="store_true", help="the two vCPUs swapped")
    ap.add_argument("--offset", type=int, default=0, help="start the rotation of modes and systems here")
    ap.add_argument("--moto", action="store_true", help="moto (the peer) too, with the same requests")
    ap.add_argument("--moto-bin", default=os.path.join(ROOT, ".build", "venv", "bin", "moto_server"))
    ap.add_argument("--json", help="append every run as one JSON line to this file")
    args = ap.parse_args()
    if not {layout.CLIENT_CPU, layout.SPLIT_CPU} <= os.sched_getaffinity(0):
        sys.exit("this machine does not have the two vCPUs the layouts name")
    if args.swap:
        layout.CLIENT_CPU, layout.SPLIT_CPU = layout.SPLIT_CPU, layout.CLIENT_CPU
    ctx = Context(False, ROOT, args.hearth_bin, None, None)
    ctx.wrk.duration, ctx.wrk.reps = args.duration, 1
    modes = args.modes.split(",")
    bin_dir = os.path.join(ctx.build, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    mhd_bin = compile_c("mhd_bare.c", os.path.join(bin_dir, "mhd_bare"), ["-lmicrohttpd", "-lpthread"])
    try:
        nginx = Nginx(ctx.registry, ctx.run_dir, ctx.data).start()
        mhd = BareMHD(ctx.registry, mhd_bin, ctx.run_dir, ctx.s.mhd_threads, ctx.obj4k, name="mhd-4k").start()
        hello = BareMHD(ctx.registry, mhd_bin, ctx.run_dir, ctx.s.mhd_threads, None, name="mhd-hello").start()
        data_dir = os.path.join(ctx.run_dir, "c1-hearth")
        shutil.rmtree(data_dir, ignore_errors=True)
        h = Hearth(ctx.registry, os.path.abspath(args.hearth_bin), ctx.run_dir, data_dir=data_dir, log_name="c1").start()
        systems = [(name, port, reqs[args.kind] if args.kind in reqs else reqs["get_presigned"], pid)
                   for (name, port, reqs, _), pid in zip(s3.ceiling_requests(ctx, nginx, mhd, hello),
                                                          (nginx.proc.pid, mhd.proc.pid, hello.proc.pid))]
        systems.append(("hearth", h.port("s3"), s3.s3_small_requests(ctx, h.port("s3"), "hearth")[args.kind], h.pid))
        if args.moto:
            moto = Moto(ctx.registry, args.moto_bin, ctx.run_dir).start()
            systems.append(("moto", moto.port, s3.s3_small_requests(ctx, moto.port, "moto")[args.kind], moto.pid))
        for r in range(args.offset, args.offset + args.rounds):
            order = systems[r % len(systems):] + systems[:r % len(systems)]
            for m in modes[r % len(modes):] + modes[:r % len(modes)]:
                for name, port, reqs, pid in order:
                    layout.SERVER_CPU = layout.SPLIT_CPU if m == "split" else layout.CLIENT_CPU
                    s = ctx.wrk.once(port, reqs, 1, f"{name}-{m}", server_pid=pid, pin=m != "free")
                    lay = s["layout"]
                    print(f"round {r + 1} {m:6s} {name:9s} {s['rps']:>9,.0f} req/s  p50 {s['lat_p50_us']:>4} µs  "
                          f"p99 {s['lat_p99_us']:>5} µs  server CPU {lay.get('server_cpu_s', 0) / max(1, s['requests']) * 1e6:.1f} µs/req  "
                          f"errors {s['error_count']}  {lay.get('layout')} "
                          f"(same-CPU share {lay.get('same_cpu_share')}, wrk on {lay.get('client_cpus')}, "
                          f"server on {lay.get('server_cpus')})", flush=True)
                    if args.json:
                        with open(args.json, "a") as f:
                            f.write(json.dumps({"round": r + 1, "mode": m, "system": name, "rps": s["rps"],
                                                "p50": s["lat_p50_us"], "p99": s["lat_p99_us"],
                                                "errors": s["error_count"], "swap": args.swap, "layout": lay}) + "\n")
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
