"""RestoreObject and archived objects (GLACIER, DEEP_ARCHIVE) through boto3 and hand-signed requests.

S3 refuses to read or copy an archived object until RestoreObject has made a temporary copy; a
restore of an object that is not archived is 403 InvalidObjectState. Hearth's restore completes at
once (docs/s3.md, RestoreObject): 202 the first time, 200 while a restored copy exists, and
`x-amz-restore: ongoing-request="false", expiry-date="…"` on HEAD/GET until the copy expires on
the emulator clock.
"""
import calendar
import datetime
import email.utils
import os
import xml.etree.ElementTree as ET

import pytest
import requests
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from conftest import s3_url

DAY = 86400


def error(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def expiry_seconds(date_header, days):
    """S3's rule: the restore's completion time plus the days, rounded up to the next midnight UTC."""
    now = calendar.timegm(email.utils.parsedate(date_header))
    return (now + days * DAY) // DAY * DAY + DAY


def expected_expiry(date_header, days):
    return email.utils.formatdate(expiry_seconds(date_header, days), usegmt=True)


def signed_post(path, body):
    request = AWSRequest(method="POST", url=f"{s3_url()}{path}", data=body)
    S3SigV4Auth(Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]), "s3",
                os.environ.get("AWS_REGION", "us-east-1")).add_auth(request)
    return requests.post(request.url, data=body, headers=dict(request.headers.items()), timeout=10)


def test_restore_of_a_standard_object_is_refused(s3, bucket):
    s3.put_object(Bucket=bucket, Key="std", Body=b"x")
    s3.put_object(Bucket=bucket, Key="it", Body=b"x", StorageClass="INTELLIGENT_TIERING")
    for key in ("std", "it"):
        with pytest.raises(ClientError) as e:
            s3.restore_object(Bucket=bucket, Key=key, RestoreRequest={"Days": 1})
        assert error(e) == ("InvalidObjectState", "Restore is not allowed for the object's current storage class", 403)
    # Readable as ever: only archived classes need a restore.
    assert s3.get_object(Bucket=bucket, Key="std")["Body"].read() == b"x"


def test_restore_of_a_missing_key(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.restore_object(Bucket=bucket, Key="nope", RestoreRequest={"Days": 1})
    assert error(e) == ("NoSuchKey", "The specified key does not exist.", 404)


@pytest.mark.parametrize("body", [
    b"<RestoreRequest><Days>1</Days>",  # not well-formed
    b"<Restore><Days>1</Days></Restore>",  # wrong root
    b"<RestoreRequest><Days>one</Days></RestoreRequest>",
    b"<RestoreRequest><Days>0</Days></RestoreRequest>",
    b"<RestoreRequest><Days>2147483648</Days></RestoreRequest>",  # Days is an xsd:int
    b"<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Fast</Tier></GlacierJobParameters></RestoreRequest>",
    b"<RestoreRequest><Days>1</Days><Colour>blue</Colour></RestoreRequest>",
])
def test_malformed_restore_request(s3, bucket, body):
    s3.put_object(Bucket=bucket, Key="cold", Body=b"x", StorageClass="GLACIER")
    r = signed_post(f"/{bucket}/cold?restore", body)
    assert r.status_code == 400, r.text
    root = ET.fromstring(r.content)
    assert root.findtext("Code") == "MalformedXML"
    # Nothing was restored.
    assert "Restore" not in s3.head_object(Bucket=bucket, Key="cold")


@pytest.mark.parametrize("storage_class", ["GLACIER", "DEEP_ARCHIVE"])
def test_archived_object_is_read_only_after_a_restore(s3, bucket, clock, storage_class):
    s3.put_object(Bucket=bucket, Key="cold", Body=b"archived bytes", StorageClass=storage_class)
    head = s3.head_object(Bucket=bucket, Key="cold")
    assert head["StorageClass"] == storage_class and "Restore" not in head
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="cold")
    assert error(e) == ("InvalidObjectState", "The operation is not valid for the object's storage class", 403)
    assert e.value.response["StorageClass"] == storage_class
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "cold"})
    assert error(e) == ("InvalidObjectState", "Operation is not valid for the source object's storage class", 403)

    r = s3.restore_object(Bucket=bucket, Key="cold",
                          RestoreRequest={"Days": 2, "GlacierJobParameters": {"Tier": "Bulk"}})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 202
    expiry = expected_expiry(r["ResponseMetadata"]["HTTPHeaders"]["date"], 2)
    restored = f'ongoing-request="false", expiry-date="{expiry}"'
    head = s3.head_object(Bucket=bucket, Key="cold")
    assert head["Restore"] == restored and head["StorageClass"] == storage_class
    got = s3.get_object(Bucket=bucket, Key="cold")
    assert got["Body"].read() == b"archived bytes" and got["Restore"] == restored
    s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "cold"})
    # The copy is a new object: the source's restored copy does not come with it.
    assert "Restore" not in s3.head_object(Bucket=bucket, Key="copy")

    # A restored object's restore is 200 and sets the expiry anew.
    again = s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": 5})
    assert again["ResponseMetadata"]["HTTPStatusCode"] == 200
    longer = expected_expiry(again["ResponseMetadata"]["HTTPHeaders"]["date"], 5)
    assert s3.head_object(Bucket=bucket, Key="cold")["Restore"] == f'ongoing-request="false", expiry-date="{longer}"'

    # Past the expiry (emulator clock) the copy is gone: archived again.
    clock(7 * DAY)
    assert "Restore" not in s3.head_object(Bucket=bucket, Key="cold")
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="cold")
    assert error(e)[0] == "InvalidObjectState"
    assert s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": 1})["ResponseMetadata"]["HTTPStatusCode"] == 202


