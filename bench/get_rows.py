#!/usr/bin/env python3
"""Only the Firestore get rows of `make bench` (gRPC GetDocument at 1 and 16 streams with h2load on one
connection, REST get at 1 and 16 connections with wrk; user token, rules on) for one or more Hearth
binaries alternated round by round (an A/B on a shared machine), with the CPU each side spent per call:
`python3 bench/get_rows.py --bin A --bin B [--rounds N] [--seconds S] [--only grpc,light,rest,query,batchget,querylight,batchgetlight] [--widths 1,16] [--strace] [--pin]`
(`light`: the same gRPC calls from bench/grpcload's light client, the grpc.get.light rows; `query` and
`batchget`: the gRPC RunQuery and BatchGetDocuments rows of `benchlib/grpcreads.py` — RunQuery on
1,000 documents at one stream, BatchGetDocuments of 10 at 16, from grpc-go, every answer checked —
on a second user whose collection is seeded as there, and `querylight` / `batchgetlight` the same
calls from the light client, their .light rows; `--widths` does not apply to them).
The share of the run's wall clock all CPUs spent idle is printed too (`CPUs idle`): whether the
load generator had a core of its own.

The rows are measured as `bench/benchlib/grpcbench.py` and `firebase.py` measure them (same request,
same byte check for h2load, best of `wrk_reps` runs after a 1 s warm-up); only the phases around them
are left out. For each timed run, Hearth's CPU (user + system, `/proc/<pid>/stat`) and the load
generator's (h2load or wrk: `getrusage(RUSAGE_CHILDREN)`, which counts exactly the children this
script has waited for) over that run, divided by its calls; the best run's figures are printed.
Context switches (`/proc/<pid>/task/*/status`) come from a separate run of 20,000 calls at one
stream after the timed ones, and with --strace system calls per call from one at each width.
Loopback only; every process started is stopped.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench, grpcreads, layout  # noqa: E402
from benchlib.counters import parse_strace  # noqa: E402
from benchlib.context import DOC_NAME_PREFIX, DOCS, Context  # noqa: E402
from benchlib.httpc import Client, NotAvailable  # noqa: E402
from benchlib.loadgen import require_clean  # noqa: E402
from benchlib.machine import children_cpu, stat_cpu_seconds, task_files  # noqa: E402
from benchlib.pairs import busy_poll_delta  # noqa: E402
from benchlib.procs import Hearth  # noqa: E402
from callgrind_get import framed_get, seed_user  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWITCH_CALLS = 20000


def switches(pid):
    """{thread name: (voluntary, involuntary)} summed over threads of the same name."""
    out = {}
    for _, text in task_files(pid, "status"):
        fields = dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)
        name = fields.get("Name", "?").strip()
        v, n = int(fields.get("voluntary_ctxt_switches", 0)), int(fields.get("nonvoluntary_ctxt_switches", 0))
        a, b = out.get(name, (0, 0))
        out[name] = (a + v, b + n)
    return out


def cpu_seconds(pid):
    """User + system CPU seconds of the whole process."""
    with open(f"/proc/{pid}/stat") as f:
        return stat_cpu_seconds(f.read())


def user_seconds(pid):
    """User CPU seconds of the whole process (the part its own code and libraries spend)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[11]) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid):
    """{thread id: (thread name, user + system CPU seconds)} of every thread of the process."""
    return {tid: (text.split("(", 1)[1].rsplit(")", 1)[0], stat_cpu_seconds(text)) for tid, text in task_files(pid, "stat")}


def busiest(before, after, calls, seconds):
    """The threads that worked, busiest first: name, CPU µs per call and share of the run's wall clock."""
    rows = sorted(((cpu - before.get(t, (name, 0))[1], name) for t, (name, cpu) in after.items()), reverse=True)
    return ", ".join(f"{name} {cpu / calls * 1e6:.1f} µs/call ({cpu / seconds:.0%})" for cpu, name in rows if cpu / seconds >= 0.03)


