"""Bucket CORS as a web app meets it: put/get/delete_bucket_cors with boto3, preflights with
requests.options, the headers actual (and failed) requests carry, and the opt-in permissive default."""
import base64
import hashlib
import os
import shutil
import uuid
import xml.etree.ElementTree as ET

import boto3
import pytest
import requests
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from hearthharness import start_hearth, stop_hearth

NOT_ALLOWED = ("CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / "
               "Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.")
VARY = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"
APP = "http://localhost:4200"


def s3_url():
    return os.environ["HEARTH_S3_URL"]


def error(r):
    return {child.tag: (child.text or "") for child in ET.fromstring(r.content)}


def preflight(path, origin=APP, method="PUT", headers=None, base=None):
    h = {}
    if origin is not None:
        h["Origin"] = origin
    if method is not None:
        h["Access-Control-Request-Method"] = method
    if headers is not None:
        h["Access-Control-Request-Headers"] = headers
    return requests.options((base or s3_url()) + path, headers=h, timeout=10)


RULES = {"CORSRules": [{"ID": "app", "AllowedOrigins": [APP], "AllowedMethods": ["GET", "PUT", "POST"],
                        "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag", "x-amz-request-id"], "MaxAgeSeconds": 3000}]}


def test_put_get_delete_bucket_cors(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert e.value.response["Error"]["Code"] == "NoSuchCORSConfiguration"
    assert e.value.response["Error"]["Message"] == "The CORS configuration does not exist"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert s3.delete_bucket_cors(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    config = {"CORSRules": [
        {"AllowedOrigins": ["https://test.com", "https://app.test.com", "http://test.com:80"], "AllowedMethods": ["GET", "PUT", "HEAD"],
         "MaxAgeSeconds": 3000, "AllowedHeaders": ["x-amz-expected-bucket-owner", "x-AMZ-server-SIDE-encryption"]},
        {"ID": "second", "AllowedOrigins": ["*"], "AllowedMethods": ["DELETE"], "ExposeHeaders": ["ETag"]},
    ]}
    assert s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=config)["ResponseMetadata"]["HTTPStatusCode"] == 200
    got = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got == config["CORSRules"]
    assert s3.delete_bucket_cors(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert e.value.response["Error"]["Code"] == "NoSuchCORSConfiguration"


@pytest.mark.parametrize("rules,code,message", [
    ([{"AllowedOrigins": ["*"], "AllowedMethods": ["GET", "MYMETHOD"]}], "InvalidRequest",
     "Found unsupported HTTP method in CORS config. Unsupported method is MYMETHOD"),
    ([{"AllowedOrigins": ["*example*.com"], "AllowedMethods": ["GET"]}], "InvalidRequest",
     'AllowedOrigin "*example*.com" can not have more than one wildcard.'),
    ([{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"], "ExposeHeaders": ["x-*"]}], "InvalidRequest",
     'ExposeHeader "x-*" contains wildcard. We currently do not support wildcard for ExposeHeader.'),
    ([], "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema"),
])
def test_invalid_configurations(s3, bucket, rules, code, message):
    with pytest.raises(ClientError) as e:
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": rules})
    assert e.value.response["Error"]["Code"] == code
    assert e.value.response["Error"]["Message"] == message
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_put_bucket_cors_needs_an_integrity_header(bucket):
    body = b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>"

    def signed_put(extra_headers):
        request = AWSRequest(method="PUT", url=f"{s3_url()}/{bucket}?cors", data=body, headers=extra_headers)
        S3SigV4Auth(Credentials("test", "test"), "s3", "us-east-1").add_auth(request)
        return requests.put(request.url, data=body, headers=dict(request.headers.items()), timeout=10)

    # boto3 always sends a checksum here; a hand-made request without Content-MD5 or a checksum is refused.
    r = signed_put({})
    assert r.status_code == 400, r.text
    assert error(r)["Code"] == "InvalidRequest"
    assert error(r)["Message"] == "Missing required header for this request: Content-MD5"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    assert signed_put({"Content-MD5": md5}).status_code == 200
    wrong = signed_put({"Content-MD5": base64.b64encode(hashlib.md5(b"other").digest()).decode()})
    assert error(wrong)["Code"] == "BadDigest"


def test_preflight_without_a_configuration(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a.txt", Body=b"x")
    no_origin = preflight(f"/{bucket}/a.txt", origin=None)
    assert no_origin.status_code == 400
    assert error(no_origin)["Code"] == "BadRequest"
    assert error(no_origin)["Message"] == "Insufficient information. Origin request header needed."
    r = preflight(f"/{bucket}/a.txt")
    assert r.status_code == 403
    e = error(r)
    assert e["Code"] == "AccessForbidden"
    assert e["Message"] == "CORSResponse: CORS is not enabled for this bucket."
    assert e["Method"] == "PUT" and e["ResourceType"] == "BUCKET"
    assert "--s3-cors-origins" in r.headers["x-hearth-diagnosis"]
    assert error(preflight(f"/{bucket}/a.txt", method=None))["Method"] == "OPTIONS"
    missing = preflight("/no-such-bucket-" + uuid.uuid4().hex[:8] + "/a.txt")
    assert missing.status_code == 403
    assert error(missing)["Message"] == "CORSResponse: Bucket not found"
    # Without a configuration, actual requests get no CORS headers.
    got = requests.get(s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "a.txt"}), headers={"Origin": APP})
    assert not any(h.lower().startswith("access-control") for h in got.headers)


def test_preflights_against_rules(s3, bucket):
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    ok = preflight(f"/{bucket}/photo.jpg", headers="content-type,x-amz-date")
    assert ok.status_code == 200, ok.text
    assert ok.content == b""
    assert ok.headers["Access-Control-Allow-Origin"] == APP
    assert ok.headers["Access-Control-Allow-Methods"] == "GET, PUT, POST"
    assert ok.headers["Access-Control-Allow-Headers"] == "content-type, x-amz-date"
    assert ok.headers["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"
    assert ok.headers["Access-Control-Max-Age"] == "3000"
    assert ok.headers["Access-Control-Allow-Credentials"] == "true"
    assert ok.headers["Vary"] == VARY

    for origin, method, path, resource in [("http://localhost:4201", "PUT", f"/{bucket}/photo.jpg", "OBJECT"),
                                           (APP + "/", "PUT", f"/{bucket}/photo.jpg", "OBJECT"),
                                           (APP, "DELETE", f"/{bucket}", "BUCKET")]:
        r = preflight(path, origin=origin, method=method)
        assert r.status_code == 403, (origin, method)
        e = error(r)
        assert e["Code"] == "AccessForbidden"
        assert e["Message"] == NOT_ALLOWED
        assert e["Method"] == method and e["ResourceType"] == resource
        assert "Access-Control-Allow-Origin" not in r.headers
        assert "rule 1 (app)" in r.headers["x-hearth-diagnosis"]
    bad_method = preflight(f"/{bucket}/photo.jpg", method="PATCH")
    assert bad_method.status_code == 400
    assert error(bad_method)["Message"] == "Invalid Access-Control-Request-Method: PATCH"


def test_wildcard_origins_and_headers(s3, bucket):
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["http://*.example.com"], "AllowedMethods": ["GET"], "AllowedHeaders": ["x-amz-*"]},
        {"AllowedOrigins": ["*"], "AllowedMethods": ["HEAD"]},
    ]})
    assert preflight(f"/{bucket}/k", origin="http://app.example.com", method="GET", headers="x-amz-meta-a").status_code == 200
    assert preflight(f"/{bucket}/k", origin="http://app.example.com", method="GET", headers="content-type").status_code == 403
    assert preflight(f"/{bucket}/k", origin="https://app.example.com", method="GET").status_code == 403
    anyone = preflight(f"/{bucket}/k", origin="http://random:1234", method="HEAD")
    assert anyone.status_code == 200
    assert anyone.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in anyone.headers
    # A rule without AllowedHeader allows no requested header.
    assert preflight(f"/{bucket}/k", origin="http://random:1234", method="HEAD", headers="x-amz-date").status_code == 403


