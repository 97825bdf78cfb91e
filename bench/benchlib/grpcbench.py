"""Firestore over gRPC and realtime: h2load for GetDocument, bench/grpcload (Go) for Commit, the Write
stream and Listen latencies, the same programs against Hearth and the official emulator.

Every rate counts successful calls only, checked per call: grpcload reads each call's grpc-status;
h2load sees only HTTP 200, so its GetDocument runs are checked by their bytes — every successful
answer is the same document (L bytes of DATA, measured on one call that grpcload confirmed is
grpc-status 0), an error is Trailers-Only (no DATA) — and a run counts only when DATA = answers × L.
"""
import json
import os
import re
import shutil
import subprocess
import time

from .context import DOC_NAME_PREFIX
from .httpc import HarnessError, NotAvailable, check_loopback
from .procs import BENCH_DIR, proc_status

GOPATH = "/usr/share/gocode"


def build_grpcload(ctx):
    """bench/grpcload built once per run in GOPATH mode (Debian's Go packages); NotAvailable without them."""
    if getattr(ctx, "grpcload", None):
        return ctx.grpcload
    go = shutil.which("go")
    if not go or not os.path.isdir(os.path.join(GOPATH, "src", "google.golang.org", "genproto", "googleapis",
                                                "firestore", "v1")):
        raise NotAvailable("go and golang-google-cloud-dev are not installed (the Makefile's DEB_PACKAGES)")
    out = os.path.join(ctx.build, "bin", "grpcload")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = os.path.join(BENCH_DIR, "grpcload", "main.go")
    newest = max(os.path.getmtime(os.path.join(os.path.dirname(src), f))
                 for f in os.listdir(os.path.dirname(src)) if f.endswith(".go"))
    if not (os.path.exists(out) and os.path.getmtime(out) >= newest):
        env = dict(os.environ, GO111MODULE="off", GOPATH=GOPATH, GOFLAGS="",
                   GOCACHE=os.path.join(ctx.build, "gocache"))
        r = subprocess.run([go, "build", "-o", out, "."], cwd=os.path.dirname(src), env=env,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise HarnessError(f"go build bench/grpcload failed: {r.stderr.strip()[:400]}")
    ctx.grpcload = out
    return out


def grpcload(ctx, port, token, mode, *args, timeout=300, stdin=None):
    """Runs one grpcload mode against 127.0.0.1:port; returns its GRPCLOAD summary."""
    argv = [build_grpcload(ctx), "-addr", f"127.0.0.1:{port}", "-token", token or "", "-mode", mode] + [str(a) for a in args]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=stdin)
    except subprocess.TimeoutExpired:
        raise NotAvailable(f"grpcload {mode} did not finish within {timeout}s")
    line = next((l for l in r.stdout.splitlines() if l.startswith("GRPCLOAD ")), None)
    if r.returncode != 0 or line is None:
        raise NotAvailable(f"grpcload {mode} failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    return json.loads(line[len("GRPCLOAD "):])


def require_ok(s, what):
    """NotAvailable unless every call ended with grpc-status 0 (and at least one ran)."""
    failed = sum((s.get("failed") or {}).values())
    if failed or not s.get("ok"):
        raise NotAvailable(f"{what}: {failed} of {failed + s.get('ok', 0)} calls failed "
                           f"({s.get('failed')}; e.g. {s.get('failed_example', '')[:200]})")
    return s


# h2load (Debian nghttp2-client) for GetDocument.

def parse_h2load(text):
    out = {}
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, "
                  r"(\d+) timeout", text)
    if m:
        out.update(zip(["total", "started", "done", "succeeded", "failed", "errored", "timeout"], map(int, m.groups())))
    m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text)
    if m:
        out["status_2xx"] = int(m.group(1))
    m = re.search(r"traffic: .*?\((\d+)\) total, .*?\((\d+)\) headers .*?, .*?\((\d+)\) data", text)
    if m:
        out["bytes_total"], out["bytes_headers"], out["bytes_data"] = map(int, m.groups())
    m = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", text)
    if m:
        secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
        out["seconds"] = secs
    m = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)", text)
    if m:
        def us(v):
            n = float(re.sub(r"[a-z]+$", "", v))
            return n * {"us": 1, "ms": 1e3, "s": 1e6}[re.search(r"[a-z]+$", v).group(0)]
        out["lat_min_us"], out["lat_max_us"], out["lat_mean_us"] = us(m.group(1)), us(m.group(2)), us(m.group(3))
    return out


