"""`--public-host`: every URL hearth hands out names the address clients reach it at (a phone cannot
use 127.0.0.1), and presigned signatures are computed for that host, so they verify when a client
sends it. `localhost` stands in for a LAN address here: it reaches the 127.0.0.1 listener but is a
different Host header, so a URL signed for 127.0.0.1 would fail."""
import boto3
import pytest
import requests
from botocore.config import Config

from hearthharness import start_hearth, stop_hearth

API_KEY = "fake-api-key"


@pytest.fixture(scope="module")
def public():
    proc, ready, _ = start_hearth(["--public-host", "localhost"])
    yield ready
    stop_hearth(proc)


def test_ready_file_and_exports_name_the_public_host(public):
    for name, s in public["services"].items():
        assert s["host"] == "localhost" and s["url"].startswith("http://localhost:"), (name, s)
        assert s["bind"] == "127.0.0.1"
    env = public["env"]
    assert env["FIREBASE_AUTH_EMULATOR_HOST"].startswith("localhost:")
    assert env["FIRESTORE_EMULATOR_HOST"].startswith("localhost:")
    assert env["AWS_ENDPOINT_URL_S3"].startswith("http://localhost:")
    emulators = requests.get(public["services"]["hub"]["url"] + "/emulators").json()
    assert {e["host"] for e in emulators.values()} == {"localhost"}


def test_presigned_upload_and_download_urls_use_and_verify_for_the_public_host(public):
    s = public["services"]
    up = requests.post(f"{s['auth']['url']}/identitytoolkit.googleapis.com/v1/accounts:signUp?key={API_KEY}",
                       json={"email": "phone@example.com", "password": "secret-pw", "returnSecureToken": True}).json()
    bearer = {"Authorization": f"Bearer {up['idToken']}"}
    p = requests.post(f"{s['api']['url']}/v1/uploads/presign", json={"contentType": "image/jpeg", "fileExt": "jpg"},
                      headers=bearer).json()
    assert p["putUrl"].startswith(f"http://localhost:{s['s3']['port']}/"), p
    body = b"\xff\xd8\xff\xe0" + b"x" * 100 + b"\xff\xd9"
    put = requests.put(p["putUrl"], data=body, headers={"Content-Type": "image/jpeg"})
    assert put.status_code == 200, put.text
    d = requests.post(f"{s['api']['url']}/v1/files/presign-download", json={"s3Key": p["key"]}, headers=bearer).json()
    url = d.get("getUrl")
    assert url and url.startswith(f"http://localhost:{s['s3']['port']}/"), d
    got = requests.get(url)
    assert got.status_code == 200 and got.content == body


def test_the_same_url_sent_to_127_0_0_1_fails_its_signature(public):
    """The signature covers the host: proof that it was computed for the public one."""
    s3 = boto3.client("s3", endpoint_url=public["env"]["AWS_ENDPOINT_URL_S3"], aws_access_key_id="test",
                      aws_secret_access_key="test", region_name="us-east-1", config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    s3.put_object(Bucket="uploads", Key="k.txt", Body=b"hi")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "uploads", "Key": "k.txt"})
    assert requests.get(url).status_code == 200
    assert requests.get(url.replace("localhost", "127.0.0.1", 1)).status_code == 403
