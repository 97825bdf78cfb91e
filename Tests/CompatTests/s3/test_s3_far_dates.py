"""Numbers a client sends that put a date past year 9999: each used to overflow Hearth's microsecond
arithmetic and take the whole process down — and, being stored in a bucket's configuration, again
at every later request that read it. Now each is a date held at the last second HTTP and RFC 3339
dates can write (docs/reliability.md, fourteenth session), and the requests are answered."""
import datetime
import json
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import s3_url

LAST_DAY = "Fri, 31 Dec 9999 23:59:59 GMT"


def new_name(prefix):
    return prefix + "-" + uuid.uuid4().hex[:20]


def nuke(s3, name):
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=name):
        entries = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        if entries:
            s3.delete_objects(Bucket=name, Delete={"Objects": entries, "Quiet": True}, BypassGovernanceRetention=True)
    s3.delete_bucket(Bucket=name)


def test_lifecycle_expiration_of_the_largest_days_is_reported_on_put_and_head(s3, bucket):
    # Days is any positive 32-bit number; 2,147,483,647 days is ~5.9 million years.
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "forever", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 2_147_483_647}},
        {"ID": "noncurrent", "Status": "Enabled", "Filter": {"Prefix": ""},
         "NoncurrentVersionExpiration": {"NoncurrentDays": 2_147_483_647}},
        {"ID": "uploads", "Status": "Enabled", "Filter": {"Prefix": ""},
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2_147_483_647}},
    ]})
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    expected = f'expiry-date="{LAST_DAY}", rule-id="forever"'
    assert put["Expiration"] == expected
    assert s3.head_object(Bucket=bucket, Key="k")["Expiration"] == expected
    upload = s3.create_multipart_upload(Bucket=bucket, Key="big")["UploadId"]
    # The lifecycle pass (run by requests) judges every rule against every object: nothing is due.
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    assert [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket)["Uploads"]] == [upload]
    s3.abort_multipart_upload(Bucket=bucket, Key="big", UploadId=upload)


@pytest.mark.parametrize("retention", [{"Days": 10**15}, {"Years": 10**12}, {"Days": 200_000_000}])
def test_object_lock_default_retention_past_year_9999_holds_until_its_last_second(s3, retention):
    name = new_name("far")
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    try:
        s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", **retention}}})
        # (S3 refuses periods past 100 years; Hearth keeps what it is given: docs/s3.md, known gaps.)
        v = s3.put_object(Bucket=name, Key="k", Body=b"x")["VersionId"]
        head = s3.head_object(Bucket=name, Key="k")
        assert head["ObjectLockMode"] == "GOVERNANCE"
        assert head["ObjectLockRetainUntilDate"] == datetime.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=datetime.timezone.utc)
        with pytest.raises(ClientError) as e:
            s3.delete_object(Bucket=name, Key="k", VersionId=v)
        assert e.value.response["Error"]["Code"] == "AccessDenied"
    finally:
        nuke(s3, name)


@pytest.mark.parametrize("operator, epoch, status", [
    ("DateLessThan", "1e300", 200),      # now is before any such date
    ("DateGreaterThan", "1e300", 403),
    ("DateGreaterThan", "-1e300", 200),  # and after any such date
    ("DateLessThan", "-1e300", 403),
])
def test_policy_date_conditions_far_from_now_are_judged_not_fatal(s3, bucket, operator, epoch, status):
    """A date condition's value may be epoch seconds; one of 1e300 used to trap converting to
    microseconds at every request the policy judged."""
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False, "RestrictPublicBuckets": False})
    s3.put_object(Bucket=bucket, Key="k", Body=b"public bytes")
    s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*",
        "Condition": {operator: {"aws:CurrentTime": epoch}}}]}))
    r = requests.get(f"{s3_url()}/{bucket}/k", timeout=10)
    assert r.status_code == status, r.text
    if status == 200:
        assert r.content == b"public bytes"
    else:
        assert "<Code>AccessDenied</Code>" in r.text
