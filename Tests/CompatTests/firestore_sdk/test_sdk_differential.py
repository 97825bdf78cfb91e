"""What a real project's test suite hits with google-cloud-firestore, run unmodified against Hearth and
the official Cloud Firestore emulator with the same assertions: error types and messages, transforms
on missing and mistyped fields, field paths, projections, aggregations over mixed values, cursors,
collection groups bounded by `__name__`, recursive deletes, BulkWriter, read-time reads and the value
types at their edges. Where the emulator contradicts production Firestore the test says so and asserts
production's answer on Hearth (docs/firestore.md, *Client-library differential*)."""
import datetime
import math
import os
import uuid

import pytest
from google.api_core import exceptions
from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.cloud import firestore
from google.cloud.firestore_v1 import aggregation, types
from google.cloud.firestore_v1.base_query import And, FieldFilter, Or
from google.protobuf import timestamp_pb2


def coll(db):
    return db.collection("sd" + uuid.uuid4().hex[:10])


def error(call):
    """(exception class name, message) of a call that must fail."""
    with pytest.raises(exceptions.GoogleAPICallError) as info:
        call()
    return type(info.value).__name__, info.value.message


def doc_path(db, ref):
    return f"projects/{db.project}/databases/(default)/documents/{ref.path}"


def ids(query):
    return [s.id for s in query.stream()]


# ---- errors a project's tests assert -------------------------------------------------------------

def test_update_of_a_missing_document_is_not_found(db, target):
    ref = coll(db).document("missing")
    kind, message = error(lambda: ref.update({"v": 1}))
    assert kind == "NotFound"
    if target == "hearth":  # the emulator leaks its storage text (deviation class internal-message)
        assert message == f"No document to update: {doc_path(db, ref)}"
    assert not ref.get().exists


def test_an_update_time_precondition_ahead_of_the_document_is_invalid_argument(db):
    """A `last_update_time` after the stored version's is INVALID_ARGUMENT (python-firestore's system
    test, run against production, expects it an hour ahead); an earlier, stale one FAILED_PRECONDITION;
    on a missing document any time is FAILED_PRECONDITION."""
    ref = coll(db).document("d")
    first = ref.set({"v": 1}).update_time
    second = ref.set({"v": 2}).update_time
    ahead = timestamp_pb2.Timestamp(seconds=int(second.timestamp()) + 3600)
    for call in (lambda o: ref.delete(option=o), lambda o: ref.update({"v": 3}, option=o)):
        assert error(lambda: call(db.write_option(last_update_time=ahead)))[0] == "InvalidArgument"
        assert error(lambda: call(db.write_option(last_update_time=first)))[0] == "FailedPrecondition"
    assert ref.get().to_dict() == {"v": 2}
    ref.delete(option=db.write_option(last_update_time=second))
    assert not ref.get().exists
    # A missing document's stored version is 0, which no base version matches (the emulator's answer
    # for every write kind; production's is undocumented).
    for call in (lambda o: ref.delete(option=o), lambda o: ref.update({"v": 3}, option=o)):
        for t in (first, second, ahead):
            assert error(lambda: call(db.write_option(last_update_time=t)))[0] == "FailedPrecondition"
    assert not ref.get().exists


def test_create_of_an_existing_document_is_already_exists(db, target):
    ref = coll(db).document("x")
    ref.create({"v": 1})
    kind, message = error(lambda: ref.create({"v": 2}))
    assert kind == "AlreadyExists"
    if target == "hearth":  # the emulator leaks its storage text (deviation class internal-message)
        assert message == f"Document already exists: {doc_path(db, ref)}"
    assert ref.get().to_dict() == {"v": 1}


def test_reserved_and_oversized_document_ids_are_invalid(db):
    c = coll(db)
    assert error(lambda: c.document("__reserved__").set({"v": 1}))[0] == "InvalidArgument"
    assert error(lambda: c.document("x" * 1501).set({"v": 1}))[0] == "InvalidArgument"
    c.document("x" * 1500).set({"v": 1})  # 1,500 bytes is the limit, not over it
    assert c.document("x" * 1500).get().exists


def test_reserved_and_oversized_field_names_are_invalid(db):
    c = coll(db)
    assert error(lambda: c.document("a").set({"__name__": 1}))[0] == "InvalidArgument"
    assert error(lambda: c.document("a").set({"x" * 1501: 1}))[0] == "InvalidArgument"
    assert not c.document("a").get().exists
    c.document("b").set({"m": {}})
    assert error(lambda: c.document("b").update({"m.__x__": 1}))[0] == "InvalidArgument"
    assert c.document("b").get().to_dict() == {"m": {}}


def test_a_document_over_one_mebibyte_is_invalid_and_changes_nothing(db):
    ref = coll(db).document("big")
    ref.set({"v": 1})
    kind, _ = error(lambda: ref.set({"blob": b"x" * (1024 * 1024)}))
    assert kind == "InvalidArgument"
    assert ref.get().to_dict() == {"v": 1}


def test_invalid_queries_are_invalid_argument(db):
    c = coll(db)
    c.document("a").set({"a": 1, "b": 2})
    w = lambda f, op, v: c.where(filter=FieldFilter(f, op, v))  # noqa: E731
    assert error(lambda: list(w("a", "in", list(range(31))).stream()))[0] == "InvalidArgument"
    assert ids(w("a", "in", list(range(30)))) == ["a"]  # thirty disjuncts are allowed
    assert error(lambda: list(w("a", "not-in", [1]).where(filter=FieldFilter("b", "!=", 3)).stream()))[0] == "InvalidArgument"
    assert error(lambda: list(w("a", "not-in", [1]).where(filter=FieldFilter("b", "not-in", [3])).stream()))[0] == "InvalidArgument"
    assert error(lambda: list(w("a", "!=", 1).where(filter=FieldFilter("b", "!=", 3)).stream()))[0] == "InvalidArgument"
    assert error(lambda: list(w("a", "not-in", list(range(11))).stream()))[0] == "InvalidArgument"
    assert error(lambda: list(w("a", "array_contains_any", list(range(31))).stream()))[0] == "InvalidArgument"
    assert error(lambda: list(w("a", "in", []).stream()))[0] == "InvalidArgument"


def test_inequalities_on_two_fields_and_an_order_not_on_the_inequality(db):
    # Multiple inequality fields are allowed (since 2024); the implicit order is by the inequality
    # fields in lexicographic order of their paths, then __name__.
    c = coll(db)
    for id_, a, b in [("p", 1, 5), ("q", 2, 4), ("r", 3, 3), ("s", 4, 2)]:
        c.document(id_).set({"a": a, "b": b})
    both = c.where(filter=FieldFilter("a", ">", 1)).where(filter=FieldFilter("b", ">", 2))
    assert ids(both) == ["q", "r"]
    assert ids(c.where(filter=FieldFilter("b", ">", 2)).where(filter=FieldFilter("a", ">", 1))) == ["q", "r"]
    # An explicit order on another field comes first; the inequality field follows it implicitly.
    assert ids(c.where(filter=FieldFilter("a", ">", 1)).order_by("b")) == ["s", "r", "q"]


