"""Limits and edge cases a project's tests reach, run with the same assertions against Hearth and the
official Cloud Firestore emulator (docs/benchmarks.md, *Faithfulness after the twenty-ninth session*):
values nested past Firestore's depth sent over gRPC (which ended Hearth's process before: the
request's recursive decode overflowed an HTTP/2 loop thread's stack), the size of a query's operand,
an inequality beside an explicit order on `__name__`, nested field names over 1,500 bytes, the
operators' answers with null, NaN, -0.0, arrays and maps, cursors from snapshots, `limit_to_last`,
`Maximum`/`Minimum`/`Increment` on mixed types, and error messages in the emulator's words."""
import datetime
import math
import uuid

import grpc
import pytest
from google.api_core import exceptions
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter, Or


def coll(db):
    return db.collection("lim" + uuid.uuid4().hex[:10])


def ids(query):
    return [s.id for s in query.stream()]


def error(call):
    with pytest.raises(exceptions.GoogleAPICallError) as info:
        call()
    return type(info.value).__name__, info.value.message


# ---- raw protobuf, so any depth can be sent (the SDKs' own encoders stop at 100 levels) ----------

def _varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def _ld(field, payload):
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _nested_value(levels, arrays=False):
    """A Value of `levels` maps `{"a": …}` (with `arrays`, `{"a": [ … ]}`) around the integer 1."""
    v = _varint(2 << 3) + _varint(1)  # Value.integer_value
    for _ in range(levels):
        inner = _ld(9, _ld(1, v)) if arrays else v  # Value.array_value{values}
        v = _ld(6, _ld(1, _ld(1, b"a") + _ld(2, inner)))  # Value.map_value{fields{key, value}}
    return v


def _call(emulator_host, method, request, stream=False):
    with grpc.insecure_channel(emulator_host) as channel:
        rpc = (channel.unary_stream if stream else channel.unary_unary)(f"/google.firestore.v1.Firestore/{method}")
        try:
            out = rpc(request, timeout=60, metadata=[("authorization", "Bearer owner")])
            return ("OK", len(list(out))) if stream else ("OK", None)
        except grpc.RpcError as e:
            return e.code().name, e.details()


def _commit_nested(db, emulator_host, path, levels, arrays=False):
    name = f"{db._database_string}/documents/{path}".encode()
    document = _ld(1, name) + _ld(2, _ld(1, b"m") + _ld(2, _nested_value(levels, arrays)))
    return _call(emulator_host, "Commit", _ld(1, db._database_string.encode()) + _ld(2, _ld(1, document)))


def _query_nested_ands(db, emulator_host, collection, levels):
    leaf = _ld(2, _ld(1, _ld(2, b"v")) + _varint(2 << 3) + _varint(5) + _ld(3, _varint(2 << 3) + _varint(1)))
    for _ in range(levels):
        leaf = _ld(1, _varint(1 << 3) + _varint(1) + _ld(2, leaf))  # CompositeFilter{op AND, filters}
    query = _ld(2, _ld(2, collection.encode())) + _ld(3, leaf)
    return _call(emulator_host, "RunQuery", _ld(1, f"{db._database_string}/documents".encode()) + _ld(2, query), stream=True)


def test_values_nested_past_the_limit_are_invalid_over_grpc_however_deep(db, emulator_host):
    c = coll(db)
    nested = "Property m contains an invalid nested entity."
    assert _commit_nested(db, emulator_host, f"{c.id}/ok", 20) == ("OK", None)
    assert _commit_nested(db, emulator_host, f"{c.id}/ok2", 10, arrays=True) == ("OK", None)
    for levels in (21, 40, 200):
        assert _commit_nested(db, emulator_host, f"{c.id}/d{levels}", levels) == ("INVALID_ARGUMENT", nested)
    for levels in (11, 100):
        assert _commit_nested(db, emulator_host, f"{c.id}/a{levels}", levels, arrays=True) == ("INVALID_ARGUMENT", nested)
    # The SDK's own write of one level too deep, and the server still answering after all of them.
    v = 1
    for _ in range(21):
        v = {"a": v}
    assert error(lambda: c.document("sdk").set({"m": v})) == ("InvalidArgument", nested)
    assert sorted(d.id for d in c.list_documents()) == ["ok", "ok2"]
    assert c.document("ok").get().get("m")["a"]["a"]["a"] is not None


