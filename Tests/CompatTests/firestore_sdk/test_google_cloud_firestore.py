"""google-cloud-firestore, unmodified, over gRPC with FIRESTORE_EMULATOR_HOST: what a user's backend does."""
import datetime
import math
import uuid

import pytest
from google.api_core import exceptions
from google.cloud import firestore
from google.cloud.firestore_v1 import aggregation
from google.cloud.firestore_v1.base_query import FieldFilter, Or


def coll(db):
    return db.collection("sdk" + uuid.uuid4().hex[:10])


def test_every_value_type_round_trips(db):
    c = coll(db)
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)
    other = c.document("other")
    value = {
        "null": None, "t": True, "f": False, "int": -(2 ** 63), "big": 2 ** 63 - 1, "dbl": 1.5, "nan": math.nan,
        "inf": math.inf, "neg": -0.25, "ts": when, "str": "héllo ✓", "empty": "", "bytes": b"\x00\xff\x10",
        "ref": other, "geo": firestore.GeoPoint(37.5, -122.25), "arr": [1, "two", [3], {"four": 4}] if False else [1, "two", {"four": 4}],
        "map": {"nested": {"deep": [True, None]}, "k": 1}, "emptyMap": {}, "emptyArr": [],
    }
    c.document("all").set(value)
    got = c.document("all").get()
    assert got.exists
    d = got.to_dict()
    assert math.isnan(d.pop("nan"))
    expected = dict(value)
    expected.pop("nan")
    assert d["ref"].path == other.path
    d.pop("ref"), expected.pop("ref")
    assert d == expected
    assert got.create_time == got.update_time
    assert got.read_time >= got.update_time


def test_crud_merge_update_delete(db):
    c = coll(db)
    ref = c.document("a")
    wr = ref.set({"a": 1, "b": {"x": 1, "y": 2}})
    assert wr.update_time is not None
    ref.set({"b": {"x": 10}, "c": 3}, merge=True)
    assert ref.get().to_dict() == {"a": 1, "b": {"x": 10, "y": 2}, "c": 3}
    ref.update({"b.y": firestore.DELETE_FIELD, "a": 2})
    assert ref.get().to_dict() == {"a": 2, "b": {"x": 10}, "c": 3}
    ref.set({"only": True})
    assert ref.get().to_dict() == {"only": True}
    ref.delete()
    assert not ref.get().exists
    # Deleting a missing document succeeds.
    ref.delete()
    _, added = c.add({"n": 1})
    assert len(added.id) == 20
    assert added.get().to_dict() == {"n": 1}


def test_preconditions(db):
    c = coll(db)
    ref = c.document("p")
    ref.create({"v": 1})
    with pytest.raises(exceptions.AlreadyExists):
        ref.create({"v": 2})
    with pytest.raises(exceptions.NotFound):
        c.document("missing").update({"v": 1})
    snap = ref.get()
    ref.update({"v": 2}, option=db.write_option(last_update_time=snap.update_time))
    with pytest.raises(exceptions.FailedPrecondition):
        ref.update({"v": 3}, option=db.write_option(last_update_time=snap.update_time))
    with pytest.raises(exceptions.FailedPrecondition):
        ref.delete(option=db.write_option(last_update_time=snap.update_time))
    assert ref.get().to_dict() == {"v": 2}


def test_transforms(db):
    c = coll(db)
    ref = c.document("t")
    ref.set({"n": 1, "f": 1.5, "arr": [1, 2], "at": firestore.SERVER_TIMESTAMP})
    first = ref.get()
    assert isinstance(first.get("at"), datetime.datetime)
    # REQUEST_TIME has millisecond precision (ServerValue docs; the official emulator agrees).
    assert first.get("at").microsecond % 1000 == 0
    assert abs((first.update_time - first.get("at")).total_seconds()) < 1
    ref.update({"n": firestore.Increment(2), "f": firestore.Increment(1), "arr": firestore.ArrayUnion([2, 3]),
                "missing": firestore.Increment(5)})
    assert ref.get().to_dict() | {"at": None} == {"n": 3, "f": 2.5, "arr": [1, 2, 3], "missing": 5, "at": None}
    ref.update({"arr": firestore.ArrayRemove([1, 3]), "hi": firestore.Maximum(9), "lo": firestore.Minimum(-1)})
    d = ref.get().to_dict()
    assert d["arr"] == [2] and d["hi"] == 9 and d["lo"] == -1


