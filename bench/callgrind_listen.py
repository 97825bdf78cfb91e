#!/usr/bin/env python3
"""Instructions per (commit × listener) of the realtime fan-out, counted (repeatable where the
wall-clock commit → snapshot latency on a shared machine is not):
`python3 bench/callgrind_listen.py [--hearth-bin B] [-l N] [-k K]`.

The scenario is the bench's rt.latency row: N Listen streams (100 per HTTP/2 connection, as
bench/grpcload's light listeners `-client h2` open them) on users/{uid}/files under the shipped
rules with the user's ID token, and K gRPC commits each creating one document there, every one delivered to every listener before
the next. Hearth runs under callgrind with instrumentation on only while the K commits run (after
`--warm` untimed ones), so a count covers the commit, the match, the encoding, the HTTP/2 framing
and the socket writes of each snapshot (and not the streams' teardown: grpcload holds them open
until the count stopped).

Two runs, with N listeners and with 1: the difference divided by K × (N − 1) is what one more
listener costs per commit (the commit's own instructions cancel out). Prints both totals per commit.
Needs valgrind (Debian package valgrind) and a built bench/grpcload (bench/run.py builds it, or
`go build` in GOPATH mode as bench/benchlib/grpcbench.py does); loopback only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402
from benchlib.instructions import collect, control, missing_tools, thread_totals  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(hearth_bin, grpcload, rules, listeners, commits, warm, keep=False, threads=False):
    """Instructions in Hearth while `commits` commits reach `listeners` listeners (a fresh Hearth)."""
    work = tempfile.mkdtemp(prefix="cg-listen-", dir=os.path.join(ROOT, ".build"))
    data = os.path.join(work, "data")
    os.makedirs(data)
    reg = Registry()
    h = Hearth(reg, hearth_bin, work, data_dir=data, rules=rules, log_name="hearth-cg")
    argv = h.argv()
    h.argv = lambda hub_port=0: ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                 f"--separate-threads={'yes' if threads else 'no'}",
                                 f"--callgrind-out-file={work}/callgrind.out.%p"] + argv
    load = None
    try:
        h.start(timeout=300)
        c = Client(h.port("auth"))
        user = firebase.sign_up(c, "cg-listen@example.com")
        c.close()
        load = subprocess.Popen([grpcload, "-addr", f"127.0.0.1:{h.port('firestore')}", "-token", user.id_token,
                                 "-mode", "listen", "-uid", user.uid, "-listeners", str(listeners), "-per-conn", "100",
                                 "-commits", str(commits), "-warm", str(warm), "-gate", "-timeout", "900",
                                 "-tag", f"cg{listeners}", "-client", "h2"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = load.stdout.readline()
        if line.strip() != "CURRENT":
            raise SystemExit(f"grpcload did not get its listeners current: {line!r} {load.stderr.read()[-400:]}")
        control(h.pid, "-i", "on")
        t0 = time.time()
        load.stdin.write("go\n")
        load.stdin.flush()
        # The summary comes once every commit reached every listener; the streams stay open until
        # stdin closes, so their teardown is not counted.
        summary = load.stdout.readline()
        secs = time.time() - t0
        control(h.pid, "-i", "off")
        control(h.pid, "-d")
        load.stdin.close()
        err = load.stderr.read()
        load.wait(timeout=600)
        if load.returncode != 0 or not summary.startswith("GRPCLOAD "):
            raise SystemExit(f"grpcload failed: {summary!r} {err.strip()[-400:]}")
        s = json.loads(summary[len("GRPCLOAD "):])
        if s["samples"] != s["expected_samples"] or s["commits_ok"] != commits:
            raise SystemExit(f"only {s['samples']} of {s['expected_samples']} snapshots arrived ({s})")
    finally:
        if load and load.poll() is None:
            load.kill()
        reg.stop_all()
    if threads:
        # The busiest threads bound the fan-out's latency: the engine's queue and the HTTP/2 loop(s).
        busiest = thread_totals(work)[:4]
        print("  busiest threads, instructions per commit: " + ", ".join(f"{t / commits:,.0f}" for t in busiest), flush=True)
    ir = collect(work, keep)
    print(f"  {listeners} listener{'s' if listeners > 1 else ''}: {ir / commits:,.0f} instructions per commit "
          f"({commits} commits, {secs:.1f}s under callgrind)", flush=True)
    return ir


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--grpcload", default=os.path.join(ROOT, ".build", "bin", "grpcload"))
    ap.add_argument("-l", "--listeners", type=int, default=1000)
    ap.add_argument("-k", "--commits", type=int, default=10)
    ap.add_argument("--warm", type=int, default=3, help="untimed commits first (first-call paths, caches)")
    ap.add_argument("--keep", action="store_true", help="keep the dumps (for callgrind_annotate)")
    ap.add_argument("--threads", action="store_true", help="also print the busiest threads' counts (the critical path)")
    args = ap.parse_args()
    missing = missing_tools()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    if not os.path.exists(args.grpcload):
        print(f"{args.grpcload} is missing: build bench/grpcload first", file=sys.stderr)
        return 2
    rules = os.path.join(ROOT, "rules", "firestore.rules")
    print(f"Listen fan-out under callgrind: {args.commits} commits, 100 listeners per connection")
    many = run(args.hearth_bin, args.grpcload, rules, args.listeners, args.commits, args.warm, args.keep, args.threads)
    one = run(args.hearth_bin, args.grpcload, rules, 1, args.commits, args.warm, args.keep)
    per = (many - one) / (args.commits * (args.listeners - 1))
    print(f"per (commit × listener), {args.listeners} vs 1 listener: {per:,.0f} instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
