"""Read-write transactions conflict with writes committed by others before the transaction's
commit: documents read and query result sets (phantoms) alike. The loser gets 409 ABORTED and
nothing of its commit is applied; SDKs retry with `retryTransaction`.

The expiry test moves the clock, so the suite runs on a private hearth.
"""
import pytest
import requests

from hearthharness import start_hearth, stop_hearth

OWNER = {"Authorization": "Bearer owner"}
CONTENTION = {"code": 409, "message": "Too much contention on these documents. Please try again.", "status": "ABORTED"}


class Private:
    def __init__(self, ready):
        self.hub = ready["services"]["hub"]["url"].rstrip("/")
        self.base = ready["services"]["firestore"]["url"].rstrip("/")
        self.project = ready.get("project", "demo-hearth")
        self.root = f"projects/{self.project}/databases/(default)/documents"

    def url(self, suffix=""):
        return f"{self.base}/v1/{self.root}{suffix}"

    def put(self, path, fields):
        r = requests.patch(self.url("/" + path), json={"fields": fields}, headers=OWNER)
        assert r.status_code == 200, r.text

    def exists(self, path):
        return requests.get(self.url("/" + path), headers=OWNER).status_code == 200

    def begin(self, options=None):
        r = requests.post(self.url(":beginTransaction"), json={"options": options or {"readWrite": {}}}, headers=OWNER)
        assert r.status_code == 200, r.text
        return r.json()["transaction"]

    def query(self, structured, **extra):
        r = requests.post(self.url(":runQuery"), json={"structuredQuery": structured, **extra}, headers=OWNER)
        assert r.status_code == 200, r.text
        return r.json()

    def commit(self, txn, path="marker/m"):
        return requests.post(self.url(":commit"), headers=OWNER, json={
            "transaction": txn, "writes": [{"update": {"name": f"{self.root}/{path}", "fields": {"by": {"stringValue": "txn"}}}}]})


@pytest.fixture(scope="module")
def fs():
    proc, ready, _ = start_hearth(extra_args=["--clock", "2026-05-06T07:08:09Z"])
    try:
        yield Private(ready)
    finally:
        stop_hearth(proc)


def tag_is(value):
    return {"fieldFilter": {"field": {"fieldPath": "tag"}, "op": "EQUAL", "value": {"stringValue": value}}}


def seed(fs, coll):
    for doc_id, tag, n in [("a", "x", 1), ("b", "x", 5), ("c", "y", 9)]:
        fs.put(f"{coll}/{doc_id}", {"tag": {"stringValue": tag}, "n": {"integerValue": str(n)}})


@pytest.mark.parametrize("label,interfere,aborts", [
    ("new matching document", lambda fs, c: fs.put(f"{c}/new", {"tag": {"stringValue": "x"}}), True),
    ("document starts matching", lambda fs, c: fs.put(f"{c}/c", {"tag": {"stringValue": "x"}}), True),
    ("document stops matching", lambda fs, c: fs.put(f"{c}/a", {"tag": {"stringValue": "z"}}), True),
    ("matching document deleted", lambda fs, c: requests.delete(fs.url(f"/{c}/b"), headers=OWNER), True),
    ("unrelated document created", lambda fs, c: fs.put(f"{c}/other", {"tag": {"stringValue": "q"}}), False),
    ("unrelated document changed", lambda fs, c: fs.put(f"{c}/c", {"tag": {"stringValue": "y"}, "n": {"integerValue": "10"}}), False),
])
def test_query_phantoms(fs, label, interfere, aborts):
    coll = "q" + label.replace(" ", "")
    seed(fs, coll)
    txn = fs.begin()
    fs.query({"from": [{"collectionId": coll}], "where": tag_is("x")}, transaction=txn)
    interfere(fs, coll)
    r = fs.commit(txn, f"{coll}-marker/m")
    if aborts:
        assert r.status_code == 409, r.text
        assert r.json()["error"] == CONTENTION
        assert not fs.exists(f"{coll}-marker/m")
    else:
        assert r.status_code == 200, r.text
        assert fs.exists(f"{coll}-marker/m")


