"""google-cloud-storage (the real PyPI client) against Hearth's Storage emulator via STORAGE_EMULATOR_HOST."""
import hashlib
import os

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage


@pytest.fixture(scope="module")
def client(hearth):
    assert os.environ["STORAGE_EMULATOR_HOST"].startswith("http://127.0.0.1:")
    return storage.Client(project=hearth["project"], credentials=AnonymousCredentials())


@pytest.fixture(scope="module")
def bucket(client):
    return client.create_bucket("gcs-compat")


def test_default_buckets_and_bucket_errors(client, hearth, bucket):
    names = [b.name for b in client.list_buckets()]
    assert f"{hearth['project']}.appspot.com" in names and "gcs-compat" in names
    with pytest.raises(exceptions.Conflict):
        client.create_bucket("gcs-compat")
    with pytest.raises(exceptions.NotFound):
        client.get_bucket("no-such-bucket")


def test_small_upload_download_and_metadata(bucket):
    blob = bucket.blob("dir/hello.txt")
    blob.metadata = {"colour": "blue"}
    blob.upload_from_string(b"hello world", content_type="text/plain")
    fetched = bucket.get_blob("dir/hello.txt")
    assert fetched.size == 11
    assert fetched.content_type == "text/plain"
    assert fetched.metadata == {"colour": "blue"}
    assert fetched.md5_hash == "XrY7u+Ae7tCTyyK7j1rNww=="
    assert fetched.crc32c == "yZRlqg=="
    assert fetched.generation > 0 and fetched.metageneration == 1
    assert fetched.download_as_bytes() == b"hello world"
    # Ranges (end inclusive, as the client's API has it).
    assert fetched.download_as_bytes(start=6, end=10) == b"world"
    assert fetched.download_as_bytes(start=6) == b"world"
    fetched.metadata = {"colour": "red", "size": "L"}
    fetched.cache_control = "no-cache"
    fetched.patch()
    again = bucket.get_blob("dir/hello.txt")
    assert again.metadata == {"colour": "red", "size": "L"} and again.metageneration == 2
    assert again.cache_control == "no-cache"


def test_large_resumable_upload(bucket, tmp_path):
    data = os.urandom(24 * 1024 * 1024 + 12345)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    blob = bucket.blob("big.bin", chunk_size=8 * 1024 * 1024)
    blob.upload_from_filename(str(path), checksum="crc32c")
    stored = bucket.get_blob("big.bin")
    assert stored.size == len(data)
    assert stored.md5_hash == __import__("base64").b64encode(hashlib.md5(data).digest()).decode()
    out = tmp_path / "back.bin"
    stored.download_to_filename(str(out), checksum="md5")
    assert out.read_bytes() == data
    assert stored.download_as_bytes(start=len(data) - 10) == data[-10:]


def test_list_with_delimiter_and_pages(bucket):
    for name in ["list/a/1", "list/a/2", "list/b/1", "list/c", "list/d"]:
        bucket.blob(name).upload_from_string(b"x")
    it = bucket.list_blobs(prefix="list/", delimiter="/")
    names = [b.name for b in it]
    assert names == ["list/c", "list/d"]
    assert sorted(it.prefixes) == ["list/a/", "list/b/"]
    paged = bucket.list_blobs(prefix="list/", max_results=10, page_size=2)
    assert [b.name for b in paged] == ["list/a/1", "list/a/2", "list/b/1", "list/c", "list/d"]