def test_nested_composite_filters_answer_and_absurd_nesting_is_refused(db, emulator_host, target):
    c = coll(db)
    c.document("x").set({"v": 1})
    assert _query_nested_ands(db, emulator_host, c.id, 47) == ("OK", 1)  # 96 nested messages
    got = _query_nested_ands(db, emulator_host, c.id, 2000)
    if target == "hearth":
        # Protobuf's parsers stop at 100 nested messages by default; so does Hearth's reader.
        assert got[0] == "INVALID_ARGUMENT" and "messages nested more than 100 levels deep" in got[1]
    else:  # the emulator fails with an internal error
        assert got[0] == "UNKNOWN"
    assert ids(c) == ["x"]


# ---- a query operand is one index entry: its storage size is at most 1,500 bytes ----------------

@pytest.mark.parametrize("op,make,fits", [
    ("==", lambda n: "x" * n, 1499),                     # a string is its bytes + 1
    ("==", lambda n: "é" * n, 749),
    ("==", lambda n: b"x" * n, 1500),                    # bytes are their length
    ("==", lambda n: {"k": "x" * n}, 1497),              # a map is its keys (+1) and values
    ("==", lambda n: {"k": "x" * n, "j": "y" * 100}, 1394),
    ("==", lambda n: ["x" * n, "y" * 100], 1398),        # an array is its elements
    ("==", lambda n: list(range(n)), 187),               # an integer is 8
    ("<", lambda n: "x" * n, 1499),
    ("!=", lambda n: "x" * n, 1499),
    ("in", lambda n: ["x" * n], 1499),
    ("not-in", lambda n: [{"k": "x" * n}], 1497),
    ("array_contains", lambda n: "x" * n, 1499),
    ("array_contains_any", lambda n: [{"k": "x" * n}], 1497),
])
def test_a_query_operand_over_an_index_entry_is_invalid(db, op, make, fits):
    c = coll(db)
    assert ids(c.where(filter=FieldFilter("a", op, make(fits)))) == []
    shown = "a[*]" if op.startswith("array") else "a"
    assert error(lambda: ids(c.where(filter=FieldFilter("a", op, make(fits + 1))))) == \
        ("InvalidArgument", f"value for {shown} is too large to be used in a query")


def test_a_document_name_operand_is_bounded_by_the_names_limits(db):
    c = coll(db)
    c.document("x" * 1500).set({"v": 1})
    assert ids(c.where(filter=FieldFilter("__name__", "==", c.document("x" * 1500)))) == ["x" * 1500]


# ---- orders -------------------------------------------------------------------------------------

def test_an_inequality_beside_an_explicit_order_on_the_name_is_invalid(db):
    c = coll(db)
    for i, v in enumerate([3, 1, 2]):
        c.document(f"d{i}").set({"v": v})
    after_key = ("InvalidArgument", "order by clause cannot contain more fields after the key")
    for direction in ("ASCENDING", "DESCENDING"):
        q = c.where(filter=FieldFilter("v", ">", 1)).order_by("__name__", direction=direction)
        assert error(lambda: ids(q)) == after_key
        assert error(lambda: q.count().get()) == after_key
    assert ids(c.where(filter=FieldFilter("v", ">", 1)).order_by("v").order_by("__name__")) == ["d2", "d0"]
    assert ids(c.where(filter=FieldFilter("v", "==", 1)).order_by("__name__")) == ["d1"]
    assert ids(c.where(filter=FieldFilter("__name__", ">", c.document("d0"))).order_by("__name__")) == ["d1", "d2"]


