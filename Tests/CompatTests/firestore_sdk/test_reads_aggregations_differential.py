"""Listings, aggregations, name filters, read masks and read times, each case with the same calls
against Hearth and the official Cloud Firestore emulator (docs/benchmarks.md, *Faithfulness after
the thirtieth session, round six (faith31)*).

- A page as long as what is left has a next page token, and the page after it is empty
  (`documents.list` over REST and gRPC, in name and field order).
- `sum`/`avg`: integers exactly whatever their running total does (MAX + MAX + MIN + MIN is −2, an
  integer), doubles with compensated summation (0.1 + 0.2 + 0.3 is 0.6, 1e16 + 1 + 1 is 1e16 + 2),
  the two added at the end; over REST and through the client's gRPC aggregation queries.
- An aggregation alias is a property name: `__.*__` and over 1,500 bytes refused.
- `__name__ in` naming a document twice matches it once; a `__name__` operand in another database
  or project is refused in the emulator's words.
- A lone `__name__` in a read or update mask selects (writes) no field.
- A read time at or before the epoch is "Only timestamps past epoch are supported."
- Each server's own answer, asserted apart: `__name__` descending (the emulator refuses descending
  key scans; Firestore serves them) and `count` with `up_to: 0`.
"""
import json
import os
import urllib.error
import urllib.parse
import urllib.request

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.firestore_v1 import types
from google.cloud.firestore_v1.field_path import FieldPath
from google.cloud.firestore_v1.base_query import FieldFilter

from test_paths_listen_rpcs_differential import coll_id, message, rest
from test_raw_grpc import database

MAX, MIN = 2**63 - 1, -(2**63)


def value(x):
    if isinstance(x, bool) or x is None:
        raise TypeError(x)
    if isinstance(x, int):
        return {"integerValue": str(x)}
    return {"doubleValue": x if x == x and abs(x) != float("inf") else str(x).replace("inf", "Infinity").replace("nan", "NaN")}


def commit(host, docs):
    writes = [{"update": {"name": f"{database()}/documents/{path}", "fields": fields}} for path, fields in docs]
    status, body = rest(host, "POST", ":commit", {"writes": writes})
    assert status == 200, body


def aggregate(host, collection, aggregations, **query):
    return rest(host, "POST", ":runAggregationQuery", {"structuredAggregationQuery": {
        "structuredQuery": {"from": [{"collectionId": collection}], **query}, "aggregations": aggregations}})


def fields_of(answer):
    status, body = answer
    assert status == 200, body
    return body[0]["result"]["aggregateFields"]


@pytest.fixture
def channel(emulator_host):
    ch = grpc.insecure_channel(emulator_host)
    yield ch
    ch.close()


# ---- a full last page has a token for an empty page -------------------------------------------------

def _pages(host, collection, size, extra=""):
    pages, token = [], None
    for _ in range(6):
        q = f"?pageSize={size}{extra}" + (f"&pageToken={urllib.parse.quote(token)}" if token else "")
        status, body = rest(host, "GET", f"/{collection}{q}")
        assert status == 200, body
        pages.append([d["name"].rsplit("/", 1)[1] for d in body.get("documents", [])])
        token = body.get("nextPageToken")
        if not token:
            return pages
    raise AssertionError(pages)


