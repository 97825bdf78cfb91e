#!/usr/bin/env python3
"""Syscalls per Firestore commit in a native Hearth, counted only while the commits run:
`python3 bench/strace_commit.py [--hearth-bin B] [--transport rest|commit|write] [-c C] [-n N] [--seconds S]`.

`callgrind_commit.py --tool strace` runs Hearth under strace from its start, so its totals carry
start-up and the warm-up. Here Hearth starts natively with the shipped rules on a data directory,
a user signs up, a warm-up runs, and only then `strace -f -c` attaches to every thread of it for the
measured commits (the same clients as callgrind_commit.py: REST commits from C keep-alive
connections, N of them, or bench/grpcload's Commit calls / Write-stream creates on C streams for S
seconds). Prints the main syscalls divided by the commits that succeeded. strace slows every
syscall, so the rate under it means nothing; the counts per commit are what to compare.
No Listen stream is open: what a commit costs with nobody listening.
Needs strace; gRPC transports need a built bench/grpcload (bench/run.py builds it).
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

from benchlib import firebase  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402
from callgrind_commit import commits, grpc_commits  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOWN = ("futex", "epoll_wait", "fcntl", "pwrite64", "pread64", "fdatasync", "sendto", "sendmsg", "recvfrom", "write", "read")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--transport", choices=["rest", "commit", "write"], default="commit")
    ap.add_argument("-c", type=int, default=1, help="REST connections or gRPC streams")
    ap.add_argument("-n", type=int, default=3000, help="REST commits")
    ap.add_argument("--seconds", type=float, default=8, help="load time of a gRPC run")
    ap.add_argument("--grpcload", default=os.path.join(ROOT, ".build", "bin", "grpcload"))
    args = ap.parse_args()
    if not shutil.which("strace"):
        print("strace is not installed (Debian package strace)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="strace-commit-", dir=os.path.join(ROOT, ".build"))
    data = os.path.join(work, "data")
    os.makedirs(data)
    out = os.path.join(work, "strace.txt")
    reg = Registry()
    h = Hearth(reg, args.hearth_bin, work, data_dir=data, rules=os.path.join(ROOT, "rules", "firestore.rules"),
               log_name="hearth-strace")
    try:
        h.start()
        c = Client(h.port("auth"))
        user = firebase.sign_up(c, "st@example.com")
        c.close()
        port = h.port("firestore")
        if args.transport == "rest":
            commits(port, user, 50, args.c, "warm")
        else:
            grpc_commits(args.grpcload, args.transport, port, user, 2, args.c, "warm")
        # -f with -p attaches every thread Hearth has (and any it starts).
        st = subprocess.Popen(["strace", "-f", "-c", "-o", out, "-p", str(h.pid)], stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        if args.transport == "rest":
            commits(port, user, args.n, args.c, "m")
            n = args.n
        else:
            n = grpc_commits(args.grpcload, args.transport, port, user, args.seconds, args.c, "m")
        time.sleep(0.3)
        st.send_signal(signal.SIGINT)
        st.wait(timeout=60)
    finally:
        reg.stop_all()
    calls = {}
    with open(out) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[0][0].isdigit() and p[-1] != "total":
                calls[p[-1]] = int(p[3])
    shutil.rmtree(work, ignore_errors=True)
    print(f"{args.transport}, {args.c} at once: {n} commits; per commit: "
          + ", ".join(f"{k} {calls[k] / n:.2f}" for k in SHOWN if k in calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
