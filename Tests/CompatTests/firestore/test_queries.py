"""runQuery, runAggregationQuery and transactions over plain HTTP."""
import requests

from fsclient import OWNER, commit, field_filter, i, ids, root, run_query, s, unique, update_write, url


def seed(coll):
    rows = {"SF": ("CA", 860000, ["west", "nor"]), "LA": ("CA", 3900000, ["west", "so"]), "DC": ("DC", 680000, ["east"]),
            "TOK": (None, 9000000, ["kanto"]), "BJ": ("BJ", 21500000, ["hebei"])}
    writes = []
    for doc_id, (state, pop, regions) in rows.items():
        fields = {"pop": i(pop), "regions": {"arrayValue": {"values": [s(r) for r in regions]}}}
        fields["state"] = s(state) if state else {"nullValue": None}
        writes.append(update_write(f"{coll}/{doc_id}", fields))
    assert commit(writes).status_code == 200


def test_filters_orders_cursors_limits():
    coll = unique()
    seed(coll)
    q = lambda **kw: {"from": [{"collectionId": coll}], **kw}
    cases = [
        (q(where=field_filter("pop", "LESS_THAN", i(1000000))), ["DC", "SF"]),
        (q(where=field_filter("pop", "GREATER_THAN_OR_EQUAL", i(3900000))), ["LA", "TOK", "BJ"]),
        (q(where=field_filter("state", "EQUAL", s("CA"))), ["LA", "SF"]),
        (q(where=field_filter("state", "NOT_EQUAL", s("CA"))), ["BJ", "DC"]),
        (q(where=field_filter("state", "IN", {"arrayValue": {"values": [s("CA"), s("DC")]}})), ["DC", "LA", "SF"]),
        (q(where=field_filter("state", "NOT_IN", {"arrayValue": {"values": [s("CA")]}})), ["BJ", "DC"]),
        (q(where=field_filter("regions", "ARRAY_CONTAINS", s("west"))), ["LA", "SF"]),
        (q(where=field_filter("regions", "ARRAY_CONTAINS_ANY", {"arrayValue": {"values": [s("nor"), s("kanto")]}})), ["SF", "TOK"]),
        (q(where={"unaryFilter": {"field": {"fieldPath": "state"}, "op": "IS_NULL"}}), ["TOK"]),
        (q(where={"compositeFilter": {"op": "OR", "filters": [field_filter("state", "EQUAL", s("DC")),
                                                              field_filter("pop", "GREATER_THAN", i(10000000))]}}), ["DC", "BJ"]),  # implicit orderBy pop
        (q(orderBy=[{"field": {"fieldPath": "pop"}, "direction": "DESCENDING"}], limit=2), ["BJ", "TOK"]),
        (q(orderBy=[{"field": {"fieldPath": "pop"}}], offset=1, limit=2), ["SF", "LA"]),
        (q(orderBy=[{"field": {"fieldPath": "pop"}}], startAt={"values": [i(860000)], "before": False}), ["LA", "TOK", "BJ"]),
        (q(orderBy=[{"field": {"fieldPath": "pop"}}], endAt={"values": [i(3900000)], "before": True}), ["DC", "SF"]),
    ]
    for structured, expected in cases:
        r = run_query(structured)
        assert r.status_code == 200, r.text
        assert ids(r.json()) == expected, structured


def test_empty_result_is_one_read_time_message():
    r = run_query({"from": [{"collectionId": unique()}]})
    assert r.status_code == 200
    body = r.json()
    assert len(body) == 1 and "readTime" in body[0] and "document" not in body[0]


def test_collection_group_under_root_and_parent():
    top = unique("t")
    group = unique("g")
    commit([update_write(f"{top}/a/{group}/1", {"k": i(1)}), update_write(f"{top}/b/{group}/2", {"k": i(1)}),
            update_write(f"{top}/b/{group}/3", {"k": i(2)})])
    everywhere = run_query({"from": [{"collectionId": group, "allDescendants": True}], "where": field_filter("k", "EQUAL", i(1))})
    assert ids(everywhere.json()) == ["1", "2"]
    under_b = run_query({"from": [{"collectionId": group, "allDescendants": True}]}, parent=f"/{top}/b")
    assert ids(under_b.json()) == ["2", "3"]


def test_aggregation_count_sum_avg():
    coll = unique()
    seed(coll)
    r = requests.post(url(":runAggregationQuery"), json={"structuredAggregationQuery": {
        "structuredQuery": {"from": [{"collectionId": coll}], "where": field_filter("state", "EQUAL", s("CA"))},
        "aggregations": [{"alias": "n", "count": {}}, {"alias": "total", "sum": {"field": {"fieldPath": "pop"}}},
                         {"alias": "mean", "avg": {"field": {"fieldPath": "pop"}}}]}}, headers=OWNER)
    assert r.status_code == 200, r.text
    fields = r.json()[0]["result"]["aggregateFields"]
    assert fields["n"] == {"integerValue": "2"}
    assert fields["total"] == {"integerValue": "4760000"}
    assert fields["mean"] == {"doubleValue": 2380000.0}


def test_invalid_query_is_rejected():
    r = run_query({"from": [{"collectionId": "x"}], "orderBy": [{"field": {"fieldPath": "__name__"}}, {"field": {"fieldPath": "a"}}]})
    assert r.status_code == 400
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_transactions_conflict_and_rollback():
    coll = unique()
    name = f"{root()}/{coll}/counter"
    commit([update_write(f"{coll}/counter", {"n": i(0)})])
    t1 = requests.post(url(":beginTransaction"), json={}, headers=OWNER).json()["transaction"]
    t2 = requests.post(url(":beginTransaction"), json={"options": {"readWrite": {}}}, headers=OWNER).json()["transaction"]
    for t in (t1, t2):
        got = requests.post(url(":batchGet"), json={"documents": [name], "transaction": t}, headers=OWNER)
        assert got.json()[0]["found"]["fields"]["n"] == {"integerValue": "0"}
    assert commit([update_write(f"{coll}/counter", {"n": i(1)})], transaction=t1).status_code == 200
    loser = commit([update_write(f"{coll}/counter", {"n": i(1)})], transaction=t2)
    assert loser.status_code == 409
    assert loser.json()["error"]["status"] == "ABORTED"

    t3 = requests.post(url(":beginTransaction"), json={}, headers=OWNER).json()["transaction"]
    assert requests.post(url(":rollback"), json={"transaction": t3}, headers=OWNER).json() == {}
    reused = commit([], transaction=t3)
    assert reused.status_code == 400

    started = run_query({"from": [{"collectionId": coll}]}, newTransaction={"readWrite": {}})
    assert "transaction" in started.json()[0]


def test_numeric_enums_and_snake_case_as_generated_clients_send():
    coll = unique()
    seed(coll)
    body = {"structured_query": {"from": [{"collection_id": coll}],
                                 "where": {"field_filter": {"field": {"field_path": "state"}, "op": 5, "value": {"string_value": "CA"}}},
                                 "order_by": [{"field": {"field_path": "pop"}, "direction": 2}]}}
    r = requests.post(url(":runQuery"), params={"$alt": "json;enum-encoding=int"}, json=body, headers=OWNER)
    assert r.status_code == 200, r.text
    assert ids(r.json()) == ["LA", "SF"]
