#!/usr/bin/env python3
"""Wall-clock A/B of `make bench`'s S3 small-object rows for two or more Hearth binaries, with moto
beside them: `python3 bench/s3_small_ab.py BIN_A BIN_B [--rounds N] [--kinds K,...] [--conns 1,16]
[--no-moto] [--nginx] [--mhd] [--cpu] [--perf-stat] [--duration S]`.

Each round starts every binary on a fresh data directory (as `make bench` runs Hearth) and runs
the same wrk points as `make bench` (the very requests, `bench/benchlib/s3.py`), the binaries
alternating point by point so that whatever else the machine does weighs on all alike; moto (the
peer) runs each point too, its failures reported as `make bench` reports them, and with `--nginx` the
GET ceiling (`make bench`'s nginx, same bytes) in the same rounds; `--cpu` adds the served process's
CPU time per request (user + system, all its processes and threads: on a machine others load, a
steadier figure than the rate); `--mhd` adds bare libmicrohttpd (`bench/ceilings/mhd_bare.c`, the
engine Hearth runs on, answering the same bytes); `--perf-stat` counts, with `perf stat` on every
thread of the served process (and its children), each system call, context switch and page fault
per request over the run (the counting slows the run: its rate is not one to quote). Prints one line per
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
from benchlib.procs import BareMHD, Hearth, Moto, Nginx, compile_c  # noqa: E402

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


# Every system call (raw_syscalls) and the ones a served request makes, named: all of `syscalls:*` on
# every thread of a Hearth (tens of threads) runs out of file descriptors.
PERF_EVENTS = ",".join(["raw_syscalls:sys_enter"] + [f"syscalls:sys_enter_{c}" for c in (
    "epoll_wait", "epoll_pwait", "epoll_ctl", "recvfrom", "read", "sendmsg", "sendto", "write", "writev", "sendfile64",
    "futex", "mprotect", "madvise", "mmap", "munmap", "brk", "openat", "close", "newfstatat", "setsockopt",
    "sched_yield", "clock_nanosleep", "nanosleep", "getrandom", "pread64", "pwrite64", "fcntl")]
    + ["context-switches", "page-faults", "cpu-migrations"])


def start_perf_stat(pid):
    """`perf stat` counting PERF_EVENTS on every thread of `pid` and of its child processes (nginx's
    workers) until `stop_perf_stat`; None where perf cannot (not installed, not allowed)."""
    if not shutil.which("perf"):
        return None
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    out = os.path.join("/tmp", f"s3ab-perf-{os.getpid()}-{pid}.csv")
    p = subprocess.Popen(["perf", "stat", "-x", ",", "-o", out, "-e", PERF_EVENTS, "-p", ",".join([str(pid)] + children)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, out


def stop_perf_stat(handle, requests):
    """The counts per request (name → count), non-zero ones, largest first."""
    if handle is None:
        return {}
    p, out = handle
    p.send_signal(2)  # perf stat prints its counts on SIGINT
    p.wait(30)
    counts = {}
    with open(out) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) < 3 or not fields[0].replace(".", "").isdigit():
                continue
            name = fields[2].replace("raw_syscalls:sys_enter", "all system calls").replace("syscalls:sys_enter_", "")
            if float(fields[0]) > 0:
                counts[name] = float(fields[0]) / max(1, requests)
    os.remove(out)
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bins", nargs="+", help="hearth binaries (named by their position: A, B, …)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--kinds", default="put_presigned", help=f"comma-separated subset of {', '.join(s3.KINDS)}")
    ap.add_argument("--conns", default="16", help="comma-separated connection counts (default 16)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (make bench: 5)")
    ap.add_argument("--no-moto", action="store_true", help="leave the peer out")
    ap.add_argument("--nginx", action="store_true", help="nginx's static GET beside the GET rows (the ceiling)")
    ap.add_argument("--mhd", action="store_true", help="bare libmicrohttpd (mhd_bare.c) beside the GET rows")
    ap.add_argument("--cpu", action="store_true", help="also print the server's CPU µs per request")
    ap.add_argument("--perf-record", metavar="DIR",
                    help="also sample each run with `perf record -e cpu-clock -F 4999 -g` into DIR/r<round>-<point>-<system>.data")
    ap.add_argument("--perf-stat", action="store_true",
                    help="also print system calls, context switches and page faults per request (perf stat)")
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
            if args.mhd:
                bin_dir = os.path.join(ctx.build, "bin")
                os.makedirs(bin_dir, exist_ok=True)
                mhd_bin = compile_c("mhd_bare.c", os.path.join(bin_dir, "mhd_bare"), ["-lmicrohttpd", "-lpthread"])
                mhd = BareMHD(ctx.registry, mhd_bin, ctx.run_dir, ctx.s.mhd_threads, ctx.obj4k, name="mhd-4k").start()
                get = [{"method": "GET", "path": "/obj4k", "headers": {"Host": f"127.0.0.1:{mhd.port}"}}]
                systems.append(("mhd", mhd.port, {"get_presigned": get, "get_signed": get}, "ceiling"))
                pids["mhd"] = mhd.proc.pid
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
                        perf = start_perf_stat(pids[system]) if args.perf_stat and system in pids else None
                        record = None
                        if args.perf_record and system in pids:
                            os.makedirs(args.perf_record, exist_ok=True)
                            record = subprocess.Popen(
                                ["perf", "record", "-e", "cpu-clock", "-F", "4999", "-g", "-o",
                                 os.path.join(args.perf_record, f"r{r + 1}-{key}-{system}.data"), "-p", str(pids[system])],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        s = s3.run_point(ctx, system, port, reqs[kind], key, c, role)
                        counts = stop_perf_stat(perf, s["requests"])
                        if record is not None:
                            record.send_signal(2)
                            record.wait(60)
                        cpu = "" if cpu0 is None else \
                            f"{(tree_cpu_seconds(pids[system]) - cpu0) / max(1, s['requests']) * 1e6:.2f} CPU µs/request, "
                        print(f"round {r + 1} {key} {system}: {s['rps']:,.0f} req/s, {cpu}{s['error_count']} of "
                              f"{s['requests']} failed (status≥400 {s['status_errors']}), p50 {s['lat_p50_us']} µs, "
                              f"p99 {s['lat_p99_us']} µs", flush=True)
                        if counts:
                            print("    per request: " + ", ".join(f"{k} {v:.3f}" for k, v in counts.items()), flush=True)
            ctx.registry.stop_all()
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
