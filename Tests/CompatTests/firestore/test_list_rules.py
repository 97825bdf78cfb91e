"""List (query) decisions through REST runQuery: rules are not filters, so a query is allowed only when
its constraints prove the rule for every document it could return (array-contains, ranges, !=, in).

Each test installs its rules for a project of its own and signs users up with the auth emulator, so
the ID tokens are real ones.
"""
import datetime
import os

import pytest
import requests

from fsclient import OWNER, base_url, field_filter, ids, run_query, s, unique, url

RULES = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /groups/{id} { allow list: if request.auth.uid in resource.data.members; }
    match /tagged/{id} { allow list: if resource.data.tags.hasAny(['a', 'b']); }
    match /recent/{id} { allow list: if resource.data.createdAt > request.time - duration.value(1, 'd'); }
    match /cheap/{id} { allow list: if resource.data.price < 100; }
    match /live/{id} { allow list: if resource.data.status != 'deleted'; }
    match /status/{id} { allow list: if resource.data.status in ['a', 'b']; }
  }
}
"""


@pytest.fixture
def p():
    """A project with the list rules installed (rules installed for one project leave the others alone)."""
    project = unique("list-rules")
    r = requests.put(f"{base_url()}/emulator/v1/projects/{project}:securityRules",
                     json={"rules": {"files": [{"name": "firestore.rules", "content": RULES}]}})
    assert r.status_code == 200 and r.json().get("issues", []) == [], r.text
    return project


def sign_up():
    """A new account on the auth emulator: (uid, Authorization header with its ID token)."""
    auth = os.environ.get("HEARTH_AUTH_URL")
    if not auth:
        pytest.skip("no auth emulator in this run")
    r = requests.post(f"{auth.rstrip('/')}/identitytoolkit.googleapis.com/v1/accounts:signUp", params={"key": "any"},
                      json={"email": f"{unique('list')}@example.com", "password": "secret123", "returnSecureToken": True})
    assert r.status_code == 200, r.text
    return r.json()["localId"], {"Authorization": "Bearer " + r.json()["idToken"]}


def put(p, path, fields):
    r = requests.patch(url(f"/{path}", p), json={"fields": fields}, headers=OWNER)
    assert r.status_code == 200, r.text


def arr(*values):
    return {"arrayValue": {"values": list(values)}}


def ts(t):
    return {"timestampValue": t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}


def query(p, collection, where=None, headers=OWNER, **extra):
    structured = {"from": [{"collectionId": collection}]}
    if where is not None:
        structured["where"] = where
    structured.update(extra)
    return run_query(structured, headers=headers, p=p)


def test_shared_documents_need_array_contains_of_the_callers_uid(p):
    me, mine = sign_up()
    other, _ = sign_up()
    put(p, "groups/g1", {"members": arr(s(me), s(other))})
    put(p, "groups/g2", {"members": arr(s(other))})

    allowed = query(p, "groups", field_filter("members", "ARRAY_CONTAINS", s(me)), headers=mine)
    assert allowed.status_code == 200, allowed.text
    assert ids(allowed.json()) == ["g1"]

    for where in (field_filter("members", "ARRAY_CONTAINS", s(other)),   # another uid
                  None,                                                 # no filter at all
                  field_filter("members", "ARRAY_CONTAINS_ANY", arr(s(me), s(other)))):
        denied = query(p, "groups", where, headers=mine)
        assert denied.status_code == 403, (where, denied.text)
        assert denied.json()["error"]["status"] == "PERMISSION_DENIED"

    assert query(p, "groups", field_filter("members", "ARRAY_CONTAINS_ANY", arr(s(me))), headers=mine).status_code == 200


def test_has_any_is_proven_per_array_contains_any_value(p):
    _, headers = sign_up()
    put(p, "tagged/t1", {"tags": arr(s("a"), s("z"))})
    ok = query(p, "tagged", field_filter("tags", "ARRAY_CONTAINS_ANY", arr(s("a"), s("b"))), headers=headers)
    assert ok.status_code == 200 and ids(ok.json()) == ["t1"]
    assert query(p, "tagged", field_filter("tags", "ARRAY_CONTAINS_ANY", arr(s("a"), s("z"))), headers=headers).status_code == 403


def test_a_range_filter_at_or_inside_the_rules_bound_is_allowed(p):
    _, headers = sign_up()
    now = datetime.datetime.now(datetime.timezone.utc)
    put(p, "recent/r1", {"createdAt": ts(now - datetime.timedelta(minutes=5))})
    put(p, "cheap/c1", {"price": {"integerValue": "10"}})
    put(p, "cheap/c2", {"price": {"integerValue": "150"}})

    recent = query(p, "recent", field_filter("createdAt", "GREATER_THAN", ts(now - datetime.timedelta(hours=1))),
                   headers=headers, orderBy=[{"field": {"fieldPath": "createdAt"}, "direction": "DESCENDING"}], limit=10)
    assert recent.status_code == 200, recent.text
    assert ids(recent.json()) == ["r1"]
    older = query(p, "recent", field_filter("createdAt", "GREATER_THAN", ts(now - datetime.timedelta(days=2))), headers=headers)
    assert older.status_code == 403

    for op, value, status in (("LESS_THAN", {"integerValue": "50"}, 200),
                              ("LESS_THAN_OR_EQUAL", {"integerValue": "99"}, 200),
                              ("LESS_THAN_OR_EQUAL", {"integerValue": "100"}, 403),
                              ("LESS_THAN", {"integerValue": "200"}, 403),   # every stored price passes, the query does not prove it
                              ("GREATER_THAN", {"integerValue": "5"}, 403)):
        r = query(p, "cheap", field_filter("price", op, value), headers=headers)
        assert r.status_code == status, (op, value, r.text)
        if status == 200:
            assert ids(r.json()) == ["c1"]


def test_exclusions_and_in(p):
    _, headers = sign_up()
    put(p, "live/l1", {"status": s("open")})
    assert query(p, "live", field_filter("status", "NOT_EQUAL", s("deleted")), headers=headers).status_code == 200
    assert query(p, "live", field_filter("status", "NOT_IN", arr(s("deleted"), s("spam"))), headers=headers).status_code == 200
    assert query(p, "live", field_filter("status", "NOT_EQUAL", s("spam")), headers=headers).status_code == 403

    assert query(p, "status", field_filter("status", "IN", arr(s("a"))), headers=headers).status_code == 200
    assert query(p, "status", field_filter("status", "IN", arr(s("a"), s("b"))), headers=headers).status_code == 200
    assert query(p, "status", field_filter("status", "IN", arr(s("a"), s("c"))), headers=headers).status_code == 403


def test_a_denial_names_the_condition_the_query_does_not_prove(p):
    _, headers = sign_up()
    r = query(p, "cheap", field_filter("price", "GREATER_THAN", {"integerValue": "5"}), headers=headers)
    assert r.status_code == 403
    message = r.json()["error"]["message"]
    # Firestore's wording first, then the rules' account of the denial.
    first, _, trace = message.partition("\n")
    assert first == "Missing or insufficient permissions." and trace.startswith("evaluation error at L7:"), message
    assert "for 'list' @ L7" in message
