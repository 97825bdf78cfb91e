"""The REST write endpoints besides `:commit` and the write patterns of a backend's tests, each case
with the same calls against Hearth and the official Cloud Firestore emulator (docs/benchmarks.md,
*Faithfulness after the thirty-first session, round seven (faith32)*).

- `createDocument` (`documentId` absent, empty, invalid, taken, a `mask`, a body naming a
  document), `patch` with `updateMask`, `mask`, `currentDocument.exists`, quoted and bad field
  paths, `delete` with `currentDocument`: identical answers (messages of missing and existing
  documents are each server's: the emulator names internal entities).
- One commit writing a document more than once in an order that cannot be collapsed into one
  mutation (a create after any write but a delete, an update or `exists: true` delete after a
  delete, a different update time) is refused whole, INVALID_ARGUMENT, in the emulator's words.
- The client: `create` twice, `update` of a missing document, `set(merge=True)` with nested maps
  and `DELETE_FIELD`, transforms of missing and non-numeric fields, a batch creating a document
  twice; a transaction whose read is written meanwhile (each server's answer: the emulator's
  transactions lock, Hearth's are optimistic).
"""
import threading
import urllib.parse

import pytest
from google.api_core import exceptions
from google.cloud import firestore
from google.cloud.firestore_v1 import DELETE_FIELD, ArrayRemove, ArrayUnion, Increment, Maximum, Minimum

from test_paths_listen_rpcs_differential import coll_id, message, rest
from test_raw_grpc import database

F = {"a": {"integerValue": "1"}, "m": {"mapValue": {"fields": {"x": {"stringValue": "s"}, "y": {"integerValue": "2"}}}}}
BAD_PATH = ('Invalid property path "{}". Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), '
            'and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)')


def q(path):
    return urllib.parse.quote(path, safe="")


def fields(answer):
    status, body = answer
    assert status == 200, body
    return body.get("fields", {})


# ---- createDocument -----------------------------------------------------------------------------------

def test_create_document(emulator_host):
    c = coll_id("cd")
    for query in ["", "?documentId="]:  # no id: an automatic one
        status, body = rest(emulator_host, "POST", f"/{c}{query}", {"fields": F})
        assert status == 200 and len(body["name"].rsplit("/", 1)[1]) == 20 and body["fields"] == F
    status, body = rest(emulator_host, "POST", f"/{c}?documentId=d1", {"fields": F})
    assert status == 200 and body["name"] == f"{database()}/documents/{c}/d1"
    status, body = rest(emulator_host, "POST", f"/{c}?documentId=d1", {"fields": F})
    assert status == 409 and body["error"]["status"] == "ALREADY_EXISTS"
    assert fields(rest(emulator_host, "POST", f"/{c}?documentId=d2&mask.fieldPaths=a", {"fields": F})) == {"a": F["a"]}
    assert fields(rest(emulator_host, "POST", f"/{c}?documentId=d3&mask.fieldPaths=zz", {"fields": F})) == {}
    assert fields(rest(emulator_host, "POST", f"/{c}?documentId=d4&mask.fieldPaths=__name__", {"fields": F})) == {}
    assert fields(rest(emulator_host, "POST", f"/{c}?documentId=d5", None)) == {}
    assert fields(rest(emulator_host, "POST", f"/{c}/d1/sub?documentId=d6", {"fields": F})) == F
    for query, body, words in [
        ("?documentId=a%2Fb", {"fields": F}, 'Resource id "a/b" is invalid because it contains "/".'),
        ("?documentId=__x__", {"fields": F}, 'Resource id "__x__" is invalid because it is reserved.'),
        ("?documentId=..", {"fields": F}, 'Resource id ".." is invalid because it is reserved.'),
        ("?documentId=" + "x" * 1501, {"fields": F}, "The key path element name is longer than 1500 bytes."),
        ("?documentId=d7", {"name": f"{database()}/documents/{c}/d7", "fields": F}, "document.name must not be set"),
        ("?documentId=d8&mask.fieldPaths=a..b", {"fields": F}, BAD_PATH.format("a..b")),
    ]:
        assert rest(emulator_host, "POST", f"/{c}{query}", body) == \
            (400, {"error": {"code": 400, "message": words, "status": "INVALID_ARGUMENT"}}), query
    assert message(rest(emulator_host, "POST", f"/{c}/d1?documentId=d9", {"fields": F})) == \
        f'Document parent name "{database()}/documents/{c}" lacks "/" at index {len(database()) + 11 + len(c)}.'


# ---- patch and delete -----------------------------------------------------------------------------------