# ---- writes -------------------------------------------------------------------------------------

def test_a_nested_field_name_over_1500_bytes_is_an_invalid_nested_entity(db):
    c = coll(db)
    assert error(lambda: c.document("a").set({"m": {"x" * 1501: 1}})) == \
        ("InvalidArgument", "Property m contains an invalid nested entity.")
    assert error(lambda: c.document("a").set({"x" * 1501: 1})) == \
        ("InvalidArgument", "The property.name is longer than 1500 bytes.")
    c.document("a").set({"m": {"x" * 1400: 1}})
    assert list(c.document("a").get().get("m")) == ["x" * 1400]
    # The whole path is bounded (`m.` + 1,498 bytes is the longest under `m`):
    # test_paths_listen_rpcs_differential.py.


@pytest.mark.parametrize("stored,transform,want", [
    (3, firestore.Maximum(3.0), 3),          # equal operands leave the stored value and its type
    (3.0, firestore.Maximum(3), 3.0),
    (3, firestore.Minimum(3.0), 3),
    (3, firestore.Maximum(3.5), 3.5),
    (3.5, firestore.Minimum(3), 3),
    (0, firestore.Maximum(-0.0), 0),         # zeros are equal: the stored one stays
    (0.0, firestore.Minimum(-0.0), 0.0),
    (1, firestore.Maximum(math.nan), math.nan),
    (math.nan, firestore.Minimum(5), math.nan),
    ("s", firestore.Maximum(1), 1),          # a non-number becomes the operand
    (None, firestore.Maximum(1), 1),
    (1, firestore.Minimum(-math.inf), -math.inf),
    (math.nan, firestore.Increment(1), math.nan),
    (1.7e308, firestore.Increment(1.7e308), math.inf),
    (-(2 ** 63), firestore.Increment(-1), -(2 ** 63)),  # int64 saturates
    (2 ** 53 + 1, firestore.Increment(1.0), 9007199254740992.0),
    (True, firestore.Increment(1), 1),
    ([1], firestore.Increment(1), 1),
    ([{"a": 1, "b": [1, 2]}], firestore.ArrayUnion([{"b": [1, 2], "a": 1}, {"a": 2}]), [{"a": 1, "b": [1, 2]}, {"a": 2}]),
    ([0], firestore.ArrayUnion([-0.0, 0.0]), [0]),
    ([math.nan, 1], firestore.ArrayRemove([math.nan]), [1]),
    ([0, 0.0, 1], firestore.ArrayRemove([-0.0]), [1]),
    ([{"l": [1, 2]}, {"l": [2, 1]}], firestore.ArrayRemove([{"l": [2, 1]}]), [{"l": [1, 2]}]),
    ([None, 1, None], firestore.ArrayRemove([None]), [1]),
    ([3], firestore.ArrayUnion([1, 2, 1, 3, 2]), [3, 1, 2]),
])
def test_transforms_on_mixed_types_as_the_emulator(db, stored, transform, want):
    ref = coll(db).document("t")
    ref.set({"x": stored})
    ref.update({"x": transform})
    got = ref.get().get("x")
    if isinstance(want, float) and math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == want and type(got) is type(want)
        if isinstance(want, float) and want == 0:
            assert math.copysign(1, got) == math.copysign(1, want)


# ---- operators with null, NaN, -0.0, arrays and maps; cursors; limit_to_last ----------------------

@pytest.fixture
def values(db):
    c = coll(db)
    rows = {"i1": 1, "i2": 2, "d": 2.5, "nan": math.nan, "s": "7", "n": None, "t": True, "neg": -3,
            "arr": [1, None], "arrnan": [math.nan, 2], "m": {"a": 1}, "z": 0.0, "nz": -0.0}
    batch = db.batch()
    for k, v in rows.items():
        batch.set(c.document(k), {"v": v, "w": len(k)})
    batch.set(c.document("nov"), {"w": 9})
    batch.commit()
    return c


