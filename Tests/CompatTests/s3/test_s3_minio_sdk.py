"""The MinIO Python SDK (`minio` from PyPI) against the emulator: its own SigV4 signer (not botocore),
path-style for an IP endpoint, region found with GetBucketLocation, streaming multipart for streams of
unknown length.
"""
import hashlib
import io
import json
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import timedelta

import boto3
import pytest
from botocore.config import Config

minio = pytest.importorskip("minio", reason="the minio SDK is not installed (Tests/CompatTests/requirements.txt)")
from minio.commonconfig import ENABLED, GOVERNANCE, CopySource, Filter, Tags  # noqa: E402
from minio.deleteobjects import DeleteObject  # noqa: E402
from minio.error import S3Error  # noqa: E402
from minio.lifecycleconfig import Expiration, LifecycleConfig, Rule  # noqa: E402
from minio.objectlockconfig import DAYS, ObjectLockConfig  # noqa: E402
from minio.versioningconfig import VersioningConfig  # noqa: E402

MiB = 1024 * 1024


@pytest.fixture
def client():
    return minio.Minio(urllib.parse.urlparse(os.environ["HEARTH_S3_URL"]).netloc,
                       access_key=os.environ["AWS_ACCESS_KEY_ID"], secret_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                       secure=False)


@pytest.fixture
def bucket(client):
    name = "minio-" + uuid.uuid4().hex[:16]
    assert not client.bucket_exists(name)
    client.make_bucket(name)
    yield name
    try:
        for o in client.list_objects(name, recursive=True, include_version=True):
            client.remove_object(name, o.object_name, version_id=o.version_id)
        client.remove_bucket(name)
    except S3Error:
        pass


def test_put_get_stat_multipart(client, bucket, tmp_path):
    assert client.bucket_exists(bucket)
    assert bucket in [b.name for b in client.list_buckets()]

    r = client.put_object(bucket, "small.txt", io.BytesIO(b"hello minio"), 11, content_type="text/plain",
                          metadata={"x-amz-meta-colour": "blue"})
    assert r.etag == hashlib.md5(b"hello minio").hexdigest()
    st = client.stat_object(bucket, "small.txt")
    assert st.size == 11 and st.content_type == "text/plain" and st.etag == r.etag
    assert st.metadata["x-amz-meta-colour"] == "blue"
    resp = client.get_object(bucket, "small.txt")
    try:
        assert resp.read() == b"hello minio"
    finally:
        resp.close()
        resp.release_conn()
    resp = client.get_object(bucket, "small.txt", offset=6, length=3)
    assert resp.read() == b"min"
    resp.close()
    resp.release_conn()

    # A stream of unknown length with 5 MiB parts: multipart, three parts.
    big = os.urandom(12 * MiB + 3)
    r = client.put_object(bucket, "big.bin", io.BytesIO(big), -1, part_size=5 * MiB)
    assert r.etag.endswith("-3")
    assert client.stat_object(bucket, "big.bin").size == len(big)
    resp = client.get_object(bucket, "big.bin")
    assert resp.read() == big
    resp.close()
    resp.release_conn()

    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(200_000))
    client.fput_object(bucket, "dir/f.bin", str(src))
    client.fget_object(bucket, "dir/f.bin", str(tmp_path / "back.bin"))
    assert (tmp_path / "back.bin").read_bytes() == src.read_bytes()

    with pytest.raises(S3Error) as e:
        client.stat_object(bucket, "missing")
    assert e.value.code == "NoSuchKey"
    with pytest.raises(S3Error) as e:
        client.get_object(bucket, "missing")
    assert e.value.code == "NoSuchKey"


def test_list_copy_remove(client, bucket):
    for key in ["a/1", "a/2", "a/b/3", "c/4", "top"]:
        client.put_object(bucket, key, io.BytesIO(key.encode()), len(key))
    assert sorted(o.object_name for o in client.list_objects(bucket)) == ["a/", "c/", "top"]
    assert sorted(o.object_name for o in client.list_objects(bucket, prefix="a/")) == ["a/1", "a/2", "a/b/"]
    assert sorted(o.object_name for o in client.list_objects(bucket, recursive=True)) == \
        ["a/1", "a/2", "a/b/3", "c/4", "top"]
    assert [o.object_name for o in client.list_objects(bucket, recursive=True, use_api_v1=True, prefix="a/")] == \
        ["a/1", "a/2", "a/b/3"]
    assert [o.object_name for o in client.list_objects(bucket, recursive=True, start_after="a/2")] == \
        ["a/b/3", "c/4", "top"]
    sizes = {o.object_name: o.size for o in client.list_objects(bucket, recursive=True)}
    assert sizes["a/b/3"] == 5

    client.copy_object(bucket, "copied", CopySource(bucket, "a/b/3"))
    resp = client.get_object(bucket, "copied")
    assert resp.read() == b"a/b/3"
    resp.close()
    resp.release_conn()

    client.remove_object(bucket, "copied")
    errors = list(client.remove_objects(bucket, [DeleteObject(k) for k in ["a/1", "a/2", "a/b/3", "c/4"]]))
    assert errors == []
    assert [o.object_name for o in client.list_objects(bucket, recursive=True)] == ["top"]

    with pytest.raises(S3Error) as e:
        client.remove_bucket(bucket)
    assert e.value.code == "BucketNotEmpty"


