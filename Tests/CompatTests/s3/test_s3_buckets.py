"""Bucket operations with boto3, compared with what S3 answers."""
import uuid

import pytest
from botocore.exceptions import ClientError


def code(exc_info):
    return exc_info.value.response["Error"]["Code"]


def status(exc_info):
    return exc_info.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_create_list_head_delete(s3):
    name = "b-" + uuid.uuid4().hex[:16]
    r = s3.create_bucket(Bucket=name)
    assert r["Location"] == "/" + name
    assert r["ResponseMetadata"]["HTTPHeaders"]["server"] == "AmazonS3"
    assert r["ResponseMetadata"]["RequestId"]
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert name in names
    head = s3.head_bucket(Bucket=name)
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "us-east-1"
    assert s3.get_bucket_location(Bucket=name)["LocationConstraint"] is None
    s3.delete_bucket(Bucket=name)
    with pytest.raises(ClientError) as e:
        s3.head_bucket(Bucket=name)
    assert code(e) == "404"


def test_already_owned_by_you(s3, bucket):
    # us-east-1 answers 200 for a bucket you already own (setup scripts create unconditionally).
    assert s3.create_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200


@pytest.mark.parametrize("name", ["Bad_Bucket_Name", "ab", "a..b", "192.168.5.4", "-dash-first"])
def test_invalid_bucket_name(s3, name):
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket=name)
    assert code(e) == "InvalidBucketName"
    assert e.value.response["Error"]["BucketName"] == name


def test_location_constraint_for_another_region_is_refused(s3):
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket="b-" + uuid.uuid4().hex[:16], CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert code(e) == "IllegalLocationConstraintException"


def test_delete_non_empty_and_missing(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert code(e) == "BucketNotEmpty"
    assert status(e) == 409
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket="missing-" + uuid.uuid4().hex[:12])
    assert code(e) == "NoSuchBucket"
    assert status(e) == 404


def test_no_such_bucket_names_it(s3):
    name = "missing-" + uuid.uuid4().hex[:12]
    with pytest.raises(ClientError) as e:
        s3.list_objects_v2(Bucket=name)
    assert code(e) == "NoSuchBucket"
    assert e.value.response["Error"]["BucketName"] == name


def test_bucket_configuration_defaults(s3, bucket):
    assert s3.get_bucket_versioning(Bucket=bucket).get("Status") is None
    enc = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]
    assert enc["Rules"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert code(e) == "NoSuchCORSConfiguration"
    with pytest.raises(ClientError) as e:
        s3.get_bucket_policy(Bucket=bucket)
    assert code(e) == "NoSuchBucketPolicy"
    with pytest.raises(ClientError) as e:
        s3.get_bucket_tagging(Bucket=bucket)
    assert code(e) == "NoSuchTagSet"
    acl = s3.get_bucket_acl(Bucket=bucket)
    assert acl["Grants"][0]["Permission"] == "FULL_CONTROL"


def test_unsupported_operation_is_not_implemented(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.put_bucket_website(Bucket=bucket, WebsiteConfiguration={"IndexDocument": {"Suffix": "index.html"}})
    assert code(e) == "NotImplemented"
    assert status(e) == 501
