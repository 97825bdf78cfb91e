#!/usr/bin/env python3
"""The bench's realtime latency scenario alone, repeated: `python3 bench/listen_latency.py
[--hearth-bin B] [-l 1000] [-k 30] [-r 3] [--strace] [--sched] [--client h2|grpc|both]`.

Exactly what `make bench` times for its rt.latency rows (bench/benchlib/grpcbench.listener_rows):
N Listen streams, 100 per HTTP/2 connection, a query target on a fresh user's users/{uid}/files
under bench/bench.rules with the user's ID token, all current; then K commits, each timed from
just before the Commit call to every listener's global snapshot. One Hearth (on a data directory,
as the bench runs it) serves every repetition, each with its own user. Prints p50/p99 per run.

Also prints the CPU time the client (grpcload, decoding every listener's messages) and Hearth
each spent per timed commit (/proc/<pid>/stat): on two cores their sum bounds the latency.

`--strace` counts the system calls Hearth makes during the timed commits of each run (strace -c
attached to every thread), per commit, so a change in writes and wake-ups shows beside latency.
`--sched` records every CPU's scheduling (perf sched events) during the timed commits and prints, per
commit, the CPU time of Hearth's threads by role, the client, other processes and idle from the Commit
call to the commit's last listener, the longest wake-up wait of a Hearth thread, and the client's
garbage collections (gctrace) in that window: whether a slow commit was Hearth's work, its wait for a
CPU, or the client. Every run prints Hearth's CPU per thread role and the machine's steal.
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
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, machine  # noqa: E402
from benchlib.counters import parse_strace  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_seconds(pid):
    """User + system CPU time of a process, all its threads, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        return machine.stat_cpu_seconds(f.read())


def thread_nices(pid):
    """{role: sorted nice values} of the threads of process `pid` (a thread a library starts may not
    keep the nice value its process was started with)."""
    names = machine.thread_names(pid)
    out = {}
    for tid, text in machine.task_files(pid, "stat"):
        if int(tid) in names:
            out.setdefault(thread_kind(names[int(tid)]), set()).add(int(machine.stat_fields(text)[16]))
    return {k: sorted(v) for k, v in sorted(out.items())}


def thread_ticks(pid):
    """{tid: user + system ticks} of every thread of process `pid` (/proc/<pid>/task/<tid>/stat)."""
    out = {}
    for tid, text in machine.task_files(pid, "stat"):
        fields = machine.stat_fields(text)
        out[int(tid)] = int(fields[11]) + int(fields[12])
    return out


def thread_kind(name):
    """A Hearth thread's role from its kernel name: its HTTP/2 loops (firestore-h2-N), gRPC workers, the
    group commit; libdispatch's pool threads (the Listen feed and shards ran there before their own threads,
    `listen-feed` / `listen-N`), all named after
    their root queue (`oot.default-qos`, the end of com.apple.root.default-qos): "dispatch"."""
    return "dispatch" if name.startswith("oot.") else name


GCTRACE = re.compile(r"gc \d+ @([\d.]+)s [\d.]+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock")


def gc_windows(lines):
    """The client's garbage collections (GODEBUG=gctrace=1 lines with their arrival time) as (start, end)
    Unix µs. gctrace stamps a cycle with seconds since the program started; the program's start is
    placed where the earliest-arriving line says (arrival − stamp − length: a line is written as its
    cycle ends, so the least delayed line gives the tightest bound)."""
    cycles = []
    for arrived, line in lines:
        m = GCTRACE.search(line)
        if m:
            at = float(m.group(1)) * 1e6
            length = sum(float(m.group(i)) for i in (2, 3, 4)) * 1e3
            cycles.append((arrived * 1e6, at, length))
    if not cycles:
        return []
    start = min(arrived - at - length for arrived, at, length in cycles)
    return [(start + at, start + at + length) for _, at, length in cycles]


