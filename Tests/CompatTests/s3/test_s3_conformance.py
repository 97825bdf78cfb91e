"""What ceph/s3-tests found different from S3 (issue 18), with boto3 and the AWS CLI: listing
versions while deleting them, retried completions, re-creating an owned bucket, conditional
deletes, GetObjectAttributes, ACLs and Object Ownership, Object Lock and lifecycle rules on the
emulator clock."""
import datetime
import json
import os
import shutil
import subprocess
import uuid

import boto3
import pytest
import requests
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

AWS = shutil.which("aws")


def code(e):
    return e.value.response["Error"]["Code"]


def status(e):
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def new_name(prefix="c"):
    return prefix + "-" + uuid.uuid4().hex[:20]


def nuke(s3, name):
    """Deletes every version, delete marker and upload, then the bucket."""
    try:
        for page in s3.get_paginator("list_object_versions").paginate(Bucket=name):
            entries = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
            if entries:
                s3.delete_objects(Bucket=name, Delete={"Objects": entries, "Quiet": True}, BypassGovernanceRetention=True)
        for u in s3.list_multipart_uploads(Bucket=name).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=name, Key=u["Key"], UploadId=u["UploadId"])
        s3.delete_bucket(Bucket=name)
    except ClientError:
        pass


def test_versions_delete_all_through_pages(s3):
    """boto3's `bucket.object_versions.all().delete()`: each page is deleted before the next is
    asked for, with the last listed (now deleted) version as the marker."""
    name = new_name("v")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    for i in range(3):
        for _ in range(3):
            s3.put_object(Bucket=name, Key=f"k{i}", Body=b"x")
    resource = boto3.resource("s3")
    bucket = resource.Bucket(name)
    bucket.object_versions.page_size(2).delete()
    assert s3.list_object_versions(Bucket=name).get("Versions", []) == []
    s3.delete_bucket(Bucket=name)


def test_retried_complete_multipart_answers_again(s3, bucket):
    up = s3.create_multipart_upload(Bucket=bucket, Key="m")
    etag = s3.upload_part(Bucket=bucket, Key="m", UploadId=up["UploadId"], PartNumber=1, Body=b"abc")["ETag"]
    parts = {"Parts": [{"PartNumber": 1, "ETag": etag}]}
    first = s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=up["UploadId"], MultipartUpload=parts)
    again = s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=up["UploadId"], MultipartUpload=parts)
    assert again["ETag"] == first["ETag"]
    with pytest.raises(ClientError) as e:
        s3.abort_multipart_upload(Bucket=bucket, Key="m", UploadId=up["UploadId"])
    assert code(e) == "NoSuchUpload"


def test_create_owned_bucket_again_in_us_east_1(s3, bucket):
    assert s3.create_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_conditional_delete(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="d", Body=b"abc")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="d", IfMatch='"bad"')
    assert status(e) == 412
    s3.head_object(Bucket=bucket, Key="d")
    s3.delete_object(Bucket=bucket, Key="d", IfMatch=etag)
    with pytest.raises(ClientError) as e:
        s3.delete_object(Bucket=bucket, Key="d", IfMatch=etag)
    assert status(e) == 404


def test_conditional_writes(s3, bucket):
    s3.put_object(Bucket=bucket, Key="w", Body=b"1", IfNoneMatch="*")
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="w", Body=b"2", IfNoneMatch="*")
    assert status(e) == 412
    up = s3.create_multipart_upload(Bucket=bucket, Key="w")
    etag = s3.upload_part(Bucket=bucket, Key="w", UploadId=up["UploadId"], PartNumber=1, Body=b"abc")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="w", UploadId=up["UploadId"], IfNoneMatch="*",
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert status(e) == 412


def test_get_object_attributes(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"hello", ChecksumAlgorithm="CRC32")
    r = s3.get_object_attributes(Bucket=bucket, Key="a", ObjectAttributes=["ETag", "Checksum", "ObjectSize", "StorageClass"])
    assert r["ObjectSize"] == 5
    assert r["StorageClass"] == "STANDARD"
    assert r["Checksum"]["ChecksumCRC32"]
    assert not r["ETag"].startswith('"')
    with pytest.raises(ClientError) as e:
        s3.get_object_attributes(Bucket=bucket, Key="missing", ObjectAttributes=["ETag"])
    assert code(e) == "NoSuchKey"


