"""The AWS CLI against the emulator, configured only by the environment (AWS_ENDPOINT_URL_S3 and keys)."""
import json
import os
import shutil
import subprocess
import uuid

import pytest

AWS = shutil.which("aws")
pytestmark = pytest.mark.skipif(AWS is None, reason="the AWS CLI is not installed")


def aws(*args, check=True):
    r = subprocess.run([AWS, *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    if check:
        assert r.returncode == 0, f"aws {' '.join(args)} failed: {r.stderr}"
    return r


@pytest.fixture
def cli_bucket():
    name = "cli-" + uuid.uuid4().hex[:16]
    aws("s3", "mb", f"s3://{name}")
    yield name
    aws("s3", "rb", f"s3://{name}", "--force", check=False)


def test_cp_both_ways_ls_rm_head(cli_bucket, tmp_path):
    small = tmp_path / "small.txt"
    small.write_text("hello from the cli\n")
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(9 * 1024 * 1024 + 123))  # above the CLI's 8 MiB multipart threshold

    aws("s3", "cp", str(small), f"s3://{cli_bucket}/docs/small.txt")
    aws("s3", "cp", str(big), f"s3://{cli_bucket}/data/big.bin")

    top = aws("s3", "ls", f"s3://{cli_bucket}/").stdout
    assert "PRE docs/" in top and "PRE data/" in top
    listing = aws("s3", "ls", f"s3://{cli_bucket}", "--recursive").stdout
    assert "docs/small.txt" in listing and "data/big.bin" in listing
    assert str(9 * 1024 * 1024 + 123) in listing
    assert cli_bucket in aws("s3", "ls").stdout

    head = json.loads(aws("s3api", "head-object", "--bucket", cli_bucket, "--key", "data/big.bin").stdout)
    assert head["ContentLength"] == 9 * 1024 * 1024 + 123
    assert head["ETag"].endswith('-2"')

    out = tmp_path / "out.bin"
    aws("s3", "cp", f"s3://{cli_bucket}/data/big.bin", str(out))
    assert out.read_bytes() == big.read_bytes()
    out_small = tmp_path / "out.txt"
    aws("s3", "cp", f"s3://{cli_bucket}/docs/small.txt", str(out_small))
    assert out_small.read_text() == "hello from the cli\n"

    aws("s3", "rm", f"s3://{cli_bucket}/docs/small.txt")
    after = aws("s3", "ls", f"s3://{cli_bucket}", "--recursive").stdout
    assert "docs/small.txt" not in after and "data/big.bin" in after

    missing = aws("s3api", "head-object", "--bucket", cli_bucket, "--key", "docs/small.txt", check=False)
    assert missing.returncode != 0
    assert "404" in missing.stderr


def test_sync_and_recursive_rm(cli_bucket, tmp_path):
    src = tmp_path / "tree"
    (src / "a" / "b").mkdir(parents=True)
    for i, rel in enumerate(["one.txt", "a/two.txt", "a/b/three.txt"]):
        (src / rel).write_text(f"file {i}")
    aws("s3", "sync", str(src), f"s3://{cli_bucket}/tree")
    listing = aws("s3", "ls", f"s3://{cli_bucket}/tree/", "--recursive").stdout
    assert all(k in listing for k in ["tree/one.txt", "tree/a/two.txt", "tree/a/b/three.txt"])
    aws("s3", "rm", f"s3://{cli_bucket}/tree", "--recursive")
    assert aws("s3", "ls", f"s3://{cli_bucket}", "--recursive", check=False).stdout.strip() == ""