def test_cursor_values_past_the_orderings_are_invalid(db):
    c = coll(db)
    c.document("a").set({"n": 1})
    q = c.order_by("n")
    # The SDK refuses this before sending; a raw query with more cursor values than orderings is the
    # server's INVALID_ARGUMENT.
    with pytest.raises(ValueError):
        list(q.start_at({"m": 1}).stream())
    from google.cloud.firestore_v1.types import query as query_pb, document as doc_pb
    raw = q._to_protobuf()
    raw.order_by.pop()  # keep only `n`
    raw.start_at = query_pb.Cursor(values=[doc_pb.Value(integer_value=1), doc_pb.Value(integer_value=2),
                                           doc_pb.Value(integer_value=3)])
    parent = c._parent_info()[0]
    assert error(lambda: list(db._firestore_api.run_query(request={"parent": parent, "structured_query": raw},
                                                           metadata=db._rpc_metadata)))[0] == "InvalidArgument"


# ---- transforms and deletes on missing and mistyped fields ------------------------------------------

def test_transforms_on_missing_and_non_numeric_fields(db):
    ref = coll(db).document("t")
    ref.set({"s": "text", "arr": "not an array", "m": {"n": "x"}, "i": 1, "d": 0.5, "big": 2 ** 63 - 1})
    ref.update({
        "s": firestore.Increment(3),          # a non-number becomes the operand
        "nope": firestore.Increment(1.5),     # a missing field becomes the operand
        "arr": firestore.ArrayUnion([1, 1, 2]),  # a non-array becomes the union with [] (no duplicates)
        "gone": firestore.ArrayRemove([1]),   # a missing field becomes []
        "m.n": firestore.Increment(2),
        "m.new.deep": firestore.ArrayUnion(["a"]),
        "i": firestore.Increment(0.5),        # int + double is a double
        "d": firestore.Increment(1),
        "big": firestore.Increment(1),        # int64 addition saturates
    })
    got = ref.get().to_dict()
    assert got == {"s": 3, "nope": 1.5, "arr": [1, 2], "gone": [], "m": {"n": 2, "new": {"deep": ["a"]}},
                   "i": 1.5, "d": 1.5, "big": 2 ** 63 - 1}
    assert isinstance(got["i"], float) and isinstance(got["s"], int)
    ref.update({"big": firestore.Increment(-(2 ** 63) + 1), "i": firestore.Maximum(1), "s": firestore.Minimum(2.5)})
    got = ref.get().to_dict()
    assert got["big"] == 0 and got["i"] == 1.5 and got["s"] == 2.5


def test_array_remove_and_union_compare_values_by_type(db):
    ref = coll(db).document("t")
    ref.set({"arr": [1, 1.0, "1", None, {"a": 1}, 2, 2]})
    ref.update({"arr": firestore.ArrayRemove([1.0, {"a": 1}])})  # 1 == 1.0 in Firestore: both go
    assert ref.get().get("arr") == ["1", None, 2, 2]
    ref.update({"arr": firestore.ArrayUnion([2, "1", 3, math.nan, math.nan])})
    got = ref.get().get("arr")
    assert got[:5] == ["1", None, 2, 2, 3] and len(got) == 6 and math.isnan(got[5])


def test_delete_field_in_update_set_merge_and_nested_paths(db):
    ref = coll(db).document("d")
    ref.set({"a": 1, "m": {"x": 1, "y": {"z": 2}}, "dotted.key": 3})
    ref.update({"m.y.z": firestore.DELETE_FIELD, "missing.deep": firestore.DELETE_FIELD})
    assert ref.get().to_dict() == {"a": 1, "m": {"x": 1, "y": {}}, "dotted.key": 3}
    ref.set({"m": {"x": firestore.DELETE_FIELD}, "b": 2}, merge=True)
    assert ref.get().to_dict() == {"a": 1, "m": {"y": {}}, "dotted.key": 3, "b": 2}
    ref.update({firestore.Client.field_path("dotted.key"): firestore.DELETE_FIELD})
    assert ref.get().to_dict() == {"a": 1, "m": {"y": {}}, "b": 2}
    with pytest.raises(ValueError):  # the SDK refuses DELETE_FIELD in a plain set
        ref.set({"a": firestore.DELETE_FIELD})


def test_backquoted_field_names_and_dotted_paths(db):
    c = coll(db)
    ref = c.document("q")
    ref.set({"a.b": 1, "a": {"b": 2}, "sp ace": 3, "`tick`": 4, "ünï": 5, "0lead": 6})
    assert ref.get(["`a.b`"]).to_dict() == {"a.b": 1}
    assert ref.get(["a.b"]).to_dict() == {"a": {"b": 2}}
    ref.update({"`a.b`": 10, "a.c": 20, "`sp ace`": 30})
    got = ref.get().to_dict()
    assert got == {"a.b": 10, "a": {"b": 2, "c": 20}, "sp ace": 30, "`tick`": 4, "ünï": 5, "0lead": 6}
    assert ids(c.where(filter=FieldFilter("`a.b`", "==", 10))) == ["q"]
    assert ids(c.where(filter=FieldFilter("a.b", "==", 2))) == ["q"]
    assert ids(c.where(filter=FieldFilter("`0lead`", "==", 6))) == ["q"]
    assert [s.to_dict() for s in c.select(["`sp ace`", "a.c"]).stream()] == [{"sp ace": 30, "a": {"c": 20}}]


def test_update_replaces_a_map_but_merge_does_not(db):
    ref = coll(db).document("m")
    ref.set({"m": {"a": 1, "b": 2}})
    ref.update({"m": {"c": 3}})
    assert ref.get().to_dict() == {"m": {"c": 3}}
    ref.set({"m": {"d": 4}}, merge=True)
    assert ref.get().to_dict() == {"m": {"c": 3, "d": 4}}
    ref.set({"m": {"e": 5}, "x": 1}, merge=["m.e"])
    assert ref.get().to_dict() == {"m": {"c": 3, "d": 4, "e": 5}}
    ref.update({"m.c.deep": 1})  # a scalar on the path is replaced by a map
    assert ref.get().to_dict() == {"m": {"c": {"deep": 1}, "d": 4, "e": 5}}


# ---- queries ------------------------------------------------------------------------------------

@pytest.fixture
def nums(db):
    c = coll(db)
    rows = {"i1": 1, "i2": 2, "d": 2.5, "nan": math.nan, "s": "7", "n": None, "t": True, "neg": -3,
            "inf": math.inf, "ninf": -math.inf, "big": 2 ** 62}
    batch = db.batch()
    for id_, v in rows.items():
        batch.set(c.document(id_), {"v": v, "k": 1})
    batch.set(c.document("nov"), {"k": 1})
    batch.commit()
    return c


def test_order_of_mixed_types(nums):
    # null < booleans < numbers (NaN first, ints and doubles together) < strings; missing fields never.
    assert ids(nums.order_by("v")) == ["n", "t", "nan", "ninf", "neg", "i1", "i2", "d", "big", "inf", "s"]
    assert ids(nums.order_by("v", direction=firestore.Query.DESCENDING).limit(3)) == ["s", "inf", "big"]
    assert ids(nums.where(filter=FieldFilter("v", ">", 1))) == ["i2", "d", "big", "inf"]
    assert ids(nums.where(filter=FieldFilter("v", "==", math.nan))) == ["nan"]


def test_not_equal_and_not_in_skip_null_nan_and_missing(nums):
    assert ids(nums.where(filter=FieldFilter("v", "!=", 1))) == ["t", "nan", "ninf", "neg", "i2", "d", "big", "inf", "s"]
    assert ids(nums.where(filter=FieldFilter("v", "not-in", [1, 2]))) == ["t", "nan", "ninf", "neg", "d", "big", "inf", "s"]
    assert ids(nums.where(filter=FieldFilter("v", "!=", None))) == ["t", "nan", "ninf", "neg", "i1", "i2", "d", "big", "inf", "s"]
    assert ids(nums.where(filter=FieldFilter("v", "in", [1.0, "7", None]))) == ["i1", "s"]  # in never matches null


