#!/usr/bin/env python3
"""Instructions for issue 17's Storage speed goals, counted by callgrind (repeatable where wall-clock
rates on a shared machine are not): `python3 bench/callgrind_storage.py [--hearth-bin B] [-n N] [--mib M]`.

- a 4 KiB download by Firebase download URL (`alt=media&token=`) against an S3 presigned GET of
  the same bytes, per request, N requests over one keep-alive connection;
- a resumable upload of M MiB through the JSON API (8 MiB chunks), per byte, against
  `sha256sum` of the same bytes under callgrind.

Hearth runs under `valgrind --tool=callgrind --instr-atstart=no`; only the timed load is
instrumented. Needs valgrind; loopback only.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import storage  # noqa: E402
from benchlib.httpc import Client, expect  # noqa: E402
from benchlib.instructions import counted, missing_tools, total_ir  # noqa: E402
from benchlib.sigv4 import Signer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BODY = os.urandom(4096)


def token_setup(h):
    port = h.port("storage")
    storage._ensure_bucket(port)
    c = Client(port)
    r = expect(c.request("POST", f"/v0/b/{storage.BUCKET}/o?name=obj4k", body=BODY,
                         headers={**storage.OWNER, "Content-Type": "image/png"}), "upload")
    c.close()
    return f"/v0/b/{storage.BUCKET}/o/obj4k?alt=media&token={r.json()['downloadTokens']}"


def s3_setup(h):
    port = h.port("s3")
    host = f"127.0.0.1:{port}"
    signer = Signer()
    c = Client(port)
    expect(c.request("PUT", "/cg-bench", headers=signer.sign_headers("PUT", host, "/cg-bench")), "CreateBucket")
    import hashlib
    expect(c.request("PUT", "/cg-bench/obj4k", body=BODY,
                     headers=signer.sign_headers("PUT", host, "/cg-bench/obj4k", payload_hash=hashlib.sha256(BODY).hexdigest())), "PutObject")
    c.close()
    return signer.presign("GET", host, "/cg-bench/obj4k", expires=3600)


def get_load(service):
    def load(h, path, n):
        c = Client(h.port(service))
        try:
            for _ in range(n):
                r = c.request("GET", path, headers={"Host": f"127.0.0.1:{h.port(service)}"})
                if r.status != 200 or r.body != BODY:
                    raise SystemExit(f"{service} GET answered {r.status}: {r.snippet()}")
        finally:
            c.close()
    return load


def upload_load(path):
    """Uploads the first `total` bytes of the file at `path` as a new object (so n counts bytes)."""
    def load(h, _state, total):
        port = h.port("storage")
        storage._ensure_bucket(port)
        c = Client(port)
        r = expect(c.request("POST", f"/upload/storage/v1/b/{storage.BUCKET}/o?uploadType=resumable&name=big{total}",
                             body={}, headers={"X-Upload-Content-Length": str(total)}), "start")
        c.close()
        u = urllib.parse.urlsplit(r.headers["location"])
        session = u.path + "?" + u.query
        offset = 0
        while offset < total:
            n = min(8 << 20, total - offset)
            status, _, body = storage._send_chunk(port, session, path, offset, n, total)
            if status not in (200, 308):
                raise SystemExit(f"chunk → {status}: {body[:200]!r}")
            offset += n
    return load


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--only", choices=["get", "upload"])
    ap.add_argument("--keep", action="store_true", help="keep the callgrind dumps (for callgrind_annotate)")
    args = ap.parse_args()
    why = missing_tools()
    if why:
        print(why, file=sys.stderr)
        return 2
    if args.only in (None, "get"):
        t = counted("Storage download URL 4 KiB", args.hearth_bin, args.n, token_setup, get_load("storage"), data_dir=True, keep=args.keep)
        s = counted("S3 presigned GET 4 KiB", args.hearth_bin, args.n, s3_setup, get_load("s3"), data_dir=True, keep=args.keep)
        print(f"  download URL / presigned GET = {t / s:.2f}")
    if args.only in (None, "upload"):
        size = args.mib << 20
        path = os.path.join(ROOT, ".build", f"cg-upload-{args.mib}m.bin")
        if not (os.path.exists(path) and os.path.getsize(path) == size):
            with open(path, "wb") as f:
                f.write(os.urandom(size))
        u = counted(f"Storage resumable upload {args.mib} MiB", args.hearth_bin, size, lambda h: None, upload_load(path),
                    data_dir=True, keep=args.keep, warm=1 << 20, unit="byte")
        work = tempfile.mkdtemp(prefix="cg-sha-", dir=os.path.join(ROOT, ".build"))
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/callgrind.out.sha", "sha256sum", path],
                       capture_output=True, check=True)
        sha = total_ir(work) / size
        shutil.rmtree(work, ignore_errors=True)
        print(f"sha256sum, per byte: {sha:,.1f} instructions")
        print(f"  upload / sha256sum = {u / sha:.2f} (the goal, ≥ 0.5× sha256sum's speed, is about ≤ 2.0 here)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
