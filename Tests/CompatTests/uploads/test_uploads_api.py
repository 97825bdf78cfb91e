"""The uploads API (api port) through plain HTTP, as a web or mobile backend client uses it.

Covers the issue-7 contract: presign → PUT with the signed Content-Type → complete → presign-download,
validation (400 naming the field), 401 for missing/invalid/expired/revoked tokens, 403 for another
user's key, 404 before the PUT, the signature diagnosis for a wrong Content-Type, CORS for browsers.
Clock-moving tests run on a private hearth so they cannot expire the shared instance's tokens.
"""
import calendar
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import uuid

import boto3
import pytest
import requests
from botocore.config import Config

API_KEY = "fake-api-key"
KEY_RE = r"users/{uid}/uploads/[0-9a-f]{{8}}-[0-9a-f]{{4}}-4[0-9a-f]{{3}}-[89ab][0-9a-f]{{3}}-[0-9a-f]{{12}}\.{ext}"


class Hearth:
    """URLs of one hearth instance and helpers over its REST APIs."""

    def __init__(self, ready):
        s = ready["services"]
        self.hub, self.auth, self.firestore, self.s3, self.api = (s[n]["url"] for n in ("hub", "auth", "firestore", "s3", "api"))
        self.project = ready["project"]

    def sign_up(self, email=None, password="secret-pw"):
        email = email or f"u-{uuid.uuid4().hex[:12]}@example.com"
        r = requests.post(f"{self.auth}/identitytoolkit.googleapis.com/v1/accounts:signUp?key={API_KEY}",
                          json={"email": email, "password": password, "returnSecureToken": True})
        r.raise_for_status()
        return r.json()

    def api_post(self, path, body, token=None, headers=None):
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        return requests.post(f"{self.api}{path}", json=body, headers=h)

    def presign(self, token, content_type="image/jpeg", ext="jpg", **extra):
        r = self.api_post("/v1/uploads/presign", {"contentType": content_type, "fileExt": ext, **extra}, token)
        assert r.status_code == 200, r.text
        return r.json()

    def clock(self, body):
        r = requests.put(f"{self.hub}/emulator/v1/clock", json=body)
        r.raise_for_status()
        return r.json()


@pytest.fixture
def api(hearth):
    """The session's shared hearth (conftest's `hearth` fixture yields its ready JSON)."""
    return Hearth(hearth)


@pytest.fixture(scope="module")
def private_hearth():
    """A second hearth for tests that move the clock."""
    tmp = tempfile.mkdtemp(prefix="hearth-uploads-")
    ready = os.path.join(tmp, "ready.json")
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    args = [os.environ["HEARTH_BIN"], "start", "--in-memory", "--seed", "7", "--ready-file", ready, "--quiet",
            "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0",
            "--rules", os.path.join(repo, "rules", "firestore.rules")]
    log = open(os.path.join(tmp, "hearth.log"), "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    deadline = time.time() + 30
    while not os.path.exists(ready):
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise RuntimeError("private hearth did not start: " + open(os.path.join(tmp, "hearth.log")).read())
        time.sleep(0.05)
    time.sleep(0.05)
    with open(ready) as f:
        yield Hearth(json.load(f))
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def user(api):
    return api.sign_up()


def error_of(r):
    body = r.json()
    assert set(body) == {"error"}, body
    return body["error"]


# --- the happy path -------------------------------------------------------------------------------

def test_presign_put_complete_download(api, user):
    uid, token = user["localId"], user["idToken"]
    p = api.presign(token, "image/jpeg", "jpg", expiresSeconds=900)
    assert re.fullmatch(KEY_RE.format(uid=re.escape(uid), ext="jpg"), p["key"]), p["key"]
    assert p["expiresSeconds"] == 900
    assert p["headers"] == {"Content-Type": "image/jpeg"}
    assert "X-Amz-Signature=" in p["putUrl"] and "content-type" in p["putUrl"].lower()

    body = os.urandom(4096)
    put = requests.put(p["putUrl"], data=body, headers={"Content-Type": "image/jpeg"})
    assert put.status_code == 200, put.text

    r = api.api_post("/v1/files/photo-1/complete", {"key": p["key"]}, token)
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["ownerUid"] == uid and doc["storage"] == "s3" and doc["s3Key"] == p["key"]
    assert doc["contentType"] == "image/jpeg" and doc["size"] == 4096 and doc["status"] == "ready"
    assert doc["name"].endswith(f"/documents/users/{uid}/files/photo-1")
    assert doc["fields"]["size"] == {"integerValue": "4096"}
    assert "timestampValue" in doc["fields"]["createdAt"]

    # The owner reads the document through the Firestore REST API and the shipped rules.
    fs = requests.get(f"{api.firestore}/v1/projects/{api.project}/databases/(default)/documents/users/{uid}/files/photo-1",
                      headers={"Authorization": f"Bearer {token}"})
    assert fs.status_code == 200, fs.text
    assert fs.json()["fields"]["s3Key"] == {"stringValue": p["key"]}

    d = api.api_post("/v1/files/presign-download", {"s3Key": p["key"]}, token)
    assert d.status_code == 200, d.text
    assert d.json()["expiresSeconds"] >= 1
    got = requests.get(d.json()["getUrl"])
    assert got.status_code == 200 and got.content == body


def test_the_object_is_in_the_uploads_bucket_for_boto3(api, user):
    p = api.presign(user["idToken"], "application/pdf", "pdf")
    assert requests.put(p["putUrl"], data=b"%PDF-1.7", headers={"Content-Type": "application/pdf"}).status_code == 200
    s3 = boto3.client("s3", endpoint_url=api.s3, config=Config(signature_version="s3v4"))
    head = s3.head_object(Bucket="uploads", Key=p["key"])
    assert head["ContentType"] == "application/pdf"
    assert head["ContentLength"] == 8


# --- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ({}, "contentType"),
    ({"contentType": "text/html", "fileExt": "html"}, "contentType"),
    ({"contentType": 7, "fileExt": "jpg"}, "contentType"),
    ({"contentType": "image/png"}, "fileExt"),
    ({"contentType": "image/png", "fileExt": ".png"}, "fileExt"),
    ({"contentType": "image/png", "fileExt": "a/b"}, "fileExt"),
    ({"contentType": "image/png", "fileExt": "x" * 17}, "fileExt"),
    ({"contentType": "image/png", "fileExt": "png", "expiresSeconds": 0}, "expiresSeconds"),
    ({"contentType": "image/png", "fileExt": "png", "expiresSeconds": 3601}, "expiresSeconds"),
    ({"contentType": "image/png", "fileExt": "png", "expiresSeconds": "900"}, "expiresSeconds"),
])
def test_presign_validation_names_the_field(api, user, body, field):
    r = api.api_post("/v1/uploads/presign", body, user["idToken"])
    assert r.status_code == 400
    e = error_of(r)
    assert e["code"] == 400 and e["status"] == "INVALID_ARGUMENT" and e["field"] == field
    assert field in e["message"]


