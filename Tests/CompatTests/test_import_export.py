"""Seed data in and out: `hearth export DIR` (offline), `POST /emulator/v1/export` (running),
`--export-on-exit DIR` and `--import DIR`, with every Firestore value type surviving exactly."""
import json
import os
import subprocess
import tempfile
import time

import pytest
import requests

from hearthharness import hearth_bin, start_hearth, stop_hearth

FIELDS = {
    "null": {"nullValue": None}, "bool": {"booleanValue": True}, "int": {"integerValue": "-9223372036854775808"},
    "double": {"doubleValue": 0.1}, "nan": {"doubleValue": "NaN"}, "inf": {"doubleValue": "-Infinity"},
    "time": {"timestampValue": "2026-01-02T03:04:05.123456Z"}, "string": {"stringValue": "héllo\n\u0000"},
    "bytes": {"bytesValue": "AAH/"}, "ref": {"referenceValue": "projects/demo-hearth/databases/(default)/documents/a/b"},
    "geo": {"geoPointValue": {"latitude": -33.5, "longitude": 151.25}},
    "array": {"arrayValue": {"values": [{"integerValue": "1"}, {"stringValue": "two"}]}},
    "map": {"mapValue": {"fields": {"nested": {"mapValue": {"fields": {"deep": {"booleanValue": False}}}}}}},
    "empty": {"mapValue": {}},
    "vector": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"},
                                       "value": {"arrayValue": {"values": [{"doubleValue": 1.5}, {"doubleValue": -2.0}]}}}}},
}
OWNER = {"Authorization": "Bearer owner"}


@pytest.fixture(autouse=True)
def _emulator_hosts_restored(monkeypatch):
    """The Admin SDK and google-cloud-firestore read their emulator host from the environment;
    each test here points them at its own short-lived hearth, so the variables are put back after
    it (other suites in the same run use them for their shared server)."""
    for name in ("FIREBASE_AUTH_EMULATOR_HOST", "FIRESTORE_EMULATOR_HOST"):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    yield


def doc_url(ready, path):
    return f"{ready['services']['firestore']['url']}/v1/projects/demo-hearth/databases/(default)/documents/{path}"


def seed(ready):
    for path in ["seed/all-types", "seed/all-types/sub/child"]:
        r = requests.patch(doc_url(ready, path), json={"fields": FIELDS}, headers=OWNER)
        assert r.status_code == 200, r.text
    return requests.get(doc_url(ready, "seed/all-types"), headers=OWNER).json()["fields"]