class H2Load:
    """GetDocument load over HTTP/2 from h2load: one request body file, S streams in flight."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.binary = shutil.which("h2load")

    def run(self, port, frame_file, token, streams, seconds, count=None):
        check_loopback("127.0.0.1")
        if not self.binary:
            raise NotAvailable("h2load is not installed (Debian package nghttp2-client)")
        conns = 1
        argv = [self.binary, "-c", str(conns), "-m", str(streams), "-t", "1", "-d", frame_file,
                "-H", "content-type: application/grpc", "-H", "te: trailers",
                "-H", f"authorization: Bearer {token}",
                "-H", f"google-cloud-resource-prefix: {DOC_NAME_PREFIX.rsplit('/documents', 1)[0]}"]
        # No --warm-up-time: h2load counts the warm-up's DATA bytes but not its answers, which would
        # break the byte check; a warm-up is a run of its own (`get_point`).
        argv += ["-n", str(count)] if count else ["-D", str(seconds)]
        argv.append(f"http://127.0.0.1:{port}/google.firestore.v1.Firestore/GetDocument")
        r = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
        s = parse_h2load(r.stdout)
        if r.returncode != 0 or "done" not in s or "bytes_data" not in s:
            raise NotAvailable(f"h2load failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-300:]}")
        s["streams"], s["connections"] = streams, conns
        return s


def get_point(ctx, port, frame_file, token, streams, answer_len, what, warmup):
    """Best of `wrk_reps` h2load runs; each counts only if every answer was the whole document."""
    h2 = H2Load(ctx)
    if warmup:
        h2.run(port, frame_file, token, streams, warmup)
    best = None
    for _ in range(ctx.s.wrk_reps):
        s = h2.run(port, frame_file, token, streams, ctx.s.duration)
        whole = s["bytes_data"] // answer_len if answer_len else 0
        if s["done"] == 0 or s["status_2xx"] != s["done"] or s["bytes_data"] != s["done"] * answer_len:
            raise NotAvailable(f"{what}: of {s['done']} answers only {whole} carried the document "
                               f"({s['bytes_data']} DATA bytes, {answer_len} each): the rest failed")
        s["rps"] = s["done"] / s["seconds"]
        if best is None or s["rps"] > best["rps"]:
            best = s
    return best


def grpc_rows(ctx, system, port, user, role="hearth"):
    """gRPC GetDocument (user token, rules) at 1 and 16 streams; Commit creating users/{uid}/files/* at
    16 streams; Write-stream creates at 16 streams. Stored under grpc.get.s1/s16, grpc.commit.s16,
    rt.write.s16 for `system` (and grpc.commit.grpcgo.s16, rt.write.grpcgo.s16 for Hearth through grpc-go)."""
    keys = ["grpc.get.s1", "grpc.get.s16", "grpc.get.light.s1", "grpc.get.light.s16", "grpc.commit.s16", "rt.write.s16"]
    if user is None:
        for k in keys:
            ctx.results.na(k, system, "no user token (Auth not available)")
        return
    try:
        build_grpcload(ctx)
    except NotAvailable as e:
        for k in keys:
            ctx.results.na(k, system, str(e))
        return
    doc = f"users/{user.uid}/files/f0"
    # A JVM needs its hot paths compiled before it is timed: the peer gets a longer warm-up.
    warm = 0 if ctx.quick else (5 if role == "peer" else 1)
    # GetDocument: the request body file, one call checked by grpcload (status 0), its DATA length.
    try:
        frame = os.path.join(ctx.run_dir, f"getdoc-{system}.bin")
        with open(frame, "wb") as f:
            f.write(subprocess.run([build_grpcload(ctx), "-mode", "frame", "-doc", doc], capture_output=True,
                                   check=True, timeout=30).stdout)
        require_ok(grpcload(ctx, port, user.id_token, "get", "-doc", doc, "-duration", 0.2), f"{system} gRPC GetDocument")
        one = H2Load(ctx).run(port, frame, user.id_token, 1, 0, count=1)
        answer_len = one["bytes_data"]
        if one.get("done") != 1 or answer_len <= 5:
            raise NotAvailable(f"{system} gRPC GetDocument through h2load answered no document ({one})")
        for streams in (1, 16):
            key = f"grpc.get.s{streams}"
            s = get_point(ctx, port, frame, user.id_token, streams, answer_len, f"{system} gRPC GetDocument", warm)
            ctx.results.put(key, system, s["rps"], h2load=s, answer_bytes=answer_len)
            ctx.log(f"  {system:10s} {key:22s} {s['rps']:>10,.0f} calls/s  mean {s.get('lat_mean_us', 0):.0f} µs")
    except NotAvailable as e:
        for k in ("grpc.get.s1", "grpc.get.s16"):
            ctx.results.na(k, system, str(e))
    # The same calls from grpcload's light client (h2unary.go), both widths, beside h2load's rows: each
    # answer checked to be the document with grpc-status 0, and the token sent HPACK-indexed after the
    # first call, as grpc-go sends it (h2load re-sends it Huffman-coded every call; grpcs1c).
    for streams in (1, 16):
        best_run(ctx, system, f"grpc.get.light.s{streams}", port, user, "get", f"gRPC GetDocument (grpcload h2)", "calls/s",
                 warm, "-doc", doc, "-per-conn", 16, "-client", "h2", streams=streams)
    # Through grpcload's light client (h2unary.go), on both sides: grpc-go's client spent as much CPU
    # per call as the server on the same two cores. Hearth's rows are also taken through grpc-go, as
    # rows of their own, so the change of harness hides nothing (docs/benchmarks.md, grpcwrite).
    for key, mode, what in (("grpc.commit.s16", "commit", "gRPC Commit"), ("rt.write.s16", "write", "Write stream")):
        best_run(ctx, system, key, port, user, mode, what, "calls/s", warm, "-per-conn", 16, "-client", "h2")
        if system == "hearth":
            best_run(ctx, system, key.replace(".s16", ".grpcgo.s16"), port, user, mode, what + " (grpc-go)", "calls/s", warm,
                     "-per-conn", 16, "-client", "grpc")


def best_run(ctx, system, key, port, user, mode, what, unit, warm, *args, streams=16):
    """The best of `wrk_reps` timed grpcload runs of `mode` at `streams` streams, stored under (key, system);
    n/a when any call of a run failed."""
    try:
        best = None
        for rep in range(ctx.s.wrk_reps):
            s = grpcload(ctx, port, user.id_token, mode, "-uid", user.uid, "-streams", streams, "-duration", ctx.s.duration,
                         "-warmup", warm, "-tag", f"{system}-{mode}-{rep}-{int(time.time() * 1000)}", *args)
            if s.get("setup_error"):
                raise NotAvailable(f"{system} {what}: {s['setup_error'][:200]}")
            require_ok(s, f"{system} {what}")
            if best is None or s["rps"] > best["rps"]:
                best = s
        ctx.results.put(key, system, best["rps"], grpcload=best)
        ctx.log(f"  {system:10s} {key:22s} {best['rps']:>10,.0f} {unit}  p50 {best['lat_p50_us']:.0f} µs")
    except NotAvailable as e:
        ctx.results.na(key, system, str(e))


def listener_rows(ctx, system, port, pid, sign_up):
    """Commit → snapshot latency (p50/p99) with 1, 100 and 1,000 listeners on the committed query, and
    the RSS and threads that 10,000 idle listeners add. `sign_up(email)` gives a fresh user (its own
    empty collection per point); `pid` is the process whose memory is read."""
    counts = ctx.s.listener_counts
    keys = ([f"rt.latency.{n}" for n in counts] + [f"rt.latency99.{n}" for n in counts] + ["rt.idle.rss", "rt.idle.threads"]
            + ([f"rt.latency99.grpcgo.{counts[-1]}"] if system == "hearth" else []))
    try:
        build_grpcload(ctx)
    except NotAvailable as e:
        for k in keys:
            ctx.results.na(k, system, str(e))
        return
    for n in counts:
        key = f"rt.latency.{n}"
        try:
            s = listen_latency(ctx, system, port, sign_up, n, "h2")
            ctx.results.put(key, system, s["p50_us"] / 1e3, p99_ms=s["p99_us"] / 1e3, grpcload=s)
            ctx.results.put(f"rt.latency99.{n}", system, s["p99_us"] / 1e3)
        except NotAvailable as e:
            ctx.results.na(key, system, str(e))
            ctx.results.na(f"rt.latency99.{n}", system, str(e))
    if system == "hearth":
        # The same scenario through grpc-go's listeners, the client of the rows before listen1k: shown
        # beside the light client's figure so the change of harness hides nothing (docs/benchmarks.md).
        n = counts[-1]
        try:
            s = listen_latency(ctx, system, port, sign_up, n, "grpc")
            ctx.results.put(f"rt.latency99.grpcgo.{n}", system, s["p99_us"] / 1e3, p50_ms=s["p50_us"] / 1e3, grpcload=s)
        except NotAvailable as e:
            ctx.results.na(f"rt.latency99.grpcgo.{n}", system, str(e))
    n = ctx.s.idle_listeners
    try:
        user = sign_up(f"bench-idle-{system}@example.com")
        before = proc_status(pid)
        argv = [build_grpcload(ctx), "-addr", f"127.0.0.1:{port}", "-token", user.id_token, "-mode", "idle",
                "-uid", user.uid, "-listeners", str(n), "-per-conn", "100", "-timeout", "240"]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = p.stdout.readline()
            if not line.startswith("GRPCLOAD "):
                p.kill()
                raise NotAvailable(f"{system}: {n:,} idle listeners could not be opened: {p.stderr.read()[-300:]}")
            # Idle means after the set-up's burst: the dispatch pool's worker threads that the burst
            # woke retire after 5 s without work (libdispatch's idle timeout), so a sample 1 s in
            # counted 1–4 of them as held by the listeners (seen: 103 threads at 1 s, 100 from 5 s).
            time.sleep(7)
            after = proc_status(pid)
        finally:
            if p.poll() is None:
                p.stdin.close()
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        added = (after.get("VmRSS", 0) - before.get("VmRSS", 0)) / 1024
        ctx.results.put("rt.idle.rss", system, added, before_mib=before.get("VmRSS", 0) / 1024,
                        after_mib=after.get("VmRSS", 0) / 1024, listeners=n, setup=json.loads(line[len("GRPCLOAD "):]))
        ctx.results.put("rt.idle.threads", system, float(after.get("Threads", 0) - before.get("Threads", 0)),
                        before=before.get("Threads"), after=after.get("Threads"))
        ctx.log(f"  {system:10s} {n:,} idle listeners: +{added:.1f} MiB RSS, threads {before.get('Threads')} → "
                f"{after.get('Threads')}")
    except NotAvailable as e:
        ctx.results.na("rt.idle.rss", system, str(e))
        ctx.results.na("rt.idle.threads", system, str(e))


def listen_latency(ctx, system, port, sign_up, n, client):
    """One rt.latency point: n listeners on a fresh user's collection, the commits of context.py timed
    to every listener's snapshot through `client` (h2: grpcload's light listeners, the rows' client;
    grpc: grpc-go's). NotAvailable unless every commit succeeded and every snapshot arrived."""
    user = sign_up(f"bench-rt{n}-{client}-{system}@example.com")
    commits = ctx.s.listener_commits(n) if system == "hearth" else ctx.s.peer_listener_commits(n)
    # The official emulator answers each commit with RESET and the whole result to every listener:
    # ~6 s per commit at 100 listeners (listen1000's probe), past grpcload's default 10 s wait
    # once the result grows, so it gets fewer commits (context.py) and a longer wait each.
    peer = [] if system == "hearth" else ["-commit-wait", 300]
    s = grpcload(ctx, port, user.id_token, "listen", "-uid", user.uid, "-listeners", n, "-commits", commits,
                 "-tag", f"{system}-l{n}-{client}", "-per-conn", 100, "-client", client, *peer,
                 timeout=600 if system == "hearth" else 900)
    if s.get("commit_failed") or not s.get("commits_ok"):
        raise NotAvailable(f"{system} listeners: commits failed ({s.get('commit_failed')}: "
                           f"{s.get('failed_example', '')[:200]})")
    if s["samples"] != s["expected_samples"]:
        raise NotAvailable(f"{system} listeners: {s['samples']} of {s['expected_samples']} snapshots arrived")
    ctx.log(f"  {system:10s} {n:>5} listeners ({client}): commit → snapshot p50 {s['p50_us'] / 1e3:.2f} ms, "
            f"p99 {s['p99_us'] / 1e3:.2f} ms ({s['samples']} snapshots)")
    return s


def txn_row(ctx, system, port, user, role="hearth"):
    """REST read-write transactions per second at 16 concurrent clients (beginTransaction, batchGet in the
    transaction, commit of an allowed update), each client on its own document: fs.txn.c16."""
    if user is None:
        ctx.results.na("fs.txn.c16", system, "no user token (Auth not available)")
        return
    best_run(ctx, system, "fs.txn.c16", port, user, "txn", "REST transaction", "txn/s",
             0 if ctx.quick else (5 if role == "peer" else 1))