def test_a_full_last_page_has_a_token_for_an_empty_page(emulator_host, channel, target):
    c = coll_id("lp")
    commit(emulator_host, [(f"{c}/d{k}", {"n": value(k)}) for k in range(4)])
    assert _pages(emulator_host, c, 2) == [["d0", "d1"], ["d2", "d3"], []]
    assert _pages(emulator_host, c, 4) == [["d0", "d1", "d2", "d3"], []]
    assert _pages(emulator_host, c, 3) == [["d0", "d1", "d2"], ["d3"]]
    assert _pages(emulator_host, c, 5) == [["d0", "d1", "d2", "d3"]]
    if target == "official":  # the emulator fails every ordered page after the first
        status, first = rest(emulator_host, "GET", f"/{c}?pageSize=2&orderBy=n")
        assert status == 200 and first["nextPageToken"]
        assert rest(emulator_host, "GET", f"/{c}?pageSize=2&orderBy=n&pageToken={urllib.parse.quote(first['nextPageToken'])}") == \
            (500, {"error": {"code": 500, "status": "UNKNOWN"}})
    else:
        assert _pages(emulator_host, c, 2, "&orderBy=n") == [["d0", "d1"], ["d2", "d3"], []]
        assert _pages(emulator_host, c, 2, "&orderBy=n%20desc") == [["d3", "d2"], ["d1", "d0"], []]
    # gRPC ListDocuments: the same tokens.
    rpc = channel.unary_unary("/google.firestore.v1.Firestore/ListDocuments", request_serializer=types.ListDocumentsRequest.serialize,
                              response_deserializer=types.ListDocumentsResponse.deserialize)
    md = [("authorization", "Bearer owner")]
    first = rpc(types.ListDocumentsRequest(parent=f"{database()}/documents", collection_id=c, page_size=4), metadata=md)
    assert [d.name.rsplit("/", 1)[1] for d in first.documents] == ["d0", "d1", "d2", "d3"] and first.next_page_token
    last = rpc(types.ListDocumentsRequest(parent=f"{database()}/documents", collection_id=c, page_size=4,
                                          page_token=first.next_page_token), metadata=md)
    assert list(last.documents) == [] and not last.next_page_token


# ---- sum and avg ----------------------------------------------------------------------------------

# values in document order → (sum, avg) as both servers answer them
SUMS = [
    ([MAX, MAX, MIN, MIN], ({"integerValue": "-2"}, -0.5)),
    ([MAX, 1, -1], ({"integerValue": str(MAX)}, 3.0744573456182584e18)),
    ([MAX, MAX, MAX, -MAX, -MAX], ({"integerValue": str(MAX)}, 1.8446744073709553e18)),
    ([2**62, 2**62, 2**62], ({"doubleValue": 1.3835058055282164e19}, 4.611686018427388e18)),
    ([MAX, MAX, MIN, MIN, MIN], ({"doubleValue": -9.223372036854776e18}, -1.8446744073709553e18)),
    ([MAX, MAX, MIN, MIN, 0.5], ({"doubleValue": -1.5}, -0.3)),
    ([0.1, 0.2, 0.3], ({"doubleValue": 0.6}, 0.19999999999999998)),
    ([1e16, 1.0, 1.0], ({"doubleValue": 1.0000000000000002e16}, 3333333333333334.0)),
    ([1e16, 1, 1], ({"doubleValue": 1.0000000000000002e16}, 3333333333333334.0)),
    ([2**53 + 1, 0.5, 1], ({"doubleValue": 9007199254740994.0}, 3002399751580331.5)),
    ([1.7e308, 1.7e308], ({"doubleValue": "Infinity"}, "Infinity")),
    ([float("inf"), float("-inf")], ({"doubleValue": "NaN"}, "NaN")),
    ([-0.0, -0.0], ({"doubleValue": 0.0}, 0.0)),
    ([3, 4], ({"integerValue": "7"}, 3.5)),
]


@pytest.mark.parametrize("values,expected", SUMS, ids=[str(i) for i in range(len(SUMS))])
def test_sum_and_avg_arithmetic(emulator_host, values, expected):
    c = coll_id("sum")
    commit(emulator_host, [(f"{c}/{k:02d}", {"v": value(v)}) for k, v in enumerate(values)])
    total, average = expected
    for direction in ("ASCENDING", "DESCENDING"):  # the order the values are met in changes nothing
        got = fields_of(aggregate(emulator_host, c, [{"alias": "s", "sum": {"field": {"fieldPath": "v"}}},
                                                    {"alias": "a", "avg": {"field": {"fieldPath": "v"}}}],
                                  orderBy=[{"field": {"fieldPath": "v"}, "direction": direction}]))
        assert got == {"s": total, "a": {"doubleValue": average}}, direction


