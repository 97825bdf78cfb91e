"""Rules decisions a caller's token changes, each case with the same requests against Hearth and the
official Cloud Firestore emulator (docs/firestore.md, *Official clients' own test suites*, the
thirty-fifth session's probe, suites35).

Hearth remembers a rules decision that reads only `request.auth` and the path (docs/rules.md,
*Remembered decisions*); these are the shapes where a remembered answer would be wrong if its key
left anything out:
- one uid whose token's claims change between calls (a role up and down, `admin` on and off), over
  REST get, `runQuery` and delete and gRPC GetDocument and RunQuery, each repeated;
- owners and strangers interleaved on the same paths, a `batchGet` with one document allowed and
  one not;
- `request.auth.token` fields (`email_verified` with `email.matches`, `firebase.sign_in_provider`,
  `firebase.tenant`, a list claim), expired tokens and another project's (taken as decoded by both);
- tokens from Hearth's Auth before and after custom claims are set, and after the user's tokens are
  revoked and the user deleted (Firestore's rules never check revocation).
"""
import base64
import json
import os
import time
import urllib.error
import urllib.request
import uuid

import grpc
import pytest
from google.api_core import exceptions as gexc
from google.cloud.firestore_v1.services.firestore import FirestoreClient
from google.cloud.firestore_v1.services.firestore.transports.grpc import FirestoreGrpcTransport
from google.cloud.firestore_v1.types import RunQueryRequest, StructuredQuery

RULES = r"""rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /notes/{uid}/items/{id} { allow get, list, delete: if request.auth != null && request.auth.uid == uid; }
    match /shared/{id} {
      allow get: if request.auth.token.role == 'admin';
      allow list: if request.auth.token.role in ['admin', 'reader'];
      allow delete: if request.auth.token.admin == true;
    }
    match /verified/{id} {
      allow get: if request.auth.token.email_verified == true && request.auth.token.email.matches('.*@example[.]com');
    }
    match /prov/{id} { allow get: if request.auth.token.firebase.sign_in_provider == 'password'; }
    match /tenant/{id} { allow get: if request.auth.token.firebase.tenant == 't1'; }
    match /groups/{id} { allow get: if request.auth.token.groups.size() > 1 && 'ops' in request.auth.token.groups; }
  }
}
"""