@pytest.mark.parametrize("days", [200_000_000, 2_147_483_647])
def test_restore_for_millions_of_years_lasts_until_year_9999(s3, bucket, days):
    """Any positive 32-bit Days is a valid restore; its expiry, millions of years out, is written
    as the last second an HTTP date can hold. Such a restore used to overflow at the next HEAD and
    take the process down, every time the object was read afterwards."""
    s3.put_object(Bucket=bucket, Key="cold", Body=b"archived bytes", StorageClass="GLACIER")
    r = s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": days})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 202
    restored = 'ongoing-request="false", expiry-date="Fri, 31 Dec 9999 23:59:59 GMT"'
    assert s3.head_object(Bucket=bucket, Key="cold")["Restore"] == restored
    got = s3.get_object(Bucket=bucket, Key="cold")
    assert got["Body"].read() == b"archived bytes" and got["Restore"] == restored
    status = restore_statuses(s3.list_objects_v2(Bucket=bucket, OptionalObjectAttributes=["RestoreStatus"]))["cold"]
    assert status == {"IsRestoreInProgress": False,
                      "RestoreExpiryDate": datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.timezone.utc)}
    # Asked again, the restored copy's expiry is set anew: still the same last second.
    assert s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": days})["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert s3.head_object(Bucket=bucket, Key="cold")["Restore"] == restored


def test_restore_of_an_archived_object_needs_days(s3, bucket):
    s3.put_object(Bucket=bucket, Key="cold", Body=b"x", StorageClass="GLACIER")
    r = signed_post(f"/{bucket}/cold?restore", b"")
    assert r.status_code == 400 and ET.fromstring(r.content).findtext("Code") == "MalformedXML", r.text
    # An empty body is no reason to refuse an object that is not archived for what it is.
    s3.put_object(Bucket=bucket, Key="std", Body=b"x")
    r = signed_post(f"/{bucket}/std?restore", b"")
    assert r.status_code == 403 and ET.fromstring(r.content).findtext("Code") == "InvalidObjectState", r.text


def test_restore_names_a_version(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    old = s3.put_object(Bucket=bucket, Key="v", Body=b"old", StorageClass="GLACIER")["VersionId"]
    s3.put_object(Bucket=bucket, Key="v", Body=b"new", StorageClass="GLACIER")
    r = s3.restore_object(Bucket=bucket, Key="v", VersionId=old, RestoreRequest={"Days": 1})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert s3.get_object(Bucket=bucket, Key="v", VersionId=old)["Body"].read() == b"old"
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="v")
    assert error(e)[0] == "InvalidObjectState"
    # Versioned buckets delete their versions one by one (the fixture removes current keys only).
    for v in s3.list_object_versions(Bucket=bucket).get("Versions", []):
        s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])


