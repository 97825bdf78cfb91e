"""Encryption at rest and the local KMS key ring, through boto3 (docs/s3.md, *Server-side encryption*).

One hearth on a data directory (so the stored bytes can be looked for in the database files),
with `--s3-allow-ssec-http` and two configured KMS keys.
"""
import base64
import glob
import hashlib
import json
import os
import tempfile
import uuid

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

from hearthharness import start_hearth, stop_hearth

ACCESS, SECRET = "enckey", "enc-secret"


def code(e):
    return e.value.response["Error"]["Code"]


@pytest.fixture(scope="module")
def env():
    tmp = tempfile.mkdtemp(prefix="hearth-sse-")
    data = os.path.join(tmp, "data")
    config = os.path.join(tmp, "hearth.json")
    with open(config, "w") as f:
        json.dump({"s3KmsKeys": [{"keyId": "testkey-1"}, {"alias": "alias/app"}]}, f)
    proc, ready, _ = start_hearth(["--config", config, "--data-dir", data, "--s3-access-key", ACCESS,
                                   "--s3-secret-key", SECRET, "--s3-allow-ssec-http"], in_memory=False)
    s3 = boto3.client("s3", endpoint_url=ready["services"]["s3"]["url"], aws_access_key_id=ACCESS,
                      aws_secret_access_key=SECRET, region_name="us-east-1", config=Config(retries={"max_attempts": 1}))
    yield {"s3": s3, "data": data, "hub": ready["services"]["hub"]["url"], "proc": proc}
    stop_hearth(proc)


@pytest.fixture
def bucket(env):
    name = "enc-" + uuid.uuid4().hex[:16]
    env["s3"].create_bucket(Bucket=name)
    return name


def marker():
    """A recognizable run of bytes, and a body made of it (3 MiB: several chunk rows)."""
    m = ("MARK-" + uuid.uuid4().hex + "-").encode()
    return m, (m * (3 * 1024 * 1024 // len(m) + 1))[: 3 * 1024 * 1024]


def on_disk(env, needle):
    """Whether `needle` is anywhere in the database files (the main file and the WAL)."""
    for path in glob.glob(os.path.join(env["data"], "**", "*"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                if needle in f.read():
                    return True
    return False


def ssec(key):
    return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": key}


def test_sse_c_bytes_are_encrypted_with_the_clients_key(env, bucket):
    s3 = env["s3"]
    plain_marker, plain_body = marker()
    s3.put_object(Bucket=bucket, Key="plain", Body=plain_body)
    # The search finds what is stored as sent, so not finding the encrypted one means something.
    assert on_disk(env, plain_marker)

    m, body = marker()
    key = os.urandom(32)
    r = s3.put_object(Bucket=bucket, Key="secret", Body=body, **ssec(key))
    assert r["SSECustomerKeyMD5"] == base64.b64encode(hashlib.md5(key).digest()).decode()
    # S3: the ETag of an SSE-C object is not the MD5 of its data.
    assert r["ETag"].strip('"') != hashlib.md5(body).hexdigest()
    assert not on_disk(env, m)

    got = s3.get_object(Bucket=bucket, Key="secret", **ssec(key))
    assert got["Body"].read() == body and got["ETag"] == r["ETag"]
    # A range across a chunk boundary (1 MiB) decrypts just those bytes.
    start = (1 << 20) - 10
    part = s3.get_object(Bucket=bucket, Key="secret", Range=f"bytes={start}-{start + 99}", **ssec(key))
    assert part["Body"].read() == body[start:start + 100]
    assert part["ContentRange"] == f"bytes {start}-{start + 99}/{len(body)}"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="secret", **ssec(os.urandom(32)))
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="secret")
    assert code(e) == "InvalidRequest"


def test_sse_s3_and_sse_kms_are_encrypted_at_rest(env, bucket):
    s3 = env["s3"]
    m1, b1 = marker()
    r = s3.put_object(Bucket=bucket, Key="s3", Body=b1, ServerSideEncryption="AES256")
    assert r["ServerSideEncryption"] == "AES256"
    assert r["ETag"].strip('"') == hashlib.md5(b1).hexdigest()  # SSE-S3: still the MD5, as in S3

    m2, b2 = marker()
    r = s3.put_object(Bucket=bucket, Key="kms", Body=b2, ServerSideEncryption="aws:kms", SSEKMSKeyId="alias/app")
    keys = requests.get(env["hub"] + "/emulator/v1/s3/kms/keys").json()["keys"]
    app = next(k for k in keys if k.get("alias") == "alias/app")
    assert r["SSEKMSKeyId"] == app["arn"]
    assert r["ETag"].strip('"') != hashlib.md5(b2).hexdigest()

    m3, b3 = marker()
    r = s3.put_object(Bucket=bucket, Key="managed", Body=b3, ServerSideEncryption="aws:kms")
    managed = next(k for k in requests.get(env["hub"] + "/emulator/v1/s3/kms/keys").json()["keys"] if k.get("alias") == "alias/aws/s3")
    assert r["SSEKMSKeyId"] == managed["arn"] and r["SSEKMSKeyId"].startswith("arn:aws:kms:us-east-1:000000000000:key/")

    for m in (m1, m2, m3):
        assert not on_disk(env, m)
    assert s3.get_object(Bucket=bucket, Key="s3")["Body"].read() == b1
    h = s3.head_object(Bucket=bucket, Key="kms")
    assert h["ServerSideEncryption"] == "aws:kms" and h["SSEKMSKeyId"] == app["arn"]
    assert s3.get_object(Bucket=bucket, Key="kms", Range="bytes=5-20")["Body"].read() == b2[5:21]
    assert s3.get_object(Bucket=bucket, Key="managed")["Body"].read() == b3


def test_unknown_kms_keys_are_refused_as_s3_does(env, bucket):
    s3 = env["s3"]
    cases = [("nope", "Invalid keyId nope"),
             ("11111111-2222-3333-4444-555555555555",
              "Key 'arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555' does not exist"),
             ("alias/missing", "Alias arn:aws:kms:us-east-1:000000000000:alias/missing is not found."),
             ("arn:aws:kms:eu-west-1:000000000000:key/testkey-1", "Invalid arn eu-west-1")]
    for ref, message in cases:
        with pytest.raises(ClientError) as e:
            s3.put_object(Bucket=bucket, Key="k", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId=ref)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert code(e) == "KMS.NotFoundException" and e.value.response["Error"]["Message"] == message
    # A configured key works by its id.
    r = s3.put_object(Bucket=bucket, Key="k", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-1")
    assert r["SSEKMSKeyId"] == "arn:aws:kms:us-east-1:000000000000:key/testkey-1"
    # A bucket default naming an unknown key refuses the writes it applies to.
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{
        "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/gone"}}]})
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="k2", Body=b"x")
    assert code(e) == "KMS.NotFoundException"


