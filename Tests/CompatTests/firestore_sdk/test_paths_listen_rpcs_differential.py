"""Field paths, Listen requests and the less-used RPCs, each case with the same client calls against
Hearth and the official Cloud Firestore emulator (docs/benchmarks.md, *Faithfulness after the
twenty-ninth session, round five (faith30)*).

- A nested field's name is bounded by its whole path (`m.` and the name, unquoted, at most 1,500
  bytes; a map inside an array counts as under the array's field), through REST `PATCH`, a REST
  commit and the Python client's gRPC `set` (three decoders).
- A backslash in a quoted field path reads Firestore's escapes (`\\b`, `\\x41`, `\\101`, `\\u00e9`, a
  surrogate pair …; `\\q`, `\\0`, `\\.` refused), through a transform, an update mask and a filter.
- Listen: removing a target the stream does not hold leaves the stream and its targets alone; a
  document named twice in a documents target is one document; `select` in a listener is refused
  with production's words (the emulator applies it); a negative target id is a refused target (the
  emulator fails the stream).
- listCollectionIds paging and its negative page size, a cursor key in another database, BatchWrite's
  per-write statuses with failures in the middle, BulkWriter, recursive_delete, COUNT with `up_to`,
  find_nearest and named databases: identical answers (or each server's documented one).
"""
import json
import os
import queue
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import grpc
import pytest
from google.api_core import exceptions
from google.cloud import firestore
from google.cloud.firestore_v1 import types
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
from google.cloud.firestore_v1.vector import Vector

from test_raw_grpc import Listen, commit, database

NESTED = "Property {} contains an invalid nested entity."
SQ = types.StructuredQuery


def rest(host, method, path, body=None, root=None):
    """(status, JSON) of a REST call with the emulator's owner credentials; `path` under the
    database's documents, or under `root` when given."""
    root = root or f"/v1/projects/{os.environ['HEARTH_PROJECT']}/databases/(default)/documents"
    url = f"http://{host}{root}{path}"
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer owner"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def message(answer):
    status, body = answer
    return "OK" if status == 200 else body["error"]["message"]


def coll_id(prefix):
    return prefix + uuid.uuid4().hex[:10]


def name(collection, doc):
    return f"{database()}/documents/{collection}/{doc}"


# ---- a nested name's limit is its path's -----------------------------------------------------------

def _fields(top, names, inner):
    """`{top: {names[0]: {names[1]: … {inner: "v"}}}}` as REST fields; `top` None: `{inner: "v"}`."""
    v = {"stringValue": "v"}
    fields = {inner: v}
    for n in reversed(names):
        fields = {n: {"mapValue": {"fields": fields}}}
    return {top: {"mapValue": {"fields": fields}}} if top else fields


# (top-level name, map names between, longest inner name accepted)
PATH_CASES = [("m", [], 1498), ("y" * 10, [], 1489), ("m", ["a"], 1496), ("-", [], 1498), ("m", ["b" * 20, "c"], 1475)]


@pytest.mark.parametrize("top,between,longest", PATH_CASES)
def test_a_nested_name_is_bounded_by_its_whole_path(emulator_host, top, between, longest):
    c = coll_id("fp")
    for via in ("patch", "commit"):
        def write(inner):
            fields = _fields(top, between, inner)
            if via == "patch":
                return message(rest(emulator_host, "PATCH", f"/{c}/{via}", {"fields": fields}))
            return message(rest(emulator_host, "POST", ":commit",
                                {"writes": [{"update": {"name": name(c, via), "fields": fields}}]}))
        assert write("x" * longest) == "OK", via
        assert write("x" * (longest + 1)) == NESTED.format(top), via
        assert write("-" * longest) == "OK", via  # the path's bytes, not its quoted form's


