#!/usr/bin/env python3
"""`make bench`: Hearth side by side with its peer (moto_server) and the machine's ceilings (nginx
static files, a bare libmicrohttpd handler, sha256sum, raw SQLite commits), all on 127.0.0.1, every
load bounded in time. Prints one Markdown table and writes .build/bench/latest.json (and latest.md).

Hearth scenarios are fail-soft: an endpoint that is missing or failing makes its row "n/a: <reason>"
and the run goes on (exit 0). A broken harness — a ceiling or peer that does not start, wrk failing —
exits 1. `--quick` (make bench QUICK=1) runs every scenario briefly with small sizes; its numbers only
prove the harness works, so targets are not judged there.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ inside the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, fsrows, grpcreads, h2floor, instructions, listing, machine, pairs, rules, s3, startup, storage, ui  # noqa: E402
from benchlib.context import Context, MiB  # noqa: E402
from benchlib.httpc import HarnessError, NotAvailable  # noqa: E402
from benchlib.procs import BareMHD, Hearth, Moto, Nginx, compile_c, proc_status  # noqa: E402
from benchlib.report import Row, jsonable, loadavg, machine_info, render_table  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_hearth(ctx, name):
    """A Hearth (not started yet) on an empty data dir `name` under the run directory, its log beside it,
    with the run's rules."""
    data_dir = os.path.join(ctx.run_dir, name)
    shutil.rmtree(data_dir, ignore_errors=True)
    return Hearth(ctx.registry, ctx.hearth_bin, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth,
                  log_name=name)


def na_all(ctx, keys, reason):
    for k in keys:
        ctx.results.na(k, "hearth", reason)