@pytest.mark.skipif(AWS is None, reason="AWS CLI not installed")
def test_get_object_attributes_awscli(s3, bucket):
    s3.put_object(Bucket=bucket, Key="cli", Body=b"12345678")
    out = subprocess.run([AWS, "s3api", "get-object-attributes", "--bucket", bucket, "--key", "cli",
                          "--object-attributes", "ObjectSize"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["ObjectSize"] == 8


def test_acl_refused_under_bucket_owner_enforced(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="p", Body=b"x", ACL="public-read")
    assert code(e) == "AccessControlListNotSupported"
    s3.put_object(Bucket=bucket, Key="p", Body=b"x", ACL="bucket-owner-full-control")
    with pytest.raises(ClientError) as e:
        s3.put_object_acl(Bucket=bucket, Key="p", ACL="public-read")
    assert code(e) == "AccessControlListNotSupported"
    grants = s3.get_object_acl(Bucket=bucket, Key="p")["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"]
    name = new_name()
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket=name, ACL="public-read")
    assert code(e) == "InvalidBucketAclWithObjectOwnership"


def test_acls_under_object_writer(s3):
    name = new_name("acl")
    s3.create_bucket(Bucket=name, ObjectOwnership="ObjectWriter")
    try:
        rules = s3.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"]
        assert rules == [{"ObjectOwnership": "ObjectWriter"}]
        # The default public access block still refuses a public ACL.
        with pytest.raises(ClientError) as e:
            s3.put_object(Bucket=name, Key="o", Body=b"x", ACL="public-read")
        assert code(e) == "AccessDenied"
        s3.delete_public_access_block(Bucket=name)
        s3.put_object(Bucket=name, Key="o", Body=b"public", ACL="public-read")
        grants = s3.get_object_acl(Bucket=name, Key="o")["Grants"]
        assert {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"}, "Permission": "READ"} in grants
        anon = boto3.client("s3", config=Config(signature_version=UNSIGNED))
        assert anon.get_object(Bucket=name, Key="o")["Body"].read() == b"public"
        s3.put_object_acl(Bucket=name, Key="o", ACL="private")
        with pytest.raises(ClientError) as e:
            anon.get_object(Bucket=name, Key="o")
        assert code(e) == "AccessDenied"
        s3.put_bucket_acl(Bucket=name, ACL="public-read")
        assert [o["Key"] for o in anon.list_objects_v2(Bucket=name)["Contents"]] == ["o"]
    finally:
        nuke(s3, name)


def test_object_lock_on_the_emulator_clock(s3, clock):
    name = new_name("lock")
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    try:
        assert s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
        v = s3.put_object(Bucket=name, Key="k", Body=b"x")["VersionId"]
        until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=2)
        s3.put_object_retention(Bucket=name, Key="k", Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until})
        assert s3.get_object_retention(Bucket=name, Key="k")["Retention"]["Mode"] == "COMPLIANCE"
        assert s3.head_object(Bucket=name, Key="k")["ObjectLockMode"] == "COMPLIANCE"
        with pytest.raises(ClientError) as e:
            s3.delete_object(Bucket=name, Key="k", VersionId=v, BypassGovernanceRetention=True)
        assert code(e) == "AccessDenied"
        with pytest.raises(ClientError) as e:
            s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Suspended"})
        assert code(e) == "InvalidBucketState"
        clock(3 * 86400)
        s3.delete_object(Bucket=name, Key="k", VersionId=v)
        v2 = s3.put_object(Bucket=name, Key="h", Body=b"x", ObjectLockLegalHoldStatus="ON")["VersionId"]
        with pytest.raises(ClientError) as e:
            s3.delete_object(Bucket=name, Key="h", VersionId=v2)
        assert code(e) == "AccessDenied"
        s3.put_object_legal_hold(Bucket=name, Key="h", LegalHold={"Status": "OFF"})
        s3.delete_object(Bucket=name, Key="h", VersionId=v2)
    finally:
        nuke(s3, name)


def test_object_lock_needs_a_lock_bucket(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.put_object_retention(Bucket=bucket, Key="k", Retention={"Mode": "GOVERNANCE", "RetainUntilDate": datetime.datetime(2099, 1, 1)})
    assert code(e) == "InvalidRequest"
    with pytest.raises(ClientError) as e:
        s3.get_object_lock_configuration(Bucket=bucket)
    assert code(e) == "ObjectLockConfigurationNotFoundError"


def test_lifecycle_runs_on_the_emulator_clock(s3, clock):
    name = new_name("lc")
    s3.create_bucket(Bucket=name)
    try:
        s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={"Rules": [
            {"ID": "tmp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"}, "Expiration": {"Days": 1}},
            {"ID": "cold", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
             "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}]},
            {"ID": "uploads", "Status": "Enabled", "Filter": {}, "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}},
        ]})
        put = s3.put_object(Bucket=name, Key="tmp/a", Body=b"x")
        assert 'rule-id="tmp"' in put["Expiration"]
        assert 'rule-id="tmp"' in s3.head_object(Bucket=name, Key="tmp/a")["Expiration"]
        s3.put_object(Bucket=name, Key="keep", Body=b"x")
        assert "Expiration" not in s3.head_object(Bucket=name, Key="keep")
        s3.put_object(Bucket=name, Key="logs/l", Body=b"x")
        s3.create_multipart_upload(Bucket=name, Key="big")
        clock(2 * 86400)
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=name).get("Contents", [])]
        assert keys == ["keep", "logs/l"]
        assert len(s3.list_multipart_uploads(Bucket=name).get("Uploads", [])) == 1
        clock(30 * 86400)
        assert s3.head_object(Bucket=name, Key="logs/l")["StorageClass"] == "GLACIER"
        assert s3.list_multipart_uploads(Bucket=name).get("Uploads", []) == []
    finally:
        nuke(s3, name)


