"""Bucket configuration with boto3 and the AWS CLI: policies, lifecycle, encryption, public access
block, ownership controls and tags, as setup scripts call them right after CreateBucket."""
import json
import os
import shutil
import subprocess
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import s3_url

AWS = shutil.which("aws")


def code(e):
    return e.value.response["Error"]["Code"]


def message(e):
    return e.value.response["Error"]["Message"]


def public_read(bucket):
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Sid": "PublicRead", "Effect": "Allow", "Principal": "*",
                       "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}],
    })


def open_to_public(s3, bucket):
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False, "RestrictPublicBuckets": False})


# ---------------------------------------------------------------------------------------- policy

def test_policy_round_trip_status_and_delete(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_policy_status(Bucket=bucket)
    assert code(e) == "NoSuchBucketPolicy"
    policy = {"Version": "2012-10-17", "Statement": [{
        "Sid": "Team", "Effect": "Allow", "Principal": {"AWS": "123456789012"},
        "Action": ["s3:GetObject", "s3:PutObject"], "Resource": f"arn:aws:s3:::{bucket}/*"}]}
    r = s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy, indent=2))
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204
    stored = json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])
    assert stored["Statement"][0]["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}
    assert stored["Statement"][0]["Action"] == ["s3:GetObject", "s3:PutObject"]
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False
    assert s3.delete_bucket_policy(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as e:
        s3.get_bucket_policy(Bucket=bucket)
    assert code(e) == "NoSuchBucketPolicy"


@pytest.mark.parametrize("document, text", [
    ("not json", "Policies must be valid JSON and the first byte must be '{'"),
    ("{}", "Missing required field Statement"),
    ('{"Version": "2012-10-17", "Statement": []}', "Could not parse the policy: Statement is empty!"),
    ('{"Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::BUCKET/*"}]}',
     "Missing required field Principal"),
    ('{"Statement": [{"Effect": "Permit", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::BUCKET/*"}]}',
     "Invalid effect: Permit"),
    ('{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:Teleport", "Resource": "arn:aws:s3:::BUCKET/*"}]}',
     "Policy has invalid action"),
    ('{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::elsewhere/*"}]}',
     "Policy has invalid resource"),
    ('{"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::BUCKET"}]}',
     "Action does not apply to any resource(s) in statement"),
    ('{"Statement": [{"Effect": "Allow", "Principal": {"AWS": "someone"}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::BUCKET/*"}]}',
     "Invalid principal in policy"),
])
def test_malformed_policies(s3, bucket, document, text):
    with pytest.raises(ClientError) as e:
        s3.put_bucket_policy(Bucket=bucket, Policy=document.replace("BUCKET", bucket))
    assert code(e) == "MalformedPolicy"
    assert message(e) == text
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_block_public_policy_refuses_public_policies_by_default(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.put_bucket_policy(Bucket=bucket, Policy=public_read(bucket))
    assert code(e) == "AccessDenied"
    assert "because public policies are blocked by the BlockPublicPolicy block public access setting" in message(e)


def test_public_read_bucket_serves_anonymous_gets(s3, bucket):
    s3.put_object(Bucket=bucket, Key="site/index.html", Body=b"<h1>public</h1>", ContentType="text/html")
    s3.put_object(Bucket=bucket, Key="private.txt", Body=b"secret")
    url = f"{s3_url()}/{bucket}/site/index.html"
    assert requests.get(url, timeout=10).status_code == 403
    open_to_public(s3, bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=public_read(bucket))
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True
    r = requests.get(url, timeout=10)
    assert r.status_code == 200 and r.text == "<h1>public</h1>"
    assert r.headers["Content-Type"] == "text/html"
    # Only what the policy grants: no listing, no writes, and 403 (not 404) for a missing key.
    assert requests.get(f"{s3_url()}/{bucket}?list-type=2", timeout=10).status_code == 403
    assert requests.put(f"{s3_url()}/{bucket}/new.txt", data=b"x", timeout=10).status_code == 403
    assert requests.get(f"{s3_url()}/{bucket}/nothing-here", timeout=10).status_code == 403
    # RestrictPublicBuckets turns public access off again.
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"RestrictPublicBuckets": True})
    assert requests.get(url, timeout=10).status_code == 403
    s3.delete_bucket_policy(Bucket=bucket)


def test_unsigned_boto3_client_reads_a_public_object(s3, bucket):
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config
    s3.put_object(Bucket=bucket, Key="pub/data.json", Body=b"{}")
    open_to_public(s3, bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["s3:GetObject"], "Resource": [f"arn:aws:s3:::{bucket}/pub/*"]},
        {"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}",
         "Condition": {"StringLike": {"s3:prefix": ["pub/*"]}}}]}))
    anonymous = boto3.client("s3", config=Config(signature_version=UNSIGNED, retries={"max_attempts": 1}))
    assert anonymous.get_object(Bucket=bucket, Key="pub/data.json")["Body"].read() == b"{}"
    listed = anonymous.list_objects_v2(Bucket=bucket, Prefix="pub/")
    assert [o["Key"] for o in listed["Contents"]] == ["pub/data.json"]
    with pytest.raises(ClientError) as e:
        anonymous.list_objects_v2(Bucket=bucket, Prefix="")
    assert code(e) == "AccessDenied"
    with pytest.raises(ClientError) as e:
        anonymous.get_object(Bucket=bucket, Key="pub/missing")
    assert code(e) == "NoSuchKey"
    s3.delete_bucket_policy(Bucket=bucket)


