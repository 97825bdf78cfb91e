"""Resource names, database ids and numbers in strings, each case with the same requests against
Hearth and the official Cloud Firestore emulator (docs/benchmarks.md, *Faithfulness after the
thirty-third session, round eight (faith34)*).

- A database id no document can be written to (`x y`, `(other)`, `..`, `__x__`, over 100 bytes) is
  refused on a write, in the emulator's words; deletes there answer as for any missing document.
- A document name that departs from `projects/{p}/databases/{d}/documents/…` is reported where it
  departs: a trailing `/`, an empty project, database or collection id, `documentsx`, the database's
  own `…/documents`, a collection id over 1,500 bytes (the key path element's *kind*).
- gRPC's `database` and `parent` fields, malformed, are refused with the emulator's messages
  (Hearth answered NOT_FOUND "HTTP 404": they became REST paths no route took).
- Numbers in strings are decimal: `0x10` is no integer and `0x1p3` no double (Swift's `Double(_:)`
  read them as C's `strtod` does).
- A leap second (`23:59:60Z`) is no timestamp on Hearth, as Google's JSON parser refuses it; the
  emulator rolls it over into the next minute (each server's answer).
- A commit of no writes answers `{}`, no commit time, as production does (Hearth gave one).
- The limits on values and ids, identical on both: a string or bytes value of 1,048,487 bytes (1 MiB
  − 89) and one byte more, field names and ids of 1,500 and 1,501 bytes.
"""
import base64
import os
import urllib.parse
import uuid

import grpc
import pytest

from test_limits_differential import _call, _ld
from test_paths_listen_rpcs_differential import rest as _rest


def project():
    return os.environ["HEARTH_PROJECT"]


def rest(host, method, path, body=None, database="(default)"):
    root = f"/v1/projects/{project()}/databases/{urllib.parse.quote(database, safe='()')}/documents"
    return _rest(host, method, path, body, root=root)


def answer(call):
    """"OK", or the error's status and message."""
    status, body = call
    return "OK" if status == 200 else (body["error"]["status"], body["error"]["message"])


def name(path, database="(default)"):
    return f"projects/{project()}/databases/{database}/documents/{path}"


def put(host, document_name, fields=None):
    return answer(rest(host, "POST", ":commit", {"writes": [{"update": {"name": document_name, "fields": fields or {}}}]}))


def coll_id(prefix):
    return prefix + uuid.uuid4().hex[:10]


BAD = "INVALID_ARGUMENT"


@pytest.mark.parametrize("database, want", [
    ("other", "OK"), ("Other", "OK"), ("a_b.c-d", "OK"), ("a" * 100, "OK"),
    ("x y", 'Illegal string "x y" in database.'),
    ("(other)", 'Illegal string "(other)" in database.'),
    ("a+b", 'Illegal string "a+b" in database.'),
    ("caf\u00e9", 'Illegal string "caf\u00e9" in database.'),
    ("a" * 101, "The database is longer than 100 bytes."),
    ("__x__", 'The database "__x__" is reserved.'),
    ("..", None),  # reported in the document name, below
])
def test_a_database_id_no_document_can_be_written_to(emulator_host, database, want):
    c = coll_id("db")
    got = put(emulator_host, name(f"{c}/d", database))
    if want is None:
        at = len(f"projects/{project()}/databases/")
        want = f'Document name "{name(f"{c}/d", database)}" contains a database id "{database}" at index {at}.'
    assert got == (want if want == "OK" else (BAD, want))
    if want != "OK":
        # The same through the database's own URL; a delete there finds nothing and answers {} (but
        # `..` is refused in the name whatever the write).
        delete = answer(rest(emulator_host, "POST", ":commit", {"writes": [{"delete": name(f"{c}/d", database)}]}))
        if database == "..":
            assert delete == (BAD, want)
        else:
            assert answer(rest(emulator_host, "PATCH", f"/{c}/d", {"fields": {}}, database=database)) == (BAD, want)
            assert delete == "OK"