def test_a_nested_name_over_its_path_limit_through_the_client_and_in_an_array(db, emulator_host):
    c = db.collection(coll_id("fp"))
    c.document("ok").set({"m": {"x" * 1498: 1}, "arr": [{"x" * 1496: 1}]})
    assert c.document("ok").get().to_dict() == {"m": {"x" * 1498: 1}, "arr": [{"x" * 1496: 1}]}
    for fields, top in [({"m": {"x" * 1499: 1}}, "m"), ({"m": {"a": {"x" * 1497: 1}}}, "m"),
                        ({"arr": [{"x" * 1497: 1}]}, "arr"), ({"m": [{"x" * 1499: 1}]}, "m")]:
        with pytest.raises(exceptions.InvalidArgument) as info:
            c.document("bad").set(fields)
        assert info.value.message == NESTED.format(top)
    # REST: a map in an array under `m` is under `m`'s path too.
    arr = {"m": {"arrayValue": {"values": [{"mapValue": {"fields": {"x" * 1499: {"nullValue": None}}}}]}}}
    assert message(rest(emulator_host, "PATCH", f"/{c.id}/arr", {"fields": arr})) == NESTED.format("m")
    # The top level keeps its own words and bound.
    assert message(rest(emulator_host, "PATCH", f"/{c.id}/top", {"fields": {"-" * 1500: {"nullValue": None}}})) == "OK"
    assert message(rest(emulator_host, "PATCH", f"/{c.id}/top", {"fields": {"-" * 1501: {"nullValue": None}}})) == \
        "The property.name is longer than 1500 bytes."


# ---- escapes in quoted field paths -----------------------------------------------------------------

ESCAPES = {  # the escape after `a`, before `b`, and the field name it writes (None: refused)
    r"\b": "a\bb", r"\n": "a\nb", r"\t": "a\tb", r"\r": "a\rb", r"\f": "a\fb", r"\v": "a\vb", r"\a": "a\ab",
    r"\\": "a\\b", "\\`": "a`b", r"\"": 'a"b', r"\'": "a'b", r"\?": "a?b",
    r"\101": "aAb", r"\000": "a\0b", r"\012": "a\nb", r"\377": "a\u00ffb", r"\1234": "aS4b",
    r"\x41": "aAb", r"\X41": "aAb", r"\x4A": "aJb", r"\xff": "a\u00ffb", r"\x4142": "aA42b", r"\x4": "aK",
    r"\u00e9": "a\u00e9b", r"\u0041": "aAb", r"\U00000041": "aAb", r"\U0010FFFF": "a\U0010ffffb",
    r"\uD83D\uDE00": "a\U0001F600b", r"\uD800": "a?b", r"\uDE00": "a?b", r"\uD83Dx": "a?xb",
    r"\q": None, r"\0": None, r"\00": None, r"\08": None, r"\7": None, r"\400": None, r"\x": None,
    r"\.": None, r"\ ": None, r"\e": None, r"\U00110000": None, "\\\u0301": None,
}


def _escape_id(e):
    return e.encode("unicode_escape").decode()


@pytest.mark.parametrize("escape", list(ESCAPES), ids=_escape_id)
def test_escapes_in_a_quoted_field_path(emulator_host, escape):
    c = coll_id("esc")
    path = "`a" + escape + "b`"
    want = ESCAPES[escape]
    transform = rest(emulator_host, "POST", ":commit", {"writes": [{"transform": {
        "document": name(c, "t"), "fieldTransforms": [{"fieldPath": path, "increment": {"integerValue": "1"}}]}}]})
    mask = rest(emulator_host, "PATCH", f"/{c}/m?updateMask.fieldPaths=" + urllib.parse.quote(path), {"fields": {}})
    query = rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {"from": [{"collectionId": c}], "where": {
        "fieldFilter": {"field": {"fieldPath": path}, "op": "EQUAL", "value": {"integerValue": "1"}}}}})
    if want is None:
        refused = (f"Invalid property path \"{path}\". Unquoted property paths must match regex "
                   "([a-zA-Z_][a-zA-Z_0-9]*), and quoted property paths must match regex (`(?:[^`\\\\]|(?:\\\\.))+`)")
        assert [message(transform), message(mask), message(query)] == [refused] * 3
        return
    assert [message(transform), message(mask), message(query)] == ["OK"] * 3
    status, doc = rest(emulator_host, "GET", f"/{c}/t")
    assert status == 200 and list(doc["fields"]) == [want]
    # The filter finds the document by the field the path names.
    _, found = rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {"from": [{"collectionId": c}], "where": {
        "fieldFilter": {"field": {"fieldPath": path}, "op": "EQUAL", "value": {"integerValue": "1"}}}}})
    assert [r["document"]["name"].rsplit("/", 1)[1] for r in found if "document" in r] == ["t"]


# ---- Listen -----------------------------------------------------------------------------------------

def _put(c, doc, n):
    return types.Write(update=types.Document(name=name(c, doc), fields={"n": types.Value(integer_value=n)}))


def _query(c, **kw):
    return types.Target.QueryTarget(parent=f"{database()}/documents",
                                    structured_query=SQ(from_=[SQ.CollectionSelector(collection_id=c)], **kw))