def test_a_rewritten_server_timestamp_is_later(db):
    # What the Go client's TestIntegration_MergeServerTimestamp asserts: set, get, set again — the
    # second REQUEST_TIME later, though Hearth answers all three within a millisecond.
    ref = coll(db).document("stamped")
    stamps = []
    for i in range(20):
        ref.set({"i": i, "at": firestore.SERVER_TIMESTAMP}, merge=True)
        stamps.append(ref.get().get("at"))
    assert all(a < b for a, b in zip(stamps, stamps[1:])), stamps


def test_batch_is_atomic(db):
    c = coll(db)
    c.document("keep").set({"v": 0})
    batch = db.batch()
    batch.set(c.document("x"), {"v": 1})
    batch.update(c.document("keep"), {"v": 1})
    batch.update(c.document("absent"), {"v": 1})  # fails: the whole batch is rejected
    with pytest.raises(exceptions.NotFound):
        batch.commit()
    assert not c.document("x").get().exists
    assert c.document("keep").get().to_dict() == {"v": 0}
    batch = db.batch()
    batch.set(c.document("x"), {"v": 1})
    batch.delete(c.document("keep"))
    results = batch.commit()
    assert len(results) == 2
    assert c.document("x").get().exists and not c.document("keep").get().exists


def test_get_all_with_missing_documents(db):
    c = coll(db)
    c.document("a").set({"v": "a"})
    c.document("c").set({"v": "c"})
    snaps = {s.id: s for s in db.get_all([c.document("a"), c.document("b"), c.document("c")])}
    assert set(snaps) == {"a", "b", "c"}
    assert snaps["a"].to_dict() == {"v": "a"} and snaps["c"].exists
    assert not snaps["b"].exists


def test_transaction_retries_on_conflict(db, target):
    if target == "official":
        pytest.skip("the official emulator locks read documents pessimistically: the outside write waits "
                    "for the transaction and times out; Hearth validates optimistically at commit")
    c = coll(db)
    ref = c.document("counter")
    ref.set({"n": 0})
    attempts = []

    @firestore.transactional
    def bump(txn):
        snap = ref.get(transaction=txn)
        attempts.append(snap.get("n"))
        if len(attempts) == 1:
            # Another client commits between this transaction's read and its commit.
            ref.update({"n": 100})
        txn.update(ref, {"n": snap.get("n") + 1})

    bump(db.transaction())
    assert ref.get().get("n") == 101
    assert attempts[0] == 0 and attempts[-1] == 100 and len(attempts) >= 2


def test_read_only_transaction(db):
    c = coll(db)
    c.document("r").set({"v": 1})
    txn = db.transaction(read_only=True)

    @firestore.transactional
    def read(t):
        return c.document("r").get(transaction=t).get("v")

    assert read(txn) == 1


@pytest.fixture
def people(db):
    c = coll(db)
    rows = [
        ("ada", {"age": 36, "city": "LDN", "tags": ["math", "poet"], "score": 9.5}),
        ("bob", {"age": 25, "city": "SF", "tags": ["dev"], "score": 7}),
        ("cy", {"age": 41, "city": "SF", "tags": ["dev", "ops"], "score": 8}),
        ("dee", {"age": 25, "city": "NYC", "tags": [], "score": 6.5}),
        ("eve", {"age": None, "city": "LDN", "tags": ["sec"]}),
    ]
    for id_, data in rows:
        c.document(id_).set(data)
    return c


def ids(query):
    return [s.id for s in query.stream()]


def test_every_operator(people):
    w = lambda f, op, v: people.where(filter=FieldFilter(f, op, v))  # noqa: E731
    assert ids(w("age", "==", 25)) == ["bob", "dee"]
    # An inequality orders by its field first, then by name.
    assert ids(w("city", "!=", "SF")) == ["ada", "eve", "dee"]
    assert ids(w("age", "<", 36)) == ["bob", "dee"]
    assert ids(w("age", "<=", 36)) == ["bob", "dee", "ada"]
    assert ids(w("age", ">", 36)) == ["cy"]
    assert ids(w("age", ">=", 36)) == ["ada", "cy"]
    assert ids(w("city", "in", ["SF", "NYC"])) == ["bob", "cy", "dee"]
    assert ids(w("city", "not-in", ["SF", "NYC"])) == ["ada", "eve"]
    assert ids(w("tags", "array_contains", "dev")) == ["bob", "cy"]
    assert ids(w("tags", "array_contains_any", ["poet", "ops"])) == ["ada", "cy"]
    assert ids(w("age", "==", None)) == ["eve"]
    assert ids(people.where(filter=Or([FieldFilter("city", "==", "NYC"), FieldFilter("age", ">", 40)]))) == ["dee", "cy"]
    assert ids(people.where(filter=FieldFilter("city", "==", "SF")).where(filter=FieldFilter("age", ">", 30))) == ["cy"]