def test_actual_requests_carry_the_headers(s3, s3v4, bucket):
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    s3.put_object(Bucket=bucket, Key="a.txt", Body=b"cors")
    url = s3v4.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "a.txt"})
    r = requests.get(url, headers={"Origin": APP}, timeout=10)
    assert r.status_code == 200 and r.content == b"cors"
    assert r.headers["Access-Control-Allow-Origin"] == APP
    assert r.headers["Access-Control-Allow-Methods"] == "GET, PUT, POST"
    assert r.headers["Vary"] == VARY
    other = requests.get(url, headers={"Origin": "http://evil.test"}, timeout=10)
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers

    # The browser flow: preflight, then a presigned PUT whose failure the page can still read.
    put_url = s3v4.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "up.jpg", "ContentType": "image/jpeg"})
    assert preflight(f"/{bucket}/up.jpg", headers="content-type").status_code == 200
    good = requests.put(put_url, data=b"jpeg", headers={"Origin": APP, "Content-Type": "image/jpeg"}, timeout=10)
    assert good.status_code == 200
    assert good.headers["Access-Control-Allow-Origin"] == APP
    bad = requests.put(put_url, data=b"png", headers={"Origin": APP, "Content-Type": "image/png"}, timeout=10)
    assert bad.status_code == 403
    assert error(bad)["Code"] == "SignatureDoesNotMatch"
    assert bad.headers["Access-Control-Allow-Origin"] == APP
    assert "image/png" in bad.headers["x-hearth-diagnosis"]


