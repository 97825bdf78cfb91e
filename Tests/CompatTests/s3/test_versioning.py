"""Versioning with boto3 and the AWS CLI: version ids, delete markers, the null version, listings,
batch deletes and copies of versions, with S3's answers."""
import json
import os
import re
import shutil
import subprocess
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

AWS = shutil.which("aws")
VERSION_ID = re.compile(r"^[A-Za-z0-9._]{32}$")


def code(e):
    return e.value.response["Error"]["Code"]


def status(e):
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def empty_versioned(s3, name):
    """Deletes every version and delete marker, then the bucket."""
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=name):
        entries = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        if entries:
            s3.delete_objects(Bucket=name, Delete={"Objects": entries, "Quiet": True})
    s3.delete_bucket(Bucket=name)


@pytest.fixture
def vbucket(s3):
    """A fresh bucket with versioning enabled, emptied of every version afterwards."""
    name = "v-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    yield name
    try:
        empty_versioned(s3, name)
    except ClientError:
        pass


def test_status_never_enabled_suspended(s3, vbucket):
    name = "v-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    assert "Status" not in s3.get_bucket_versioning(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Suspended"})
    assert s3.get_bucket_versioning(Bucket=name)["Status"] == "Suspended"
    with pytest.raises(ClientError) as e:
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Sometimes"})
    assert code(e) == "MalformedXML"
    s3.delete_bucket(Bucket=name)
    assert s3.get_bucket_versioning(Bucket=vbucket)["Status"] == "Enabled"


def test_versions_of_one_key(s3, vbucket):
    v1 = s3.put_object(Bucket=vbucket, Key="doc.txt", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=vbucket, Key="doc.txt", Body=b"two")["VersionId"]
    assert VERSION_ID.match(v1) and VERSION_ID.match(v2) and v1 != v2
    current = s3.get_object(Bucket=vbucket, Key="doc.txt")
    assert current["Body"].read() == b"two" and current["VersionId"] == v2
    old = s3.get_object(Bucket=vbucket, Key="doc.txt", VersionId=v1)
    assert old["Body"].read() == b"one" and old["VersionId"] == v1
    assert s3.head_object(Bucket=vbucket, Key="doc.txt", VersionId=v1)["ContentLength"] == 3
    listed = s3.list_object_versions(Bucket=vbucket)
    assert [(v["VersionId"], v["IsLatest"]) for v in listed["Versions"]] == [(v2, True), (v1, False)]
    assert "DeleteMarkers" not in listed


def test_delete_markers(s3, vbucket):
    v1 = s3.put_object(Bucket=vbucket, Key="k", Body=b"data")["VersionId"]
    deleted = s3.delete_object(Bucket=vbucket, Key="k")
    assert deleted["DeleteMarker"] is True and VERSION_ID.match(deleted["VersionId"])
    marker = deleted["VersionId"]
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=vbucket, Key="k")
    assert code(e) == "NoSuchKey"
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "true"
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=vbucket, Key="k")
    assert status(e) == 404
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=vbucket, Key="k", VersionId=marker)
    assert code(e) == "MethodNotAllowed" and status(e) == 405
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["allow"] == "DELETE"
    assert s3.get_object(Bucket=vbucket, Key="k", VersionId=v1)["Body"].read() == b"data"
    listed = s3.list_object_versions(Bucket=vbucket)
    assert [(m["VersionId"], m["IsLatest"]) for m in listed["DeleteMarkers"]] == [(marker, True)]
    assert [(v["VersionId"], v["IsLatest"]) for v in listed["Versions"]] == [(v1, False)]
    assert s3.list_objects_v2(Bucket=vbucket)["KeyCount"] == 0
    # Deleting the marker brings the object back.
    undo = s3.delete_object(Bucket=vbucket, Key="k", VersionId=marker)
    assert undo["DeleteMarker"] is True and undo["VersionId"] == marker
    assert s3.get_object(Bucket=vbucket, Key="k")["Body"].read() == b"data"


def test_delete_a_version_for_good(s3, vbucket):
    v1 = s3.put_object(Bucket=vbucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=vbucket, Key="k", Body=b"two")["VersionId"]
    r = s3.delete_object(Bucket=vbucket, Key="k", VersionId=v2)
    assert r["VersionId"] == v2 and "DeleteMarker" not in r
    assert s3.get_object(Bucket=vbucket, Key="k")["Body"].read() == b"one"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=vbucket, Key="k", VersionId=v2)
    assert code(e) == "NoSuchVersion"
    assert s3.delete_object(Bucket=vbucket, Key="k", VersionId=v2)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=vbucket, Key="k", VersionId="not-a-version")
    assert code(e) == "InvalidArgument"
    s3.delete_object(Bucket=vbucket, Key="k", VersionId=v1)
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=vbucket, Key="k")
    assert code(e) == "NoSuchKey"


def test_null_version_and_suspension(s3):
    name = "v-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    r = s3.put_object(Bucket=name, Key="k", Body=b"before")
    assert "VersionId" not in r
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket=name, Key="k", Body=b"during")["VersionId"]
    assert s3.get_object(Bucket=name, Key="k", VersionId="null")["Body"].read() == b"before"
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Suspended"})
    assert s3.put_object(Bucket=name, Key="k", Body=b"after")["VersionId"] == "null"
    versions = s3.list_object_versions(Bucket=name)["Versions"]
    assert [(v["VersionId"], v["IsLatest"]) for v in versions] == [("null", True), (v1, False)]
    marker = s3.delete_object(Bucket=name, Key="k")
    assert marker["DeleteMarker"] is True and marker["VersionId"] == "null"
    assert s3.get_object(Bucket=name, Key="k", VersionId=v1)["Body"].read() == b"during"
    empty_versioned(s3, name)