def raw_aggregate(db, agg_query):
    from google.cloud.firestore_v1 import _helpers
    request = agg_query._prep_stream()[0]
    [result] = [r.result for r in db._firestore_api.run_aggregation_query(request=request, metadata=db._rpc_metadata)
                if r.result]
    return {k: _helpers.decode_value(v, db) for k, v in result.aggregate_fields.items()}


def test_sum_and_avg_over_mixed_types_and_nan(nums, db):
    def agg(query, build):
        # The answer's values as sent: the SDK's AggregationResult reads a null (an empty average) as 0.0.
        a = aggregation.AggregationQuery(query)
        build(a)
        return raw_aggregate(db, a)
    ints = nums.where(filter=FieldFilter("v", "in", [1, 2, "7", None, True]))
    got = agg(ints, lambda a: a.sum("v", alias="s").avg("v", alias="a").count(alias="c"))
    assert got == {"s": 3, "a": 1.5, "c": 4}  # non-numbers are ignored by sum and avg, counted by count
    assert isinstance(got["s"], int)
    finite = nums.where(filter=FieldFilter("v", "in", [1, 2.5]))
    assert agg(finite, lambda a: a.sum("v", alias="s")) == {"s": 3.5}
    got = agg(nums.limit(100), lambda a: a.sum("v", alias="s").avg("v", alias="a"))
    assert math.isnan(got["s"]) and math.isnan(got["a"])
    inf = nums.where(filter=FieldFilter("v", "in", [math.inf, -math.inf]))
    got = agg(inf, lambda a: a.sum("v", alias="s"))
    assert math.isnan(got["s"])
    only_inf = nums.where(filter=FieldFilter("v", "==", math.inf))
    assert agg(only_inf, lambda a: a.sum("v", alias="s").avg("v", alias="a")) == {"s": math.inf, "a": math.inf}
    none = nums.where(filter=FieldFilter("v", "==", "7"))
    got = agg(none, lambda a: a.sum("v", alias="s").avg("v", alias="a"))
    assert got == {"s": 0, "a": None} and isinstance(got["s"], int)
    overflow = nums.where(filter=FieldFilter("v", "in", [2 ** 62, 1, 2]))
    big = agg(overflow, lambda a: a.sum("v", alias="s"))
    assert big["s"] == 2 ** 62 + 3


def test_sum_overflowing_int64_becomes_a_double(db):
    c = coll(db)
    c.document("a").set({"v": 2 ** 63 - 1})
    c.document("b").set({"v": 2 ** 63 - 1})
    a = aggregation.AggregationQuery(c.limit(10))
    a.sum("v", alias="s")
    got = raw_aggregate(db, a)["s"]
    assert isinstance(got, float) and got == pytest.approx(2.0 ** 64)


def test_count_with_limit_and_offset(nums):
    assert nums.count().get()[0][0].value == 12
    assert nums.limit(5).count().get()[0][0].value == 5
    assert nums.offset(10).count().get()[0][0].value == 2
    assert nums.order_by("v").limit(100).count().get()[0][0].value == 11  # nov has no v
    assert nums.where(filter=FieldFilter("k", "==", 2)).count().get()[0][0].value == 0


def test_sum_and_avg_with_a_limit_take_the_smallest_values(db):
    # A sum or average acts as an inequality on its field: the field joins the implicit order, so
    # limit(n) aggregates the n smallest values, not the first n documents by name (python-firestore's
    # own system tests, test_sum_query_get_with_limit, expect this of Cloud Firestore).
    c = coll(db)
    batch = db.batch()
    for id_, v in {"a": 9, "b": 1, "c": 8, "d": 2, "e": 7, "f": 3.5}.items():
        batch.set(c.document(id_), {"v": v})
    batch.set(c.document("g"), {"w": 0})  # no v: not aggregated, and not counted beside a sum
    batch.commit()
    assert c.limit(3).sum("v", alias="s").get()[0][0].value == 6.5
    assert c.limit(2).avg("v", alias="a").get()[0][0].value == 1.5
    assert c.offset(4).sum("v", alias="s").get()[0][0].value == 17
    assert c.order_by("v", direction=firestore.Query.DESCENDING).limit(2).sum("v", alias="s").get()[0][0].value == 17
    a = aggregation.AggregationQuery(c.limit(3))
    a.sum("v", alias="s").count(alias="n")
    assert raw_aggregate(db, a) == {"s": 6.5, "n": 3}
    assert c.limit(3).count().get()[0][0].value == 3  # a count alone keeps the order by name
    assert c.sum("v", alias="s").get()[0][0].value == 30.5


def test_select_empty_and_limit_to_last(nums, db):
    got = list(nums.select([]).order_by("__name__").limit(2).stream())
    assert [(s.id, s.to_dict()) for s in got] == [("big", {}), ("d", {})]
    assert [s.id for s in nums.order_by("v").limit_to_last(3).get()] == ["big", "inf", "s"]
    assert [s.get("v") for s in nums.where(filter=FieldFilter("v", "in", [1, 2])).order_by("v").limit_to_last(1).get()] == [2]


def test_start_at_a_snapshot_missing_the_ordered_field(nums):
    snap = nums.document("nov").get()
    with pytest.raises(ValueError):
        list(nums.order_by("v").start_at(snap).stream())
    # Ordered by __name__ only, the snapshot is a cursor on its name.
    assert ids(nums.order_by("__name__").start_after(snap)) == ["s", "t"]


def test_collection_group_bounded_by_name(db):
    root = coll(db)
    group = "g" + uuid.uuid4().hex[:8]
    for path in ["a/x", "b/y", "b/z", "c/w"]:
        parent, id_ = path.split("/")
        root.document(parent).collection(group).document(id_).set({"n": 1})
    db.collection(group).document("top").set({"n": 1})
    q = db.collection_group(group).order_by("__name__")
    b = root.document("b")
    under_b = q.start_at([b]).end_at([root.document("b\uf8ff")])
    assert [s.reference.path for s in under_b.stream()] == [f"{root.id}/b/{group}/y", f"{root.id}/b/{group}/z"]
    assert [s.reference.path for s in q.stream()][0] == f"{group}/top"  # names compare segment by segment
    by_filter = db.collection_group(group).where(filter=FieldFilter("__name__", ">=", root.document("b"))) \
        .where(filter=FieldFilter("__name__", "<", root.document("c")))
    assert [s.id for s in by_filter.stream()] == ["y", "z"]
    # A collection-group bound must be a document path, not a bare id.
    kind, _ = error(lambda: list(db.collection_group(group).where(filter=FieldFilter("__name__", "==", "y")).stream()))
    assert kind == "InvalidArgument"


def test_name_filters_on_a_collection(db):
    c = coll(db)
    for i in "abcd":
        c.document(i).set({"i": i})
    assert ids(c.where(filter=FieldFilter("__name__", ">", c.document("b")))) == ["c", "d"]
    assert ids(c.where(filter=FieldFilter("__name__", "in", [c.document("a"), c.document("d")]))) == ["a", "d"]
    assert ids(c.where(filter=FieldFilter("__name__", "not-in", [c.document("a")]))) == ["b", "c", "d"]
    other = coll(db).document("a")
    assert ids(c.where(filter=FieldFilter("__name__", "==", other))) == []


