#!/usr/bin/env python3
"""Why the REST commit at 16 connections swings between rounds of one process: `python3 bench/commit_var.py
[--bin B ...] [--rounds N] [--seconds S] [--pre-c1 K] [--idle S] [--ceiling] [--syncs] [--perf DIR]
[--extra "FLAGS"] [--json OUT]`.

`make bench`'s row fs.commit.c16 runs its rounds on one Hearth that keeps every document of the rounds
before (and of fs.commit.c1's rounds, `--pre-c1`), with the other side's rounds in between (`--idle`).
This runs the same wrk load (the bench's user-token REST create with a serverTimestamp, shipped rules)
in N rounds on one fresh Hearth per binary, each round after Hearth went quiet as `pairs.py` waits,
and records per round, beside the rate:
- Hearth's CPU per commit (user, system) and the load generator's; each thread's CPU per commit
  (threads named as the kernel knows them, with their thread ids: the checkpoint thread carries the
  name of the thread that started it) and the voluntary / involuntary switches per commit;
- the WAL as SQLite's own WAL index says, read from `firestore.sqlite-shm` every millisecond without
  any lock (the header's change counter: write transactions, hence bodies per transaction; the salt:
  how many times the WAL started again from its beginning, i.e. checkpoint cycles; mxFrame: the WAL's
  frames, their peak per cycle; nBackfill: how far the checkpoint had copied);
- with `--ceiling`, the raw SQLite ceiling (`bench/ceilings/sqlite_commits.c`, 50,000 commits, as
  `make bench` runs it) just before each round: whether the machine itself swung;
- before the round (after Hearth went quiet) and after it, the vCPUs: a Python loop's ns per step, SHA-256
  MB/s, and the ns a cache line takes from one vCPU to the other (`bench/ceilings/pingpong.c`) — on
  this VM bimodal, ~50–75 or ~220–260 ns, and the rounds follow it (docs/benchmarks.md, commitvar);
- firestore.sqlite's checkpoint passes and their seconds from the hub's `/emulator/v1/stats` (the
  writer's are stops of every commit), and the server-side descriptors of wrk's connections
  (libmicrohttpd gives an added connection to worker `fd % 16`);
- with `--ceiling`, the raw SQLite ceiling (`bench/ceilings/sqlite_commits.c`, 50,000 commits, as
  `make bench` runs it) just before each round, and with `--syncs` its `fdatasync` calls and seconds and
  Hearth's (strace; Hearth's rate under strace means nothing);
- with `--perf DIR`, a `perf record` of Hearth during each round and its top symbols in DIR.
The VM's steal time is printed per round; `--extra` passes flags to `hearth start`, and the environment
reaches Hearth as it is. Everything is local; every process started is stopped.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib.httpc import Client  # noqa: E402
from benchlib.loadgen import Wrk  # noqa: E402
from benchlib.machine import children_cpu, stat_fields, task_files  # noqa: E402
from benchlib.procs import compile_c  # noqa: E402
from commit_ab import fresh_hearth, rest_commit  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def threads(pid):
    """{tid: (name, user s, system s, voluntary, involuntary)}."""
    out = {}
    stats = dict(task_files(pid, "stat"))
    for tid, status in task_files(pid, "status"):
        if tid not in stats:
            continue
        f = stat_fields(stats[tid])
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        name = stats[tid].split("(", 1)[1].rsplit(")", 1)[0]
        out[tid] = (name, int(f[11]) / TICK, int(f[12]) / TICK,
                    int(fields.get("voluntary_ctxt_switches", 0)), int(fields.get("nonvoluntary_ctxt_switches", 0)))
    return out


def process_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = stat_fields(f.read())
    return int(s[11]) / TICK, int(s[12]) / TICK


def steal_seconds():
    with open("/proc/stat") as f:
        p = f.readline().split()
    return int(p[8]) / TICK


def wal_index(shm):
    """(iChange, mxFrame, salt1, nBackfill) from the WAL index's first header copy and its checkpoint
    info (wal.c: WalIndexHdr at 0, WalCkptInfo at 96; native byte order), or None."""
    try:
        b = os.pread(shm, 136, 0)
    except OSError:
        return None
    if len(b) < 136:
        return None
    change, = struct.unpack_from("=I", b, 8)
    mx, = struct.unpack_from("=I", b, 16)
    salt1, = struct.unpack_from(">I", b, 32)  # stored big-endian; +1 at every restart of the WAL
    backfill, = struct.unpack_from("=I", b, 96)
    return change, mx, salt1, backfill


class WALSampler:
    """Reads the WAL index every `period` seconds on a thread of its own while a round runs."""

    def __init__(self, path, period=0.001):
        self.path, self.period = path, period
        self.samples = []
        self.stop = threading.Event()

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDONLY)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        return self

    def run(self):
        while not self.stop.is_set():
            s = wal_index(self.fd)
            if s:
                self.samples.append((time.monotonic(), *s))
            time.sleep(self.period)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        os.close(self.fd)

    def summary(self):
        """Transactions, WAL restarts, frames written (estimated across restarts), peak frames per cycle,
        the largest checkpoint lag (frames not yet copied) and the share of samples with a lag."""
        s = self.samples
        if len(s) < 2:
            return {}
        txns = (s[-1][1] - s[0][1]) & 0xFFFFFFFF
        restarts = (s[-1][3] - s[0][3]) & 0xFFFFFFFF
        frames, peaks, peak, lagged, max_lag = 0, [], s[0][2], 0, 0
        for (_, _, mx0, salt0, _), (_, _, mx, salt, bf) in zip(s, s[1:]):
            if salt != salt0 or mx < mx0:
                peaks.append(peak)
                frames += mx
                peak = mx
            else:
                frames += mx - mx0
                peak = max(peak, mx)
            lag = mx - bf if bf <= mx else 0
            if bf and lag:
                lagged += 1
            max_lag = max(max_lag, lag)
        return {"txns": txns, "restarts": restarts, "frames": frames, "peaks": peaks, "end_frames": s[-1][2],
                "max_lag": max_lag, "lagged": lagged / (len(s) - 1)}


def checkpoint_stats(h):
    """firestore.sqlite's checkpoint passes and seconds from the hub's /emulator/v1/stats (binaries that
    report them), or None."""
    try:
        c = Client(h.port("hub"))
        try:
            r = c.request("GET", "/emulator/v1/stats")
        finally:
            c.close()
        return json.loads(r.body)["checkpoints"]["firestore.sqlite"]
    except Exception:  # noqa: BLE001 - an older binary without the figures
        return None


def connection_fds(pid, port):
    """The server-side descriptors of the established TCP connections to `port` of process `pid`: with a
    thread pool, libmicrohttpd gives an added connection to worker `fd % pool size` (MHD_add_connection)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    p = line.split()
                    if int(p[1].rsplit(":", 1)[1], 16) == port and p[3] == "01":
                        inodes.add(p[9])
        except OSError:
            continue
    fds = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            fds.append(int(fd))
    return sorted(fds)


