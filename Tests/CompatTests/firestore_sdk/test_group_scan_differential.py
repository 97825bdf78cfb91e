"""Collection-group queries as real clients send them, and REST's strings and timestamps, on Hearth
and the official emulator with the same assertions. Hearth builds the collection-group scan index
(`fs_documents_group`) only when a collection-group query first needs it; until then, and in a
snapshot older than the build, a group scan walks the space's documents and filters them
(docs/firestore.md, *The collection-group scan index, built when first needed*). The answers here are
worked out from the documents written, so the scan and the index are held to the same answer; the
tests at the end start their own Hearth on a data directory so that each shape is the first
collection-group query of its file, a fresh one and one written before the change. REST's JSON
strings are written eight bytes at a time where nothing needs an escape, and timestamps through a
buffer (docs/benchmarks.md, txn28): every escape class at the word boundaries, and timestamps at the
edges, round-trip as the emulator returns them. The twenty-eighth session's probe (faith28)."""
import datetime
import os
import sqlite3
import threading
import time
import uuid

import pytest
import requests
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

from hearthharness import start_hearth_on, stop_hearth


def name(prefix):
    return prefix + uuid.uuid4().hex[:10]


def where(query, field, op, value):
    return query.where(filter=FieldFilter(field, op, value))


def paths(query, **kw):
    return [s.reference.path for s in query.stream(**kw)]


def write_group(db, gid):
    """Documents of group `gid` under several parents (a top-level collection, users' documents, a
    document of the group itself), and neighbours that must not match (another id under the same
    parents, an id that extends `gid`). Returns {path: data} of the group's documents."""
    docs = {}
    batch = db.batch()
    for u in range(4):
        for i in range(6):
            docs[f"users/u{u}/{gid}/p{u}{i}"] = {"n": (u * 7 + i * 3) % 10, "u": u, "t": f"s{i}", "tags": [i % 3, u], "x": i * 1.5}
    docs[f"{gid}/top1"] = {"n": 4, "u": -1, "t": "top", "tags": [], "x": 0.0}
    docs[f"other/o/{gid}/zz"] = {"n": 1, "u": 9, "t": "zz", "tags": [9], "x": 2.0}
    docs[f"users/u1/{gid}/p10/{gid}/deep"] = {"n": 5, "u": 1, "t": "deep", "tags": [1], "x": 3.0}
    for path, data in docs.items():
        batch.set(db.document(path), data)
    batch.set(db.document(f"users/u1/{gid}x/n1"), {"n": 5})
    batch.set(db.document(f"users/u1/notes/{gid}"), {"n": 5})
    batch.set(db.document("users/u1"), {"name": "one"})
    batch.commit()
    return docs


def by(docs, pred=lambda d: True, key=None, reverse=False):
    """The paths of `docs` passing `pred`, in the query's order: `key` then name (Firestore's
    implicit order on the last order's direction), or by name."""
    hits = [p for p, d in docs.items() if pred(d)]
    if key is None:
        return sorted(hits, reverse=reverse)
    return sorted(hits, key=lambda p: (key(docs[p]), p), reverse=reverse)


def in_a_transaction(db, query, total):
    """The paths a read-write transaction reads from `query`, after it committed their count."""
    @firestore.transactional
    def body(tr):
        hits = [s.reference.path for s in tr.get(query)]
        tr.set(total, {"n": len(hits)})
        return hits
    hits = body(db.transaction())
    assert total.get().to_dict() == {"n": len(hits)}
    return hits