def test_or_of_ands_and_in_combined_with_array_contains_any(db):
    c = coll(db)
    c.document("a").set({"x": 1, "tags": ["p"]})
    c.document("b").set({"x": 2, "tags": ["q"]})
    c.document("c").set({"x": 3, "tags": ["p", "q"]})
    q = c.where(filter=Or([FieldFilter("x", "==", 1), FieldFilter("tags", "array_contains", "q")]))
    assert ids(q) == ["a", "b", "c"]
    q2 = c.where(filter=FieldFilter("x", "in", [1, 3])).where(filter=FieldFilter("tags", "array_contains_any", ["q"]))
    assert ids(q2) == ["c"]
    kind, _ = error(lambda: list(c.where(filter=FieldFilter("tags", "array_contains", "p"))
                                 .where(filter=FieldFilter("tags", "array_contains", "q")).stream()))
    assert kind == "InvalidArgument"


def test_unicode_strings_order_by_utf8_bytes(db):
    c = coll(db)
    # UTF-16 would put U+1F600 (a surrogate pair) before U+FFFD; UTF-8 bytes put it after.
    values = {"a": "a", "B": "B", "e-acute": "é", "replacement": "\ufffd", "emoji": "😀", "cjk": "中", "empty": "", "nul": "a\x00"}
    for id_, v in values.items():
        c.document(id_).set({"s": v})
    assert ids(c.order_by("s")) == ["empty", "B", "a", "nul", "e-acute", "cjk", "replacement", "emoji"]
    assert ids(c.where(filter=FieldFilter("s", ">=", "\ufffd"))) == ["replacement", "emoji"]


def test_document_ids_order_by_utf8_bytes(db):
    c = coll(db)
    for id_ in ["😀", "\ufffd", "z", "Z", "é", "1", "10", "9"]:
        c.document(id_).set({"v": 1})
    assert ids(c) == ["1", "10", "9", "Z", "z", "é", "\ufffd", "😀"]
    assert [d.id for d in c.list_documents()] == ["1", "10", "9", "Z", "z", "é", "\ufffd", "😀"]


# ---- deletes, BulkWriter, listings ---------------------------------------------------------------

def test_recursive_delete_and_list_documents_show_missing(db):
    c = coll(db)
    c.document("a").set({"v": 1})
    c.document("a").collection("sub").document("s1").set({"v": 2})
    c.document("a").collection("sub").document("s1").collection("deeper").document("d").set({"v": 3})
    c.document("ghost").collection("sub").document("s2").set({"v": 4})
    assert sorted(d.id for d in c.list_documents()) == ["a", "ghost"]
    assert not c.document("ghost").get().exists
    assert db.recursive_delete(c.document("a")) == 3
    assert [d.id for d in c.list_documents()] == ["ghost"]
    assert not c.document("a").collection("sub").document("s1").get().exists
    assert db.recursive_delete(c) == 1
    assert list(c.list_documents()) == []
    assert list(c.stream()) == []


def test_numeric_ids_sort_first_so_recursive_queries_and_deletes_reach_every_id(db, target):
    """Numeric ids (`__id<N>__`) sort before every string id, by N. The client bounds `recursive()`
    and `recursive_delete` by `coll/__id-9223372036854775808__` .. `coll\\0/__id-9223372036854775808__`,
    which holds ids before `_` (capitals, digits) only in that order."""
    c = coll(db)
    for id_ in ["A", "0", "Zed", "__id7__", "__id-2__", "a", "__id12__"]:
        c.document(id_).set({"v": 1})
    c.document("A").collection("sub").document("__id3__").set({"v": 2})
    c.document("A").collection("sub").document("B").set({"v": 2})
    c.document("__id7__").collection("sub").document("x").set({"v": 3})
    c.document("0").collection("deep").document("Q").collection("sub").document("9").set({"v": 4})
    neighbour = db.collection(c.id + "0")  # right after the bound's `coll\0`
    neighbour.document("keep").set({"v": 5})
    before = db.collection(c.id[:-1]).document("keep")  # a prefix of the name: before the range
    before.set({"v": 6})

    order = ["__id-2__", "__id7__", "__id12__", "0", "A", "Zed", "a"]
    assert ids(c) == order
    if target == "hearth":  # the emulator refuses it: "Firestore does not support descending key scans"
        assert ids(c.order_by("__name__", direction=firestore.Query.DESCENDING)) == order[::-1]
    assert [d.id for d in c.list_documents(page_size=2)] == order
    assert ids(c.where(filter=FieldFilter("__name__", "<", c.document("0")))) == ["__id-2__", "__id7__", "__id12__"]
    assert ids(c.where(filter=FieldFilter("__name__", ">", c.document("__id7__")))) == order[2:]
    assert ids(c.order_by("__name__").start_after(c.document("__id12__").get())) == order[3:]
    assert ids(c.where(filter=FieldFilter("__name__", "in", [c.document("a"), c.document("__id12__"), c.document("0")]))) == ["__id12__", "0", "a"]
    assert [s.reference.path.split("/", 1)[1] for s in db.collection_group("sub").where(
        filter=FieldFilter("__name__", ">=", c.document("__id-9223372036854775808__"))).where(
        filter=FieldFilter("__name__", "<", db.document(c.id + "\0/__id-9223372036854775808__"))).stream()] == [
        "__id7__/sub/x", "0/deep/Q/sub/9", "A/sub/__id3__", "A/sub/B"]

    refs = db.collection(c.id + "refs")
    for i, to in enumerate(["A", "__id12__", "0", "__id7__", "A/sub/__id3__"]):
        refs.document(f"r{i}").set({"ref": db.document(c.id, *to.split("/"))})
    assert ids(refs.order_by("ref")) == ["r3", "r1", "r2", "r0", "r4"]
    assert ids(refs.where(filter=FieldFilter("ref", "<", c.document("0")))) == ["r3", "r1"]

    everything = [s.reference.path.split("/", 1)[1] for s in c.recursive().stream()]
    assert everything == ["__id-2__", "__id7__", "__id7__/sub/x", "__id12__", "0", "0/deep/Q/sub/9",
                          "A", "A/sub/__id3__", "A/sub/B", "Zed", "a"]
    assert db.recursive_delete(c.document("A")) == 3
    assert db.recursive_delete(c) == 8
    assert list(c.recursive().stream()) == []
    assert neighbour.document("keep").get().exists and before.get().exists


def test_bulk_writer_reports_each_write(db):
    c = coll(db)
    c.document("exists").set({"v": 0})
    bw = db.bulk_writer()
    failures = []
    bw.on_write_error(lambda err, writer: failures.append((err.operation.reference.id, err.code)) and False)
    for i in range(25):
        bw.create(c.document(f"d{i:02d}"), {"i": i})
    bw.create(c.document("exists"), {"v": 1})
    bw.update(c.document("missing"), {"v": 1})
    bw.close()
    # A second write to one document goes in a later batch, and batches run in parallel, so a
    # delete of d00 in the same writer may reach the server before its create; and this client
    # sends nothing enqueued after a flush(). So the delete goes through a writer of its own.
    bw = db.bulk_writer()
    bw.delete(c.document("d00"))
    bw.close()
    assert sorted(failures) == [("exists", 6), ("missing", 5)]
    assert len(list(c.stream())) == 25  # 24 created + exists
    assert c.document("exists").get().to_dict() == {"v": 0}


def test_list_collections_and_pages(db):
    c = coll(db)
    d = c.document("p")
    for name in ["b", "a", "c"]:
        d.collection(name).document("x").set({})
    assert [x.id for x in d.collections()] == ["a", "b", "c"]
    assert [x.id for x in d.collections(page_size=2)] == ["a", "b", "c"]
    assert list(c.document("nothing").collections()) == []


