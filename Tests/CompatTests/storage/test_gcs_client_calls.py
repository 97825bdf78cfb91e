"""The calls google-cloud-storage makes that the first suite (test_gcs_client.py) does not: the
JSON API's documented behaviour for customTime, metadata set to null, composite objects,
`…NotMatch` preconditions on reads, list filters as the client sends them, and preconditions on
copies, rewrites, composes and chunked resumable uploads."""
import base64
import datetime
import os

import google_crc32c
import pytest
import requests
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

UTC = datetime.timezone.utc


@pytest.fixture(scope="module")
def bucket(hearth):
    client = storage.Client(project=hearth["project"], credentials=AnonymousCredentials())
    return client.create_bucket("gcs-client-calls")


def test_custom_time_is_kept_and_only_moves_later(bucket):
    blob = bucket.blob("ct.txt")
    blob.custom_time = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    blob.content_disposition = "attachment; filename=ct.txt"
    blob.upload_from_string(b"x")
    got = bucket.get_blob("ct.txt")
    assert got.custom_time == datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert got.content_disposition == "attachment; filename=ct.txt"
    got.custom_time = datetime.datetime(2025, 6, 1, tzinfo=UTC)
    got.patch()
    assert bucket.get_blob("ct.txt").custom_time == datetime.datetime(2025, 6, 1, tzinfo=UTC)
    # Once set, customTime can be neither moved earlier nor removed.
    got.custom_time = datetime.datetime(2020, 1, 1, tzinfo=UTC)
    with pytest.raises(exceptions.BadRequest):
        got.patch()
    assert bucket.get_blob("ct.txt").custom_time == datetime.datetime(2025, 6, 1, tzinfo=UTC)
    # A new generation starts afresh.
    bucket.blob("ct.txt").upload_from_string(b"y")
    assert bucket.get_blob("ct.txt").custom_time is None


def test_metadata_keys_and_the_whole_metadata_patched_to_null(bucket):
    blob = bucket.blob("meta.txt")
    blob.metadata = {"a": "1", "b": "2", "c": "3"}
    blob.upload_from_string(b"m")
    got = bucket.get_blob("meta.txt")
    got.metadata = {"a": None, "d": "4"}
    got.patch()
    assert bucket.get_blob("meta.txt").metadata == {"b": "2", "c": "3", "d": "4"}
    got = bucket.get_blob("meta.txt")
    got.metadata = None
    got.patch()
    assert bucket.get_blob("meta.txt").metadata is None


def test_list_filters_as_the_client_sends_them(bucket):
    for name in ["l/a.png", "l/b.jpg", "l/sub/", "l/sub/c.png", "l/d/e.png", "m/x"]:
        bucket.blob(name).upload_from_string(b"x")
    # The client sends includeTrailingDelimiter=True (Python's spelling).
    it = bucket.list_blobs(prefix="l/", delimiter="/", include_trailing_delimiter=True)
    assert [b.name for b in it] == ["l/a.png", "l/b.jpg", "l/sub/"] and sorted(it.prefixes) == ["l/d/", "l/sub/"]
    it = bucket.list_blobs(prefix="l/", delimiter="/")
    assert [b.name for b in it] == ["l/a.png", "l/b.jpg"]
    assert [b.name for b in bucket.list_blobs(match_glob="l/**.png")] == ["l/a.png", "l/d/e.png", "l/sub/c.png"]
    assert [b.name for b in bucket.list_blobs(start_offset="l/b", end_offset="l/sub/c")] == ["l/b.jpg", "l/d/e.png", "l/sub/"]
    assert [b.name for b in bucket.list_blobs(prefix="l/", versions=True)] == ["l/a.png", "l/b.jpg", "l/d/e.png", "l/sub/", "l/sub/c.png"]


def test_not_match_preconditions_on_reads_are_not_modified(bucket):
    blob = bucket.blob("nm.txt")
    blob.upload_from_string(b"data")
    got = bucket.get_blob("nm.txt")
    with pytest.raises(exceptions.NotModified):
        got.reload(if_metageneration_not_match=got.metageneration)
    with pytest.raises(exceptions.NotModified):
        got.reload(if_generation_not_match=got.generation)
    with pytest.raises(exceptions.NotModified):
        got.download_as_bytes(if_generation_not_match=got.generation)
    got.reload(if_metageneration_not_match=got.metageneration + 1)
    assert got.download_as_bytes(if_generation_not_match=got.generation + 1) == b"data"
    # On a write a failed …NotMatch stays 412.
    with pytest.raises(exceptions.PreconditionFailed):
        got.delete(if_generation_not_match=got.generation)
    with pytest.raises(exceptions.PreconditionFailed):
        got.reload(if_metageneration_match=got.metageneration + 1)


