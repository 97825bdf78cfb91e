"""readTime on every Firestore read method, as real REST clients send it.

These tests move the clock, so they run against a private hearth started with a frozen clock
(the session's shared one keeps the system clock for every other suite).
"""
import datetime

import pytest
import requests

from hearthharness import start_hearth, stop_hearth

OWNER = {"Authorization": "Bearer owner"}
START = "2026-03-04T05:06:07Z"


class Private:
    """A hearth of its own: URLs, the clock, and a few REST helpers."""

    def __init__(self, ready):
        self.hub = ready["services"]["hub"]["url"].rstrip("/")
        self.base = ready["services"]["firestore"]["url"].rstrip("/")
        self.project = ready.get("project", "demo-hearth")
        self.root = f"projects/{self.project}/databases/(default)/documents"

    def url(self, suffix=""):
        return f"{self.base}/v1/{self.root}{suffix}"

    def clock(self, body=None):
        r = requests.put(f"{self.hub}/emulator/v1/clock", json=body) if body else requests.get(f"{self.hub}/emulator/v1/clock")
        assert r.status_code == 200, r.text
        return r.json()["now"]

    def put(self, path, fields):
        r = requests.patch(self.url("/" + path), json={"fields": fields}, headers=OWNER)
        assert r.status_code == 200, r.text
        return r.json()

    def delete(self, path):
        assert requests.delete(self.url("/" + path), headers=OWNER).status_code == 200

    def query(self, structured, parent="", **extra):
        return requests.post(self.url(parent + ":runQuery"), json={"structuredQuery": structured, **extra}, headers=OWNER)


@pytest.fixture(scope="module")
def fs():
    proc, ready, _ = start_hearth(extra_args=["--clock", START])
    try:
        yield Private(ready)
    finally:
        stop_hearth(proc)


def i(v):
    return {"integerValue": str(v)}


def s(v):
    return {"stringValue": v}


def when(stamp):
    """An RFC 3339 timestamp as a datetime (Google prints 0, 3 or 6 fraction digits)."""
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def names(answer):
    return [r["document"]["name"].rsplit("/", 1)[1] for r in answer if "document" in r]


def seeded(fs, coll):
    """Creates a, b, gone; returns the time between the first state and the changes made next."""
    fs.put(f"{coll}/a", {"n": i(1), "tag": s("x")})
    fs.put(f"{coll}/b", {"n": i(5), "tag": s("x")})
    fs.put(f"{coll}/gone", {"n": i(9), "tag": s("y")})
    fs.clock({"advanceSeconds": 10})
    t = fs.clock()
    fs.clock({"advanceSeconds": 10})
    fs.put(f"{coll}/a", {"n": i(100), "tag": s("y")})
    fs.delete(f"{coll}/gone")
    fs.put(f"{coll}/late", {"n": i(7), "tag": s("x")})
    return t


def test_run_query_sees_the_database_as_it_was(fs):
    t = seeded(fs, "rq")
    q = lambda **kw: {"from": [{"collectionId": "rq"}], **kw}
    cases = [
        (q(), ["a", "b", "gone"], ["a", "b", "late"]),
        (q(where={"fieldFilter": {"field": {"fieldPath": "tag"}, "op": "EQUAL", "value": s("x")}}), ["a", "b"], ["b", "late"]),
        (q(where={"fieldFilter": {"field": {"fieldPath": "n"}, "op": "LESS_THAN", "value": i(6)}}), ["a", "b"], ["b"]),
        (q(orderBy=[{"field": {"fieldPath": "n"}, "direction": "DESCENDING"}], limit=2), ["gone", "b"], ["a", "late"]),
        (q(orderBy=[{"field": {"fieldPath": "n"}}], startAt={"values": [i(2)]}), ["b", "gone"], ["b", "late", "a"]),
        (q(orderBy=[{"field": {"fieldPath": "n"}}], offset=1, limit=1), ["b"], ["late"]),
    ]
    for structured, then, now in cases:
        past = fs.query(structured, readTime=t)
        assert past.status_code == 200, past.text
        assert names(past.json()) == then, structured
        assert all(when(r["readTime"]) == when(t) for r in past.json())
        assert names(fs.query(structured).json()) == now, structured
    a = fs.query(q(where={"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "EQUAL",
                                          "value": {"referenceValue": f"{fs.root}/rq/a"}}}), readTime=t).json()
    assert a[0]["document"]["fields"] == {"n": i(1), "tag": s("x")}