# ---- transactions and read times -----------------------------------------------------------------

def test_transaction_read_after_write_is_refused_by_the_sdk(db):
    ref = coll(db).document("t")
    ref.set({"v": 1})

    @firestore.transactional
    def bad(txn):
        txn.update(ref, {"v": 2})
        ref.get(transaction=txn)

    from google.cloud.firestore_v1._helpers import ReadAfterWriteError
    with pytest.raises(ReadAfterWriteError):
        bad(db.transaction())
    assert ref.get().to_dict() == {"v": 1}


def test_transaction_creates_and_reads_missing_documents(db):
    c = coll(db)

    @firestore.transactional
    def make(txn):
        snap = c.document("a").get(transaction=txn)
        got = list(c.where(filter=FieldFilter("v", ">", 0)).stream(transaction=txn))
        txn.create(c.document("a"), {"v": 1 if not snap.exists else 99})
        return len(got)

    assert make(db.transaction()) == 0
    assert c.document("a").get().to_dict() == {"v": 1}

    @firestore.transactional
    def again(txn):
        txn.create(c.document("a"), {"v": 2})

    assert error(lambda: again(db.transaction()))[0] == "AlreadyExists"


def test_reads_at_a_read_time(db):
    ref = coll(db).document("r")
    first = ref.set({"v": 1}).update_time
    second = ref.set({"v": 2}).update_time
    assert ref.get(read_time=first).to_dict() == {"v": 1}
    assert ref.get(read_time=second).to_dict() == {"v": 2}
    before = first - datetime.timedelta(microseconds=1)
    assert not ref.get(read_time=before).exists
    q = ref.parent.where(filter=FieldFilter("v", ">=", 0))
    assert [s.to_dict() for s in q.get(read_time=first)] == [{"v": 1}]
    assert q.count().get(read_time=before)[0][0].value == 0
    ref.delete()
    assert [d.id for d in ref.parent.list_documents()] == []
    assert [s.get("v") for s in db.get_all([ref], read_time=second)] == [2]
    future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    assert error(lambda: ref.get(read_time=future))[0] == "InvalidArgument"


# ---- values at their edges -----------------------------------------------------------------------

def test_timestamps_keep_nanoseconds_bytes_geopoints_references_and_extreme_numbers(db):
    c = coll(db)
    ref = c.document("v")
    nanos = DatetimeWithNanoseconds.from_timestamp_pb(timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=123_456_789))
    oldest = datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc)
    newest = datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc)
    value = {
        "nanos": nanos, "oldest": oldest, "newest": newest, "bytes": bytes(range(256)), "emptyBytes": b"",
        "geo": firestore.GeoPoint(-90, 180), "geo2": firestore.GeoPoint(0.000001, -179.999999),
        "ref": db.document("other/doc"), "deepRef": c.document("a").collection("b").document("c"),
        "max": 1.7976931348623157e308, "min": 5e-324, "negzero": -0.0, "i64": -(2 ** 63),
    }
    ref.set(value)
    got = ref.get().to_dict()
    # Stored to the microsecond, the rest rounded down (Firestore's data types).
    assert got["nanos"].microsecond == 123_456 and got["nanos"].nanosecond == 0
    assert got["newest"] == newest
    assert got["oldest"] == oldest
    assert got["bytes"] == bytes(range(256)) and got["emptyBytes"] == b""
    assert got["geo"] == firestore.GeoPoint(-90, 180) and got["geo2"] == firestore.GeoPoint(0.000001, -179.999999)
    assert got["ref"].path == "other/doc" and got["deepRef"].path == f"{c.id}/a/b/c"
    assert got["max"] == 1.7976931348623157e308 and got["min"] == 5e-324
    assert got["negzero"] == 0 and math.copysign(1, got["negzero"]) == -1
    assert got["i64"] == -(2 ** 63)
    # Equality on these values finds the document; nanoseconds count.
    assert ids(c.where(filter=FieldFilter("nanos", "==", got["nanos"]))) == ["v"]
    just_before = DatetimeWithNanoseconds.from_timestamp_pb(timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=123_455_999))
    assert ids(c.where(filter=FieldFilter("nanos", ">", just_before))) == ["v"]
    assert ids(c.where(filter=FieldFilter("geo", "==", firestore.GeoPoint(-90, 180)))) == ["v"]
    assert ids(c.where(filter=FieldFilter("ref", "==", db.document("other/doc")))) == ["v"]
    assert ids(c.where(filter=FieldFilter("negzero", "==", 0))) == ["v"]
    assert ids(c.where(filter=FieldFilter("bytes", ">", b"\x00"))) == ["v"]


def test_values_out_of_range_are_invalid(db):
    ref = coll(db).document("v")
    assert error(lambda: ref.set({"g": firestore.GeoPoint(91, 0)}))[0] == "InvalidArgument"
    assert error(lambda: ref.set({"g": firestore.GeoPoint(0, 181)}))[0] == "InvalidArgument"
    seconds, nanos = "Timestamp seconds exceeds limit for field.", "Timestamp nanos exceeds limit for field."
    cases = [
        # Outside the range google.protobuf.Timestamp defines: what the SDK sends for the year 9999's
        # last DatetimeWithNanoseconds (it rounds the seconds up).
        (types.Value(timestamp_value=timestamp_pb2.Timestamp(seconds=253402300800)), ("InvalidArgument", seconds)),
        (types.Value(timestamp_value=timestamp_pb2.Timestamp(seconds=-62135596801)), ("InvalidArgument", seconds)),
        (types.Value(timestamp_value=timestamp_pb2.Timestamp(seconds=0, nanos=1_000_000_000)), ("InvalidArgument", nanos)),
        (types.Value(timestamp_value=timestamp_pb2.Timestamp(seconds=0, nanos=-1)), ("InvalidArgument", nanos)),
        (types.Value(reference_value=f"projects/{db.project}/databases/(default)/documents/c"),
         ("InvalidArgument", f'Resource name "projects/{db.project}/databases/(default)/documents/c" lacks "/" at index 52.')),
        (types.Value(geo_point_value={"latitude": math.nan, "longitude": 0}),
         ("InvalidArgument", "Geo point latitude 'NaN' outside permitted range -90.0 to 90.0.")),
        (types.Value(geo_point_value={"latitude": 0, "longitude": -math.inf}),
         ("InvalidArgument", "Geo point longitude '-Infinity' outside permitted range -180.0 to 180.0.")),
        # A reference to another database or project is stored as it is.
        (types.Value(reference_value=f"projects/{db.project}/databases/other/documents/c/d"), ("written", None)),
        (types.Value(reference_value="projects/other/databases/(default)/documents/c/d"), ("written", None)),
    ]
    assert [raw_write_error(db, ref, value) for value, _ in cases] == [want for _, want in cases]
    ref.delete()
    assert not ref.get().exists


def raw_write_error(db, ref, value):
    """The error of a commit setting field `v` of `ref` to the protobuf `value`, which the SDK would not build."""
    request = {"database": db._database_string, "writes": [types.Write(update=types.Document(
        name=ref._document_path, fields={"v": value}))]}
    try:
        db._firestore_api.commit(request=request, metadata=db._rpc_metadata)
    except exceptions.GoogleAPICallError as e:
        return type(e).__name__, e.message
    return "written", None


