"""Security rules through the REST API: the shipped rules/firestore.rules, identity, the rules endpoints."""
import uuid

import requests

from fsclient import OWNER, as_user, base_url, commit, i, mock_token, project, root, run_query, s, unique, update_write, url


def metadata_write(uid, file_id, **overrides):
    fields = {"ownerUid": s(uid), "storage": s("s3"), "s3Key": s(f"users/{uid}/uploads/{uuid.uuid4()}.jpg"),
              "contentType": s("image/jpeg"), "status": s("ready")}
    for k, v in overrides.items():
        if v is None:
            fields.pop(k, None)
        else:
            fields[k] = v
    return update_write(f"users/{uid}/files/{file_id}", fields, currentDocument={"exists": False},
                        updateTransforms=[{"fieldPath": "createdAt", "setToServerValue": "REQUEST_TIME"}])


def test_owner_writes_and_reads_the_seed_metadata_document():
    uid = unique("u")
    r = commit([metadata_write(uid, "f1")], headers=as_user(uid))
    assert r.status_code == 200, r.text
    got = requests.get(url(f"/users/{uid}/files/f1"), headers=as_user(uid))
    assert got.status_code == 200
    # The server timestamp is the commit time at millisecond precision (REQUEST_TIME's documented precision).
    created = got.json()["fields"]["createdAt"]["timestampValue"]
    commit_time = r.json()["commitTime"]
    assert created[:23] == commit_time[:23] and created.rstrip("Z").split(".")[-1].rstrip("0") == \
        commit_time.rstrip("Z").split(".")[-1][:3].rstrip("0")
    listed = run_query({"from": [{"collectionId": "files"}]}, parent=f"/users/{uid}", headers=as_user(uid))
    assert listed.status_code == 200 and len([x for x in listed.json() if "document" in x]) == 1


def test_other_users_and_signed_out_clients_are_denied():
    uid = unique("u")
    for headers in (as_user(unique("intruder")), {}):
        r = commit([metadata_write(uid, "f1")], headers=headers)
        assert r.status_code == 403, r.text
        err = r.json()["error"]
        assert err["code"] == 403 and err["status"] == "PERMISSION_DENIED"
        assert "for 'create' @ L" in err["message"]
    assert commit([metadata_write(uid, "f1")], headers=as_user(uid)).status_code == 200
    assert requests.get(url(f"/users/{uid}/files/f1"), headers=as_user(unique("x"))).status_code == 403
    assert requests.get(url(f"/users/{uid}/files/f1")).status_code == 403
    other_list = run_query({"from": [{"collectionId": "files"}]}, parent=f"/users/{uid}", headers=as_user(unique("x")))
    assert other_list.status_code == 403


def test_bad_field_sets_are_denied():
    uid = unique("u")
    bad = [
        {"url": s("https://bucket.s3/x?X-Amz-Signature=abc")},
        {"status": s("done")},
        {"storage": s("gcs")},
        {"contentType": s("text/html")},
        {"s3Key": s("users/someone-else/uploads/123e4567-e89b-42d3-a456-426614174000.jpg")},
        {"ownerUid": None},
    ]
    for overrides in bad:
        r = commit([metadata_write(uid, unique("f"), **overrides)], headers=as_user(uid))
        assert r.status_code == 403, (overrides, r.text)


def test_identity_edge_cases():
    assert requests.get(url("/users/x/files/y"), headers={"Authorization": "Bearer not-a-jwt"}).json() == \
        {"error": {"code": 400, "message": "invalid jwt", "status": "INVALID_ARGUMENT"}}
    # The owner bearer bypasses rules.
    coll = unique()
    assert requests.patch(url(f"/{coll}/d"), json={"fields": {}}, headers=OWNER).status_code == 200
    assert requests.patch(url(f"/{coll}/d"), json={"fields": {}}, headers=as_user("u1")).status_code == 403


def test_rules_endpoint_and_coverage():
    p = unique("rules-proj")
    open_rules = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{db}/documents {\n    match /open/{d} { allow read, write: if true; }\n  }\n}\n"
    r = requests.put(f"{base_url()}/emulator/v1/projects/{p}:securityRules",
                     json={"rules": {"files": [{"name": "firestore.rules", "content": open_rules}]}})
    assert r.status_code == 200
    assert r.json().get("issues", []) == []
    assert requests.patch(url("/open/x", p=p), json={"fields": {"a": i(1)}}).status_code == 200
    assert requests.patch(url("/closed/x", p=p), json={"fields": {}}).status_code == 403

    broken = requests.put(f"{base_url()}/emulator/v1/projects/{p}:securityRules",
                          json={"rules": {"files": [{"name": "firestore.rules", "content": "service cloud.firestore {\n  match /x { allow read: if ; }\n}"}]}})
    # Not compiled, not installed: 400 with the errors, as the official emulator answers (faith31).
    assert broken.status_code == 400
    assert broken.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert broken.json()["error"]["message"].startswith("Error compiling rules:\nL2:")
    assert requests.patch(url("/open/y", p=p), json={"fields": {}}).status_code == 200  # last good rules kept

    cov = requests.get(f"{base_url()}/emulator/v1/projects/{p}:ruleCoverage")
    assert cov.status_code == 200 and isinstance(cov.json(), dict)
    html = requests.get(f"{base_url()}/emulator/v1/projects/{p}:ruleCoverage.html")
    assert html.status_code == 200 and html.headers["Content-Type"].startswith("text/html")


def test_id_tokens_from_the_auth_emulator():
    import os

    import pytest
    auth = os.environ.get("HEARTH_AUTH_URL")
    if not auth:
        pytest.skip("no auth emulator in this run")

    def sign_up():
        r = requests.post(f"{auth.rstrip('/')}/identitytoolkit.googleapis.com/v1/accounts:signUp", params={"key": "any"},
                          json={"email": f"{unique('fs')}@example.com", "password": "secret123", "returnSecureToken": True})
        assert r.status_code == 200, r.text
        return r.json()["localId"], {"Authorization": "Bearer " + r.json()["idToken"]}

    uid, headers = sign_up()
    _, other = sign_up()
    assert commit([metadata_write(uid, "f1")], headers=headers).status_code == 200
    assert requests.get(url(f"/users/{uid}/files/f1"), headers=headers).status_code == 200
    denied = requests.get(url(f"/users/{uid}/files/f1"), headers=other)
    assert denied.status_code == 403
    assert denied.json()["error"]["status"] == "PERMISSION_DENIED"
