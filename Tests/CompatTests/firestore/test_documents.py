"""CRUD, commit with transforms, batchGet, listCollectionIds over plain HTTP."""
import requests

from fsclient import OWNER, commit, i, project, root, s, unique, update_write, url


def test_root_answers_ok():
    from fsclient import base_url
    r = requests.get(base_url() + "/")
    assert r.status_code == 200
    assert r.text.strip() == "Ok"


def test_create_get_patch_list_delete():
    coll = unique()
    r = requests.post(url(f"/{coll}?documentId=alpha"), json={"fields": {"n": i(1), "name": s("A")}}, headers=OWNER)
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["name"] == f"{root()}/{coll}/alpha"
    assert doc["fields"]["n"] == {"integerValue": "1"}
    assert doc["createTime"] == doc["updateTime"] and doc["createTime"].endswith("Z")

    dup = requests.post(url(f"/{coll}?documentId=alpha"), json={"fields": {}}, headers=OWNER)
    assert dup.status_code == 409
    assert dup.json()["error"] == {"code": 409, "message": f"Document already exists: {root()}/{coll}/alpha",
                                   "status": "ALREADY_EXISTS"}

    auto = requests.post(url(f"/{coll}"), json={"fields": {"n": i(2)}}, headers=OWNER).json()
    auto_id = auto["name"].rsplit("/", 1)[1]
    assert len(auto_id) == 20 and auto_id.isalnum()

    patched = requests.patch(url(f"/{coll}/alpha"), params=[("updateMask.fieldPaths", "n"), ("mask.fieldPaths", "n")],
                             json={"fields": {"n": i(5)}}, headers=OWNER)
    assert patched.status_code == 200
    assert patched.json()["fields"] == {"n": {"integerValue": "5"}}
    got = requests.get(url(f"/{coll}/alpha"), headers=OWNER).json()
    assert got["fields"] == {"n": {"integerValue": "5"}, "name": {"stringValue": "A"}}
    assert got["updateTime"] > got["createTime"]

    listed = requests.get(url(f"/{coll}"), params={"pageSize": 1}, headers=OWNER).json()
    assert len(listed["documents"]) == 1 and "nextPageToken" in listed
    rest = requests.get(url(f"/{coll}"), params={"pageToken": listed["nextPageToken"]}, headers=OWNER).json()
    assert len(rest["documents"]) == 1

    assert requests.delete(url(f"/{coll}/alpha"), headers=OWNER).json() == {}
    missing = requests.get(url(f"/{coll}/alpha"), headers=OWNER)
    assert missing.status_code == 404
    assert missing.json()["error"]["status"] == "NOT_FOUND"
    assert missing.json()["error"]["message"] == f'Document ({root()}/{coll}/alpha) not found.'


def test_encoded_default_database_and_value_types():
    coll = unique()
    fields = {
        "null": {"nullValue": None}, "bool": {"booleanValue": True}, "int": {"integerValue": "-9223372036854775808"},
        "double": {"doubleValue": 2.5}, "nan": {"doubleValue": "NaN"}, "inf": {"doubleValue": "-Infinity"},
        "ts": {"timestampValue": "2024-05-06T07:08:09.123456789Z"}, "str": {"stringValue": "héllo"},
        "bytes": {"bytesValue": "AAH/"}, "ref": {"referenceValue": f"{root()}/a/b"},
        "geo": {"geoPointValue": {"latitude": 1.5, "longitude": -2.5}},
        "arr": {"arrayValue": {"values": [{"integerValue": "1"}, {"stringValue": "x"}]}}, "emptyArr": {"arrayValue": {}},
        "map": {"mapValue": {"fields": {"k": {"booleanValue": False}}}},
    }
    r = requests.patch(url(f"/{coll}/d").replace("(default)", "%28default%29"), json={"fields": fields}, headers=OWNER)
    assert r.status_code == 200, r.text
    got = requests.get(url(f"/{coll}/d"), headers=OWNER).json()["fields"]
    assert got["int"] == {"integerValue": "-9223372036854775808"}
    assert got["nan"] == {"doubleValue": "NaN"}
    assert got["inf"] == {"doubleValue": "-Infinity"}
    assert got["ts"] == {"timestampValue": "2024-05-06T07:08:09.123456Z"}  # microseconds kept, as Firestore
    assert got["bytes"] == {"bytesValue": "AAH/"}
    assert got["emptyArr"] == {"arrayValue": {}}
    assert got["geo"] == {"geoPointValue": {"latitude": 1.5, "longitude": -2.5}}
    assert got["null"] == {"nullValue": None}


