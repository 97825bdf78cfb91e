"""Bounded memory: a large upload and download stream through hearth instead of being held in RAM."""
import hashlib
import os

import shutil

import boto3
import pytest

from hearthharness import start_hearth, stop_hearth


def vm_hwm_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


class PatternFile:
    """A 256 MiB file-like object generated on the fly (nothing large in the test's memory either)."""

    def __init__(self, size):
        self.size, self.pos = size, 0
        self.block = bytes(range(256)) * 4096  # 1 MiB

    def read(self, n=-1):
        if n < 0:
            n = self.size - self.pos
        n = min(n, self.size - self.pos)
        out = bytearray()
        while len(out) < n:
            off = (self.pos + len(out)) % len(self.block)
            out += self.block[off:off + n - len(out)]
        self.pos += n
        return bytes(out)

    def seek(self, pos, whence=0):
        self.pos = pos if whence == 0 else (self.pos + pos if whence == 1 else self.size + pos)
        return self.pos

    def tell(self):
        return self.pos


def test_256_mib_put_and_get_keep_hearth_memory_bounded(tmp_path):
    # A file-backed hearth of its own: the shared session one keeps its database in memory.
    proc, ready, tmp = start_hearth(["--data-dir", str(tmp_path / "data")], in_memory=False)
    try:
        check_bounded(proc.pid, ready["services"]["s3"]["url"])
    finally:
        stop_hearth(proc)
        shutil.rmtree(tmp, ignore_errors=True)


def check_bounded(pid, s3_url):
    size = 256 << 20
    s3 = boto3.client("s3", endpoint_url=s3_url)
    s3.create_bucket(Bucket="memory-bound")
    before = vm_hwm_bytes(pid)
    s3.put_object(Bucket="memory-bound", Key="big", Body=PatternFile(size), ContentLength=size)
    after_put = vm_hwm_bytes(pid)
    body = s3.get_object(Bucket="memory-bound", Key="big")["Body"]
    digest, total = hashlib.sha256(), 0
    for chunk in iter(lambda: body.read(1 << 20), b""):
        digest.update(chunk)
        total += len(chunk)
    assert total == size
    expected = hashlib.sha256()
    src = PatternFile(size)
    for _ in range(size >> 20):
        expected.update(src.read(1 << 20))
    assert digest.hexdigest() == expected.hexdigest()
    after_get = vm_hwm_bytes(pid)
    # The body is 256 MiB; the server's peak may grow by a bounded working set only.
    assert after_put - before < 100 << 20, f"PUT raised peak RSS by {(after_put - before) >> 20} MiB"
    assert after_get - before < 100 << 20, f"GET raised peak RSS by {(after_get - before) >> 20} MiB"
    s3.delete_object(Bucket="memory-bound", Key="big")
