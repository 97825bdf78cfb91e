#!/usr/bin/env python3
"""The bench's realtime latency scenario alone, repeated: `python3 bench/listen_latency.py
[--hearth-bin B] [-l 1000] [-k 30] [-r 3] [--strace] [--client h2|grpc|both]`.

Exactly what `make bench` times for its rt.latency rows (bench/benchlib/grpcbench.listener_rows):
N Listen streams, 100 per HTTP/2 connection, a query target on a fresh user's users/{uid}/files
under bench/bench.rules with the user's ID token, all current; then K commits, each timed from
just before the Commit call to every listener's global snapshot. One Hearth (on a data directory,
as the bench runs it) serves every repetition, each with its own user. Prints p50/p99 per run.

Also prints the CPU time the client (grpcload, decoding every listener's messages) and Hearth
each spent per timed commit (/proc/<pid>/stat): on two cores their sum bounds the latency.

`--strace` counts the system calls Hearth makes during the timed commits of each run (strace -c
attached to every thread), per commit, so a change in writes and wake-ups shows beside latency.
Loopback only; needs a built bench/grpcload (bench/run.py builds it).
"""
import argparse
import itertools
import json
import os
import re
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def syscalls(report):
    """strace -c's table as {name: calls}."""
    out = {}
    for line in report.splitlines():
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
        if m and m.group(2) != "total":
            out[m.group(2)] = int(m.group(1))
    return out