@pytest.mark.parametrize("op,operand,want", [
    ("in", [math.nan], []),
    ("in", [math.nan, 1], ["i1"]),
    ("in", [None, 1], ["i1"]),
    ("in", [[1, None]], ["arr"]),
    ("in", [1, "7", True, 2.5], ["d", "i1", "s", "t"]),
    ("in", [0], ["nz", "z"]),
    ("not-in", [math.nan], ["t", "nan", "neg", "nz", "z", "i1", "i2", "d", "s", "arrnan", "arr", "m"]),
    ("not-in", [math.nan, 1], ["t", "nan", "neg", "nz", "z", "i2", "d", "s", "arrnan", "arr", "m"]),
    ("not-in", [None, 1], []),
    ("not-in", [-0.0], ["t", "nan", "neg", "i1", "i2", "d", "s", "arrnan", "arr", "m"]),
    ("not-in", [1, "7", True, 2.5], ["nan", "neg", "nz", "z", "i2", "arrnan", "arr", "m"]),
    ("array_contains_any", [math.nan, 2], ["arrnan"]),
    ("array_contains_any", [None, 1], ["arr"]),
    ("array_contains_any", [1, 1, 1.0], ["arr"]),
    ("!=", math.nan, ["t", "neg", "nz", "z", "i1", "i2", "d", "s", "arrnan", "arr", "m"]),
    ("==", -0.0, ["nz", "z"]),
    ("==", [1, None], ["arr"]),
    ("==", {"a": 1}, ["m"]),
    (">", {}, ["m"]),
    ("<", [2], ["arrnan", "arr"]),
])
def test_operators_with_null_nan_zeros_arrays_and_maps(values, op, operand, want):
    q = values.where(filter=FieldFilter("v", op, operand))
    assert ids(q) == want
    assert q.count().get()[0][0].value == len(want)


def test_inequalities_and_orders_combined(values):
    w = lambda op, v: values.where(filter=FieldFilter("v", op, v))  # noqa: E731
    assert ids(w(">", 0).order_by("w")) == ["d", "i1", "i2"]
    assert ids(w(">", 0).order_by("w", direction="DESCENDING")) == ["i2", "i1", "d"]
    assert ids(w(">", 0).where(filter=FieldFilter("w", "<", 4))) == ["i1", "i2", "d"]
    assert ids(w("!=", 1).order_by("w")) == ["t", "z", "d", "s", "m", "nz", "i2", "nan", "neg", "arr", "arrnan"]
    assert ids(w("not-in", [1, 2]).order_by("w", direction="DESCENDING")) == \
        ["arrnan", "arr", "neg", "nan", "nz", "m", "s", "d", "z", "t"]
    assert ids(w(">", 0).where(filter=FieldFilter("v", "!=", 2))) == ["i1", "d"]
    assert ids(w("in", [1, 2, "7"]).order_by("v", direction="DESCENDING")) == ["s", "i2", "i1"]
    assert ids(values.where(filter=Or([FieldFilter("v", ">", 1), FieldFilter("w", "<", 2)])).order_by("w").limit(3)) == ["n", "t", "z"]
    assert ids(values.where(filter=Or([FieldFilter("v", "==", math.nan), FieldFilter("v", "==", None)]))) == ["n", "nan"]
    assert error(lambda: ids(values.where(filter=Or([FieldFilter("v", "not-in", [1]), FieldFilter("w", "==", 1)])))) == \
        ("InvalidArgument", "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'.")