def sched_split(path, offset_us, spans, hearth_pid, hearth_threads, client_pid, gcs):
    """Per timed commit, who held the two CPUs from the Commit call's start to its last listener
    (`perf record -a` of sched_switch and sched_wakeup, the kernel's view): Hearth's threads by role,
    the client, other processes, idle; and how long Hearth's threads waited between being woken and
    running (the longest wait, and whose). With the client's garbage collections that overlapped."""
    text = subprocess.run(["perf", "script", "-i", path, "-F", "cpu,tid,time,event,trace", "--ns"],
                          capture_output=True, text=True).stdout
    pat = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(sched_switch|sched_wakeup):\s*(.*)$")
    sw = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) .*?==> next_comm=(.*?) next_pid=(\d+)")
    wk = re.compile(r"comm=(.*?) pid=(\d+) ")
    client_tids = set(int(t) for t in os.listdir(f"/proc/{client_pid}/task")) if os.path.isdir(f"/proc/{client_pid}/task") else set()
    running = {}  # cpu -> (tid, comm, since)
    slices = []  # (start, end, cpu, tid, comm)
    woken = {}  # tid -> time
    waits = []  # (woken at, ran at, tid)
    for line in text.splitlines():
        m = pat.match(line)
        if not m:
            continue
        cpu, t, ev, rest = int(m.group(2)), float(m.group(3)) * 1e6 + offset_us, m.group(4), m.group(5)
        if ev == "sched_wakeup":
            w = wk.search(rest)
            if w and int(w.group(2)) in hearth_threads:
                woken.setdefault(int(w.group(2)), t)
            continue
        s = sw.search(rest)
        if not s:
            continue
        prev, nxt, ncomm = int(s.group(2)), int(s.group(4)), s.group(3)
        if cpu in running:
            tid, comm, since = running[cpu]
            slices.append((since, t, cpu, tid, comm))
        running[cpu] = (nxt, ncomm, t)
        if nxt in woken:
            waits.append((woken.pop(nxt), t, nxt))

    def kind(tid, comm):
        if tid == 0:
            return "idle"
        if tid in hearth_threads:
            return "hearth " + thread_kind(hearth_threads[tid])
        if tid in client_tids:
            return "client"
        return "other " + comm

    out = []
    for c in spans:
        t0, t1 = c[4], c[4] + c[3]
        used = {}
        for start, end, cpu, tid, comm in slices:
            lo, hi = max(start, t0), min(end, t1)
            if hi > lo:
                k = kind(tid, comm)
                used[k] = used.get(k, 0) + (hi - lo) / 1e3
        worst = max(((ran - at, hearth_threads.get(tid, "?")) for at, ran, tid in waits if t0 <= ran <= t1), default=(0, ""))
        overlap = sum(max(0, min(b, t1) - max(a, t0)) for a, b in gcs) / 1e3
        out.append({"window_ms": (t1 - t0) / 1e3, "used_ms": used, "longest_wait_ms": worst[0] / 1e3, "waiter": worst[1],
                    "client_gc_ms": overlap})
    return out


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


