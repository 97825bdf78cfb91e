"""Browser form uploads (POST Object) as a web page sends them: boto3's generate_presigned_post for
the fields, requests for the multipart/form-data POST, and every way S3 refuses a form."""
import base64
import hashlib
import hmac
import json
import os
import socket
import urllib.parse
import uuid
import xml.etree.ElementTree as ET

import boto3
import pytest
import requests
from botocore.config import Config


def s3_url():
    return os.environ["HEARTH_S3_URL"]


def error(r):
    """The error document's elements as a dict."""
    root = ET.fromstring(r.content)
    return {child.tag: (child.text or "") for child in root}


def post(presigned, file=b"hello form", filename="hello.txt", fields=None, **kwargs):
    data = dict(presigned["fields"])
    data.update(fields or {})
    return requests.post(presigned["url"], data=data, files={"file": (filename, file, "text/plain")}, timeout=30,
                         allow_redirects=False, **kwargs)


def sign(policy_b64, secret="test", date=None, region="us-east-1"):
    key = ("AWS4" + secret).encode()
    for part in [date, region, "s3", "aws4_request"]:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, policy_b64.encode(), hashlib.sha256).hexdigest()


def multipart(parts, boundary="----hearth-compat"):
    """A form body from (name, value, filename) parts, in the order given."""
    out = b""
    for name, value, filename in parts:
        disposition = f'Content-Disposition: form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{boundary}\r\n{disposition}\r\n\r\n".encode() + value + b"\r\n"
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


# MARK: Uploads that work