def _describe(r):
    kind = r._pb.WhichOneof("response_type")
    if kind == "target_change":
        tc = r.target_change
        out = [types.TargetChange.TargetChangeType(tc.target_change_type).name, list(tc.target_ids)]
        if tc.cause.code:
            out.append([tc.cause.code, tc.cause.message])
        return out
    if kind == "document_change":
        d = r.document_change.document
        return ["CHANGE", d.name.rsplit("/", 1)[1], sorted(d.fields), list(r.document_change.target_ids)]
    return [kind]


def _read(stream, until, timeout=30):
    """Responses up to the first one `until` accepts (then 0.3 s more); `["ENDED", code]` if the stream ends."""
    out, deadline, done = [], time.time() + timeout, None
    while time.time() < (done or deadline):
        try:
            r = stream.responses.get(timeout=max(0.01, (done or deadline) - time.time()))
        except queue.Empty:
            continue
        if r is None:
            out.append(["ENDED", stream.error.code().name if stream.error else "OK"])
            break
        out.append(_describe(r))
        if done is None and until(out[-1]):
            done = time.time() + 0.3
    return out


def _snapshot(d):
    return d == ["NO_CHANGE", []]


@pytest.fixture
def channel(emulator_host):
    ch = grpc.insecure_channel(emulator_host)
    yield ch
    ch.close()


def test_listen_removing_a_target_the_stream_does_not_hold_changes_nothing(channel):
    c = coll_id("lu")
    commit(channel, [_put(c, "a", 1)])
    s = Listen(channel)
    s.add(types.Target(target_id=1, query=_query(c)))
    assert _read(s, _snapshot) == [["ADD", [1]], ["CHANGE", "a", ["n"], [1]], ["CURRENT", [1]], ["NO_CHANGE", []]]
    s.remove(99)  # never added
    s.remove(1)
    s.remove(1)  # removed already: a client may remove a target the server has just removed
    assert _read(s, lambda d: d[0] == "REMOVE") == [["REMOVE", [1]]]
    s.add(types.Target(target_id=2, query=_query(c)))
    assert _read(s, _snapshot) == [["ADD", [2]], ["CHANGE", "a", ["n"], [2]], ["CURRENT", [2]], ["NO_CHANGE", []]]
    commit(channel, [_put(c, "b", 2)])
    got = _read(s, _snapshot)  # the emulator resends the whole result (RESET first), Hearth the change
    assert ["CHANGE", "b", ["n"], [2]] in got and got[-1] == ["NO_CHANGE", []]
    s.close()


def test_listen_a_document_named_twice_is_one_document(channel):
    c = coll_id("ld")
    commit(channel, [_put(c, "a", 1)])
    s = Listen(channel)
    s.add(types.Target(target_id=1, documents=types.Target.DocumentsTarget(documents=[name(c, "a"), name(c, "a")])))
    assert _read(s, _snapshot) == [["ADD", [1]], ["CHANGE", "a", ["n"], [1]], ["CURRENT", [1]], ["NO_CHANGE", []]]
    commit(channel, [_put(c, "a", 2)])
    assert _read(s, _snapshot) == [["CHANGE", "a", ["n"], [1]], ["NO_CHANGE", []]]
    s.close()


def test_listen_select_and_a_negative_target_id(channel, target):
    c = coll_id("ls")
    commit(channel, [types.Write(update=types.Document(name=name(c, "a"), fields={
        "n": types.Value(integer_value=1), "s": types.Value(string_value="x")}))])
    s = Listen(channel)
    s.add(types.Target(target_id=1, query=_query(c, select=SQ.Projection(fields=[SQ.FieldReference(field_path="n")]))))
    got = _read(s, lambda d: _snapshot(d) or d[0] == "REMOVE")
    if target == "hearth":
        # Production's cause, as nodejs-firestore issue 1090 quotes it ("Error 3: 'select' clauses are
        # not supported for real-time queries."); the official emulator applies the projection.
        assert got == [["ADD", [1]], ["REMOVE", [1], [3, "'select' clauses are not supported for real-time queries."]]]
    else:
        assert got == [["ADD", [1]], ["CHANGE", "a", ["n"], [1]], ["CURRENT", [1]], ["NO_CHANGE", []]]
    s.close()
    s = Listen(channel)
    s.add(types.Target(target_id=-3, query=_query(c)))
    got = _read(s, lambda d: d[0] in ("REMOVE", "ENDED"))
    if target == "hearth":
        # "Must be a positive number and non-zero": a refused target, as Hearth answers every bad one.
        assert got == [["ADD", [-3]], ["REMOVE", [-3], [3, "Target ID -3 is invalid: a target ID must be positive, "
                                                           "or 0 for the server to assign one."]]]
    else:
        assert got == [["ENDED", "UNKNOWN"]]  # its internal failure, no message
    s.close()