# ------------------------------------------------------------------------------------- lifecycle

def test_lifecycle_round_trip(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert code(e) == "NoSuchLifecycleConfiguration"
    rules = [
        {"ID": "expire-logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 30},
         "Transitions": [{"Days": 7, "StorageClass": "GLACIER"}]},
        {"ID": "abort-uploads", "Status": "Enabled", "Filter": {},
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
        {"Status": "Disabled", "Filter": {"And": {"Prefix": "tmp/", "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]}},
         "NoncurrentVersionExpiration": {"NoncurrentDays": 10, "NewerNoncurrentVersions": 3}},
    ]
    r = s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    assert r["TransitionDefaultMinimumObjectSize"] == "all_storage_classes_128K"
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert got["TransitionDefaultMinimumObjectSize"] == "all_storage_classes_128K"
    assert [rule["Status"] for rule in got["Rules"]] == ["Enabled", "Enabled", "Disabled"]
    assert got["Rules"][0]["ID"] == "expire-logs" and got["Rules"][0]["Expiration"] == {"Days": 30}
    assert got["Rules"][0]["Transitions"] == [{"Days": 7, "StorageClass": "GLACIER"}]
    assert got["Rules"][1]["Filter"] == {} and got["Rules"][1]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}
    assert len(got["Rules"][2]["ID"]) == 48
    assert got["Rules"][2]["Filter"]["And"]["Tags"] == [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    s3.delete_bucket_lifecycle(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert code(e) == "NoSuchLifecycleConfiguration"


@pytest.mark.parametrize("rule, error_code, text", [
    ({"ID": "x", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 0}},
     "InvalidArgument", "'Days' for Expiration action must be a positive integer"),
    ({"ID": "x", "Status": "Enabled", "Filter": {}, "Expiration": {"Date": "2030-01-01T12:00:00Z"}},
     "InvalidArgument", "'Date' must be at midnight GMT"),
    ({"ID": "x", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1, "ExpiredObjectDeleteMarker": True}},
     "MalformedXML", None),
    ({"ID": "x", "Status": "Enabled", "Filter": {"Tag": {"Key": "k", "Value": "v"}},
      "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
     "InvalidRequest", "AbortIncompleteMultipartUpload cannot be specified with Tags."),
    ({"ID": "x", "Status": "Enabled", "Filter": {}}, "InvalidRequest", "At least one action needs to be specified in a rule"),
    ({"ID": "y" * 256, "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1}},
     "InvalidArgument", "ID length should not exceed allowed limit of 255"),
])
def test_lifecycle_refusals(s3, bucket, rule, error_code, text):
    with pytest.raises(ClientError) as e:
        s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rule]})
    assert code(e) == error_code
    if text:
        assert message(e) == text


def test_lifecycle_rule_ids_must_be_unique(s3, bucket):
    rule = {"ID": "same", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1}}
    with pytest.raises(ClientError) as e:
        s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rule, rule]})
    assert code(e) == "InvalidArgument"
    assert message(e) == "Rule ID must be unique. Found same ID for more than one rule"


# ------------------------------------------------------ encryption, access block, ownership, tags