def test_presigned_post_with_201_document(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(
        bucket, "uploads/${filename}",
        Fields={"Content-Type": "image/png", "success_action_status": "201", "x-amz-meta-owner": "alice"},
        Conditions=[{"Content-Type": "image/png"}, {"success_action_status": "201"}, {"x-amz-meta-owner": "alice"},
                    ["content-length-range", 1, 1024]],
        ExpiresIn=600)
    assert "x-amz-signature" in presigned["fields"] and "policy" in presigned["fields"]
    r = requests.post(presigned["url"], data=presigned["fields"], files={"file": ("cat.png", b"\x89PNG fake", "image/png")},
                      timeout=30)
    assert r.status_code == 201, r.text
    root = ET.fromstring(r.content)
    assert root.tag == "PostResponse"
    assert root.find("Bucket").text == bucket
    assert root.find("Key").text == "uploads/cat.png"
    etag = '"' + hashlib.md5(b"\x89PNG fake").hexdigest() + '"'
    assert root.find("ETag").text == etag
    assert root.find("Location").text.endswith(f"/{bucket}/uploads%2Fcat.png")
    assert r.headers["ETag"] == etag
    obj = s3v4.get_object(Bucket=bucket, Key="uploads/cat.png")
    assert obj["Body"].read() == b"\x89PNG fake"
    assert obj["ContentType"] == "image/png"
    assert obj["Metadata"] == {"owner": "alice"}


def test_default_answer_is_204_and_the_default_client_works(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "plain.txt", ExpiresIn=600)
    r = post(presigned)
    assert r.status_code == 204, r.text
    assert r.content == b""
    assert r.headers["ETag"] == '"' + hashlib.md5(b"hello form").hexdigest() + '"'
    assert r.headers["Location"].endswith(f"/{bucket}/plain.txt")
    # No Content-Type field: the object is binary/octet-stream whatever the file part said.
    assert s3v4.head_object(Bucket=bucket, Key="plain.txt")["ContentType"] == "binary/octet-stream"


def test_success_action_redirect(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "r.txt", Fields={"success_action_redirect": "https://app.test/done?x=1"},
                                             Conditions=[["starts-with", "$success_action_redirect", "https://app.test/"]])
    r = post(presigned)
    assert r.status_code == 303
    location = urllib.parse.urlparse(r.headers["Location"])
    assert location.netloc == "app.test"
    query = urllib.parse.parse_qs(location.query)
    assert query["x"] == ["1"] and query["bucket"] == [bucket] and query["key"] == ["r.txt"]
    assert query["etag"] == ['"' + hashlib.md5(b"hello form").hexdigest() + '"']


def test_large_file_is_streamed(s3v4, bucket):
    data = os.urandom(8 * 1024 * 1024 + 3)
    presigned = s3v4.generate_presigned_post(bucket, "big.bin", Conditions=[["content-length-range", 0, 16 * 1024 * 1024]])
    r = post(presigned, file=data, filename="big.bin")
    assert r.status_code == 204, r.text
    assert r.headers["ETag"] == '"' + hashlib.md5(data).hexdigest() + '"'
    assert s3v4.get_object(Bucket=bucket, Key="big.bin")["Body"].read() == data


def test_fields_after_the_file_are_ignored(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "first.txt")
    parts = [(k, v.encode(), None) for k, v in presigned["fields"].items()]
    parts += [("file", b"data", "a.txt"), ("key", b"second.txt", None), ("submit", b"Upload", None)]
    body, content_type = multipart(parts)
    r = requests.post(presigned["url"], data=body, headers={"Content-Type": content_type}, timeout=30)
    assert r.status_code == 204, r.text
    assert s3v4.get_object(Bucket=bucket, Key="first.txt")["Body"].read() == b"data"
    assert s3v4.list_objects_v2(Bucket=bucket)["KeyCount"] == 1


def test_checksum_field_is_verified_and_stored(s3v4, bucket):
    digest = base64.b64encode(hashlib.sha256(b"hello form").digest()).decode()
    presigned = s3v4.generate_presigned_post(bucket, "sum.txt", Fields={"x-amz-checksum-sha256": digest},
                                             Conditions=[{"x-amz-checksum-sha256": digest}])
    r = post(presigned)
    assert r.status_code == 204, r.text
    assert r.headers["x-amz-checksum-sha256"] == digest
    head = s3v4.head_object(Bucket=bucket, Key="sum.txt", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == digest
    bad = post(presigned, file=b"other bytes")
    assert bad.status_code == 400
    assert error(bad)["Code"] == "BadDigest"


def test_virtual_hosted_form(monkeypatch):
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo",
                        lambda host, *a, **k: real("127.0.0.1" if str(host).endswith(".localhost") else host, *a, **k))
    port = urllib.parse.urlparse(s3_url()).port
    s3 = boto3.client("s3", endpoint_url=f"http://localhost:{port}",
                      config=Config(signature_version="s3v4", s3={"addressing_style": "virtual"}, retries={"max_attempts": 1}))
    name = "v-" + uuid.uuid4().hex[:16]
    s3.create_bucket(Bucket=name)
    presigned = s3.generate_presigned_post(name, "v.txt", Fields={"success_action_status": "201"},
                                           Conditions=[{"success_action_status": "201"}])
    assert presigned["url"].startswith(f"http://{name}.localhost")
    r = post(presigned)
    assert r.status_code == 201, r.text
    assert ET.fromstring(r.content).find("Location").text == f"http://{name}.localhost:{port}/v.txt"
    assert s3.get_object(Bucket=name, Key="v.txt")["Body"].read() == b"hello form"
    s3.delete_object(Bucket=name, Key="v.txt")
    s3.delete_bucket(Bucket=name)


def test_the_request_log_names_the_key(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "logged.txt")
    assert post(presigned).status_code == 204
    entries = requests.get(os.environ["HEARTH_HUB_URL"] + "/emulator/v1/s3/requests?limit=20", timeout=10).json()
    entries = entries.get("requests", entries) if isinstance(entries, dict) else entries
    mine = [e for e in entries if e.get("operation") == "PostObject" and e.get("bucket") == bucket]
    assert mine and mine[0]["key"] == "logged.txt" and mine[0]["status"] == 204


# MARK: Refusals


def assert_nothing_stored(s3v4, bucket):
    assert s3v4.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_expired_policy(s3v4, bucket, clock):
    presigned = s3v4.generate_presigned_post(bucket, "late.txt", ExpiresIn=60)
    clock(120)
    r = post(presigned)
    assert r.status_code == 403
    e = error(r)
    assert e["Code"] == "AccessDenied"
    assert e["Message"] == "Invalid according to Policy: Policy expired."
    assert "expired at" in r.headers["x-hearth-diagnosis"]
    assert_nothing_stored(s3v4, bucket)


def test_tampered_signature(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    r = post(presigned, fields={"x-amz-signature": "0" * 64})
    assert r.status_code == 403
    e = error(r)
    assert e["Code"] == "SignatureDoesNotMatch"
    assert e["StringToSign"] == presigned["fields"]["policy"]
    assert e["SignatureProvided"] == "0" * 64
    assert e["AWSAccessKeyId"] == "test"
    assert "StringToSignBytes" in e and "CanonicalRequest" not in e
    assert "x-hearth-diagnosis" in r.headers
    assert_nothing_stored(s3v4, bucket)


def test_policy_signed_with_the_wrong_secret(bucket, s3v4):
    wrong = boto3.client("s3", aws_access_key_id="test", aws_secret_access_key="not-the-secret",
                         config=Config(signature_version="s3v4", retries={"max_attempts": 1}))
    r = post(wrong.generate_presigned_post(bucket, "k.txt"))
    assert r.status_code == 403
    assert error(r)["Code"] == "SignatureDoesNotMatch"
    assert "secret key for 'test' is wrong" in r.headers["x-hearth-diagnosis"]


def test_policy_changed_after_signing(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt", Conditions=[["content-length-range", 0, 10]])
    document = json.loads(base64.b64decode(presigned["fields"]["policy"]))
    document["conditions"] = [c for c in document["conditions"] if not (isinstance(c, list) and c[0] == "content-length-range")]
    r = post(presigned, fields={"policy": base64.b64encode(json.dumps(document).encode()).decode()})
    assert r.status_code == 403
    assert error(r)["Code"] == "SignatureDoesNotMatch"


def test_wrong_region(bucket):
    europe = boto3.client("s3", region_name="eu-west-1", config=Config(signature_version="s3v4", retries={"max_attempts": 1}))
    r = post(europe.generate_presigned_post(bucket, "k.txt"))
    assert r.status_code == 400
    e = error(r)
    assert e["Code"] == "AuthorizationQueryParametersError"
    assert e["Message"] == "Error parsing the X-Amz-Credential parameter; the region 'eu-west-1' is wrong; expecting 'us-east-1'"
    assert e["Region"] == "us-east-1"


def test_unknown_access_key(bucket):
    stranger = boto3.client("s3", aws_access_key_id="AKIANOBODY", aws_secret_access_key="x",
                            config=Config(signature_version="s3v4", retries={"max_attempts": 1}))
    r = post(stranger.generate_presigned_post(bucket, "k.txt"))
    assert r.status_code == 403
    assert error(r)["Code"] == "InvalidAccessKeyId"
    assert error(r)["AWSAccessKeyId"] == "AKIANOBODY"


def test_sigv2_form_from_the_default_client(s3, s3v4, bucket):
    presigned = s3.generate_presigned_post(bucket, "k.txt")
    if "AWSAccessKeyId" not in presigned["fields"]:
        pytest.skip("this botocore signs POST policies with SigV4 by default")
    r = post(presigned)
    assert r.status_code == 400
    assert error(r)["Code"] == "InvalidRequest"
    assert error(r)["Message"] == "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
    assert "signature_version='s3v4'" in r.headers["x-hearth-diagnosis"]


def test_extra_input_fields(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    r = post(presigned, fields={"x-amz-meta-extra": "1", "x-ignore-submit": "ok"})
    assert r.status_code == 403
    e = error(r)
    assert e["Code"] == "AccessDenied"
    assert e["Message"] == "Invalid according to Policy: Extra input fields: x-amz-meta-extra"
    assert_nothing_stored(s3v4, bucket)


def test_failed_conditions(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "user/alice/${filename}", Fields={"Content-Type": "image/png"},
                                             Conditions=[["starts-with", "$Content-Type", "image/"]])
    ok = post(presigned, fields={"Content-Type": "image/jpeg"}, filename="a.jpg")
    assert ok.status_code == 204, ok.text
    r = post(presigned, fields={"Content-Type": "text/html"})
    assert r.status_code == 403
    assert error(r)["Message"] == 'Invalid according to Policy: Policy Condition failed: ["starts-with", "$Content-Type", "image/"]'
    assert "text/html" in r.headers["x-hearth-diagnosis"]
    moved = post(presigned, fields={"key": "user/bob/a.txt"})
    assert moved.status_code == 403
    assert error(moved)["Message"] == 'Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "user/alice/"]'
    exact = s3v4.generate_presigned_post(bucket, "exact.txt")
    other = post(exact, fields={"key": "other.txt"})
    assert error(other)["Message"] == 'Invalid according to Policy: Policy Condition failed: ["eq", "$key", "exact.txt"]'


@pytest.mark.parametrize("size,code,element,limit", [(3, "EntityTooSmall", "MinSizeAllowed", "5"),
                                                     (11, "EntityTooLarge", "MaxSizeAllowed", "10")])
def test_content_length_range(s3v4, bucket, size, code, element, limit):
    presigned = s3v4.generate_presigned_post(bucket, "sized.txt", Conditions=[["content-length-range", 5, 10]])
    r = post(presigned, file=b"x" * size)
    assert r.status_code == 400
    e = error(r)
    assert e["Code"] == code
    assert e["ProposedSize"] == str(size)
    assert e[element] == limit
    assert_nothing_stored(s3v4, bucket)
    assert post(presigned, file=b"x" * 7).status_code == 204


def test_missing_fields(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    without_key = {k: v for k, v in presigned["fields"].items() if k != "key"}
    r = requests.post(presigned["url"], data=without_key, files={"file": ("a.txt", b"x")}, timeout=30)
    assert r.status_code == 400
    e = error(r)
    assert e["Code"] == "InvalidArgument"
    assert e["Message"] == "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields."
    assert e["ArgumentName"] == "key"
    without_signature = {k: v for k, v in presigned["fields"].items() if k != "x-amz-signature"}
    r = requests.post(presigned["url"], data=without_signature, files={"file": ("a.txt", b"x")}, timeout=30)
    assert error(r)["Message"].startswith("Bucket POST must contain a field named 'X-Amz-Signature'.")
    no_file = requests.post(presigned["url"], files={k: (None, v) for k, v in presigned["fields"].items()}, timeout=30)
    assert no_file.status_code == 400
    assert error(no_file)["Message"] == "POST requires exactly one file upload per request."


def test_anonymous_form_is_denied(s3v4, bucket):
    r = requests.post(f"{s3_url()}/{bucket}", data={"key": "anon.txt"}, files={"file": ("a.txt", b"x")}, timeout=30)
    assert r.status_code == 403
    assert error(r)["Code"] == "AccessDenied"
    assert error(r)["Message"] == "Access Denied"
    assert_nothing_stored(s3v4, bucket)


def test_not_a_multipart_form(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    r = requests.post(presigned["url"], data=presigned["fields"], timeout=30)
    assert r.status_code == 412
    e = error(r)
    assert e["Code"] == "PreconditionFailed"
    assert e["Condition"] == "Bucket POST must be of the enclosure-type multipart/form-data"


def test_malformed_form(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    body, content_type = multipart([(k, v.encode(), None) for k, v in presigned["fields"].items()] + [("file", b"x" * 1000, "a")])
    r = requests.post(presigned["url"], data=body[:-60], headers={"Content-Type": content_type}, timeout=30)
    assert r.status_code == 400
    assert error(r)["Code"] == "MalformedPOSTRequest"
    assert error(r)["Message"] == "The body of your POST request is not well-formed multipart/form-data."
    assert_nothing_stored(s3v4, bucket)


def test_fields_before_the_file_are_limited(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    r = post(presigned, fields={"x-ignore-padding": "a" * 21000})
    assert r.status_code == 400
    assert error(r)["Code"] == "MaxPostPreDataLengthExceededError"


def test_invalid_policy_document(s3v4, bucket):
    presigned = s3v4.generate_presigned_post(bucket, "k.txt")
    date = presigned["fields"]["x-amz-date"][:8]
    for document, message in [("not json", "Invalid Policy: Invalid JSON."),
                              ('{"conditions": []}', "Invalid Policy: Policy missing expiration."),
                              ('{"expiration": "tomorrow", "conditions": []}', "Invalid Policy: Invalid 'expiration' value: 'tomorrow'")]:
        policy = base64.b64encode(document.encode()).decode()
        r = post(presigned, fields={"policy": policy, "x-amz-signature": sign(policy, date=date)})
        assert r.status_code == 400, r.text
        assert error(r)["Code"] == "InvalidPolicyDocument"
        assert error(r)["Message"] == message


def test_missing_bucket(s3v4):
    presigned = s3v4.generate_presigned_post("no-such-bucket-" + uuid.uuid4().hex[:8], "k.txt")
    r = post(presigned)
    assert r.status_code == 404
    assert error(r)["Code"] == "NoSuchBucket"
