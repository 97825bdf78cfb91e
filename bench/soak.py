#!/usr/bin/env python3
"""`make soak`: SOAK_MINUTES (default 30) of mixed traffic at a fixed rate over every service of
one hearth on a data directory — Auth sign-ups and sign-ins, Firestore commits, queries and a
listener, S3 PUT/GET and multipart, the uploads flow — sampling the process's RSS, open file
descriptors, threads, the WAL's size and each window's p99 latency every SOAK_SAMPLE_SECONDS
(default 60).

It passes only when, after the warm-up (the first quarter of the samples, at least one), each
figure stays flat — RSS grows by at most max(16 MiB, 15 %) and, over the last half of the samples,
does not keep rising (its Theil-Sen trend times that half's length stays under max(2 MiB, 2 %)),
descriptors by at most 8, threads by at most 4, the WAL stays under 128 MiB, no window's p99
exceeds max(3 × the warm-up windows' median, +50 ms) scaled up by the machine's load when it is
busier than during the warm-up, hearth's CPU time per request does not double — and no request failed
unexpectedly. Each window records the machine's 1-minute load average beside its p99, so a slow
window can be told apart from a busy machine, and the heap's live and held bytes and SQLite's from
the hub's /emulator/v1/stats. SOAK_HEARTH_ARGS adds `hearth start` options. Key spaces are bounded (writes overwrite), so the data set
stops growing and a rising figure means a leak, not more data. Prints a Markdown table, writes
.build/soak/latest.json, and refreshes the soak section of docs/reliability.md (between its
`<!-- soak:begin -->` and `<!-- soak:end -->` markers).
"""
import datetime
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import boto3
import requests
from botocore.config import Config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINUTES = float(os.environ.get("SOAK_MINUTES", "30"))
SAMPLE = float(os.environ.get("SOAK_SAMPLE_SECONDS", "60"))
OWNER = {"Authorization": "Bearer owner"}
# More `hearth start` options, for experiments (`SOAK_HEARTH_ARGS="--request-log 1000"`).
EXTRA_ARGS = os.environ.get("SOAK_HEARTH_ARGS", "").split()
KEYS = 200  # bounded key spaces: overwrite, never grow without end


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = []
        self.count = 0
        self.errors = []

    def record(self, seconds):
        with self.lock:
            self.latencies.append(seconds)
            self.count += 1

    def fail(self, what):
        with self.lock:
            self.errors.append(what)

    def window(self):
        with self.lock:
            lat, self.latencies = self.latencies, []
            n, self.count = self.count, 0
        return n, lat


def p99(values):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def proc_figures(pid, data_dir):
    status = open(f"/proc/{pid}/status").read()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    kib = lambda name: int(fields[name].split()[0])  # noqa: E731
    threads = int(fields["Threads"])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    wals = [os.path.join(data_dir, f"{name}.sqlite-wal") for name in ("hearth", "firestore")]
    # RssAnon is the heap (malloc arenas, SQLite's page caches, Swift objects); the rest is the
    # binary's and libraries' pages and the WAL index (shm) mapping, which a leak does not grow.
    return {"rssMiB": round(kib("VmRSS") / 1024, 1), "anonMiB": round(kib("RssAnon") / 1024, 1), "fds": fds, "threads": threads,
            "walMiB": round(sum(os.path.getsize(w) for w in wals if os.path.exists(w)) / 2**20, 2)}


def memory_figures(hub):
    """Where the heap is, from the hub's /emulator/v1/stats: the allocator's live bytes, what it holds
    from the system (live plus freed-but-kept), and SQLite's share (page caches, statements)."""
    try:
        m = requests.get(f"{hub}/emulator/v1/stats", timeout=10).json().get("memory", {})
    except (requests.RequestException, ValueError):
        return {}
    names = {"heapLiveMiB": "heapInUseBytes", "heapHeldMiB": "heapHeldBytes", "sqliteMiB": "sqliteBytes"}
    out = {ours: round(m[theirs] / 2**20, 1) for ours, theirs in names.items() if theirs in m}
    # SQLite's page caches by connection: each file's writer (valid from one commit to the next, so it
    # fills up to its cache_size as the file grows) and its idle pooled readers (emptied by SQLite
    # whenever the file changed since their last read), and how many readers each file has opened.
    caches = m.get("sqliteCaches") or {}
    if caches:
        out["writerCacheMiB"] = round(sum(c["writerCacheBytes"] for c in caches.values()) / 2**20, 1)
        out["readerCacheMiB"] = round(sum(c["idleReaderCacheBytes"] for c in caches.values()) / 2**20, 1)
        out["readers"] = sum(c["readers"] for c in caches.values())
    return out


