#!/usr/bin/env python3
"""Only the Cloud Storage rows of `make bench` (issue 17's speed goals) and what they are judged
against, for one or more Hearth binaries alternated round by round (an A/B on a shared machine):
`python3 bench/storage_rows.py [--bin A --bin B] [--rounds N] [--only get,upload,rules] [--size-mib M]`.

- get: the S3 4 KiB presigned GET and the Storage 4 KiB download URL at 16 connections on the same
  Hearth, back to back (wrk, best of 2 runs of 5 s, as `make bench` measures them);
- upload: the Storage resumable upload of the largest test file (1 GiB; 100 MiB chunks) and
  `sha256sum` of the same bytes;
- rules: one storage.rules decision in process (`hearth rules bench`);
- s3put: S3's PutObject of the same file (payload hash verified), as `make bench`'s large-object row
  sends it (`benchlib.s3.put_large`), judged against the same `sha256sum`.

`--disk` adds, per binary and round, what the block device under the data directory did at that
moment: `dd` of 1 GiB of zeros with `conv=fdatasync` next to the data directory (the disk's own
write rate, page cache to device) before Hearth starts, and the bytes the device wrote during each
upload row (`/proc/diskstats`), to tell a slower disk from slower code.

Rows and methods are `bench/benchlib/storage.py`'s, unchanged; only the phases around them are
left out. Loopback only; every process started is stopped.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import s3, storage  # noqa: E402
from benchlib.context import Context, MiB  # noqa: E402
from benchlib.httpc import NotAvailable  # noqa: E402
from benchlib.procs import Hearth  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def device_written(path):
    """Bytes written so far by the block device holding `path` (/proc/diskstats; None if not found)."""
    dev = os.stat(path).st_dev
    major, minor = os.major(dev), os.minor(dev)
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if int(p[0]) == major and int(p[1]) == minor:
                return int(p[9]) * 512   # sectors written, 512 bytes each whatever the device's own size
    return None


def dd_fdatasync(directory, mib=1024):
    """MB/s of `dd if=/dev/zero bs=1M count=mib conv=fdatasync` into `directory` (the file removed after)."""
    target = os.path.join(directory, "dd-fdatasync.tmp")
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={target}", "bs=1M", f"count={mib}", "conv=fdatasync"],
                   check=True, capture_output=True)
    secs = time.perf_counter() - t0
    os.remove(target)
    return mib * MiB / 1e6 / secs


class DiskWrites:
    """MB the device under `path` wrote between `__enter__` and `__exit__`, stored in `out[key]`."""

    def __init__(self, enabled, path, out, key):
        self.enabled, self.path, self.out, self.key = enabled, path, out, key

    def __enter__(self):
        self.start = device_written(self.path) if self.enabled else None
        return self

    def __exit__(self, *exc):
        if self.start is not None:
            self.out[self.key] = (device_written(self.path) - self.start) / 1e6
        return False


def one_round(ctx, binary, label, only, disk=False):
    ctx.hearth_bin = binary
    out = {}
    data_dir = os.path.join(ctx.run_dir, f"hearth-storage-{label}")
    shutil.rmtree(data_dir, ignore_errors=True)
    if disk:
        out["dd fdatasync MB/s"] = dd_fdatasync(ctx.run_dir)
    h = Hearth(ctx.registry, binary, ctx.run_dir, data_dir=data_dir, rules=ctx.rules_for_hearth, log_name=f"hearth-{label}")
    try:
        h.start()
        if "get" in only:
            reqs = s3.s3_small_requests(ctx, h.port("s3"), "hearth")
            s3.run_point(ctx, "hearth", h.port("s3"), reqs["get_presigned"], "s3.get_presigned.c16", 16, "hearth")
            storage.token_downloads(ctx, h, reqs["get_presigned"])
            out["s3 presigned GET c16 (before)"] = ctx.results.get("s3.get_presigned.c16", "hearth")
            out["s3 presigned GET c16 (beside)"] = ctx.results.get("storage.get_token.c16", storage.BESIDE)
            out["download URL c16"] = ctx.results.get("storage.get_token.c16", "hearth")
        if "upload" in only:
            with DiskWrites(disk, ctx.run_dir, out, "device MB written during upload"):
                storage.large_upload(ctx, h)
            label_size = f"{ctx.s.large_sizes[-1] >> 20}m"
            out["upload MB/s"] = ctx.results.get(f"storage.upload.{label_size}", "hearth")
            out["sha256sum MB/s"] = ctx.results.get(f"s3.large.put.{label_size}", "sha256sum")
        if "s3put" in only:
            with DiskWrites(disk, ctx.run_dir, out, "device MB written during S3 PUT"):
                out["S3 PUT MB/s"] = s3.put_large(ctx, h.port("s3"), ctx.s.large_sizes[-1])
    except NotAvailable as e:
        out["error"] = str(e)
    finally:
        h.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    if "rules" in only:
        storage.rules_decision(ctx)
        out["rules µs"] = ctx.results.get("storage.rules.eval", "hearth")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", help="hearth binary (repeat for an A/B; default .build/release/hearth)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", default="get,upload,rules")
    ap.add_argument("--size-mib", type=int, default=1024, help="upload size (make bench: 1024)")
    ap.add_argument("--disk", action="store_true", help="also the device's own rate (dd, fdatasync) and bytes written per row")
    args = ap.parse_args()
    bins = [os.path.abspath(b) for b in (args.bin or [os.path.join(ROOT, ".build", "release", "hearth")])]
    only = set(args.only.split(","))
    ctx = Context(False, ROOT, bins[0], None, None)
    ctx.rules_for_hearth = os.path.join(ROOT, "bench", "bench.rules")
    ctx.s.large_sizes = [args.size_mib * MiB]
    try:
        for r in range(args.rounds):
            for i, b in enumerate(bins):
                out = one_round(ctx, b, f"{i}", only, args.disk)
                print(f"round {r + 1} bin {i} ({b}): " + ", ".join(
                    f"{k} {v:,.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in out.items()), flush=True)
    finally:
        ctx.registry.stop_all()


if __name__ == "__main__":
    sys.exit(main())