def test_sum_and_avg_through_the_client(db):
    c = db.collection(coll_id("sumc"))
    for k, v in enumerate([MAX, MAX, MIN, MIN]):
        c.document(f"i{k}").set({"v": v})
    for k, v in enumerate([0.1, 0.2, 0.3]):
        c.document(f"d{k}").set({"w": v})
    # (an aggregation over a field sees only documents having every field aggregated, so one
    # request per field)
    got = {r.alias: r.value for r in c.sum("v", alias="sv").avg("v", alias="av").get()[0]}
    assert got == {"sv": -2, "av": -0.5} and isinstance(got["sv"], int)
    got = {r.alias: r.value for r in c.sum("w", alias="sw").avg("w", alias="aw").get()[0]}
    assert got == {"sw": 0.6, "aw": 0.19999999999999998}


# ---- aliases --------------------------------------------------------------------------------------

def test_an_aggregation_alias_is_a_property_name(emulator_host, db):
    c = coll_id("al")
    commit(emulator_host, [(f"{c}/a", {"v": value(1)})])
    for alias, expected in [("__a__", 'The property.name "__a__" is reserved.'),
                            ("__name__", 'The property.name "__name__" is reserved.'),
                            ("__key__", 'The property.name "__key__" is reserved.'),
                            ("a" * 1501, "The property.name is longer than 1500 bytes."),
                            ("a" * 1500, "OK"), ("__a", "OK"), ("a__", "OK"), ("a.b", "OK"), ("`a`", "OK"),
                            ("1a", "OK"), ("é", "OK")]:
        assert message(aggregate(emulator_host, c, [{"alias": alias, "count": {}}])) == expected, alias[:20]
    with pytest.raises(exceptions.InvalidArgument) as info:
        db.collection(c).count(alias="__a__").get()
    assert info.value.message == 'The property.name "__a__" is reserved.'


# ---- __name__ filters -----------------------------------------------------------------------------

def _names(answer):
    status, body = answer
    assert status == 200, body
    return [r["document"]["name"].rsplit("/", 1)[1] for r in body if "document" in r]


def test_name_in_with_a_document_twice_matches_it_once(emulator_host, db):
    c = coll_id("nd")
    commit(emulator_host, [(f"{c}/{k}", {"v": value(n)}) for n, k in enumerate("abc")])

    def ref(k):
        return {"referenceValue": f"{database()}/documents/{c}/{k}"}

    def run(where, **q):
        return rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {"from": [{"collectionId": c}], "where": where, **q}})
    twice = {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "IN", "value": {"arrayValue": {"values": [ref("a"), ref("a"), ref("b")]}}}}
    assert _names(run(twice)) == ["a", "b"]
    assert _names(run(twice, limit=2)) == ["a", "b"]
    assert fields_of(rest(emulator_host, "POST", ":runAggregationQuery", {"structuredAggregationQuery": {
        "structuredQuery": {"from": [{"collectionId": c}], "where": twice}, "aggregations": [{"alias": "c", "count": {}}]}})) == \
        {"c": {"integerValue": "2"}}
    group = rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {
        "from": [{"collectionId": c, "allDescendants": True}], "where": twice}})
    assert _names(group) == ["a", "b"]
    # The client, over gRPC.
    a = db.collection(c).document("a")
    got = db.collection(c).where(filter=FieldFilter(FieldPath.document_id(), "in", [a, a, db.collection(c).document("c")])).get()
    assert [d.id for d in got] == ["a", "c"]


def test_a_name_operand_in_another_database(emulator_host):
    project = os.environ["HEARTH_PROJECT"]
    here = f"projects/{project}/databases/(default)"
    for other in [f"projects/{project}/databases/other", "projects/zz/databases/(default)"]:
        ref = {"referenceValue": f"{other}/documents/c/x"}
        for op, operand in [("EQUAL", ref), ("NOT_EQUAL", ref), ("IN", {"arrayValue": {"values": [ref]}}),
                            ("NOT_IN", {"arrayValue": {"values": [ref]}}), ("LESS_THAN", ref)]:
            answer = rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {
                "from": [{"collectionId": "c"}], "where": {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": op, "value": operand}}}})
            assert message(answer) == f"The request was for database '{here}' but was attempting to access database '{other}'", op


def test_name_descending_each_servers_answer(emulator_host, target):
    c = coll_id("nds")
    commit(emulator_host, [(f"{c}/{k}", {}) for k in "abcd"])
    answer = rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {
        "from": [{"collectionId": c}], "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "DESCENDING"}],
        "startAt": {"values": [{"referenceValue": f"{database()}/documents/{c}/c"}], "before": False}, "limit": 1}})
    if target == "official":  # docs/firestore.md, *Name order*: Firestore serves descending name order
        assert message(answer) == "Firestore does not support descending key scans"
    else:
        assert _names(answer) == ["b"]