def workers_used(fds, pool=16):
    """(distinct workers, most connections on one worker) for connections on these descriptors."""
    counts = {}
    for fd in fds:
        counts[fd % pool] = counts.get(fd % pool, 0) + 1
    return len(counts), max(counts.values()) if counts else 0


def quiet(pid, limit=0.05, window=0.5, timeout=10):
    """Waits until Hearth used under `limit` core over `window` s (at most `timeout` s); seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        a = sum(process_cpu(pid))
        time.sleep(window)
        if (sum(process_cpu(pid)) - a) / window < limit:
            break
    return time.monotonic() - t0


def ceiling(binary, work, syncs=False):
    """The raw SQLite ceiling's commits per second (and, with `syncs`, its fdatasync calls' count and
    seconds from strace, which stops the program only at those calls)."""
    db = os.path.join(work, "sqlite-ceiling.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    argv = [binary, db, "50000", "256"]
    log = os.path.join(work, "ceiling-strace.txt")
    if syncs:
        argv = ["strace", "-f", "-T", "--seccomp-bpf", "-e", "trace=fdatasync,fsync", "-o", log] + argv
    r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    rate = json.loads(r.stdout)["per_second"]
    return (rate, sync_times(log)) if syncs else (rate, None)


def sync_times(log):
    """{"calls": n, "seconds": total, "max_ms": longest} of the fdatasync/fsync lines of an `strace -T` log."""
    calls, total, longest, by = 0, 0.0, 0.0, {}
    with open(log) as f:
        for line in f:
            m = re.search(r"sync.*<(\d+\.\d+)>$", line.rstrip())
            if m:
                t = float(m.group(1))
                calls, total, longest = calls + 1, total + t, max(longest, t)
                tid = line.split()[0]
                c, secs = by.get(tid, (0, 0.0))
                by[tid] = (c + 1, round(secs + t, 4))
    os.remove(log)
    return {"calls": calls, "seconds": round(total, 4), "max_ms": round(longest * 1e3, 2), "by_tid": by}


def sync_tracer(pid, log):
    """strace on every thread of `pid`, stopping them only at fdatasync/fsync (`--seccomp-bpf`)."""
    return subprocess.Popen(["strace", "-f", "-T", "--seccomp-bpf", "-e", "trace=fdatasync,fsync", "-o", log, "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


PINGPONG = None


def calibrate():
    """The vCPUs just now, without I/O: ns per step of a fixed Python loop (branchy interpreter code, as
    sensitive to a busy host core beside ours as Hearth's own code), SHA-256 MB/s, and the ns a cache
    line takes from one vCPU to the other (`bench/ceilings/pingpong.c`: where the host runs the two)."""
    t = time.perf_counter()
    x = 0
    for i in range(2_000_000):
        x = (x * 31 + i) & 0xFFFF
    loop = (time.perf_counter() - t) / 2_000_000 * 1e9
    buf = b"\x5a" * (64 << 20)
    t = time.perf_counter()
    hashlib.sha256(buf).digest()
    sha = 64 * 1.048576 / (time.perf_counter() - t)
    hop = None
    if PINGPONG:
        r = subprocess.run([PINGPONG, "100000"], capture_output=True, text=True, timeout=60)
        hop = json.loads(r.stdout)["ns_per_handover"]
    return loop, sha, hop


def perf_start(pid, path, seconds):
    return subprocess.Popen(["perf", "record", "-F", "999", "-g", "-o", path, "-p", str(pid), "--", "sleep", str(seconds)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def perf_report(data, out):
    r = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", "0.3", "-g", "none",
                        "--sort", "dso,symbol"], capture_output=True, text=True, timeout=300)
    text = r.stdout
    demangle = shutil.which("swift-demangle")
    if demangle and text:
        text = subprocess.run([demangle, "--simplified"], input=text, capture_output=True, text=True, timeout=120).stdout or text
    with open(out, "w") as f:
        f.write(text)
    os.remove(data)


def one_round(h, port, commit, wrk, conns, args, label, ceiling_bin, work):
    pid = h.pid
    raw, raw_syncs = ceiling(ceiling_bin, work, args.syncs) if ceiling_bin else (None, None)
    waited = quiet(pid)
    loop_ns, sha_mbs, hop_ns = calibrate()
    shm = os.path.join(h.data_dir, "firestore.sqlite-shm")
    c0 = checkpoint_stats(h)
    t0, (u0, s0), g0, st0 = threads(pid), process_cpu(pid), children_cpu(), steal_seconds()
    perf = None
    if args.perf:
        data = os.path.join(args.perf, f"{label}.data")
        perf = (perf_start(pid, data, max(1, args.seconds - 1)), data)
    tracer = None
    if args.syncs:
        tracer = sync_tracer(pid, os.path.join(work, "hearth-strace.txt"))
        time.sleep(0.3)
    fds = []

    def look():
        time.sleep(1)
        fds.extend(connection_fds(pid, port))
    looker = threading.Thread(target=look, daemon=True)
    looker.start()
    with WALSampler(shm) as wal:
        s = wrk.once(port, [commit], conns, label, profile=False)
    looker.join()
    distinct, most = workers_used(fds)
    hearth_syncs = None
    if tracer:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(30)
        hearth_syncs = sync_times(os.path.join(work, "hearth-strace.txt"))
    if perf:
        perf[0].wait(60)
        perf_report(perf[1], os.path.join(args.perf, f"{label}.txt"))
    (u1, s1), g1, st1, t1 = process_cpu(pid), children_cpu(), steal_seconds(), threads(pid)
    c1 = checkpoint_stats(h)
    hop_after = calibrate()[2]
    ckpt = {k: round(c1[k] - c0[k], 4) for k in c1} if c0 and c1 else None
    if s["error_count"]:
        raise SystemExit(f"{label}: {s['error_count']} errors")
    n = max(1, s["requests"])
    secs = s["duration_us"] / 1e6
    w = wal.summary()
    per, groups = [], {}
    for tid, (name, u, sy, v, iv) in t1.items():
        name0, ua, sa, va, iva = t0.get(tid, (name, 0, 0, 0, 0))
        cpu = (u - ua + sy - sa) / n * 1e6
        g = groups.setdefault(name, [0, 0, 0, 0, 0])
        g[0] += cpu
        g[1] += (sy - sa) / n * 1e6
        g[2] += (v - va) / n
        g[3] += (iv - iva) / n
        g[4] += 1
        if cpu >= 1.5 or (v - va) / n >= 0.05:
            per.append((cpu, f"{name}/{tid} {cpu:.1f}µs (sys {(sy - sa) / n * 1e6:.1f}) {(v - va) / n:.2f}+{(iv - iva) / n:.2f}"))
    per.sort(reverse=True)
    rec = {"label": label, "rps": s["rps"], "p50_us": s["lat_p50_us"], "p99_us": s["lat_p99_us"],
           "hearth_user_us": (u1 - u0) / n * 1e6, "hearth_sys_us": (s1 - s0) / n * 1e6,
           "hearth_cores": (u1 - u0 + s1 - s0) / secs, "wrk_us": (g1 - g0) / n * 1e6, "steal": (st1 - st0) / secs,
           "quiet_wait": waited, "raw_sqlite": raw, "raw_syncs": raw_syncs, "checkpoints": ckpt, "fds": fds, "workers": distinct, "most_on_one_worker": most, "hearth_syncs": hearth_syncs, "loop_ns": loop_ns, "sha_mbs": sha_mbs, "hop_ns": hop_ns, "hop_after_ns": hop_after, "commits": n, **w}
    batch = n / w["txns"] if w.get("txns") else 0
    print(f"{label}: {s['rps']:,.0f}/s p50 {s['lat_p50_us']} p99 {s['lat_p99_us']} µs; Hearth {rec['hearth_user_us']:.1f}+"
          f"{rec['hearth_sys_us']:.1f} µs/commit ({rec['hearth_cores']:.2f} core), wrk {rec['wrk_us']:.1f} µs; steal "
          f"{rec['steal']:.3f}; quiet after {waited:.1f}s; loop {loop_ns:.1f} ns, sha256 {sha_mbs:,.0f} MB/s, hop {hop_ns or 0:.0f} ns before, {hop_after or 0:.0f} after" + (f"; raw SQLite {raw:,.0f}/s" if raw else ""), flush=True)
    if w:
        print(f"    WAL: {batch:.2f} bodies/txn, {w['frames'] / n:.2f} frames/commit, {w['restarts']} restarts, peaks "
              f"{w['peaks'][:12]}{'…' if len(w['peaks']) > 12 else ''}, end {w['end_frames']}, max lag {w['max_lag']}, "
              f"lagged {w['lagged']:.0%}", flush=True)
    print(f"    connections: fds {fds}: {distinct} workers of 16, at most {most} on one", flush=True)
    if ckpt:
        print(f"    checkpoints: thread {ckpt['threadPasses']} passes {ckpt['threadSeconds']:.3f} s, writer {ckpt['writerPasses']} "
              f"passes {ckpt['writerSeconds']:.3f} s ({ckpt['writerSeconds'] / secs:.1%} of the round)", flush=True)
    if hearth_syncs or raw_syncs:
        print(f"    syncs: Hearth {hearth_syncs}, raw SQLite {raw_syncs}", flush=True)
    rec["groups"] = groups
    print("    by name: " + ", ".join(f"{k}×{g[4]} {g[0]:.1f}µs (sys {g[1]:.1f}) {g[2]:.2f}+{g[3]:.2f}"
                                   for k, g in sorted(groups.items(), key=lambda kv: -kv[1][0]) if g[0] >= 0.5), flush=True)
    # The MHD workers share the requests (16 alike); the others one by one (the checkpoint thread
    # carries the name of the worker that started it: the one with few switches).
    print("    threads: " + ", ".join(t for _, t in per if not t.startswith("MHD-worker/") or " 0.0" in t)[:600], flush=True)
    rec["threads"] = [t for _, t in per]
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--pre-c1", type=int, default=0, help="rounds of the one-connection commit first, as make bench runs them")
    ap.add_argument("--idle", type=float, default=0, help="seconds of idle between rounds (the emulator's rounds)")
    ap.add_argument("--ceiling", action="store_true", help="the raw SQLite ceiling before each round")
    ap.add_argument("--syncs", action="store_true", help="fdatasync calls and time, Hearth's and the ceiling's (strace)")
    ap.add_argument("--perf", help="directory for a perf profile of each round")
    ap.add_argument("--extra", default="", help="extra hearth start flags, space separated")
    ap.add_argument("--json", help="write every round's record here")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in (args.bin or [os.path.join(ROOT, ".build", "release", "hearth")])]
    build = os.path.abspath(os.path.join(ROOT, ".build"))
    ceiling_bin = None
    if args.ceiling:
        os.makedirs(os.path.join(build, "bin"), exist_ok=True)
        ceiling_bin = compile_c("sqlite_commits.c", os.path.join(build, "bin", "sqlite_commits"), ["-lsqlite3"])
    if args.perf:
        os.makedirs(args.perf, exist_ok=True)
    global PINGPONG
    os.makedirs(os.path.join(build, "bin"), exist_ok=True)
    PINGPONG = compile_c("pingpong.c", os.path.join(build, "bin", "pingpong"), ["-lpthread"])
    out = []
    for i, b in enumerate(bins):
        work = tempfile.mkdtemp(prefix="commit-var-", dir=build)
        try:
            with fresh_hearth(b, work, extra=args.extra.split()) as (h, user, port):
                commit = rest_commit(port, user)
                wrk = Wrk(work, args.seconds)
                wrk.run(port, [commit], 16, "warm", duration=1, profile=False)
                for r in range(args.pre_c1):
                    out.append(one_round(h, port, commit, wrk, 1, args, f"bin{i}-c1-{r}", None, work))
                for r in range(args.rounds):
                    if r and args.idle:
                        time.sleep(args.idle)
                    out.append(one_round(h, port, commit, wrk, args.conns, args, f"bin{i}-c{args.conns}-{r}", ceiling_bin, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
