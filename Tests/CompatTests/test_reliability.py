"""Faults a user's machine throws at hearth (docs/reliability.md): log output that cannot be
written, a data directory whose disk fills up, and kill -9 in the middle of every kind of write.
Real clients throughout (boto3, requests on the REST APIs); the filesystem faults mount a small
tmpfs and skip, with the reason, where mounting is not allowed."""
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid

import boto3
import pytest
import requests
from botocore.config import Config

from hearthharness import kill_9_during, start_hearth_on

OWNER = {"Authorization": "Bearer owner"}


def start(data_dir=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, quiet=True, tmp=None):
    tmp = tmp or tempfile.mkdtemp(prefix="hearth-rel-")
    return start_hearth_on(data_dir, os.path.join(tmp, f"ready-{uuid.uuid4().hex[:6]}.json"), stdout=stdout, stderr=stderr, quiet=quiet)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def s3_client(info):
    return boto3.client("s3", endpoint_url=info["services"]["s3"]["url"], aws_access_key_id="test", aws_secret_access_key="test",
                        region_name="us-east-1", config=Config(retries={"max_attempts": 0}, s3={"addressing_style": "path"}))


def docs_url(info):
    return f"{info['services']['firestore']['url']}/v1/projects/{info['project']}/databases/(default)/documents"


def auth_url(info, path):
    return f"{info['services']['auth']['url']}/identitytoolkit.googleapis.com/v1/{path}"


class Tmpfs:
    """A size-limited tmpfs the test mounts itself (root and mount(2) needed, else skip)."""

    def __init__(self, size):
        self.path = tempfile.mkdtemp(prefix="hearth-tmpfs-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", self.path], capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(self.path)
            pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or 'mount failed'}); run as root to test a full disk")

    def fill(self):
        """Writes a filler file until the filesystem refuses (ENOSPC); returns its path."""
        filler = os.path.join(self.path, f"filler-{uuid.uuid4().hex[:6]}")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (1 << 20, 65536, 4096, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)
        return filler

    def close(self):
        subprocess.run(["umount", "-l", self.path], capture_output=True)
        shutil.rmtree(self.path, ignore_errors=True)


def stats(info):
    return requests.get(info["services"]["hub"]["url"] + "/emulator/v1/stats").json()


# --- A log write must never kill the server ----------------------------------------------------

def serve_some(info, n=40):
    """Requests that each write a log line; all must be answered."""
    s = requests.Session()
    for i in range(n):
        r = s.patch(f"{docs_url(info)}/logtest/d{i}", json={"fields": {"i": {"integerValue": str(i)}}}, headers=OWNER, timeout=10)
        assert r.status_code == 200, r.text
        assert s.get(f"{info['services']['hub']['url']}/healthz", timeout=10).text == "ok"


def test_stdout_and_stderr_into_a_closed_pipe_keep_serving():
    read_end, write_end = os.pipe()
    proc, info = start(stdout=write_end, stderr=write_end, quiet=False)
    os.close(write_end)
    os.close(read_end)  # the reader is gone: every log line now fails with EPIPE
    try:
        serve_some(info)
        assert proc.poll() is None, "hearth died writing its log into a closed pipe"
        assert stats(info)["droppedLogWrites"] > 0
    finally:
        stop(proc)
    assert proc.returncode == 0


def test_a_log_on_a_full_disk_keeps_serving():
    fs = Tmpfs("1m")
    try:
        log = open(os.path.join(fs.path, "hearth.log"), "wb")
        proc, info = start(stdout=log, stderr=log, quiet=False)
        try:
            fs.fill()
            serve_some(info)
            assert proc.poll() is None, "hearth died writing its log onto a full disk"
            assert stats(info)["droppedLogWrites"] > 0
        finally:
            stop(proc)
            log.close()
        assert proc.returncode == 0
    finally:
        fs.close()


# --- Faults of the disk ------------------------------------------------------------------------