# ---- masks ----------------------------------------------------------------------------------------

def test_a_lone_name_in_a_mask_selects_no_field(emulator_host, db):
    c = coll_id("mk")
    commit(emulator_host, [(f"{c}/a", {"n": value(1), "m": {"mapValue": {"fields": {"x": value(2)}}}})])
    name = f"{database()}/documents/{c}/a"
    status, got = rest(emulator_host, "POST", ":batchGet", {"documents": [name], "mask": {"fieldPaths": ["__name__"]}})
    assert status == 200 and got[0]["found"]["name"] == name and "fields" not in got[0]["found"], got
    status, got = rest(emulator_host, "GET", f"/{c}/a?mask.fieldPaths=__name__")
    assert status == 200 and "fields" not in got, got
    status, got = rest(emulator_host, "GET", f"/{c}?mask.fieldPaths=__name__&mask.fieldPaths=n")
    assert status == 200 and got["documents"][0]["fields"] == {"n": value(1)}, got
    # An update mask naming only __name__ writes no field (the document is created empty).
    status, got = rest(emulator_host, "PATCH", f"/{c}/b?updateMask.fieldPaths=__name__", {"fields": {"n": value(1)}})
    assert status == 200 and "fields" not in got, got
    status, got = rest(emulator_host, "PATCH", f"/{c}/a?updateMask.fieldPaths=__name__&updateMask.fieldPaths=n", {"fields": {}})
    assert status == 200 and got["fields"] == {"m": {"mapValue": {"fields": {"x": value(2)}}}}, got
    # Below the top level, or another reserved name, stays refused.
    assert message(rest(emulator_host, "GET", f"/{c}/a?mask.fieldPaths=m.__name__")) == "the name __key__ is reserved"
    assert message(rest(emulator_host, "GET", f"/{c}/a?mask.fieldPaths=__x__")) == "Invalid reserved name in field path __x__"
    # The client's get_all with the document id as its field path.
    snaps = list(db.get_all([db.collection(c).document("a")], field_paths=[FieldPath.document_id()]))
    assert snaps[0].exists and snaps[0].to_dict() == {}


# ---- read times -----------------------------------------------------------------------------------