def test_offline_export_then_import_round_trips_every_value_type():
    proc, ready, tmp = start_hearth(in_memory=False)
    stored = seed(ready)
    running = subprocess.run([hearth_bin(), "export", "out"], cwd=tmp, capture_output=True, text=True)
    assert running.returncode == 2 and f"in use by hearth pid {ready['pid']}" in running.stderr, running.stderr
    stop_hearth(proc)

    r = subprocess.run([hearth_bin(), "export", "out"], cwd=tmp, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    meta = json.load(open(os.path.join(tmp, "out", "hearth-export.json")))
    assert meta == {"format": "hearth-export", "version": 1, "services": ["auth", "firestore", "s3", "storage"]}
    export = json.load(open(os.path.join(tmp, "out", "firestore", "documents.json")))
    [database] = export["databases"]
    assert database["name"] == "projects/demo-hearth/databases/(default)"
    assert [d["name"].rsplit("/documents/", 1)[1] for d in database["documents"]] == ["seed/all-types", "seed/all-types/sub/child"]
    assert database["documents"][0]["fields"] == stored

    proc2, ready2, _ = start_hearth(["--import", os.path.join(tmp, "out")])
    try:
        for path in ["seed/all-types", "seed/all-types/sub/child"]:
            got = requests.get(doc_url(ready2, path), headers=OWNER)
            assert got.status_code == 200 and got.json()["fields"] == stored
    finally:
        stop_hearth(proc2)


def test_hub_export_and_export_on_exit():
    out = tempfile.mkdtemp(prefix="hearth-export-")
    proc, ready, _ = start_hearth(["--export-on-exit", os.path.join(out, "on-exit")])
    try:
        stored = seed(ready)
        r = requests.post(ready["services"]["hub"]["url"] + "/emulator/v1/export", json={"path": os.path.join(out, "hub")})
        assert r.status_code == 200, r.text
        hub = json.load(open(os.path.join(out, "hub", "firestore", "documents.json")))
        assert hub["databases"][0]["documents"][0]["fields"] == stored
        requests.patch(doc_url(ready, "seed/late"), json={"fields": {"x": {"integerValue": "1"}}}, headers=OWNER).raise_for_status()
    finally:
        stop_hearth(proc)
    assert proc.returncode == 0
    on_exit = json.load(open(os.path.join(out, "on-exit", "firestore", "documents.json")))
    names = [d["name"].rsplit("/", 2)[-2:] for d in on_exit["databases"][0]["documents"]]
    assert ["seed", "late"] in names


def test_import_of_something_else_exits_2():
    empty = tempfile.mkdtemp(prefix="hearth-not-an-export-")
    r = subprocess.run([hearth_bin(), "start", "--in-memory", "--import", empty, "--hub-port", "0", "--auth-port", "0",
                        "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "no hearth-export.json" in r.stderr, r.stderr


def test_a_firebase_emulators_auth_export_is_imported_with_working_passwords():
    """The layout `firebase emulators:export` writes: firebase-export-metadata.json and
    auth_export/accounts.json, whose password hashes are `fakeHash:salt=…:password=…`."""
    d = tempfile.mkdtemp(prefix="firebase-export-")
    os.makedirs(os.path.join(d, "auth_export"))
    json.dump({"version": "13.29.1", "auth": {"version": "13.29.1", "path": "auth_export"}},
              open(os.path.join(d, "firebase-export-metadata.json"), "w"))
    json.dump({"kind": "identitytoolkit#DownloadAccountResponse", "users": [{
        "localId": "alice-uid", "email": "alice@example.com", "emailVerified": True, "displayName": "Alice",
        "passwordHash": "fakeHash:salt=fakeSaltAbC:password=wonderland", "salt": "fakeSaltAbC", "passwordUpdatedAt": 1700000000000,
        "providerUserInfo": [{"providerId": "password", "email": "alice@example.com", "federatedId": "alice@example.com",
                              "rawId": "alice@example.com", "displayName": "Alice"}],
        "customAttributes": "{\"admin\":true}", "validSince": "1700000000", "createdAt": "1700000000000",
        "lastLoginAt": "1700000000000"}]}, open(os.path.join(d, "auth_export", "accounts.json"), "w"))
    json.dump({"signIn": {"allowDuplicateEmails": False}, "usageMode": "DEFAULT"}, open(os.path.join(d, "auth_export", "config.json"), "w"))

    proc, ready, _ = start_hearth(["--import", d])
    try:
        auth = ready["services"]["auth"]["url"]
        r = requests.post(f"{auth}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                          json={"email": "alice@example.com", "password": "wonderland", "returnSecureToken": True})
        assert r.status_code == 200 and r.json()["localId"] == "alice-uid", r.text
        wrong = requests.post(f"{auth}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                              json={"email": "alice@example.com", "password": "nope", "returnSecureToken": True})
        assert wrong.status_code == 400
        user = requests.post(f"{auth}/identitytoolkit.googleapis.com/v1/projects/demo-hearth/accounts:lookup",
                             json={"localId": ["alice-uid"]}, headers=OWNER).json()["users"][0]
        assert user["displayName"] == "Alice" and user["emailVerified"] is True and user["customAttributes"] == "{\"admin\":true}"
    finally:
        stop_hearth(proc)


# --- Auth and S3 in Hearth's own export; the Cloud Firestore emulator's export -----------------

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "firestore-emulator-export")


def auth_post(ready, path, body, headers=None):
    return requests.post(f"{ready['services']['auth']['url']}/identitytoolkit.googleapis.com/{path}", json=body, headers=headers)


def admin_app(ready, name):
    import firebase_admin
    from firebase_admin import _utils, credentials

    class Owner(credentials.Base):
        def get_credential(self):
            return _utils.EmulatorAdminCredentials()

    os.environ["FIREBASE_AUTH_EMULATOR_HOST"] = ready["services"]["auth"]["url"].split("://", 1)[1]
    return firebase_admin.initialize_app(Owner(), options={"projectId": "demo-hearth"}, name=name)


def test_auth_round_trips_accounts_tenants_and_config_and_passwords_keep_working():
    import uuid

    import firebase_admin
    from firebase_admin import auth
    proc, ready, _ = start_hearth()
    out = tempfile.mkdtemp(prefix="hearth-export-auth-")
    try:
        r = auth_post(ready, "v1/accounts:signUp?key=k", {"email": "carol@example.com", "password": "s3cret-pass", "displayName": "Carol"})
        assert r.status_code == 200, r.text
        carol = r.json()["localId"]
        app = admin_app(ready, f"export-{uuid.uuid4().hex[:6]}")
        auth.set_custom_user_claims(carol, {"role": "editor"}, app=app)
        auth.create_user(uid="dave-uid", phone_number="+15555550123", disabled=True, app=app)
        firebase_admin.delete_app(app)
        cfg = requests.patch(f"{ready['services']['auth']['url']}/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config?updateMask=mfa,signIn.allowDuplicateEmails",
                             json={"mfa": {"state": "ENABLED", "enabledProviders": ["PHONE_SMS"]}, "signIn": {"allowDuplicateEmails": True}}, headers=OWNER)
        assert cfg.status_code == 200, cfg.text
        t = requests.post(f"{ready['services']['auth']['url']}/identitytoolkit.googleapis.com/v2/projects/demo-hearth/tenants",
                          json={"displayName": "Team-A", "allowPasswordSignup": True}, headers=OWNER)
        assert t.status_code == 200, t.text
        tenant = t.json()["name"].rsplit("/", 1)[1]
        r = auth_post(ready, "v1/accounts:signUp?key=k", {"email": "erin@example.com", "password": "tenant-pass", "tenantId": tenant})
        assert r.status_code == 200, r.text
        e = requests.post(ready["services"]["hub"]["url"] + "/emulator/v1/export", json={"path": out})
        assert e.status_code == 200, e.text
    finally:
        stop_hearth(proc)
    meta = json.load(open(os.path.join(out, "hearth-export.json")))
    assert meta["services"] == ["auth", "firestore", "s3", "storage"]
    exported = json.load(open(os.path.join(out, "auth", "accounts.json")))
    [project] = exported["projects"]
    assert project["projectId"] == "demo-hearth" and project["config"]["mfa"]["state"] == "ENABLED"
    assert [x["tenantId"] for x in project["tenants"]] == [tenant]
    assert {a["localId"] for a in project["accounts"]} >= {carol, "dave-uid"}

    proc2, ready2, _ = start_hearth(["--import", out])
    try:
        r = auth_post(ready2, "v1/accounts:signInWithPassword?key=k", {"email": "carol@example.com", "password": "s3cret-pass", "returnSecureToken": True})
        assert r.status_code == 200 and r.json()["localId"] == carol, r.text
        assert auth_post(ready2, "v1/accounts:signInWithPassword?key=k", {"email": "carol@example.com", "password": "wrong"}).status_code == 400
        r = auth_post(ready2, "v1/accounts:signInWithPassword?key=k", {"email": "erin@example.com", "password": "tenant-pass", "tenantId": tenant, "returnSecureToken": True})
        assert r.status_code == 200, r.text
        app = admin_app(ready2, f"import-{uuid.uuid4().hex[:6]}")
        try:
            token = auth_post(ready2, "v1/accounts:signInWithPassword?key=k", {"email": "carol@example.com", "password": "s3cret-pass", "returnSecureToken": True}).json()["idToken"]
            claims = auth.verify_id_token(token, app=app)
            assert claims["uid"] == carol and claims["role"] == "editor"
            dave = auth.get_user("dave-uid", app=app)
            assert dave.disabled is True and dave.phone_number == "+15555550123"
            assert auth.get_user(carol, app=app).display_name == "Carol"
        finally:
            firebase_admin.delete_app(app)
        cfg = requests.get(f"{ready2['services']['auth']['url']}/identitytoolkit.googleapis.com/v2/projects/demo-hearth/config", headers=OWNER).json()
        assert cfg["mfa"]["state"] == "ENABLED" and cfg["signIn"]["allowDuplicateEmails"] is True
        got = requests.get(f"{ready2['services']['auth']['url']}/identitytoolkit.googleapis.com/v2/projects/demo-hearth/tenants/{tenant}", headers=OWNER)
        assert got.status_code == 200 and got.json()["displayName"] == "Team-A"
    finally:
        stop_hearth(proc2)


def s3_client(ready):
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=ready["services"]["s3"]["url"], aws_access_key_id="test", aws_secret_access_key="test",
                        region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))


def test_s3_round_trips_buckets_configurations_objects_and_versions_with_boto3():
    proc, ready, tmp = start_hearth(in_memory=False)
    big = os.urandom(6 * 1024 * 1024 + 123)
    try:
        s3 = s3_client(ready)
        s3.create_bucket(Bucket="seed-bucket")
        s3.put_bucket_cors(Bucket="seed-bucket", CORSConfiguration={"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]})
        s3.put_bucket_tagging(Bucket="seed-bucket", Tagging={"TagSet": [{"Key": "team", "Value": "mobile"}]})
        policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                                                      "Resource": "arn:aws:s3:::seed-bucket/public/*"}]})
        s3.delete_public_access_block(Bucket="seed-bucket")  # as on AWS: public policies are blocked by default
        s3.put_bucket_policy(Bucket="seed-bucket", Policy=policy)
        s3.put_object(Bucket="seed-bucket", Key="public/hello.txt", Body=b"hello", ContentType="text/plain",
                      Metadata={"owner": "alice"}, CacheControl="max-age=60", ChecksumAlgorithm="SHA256")
        s3.put_object(Bucket="seed-bucket", Key="a", Body=b"file a")
        s3.put_object(Bucket="seed-bucket", Key="a/b", Body=b"under a")
        s3.put_object(Bucket="seed-bucket", Key="dir/../weird", Body=b"dots")
        mpu = s3.create_multipart_upload(Bucket="seed-bucket", Key="big.bin", ContentType="application/octet-stream")
        parts = []
        for i, start in enumerate(range(0, len(big), 5 * 1024 * 1024), 1):
            p = s3.upload_part(Bucket="seed-bucket", Key="big.bin", UploadId=mpu["UploadId"], PartNumber=i, Body=big[start:start + 5 * 1024 * 1024])
            parts.append({"ETag": p["ETag"], "PartNumber": i})
        s3.complete_multipart_upload(Bucket="seed-bucket", Key="big.bin", UploadId=mpu["UploadId"], MultipartUpload={"Parts": parts})
        s3.create_bucket(Bucket="versioned")
        s3.put_bucket_versioning(Bucket="versioned", VersioningConfiguration={"Status": "Enabled"})
        v1 = s3.put_object(Bucket="versioned", Key="doc", Body=b"one")["VersionId"]
        v2 = s3.put_object(Bucket="versioned", Key="doc", Body=b"two")["VersionId"]
        marker = s3.delete_object(Bucket="versioned", Key="gone")
        head_big = s3.head_object(Bucket="seed-bucket", Key="big.bin")
    finally:
        stop_hearth(proc)
    out = os.path.join(tmp, "out")
    r = subprocess.run([hearth_bin(), "export", out], cwd=tmp, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    listing = json.load(open(os.path.join(out, "s3", "buckets.json")))
    by_name = {b["name"]: b for b in listing["buckets"]}
    files = {o["key"]: o["file"] for o in by_name["seed-bucket"]["objects"]}
    assert files["public/hello.txt"] == "objects/seed-bucket/public/hello.txt"
    assert open(os.path.join(out, "s3", files["public/hello.txt"]), "rb").read() == b"hello"
    assert files["a/b"].startswith("objects/seed-bucket/.hashed/") or files["a"].startswith("objects/seed-bucket/.hashed/")
    assert ".." not in files["dir/../weird"].split("/")
    assert open(os.path.join(out, "s3", files["big.bin"]), "rb").read() == big

    proc2, ready2, _ = start_hearth(["--import", out])
    try:
        s3 = s3_client(ready2)
        got = s3.get_object(Bucket="seed-bucket", Key="public/hello.txt", ChecksumMode="ENABLED")
        assert got["Body"].read() == b"hello" and got["ContentType"] == "text/plain" and got["Metadata"] == {"owner": "alice"}
        assert got["CacheControl"] == "max-age=60" and "ChecksumSHA256" in got
        assert s3.get_object(Bucket="seed-bucket", Key="a")["Body"].read() == b"file a"
        assert s3.get_object(Bucket="seed-bucket", Key="a/b")["Body"].read() == b"under a"
        assert s3.get_object(Bucket="seed-bucket", Key="dir/../weird")["Body"].read() == b"dots"
        got_big = s3.get_object(Bucket="seed-bucket", Key="big.bin")
        assert got_big["Body"].read() == big and got_big["ETag"] == head_big["ETag"]
        assert s3.get_object(Bucket="seed-bucket", Key="big.bin", PartNumber=2)["ContentLength"] == len(big) - 5 * 1024 * 1024
        assert s3.get_bucket_cors(Bucket="seed-bucket")["CORSRules"][0]["AllowedMethods"] == ["GET"]
        assert s3.get_bucket_tagging(Bucket="seed-bucket")["TagSet"] == [{"Key": "team", "Value": "mobile"}]
        assert json.loads(s3.get_bucket_policy(Bucket="seed-bucket")["Policy"]) == json.loads(policy)
        assert requests.get(f"{ready2['services']['s3']['url']}/seed-bucket/public/hello.txt").content == b"hello"  # the policy applies
        with pytest.raises(s3.exceptions.ClientError):
            s3.get_public_access_block(Bucket="seed-bucket")  # deleted stays deleted
        assert s3.get_bucket_versioning(Bucket="versioned")["Status"] == "Enabled"
        versions = s3.list_object_versions(Bucket="versioned")
        assert [(v["Key"], v["VersionId"], v["IsLatest"]) for v in versions["Versions"]] == [("doc", v2, True), ("doc", v1, False)]
        assert [(m["Key"], m["VersionId"]) for m in versions["DeleteMarkers"]] == [("gone", marker["VersionId"])]
        assert s3.get_object(Bucket="versioned", Key="doc", VersionId=v1)["Body"].read() == b"one"
    finally:
        stop_hearth(proc2)


def firestore_client(ready):
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore
    os.environ["FIRESTORE_EMULATOR_HOST"] = ready["services"]["firestore"]["url"].split("://", 1)[1]
    return firestore.Client(project="demo-hearth", credentials=AnonymousCredentials())


def check_emulator_export_documents(ready):
    """What the committed fixture (made by the Cloud Firestore emulator) holds, read with
    google-cloud-firestore and over REST (for the exact wire form)."""
    import datetime
    import math
    db = firestore_client(ready)
    try:
        d = db.document("seed/all-types").get().to_dict()
        assert d["null"] is None and d["bool"] is True and d["int"] == -9223372036854775808 and d["big"] == 9223372036854775807
        assert d["double"] == 0.1 and math.isnan(d["nan"]) and d["inf"] == -math.inf and d["zero"] == 0
        assert d["time"] == datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.timezone.utc)
        assert d["old"] == datetime.datetime(1900, 1, 1, tzinfo=datetime.timezone.utc)
        assert d["string"] == "h\u00e9llo\n\u0000\U0001F525" and d["empty"] == "" and d["bytes"] == b"\x00\x01\xff"
        assert d["ref"].path == "a/b"
        assert (d["geo"].latitude, d["geo"].longitude) == (-33.5, 151.25)
        assert d["array"] == [1, "two", {"k": None}] and d["emptyArray"] == [] and d["emptyMap"] == {}
        assert d["map"] == {"nested": {"deep": False}, "a.b": 7}
        assert db.document("seed/all-types/sub/child").get().to_dict() == {"n": 2}
        assert db.document("seed/\u00e9 id").get().to_dict() == {"s": "unicode id"}
        assert db.document("seed/__id42__").get().to_dict() == {"numeric": True}
        big = db.document("big/long").get().to_dict()
        assert big["text"] == "x" * 40000 + "end" and big["n"] == 3
    finally:
        db.close()
    rest = requests.get(doc_url(ready, "seed/all-types"), headers=OWNER).json()["fields"]
    assert rest["time"] == {"timestampValue": "2026-01-02T03:04:05.123456Z"} and rest["nan"] == {"doubleValue": "NaN"}
    assert rest["bytes"] == {"bytesValue": "AAH/"} and rest["ref"] == {"referenceValue": "projects/demo-hearth/databases/(default)/documents/a/b"}


