"""Queries on fields no query has used before, after the writes that make lazy index entries easy
to get wrong, on Hearth and the official emulator with the same assertions. Hearth keeps a field's
index rows only once a query has needed them (docs/firestore.md, *Index entries only for queried
fields*): the first query on a field scans and then builds its rows, later ones read them, and reads
at a `read_time` merge the history with current rows. Every answer here is computed from the
documents the test wrote, so both the scan and the built rows are held to the same answer (the
twenty-fifth session's probe, docs/firestore.md, *Official clients' own test suites*)."""
import time
import uuid

from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath


def name(prefix):
    return prefix + uuid.uuid4().hex[:10]


def ids(query, **kw):
    return [s.id for s in query.stream(**kw)]


def where(query, field, op, value):
    return query.where(filter=FieldFilter(field, op, value))


def commit(db, sets=(), updates=(), deletes=()):
    batch = db.batch()
    for ref, data in sets:
        batch.set(ref, data)
    for ref, data in updates:
        batch.update(ref, data)
    for ref in deletes:
        batch.delete(ref)
    return batch.commit()[-1].update_time


def test_first_queries_after_updates_and_deletes_and_at_a_read_time_before_them(db):
    """Fields first queried after updates, removals, deletes and re-creates (every current document,
    no deleted one), and at a read time before those writes, before and after the rows are built
    (documents since updated or deleted come from the history)."""
    c = db.collection(name("lz"))
    docs = {f"d{i:02d}": {"v": i % 7, "w": i, "m": {"a": i % 4}, "tags": [i % 3]} for i in range(40)}
    t0 = commit(db, sets=[(c.document(k), dict(d)) for k, d in docs.items()])
    then = {k: dict(d) for k, d in docs.items()}
    time.sleep(0.01)
    updates = [(c.document(f"d{i:02d}"), {"v": 100 + i, "m.a": 9, "tags": [7]}) for i in range(0, 10)]
    removals = [(c.document(f"d{i:02d}"), {"w": i}) for i in range(10, 15)]  # set: v, m, tags gone
    deletes = [c.document(f"d{i:02d}") for i in range(15, 25)]
    commit(db, updates=updates, deletes=deletes)
    commit(db, sets=removals + [(c.document(f"d{i:02d}"), {"v": 3, "w": 500 + i, "m": {"a": 1}, "tags": [1]})
                                for i in range(15, 18)])
    for i in range(0, 10):
        docs[f"d{i:02d}"].update({"v": 100 + i, "m": {"a": 9}, "tags": [7]})
    for i in range(10, 15):
        docs[f"d{i:02d}"] = {"w": i}
    for i in range(15, 25):
        del docs[f"d{i:02d}"]
    for i in range(15, 18):
        docs[f"d{i:02d}"] = {"v": 3, "w": 500 + i, "m": {"a": 1}, "tags": [1]}

    def expect(state, pred, key=None):
        hits = [k for k, d in state.items() if pred(d)]
        return sorted(hits, key=(lambda k: (key(state[k]), k)) if key else None)

    shapes = [
        (lambda q: where(q, "v", ">=", 3).order_by("v"), lambda d: d.get("v", -1) >= 3, lambda d: d["v"]),
        (lambda q: where(q, "m.a", "==", 1), lambda d: d.get("m", {}).get("a") == 1, None),
        (lambda q: where(q, "tags", "array_contains", 1), lambda d: 1 in d.get("tags", []), None),
        (lambda q: where(q, "w", "<", 20), lambda d: d["w"] < 20, None),
    ]
    # At the read time first: the fields' first queries.
    for make, pred, key in shapes:
        assert ids(make(c), read_time=t0) == expect(then, pred, key)
    for _ in range(2):  # the first current query of each builds its rows, the second reads them
        for make, pred, key in shapes:
            assert ids(make(c)) == expect(docs, pred, key)
    for make, pred, key in shapes:
        assert ids(make(c), read_time=t0) == expect(then, pred, key)
    counted = where(c, "v", "==", 3).count().get(read_time=t0)[0][0].value
    assert counted == len(expect(then, lambda d: d["v"] == 3))
    assert where(c, "v", "==", 3).count().get()[0][0].value == len(expect(docs, lambda d: d.get("v") == 3))


def test_collection_group_and_composite_queries_on_fields_registered_one_collection_at_a_time(db):
    """A field first queried in one collection has its rows built for every collection of that id,
    collection-group scope included, and keeps them through later writes in a new parent; an
    equality ordered by a second, never-queried field answers alike before and after it is built."""
    cid = name("lzg")
    parents = ["", "p/a/", "p/b/", "q/x/"]
    rows = {}
    sets = []
    for j, parent in enumerate(parents):
        for i in range(8):
            ref = db.collection(f"{parent}{cid}").document(f"i{j}{i}")
            data = {"k": i % 3, "n": (j * 37 + i * 11) % 50}
            rows[ref.path] = data
            sets.append((ref, data))
    commit(db, sets=sets)
    one = db.collection(f"p/a/{cid}")
    assert ids(where(one, "k", "==", 1)) == sorted(p.rsplit("/", 1)[1] for p, d in rows.items()
                                                     if p.startswith(f"p/a/{cid}/") and d["k"] == 1)
    group = db.collection_group(cid)

    def group_k1():
        return sorted(s.reference.path for s in where(group, "k", "==", 1).stream())

    def k1_by_n(limit):
        hits = sorted((d["n"], p) for p, d in rows.items() if d["k"] == 1)
        return [p for _, p in hits[:limit]]

    assert group_k1() == sorted(p for p, d in rows.items() if d["k"] == 1)
    late = db.collection(f"r/new/{cid}").document("late")
    commit(db, sets=[(late, {"k": 1, "n": -1})], updates=[(db.document(f"p/b/{cid}/i21"), {"k": 2})],
           deletes=[db.document(f"q/x/{cid}/i34")])
    rows[late.path] = {"k": 1, "n": -1}
    rows[f"p/b/{cid}/i21"]["k"] = 2
    del rows[f"q/x/{cid}/i34"]
    for _ in range(3):  # the group's own index is built in the background meanwhile
        assert group_k1() == sorted(p for p, d in rows.items() if d["k"] == 1)
        assert [s.reference.path for s in where(group, "k", "==", 1).order_by("n").limit(4).stream()] == k1_by_n(4)
        time.sleep(0.3)


def test_quoted_and_unnormalized_field_names_are_their_own_fields(db):
    """Fields whose paths need quoting, and two names that differ only in Unicode normalization
    (different fields to Firestore), each queried for the first time, then again after writes."""
    c = db.collection(name("lzn"))
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    docs = {f"n{i:02d}": {"a-b": i % 3, nfc: i % 2, nfd: (i + 1) % 2, "m": {"x.y": i % 3}} for i in range(10)}
    commit(db, sets=[(c.document(k), d) for k, d in docs.items()])
    fields = [(FieldPath("a-b"), lambda d: d["a-b"] == 1), (FieldPath(nfc), lambda d: d[nfc] == 1),
              (FieldPath(nfd), lambda d: d[nfd] == 1), (FieldPath("m", "x.y"), lambda d: d["m"]["x.y"] == 1)]
    for rnd in range(2):
        for path, pred in fields:
            assert ids(where(c, path.to_api_repr(), "==", 1)) == sorted(k for k, d in docs.items() if pred(d))
        if rnd == 0:
            c.document("n00").update({FieldPath(nfd).to_api_repr(): 0, FieldPath("a-b").to_api_repr(): 1})
            docs["n00"].update({nfd: 0, "a-b": 1})
            c.document("n03").delete()
            del docs["n03"]