def run_once(h, grpcload, listeners, commits, tag, trace, client="h2", timeline_file=None, sched_file=None):
    c = Client(h.port("auth"))
    user = firebase.sign_up(c, f"lat-{tag}@example.com")
    c.close()
    env = dict(os.environ, GODEBUG="gctrace=1") if sched_file else None
    load = subprocess.Popen([grpcload, "-addr", f"127.0.0.1:{h.port('firestore')}", "-token", user.id_token,
                             "-mode", "listen", "-uid", user.uid, "-listeners", str(listeners), "-per-conn", "100",
                             "-commits", str(commits), "-warm", "3", "-gate", "-timeout", "600", "-tag", tag, "-client", client],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # The client's stderr, each line with its arrival time (gctrace lines are placed by it), read as it
    # comes so that a chatty client never blocks on a full pipe.
    err_lines = []
    reader = threading.Thread(target=lambda: err_lines.extend((time.time(), l) for l in load.stderr), daemon=True)
    reader.start()
    line = load.stdout.readline()
    if line.strip() != "CURRENT":
        load.wait(timeout=60)
        reader.join(timeout=5)
        raise SystemExit(f"grpcload did not get its listeners current: {line!r} {''.join(l for _, l in err_lines)[-400:]}")
    st = None
    if timeline_file:
        events = [f"syscalls:sys_{side}_{c}" for c in TRACED for side in ("enter", "exit")]
        st = subprocess.Popen(["perf", "record", "-q", "-k", "mono", "-o", timeline_file, "-p", str(h.pid)]
                              + [a for e in events for a in ("-e", e)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    elif sched_file:
        st = subprocess.Popen(["perf", "record", "-q", "-a", "-k", "mono", "-o", sched_file,
                               "-e", "sched:sched_switch", "-e", "sched:sched_wakeup"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    elif trace:
        st = subprocess.Popen(["strace", "-c", "-f", "-p", str(h.pid)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    # CPU of the client (decoding every listener's snapshot) and of Hearth over the timed commits:
    # on a machine with few cores the two share them, which bounds the latency as much as either.
    # Also Hearth's CPU per thread (which threads the fan-out ran on) and the machine's steal.
    names = machine.thread_names(h.pid)
    ticks0, snap0 = thread_ticks(h.pid), machine.read_snapshot()
    cpu0 = (cpu_seconds(load.pid), cpu_seconds(h.pid))
    load.stdin.write("go\n")
    load.stdin.flush()
    summary = load.stdout.readline()
    cpu1 = (cpu_seconds(load.pid), cpu_seconds(h.pid))
    ticks1, snap1 = thread_ticks(h.pid), machine.read_snapshot()
    nices = thread_nices(h.pid)
    counts = {}
    if st:
        st.send_signal(signal.SIGINT)
        err = st.communicate(timeout=60)[1]
        if trace and not timeline_file and not sched_file:
            counts = parse_strace(err)
    s = json.loads(summary[len("GRPCLOAD "):]) if summary.startswith("GRPCLOAD ") else None
    if s and sched_file:
        # Before the client exits: its threads are read from /proc.
        names.update(machine.thread_names(h.pid))
        offset = (time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)) * 1e6
        s["sched"] = sched_split(sched_file, offset, s.get("per_commit_us") or [], h.pid, names, load.pid,
                                 gc_windows(list(err_lines)))
    load.stdin.close()
    load.wait(timeout=120)
    reader.join(timeout=5)
    if s is None:
        raise SystemExit(f"grpcload failed: {summary!r} {''.join(l for _, l in err_lines)[-400:]}")
    s["client_cpu_ms_per_commit"] = (cpu1[0] - cpu0[0]) * 1e3 / commits
    s["hearth_cpu_ms_per_commit"] = (cpu1[1] - cpu0[1]) * 1e3 / commits
    per_kind = {}
    for tid, t in ticks1.items():
        k = thread_kind(names.get(tid, "?"))
        per_kind[k] = per_kind.get(k, 0) + (t - ticks0.get(tid, 0)) * 1e3 / os.sysconf("SC_CLK_TCK") / commits
    s["hearth_threads_ms_per_commit"] = {k: round(v, 2) for k, v in sorted(per_kind.items(), key=lambda kv: -kv[1]) if v > 0}
    s["hearth_thread_nice"] = nices
    s["machine"] = machine.account(snap0, snap1, server_sid=os.getsid(h.pid), harness_pid=os.getpid())
    s["client_gcs"] = len(gc_windows(list(err_lines))) if sched_file else None
    if s["samples"] != s["expected_samples"]:
        raise SystemExit(f"only {s['samples']} of {s['expected_samples']} snapshots arrived")
    return s, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("--grpcload", default=os.path.join(ROOT, ".build", "bench", "bin", "grpcload"))
    ap.add_argument("-l", "--listeners", type=int, default=1000)
    ap.add_argument("-k", "--commits", type=int, default=30)
    ap.add_argument("-r", "--runs", type=int, default=3)
    ap.add_argument("--strace", action="store_true", help="count Hearth's system calls per commit")
    ap.add_argument("--timeline", action="store_true",
                    help="perf record Hearth's socket writes and reads: per commit, when the request was read, the answer "
                         "sent, and the first and last listener connection written")
    ap.add_argument("--sched", action="store_true",
                    help="perf record every CPU's scheduling during the timed commits (and the client's garbage "
                         "collections, GODEBUG=gctrace=1): per commit, who ran from its Commit call to its last listener")
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
            sf = os.path.join(work, f"sched-{r}-{client}.data") if args.sched else None
            s, counts = run_once(h, args.grpcload, args.listeners, args.commits, f"r{r}{client}-{int(time.time())}",
                                 args.strace, client, tl, sf)
            line = (f"  run {r + 1} ({client:4s}): p50 {s['p50_us'] / 1e3:.2f} ms, p99 {s['p99_us'] / 1e3:.2f} ms, max {s['max_us'] / 1e3:.2f} ms"
                    f" (the Commit call p50 {s['commit_p50_us'] / 1e3:.2f} ms; a commit's last listener p50 {s['last_p50_us'] / 1e3:.2f} ms);"
                    f" CPU per commit: client {s['client_cpu_ms_per_commit']:.2f} ms, hearth {s['hearth_cpu_ms_per_commit']:.2f} ms")
            if counts:
                # The warm-up and gate are outside the traced window; the rest is the timed commits.
                per = {k: v / args.commits for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:8]}
                line += "; syscalls per commit: " + ", ".join(f"{k} {v:.0f}" for k, v in per.items())
            print(line + f" (load {os.getloadavg()[0]:.1f})", flush=True)
            m = s["machine"]
            print(f"    Hearth's threads, CPU ms per commit: "
                  + ", ".join(f"{k} {v:.2f}" for k, v in s["hearth_threads_ms_per_commit"].items())
                  + f"; machine over the timed commits: steal {m['steal']:.2f} core, other processes {m['others']:.2f} core"
                  + (f" ({', '.join(n for n, _ in m['top_others'])})" if m["top_others"] else ""), flush=True)
            print("    Hearth's threads' nice values: " + ", ".join(f"{k} {v}" for k, v in s["hearth_thread_nice"].items()), flush=True)
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
            if args.sched:
                print(f"    scheduling per commit ({s['client_gcs']} client GCs in the run): window ms = Hearth's threads"
                      " / client / others / idle, longest wake-up wait of a Hearth thread; the client's GC overlap")
                for c, row in zip(spans, s["sched"]):
                    u = row["used_ms"]
                    hearth = sum(v for k, v in u.items() if k.startswith("hearth"))
                    others = sum(v for k, v in u.items() if k.startswith("other"))
                    top = sorted(((v, k) for k, v in u.items() if k.startswith("hearth")), reverse=True)[:4]
                    print(f"      {row['window_ms']:6.2f}: hearth {hearth:5.2f} ({', '.join(f'{k[7:]} {v:.2f}' for v, k in top)})"
                          f" / client {u.get('client', 0):5.2f} / others {others:5.2f} / idle {u.get('idle', 0):5.2f};"
                          f" wait {row['longest_wait_ms']:.2f} ({row['waiter']}); gc {row['client_gc_ms']:.2f}"
                          f"  [first {c[0] / 1e3:.1f} p50 {c[1] / 1e3:.1f} p90 {c[2] / 1e3:.1f} last {c[3] / 1e3:.1f}]")
            if args.per_commit:
                print("    " + " ".join(f"[{c[0] / 1e3:.1f} {c[1] / 1e3:.1f} {c[2] / 1e3:.1f} {c[3] / 1e3:.1f}]" for c in spans),
                      flush=True)
    finally:
        reg.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