# ---- listCollectionIds, cursors, BatchWrite, BulkWriter, recursive_delete ----------------------------

def test_list_collection_ids_pages_and_a_negative_page_size(db, emulator_host, target):
    c = db.collection(coll_id("lc"))
    parent = c.document("p")
    for sub in "cabed":
        parent.collection(sub).document("x").set({})
    pages, token = [], None
    for _ in range(5):
        body = {"pageSize": 2, **({"pageToken": token} if token else {})}
        status, r = rest(emulator_host, "POST", f"/{c.id}/p:listCollectionIds", body)
        assert status == 200
        pages.append(r.get("collectionIds", []))
        token = r.get("nextPageToken")
        if not token:
            break
    assert pages == [["a", "b"], ["c", "d"], ["e"]]
    assert sorted(x.id for x in parent.collections(page_size=2)) == list("abcde")
    assert message(rest(emulator_host, "POST", f"/{c.id}/p:listCollectionIds", {"pageSize": -1})) == \
        "page_size must be greater than or equal to zero."
    assert message(rest(emulator_host, "POST", f"/{c.id}/p:listCollectionIds", {"pageToken": "garbage"})) == "invalid page token"
    _, full = rest(emulator_host, "POST", f"/{c.id}/p:listCollectionIds", {"pageSize": 5})
    # A page as long as what is left has a token for an empty page, as the emulator answers (faith31).
    assert full["collectionIds"] == list("abcde") and full.get("nextPageToken")
    _, after = rest(emulator_host, "POST", f"/{c.id}/p:listCollectionIds", {"pageSize": 5, "pageToken": full["nextPageToken"]})
    assert after == {}


def test_a_cursor_key_in_another_database(emulator_host):
    for other in ["projects/other/databases/(default)/documents/c/x",
                  f"projects/{os.environ['HEARTH_PROJECT']}/databases/second/documents/c/x"]:
        assert message(rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {
            "from": [{"collectionId": "c"}], "orderBy": [{"field": {"fieldPath": "__name__"}}],
            "startAt": {"values": [{"referenceValue": other}]}}})) == "The cursor key is in a different database than the query"


def test_batch_write_statuses_bulk_writer_and_recursive_delete(db, channel):
    c = db.collection(coll_id("bw"))
    for i in range(3):
        c.document(f"d{i}").set({"n": i})
    rpc = channel.unary_unary("/google.firestore.v1.Firestore/BatchWrite", request_serializer=types.BatchWriteRequest.serialize,
                              response_deserializer=types.BatchWriteResponse.deserialize)
    md = [("authorization", "Bearer owner"), ("google-cloud-resource-prefix", database())]
    r = rpc(types.BatchWriteRequest(database=database(), writes=[
        types.Write(update=types.Document(name=name(c.id, "n1"), fields={})),
        types.Write(update=types.Document(name=name(c.id, "d0"), fields={}), current_document=types.Precondition(exists=False)),
        types.Write(update=types.Document(name=name(c.id, "gone"), fields={}), current_document=types.Precondition(exists=True)),
        types.Write(delete=name(c.id, "d1")),
        types.Write(update=types.Document(name=name(c.id, "d2"), fields={}), current_document=types.Precondition(update_time={"seconds": 1})),
        types.Write(update=types.Document(name=name(c.id, "n2"), fields={})),
    ]), metadata=md)
    # Codes per write (the messages are each server's own: the emulator's name its internal entities).
    assert [s.code for s in r.status] == [0, 6, 5, 0, 9, 0]
    assert [bool(w.update_time) for w in r.write_results] == [True, False, False, False, False, True]
    with pytest.raises(grpc.RpcError) as info:
        rpc(types.BatchWriteRequest(database=database(), writes=[
            types.Write(update=types.Document(name=name(c.id, "x"), fields={})),
            types.Write(update=types.Document(name=name(c.id, "x"), fields={}))]), metadata=md)
    assert (info.value.code(), info.value.details()) == \
        (grpc.StatusCode.INVALID_ARGUMENT, "the same document cannot be written more than once in a single request")

    results = []
    bulk = db.bulk_writer()
    bulk.on_write_error(lambda err, _: (results.append(("error", err.code)), False)[1])
    bulk.on_write_result(lambda ref, _result, _: results.append(("ok", ref.id)))
    bulk.create(c.document("n1"), {"n": 1})
    bulk.update(c.document("nope"), {"n": 1})
    bulk.set(c.document("b1"), {"n": 1})
    bulk.delete(c.document("d0"))
    bulk.close()
    assert sorted(results) == [("error", 5), ("error", 6), ("ok", "b1"), ("ok", "d0")]

    for i in range(3):
        c.document(f"r{i}").collection("sub").document("s").collection("deep").document("z").set({})
    c.document("ghost").collection("sub").document("only").set({})
    existing = len(list(c.stream()))
    assert db.recursive_delete(c) == existing + 3 + 1  # the documents that exist, at any depth
    assert list(c.list_documents()) == [] and list(db.collection_group("deep").where(
        filter=FieldFilter("__name__", ">=", c.document("r"))).where(filter=FieldFilter("__name__", "<", c.document("s"))).stream()) == []