def phase_ceilings(ctx):
    """Starts nginx and the bare libmicrohttpd servers (measured later, beside Hearth and moto, point by
    point) and measures the raw SQLite commit ceiling."""
    ctx.log("ceilings: nginx, bare libmicrohttpd, raw SQLite commits")
    bin_dir = os.path.join(ctx.build, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    mhd_bin = compile_c("mhd_bare.c", os.path.join(bin_dir, "mhd_bare"), ["-lmicrohttpd", "-lpthread"])
    sqlite_bin = compile_c("sqlite_commits.c", os.path.join(bin_dir, "sqlite_commits"), ["-lsqlite3"])
    nginx = Nginx(ctx.registry, ctx.run_dir, ctx.data).start()
    mhd = BareMHD(ctx.registry, mhd_bin, ctx.run_dir, ctx.s.mhd_threads, ctx.obj4k, name="mhd-4k").start()
    hello = BareMHD(ctx.registry, mhd_bin, ctx.run_dir, ctx.s.mhd_threads, None, name="mhd-hello").start()
    db = os.path.join(ctx.run_dir, "sqlite-ceiling.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    r = subprocess.run([sqlite_bin, db, str(ctx.s.sqlite_commits), "256"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise HarnessError(f"sqlite_commits failed: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    for conns in (1, 16):
        ctx.results.put(f"fs.commit.c{conns}", "sqlite", out["per_second"], **out)
    ctx.log(f"  raw SQLite single-row commits: {out['per_second']:,.0f}/s")
    ctx.server_pids.update(nginx=nginx.proc.pid, mhd=mhd.proc.pid, mhd_hello=hello.proc.pid)
    ctx.nginx_get = (nginx.port, [{"method": "GET", "path": "/obj4k", "headers": {"Host": f"127.0.0.1:{nginx.port}"}}])
    return nginx, s3.ceiling_requests(ctx, nginx, mhd, hello), [mhd, hello]


def phase_moto_start(ctx):
    ctx.log("peer: moto_server")
    moto = Moto(ctx.registry, ctx.moto_bin, ctx.run_dir).start()
    ctx.server_pids["moto"] = moto.pid
    time.sleep(1)
    st = proc_status(moto.pid)
    ctx.results.put("footprint.idle", "moto", st.get("VmRSS", 0) / 1024, anon_mib=st.get("RssAnon", 0) / 1024,
                    file_mib=st.get("RssFile", 0) / 1024)
    try:
        reqs = s3.s3_small_requests(ctx, moto.port, "moto")
    except NotAvailable as e:
        raise HarnessError(f"moto set-up failed: {e}")
    return moto, ("moto", moto.port, reqs, "peer")


def phase_moto_startups(ctx, moto):
    moto.stop()
    ctx.log("moto start-up")
    med, times = startup.moto_startups(ctx, moto)
    ctx.results.put("startup.empty", "moto", med * 1e3, runs_ms=[t * 1e3 for t in times])
    ctx.results.put("startup.data", "moto", med * 1e3, runs_ms=[t * 1e3 for t in times])
    ctx.log(f"  moto start-up median {med * 1e3:.0f} ms")


def phase_hearth_startup_empty(ctx):
    ctx.log("hearth start-up, empty data dir")
    try:
        med, times = startup.hearth_startups(ctx, None, rules=ctx.rules_for_hearth)
        ctx.results.put("startup.empty", "hearth", med * 1e3, runs_ms=[t * 1e3 for t in times])
        ctx.log(f"  median {med * 1e3:.1f} ms")
    except NotAvailable as e:
        ctx.results.na("startup.empty", "hearth", str(e))


def phase_hearth_main(ctx, s3_others, after_s3):
    """One long-lived instance on a data dir: idle RSS, S3 small (point by point beside `s3_others`, the
    ceilings and moto), Auth, Firestore, queries, seed flow. `after_s3` runs once the S3 small points
    are done (it stops what only they need). Leaves the data dir populated for start-up with data."""
    ctx.log("hearth: main instance")
    h = fresh_hearth(ctx, "hearth-main")
    data_dir = h.data_dir
    counts = {"docs": 0, "objects": 0}
    try:
        h.start()
    except NotAvailable as e:
        na_all(ctx, ["footprint.idle", "auth.signin", "auth.refresh", "seed.flow"] + fsrows.hearth_keys(ctx), str(e))
        s3.run_small(ctx, s3_others + [("hearth", 0, str(e), "hearth")])
        after_s3()
        return data_dir, counts
    ctx.wrk.profile_pid = h.pid
    ctx.server_pids["hearth"] = h.pid
    try:
        time.sleep(1)
        st = proc_status(h.pid)
        ctx.results.put("footprint.idle", "hearth", st.get("VmRSS", 0) / 1024, anon_mib=st.get("RssAnon", 0) / 1024,
                        file_mib=st.get("RssFile", 0) / 1024, threads=st.get("Threads"))
        ctx.log(f"  idle RSS {st.get('VmRSS', 0) / 1024:.1f} MiB (anonymous {st.get('RssAnon', 0) / 1024:.1f} MiB, "
                f"file-backed {st.get('RssFile', 0) / 1024:.1f} MiB, {st.get('Threads')} threads)")

        ctx.log("S3 small objects: ceilings, moto and hearth, point by point")
        try:
            hearth_s3 = ("hearth", h.port("s3"), s3.s3_small_requests(ctx, h.port("s3"), "hearth"), "hearth")
        except NotAvailable as e:
            hearth_s3 = ("hearth", 0, str(e), "hearth")
        s3.run_small(ctx, s3_others + [hearth_s3])
        ctx.log("hearth: Storage download URLs")
        if isinstance(hearth_s3[2], dict):
            storage.token_downloads(ctx, h, hearth_s3[2]["get_presigned"])
        else:
            ctx.results.na(f"storage.get_token.c{storage.CONNS}", "hearth", f"no S3 presigned GET to measure it beside: {hearth_s3[2]}")
        after_s3()

        ctx.log("hearth: Auth")
        user = None
        try:
            h.check_alive()
            user = firebase.auth(ctx, h)
        except NotAvailable as e:
            na_all(ctx, ["auth.signin", "auth.refresh"], str(e))

        counts["docs"] = phase_firestore(ctx, h, user)

        ctx.log("hearth: seed flow")
        try:
            h.check_alive()
            firebase.seed_flow(ctx, h, user)
        except NotAvailable as e:
            ctx.results.na("seed.flow", "hearth", str(e))

        ctx.log(f"hearth: storing {ctx.s.startup_objects:,} objects for start-up with data")
        try:
            h.check_alive()
            secs = s3.seed_objects(ctx, h.port("s3"), ctx.s.startup_objects)
            counts["objects"] = ctx.s.startup_objects
            ctx.log(f"  stored in {secs:.1f}s")
        except NotAvailable as e:
            ctx.results.details[("startup.data", "hearth")] = {"objects_error": str(e)}
    finally:
        ctx.wrk.profile_pid = None
        h.stop()
    return data_dir, counts


def phase_firestore(ctx, h, user, peer_rows_only=False):
    """Every Firestore row (with `peer_rows_only`, those with a peer), Hearth's and the official
    emulator's in interleaved rounds (fsrows.py); returns the documents stored in Hearth."""
    try:
        h.check_alive()
    except NotAvailable as e:
        na_all(ctx, fsrows.hearth_keys(ctx), str(e))
        return 0
    return fsrows.firestore(ctx, h, user, peer_rows_only)


def phase_hearth_startup_data(ctx, data_dir, counts):
    ctx.log(f"hearth start-up with {counts['docs']:,} documents + {counts['objects']:,} objects")
    if not counts["docs"] and not counts["objects"]:
        ctx.results.na("startup.data", "hearth", "no data could be stored (Firestore and S3 not available)")
        return
    try:
        med, times = startup.hearth_startups(ctx, data_dir, rules=ctx.rules_for_hearth)
        ctx.results.put("startup.data", "hearth", med * 1e3, runs_ms=[t * 1e3 for t in times], **counts)
        ctx.log(f"  median {med * 1e3:.1f} ms")
    except NotAvailable as e:
        ctx.results.na("startup.data", "hearth", str(e))


def phase_large(ctx, nginx):
    ctx.log("S3 large objects")
    h = fresh_hearth(ctx, "hearth-large")
    data_dir = h.data_dir
    try:
        try:
            h.start()
        except NotAvailable:
            pass  # large_objects reports every Hearth row n/a with the reason
        s3.large_objects(ctx, h, nginx)
        ctx.log("Storage large upload")
        storage.large_upload(ctx, h)
    finally:
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def phase_clear(ctx):
    ctx.log(f"Firestore clear of {ctx.s.clear_docs:,} documents")
    h = fresh_hearth(ctx, "hearth-clear")
    data_dir = h.data_dir
    try:
        h.start()
        times = firebase.clear(ctx, h)
        ctx.results.put("fs.clear", "hearth", statistics.median(times) * 1e3, runs_ms=[t * 1e3 for t in times])
        ctx.log(f"  median {statistics.median(times) * 1e3:.1f} ms")
    except NotAvailable as e:
        ctx.results.na("fs.clear", "hearth", str(e))
    finally:
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def idle_note(ctx):
    d = ctx.results.details.get(("footprint.idle", "hearth"), {})
    if "anon_mib" not in d:
        return None
    return f"Hearth: {d['anon_mib']:.1f} MiB anonymous + {d['file_mib']:.1f} MiB file-backed (shared libraries)"


def rows(ctx, counts):
    s = ctx.s
    n = s.startups
    q = s.query_sizes
    rows = [
        Row("startup.empty", f"Start-up to first 200, empty data dir (median of {n})", "ms",
            peers=[("moto", "moto"), ("official Firestore emulator (once)", "emulator")],
            target=("max", None, 100, "< 100 ms"), higher_is_better=False),
        Row("startup.data", f"Start-up with {counts['docs']:,} docs + {counts['objects']:,} objects (median of {n})",
            "ms", peers=[("moto (empty)", "moto")], target=("max", None, 300, "< 300 ms"), higher_is_better=False),
        Row("footprint.idle", "RSS idle after start", "MiB",
            peers=[("moto", "moto"), ("official Firestore emulator", "emulator")],
            target=("max", None, 30, "< 30 MiB"), higher_is_better=False, note=idle_note(ctx)),
        Row("footprint.docs", f"RSS after loading {counts['docs']:,} documents", "MiB", higher_is_better=False),
    ]
    for size in s.large_sizes:
        label = f"{size // MiB}m"
        rows.append(Row(f"footprint.peak_put.{label}", f"Peak RSS during a {size // MiB} MiB PutObject", "MiB",
                        higher_is_better=False,
                        target=("max", None, 100, "< 100 MiB") if size == 1024 * MiB else None))
    kinds = {"get_presigned": "presigned GET", "put_presigned": "presigned PUT (same URL)",
             "get_signed": "header-signed GET"}
    for kind, name in kinds.items():
        for c in s3.CONNS:
            ceilings = [("nginx", "nginx"), ("bare MHD", "mhd")] if kind != "put_presigned" else [("bare MHD", "mhd")]
            if kind == "get_presigned":
                ceilings.append(("MHD hello", "mhd_hello"))
            target = None
            if kind == "get_presigned" and c == 1:
                target = ("min_ratio", "nginx", 0.8, "≥ 0.80× nginx")
            elif kind in ("get_presigned", "put_presigned") and c == 16:
                target = ("min_ratio", "moto", 30, "≥ 30× moto")
            # One connection: wrk and each server on one vCPU (layout.py), said in the row's name.
            where = ", wrk and server on one vCPU" if c == 1 else ""
            rows.append(Row(f"s3.{kind}.c{c}", f"S3 4 KiB {name}, {c} conn{where}", "req/s",
                            peers=[("moto", "moto")], ceilings=ceilings, target=target))
    for size in s.large_sizes:
        label = f"{size // MiB}m"
        rows.append(Row(f"s3.large.put.{label}", f"S3 PutObject {size // MiB} MiB, payload hash verified", "MB/s",
                        ceilings=[("sha256sum", "sha256sum"), ("openssl sha256", "openssl")],
                        target=("min_ratio", "sha256sum", 0.5, "≥ 0.50× sha256sum") if size == 1024 * MiB else None))
        rows.append(Row(f"s3.large.get.{label}", f"S3 GetObject {size // MiB} MiB", "MB/s",
                        ceilings=[("nginx", "nginx")]))
    rows += [
        Row("auth.signin", "Auth accounts:signInWithPassword, 16 conn", "req/s"),
        Row("auth.refresh", "Auth securetoken refresh, 16 conn", "req/s"),
    ]
    emu = [("official emulator", "emulator")]
    x10 = ("min_ratio", "official emulator", 10, "≥ 10× emulator")
    for c in (1, 16):
        rows.append(Row(f"fs.get.c{c}", f"Firestore get, user token, rules on, {c} conn", "req/s", peers=emu,
                        ceilings=[("nginx 4 KiB", "nginx")],
                        target=[("min_ratio", "nginx 4 KiB", 0.4, "≥ 0.40× nginx"), x10]))
    for c in (1, 16):
        rows.append(Row(f"fs.commit.c{c}", f"Firestore commit 1 doc + serverTimestamp, rules on, {c} conn", "req/s",
                        peers=emu, ceilings=[("raw SQLite", "sqlite")],
                        target=[("min_ratio", "raw SQLite", 0.5, "≥ 0.50× raw SQLite"), x10] if c == 16 else x10))
    rows.append(Row("fs.batchget.c16", "Firestore batchGet of 10 docs, user token, rules on, 16 conn", "req/s",
                    peers=emu, target=x10))
    rows.append(Row("fs.txn.light.c16", "Firestore transaction: begin + batchGet + commit of an update, rules on, "
                    "16 clients through grpcload's light HTTP/1.1 client (txnraw.go, REST)", "txn/s", peers=emu, target=x10))
    rows.append(Row("fs.txn.c16", "Firestore transaction, the same through Go's net/http (grpcload; its client CPU "
                    "competes with the servers')", "txn/s", peers=emu))
    for c in (1, 16):
        # The one-stream gets: the HTTP/2 floor ran in the same rounds (fsrows, h2floor.py); when even it
        # stays under 10× the emulator there, the 10× target is "bound", not NO (report.Row, `floor`).
        floor = [(h2floor.LABEL, h2floor.FLOOR)] if c == 1 else []
        rows.append(Row(f"grpc.get.s{c}", f"gRPC GetDocument, user token, rules on, {c} stream{'s' if c > 1 else ''} "
                        f"(h2load, 1 conn)", "calls/s", peers=emu,
                        ceilings=[(f"REST get {c} conn", (f"fs.get.c{c}", "hearth"))] + floor,
                        target=[("min_ratio", f"REST get {c} conn", 1.0, "≥ the REST get"), x10],
                        floor=h2floor.LABEL if floor else None))
        rows.append(Row(f"grpc.get.light.s{c}", f"gRPC GetDocument, {c} stream{'s' if c > 1 else ''}, through grpcload's "
                        "light client (h2unary.go, token HPACK-indexed as grpc-go sends it; 1 conn)", "calls/s", peers=emu,
                        ceilings=[(f"REST get {c} conn", (f"fs.get.c{c}", "hearth"))] + floor,
                        target=[("min_ratio", f"REST get {c} conn", 1.0, "≥ the REST get"), x10],
                        floor=h2floor.LABEL if floor else None))
    rows.append(Row("grpc.commit.s16", "gRPC Commit 1 doc + serverTimestamp, rules on, 16 streams (grpcload h2, 1 conn)",
                    "calls/s", peers=emu, target=x10))
    rows.append(Row("rt.write.s16", "Write stream: creates acknowledged, 16 streams, one write in flight each (grpcload h2)",
                    "commits/s", peers=emu, target=x10))
    rows.append(Row("grpc.commit.grpcgo.s16", "gRPC Commit, 16 streams, through grpc-go (its client CPU competes with Hearth's)",
                    "calls/s"))
    rows.append(Row("rt.write.grpcgo.s16", "Write stream, 16 streams, through grpc-go (its client CPU competes with Hearth's)",
                    "commits/s"))
    for n in s.listener_counts:
        rows.append(Row(f"rt.latency.{n}", f"Commit → snapshot delivered, {n:,} listener{'s' if n > 1 else ''}: p50",
                        "ms", peers=emu, higher_is_better=False,
                        target=("max_inverse_ratio", "official emulator", 10, "≥ 10× faster than emulator")
                        if n == 100 else None))
        rows.append(Row(f"rt.latency99.{n}", f"Commit → snapshot delivered, {n:,} listener{'s' if n > 1 else ''}: p99",
                        "ms", peers=emu, higher_is_better=False,
                        target=[("max", None, 10, "< 10 ms")] if n == 1000 else
                        ([("max_inverse_ratio", "official emulator", 10, "≥ 10× faster than emulator")] if n == 100 else None)))
    n = s.listener_counts[-1]
    rows.append(Row(f"rt.latency99.grpcgo.{n}", f"Commit → snapshot delivered, {n:,} listeners: p99 with grpc-go listeners "
                    "(the client bounds it; the rows above use grpcload's light client)", "ms", higher_is_better=False))
    rows.append(Row("rt.idle.rss", f"RSS added by {s.idle_listeners:,} idle listeners", "MiB", peers=emu,
                    higher_is_better=False, target=("max", None, 50, "< 50 MiB") if s.idle_listeners >= 10_000 else None))
    rows.append(Row("rt.idle.threads", f"Threads added by {s.idle_listeners:,} idle listeners", "threads", peers=emu,
                    higher_is_better=False, target=("max", None, 0, "none")))
    for size in q:
        rows.append(Row(f"fs.query.{size}", f"Firestore runQuery (== filter, orderBy, limit 10), {size:,} docs, 1 conn",
                        "req/s", peers=emu, target=x10))
    rows.append(Row("fs.query_flat", f"runQuery latency at {q[-1]:,} vs {q[0]:,} docs", "µs",
                    hearth_key=(f"fs.query_latency.{q[-1]}", "hearth"),
                    ceilings=[(f"at {q[0]:,} docs", (f"fs.query_latency.{q[0]}", "hearth"))],
                    target=("max_ratio", f"at {q[0]:,} docs", 2.0, f"≤ 2× the {q[0]:,}-doc latency"),
                    higher_is_better=False, plain_ratio=True))
    rows += listing.rows(ctx, emu, x10) + grpcreads.rows(emu, x10)
    rows += [
        Row("fs.clear", f"Firestore clear of {s.clear_docs:,} documents (median of {s.clear_reps})", "ms",
            higher_is_better=False),
        Row("rules.parse", "Rules: parse + check 500 lines (in process, `hearth rules bench`)", "ms",
            target=("max", None, 5, "< 5 ms"), higher_is_better=False),
        Row("rules.eval.create", "Rules: one users/{uid}/files create decision (in process, `hearth rules bench`)", "µs",
            target=("max", None, 5, "< 5 µs"), higher_is_better=False),
        Row("rules.eval.get", "Rules: one users/{uid}/files get decision (in process, `hearth rules bench`)", "µs",
            target=("max", None, 5, "< 5 µs"), higher_is_better=False),
        Row("rules.insitu", "ID-token check + rules in a Firestore get: user − admin mean latency, 1 conn", "µs", higher_is_better=False),
        Row("seed.flow", f"Seed flow: presign + PUT 64 KiB + commit ({s.flow_workers} Python clients)", "flows/s"),
    ]
    rows += instructions.rows(Row)
    return rows + storage.rows(ctx) + ui.rows(ctx)


def default_hearth_bin(quick):
    env = os.environ.get("HEARTH_BIN")
    if env:
        return os.path.abspath(env)
    release = os.path.join(ROOT, ".build", "release", "hearth")
    debug = os.path.join(ROOT, ".build", "debug", "hearth")
    if quick and os.path.exists(debug):
        return debug
    return release


def phase_all(ctx):
    """The full bench (or QUICK): every phase in turn; returns the main data dir and what it holds."""
    nginx, ceilings, mhd_servers = phase_ceilings(ctx)
    moto, moto_s3 = phase_moto_start(ctx)
    phase_hearth_startup_empty(ctx)

    def after_s3():
        for m in mhd_servers:
            m.stop()
        phase_moto_startups(ctx, moto)
    data_dir, counts = phase_hearth_main(ctx, ceilings + [moto_s3], after_s3)
    phase_hearth_startup_data(ctx, data_dir, counts)
    phase_large(ctx, nginx)
    phase_clear(ctx)
    ui.run(ctx)
    ctx.log("rules (CLI)")
    rules.rules(ctx)
    storage.rules_decision(ctx)
    ctx.log("instructions per request (callgrind)")
    instructions.measure(ctx)
    return data_dir, counts


def phase_fs_only(ctx):
    """`--only fs`: one Hearth on a fresh data dir, a user on its Auth, the Firestore rows that have the
    official emulator as their peer, beside it; no ceilings, no S3, no start-up rows, none of Hearth's
    rows without a peer (100,000 documents, the grpc-go clients)."""
    h = fresh_hearth(ctx, "hearth-fs")
    data_dir = h.data_dir
    try:
        h.start()
    except NotAvailable as e:
        na_all(ctx, fsrows.hearth_keys(ctx), str(e))
        return
    ctx.wrk.profile_pid = h.pid
    try:
        try:
            user = fsrows.signer(h.port("auth"))("bench-fs@example.com")
        except NotAvailable as e:
            ctx.log(f"  no user: {e}")
            user = None
        phase_firestore(ctx, h, user, peer_rows_only=True)
    finally:
        ctx.wrk.profile_pid = None
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def paired(row):
    """A Firestore row with the official emulator as its peer: what `--only fs` measures and shows."""
    return row.key.split(".")[0] in ("fs", "grpc", "rt") and any(sk == "emulator" for _, sk in row.peers)


def pairs_text(ctx):
    """One sentence on the Firestore rounds for the report's header, or ''."""
    p = ctx.pairing
    if p is None or not p.log:
        return ""
    m = p.summary()
    letters = {pairs.HEARTH: "H", pairs.PEER: "E", "floor-poll": "P", "floor-block": "B"}
    designs = [name for name, _ in h2floor.DESIGNS]

    def order(systems):
        return " ".join(letters[s] for s in pairs.round_order(min(ctx.s.rounds, 3), systems)) + \
            (" …" if ctx.s.rounds > 3 else "")
    floor = any(r["system"] in designs for r in p.log)
    floor_text = (f"; the one-stream gets with the HTTP/2 floor's polling (P) and blocking (B) loops: "
                  f"{order([pairs.HEARTH, pairs.PEER] + designs)}") if floor else ""
    text = (f" Firestore rows: {ctx.s.rounds} round{'s' if ctx.s.rounds > 1 else ''} per side ({order((pairs.HEARTH, pairs.PEER))}"
            f"{floor_text}"
            f"; listeners above one: 1), the best kept; {m['disturbed']} of "
            f"{m['rounds']} rounds disturbed (⚑: steal ≥ {machine.STEAL_LIMIT} core or other processes "
            f"≥ {machine.OTHERS_LIMIT} core), worst steal {m['max_steal']:.2f} core, other processes "
            f"{m['max_others']:.2f} core, idle peer {m['max_peer']:.2f} core")
    if m["not_quiet"]:
        text += f"; {m['not_quiet']} rounds started before both servers were quiet ({pairs.QUIET_TIMEOUT:.0f} s wait)"
    return text + "."


def sequence_text(ctx):
    """`--sequence`: one line per step and side — its rounds' rates and the server's CPU per operation
    (µs: the round's `machine.server` cores ÷ its rate), the client's where the load reports it."""
    lines = []
    for s in getattr(ctx, "sequence_log", None) or []:
        for system in dict.fromkeys(r["system"] for r in s["rounds"]):
            mine = [r for r in s["rounds"] if r["system"] == system and r.get("value")]
            if not mine:
                continue
            rates = " / ".join(f"{r['value']:,.0f}" for r in mine)
            cpu = " / ".join(f"{r['machine']['server'] / r['value'] * 1e6:.1f}" for r in mine)
            client = [r.get("client_us_per_txn") for r in mine]
            tail = f"; client µs {' / '.join(f'{c:.1f}' for c in client)}" if None not in client else ""
            lines.append(f"step {s['step']:2d} {s['key']:22s} {system:8s} {rates} /s; server µs per op {cpu}{tail}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="every scenario briefly (make test runs this)")
    ap.add_argument("--hearth-bin", help="hearth binary (default $HEARTH_BIN or .build/release/hearth)")
    ap.add_argument("--perf", action="store_true",
                    help="sample Hearth with `perf record` during each of its wrk runs (.build/bench/perf/)")
    ap.add_argument("--moto-bin", help="moto_server (default $MOTO_SERVER or .build/venv/bin/moto_server)")
    ap.add_argument("--only", choices=["fs"],
                    help="fs: just the Firestore rows with their peer (~10 min; writes latest-fs.json, not latest.json)")
    ap.add_argument("--work-probe-us", type=float, metavar="N",
                    help="the one-stream gets with one more side: the polling HTTP/2 floor spending N µs of CPU before "
                         "each answer (floor-poll+Nus, never the row's floor; h2_floor.py --work-us): what N µs more "
                         "work before the answer costs in this run's layout. Off unless asked")
    ap.add_argument("--rows", metavar="KEY[,KEY…]",
                    help="with --only fs: just these Firestore rows, each a key or a prefix of keys (grpc.get: every gRPC "
                         "get row; grpc.get.s1,grpc.get.light.s1: the one-stream gets with the HTTP/2 floor); writes "
                         "latest-rows.json")
    ap.add_argument("--sequence", metavar="KEY[,KEY…]",
                    help="with --only fs: these REST, gRPC and transaction rows (whole keys) in this order, a key as "
                         "often as named, KEY:N for N rounds a side, on one Hearth — e.g. a row alone, after the rows that precede it in a full "
                         "run, and again; prints each step's rounds with Hearth's CPU per operation; writes "
                         "latest-sequence.json")
    ap.add_argument("--rounds", type=int, help="Firestore rounds per side, interleaved with the peer's (default 3, QUICK 1)")
    ap.add_argument("--seconds", type=int, help="seconds per load run, whole as wrk takes them (default 5, QUICK 1)")
    ap.add_argument("--peer", action=argparse.BooleanOptionalAction, default=None,
                    help="measure the official Firestore emulator beside Hearth (default: on, off with --quick)")
    args = ap.parse_args()
    if (args.rows or args.sequence) and args.only != "fs":
        ap.error("--rows and --sequence need --only fs")
    if args.rows and args.sequence:
        ap.error("--rows or --sequence, not both")
    if args.rounds is not None and args.rounds < 1 or args.seconds is not None and args.seconds <= 0:
        ap.error("--rounds and --seconds must be positive")

    hearth_bin = os.path.abspath(args.hearth_bin) if args.hearth_bin else default_hearth_bin(args.quick)
    moto_bin = os.path.abspath(args.moto_bin or os.environ.get("MOTO_SERVER")
                               or os.path.join(ROOT, ".build", "venv", "bin", "moto_server"))
    shipped = os.path.join(ROOT, "rules", "firestore.rules")
    ctx = Context(args.quick, ROOT, hearth_bin, moto_bin, shipped if os.path.exists(shipped) else None)
    ctx.rules_for_hearth = ctx.rules_file or os.path.join(ROOT, "bench", "bench.rules")
    ctx.rows_only = [k.strip() for k in args.rows.split(",") if k.strip()] if args.rows else None
    ctx.work_probe_us = args.work_probe_us
    ctx.sequence = [k.strip() for k in args.sequence.split(",") if k.strip()] if args.sequence else None
    if args.rounds:
        ctx.s.rounds = args.rounds
    if args.seconds:
        ctx.s.duration = ctx.wrk.duration = args.seconds
    if args.peer is not None:
        ctx.peer = args.peer
    if args.perf:
        if not shutil.which("perf"):
            print("--perf needs perf (Debian package linux-perf)", file=sys.stderr)
            return 2
        ctx.wrk.profile_dir = os.path.join(ctx.build, "perf")

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)

    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = loadavg()
    counts = {"docs": 0, "objects": 0}
    status = 0
    failure = None
    try:
        ctx.log(f"{'QUICK' if ctx.quick else 'full'} run{' of the Firestore rows' if args.only else ''}; "
                f"hearth = {hearth_bin}; peer {'on' if ctx.peer else 'off'}, {ctx.s.rounds} round(s) per side")
        # Every paired round of a full run records the vCPUs' cache-line hop before and after it
        # (pairs.Pairing, hop). Not in QUICK runs: `make test` runs them beside other work, where a
        # spinning probe is preempted (milliseconds per hand-over) and says nothing.
        if not ctx.quick:
            bin_dir = os.path.join(ctx.build, "bin")
            os.makedirs(bin_dir, exist_ok=True)
            hop_bin = compile_c("pingpong.c", os.path.join(bin_dir, "pingpong"), ["-lpthread"])
            ctx.hop_probe = lambda: machine.vcpu_hop_ns(hop_bin)
        if args.only == "fs":
            phase_fs_only(ctx)
        else:
            data_dir, counts = phase_all(ctx)
            shutil.rmtree(data_dir, ignore_errors=True)
    except HarnessError as e:
        failure = f"harness failure: {e}"
        status = 1
    except KeyboardInterrupt as e:
        failure = f"interrupted ({e})"
        status = 130
    except Exception:  # a bug in the harness: still report what was measured, and fail
        failure = f"harness error:\n{traceback.format_exc()}"
        status = 1
    finally:
        ctx.registry.stop_all()

    # `--only fs`: the rows with a peer that were measured (not the 100,000-document ones the peer skips).
    shown = [r for r in rows(ctx, counts)
             if args.only != "fs" or paired(r) and ctx.results.get(*r.hearth_key) is not None]
    evaluated = [r.evaluate(ctx.results, judge=not ctx.quick) for r in shown]
    table, notes = render_table(evaluated, ctx.quick)
    info = machine_info(hearth_bin, moto_bin)
    info["loadavg_at_start"] = load_start
    header = (f"Machine: {info['nproc']} cores ({info['cpu']}), {info['memory']} RAM, Linux {info['kernel']}; "
              f"load average {load_start} at start, {info['loadavg_at_end']} at end; "
              f"{info['hearth']} ({hearth_bin}); rules: {os.path.relpath(ctx.rules_for_hearth, ROOT)}; "
              f"{'QUICK pass: sizes and durations reduced, targets not judged' if ctx.quick else 'full run'}"
              f"{'; the Firestore rows only (--only fs)' if args.only else ''}"
              f"{f'; rows {args.rows} only (--rows)' if args.rows else ''}; "
              f"wrk {ctx.s.duration}s per point.{pairs_text(ctx)}")
    print(header)
    print()
    print(table)
    steps = sequence_text(ctx)
    if steps:
        print()
        print(steps)
    if notes:
        print()
        print("\n".join(notes))
    if failure:
        print(f"\n{failure}", file=sys.stderr)
    report = {
        "started": started.isoformat(), "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "mode": ("quick" if ctx.quick else "full") + ("-fs" if args.only else ""), "rows_only": ctx.rows_only,
        "machine": info,
        "hearth_binary": hearth_bin, "rules_file": ctx.rules_for_hearth, "settings": vars(ctx.s), "peer": ctx.peer,
        "pairs": ctx.pairing.summary() if ctx.pairing else None, "failure": failure,
        "rows": jsonable(evaluated), "sequence": jsonable(getattr(ctx, "sequence_log", None)),
        "results": [{"key": k, "system": sys_, "value": jsonable(v), "details": jsonable(ctx.results.details.get((k, sys_), {}))}
                    for (k, sys_), v in ctx.results.values.items()],
    }
    # `--only fs` writes beside the full run's report, never over it; `--rows` beside that.
    name = "latest-sequence" if args.sequence else "latest-rows" if args.rows else "latest-fs" if args.only else "latest"
    with open(os.path.join(ctx.build, f"{name}.json"), "w") as f:
        json.dump(report, f, indent=2, ensure_ascii=False)
    with open(os.path.join(ctx.build, f"{name}.md"), "w") as f:
        f.write(header + "\n\n" + table + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else ""))
    ctx.log(f"wrote {os.path.join(ctx.build, name + '.json')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
