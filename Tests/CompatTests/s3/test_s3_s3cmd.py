"""s3cmd (Debian's package) against the emulator, configured only by its own config file in a temp dir.

s3cmd signs with its own SigV4 code (not an AWS SDK). It falls back to SigV2 silently on some errors;
every command here runs with --debug and the test fails if that fallback ever happened, so what is
tested is its SigV4 signer. `signurl` is SigV2 query-string signing in s3cmd 2.x (that is all it has).
"""
import hashlib
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
import uuid

import boto3
import pytest
from botocore.config import Config

from cli_runner import run_cli
from hearthharness import start_hearth, stop_hearth
from loopback_proxy import LoopbackProxy

S3CMD = shutil.which("s3cmd")
pytestmark = pytest.mark.skipif(S3CMD is None, reason="s3cmd is not installed (Debian package s3cmd)")


def s3cmd_for(s3_url, tmp_path, host_bucket=None, proxy_port=None):
    """Runs s3cmd against the S3 endpoint at `s3_url` with a config file of its own in `tmp_path`;
    path-style unless `host_bucket` has a `%(bucket)s`."""
    host = urllib.parse.urlparse(s3_url).netloc
    cfg = tmp_path / "s3cfg"
    cfg.write_text(
        "[default]\n"
        f"access_key = {os.environ['AWS_ACCESS_KEY_ID']}\n"
        f"secret_key = {os.environ['AWS_SECRET_ACCESS_KEY']}\n"
        f"host_base = {host}\n"
        f"host_bucket = {host_bucket or host}\n"
        f"bucket_location = {os.environ.get('AWS_REGION', 'us-east-1')}\n"
        "use_https = False\n"
        "signature_v2 = False\n"
        + (f"proxy_host = 127.0.0.1\nproxy_port = {proxy_port}\n" if proxy_port else "")
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}

    def run(*args, check=True):
        r = run_cli([S3CMD, "-c", str(cfg), "--debug", *args], env, check=check)
        assert "Falling back to signature v2" not in r.stderr, f"s3cmd {args} fell back to SigV2"
        return r

    return run


@pytest.fixture
def s3cmd(tmp_path):
    return s3cmd_for(os.environ["HEARTH_S3_URL"], tmp_path)


@pytest.fixture
def bucket(s3cmd):
    name = "s3cmd-" + uuid.uuid4().hex[:16]
    s3cmd("mb", f"s3://{name}")
    yield name
    s3cmd("rb", "--recursive", "--force", f"s3://{name}", check=False)


def test_put_get_info_ls_la(s3cmd, bucket, tmp_path):
    small = tmp_path / "small.txt"
    small.write_bytes(b"hello from s3cmd\n")
    big = tmp_path / "big.bin"
    big_bytes = os.urandom(11 * 1024 * 1024 + 5)  # three 5 MiB parts
    big.write_bytes(big_bytes)

    s3cmd("put", str(small), f"s3://{bucket}/docs/small.txt")
    up = s3cmd("put", "--multipart-chunk-size-mb=5", str(big), f"s3://{bucket}/data/big.bin")
    assert "partNumber=3&" in up.stderr and "partNumber=4&" not in up.stderr  # debug log of each request

    top = s3cmd("ls", f"s3://{bucket}").stdout
    assert f"DIR  s3://{bucket}/docs/" in top and f"DIR  s3://{bucket}/data/" in top
    deep = s3cmd("ls", "--recursive", f"s3://{bucket}").stdout
    assert f"{len(big_bytes)}  s3://{bucket}/data/big.bin" in deep
    assert f"s3://{bucket}/docs/small.txt" in deep
    assert f"s3://{bucket}" in s3cmd("ls").stdout
    assert f"DIR  s3://{bucket}/data/" in s3cmd("la").stdout  # every bucket, one level each

    info = s3cmd("info", f"s3://{bucket}/data/big.bin").stdout
    assert f"File size: {len(big_bytes)}" in info
    assert hashlib.md5(big_bytes).hexdigest() in info  # s3cmd's own md5 attribute, read back
    binfo = s3cmd("info", f"s3://{bucket}").stdout
    assert "Location:" in binfo

    out = tmp_path / "out.bin"
    got = s3cmd("get", str(f"s3://{bucket}/data/big.bin"), str(out))
    assert out.read_bytes() == big_bytes
    assert "MD5 signatures do not match" not in got.stderr + got.stdout
    out_small = tmp_path / "out.txt"
    got = s3cmd("get", f"s3://{bucket}/docs/small.txt", str(out_small))
    assert out_small.read_bytes() == small.read_bytes()
    assert "MD5 signatures do not match" not in got.stderr + got.stdout

    s3cmd("put", "--mime-type=text/x-note", "--add-header=x-amz-meta-colour:blue", str(small), f"s3://{bucket}/meta.txt")
    s3cmd("modify", "--add-header=Cache-Control:max-age=60", f"s3://{bucket}/meta.txt")  # copy onto itself, REPLACE
    head = boto3.client("s3", config=Config(retries={"max_attempts": 1})).head_object(Bucket=bucket, Key="meta.txt")
    assert head["ContentType"] == "text/x-note" and head["Metadata"]["colour"] == "blue"
    assert head["CacheControl"] == "max-age=60"
    assert s3cmd("du", f"s3://{bucket}").stdout.split()[:2] == [str(2 * len(small.read_bytes()) + len(big_bytes)), "3"]

    missing = s3cmd("get", f"s3://{bucket}/docs/none.txt", str(tmp_path / "none"), check=False)
    assert missing.returncode != 0 and "404" in missing.stderr