def test_paginator_walks_every_version(s3, vbucket):
    expected = []
    for key in ["a", "dir/b", "dir/c", "z"]:
        for n in range(3):
            expected.append((key, s3.put_object(Bucket=vbucket, Key=key, Body=f"{key}{n}".encode())["VersionId"]))
    s3.delete_object(Bucket=vbucket, Key="z")
    seen = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=vbucket, PaginationConfig={"PageSize": 2}):
        seen += [(v["Key"], v["VersionId"]) for v in page.get("Versions", [])]
    assert sorted(seen) == sorted(expected)
    assert len(seen) == 12
    rolled = s3.list_object_versions(Bucket=vbucket, Delimiter="/")
    assert [p["Prefix"] for p in rolled["CommonPrefixes"]] == ["dir/"]
    assert {v["Key"] for v in rolled["Versions"]} == {"a", "z"}
    assert [v["Key"] for v in s3.list_object_versions(Bucket=vbucket, Prefix="dir/")["Versions"]] == ["dir/b"] * 3 + ["dir/c"] * 3


def test_batch_delete_with_versions(s3, vbucket):
    v1 = s3.put_object(Bucket=vbucket, Key="a", Body=b"1")["VersionId"]
    s3.put_object(Bucket=vbucket, Key="a", Body=b"2")
    r = s3.delete_objects(Bucket=vbucket, Delete={"Objects": [{"Key": "a"}, {"Key": "a", "VersionId": v1}]})
    by_version = {d.get("VersionId"): d for d in r["Deleted"]}
    assert by_version[None]["DeleteMarker"] is True and VERSION_ID.match(by_version[None]["DeleteMarkerVersionId"])
    assert by_version[v1]["Key"] == "a"
    versions = s3.list_object_versions(Bucket=vbucket)
    assert len(versions["Versions"]) == 1 and len(versions["DeleteMarkers"]) == 1


def test_copy_an_older_version(s3, vbucket):
    v1 = s3.put_object(Bucket=vbucket, Key="src", Body=b"first")["VersionId"]
    s3.put_object(Bucket=vbucket, Key="src", Body=b"second")
    r = s3.copy_object(Bucket=vbucket, Key="dst", CopySource={"Bucket": vbucket, "Key": "src", "VersionId": v1})
    assert r["CopySourceVersionId"] == v1 and VERSION_ID.match(r["VersionId"])
    assert s3.get_object(Bucket=vbucket, Key="dst")["Body"].read() == b"first"
    marker = s3.delete_object(Bucket=vbucket, Key="src")["VersionId"]
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=vbucket, Key="x", CopySource={"Bucket": vbucket, "Key": "src", "VersionId": marker})
    assert code(e) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=vbucket, Key="x", CopySource={"Bucket": vbucket, "Key": "src"})
    assert code(e) == "NoSuchKey"


def test_multipart_upload_gets_a_version(s3, vbucket):
    upload = s3.create_multipart_upload(Bucket=vbucket, Key="big")["UploadId"]
    part = s3.upload_part(Bucket=vbucket, Key="big", UploadId=upload, PartNumber=1, Body=b"x" * 1024)
    done = s3.complete_multipart_upload(Bucket=vbucket, Key="big", UploadId=upload,
                                        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert VERSION_ID.match(done["VersionId"])
    assert s3.head_object(Bucket=vbucket, Key="big")["VersionId"] == done["VersionId"]


def test_versioned_bucket_is_not_empty_until_every_version_goes(s3, vbucket):
    s3.put_object(Bucket=vbucket, Key="k", Body=b"x")
    s3.delete_object(Bucket=vbucket, Key="k")
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=vbucket)
    assert code(e) == "BucketNotEmpty"


def test_unversioned_bucket_keeps_its_answers(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert "VersionId" not in s3.get_object(Bucket=bucket, Key="k")
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"x"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId="abc")
    assert code(e) == "InvalidArgument"
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [(v["Key"], v["VersionId"], v["IsLatest"]) for v in versions] == [("k", "null", True)]


def test_version_tagging(s3, vbucket):
    v1 = s3.put_object(Bucket=vbucket, Key="k", Body=b"1", Tagging="first=yes")["VersionId"]
    s3.put_object(Bucket=vbucket, Key="k", Body=b"2")
    assert s3.get_object_tagging(Bucket=vbucket, Key="k", VersionId=v1)["TagSet"] == [{"Key": "first", "Value": "yes"}]
    assert s3.get_object_tagging(Bucket=vbucket, Key="k")["TagSet"] == []
    r = s3.put_object_tagging(Bucket=vbucket, Key="k", VersionId=v1, Tagging={"TagSet": [{"Key": "b", "Value": "2"}]})
    assert r["VersionId"] == v1


@pytest.mark.skipif(AWS is None, reason="the AWS CLI is not installed")
def test_cli_versions(s3, vbucket):
    def aws(*args):
        r = subprocess.run([AWS, "s3api", *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
        assert r.returncode == 0, f"aws s3api {' '.join(args)} failed: {r.stderr}"
        return json.loads(r.stdout) if r.stdout.strip() else {}

    s3.put_object(Bucket=vbucket, Key="cli.txt", Body=b"1")
    s3.put_object(Bucket=vbucket, Key="cli.txt", Body=b"2")
    listed = aws("list-object-versions", "--bucket", vbucket)
    assert len(listed["Versions"]) == 2
    deleted = aws("delete-object", "--bucket", vbucket, "--key", "cli.txt")
    assert deleted["DeleteMarker"] is True
    assert len(aws("list-object-versions", "--bucket", vbucket)["DeleteMarkers"]) == 1