def test_patch_masks_and_preconditions(emulator_host):
    c = coll_id("pa")
    p = f"/{c}/p1"
    assert fields(rest(emulator_host, "PATCH", p, {"fields": F})) == F
    assert fields(rest(emulator_host, "PATCH", p + "?updateMask.fieldPaths=a", {"fields": {"a": {"integerValue": "5"}}}))["a"] == {"integerValue": "5"}
    # A masked path absent from the body is deleted; a body field outside the mask is ignored.
    assert fields(rest(emulator_host, "PATCH", p + "?updateMask.fieldPaths=a", {"fields": {"zz": {"integerValue": "6"}}})) == {"m": F["m"]}
    assert fields(rest(emulator_host, "PATCH", p + "?updateMask.fieldPaths=m.x",
                       {"fields": {"m": {"mapValue": {"fields": {"x": {"stringValue": "t"}, "y": {"integerValue": "9"}}}}}}))["m"] == \
        {"mapValue": {"fields": {"x": {"stringValue": "t"}, "y": {"integerValue": "2"}}}}
    assert fields(rest(emulator_host, "PATCH", p + "?mask.fieldPaths=m.y", {"fields": F})) == \
        {"m": {"mapValue": {"fields": {"y": {"integerValue": "2"}}}}}
    quoted = "?updateMask.fieldPaths=" + q("`a-b`.c")
    assert fields(rest(emulator_host, "PATCH", p + quoted, {"fields": {"a-b": {"mapValue": {"fields": {"c": {"integerValue": "1"}}}}}}))["a-b"] == \
        {"mapValue": {"fields": {"c": {"integerValue": "1"}}}}
    assert fields(rest(emulator_host, "PATCH", p + "?updateMask.fieldPaths=a&mask.fieldPaths=" + q("`a-b`"), {"fields": F})) == \
        {"a-b": {"mapValue": {"fields": {"c": {"integerValue": "1"}}}}}
    for path in ["a-b", "a b", "1a", "`a", "a`b`"]:
        assert message(rest(emulator_host, "PATCH", p + "?updateMask.fieldPaths=" + q(path), {"fields": F})) == BAD_PATH.format(path)
        assert message(rest(emulator_host, "GET", p + "?mask.fieldPaths=" + q(path))) == BAD_PATH.format(path)
    assert message(rest(emulator_host, "PATCH", p + "?updateMask.fieldPaths=", {"fields": F})) == "Invalid empty property path string."
    # An update mask on a missing document creates it with the masked fields.
    assert fields(rest(emulator_host, "PATCH", f"/{c}/p2?updateMask.fieldPaths=a", {"fields": F})) == {"a": F["a"]}
    status, body = rest(emulator_host, "PATCH", p + "?currentDocument.exists=false", {"fields": F})
    assert (status, body["error"]["status"]) == (409, "ALREADY_EXISTS")
    for query in ["?currentDocument.exists=true", "?currentDocument.exists=true&updateMask.fieldPaths=a"]:
        status, body = rest(emulator_host, "PATCH", f"/{c}/p3{query}", {"fields": F})
        assert (status, body["error"]["status"]) == (404, "NOT_FOUND")
    assert rest(emulator_host, "DELETE", f"/{c}/x1") == (200, {})
    assert rest(emulator_host, "DELETE", f"/{c}/x1?currentDocument.exists=false") == (200, {})
    status, body = rest(emulator_host, "DELETE", f"/{c}/x1?currentDocument.exists=true")
    assert (status, body["error"]["status"]) == (404, "NOT_FOUND")
    status, body = rest(emulator_host, "DELETE", p + "?currentDocument.exists=false")
    assert (status, body["error"]["status"]) == (409, "ALREADY_EXISTS")
    assert rest(emulator_host, "DELETE", p + "?currentDocument.exists=true") == (200, {})
    assert rest(emulator_host, "GET", p)[0] == 404


# ---- one document written twice in one commit -------------------------------------------------------------

T1, T2 = "2020-01-01T00:00:00Z", "2021-01-01T00:00:00.5Z"
V1 = "VersionPrecondition{exactBaseVersion=1577836800000000, maxBaseVersion=null}"
V2 = "VersionPrecondition{exactBaseVersion=1609459200500000, maxBaseVersion=null}"


def _write(kind, name):
    inc = [{"fieldPath": "n", "increment": {"integerValue": "1"}}]
    return {
        "create": {"update": {"name": name, "fields": F}, "currentDocument": {"exists": False}},
        "update": {"update": {"name": name, "fields": F}, "currentDocument": {"exists": True}},
        "set": {"update": {"name": name, "fields": F}},
        "patch": {"update": {"name": name, "fields": F}, "updateMask": {"fieldPaths": ["a"]}},
        "transform": {"transform": {"document": name, "fieldTransforms": inc}},
        "transform-create": {"transform": {"document": name, "fieldTransforms": inc}, "currentDocument": {"exists": False}},
        "transform-update": {"transform": {"document": name, "fieldTransforms": inc}, "currentDocument": {"exists": True}},
        "delete": {"delete": name},
        "delete-exists": {"delete": name, "currentDocument": {"exists": True}},
        "delete-missing": {"delete": name, "currentDocument": {"exists": False}},
        "update-at-t1": {"update": {"name": name, "fields": F}, "currentDocument": {"updateTime": T1}},
        "update-at-t2": {"update": {"name": name, "fields": F}, "currentDocument": {"updateTime": T2}},
        "delete-at-t1": {"delete": name, "currentDocument": {"updateTime": T1}},
    }[kind]