def cpu_seconds(pid):
    """User + system CPU time of a process, all its threads, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


TRACED = ["sendto", "recvfrom", "fdatasync", "fsync"]


def timeline(path, offset_us, spans):
    """Per timed commit, from `perf record` of Hearth's system calls (tracepoints: no ptrace stop, so
    little distortion): when (ms after the client started the Commit call) the request was read, the
    answer sent, and the first and last listener connection's write returned. Listener connections
    are the sockets written with ≥ 4 KiB at once (a commit's pass over up to 100 listeners); the
    rest (the writer's) are the reads and writes of the Commit call. `offset_us` turns perf's
    monotonic clock into the client's wall clock."""
    text = subprocess.run(["perf", "script", "-i", path, "-F", "tid,time,event,trace", "--ns"],
                          capture_output=True, text=True).stdout
    open_calls = {}
    ev = []  # (start µs, call, fd, result, end µs)
    pat = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_(\w+):\s*(.*)$")
    for line in text.splitlines():
        m = pat.match(line)
        if not m:
            continue
        tid, t, side, call, args = int(m.group(1)), float(m.group(2)) * 1e6 + offset_us, m.group(3), m.group(4), m.group(5)
        if side == "enter":
            fd = re.search(r"fd: (0x[0-9a-f]+)", args)
            open_calls[tid] = (t, call, int(fd.group(1), 16) if fd else -1)
        elif tid in open_calls:
            start, c, fd = open_calls.pop(tid)
            ret = int(args.strip(), 16) if args.strip().startswith("0x") else -1
            if ret >= 1 << 63:
                ret -= 1 << 64
            ev.append((start, c, fd, ret, t))
    ev.sort()
    listener_fds = {fd for _, call, fd, ret, _ in ev if call == "sendto" and ret >= 4096}
    out = []
    starts = [c[4] for c in spans] + [float("inf")]
    for k, c in enumerate(spans):
        t0, t1 = starts[k], starts[k + 1]
        win = [e for e in ev if t0 <= e[0] < t1]
        reads = [e for e in win if e[1] == "recvfrom" and e[3] > 0 and e[2] not in listener_fds]
        answers = [e for e in win if e[1] == "sendto" and e[2] not in listener_fds]
        fan = [e for e in win if e[1] == "sendto" and e[2] in listener_fds]
        syncs = [e for e in win if e[1] in ("fdatasync", "fsync")]
        rel = lambda t: (t - t0) / 1e3
        out.append({"request_read": rel(reads[0][4]) if reads else None, "answer_sent": rel(answers[0][4]) if answers else None,
                    "first_fanout_write": rel(fan[0][4]) if fan else None, "last_fanout_write": rel(fan[-1][4]) if fan else None,
                    "fanout_writes": len(fan), "sync_ms": sum(e[4] - e[0] for e in syncs) / 1e3,
                    "client_first": c[0] / 1e3, "client_last": c[3] / 1e3})
    return out


def run_once(h, grpcload, listeners, commits, tag, trace, client="h2", timeline_file=None):
    c = Client(h.port("auth"))
    user = firebase.sign_up(c, f"lat-{tag}@example.com")
    c.close()
    load = subprocess.Popen([grpcload, "-addr", f"127.0.0.1:{h.port('firestore')}", "-token", user.id_token,
                             "-mode", "listen", "-uid", user.uid, "-listeners", str(listeners), "-per-conn", "100",
                             "-commits", str(commits), "-warm", "3", "-gate", "-timeout", "600", "-tag", tag, "-client", client],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = load.stdout.readline()
    if line.strip() != "CURRENT":
        raise SystemExit(f"grpcload did not get its listeners current: {line!r} {load.stderr.read()[-400:]}")
    st = None
    if timeline_file:
        events = [f"syscalls:sys_{side}_{c}" for c in TRACED for side in ("enter", "exit")]
        st = subprocess.Popen(["perf", "record", "-q", "-k", "mono", "-o", timeline_file, "-p", str(h.pid)]
                              + [a for e in events for a in ("-e", e)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    elif trace:
        st = subprocess.Popen(["strace", "-c", "-f", "-p", str(h.pid)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    # CPU of the client (decoding every listener's snapshot) and of Hearth over the timed commits:
    # on a machine with few cores the two share them, which bounds the latency as much as either.
    cpu0 = (cpu_seconds(load.pid), cpu_seconds(h.pid))
    load.stdin.write("go\n")
    load.stdin.flush()
    summary = load.stdout.readline()
    cpu1 = (cpu_seconds(load.pid), cpu_seconds(h.pid))
    counts = {}
    if st:
        st.send_signal(signal.SIGINT)
        err = st.communicate(timeout=60)[1]
        if not timeline_file:
            counts = syscalls(err)
    load.stdin.close()
    load.wait(timeout=120)
    if not summary.startswith("GRPCLOAD "):
        raise SystemExit(f"grpcload failed: {summary!r} {load.stderr.read()[-400:]}")
    s = json.loads(summary[len("GRPCLOAD "):])
    s["client_cpu_ms_per_commit"] = (cpu1[0] - cpu0[0]) * 1e3 / commits
    s["hearth_cpu_ms_per_commit"] = (cpu1[1] - cpu0[1]) * 1e3 / commits
    if s["samples"] != s["expected_samples"]:
        raise SystemExit(f"only {s['samples']} of {s['expected_samples']} snapshots arrived")
    return s, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--grpcload", default=os.path.join(ROOT, ".build", "bin", "grpcload"))
    ap.add_argument("-l", "--listeners", type=int, default=1000)
    ap.add_argument("-k", "--commits", type=int, default=30)
    ap.add_argument("-r", "--runs", type=int, default=3)
    ap.add_argument("--strace", action="store_true", help="count Hearth's system calls per commit")
    ap.add_argument("--timeline", action="store_true",
                    help="perf record Hearth's socket writes and reads: per commit, when the request was read, the answer "
                         "sent, and the first and last listener connection written")
    ap.add_argument("--dump", help="append each run's grpcload summary (JSON, one line per run) to this file")
    ap.add_argument("--per-commit", action="store_true",
                    help="print each timed commit's first, median, 90th-percentile and last listener")
    ap.add_argument("--client", default="h2", choices=["h2", "grpc", "both"],
                    help="the listeners' client: h2 (the bench's light client, default), grpc (grpc-go), both (alternating)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="lat-listen-", dir=os.path.join(ROOT, ".build"))
    data = os.path.join(work, "data")
    os.makedirs(data)
    reg = Registry()
    h = Hearth(reg, args.hearth_bin, work, data_dir=data, rules=os.path.join(ROOT, "bench", "bench.rules"))
    try:
        h.start(timeout=120)
        print(f"{args.listeners} listeners, {args.commits} commits per run, {os.getloadavg()[0]:.1f} load average")
        clients = ["h2", "grpc"] if args.client == "both" else [args.client]
        for r, client in itertools.product(range(args.runs), clients):
            tl = os.path.join(work, f"timeline-{r}-{client}.txt") if args.timeline else None
            s, counts = run_once(h, args.grpcload, args.listeners, args.commits, f"r{r}{client}-{int(time.time())}",
                                 args.strace, client, tl)
            line = (f"  run {r + 1} ({client:4s}): p50 {s['p50_us'] / 1e3:.2f} ms, p99 {s['p99_us'] / 1e3:.2f} ms, max {s['max_us'] / 1e3:.2f} ms"
                    f" (the Commit call p50 {s['commit_p50_us'] / 1e3:.2f} ms; a commit's last listener p50 {s['last_p50_us'] / 1e3:.2f} ms);"
                    f" CPU per commit: client {s['client_cpu_ms_per_commit']:.2f} ms, hearth {s['hearth_cpu_ms_per_commit']:.2f} ms")
            if counts:
                # The warm-up and gate are outside the traced window; the rest is the timed commits.
                per = {k: v / args.commits for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:8]}
                line += "; syscalls per commit: " + ", ".join(f"{k} {v:.0f}" for k, v in per.items())
            print(line + f" (load {os.getloadavg()[0]:.1f})", flush=True)
            spans = s.get("per_commit_us") or []
            if spans:
                # Whether the tail is every commit's last listeners or a few slow commits.
                firsts, lasts = sorted(c[0] for c in spans), sorted(c[3] for c in spans)
                print(f"    per commit (ms): first listener p50 {firsts[len(firsts) // 2] / 1e3:.2f}, last listener p50"
                      f" {lasts[len(lasts) // 2] / 1e3:.2f} min {lasts[0] / 1e3:.2f} max {lasts[-1] / 1e3:.2f}", flush=True)
            if args.dump:
                with open(args.dump, "a") as f:
                    f.write(json.dumps(s) + "\n")
            if tl:
                offset = (time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)) * 1e6
                rows = timeline(tl, offset, spans)
                print("    timeline per commit (ms after the Commit call started): request read / answer sent /"
                      " first / last listener connection written (writes) / fsync ms → client first / last listener")
                for row in rows:
                    f = lambda v: "-" if v is None else f"{v:.2f}"
                    print(f"      {f(row['request_read'])} / {f(row['answer_sent'])} / {f(row['first_fanout_write'])} /"
                          f" {f(row['last_fanout_write'])} ({row['fanout_writes']}) / {row['sync_ms']:.2f} →"
                          f" {row['client_first']:.2f} / {row['client_last']:.2f}")
            if args.per_commit:
                print("    " + " ".join(f"[{c[0] / 1e3:.1f} {c[1] / 1e3:.1f} {c[2] / 1e3:.1f} {c[3] / 1e3:.1f}]" for c in spans),
                      flush=True)
    finally:
        reg.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
