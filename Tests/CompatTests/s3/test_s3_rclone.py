"""rclone (Debian's package) against the emulator, as a user would drive it: a remote of provider
`Other` in a config file of its own, path-style addressing, multipart forced by small cutoffs.

rclone signs with aws-sdk-go (SigV4), checks every upload's MD5 against the ETag (single part) or
its own `X-Amz-Meta-Md5chksum` (multipart), and lists with ListObjects v2 unless told v1.
"""
import hashlib
import json
import os
import shutil
import urllib.parse
import uuid

import pytest

from cli_runner import run_cli
from loopback_proxy import LoopbackProxy

RCLONE = shutil.which("rclone")
pytestmark = pytest.mark.skipif(RCLONE is None, reason="rclone is not installed (Debian package rclone)")


def rclone_for(tmp_path, endpoint, path_style=True, proxy=None):
    """Runs rclone with remote `hearth:` at `endpoint` from a config file in `tmp_path`."""
    conf = tmp_path / "rclone.conf"
    conf.write_text(
        "[hearth]\n"
        "type = s3\n"
        "provider = Other\n"
        f"access_key_id = {os.environ['AWS_ACCESS_KEY_ID']}\n"
        f"secret_access_key = {os.environ['AWS_SECRET_ACCESS_KEY']}\n"
        f"endpoint = {endpoint}\n"
        f"region = {os.environ.get('AWS_REGION', 'us-east-1')}\n"
        f"force_path_style = {str(path_style).lower()}\n"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "RCLONE_CONFIG": str(conf)}
    if proxy:
        env["HTTP_PROXY"] = proxy

    def run(*args, check=True, input=None):
        return run_cli([RCLONE, "--config", str(conf), "--retries", "1", "--low-level-retries", "1",
                        "--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", *args], env, check=check, input=input)

    return run


@pytest.fixture
def rclone(tmp_path):
    return rclone_for(tmp_path, os.environ["HEARTH_S3_URL"])


@pytest.fixture
def remote(rclone):
    name = "rc-" + uuid.uuid4().hex[:16]
    rclone("mkdir", f"hearth:{name}")
    yield f"hearth:{name}"
    rclone("purge", f"hearth:{name}", check=False)


def md5(data):
    return hashlib.md5(data).hexdigest()


def test_copy_list_hashes_check_cat(rclone, remote, tmp_path):
    src = tmp_path / "src"
    (src / "dir").mkdir(parents=True)
    small = b"hello from rclone\n"
    big = os.urandom(11 * 1024 * 1024 + 7)  # above the 5 MiB cutoff: three parts
    (src / "small.txt").write_bytes(small)
    (src / "dir" / "big.bin").write_bytes(big)

    rclone("copy", str(src), remote)

    listing = {e["Path"]: e for e in json.loads(rclone("lsjson", "-R", "--hash", "--files-only", remote).stdout)}
    assert set(listing) == {"small.txt", "dir/big.bin"}
    assert listing["small.txt"]["Size"] == len(small)
    assert listing["dir/big.bin"]["Size"] == len(big)
    # The single-part MD5 is the ETag; the multipart one rclone stored as metadata and reads back.
    assert listing["small.txt"]["Hashes"]["md5"] == md5(small)
    assert listing["dir/big.bin"]["Hashes"]["md5"] == md5(big)

    sums = dict(reversed(line.split("  ", 1)) for line in rclone("md5sum", remote).stdout.splitlines())
    assert sums == {"small.txt": md5(small), "dir/big.bin": md5(big)}
    sizes = dict(reversed(line.split()) for line in rclone("ls", remote).stdout.splitlines())
    assert sizes == {"small.txt": str(len(small)), "dir/big.bin": str(len(big))}

    # rclone's presigned PUT (its default before 1.59) sends Content-Length twice, once as signed.
    rclone("copyto", str(src / "small.txt"), f"{remote}/presigned.txt", "--s3-use-presigned-request")
    assert rclone("cat", f"{remote}/presigned.txt").stdout == small.decode()
    rclone("delete", f"{remote}/presigned.txt")

    rclone("check", str(src), remote)  # sizes and hashes both ways
    assert rclone("cat", f"{remote}/small.txt").stdout == small.decode()
    out = tmp_path / "out"
    rclone("copy", remote, str(out))
    assert (out / "dir" / "big.bin").read_bytes() == big

    # A changed local file makes `check` fail: it really compares.
    (src / "small.txt").write_bytes(b"hello from rclone?\n")
    bad = rclone("check", str(src), remote, check=False)
    assert bad.returncode != 0 and "small.txt" in bad.stderr