REFUSED = [
    (["create", "create"], "Cannot insert then insert an entity in the same request."),
    (["update", "create"], "Cannot update then insert an entity in the same request."),
    (["set", "create"], "Cannot upsert then insert an entity in the same request."),
    (["patch", "create"], "Cannot upsert then insert an entity in the same request."),
    (["transform", "create"], "Cannot upsert then insert an entity in the same request."),
    (["transform-create", "create"], "Cannot insert then insert an entity in the same request."),
    (["transform-update", "create"], "Cannot update then insert an entity in the same request."),
    (["update-at-t1", "create"], "Cannot update then insert an entity in the same request."),
    (["delete", "update"], "Cannot delete then update an entity in the same request."),
    (["delete", "delete-exists"], "Cannot delete then delete an entity in the same request."),
    (["delete-missing", "update"], "Cannot delete then update an entity in the same request."),
    (["delete", "update-at-t1"], "Cannot delete then update an entity in the same request."),
    (["delete", "transform-update"], "Cannot delete then update an entity in the same request."),
    (["set", "delete-missing"], "Cannot upsert then delete an entity in the same request."),
    (["create", "delete-missing"], "Cannot insert then delete an entity in the same request."),
    (["delete", "set", "create"], "Cannot upsert then insert an entity in the same request."),
    (["create", "set", "delete", "update"], "Cannot delete then update an entity in the same request."),
    (["set", "update-at-t1"], f"Cannot collapse mutations with different version preconditions (null and {V1})"),
    (["delete", "delete-at-t1"], f"Cannot collapse mutations with different version preconditions (null and {V1})"),
    (["update-at-t1", "update-at-t2"], f"Cannot collapse mutations with different version preconditions ({V1} and {V2})"),
]
COLLAPSED = [  # (writes, the document after them: exists)
    (["set", "set"], True), (["set", "update"], True), (["create", "update"], True), (["create", "set"], True),
    (["delete", "create"], True), (["delete-missing", "create"], True), (["delete", "delete"], False),
    (["delete-exists", "delete"], False), (["set", "delete"], False), (["transform-create", "update"], True),
    (["create", "delete-exists"], False), (["delete", "delete-missing"], False), (["update", "set"], True),
]


@pytest.mark.parametrize("existing", [False, True])
def test_one_document_twice_in_a_commit(emulator_host, existing):
    c = coll_id("tw")
    for k, (kinds, words) in enumerate(REFUSED):
        name = f"{database()}/documents/{c}/r{k}"
        if existing:
            assert rest(emulator_host, "POST", ":commit", {"writes": [_write("set", name)]})[0] == 200
        assert rest(emulator_host, "POST", ":commit", {"writes": [_write(kind, name) for kind in kinds]}) == \
            (400, {"error": {"code": 400, "message": words, "status": "INVALID_ARGUMENT"}}), kinds
        assert rest(emulator_host, "GET", f"/{c}/r{k}")[0] == (200 if existing else 404), kinds
    for k, (kinds, exists) in enumerate(COLLAPSED):
        name = f"{database()}/documents/{c}/c{k}"
        if kinds[0] in (("create", "transform-create", "delete-missing") if existing else ("update", "delete-exists")):
            continue  # the document fails the first write's precondition
        if existing:
            assert rest(emulator_host, "POST", ":commit", {"writes": [_write("set", name)]})[0] == 200
        status, body = rest(emulator_host, "POST", ":commit", {"writes": [_write(kind, name) for kind in kinds]})
        assert status == 200 and len(body["writeResults"]) == len(kinds), (kinds, body)
        assert rest(emulator_host, "GET", f"/{c}/c{k}")[0] == (200 if exists else 404), kinds
    # Another document between the two writes changes nothing; each document is judged alone.
    a, b = f"{database()}/documents/{c}/x", f"{database()}/documents/{c}/y"
    assert message(rest(emulator_host, "POST", ":commit", {"writes": [_write("set", a), _write("create", b), _write("create", a)]})) == \
        "Cannot upsert then insert an entity in the same request."
    assert rest(emulator_host, "POST", ":commit", {"writes": [_write("create", a), _write("create", b)]})[0] == 200