# --- RestoreStatus in listings (x-amz-optional-object-attributes) -------------------------------

def restore_statuses(listing, entries="Contents"):
    return {o["Key"]: o.get("RestoreStatus") for o in listing.get(entries, [])}


def test_listings_report_restore_status_only_when_asked(s3, bucket, clock):
    s3.put_object(Bucket=bucket, Key="cold", Body=b"x", StorageClass="GLACIER")
    s3.put_object(Bucket=bucket, Key="frozen", Body=b"x", StorageClass="DEEP_ARCHIVE")
    s3.put_object(Bucket=bucket, Key="std", Body=b"x")

    def listings(**extra):
        return [s3.list_objects_v2(Bucket=bucket, **extra), s3.list_objects(Bucket=bucket, **extra)]

    # Nothing restored: S3 reports no status even when asked (archived or not).
    for listing in listings(OptionalObjectAttributes=["RestoreStatus"]):
        assert restore_statuses(listing) == {"cold": None, "frozen": None, "std": None}

    r = s3.restore_object(Bucket=bucket, Key="cold", RestoreRequest={"Days": 3})
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 202
    expiry = datetime.datetime.fromtimestamp(expiry_seconds(r["ResponseMetadata"]["HTTPHeaders"]["date"], 3), datetime.timezone.utc)
    # Hearth's restore completes when accepted (docs/s3.md), so right after the 202 the restore is
    # no longer in progress: IsRestoreInProgress false, with the restored copy's expiry.
    restored = {"IsRestoreInProgress": False, "RestoreExpiryDate": expiry}
    for listing in listings(OptionalObjectAttributes=["RestoreStatus"]):
        assert restore_statuses(listing) == {"cold": restored, "frozen": None, "std": None}
    # Without the header the element never appears.
    for listing in listings():
        assert restore_statuses(listing) == {"cold": None, "frozen": None, "std": None}

    # Past the expiry (emulator clock) the restored copy is gone, and so is its status.
    clock(4 * DAY)
    for listing in listings(OptionalObjectAttributes=["RestoreStatus"]):
        assert restore_statuses(listing) == {"cold": None, "frozen": None, "std": None}


def test_an_unknown_optional_attribute_is_invalid_argument(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    for call in (s3.list_objects_v2, s3.list_objects, s3.list_object_versions):
        with pytest.raises(ClientError) as e:
            call(Bucket=bucket, OptionalObjectAttributes=["RestoreStatus", "Colour"])
        assert error(e) == ("InvalidArgument", "Invalid attribute name specified.", 400)
        assert e.value.response["Error"]["ArgumentName"] == "x-amz-optional-object-attributes"


def test_version_listing_reports_the_restored_version(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    old = s3.put_object(Bucket=bucket, Key="v", Body=b"old", StorageClass="GLACIER")["VersionId"]
    new = s3.put_object(Bucket=bucket, Key="v", Body=b"new", StorageClass="GLACIER")["VersionId"]
    r = s3.restore_object(Bucket=bucket, Key="v", VersionId=old, RestoreRequest={"Days": 1})
    expiry = datetime.datetime.fromtimestamp(expiry_seconds(r["ResponseMetadata"]["HTTPHeaders"]["date"], 1), datetime.timezone.utc)
    marker = s3.delete_object(Bucket=bucket, Key="v")["VersionId"]

    listing = s3.list_object_versions(Bucket=bucket, OptionalObjectAttributes=["RestoreStatus"])
    statuses = {v["VersionId"]: v.get("RestoreStatus") for v in listing["Versions"]}
    assert statuses == {old: {"IsRestoreInProgress": False, "RestoreExpiryDate": expiry}, new: None}
    # A delete marker has no restore status.
    assert [m["VersionId"] for m in listing["DeleteMarkers"]] == [marker]
    assert all("RestoreStatus" not in m for m in listing["DeleteMarkers"])
    plain = s3.list_object_versions(Bucket=bucket)
    assert all("RestoreStatus" not in v for v in plain["Versions"])

    for v in plain.get("Versions", []) + plain.get("DeleteMarkers", []):
        s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])
