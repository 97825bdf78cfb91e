#!/usr/bin/env python3
"""Where a commit's CPU goes, per transport: the bench's REST commit (wrk, 16 connections, or `--conns N`), gRPC Commit
and the Write stream (bench/grpcload, 16 streams on one connection; each through grpc-go and through
the light client `-client h2`) for one or more Hearth binaries alternated round by round:
`python3 bench/commit_rows.py --bin A --bin B [--rounds N] [--seconds S] [--only rest,commit,write]
[--clients h2,grpc] [--conns 16] [--strace]`.

Per timed run, divided by its successful calls: Hearth's CPU (user + system, `/proc/<pid>/stat`), the
load generator's (`getrusage(RUSAGE_CHILDREN)` over that run: wrk or grpcload, started without
warm-up after a 1 s warm-up run of its own), voluntary + involuntary context switches per Hearth
thread name (`/proc/<pid>/task/*/status`) and the busiest Hearth threads. With --strace, Hearth's
system calls per call from one more run of each row under `strace -c -f` (slower; rates from it are
not reported). Each row gets a fresh Hearth on its own data directory with the shipped rules and a
user token, as `bench/commit_ab.py` runs them. Loopback only; every process started is stopped.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
import types

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import grpcbench  # noqa: E402
from benchlib.loadgen import Wrk  # noqa: E402
from benchlib.procs import OfficialFirestore, Registry  # noqa: E402
from commit_ab import fresh_hearth, rest_commit  # noqa: E402
from get_rows import children_cpu, cpu_seconds, per_call, stat_cpu_seconds, switches, syscalls, task_files  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def named_cpu(pid):
    """{thread name: user + system CPU seconds} summed over threads of the same name."""
    out = {}
    for _, text in task_files(pid, "stat"):
        name = text.split("(", 1)[1].rsplit(")", 1)[0]
        out[name] = out.get(name, 0) + stat_cpu_seconds(text)
    return out


def system_seconds(pid):
    """The system (kernel) part of the process's CPU seconds."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[12]) / os.sysconf("SC_CLK_TCK")


def busiest(before, after, calls):
    """Thread names that worked, busiest first, with CPU µs per call."""
    rows = sorted(((after[t] - before.get(t, 0), t) for t in after), reverse=True)
    return ", ".join(f"{name} {cpu / calls * 1e6:.0f}" for cpu, name in rows if cpu / calls * 1e6 >= 2)


def measured(pid, run, calls_of):
    """`run()`'s summary with per-call Hearth CPU, load generator CPU and switches."""
    h0, g0, t0, s0, k0 = cpu_seconds(pid), children_cpu(), named_cpu(pid), switches(pid), system_seconds(pid)
    s = run()
    n = max(1, calls_of(s))
    return {"rps": s["rps"], "hearth_us": (cpu_seconds(pid) - h0) / n * 1e6, "loadgen_us": (children_cpu() - g0) / n * 1e6,
            "hearth_sys_us": (system_seconds(pid) - k0) / n * 1e6,
            "switches": per_call(s0, switches(pid), n), "threads": busiest(t0, named_cpu(pid), n),
            "p50_us": s.get("lat_p50_us")}


def one(binary, work, row, client, args, ctx):
    with fresh_hearth(binary, work) as (h, user, port):
        if row == "rest":
            commit = rest_commit(port, user)
            wrk = Wrk(work, args.seconds)
            wrk.run(port, [commit], 16, "warm", duration=1, profile=False)

            def run():
                s = wrk.run(port, [commit], args.conns, f"c{args.conns}", profile=False)
                if s["error_count"]:
                    raise SystemExit(f"{binary}: REST commit had {s['error_count']} errors")
                return s
            calls_of = lambda s: s["requests"]  # noqa: E731
        else:
            seq = [0]

            def grpc(seconds, warm=0):
                seq[0] += 1
                s = grpcbench.grpcload(ctx, port, user.id_token, row, "-uid", user.uid, "-streams", 16, "-duration", seconds,
                                       "-warmup", warm, "-tag", f"{row}-{os.getpid()}-{seq[0]}", "-per-conn", 16,
                                       "-client", client)
                if s.get("setup_error"):
                    raise SystemExit(f"{binary}: {row}: {s['setup_error']}")
                return grpcbench.require_ok(s, row)
            grpc(1)
            run = lambda: grpc(args.seconds)  # noqa: E731
            calls_of = lambda s: s["ok"]  # noqa: E731
        out = measured(h.pid, run, calls_of)
        if args.strace:
            out["syscalls"] = syscalls(h.pid, run, calls_of)
        return out