def test_order_limit_cursors_offset_projection(people):
    by_age = people.where(filter=FieldFilter("age", ">=", 0)).order_by("age").order_by("__name__")
    assert ids(by_age) == ["bob", "dee", "ada", "cy"]
    assert ids(people.order_by("age", direction=firestore.Query.DESCENDING).limit(2)) == ["cy", "ada"]
    assert ids(by_age.start_at({"age": 25})) == ["bob", "dee", "ada", "cy"]
    assert ids(by_age.start_after({"age": 25})) == ["ada", "cy"]
    assert ids(by_age.end_at({"age": 36})) == ["bob", "dee", "ada"]
    assert ids(by_age.end_before({"age": 36})) == ["bob", "dee"]
    snap = people.document("dee").get()
    assert ids(by_age.start_after(snap)) == ["ada", "cy"]
    assert ids(by_age.offset(3)) == ["cy"]
    projected = list(people.select(["city"]).order_by("__name__").limit(1).stream())
    assert projected[0].to_dict() == {"city": "LDN"}
    assert ids(people.order_by("score")) == ["dee", "bob", "cy", "ada"]  # eve has no score
    # limit_to_last is sent reversed and the SDK reverses the answer (get() only; it also reverses
    # the query object's orderings, so it comes last here).
    assert [s.id for s in by_age.limit_to_last(2).get()] == ["ada", "cy"]


def test_aggregations(people):
    q = people.where(filter=FieldFilter("city", "in", ["SF", "LDN"]))
    count = q.count(alias="n").get()
    assert count[0][0].alias == "n" and count[0][0].value == 4
    agg = aggregation.AggregationQuery(people.limit(10))
    agg.count(alias="c").sum("age", alias="s").avg("score", alias="a")
    got = {r.alias: r.value for r in agg.get()[0]}
    # Several aggregations in one query see only documents that have every aggregated field
    # (Firestore's aggregation docs): eve has no score, so the count is 4.
    assert got["c"] == 4 and got["s"] == 127
    assert got["a"] == pytest.approx((9.5 + 7 + 8 + 6.5) / 4)


def test_collection_group_and_list_collections(db):
    root = coll(db)
    root.document("u1").collection("files").document("f1").set({"size": 1})
    root.document("u2").collection("files").document("f2").set({"size": 2})
    root.document("u2").collection("notes").document("n1").set({"size": 3})
    group = "files"
    found = [s.reference.path for s in db.collection_group(group).where(filter=FieldFilter("size", ">", 0)).stream()
             if s.reference.path.startswith(root.id + "/")]
    assert found == [f"{root.id}/u1/files/f1", f"{root.id}/u2/files/f2"]
    assert sorted(c.id for c in root.document("u2").collections()) == ["files", "notes"]
    assert root.id in [c.id for c in db.collections()]
    # Documents that exist only as parents of subcollections are listed with show_missing.
    assert sorted(d.id for d in root.list_documents()) == ["u1", "u2"]


def test_list_documents_pages_through_tokens(db):
    c = coll(db)
    batch = db.batch()
    want = []
    for i in range(40):
        doc = c.document(f"d{i:02d}")
        # Every fifth one exists only as the parent of a subcollection (listed with show_missing).
        batch.set(doc.collection("sub").document("x") if i % 5 == 2 else doc, {"i": i})
        want.append(doc.id)
    batch.commit()
    # page_size=7: six pages, each a ListDocuments call with the previous page's token.
    assert [d.id for d in c.list_documents(page_size=7)] == want
    # A document created before the position between pages does not shift the later ones.
    listed = c.list_documents(page_size=7)
    first = [next(listed).id for _ in range(7)]  # the first page; the next is fetched on demand
    c.document("d00a").set({"i": -1})
    assert first + [d.id for d in listed] == want


def test_errors_carry_firestore_status(db):
    c = coll(db)
    with pytest.raises(exceptions.InvalidArgument):
        list(c.where(filter=FieldFilter("a", "in", list(range(31)))).stream())
    with pytest.raises(exceptions.InvalidArgument):
        c.document("x").set({"__reserved__": 1})
