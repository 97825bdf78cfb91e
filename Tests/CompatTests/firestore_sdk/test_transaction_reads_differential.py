"""A read-write transaction's reads after the writes that could leave them stale, on Hearth and the
official emulator with the same assertions. Hearth answers such a read from the version the last
transaction committed when it holds it (docs/architecture.md, *What the last transaction
committed*): every other write of the document must send the next read back to the store. Each
case primes a document with read-modify-write transactions, writes it another way (plain commit,
batch, transform, delete and re-create, REST, BatchWrite, a failed write), then reads it in a
transaction — over gRPC and over REST — and compares with a plain read; the expected values are
worked out from the writes. The twenty-sixth session's probe (docs/benchmarks.md, faith26) ran
these shapes and more; these are the ones most particular to the slots."""
import datetime
import os
import threading
import uuid

import pytest
import requests
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore


def name(prefix):
    return prefix + uuid.uuid4().hex[:10]


def rmw(db, ref, first):
    """n += 1 in a transaction (`first` when the document is missing): what fills Hearth's slot."""
    @firestore.transactional
    def body(tr):
        s = ref.get(transaction=tr)
        tr.set(ref, {**s.to_dict(), "n": s.to_dict()["n"] + 1} if s.exists else dict(first))
    body(db.transaction())


def txn_read(db, refs):
    @firestore.transactional
    def body(tr):
        by = {s.reference.path: s for s in tr.get_all(refs)}
        return [by[r.path].to_dict() if by[r.path].exists else None for r in refs]
    return body(db.transaction())


def plain(refs):
    return [s.to_dict() if s.exists else None for s in (r.get() for r in refs)]


