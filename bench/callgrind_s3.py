#!/usr/bin/env python3
"""Instructions per S3 request, counted by callgrind (repeatable where wall-clock rates on a shared
machine are not): `python3 bench/callgrind_s3.py [--hearth-bin B] [-n N] [-c CLIENTS] [--keep] [--kinds K,...]`.

Starts Hearth on a fresh data directory (as `make bench` does) under
`valgrind --tool=callgrind --instr-atstart=no`, stores the bench's 4 KiB object, then instruments
(and so counts) only while N requests of one kind run over CLIENTS keep-alive connections at once
(default 1), the very requests `make bench` replays with wrk: the presigned GET, the presigned PUT
(same URL, overwriting) and the header-signed GET. With 16 clients concurrent PUTs share group
commits as under `make bench`'s 16 connections. Prints instructions per request for each kind and,
for the PUT, the WAL bytes each one added; `--keep` keeps the dumps for `callgrind_annotate`.
Needs valgrind (Debian package valgrind); loopback only.
"""
import argparse
import hashlib
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib.httpc import Client, expect  # noqa: E402
from benchlib.instructions import spread  # noqa: E402
from benchlib.sigv4 import Signer  # noqa: E402
from callgrind_get import counted  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUCKET = "bench-small"
BODY = bytes(range(256)) * 16  # 4 KiB
KINDS = ("get_presigned", "put_presigned", "get_signed")


def seed(port, signer):
    """The bucket and objects of the bench's small-object rows; returns the request of each kind."""
    host = f"127.0.0.1:{port}"
    c = Client(port)
    try:
        expect(c.request("PUT", f"/{BUCKET}", headers=signer.sign_headers("PUT", host, f"/{BUCKET}")), "CreateBucket")
        for key in ("obj4k", "h0"):
            h = signer.sign_headers("PUT", host, f"/{BUCKET}/{key}", payload_hash=hashlib.sha256(BODY).hexdigest())
            expect(c.request("PUT", f"/{BUCKET}/{key}", body=BODY, headers=h), "PutObject")
    finally:
        c.close()
    week = 7 * 24 * 3600
    return {
        "get_presigned": ("GET", signer.presign("GET", host, f"/{BUCKET}/obj4k", expires=week), {"Host": host}, None),
        "put_presigned": ("PUT", signer.presign("PUT", host, f"/{BUCKET}/put4k", expires=week), {"Host": host}, BODY),
        "get_signed": ("GET", f"/{BUCKET}/h0", signer.sign_headers("GET", host, f"/{BUCKET}/h0"), None),
    }


def run(port, request, n, clients=1):
    """n requests from `clients` connections at once (each its own thread)."""
    method, path, headers, body = request
    errors = []

    def one(count):
        c = Client(port)
        try:
            for _ in range(count):
                r = c.request(method, path, body=body, headers=headers)
                if r.status != 200 or (method == "GET" and r.body != BODY):
                    errors.append(f"{method} answered {r.status}: {r.snippet()}")
                    return
        finally:
            c.close()

    spread(n, clients, lambda _k, count: one(count))
    if errors:
        raise SystemExit(errors[0])


def wal_bytes(data_dir):
    path = os.path.join(data_dir, "hearth.sqlite-wal")
    return os.path.getsize(path) if os.path.exists(path) else 0


def measure(hearth_bin, kind, n, keep=False, clients=1, threads=None):
    wal = {}

    def prepare(h):
        return seed(h.port("s3"), Signer())[kind]

    def load(h, request, count):
        before = wal_bytes(h.data_dir)
        run(h.port("s3"), request, count, clients)
        wal["per"] = (wal_bytes(h.data_dir) - before) / count
    label = f"S3 4 KiB {kind}, {clients} client{'s' if clients > 1 else ''}" + (f", --threads {threads}" if threads else "")
    v = counted(label, hearth_bin, n, prepare, load, data_dir=True, keep=keep,
                extra=("--threads", str(threads)) if threads else ())
    if kind.startswith("put"):
        # The WAL only grows until a checkpoint lets SQLite write it from the start again.
        print(f"  WAL growth: {wal['per']:,.0f} bytes per request (0 or less: a checkpoint restarted the WAL; lower -n)")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build", "release", "hearth"))
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("-c", "--clients", type=int, default=1, help="concurrent keep-alive connections (default 1)")
    ap.add_argument("--threads", type=int, help="hearth start --threads (HTTP/1.1 worker threads per listener; default Hearth's)")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated subset of {', '.join(KINDS)}")
    ap.add_argument("--keep", action="store_true", help="keep the callgrind dumps (for callgrind_annotate)")
    args = ap.parse_args()
    for tool in ("valgrind", "callgrind_control"):
        if not shutil.which(tool):
            print(f"{tool} is not installed (Debian package valgrind)", file=sys.stderr)
            return 2
    for kind in args.kinds.split(","):
        if kind not in KINDS:
            print(f"unknown kind {kind!r}; one of {', '.join(KINDS)}", file=sys.stderr)
            return 2
        measure(args.hearth_bin, kind, args.n, args.keep, args.clients, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