def test_a_full_data_disk_refuses_writes_cleanly_keeps_reads_and_recovers_without_restart():
    fs = Tmpfs("24m")
    data_dir = os.path.join(fs.path, "data")
    try:
        proc, info = start(data_dir=data_dir)
        try:
            s3 = s3_client(info)
            s3.create_bucket(Bucket="full")
            s3.put_object(Bucket="full", Key="before", Body=b"kept")
            session = requests.Session()
            assert session.patch(f"{docs_url(info)}/full/before", json={"fields": {"v": {"stringValue": "kept"}}}, headers=OWNER).status_code == 200
            r = session.post(auth_url(info, "accounts:signUp?key=k"), json={"email": "before@example.com", "password": "password1"})
            assert r.status_code == 200, r.text
            before_uid, before_token = r.json()["localId"], r.json()["idToken"]

            filler = fs.fill()
            # S3: a body that cannot fit → InternalError, S3's answer for a failure on its side.
            with pytest.raises(s3.exceptions.ClientError) as e:
                s3.put_object(Bucket="full", Key="big", Body=os.urandom(4 * 1024 * 1024))
            assert e.value.response["Error"]["Code"] == "InternalError" and e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
            # Firestore: RESOURCE_EXHAUSTED; Auth: an error body. Small writes may still fit in
            # space SQLite already holds, so write until one is refused.
            refused_fs = refused_auth = None
            big = "x" * 200_000
            for i in range(200):
                r = session.patch(f"{docs_url(info)}/full/d{i}", json={"fields": {"v": {"stringValue": big}}}, headers=OWNER)
                if r.status_code != 200:
                    refused_fs = r
                    break
            assert refused_fs is not None, "no Firestore write was refused on a full disk"
            assert refused_fs.status_code == 429 and refused_fs.json()["error"]["status"] == "RESOURCE_EXHAUSTED", refused_fs.text
            for i in range(200):
                r = session.post(auth_url(info, "accounts:signUp?key=k"),
                                 json={"email": f"u{i}@example.com", "password": "password1", "displayName": "y" * 2000})
                if r.status_code != 200:
                    refused_auth = r
                    break
            assert refused_auth is not None, "no Auth sign-up was refused on a full disk"
            assert refused_auth.status_code >= 400 and "error" in refused_auth.json(), refused_auth.text

            # Reads keep working, nothing acknowledged is lost.
            assert s3.get_object(Bucket="full", Key="before")["Body"].read() == b"kept"
            assert session.get(f"{docs_url(info)}/full/before", headers=OWNER).json()["fields"]["v"]["stringValue"] == "kept"
            # (A sign-in is a write too — it stores a refresh token — so Auth is read with lookup.)
            r = session.post(auth_url(info, "accounts:lookup?key=k"), json={"idToken": before_token})
            assert r.status_code == 200 and r.json()["users"][0]["localId"] == before_uid, r.text

            # Room again: writes succeed, no restart.
            os.remove(filler)
            s3.put_object(Bucket="full", Key="after", Body=b"room again")
            assert s3.get_object(Bucket="full", Key="after")["Body"].read() == b"room again"
            assert session.patch(f"{docs_url(info)}/full/after", json={"fields": {"v": {"stringValue": "ok"}}}, headers=OWNER).status_code == 200
            r = session.post(auth_url(info, "accounts:signUp?key=k"), json={"email": "after@example.com", "password": "password1"})
            assert r.status_code == 200, r.text
            r = session.post(auth_url(info, "accounts:signInWithPassword?key=k"), json={"email": "before@example.com", "password": "password1"})
            assert r.status_code == 200, r.text
            assert proc.poll() is None
        finally:
            stop(proc)
        assert proc.returncode == 0
        check_data_dir_integrity(data_dir)
    finally:
        fs.close()