class Rest:
    def __init__(self, host, project):
        self.base = f"http://{host}/v1/projects/{project}/databases/(default)/documents"
        self.project = project
        self.headers = {"Authorization": "Bearer owner"}

    def name(self, ref):
        return f"projects/{self.project}/databases/(default)/documents/{ref.path}"

    def call(self, method, url, body=None, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else self.headers
        return requests.request(method, url, json=body, headers=headers, timeout=60)

    def txn_read(self, refs, token=None):
        """beginTransaction, batchGet in it, commit: the fields of each (None: missing) or the error status."""
        r = self.call("POST", self.base + ":beginTransaction", {"options": {"readWrite": {}}}, token)
        tx = r.json()["transaction"]
        r = self.call("POST", self.base + ":batchGet", {"documents": [self.name(x) for x in refs], "transaction": tx}, token)
        if r.status_code != 200:
            self.call("POST", self.base + ":rollback", {"transaction": tx}, token)
            return r.json()["error"]["status"]
        found = {i.get("found", {}).get("name") or i["missing"]: i.get("found") for i in r.json()}
        self.call("POST", self.base + ":commit", {"transaction": tx, "writes": []}, token)
        return [None if found[self.name(x)] is None else {k: value(v) for k, v in found[self.name(x)].get("fields", {}).items()}
                for x in refs]


def value(v):
    """A REST value as the python client gives it (the kinds these tests write)."""
    (kind, x), = v.items()
    if kind == "integerValue":
        return int(x)
    if kind == "arrayValue":
        return [value(e) for e in x.get("values", [])]
    return x


@pytest.fixture
def rest(emulator_host, db):
    return Rest(emulator_host, db.project)


def swallow(call):
    try:
        call()
    except exceptions.GoogleAPICallError:
        pass


OUTSIDE = {
    # kind: (the write, what document a holds after it given {"n": 2, "k": "t"}, b after it given {"n": 101})
    "set": (lambda db, r, a, b: a.set({"n": 50}), {"n": 50}, {"n": 101}),
    "merge": (lambda db, r, a, b: a.set({"k": "m"}, merge=True), {"n": 2, "k": "m"}, {"n": 101}),
    "batch_of_two": (lambda db, r, a, b: batch(db, [("update", a, {"k": "b"}), ("set", b, {"n": 7})]), {"n": 2, "k": "b"}, {"n": 7}),
    "delete": (lambda db, r, a, b: a.delete(), None, {"n": 101}),
    "delete_then_create": (lambda db, r, a, b: (a.delete(), a.create({"n": 5})), {"n": 5}, {"n": 101}),
    "increment": (lambda db, r, a, b: a.update({"n": firestore.Increment(10)}), {"n": 12, "k": "t"}, {"n": 101}),
    "array_union": (lambda db, r, a, b: a.update({"arr": firestore.ArrayUnion([1])}), {"n": 2, "k": "t", "arr": [1]}, {"n": 101}),
    "rest_patch": (lambda db, r, a, b: r.call("PATCH", f"{r.base}/{a.path}?updateMask.fieldPaths=n", {"fields": {"n": {"integerValue": "9"}}}),
                   {"n": 9, "k": "t"}, {"n": 101}),
    "rest_delete": (lambda db, r, a, b: r.call("DELETE", f"{r.base}/{a.path}"), None, {"n": 101}),
    "rest_transform": (lambda db, r, a, b: r.call("POST", r.base + ":commit", {"writes": [{"transform": {
        "document": r.name(a), "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "3"}}]}}]}), {"n": 5, "k": "t"}, {"n": 101}),
    "batch_write": (lambda db, r, a, b: r.call("POST", r.base + ":batchWrite", {"writes": [
        {"update": {"name": r.name(a), "fields": {"n": {"integerValue": "4"}}}}, {"delete": r.name(b)}]}), {"n": 4}, None),
    "failed_create": (lambda db, r, a, b: swallow(lambda: a.create({"n": -1})), {"n": 2, "k": "t"}, {"n": 101}),
    "failed_precondition": (lambda db, r, a, b: swallow(lambda: a.update({"n": -2}, option=db.write_option(
        last_update_time=datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)))), {"n": 2, "k": "t"}, {"n": 101}),
    "another_transaction_deletes": (lambda db, r, a, b: delete_in_transaction(db, a), None, {"n": 101}),
}


def batch(db, ops):
    wb = db.batch()
    for op, ref, data in ops:
        getattr(wb, op)(ref, data)
    wb.commit()


def delete_in_transaction(db, ref):
    @firestore.transactional
    def body(tr):
        ref.get(transaction=tr)
        tr.delete(ref)
    body(db.transaction())


@pytest.mark.parametrize("kind", sorted(OUTSIDE))
def test_a_transaction_reads_what_an_outside_write_left(db, rest, kind):
    """Primed by transactions, written another way, then read in transactions (gRPC and REST) and
    written again by one: every read is the outside write's result, never the transaction's version."""
    write, want_a, want_b = OUTSIDE[kind]
    c = db.collection(name("txr"))
    a, b = c.document("a"), c.document("b")
    rmw(db, a, {"n": 1, "k": "t"})
    rmw(db, a, {"n": 1, "k": "t"})
    rmw(db, b, {"n": 100})
    rmw(db, b, {"n": 100})
    write(db, rest, a, b)
    assert plain([a, b]) == [want_a, want_b]
    assert txn_read(db, [a]) == [want_a]
    assert txn_read(db, [a, b]) == [want_a, want_b]
    assert rest.txn_read([a, b]) == [want_a, want_b]
    rmw(db, a, {"n": 1000})
    rmw(db, b, {"n": 2000})
    after_a = {"n": 1000} if want_a is None else {**want_a, "n": want_a["n"] + 1}
    after_b = {"n": 2000} if want_b is None else {**want_b, "n": want_b["n"] + 1}
    assert txn_read(db, [a, b]) == plain([a, b]) == [after_a, after_b]


def test_a_server_timestamp_written_outside_is_what_the_transaction_reads(db):
    c = db.collection(name("txr"))
    a = c.document("a")
    rmw(db, a, {"n": 1})
    rmw(db, a, {"n": 1})
    a.update({"t": firestore.SERVER_TIMESTAMP})
    got = txn_read(db, [a])[0]
    assert got == a.get().to_dict() and "t" in got and got["n"] == 2


def test_rules_judge_the_version_an_outside_write_left(db, emulator_host):
    """Rules that read no other document judge a transaction's read by `resource`: after an outside
    write hides the document, the user's transaction may not read it; shown again, it may."""
    project = name("txr-rules-")
    rules = ("rules_version = '2';\nservice cloud.firestore { match /databases/{d}/documents {\n"
             "  match /vis/{id} { allow read: if request.auth != null && resource.data.visible == true;\n"
             "                    allow write: if request.auth != null; } } }\n")
    r = requests.put(f"http://{emulator_host}/emulator/v1/projects/{project}:securityRules",
                     json={"rules": {"files": [{"name": "firestore.rules", "content": rules}]}}, timeout=60)
    assert r.status_code == 200, r.text
    auth = os.environ["FIREBASE_AUTH_EMULATOR_HOST"]
    r = requests.post(f"http://{auth}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake",
                      json={"email": f"{uuid.uuid4().hex[:10]}@example.com", "password": "secret-pass", "returnSecureToken": True})
    token = r.json()["idToken"]
    admin = firestore.Client(project=project, credentials=AnonymousCredentials())
    user = Rest(emulator_host, project)
    v = admin.collection("vis").document("d")
    v.set({"visible": True, "n": 0})
    for n in (1, 2):  # the user's own read-modify-write transactions
        tx = user.call("POST", user.base + ":beginTransaction", {"options": {"readWrite": {}}}, token).json()["transaction"]
        assert user.call("POST", user.base + ":batchGet", {"documents": [user.name(v)], "transaction": tx}, token).status_code == 200
        r = user.call("POST", user.base + ":commit", {"transaction": tx, "writes": [{"update": {"name": user.name(v), "fields": {
            "visible": {"booleanValue": True}, "n": {"integerValue": str(n)}}}}]}, token)
        assert r.status_code == 200, r.text
    assert user.txn_read([v], token) == [{"visible": True, "n": 2}]
    v.update({"visible": False})
    assert user.txn_read([v], token) == "PERMISSION_DENIED"
    v.update({"visible": True})
    assert user.txn_read([v], token) == [{"visible": True, "n": 2}]
    v.delete()
    assert user.txn_read([v], token) == "PERMISSION_DENIED"
    admin.close()


def test_a_clear_between_transactions(db, emulator_host):
    project = name("txr-clear-")
    other = firestore.Client(project=project, credentials=AnonymousCredentials())
    a = other.collection("c").document("a")
    rmw(other, a, {"n": 1})
    rmw(other, a, {"n": 1})
    r = requests.delete(f"http://{emulator_host}/emulator/v1/projects/{project}/databases/(default)/documents", timeout=60)
    assert r.status_code == 200
    assert txn_read(other, [a]) == [None]
    rmw(other, a, {"n": 1})
    assert txn_read(other, [a]) == plain([a]) == [{"n": 1}]
    other.close()


def test_transactions_and_outside_increments_on_one_document_lose_nothing(db, rest):
    """Clients' read-modify-write transactions on two documents at once, plain and REST increments of
    one of them between: every acknowledged write is in the final counts."""
    c = db.collection(name("txr"))
    hot, cold = c.document("hot"), c.document("cold")
    hot.set({"n": 0})
    cold.set({"n": 0})
    done = {"txn": 0, "inc": 0}
    lock = threading.Lock()

    def mover():
        for _ in range(8):
            @firestore.transactional
            def body(tr):
                n = {s.reference.id: s.to_dict()["n"] for s in tr.get_all([hot, cold])}
                tr.update(hot, {"n": n["hot"] + 1})
                tr.update(cold, {"n": n["cold"] + 1})
            body(db.transaction(max_attempts=50))
            with lock:
                done["txn"] += 1

    def incrementer():
        for i in range(10):
            # The official emulator's pessimistic locks may abort a plain commit that waited on a
            # transaction (ABORTED, 409 over REST); an aborted commit wrote nothing and is retried.
            for _ in range(50):
                if i % 2:
                    try:
                        hot.update({"n": firestore.Increment(1)})
                        status = 200
                    except exceptions.Aborted:
                        status = 409
                else:
                    status = rest.call("POST", rest.base + ":commit", {"writes": [{"transform": {"document": rest.name(hot),
                                       "fieldTransforms": [{"fieldPath": "n", "increment": {"integerValue": "1"}}]}}]}).status_code
                if status != 409:
                    break
            assert status == 200
            with lock:
                done["inc"] += 1

    threads = [threading.Thread(target=mover) for _ in range(3)] + [threading.Thread(target=incrementer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert done == {"txn": 24, "inc": 10}
    assert plain([hot, cold]) == [{"n": 34}, {"n": 24}]
