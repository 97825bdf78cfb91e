"""Cloud Storage scenarios (issue 17's speed goals).

- A large upload through the JSON API's resumable protocol exactly as google-cloud-storage drives
  it for a file over 8 MiB: a session POST with X-Upload-Content-Length, then 100 MiB chunks (its
  default chunk size) PUT with Content-Range, each sent with sendfile(2). MB/s from the session
  start to the final 200, against `sha256sum` of the same bytes (the S3 target, measured by the S3
  large-object phase on the same file).
- 4 KiB downloads by Firebase download URL (`/v0/b/{b}/o/{name}?alt=media&token=T`, no
  credentials, what the SDKs' getDownloadURL() hands out) at 16 connections under wrk, against
  the S3 presigned GET of the same size on the same Hearth, the two in alternating rounds (best
  round each), so both sides of the ratio are measured at the same moment: measured minutes apart
  (the S3 point's own run), a ratio near 1 swung by the machine's drift between them (0.84–1.02
  in three full runs, dlurl).
- One storage.rules decision in process (`hearth rules bench` on the shipped rules/storage.rules
  and the first ALLOW case of rules/tests/storage/images-allow.json), as the Firestore rows do.
"""
import hashlib
import json
import os
import socket
import time
import urllib.parse

from .httpc import Client, NotAvailable, _read_body, _read_head, expect
from .loadgen import require_clean
from .report import Row
from .rules import _bench

BUCKET = "bench-storage"
OWNER = {"Authorization": "Bearer owner"}   # the Firebase API's admin credential, as in the Firebase emulator
CHUNK = 100 << 20                           # google-cloud-storage's default resumable chunk size
CONNS = 16


def _label(size):
    return f"{size >> 20}m"


def _ensure_bucket(port):
    c = Client(port)
    try:
        r = c.request("POST", "/storage/v1/b?project=demo-hearth", body={"name": BUCKET})
        expect(r, "storage bucket insert", ok=(200, 409))
    finally:
        c.close()


BESIDE = "s3-beside"   # the row's side holding the S3 presigned GET measured in its rounds
ROUNDS = 2


def token_downloads(ctx, hearth, s3_get):
    """wrk on the Firebase download URL of a 4 KiB object, 16 connections (row storage.get_token.c16),
    in `ROUNDS` rounds alternating with `s3_get` (the wrk request list of the S3 presigned GET of a
    4 KiB object on the same Hearth); the best round of each is stored."""
    key = f"storage.get_token.c{CONNS}"
    try:
        hearth.check_alive()
        port = hearth.port("storage")
        _ensure_bucket(port)
        body = ctx.read(ctx.obj4k)
        name = "bench/obj4k.png"
        quoted = urllib.parse.quote(name, safe="")
        c = Client(port)
        try:
            r = expect(c.request("POST", f"/v0/b/{BUCKET}/o?name={quoted}", body=body,
                                 headers=dict(OWNER, **{"Content-Type": "image/png"})), "Firebase upload 4 KiB")
            tokens = (r.json() or {}).get("downloadTokens", "")
            token = tokens.split(",")[0] if tokens else ""
            if not token:
                raise NotAvailable(f"the Firebase upload answered no downloadTokens: {r.snippet(120)}")
            path = f"/v0/b/{BUCKET}/o/{quoted}?alt=media&token={token}"
            host = f"127.0.0.1:{port}"
            r = expect(c.request("GET", path, headers={"Host": host}), "download URL GET")
            if r.body != body:
                raise NotAvailable(f"the download URL returned {len(r.body)} bytes that differ from the object")
        finally:
            c.close()
        download = [{"method": "GET", "path": path, "headers": {"Host": host}}]
        best = {}
        for r in range(ROUNDS):
            for side, reqs in ((BESIDE, s3_get), ("hearth", download)):
                s = ctx.wrk.run(hearth.port("s3") if side == BESIDE else port, reqs, CONNS, f"{side}-{key}-r{r}")
                require_clean(s, f"{side} {key} round {r + 1}")
                ctx.log(f"  {side:10s} {key:22s} round {r + 1}: {s['rps']:>10,.0f} req/s  p50 {s['lat_p50_us']} µs")
                best.setdefault(side, []).append(s)
        for side, runs in best.items():
            top = max(runs, key=lambda s: s["rps"])
            ctx.results.put(key, side, top["rps"], wrk=top, rounds_rps=[s["rps"] for s in runs])
    except NotAvailable as e:
        ctx.results.na(key, "hearth", str(e))