def group_shapes(db, gid, docs):
    """(name, what the client answers, what the documents say) for the shapes users send."""
    g = db.collection_group(gid)
    snap = db.document(f"users/u1/{gid}/p12").get()
    all_paths = by(docs)
    u1 = db.document("users/u1")
    return [
        ("plain", lambda: paths(g), all_paths),
        ("where", lambda: paths(where(g, "n", ">=", 5)), by(docs, lambda d: d["n"] >= 5, key=lambda d: d["n"])),
        ("order_desc", lambda: paths(g.order_by("n", direction="DESCENDING")), by(docs, key=lambda d: d["n"], reverse=True)),
        ("limit", lambda: paths(g.limit(5)), all_paths[:5]),
        ("limit_to_last", lambda: [s.reference.path for s in g.order_by("n").limit_to_last(4).get()],
         by(docs, key=lambda d: d["n"])[-4:]),
        ("offset", lambda: paths(g.offset(7).limit(5)), all_paths[7:12]),
        ("select", lambda: [(s.reference.path, s.to_dict()) for s in g.select(["t"]).limit(6).stream()],
         [(p, {"t": docs[p]["t"]}) for p in all_paths[:6]]),
        ("start_after_snapshot", lambda: paths(g.start_after(snap).limit(6)),
         [p for p in all_paths if p > snap.reference.path][:6]),
        ("name_descending", lambda: paths(g.order_by(FieldPath.document_id(), direction="DESCENDING").limit(7)),
         by(docs, reverse=True)[:7]),
        ("count", lambda: g.count().get()[0][0].value, len(docs)),
        ("sum_avg", lambda: sorted((r.alias, r.value) for r in g.sum("n", alias="s").avg("x", alias="a").get()[0]),
         sorted([("s", sum(d["n"] for d in docs.values())), ("a", sum(d["x"] for d in docs.values()) / len(docs))])),
        ("count_where", lambda: where(g, "u", "==", 1).count().get()[0][0].value, len(by(docs, lambda d: d["u"] == 1))),
        ("under_a_document_by_name", lambda: paths(where(where(g, "__name__", ">=", u1), "__name__", "<", db.document("users/u1\uffff"))),
         [p for p in all_paths if p.startswith("users/u1/")]),
        ("name_range", lambda: paths(g.order_by("__name__").start_at({"__name__": db.document("users/u2")})
                                     .end_before({"__name__": db.document("users/u3")})),
         [p for p in all_paths if p.startswith("users/u2/")]),
        ("array_contains", lambda: paths(where(g, "tags", "array_contains", 1)), by(docs, lambda d: 1 in d["tags"])),
        ("in", lambda: paths(where(g, "t", "in", ["s1", "zz", "deep"])), by(docs, lambda d: d["t"] in ("s1", "zz", "deep"))),
        ("partitions", lambda: sorted(s.reference.path for p in g.get_partitions(3) for s in p.query().stream()), all_paths),
        ("in_a_transaction", lambda: in_a_transaction(db, where(g, "u", "==", 2), db.document(f"totals/{gid}")),
         by(docs, lambda d: d["u"] == 2)),
    ]


def test_collection_group_shapes(db, target):
    """Each shape a user sends to a collection group, answered as the documents say; then again
    (Hearth: the first scans without the group index or builds it, the second reads it). The
    emulator does not implement partitionQuery and refuses descending key scans (docs/firestore.md,
    *Deviations*), so only Hearth is asked for those two."""
    gid = name("cg")
    docs = write_group(db, gid)
    for _ in range(2):
        for shape, ask, expected in group_shapes(db, gid, docs):
            if shape in ("partitions", "name_descending") and target == "official":
                continue
            assert ask() == expected, shape