def test_bucket_default_kms_with_bucket_key(env, bucket):
    s3 = env["s3"]
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{
        "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "testkey-1"},
        "BucketKeyEnabled": True}]})
    m, body = marker()
    r = s3.put_object(Bucket=bucket, Key="d", Body=body)
    assert r["ServerSideEncryption"] == "aws:kms" and r["BucketKeyEnabled"] is True
    assert r["SSEKMSKeyId"].endswith(":key/testkey-1")
    h = s3.head_object(Bucket=bucket, Key="d")
    assert h["BucketKeyEnabled"] is True and h["SSEKMSKeyId"] == r["SSEKMSKeyId"]
    assert not on_disk(env, m)
    assert s3.get_object(Bucket=bucket, Key="d")["Body"].read() == body


def test_multipart_and_part_copy_stay_encrypted(env, bucket):
    s3 = env["s3"]
    key = os.urandom(32)
    m, body = marker()
    src_marker, src = marker()
    s3.put_object(Bucket=bucket, Key="src", Body=src, ServerSideEncryption="aws:kms", SSEKMSKeyId="testkey-1")
    part1 = (body * 2)[: 5 * 1024 * 1024]
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", **ssec(key))
    uid = up["UploadId"]
    # A part without the upload's key is refused, also for UploadPartCopy.
    with pytest.raises(ClientError) as e:
        s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=1, Body=part1)
    assert code(e) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        s3.upload_part_copy(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=2, CopySource={"Bucket": bucket, "Key": "src"})
    assert code(e) == "InvalidRequest"
    p1 = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=1, Body=part1, **ssec(key))
    p2 = s3.upload_part_copy(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=2, CopySource={"Bucket": bucket, "Key": "src"},
                             CopySourceRange="bytes=100-1048675", **ssec(key))
    done = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=uid, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]}, **ssec(key))
    assert done["ETag"].endswith('-2"')
    # Completing with another SSE-C key than the upload's is refused (S3 needs none without a checksum).
    other = s3.create_multipart_upload(Bucket=bucket, Key="mp2", **ssec(key))["UploadId"]
    q = s3.upload_part(Bucket=bucket, Key="mp2", UploadId=other, PartNumber=1, Body=b"x", **ssec(key))
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="mp2", UploadId=other, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": q["ETag"]}]}, **ssec(os.urandom(32)))
    assert code(e) == "InvalidRequest"
    expected = part1 + src[100:1048676]
    got = s3.get_object(Bucket=bucket, Key="mp", **ssec(key))["Body"].read()
    assert got == expected
    edge = len(part1) - 7
    assert s3.get_object(Bucket=bucket, Key="mp", Range=f"bytes={edge}-{edge + 20}", **ssec(key))["Body"].read() == expected[edge:edge + 21]
    assert s3.get_object(Bucket=bucket, Key="mp", PartNumber=2, **ssec(key))["Body"].read() == src[100:1048676]
    assert not on_disk(env, m) and not on_disk(env, src_marker)