def storage_upload(info, name, body):
    """A Firebase Storage simple upload with the emulator's admin credential."""
    base = info["services"]["storage"]["url"]
    return requests.post(f"{base}/v0/b/{info['project']}.appspot.com/o?name={name}", data=body,
                         headers={**OWNER, "Content-Type": "application/octet-stream"}, timeout=30)


def storage_resumable_upload(info, name, body, chunk=256 * 1024):
    """The Firebase SDKs' resumable protocol: start a session, then chunks at their offsets, the last
    one with `upload, finalize`; returns the last answer."""
    base = info["services"]["storage"]["url"]
    start = requests.post(f"{base}/v0/b/{info['project']}.appspot.com/o?name={name}&uploadType=resumable",
                          json={"name": name}, timeout=30, headers={**OWNER, "X-Goog-Upload-Protocol": "resumable",
                                                                    "X-Goog-Upload-Command": "start",
                                                                    "X-Goog-Upload-Header-Content-Length": str(len(body))})
    if start.status_code != 200:
        return start
    url = start.headers["X-Goog-Upload-URL"]
    for offset in range(0, len(body), chunk):
        final = offset + chunk >= len(body)
        r = requests.post(url, data=body[offset:offset + chunk], timeout=30, headers={
            **OWNER, "X-Goog-Upload-Command": "upload, finalize" if final else "upload", "X-Goog-Upload-Offset": str(offset)})
        if r.status_code != 200:
            return r
    return r


def storage_download(info, name):
    base = info["services"]["storage"]["url"]
    return requests.get(f"{base}/v0/b/{info['project']}.appspot.com/o/{name}?alt=media", headers=OWNER, timeout=30)