def test_count_up_to_aliases_find_nearest_and_a_named_database(db, emulator_host, channel, target):
    c = db.collection(coll_id("ag"))
    for i, v in enumerate([[1, 0], [0, 1], [1, 1], [2, 2]]):
        c.document(f"v{i}").set({"e": Vector(v), "k": i % 2})
    rpc = channel.unary_stream("/google.firestore.v1.Firestore/RunAggregationQuery",
                               request_serializer=types.RunAggregationQueryRequest.serialize,
                               response_deserializer=types.RunAggregationQueryResponse.deserialize)

    def count(*aggregations):
        q = types.StructuredAggregationQuery(structured_query=SQ(from_=[SQ.CollectionSelector(collection_id=c.id)]),
                                             aggregations=list(aggregations))
        try:
            rs = list(rpc(types.RunAggregationQueryRequest(parent=f"{database()}/documents", structured_aggregation_query=q),
                          metadata=[("authorization", "Bearer owner"), ("google-cloud-resource-prefix", database())]))
        except grpc.RpcError as e:
            return e.code().name, e.details()
        return [{k: v.integer_value for k, v in r.result.aggregate_fields.items()} for r in rs if r.result]

    A = types.StructuredAggregationQuery.Aggregation
    assert count(A(count=A.Count(up_to=2), alias="c")) == [{"c": 2}]
    assert count(A(count=A.Count(up_to=1000), alias="c")) == [{"c": 4}]
    assert count(A(count={}, alias="a.b")) == [{"a.b": 4}]
    assert count(A(count={}, alias="")) == [{"field_1": 4}]
    assert count(A(count={}, alias="c"), A(count={}, alias="c")) == \
        ("INVALID_ARGUMENT", "Aggregation aliases contain duplicate alias: c.")
    assert count(A(count=A.Count(up_to=-1), alias="c"))[0] == "INVALID_ARGUMENT"

    nearest = lambda **kw: [d.id for d in c.find_nearest("e", Vector([1, 0]), **kw).get()]  # noqa: E731
    assert nearest(distance_measure=DistanceMeasure.EUCLIDEAN, limit=3) == ["v0", "v2", "v1"]
    assert nearest(distance_measure=DistanceMeasure.EUCLIDEAN, limit=4, distance_threshold=1.0) == ["v0", "v2"]
    assert nearest(distance_measure=DistanceMeasure.DOT_PRODUCT, limit=4, distance_threshold=1.0) == ["v3", "v0", "v2"]
    assert nearest(distance_measure=DistanceMeasure.EUCLIDEAN, limit=4) == ["v0", "v2", "v1", "v3"]
    assert [d.id for d in c.where(filter=FieldFilter("k", "==", 0)).find_nearest(
        "e", Vector([1, 0]), distance_measure=DistanceMeasure.EUCLIDEAN, limit=4).get()] == ["v0", "v2"]
    assert [d.id for d in c.find_nearest("e", Vector([1, 0, 0]), distance_measure=DistanceMeasure.EUCLIDEAN, limit=4).get()] == []

    from google.auth.credentials import AnonymousCredentials
    second = firestore.Client(project=os.environ["HEARTH_PROJECT"], database="second", credentials=AnonymousCredentials())
    try:
        second.collection(c.id).document("a").set({"n": 1})
        assert second.collection(c.id).document("a").get().to_dict() == {"n": 1}
        assert not c.document("a").get().exists
        assert [d.id for d in second.collection(c.id).stream()] == ["a"]
    finally:
        second.close()