def test_other_read_methods_at_a_read_time(fs):
    t = seeded(fs, "other")
    fs.put("other/b/sub/x", {})
    agg = requests.post(fs.url(":runAggregationQuery"), headers=OWNER, json={
        "structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "other"}]},
                                       "aggregations": [{"alias": "n", "count": {}},
                                                        {"alias": "s", "sum": {"field": {"fieldPath": "n"}}}]},
        "readTime": t}).json()
    assert agg[0]["result"]["aggregateFields"] == {"n": i(3), "s": i(15)}
    assert when(agg[0]["readTime"]) == when(t)

    listed = requests.get(fs.url("/other"), params={"readTime": t}, headers=OWNER).json()
    assert [d["name"].rsplit("/", 1)[1] for d in listed["documents"]] == ["a", "b", "gone"]

    got = requests.post(fs.url(":batchGet"), headers=OWNER, json={
        "documents": [f"{fs.root}/other/gone", f"{fs.root}/other/late"], "readTime": t}).json()
    assert got[0]["found"]["fields"]["n"] == i(9)
    assert got[1]["missing"] == f"{fs.root}/other/late"
    assert [when(g["readTime"]) for g in got] == [when(t), when(t)]

    one = requests.get(fs.url("/other/a"), params={"readTime": t}, headers=OWNER).json()
    assert one["fields"]["n"] == i(1)

    ids_then = requests.post(fs.url("/other/b:listCollectionIds"), json={"readTime": t}, headers=OWNER).json()
    assert ids_then == {}
    ids_now = requests.post(fs.url("/other/b:listCollectionIds"), json={}, headers=OWNER).json()
    assert ids_now == {"collectionIds": ["sub"]}


def test_read_only_transaction_reads_its_snapshot(fs):
    t = seeded(fs, "ro")
    txn = requests.post(fs.url(":beginTransaction"), headers=OWNER,
                        json={"options": {"readOnly": {"readTime": t}}}).json()["transaction"]
    r = fs.query({"from": [{"collectionId": "ro"}]}, transaction=txn).json()
    assert names(r) == ["a", "b", "gone"]
    got = requests.get(fs.url("/ro/gone"), params={"transaction": txn}, headers=OWNER)
    assert got.status_code == 200 and got.json()["fields"]["n"] == i(9)
    assert requests.post(fs.url(":commit"), json={"transaction": txn}, headers=OWNER).status_code == 200

    # newTransaction with readOnly and no readTime: the first read fixes the snapshot.
    first = fs.query({"from": [{"collectionId": "ro"}]}, newTransaction={"readOnly": {}}).json()
    txn2 = first[0]["transaction"]
    fs.clock({"advanceSeconds": 1})
    fs.put("ro/newer", {})
    second = fs.query({"from": [{"collectionId": "ro"}]}, transaction=txn2).json()
    assert names(second) == names(first) == ["a", "b", "late"]


