"""Restores that take time (`--s3-restore-time`), through boto3 against a hearth of their own.

With `aws` a restore takes the upper end of S3's documented retrieval time for the object's class
and tier, on the emulator clock: HEAD says `ongoing-request="true"`, reads stay refused, listings
say IsRestoreInProgress, a second restore is 409 RestoreAlreadyInProgress unless it asks for a
faster tier, and once the clock passes the completion time the copy reads (docs/s3.md).
"""
import calendar
import email.utils
import subprocess
import uuid

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

from hearthharness import hearth_bin, start_hearth, stop_hearth

DAY = 86400
HOUR = 3600


@pytest.fixture(scope="module")
def slow():
    proc, ready, _ = start_hearth(["--s3-restore-time", "aws"])
    yield ready
    stop_hearth(proc)


@pytest.fixture
def s3(slow):
    env = slow["env"]
    return boto3.client("s3", endpoint_url=slow["services"]["s3"]["url"], region_name=env.get("AWS_REGION", "us-east-1"),
                        aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                        config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"}))


@pytest.fixture
def advance(slow):
    hub = slow["services"]["hub"]["url"]

    def move(seconds):
        r = requests.put(hub + "/emulator/v1/clock", json={"advanceSeconds": seconds}, timeout=10)
        assert r.status_code == 200, r.text

    yield move
    requests.put(hub + "/emulator/v1/clock", json={"mode": "system"}, timeout=10)


@pytest.fixture
def bucket(s3):
    name = "r-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    return name


def code(e):
    err = e.value.response["Error"]
    return err["Code"], err["Message"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def completion_expiry(date_header, delay, days):
    done = calendar.timegm(email.utils.parsedate(date_header)) + delay
    return email.utils.formatdate((done + days * DAY) // DAY * DAY + DAY, usegmt=True)


def in_progress(s3, bucket, key):
    listing = s3.list_objects_v2(Bucket=bucket, Prefix=key, OptionalObjectAttributes=["RestoreStatus"])
    return [o.get("RestoreStatus") for o in listing["Contents"]]


def test_standard_restore_of_glacier_takes_five_hours(s3, bucket, advance):
    s3.put_object(Bucket=bucket, Key="cold", Body=b"frozen", StorageClass="GLACIER")
    r = s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": 3})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert s3.head_object(Bucket=bucket, Key="cold")["Restore"] == 'ongoing-request="true"'
    assert in_progress(s3, bucket, "cold") == [{"IsRestoreInProgress": True}]
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="cold")
    assert code(e)[0] == "InvalidObjectState"
    # Asking again at the same (or a slower) tier while it runs is a conflict.
    for tier in ("Standard", "Bulk"):
        with pytest.raises(ClientError) as e:
            s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": 3, "GlacierJobParameters": {"Tier": tier}})
        assert code(e) == ("RestoreAlreadyInProgress", "Object restore is already in progress", 409)

    advance(5 * HOUR - 60)
    assert s3.head_object(Bucket=bucket, Key="cold")["Restore"] == 'ongoing-request="true"'
    advance(120)
    expiry = completion_expiry(r["ResponseMetadata"]["HTTPHeaders"]["date"], 5 * HOUR, 3)
    restored = f'ongoing-request="false", expiry-date="{expiry}"'
    assert s3.head_object(Bucket=bucket, Key="cold")["Restore"] == restored
    assert s3.get_object(Bucket=bucket, Key="cold")["Body"].read() == b"frozen"
    status = in_progress(s3, bucket, "cold")[0]
    assert status["IsRestoreInProgress"] is False and "RestoreExpiryDate" in status
    # A restored object's restore is 200 at once (no retrieval).
    again = s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": 1})
    assert again["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_a_faster_tier_speeds_a_restore_up(s3, bucket, advance):
    s3.put_object(Bucket=bucket, Key="bulk", Body=b"b", StorageClass="GLACIER")
    first = s3.restore_object(Bucket=bucket, Key="bulk", RestoreRequest={"Days": 1, "GlacierJobParameters": {"Tier": "Bulk"}})
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 202
    faster = s3.restore_object(Bucket=bucket, Key="bulk", RestoreRequest={"Days": 1, "GlacierJobParameters": {"Tier": "Expedited"}})
    assert faster["ResponseMetadata"]["HTTPStatusCode"] == 202
    advance(4 * 60)
    assert s3.head_object(Bucket=bucket, Key="bulk")["Restore"] == 'ongoing-request="true"'
    advance(2 * 60)
    assert s3.get_object(Bucket=bucket, Key="bulk")["Body"].read() == b"b"


def test_deep_archive_takes_twelve_hours_even_when_expedited(s3, bucket, advance):
    s3.put_object(Bucket=bucket, Key="deep", Body=b"d", StorageClass="DEEP_ARCHIVE")
    r = s3.restore_object(Bucket=bucket, Key="deep", RestoreRequest={"Days": 1, "GlacierJobParameters": {"Tier": "Expedited"}})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 202
    advance(12 * HOUR - 60)
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="deep")
    assert code(e)[0] == "InvalidObjectState"
    advance(120)
    assert s3.get_object(Bucket=bucket, Key="deep")["Body"].read() == b"d"


@pytest.mark.parametrize("value", ["soon", "-1", "99999999"])
def test_a_bad_restore_time_is_a_usage_error(value):
    p = subprocess.run([hearth_bin(), "start", "--in-memory", "--s3-restore-time", value], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "--s3-restore-time must be instant, aws or a number of seconds" in p.stderr
