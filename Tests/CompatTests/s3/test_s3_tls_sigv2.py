"""Hearth instances of their own: HTTPS on the S3 port, and SigV2 validated with --s3-allow-sigv2."""
import os
import shutil
import subprocess
import tempfile

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

from hearthharness import hearth_bin, start_hearth, stop_hearth


@pytest.fixture(scope="module")
def tls_hearth():
    certs = tempfile.mkdtemp(prefix="hearth-cert-")
    made = subprocess.run([hearth_bin(), "cert", "--out-dir", certs], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    cert, key = os.path.join(certs, "hearth-cert.pem"), os.path.join(certs, "hearth-key.pem")
    proc, ready, tmp = start_hearth(["--tls-cert", cert, "--tls-key", key])
    yield ready, cert
    stop_hearth(proc)
    shutil.rmtree(certs, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)


def test_boto3_over_https_uses_aws_chunked_trailers_and_round_trips(tls_hearth):
    ready, cert = tls_hearth
    url = ready["services"]["s3"]["url"]
    assert url.startswith("https://")
    assert ready["env"]["AWS_ENDPOINT_URL_S3"] == url
    s3 = boto3.client("s3", endpoint_url=url, verify=cert, aws_access_key_id="test", aws_secret_access_key="test",
                      region_name="us-east-1")
    s3.create_bucket(Bucket="tls")
    body = os.urandom(3 * 1024 * 1024 + 17)
    s3.put_object(Bucket="tls", Key="over/https.bin", Body=body)
    got = s3.get_object(Bucket="tls", Key="over/https.bin", ChecksumMode="ENABLED")
    assert got["Body"].read() == body
    assert "ChecksumCRC32" in got or "ChecksumCRC64NVME" in got or "ChecksumCRC32C" in got
    # What the client sent: the request log on the hub keeps the outcome (never the signature).
    log = requests.get(ready["services"]["hub"]["url"] + "/emulator/v1/s3/requests?limit=5").json()
    entries = log if isinstance(log, list) else log.get("requests", [])
    assert any(e.get("method") == "PUT" and e.get("status") == 200 for e in entries)


def test_presigned_put_over_https_checks_content_type(tls_hearth):
    ready, cert = tls_hearth
    url = ready["services"]["s3"]["url"]
    s3 = boto3.client("s3", endpoint_url=url, verify=cert, aws_access_key_id="test", aws_secret_access_key="test",
                      region_name="us-east-1", config=Config(signature_version="s3v4"))
    s3.create_bucket(Bucket="tls-presign")
    put = s3.generate_presigned_url("put_object", Params={"Bucket": "tls-presign", "Key": "p.jpg", "ContentType": "image/jpeg"})
    ok = requests.put(put, data=b"jpeg", headers={"Content-Type": "image/jpeg"}, verify=cert)
    assert ok.status_code == 200
    bad = requests.put(put, data=b"png", headers={"Content-Type": "image/png"}, verify=cert)
    assert bad.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in bad.text
    assert "image/jpeg" in bad.headers["x-hearth-diagnosis"] and "image/png" in bad.headers["x-hearth-diagnosis"]


@pytest.fixture(scope="module")
def sigv2_hearth():
    proc, ready, tmp = start_hearth(["--s3-allow-sigv2"])
    yield ready
    stop_hearth(proc)
    shutil.rmtree(tmp, ignore_errors=True)


def test_sigv2_is_validated_when_allowed(sigv2_hearth):
    url = sigv2_hearth["services"]["s3"]["url"]
    # boto3's default for us-east-1 presigns SigV2 query URLs.
    s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
    s3.create_bucket(Bucket="legacy")
    put = s3.generate_presigned_url("put_object", Params={"Bucket": "legacy", "Key": "a.jpg", "ContentType": "image/jpeg"})
    assert "AWSAccessKeyId=" in put
    assert requests.put(put, data=b"x", headers={"Content-Type": "image/jpeg"}).status_code == 200
    # The Content-Type bug reproduces with SigV2 URLs too.
    wrong = requests.put(put, data=b"x", headers={"Content-Type": "image/png"})
    assert wrong.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in wrong.text
    get = s3.generate_presigned_url("get_object", Params={"Bucket": "legacy", "Key": "a.jpg"})
    assert requests.get(get).content == b"x"
    # A SigV2 URL signed with another secret is refused.
    other = boto3.client("s3", endpoint_url=url, aws_access_key_id="test", aws_secret_access_key="nope", region_name="us-east-1")
    forged = other.generate_presigned_url("get_object", Params={"Bucket": "legacy", "Key": "a.jpg"})
    assert requests.get(forged).status_code == 403


def test_sigv2_expires_of_any_64_bit_number_is_judged(sigv2_hearth):
    """`Expires` is epoch seconds, any integer: 10**14 (3 million years out) is a valid URL, and one
    far in the past has expired. Each used to overflow converting to microseconds and take the
    process down before the signature was even checked."""
    url = sigv2_hearth["services"]["s3"]["url"]
    s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
    s3.create_bucket(Bucket="far")
    s3.put_object(Bucket="far", Key="k", Body=b"far bytes")
    later = s3.generate_presigned_url("get_object", Params={"Bucket": "far", "Key": "k"}, ExpiresIn=10**14)
    r = requests.get(later)
    assert r.status_code == 200 and r.content == b"far bytes", r.text
    earlier = s3.generate_presigned_url("get_object", Params={"Bucket": "far", "Key": "k"}, ExpiresIn=-10**14)
    assert "Expires=-" in earlier
    r = requests.get(earlier)
    assert r.status_code == 403 and "<Code>AccessDenied</Code>" in r.text and "Request has expired" in r.text, r.text
    assert requests.get(s3.generate_presigned_url("get_object", Params={"Bucket": "far", "Key": "k"})).content == b"far bytes"
