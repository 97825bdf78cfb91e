"""Authentication failures real S3 produces, as boto3/requests see them, and Hearth's diagnosis."""
import os
import uuid

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError



def hub():
    return os.environ["HEARTH_HUB_URL"]


def s3_url():
    return os.environ["HEARTH_S3_URL"]


def code(exc_info):
    return exc_info.value.response["Error"]["Code"]


def test_presigned_put_content_type(s3v4, bucket):
    url = s3v4.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "photo 1.jpg", "ContentType": "image/jpeg"},
                                      ExpiresIn=600)
    ok = requests.put(url, data=b"jpeg bytes", headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert ok.status_code == 200, ok.text
    assert s3v4.get_object(Bucket=bucket, Key="photo 1.jpg")["ContentType"] == "image/jpeg"

    bad = requests.put(url, data=b"png bytes", headers={"Content-Type": "image/png"}, timeout=10)
    assert bad.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in bad.text
    for element in ["AWSAccessKeyId", "StringToSign", "SignatureProvided", "StringToSignBytes", "CanonicalRequest",
                    "CanonicalRequestBytes", "RequestId", "HostId"]:
        assert f"<{element}>" in bad.text
    diagnosis = bad.headers.get("x-hearth-diagnosis", "")
    assert "image/jpeg" in diagnosis and "image/png" in diagnosis, diagnosis
    assert "<Diagnosis>" in bad.text
    assert s3v4.get_object(Bucket=bucket, Key="photo 1.jpg")["Body"].read() == b"jpeg bytes"


def test_presigned_get_and_expiry(s3v4, bucket, clock):
    s3v4.put_object(Bucket=bucket, Key="doc.txt", Body=b"secret doc")
    url = s3v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "doc.txt"}, ExpiresIn=60)
    r = requests.get(url, timeout=10)
    assert r.status_code == 200
    assert r.content == b"secret doc"
    clock(120)
    expired = requests.get(url, timeout=10)
    assert expired.status_code == 403
    assert "<Code>AccessDenied</Code>" in expired.text
    assert "<Message>Request has expired</Message>" in expired.text
    assert "<X-Amz-Expires>60</X-Amz-Expires>" in expired.text


def test_presigned_response_overrides(s3v4, bucket):
    s3v4.put_object(Bucket=bucket, Key="f.bin", Body=b"x")
    url = s3v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "f.bin", "ResponseContentType": "text/plain",
                                                            "ResponseContentDisposition": 'attachment; filename="f.txt"'})
    r = requests.get(url, timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "text/plain"
    assert r.headers["Content-Disposition"] == 'attachment; filename="f.txt"'


def test_default_boto3_presign_is_sigv2_and_refused(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    assert "AWSAccessKeyId=" in url and "Signature=" in url
    r = requests.get(url, timeout=10)
    assert r.status_code == 400
    assert "<Code>InvalidRequest</Code>" in r.text
    assert "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256." in r.text
    assert "signature_version" in r.headers.get("x-hearth-diagnosis", "")


def test_wrong_secret(bucket):
    bad = boto3.client("s3", aws_access_key_id="test", aws_secret_access_key="wrong-secret", config=Config(retries={"max_attempts": 1}))
    with pytest.raises(ClientError) as e:
        bad.list_objects_v2(Bucket=bucket)
    assert code(e) == "SignatureDoesNotMatch"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert e.value.response["Error"]["AWSAccessKeyId"] == "test"
    assert e.value.response["Error"]["CanonicalRequest"].startswith("GET\n/" + bucket)


def test_unknown_access_key(bucket):
    bad = boto3.client("s3", aws_access_key_id="AKIAUNKNOWN000000000", aws_secret_access_key="x",
                       config=Config(retries={"max_attempts": 1}))
    with pytest.raises(ClientError) as e:
        bad.head_object(Bucket=bucket, Key="k")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    with pytest.raises(ClientError) as e:
        bad.get_object(Bucket=bucket, Key="k")
    assert code(e) == "InvalidAccessKeyId"
    assert e.value.response["Error"]["AWSAccessKeyId"] == "AKIAUNKNOWN000000000"


def test_anonymous_request_denied(bucket):
    r = requests.get(f"{s3_url()}/{bucket}/k", timeout=10)
    assert r.status_code == 403
    assert "<Code>AccessDenied</Code>" in r.text


def test_wrong_region_is_redirected_like_s3(s3, bucket):
    # S3 answers AuthorizationHeaderMalformed naming the region (and x-amz-bucket-region); botocore
    # then re-signs for that region by itself, so the call succeeds after one refused attempt.
    s3.put_object(Bucket=bucket, Key="k", Body=b"region")
    other = boto3.client("s3", region_name="eu-west-1", config=Config(retries={"max_attempts": 1}))
    assert other.get_object(Bucket=bucket, Key="k")["Body"].read() == b"region"
    log = requests.get(hub() + "/emulator/v1/s3/requests?limit=5", timeout=10).json()["requests"]
    refused = [e for e in log if e["errorCode"] == "AuthorizationHeaderMalformed"]
    assert refused and refused[0]["status"] == 400 and refused[0]["key"] == "k"
    raw = requests.get(f"{s3_url()}/{bucket}/k", headers={
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
        "x-amz-date": "20260101T000000Z", "x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, timeout=10)
    assert raw.status_code == 400
    assert "<Region>us-east-1</Region>" in raw.text
    assert raw.headers["x-amz-bucket-region"] == "us-east-1"


def test_hub_presign_and_request_log(s3, bucket):
    r = requests.post(hub() + "/emulator/v1/s3/presign", json={
        "method": "PUT", "bucket": bucket, "key": "via-hub.jpg", "expiresSeconds": 300, "headers": {"Content-Type": "image/jpeg"}},
        timeout=10)
    assert r.status_code == 200, r.text
    url = r.json()["url"]
    assert requests.put(url, data=b"ok", headers={"Content-Type": "image/jpeg"}, timeout=10).status_code == 200
    bad = requests.put(url, data=b"no", headers={"Content-Type": "image/png"}, timeout=10)
    assert bad.status_code == 403
    assert "image/jpeg" in bad.headers["x-hearth-diagnosis"] and "image/png" in bad.headers["x-hearth-diagnosis"]
    log = requests.get(hub() + "/emulator/v1/s3/requests?limit=5", timeout=10).json()["requests"]
    latest = log[0]
    assert latest["status"] == 403
    assert latest["errorCode"] == "SignatureDoesNotMatch"
    assert "image/png" in latest["diagnosis"]
    assert "?" not in latest["path"]
    assert any(e["status"] == 200 and e["key"] == "via-hub.jpg" for e in log)


def test_request_id_matches_error_body(s3):
    with pytest.raises(ClientError) as e:
        s3.head_bucket(Bucket="missing-" + uuid.uuid4().hex[:10])
    headers = e.value.response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amz-request-id"]
    r = requests.get(f"{s3_url()}/missing-{uuid.uuid4().hex[:10]}/k", timeout=10)
    assert r.headers["x-amz-request-id"] in r.text