def test_a_batch_creating_a_document_twice(db):
    ref = db.collection(coll_id("bt")).document("d")
    batch = db.batch()
    batch.create(ref, {"i": 1})
    batch.create(ref, {"j": 2})
    with pytest.raises(exceptions.InvalidArgument, match="Cannot insert then insert an entity in the same request."):
        batch.commit()
    assert not ref.get().exists
    batch = db.batch()
    batch.set(ref, {"i": 1})
    batch.update(ref, {"j": 2})
    batch.commit()
    assert ref.get().to_dict() == {"i": 1, "j": 2}


# ---- a backend's write patterns through the client ------------------------------------------------------

def test_client_write_patterns(db):
    col = db.collection(coll_id("cw"))
    ref = col.document("a")
    ref.create({"x": 1})
    with pytest.raises(exceptions.AlreadyExists):
        ref.create({"x": 2})
    for update in [{"x": 1}, {"m.x": 1}, {"n": Increment(1)}]:
        with pytest.raises(exceptions.NotFound):
            col.document("missing").update(update)
    with pytest.raises(exceptions.NotFound):
        col.document("missing").delete(option=db.write_option(exists=True))
    col.document("missing").delete()
    assert not col.document("missing").get().exists
    ref.set({"m": {"a": 1, "b": {"c": 2}}}, merge=True)
    ref.set({"m": {"b": {"d": 3}}}, merge=True)
    assert ref.get().to_dict() == {"x": 1, "m": {"a": 1, "b": {"c": 2, "d": 3}}}
    ref.set({"m": {"b": {"c": DELETE_FIELD}}, "zz": DELETE_FIELD}, merge=True)
    ref.set({"m": {"a": DELETE_FIELD}, "y": 5, "ignored": 6}, merge=["m.a", "y"])
    ref.set({"e": {}}, merge=True)
    assert ref.get().to_dict() == {"x": 1, "y": 5, "e": {}, "m": {"b": {"d": 3}}}
    ref.update({"m.b.d": DELETE_FIELD, "p.q.r": 1})
    assert ref.get().to_dict() == {"x": 1, "y": 5, "e": {}, "m": {"b": {}}, "p": {"q": {"r": 1}}}
    # Transforms of missing fields, and of fields of another type: the operand (or [] / the union).
    ref.set({"s": "str", "nul": None, "arr": [1], "mp": {"k": 1}, "f": 1.5, "n": 5}, merge=True)
    ref.update({"au": ArrayUnion([1, 2, 1]), "ar": ArrayRemove([1]), "i": Increment(5), "fl": Increment(1.5),
                "mx": Maximum(3), "mn": Minimum(3), "s": Increment(2), "nul": Increment(2), "mp": ArrayRemove([1]),
                "arr": Maximum(2.5), "n": Increment(0.5), "f": Increment(1)})
    ref.update({"au": ArrayUnion([2, 3, 3])})
    got = ref.get().to_dict()
    assert {k: got[k] for k in ["au", "ar", "i", "fl", "mx", "mn", "s", "nul", "mp", "arr", "n", "f"]} == \
        {"au": [1, 2, 3], "ar": [], "i": 5, "fl": 1.5, "mx": 3, "mn": 3, "s": 2, "nul": 2, "mp": [], "arr": 2.5, "n": 5.5, "f": 2.5}
    ref.update({"big": 2**63 - 1})
    ref.update({"big": Increment(1)})
    assert ref.get().get("big") == 2**63 - 1  # saturates
    fresh = col.document("b")
    fresh.set({"arr": ArrayUnion([1]), "n": Increment(2), "m": {"k": Increment(1)}}, merge=True)
    assert fresh.get().to_dict() == {"arr": [1], "n": 2, "m": {"k": 1}}
    with pytest.raises(exceptions.InvalidArgument, match="Invalid base version, it is greater than the stored version"):
        ref.update({"x": 2}, option=db.write_option(last_update_time=fresh.get().update_time))


def test_transaction_whose_read_is_written_meanwhile(db, target):
    ref = db.collection(coll_id("tx")).document("n")
    ref.set({"n": 0})
    attempts, outside = [], []

    @firestore.transactional
    def increment(tx):
        attempts.append(1)
        n = ref.get(transaction=tx).get("n")
        if len(attempts) == 1:
            try:
                db.collection(ref.parent.id).document("n").update({"n": 100})
                outside.append("written")
            except exceptions.Aborted as e:
                outside.append(e.message)
        tx.update(ref, {"n": n + 1})

    thread = threading.Thread(target=lambda: increment(db.transaction()))
    thread.start()
    thread.join(120)
    assert not thread.is_alive()
    if target == "official":  # pessimistic: the outside write waits for the lock and gives up
        assert (outside, len(attempts), ref.get().get("n")) == (["Transaction lock timeout."], 1, 1)
    else:  # optimistic: the outside write lands, the commit fails and the transaction runs again
        assert (outside, len(attempts), ref.get().get("n")) == (["written"], 2, 101)