def cpu_seconds(pid):
    """The process's user + system CPU time so far (fields 14 and 15 of /proc/PID/stat)."""
    stat = open(f"/proc/{pid}/stat").read()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_hearth(binary, tmp):
    data_dir = os.path.join(tmp, "data")
    ready = os.path.join(tmp, "ready.json")
    proc = subprocess.Popen([binary, "start", "--data-dir", data_dir, "--ready-file", ready, "--quiet", "--exit-with-parent",
                             "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0",
                             "--storage-port", "0", "--ui-port", "0",
                             "--rules", os.path.join(ROOT, "rules", "firestore.rules"), *EXTRA_ARGS],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "hearth.log"), "wb"))
    deadline = time.time() + 60
    while not os.path.exists(ready):
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit(f"hearth did not start: {open(os.path.join(tmp, 'hearth.log')).read()}")
        time.sleep(0.05)
    print(f"hearth pid {proc.pid}, data {data_dir}", flush=True)
    return proc, json.load(open(ready)), data_dir


def paced(rate, stop, body):
    """Calls body() `rate` times a second on a fixed schedule (no catching up after a stall)."""
    interval = 1.0 / rate
    next_at = time.monotonic()
    while not stop.is_set():
        body()
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            stop.wait(delay)
        else:
            next_at = time.monotonic()


def timed(stats, what, call, ok=lambda r: r.status_code == 200):
    t = time.monotonic()
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - any failure is an unexpected one here
        stats.fail(f"{what}: {type(e).__name__}: {e}")
        return None
    stats.record(time.monotonic() - t)
    if r is not None and hasattr(r, "status_code") and not ok(r):
        stats.fail(f"{what}: HTTP {r.status_code} {r.text[:200]}")
    return r