def test_encryption_defaults_to_sse_s3_and_resets(s3, bucket):
    def algorithm():
        rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
        return rule["ApplyServerSideEncryptionByDefault"]
    assert algorithm() == {"SSEAlgorithm": "AES256"}
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{
        "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/app"},
        "BucketKeyEnabled": True}]})
    assert algorithm() == {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/app"}
    with pytest.raises(ClientError) as e:
        s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{
            "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256", "KMSMasterKeyID": "alias/app"}}]})
    assert code(e) == "InvalidArgument"
    s3.delete_bucket_encryption(Bucket=bucket)
    assert algorithm() == {"SSEAlgorithm": "AES256"}


def test_public_access_block_and_ownership_controls(s3, bucket):
    defaults = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert defaults == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True}
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"BlockPublicAcls": True, "BlockPublicPolicy": False})
    got = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert got == {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": False, "RestrictPublicBuckets": False}
    s3.delete_public_access_block(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_public_access_block(Bucket=bucket)
    assert code(e) == "NoSuchPublicAccessBlockConfiguration"

    rules = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    assert s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "ObjectWriter"}]
    s3.delete_bucket_ownership_controls(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_ownership_controls(Bucket=bucket)
    assert code(e) == "OwnershipControlsNotFoundError"


def test_bucket_tagging(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_tagging(Bucket=bucket)
    assert code(e) == "NoSuchTagSet"
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "env", "Value": "dev"}, {"Key": "team", "Value": "web"}]})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == [{"Key": "env", "Value": "dev"}, {"Key": "team", "Value": "web"}]
    with pytest.raises(ClientError) as e:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "aws:cloudformation:stack-name", "Value": "x"}]})
    assert code(e) == "InvalidTag"
    s3.delete_bucket_tagging(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_tagging(Bucket=bucket)
    assert code(e) == "NoSuchTagSet"


def test_configuration_goes_with_the_bucket(s3):
    name = "t-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
    s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={
        "Rules": [{"ID": "r", "Status": "Enabled", "Filter": {}, "Expiration": {"Days": 1}}]})
    s3.delete_bucket(Bucket=name)
    s3.create_bucket(Bucket=name)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_tagging(Bucket=name)
    assert code(e) == "NoSuchTagSet"
    with pytest.raises(ClientError) as e:
        s3.get_bucket_lifecycle_configuration(Bucket=name)
    assert code(e) == "NoSuchLifecycleConfiguration"
    s3.delete_bucket(Bucket=name)


# ------------------------------------------------------------------------------------- AWS CLI

@pytest.mark.skipif(AWS is None, reason="the AWS CLI is not installed")
def test_setup_script_with_the_cli(bucket, tmp_path):
    def aws(*args):
        r = subprocess.run([AWS, "s3api", *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
        assert r.returncode == 0, f"aws s3api {' '.join(args)} failed: {r.stderr}"
        return json.loads(r.stdout) if r.stdout.strip() else {}

    aws("put-public-access-block", "--bucket", bucket, "--public-access-block-configuration",
        "BlockPublicAcls=false,IgnorePublicAcls=false,BlockPublicPolicy=false,RestrictPublicBuckets=false")
    policy = tmp_path / "policy.json"
    policy.write_text(public_read(bucket))
    aws("put-bucket-policy", "--bucket", bucket, "--policy", f"file://{policy}")
    assert json.loads(aws("get-bucket-policy", "--bucket", bucket)["Policy"])["Statement"][0]["Sid"] == "PublicRead"
    lifecycle = tmp_path / "lifecycle.json"
    lifecycle.write_text(json.dumps({"Rules": [{"ID": "tmp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"},
                                                "Expiration": {"Days": 1}}]}))
    aws("put-bucket-lifecycle-configuration", "--bucket", bucket, "--lifecycle-configuration", f"file://{lifecycle}")
    assert aws("get-bucket-lifecycle-configuration", "--bucket", bucket)["Rules"][0]["ID"] == "tmp"
    aws("put-bucket-encryption", "--bucket", bucket, "--server-side-encryption-configuration",
        '{"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": true}]}')
    aws("put-bucket-ownership-controls", "--bucket", bucket, "--ownership-controls", "Rules=[{ObjectOwnership=BucketOwnerEnforced}]")
    aws("put-bucket-tagging", "--bucket", bucket, "--tagging", "TagSet=[{Key=project,Value=hearth}]")
    aws("put-bucket-versioning", "--bucket", bucket, "--versioning-configuration", "Status=Enabled")
    assert aws("get-bucket-versioning", "--bucket", bucket) == {"Status": "Enabled"}
    assert aws("get-bucket-tagging", "--bucket", bucket)["TagSet"] == [{"Key": "project", "Value": "hearth"}]
    aws("delete-bucket-policy", "--bucket", bucket)