def test_form_upload_from_a_page(s3v4, bucket):
    s3v4.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    assert preflight(f"/{bucket}", method="POST").status_code == 200
    presigned = s3v4.generate_presigned_post(bucket, "from-page.txt")
    r = requests.post(presigned["url"], data=presigned["fields"], files={"file": ("a.txt", b"page")},
                      headers={"Origin": APP}, timeout=30)
    assert r.status_code == 204, r.text
    assert r.headers["Access-Control-Allow-Origin"] == APP
    assert r.headers["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"


def test_the_configuration_goes_with_its_bucket(s3):
    name = "c-" + uuid.uuid4().hex[:16]
    s3.create_bucket(Bucket=name)
    s3.put_bucket_cors(Bucket=name, CORSConfiguration=RULES)
    s3.delete_bucket(Bucket=name)
    s3.create_bucket(Bucket=name)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket=name)
    assert e.value.response["Error"]["Code"] == "NoSuchCORSConfiguration"
    s3.delete_bucket(Bucket=name)


@pytest.fixture(scope="module")
def permissive_hearth():
    proc, ready, tmp = start_hearth(["--s3-cors-origins", "http://localhost:3000,http://*.app.test"])
    yield ready
    stop_hearth(proc)
    shutil.rmtree(tmp, ignore_errors=True)


def test_permissive_default_for_local_development(permissive_hearth):
    url = permissive_hearth["services"]["s3"]["url"]
    s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1",
                      config=Config(signature_version="s3v4", retries={"max_attempts": 1}))
    s3.create_bucket(Bucket="dev")
    ok = preflight("/dev/a.jpg", origin="http://localhost:3000", headers="content-type", base=url)
    assert ok.status_code == 200
    assert ok.headers["Access-Control-Allow-Origin"] == "http://localhost:3000"
    assert "x-hearth-diagnosis" in ok.headers["Access-Control-Expose-Headers"]
    assert preflight("/dev/a.jpg", origin="http://web.app.test", base=url).status_code == 200
    assert preflight("/dev/a.jpg", origin="http://evil.test", base=url).status_code == 403
    # It is not a stored configuration, and a bucket's own configuration replaces it.
    with pytest.raises(ClientError):
        s3.get_bucket_cors(Bucket="dev")
    s3.put_bucket_cors(Bucket="dev", CORSConfiguration=RULES)
    assert preflight("/dev/a.jpg", origin="http://localhost:3000", base=url).status_code == 403
    # The default hearth (the session one) has no such default.
    assert preflight("/dev/a.jpg", origin="http://localhost:3000").status_code == 403