@pytest.mark.parametrize("t", ["1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])
def test_a_read_time_at_or_before_the_epoch(emulator_host, t):
    c = coll_id("rt")
    commit(emulator_host, [(f"{c}/a", {})])
    expected = "Only timestamps past epoch are supported."
    assert message(rest(emulator_host, "POST", ":runQuery", {"structuredQuery": {"from": [{"collectionId": c}]}, "readTime": t})) == expected
    assert message(rest(emulator_host, "POST", ":batchGet", {"documents": [f"{database()}/documents/{c}/a"], "readTime": t})) == expected
    assert message(rest(emulator_host, "POST", ":beginTransaction", {"options": {"readOnly": {"readTime": t}}})) == expected
    assert message(rest(emulator_host, "GET", f"/{c}/a?readTime={t}")) == expected
    assert message(rest(emulator_host, "GET", f"/{c}?readTime={t}")) == expected
    assert message(aggregate(emulator_host, c, [{"count": {}}])) == "OK"


def test_count_up_to_zero_each_servers_answer(emulator_host, target):
    c = coll_id("up")
    commit(emulator_host, [(f"{c}/a", {})])
    answer = aggregate(emulator_host, c, [{"alias": "c", "count": {"upTo": "0"}}])
    if target == "official":  # the API: "Must be greater than zero when present"
        assert fields_of(answer) == {"c": {"integerValue": "0"}}
    else:
        assert message(answer) == "The `up_to` value in a COUNT aggregation must be greater than zero."


# ---- the emulator's own endpoints, as the SDKs' test helpers call them -------------------------------

def _user_token(project):
    """An unsigned ID token for uid u1, as @firebase/rules-unit-testing mints for an emulator."""
    import base64

    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return f'{part({"alg": "none", "typ": "JWT"})}.' + part({
        "sub": "u1", "user_id": "u1", "aud": project, "iss": f"https://securetoken.google.com/{project}", "iat": 1,
        "exp": 9999999999, "auth_time": 1, "firebase": {"sign_in_provider": "custom", "identities": {}}}) + "."


def test_rules_reload_as_the_test_helpers_call_it(emulator_host):
    project = coll_id("demo-f31-")  # rules of its own, so no other test sees them
    rules_url = f"/emulator/v1/projects/{project}:securityRules"

    def put(body):
        return rest(emulator_host, "PUT", "", {"rules": {"files": [{"name": "firestore.rules", "content": body}]}}, root=rules_url)

    def write(path, token):
        req = urllib.request.Request(f"http://{emulator_host}/v1/projects/{project}/databases/(default)/documents/{path}",
                                     data=json.dumps({"fields": {}}).encode(), method="PATCH",
                                     headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
    head = 'rules_version = "2";\nservice cloud.firestore { match /databases/{d}/documents { match /x/{y} { allow read, write: if '
    assert put(head + "request.auth != null; } } }") == (200, {})
    assert write("x/a", _user_token(project)) == 200 and write("x/b", None) == 403
    status, warned = put(head + "request.auth != null || unknownVar == 1; } } }")
    assert status == 200 and [(i["severity"], i["description"], i["sourcePosition"]["line"], i["sourcePosition"]["column"])
                              for i in warned["issues"]] == [("WARNING", "Invalid variable name: unknownVar.", 2, 121)]
    # Rules that do not compile: 400, not installed (rules-unit-testing's loader throws on it).
    status, broken = put('rules_version = "2";\nservice cloud.firestore { match /x { allow read: if foo(; } }')
    assert status == 400 and broken["error"]["status"] == "INVALID_ARGUMENT"
    assert broken["error"]["message"].startswith("Error compiling rules:\nL2:57 Unexpected ';'"), broken
    assert write("x/c", _user_token(project)) == 200 and write("x/d", None) == 403  # the last good rules
    # A file without a name, as rules-unit-testing sends it: its issues name no file.
    status, warned = rest(emulator_host, "PUT", "", {"rules": {"files": [{"content": head + "unknownVar == 1; } } }"}]}}, root=rules_url)
    assert status == 200 and [("fileName" in i["sourcePosition"], i["sourcePosition"]["line"]) for i in warned["issues"]] == \
        [(False, 2)], warned


def test_emulator_delete_of_a_document_or_a_collection(emulator_host):
    c, other = coll_id("ed"), coll_id("ed")
    commit(emulator_host, [(f"{c}/a", {}), (f"{c}/a/s/b", {}), (f"{c}/b", {}), (f"{c}/b/s/c", {}), (f"{other}/x", {})])
    root = f"/emulator/v1/{database()}/documents"
    assert rest(emulator_host, "DELETE", f"/{c}/a", root=root) == (200, {})

    def listed(path):
        status, body = rest(emulator_host, "GET", path)
        assert status == 200, body
        return [d["name"].rsplit("/", 1)[1] for d in body.get("documents", [])]
    assert listed(f"/{c}") == ["b"] and listed(f"/{c}/a/s") == [] and listed(f"/{c}/b/s") == ["c"]
    assert rest(emulator_host, "DELETE", f"/{c}", root=root) == (200, {})
    assert listed(f"/{c}") == [] and listed(f"/{c}/b/s") == [] and listed(f"/{other}") == ["x"]


def test_batch_write_needs_admin_credentials(emulator_host):
    c = coll_id("bwa")
    body = {"writes": [{"update": {"name": f"{database()}/documents/{c}/a", "fields": {}}}]}
    req = urllib.request.Request(f"http://{emulator_host}/v1/{database()}/documents:batchWrite", data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "Authorization": f"Bearer {_user_token(os.environ['HEARTH_PROJECT'])}"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=30)
    assert info.value.code == 403
    assert json.loads(info.value.read())["error"]["message"] == "Batch writes require admin authentication."
