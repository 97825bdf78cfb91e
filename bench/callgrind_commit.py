#!/usr/bin/env python3
"""Instructions, SQLite WAL pages and syscalls per Firestore commit, counted (repeatable where
wall-clock rates on a shared machine are not): `python3 bench/callgrind_commit.py [--hearth-bin B] [-n N] [-c C]`.

The commit is the bench's fs.commit row: a user-token REST commit creating users/{uid}/files/{id}
with createdAt = serverTimestamp and `exists: false`, under the shipped rules, on a data directory
(WAL, synchronous=NORMAL). With `-c C` (default 1) C clients commit at once, each on its own
keep-alive connection, so group commit can batch them. `--transport commit|write` sends gRPC Commit
calls or Write-stream creates through bench/grpcload instead (N is then what ran in --seconds);
`--transport txn` the bench's fs.txn.c16 row (grpcload's REST read-write transactions:
beginTransaction, a batchGet in it, a commit of a masked update; the C documents they update are
created in the warm-up), counted per transaction.

Prints, per commit: instructions in Hearth (callgrind, only while the N commits run), WAL bytes
written (the -wal file's growth with checkpoints off: a fresh run's WAL only grows until the first
checkpoint, so N stays under it) and, with --strace, the syscalls Hearth made. `--threads` also prints
the busiest threads' instructions per commit (callgrind --separate-threads; a gRPC row's writer and
connection loop: what each of them does per commit).
`--floor mutex|group` counts bench/ceilings/mhd_floor.c (bench/rest_floor.py) under the same load
instead: the least a REST server must do per commit. Needs valgrind (Debian package valgrind); loopback only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase  # noqa: E402
from benchlib.context import DOCS  # noqa: E402
from benchlib.httpc import Client, expect  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402
from benchlib.instructions import spread, thread_totals  # noqa: E402
from callgrind_get import control, total_ir  # noqa: E402
from rest_floor import FLOOR_THREADS, Floor, build_floor  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commits(port, user, n, clients, tag):
    """n commits of new documents from `clients` concurrent connections."""
    errors = []

    def run(k, count):
        # Under callgrind on a loaded machine (other builds at nice 10) one answer can take over 30 s.
        c = Client(port, timeout=600)
        try:
            for i in range(count):
                body = {"writes": [firebase.create_write(user.uid, f"{tag}-{k}-{i}", firebase.file_fields(user.uid))]}
                r = c.request("POST", f"{DOCS}:commit", headers={"Authorization": f"Bearer {user.id_token}"}, body=body)
                if r.status != 200:
                    errors.append(f"commit answered {r.status}: {r.snippet()}")
                    return
        finally:
            c.close()

    spread(n, clients, run)
    if errors:
        raise SystemExit(errors[0])


def grpc_commits(grpcload, mode, port, user, seconds, clients, tag, client=None):
    """Commits through bench/grpcload (`commit`: unary Commit calls; `write`: Write streams, one
    create in flight each; `txn`: REST transactions, through `client` when given) for `seconds`;
    returns how many succeeded."""
    r = subprocess.run([grpcload, "-addr", f"127.0.0.1:{port}", "-token", user.id_token, "-mode", mode, "-uid", user.uid,
                        "-streams", str(clients), "-per-conn", "16", "-duration", str(seconds), "-tag", tag]
                       + (["-client", client] if client else []),
                       capture_output=True, text=True, timeout=seconds * 10 + 120)
    line = next((l for l in r.stdout.splitlines() if l.startswith("GRPCLOAD ")), None)
    if r.returncode != 0 or line is None:
        raise SystemExit(f"grpcload {mode} failed: {r.stderr.strip()[-300:]}")
    s = json.loads(line[len("GRPCLOAD "):])
    if sum((s.get("failed") or {}).values()):
        raise SystemExit(f"grpcload {mode}: failed calls {s.get('failed')}")
    return s["ok"]


def wal_size(data_dir):
    total = 0
    for root, _, files in os.walk(data_dir):
        for f in files:
            if f.endswith("-wal"):
                total += os.path.getsize(os.path.join(root, f))
    return total


def cpu_times(pid):
    """utime and stime of `pid`, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def measure(hearth_bin, rules, n, clients, tool, keep=False, page_size=None, transport="rest", grpcload=None, seconds=10,
            threads=False, floor=None, frozen_clock=False, client=None):
    work = tempfile.mkdtemp(prefix="cg-commit-", dir=os.path.join(ROOT, ".build"))
    data = os.path.join(work, "data")
    os.makedirs(data)
    if page_size:
        # An experiment: Firestore's file created beforehand keeps its page size (benchlib.procs).
        os.environ["BENCH_FIRESTORE_PAGE_SIZE"] = str(page_size)
    reg = Registry()
    if floor:
        # bench/ceilings/mhd_floor.c in Hearth's place (rest_floor.py): no token check, any token does.
        h = Floor(reg, build_floor(os.path.join(ROOT, ".build", "bench", "bin")), data, FLOOR_THREADS, floor)
    else:
        h = Hearth(reg, hearth_bin, work, data_dir=data, rules=rules, log_name="hearth-cg")
    argv = h.argv()
    wrap = []
    if tool == "callgrind":
        wrap = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--separate-threads={'yes' if threads else 'no'}",
                f"--callgrind-out-file={work}/callgrind.out.%p"]
    elif tool == "strace":
        wrap = ["strace", "-f", "-c", "-o", f"{work}/strace.txt"]
    h.argv = lambda hub_port=0: wrap + (h.__class__.argv(h) if floor else argv)
    try:
        h.start(timeout=300)
        if floor:
            user = firebase.User("cg@example.com", "Xq3vB9kLm2PzR7tY1wNc5hJd8sFa", "floor", "")
            port = h.port
        else:
            c = Client(h.port("auth"))
            user = firebase.sign_up(c, "cg@example.com")
            # The uid is random, and one with an upper-case K costs the rules coverage more
            # (docs/benchmarks.md, rules30 and covfold30): CG_UID_K=with|without signs up again
            # until the uid has (has not) one, so runs compare like with like.
            want = os.environ.get("CG_UID_K")
            tries = 0
            while want in ("with", "without") and ("K" in user.uid) != (want == "with") and tries < 60:
                tries += 1
                user = firebase.sign_up(c, f"cg{tries}@example.com")
            print(f"uid: {user.uid}", file=sys.stderr)
            c.close()
            port = h.port("firestore")
            if frozen_clock:
                hub = Client(h.port("hub"))
                r = hub.request("PUT", "/emulator/v1/clock", body={"mode": "frozen"})
                hub.close()
                if r.status != 200:
                    raise SystemExit(f"freezing the clock failed: {r.status}")
        if transport == "rest":
            commits(port, user, 50, clients, "warm")  # token cache, prepared statements, first-call paths
        else:
            grpc_commits(grpcload, transport, port, user, 2, clients, "warm", client)
        before = wal_size(data)
        cpu0 = cpu_times(h.pid)
        if tool == "callgrind":
            control(h.pid, "-i", "on")
        t0 = time.time()
        if transport == "rest":
            commits(port, user, n, clients, "m")
        else:
            n = grpc_commits(grpcload, transport, port, user, seconds, clients, "m", client)
        secs = time.time() - t0
        cpu1 = cpu_times(h.pid)
        if tool == "callgrind":
            control(h.pid, "-i", "off")
            control(h.pid, "-d")
        wal = wal_size(data) - before
    finally:
        reg.stop_all()
    what = {"rest": "REST commit", "commit": "gRPC Commit", "write": "Write-stream commit",
            "txn": "REST transaction"}[transport]
    label = (f"{what} ({f'mhd_floor {floor}' if floor else 'user token, rules on'}, serverTimestamp), "
             f"{clients} client{'s' if clients > 1 else ''}")
    if tool == "callgrind":
        print(f"{label}: {total_ir(work) / n:,.0f} instructions per commit ({n} commits, {secs:.1f}s under callgrind)")
        if threads:
            # The writer is the busiest thread of a gRPC commit row, the connection's loop the next.
            print("  busiest threads, instructions per commit: " + ", ".join(f"{t / n:,.0f}" for t in thread_totals(work)[:4]))
    elif tool == "strace":
        print(f"{label}: syscalls of the whole run (warm-up and start-up included):")
        with open(os.path.join(work, "strace.txt")) as f:
            print(f.read())
    else:
        user, system = ((b - a) / os.sysconf("SC_CLK_TCK") / n * 1e6 for a, b in zip(cpu0, cpu1))
        print(f"{label}: {user:,.0f} µs user + {system:,.0f} µs system CPU per commit in Hearth; "
              f"{n / secs:,.0f} commits/s (wall clock on a shared machine: not a benchmark)")
    print(f"  WAL growth: {wal / n:,.0f} bytes per commit (0 means a checkpoint wrapped the WAL: lower -n)")
    if keep:
        print(f"kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-n", type=int, default=400)
    ap.add_argument("-c", type=int, default=1, help="concurrent clients")
    ap.add_argument("--tool", choices=["callgrind", "strace", "none"], default="callgrind")
    ap.add_argument("--transport", choices=["rest", "commit", "write", "txn"], default="rest",
                    help="REST commits, gRPC Commit calls, Write-stream commits or REST transactions (the last three through bench/grpcload)")
    ap.add_argument("--grpcload", default=os.path.join(ROOT, ".build", "bin", "grpcload"),
                    help="a built bench/grpcload (bench/run.py builds it)")
    ap.add_argument("--seconds", type=float, default=10, help="load time of a gRPC run (its commits are counted)")
    ap.add_argument("--page-size", type=int, help="create the database with this page size first (an experiment)")
    ap.add_argument("--keep", action="store_true", help="keep the dumps (for callgrind_annotate)")
    ap.add_argument("--threads", action="store_true", help="also print the busiest threads' instructions per commit")
    ap.add_argument("--frozen-clock", action="store_true",
                    help="freeze Hearth's clock (the hub's /emulator/v1/clock) before the warm-up: commit times then "
                         "step 1 µs a commit. Under callgrind a commit takes ~50x its native time, so what depends on "
                         "commits per millisecond of commit time (the commit clock's stored ceiling, CommitTimes) "
                         "is counted as at native rates, not at callgrind's")
    ap.add_argument("--floor", choices=["mutex", "group"],
                    help="count bench/ceilings/mhd_floor.c (that commit design) instead of Hearth (bench/rest_floor.py)")
    ap.add_argument("--client", choices=["grpc", "raw"],
                    help="--transport txn: grpcload's client, grpc (Go's net/http, its default: fs.txn.c16) or raw "
                         "(the light HTTP/1.1 client, txnraw.go: fs.txn.light.c16's requests and headers)")
    args = ap.parse_args()
    need = {"callgrind": ("valgrind", "callgrind_control"), "strace": ("strace",), "none": ()}[args.tool]
    for tool in need:
        if not shutil.which(tool):
            print(f"{tool} is not installed (Debian packages valgrind, strace)", file=sys.stderr)
            return 2
    measure(args.hearth_bin, os.path.join(ROOT, "rules", "firestore.rules"), args.n, args.c, args.tool, args.keep, args.page_size,
            args.transport, args.grpcload, args.seconds, args.threads, args.floor, args.frozen_clock, args.client)
    return 0


if __name__ == "__main__":
    sys.exit(main())
