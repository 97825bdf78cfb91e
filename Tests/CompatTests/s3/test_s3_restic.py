"""restic (Debian's package) backing up into the emulator: a repository `s3:http://127.0.0.1:PORT/bucket`
with the keys in the environment, as its manual describes. restic uses the minio-go SDK (SigV4,
path-style for an IP endpoint), reads its pack files back with ranged GETs and deletes them on prune.
"""
import json
import os
import shutil
import uuid

import pytest

from cli_runner import run_cli

RESTIC = shutil.which("restic")
pytestmark = pytest.mark.skipif(RESTIC is None, reason="restic is not installed (Debian package restic)")


@pytest.fixture
def restic(tmp_path):
    repo = f"s3:{os.environ['HEARTH_S3_URL']}/restic-{uuid.uuid4().hex[:16]}"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "RESTIC_REPOSITORY": repo,
        "RESTIC_PASSWORD": "correct horse battery staple",
        "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
        "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"],
        "AWS_DEFAULT_REGION": os.environ.get("AWS_REGION", "us-east-1"),
    }

    def run(*args, check=True, password=None):
        e = dict(env, RESTIC_PASSWORD=password) if password else env
        return run_cli([RESTIC, "--no-cache", *args], e, check=check)

    return run


def tree_bytes(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_backup_check_restore_forget_prune(restic, tmp_path):
    data = tmp_path / "data"
    (data / "docs").mkdir(parents=True)
    (data / "docs" / "note.txt").write_text("first version\n")
    (data / "random.bin").write_bytes(os.urandom(3 * 1024 * 1024 + 17))
    (data / "zeros.bin").write_bytes(bytes(2 * 1024 * 1024))
    (data / "empty").write_bytes(b"")

    assert "created restic repository" in restic("init").stdout
    again = restic("init", check=False)
    assert again.returncode != 0 and "already" in again.stderr  # config object found by its stat

    restic("backup", "--host", "test", str(data))
    (data / "docs" / "note.txt").write_text("second version\n")
    (data / "new.txt").write_text("added later\n")
    restic("backup", "--host", "test", str(data))

    snaps = json.loads(restic("snapshots", "--json").stdout)
    assert len(snaps) == 2 and all(s["paths"] == [str(data)] for s in snaps)
    restic("check", "--read-data")  # every pack downloaded and its hashes verified

    out = tmp_path / "restored"
    restic("restore", "latest", "--target", str(out))
    assert tree_bytes(out / str(data).lstrip("/")) == tree_bytes(data)
    first = tmp_path / "first"
    restic("restore", snaps[0]["short_id"], "--target", str(first))
    old = first / str(data).lstrip("/")
    assert (old / "docs" / "note.txt").read_text() == "first version\n" and not (old / "new.txt").exists()

    restic("forget", "--keep-last", "1", "--prune")
    snaps_after = json.loads(restic("snapshots", "--json").stdout)
    assert [s["id"] for s in snaps_after] == [snaps[1]["id"]]
    restic("check", "--read-data")
    again = tmp_path / "again"
    restic("restore", "latest", "--target", str(again))
    assert tree_bytes(again / str(data).lstrip("/")) == tree_bytes(data)

    wrong = restic("snapshots", password="not the password", check=False)
    assert wrong.returncode != 0 and "wrong password" in wrong.stderr