def test_the_cloud_firestore_emulators_own_export_is_imported_exactly():
    proc, ready, _ = start_hearth(["--import", os.path.join(FIXTURES, "default")])
    try:
        check_emulator_export_documents(ready)
    finally:
        stop_hearth(proc)
    proc, ready, _ = start_hearth(["--import", os.path.join(FIXTURES, "named-db")])
    try:
        r = requests.get(f"{ready['services']['firestore']['url']}/v1/projects/demo-hearth/databases/other-db/documents/named/doc", headers=OWNER)
        assert r.status_code == 200 and r.json()["fields"] == {"v": {"stringValue": "in named db"}}, r.text
    finally:
        stop_hearth(proc)


def test_a_firebase_emulators_export_with_firestore_and_auth_config():
    """`firebase emulators:export` puts the Firestore emulator's export in firestore_export/ and
    names its metadata file in firebase-export-metadata.json; Auth's config.json is applied."""
    import glob
    import shutil
    d = tempfile.mkdtemp(prefix="firebase-export-")
    [src] = glob.glob(os.path.join(FIXTURES, "default", "firestore_export_*"))
    shutil.copytree(src, os.path.join(d, "firestore_export"))
    [meta] = glob.glob(os.path.join(d, "firestore_export", "*.overall_export_metadata"))
    os.rename(meta, os.path.join(d, "firestore_export", "firestore_export.overall_export_metadata"))
    os.makedirs(os.path.join(d, "auth_export"))
    json.dump({"version": "13.29.1", "firestore": {"version": "1.19.7", "path": "firestore_export",
                                                  "metadata_file": "firestore_export/firestore_export.overall_export_metadata"},
               "auth": {"version": "13.29.1", "path": "auth_export"}}, open(os.path.join(d, "firebase-export-metadata.json"), "w"))
    json.dump({"signIn": {"allowDuplicateEmails": True}, "emailPrivacyConfig": {"enableImprovedEmailPrivacy": True}},
              open(os.path.join(d, "auth_export", "config.json"), "w"))
    json.dump({"kind": "identitytoolkit#DownloadAccountResponse", "users": []}, open(os.path.join(d, "auth_export", "accounts.json"), "w"))
    proc, ready, _ = start_hearth(["--import", d])
    try:
        check_emulator_export_documents(ready)
        cfg = requests.get(f"{ready['services']['auth']['url']}/emulator/v1/projects/demo-hearth/config").json()
        assert cfg == {"signIn": {"allowDuplicateEmails": True}, "emailPrivacyConfig": {"enableImprovedEmailPrivacy": True}}
    finally:
        stop_hearth(proc)