def test_geopoints_order_by_latitude_then_longitude_and_types_order(db):
    c = coll(db)
    rows = {"g1": firestore.GeoPoint(1, 5), "g0": firestore.GeoPoint(0, 10), "g2": firestore.GeoPoint(1, -5),
            "ts": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc), "b": b"a", "r": db.document("a/b"),
            "arr": [1], "map": {"a": 1}, "s": "s"}
    for id_, v in rows.items():
        c.document(id_).set({"v": v})
    # numbers < timestamps < strings < bytes < references < geopoints < arrays < maps
    assert ids(c.order_by("v")) == ["ts", "s", "b", "r", "g0", "g2", "g1", "arr", "map"]


# ---- raw requests the SDK would not build, as other clients send them ---------------------------

PATH_REGEX = "Unquoted property paths must match regex ([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match " \
             "regex (`(?:[^`\\\\]|(?:\\\\.))+`)"


def test_raw_requests_are_refused_in_firestores_words(db, target):
    """Requests other clients (REST, the Go and Node SDKs, hand-built protobuf) can send: the status and
    the message, with the collection's id written C. The emulator leaks its storage text for three of
    them (deviation class internal-message); there only the status is compared."""
    import requests
    c = coll(db)
    api, meta, database = db._firestore_api, db._rpc_metadata, db._database_string
    root = database + "/documents"
    name = lambda p: f"{root}/{p}"  # noqa: E731
    c.document("e").set({"v": 1, "m": {"x": 1}})
    cp = c.id
    iv = lambda n: {"integer_value": n}  # noqa: E731

    def commit(*writes, **kw):
        response = api.commit(request={"database": database, "writes": list(writes), **kw}, metadata=meta)
        return [list(map(_value, r.transform_results)) for r in response.write_results]

    def upd(path, fields, mask=None, **kw):
        w = {"update": {"name": name(path), "fields": fields}, **kw}
        if mask is not None:
            w["update_mask"] = {"field_paths": mask}
        return w

    def query(structured, parent=root):
        return [r.document.name.rsplit("/", 1)[-1] for r in api.run_query(
            request={"parent": parent, "structured_query": {"from_": [{"collection_id": cp}], **structured}},
            metadata=meta) if r.document.name]

    def ff(field, op, value):
        return {"field_filter": {"field": {"field_path": field}, "op": op, "value": value}}

    def rest(method, path):
        r = requests.request(method, f"http://{os.environ['FIRESTORE_EMULATOR_HOST']}/v1/{root}/{path}",
                             json={"fields": {}} if method == "PATCH" else None, headers={"Authorization": "Bearer owner"})
        return r.status_code, r.json()["error"]["message"]

    def begin():
        return api.begin_transaction(request={"database": database}, metadata=meta).transaction

    def rollback(t):
        api.rollback(request={"database": database, "transaction": t}, metadata=meta)

    def batch_write(*writes):
        return [(s.code, s.message.split(":")[0]) for s in
                api.batch_write(request={"database": database, "writes": list(writes)}, metadata=meta).status]

    doc_name = f"projects/{db.project}/databases/(default)/documents"
    at = len(doc_name) + len(cp) + 2  # the byte offset of the segment after the collection's id
    bad = "InvalidArgument"
    cases = [
        ("empty field name", lambda: commit(upd(f"{cp}/a", {"": iv(1)})), (bad, "The property.name is the empty string.")),
        ("mask a..b", lambda: commit(upd(f"{cp}/e", {}, ["a..b"])), (bad, f'Invalid property path "a..b". {PATH_REGEX}')),
        ("mask `a", lambda: commit(upd(f"{cp}/e", {}, ["`a"])), (bad, f'Invalid property path "`a". {PATH_REGEX}')),
        ("mask a.", lambda: commit(upd(f"{cp}/e", {}, ["a."])), (bad, f'Invalid property path "a.". {PATH_REGEX}')),
        ("mask empty", lambda: commit(upd(f"{cp}/e", {}, [""])), (bad, "Invalid empty property path string.")),
        ("mask a and a.b", lambda: commit(upd(f"{cp}/e", {"a": {"map_value": {"fields": {"b": iv(1)}}}}, ["a", "a.b"])), ("ok", [[]])),
        ("mask twice", lambda: commit(upd(f"{cp}/e", {"a": iv(1)}, ["a", "a"])), ("ok", [[]])),
        ("id .", lambda: commit(upd(f"{cp}/.", {})), (bad, f'Document name "{doc_name}/C/." contains a resource id "." at index {at}.')),
        ("id ..", lambda: commit(upd(f"{cp}/..", {})), (bad, f'Document name "{doc_name}/C/.." contains a resource id ".." at index {at}.')),
        ("collection .", lambda: commit(upd(f"{cp}/x/./y", {})), (bad, f'Document name "{doc_name}/C/x/./y" contains a collection id "." at index {at + 2}.')),
        ("reference .", lambda: commit(upd(f"{cp}/r", {"v": {"reference_value": name(f"{cp}/.")}})),
         (bad, f'Resource name "{doc_name}/C/." contains a resource id "." at index {at}.')),
        ("REST get .", lambda: rest("GET", f"{cp}/%2E"), ("ok", (400, f'Document name "{doc_name}/C/." contains a resource id "." at index {at}.'))),
        ("REST patch ..", lambda: rest("PATCH", f"{cp}/%2E%2E"), ("ok", (400, f'Document name "{doc_name}/C/.." contains a resource id ".." at index {at}.'))),
        ("a collection's name", lambda: commit(upd(cp, {})), (bad, f'Document name "{doc_name}/C" lacks "/" at index {at - 1}.')),
        ("empty segment", lambda: commit(upd(f"{cp}//d", {})), (bad, f'Document name "{doc_name}/C//d" lacks a resource id at index {at}.')),
        ("reserved collection", lambda: commit(upd("__x__/d", {})), (bad, 'Collection id "__x__" is invalid because it is reserved.')),
        ("GetDocument of a collection", lambda: api.get_document(request={"name": name(cp)}, metadata=meta),
         (bad, f'Document name "{doc_name}/C" lacks "/" at index {at - 1}.')),
        ("GetDocument missing", lambda: api.get_document(request={"name": name(f"{cp}/nope")}, metadata=meta),
         ("NotFound", f"Document ({doc_name}/C/nope) not found.")),
        ("string over 1 MiB", lambda: commit(upd(f"{cp}/big", {"s": {"string_value": "x" * (1024 * 1024)}})),
         (bad, 'The value of property "s" is longer than 1048487 bytes.')),
        ("document over 1 MiB", lambda: commit(upd(f"{cp}/big2", {f"f{i}": {"string_value": "x" * 1000} for i in range(1100)})),
         (bad, f"Document '{doc_name}/C/big2' cannot be written because its size ({1_106_644 + len(cp):,} bytes) exceeds the maximum allowed size of 1,048,576 bytes.")),
        ("two writes of one document", lambda: commit(upd(f"{cp}/t2", {"v": iv(1)}), upd(f"{cp}/t2", {"v": iv(2)})), ("ok", [[], []])),
        ("one field transformed twice", lambda: commit(upd(f"{cp}/e", {}, [], update_transforms=[
            {"field_path": "v", "increment": iv(1)}, {"field_path": "v", "increment": iv(1)}])), ("ok", [[2, 3]])),
        ("transform after the mask's value", lambda: commit(upd(f"{cp}/e", {"v": iv(5)}, ["v"], update_transforms=[
            {"field_path": "v", "increment": iv(1)}])), ("ok", [[6]])),
        ("transform of a map and its field", lambda: commit(upd(f"{cp}/e", {}, [], update_transforms=[
            {"field_path": "m", "increment": iv(1)}, {"field_path": "m.x", "increment": iv(1)}])),
         (bad, "Cannot transform property m and its nested property at the same time.")),
        ("delete of a missing document that must exist", lambda: commit({"delete": name(f"{cp}/nope"), "current_document": {"exists": True}}),
         ("NotFound", f"No document to update: {doc_name}/C/nope")),
        ("commit of an unknown transaction", lambda: commit(upd(f"{cp}/e", {}), transaction=b"nope"), (bad, "Invalid transaction.")),
        ("rollback of an unknown transaction", lambda: rollback(b"nope"), (bad, "Invalid transaction.")),
        ("rollback twice", lambda: (lambda t: (rollback(t), rollback(t)))(begin()), ("ok", (None, None))),
        ("commit after rollback", lambda: (lambda t: (rollback(t), commit(upd(f"{cp}/e", {}), transaction=t)))(begin()),
         (bad, "Transaction is invalid or closed.")),
        ("BatchWrite of one document twice", lambda: batch_write(upd(f"{cp}/bw", {}), upd(f"{cp}/bw", {})),
         (bad, "the same document cannot be written more than once in a single request")),
        ("BatchWrite with one failure", lambda: batch_write(upd(f"{cp}/bw2", {}), upd(f"{cp}/gone", {}, [], current_document={"exists": True})),
         ("ok", [(0, ""), (5, "No document to update")])),
        ("limit 0 (a present Int32Value)", lambda: query({"limit": 0}), ("ok", [])),
        ("negative offset", lambda: query({"offset": -1}), (bad, "offset is negative")),
        ("negative limit", lambda: query({"limit": -1}), (bad, "limit is negative")),
        ("__name__ == a string", lambda: query({"where": ff("__name__", "EQUAL", {"string_value": "e"})}), (bad, "__key__ filter value must be a Key")),
        ("__name__ cursor an integer", lambda: query({"order_by": [{"field": {"field_path": "__name__"}}], "start_at": {"values": [iv(1)]}}),
         (bad, "Cursor __key__ value is not a document reference.")),
        ("__name__ cursor a bare id", lambda: query({"order_by": [{"field": {"field_path": "__name__"}}], "start_at": {"values": [{"reference_value": "e"}]}}),
         (bad, 'Resource name "e" lacks "projects" at index 0.')),
        ("not-in [null]", lambda: query({"where": ff("v", "NOT_IN", {"array_value": {"values": [{"null_value": 0}]}})}), ("ok", [])),
        # A field filter `!= null` matches nothing (the SDKs send the unary IS_NOT_NULL instead).
        ("!= null", lambda: query({"where": ff("v", "NOT_EQUAL", {"null_value": 0})}), ("ok", [])),
        ("< null", lambda: query({"where": ff("v", "LESS_THAN", {"null_value": 0})}), ("ok", [])),
        ("< NaN", lambda: query({"where": ff("v", "LESS_THAN", {"double_value": math.nan})}), ("ok", [])),
        ("in a scalar", lambda: query({"where": ff("v", "IN", iv(1))}), (bad, "'IN' requires an ArrayValue.")),
        ("array-contains-any []", lambda: query({"where": ff("v", "ARRAY_CONTAINS_ANY", {"array_value": {}})}),
         (bad, "'ARRAY_CONTAINS_ANY' requires an non-empty ArrayValue.")),
        ("an order twice", lambda: query({"order_by": [{"field": {"field_path": "v"}}, {"field": {"field_path": "v"}}]}),
         (bad, "order by clause cannot contain duplicate fields v")),
        ("an order after __name__", lambda: query({"order_by": [{"field": {"field_path": "__name__"}}, {"field": {"field_path": "v"}}]}),
         (bad, "order by clause cannot contain more fields after the key")),
        ("two array-contains-any", lambda: query({"where": {"composite_filter": {"op": "AND", "filters": [
            ff("v", "ARRAY_CONTAINS_ANY", {"array_value": {"values": [iv(1)]}}), ff("w", "ARRAY_CONTAINS_ANY", {"array_value": {"values": [iv(1)]}})]}}}),
         (bad, "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction.")),
        ("in and not-in", lambda: query({"where": {"composite_filter": {"op": "AND", "filters": [
            ff("v", "IN", {"array_value": {"values": [iv(1)]}}), ff("w", "NOT_IN", {"array_value": {"values": [iv(1)]}})]}}}),
         (bad, "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")),
        ("31 disjunctions", lambda: query({"where": {"composite_filter": {"op": "OR", "filters": [ff("v", "EQUAL", iv(i)) for i in range(31)]}}}),
         (bad, "Too many disjunctions after normalization. Result had 31 disjunctions which is more than the maximum of 30")),
        ("in x in", lambda: query({"where": {"composite_filter": {"op": "AND", "filters": [
            ff(f, "IN", {"array_value": {"values": [iv(i) for i in range(6)]}}) for f in "vw"]}}}),
         (bad, "Too many disjunctions after normalization. Result had 36 disjunctions which is more than the maximum of 30")),
        ("a collection id with /", lambda: query({"from_": [{"collection_id": "a/b"}]}), (bad, 'Collection id "a/b" is invalid because it contains "/".')),
        ("a collection as parent", lambda: query({}, parent=name(cp)), (bad, f'Document parent name "{doc_name}/C" lacks "/" at index {at - 1}.')),
        ("collection ids of a missing document", lambda: list(api.list_collection_ids(request={"parent": name(f"{cp}/nope")}, metadata=meta)),
         ("ok", [])),
    ]
    leaked = {"document over 1 MiB", "delete of a missing document that must exist", "BatchWrite with one failure"}
    got, want = [], []
    for label, call, expected in cases:
        try:
            outcome = ("ok", call())
        except exceptions.GoogleAPICallError as e:
            outcome = (type(e).__name__, e.message.replace(cp, "C"))
        if isinstance(outcome[1], tuple) and len(outcome[1]) == 2 and isinstance(outcome[1][1], str):
            outcome = (outcome[0], (outcome[1][0], outcome[1][1].replace(cp, "C")))
        if target == "official" and label in leaked:
            outcome, expected = outcome[0], expected[0]
        got.append((label, outcome))
        want.append((label, expected))
    assert got == want