def test_copies_re_encrypt_between_modes(env, bucket):
    s3 = env["s3"]
    k1, k2 = os.urandom(32), os.urandom(32)
    m, body = marker()
    s3.put_object(Bucket=bucket, Key="c", Body=body, **ssec(k1))
    # SSE-C → SSE-KMS: readable without any key afterwards.
    r = s3.copy_object(Bucket=bucket, Key="kms", CopySource={"Bucket": bucket, "Key": "c"}, ServerSideEncryption="aws:kms",
                       CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=k1)
    assert r["ServerSideEncryption"] == "aws:kms"
    assert s3.get_object(Bucket=bucket, Key="kms")["Body"].read() == body
    # SSE-KMS → SSE-C with another key: only that key reads it.
    s3.copy_object(Bucket=bucket, Key="c2", CopySource={"Bucket": bucket, "Key": "kms"}, **ssec(k2))
    assert s3.get_object(Bucket=bucket, Key="c2", **ssec(k2))["Body"].read() == body
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c2", **ssec(k1))
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    # Plain → SSE-S3 and SSE-C → plain rewrite the bytes.
    s3.put_object(Bucket=bucket, Key="p", Body=b"plain text")
    s3.copy_object(Bucket=bucket, Key="p-enc", CopySource={"Bucket": bucket, "Key": "p"}, ServerSideEncryption="AES256")
    assert s3.get_object(Bucket=bucket, Key="p-enc")["Body"].read() == b"plain text"
    r = s3.copy_object(Bucket=bucket, Key="back", CopySource={"Bucket": bucket, "Key": "c"},
                       CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=k1)
    assert r["CopyObjectResult"]["ETag"].strip('"') == hashlib.md5(body).hexdigest()
    assert s3.get_object(Bucket=bucket, Key="back")["Body"].read() == body


def test_export_and_import_keep_encrypted_objects(env, bucket):
    s3 = env["s3"]
    key = os.urandom(32)
    s3.put_object(Bucket=bucket, Key="c", Body=b"customer secret", **ssec(key))
    s3.put_object(Bucket=bucket, Key="k", Body=b"kms secret", ServerSideEncryption="aws:kms", SSEKMSKeyId="alias/app")
    out = tempfile.mkdtemp(prefix="hearth-sse-export-")
    r = requests.post(env["hub"] + "/emulator/v1/export", json={"path": out})
    assert r.status_code == 200, r.text
    # SSE-KMS comes out as plain bytes; SSE-C stays sealed (Hearth never had the key to open it).
    files = {os.path.basename(p): open(p, "rb").read() for p in glob.glob(os.path.join(out, "s3", "objects", bucket, "*"))}
    assert files["k"] == b"kms secret"
    assert b"customer secret" not in files["c"]

    tmp = tempfile.mkdtemp(prefix="hearth-sse-import-")
    proc, ready, _ = start_hearth(["--import", out, "--s3-access-key", ACCESS, "--s3-secret-key", SECRET, "--s3-allow-ssec-http"])
    try:
        c = boto3.client("s3", endpoint_url=ready["services"]["s3"]["url"], aws_access_key_id=ACCESS,
                         aws_secret_access_key=SECRET, region_name="us-east-1", config=Config(retries={"max_attempts": 1}))
        assert c.get_object(Bucket=bucket, Key="c", **ssec(key))["Body"].read() == b"customer secret"
        with pytest.raises(ClientError):
            c.get_object(Bucket=bucket, Key="c", **ssec(os.urandom(32)))
        h = c.head_object(Bucket=bucket, Key="k")
        assert h["ServerSideEncryption"] == "aws:kms"
        assert c.get_object(Bucket=bucket, Key="k")["Body"].read() == b"kms secret"
    finally:
        stop_hearth(proc)


def test_configured_keys_survive_a_restart_and_the_hub_creates_keys():
    tmp = tempfile.mkdtemp(prefix="hearth-sse-restart-")
    data, config = os.path.join(tmp, "data"), os.path.join(tmp, "hearth.json")
    with open(config, "w") as f:
        json.dump({"s3KmsKeys": [{"alias": "alias/app"}, {"keyId": "fixed"}]}, f)
    args = ["--config", config, "--data-dir", data]
    keys = []
    for _ in range(2):
        proc, ready, _ = start_hearth(args, in_memory=False)
        try:
            hub = ready["services"]["hub"]["url"]
            keys.append(requests.get(hub + "/emulator/v1/s3/kms/keys").json()["keys"])
            if len(keys) == 1:
                r = requests.post(hub + "/emulator/v1/s3/kms/keys", json={"alias": "alias/extra", "description": "made by a test"})
                assert r.status_code == 200 and r.json()["alias"] == "alias/extra"
                assert requests.post(hub + "/emulator/v1/s3/kms/keys", json={"alias": "aws/s3"}).status_code == 400
                assert requests.post(hub + "/emulator/v1/s3/kms/keys", json={"accessKeyId": "nobody"}).status_code == 400
        finally:
            stop_hearth(proc)
    first = {k["keyId"]: k.get("alias") for k in keys[0]}
    second = {k["keyId"]: k.get("alias") for k in keys[1]}
    assert set(first.values()) == {"alias/app", None}
    assert "fixed" in first and set(second.items()) >= set(first.items())
    assert "alias/extra" in second.values()