def main():
    binary = os.environ.get("HEARTH_BIN") or os.path.join(ROOT, ".build", "release", "hearth")
    tmp = tempfile.mkdtemp(prefix="hearth-soak-")
    proc, info, data_dir = start_hearth(binary, tmp)
    svc = info["services"]
    project = info["project"]
    stats = Stats()
    stop = threading.Event()
    auth = f"{svc['auth']['url']}/identitytoolkit.googleapis.com/v1"
    docs = f"{svc['firestore']['url']}/v1/projects/{project}/databases/(default)/documents"
    s3 = boto3.client("s3", endpoint_url=svc["s3"]["url"], aws_access_key_id="test", aws_secret_access_key="test",
                      region_name="us-east-1", config=Config(retries={"max_attempts": 0}, s3={"addressing_style": "path"}))
    s3.create_bucket(Bucket="soak")
    listener_events = [0]

    def auth_load():
        s = requests.Session()

        def once():
            i = random.randrange(KEYS)
            email = f"soak{i}@example.com"
            r = timed(stats, "signIn", lambda: s.post(f"{auth}/accounts:signInWithPassword?key=k",
                                                        json={"email": email, "password": "soak-password", "returnSecureToken": True}),
                      ok=lambda r: r.status_code in (200, 400))
            if r is not None and r.status_code == 400:
                timed(stats, "signUp", lambda: s.post(f"{auth}/accounts:signUp?key=k", json={"email": email, "password": "soak-password"}))
        paced(10, stop, once)

    def firestore_writes():
        s = requests.Session()
        paced(20, stop, lambda: timed(stats, "commit", lambda: s.patch(
            f"{docs}/soak/d{random.randrange(KEYS)}", headers=OWNER,
            json={"fields": {"n": {"integerValue": str(random.randrange(1000))}, "pad": {"stringValue": "x" * 512}}})))

    def firestore_queries():
        s = requests.Session()
        q = {"structuredQuery": {"from": [{"collectionId": "soak"}], "where": {"fieldFilter": {
            "field": {"fieldPath": "n"}, "op": "GREATER_THAN", "value": {"integerValue": "500"}}}, "limit": 20}}
        paced(5, stop, lambda: timed(stats, "runQuery", lambda: s.post(f"{docs}:runQuery", headers=OWNER, json=q)))

    def listener():
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import firestore
        os.environ["FIRESTORE_EMULATOR_HOST"] = svc["firestore"]["url"].split("://", 1)[1]
        client = firestore.Client(project=project, credentials=AnonymousCredentials())
        watch = client.collection("soak").where(filter=firestore.FieldFilter("n", "<", 100)).on_snapshot(
            lambda docs, changes, read_time: listener_events.__setitem__(0, listener_events[0] + 1))
        stop.wait()
        watch.unsubscribe()
        client.close()

    def s3_load():
        body = os.urandom(64 * 1024)

        def once():
            key = f"o{random.randrange(KEYS)}"
            if random.random() < 0.5:
                timed(stats, "PutObject", lambda: s3.put_object(Bucket="soak", Key=key, Body=body))
                known.add(key)
            elif key in known:
                timed(stats, "GetObject", lambda: s3.get_object(Bucket="soak", Key=key)["Body"].read())
        paced(20, stop, once)

    known = set()

    def multipart():
        part = os.urandom(5 * 1024 * 1024)

        def once():
            key = f"mp{random.randrange(8)}"

            def run():
                up = s3.create_multipart_upload(Bucket="soak", Key=key)["UploadId"]
                e1 = s3.upload_part(Bucket="soak", Key=key, UploadId=up, PartNumber=1, Body=part)["ETag"]
                e2 = s3.upload_part(Bucket="soak", Key=key, UploadId=up, PartNumber=2, Body=b"tail")["ETag"]
                return s3.complete_multipart_upload(Bucket="soak", Key=key, UploadId=up, MultipartUpload={
                    "Parts": [{"ETag": e1, "PartNumber": 1}, {"ETag": e2, "PartNumber": 2}]})
            timed(stats, "multipart", run)
        paced(0.5, stop, once)

    def uploads_flow():
        s = requests.Session()
        r = s.post(f"{auth}/accounts:signUp?key=k", json={"email": f"uploader-{uuid.uuid4().hex[:6]}@example.com",
                                                             "password": "soak-password", "returnSecureToken": True})
        token = {"Authorization": f"Bearer {r.json()['idToken']}"}
        api = svc["api"]["url"]

        def once():
            def run():
                p = s.post(f"{api}/v1/uploads/presign", headers=token, json={"contentType": "image/jpeg", "fileExt": "jpg"})
                if p.status_code != 200:
                    return p
                up = p.json()
                put = s.put(up["putUrl"], data=b"\xff" * 1024, headers=up["headers"])
                if put.status_code != 200:
                    return put
                return s.post(f"{api}/v1/files/f{random.randrange(KEYS)}/complete", headers=token, json={"key": up["key"], "originalName": "x.jpg"})
            timed(stats, "uploads", run)
        paced(2, stop, once)

    workers = [auth_load, firestore_writes, firestore_queries, listener, s3_load, multipart, uploads_flow]
    threads = [threading.Thread(target=w, daemon=True) for w in workers]
    for t in threads:
        t.start()
    samples = []
    started = time.monotonic()
    cpu_before = cpu_seconds(proc.pid)
    snapshots_before = 0
    try:
        while time.monotonic() - started < MINUTES * 60:
            time.sleep(min(SAMPLE, max(0.1, MINUTES * 60 - (time.monotonic() - started))))
            n, lat = stats.window()
            if proc.poll() is not None:
                break  # died (a zombie has no VmRSS): the verdict reports its exit status
            fig = proc_figures(proc.pid, data_dir)
            fig.update(memory_figures(svc["hub"]["url"]))
            cpu_now = cpu_seconds(proc.pid)
            # The machine's load (1-minute average) and hearth's own CPU time per request: the first
            # says how much of a window's latency is other work's, the second is hearth's cost, which
            # the machine's load hardly changes.
            fig.update({"minute": round((time.monotonic() - started) / 60, 1), "requests": n,
                        "p99ms": round(p99(lat) * 1000, 1), "errors": len(stats.errors),
                        "load": round(os.getloadavg()[0], 1), "cpuMsPerRequest": round((cpu_now - cpu_before) * 1000 / max(1, n), 2),
                        "snapshots": listener_events[0] - snapshots_before})
            cpu_before, snapshots_before = cpu_now, listener_events[0]
            samples.append(fig)
            print(json.dumps(fig), flush=True)
            if proc.poll() is not None:
                break
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()

    verdict = judge(samples, stats.errors, listener_events[0], proc.returncode)
    report(samples, verdict, stats.errors)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if verdict["pass"] else 1)


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0.0