def test_collection_group_under_a_document_over_rest(emulator_host, target):
    """REST runQuery with `allDescendants` under the root, and under a document: the parent's
    descendants of that id only (`CollectionSelector.allDescendants` "selects all descendant
    collections" of the request's parent), ordered both ways, as REST clients send it. The emulator
    refuses a collection group under a document ("only allowed at the root parent"); Firestore's
    runQuery serves it, and so does Hearth (docs/firestore.md, *Decisions where the official
    emulator differs*)."""
    project = os.environ.get("HEARTH_PROJECT", "demo-hearth")
    base, headers = rest(emulator_host)
    gid = name("cgr")
    writes = [{"update": {"name": f"projects/{project}/databases/(default)/documents/{p}", "fields": {"n": {"integerValue": str(n)}}}}
              for p, n in [(f"users/a/{gid}/1", 3), (f"users/a/{gid}/2", 1), (f"users/a/x/y/{gid}/3", 2),
                           (f"users/b/{gid}/4", 9), (f"users/aa/{gid}/5", 0), (f"{gid}/6", 5)]]
    r = requests.post(f"{base}:commit", json={"writes": writes}, headers=headers, timeout=60)
    assert r.status_code == 200, r.text

    def run(parent, order, limit=None):
        q = {"from": [{"collectionId": gid, "allDescendants": True}], "orderBy": [order]}
        if limit:
            q["limit"] = limit
        return requests.post(f"{base}{parent}:runQuery", json={"structuredQuery": q}, headers=headers, timeout=60)

    def names(r):
        assert r.status_code == 200, r.text
        return [row["document"]["name"].split("/documents/")[1] for row in r.json() if "document" in row]

    by_n = {"field": {"fieldPath": "n"}, "direction": "DESCENDING"}
    assert names(run("", by_n, limit=4)) == [f"users/b/{gid}/4", f"{gid}/6", f"users/a/{gid}/1", f"users/a/x/y/{gid}/3"]
    if target == "official":
        r = run("/users/a", by_n)
        assert r.status_code == 400 and "only allowed at the root parent" in r.json()["error"]["message"], r.text
        return
    by_name = {"field": {"fieldPath": "__name__"}, "direction": "DESCENDING"}
    assert names(run("/users/a", by_n)) == [f"users/a/{gid}/1", f"users/a/x/y/{gid}/3", f"users/a/{gid}/2"]
    assert names(run("/users/a", by_name)) == [f"users/a/x/y/{gid}/3", f"users/a/{gid}/2", f"users/a/{gid}/1"]
    assert names(run("", by_name, limit=3)) == [f"users/b/{gid}/4", f"users/aa/{gid}/5", f"users/a/x/y/{gid}/3"]


def test_group_queries_at_a_read_time(db):
    """A collection group at a read time before deletes and creates (the history merged with the
    scan), filtered and counted, then now, then at the read time again."""
    gid = name("cgh")
    batch = db.batch()
    for i in range(20):
        batch.set(db.document(f"u/{i % 3}/{gid}/d{i:02d}"), {"v": i})
    t0 = batch.commit()[-1].update_time
    time.sleep(0.05)
    batch = db.batch()
    for i in range(0, 20, 2):
        batch.delete(db.document(f"u/{i % 3}/{gid}/d{i:02d}"))
    for i in range(20, 25):
        batch.set(db.document(f"u/x/{gid}/d{i:02d}"), {"v": i})
    batch.commit()
    g = db.collection_group(gid)
    then = {f"u/{i % 3}/{gid}/d{i:02d}": i for i in range(20)}
    now = {**{f"u/{i % 3}/{gid}/d{i:02d}": i for i in range(1, 20, 2)}, **{f"u/x/{gid}/d{i:02d}": i for i in range(20, 25)}}
    for state, kw in [(then, {"read_time": t0}), (now, {}), (then, {"read_time": t0})]:
        assert paths(g, **kw) == sorted(state)
        assert paths(where(g, "v", ">=", 15), **kw) == sorted((p for p, v in state.items() if v >= 15), key=state.get)
        assert g.count().get(**kw)[0][0].value == len(state)


def test_group_listener_started_before_any_group_query(db):
    """A listener on a new collection group, started before any query of it, sees the documents
    written later, updated into and out of its filter and deleted."""
    gid = name("cgl")
    seen = []
    listener = where(db.collection_group(gid), "n", "==", 5).on_snapshot(
        lambda snaps, changes, read_time: seen.append(sorted(s.reference.path for s in snaps)))
    try:
        docs = write_group(db, gid)
        db.document(f"users/u3/{gid}/new").set({"n": 5})
        db.document(f"users/u0/{gid}/p00").update({"n": 5})
        db.document(f"users/u1/{gid}/p10/{gid}/deep").delete()
        docs[f"users/u3/{gid}/new"] = {"n": 5}
        docs[f"users/u0/{gid}/p00"]["n"] = 5
        del docs[f"users/u1/{gid}/p10/{gid}/deep"]
        expected = by(docs, lambda d: d["n"] == 5)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not seen or seen[-1] != expected):
            time.sleep(0.05)
        assert seen and seen[-1] == expected
    finally:
        listener.unsubscribe()


