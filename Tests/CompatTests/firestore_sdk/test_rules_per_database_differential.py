"""Security rules per database, as production deploys them (firebase.json's `firestore` array, one
`rules` file per `database`), through google-cloud-firestore's `Client(database=…)` against Hearth
and the official Cloud Firestore emulator (docs/firestore.md, *Security rules*, perdb35).

Both keep rules per database: `PUT /emulator/v1/projects/{p}/databases/{d}:securityRules`. Where
both databases were given rules the answers must be the same. Where they differ by design: a named
database without rules of its own is judged by the project's rules on Hearth (fail closed), and is
open on the official emulator.
"""
import base64
import json
import os
import time
import urllib.error
import urllib.request
import uuid

import pytest
from google.api_core import exceptions as gexc
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore

DENY_ALL = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} { allow read, write: if false; }
  }
}
"""

# `database` is the database the request went to: a rule only the named database's requests satisfy.
OPEN_PUB = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /pub/{id} { allow read, write: if request.auth != null && database == 'other'; }
  }
}
"""


def b64(d):
    return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()


def mock(project, uid):
    """An unsigned token as the rules-unit-testing library makes one."""
    now = int(time.time())
    return b64({"alg": "none", "typ": "JWT"}) + "." + b64({
        "iss": f"https://securetoken.google.com/{project}", "aud": project, "auth_time": now - 10, "iat": now - 10,
        "exp": now + 3600, "user_id": uid, "sub": uid, "firebase": {"identities": {}, "sign_in_provider": "custom"}}) + "."


def call(host, method, path, body=None):
    req = urllib.request.Request(f"http://{host}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def put_rules(host, path, source):
    return call(host, "PUT", f"/emulator/v1/projects/{path}:securityRules",
                {"rules": {"files": [{"name": "firestore.rules", "content": source}]}})


class Clients:
    """google-cloud-firestore clients, one per database, acting as a signed-in user."""

    def __init__(self, host, monkeypatch):
        monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", host)
        self.project = "demo-perdb-" + uuid.uuid4().hex[:8]
        self.token = mock(self.project, "alice")
        self.open = []

    def user(self, database):
        client = firestore.Client(project=self.project, database=database, credentials=AnonymousCredentials())
        # In emulator mode the client sends `Bearer owner` (an admin, past every rule); a user's
        # token in its place, as a signed-in app's requests carry one.
        client._rpc_metadata_internal = [(k, v) for k, v in client._rpc_metadata if k != "authorization"] + \
            [("authorization", "Bearer " + self.token)]
        self.open.append(client)
        return client

    def close(self):
        for c in self.open:
            c.close()


@pytest.fixture
def clients(emulator_host, monkeypatch):
    c = Clients(emulator_host, monkeypatch)
    yield c
    c.close()


def answer(fn):
    try:
        got = fn()
        return "OK" if got is None or not hasattr(got, "exists") else ("OK exists" if got.exists else "OK missing")
    except gexc.PermissionDenied:
        return "PERMISSION_DENIED"


def test_each_database_is_judged_by_its_own_rules(emulator_host, clients):
    host, p = emulator_host, clients.project
    assert put_rules(host, p, DENY_ALL) == (200, {})
    assert put_rules(host, f"{p}/databases/other", OPEN_PUB) == (200, {})
    other, default = clients.user("other"), clients.user("(default)")
    got = {
        "other set pub": answer(lambda: other.document("pub/a").set({"v": 1})),
        "other get pub": answer(lambda: other.document("pub/a").get()),
        "other get pub missing": answer(lambda: other.document("pub/zz").get()),
        "other set priv": answer(lambda: other.document("priv/a").set({"v": 1})),
        "other query pub": answer(lambda: list(other.collection("pub").stream()) and None),
        "default set pub": answer(lambda: default.document("pub/a").set({"v": 1})),
        "default get pub": answer(lambda: default.document("pub/a").get()),
    }
    assert got == {"other set pub": "OK", "other get pub": "OK exists", "other get pub missing": "OK missing",
                   "other set priv": "PERMISSION_DENIED", "other query pub": "OK",
                   "default set pub": "PERMISSION_DENIED", "default get pub": "PERMISSION_DENIED"}
    # Rules that do not compile: refused on the database's path as on the project's, the previous stay.
    status, body = put_rules(host, f"{p}/databases/other", "rules_version = '2'; service cloud.firestore { nope }")
    assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT", body
    assert answer(lambda: other.document("pub/a").get()) == "OK exists"


def test_a_named_database_without_rules_of_its_own(emulator_host, clients, target):
    host, p = emulator_host, clients.project
    assert put_rules(host, p, DENY_ALL) == (200, {})
    assert put_rules(host, f"{p}/databases/other", OPEN_PUB) == (200, {})
    third = clients.user("third")
    got = answer(lambda: third.document("pub/a").set({"v": 1}))
    if target == "hearth":
        # Hearth: the project's rules (deny everything), never open by default (fail closed).
        assert got == "PERMISSION_DENIED"
    else:
        # The official emulator: a database without rules of its own is open.
        assert got == "OK"



def test_get_of_a_databases_rules_and_coverage(emulator_host, clients):
    host, p = emulator_host, clients.project
    assert put_rules(host, f"{p}/databases/other", OPEN_PUB) == (200, {})
    status, body = call(host, "GET", f"/emulator/v1/projects/{p}/databases/other:securityRules")
    assert status == 200 and [f["content"] for f in body["rules"]["files"]] == [OPEN_PUB], body
    assert call(host, "GET", f"/emulator/v1/projects/{p}/databases/other:ruleCoverage")[0] == 200