def test_composite_objects_have_a_crc32c_a_component_count_and_no_md5(bucket, hearth):
    a, b = bucket.blob("c/a"), bucket.blob("c/b")
    a.upload_from_string(b"abc")
    b.upload_from_string(b"def")
    a.reload()
    b.reload()
    dest = bucket.blob("c/ab")
    dest.content_type = "text/plain"
    dest.metadata = {"k": "v"}
    dest.compose([a, b], if_generation_match=0, if_source_generation_match=[a.generation, b.generation])
    got = bucket.get_blob("c/ab")
    assert got.component_count == 2 and got.md5_hash is None
    assert got.crc32c == base64.b64encode(google_crc32c.Checksum(b"abcdef").digest()).decode()
    assert got.metadata == {"k": "v"} and got.content_type == "text/plain"
    assert got.download_as_bytes() == b"abcdef"
    # Components of a composite count as its components.
    abc = bucket.blob("c/abc")
    abc.compose([got, a])
    abc.reload()
    assert abc.component_count == 3 and abc.download_as_bytes() == b"abcdefabc"
    r = requests.get(f"{hearth['services']['storage']['url']}/download/storage/v1/b/{bucket.name}/o/c%2Fab?alt=media")
    assert r.headers["x-goog-hash"] == f"crc32c={got.crc32c}"
    # A composite's copy is composite too; a fresh upload is not.
    copied = bucket.copy_blob(got, bucket, "c/copy")
    assert copied.component_count == 2 and copied.md5_hash is None
    with pytest.raises(exceptions.PreconditionFailed):
        dest.compose([a, b], if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        dest.compose([a, b], if_source_generation_match=[a.generation, 1])
    bucket.blob("c/ab").upload_from_string(b"plain")
    plain = bucket.get_blob("c/ab")
    assert plain.component_count is None and plain.md5_hash is not None


def test_copy_rewrite_and_chunked_uploads_with_preconditions_and_metadata(bucket):
    src = bucket.blob("p/src.txt")
    src.upload_from_string(b"src", content_type="text/plain")
    src.reload()
    bucket.copy_blob(src, bucket, "p/dst.txt", if_generation_match=0, if_source_generation_match=src.generation)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.copy_blob(src, bucket, "p/dst.txt", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.copy_blob(src, bucket, "p/dst2.txt", if_source_metageneration_match=src.metageneration + 1)
    dst = bucket.blob("p/rw.txt")
    dst.metadata = {"k": "v"}
    dst.content_type = "text/html"
    dst.rewrite(src, if_generation_match=0, if_source_generation_match=src.generation)
    got = bucket.get_blob("p/rw.txt")
    assert (got.metadata, got.content_type, got.size) == ({"k": "v"}, "text/html", 3)
    data = os.urandom(3 * 256 * 1024 + 17)
    chunked = bucket.blob("p/chunked.bin", chunk_size=256 * 1024)
    chunked.metadata = {"r": "1"}
    chunked.content_disposition = "inline"
    chunked.upload_from_string(data, if_generation_match=0)
    got = bucket.get_blob("p/chunked.bin")
    assert (got.size, got.metadata, got.content_disposition) == (len(data), {"r": "1"}, "inline")
    assert got.download_as_bytes() == data
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("p/chunked.bin", chunk_size=256 * 1024).upload_from_string(data, if_generation_match=0)
    got.metadata = {"r": "2"}
    with pytest.raises(exceptions.PreconditionFailed):
        got.patch(if_metageneration_match=got.metageneration + 1)
    got.patch(if_metageneration_match=got.metageneration)
    assert bucket.get_blob("p/chunked.bin").metadata == {"r": "2"}


def test_etag_preconditions_on_reads(bucket):
    bucket.blob("etag.txt").upload_from_string(b"e")
    got = bucket.get_blob("etag.txt")
    assert got.download_as_bytes(if_etag_match=got.etag) == b"e"
    assert got.download_as_bytes(if_etag_match=["other", got.etag]) == b"e"
    with pytest.raises(exceptions.PreconditionFailed):
        got.download_as_bytes(if_etag_match="other")
    with pytest.raises(exceptions.PreconditionFailed):
        got.reload(if_etag_match="other")
    with pytest.raises(exceptions.NotModified):
        got.download_as_bytes(if_etag_not_match=got.etag)
    with pytest.raises(exceptions.NotModified):
        got.reload(if_etag_not_match=got.etag)
    got.reload(if_etag_not_match="other")


def test_custom_time_keeps_the_microseconds_the_client_sent(bucket):
    # python-storage's system test test_blob_upload_from_string_w_custom_time sets datetime.now()
    # and wants it back to the microsecond, as GCS gives it; a whole millisecond keeps 3 digits.
    precise = datetime.datetime(2024, 1, 2, 3, 4, 5, 913311, tzinfo=UTC)
    blob = bucket.blob("ct-micros.txt")
    blob.custom_time = precise
    blob.upload_from_string(b"x")
    got = bucket.get_blob("ct-micros.txt")
    assert got.custom_time == precise
    assert got._properties["customTime"] == "2024-01-02T03:04:05.913311Z"
    got.custom_time = datetime.datetime(2025, 6, 1, 0, 0, 0, 5000, tzinfo=UTC)
    got.patch()
    assert bucket.get_blob("ct-micros.txt")._properties["customTime"] == "2025-06-01T00:00:00.005Z"


def test_a_json_api_download_names_the_resource_etag_bare(bucket, hearth):
    # GCS's JSON API sends `ETag: CAE=`-style values unquoted; google-cloud-storage copies the
    # header into blob.etag after a download (python-storage's test_blob_download_as_text).
    blob = bucket.blob("etag-bare.txt")
    blob.upload_from_string("Hello World")
    etag = blob.etag
    fresh = bucket.blob("etag-bare.txt")
    assert fresh.download_as_text() == "Hello World"
    assert fresh.etag == etag
    base = os.environ["STORAGE_EMULATOR_HOST"]
    for url in (f"{base}/storage/v1/b/{bucket.name}/o/etag-bare.txt?alt=media",
                f"{base}/download/storage/v1/b/{bucket.name}/o/etag-bare.txt?alt=media"):
        r = requests.get(url, headers={"Range": "bytes=0-4"})
        assert r.status_code == 206 and r.content == b"Hello" and r.headers["ETag"] == etag
    # The public URL is the XML API's, whose ETag stays a quoted HTTP entity tag.
    bucket.blob("etag-bare.txt").make_public()
    public = requests.get(f"{base}/{bucket.name}/etag-bare.txt")
    assert public.status_code == 200 and public.headers["ETag"].startswith('"')