def test_presigned_urls_tags_versioning(client, bucket):
    put_url = client.presigned_put_object(bucket, "up.txt", expires=timedelta(minutes=5))
    req = urllib.request.Request(put_url, data=b"via presigned put", method="PUT")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    get_url = client.presigned_get_object(bucket, "up.txt", expires=timedelta(minutes=5))
    with urllib.request.urlopen(get_url, timeout=10) as r:
        assert r.read() == b"via presigned put"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(get_url.replace("X-Amz-Signature=", "X-Amz-Signature=0"), timeout=10)
    assert e.value.code == 403

    tags = Tags.new_object_tags()
    tags["project"] = "hearth"
    tags["stage"] = "test"
    client.set_object_tags(bucket, "up.txt", tags)
    assert dict(client.get_object_tags(bucket, "up.txt")) == {"project": "hearth", "stage": "test"}
    client.delete_object_tags(bucket, "up.txt")
    assert not client.get_object_tags(bucket, "up.txt")

    client.set_bucket_versioning(bucket, VersioningConfig(ENABLED))
    assert client.get_bucket_versioning(bucket).status == ENABLED
    v1 = client.put_object(bucket, "v.txt", io.BytesIO(b"one"), 3).version_id
    v2 = client.put_object(bucket, "v.txt", io.BytesIO(b"two"), 3).version_id
    assert v1 and v2 and v1 != v2
    resp = client.get_object(bucket, "v.txt", version_id=v1)
    assert resp.read() == b"one"
    resp.close()
    resp.release_conn()
    versions = [o.version_id for o in client.list_objects(bucket, prefix="v.txt", include_version=True)]
    assert sorted(versions) == sorted([v1, v2])


def test_bucket_configurations_and_object_lock(client, bucket):
    client.make_bucket(bucket)  # us-east-1 answers 200 to its owner re-creating a bucket (S3's legacy rule)

    public = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": ["*"]},
              "Action": ["s3:GetObject"], "Resource": [f"arn:aws:s3:::{bucket}/*"]}]}
    with pytest.raises(S3Error) as e:  # a new bucket blocks public policies, as on S3
        client.set_bucket_policy(bucket, json.dumps(public))
    assert e.value.code == "AccessDenied" and "BlockPublicPolicy" in e.value.message
    with pytest.raises(S3Error) as e:
        client.get_bucket_policy(bucket)
    assert e.value.code == "NoSuchBucketPolicy"

    tags = Tags.new_bucket_tags()
    tags["team"] = "storage"
    client.set_bucket_tags(bucket, tags)
    assert dict(client.get_bucket_tags(bucket)) == {"team": "storage"}
    client.delete_bucket_tags(bucket)
    assert client.get_bucket_tags(bucket) is None  # NoSuchTagSet, which the SDK answers as None

    rule = Rule(ENABLED, rule_filter=Filter(prefix="logs/"), rule_id="expire-logs", expiration=Expiration(days=3))
    client.set_bucket_lifecycle(bucket, LifecycleConfig([rule]))
    got = client.get_bucket_lifecycle(bucket).rules[0]
    assert (got.rule_id, got.rule_filter.prefix, got.expiration.days) == ("expire-logs", "logs/", 3)
    client.delete_bucket_lifecycle(bucket)
    assert client.get_bucket_lifecycle(bucket) is None
    assert client.get_bucket_encryption(bucket).rule.sse_algorithm == "AES256"  # SSE-S3 by default

    locked = bucket + "-lock"
    client.make_bucket(locked, object_lock=True)
    client.set_object_lock_config(locked, ObjectLockConfig(GOVERNANCE, 1, DAYS))
    assert client.get_object_lock_config(locked).duration == 1
    version = client.put_object(locked, "k", io.BytesIO(b"kept"), 4).version_id
    assert client.get_object_retention(locked, "k").mode == GOVERNANCE  # the bucket's default retention
    client.enable_object_legal_hold(locked, "k")
    assert client.is_object_legal_hold_enabled(locked, "k")
    with pytest.raises(S3Error) as e:
        client.remove_object(locked, "k", version_id=version)
    assert e.value.code == "AccessDenied"
    assert client.stat_object(locked, "k").version_id == version
    # Cleaned up as S3 allows: hold released, governance bypassed (the SDK has no bypass header).
    client.disable_object_legal_hold(locked, "k")
    s3 = boto3.client("s3", config=Config(retries={"max_attempts": 1}))
    s3.delete_object(Bucket=locked, Key="k", VersionId=version, BypassGovernanceRetention=True)
    client.remove_bucket(locked)