def upload_body(i):
    return (b"%08d" % i) * (300 * 1024 // 8)


def grpc_commit(info):
    """Firestore's Commit over gRPC (the SDKs' path), raw grpcio: returns commit(name, value) and the
    channel to close."""
    import grpc
    from google.cloud.firestore_v1 import types

    database = f"projects/{info['project']}/databases/(default)"
    channel = grpc.insecure_channel(info["services"]["firestore"]["url"].split("://", 1)[1])
    call = channel.unary_unary("/google.firestore.v1.Firestore/Commit", request_serializer=types.CommitRequest.serialize,
                               response_deserializer=types.CommitResponse.deserialize)

    def commit(name, value):
        write = types.Write(update=types.Document(name=f"{database}/documents/{name}", fields={"v": types.Value(string_value=value)}))
        return call(types.CommitRequest(database=database, writes=[write]), timeout=30,
                    metadata=[("authorization", "Bearer owner"), ("google-cloud-resource-prefix", database)])
    return commit, channel


def test_a_full_data_disk_refuses_storage_uploads_and_grpc_commits_cleanly_and_recovers():
    """The services the test above does not reach: Cloud Storage for Firebase (an upload that does
    not fit is a 5xx with Google's JSON error body; downloads keep working) and Firestore's gRPC
    Commit (RESOURCE_EXHAUSTED, as over REST). Once space returns, both write again, no restart."""
    import grpc

    fs = Tmpfs("24m")
    data_dir = os.path.join(fs.path, "data")
    try:
        proc, info = start(data_dir=data_dir)
        commit, channel = grpc_commit(info)
        try:
            assert storage_upload(info, "before.bin", b"kept").status_code == 200
            commit("full/before", "kept")

            filler = fs.fill()
            r = storage_upload(info, "big.bin", os.urandom(4 * 1024 * 1024))
            assert r.status_code >= 500 and r.json()["error"]["code"] == r.status_code, (r.status_code, r.text[:300])
            # Small writes may still fit in pages SQLite already holds: write until one is refused.
            refused = None
            for i in range(200):
                try:
                    commit(f"full/g{i}", "x" * 200_000)
                except grpc.RpcError as e:
                    refused = e
                    break
            assert refused is not None, "no gRPC Commit was refused on a full disk"
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, (refused.code(), refused.details())

            # Reads keep working, nothing acknowledged is lost.
            assert storage_download(info, "before.bin").content == b"kept"
            r = requests.get(f"{docs_url(info)}/full/before", headers=OWNER)
            assert r.json()["fields"]["v"]["stringValue"] == "kept", r.text

            os.remove(filler)
            assert storage_upload(info, "after.bin", b"room again").status_code == 200
            assert storage_download(info, "after.bin").content == b"room again"
            commit("full/after", "ok")
            assert proc.poll() is None
        finally:
            channel.close()
            stop(proc)
        assert proc.returncode == 0
        check_data_dir_integrity(data_dir)
    finally:
        fs.close()


class Ext4:
    """A 64 MiB ext4 loop mount with errors=remount-ro, so the test can turn it read-only under a
    running server the way the kernel does after an I/O error (`trigger_fs_error`)."""

    def __init__(self):
        self.image = tempfile.mktemp(prefix="hearth-ext4-", suffix=".img")
        self.path = tempfile.mkdtemp(prefix="hearth-ext4-")
        subprocess.run(["truncate", "-s", "64M", self.image], check=True)
        steps = [["mkfs.ext4", "-q", "-F", self.image], ["mount", "-o", "loop,errors=remount-ro", self.image, self.path]]
        for step in steps:
            r = subprocess.run(step, capture_output=True, text=True)
            if r.returncode != 0:
                self.close()
                pytest.skip(f"cannot make an ext4 loop mount here ({' '.join(step[:2])}: {r.stderr.strip()}); run as root with loop devices")
        source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", self.path], capture_output=True, text=True).stdout.strip()
        self.trigger = f"/sys/fs/ext4/{os.path.basename(source)}/trigger_fs_error"
        if not os.path.exists(self.trigger):
            self.close()
            pytest.skip(f"the kernel has no {self.trigger} to make the filesystem read-only under a running server")

    def make_read_only(self):
        with open(self.trigger, "w") as f:
            f.write("1")
        assert "emergency_ro" in subprocess.run(["findmnt", "-n", "-o", "OPTIONS", self.path], capture_output=True, text=True).stdout

    def remount_rw(self):
        """What an operator does after the fault: unmount, check, mount again."""
        subprocess.run(["umount", self.path], check=True)
        subprocess.run(["e2fsck", "-f", "-y", self.image], capture_output=True)
        subprocess.run(["mount", "-o", "loop", self.image, self.path], check=True)

    def close(self):
        subprocess.run(["umount", self.path], capture_output=True)
        shutil.rmtree(self.path, ignore_errors=True)
        if os.path.exists(self.image):
            os.remove(self.image)


def test_a_data_directory_turned_read_only_under_the_server_refuses_writes_keeps_reads_and_loses_nothing():
    fs = Ext4()
    data_dir = os.path.join(fs.path, "data")
    try:
        proc, info = start(data_dir=data_dir)
        s = requests.Session()
        try:
            s3 = s3_client(info)
            s3.create_bucket(Bucket="rofs")
            s3.put_object(Bucket="rofs", Key="before", Body=b"kept")
            assert s.patch(f"{docs_url(info)}/ro/before", json={"fields": {"v": {"stringValue": "kept"}}}, headers=OWNER).status_code == 200
            r = s.post(auth_url(info, "accounts:signUp?key=k"), json={"email": "ro@example.com", "password": "password1"})
            assert r.status_code == 200, r.text
            token = r.json()["idToken"]
            assert storage_upload(info, "before.bin", b"kept").status_code == 200

            # The kernel drops dirty pages it can no longer write back when it turns a filesystem
            # read-only, as a power cut would; hearth's default durability (synchronous=NORMAL)
            # survives kill -9, not that. Syncing first keeps the test about hearth's handling of
            # the fault: nothing it had written may be lost or corrupted by what it does next.
            os.sync()
            fs.make_read_only()
            with pytest.raises(s3.exceptions.ClientError) as e:
                s3.put_object(Bucket="rofs", Key="after", Body=os.urandom(2 * 1024 * 1024))
            assert e.value.response["Error"]["Code"] == "InternalError"
            r = s.patch(f"{docs_url(info)}/ro/after", json={"fields": {"v": {"stringValue": "x"}}}, headers=OWNER)
            assert r.status_code >= 500 and "error" in r.json(), r.text
            r = s.post(auth_url(info, "accounts:signUp?key=k"), json={"email": "ro2@example.com", "password": "password1"})
            assert r.status_code >= 500 and "error" in r.json(), r.text
            r = storage_upload(info, "after.bin", os.urandom(2 * 1024 * 1024))
            assert r.status_code >= 500 and r.json()["error"]["code"] == r.status_code, (r.status_code, r.text[:300])

            assert s3.get_object(Bucket="rofs", Key="before")["Body"].read() == b"kept"
            assert s.get(f"{docs_url(info)}/ro/before", headers=OWNER).json()["fields"]["v"]["stringValue"] == "kept"
            r = s.post(auth_url(info, "accounts:lookup?key=k"), json={"idToken": token})
            assert r.status_code == 200, r.text
            assert storage_download(info, "before.bin").content == b"kept"
            assert proc.poll() is None, "hearth died when its data directory became read-only"
        finally:
            stop(proc)
        fs.remount_rw()
        check_data_dir_integrity(data_dir)
        proc, info = start(data_dir=data_dir)
        try:
            assert s3_client(info).get_object(Bucket="rofs", Key="before")["Body"].read() == b"kept"
            assert s.get(f"{docs_url(info)}/ro/before", headers=OWNER).status_code == 200
            r = s.post(auth_url(info, "accounts:signInWithPassword?key=k"), json={"email": "ro@example.com", "password": "password1"})
            assert r.status_code == 200, r.text
            assert storage_download(info, "before.bin").content == b"kept"
        finally:
            stop(proc)
    finally:
        fs.close()


def check_data_dir_integrity(data_dir):
    """Both of a data directory's files: Firestore's and the other services'."""
    for name in ("hearth.sqlite", "firestore.sqlite"):
        check_integrity(os.path.join(data_dir, name))


def check_integrity(path):
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        db.close()


# --- Crashes mid-write ---------------------------------------------------------------------------

def test_kill_9_mid_write_everywhere_loses_nothing_acknowledged_and_applies_nothing_by_half():
    tmp = tempfile.mkdtemp(prefix="hearth-crash-all-")
    data_dir = os.path.join(tmp, "data")
    proc, info = start(data_dir=data_dir, tmp=tmp)
    s3 = s3_client(info)
    s3.create_bucket(Bucket="crash")
    acked = {"commits": [], "multipart": [], "signups": [], "imports": [], "uploads": []}
    attempted = {"commits": [], "multipart": [], "imports": [], "uploads": []}
    stop_flag = threading.Event()

    def commits():
        s = requests.Session()
        url = f"{info['services']['firestore']['url']}/v1/projects/{info['project']}/databases/(default)/documents:commit"
        prefix = f"projects/{info['project']}/databases/(default)/documents"
        i = 0
        while not stop_flag.is_set():
            # Three documents in one commit: after the crash all three or none.
            writes = [{"update": {"name": f"{prefix}/batch/c{i}-{k}", "fields": {"i": {"integerValue": str(i)}}}} for k in range(3)]
            attempted["commits"].append(i)
            try:
                r = s.post(url, json={"writes": writes}, headers=OWNER, timeout=5)
            except requests.RequestException:
                return
            if r.status_code == 200:
                acked["commits"].append(i)
            i += 1

    def multipart():
        i = 0
        part = os.urandom(5 * 1024 * 1024)
        while not stop_flag.is_set():
            key = f"mp{i}"
            try:
                up = s3.create_multipart_upload(Bucket="crash", Key=key)["UploadId"]
                e1 = s3.upload_part(Bucket="crash", Key=key, UploadId=up, PartNumber=1, Body=part)["ETag"]
                e2 = s3.upload_part(Bucket="crash", Key=key, UploadId=up, PartNumber=2, Body=str(i).encode())["ETag"]
                attempted["multipart"].append(i)
                s3.complete_multipart_upload(Bucket="crash", Key=key, UploadId=up,
                                             MultipartUpload={"Parts": [{"ETag": e1, "PartNumber": 1}, {"ETag": e2, "PartNumber": 2}]})
            except Exception:
                return
            acked["multipart"].append(i)
            i += 1

    def signups():
        s = requests.Session()
        i = 0
        while not stop_flag.is_set():
            try:
                r = s.post(auth_url(info, "accounts:signUp?key=k"), json={"email": f"crash{i}@example.com", "password": f"pw-{i}-secret"}, timeout=5)
            except requests.RequestException:
                return
            if r.status_code == 200:
                acked["signups"].append(i)
            i += 1

    def imports():
        s = requests.Session()
        i = 0
        while not stop_flag.is_set():
            users = [{"localId": f"imp{i}-{k}", "email": f"imp{i}-{k}@example.com", "rawPassword": "imported-pw"} for k in range(20)]
            attempted["imports"].append(i)
            try:
                r = s.post(f"{info['services']['auth']['url']}/identitytoolkit.googleapis.com/v1/projects/{info['project']}/accounts:batchCreate",
                           json={"users": users}, headers=OWNER, timeout=10)
            except requests.RequestException:
                return
            if r.status_code == 200 and not r.json().get("error"):
                acked["imports"].append(i)
            i += 1

    def uploads():
        # Cloud Storage for Firebase: objects of 300 KiB, each body its own (after the crash an
        # object is exactly its body or absent), by simple uploads and by resumable sessions
        # (start, a 256 KiB chunk, then the rest with finalize) in turn.
        i = 0
        while not stop_flag.is_set():
            attempted["uploads"].append(i)
            try:
                r = (storage_upload if i % 2 == 0 else storage_resumable_upload)(info, f"crash/u{i}", upload_body(i))
            except requests.RequestException:
                return
            if r.status_code == 200:
                acked["uploads"].append(i)
            i += 1

    kinds = ("commits", "signups", "imports", "uploads")
    kill_9_during(proc, [commits, multipart, signups, imports, uploads], stop_flag,
                  lambda: all(len(acked[k]) >= 3 for k in kinds), seconds=4)
    for kind in kinds:
        assert len(acked[kind]) >= 3, f"too few {kind} acknowledged before the kill: {acked}"
    check_data_dir_integrity(data_dir)

    proc, info = start(data_dir=data_dir, tmp=tmp)
    try:
        s = requests.Session()
        base = docs_url(info)
        for i in attempted["commits"]:
            present = [s.get(f"{base}/batch/c{i}-{k}", headers=OWNER).status_code == 200 for k in range(3)]
            assert present in ([True] * 3, [False] * 3), f"commit {i} half-applied after kill -9: {present}"
            if i in acked["commits"]:
                assert all(present), f"acknowledged commit {i} lost"
        s3 = s3_client(info)
        for i in attempted["multipart"]:
            try:
                body = s3.get_object(Bucket="crash", Key=f"mp{i}")["Body"].read()
            except s3.exceptions.NoSuchKey:
                assert i not in acked["multipart"], f"acknowledged multipart mp{i} lost"
                continue
            assert len(body) == 5 * 1024 * 1024 + len(str(i)) and body.endswith(str(i).encode()), f"mp{i} torn"
        for i in acked["signups"]:
            r = s.post(auth_url(info, "accounts:signInWithPassword?key=k"), json={"email": f"crash{i}@example.com", "password": f"pw-{i}-secret"})
            assert r.status_code == 200, f"acknowledged sign-up {i} lost: {r.text}"
        for i in attempted["imports"]:
            r = s.post(f"{info['services']['auth']['url']}/identitytoolkit.googleapis.com/v1/projects/{info['project']}/accounts:lookup",
                       json={"localId": [f"imp{i}-{k}" for k in range(20)]}, headers=OWNER)
            found = len(r.json().get("users", []))
            assert found in (0, 20), f"import {i} half-applied: {found} of 20 accounts"
            if i in acked["imports"]:
                assert found == 20, f"acknowledged import {i} lost"
        for i in attempted["uploads"]:
            r = storage_download(info, f"crash%2Fu{i}")
            if r.status_code == 404:
                assert i not in acked["uploads"], f"acknowledged Storage upload u{i} lost"
                continue
            assert r.status_code == 200 and r.content == upload_body(i), f"Storage object u{i} torn ({r.status_code}, {len(r.content)} bytes)"
    finally:
        stop(proc)
    assert proc.returncode == 0
    check_data_dir_integrity(data_dir)
    shutil.rmtree(tmp, ignore_errors=True)


def test_kill_9_mid_write_stream_loses_no_acknowledged_batch_and_applies_none_by_half():
    """kill -9 while a Firestore Write stream (the mobile and web SDKs' write path, raw grpcio as
    `test_raw_grpc.py` drives it) sends batches of three documents, each after the last one's
    acknowledgement: after a restart every acknowledged batch is there, every batch sent is there
    entirely or not at all, and the database is intact."""
    import grpc
    from google.cloud.firestore_v1 import types

    tmp = tempfile.mkdtemp(prefix="hearth-crash-write-")
    data_dir = os.path.join(tmp, "data")
    proc, info = start(data_dir=data_dir, tmp=tmp)
    database = f"projects/{info['project']}/databases/(default)"
    host = info["services"]["firestore"]["url"].split("://", 1)[1]
    channel = grpc.insecure_channel(host)
    write = channel.stream_stream("/google.firestore.v1.Firestore/Write", request_serializer=types.WriteRequest.serialize,
                                  response_deserializer=types.WriteResponse.deserialize)
    outbox = queue.Queue()
    sent, acked, wrong = [], [], []

    def batch(i):
        return [types.Write(update=types.Document(name=f"{database}/documents/wstream/s{i}-{k}",
                                                  fields={"i": types.Value(integer_value=i)})) for k in range(3)]

    def requests_():
        while (r := outbox.get()) is not None:
            yield r

    def drive():
        outbox.put(types.WriteRequest(database=database))
        i = 0
        try:
            for response in write(requests_(), metadata=[("authorization", "Bearer owner"), ("google-cloud-resource-prefix", database)]):
                if response.write_results:
                    if len(response.write_results) != 3:
                        wrong.append(i)
                    acked.append(i)
                    i += 1
                sent.append(i)
                outbox.put(types.WriteRequest(writes=batch(i), stream_token=response.stream_token))
        except grpc.RpcError:
            pass  # the server died

    t = threading.Thread(target=drive)
    t.start()
    time.sleep(4)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    outbox.put(None)
    t.join(timeout=30)
    channel.close()
    assert len(acked) >= 3, f"too few batches acknowledged before the kill: {len(acked)}"
    assert not wrong, f"batches acknowledged with other than 3 write results: {wrong}"
    check_data_dir_integrity(data_dir)

    proc, info = start(data_dir=data_dir, tmp=tmp)
    try:
        s = requests.Session()
        base = docs_url(info)
        for i in sorted(set(sent)):
            present = [s.get(f"{base}/wstream/s{i}-{k}", headers=OWNER).status_code == 200 for k in range(3)]
            assert present in ([True] * 3, [False] * 3), f"Write stream batch {i} half-applied after kill -9: {present}"
            if i in acked:
                assert all(present), f"acknowledged Write stream batch {i} lost"
    finally:
        stop(proc)
    assert proc.returncode == 0
    check_data_dir_integrity(data_dir)
    shutil.rmtree(tmp, ignore_errors=True)