def test_cp_mv_del_sync_rb(s3cmd, bucket, tmp_path):
    (tmp_path / "one.txt").write_text("one")
    s3cmd("put", str(tmp_path / "one.txt"), f"s3://{bucket}/one.txt")
    s3cmd("cp", f"s3://{bucket}/one.txt", f"s3://{bucket}/copy/one.txt")
    s3cmd("mv", f"s3://{bucket}/copy/one.txt", f"s3://{bucket}/moved/one.txt")
    keys = s3cmd("ls", "--recursive", f"s3://{bucket}").stdout
    assert "moved/one.txt" in keys and "copy/one.txt" not in keys
    s3cmd("del", f"s3://{bucket}/moved/one.txt")
    assert "moved/one.txt" not in s3cmd("ls", "--recursive", f"s3://{bucket}").stdout

    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    for rel in ["x.txt", "a/y.txt", "a/z.txt"]:
        (tree / rel).write_text(rel)
    s3cmd("sync", f"{tree}/", f"s3://{bucket}/tree/")
    (tree / "a" / "z.txt").unlink()
    (tree / "x.txt").write_text("x changed")
    s3cmd("sync", "--delete-removed", f"{tree}/", f"s3://{bucket}/tree/")
    listing = s3cmd("ls", "--recursive", f"s3://{bucket}/tree/").stdout
    assert "tree/x.txt" in listing and "tree/a/y.txt" in listing and "tree/a/z.txt" not in listing
    back = tmp_path / "back"
    s3cmd("sync", f"s3://{bucket}/tree/", f"{back}/")
    assert (back / "x.txt").read_text() == "x changed" and (back / "a" / "y.txt").read_text() == "a/y.txt"

    # rb refuses a bucket with objects in it (BucketNotEmpty), then succeeds once emptied.
    full = s3cmd("rb", f"s3://{bucket}", check=False)
    assert full.returncode != 0 and "BucketNotEmpty" in full.stderr
    s3cmd("del", "--recursive", "--force", f"s3://{bucket}/")
    s3cmd("del", f"s3://{bucket}/one.txt", check=False)
    s3cmd("rb", f"s3://{bucket}")
    assert f"s3://{bucket}" not in s3cmd("ls").stdout


def test_virtual_hosted_style(tmp_path):
    # `<bucket>.localhost` reaches the emulator through a proxy (the resolver here does not answer it).
    port = urllib.parse.urlparse(os.environ["HEARTH_S3_URL"]).port
    proxy = LoopbackProxy(port)
    try:
        s3cmd = s3cmd_for(f"http://localhost:{port}", tmp_path, host_bucket=f"%(bucket)s.localhost:{port}",
                          proxy_port=proxy.port)
        name = "s3cmdvh-" + uuid.uuid4().hex[:12]
        s3cmd("mb", f"s3://{name}")
        data = os.urandom(6 * 1024 * 1024 + 1)
        (tmp_path / "f.bin").write_bytes(data)
        up = s3cmd("put", "--multipart-chunk-size-mb=5", str(tmp_path / "f.bin"), f"s3://{name}/f.bin")
        assert f"get_hostname({name}): {name}.localhost:{port}" in up.stderr
        s3cmd("get", f"s3://{name}/f.bin", str(tmp_path / "back.bin"))
        assert (tmp_path / "back.bin").read_bytes() == data
        assert f"s3://{name}/f.bin" in s3cmd("ls", f"s3://{name}").stdout
        s3cmd("del", f"s3://{name}/f.bin")
        s3cmd("rb", f"s3://{name}")
        assert proxy.requests > 5
    finally:
        proxy.close()


