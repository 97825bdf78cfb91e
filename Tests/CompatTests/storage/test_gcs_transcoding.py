"""GCS's decompressive transcoding (cloud.google.com/storage/docs/transcoding), through
google-cloud-storage and raw HTTP: an object stored gzip-compressed with `Content-Encoding: gzip`
is served inflated to a request that does not accept gzip, as it is to one that does."""
import base64
import gzip
import hashlib
import os

import google_crc32c
import pytest
import requests
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

TEXT = b"".join(b"line %d of a log that compresses well\n" % i for i in range(20000))


@pytest.fixture(scope="module")
def bucket(hearth):
    client = storage.Client(project=hearth["project"], credentials=AnonymousCredentials())
    return client.create_bucket("gcs-transcoding")


@pytest.fixture(scope="module")
def base(hearth):
    return hearth["services"]["storage"]["url"]


def stored_hash(data):
    crc = base64.b64encode(google_crc32c.Checksum(data).digest()).decode()
    return f"crc32c={crc},md5={base64.b64encode(hashlib.md5(data).digest()).decode()}"


def test_the_client_gets_the_original_bytes_and_raw_download_the_stored_ones(bucket):
    stored = gzip.compress(TEXT)
    blob = bucket.blob("logs/app.log")
    blob.content_encoding = "gzip"
    blob.upload_from_string(stored, content_type="text/plain")
    fetched = bucket.get_blob("logs/app.log")
    assert fetched.content_encoding == "gzip" and fetched.size == len(stored)
    # download_as_bytes asks with Accept-Encoding: gzip and inflates itself (checking the stored
    # bytes' hash on the way); raw_download keeps the stored bytes.
    assert fetched.download_as_bytes() == TEXT
    assert fetched.download_as_bytes(checksum="md5") == TEXT
    assert fetched.download_as_bytes(raw_download=True) == stored


@pytest.mark.parametrize("path", ["/download/storage/v1/b/gcs-transcoding/o/{n}?alt=media",
                                  "/storage/v1/b/gcs-transcoding/o/{n}?alt=media",
                                  "/v0/b/gcs-transcoding/o/{n}?alt=media"])
def test_a_request_without_gzip_gets_the_object_inflated_whole(bucket, base, path):
    stored = gzip.compress(TEXT)
    blob = bucket.blob("t/inflated.txt")
    blob.content_encoding = "gzip"
    blob.upload_from_string(stored, content_type="text/plain")
    url = base + path.format(n="t%2Finflated.txt")
    owner = {"Authorization": "Bearer owner"}
    # requests asks for gzip unless told otherwise.
    for headers in ({"Accept-Encoding": "identity"}, {"Accept-Encoding": "identity", "Range": "bytes=0-9"},
                    {"Accept-Encoding": "identity", "Range": f"bytes={len(stored) + 5}-"}):
        r = requests.get(url, headers={**owner, **headers}, stream=True)
        body = r.raw.read()
        assert r.status_code == 200, (headers, r.status_code, body[:200])
        assert body == TEXT
        assert "Content-Encoding" not in r.headers and "Content-Length" not in r.headers
        assert "Content-Range" not in r.headers
        assert r.headers["Warning"] == "214 UploadServer gunzipped"
        assert r.headers["x-goog-stored-content-encoding"] == "gzip"
        assert r.headers["x-goog-stored-content-length"] == str(len(stored))
        assert r.headers["x-goog-hash"] == stored_hash(stored)
    # Asking for gzip: the stored bytes, ranges included.
    r = requests.get(url, headers={**owner, "Accept-Encoding": "gzip"}, stream=True)
    assert r.status_code == 200 and r.headers["Content-Encoding"] == "gzip" and r.raw.read() == stored
    assert r.headers["Content-Length"] == str(len(stored))
    r = requests.get(url, headers={**owner, "Accept-Encoding": "gzip", "Range": "bytes=0-9"}, stream=True)
    assert r.status_code == 206 and r.raw.read() == stored[:10]


def test_the_download_url_of_the_firebase_api_transcodes_too(bucket, base):
    stored = gzip.compress(TEXT)
    blob = bucket.blob("t/url.txt")
    blob.content_encoding = "gzip"
    blob.metadata = {"firebaseStorageDownloadTokens": "tok-1"}
    blob.upload_from_string(stored, content_type="text/plain")
    url = f"{base}/v0/b/gcs-transcoding/o/t%2Furl.txt?alt=media&token=tok-1"
    r = requests.get(url, headers={"Accept-Encoding": "identity"}, stream=True)
    assert r.status_code == 200 and r.raw.read() == TEXT and "Content-Encoding" not in r.headers
    # A browser (which accepts gzip) gets the stored bytes and inflates them itself.
    r = requests.get(url)
    assert r.headers["Content-Encoding"] == "gzip" and r.content == TEXT


def test_no_transform_and_bytes_that_are_not_gzip_are_served_as_stored(bucket, base):
    stored = gzip.compress(TEXT)
    blob = bucket.blob("t/no-transform.txt")
    blob.content_encoding = "gzip"
    blob.cache_control = "no-transform"
    blob.upload_from_string(stored, content_type="text/plain")
    r = requests.get(f"{base}/download/storage/v1/b/gcs-transcoding/o/t%2Fno-transform.txt?alt=media",
                     headers={"Accept-Encoding": "identity"}, stream=True)
    assert r.headers["Content-Encoding"] == "gzip" and r.raw.read() == stored and "Warning" not in r.headers
    plain = os.urandom(1000)
    blob = bucket.blob("t/not-gzip.bin")
    blob.content_encoding = "gzip"
    blob.upload_from_string(plain)
    r = requests.get(f"{base}/download/storage/v1/b/gcs-transcoding/o/t%2Fnot-gzip.bin?alt=media",
                     headers={"Accept-Encoding": "identity", "Range": "bytes=0-9"}, stream=True)
    assert r.status_code == 206 and r.raw.read() == plain[:10]
