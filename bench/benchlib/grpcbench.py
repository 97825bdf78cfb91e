"""Firestore over gRPC and realtime: h2load for GetDocument, bench/grpcload (Go) for Commit, the Write
stream and Listen latencies, the same programs against Hearth and the official emulator.

Every rate counts successful calls only, checked per call: grpcload reads each call's grpc-status;
h2load sees only HTTP 200, so its GetDocument runs are checked by their bytes — every successful
answer is the same document (L bytes of DATA, measured on one call that grpcload confirmed is
grpc-status 0), an error is Trailers-Only (no DATA) — and a run counts only when its DATA bytes are its
answers × L plus at most what the calls still in flight at its end received (`counted_answers`).
"""
import collections
import itertools
import json
import os
import re
import shutil
import subprocess
import time

from .context import DOC_NAME_PREFIX
from .httpc import HarnessError, NotAvailable, check_loopback
from .pairs import Load, with_loadgen_cpu
from .machine import thread_names
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


def counted_answers(s, answer_len, what):
    """The calls of an h2load GetDocument run that certainly carried the document, from its DATA bytes;
    NotAvailable when the bytes cannot be the run's answers.

    Every answered call is either the document (`answer_len` DATA bytes) or an error (Trailers-Only, no
    DATA). A run of `-D` seconds also ends with calls in flight (h2load's `started` − `done`), whose
    DATA may have arrived in whole or in part (a stream cut at the run's end: never counted, as h2load
    does not count them done). So the surplus over `done × answer_len` must fit those calls, and a
    deficit means answers without the document. Bytes alone cannot tell an error from a call cut
    just after its DATA — each cut call's bytes could stand for one error's missing ones — so as many
    answers as the cut calls could hide are left out of the count (at most the streams in flight: 0 to
    16 of a run's thousands)."""
    done, data = s["done"], s["bytes_data"]
    cut = max(0, s.get("started", done) - done)
    if done == 0 or s["status_2xx"] != done:
        raise NotAvailable(f"{what}: {done} answers, {s['status_2xx']} with HTTP 200 ({s})")
    if data < done * answer_len:
        raise NotAvailable(f"{what}: {data} DATA bytes for {done} answers of {answer_len}: at least "
                           f"{-(-(done * answer_len - data) // answer_len)} answers carried no document")
    surplus = data - done * answer_len
    if surplus > cut * answer_len:
        raise NotAvailable(f"{what}: {data} DATA bytes, {surplus} more than {done} answers of {answer_len} hold, "
                           f"and more than the {cut} calls in flight at the end could have received")
    s["cut_bytes"], s["cut_calls"] = surplus, cut
    # Errors the cut calls' bytes could stand for: each error lacks answer_len bytes, each cut call
    # has at most answer_len.
    return done - (cut * answer_len - surplus) // answer_len


def get_frame(ctx, doc):
    """The 5-byte-framed GetDocumentRequest of `doc` (users/…) as h2load sends it (grpcload -mode frame)."""
    return subprocess.run([build_grpcload(ctx), "-mode", "frame", "-doc", doc], capture_output=True,
                          check=True, timeout=30).stdout


def get_loads(ctx, system, port, user, warm):
    """{grpc.get.s1, grpc.get.s16: `pairs.Load` or the reason it cannot run}: GetDocument through
    h2load at 1 and 16 streams on one connection, each run counted only if every answer was the whole
    document (the module's docstring); `warm` seconds of h2load first (its own run: h2load's
    --warm-up-time would break the byte check)."""
    keys = ["grpc.get.s1", "grpc.get.s16"]
    doc = f"users/{user.uid}/files/f0"
    what = f"{system} gRPC GetDocument"
    try:
        frame = os.path.join(ctx.run_dir, f"getdoc-{system}.bin")
        with open(frame, "wb") as f:
            f.write(get_frame(ctx, doc))
        require_ok(grpcload(ctx, port, user.id_token, "get", "-doc", doc, "-duration", 0.2), what)
        one = H2Load(ctx).run(port, frame, user.id_token, 1, 0, count=1)
        answer_len = one["bytes_data"]
        if one.get("done") != 1 or answer_len <= 5:
            raise NotAvailable(f"{what} through h2load answered no document ({one})")
    except NotAvailable as e:
        return dict.fromkeys(keys, str(e))
    out = {}
    for streams in (1, 16):
        def once(streams=streams):
            s = H2Load(ctx).run(port, frame, user.id_token, streams, ctx.s.duration)
            s["rps"] = counted_answers(s, answer_len, what) / s["seconds"]
            return s["rps"], {"h2load": s, "answer_bytes": answer_len}

        def warmup(streams=streams):
            H2Load(ctx).run(port, frame, user.id_token, streams, warm)
        out[f"grpc.get.s{streams}"] = Load(once, warmup if warm else None)
    return out