def test_names_departing_from_the_pattern(emulator_host):
    c = coll_id("nm")
    root = f"projects/{project()}/databases/(default)"
    long_id = "k" * 1501
    cases = [
        (f"{root}/documents/{c}/d/", f'Document name "{root}/documents/{c}/d/" has invalid trailing "/".'),
        (f"{root}/documents/{c}/", f'Document name "{root}/documents/{c}/" has invalid trailing "/".'),
        (f"{root}/documents/", f'Document name "{root}/documents/" is invalid: Omit trailing "/".'),
        (f"{root}/", f'Document name "{root}/" has invalid trailing "/".'),
        (f"{root}/documents", f'Document name "{root}/documents" is invalid: Omit "/documents" when referencing a '
                              f'database (except as the parent of a document).'),
        (f"{root}/documents//{c}/d", f'Document name "{root}/documents//{c}/d" lacks a collection id at index {len(root) + 11}.'),
        (f"{root}/documents/{c}/d//e/f",
         f'Document name "{root}/documents/{c}/d//e/f" lacks a collection id at index {len(root) + 11 + len(c) + 3}.'),
        (f"{root}/documents/{c}//d", f'Document name "{root}/documents/{c}//d" lacks a resource id at index {len(root) + 11 + len(c) + 1}.'),
        (f"projects//databases/d/documents/{c}/d", f'Document name "projects//databases/d/documents/{c}/d" lacks a project id at index 9.'),
        (f"projects/p/databases//documents/{c}/d", f'Document name "projects/p/databases//documents/{c}/d" lacks a database id at index 21.'),
        (f"{root}/documentsx/{c}/d", f'Document name "{root}/documentsx/{c}/d" lacks "/" at index {len(root) + 10}.'),
        (f"{root}/documents/{long_id}/d", "The key path element kind is longer than 1500 bytes."),
        (f"{root}/documents/{c}/{long_id}", "The key path element name is longer than 1500 bytes."),
    ]
    assert [put(emulator_host, n) for n, _ in cases] == [(BAD, m) for _, m in cases]


# ---- gRPC's database and parent fields -----------------------------------------------------------

@pytest.mark.parametrize("database, want", [
    ("projects/x", 'Database name "projects/x" lacks "/" at index 10.'),
    ("", 'Database name "" lacks "projects" at index 0.'),
    ("x", 'Database name "x" lacks "projects" at index 0.'),
    ("projects/p/databases", 'Database name "projects/p/databases" lacks "/" at index 20.'),
    ("projects/p/databases/", 'Database name "projects/p/databases/" has invalid trailing "/".'),
    ("projects//databases/d", 'Database name "projects//databases/d" lacks a project id at index 9.'),
    ("projects/p/databases/(default)/", 'Database name "projects/p/databases/(default)/" has invalid trailing "/".'),
    ("projects/p/databases/(default)/documents", 'Database name "projects/p/databases/(default)/documents" has extra characters at index 30.'),
])
def test_a_malformed_database_field_over_grpc(emulator_host, database, want):
    field = _ld(1, database.encode()) if database else b""
    write = _ld(2, _ld(1, _ld(1, name(coll_id("g") + "/d").encode())))
    assert _call(emulator_host, "Commit", field + write) == (BAD, want)
    assert _call(emulator_host, "BeginTransaction", field) == (BAD, want)
    assert _call(emulator_host, "BatchWrite", field + write) == (BAD, want)
    assert _call(emulator_host, "BatchGetDocuments", field + _ld(2, name("c/d").encode()), stream=True) == (BAD, want)


@pytest.mark.parametrize("parent, want", [
    ("projects/x", 'Document parent name "projects/x" lacks "/" at index 10.'),
    ("", 'Document parent name "" lacks "projects" at index 0.'),
    ("projects/p/databases/(default)", 'Document parent name "projects/p/databases/(default)" lacks "/" at index 30.'),
    ("projects/p/databases/(default)/documentsx", 'Document parent name "projects/p/databases/(default)/documentsx" lacks "/" at index 40.'),
    ("projects/p/databases//documents", 'Document parent name "projects/p/databases//documents" lacks a database id at index 21.'),
    ("projects/p/databases/(default)/documents/", 'Document parent name "projects/p/databases/(default)/documents/" is invalid: Omit trailing "/".'),
    ("projects/p/databases/(default)/documents//d", 'Document parent name "projects/p/databases/(default)/documents//d" lacks a collection id at index 41.'),
    ("projects/p/databases/(default)/documents/c/d/", 'Document parent name "projects/p/databases/(default)/documents/c/d/" has invalid trailing "/".'),
    ("projects/p/databases/(default)/documents/c", 'Document parent name "projects/p/databases/(default)/documents/c" lacks "/" at index 42.'),
])
def test_a_malformed_parent_field_over_grpc(emulator_host, parent, want):
    field = _ld(1, parent.encode()) if parent else b""
    assert _call(emulator_host, "RunQuery", field + _ld(2, _ld(2, _ld(2, b"c"))), stream=True) == (BAD, want)
    assert _call(emulator_host, "ListCollectionIds", field) == (BAD, want)
    assert _call(emulator_host, "ListDocuments", field + _ld(2, b"c")) == (BAD, want)