def test_preconditions(bucket):
    blob = bucket.blob("pre.txt")
    blob.upload_from_string(b"one", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("pre.txt").upload_from_string(b"two", if_generation_match=0)
    current = bucket.get_blob("pre.txt")
    bucket.blob("pre.txt").upload_from_string(b"three", if_generation_match=current.generation)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("pre.txt").delete(if_generation_match=current.generation)
    # The old generation is gone (one live generation per object).
    with pytest.raises(exceptions.NotFound):
        current.delete()
    latest = bucket.get_blob("pre.txt")
    latest.metadata = {"k": "v"}
    with pytest.raises(exceptions.PreconditionFailed):
        latest.patch(if_metageneration_match=7)
    latest.patch(if_metageneration_match=1)
    assert bucket.get_blob("pre.txt").download_as_bytes() == b"three"


def test_copy_rewrite_compose_delete(client, bucket):
    src = bucket.blob("copy/src.txt")
    src.upload_from_string(b"abc", content_type="text/plain")
    other = client.create_bucket("gcs-compat-other")
    copied = bucket.copy_blob(src, other, "dst.txt")
    assert copied.download_as_bytes() == b"abc" and copied.content_type == "text/plain"
    rewritten = other.blob("rewritten.txt")
    token, done, total = rewritten.rewrite(src)
    assert token is None and done == total == 3
    part2 = bucket.blob("copy/part2.txt")
    part2.upload_from_string(b"def")
    composed = bucket.blob("copy/composed.txt")
    composed.compose([src, part2])
    assert composed.download_as_bytes() == b"abcdef"
    composed.reload()
    assert composed.size == 6
    src.delete()
    with pytest.raises(exceptions.NotFound):
        src.reload()
    with pytest.raises(exceptions.NotFound):
        bucket.blob("copy/nothing").delete()
    # The copies share the bytes but not the fate of the deleted source.
    assert other.blob("dst.txt").download_as_bytes() == b"abc"


def test_errors_have_gcs_bodies(client, bucket):
    with pytest.raises(exceptions.NotFound) as e:
        bucket.blob("missing.txt").download_as_bytes()
    assert e.value.code == 404
    with pytest.raises(exceptions.BadRequest):
        bucket.blob("a\nb").upload_from_string(b"x")


def test_a_range_from_the_end_is_416_on_every_download_path(client, bucket, hearth):
    """GCS answers an unsatisfiable range (first byte at or past the end; any first-byte range of an
    empty object) with 416 and `Content-Range: bytes */size`, on the JSON API and the Firebase API."""
    import requests

    ten = bucket.blob("range/ten.txt")
    ten.upload_from_string(b"0123456789")
    # google-cloud-storage sends `Range: bytes=10-` and raises what GCS's 416 maps to.
    with pytest.raises(exceptions.RequestRangeNotSatisfiable):
        ten.download_as_bytes(start=10)
    with pytest.raises(exceptions.RequestRangeNotSatisfiable):
        ten.download_as_bytes(start=12, end=20)
    assert ten.download_as_bytes(start=9) == b"9"
    assert ten.download_as_bytes(start=5, end=100) == b"56789"
    bucket.blob("range/empty.txt").upload_from_string(b"")
    assert bucket.blob("range/empty.txt").download_as_bytes() == b""

    base = hearth["services"]["storage"]["url"]
    quoted = {n: requests.utils.quote(n, safe="") for n in ("range/ten.txt", "range/empty.txt")}
    owner = {"Authorization": "Bearer owner"}
    for name, size in (("range/ten.txt", 10), ("range/empty.txt", 0)):
        q = quoted[name]
        paths = [(f"/v0/b/{bucket.name}/o/{q}?alt=media", owner, False),
                 (f"/download/storage/v1/b/{bucket.name}/o/{q}?alt=media", {}, True),
                 (f"/storage/v1/b/{bucket.name}/o/{q}?alt=media", {}, True)]
        for path, headers, gcs in paths:
            for rng in (f"bytes={size}-", f"bytes={size}-{size + 5}", "bytes=-0"):
                r = requests.get(base + path, headers={**headers, "Range": rng})
                assert r.status_code == 416, (path, rng, r.status_code, r.content[:200])
                assert r.headers["Content-Range"] == f"bytes */{size}", (path, rng)
                err = r.json()["error"]
                assert err["code"] == 416
                assert (err.get("errors", [{}])[0].get("reason") == "requestedRangeNotSatisfiable") == gcs
            # The last byte is still there; a suffix of an empty object is the whole (empty) object.
            r = requests.get(base + path, headers={**headers, "Range": "bytes=-1"})
            if size:
                assert r.status_code == 206 and r.content == b"9" and r.headers["Content-Range"] == "bytes 9-9/10"
            else:
                assert r.status_code == 200 and r.content == b""