def per_call(before, after, calls):
    """Threads that switched, with (voluntary, involuntary) switches per call."""
    rows = []
    for name, (v, n) in after.items():
        v0, n0 = before.get(name, (0, 0))
        if v - v0 or n - n0:
            rows.append(f"{name} {(v - v0) / calls:.2f}+{(n - n0) / calls:.2f}")
    return ", ".join(sorted(rows))


def syscalls(pid, load, calls_of=lambda _: SWITCH_CALLS):
    """Syscalls per call of every Hearth thread while `load()` runs (strace -c -f); `calls_of` gives
    the calls from `load()`'s result (SWITCH_CALLS by default: the get rows' fixed count)."""
    out = os.path.join(tempfile.mkdtemp(), "strace.txt")
    p = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid), "-o", out], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        result = load()
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(30)
    calls = max(1, calls_of(result))
    with open(out) as f:
        rows = sorted(((n, name) for name, n in parse_strace(f.read()).items()), reverse=True)
    return ", ".join(f"{name} {n / calls:.2f}" for n, name in rows if n / calls >= 0.05)


def idle_seconds():
    """Seconds all CPUs spent idle so far (/proc/stat: idle + iowait): whether a run had a free core."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")


def timed(pid, run):
    """`run()`'s summary with Hearth's and the load generator's CPU seconds over it."""
    h0, u0, g0, t0, w0, i0 = cpu_seconds(pid), user_seconds(pid), children_cpu(), thread_cpu(pid), time.time(), idle_seconds()
    s = run()
    s["hearth_cpu"], s["loadgen_cpu"] = cpu_seconds(pid) - h0, children_cpu() - g0
    s["hearth_user"] = user_seconds(pid) - u0
    s["idle"] = idle_seconds() - i0
    s["threads"], s["wall"] = (t0, thread_cpu(pid)), time.time() - w0
    return s


def best_of(ctx, pid, run, calls_of):
    """The best of `wrk_reps` timed runs (as make bench takes them), each with its CPU per call."""
    best = None
    for _ in range(ctx.s.wrk_reps):
        s = timed(pid, run)
        n = max(1, calls_of(s))
        s["hearth_us"], s["loadgen_us"] = s["hearth_cpu"] / n * 1e6, s["loadgen_cpu"] / n * 1e6
        s["hearth_user_us"] = s["hearth_user"] / n * 1e6
        if best is None or s["rps"] > best["rps"]:
            best = s
    return best


def put_point(out, key, s):
    out[f"{key}/s"] = s["rps"]
    out[f"{key} Hearth CPU µs/call"] = s["hearth_us"]
    out[f"{key} Hearth user µs/call"] = s["hearth_user_us"]
    out[f"{key} loadgen CPU µs/call"] = s["loadgen_us"]
    calls = s["done"] if "done" in s else s["requests"]
    out[f"{key} Hearth threads"] = busiest(*s["threads"], calls, s["wall"])
    out[f"{key} CPUs idle"] = f"{s['idle'] / s['wall']:.0%}"


def reads_rows(ctx, h, out, only):
    """The grpc.query.1000.s1 and grpc.batchget.s16 rows (`benchlib/grpcreads.py`) into `out`."""
    ac, fc = Client(h.port("auth")), Client(h.port("firestore"))
    try:
        user = firebase.sign_up(ac, "get-rows-reads@example.com")
        firebase.seed_docs(fc, user.uid, grpcreads.DOCS)
    finally:
        ac.close()
        fc.close()
    docs = ",".join(f"users/{user.uid}/files/f{i:06d}" for i in range(10))
    for name, mode, streams, args in (("query", "query", 1, ["-per-conn", 16, "-expect", 10]),
                                      ("batchget", "batchget", 16, ["-doc", docs, "-per-conn", 16]),
                                      ("querylight", "query", 1, ["-per-conn", 16, "-expect", 10, "-client", "h2"]),
                                      ("batchgetlight", "batchget", 16, ["-doc", docs, "-per-conn", 16, "-client", "h2"])):
        if name not in only:
            continue

        def run(seconds=ctx.s.duration, mode=mode, streams=streams, args=args):
            return grpcbench.require_ok(grpcbench.grpcload(
                ctx, h.port("firestore"), user.id_token, mode, "-uid", user.uid, "-streams", streams,
                "-duration", seconds, *args), f"gRPC {mode}")
        run(seconds=1)  # the bench's warm-up for Hearth
        s = best_of(ctx, h.pid, run, lambda s: s["ok"])
        s["done"] = s["ok"]
        put_point(out, f"{name} s{streams} calls", s)
        if ctx.strace:
            out[f"{name} s{streams} syscalls/call"] = syscalls(h.pid, run, lambda s: s["ok"])