def test_bad_input_gets_google_errors():
    coll = unique()
    cases = [
        requests.patch(url(f"/{coll}/d"), data="{not json", headers=OWNER),
        requests.patch(url(f"/{coll}/d"), json={"fields": {"a": {"fooValue": 1}}}, headers=OWNER),
        requests.patch(url(f"/{coll}/d"), json={"fields": {"a": {"arrayValue": {"values": [{"arrayValue": {}}]}}}}, headers=OWNER),
        requests.get(url(f"/{coll}/__reserved__"), headers=OWNER),
        requests.get(url(f"/{coll}//x"), headers=OWNER),
        requests.patch(url(f"/{coll}/d"), params={"updateMask.fieldPaths": "a..b"}, json={}, headers=OWNER),
        requests.post(url(":commit"), json={"writes": [{}]}, headers=OWNER),
    ]
    for r in cases:
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["code"] == 400 and err["status"] == "INVALID_ARGUMENT" and err["message"]
    nested = requests.patch(url(f"/{coll}/d"), json={"fields": {"a": {"arrayValue": {"values": [{"arrayValue": {}}]}}}}, headers=OWNER)
    assert nested.json()["error"]["message"] == "Cannot convert an array value in an array value."


def test_commit_with_every_transform():
    coll = unique()
    path = f"{coll}/d"
    assert commit([update_write(path, {"n": i(1), "tags": {"arrayValue": {"values": [s("a"), s("b")]}}, "lo": i(5)})]).status_code == 200
    r = commit([update_write(path, {}, updateMask={"fieldPaths": []}, updateTransforms=[
        {"fieldPath": "n", "increment": i(41)},
        {"fieldPath": "at", "setToServerValue": "REQUEST_TIME"},
        {"fieldPath": "tags", "appendMissingElements": {"values": [s("b"), s("c")]}},
        {"fieldPath": "gone", "removeAllFromArray": {"values": [s("a")]}},
        {"fieldPath": "lo", "minimum": i(3)},
        {"fieldPath": "hi", "maximum": {"doubleValue": 2.5}},
    ])])
    assert r.status_code == 200, r.text
    body = r.json()
    results = body["writeResults"][0]["transformResults"]
    assert results[0] == {"integerValue": "42"}
    # REQUEST_TIME is the commit time at millisecond precision (the ServerValue docs; the official emulator agrees).
    request_time = ms_precision(body["commitTime"])
    assert results[1] == {"timestampValue": request_time}
    assert results[2] == {"nullValue": None}
    assert results[4] == {"integerValue": "3"}
    doc = requests.get(url(f"/{path}"), headers=OWNER).json()["fields"]
    assert doc["tags"]["arrayValue"]["values"] == [s("a"), s("b"), s("c")]
    assert doc["at"] == {"timestampValue": request_time}
    assert doc["hi"] == {"doubleValue": 2.5}


def test_commit_is_atomic_and_preconditions_use_firestore_wording():
    coll = unique()
    r = commit([update_write(f"{coll}/a", {"x": i(1)}), update_write(f"{coll}/b", {"x": i(1)}, currentDocument={"exists": True})])
    assert r.status_code == 404
    assert r.json()["error"]["message"] == f"No document to update: {root()}/{coll}/b"
    assert requests.get(url(f"/{coll}/a"), headers=OWNER).status_code == 404


def test_batch_get_and_batch_write():
    coll = unique()
    commit([update_write(f"{coll}/a", {"x": i(1)})])
    bw = requests.post(url(":batchWrite"), json={"writes": [
        update_write(f"{coll}/b", {"x": i(2)}), update_write(f"{coll}/a", {"x": i(3)}, currentDocument={"exists": False}),
    ]}, headers=OWNER).json()
    assert bw["status"][0] == {} and bw["status"][1]["code"] == 6
    got = requests.post(url(":batchGet"), json={"documents": [f"{root()}/{coll}/a", f"{root()}/{coll}/zz"]}, headers=OWNER)
    assert got.status_code == 200
    items = got.json()
    assert isinstance(items, list) and len(items) == 2
    assert items[0]["found"]["fields"]["x"] == {"integerValue": "1"} and "readTime" in items[0]
    assert items[1]["missing"] == f"{root()}/{coll}/zz"


def test_list_collection_ids():
    parent = unique("p")
    commit([update_write(f"{parent}/doc/beta/1", {}), update_write(f"{parent}/doc/alpha/1", {})])
    r = requests.post(url(f"/{parent}/doc:listCollectionIds"), json={}, headers=OWNER)
    assert r.json() == {"collectionIds": ["alpha", "beta"]}


def test_clearing_a_project_is_isolated():
    other = unique("proj")
    requests.patch(url("/c/d", p=other), json={"fields": {}}, headers=OWNER)
    keep = unique()
    commit([update_write(f"{keep}/d", {})])
    from fsclient import base_url
    r = requests.delete(f"{base_url()}/emulator/v1/projects/{other}/databases/(default)/documents")
    assert r.status_code == 200
    assert requests.get(url("/c/d", p=other), headers=OWNER).status_code == 404
    assert requests.get(url(f"/{keep}/d"), headers=OWNER).status_code == 200


def ms_precision(rfc3339):
    """`…:05.123456Z` → `…:05.123Z` (Hearth's timestamp text drops trailing zero digits in threes)."""
    head, _, frac = rfc3339.rstrip("Z").partition(".")
    frac = frac[:3].ljust(3, "0")
    return head + ("Z" if frac == "000" else "." + frac + "Z")