def grpcload_load(ctx, system, port, user, mode, what, warm, *args, streams=16):
    """A `pairs.Load` of one grpcload mode at `streams` streams: each round one run of `ctx.s.duration`
    seconds, n/a when any call failed; `warm` seconds of the same load (a run of its own) first."""
    def run(duration, label):
        s = grpcload(ctx, port, user.id_token, mode, "-uid", user.uid, "-streams", streams, "-duration", duration,
                     "-tag", f"{system}-{mode}-{label}-{int(time.time() * 1000)}", *args)
        if s.get("setup_error"):
            raise NotAvailable(f"{system} {what}: {s['setup_error'][:200]}")
        return require_ok(s, f"{system} {what}")

    def once():
        s = run(ctx.s.duration, "r")
        return s["rps"], {"grpcload": s}
    return Load(once, (lambda: run(warm, "w")) if warm else None)


def grpc_loads(ctx, system, port, user, warm):
    """{key: `pairs.Load` or reason} for the gRPC rows with a peer: GetDocument through h2load and through
    grpcload's light client (h2unary.go: each answer checked to be the document, the token sent
    HPACK-indexed after the first call as grpc-go sends it; h2load re-sends it Huffman-coded every call,
    grpcs1c) at 1 and 16 streams; Commit and Write-stream creates at 16 streams through the light
    client — grpc-go's client spent as much CPU per call as the server on the same two cores (grpcwrite)."""
    keys = ["grpc.get.s1", "grpc.get.s16", "grpc.get.light.s1", "grpc.get.light.s16", "grpc.commit.s16", "rt.write.s16"]
    if user is None:
        return dict.fromkeys(keys, "no user token (Auth not available)")
    try:
        build_grpcload(ctx)
    except NotAvailable as e:
        return dict.fromkeys(keys, str(e))
    out = get_loads(ctx, system, port, user, warm)
    doc = f"users/{user.uid}/files/f0"
    for streams in (1, 16):
        out[f"grpc.get.light.s{streams}"] = grpcload_load(ctx, system, port, user, "get", "gRPC GetDocument (grpcload h2)",
                                                          warm, "-doc", doc, "-per-conn", 16, "-client", "h2",
                                                          streams=streams)
    out["grpc.commit.s16"] = grpcload_load(ctx, system, port, user, "commit", "gRPC Commit", warm, "-per-conn", 16,
                                           "-client", "h2")
    out["rt.write.s16"] = grpcload_load(ctx, system, port, user, "write", "Write stream", warm, "-per-conn", 16,
                                        "-client", "h2")
    return out


def grpcgo_loads(ctx, port, user, warm):
    """Hearth's gRPC Commit and Write stream through grpc-go as well, rows of their own with no peer, so
    the change of harness to the light client hides nothing (docs/benchmarks.md, grpcwrite)."""
    keys = {"grpc.commit.grpcgo.s16": ("commit", "gRPC Commit (grpc-go)"),
            "rt.write.grpcgo.s16": ("write", "Write stream (grpc-go)")}
    if user is None:
        return {k: "no user token (Auth not available)" for k in keys}
    return {k: grpcload_load(ctx, "hearth", port, user, mode, what, warm, "-per-conn", 16, "-client", "grpc")
            for k, (mode, what) in keys.items()}


TXN_CLIENTS = {"fs.txn.c16": "grpc", "fs.txn.light.c16": "raw"}


def txn_load(ctx, system, port, user, warm, client="grpc"):
    """REST read-write transactions per second at 16 concurrent clients (beginTransaction, batchGet in the
    transaction, commit of an allowed update), each client on its own document, through `client`:
    grpc — Go's net/http (fs.txn.c16), raw — grpcload's light HTTP/1.1 client (txnraw.go,
    fs.txn.light.c16). Each round's details carry the client's CPU per transaction (`client_us_per_txn`,
    from the harness's children: grpcload's set-up of 16 creates included), the evidence for the light
    client: net/http's was about as much as Hearth's own (docs/benchmarks.md, txnlight)."""
    if user is None:
        return "no user token (Auth not available)"
    what = "REST transaction" + (" (grpcload raw)" if client == "raw" else "")
    load = with_loadgen_cpu(grpcload_load(ctx, system, port, user, "txn", what, warm, "-client", client))

    def once():
        value, details = load.once()
        ok = details["grpcload"]["ok"]
        return value, dict(details, client_us_per_txn=details["loadgen_cpu"] / ok * 1e6)
    return Load(once, load.warmup)