def test_a_corrupt_emulator_export_is_refused_with_exit_2():
    import shutil
    d = tempfile.mkdtemp(prefix="firestore-export-corrupt-")
    shutil.copytree(os.path.join(FIXTURES, "default"), os.path.join(d, "x"))
    [out] = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f == "output-0"]
    data = bytearray(open(out, "rb").read())
    data[100] ^= 0xFF
    open(out, "wb").write(bytes(data))
    r = subprocess.run([hearth_bin(), "start", "--in-memory", "--import", os.path.join(d, "x"), "--hub-port", "0", "--auth-port", "0",
                        "--firestore-port", "0", "--s3-port", "0", "--api-port", "0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "checksum mismatch" in r.stderr, r.stderr


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_an_export_the_official_emulator_makes_now_is_imported():
    """Runs the official Cloud Firestore emulator (gcloud), writes every value type, exports with
    its `:export` endpoint and imports that into hearth: what the emulator answers, hearth answers."""
    import shutil
    import signal
    import time
    import pytest
    if not shutil.which("gcloud"):
        pytest.skip("gcloud (with the Cloud Firestore emulator) is not installed")
    port = free_port()
    work = tempfile.mkdtemp(prefix="official-firestore-")
    emu = subprocess.Popen(["gcloud", "emulators", "firestore", "start", f"--host-port=127.0.0.1:{port}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while True:
            try:
                if requests.get(base, timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if emu.poll() is not None or time.time() > deadline:
                pytest.skip("the Cloud Firestore emulator did not start (gcloud without the component?)")
            time.sleep(0.5)
        url = f"{base}/v1/projects/demo-hearth/databases/(default)/documents"
        for path in ["live/all-types", "live/all-types/sub/x"]:
            requests.patch(f"{url}/{path}", json={"fields": FIELDS}, headers=OWNER).raise_for_status()
        official = requests.get(f"{url}/live/all-types", headers=OWNER).json()["fields"]
        os.makedirs(os.path.join(work, "export"))
        r = requests.post(f"{base}/emulator/v1/projects/demo-hearth:export",
                          json={"database": "projects/demo-hearth/databases/(default)", "export_directory": os.path.join(work, "export")})
        assert r.status_code == 200, r.text
    finally:
        os.killpg(emu.pid, signal.SIGTERM)
        emu.wait(timeout=30)
    proc, ready, _ = start_hearth(["--import", os.path.join(work, "export")])
    try:
        for path in ["live/all-types", "live/all-types/sub/x"]:
            got = requests.get(doc_url(ready, path), headers=OWNER)
            assert got.status_code == 200 and got.json()["fields"] == official, got.text
    finally:
        stop_hearth(proc)


def vm_hwm_kib(pid):
    return int([line for line in open(f"/proc/{pid}/status") if line.startswith("VmHWM:")][0].split()[1])


def test_a_large_object_exports_and_imports_in_bounded_memory():
    """A 96 MiB object goes out (offline `hearth export`) and back in (`--import`) through one
    small buffer: neither process's peak RSS comes near the object's size (holding it would need
    the object plus the ~40 MiB a hearth process uses anyway: SQLite page caches, the runtime)."""
    import hashlib
    size = 96 * 1024 * 1024
    proc, ready, tmp = start_hearth(in_memory=False)
    digest = hashlib.sha256()
    try:
        s3 = s3_client(ready)
        s3.create_bucket(Bucket="large")
        chunk = os.urandom(1024 * 1024)

        class Body:
            """96 MiB generated as boto3 reads it, so the test itself stays small too."""
            def __init__(self):
                self.left = size

            def read(self, n=-1):
                n = self.left if n is None or n < 0 else min(n, self.left)
                out = (chunk * (n // len(chunk) + 1))[:n]
                self.left -= n
                digest.update(out)
                return out
        s3.upload_fileobj(Body(), "large", "big.bin")
    finally:
        stop_hearth(proc)
    out = os.path.join(tmp, "out")
    # Peak RSS read from /proc while it runs (VmHWM is the process's own high-water mark; the
    # rusage of a child also counts the forked Python image it was before exec).
    p = subprocess.Popen([hearth_bin(), "export", out], cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_kib = 0
    while p.poll() is None:
        try:
            peak_kib = max(peak_kib, vm_hwm_kib(p.pid))
        except (OSError, IndexError):
            pass
        time.sleep(0.02)
    assert p.returncode == 0, p.stderr.read()
    assert os.path.getsize(os.path.join(out, "s3", "objects", "large", "big.bin")) == size
    assert 0 < peak_kib * 1024 < size * 3 / 4, f"hearth export peaked at {peak_kib // 1024} MiB for a {size >> 20} MiB object"

    # On a data directory: an in-memory hearth holds every object in memory by definition.
    proc2, ready2, _ = start_hearth(["--import", out], in_memory=False)
    try:
        peak_kib = vm_hwm_kib(proc2.pid)
        assert peak_kib * 1024 < size * 3 / 4, f"hearth --import peaked at {peak_kib // 1024} MiB for a {size >> 20} MiB object"
        got = hashlib.sha256()
        body = s3_client(ready2).get_object(Bucket="large", Key="big.bin")["Body"]
        for part in iter(lambda: body.read(1 << 20), b""):
            got.update(part)
        assert got.hexdigest() == digest.hexdigest()
    finally:
        stop_hearth(proc2)
