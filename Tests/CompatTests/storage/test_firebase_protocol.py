"""The Firebase Storage REST protocol as the iOS SDK drives it (GTMSessionUploadFetcher's resumable
upload: start, upload chunks with offsets, finalize; metadata; download URL with token), with end-user
ID tokens from Hearth's Auth, judged by the shipped rules/storage.rules."""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import uuid

import pytest
import requests

from hearthharness import REPO, hearth_bin

API_KEY = "fake-api-key"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2000  # ~512 KB


def sign_up(ready):
    auth = ready["services"]["auth"]["url"]
    r = requests.post(f"{auth}/identitytoolkit.googleapis.com/v1/accounts:signUp?key={API_KEY}",
                      json={"email": f"u-{uuid.uuid4().hex[:10]}@example.com", "password": "secret-pw", "returnSecureToken": True})
    r.raise_for_status()
    return r.json()


class IOSUploader:
    """Speaks the resumable protocol the way FirebaseStorage on iOS does (256 KiB-granular chunks)."""

    def __init__(self, storage_url, bucket, token):
        self.base, self.bucket, self.token = storage_url, bucket, token

    def headers(self, **extra):
        h = {"Authorization": f"Firebase {self.token}"}
        h.update({k.replace("_", "-"): v for k, v in extra.items()})
        return h

    def start(self, path, data_len, content_type, metadata=None):
        url = f"{self.base}/v0/b/{self.bucket}/o?name={urllib.parse.quote(path, safe='')}&uploadType=resumable"
        body = {"name": path, "contentType": content_type}
        if metadata:
            body["metadata"] = metadata
        return requests.post(url, data=json.dumps(body), headers=self.headers(**{
            "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
            "X-Goog-Upload-Header-Content-Length": str(data_len), "X-Goog-Upload-Header-Content-Type": content_type,
            "Content-Type": "application/json; charset=UTF-8"}))

    def chunk(self, upload_url, offset, data, final=False):
        return requests.post(upload_url, data=data, headers=self.headers(**{
            "X-Goog-Upload-Command": "upload, finalize" if final else "upload", "X-Goog-Upload-Offset": str(offset),
            "Content-Type": "application/octet-stream"}))

    def query(self, upload_url):
        return requests.post(upload_url, headers=self.headers(**{"X-Goog-Upload-Command": "query"}))