def test_lifecycle_noncurrent_versions(s3, clock):
    name = new_name("lcv")
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    try:
        s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={"Rules": [
            {"ID": "old", "Status": "Enabled", "Filter": {}, "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
             "Expiration": {"ExpiredObjectDeleteMarker": True}},
        ]})
        s3.put_object(Bucket=name, Key="k", Body=b"1")
        s3.put_object(Bucket=name, Key="k", Body=b"2")
        s3.put_object(Bucket=name, Key="d", Body=b"1")
        s3.delete_object(Bucket=name, Key="d")
        clock(2 * 86400)
        s3.list_objects_v2(Bucket=name)  # a request after the clock moved applies what became due
        listing = s3.list_object_versions(Bucket=name)
        versions = [(v["Key"], v["IsLatest"]) for v in listing.get("Versions", [])]
        assert versions == [("k", True)]
        # d's only version expired as noncurrent, and the delete marker left alone went with it.
        assert listing.get("DeleteMarkers", []) == []
    finally:
        nuke(s3, name)


def test_sse_c_needs_https(s3, bucket):
    key = os.urandom(32)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="c", Body=b"x", SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    assert code(e) == "InvalidRequest"


def test_sse_kms_headers(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId="my-key")
    assert code(e) == "KMS.NotFoundException"
    created = requests.post(os.environ["HEARTH_HUB_URL"] + "/emulator/v1/s3/kms/keys", json={"keyId": "my-key"})
    assert created.status_code == 200, created.text
    r = s3.put_object(Bucket=bucket, Key="k", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId="my-key")
    assert r["ServerSideEncryption"] == "aws:kms"
    assert r["SSEKMSKeyId"] == created.json()["arn"] and r["SSEKMSKeyId"].endswith(":key/my-key")
    h = s3.head_object(Bucket=bucket, Key="k")
    assert h["ServerSideEncryption"] == "aws:kms"
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", ServerSideEncryption="bogus")
    assert code(e) == "InvalidArgument"


def test_empty_metadata_value_is_kept(s3, bucket):
    s3.put_object(Bucket=bucket, Key="m", Body=b"x", Metadata={"empty": "", "full": "v"})
    assert s3.head_object(Bucket=bucket, Key="m")["Metadata"] == {"empty": "", "full": "v"}


def test_tagging_errors_are_invalid_tag(s3, bucket):
    s3.put_object(Bucket=bucket, Key="t", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": [{"Key": f"k{i}", "Value": "v"} for i in range(11)]})
    assert code(e) == "InvalidTag"


def test_listing_url_encoding(s3, bucket):
    for key in ["quux ab/thud", "asdf+b"]:
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    r = s3.list_objects(Bucket=bucket, Delimiter="/", EncodingType="url")
    assert [o["Key"] for o in r["Contents"]] == ["asdf%2Bb"]
    assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["quux%20ab/"]
    # boto3's own encoding-type=url (v1): the Prefix comes back as sent.
    assert s3.list_objects(Bucket=bucket, Prefix="\n")["Prefix"] == "\n"
    assert s3.list_objects_v2(Bucket=bucket, ContinuationToken="")["KeyCount"] == 2


def test_head_failure_diagnosis_and_request_log(bucket):
    """HEAD answers carry no body: the diagnosis is in x-hearth-diagnosis and in the hub's log,
    whose entry names the operation and the access key that was tried."""
    bad = boto3.client("s3", aws_access_key_id="test", aws_secret_access_key="wrong-secret", config=Config(retries={"max_attempts": 1}))
    with pytest.raises(ClientError) as e:
        bad.head_object(Bucket=bucket, Key="k")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    diagnosis = e.value.response["ResponseMetadata"]["HTTPHeaders"]["x-hearth-diagnosis"]
    assert diagnosis.startswith("No known cause")
    hub = os.environ["HEARTH_HUB_URL"]
    latest = requests.get(hub + "/emulator/v1/s3/requests?limit=1", timeout=10).json()["requests"][0]
    assert latest["errorCode"] == "SignatureDoesNotMatch"
    assert latest["operation"] == "HeadObject"
    assert latest["accessKeyId"] == "test"


def test_part_checksums_of_a_multipart_object(s3, bucket):
    up = s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="SHA256")
    part = s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"abc", ChecksumAlgorithm="SHA256")
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=up["UploadId"], MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": part["ETag"], "ChecksumSHA256": part["ChecksumSHA256"]}]})
    r = s3.get_object(Bucket=bucket, Key="mp", PartNumber=1, ChecksumMode="ENABLED")
    assert r["ChecksumSHA256"] == part["ChecksumSHA256"]
    attrs = s3.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"], MaxParts=1)
    assert attrs["ObjectParts"]["TotalPartsCount"] == 1
    assert attrs["ObjectParts"]["MaxParts"] == 1
    assert attrs["ObjectParts"]["Parts"][0]["ChecksumSHA256"] == part["ChecksumSHA256"]