def test_cursors_from_snapshots_and_limit_to_last(values):
    i1, nan, nov = (values.document(k).get() for k in ("i1", "nan", "nov"))
    by_v = values.order_by("v")
    assert ids(by_v.start_at(i1)) == ["i1", "i2", "d", "s", "arrnan", "arr", "m"]
    assert ids(by_v.end_before(i1)) == ["n", "t", "nan", "neg", "nz", "z"]
    assert ids(by_v.end_before(nan)) == ["n", "t"]
    assert ids(values.order_by("v", direction="DESCENDING").start_after(i1)) == ["z", "nz", "neg", "nan", "t", "n"]
    assert ids(values.start_after(i1)) == ["i2", "m", "n", "nan", "neg", "nov", "nz", "s", "t", "z"]
    assert ids(values.start_at(nov)) == ["nov", "nz", "s", "t", "z"]
    assert ids(values.where(filter=FieldFilter("v", ">", 0)).order_by("v", direction="DESCENDING").end_before(i1)) == ["d", "i2"]
    assert ids(values.order_by("w", direction="DESCENDING").start_after(i1)) == ["z", "t", "s", "n", "m", "d"]
    assert ids(values.order_by("w").order_by("v").start_at({"w": 2})) == ["nz", "i1", "i2", "nan", "neg", "arr", "arrnan"]
    assert ids(by_v.start_at({"v": 5}).end_before({"v": 1})) == []  # crossed bounds: nothing
    assert ids(by_v.start_after({"v": math.nan})) == ["neg", "nz", "z", "i1", "i2", "d", "s", "arrnan", "arr", "m"]
    # limit_to_last: python-firestore reverses the orders and swaps the cursors itself (a start
    # cursor becomes an end cursor of the reversed query), so these are its answers on both servers.
    assert [s.id for s in by_v.start_after(i1).limit_to_last(2).get()] == ["nz", "z"]
    assert [s.id for s in by_v.end_before(i1).limit_to_last(2).get()] == ["t", "n"]
    assert [s.id for s in by_v.end_at(i1).limit_to_last(3).get()] == ["arrnan", "arr", "m"]
    assert [s.id for s in values.order_by("w").order_by("v").limit_to_last(4).get()] == ["nan", "neg", "arr", "arrnan"]
    assert [s.id for s in values.limit_to_last(2).get()] == ["arrnan", "arr"]
    assert by_v.limit_to_last(3).count().get()[0][0].value == 3
    assert by_v.start_after(i1).count().get()[0][0].value == 6


# ---- error messages in the emulator's words -----------------------------------------------------

def test_error_messages_as_the_emulator_words_them(db):
    c = coll(db)
    api, meta = db._firestore_api, db._rpc_metadata
    parent = db._database_string + "/documents"

    def query(structured):
        return list(api.run_query(request={"parent": parent, "structured_query": {"from_": [{"collection_id": c.id}], **structured}},
                                  metadata=meta))
    assert error(lambda: query({"where": {"composite_filter": {"op": "OPERATOR_UNSPECIFIED", "filters": [
        {"field_filter": {"field": {"field_path": "v"}, "op": "EQUAL", "value": {"integer_value": 1}}}]}}})) == \
        ("InvalidArgument", "Unsupported CompositeFilter operator.")
    assert error(lambda: query({"where": {}})) == ("InvalidArgument", "Unknown Filter type.")
    assert error(lambda: query({"order_by": [{"direction": "ASCENDING"}]})) == ("InvalidArgument", "Invalid empty property path string.")
    future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    cannot = ("InvalidArgument", "The requested 'read_time' cannot be in the future.")
    assert error(lambda: c.document("a").get(read_time=future)) == cannot
    assert error(lambda: api.begin_transaction(request={"database": db._database_string, "options": {"read_only": {"read_time": future}}},
                                               metadata=meta)) == cannot
    ref = c.document("s")
    assert error(lambda: api.commit(request={"database": db._database_string, "writes": [{"transform": {
        "document": ref._document_path, "field_transforms": [{"field_path": "x", "set_to_server_value": "SERVER_VALUE_UNSPECIFIED"}]}}]},
        metadata=meta)) == ("InvalidArgument", "ServerValue type must be specified for set_to_server_value transformation.")
    c.document("p").collection("sub").document("x").set({})
    assert error(lambda: list(api.list_collection_ids(request={"parent": c.document("p")._document_path, "page_token": "zzz"},
                                                      metadata=meta))) == ("InvalidArgument", "invalid page token")