def test_transaction_with_a_group_query_commits(db):
    """A read-write transaction that reads a collection group and writes what it summed."""
    gid = name("cgt")
    docs = write_group(db, gid)
    total = db.document(f"totals/{gid}")

    @firestore.transactional
    def body(tr):
        hits = list(tr.get(where(db.collection_group(gid), "u", "==", 2)))
        tr.set(total, {"sum": sum(s.to_dict()["n"] for s in hits), "n": len(hits)})
        return [s.reference.path for s in hits]

    mine = by(docs, lambda d: d["u"] == 2)
    assert body(db.transaction()) == mine
    assert total.get().to_dict() == {"sum": sum(docs[p]["n"] for p in mine), "n": len(mine)}


def test_group_queries_while_writes_go_on(db):
    """Collection-group queries and counts while two clients create documents of the group: every
    document acknowledged before a query began is in its answer, in name order."""
    gid = name("cgw")
    acked = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(w):
        k = 0
        while not stop.is_set() and k < 150:
            db.document(f"users/w{w}/{gid}/d{k:04d}").set({"k": k})
            with lock:
                acked.append(f"users/w{w}/{gid}/d{k:04d}")
            k += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    try:
        g = db.collection_group(gid)
        for _ in range(5):
            with lock:
                before = set(acked)
            got = paths(g)
            assert got == sorted(got) and before <= set(got)
            with lock:
                before = len(acked)
            assert g.count().get()[0][0].value >= before
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert paths(db.collection_group(gid)) == sorted(acked)


# --- REST's strings and timestamps ---------------------------------------------------------------