def _send_chunk(port, path, file_path, offset, count, total, timeout=600):
    """PUTs bytes [offset, offset+count) of `file_path` with Content-Range; returns (status, headers, body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = (f"PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {count}\r\n"
                f"Content-Range: bytes {offset}-{offset + count - 1}/{total}\r\n\r\n")
        sock.sendall(head.encode("latin-1"))
        try:
            with open(file_path, "rb") as f:
                sock.sendfile(f, offset, count)
        except (BrokenPipeError, ConnectionResetError):
            pass  # an early answer (an error) is read below
        status, headers, rest = _read_head(sock)
        body, _ = _read_body(sock, headers, rest, keep=True, limit=1 << 20)
        return status, headers, body
    finally:
        sock.close()


def _md5_base64(path):
    import base64
    h = hashlib.md5()
    with open(path, "rb") as f:
        while True:
            b = f.read(8 << 20)
            if not b:
                break
            h.update(b)
    return base64.b64encode(h.digest()).decode()


def large_upload(ctx, hearth):
    """Resumable upload of the largest test file (row storage.upload.<size>)."""
    size = ctx.s.large_sizes[-1]
    key = f"storage.upload.{_label(size)}"
    path, _ = ctx.large_file(size)
    if ctx.results.get(f"s3.large.put.{_label(size)}", "sha256sum") is None:
        from .s3 import hash_ceiling
        ctx.results.put(f"s3.large.put.{_label(size)}", "sha256sum", hash_ceiling(ctx, ["sha256sum", path], size))
    try:
        hearth.check_alive()
        port = hearth.port("storage")
        _ensure_bucket(port)
        name = f"large-{_label(size)}.bin"
        c = Client(port)
        t0 = time.perf_counter()
        try:
            r = c.request("POST", f"/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable&name={name}",
                          body={"contentType": "application/octet-stream"},
                          headers={"X-Upload-Content-Length": str(size),
                                   "X-Upload-Content-Type": "application/octet-stream"})
            expect(r, "resumable session start")
        finally:
            c.close()
        location = r.headers.get("location", "")
        u = urllib.parse.urlsplit(location)
        if not u.path:
            raise NotAvailable(f"the session start answered no Location: {r.snippet(120)}")
        session = u.path + ("?" + u.query if u.query else "")
        offset, resource = 0, None
        while offset < size:
            n = min(CHUNK, size - offset)
            status, headers, body = _send_chunk(port, session, path, offset, n, size)
            if offset + n < size:
                if status != 308 or headers.get("range") != f"bytes=0-{offset + n - 1}":
                    raise NotAvailable(f"chunk at {offset} → {status} {headers.get('range')}: {(body or b'')[:160]!r}")
            elif status != 200:
                raise NotAvailable(f"final chunk → {status}: {(body or b'')[:160]!r}")
            else:
                resource = json.loads(body)
            offset += n
        secs = time.perf_counter() - t0
        if int(resource.get("size", -1)) != size:
            raise NotAvailable(f"the object's size is {resource.get('size')}, not {size}")
        if resource.get("md5Hash") != _md5_base64(path):
            raise NotAvailable("the object's md5Hash differs from the file's")
        ctx.results.put(key, "hearth", size / 1e6 / secs, seconds=secs, chunk_bytes=CHUNK)
        ctx.log(f"  hearth storage resumable upload {_label(size)}: {size / 1e6 / secs:,.0f} MB/s")
    except (NotAvailable, ValueError, OSError) as e:
        ctx.results.na(key, "hearth", f"{type(e).__name__}: {e}" if not isinstance(e, NotAvailable) else str(e))


def rules_decision(ctx):
    """One storage.rules create decision in process (row storage.rules.eval)."""
    key = "storage.rules.eval"
    try:
        shipped = os.path.join(ctx.root, "rules", "storage.rules")
        suite = os.path.join(ctx.root, "rules", "tests", "storage", "images-allow.json")
        if not os.path.exists(shipped) or not os.path.exists(suite):
            raise NotAvailable("rules/storage.rules or its suite is not shipped")
        with open(suite) as f:
            case = next((c for c in json.load(f)["testCases"] if c.get("expectation") == "ALLOW"), None)
        if case is None:
            raise NotAvailable("images-allow.json has no ALLOW case")
        one = os.path.join(ctx.run_dir, "suite-storage-1.json")
        with open(one, "w") as f:
            json.dump({"testCases": [case]}, f)
        report = _bench(ctx.hearth_bin, shipped, one, ctx.s.rules_cases)
        row = report["cases"][0]
        if not row["allowed"]:
            raise NotAvailable("the shipped storage rules deny the first ALLOW case of images-allow.json")
        ctx.results.put(key, "hearth", row["nsPerDecision"] / 1e3, iterations=report["iterations"],
                        with_coverage_us=row["nsPerDecisionWithCoverage"] / 1e3, method=row["method"])
        ctx.log(f"  storage rules {row['method']}: {row['nsPerDecision'] / 1e3:.2f} µs/decision in process "
                f"({row['nsPerDecisionWithCoverage'] / 1e3:.2f} µs with coverage)")
    except (NotAvailable, KeyError, IndexError, ValueError, OSError) as e:
        ctx.results.na(key, "hearth", str(e))


def rows(ctx):
    size = ctx.s.large_sizes[-1]
    label = _label(size)
    return [
        Row(f"storage.upload.{label}", f"Storage resumable upload {size >> 20} MiB (JSON API, 100 MiB chunks)", "MB/s",
            ceilings=[("sha256sum", (f"s3.large.put.{label}", "sha256sum"))],
            target=("min_ratio", "sha256sum", 0.5, "≥ 0.50× sha256sum") if size == 1024 << 20 else None),
        Row(f"storage.get_token.c{CONNS}", f"Storage 4 KiB download URL (alt=media&token=), {CONNS} conn", "req/s",
            ceilings=[("S3 presigned GET", (f"storage.get_token.c{CONNS}", BESIDE))],
            target=("min_ratio", "S3 presigned GET", 1.0, "≥ S3 presigned GET")),
        Row("storage.rules.eval", "Rules: one storage users/{uid}/{file} create decision (in process, `hearth rules bench`)",
            "µs", target=("max", None, 5, "< 5 µs"), higher_is_better=False),
    ]
