#!/usr/bin/env python3
"""The HTTP/2 floor against Hearth and the official emulator, on the gRPC rows issue 20 still misses:
`python3 bench/h2_floor.py [--rounds 3] [--seconds 5] [--rows get,light,commit,write] [--poll-us 200]
[--poll-epoll] [--sides S,S] [--perf-syscalls] [--perf-steps] [--perf-sched] [--pin] [--hearth-bin PATH] [--no-peer | --peer PORT,SID] [--peer-warm S] [--strace] [--json PATH]`, or with
`--callgrind [-n N] [--floor-only] [--keep]` instructions per operation instead (below).

`bench/ceilings/h2_floor.c` does the least any Firestore gRPC server built on nghttp2 and SQLite must
do for those rows (its header says what): its rate on this machine, under the very clients `make bench`
runs, bounds what any design within the non-negotiables reaches there. Two floor processes run, one
whose loop blocks in epoll_wait when out of work (`floor-block`) and one that polls for up to
`--poll-us` µs first, reading ahead the connection that last sent, as Hearth's HTTP/2 loops do
(`floor-poll`); per row the better of the two is the floor. `--poll-epoll` adds the polling floor
without the read-ahead (`floor-poll-epoll`), `--sides` narrows the sides measured (an A/B), and
`--perf-syscalls` runs each side once more under `perf stat`, counting the loop's system calls per
operation. `--work-us N,…` adds, to the get rows, the polling floor spending N µs of CPU on each call
before its answer (`floor-poll+Nus`: not a floor, a probe): what that much more work before the answer
costs a round trip in the layout at hand — N µs if it only adds its own time, more where the client's
wake-up grows with the time it waited (docs/benchmarks.md, grpcs137).
`make bench` runs the polling floor itself as a side of the one-stream gets
(`benchlib/h2floor.py`, whose `Floor` this script uses).

The rows are `make bench`'s, built by the same code (`benchlib/grpcbench.grpc_loads`): gRPC GetDocument
at one stream through h2load (`grpc.get.s1`, each run checked by its DATA bytes) and through grpcload's
light client (`grpc.get.light.s1`), gRPC Commit at 16 streams (`grpc.commit.s16`) and the Write stream
at 16 streams (`rt.write.s16`), each a create of users/{uid}/files/{id} with serverTimestamp, through
the light client. Hearth (`.build/release/hearth`, a data directory, the shipped rules as `make bench`
runs it) and the official emulator (the same rules, the same user's token, signed up on Hearth's Auth) hold
users/{uid}/files/f0; the floor answers GetDocument with the exact bytes Hearth answered for it
(fetched once with nghttp), so h2load's byte check and the light client's document check hold.

Every server stays up; each row runs N rounds per server, in the order of `benchlib/pairs.round_order`
(each round the previous one's order rotated by one: A B C, C A B, B C A, …), each
round after `pairs.wait_quiet` and accounted by `benchlib/machine.py`; each side keeps its best round.
Printed per row and side: the best round's rate, the server's CPU per operation (its session's CPU
over the round ÷ its operations: the floor's includes its checkpoint thread, the emulator's every JVM
thread) and the load generator's (h2load's or grpcload's CPU over its run, from this script's
`RUSAGE_CHILDREN`), then floor ÷ emulator and Hearth ÷ floor; with `--strace`, each row's system calls
per operation for Hearth and `floor-block` from one more run under `strace -c -f`; with `--perf-steps`,
each side's round trip in steps from one more run under `perf record` (`benchlib/callsteps.py`: the
server's work from the request read to the answer's `sendto`, the `sendto`, the client's turn, the
request's way back to the loop); with `--perf-sched`, what else ran on the round trip's CPUs from one
more run under `perf record` on the scheduler's tracepoints (`benchlib/callsched.py`: the server's
other threads and other processes switched in, their wake-ups, and the time each took from the cycles,
from the tail's above all); with `--pin`, the quiet machine's layout (every server thread on CPU 0,
the load generators on CPU 1, SCHED_FIFO: the polling loop and the client each on a CPU of their own)
on a shared machine, guarded: every real-time thread may run `max(20, 4 × --seconds)` s without blocking
(RLIMIT_RTTIME, inherited; the kernel sends SIGXCPU, then SIGKILL), so no spin — this script's, a
load generator's, a server's — can hold a CPU and starve what shares it (grpcget35 saw this script sit
runnable behind one for 14 minutes, deaf to SIGKILL); `--pin` refuses to start with the kernel's
real-time throttle off. Loopback only; every process started is stopped.

`--callgrind` counts instead instructions per operation (repeatable where rates on a shared machine are
not), the floor's and Hearth's under the same loads: per row a fresh floor (blocking loop) under
`valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes`, then a fresh Hearth the way
`benchlib/instructions.counted` runs it (data directory, shipped rules, `callgrind_get.seed_user`'s
user and document), each instrumented only while the load runs, after an untimed warm-up —
GetDocument from h2load at one stream (N calls), Commit and Write-stream creates from grpcload's light
client at 16 streams (as many as complete in `--seconds`, divided by its successes) — with the
busiest threads' counts (the floor's loop and checkpoint thread).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import callsched, callsteps, firebase, grpcbench, h2floor, layout  # noqa: E402
from benchlib.h2floor import Floor, seed  # noqa: E402
from benchlib.context import DOC_NAME_PREFIX, Context  # noqa: E402
from benchlib.httpc import Client, NotAvailable  # noqa: E402
from benchlib.instructions import collect, control, counted, missing_tools, thread_totals  # noqa: E402
from benchlib.pairs import Pairing, Side, best_round, round_order, with_loadgen_cpu  # noqa: E402
from benchlib.procs import Hearth, OfficialFirestore  # noqa: E402
from callgrind_get import framed_get, seed_user  # noqa: E402
# syscalls: strace -c -f of a process while a load runs.
from get_rows import syscalls  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = {"get": "grpc.get.s1", "light": "grpc.get.light.s1", "commit": "grpc.commit.s16", "write": "rt.write.s16"}
HEARTH, PEER, BLOCK, POLL = "hearth", "emulator", "floor-block", "floor-poll"
# With --poll-epoll: the polling floor without its read-ahead (epoll only), the A/B of the read-ahead.
POLL_EPOLL = "floor-poll-epoll"


def hearth_answer(ctx, port, user, path):
    """Hearth's framed GetDocument answer for users/{uid}/files/f0, written to `path` (`h2floor.hearth_answer`)."""
    frame = os.path.join(ctx.run_dir, "h2floor-getdoc.bin")
    with open(frame, "wb") as f:
        f.write(framed_get(f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0"))
    return h2floor.hearth_answer(ctx, port, user, frame, path)


def operations(details):
    """The operations a round's load counted: h2load's answered calls, or grpcload's successes."""
    return details["h2load"]["done"] if "h2load" in details else details["grpcload"]["ok"]


def run_rounds(pairing, key, loads, rounds):
    """`pairs.Pairing.run`'s rounds for any number of sides: warm-ups, then the rounds in
    `pairs.round_order`; returns {system: every round's record}."""
    live = {}
    for system, load in loads.items():
        if isinstance(load, str):
            print(f"  {key} {system}: n/a — {load}", flush=True)
            continue
        try:
            if load.warmup is not None:
                load.warmup()
            live[system] = with_loadgen_cpu(load)
        except NotAvailable as e:
            print(f"  {key} {system}: n/a — {e}", flush=True)
    systems = list(live)
    out = {s: [] for s in systems}
    for i, system in enumerate(round_order(rounds, systems) if systems else []):
        out[system].append(pairing.one_round(key, i, system, live[system]))
    return out


SYSCALLS = ("epoll_wait", "recvfrom", "sendto", "sched_yield")


def perf_syscalls(pid, load):
    """(rate, {system call: per operation}) of one run of `load` (a `pairs.Load`) with `perf stat`
    counting the process's entries into the loop's system calls (tracepoints: every call counted,
    each barely slower, unlike strace's stops)."""
    events = ",".join(f"syscalls:sys_enter_{c}" for c in SYSCALLS)
    p = subprocess.Popen(["perf", "stat", "-x", ",", "-e", events, "-p", str(pid)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    try:
        value, details = load.once()
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    ops = max(1, operations(details))
    counts = {}
    for line in err.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2].startswith("syscalls:sys_enter_") and f[0].strip().isdigit():
            counts[f[2].rsplit("_enter_", 1)[1]] = int(f[0]) / ops
    return value, counts


def pin_to_cpu0(pid):
    """Every thread of `pid` on CPU 0 (threads it makes later inherit it): `--pin`."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), {0})


def per_op(rec):
    """(server µs, load generator µs) of CPU per operation in one round: the server's session's CPU
    over the round (`machine.account`: cores × the round's seconds) and the load generator's over its
    run, each ÷ the operations counted."""
    m, d = rec["machine"], rec["details"]
    ops = operations(d)
    return m["server"] * m["seconds"] / ops * 1e6, d["loadgen_cpu"] / ops * 1e6


def load_seconds(rec):
    """The load's own seconds in a round (h2load's or grpcload's run)."""
    d = rec["details"]
    return d["h2load"]["seconds"] if "h2load" in d else d["grpcload"]["seconds"]


def summary(key, rounds):
    """{system: best round's figures} for one row."""
    out = {}
    for system, recs in rounds.items():
        best = best_round(recs)
        if best is None:
            out[system] = {"error": next((r.get("error") for r in recs if r.get("error")), "no round")}
            continue
        server, loadgen = per_op(best)
        out[system] = {"rate": best["value"], "server_us": server, "loadgen_us": loadgen,
                       "server_cores": best["machine"]["server"], "loadgen_cores": best["details"]["loadgen_cpu"] / load_seconds(best),
                       "steal": best["machine"]["steal"], "others": best["machine"]["others"],
                       "rounds": [r["value"] for r in recs], "disturbed": sum(1 for r in recs if r["machine"]["disturbed"])}
    floors = [s for s in (BLOCK, POLL, POLL_EPOLL) if "rate" in out.get(s, {})]  # never a --work-us side
    if floors:
        out["floor"] = dict(out[max(floors, key=lambda s: out[s]["rate"])], side=max(floors, key=lambda s: out[s]["rate"]))
    return out


def show(key, s):
    print(f"\n{key}")
    print(f"  {'side':12s} {'best/s':>9s} {'rounds':>26s} {'server µs/op':>13s} {'loadgen µs/op':>14s} "
          f"{'cores s+l':>10s} {'steal':>6s}")
    for system in (HEARTH, PEER, BLOCK, POLL, POLL_EPOLL) + tuple(k for k in s if k.startswith(POLL + "+")):
        v = s.get(system)
        if v is None:
            continue
        if "rate" not in v:
            print(f"  {system:12s} n/a: {v['error'][:100]}")
            continue
        rounds = " / ".join(f"{r:,.0f}" if r is not None else "—" for r in v["rounds"])
        print(f"  {system:12s} {v['rate']:9,.0f} {rounds:>26s} {v['server_us']:13.1f} {v['loadgen_us']:14.1f} "
              f"{v['server_cores']:4.2f}+{v['loadgen_cores']:4.2f} {v['steal']:6.2f}")
    f, e, h = s.get("floor"), s.get(PEER, {}), s.get(HEARTH, {})
    if f:
        if "rate" in e:
            print(f"  floor ({f['side']}) ÷ emulator: {f['rate'] / e['rate']:.1f}× rate, "
                  f"{e['server_us'] / f['server_us']:.1f}× less server CPU per op")
        if "rate" in h:
            print(f"  Hearth ÷ floor: {h['rate'] / f['rate']:.2f}× rate; server CPU per op {h['server_us']:.1f} vs "
                  f"{f['server_us']:.1f} µs ({h['server_us'] - f['server_us']:+.1f})")
    p = s.get(POLL, {})
    for system, v in s.items():
        if system.startswith(POLL + "+") and "rate" in v and "rate" in p:
            vs_hearth = f"; Hearth ÷ it {h['rate'] / v['rate']:.2f}×" if "rate" in h else ""
            print(f"  {system}: {1e6 / v['rate'] - 1e6 / p['rate']:+.1f} µs a call over {POLL} "
                  f"({v['rate'] / p['rate']:.2f}× its rate){vs_hearth}")


def cg_loads(ctx):
    """{key: (warm-up amount, counted amount, load(port, user, amount) → operations)} of --callgrind:
    GetDocument of the user's f0 from h2load at one stream (amount: calls; the answer's length, for
    the byte check, from one call during the warm-up), Commit and Write-stream creates from the light
    client at 16 streams (amount: seconds; operations: its successes)."""
    answer_lens = {}

    def get(port, user, calls):
        frame = os.path.join(ctx.run_dir, f"h2floor-getdoc-{user.uid}.bin")
        h2 = grpcbench.H2Load(ctx)
        if (port, user.uid) not in answer_lens:
            with open(frame, "wb") as f:
                f.write(framed_get(f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0"))
            answer_lens[(port, user.uid)] = h2.run(port, frame, user.id_token, 1, 60, count=1)["bytes_data"]
        s = h2.run(port, frame, user.id_token, 1, 600, count=calls)
        return grpcbench.counted_answers(s, answer_lens[(port, user.uid)], "GetDocument under callgrind")

    def creates(mode):
        def load(port, user, seconds):
            return grpcbench.require_ok(grpcbench.grpcload(
                ctx, port, user.id_token, mode, "-uid", user.uid, "-streams", 16, "-per-conn", 16, "-client", "h2",
                "-duration", seconds, "-tag", f"cg-{mode}-{int(time.time() * 1000)}", "-timeout", 120),
                f"{mode} under callgrind")["ok"]
        return load
    return {"grpc.get.s1": (50, ctx.cg_calls, get), "grpc.commit.s16": (1, ctx.s.duration, creates("commit")),
            "rt.write.s16": (1, ctx.s.duration, creates("write"))}


def callgrind(ctx, floor_bin, answer_file, user, rows):
    """Instructions per operation of each row, the floor's and Hearth's (the module's docstring)."""
    why = missing_tools(("h2load",))
    if why:
        raise NotAvailable(why)
    loads = cg_loads(ctx)
    out = {}
    for key in rows:
        if key not in loads:
            continue  # the light client's get: the same server work as h2load's, counted there
        warm, amount, load = loads[key]
        work = os.path.join(ctx.run_dir, f"h2floor-cg-{key}")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        f = Floor(ctx, "valgrind", f"floor-cg-{key}", answer_file, 0)
        f.prefix = ["--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes",
                    f"--callgrind-out-file={work}/callgrind.out.%p", floor_bin]
        f.start(timeout=120)
        try:
            load(f.port, user, warm)
            control(f.proc.pid, "-i", "on")
            ops = load(f.port, user, amount)
            control(f.proc.pid, "-i", "off")
            control(f.proc.pid, "-d")
        finally:
            counts = f.stop()
        threads = thread_totals(work)
        ir = collect(work, ctx.cg_keep)
        out[key] = {"floor": ir / ops, "floor_ops": ops, "floor_threads": [t / ops for t in threads[:3]], "floor_counts": counts}
        print(f"{key}: floor {ir / ops:,.0f} instructions per operation ({ops:,} operations; busiest threads "
              + ", ".join(f"{t / ops:,.0f}" for t in threads[:3]) + f"; {counts})", flush=True)
        if ctx.cg_hearth:
            out[key]["hearth"] = counted(f"{key}: Hearth", ctx.hearth_bin, amount, seed_user,
                                         lambda h, user, amount, load=load: load(h.port("firestore"), user, amount),
                                         rules=ctx.rules_for_hearth, data_dir=True, warm=warm, unit="operation", threads=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5, help="each timed run (make bench: 5)")
    ap.add_argument("--rows", default="get,light,commit,write", help=f"a comma-separated subset of {','.join(ROWS)}")
    ap.add_argument("--poll-us", type=int, default=200, help="floor-poll's polling window (Hearth's ceiling: 200)")
    ap.add_argument("--poll-epoll", action="store_true",
                    help=f"also {POLL_EPOLL}: the polling floor without its read-ahead (epoll only), for an A/B")
    ap.add_argument("--sides", type=lambda v: v.split(","),
                    help=f"measure only these sides (of {HEARTH},{PEER},{BLOCK},{POLL},{POLL_EPOLL}): a narrower A/B "
                         "(the --work-us sides are always measured)")
    ap.add_argument("--work-us", type=lambda v: [float(x) for x in v.split(",") if x],
                    help=f"also {POLL}+Nus for each N: the polling floor spending N µs of CPU on each GetDocument before "
                         "its answer (not a floor: what that much more work before the answer costs the round trip in "
                         "this layout, against what it costs the loop — N µs; the get rows only)")
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--no-peer", action="store_true", help="without the official emulator")
    ap.add_argument("--peer", metavar="PORT,SID",
                    help="use a running official emulator (the same rules file; SID: the session id of its processes, "
                         "for the CPU accounting) instead of starting one: one JVM warmed once for several invocations")
    ap.add_argument("--peer-warm", type=int, default=5,
                    help="seconds of each row's load on the emulator before its rounds (make bench: 5, after minutes of "
                         "REST rows; a fresh JVM's Commit rate still rose 175 → 310 over three rounds after 5 s)")
    ap.add_argument("--callgrind", action="store_true", help="count the floor's instructions per operation instead")
    ap.add_argument("-n", type=int, default=2000, help="--callgrind: GetDocument calls counted")
    ap.add_argument("--floor-only", action="store_true", help="--callgrind: count the floor alone, not Hearth too")
    ap.add_argument("--keep", action="store_true", help="--callgrind: keep the floor's dumps (for callgrind_annotate)")
    ap.add_argument("--strace", action="store_true",
                    help="also count Hearth's and floor-block's system calls per operation (strace -c -f), one run each per row")
    ap.add_argument("--perf-syscalls", action="store_true",
                    help="also, per row and side, one run with perf stat counting the loop's system calls per operation")
    ap.add_argument("--perf-steps", action="store_true",
                    help="also, per row and side, one run under perf record timing the round trip's steps (benchlib/callsteps.py)")
    ap.add_argument("--perf-sched", action="store_true",
                    help="also, per row and side, one run under perf record on the scheduler's switches and wake-ups: "
                         "what else ran during the round trip, its tail's above all (benchlib/callsched.py)")
    ap.add_argument("--pin", action="store_true",
                    help="every server's threads on CPU 0, this script and so the load generators on CPU 1, all SCHED_FIFO "
                         "(priority 1), as `get_rows.py --pin`: a quiet two-core machine's layout (both ends on a CPU of "
                         "their own, the polling loop spinning) on a shared one; perf runs unpinned. It cannot hang the "
                         "host: every real-time thread it starts inherits RLIMIT_RTTIME of max(20, 4 x --seconds) s, so one "
                         "that spins that long without a blocking system call (sched_yield is none) gets SIGXCPU and a second "
                         "later SIGKILL from the kernel, and nothing starved behind it waits longer; it refuses to pin when the "
                         "kernel's real-time throttle is off (sched_rt_runtime_us -1), which keeps ordinary threads, the "
                         "kernel's own work included, ~5%% of each CPU")
    ap.add_argument("--json", default=os.path.join(ROOT, ".build", "bench", "h2_floor.json"))
    args = ap.parse_args()
    keys = [ROWS[r] for r in args.rows.split(",")]
    ctx = Context(False, ROOT, os.path.abspath(args.hearth_bin), None, None)
    shipped = os.path.join(ROOT, "rules", "firestore.rules")  # as bench/run.py picks it
    ctx.rules_for_hearth = shipped if os.path.exists(shipped) else os.path.join(ROOT, "bench", "bench.rules")
    ctx.s.duration = args.seconds
    floor_bin = h2floor.build(ctx)
    results = {"rounds": args.rounds, "seconds": args.seconds, "poll_us": args.poll_us, "pinned": args.pin, "rows": {}}
    if args.pin:
        # Inherited by everything this script starts: the servers (moved to CPU 0 once started) and the
        # loads; so is the guard (RLIMIT_RTTIME: a real-time thread that spins without blocking is
        # killed, `layout.pin_realtime`), and this script ends cleanly on its first warning.
        guard = layout.realtime_guard_seconds(args.seconds)
        signal.signal(signal.SIGXCPU, lambda *_: sys.exit(f"--pin: a real-time thread of this script ran {guard:.0f} s "
                                                               "without blocking; stopped (RLIMIT_RTTIME)"))
        layout.pin_realtime(1, guard)
        callsteps.UNPIN = True
    data_dir = os.path.join(ctx.run_dir, "hearth-h2floor")
    shutil.rmtree(data_dir, ignore_errors=True)
    floors = []
    try:
        h = Hearth(ctx.registry, ctx.hearth_bin, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth,
                   log_name="hearth-h2floor").start()
        c = Client(h.port("auth"))
        user = firebase.sign_up(c, "h2floor@example.com")
        c.close()
        if args.pin:
            pin_to_cpu0(h.proc.pid)
        seed(h.port("firestore"), user, "hearth")
        answer_file = os.path.join(ctx.run_dir, "h2floor-answer.bin")
        answer = hearth_answer(ctx, h.port("firestore"), user, answer_file)
        ctx.log(f"Hearth's GetDocument answer: {len(answer)} bytes")
        if args.callgrind:
            ctx.cg_calls, ctx.cg_hearth, ctx.cg_keep = args.n, not args.floor_only, args.keep
            results["callgrind"] = callgrind(ctx, floor_bin, answer_file, user, keys)
            return 0
        servers = {HEARTH: (h.port("firestore"), h.proc.pid)}
        floor_sides = [(BLOCK, 0, True, 0), (POLL, args.poll_us, True, 0)] + ([(POLL_EPOLL, args.poll_us, False, 0)] if args.poll_epoll else [])
        floor_sides += [(h2floor.work_probe(us), args.poll_us, True, us) for us in args.work_us or []]
        for name, poll, ahead, work in floor_sides:
            f = Floor(ctx, floor_bin, name, answer_file, poll, read_ahead=ahead, work_us=work).start()
            floors.append(f)
            if args.pin:
                pin_to_cpu0(f.proc.pid)
            servers[name] = (f.port, f.proc.pid)
        if args.peer:
            # An emulator started (with the same rules) and warmed beforehand: PORT,SESSION-ID.
            port, sid = (int(v) for v in args.peer.split(","))
            seed(port, user, "emulator")
            servers[PEER] = (port, sid)
        elif not args.no_peer:
            emu = OfficialFirestore(ctx.registry, ctx.run_dir, ctx.rules_for_hearth)
            emu.start()
            ctx.log(f"the official emulator started in {emu.startup_seconds:.1f}s")
            seed(emu.port, user, "emulator")
            servers[PEER] = (emu.port, emu.proc.pid)
        order = [s for s in (HEARTH, PEER, BLOCK, POLL, POLL_EPOLL) if s in servers and (not args.sides or s in args.sides)]
        order += [h2floor.work_probe(us) for us in args.work_us or []]
        # Hearth's rounds record what its loop's polling did (pauses polled and slept, trial verdicts), as
        # `make bench` records them: a round's rate means little without the layout it ran in.
        pairing = Pairing(ctx, [Side(s, servers[s][1], polls=h.busy_poll if s == HEARTH else None) for s in order],
                          args.rounds, harness_pid=os.getpid())
        # make bench's warm-ups (fsrows.Phase.warm: 5 s for the JVM, 1 s for the others), the JVM's
        # longer with --peer-warm: in make bench it has run the REST rows for minutes before these.
        loads = {s: grpcbench.grpc_loads(ctx, s, servers[s][0], user, int(args.peer_warm) if s == PEER else 1) for s in order}
        for key in keys:
            # The --work-us sides spend their work on GetDocument only: they run in the get rows.
            sides = [s for s in order if key in h2floor.KEYS or not s.startswith(POLL + "+")]
            rounds = run_rounds(pairing, key, {s: loads[s][key] for s in sides}, args.rounds)
            s = summary(key, rounds)
            results["rows"][key] = {"summary": s, "rounds": rounds}
            show(key, s)
            if args.perf_syscalls:
                for side in [x for x in sides if x != PEER]:
                    rate, calls = perf_syscalls(servers[side][1], loads[side][key])
                    results["rows"][key][f"perf_syscalls_{side}"] = {"rate": rate, "per_op": calls}
                    print(f"  {side:16s} {rate:9,.0f}/s under perf stat; system calls per operation: "
                          + ", ".join(f"{c} {calls.get(c, 0):.2f}" for c in SYSCALLS), flush=True)
            if args.perf_steps:
                for side in [x for x in sides if x != PEER]:
                    rate, _, steps = callsteps.record(servers[side][1], loads[side][key])
                    results["rows"][key][f"perf_steps_{side}"] = {"rate": rate, "steps": steps}
                    print(f"  {side:16s} {rate:9,.0f}/s under perf record; {callsteps.line(steps)}", flush=True)
            if args.perf_sched:
                for side in [x for x in sides if x != PEER]:
                    rate, _, sched = callsched.record(servers[side][1], loads[side][key])
                    results["rows"][key][f"perf_sched_{side}"] = {"rate": rate, "sched": sched}
                    print(f"  {side:16s} {rate:9,.0f}/s under perf record (scheduler); " + "\n".join(callsched.lines(sched)), flush=True)
            if args.strace:
                for side in (HEARTH, BLOCK):
                    calls = syscalls(servers[side][1], loads[side][key].once, lambda r: operations(r[1]))
                    results["rows"][key][f"syscalls_{side}"] = calls
                    print(f"  {side} system calls per operation: {calls}", flush=True)
    finally:
        results["floor_counts"] = {f.name: f.stop() for f in floors}
        ctx.registry.stop_all()
        shutil.rmtree(data_dir, ignore_errors=True)
        os.makedirs(os.path.dirname(args.json), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    print(f"\nfloor counts: {results['floor_counts']}\nevery round: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
