#!/usr/bin/env python3
"""The HTTP/1.1 floor beside the REST commit and transaction rows: what the best REST server on these
libraries reaches on this machine with `make bench`'s clients (docs/benchmarks.md, *The HTTP/1.1 floor*).

`python3 bench/rest_floor.py [--only c1,c16,txn,txnlight,sqlite] [--rounds 3] [--seconds 5] [--hearth-bin B]
[--floors mutex,group] [--no-peer] [--txn-warmup S] [--counters perf|strace|record|syscalls]`

Servers, all up side by side: Hearth's release binary (a fresh data directory, the bench rules), the
official Cloud Firestore emulator (`OfficialFirestore`, the same rules and the same user's token), and
`bench/ceilings/mhd_floor.c` once per commit design (`mutex`: one transaction per request on its
thread; `group`: group commit, Hearth's design), each on a fresh database file. Rows, each in
interleaved rounds (`pairs.Pairing`: every server quiet before each round, each round's CPU from
/proc, the best round kept), with `make bench`'s own loads — the same requests, the same options:
- c1, c16: the REST commit (`firebase.rest_loads`: wrk replaying a create with serverTimestamp and the
  user token, 1 and 16 connections, the emulator's and floors' first point after 5 s of warm-up);
- txn: the transaction row (`grpcbench.txn_load`: 16 clients of `grpcload -mode txn`, Go's net/http);
- txnlight: the same transactions through grpcload's light HTTP/1.1 client (`-client raw`, txnraw.go);
- sqlite: raw SQLite single-row commits (`sqlite_commits.c` as `make bench` runs it), N runs.
Per row and side: the best round's rate, the server's CPU µs per operation (its session's CPU over the
round ÷ operations) and the load generator's (the harness's children: wrk or grpcload), then
floor ÷ emulator, floor ÷ raw SQLite and Hearth ÷ floor. With `--counters`, every timed run is also
counted on its server (`benchlib.counters`: perf's software events and each thread's switches, or
strace's system calls, or a `perf record` to read, or `syscalls`: the system calls counted natively by
perf's tracepoints) and the sums over the rounds are printed per operation.
Loopback only; every process started is stopped.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench  # noqa: E402
from benchlib.counters import per_op, with_counters  # noqa: E402
from benchlib.context import Context  # noqa: E402
from benchlib.httpc import Client, HarnessError, NotAvailable  # noqa: E402
from benchlib.machine import children_cpu  # noqa: E402
from benchlib.pairs import HEARTH, PEER, Pairing, Side, with_loadgen_cpu  # noqa: E402
from benchlib.procs import BENCH_DIR, BareMHD, Hearth, OfficialFirestore, compile_c  # noqa: E402

ROOT = os.path.dirname(BENCH_DIR)
ROWS = {"c1": "fs.commit.c1", "c16": "fs.commit.c16", "txn": "fs.txn.c16", "txnlight": "fs.txn.light.c16"}
# libmicrohttpd's pool threads as `hearth start` runs each listener (its --threads, default 16; the
# HTTPServer.Configuration default of 8 that mhd_bare.c's rows use is not what the Firestore port gets).
FLOOR_THREADS = 16


class Floor(BareMHD):
    """mhd_floor on a fresh database file, one commit design (`mode`)."""

    def __init__(self, registry, binary, work_dir, threads, mode):
        super().__init__(registry, binary, work_dir, threads, name=f"floor-{mode}")
        self.db = os.path.join(work_dir, f"floor-{mode}.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.remove(self.db + suffix)
        self.mode = mode

    def argv(self):
        return [self.binary, str(self.port), str(self.threads), self.db, self.mode]

    @property
    def pid(self):
        return self.proc.pid


def build_floor(bin_dir):
    """mhd_floor compiled."""
    out = os.path.join(bin_dir, "mhd_floor")
    return compile_c("mhd_floor.c", out, ["-lmicrohttpd", "-lsqlite3", "-lpthread"])


def raw_sqlite(ctx, binary, runs):
    """`make bench`'s raw SQLite ceiling `runs` times: {best, per-run rates, CPU µs per commit of the best}."""
    db = os.path.join(ctx.run_dir, "sqlite-ceiling.db")
    out = []
    for _ in range(runs):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        before = children_cpu()
        r = subprocess.run([binary, db, str(ctx.s.sqlite_commits), "256"], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise HarnessError(f"sqlite_commits failed: {r.stderr.strip()}")
        s = json.loads(r.stdout)
        cpu = children_cpu() - before
        out.append({"rate": s["per_second"], "cpu_us": cpu / s["commits"] * 1e6})
        ctx.log(f"    raw SQLite {s['per_second']:,.0f} commits/s, {out[-1]['cpu_us']:.1f} CPU µs per commit")
    best = max(out, key=lambda r: r["rate"])
    return dict(best, runs=[round(r["rate"]) for r in out])


def operations(details):
    """The successful operations of a round: wrk's requests (clean runs only count) or grpcload's ok calls."""
    if "wrk" in details:
        return details["wrk"]["requests"] - details["wrk"]["error_count"]
    return details["grpcload"]["ok"]


def best_with_cpu(ctx, key, system):
    """The best round of `system` on `key` with CPU µs per operation of the server and load generator."""
    details = ctx.results.details.get((key, system)) or {}
    done = [r for r in details.get("rounds", []) if r.get("value")]
    if not done:
        value = ctx.results.get(key, system)
        return {"na": str(value) if value is not None else "not measured"}
    best = max(done, key=lambda r: r["value"])
    m, ops = best["machine"], operations(details)  # the best round's details are the row's
    return {"rate": best["value"], "server_us": m["server"] * m["seconds"] / ops * 1e6,
            "loadgen_us": details["loadgen_cpu"] / ops * 1e6, "server_cores": m["server"],
            "loadgen_cores": details["loadgen_cpu"] / m["seconds"], "disturbed": m["disturbed"], "steal": m["steal"],
            "rates": [round(r["value"]) for r in done],
            "client_us": [round(r["client_us_per_txn"], 1) for r in done if r.get("client_us_per_txn") is not None]}


def sign_up(auth_port, email):
    c = Client(auth_port)
    try:
        return firebase.sign_up(c, email)
    finally:
        c.close()


def report(ctx, rows, systems, floors, sqlite):
    """The table: per row each side's best rate and CPU per operation, then the ratios."""
    lines = []
    for row in rows:
        key = ROWS[row]
        got = {s: best_with_cpu(ctx, key, s) for s in systems}
        for s in systems:
            g = got[s]
            if "na" in g:
                lines.append(f"{row:4s} {s:12s} n/a: {g['na'][:160]}")
                continue
            lines.append(f"{row:4s} {s:12s} {g['rate']:>9,.0f}/s  server {g['server_us']:6.1f} µs/op "
                         f"({g['server_cores']:.2f} core)  load generator {g['loadgen_us']:6.1f} µs/op "
                         f"({g['loadgen_cores']:.2f} core)  rounds {g['rates']}"
                         + (f" client µs/txn {g['client_us']}" if g["client_us"] else "")
                         + ("  ⚑ disturbed" if g["disturbed"] else ""))
        live = [f for f in floors if "rate" in got[f]]
        if not live:
            continue
        floor = max(live, key=lambda f: got[f]["rate"])
        rate = got[floor]["rate"]
        parts = [f"floor = {floor}"]
        if "rate" in got.get(PEER, {}):
            parts.append(f"floor ÷ emulator {rate / got[PEER]['rate']:.2f}×")
        if sqlite and not row.startswith("txn"):
            parts.append(f"floor ÷ raw SQLite {rate / sqlite['rate']:.2f}×")
        if "rate" in got.get(HEARTH, {}):
            parts.append(f"Hearth ÷ floor {got[HEARTH]['rate'] / rate:.2f}× "
                         f"(server CPU {got[HEARTH]['server_us'] - got[floor]['server_us']:+.1f} µs/op)")
        lines.append(f"{row:4s} " + "; ".join(parts))
    if sqlite:
        lines.append(f"raw SQLite {sqlite['rate']:,.0f} commits/s (runs {sqlite['runs']}), {sqlite['cpu_us']:.1f} CPU µs per commit")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="c1,c16,txn,sqlite")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--floors", default="mutex,group", help="mhd_floor commit designs")
    ap.add_argument("--no-peer", action="store_true", help="without the official emulator")
    ap.add_argument("--counters", choices=["perf", "strace", "record", "syscalls"],
                    help="also count every timed run on its server: perf software events and thread switches, strace's "
                         "syscalls, a perf record kept for perf report, or the syscalls counted natively (perf tracepoints)")
    ap.add_argument("--warmup", type=int, default=30,
                    help="seconds (in fives) of the REST commit at 16 connections on the emulator before the first REST row")
    ap.add_argument("--txn-warmup", type=int, default=0,
                    help="seconds (in fives) of transactions on the emulator before the first transaction row")
    args = ap.parse_args()
    rows = [r for r in args.only.split(",") if r in ROWS]
    shipped = os.path.join(ROOT, "rules", "firestore.rules")  # as bench/run.py: the shipped rules
    ctx = Context(False, ROOT, os.path.abspath(args.hearth_bin), None, shipped if os.path.exists(shipped) else None)
    ctx.rules_for_hearth = ctx.rules_file or os.path.join(BENCH_DIR, "bench.rules")
    ctx.s.rounds = args.rounds
    ctx.s.duration = ctx.wrk.duration = args.seconds
    bin_dir = os.path.join(ctx.build, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    floor_bin = build_floor(bin_dir)
    sqlite_bin = compile_c("sqlite_commits.c", os.path.join(bin_dir, "sqlite_commits"), ["-lsqlite3"])
    floors = [f"floor-{m}" for m in args.floors.split(",") if m]
    results = {}
    try:
        sqlite = raw_sqlite(ctx, sqlite_bin, args.rounds) if "sqlite" in args.only.split(",") else None
        if not rows:
            print(report(ctx, rows, [], floors, sqlite))
            return 0
        data_dir = os.path.join(ctx.run_dir, "hearth-floor")
        shutil.rmtree(data_dir, ignore_errors=True)
        h = Hearth(ctx.registry, ctx.hearth_bin, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth,
                   log_name="hearth-floor").start()
        user = sign_up(h.port("auth"), "bench-floor@example.com")
        servers = {HEARTH: (h.port("firestore"), h.proc.pid)}
        if not args.no_peer:
            emu = OfficialFirestore(ctx.registry, ctx.run_dir, ctx.rules_for_hearth).start()
            servers[PEER] = (emu.port, emu.proc.pid)
        for name in floors:
            f = Floor(ctx.registry, floor_bin, ctx.run_dir, FLOOR_THREADS, name.split("-", 1)[1]).start()
            servers[name] = (f.port, f.proc.pid)
        pairing = Pairing(ctx, [Side(s, pid) for s, (_, pid) in servers.items()], ctx.s.rounds, harness_pid=os.getpid())
        grpcbench.build_grpcload(ctx)
        counted = {}  # (row, system): counts summed over the rounds (--counters)
        txn_warmed = set()  # the servers whose first transaction row had its --txn-warmup
        rest = {}  # each server's REST loads, made once: their probe creates a document that must not exist yet
        for row in rows:
            key = ROWS[row]
            loads = {}
            for system, (port, _) in servers.items():
                try:
                    if row.startswith("txn"):
                        loads[system] = grpcbench.txn_load(ctx, system, port, user, 5 if system == PEER else 1,
                                                           grpcbench.TXN_CLIENTS[key])
                        # The JVM's transaction path compiled before the first transaction row, as make
                        # bench's earlier rows leave it (its emulator ran 909/s there, ~430 after 5 s here).
                        for _ in range(args.txn_warmup // 5 if system == PEER and system not in txn_warmed
                                       and not isinstance(loads[system], str) else 0):
                            loads[system].warmup()
                        txn_warmed.add(system)
                    else:
                        if system not in rest:
                            rest[system] = firebase.rest_loads(ctx, port, user, system)
                            warm = rest[system]["fs.commit.c1"]
                            # The JVM's commit path compiled before the first row, as make bench's earlier
                            # rows (gets, the c1 point before c16) leave it: rest_loads' own warm-up of the
                            # emulator (5 s of the same commit at 16 connections), repeated. C and Swift need none.
                            for _ in range(args.warmup // 5 if system == PEER and not isinstance(warm, str) else 0):
                                warm.warmup()
                        loads[system] = rest[system][key]
                except (NotAvailable, OSError) as e:
                    loads[system] = str(e)
                loads[system] = with_counters(with_loadgen_cpu(loads[system]), servers[system][1], args.counters,
                                              counted.setdefault((row, system), {}), operations)
            ctx.log(f"{key}: {', '.join(servers)}")
            pairing.run(key, loads)
        systems = list(servers)
        text = report(ctx, rows, systems, floors, sqlite)
        results = {f"{row} {s}": best_with_cpu(ctx, ROWS[row], s) for row in rows for s in systems}
        print(text)
        for (row, system), totals in counted.items():
            if totals.get("ops"):
                counts = per_op(totals)
                print(f"{row:4s} {system:12s} per operation ({totals['ops']:,} in all rounds): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]) if v >= 0.01))
                results[f"{row} {system} counters"] = counts
    finally:
        ctx.registry.stop_all()
    out = os.path.join(ctx.build, f"rest-floor-{'-'.join(rows) or 'sqlite'}.json")
    with open(out, "w") as f:
        json.dump({"results": results, "sqlite": sqlite, "pair_rounds": pairing.log if rows else []}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