def test_query_in_new_transaction_and_aggregation(fs):
    seed(fs, "nt")
    first = fs.query({"from": [{"collectionId": "nt"}], "where": tag_is("y")}, newTransaction={"readWrite": {}})
    txn = first[0]["transaction"]
    fs.put("nt/z", {"tag": {"stringValue": "y"}})
    assert fs.commit(txn, "nt-marker/m").status_code == 409

    txn = fs.begin()
    agg = requests.post(fs.url(":runAggregationQuery"), headers=OWNER, json={
        "structuredAggregationQuery": {"structuredQuery": {"from": [{"collectionId": "nt"}]}, "aggregations": [{"count": {}}]},
        "transaction": txn}).json()
    assert agg[0]["result"]["aggregateFields"]["field_1"] == {"integerValue": "4"}
    fs.put("nt/w", {})
    assert fs.commit(txn, "nt-marker/m").json()["error"] == CONTENTION


def test_document_reads_conflict(fs):
    seed(fs, "dr")
    txn = fs.begin()
    assert requests.get(fs.url("/dr/a"), params={"transaction": txn}, headers=OWNER).status_code == 200
    got = requests.post(fs.url(":batchGet"), headers=OWNER,
                        json={"documents": [f"{fs.root}/dr/missing"], "transaction": txn}).json()
    assert "missing" in got[0]
    fs.put("dr/missing", {})
    assert fs.commit(txn, "dr-marker/m").status_code == 409
    # The loser retries with retryTransaction and wins.
    retry = fs.begin({"readWrite": {"retryTransaction": txn}})
    requests.get(fs.url("/dr/a"), params={"transaction": retry}, headers=OWNER)
    assert fs.commit(retry, "dr-marker/m").status_code == 200


def test_read_only_transactions_never_abort_and_idle_ones_expire(fs):
    seed(fs, "ro")
    ro = fs.begin({"readOnly": {}})
    fs.query({"from": [{"collectionId": "ro"}]}, transaction=ro)
    fs.put("ro/new", {})
    assert requests.post(fs.url(":commit"), json={"transaction": ro}, headers=OWNER).status_code == 200

    idle = fs.begin()
    requests.put(f"{fs.hub}/emulator/v1/clock", json={"advanceSeconds": 271}).raise_for_status()
    r = fs.commit(idle, "ro-marker/m")
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "The referenced transaction has expired or is no longer valid."


def test_generated_rest_client_gets_aborted(fs):
    pytest.importorskip("google.cloud.firestore_v1")
    from google.api_core import exceptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.firestore_v1.services.firestore import FirestoreClient
    from google.cloud.firestore_v1.types import (BeginTransactionRequest, CommitRequest, Document, RunQueryRequest,
                                                 StructuredQuery, Write)

    seed(fs, "gapic")
    client = FirestoreClient(credentials=AnonymousCredentials(), transport="rest", client_options={"api_endpoint": fs.base})
    metadata = [("authorization", "Bearer owner")]
    database = f"projects/{fs.project}/databases/(default)"
    txn = client.begin_transaction(request=BeginTransactionRequest(database=database), metadata=metadata).transaction
    query = StructuredQuery(from_=[StructuredQuery.CollectionSelector(collection_id="gapic")])
    list(client.run_query(request=RunQueryRequest(parent=fs.root, structured_query=query, transaction=txn), metadata=metadata))
    fs.put("gapic/phantom", {})
    write = Write(update=Document(name=f"{fs.root}/gapic-marker/m", fields={}))
    # Over REST, api_core maps by HTTP status: ABORTED is 409, which it raises as Conflict.
    with pytest.raises(exceptions.Conflict) as raised:
        client.commit(request=CommitRequest(database=database, writes=[write], transaction=txn), metadata=metadata)
    assert "Too much contention on these documents" in str(raised.value)
    assert not fs.exists("gapic-marker/m")