def interrupted_chunk(upload_url, token, offset, data):
    """Sends a chunk's headers and half its body, then drops the connection (a phone losing signal)."""
    u = urllib.parse.urlsplit(upload_url)
    s = socket.create_connection((u.hostname, u.port))
    head = (f"POST {u.path}?{u.query} HTTP/1.1\r\nHost: {u.netloc}\r\nAuthorization: Firebase {token}\r\n"
            f"X-Goog-Upload-Command: upload\r\nX-Goog-Upload-Offset: {offset}\r\nContent-Length: {len(data)}\r\n\r\n")
    s.sendall(head.encode() + data[: len(data) // 2])
    time.sleep(0.2)
    s.close()


@pytest.fixture
def storage(hearth):
    return hearth["services"]["storage"]["url"], f"{hearth['project']}.appspot.com"


def test_owner_uploads_an_image_resuming_an_interrupted_chunk(hearth, storage):
    base, bucket = storage
    user = sign_up(hearth)
    uid, token = user["localId"], user["idToken"]
    up = IOSUploader(base, bucket, token)
    path = f"users/{uid}/profile.png"
    start = up.start(path, len(PNG), "image/png", {"origin": "ios"})
    assert start.status_code == 200, start.text
    assert start.headers["X-Goog-Upload-Status"] == "active"
    upload_url = start.headers["X-Goog-Upload-URL"]
    step = 256 * 1024
    first = up.chunk(upload_url, 0, PNG[:step])
    assert first.status_code == 200 and first.headers["X-Goog-Upload-Status"] == "active"
    interrupted_chunk(upload_url, token, step, PNG[step:2 * step])
    q = up.query(upload_url)
    assert q.headers["X-Goog-Upload-Size-Received"] == str(step)
    wrong = up.chunk(upload_url, step + 10, PNG[step + 10:])
    assert wrong.status_code == 400 and wrong.headers["X-Goog-Upload-Size-Received"] == str(step)
    done = up.chunk(upload_url, step, PNG[step:], final=True)
    assert done.status_code == 200, done.text
    assert done.headers["X-Goog-Upload-Status"] == "final"
    meta = done.json()
    assert meta["name"] == path and meta["size"] == str(len(PNG)) and meta["contentType"] == "image/png"
    assert meta["metadata"] == {"origin": "ios"}
    # The download URL the SDK builds from the metadata works without credentials.
    download_url = f"{base}/v0/b/{bucket}/o/{urllib.parse.quote(path, safe='')}?alt=media&token={meta['downloadTokens']}"
    got = requests.get(download_url)
    assert got.status_code == 200 and got.content == PNG
    assert requests.get(download_url.replace(meta["downloadTokens"], "not-the-token")).status_code == 403
    # Metadata read and update by the owner.
    meta_url = f"{base}/v0/b/{bucket}/o/{urllib.parse.quote(path, safe='')}"
    assert requests.get(meta_url, headers=up.headers()).json()["md5Hash"] == meta["md5Hash"]
    patched = requests.patch(meta_url, json={"contentType": "image/png", "metadata": {"origin": "ios", "v": "2"}},
                             headers=up.headers(Content_Type="application/json"))
    assert patched.status_code == 200 and patched.json()["metadata"] == {"origin": "ios", "v": "2"}
    listed = requests.get(f"{base}/v0/b/{bucket}/o?prefix={urllib.parse.quote(f'users/{uid}/', safe='')}&delimiter=%2F",
                          headers=up.headers()).json()
    assert listed["items"] == [{"name": path, "bucket": bucket}]


@pytest.mark.parametrize("case", ["other user", "too large", "not an image"])
def test_rules_deny_with_storage_error_body(hearth, storage, case):
    base, bucket = storage
    owner, other = sign_up(hearth), sign_up(hearth)
    token = other["idToken"] if case == "other user" else owner["idToken"]
    size = 6 * 1024 * 1024 if case == "too large" else 1000
    content_type = "text/plain" if case == "not an image" else "image/png"
    up = IOSUploader(base, bucket, token)
    r = up.start(f"users/{owner['localId']}/x.png", size, content_type)
    assert r.status_code == 403
    err = r.json()["error"]
    assert err["code"] == 403 and err["message"].startswith("Permission denied.")
    # A simple upload whose real body breaks the rules is denied too.
    body = os.urandom(size) if case == "too large" else b"x" * size
    target = urllib.parse.quote("users/%s/y.png" % owner["localId"], safe="")
    simple = requests.post(f"{base}/v0/b/{bucket}/o?name={target}",
                           data=body, headers={"Authorization": f"Firebase {token}", "Content-Type": content_type})
    assert simple.status_code == 403 and simple.json()["error"]["code"] == 403


def test_bad_input_gets_errors_and_the_server_lives(hearth, storage):
    base, bucket = storage
    user = sign_up(hearth)
    up = IOSUploader(base, bucket, user["idToken"])
    unknown = up.query(f"{base}/v0/b/{bucket}/o?name=x&upload_id=nope&upload_protocol=resumable")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == 404
    start = up.start(f"users/{user['localId']}/short.png", 1000, "image/png")
    url = start.headers["X-Goog-Upload-URL"]
    # A finalize before the declared bytes arrived, and a chunk beyond the declared size.
    fin = requests.post(url, headers=up.headers(**{"X-Goog-Upload-Command": "finalize"}))
    assert fin.status_code == 400
    assert up.chunk(url, 0, b"\0" * 2000, final=True).status_code == 400
    bad = requests.post(f"{base}/v0/b/{bucket}/o?name=.", data=b"x", headers={"Authorization": "Bearer owner"})
    assert bad.status_code == 400
    none = urllib.parse.quote("users/%s/none.png" % user["localId"], safe="")
    assert requests.get(f"{base}/v0/b/{bucket}/o/{none}", headers=up.headers()).status_code == 404


def test_kill_9_during_a_resumable_upload_loses_no_acknowledged_chunk():
    tmp = tempfile.mkdtemp(prefix="hearth-storage-crash-")
    ready_path = os.path.join(tmp, "ready.json")

    def start():
        if os.path.exists(ready_path):
            os.remove(ready_path)
        proc = subprocess.Popen([hearth_bin(), "start", "--data-dir", os.path.join(tmp, "data"), "--ready-file", ready_path,
                                 "--quiet", "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0",
                                 "--api-port", "0", "--storage-port", "0", "--ui-port", "0", "--exit-with-parent"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        deadline = time.time() + 30
        while not os.path.exists(ready_path):
            assert proc.poll() is None and time.time() < deadline, "hearth did not start"
            time.sleep(0.02)
        with open(ready_path) as f:
            return proc, json.load(f)

    proc, ready = start()
    user = sign_up(ready)
    base = ready["services"]["storage"]["url"]
    bucket = f"{ready['project']}.appspot.com"
    up = IOSUploader(base, bucket, user["idToken"])
    data = os.urandom(3 * 256 * 1024)
    url = up.start(f"users/{user['localId']}/crash.png", len(data), "image/png").headers["X-Goog-Upload-URL"]
    step = 256 * 1024
    assert up.chunk(url, 0, data[:step]).status_code == 200
    assert up.chunk(url, step, data[step:2 * step]).status_code == 200
    # The third chunk is mid-body (its first half in the server) when the process dies.
    u = urllib.parse.urlsplit(url)
    s = socket.create_connection((u.hostname, u.port))
    s.sendall((f"POST {u.path}?{u.query} HTTP/1.1\r\nHost: {u.netloc}\r\nAuthorization: Firebase {user['idToken']}\r\n"
               f"X-Goog-Upload-Command: upload\r\nX-Goog-Upload-Offset: {2 * step}\r\nContent-Length: {step}\r\n\r\n").encode()
              + data[2 * step:2 * step + step // 2])
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    s.close()
    proc, ready2 = start()
    try:
        new_base = ready2["services"]["storage"]["url"]
        url2 = url.replace(base, new_base)
        up2 = IOSUploader(new_base, bucket, user["idToken"])
        assert up2.query(url2).headers["X-Goog-Upload-Size-Received"] == str(2 * step)
        done = up2.chunk(url2, 2 * step, data[2 * step:], final=True)
        assert done.status_code == 200, done.text
        token = done.json()["downloadTokens"]
        path = urllib.parse.quote(f"users/{user['localId']}/crash.png", safe="")
        assert requests.get(f"{new_base}/v0/b/{bucket}/o/{path}?alt=media&token={token}").content == data
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