def _value(v):
    from google.cloud.firestore_v1 import _helpers
    return _helpers.decode_value(v, None)


def test_cursors_across_types_snapshots_and_masks(db):
    c = coll(db)
    rows = {"n": None, "b": False, "i": 1, "d": 1.5, "s": "a", "t": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
            "arr": [1], "map": {"k": 1}}
    for id_, v in rows.items():
        c.document(id_).set({"v": v, "w": len(id_)})
    by_v = c.order_by("v")
    assert ids(by_v.start_after({"v": 1})) == ["d", "t", "s", "arr", "map"]
    assert ids(by_v.start_at({"v": "a"}).end_before({"v": {"k": 1}})) == ["s", "arr"]
    assert ids(by_v.end_at({"v": False})) == ["n", "b"]
    # A snapshot cursor: the SDK sends the snapshot's values of every ordering, then its name.
    assert ids(c.where(filter=FieldFilter("w", ">=", 1)).order_by("w").order_by("v").start_after(c.document("i").get())) == \
        ["d", "t", "s", "arr", "map"]
    assert ids(c.where(filter=FieldFilter("v", ">", 0)).start_after(c.document("i").get())) == ["d"]
    got = {s.id: s.to_dict() for s in db.get_all([c.document("map"), c.document("zz")], field_paths=["v.k", "w"])}
    assert got == {"map": {"v": {"k": 1}, "w": 3}, "zz": None}
    assert c.document("i").get(field_paths=[]).to_dict() == {}


