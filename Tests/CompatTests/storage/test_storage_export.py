"""Storage objects in `hearth export` / `--import`: the Firebase emulators' storage_export layout
(buckets.json, blobs/, metadata/), round-tripped with google-cloud-storage, and an export in
firebase-tools' own newer shape (uuid file names) imported."""
import base64
import hashlib
import json
import os
import subprocess
import tempfile
import urllib.parse

import pytest
import requests
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from hearthharness import hearth_bin, start_hearth, stop_hearth

OWNER = {"Authorization": "Bearer owner"}


def client_for(ready, monkeypatch):
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", ready["services"]["storage"]["url"])
    return storage.Client(project=ready["project"], credentials=AnonymousCredentials())


def md5_b64(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def test_objects_round_trip_through_an_offline_export(monkeypatch):
    proc, ready, tmp = start_hearth(in_memory=False)
    big = os.urandom(3 * 1024 * 1024 + 17)
    base = ready["services"]["storage"]["url"]
    default = f"{ready['project']}.appspot.com"
    try:
        client = client_for(ready, monkeypatch)
        bucket = client.create_bucket("export-me")
        blob = bucket.blob("dir/hello.txt")
        blob.metadata = {"colour": "blue"}
        blob.cache_control = "max-age=60"
        blob.upload_from_string(b"hello", content_type="text/plain")
        bucket.blob("big.bin").upload_from_string(big)
        for name in ["a", "a/b", "A", "sp ace/ü#?.txt", "x" * 600]:
            bucket.blob(name).upload_from_string(name.encode())
        # An end user's upload through the Firebase API, with its download token.
        r = requests.post(f"{base}/v0/b/{default}/o?name=users%2Falice%2Fme.png", data=b"\x89PNG....",
                          headers={**OWNER, "Content-Type": "image/png"})
        assert r.status_code == 200, r.text
        token = r.json()["downloadTokens"]
        before = {b.name: (b.generation, b.metageneration, b.md5_hash, b.crc32c) for b in bucket.list_blobs()}
    finally:
        stop_hearth(proc)
    out = os.path.join(tmp, "out")
    r = subprocess.run([hearth_bin(), "export", out], cwd=tmp, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "storage" in json.load(open(os.path.join(out, "hearth-export.json")))["services"]
    folder = os.path.join(out, "storage")
    ids = [b["id"] for b in json.load(open(os.path.join(folder, "buckets.json")))["buckets"]]
    assert "export-me" in ids and default in ids
    meta = json.load(open(os.path.join(folder, "metadata", "export-me", "dir%2Fhello.txt.json")))
    assert meta["name"] == "dir/hello.txt" and meta["size"] == 5 and meta["contentType"] == "text/plain"
    assert meta["customMetadata"] == {"colour": "blue"} and meta["cacheControl"] == "max-age=60"
    assert meta["md5Hash"] == md5_b64(b"hello")
    assert open(os.path.join(folder, "blobs", "export-me", "dir%2Fhello.txt"), "rb").read() == b"hello"
    png = json.load(open(os.path.join(folder, "metadata", default, "users%2Falice%2Fme.png.json")))
    assert png["downloadTokens"] == [token] and "customMetadata" not in png
    # A name too long for a file name, and one differing only in case, get hashed file names.
    hashed = [f for f in os.listdir(os.path.join(folder, "blobs", "export-me")) if f.startswith("sha256-")]
    assert len(hashed) == 2

    proc, ready, _ = start_hearth(["--import", out])
    try:
        client = client_for(ready, monkeypatch)
        bucket = client.bucket("export-me")
        after = {b.name: (b.generation, b.metageneration, b.md5_hash, b.crc32c) for b in bucket.list_blobs()}
        assert after == before
        hello = bucket.get_blob("dir/hello.txt")
        assert hello.metadata == {"colour": "blue"} and hello.cache_control == "max-age=60"
        assert hello.content_type == "text/plain" and hello.download_as_bytes() == b"hello"
        assert bucket.blob("big.bin").download_as_bytes() == big
        assert bucket.blob("sp ace/ü#?.txt").download_as_bytes() == "sp ace/ü#?.txt".encode()
        assert bucket.blob("x" * 600).download_as_bytes() == b"x" * 600
        # The download URL handed out before the export still works.
        base = ready["services"]["storage"]["url"]
        r = requests.get(f"{base}/v0/b/{default}/o/users%2Falice%2Fme.png?alt=media&token={token}")
        assert r.status_code == 200 and r.content == b"\x89PNG...."
    finally:
        stop_hearth(proc)


def test_a_firebase_emulators_storage_export_is_imported(monkeypatch):
    """firebase-tools writes blobs/<uuid>, metadata/<uuid>.json (its StoredFileMetadata: crc32c as
    a decimal string, tokens in downloadTokens) and buckets.json, named in firebase-export-metadata.json."""
    d = tempfile.mkdtemp(prefix="firebase-export-")
    folder = os.path.join(d, "storage_export")
    os.makedirs(os.path.join(folder, "blobs"))
    os.makedirs(os.path.join(folder, "metadata"))
    json.dump({"version": "14.1.0", "storage": {"version": "14.1.0", "path": "storage_export"}},
              open(os.path.join(d, "firebase-export-metadata.json"), "w"))
    json.dump({"buckets": [{"id": "demo-other.appspot.com"}]}, open(os.path.join(folder, "buckets.json"), "w"), indent=2)
    data = b"exported by the Firebase emulator"
    uid = "0f6e3e4c-3a43-4a52-9d7e-6d7c4c0e2b11"
    open(os.path.join(folder, "blobs", uid), "wb").write(data)
    json.dump({"name": "photos/cat.jpg", "bucket": "demo-other.appspot.com", "generation": 1767225600123,
               "metageneration": 3, "contentType": "image/jpeg", "timeCreated": "2026-01-01T00:00:00.123Z",
               "updated": "2026-01-02T00:00:00.456Z", "storageClass": "STANDARD", "size": len(data),
               "md5Hash": "stale-md5-is-recomputed", "crc32c": "12345", "etag": "x",
               "downloadTokens": ["tok-1"], "customMetadata": {"by": "firebase"}},
              open(os.path.join(folder, "metadata", uid + ".json"), "w"), indent=2)
    proc, ready, _ = start_hearth(["--import", d])
    try:
        client = client_for(ready, monkeypatch)
        blob = client.bucket("demo-other.appspot.com").get_blob("photos/cat.jpg")
        assert blob.download_as_bytes() == data
        assert blob.md5_hash == md5_b64(data)
        assert blob.generation == 1767225600123 and blob.metageneration == 3
        assert blob.content_type == "image/jpeg" and blob.metadata["by"] == "firebase"
        assert blob.time_created.isoformat().startswith("2026-01-01T00:00:00.123")
        base = ready["services"]["storage"]["url"]
        name = urllib.parse.quote("photos/cat.jpg", safe="")
        r = requests.get(f"{base}/v0/b/demo-other.appspot.com/o/{name}?alt=media&token=tok-1")
        assert r.status_code == 200 and r.content == data
    finally:
        stop_hearth(proc)


def test_a_metadata_file_without_its_blob_stops_the_import():
    d = tempfile.mkdtemp(prefix="storage-export-")
    os.makedirs(os.path.join(d, "storage", "metadata", "b1"))
    json.dump({"format": "hearth-export", "version": 1, "services": ["storage"]}, open(os.path.join(d, "hearth-export.json"), "w"))
    json.dump({"name": "x", "bucket": "b1"}, open(os.path.join(d, "storage", "metadata", "b1", "x.json"), "w"))
    with pytest.raises(RuntimeError, match="exited with 2"):
        start_hearth(["--import", d])


def test_access_control_and_bucket_settings_survive_an_export(monkeypatch):
    """Hearth's own fields: a bucket's settings, ACLs and IAM policy in buckets.json, an object's
    ACL in its metadata — so what the public URL serves (or refuses) is the same after --import."""
    proc, ready, tmp = start_hearth(in_memory=False)
    try:
        client = client_for(ready, monkeypatch)
        base = ready["services"]["storage"]["url"]
        shut = client.create_bucket("shut")
        # Made public before the bucket enforces public access prevention (after, GCS refuses the grant).
        shut.blob("made-public").upload_from_string(b"p", predefined_acl="publicRead")
        shut.labels = {"team": "web"}
        shut.iam_configuration.public_access_prevention = "enforced"
        shut.patch()
        open_bucket = client.create_bucket("open")
        open_bucket.default_object_acl.all().grant_read()
        open_bucket.default_object_acl.save()
        open_bucket.blob("by-default").upload_from_string(b"d")
        private = open_bucket.blob("private")
        private.upload_from_string(b"s", predefined_acl="private")
        policy = open_bucket.get_iam_policy()
        policy.bindings.append({"role": "roles/storage.legacyBucketReader", "members": {"user:ann@example.com"}})
        open_bucket.set_iam_policy(policy)
        before = (requests.get(f"{base}/shut/made-public").status_code, requests.get(f"{base}/open/by-default").status_code,
                  requests.get(f"{base}/open/private").status_code)
        assert before == (403, 200, 403)
    finally:
        stop_hearth(proc)
    out = os.path.join(tmp, "out")
    r = subprocess.run([hearth_bin(), "export", out], cwd=tmp, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    entries = {b["id"]: b for b in json.load(open(os.path.join(out, "storage", "buckets.json")))["buckets"]}
    assert entries["shut"]["settings"]["iamConfiguration"]["publicAccessPrevention"] == "enforced"
    assert {"entity": "allUsers", "role": "READER"} in entries["open"]["defaultObjectAcl"]
    meta = json.load(open(os.path.join(out, "storage", "metadata", "open", "private.json")))
    assert [e["entity"] for e in meta["acl"]] == ["user-" + ready["project"] + "@appspot.gserviceaccount.com"]

    proc, ready, _ = start_hearth(["--import", out])
    try:
        client = client_for(ready, monkeypatch)
        base = ready["services"]["storage"]["url"]
        after = (requests.get(f"{base}/shut/made-public").status_code, requests.get(f"{base}/open/by-default").status_code,
                 requests.get(f"{base}/open/private").status_code)
        assert after == before
        shut = client.get_bucket("shut")
        assert shut.labels == {"team": "web"} and shut.iam_configuration.public_access_prevention == "enforced"
        open_bucket = client.get_bucket("open")
        default_acl = open_bucket.default_object_acl
        default_acl.reload()
        assert "allUsers" in [e["entity"] for e in default_acl]
        roles = {b["role"]: b["members"] for b in open_bucket.get_iam_policy().bindings}
        assert "user:ann@example.com" in roles["roles/storage.legacyBucketReader"]
        object_acl = client.bucket("shut").blob("made-public").acl
        object_acl.reload()
        assert "allUsers" in [e["entity"] for e in object_acl]
    finally:
        stop_hearth(proc)