def test_sync_deletes_copyto_moveto_delete_rmdir(rclone, remote, tmp_path):
    src = tmp_path / "tree"
    (src / "a").mkdir(parents=True)
    for rel in ["one.txt", "a/two.txt", "a/three.txt"]:
        (src / rel).write_text(rel)
    rclone("sync", str(src), f"{remote}/tree")
    (src / "a" / "three.txt").unlink()
    (src / "four.txt").write_text("four")
    rclone("sync", str(src), f"{remote}/tree")
    files = sorted(rclone("lsf", "-R", "--files-only", f"{remote}/tree").stdout.split())
    assert files == ["a/two.txt", "four.txt", "one.txt"]

    rclone("copyto", f"{remote}/tree/one.txt", f"{remote}/copied/uno.txt")  # server-side copy
    assert rclone("cat", f"{remote}/copied/uno.txt").stdout == "one.txt"
    rclone("moveto", f"{remote}/copied/uno.txt", f"{remote}/moved/eins.txt")
    assert rclone("cat", f"{remote}/moved/eins.txt").stdout == "one.txt"
    # S3 has no directories, so rclone answers a missing key as an empty one: look at the listing.
    assert sorted(rclone("lsf", "-R", "--files-only", remote).stdout.split()) == \
        ["moved/eins.txt", "tree/a/two.txt", "tree/four.txt", "tree/one.txt"]

    rclone("delete", f"{remote}/tree")
    assert rclone("lsf", "-R", f"{remote}/tree").stdout.strip() == ""
    rclone("rcat", f"{remote}/piped.txt", input="from stdin\n")  # streamed upload, size unknown
    assert rclone("cat", f"{remote}/piped.txt").stdout == "from stdin\n"
    # rmdir refuses a bucket that still holds objects; purge empties and removes it.
    assert rclone("rmdir", remote, check=False).returncode != 0
    rclone("purge", remote)
    assert remote.split(":", 1)[1] not in rclone("lsd", "hearth:").stdout


def test_versions_and_list_v1_pages(rclone, remote, tmp_path):
    assert rclone("backend", "versioning", remote, "Enabled").stdout.strip() == "Enabled"
    f = tmp_path / "v.txt"
    for text in ["first\n", "second!\n"]:
        f.write_text(text)
        rclone("copyto", str(f), f"{remote}/v.txt")
    entries = sorted(line.split() for line in rclone("ls", "--s3-versions", remote).stdout.splitlines())
    assert len(entries) == 2 and ["8", "v.txt"] in entries
    old = next(name for size, name in entries if name != "v.txt")
    assert old.startswith("v-v") and rclone("cat", "--s3-versions", f"{remote}/{old}").stdout == "first\n"
    # ListObjects v1 with one key per page: markers carry the listing across pages.
    for i in range(3):
        rclone("rcat", f"{remote}/d/{i}.txt", input=str(i))
    names = sorted(rclone("lsf", "-R", "--s3-list-version", "1", "--s3-list-chunk", "1", remote).stdout.split())
    assert names == ["d/", "d/0.txt", "d/1.txt", "d/2.txt", "v.txt"]


def test_virtual_hosted_style(tmp_path):
    # `<bucket>.localhost` reaches the emulator through a proxy (the resolver here does not answer it).
    port = urllib.parse.urlparse(os.environ["HEARTH_S3_URL"]).port
    proxy = LoopbackProxy(port)
    try:
        rclone = rclone_for(tmp_path, f"http://localhost:{port}", path_style=False, proxy=f"http://127.0.0.1:{proxy.port}")
        name = "rcvh-" + uuid.uuid4().hex[:12]
        rclone("mkdir", f"hearth:{name}")
        data = os.urandom(6 * 1024 * 1024 + 1)
        (tmp_path / "f.bin").write_bytes(data)
        rclone("copyto", str(tmp_path / "f.bin"), f"hearth:{name}/f.bin")  # multipart
        rclone("copyto", str(tmp_path / "f.bin"), f"hearth:{name}/g.bin", "--s3-upload-cutoff", "7M")
        assert sorted(rclone("md5sum", f"hearth:{name}").stdout.splitlines()) == [f"{md5(data)}  f.bin", f"{md5(data)}  g.bin"]
        rclone("purge", f"hearth:{name}")
        assert proxy.requests > 5  # they did go through the proxy, as <bucket>.localhost
    finally:
        proxy.close()


def test_missing_bucket_and_wrong_secret(rclone, tmp_path):
    missing = rclone("ls", "hearth:no-such-bucket-" + uuid.uuid4().hex[:8], check=False)
    assert missing.returncode != 0 and "directory not found" in missing.stderr.lower()
    conf = tmp_path / "rclone.conf"
    secret = f"secret_access_key = {os.environ['AWS_SECRET_ACCESS_KEY']}\n"
    conf.write_text(conf.read_text().replace(secret, "secret_access_key = wrong-secret\n"))
    denied = rclone("lsd", "hearth:", check=False)
    assert denied.returncode != 0 and "SignatureDoesNotMatch" in denied.stderr