def test_malformed_json_is_400(api, user):
    r = requests.post(f"{api.api}/v1/uploads/presign", data=b"{not json",
                      headers={"Authorization": f"Bearer {user['idToken']}", "Content-Type": "application/json"})
    assert r.status_code == 400
    assert error_of(r)["reason"] == "INVALID_JSON"


# --- authentication -------------------------------------------------------------------------------

@pytest.mark.parametrize("header, reason", [
    (None, "MISSING_ID_TOKEN"),
    ("Bearer not-a-jwt", "INVALID_ID_TOKEN"),
    ("Basic dXNlcjpwYXNz", "MALFORMED_AUTHORIZATION"),
])
def test_bad_credentials_are_401(api, header, reason):
    headers = {"Authorization": header} if header else {}
    r = requests.post(f"{api.api}/v1/uploads/presign", json={"contentType": "image/png", "fileExt": "png"}, headers=headers)
    assert r.status_code == 401
    e = error_of(r)
    assert e["status"] == "UNAUTHENTICATED" and e["reason"] == reason
    assert r.headers["WWW-Authenticate"].startswith("Bearer ")


def test_token_of_another_project_is_401(api):
    # An unsigned emulator-style token for another project.
    import base64

    def b64(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    now = int(time.time())
    payload = {"iss": "https://securetoken.google.com/other-project", "aud": "other-project", "sub": "u1", "user_id": "u1",
               "iat": now, "exp": now + 3600, "auth_time": now, "firebase": {"sign_in_provider": "custom", "identities": {}}}
    token = b64({"alg": "none", "typ": "JWT"}) + "." + b64(payload) + "."
    r = api.api_post("/v1/uploads/presign", {"contentType": "image/png", "fileExt": "png"}, token)
    assert r.status_code == 401
    assert error_of(r)["status"] == "UNAUTHENTICATED"


def test_expired_token_is_401_and_refresh_fixes_it(private_hearth):
    h = private_hearth
    u = h.sign_up()
    try:
        h.clock({"advanceSeconds": 3601})
        r = h.api_post("/v1/uploads/presign", {"contentType": "image/png", "fileExt": "png"}, u["idToken"])
        assert r.status_code == 401 and error_of(r)["reason"] == "ID_TOKEN_EXPIRED"
        fresh = requests.post(f"{h.auth}/securetoken.googleapis.com/v1/token?key={API_KEY}",
                              data={"grant_type": "refresh_token", "refresh_token": u["refreshToken"]})
        assert fresh.status_code == 200, fresh.text
        r = h.api_post("/v1/uploads/presign", {"contentType": "image/png", "fileExt": "png"}, fresh.json()["id_token"])
        assert r.status_code == 200, r.text
    finally:
        h.clock({"mode": "system"})


def test_revoked_token_is_401(private_hearth):
    h = private_hearth
    u = h.sign_up()
    try:
        h.clock({"advanceSeconds": 10})
        now = h.clock({"advanceSeconds": 0})["now"]
        valid_since = calendar.timegm(time.strptime(now[:19], "%Y-%m-%dT%H:%M:%S"))
        r = requests.post(f"{h.auth}/identitytoolkit.googleapis.com/v1/projects/{h.project}/accounts:update",
                          json={"localId": u["localId"], "validSince": str(valid_since)}, headers={"Authorization": "Bearer owner"})
        assert r.status_code == 200, r.text
        r = h.api_post("/v1/uploads/presign", {"contentType": "image/png", "fileExt": "png"}, u["idToken"])
        assert r.status_code == 401 and error_of(r)["reason"] == "ID_TOKEN_REVOKED"
    finally:
        h.clock({"mode": "system"})


# --- ownership and existence ----------------------------------------------------------------------

def test_another_users_key_is_403(api, user):
    other = api.sign_up()
    p = api.presign(user["idToken"])
    assert requests.put(p["putUrl"], data=b"x", headers={"Content-Type": "image/jpeg"}).status_code == 200
    d = api.api_post("/v1/files/presign-download", {"s3Key": p["key"]}, other["idToken"])
    assert d.status_code == 403 and error_of(d)["status"] == "PERMISSION_DENIED"
    c = api.api_post("/v1/files/f/complete", {"key": p["key"]}, other["idToken"])
    assert c.status_code == 403 and error_of(c)["field"] == "key"


def test_complete_before_put_is_404(api, user):
    p = api.presign(user["idToken"])
    r = api.api_post("/v1/files/f/complete", {"key": p["key"]}, user["idToken"])
    assert r.status_code == 404 and error_of(r)["status"] == "NOT_FOUND"
    r = api.api_post("/v1/files/presign-download", {"s3Key": p["key"]}, user["idToken"])
    assert r.status_code == 404


def test_an_archived_object_is_refused_until_restored(api, user):
    token = user["idToken"]
    p = api.presign(token)
    assert requests.put(p["putUrl"], data=b"cold bytes", headers={"Content-Type": "image/jpeg"}).status_code == 200
    s3 = boto3.client("s3", endpoint_url=api.s3, config=Config(signature_version="s3v4"))
    # Archived by a copy onto itself into GLACIER (S3 allows a copy that changes the storage class).
    s3.copy_object(Bucket="uploads", Key=p["key"], CopySource={"Bucket": "uploads", "Key": p["key"]}, StorageClass="GLACIER")

    # S3 would refuse the GET (403 InvalidObjectState); the API refuses to presign it, in its own shape.
    d = api.api_post("/v1/files/presign-download", {"s3Key": p["key"]}, token)
    assert d.status_code == 403, d.text
    e = error_of(d)
    assert e["reason"] == "OBJECT_ARCHIVED" and e["status"] == "PERMISSION_DENIED" and e["field"] == "s3Key"
    assert "GLACIER" in e["message"]

    # Once restored the download is signed and reads the bytes.
    assert s3.restore_object(Bucket="uploads", Key=p["key"], RestoreRequest={"Days": 1})["ResponseMetadata"]["HTTPStatusCode"] == 202
    d = api.api_post("/v1/files/presign-download", {"s3Key": p["key"]}, token)
    assert d.status_code == 200, d.text
    got = requests.get(d.json()["getUrl"])
    assert got.status_code == 200 and got.content == b"cold bytes"


# --- S3 side of the flow --------------------------------------------------------------------------

def test_wrong_content_type_is_signature_mismatch_with_diagnosis(api, user):
    p = api.presign(user["idToken"], "image/jpeg", "jpg")
    r = requests.put(p["putUrl"], data=b"\xff\xd8", headers={"Content-Type": "image/png"})
    assert r.status_code == 403
    assert "<Code>SignatureDoesNotMatch</Code>" in r.text
    assert "<CanonicalRequest>" in r.text
    diagnosis = r.headers.get("x-hearth-diagnosis", "")
    assert "image/jpeg" in diagnosis and "image/png" in diagnosis, diagnosis


def test_expired_put_url(private_hearth):
    h = private_hearth
    u = h.sign_up()
    p = h.presign(u["idToken"], "image/png", "png", expiresSeconds=60)
    try:
        h.clock({"advanceSeconds": 61})
        r = requests.put(p["putUrl"], data=b"x", headers={"Content-Type": "image/png"})
        assert r.status_code == 403
        assert "<Code>AccessDenied</Code>" in r.text and "<Message>Request has expired</Message>" in r.text
    finally:
        h.clock({"mode": "system"})


# --- browsers -------------------------------------------------------------------------------------

def test_cors_preflight_and_response_headers(api, user):
    r = requests.options(f"{api.api}/v1/uploads/presign", headers={
        "Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})
    assert r.status_code == 204
    assert r.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    assert "authorization" in r.headers["Access-Control-Allow-Headers"].lower()
    r = api.api_post("/v1/uploads/presign", {"contentType": "image/png", "fileExt": "png"}, user["idToken"],
                        headers={"Origin": "http://localhost:5173"})
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == "http://localhost:5173"


def test_unknown_routes_are_json_errors(api):
    r = requests.get(f"{api.api}/v1/nope")
    assert r.status_code == 404 and error_of(r)["code"] == 404
    r = requests.get(f"{api.api}/v1/uploads/presign")
    assert r.status_code == 405 and "POST" in r.headers["Allow"]