def test_read_time_limits(fs):
    fs.put("lim/a", {})
    now = when(fs.clock())
    stamp = lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    future = fs.query({"from": [{"collectionId": "lim"}]}, readTime=stamp(now + datetime.timedelta(seconds=5)))
    assert future.status_code == 400
    assert future.json()["error"] == {"code": 400, "message": "The requested 'read_time' cannot be in the future.", "status": "INVALID_ARGUMENT"}

    fs.clock({"advanceSeconds": 2 * 3600})
    later = when(fs.clock())
    whole_minute = (later - datetime.timedelta(hours=1, minutes=30)).replace(second=0, microsecond=0)
    old = fs.query({"from": [{"collectionId": "lim"}]}, readTime=stamp(whole_minute))
    assert old.status_code == 400
    assert old.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert old.json()["error"]["message"] == "The requested 'read_time' is too old."
    odd = fs.query({"from": [{"collectionId": "lim"}]}, readTime=stamp(whole_minute + datetime.timedelta(seconds=7)))
    assert odd.status_code == 400 and odd.json()["error"]["status"] == "INVALID_ARGUMENT"
    begin = requests.post(fs.url(":beginTransaction"), headers=OWNER,
                          json={"options": {"readOnly": {"readTime": stamp(whole_minute)}}})
    assert begin.status_code == 400 and begin.json()["error"]["status"] == "FAILED_PRECONDITION"
    inside = fs.query({"from": [{"collectionId": "lim"}]}, readTime=stamp(later - datetime.timedelta(minutes=59)))
    assert inside.status_code == 200


def test_generated_rest_client_reads_at_a_read_time(fs):
    """google-cloud-firestore's generated client over its REST transport (what firebase-admin installs)."""
    pytest.importorskip("google.cloud.firestore_v1")
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.firestore_v1.services.firestore import FirestoreClient
    from google.cloud.firestore_v1.types import BatchGetDocumentsRequest, RunQueryRequest, StructuredQuery
    from google.protobuf import timestamp_pb2

    t = seeded(fs, "gapic")
    client = FirestoreClient(credentials=AnonymousCredentials(), transport="rest",
                             client_options={"api_endpoint": fs.base})
    read_time = timestamp_pb2.Timestamp()
    read_time.FromJsonString(t)
    metadata = [("authorization", "Bearer owner")]
    query = StructuredQuery(from_=[StructuredQuery.CollectionSelector(collection_id="gapic")],
                            order_by=[StructuredQuery.Order(field=StructuredQuery.FieldReference(field_path="n"),
                                                            direction=StructuredQuery.Direction.DESCENDING)])
    answers = list(client.run_query(request=RunQueryRequest(parent=fs.root, structured_query=query, read_time=read_time),
                                    metadata=metadata))
    got = [(a.document.name.rsplit("/", 1)[1], a.document.fields["n"].integer_value) for a in answers if a.document.name]
    assert got == [("gone", 9), ("b", 5), ("a", 1)]
    assert all(a.read_time.timestamp_pb() == read_time for a in answers)

    found = list(client.batch_get_documents(request=BatchGetDocumentsRequest(
        database=f"projects/{fs.project}/databases/(default)", documents=[f"{fs.root}/gapic/late"], read_time=read_time),
        metadata=metadata))
    assert found[0].missing == f"{fs.root}/gapic/late"


def test_partition_query_at_a_read_time(fs):
    for n in range(4):
        fs.put(f"pq/d{n}", {})
    fs.clock({"advanceSeconds": 5})
    t = fs.clock()
    fs.clock({"advanceSeconds": 5})
    for n in range(4, 12):
        fs.put(f"x/y/pq/d{n}", {})
    body = {"structuredQuery": {"from": [{"collectionId": "pq", "allDescendants": True}]}, "partitionCount": "10"}
    then = requests.post(fs.url(":partitionQuery"), json={**body, "readTime": t}, headers=OWNER)
    assert then.status_code == 200, then.text
    now = requests.post(fs.url(":partitionQuery"), json=body, headers=OWNER).json()
    assert len(then.json()["partitions"]) == 3 and len(now["partitions"]) == 10
    # The cursors are document references, in name order, usable as startAt of the same query.
    refs = [p["values"][0]["referenceValue"] for p in now["partitions"]]
    assert refs == sorted(refs, key=lambda r: r.split("/")) and all(r.startswith(fs.root + "/") for r in refs)