# ---- values ----------------------------------------------------------------------------------------

def _stored(host, c, value):
    got = put(host, name(f"{c}/d"), {"v": value})
    if got != "OK":
        return got[0]
    return rest(host, "GET", f"/{c}/d")[1]["fields"]["v"]


def test_numbers_in_strings_are_decimal(emulator_host):
    c = coll_id("num")
    for text in ["0x10", "0X10", "0x1p4"]:
        assert _stored(emulator_host, c, {"integerValue": text}) == BAD
    for text in ["0x1p3", "0x10", "0x.8p1", "infinity", "-inf"]:
        assert _stored(emulator_host, c, {"doubleValue": text}) == BAD
    for text, want in [("1e3", "1000"), ("+5", "5"), (".5e1", "5"), ("5.", "5"), ("0010", "10"), ("-0", "0")]:
        assert _stored(emulator_host, c, {"integerValue": text}) == {"integerValue": want}
    for text, want in [("1e3", 1000.0), ("+1", 1.0), (".5", 0.5), ("5.", 5.0), ("-Infinity", "-Infinity"), ("NaN", "NaN")]:
        assert _stored(emulator_host, c, {"doubleValue": text}) == {"doubleValue": want}


def test_a_leap_second_is_not_a_time(emulator_host, target):
    c = coll_id("ts")
    for text, rolled in [("2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"), ("2020-01-01T24:00:00Z", "2020-01-02T00:00:00Z")]:
        got = _stored(emulator_host, c, {"timestampValue": text})
        # Google's parser takes seconds 0-59 and hours 0-23; the emulator's rolls them over.
        assert got == ({"timestampValue": rolled} if target == "official" else BAD)
    for text in ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"]:
        assert _stored(emulator_host, c, {"timestampValue": text}) == {"timestampValue": text}
    for text in ["0000-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "2020-01-01T00:00:00"]:
        assert _stored(emulator_host, c, {"timestampValue": text}) == BAD


def test_value_and_id_limits(emulator_host):
    c = coll_id("lim")
    most = 1048487  # 1 MiB - 89 bytes
    assert put(emulator_host, name(f"{c}/s"), {"s": {"stringValue": "x" * most}}) == "OK"
    assert put(emulator_host, name(f"{c}/s"), {"s": {"stringValue": "x" * (most + 1)}}) == \
        (BAD, f'The value of property "s" is longer than {most} bytes.')
    b64 = lambda n: base64.b64encode(b"x" * n).decode()  # noqa: E731
    assert put(emulator_host, name(f"{c}/b"), {"b": {"bytesValue": b64(most)}}) == "OK"
    assert put(emulator_host, name(f"{c}/b"), {"b": {"bytesValue": b64(most + 1)}}) == \
        (BAD, f'The value of property "b" is longer than {most} bytes.')
    assert put(emulator_host, name(f"{c}/f"), {"a" * 1500: {"nullValue": None}}) == "OK"
    assert put(emulator_host, name(f"{c}/f"), {"a" * 1501: {"nullValue": None}}) == (BAD, "The property.name is longer than 1500 bytes.")
    assert put(emulator_host, name(f"{c}/{'d' * 1500}")) == "OK"
    too_long = "\u00e9" * 751  # 1,502 bytes
    assert put(emulator_host, name(f"{c}/{too_long}")) == (BAD, "The key path element name is longer than 1500 bytes.")


def test_a_commit_of_no_writes_has_no_commit_time(emulator_host):
    """As Firestore answers (nodejs-firestore #293) and the emulator does: `{}`, over REST and gRPC,
    in a transaction or not."""
    assert rest(emulator_host, "POST", ":commit", {}) == (200, {})
    assert rest(emulator_host, "POST", ":commit", {"writes": []}) == (200, {})
    for options in [{}, {"options": {"readOnly": {}}}]:
        _, begun = rest(emulator_host, "POST", ":beginTransaction", options)
        assert rest(emulator_host, "POST", ":commit", {"transaction": begun["transaction"]}) == (200, {})
    from google.cloud.firestore_v1 import types
    with grpc.insecure_channel(emulator_host) as channel:
        rpc = channel.unary_unary("/google.firestore.v1.Firestore/Commit", request_serializer=types.CommitRequest.serialize,
                                  response_deserializer=types.CommitResponse.deserialize)
        response = rpc(types.CommitRequest(database=f"projects/{project()}/databases/(default)"),
                       metadata=[("authorization", "Bearer owner")])
        assert "commit_time" not in response and not response.write_results
