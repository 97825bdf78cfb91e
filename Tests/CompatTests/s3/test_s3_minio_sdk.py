"""The MinIO Python SDK (`minio` from PyPI) against the emulator: its own SigV4 signer (not botocore),
path-style for an IP endpoint, region found with GetBucketLocation, streaming multipart for streams of
unknown length.
"""
import hashlib
import io
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import timedelta

import pytest

minio = pytest.importorskip("minio", reason="the minio SDK is not installed (Tests/CompatTests/requirements.txt)")
from minio.commonconfig import ENABLED, CopySource, Tags  # noqa: E402
from minio.deleteobjects import DeleteObject  # noqa: E402
from minio.error import S3Error  # noqa: E402
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
