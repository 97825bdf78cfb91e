#!/usr/bin/env python3
"""Only the Cloud Storage rows of `make bench` (issue 17's speed goals) and what they are judged
against, for one or more Hearth binaries alternated round by round (an A/B on a shared machine):
`python3 bench/storage_rows.py [--bin A --bin B] [--rounds N] [--only get,upload,rules] [--size-mib M]`.

- get: the S3 4 KiB presigned GET and the Storage 4 KiB download URL at 16 connections on the same
  Hearth, back to back (wrk, best of 2 runs of 5 s, as `make bench` measures them);
- upload: the Storage resumable upload of the largest test file (1 GiB; 100 MiB chunks) and
  `sha256sum` of the same bytes;
- rules: one storage.rules decision in process (`hearth rules bench`);
- s3put: the S3 PutObject of the same file (`make bench`'s s3.large.put row, as `benchlib.s3` sends it).

Rows and methods are `bench/benchlib/storage.py`'s, unchanged; only the phases around them are
left out. Loopback only; every process started is stopped.
"""
import argparse
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import s3, storage  # noqa: E402
from benchlib.context import Context, MiB  # noqa: E402
from benchlib.httpc import Client, NotAvailable, upload_file  # noqa: E402
from benchlib.procs import Hearth  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_round(ctx, binary, label, only):
    ctx.hearth_bin = binary
    out = {}
    data_dir = os.path.join(ctx.run_dir, f"hearth-storage-{label}")
    shutil.rmtree(data_dir, ignore_errors=True)
    h = Hearth(ctx.registry, binary, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth, log_name=f"hearth-{label}")
    try:
        h.start()
        if "get" in only:
            reqs = s3.s3_small_requests(ctx, h.port("s3"), "hearth")
            s3.run_point(ctx, "hearth", h.port("s3"), reqs["get_presigned"], "s3.get_presigned.c16", 16, "hearth")
            storage.token_downloads(ctx, h)
            out["s3 presigned GET c16"] = ctx.results.get("s3.get_presigned.c16", "hearth")
            out["download URL c16"] = ctx.results.get("storage.get_token.c16", "hearth")
        if "s3put" in only:
            out["s3 PUT MB/s"] = s3_large_put(ctx, h)
        if "upload" in only:
            storage.large_upload(ctx, h)
            label_size = f"{ctx.s.large_sizes[-1] >> 20}m"
            out["upload MB/s"] = ctx.results.get(f"storage.upload.{label_size}", "hearth")
            out["sha256sum MB/s"] = ctx.results.get(f"s3.large.put.{label_size}", "sha256sum")
    except NotAvailable as e:
        out["error"] = str(e)
    finally:
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    if "rules" in only:
        storage.rules_decision(ctx)
        out["rules µs"] = ctx.results.get("storage.rules.eval", "hearth")
    return out


def s3_large_put(ctx, h):
    """MB/s of one SigV4 PutObject of the largest test file (the payload hash signed, as in make bench)."""
    size = ctx.s.large_sizes[-1]
    path, digest = ctx.large_file(size)
    port = h.port("s3")
    host = f"127.0.0.1:{port}"
    c = Client(port)
    try:
        c.request("PUT", "/bench-large", headers=ctx.signer.sign_headers("PUT", host, "/bench-large"))
    finally:
        c.close()
    key = "/bench-large/obj"
    headers = ctx.signer.sign_headers("PUT", host, key, headers={"Content-Type": "application/octet-stream"}, payload_hash=digest)
    status, body, secs = upload_file(port, "PUT", key, headers, path, size)
    if status != 200:
        raise NotAvailable(f"PutObject → {status}: {(body or b'')[:160]!r}")
    return size / 1e6 / secs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", help="hearth binary (repeat for an A/B; default .build/release/hearth)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="get,upload,rules")
    ap.add_argument("--size-mib", type=int, default=1024, help="upload size (make bench: 1024)")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in (args.bin or [os.path.join(ROOT, ".build", "release", "hearth")])]
    only = set(args.only.split(","))
    ctx = Context(False, ROOT, bins[0], None, None)
    ctx.rules_for_hearth = os.path.join(ROOT, "bench", "bench.rules")
    ctx.s.large_sizes = [args.size_mib * MiB]
    try:
        for r in range(args.rounds):
            for i, b in enumerate(bins):
                out = one_round(ctx, b, f"{i}", only)
                print(f"round {r + 1} bin {i} ({b}): " + ", ".join(
                    f"{k} {v:,.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in out.items()), flush=True)
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