def slope(points):
    """Theil-Sen slope of (x, y) points: the median of the pairwise slopes, so one sample caught
    mid-upload (a 5 MiB part in flight) does not tilt it the way it tilts a least-squares fit."""
    pairs = sorted((y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for (x2, y2) in points[i + 1:] if x2 > x1)
    return pairs[len(pairs) // 2] if pairs else 0.0


def judge(samples, errors, listener_events, exit_code):
    reasons = []
    if len(samples) < 2:
        reasons.append("fewer than two samples")
        return {"pass": False, "reasons": reasons}
    warm = max(1, len(samples) // 4)
    base, rest = samples[warm], samples[warm:]
    rss_limit = base["rssMiB"] + max(16, base["rssMiB"] * 0.15)
    if max(s["rssMiB"] for s in rest) > rss_limit:
        reasons.append(f"RSS grew past {rss_limit:.0f} MiB")
    # A leak slower than the allowance above still shows as a trend: over the last half of the
    # samples, RSS must not keep rising by more than max(2 MiB, 2 %) (the fitted slope times the
    # half's length). A bounded cache still filling at the end fails it too: bounds must be reached
    # within the first half, or the run made longer.
    tail = samples[len(samples) // 2:]
    trend = slope([(s["minute"], s["rssMiB"]) for s in tail]) if len(tail) >= 3 else 0.0
    trend_rise = trend * (tail[-1]["minute"] - tail[0]["minute"])
    if len(tail) >= 3 and trend_rise > max(2, base["rssMiB"] * 0.02):
        reasons.append(f"RSS still rising over the last half ({trend:+.2f} MiB/min)")
    # Not judged, reported beside the RSS trend: which part rises — the allocator's live bytes
    # (objects held: a cache filling, or a leak), SQLite's (page caches), or neither (freed memory
    # glibc keeps). A heaptrack run names the call sites; these say where to look.
    parts = {f"{name}TrendMiBPerMinute": round(slope([(s["minute"], s[name + "MiB"]) for s in tail]), 3)
             for name in ("heapLive", "sqlite") if len(tail) >= 3 and all(name + "MiB" in s for s in tail)}
    if max(s["fds"] for s in rest) > base["fds"] + 8:
        reasons.append("open descriptors grew")
    if max(s["threads"] for s in rest) > base["threads"] + 4:
        reasons.append("threads grew")
    if max(s["walMiB"] for s in samples) > 128:
        reasons.append("the WAL grew past 128 MiB")
    # p99 may grow to 3 × the warm-up windows' median (or +50 ms); on a machine busier than during
    # the warm-up (1-minute load average above its median there and above the CPU count) the
    # allowance grows in proportion, since run-queue waits, not hearth, then make the latency. On a
    # quiet machine the rule is the plain one. Hearth's own CPU time per request is the
    # load-independent check of the same thing: it must not double after the warm-up.
    cpus = os.cpu_count() or 1
    warmup = samples[:warm]
    ref_p99, ref_load = median([s["p99ms"] for s in warmup]), median([s["load"] for s in warmup])
    p99_base = max(3 * ref_p99, ref_p99 + 50)
    for s in rest:
        limit = p99_base * max(1.0, s["load"] / max(ref_load, cpus))
        if s["p99ms"] > limit:
            reasons.append(f"p99 {s['p99ms']:.0f} ms at minute {s['minute']} exceeded {limit:.0f} ms (load {s['load']})")
            break
    cpu_base, cpu_tail = median([s["cpuMsPerRequest"] for s in warmup]), median([s["cpuMsPerRequest"] for s in tail])
    if cpu_tail > 2 * cpu_base:
        reasons.append(f"CPU per request doubled ({cpu_base} → {cpu_tail} ms)")
    if errors:
        reasons.append(f"{len(errors)} requests failed")
    if listener_events == 0:
        reasons.append("the listener saw no snapshot")
    else:
        # Its query matches about two writes a second: a window after the first without a snapshot
        # means the listener stopped (its stream died quietly), not that nothing changed.
        silent = [s["minute"] for s in samples[1:] if s.get("snapshots", 1) == 0]
        if silent:
            reasons.append(f"the listener received no snapshot in the window ending at minute {silent[0]}")
    if exit_code != 0:
        reasons.append(f"hearth exited with {exit_code}")
    return {"pass": not reasons, "reasons": reasons, "warmupSamples": warm, "listenerSnapshots": listener_events,
            "rssTrendMiBPerMinute": round(trend, 3), **parts}


def report(samples, verdict, errors):
    lines = ["| minute | requests | p99 ms | load | CPU ms/req | RSS MiB | anon MiB | heap live / held MiB | SQLite MiB "
             "| writer / idle reader caches MiB (readers) | fds | threads | WAL MiB | snapshots | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in samples:
        caches = (f"{s['writerCacheMiB']} / {s['readerCacheMiB']} ({s['readers']})" if "writerCacheMiB" in s else "–")
        lines.append(f"| {s['minute']} | {s['requests']} | {s['p99ms']} | {s['load']} | {s['cpuMsPerRequest']} | {s['rssMiB']} | {s['anonMiB']} "
                     f"| {s.get('heapLiveMiB', '–')} / {s.get('heapHeldMiB', '–')} | {s.get('sqliteMiB', '–')} | {caches} "
                     f"| {s['fds']} | {s['threads']} | {s['walMiB']} | {s.get('snapshots', '–')} | {s['errors']} |")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = (f"Last run: {when}, {MINUTES:g} minutes, sampled every {SAMPLE:g} s, on `{os.uname().nodename}` "
            f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}). Verdict: **{'pass' if verdict['pass'] else 'FAIL'}**"
            + ("" if verdict["pass"] else f" ({'; '.join(verdict['reasons'])})")
            + f". RSS trend over the last half: {verdict.get('rssTrendMiBPerMinute', 0):+.3f} MiB/min"
            + "".join(f", {label} {verdict[key]:+.3f}" for key, label in (("heapLiveTrendMiBPerMinute", "heap live"), ("sqliteTrendMiBPerMinute", "SQLite"))
                      if key in verdict) + ".")
    table = "\n".join([head, "", *lines])
    print(table)
    if errors:
        print("first errors:\n  " + "\n  ".join(errors[:10]))
    out = os.path.join(ROOT, ".build", "soak")
    os.makedirs(out, exist_ok=True)
    json.dump({"samples": samples, "verdict": verdict, "errors": errors[:100]}, open(os.path.join(out, "latest.json"), "w"), indent=1)
    doc = os.path.join(ROOT, "docs", "reliability.md")
    if os.path.exists(doc):
        text = open(doc).read()
        begin, end = "<!-- soak:begin -->", "<!-- soak:end -->"
        if begin in text and end in text:
            text = text[:text.index(begin) + len(begin)] + "\n" + table + "\n" + text[text.index(end):]
            open(doc, "w").write(text)


if __name__ == "__main__":
    main()