class Target:
    def __init__(self, host):
        self.host, self.project = host, "demo-s35-" + uuid.uuid4().hex[:8]
        self.root = f"/v1/projects/{self.project}/databases/(default)/documents"
        status, body = self.call("PUT", f"/emulator/v1/projects/{self.project}:securityRules",
                                 {"rules": {"files": [{"name": "firestore.rules", "content": RULES}]}})
        assert status == 200, body
        self.grpc = FirestoreClient(transport=FirestoreGrpcTransport(channel=grpc.insecure_channel(host)))

    def call(self, method, path, body=None, token=None):
        req = urllib.request.Request(f"http://{self.host}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": "Bearer " + token} if token else {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def seed(self, *paths):
        for p in paths:
            assert self.call("PATCH", f"{self.root}/{p}", {"fields": {"v": {"integerValue": "1"}}}, "owner")[0] == 200

    def name(self, path):
        return f"projects/{self.project}/databases/(default)/documents/{path}"

    # Each answer: "OK" (with the ids a query returned) or the error's status.
    def get(self, path, token):
        status, body = self.call("GET", f"{self.root}/{path}", token=token)
        return "OK" if status == 200 else body["error"]["status"]

    def query(self, parent, coll, token):
        status, body = self.call("POST", f"{self.root}{parent}:runQuery",
                                 {"structuredQuery": {"from": [{"collectionId": coll}]}}, token)
        if status != 200:
            return body["error"]["status"]
        return "OK " + ",".join(sorted(x["document"]["name"].rsplit("/", 1)[1] for x in body if "document" in x))

    def delete(self, path, token):
        status, body = self.call("DELETE", f"{self.root}/{path}", token=token)
        return "OK" if status == 200 else body["error"]["status"]

    def batch_get(self, paths, token):
        status, body = self.call("POST", f"{self.root}:batchGet", {"documents": [self.name(p) for p in paths]}, token)
        return "OK" if status == 200 else body["error"]["status"]

    def grpc_get(self, path, token):
        try:
            self.grpc.get_document(request={"name": self.name(path)}, metadata=[("authorization", "Bearer " + token)])
            return "OK"
        except gexc.GoogleAPICallError as e:
            return e.grpc_status_code.name

    def grpc_query(self, parent, coll, token):
        req = RunQueryRequest(parent=self.name(parent.strip("/")) if parent else self.root.strip("/").removeprefix("v1/"),
                              structured_query=StructuredQuery(from_=[StructuredQuery.CollectionSelector(collection_id=coll)]))
        try:
            ids = sorted(r.document.name.rsplit("/", 1)[1] for r in
                         self.grpc.run_query(request=req, metadata=[("authorization", "Bearer " + token)]) if r.document.name)
            return "OK " + ",".join(ids)
        except gexc.GoogleAPICallError as e:
            return e.grpc_status_code.name


def b64(d):
    return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()


def mock(project, uid, exp_in=3600, **claims):
    """An unsigned token as the rules-unit-testing library makes one."""
    now = int(time.time())
    c = {"iss": f"https://securetoken.google.com/{project}", "aud": project, "auth_time": now - 10, "iat": now - 10,
         "exp": now + exp_in, "user_id": uid, "sub": uid, "firebase": {"identities": {}, "sign_in_provider": "custom"}}
    c.update(claims)
    return b64({"alg": "none", "typ": "JWT"}) + "." + b64(c) + "."


@pytest.fixture
def t(emulator_host):
    target = Target(emulator_host)
    target.seed("notes/alice/items/a1", "notes/alice/items/a2", "notes/bob/items/b1", "shared/s1", "shared/s2",
                "verified/v1", "prov/p1", "tenant/t1", "groups/g1")
    yield target
    target.grpc.transport.close()


DENIED = "PERMISSION_DENIED"


def test_owners_and_strangers_interleaved_on_the_same_paths(t):
    alice, bob = mock(t.project, "alice"), mock(t.project, "bob")
    for _ in range(2):
        assert t.get("notes/alice/items/a1", alice) == "OK"
        assert t.get("notes/alice/items/a1", bob) == DENIED
        assert t.get("notes/alice/items/a1", None) == DENIED
        assert t.grpc_get("notes/alice/items/a1", bob) == DENIED
        assert t.grpc_get("notes/alice/items/a1", alice) == "OK"
        assert t.query("/notes/alice", "items", alice) == "OK a1,a2"
        assert t.query("/notes/alice", "items", bob) == DENIED
        assert t.grpc_query("/notes/alice", "items", bob) == DENIED
        assert t.grpc_query("/notes/alice", "items", alice) == "OK a1,a2"
        assert t.batch_get(["notes/alice/items/a1", "notes/alice/items/a2"], alice) == "OK"
        assert t.batch_get(["notes/alice/items/a1", "notes/bob/items/b1"], alice) == DENIED
    assert [t.delete("notes/alice/items/a2", tok) for tok in (bob, bob, alice, bob, alice)] == \
        [DENIED, DENIED, "OK", DENIED, "OK"]


def test_claims_that_change_between_calls_of_one_user(t):
    answers = []
    for role in ["admin", "reader", None, "admin", "reader", "admin"]:
        tok = mock(t.project, "carol", **({"role": role} if role else {}))
        answers.append((role, t.get("shared/s1", tok), t.grpc_get("shared/s1", tok),
                        t.query("", "shared", tok), t.grpc_query("", "shared", tok)))
    ok = "OK s1,s2"
    assert answers == [("admin", "OK", "OK", ok, ok), ("reader", DENIED, DENIED, ok, ok),
                       (None, DENIED, DENIED, DENIED, DENIED), ("admin", "OK", "OK", ok, ok),
                       ("reader", DENIED, DENIED, ok, ok), ("admin", "OK", "OK", ok, ok)]
    assert [t.delete("shared/s2", mock(t.project, "dave", admin=a)) for a in (False, True, False)] == \
        [DENIED, "OK", DENIED]


def test_token_fields_expired_and_foreign_tokens(t):
    p = t.project
    got = {
        "verified": t.get("verified/v1", mock(p, "e", email="e@example.com", email_verified=True)),
        "unverified": t.get("verified/v1", mock(p, "e", email="e@example.com", email_verified=False)),
        "other domain": t.get("verified/v1", mock(p, "e", email="e@other.com", email_verified=True)),
        "no email": t.get("verified/v1", mock(p, "e")),
        "password": t.get("prov/p1", mock(p, "f", firebase={"sign_in_provider": "password", "identities": {}})),
        "anonymous": t.get("prov/p1", mock(p, "f", firebase={"sign_in_provider": "anonymous", "identities": {}})),
        "tenant t1": t.get("tenant/t1", mock(p, "g", firebase={"sign_in_provider": "password", "tenant": "t1"})),
        "tenant t2": t.get("tenant/t1", mock(p, "g", firebase={"sign_in_provider": "password", "tenant": "t2"})),
        "groups 2": t.get("groups/g1", mock(p, "i", groups=["ops", "dev"])),
        "groups 1": t.get("groups/g1", mock(p, "i", groups=["ops"])),
        "groups string": t.get("groups/g1", mock(p, "i", groups="ops")),
        "expired": t.get("notes/alice/items/a1", mock(p, "alice", exp_in=-7200)),
        "expired grpc": t.grpc_get("notes/alice/items/a1", mock(p, "alice", exp_in=-7200)),
        "1970": t.get("notes/alice/items/a1", mock(p, "alice", exp_in=5 - int(time.time()))),
        "other project": t.get("notes/alice/items/a1", mock("other", "alice")),
    }
    assert got == {"verified": "OK", "unverified": DENIED, "other domain": DENIED, "no email": DENIED,
                   "password": "OK", "anonymous": DENIED, "tenant t1": "OK", "tenant t2": DENIED,
                   "groups 2": "OK", "groups 1": DENIED, "groups string": DENIED,
                   "expired": "OK", "expired grpc": "OK", "1970": "OK", "other project": "OK"}


def test_tokens_of_hearths_auth_across_claims_revocation_and_deletion(t):
    auth = os.environ["FIREBASE_AUTH_EMULATOR_HOST"]
    # Hearth's Auth for both targets (the official emulator takes its tokens as decoded); its
    # project is Hearth's, so the rules here see that project's `aud`, which neither server checks.
    hearth_project = os.environ["HEARTH_PROJECT"]

    def auth_call(path, body, token=None):
        return _post(f"http://{auth}{path}", body, token)

    st, up = auth_call("/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                       {"email": f"{uuid.uuid4().hex[:10]}@example.com", "password": "secret123", "returnSecureToken": True})
    assert st == 200, up
    uid, first = up["localId"], up["idToken"]
    t.seed(f"notes/{uid}/items/x")
    admin = f"/identitytoolkit.googleapis.com/v1/projects/{hearth_project}/accounts"
    assert (t.get(f"notes/{uid}/items/x", first), t.get("shared/s1", first)) == ("OK", DENIED)
    assert auth_call(admin + ":update", {"localId": uid, "customAttributes": json.dumps({"role": "admin"})}, "owner")[0] == 200
    assert t.get("shared/s1", first) == DENIED  # the old token keeps its old claims
    st, fresh = _post(f"http://{auth}/securetoken.googleapis.com/v1/token?key=k",
                      f"grant_type=refresh_token&refresh_token={up['refreshToken']}", form=True)
    assert st == 200, fresh
    second = fresh["id_token"]
    assert (t.get("shared/s1", second), t.grpc_get("shared/s1", second), t.get("shared/s1", first)) == ("OK", "OK", DENIED)
    time.sleep(1.1)
    assert auth_call(admin + ":update", {"localId": uid, "validSince": str(int(time.time()))}, "owner")[0] == 200
    assert (t.get(f"notes/{uid}/items/x", second), t.grpc_get(f"notes/{uid}/items/x", second)) == ("OK", "OK")
    assert auth_call(admin + ":delete", {"localId": uid}, "owner")[0] == 200
    assert t.get(f"notes/{uid}/items/x", second) == "OK"


def _post(url, body, token=None, form=False):
    data = body.encode() if form else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/x-www-form-urlencoded" if form else "application/json",
        **({"Authorization": "Bearer " + token} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")