def test_signurl_is_sigv2_refused_like_new_buckets(s3cmd, bucket, tmp_path):
    # s3cmd 2.x presigns only with SigV2, which S3 refuses for buckets created since June 2020.
    (tmp_path / "pub.txt").write_text("shared by url")
    s3cmd("put", str(tmp_path / "pub.txt"), f"s3://{bucket}/pub.txt")
    url = s3cmd("signurl", f"s3://{bucket}/pub.txt", "+600").stdout.strip()
    assert url.startswith(os.environ["HEARTH_S3_URL"] + f"/{bucket}/pub.txt?AWSAccessKeyId=")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(url, timeout=10)
    assert e.value.code == 400 and b"<Code>InvalidRequest</Code>" in e.value.read()


def test_signurl_with_legacy_sigv2(tmp_path):
    proc, ready, _ = start_hearth(["--s3-allow-sigv2"])
    try:
        url_base = ready["services"]["s3"]["url"]
        s3cmd = s3cmd_for(url_base, tmp_path)
        s3cmd("mb", "s3://legacy")
        (tmp_path / "pub.txt").write_text("shared by url")
        s3cmd("put", str(tmp_path / "pub.txt"), "s3://legacy/pub.txt")
        url = s3cmd("signurl", "s3://legacy/pub.txt", "+600").stdout.strip()
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.read() == b"shared by url"
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url.replace("pub.txt", "pub.txt2"), timeout=10)
        assert e.value.code == 403
    finally:
        stop_hearth(proc)


def test_setacl_public_and_private(s3cmd, bucket, tmp_path):
    (tmp_path / "pub.txt").write_text("public for a while")
    s3cmd("put", str(tmp_path / "pub.txt"), f"s3://{bucket}/pub.txt")
    # A new bucket is BucketOwnerEnforced, as S3's have been since April 2023: ACLs are refused.
    refused = s3cmd("setacl", "--acl-public", f"s3://{bucket}/pub.txt", check=False)
    assert refused.returncode != 0 and "AccessControlListNotSupported" in refused.stderr
    assert "ACL:       " in s3cmd("info", f"s3://{bucket}/pub.txt").stdout  # GetObjectAcl still answers

    # What a user does first on S3 (s3cmd cannot): ObjectWriter ownership, public ACLs unblocked.
    s3 = boto3.client("s3", config=Config(retries={"max_attempts": 1}))
    s3.put_bucket_ownership_controls(Bucket=bucket,
                                     OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    s3.delete_public_access_block(Bucket=bucket)

    plain = f"{os.environ['HEARTH_S3_URL']}/{bucket}/pub.txt"
    with pytest.raises(urllib.error.HTTPError) as e:  # an anonymous GET of a private object
        urllib.request.urlopen(plain, timeout=10)
    assert e.value.code == 403
    s3cmd("setacl", "--acl-public", f"s3://{bucket}/pub.txt")
    assert "*anon*: READ" in s3cmd("info", f"s3://{bucket}/pub.txt").stdout
    with urllib.request.urlopen(plain, timeout=10) as r:
        assert r.read() == b"public for a while"
    s3cmd("setacl", "--acl-private", f"s3://{bucket}/pub.txt")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(plain, timeout=10)
    assert e.value.code == 403


def test_restore(s3cmd, bucket, tmp_path):
    """`s3cmd restore`: an archived object is refused by `get` until restored; a STANDARD one cannot be
    restored (S3's 403 InvalidObjectState, which s3cmd reports as an error)."""
    src = tmp_path / "cold.txt"
    src.write_bytes(b"kept in the archive\n")
    s3cmd("put", "--storage-class=GLACIER", str(src), f"s3://{bucket}/cold.txt")
    s3cmd("put", str(src), f"s3://{bucket}/warm.txt")
    out = tmp_path / "out.txt"

    refused = s3cmd("get", f"s3://{bucket}/cold.txt", str(out), check=False)
    assert refused.returncode != 0 and "InvalidObjectState" in refused.stderr, refused.stderr[-2000:]

    r = s3cmd("restore", "--restore-days=3", "--restore-priority=bulk", f"s3://{bucket}/cold.txt")
    assert f"restore: 's3://{bucket}/cold.txt'" in r.stdout
    assert "'status': 202" in r.stderr  # the response, in s3cmd's debug log
    s3cmd("get", "--force", f"s3://{bucket}/cold.txt", str(out))
    assert out.read_bytes() == b"kept in the archive\n"

    standard = s3cmd("restore", f"s3://{bucket}/warm.txt", check=False)
    assert standard.returncode != 0
    assert "403 (InvalidObjectState): Restore is not allowed for the object's current storage class" in standard.stderr, standard.stderr[-2000:]