def one_round(ctx, binary, label, only, widths):
    out = {}
    data_dir = os.path.join(ctx.run_dir, f"hearth-get-{label}")
    shutil.rmtree(data_dir, ignore_errors=True)
    binary, *extra = binary.split()
    h = Hearth(ctx.registry, binary, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth, extra=extra,
               log_name=f"hearth-{label}")
    try:
        h.start()
        if ctx.pin:
            # Every Hearth thread on CPU 0 (threads made later inherit it); this script and so the
            # load generator on CPU 1 (set in main).
            for tid in os.listdir(f"/proc/{h.pid}/task"):
                os.sched_setaffinity(int(tid), {0})
        user = seed_user(h)
        port = h.port("firestore")
        if "grpc" in only:
            frame = os.path.join(ctx.run_dir, "getdoc.bin")
            with open(frame, "wb") as f:
                f.write(framed_get(f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0"))
            h2 = grpcbench.H2Load(ctx)
            answer_len = h2.run(port, frame, user.id_token, 1, 0, count=1)["bytes_data"]
            for streams in widths:
                # As grpcbench.get_point: a 1 s warm-up, then the best of wrk_reps runs, each
                # counted only if every answer carried the whole document.
                h2.run(port, frame, user.id_token, streams, 1)

                def run(streams=streams):
                    s = h2.run(port, frame, user.id_token, streams, ctx.s.duration)
                    s["rps"] = grpcbench.counted_answers(s, answer_len, f"gRPC GetDocument s{streams}") / s["seconds"]
                    return s
                s = best_of(ctx, h.pid, run, lambda s: s["done"])
                put_point(out, f"grpc s{streams} calls", s)
                if streams == 1:
                    out["grpc s1 mean µs"] = s.get("lat_mean_us", 0)
                if ctx.strace:
                    out[f"grpc s{streams} syscalls/call"] = syscalls(
                        h.pid, lambda streams=streams: h2.run(port, frame, user.id_token, streams, 60, count=SWITCH_CALLS))
            if 1 in widths:
                # The switches of a fixed number of calls, apart from the timed runs.
                before = switches(h.pid)
                h2.run(port, frame, user.id_token, 1, 60, count=SWITCH_CALLS)
                out["grpc s1 switches/call (voluntary+involuntary)"] = per_call(before, switches(h.pid), SWITCH_CALLS)
        if "light" in only:
            # The same calls from grpcload's light client (the grpc.get.light rows; grpcs1c).
            doc = f"users/{user.uid}/files/f0"
            for streams in widths:
                def run(streams=streams, seconds=ctx.s.duration):
                    return grpcbench.require_ok(grpcbench.grpcload(
                        ctx, port, user.id_token, "get", "-doc", doc, "-streams", streams, "-per-conn", 16,
                        "-client", "h2", "-duration", seconds), f"light gRPC GetDocument s{streams}")
                run(seconds=1)
                s = best_of(ctx, h.pid, run, lambda s: s["ok"])
                s["done"] = s["ok"]
                put_point(out, f"light s{streams} calls", s)
                if ctx.strace:
                    out[f"light s{streams} syscalls/call"] = syscalls(h.pid, run, lambda s: s["ok"])
        if only & {"query", "batchget", "querylight", "batchgetlight"}:
            reads_rows(ctx, h, out, only)
        if "rest" in only:
            get_user = {"method": "GET", "path": f"{DOCS}/users/{user.uid}/files/f0",
                        "headers": {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {user.id_token}"}}
            ctx.wrk.reps = 1
            for conns in widths:
                ctx.wrk.run(port, [get_user], conns, f"get-warm-{label}", duration=1, profile=False)
                s = best_of(ctx, h.pid, lambda conns=conns: require_clean(
                    ctx.wrk.run(port, [get_user], conns, f"get-{label}", duration=ctx.s.duration, profile=False), "REST get"),
                    lambda s: s["requests"])
                put_point(out, f"rest c{conns} req", s)
                if ctx.strace:
                    out[f"rest c{conns} syscalls/call"] = syscalls(h.pid, lambda conns=conns: require_clean(
                        ctx.wrk.run(port, [get_user], conns, f"get-strace-{label}", duration=ctx.s.duration, profile=False),
                        "REST get"), lambda s: s["requests"])
        polls = busy_poll_delta([], h.busy_poll())
        if polls:
            # Whether each loop and REST worker polled over the whole round (h2poll).
            out["busy poll (pauses polled/slept, trials poll/sleep, now)"] = ", ".join(
                f"{r['name']} {r['pausesPolled']}/{r['pausesSlept']}, {r['trialsKeptPolling']}/{r['trialsKeptSleeping']}, "
                f"{'polling' if r['polling'] else 'sleeping'} {r['window_us']} µs" for r in polls)
    except NotAvailable as e:
        out["error"] = str(e)
    finally:
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append",
                    help="hearth binary, optionally followed by `hearth start` flags in the same argument "
                         "(\"PATH --http2-busy-poll-us 0\"; repeat for an A/B; default .build/release/hearth)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seconds", type=int, default=5, help="each timed run (make bench: 5)")
    ap.add_argument("--only", default="grpc,rest")
    ap.add_argument("--widths", default="1,16", help="streams (gRPC) and connections (REST), comma-separated")
    ap.add_argument("--strace", action="store_true", help="also count each call's syscalls (strace -c -f; slows Hearth)")
    ap.add_argument("--pin", action="store_true",
                    help="Hearth on CPU 0, the load generator on CPU 1, both SCHED_FIFO (priority 1, under "
                         "the kernel's 95%% real-time throttle): a quiet two-core machine's layout on a "
                         "shared one, where the scheduler otherwise runs h2load and Hearth's loop on one "
                         "CPU by turns (the other CPU busy with other sessions) and a woken process waits "
                         "behind them. gRPC rows only: it would give the REST rows' threads one CPU. Guarded as h2_floor.py --pin: "
                         "a real-time thread that runs max(20, 4 x --seconds) s without blocking is killed (RLIMIT_RTTIME)")
    args = ap.parse_args()
    bins = [" ".join([os.path.abspath(b.split()[0])] + b.split()[1:])
            for b in (args.bin or [os.path.join(ROOT, ".build", "release", "hearth")])]
    only = set(args.only.split(","))
    ctx = Context(False, ROOT, bins[0].split()[0], None, None)
    ctx.rules_for_hearth = os.path.join(ROOT, "bench", "bench.rules")
    ctx.s.duration = args.seconds
    ctx.strace = args.strace
    ctx.pin = args.pin
    if args.pin:
        # Inherited by everything this script starts: Hearth (moved to CPU 0 once started) and h2load,
        # with h2_floor.py's guard against a real-time spin (`layout.pin_realtime`).
        guard = layout.realtime_guard_seconds(args.seconds)
        signal.signal(signal.SIGXCPU, lambda *_: sys.exit(f"--pin: a real-time thread of this script ran {guard:.0f} s "
                                                               "without blocking; stopped (RLIMIT_RTTIME)"))
        layout.pin_realtime(1, guard)
    try:
        for r in range(args.rounds):
            for i, b in enumerate(bins):
                out = one_round(ctx, b, f"{i}", only, [int(w) for w in args.widths.split(",")])
                print(f"round {r + 1} bin {i} ({b}): " + "; ".join(
                    f"{k} {v:,.1f}" if isinstance(v, float) and v < 100 else f"{k} {v:,.0f}" if isinstance(v, float) else f"{k} {v}" for k, v in out.items()), flush=True)
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