def emulator_rows(binary, work, args, ctx):
    """The gRPC rows against the official emulator (user token from a Hearth's Auth, the shipped rules,
    5 s of warm-up for the JVM as make bench gives it), printed as the Hearth rows are."""
    with fresh_hearth(binary, work) as (_, user, _port):
        reg = Registry()
        emu = OfficialFirestore(reg, work, os.path.join(ROOT, "rules", "firestore.rules"))
        try:
            emu.start()
            for row in [r for r in args.only.split(",") if r != "rest"]:
                for client in args.clients.split(","):
                    def grpc(seconds, warm=0):
                        s = grpcbench.grpcload(ctx, emu.port, user.id_token, row, "-uid", user.uid, "-streams", 16,
                                               "-duration", seconds, "-warmup", warm, "-per-conn", 16, "-client", client,
                                               "-tag", f"emu-{row}-{client}-{time.time_ns()}")
                        return grpcbench.require_ok(s, f"emulator {row}")
                    grpc(5)
                    out = measured(emu.pid, lambda: grpc(args.seconds), lambda s: s["ok"])
                    print(f"emulator {row} ({client}): {out['rps']:,.0f}/s, JVM {out['hearth_us']:.0f} µs/call, "
                          f"loadgen {out['loadgen_us']:.0f} µs/call, p50 {out['p50_us'] or 0:.0f} µs", flush=True)
        finally:
            reg.stop_all()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", help="hearth binary (repeat for an A/B; default .build/release/hearth)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--only", default="rest,commit,write")
    ap.add_argument("--clients", default="h2,grpc", help="grpcload clients for the gRPC rows")
    ap.add_argument("--conns", type=int, default=16, help="wrk connections of the REST row (the bench has 1 and 16)")
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--emulator", action="store_true", help="the gRPC rows against the official emulator instead")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in (args.bin or [os.path.join(ROOT, ".build", "release", "hearth")])]
    build = os.path.abspath(os.path.join(ROOT, ".build"))
    ctx = types.SimpleNamespace(build=build, grpcload=None)
    grpcbench.build_grpcload(ctx)
    rows = [(r, "wrk") if r == "rest" else (r, c) for r in args.only.split(",")
            for c in (["wrk"] if r == "rest" else args.clients.split(","))]
    if args.emulator:
        work = tempfile.mkdtemp(prefix="commit-rows-emu-", dir=build)
        try:
            emulator_rows(bins[0], work, args, ctx)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    for r in range(args.rounds):
        for row, client in rows:
            for i, b in enumerate(bins):
                work = tempfile.mkdtemp(prefix="commit-rows-", dir=build)
                try:
                    out = one(b, work, row, client, args, ctx)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                print(f"round {r + 1} bin {i} {row} ({client}): {out['rps']:,.0f}/s, Hearth {out['hearth_us']:.0f} µs/call "
                      f"(system {out['hearth_sys_us']:.0f}), "
                      f"loadgen {out['loadgen_us']:.0f} µs/call, p50 {out['p50_us'] or 0:.0f} µs; switches {out['switches']}; "
                      f"thread CPU µs/call {out['threads']}" + (f"; syscalls {out['syscalls']}" if "syscalls" in out else ""), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