def escape_strings():
    """Every escape class, alone and at the end, middle and start of strings of 7 to 25 bytes
    (around an eight-byte word), and near misses (other E2 sequences, DEL, bytes above 0x7F)."""
    s = {
        "controls": "".join(chr(i) for i in range(0x20)),
        "quote_backslash_slash": 'a"b\\c/d',
        "separators": "x\u2028y\u2029z",
        "separator_at_8": "abcdefg\u2028",
        "near_separators": "\u2020\u20ac\u2027\u202a\u2030",
        "multibyte": "caf\u00e9 \u65e5\u672c \U0001F600",
        "del_and_html": "\x7f~<script>&'=",
        "nul_in_the_middle": "abcdefgh\x00ijklmnop",
    }
    for n in (7, 8, 9, 15, 16, 17, 24, 25):
        s[f"plain{n}"] = "abcdefghijklmnopqrstuvwxyz"[:n]
        s[f"quote_last{n}"] = "a" * (n - 1) + '"'
        s[f"newline_last{n}"] = "a" * (n - 1) + "\n"
        s[f"separator_last{n}"] = "a" * (n - 3) + "\u2028"
        s[f"unit_separator_last{n}"] = "b" * (n - 1) + "\x1f"
        s[f"backslash_last{n}"] = "c" * (n - 1) + "\\"
        s[f"tab_middle{n}"] = "d" * (n // 2) + "\t" + "d" * (n - n // 2 - 1)
        s[f"dagger_last{n}"] = "e" * (n - 3) + "\u2020"
        s[f"first_quote{n}"] = '"' + "f" * (n - 1)
    return s


def rest(emulator_host):
    project = os.environ.get("HEARTH_PROJECT", "demo-hearth")
    return f"http://{emulator_host}/v1/projects/{project}/databases/(default)/documents", {"Authorization": "Bearer owner"}


def test_rest_strings_round_trip_with_every_escape(emulator_host):
    """Strings as values, as field names and in document ids come back as sent from a write's answer,
    a get, a listing and a collection-group runQuery."""
    base, headers = rest(emulator_host)
    cid = name("esc")
    strings = escape_strings()
    fields = {k: {"stringValue": v} for k, v in strings.items()}
    fields['k"ey\n\u2028' + "x" * 9] = {"stringValue": "name with escapes"}
    fields["m"] = {"mapValue": {"fields": {v: {"stringValue": v} for v in strings.values() if v and "\x00" not in v}}}
    doc_id = 'id "quoted" \\ \u2028 tab\t' + "x" * 5
    r = requests.patch(f"{base}/{cid}/{requests.utils.quote(doc_id, safe='')}", json={"fields": fields}, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["fields"] == fields
    assert r.json()["name"].endswith(f"/{cid}/{doc_id}")
    got = requests.get(f"{base}/{cid}/{requests.utils.quote(doc_id, safe='')}", headers=headers, timeout=60).json()
    assert got["fields"] == fields
    listed = requests.get(f"{base}/{cid}", headers=headers, timeout=60).json()["documents"]
    assert [d["fields"] for d in listed] == [fields]
    rows = requests.post(f"{base}:runQuery", json={"structuredQuery": {"from": [{"collectionId": cid, "allDescendants": True}]}},
                         headers=headers, timeout=60).json()
    assert [row["document"]["fields"] for row in rows if "document" in row] == [fields]


# Bodies that are not JSON text: a raw control character in a string (RFC 8259 section 7: they
# MUST be escaped), bytes that are not UTF-8 (RFC 8259 section 8.1; a proto3 string holds UTF-8
# only) and escapes of unpaired surrogates (no Unicode scalar value). Hearth refuses them as Google's
# frontends refuse a body that is not JSON; the emulator repairs them (U+FFFD, "?") and stores text
# the client never sent.
NOT_JSON_TEXT = {
    "raw_tab": (b'"a\tb"', "a\tb", "Control character in string"),
    "invalid_byte": (b'"a\xffb"', "a\ufffdb", "Invalid UTF-8 in string"),
    "overlong": (b'"a\xc0\xafb"', "a\ufffd\ufffdb", "Invalid UTF-8 in string"),
    "encoded_surrogate": (b'"a\xed\xa0\x80b"', "a\ufffdb", "Invalid UTF-8 in string"),
    "lone_high_escape": (b'"a\\ud800b"', "a?b", "Unpaired surrogate"),
    "lone_low_escape": (b'"a\\udc00b"', "a?b", "Unpaired surrogate"),
    "reversed_pair": (b'"\\ude00\\ud83d"', "??", "Unpaired surrogate"),
}


@pytest.mark.parametrize("case", sorted(NOT_JSON_TEXT))
def test_rest_bodies_that_are_not_json_text(emulator_host, target, case):
    base, headers = rest(emulator_host)
    literal, repaired, message = NOT_JSON_TEXT[case]
    body = b'{"fields":{"s":{"stringValue":' + literal + b'}}}'
    r = requests.patch(f"{base}/{name('bad')}/d", data=body, headers={**headers, "Content-Type": "application/json"}, timeout=60)
    if target == "official":
        assert r.status_code == 200 and r.json()["fields"]["s"]["stringValue"] == repaired, r.text
        return
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and error["message"].startswith("Invalid JSON payload received. " + message), error


# (sent, as both servers render it): microseconds kept, finer digits cut, 0, 3 or 6 digits out.
TIMESTAMPS = [
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
    ("0001-01-01T00:00:00.000001Z", "0001-01-01T00:00:00.000001Z"),
    ("0400-12-31T00:00:00.9Z", "0400-12-31T00:00:00.900Z"),
    ("1600-02-29T23:59:59Z", "1600-02-29T23:59:59Z"),
    ("1900-03-01T00:00:00.000001Z", "1900-03-01T00:00:00.000001Z"),
    ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.500Z"),
    ("1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z"),
    ("1970-01-01T00:00:00.000001Z", "1970-01-01T00:00:00.000001Z"),
    ("1970-01-01T00:00:00.12Z", "1970-01-01T00:00:00.120Z"),
    ("2020-02-29T12:00:00.010Z", "2020-02-29T12:00:00.010Z"),
    ("2020-02-29T12:00:00.100000Z", "2020-02-29T12:00:00.100Z"),
    ("2020-02-29T12:00:00.123456789Z", "2020-02-29T12:00:00.123456Z"),
    ("2020-02-29T12:00:00.000000001Z", "2020-02-29T12:00:00Z"),
    ("2020-06-01T00:00:00+05:30", "2020-05-31T18:30:00Z"),
    ("2020-06-01T00:00:00.5-01:00", "2020-06-01T01:00:00.500Z"),
    ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
    ("9999-12-31T23:59:59.999999999Z", "9999-12-31T23:59:59.999999Z"),
]


def test_rest_timestamps_at_the_edges(emulator_host):
    """Timestamps at the first and last representable instants, before 1970, with 1 to 9 fraction
    digits and offsets: the write's answer and a get render the same text, and a query orders them."""
    base, headers = rest(emulator_host)
    cid = name("ts")
    for i, (sent, rendered) in enumerate(TIMESTAMPS):
        r = requests.patch(f"{base}/{cid}/t{i:02d}", json={"fields": {"t": {"timestampValue": sent}}}, headers=headers, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["fields"]["t"]["timestampValue"] == rendered, sent
        got = requests.get(f"{base}/{cid}/t{i:02d}", headers=headers, timeout=60).json()
        assert got["fields"]["t"]["timestampValue"] == rendered, sent
    rows = requests.post(f"{base}:runQuery", json={"structuredQuery": {"from": [{"collectionId": cid}],
                                                                        "orderBy": [{"field": {"fieldPath": "t"}}]}},
                         headers=headers, timeout=60).json()
    order = [row["document"]["fields"]["t"]["timestampValue"] for row in rows if "document" in row]
    assert order == sorted((rendered for _, rendered in TIMESTAMPS), key=datetime.datetime.fromisoformat)


# --- Hearth alone: the first collection-group query of a file ------------------------------------

FIRST_SHAPES = ["plain", "where", "order_desc", "limit_to_last", "offset", "start_after_snapshot", "name_descending",
                "count", "sum_avg", "under_a_document_by_name", "array_contains", "partitions", "in_a_transaction"]


def hearth_client(ready):
    os.environ["FIRESTORE_EMULATOR_HOST"] = ready["env"]["FIRESTORE_EMULATOR_HOST"]
    return firestore.Client(project=ready["project"], credentials=AnonymousCredentials())


def group_index_exists(data):
    c = sqlite3.connect(os.path.join(data, "firestore.sqlite"))
    try:
        return c.execute("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'fs_documents_group'").fetchone()[0] == 1
    finally:
        c.close()


@pytest.mark.parametrize("old_file", [False, True], ids=["fresh", "old"])
def test_first_group_query_of_a_file(tmp_path, monkeypatch, old_file):
    """Each shape as the very first collection-group query of its data directory — a fresh file, and
    one as a binary before the lazy index left it (the index built with every create, `firestore.8`
    not yet run) — answers as the documents say; then every shape again, and after a restart."""
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", "")
    for shape in FIRST_SHAPES:
        data = str(tmp_path / f"{shape}-{old_file}")
        ready_file = str(tmp_path / f"{shape}-{old_file}.json")
        proc, ready = start_hearth_on(data, ready_file)
        try:
            db = hearth_client(ready)
            docs = write_group(db, "posts")
            db.close()
        finally:
            stop_hearth(proc)
        assert not group_index_exists(data)
        if old_file:
            c = sqlite3.connect(os.path.join(data, "firestore.sqlite"))
            c.execute("CREATE INDEX fs_documents_group ON fs_documents (space, collection_id, key)")
            c.execute("DELETE FROM hearth_migrations WHERE id = 'firestore.8'")
            c.commit()
            c.close()
        proc, ready = start_hearth_on(data, ready_file)
        try:
            db = hearth_client(ready)
            shapes = {s: (ask, expected) for s, ask, expected in group_shapes(db, "posts", docs)}
            ask, expected = shapes[shape]
            assert ask() == expected, shape
            for s, (ask, expected) in shapes.items():
                assert ask() == expected, (shape, s)
            db.close()
        finally:
            stop_hearth(proc)
        assert group_index_exists(data)
    proc, ready = start_hearth_on(data, ready_file)
    try:
        db = hearth_client(ready)
        for s, ask, expected in group_shapes(db, "posts", docs):
            assert ask() == expected, s
        db.close()
    finally:
        stop_hearth(proc)
