"""Seed data in and out: `hearth export DIR` (offline), `POST /emulator/v1/export` (running),
`--export-on-exit DIR` and `--import DIR`, with every Firestore value type surviving exactly."""
import json
import os
import subprocess
import tempfile

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
}
OWNER = {"Authorization": "Bearer owner"}


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
    assert meta == {"format": "hearth-export", "version": 1, "services": ["firestore"]}
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