def test_read_only_transaction_at_a_read_time(db):
    ref = coll(db).document("r")
    first = ref.set({"v": 1}).update_time
    ref.set({"v": 2})
    api, meta = db._firestore_api, db._rpc_metadata
    began = api.begin_transaction(request={"database": db._database_string, "options": {"read_only": {"read_time": first}}},
                                  metadata=meta)
    doc = api.get_document(request={"name": ref._document_path, "transaction": began.transaction}, metadata=meta)
    assert _value(doc.fields["v"]) == 1
    latest = api.get_document(request={"name": ref._document_path}, metadata=meta)
    assert _value(latest.fields["v"]) == 2


def test_raw_aggregations_and_null_operands(db):
    """Aggregation requests the Python SDK would not build (aliases, upTo, queries with cursors and
    offsets) and null operands of array operators: the same answers from both servers."""
    from google.cloud.firestore_v1 import _helpers
    c = coll(db)
    c.document("a").set({"n": 1, "m": {"x": 2}, "a.b": 3, "arr": [1, None]})
    c.document("b").set({"n": 2.5, "m": {"x": "s"}})
    api, meta, root = db._firestore_api, db._rpc_metadata, db._database_string + "/documents"
    plain = {"from_": [{"collection_id": c.id}]}

    def agg(aggs, structured=None):
        request = {"parent": root, "structured_aggregation_query": {"structured_query": structured or plain, "aggregations": aggs}}
        try:
            return [{k: _helpers.decode_value(v, db) for k, v in r.result.aggregate_fields.items()}
                    for r in api.run_aggregation_query(request=request, metadata=meta) if r.result]
        except exceptions.GoogleAPICallError as e:
            return type(e).__name__, e.message

    def query(where):
        return [r.document.name.rsplit("/", 1)[-1] for r in api.run_query(
            request={"parent": root, "structured_query": {**plain, "where": where}}, metadata=meta) if r.document.name]

    count, total = {"count": {}}, lambda f: {"sum": {"field": {"field_path": f}}}  # noqa: E731
    ordered = {**plain, "order_by": [{"field": {"field_path": "n"}}]}
    assert agg([{"alias": "x", **count}, {"alias": "x", **count}]) == ("InvalidArgument", "Aggregation aliases contain duplicate alias: x.")
    assert agg([]) == ("InvalidArgument", "Aggregations can not be empty.")
    assert agg([{"alias": "s", **total("__name__")}]) == ("InvalidArgument", "Aggregations are not supported for the property: __key__")
    assert agg([{"alias": "a.b", **count}, {"alias": "a b", **count}]) == [{"a.b": 2, "a b": 2}]
    assert agg([{**count}, {**total("n")}]) == [{"field_1": 2, "field_2": 3.5}]  # unnamed: field_N
    assert agg([{"alias": "s", **total("m.x")}, {"alias": "t", **total("`a.b`")}]) == [{"s": 2, "t": 3}]
    assert agg([{"alias": "c", "count": {"up_to": 1}}]) == [{"c": 1}]
    assert agg([{"alias": "c", **count}], {**ordered, "start_at": {"values": [{"integer_value": 2}]}}) == [{"c": 1}]
    assert agg([{"alias": "c", **count}], {**ordered, "offset": 1}) == [{"c": 1}]
    assert agg([{"alias": "c", **count}], {**plain, "select": {"fields": [{"field_path": "n"}]}}) == [{"c": 2}]

    def ff(op, value):
        return {"field_filter": {"field": {"field_path": "arr"}, "op": op, "value": value}}
    null = {"null_value": 0}
    assert query(ff("ARRAY_CONTAINS", null)) == []
    assert query(ff("ARRAY_CONTAINS_ANY", {"array_value": {"values": [null]}})) == []
    assert query(ff("IN", {"array_value": {"values": [null]}})) == []
    whole = {"array_value": {"values": [{"integer_value": 1}, null]}}
    assert query(ff("EQUAL", whole)) == ["a"]
    assert query(ff("IN", {"array_value": {"values": [whole]}})) == ["a"]


def test_document_ids_with_special_characters_round_trip_and_page(db):
    c = coll(db)
    odd = ["a b", "100%", "#hash", "q?x=1", "tab\there", "ü", "😀", "back\\slash", "`tick`", "~", "a.b", "..."]
    for id_ in odd:
        c.document(id_).set({"id": id_})
    for id_ in odd:
        assert c.document(id_).get().get("id") == id_
    listed = [d.id for d in c.list_documents(page_size=5)]
    assert listed == sorted(odd, key=lambda s: s.encode())
    assert ids(c.order_by("__name__").start_after({"__name__": c.document("a b")}).limit(3)) == sorted(
        odd, key=lambda s: s.encode())[sorted(odd, key=lambda s: s.encode()).index("a b") + 1:][:3]
    sub = c.document("😀").collection("ünï")
    sub.document("x").set({})
    assert [x.id for x in c.document("😀").collections()] == ["ünï"]
    assert [s.reference.path for s in db.collection_group("ünï").stream() if s.reference.path.startswith(c.id)] == [
        f"{c.id}/😀/ünï/x"]


def test_or_queries_with_orders_cursors_and_aggregations_an_app_sends(db):
    """A probe of what an app's queries combine (docs/firestore.md, *Official clients' own test suites*):
    an OR of an AND and an equality, an OR with an inequality ordered descending, an OR resumed at a
    cursor, an aggregation of an OR, aggregations over a collection group and inside a transaction,
    and get_all with field paths."""
    c = coll(db)
    for k, (a, tag) in enumerate([(1, "x"), (2, "y"), (3, "x"), (4, "z"), (5, "y"), (6, "x")]):
        c.document(f"d{k}").set({"a": a, "tag": tag, "k": k})
    nested = Or([And([FieldFilter("tag", "==", "x"), FieldFilter("a", ">=", 3)]), FieldFilter("a", "==", 5)])
    assert ids(c.where(filter=nested)) == ["d2", "d4", "d5"]
    ends = c.where(filter=Or([FieldFilter("a", "<", 2), FieldFilter("a", ">", 4)])).order_by("a", direction="DESCENDING")
    assert ids(ends) == ["d5", "d4", "d0"]
    xy = c.where(filter=Or([FieldFilter("tag", "==", "x"), FieldFilter("tag", "==", "y")])).order_by("a")
    assert ids(xy.start_after({"a": 2}).limit(2)) == ["d2", "d4"]
    sums = c.where(filter=Or([FieldFilter("tag", "==", "z"), FieldFilter("a", "<", 2)])).count(alias="c").sum("k", alias="s")
    assert sorted((r.alias, r.value) for row in sums.get() for r in row) == [("c", 2), ("s", 3)]
    group = db.collection_group(c.id).count(alias="c").avg("k", alias="m")
    assert sorted((r.alias, r.value) for row in group.get() for r in row) == [("c", 6), ("m", 2.5)]

    @firestore.transactional
    def total(transaction):
        return [r.value for row in c.sum("a").get(transaction=transaction) for r in row]
    assert total(db.transaction()) == [21]
    got = {s.id: (s.exists, s.to_dict()) for s in db.get_all([c.document("d1"), c.document("nope")], field_paths=["a"])}
    assert got == {"d1": (True, {"a": 2}), "nope": (False, None)}