def listen_load(ctx, system, port, sign_up, n, client="h2", p99=False):
    """A `pairs.Load` of one rt.latency point (listen_latency): the value is the p50 in ms (with `p99`,
    the p99), both in the details (`rt.latency99.N` is derived from the same round)."""
    def once():
        s = listen_latency(ctx, system, port, sign_up, n, client)
        p50_ms, p99_ms = s["p50_us"] / 1e3, s["p99_us"] / 1e3
        return (p99_ms if p99 else p50_ms), {"p50_ms": p50_ms, "p99_ms": p99_ms, "grpcload": s}
    return Load(once)


def idle_listeners(ctx, system, port, pid, sign_up, timeout=240):
    """The RSS and threads that `ctx.s.idle_listeners` idle Listen streams add to the process `pid`
    (rt.idle.rss, rt.idle.threads); `timeout` seconds for all of them to become current."""
    n = ctx.s.idle_listeners
    try:
        build_grpcload(ctx)
        user = sign_up(f"bench-idle-{system}@example.com")
        # The dispatch pool's workers come and go (each retires 5 s after its last work item), so one
        # sample either side counted a worker woken by the rows before, or by a timer, as held by the
        # listeners (+1 in two runs of 5–6 December, −1 in a probe): the threads before are counted once
        # the pool has retired its idle workers, and after as the fewest of four samples a second apart.
        time.sleep(6)
        before = proc_status(pid)
        before_names = collections.Counter(thread_names(pid).values())
        argv = [build_grpcload(ctx), "-addr", f"127.0.0.1:{port}", "-token", user.id_token, "-mode", "idle",
                "-uid", user.uid, "-listeners", str(n), "-per-conn", "100", "-timeout", str(timeout)]
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
            for _ in range(3):
                time.sleep(1)
                sample = proc_status(pid)
                if sample.get("Threads", 0) < after.get("Threads", 0):
                    after["Threads"] = sample["Threads"]
            after_names = collections.Counter(thread_names(pid).values())
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
                        before=before.get("Threads"), after=after.get("Threads"),
                        names_added=dict(after_names - before_names),
                        names_gone=dict(before_names - after_names))
        ctx.log(f"  {system:10s} {n:,} idle listeners: +{added:.1f} MiB RSS, threads {before.get('Threads')} → "
                f"{after.get('Threads')}")
    except NotAvailable as e:
        ctx.results.na("rt.idle.rss", system, str(e))
        ctx.results.na("rt.idle.threads", system, str(e))


LISTEN_RUNS = itertools.count(1)


def listen_latency(ctx, system, port, sign_up, n, client):
    """One rt.latency point: n listeners on a fresh user's collection, the commits of context.py timed
    to every listener's snapshot through `client` (h2: grpcload's light listeners, the rows' client;
    grpc: grpc-go's). NotAvailable unless every commit succeeded and every snapshot arrived."""
    run = next(LISTEN_RUNS)  # a round of its own: a fresh user (an email signs up once) and document ids
    user = sign_up(f"bench-rt{n}-{client}-{system}-{run}@example.com")
    commits = ctx.s.listener_commits(n) if system == "hearth" else ctx.s.peer_listener_commits(n)
    # The official emulator answers each commit with RESET and the whole result to every listener:
    # ~6 s per commit at 100 listeners (listen1000's probe), past grpcload's default 10 s wait
    # once the result grows, so it gets fewer commits (context.py) and a longer wait each.
    peer = [] if system == "hearth" else ["-commit-wait", 300]
    s = grpcload(ctx, port, user.id_token, "listen", "-uid", user.uid, "-listeners", n, "-commits", commits,
                 "-tag", f"{system}-l{n}-{client}-{run}", "-per-conn", 100, "-client", client, *peer,
                 timeout=600 if system == "hearth" else 900)
    if s.get("commit_failed") or not s.get("commits_ok"):
        raise NotAvailable(f"{system} listeners: commits failed ({s.get('commit_failed')}: "
                           f"{s.get('failed_example', '')[:200]})")
    if s["samples"] != s["expected_samples"]:
        raise NotAvailable(f"{system} listeners: {s['samples']} of {s['expected_samples']} snapshots arrived")
    ctx.log(f"  {system:10s} {n:>5} listeners ({client}): commit → snapshot p50 {s['p50_us'] / 1e3:.2f} ms, "
            f"p99 {s['p99_us'] / 1e3:.2f} ms ({s['samples']} snapshots)")
    return s
