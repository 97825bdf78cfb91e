"""Snapshot listeners as a project's tests use them, against Hearth and the official emulator with the
same assertions: the change types and the old and new indexes the SDK computes from the Listen
stream, a window (`order_by` + `limit`) that documents enter and leave, a document listener through
create, modify, delete and re-create. Each step waits for its snapshot before the next write, so both
targets see the same sequence."""
import queue
import time
import uuid

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter


def next_snapshot(q, timeout=60):
    # Generous: the official emulator's first listener after its JVM starts can take many seconds.
    try:
        return q.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no snapshot in {timeout} s")


def changes_of(snaps, changes):
    """The snapshot's documents in order and its changes. Not the changes' old and new indexes: the
    Python SDK computes those itself, wrongly (2.34: an added document's index past the end, a move
    reported at index 4 of 3), the same against either server."""
    return [s.id for s in snaps], sorted((c.type.name, c.document.id) for c in changes)


def settle(q, quiet=0.3):
    """Nothing more arrives for `quiet` seconds (a write produced exactly one snapshot)."""
    time.sleep(quiet)
    assert q.empty(), f"an unexpected snapshot: {q.get_nowait()}"


def test_window_listener_reports_indexes_as_documents_enter_move_and_leave(db):
    c = db.collection("ls" + uuid.uuid4().hex[:8])
    for id_, n in [("a", 10), ("b", 20), ("c", 30), ("d", 40)]:
        c.document(id_).set({"n": n})
    q = queue.Queue()
    watch = c.order_by("n").limit(3).on_snapshot(lambda s, ch, rt: q.put(changes_of(s, ch)))
    ADDED, MODIFIED, REMOVED = "ADDED", "MODIFIED", "REMOVED"
    try:
        assert next_snapshot(q) == (["a", "b", "c"], [(ADDED, "a"), (ADDED, "b"), (ADDED, "c")])
        steps = [
            # A new first document pushes c out of the window.
            (lambda: c.document("z").set({"n": 0}),
             (["z", "a", "b"], [(ADDED, "z"), (REMOVED, "c")])),
            # b moves before a inside the window.
            (lambda: c.document("b").update({"n": 5}),
             (["z", "b", "a"], [(MODIFIED, "b")])),
            # A change that keeps the order is MODIFIED too.
            (lambda: c.document("a").update({"extra": True}),
             (["z", "b", "a"], [(MODIFIED, "a")])),
            # Deleting one inside pulls c back in at the end.
            (lambda: c.document("z").delete(),
             (["b", "a", "c"], [(ADDED, "c"), (REMOVED, "z")])),
            # A change outside the window sends nothing; one that enters it replaces the last.
            (lambda: c.document("d").update({"n": 1}),
             (["d", "b", "a"], [(ADDED, "d"), (REMOVED, "c")])),
        ]
        for write, want in steps:
            write()
            assert next_snapshot(q) == want
            settle(q)
        c.document("c").update({"n": 31})  # outside the window: no snapshot
        settle(q, 1.0)
    finally:
        watch.unsubscribe()


def test_descending_filtered_listener_with_limit(db):
    c = db.collection("ls" + uuid.uuid4().hex[:8])
    for id_, n in [("a", 1), ("b", 2), ("c", 3)]:
        c.document(id_).set({"n": n, "on": True})
    q = queue.Queue()
    query = c.where(filter=FieldFilter("on", "==", True)).order_by("n", direction=firestore.Query.DESCENDING).limit(2)
    # The SDK sorts a snapshot's documents by its own comparator, which reads DESCENDING (2) as
    # ascending: the membership is the server's, the order the SDK's.
    watch = query.on_snapshot(lambda s, ch, rt: q.put(changes_of(sorted(s, key=lambda d: d.id), ch)))
    try:
        assert next_snapshot(q) == (["b", "c"], [("ADDED", "b"), ("ADDED", "c")])
        c.document("c").update({"on": False})  # stops matching: a comes in
        assert next_snapshot(q) == (["a", "b"], [("ADDED", "a"), ("REMOVED", "c")])
        c.document("x").set({"n": 9, "on": True})
        assert next_snapshot(q) == (["b", "x"], [("ADDED", "x"), ("REMOVED", "a")])
        c.document("a").update({"n": 10})  # a comes back, first
        assert next_snapshot(q) == (["a", "x"], [("ADDED", "a"), ("REMOVED", "b")])
    finally:
        watch.unsubscribe()


def test_document_listener_through_create_modify_delete_recreate(db):
    ref = db.collection("ls" + uuid.uuid4().hex[:8]).document("d")
    q = queue.Queue()

    def on(snaps, changes, read_time):
        q.put(([(s.exists, s.to_dict() if s.exists else None) for s in snaps],
               [c.type.name for c in changes], snaps[0].create_time if snaps and snaps[0].exists else None,
               snaps[0].update_time if snaps and snaps[0].exists else None))

    watch = ref.on_snapshot(on)
    try:
        first = next_snapshot(q)
        assert first[0] in ([(False, None)], []) and first[1] == []
        ref.set({"v": 1})
        docs, kinds, created, updated = next_snapshot(q)
        assert (docs, kinds) == ([(True, {"v": 1})], ["ADDED"]) and created == updated
        ref.update({"v": 2})
        docs, kinds, created2, updated2 = next_snapshot(q)
        assert (docs, kinds) == ([(True, {"v": 2})], ["MODIFIED"]) and created2 == created and updated2 > updated
        # The same data again changes nothing: the write's update_time is the previous one
        # (WriteResult.updateTime) and listeners hear nothing.
        assert ref.set({"v": 2}).update_time == updated2
        settle(q, 1.0)
        ref.delete()
        docs, kinds, _, _ = next_snapshot(q)
        assert docs in ([(False, None)], []) and kinds == ["REMOVED"]
        ref.set({"v": 3})
        docs, kinds, created4, _ = next_snapshot(q)
        assert (docs, kinds) == ([(True, {"v": 3})], ["ADDED"]) and created4 > created
        settle(q)
    finally:
        watch.unsubscribe()


def test_listener_on_a_collection_group_and_a_batch_is_one_snapshot(db):
    group = "lg" + uuid.uuid4().hex[:8]
    root = db.collection("ls" + uuid.uuid4().hex[:8])
    q = queue.Queue()
    watch = db.collection_group(group).on_snapshot(lambda s, ch, rt: q.put(changes_of(s, ch)))
    try:
        assert next_snapshot(q) == ([], [])
        batch = db.batch()
        batch.set(root.document("u1").collection(group).document("x"), {"n": 1})
        batch.set(root.document("u2").collection(group).document("y"), {"n": 2})
        batch.set(root.document("u2").collection("other").document("z"), {"n": 3})
        batch.commit()
        assert next_snapshot(q) == (["x", "y"], [("ADDED", "x"), ("ADDED", "y")])
        settle(q)
    finally:
        watch.unsubscribe()


def test_listeners_on_or_not_in_and_array_queries(db):
    from google.cloud.firestore_v1.base_query import Or
    c = db.collection("ls" + uuid.uuid4().hex[:8])
    c.document("a").set({"s": "x", "tags": ["p"], "n": 1})
    c.document("b").set({"s": "y", "tags": [], "n": 2})
    queries = {
        "or": c.where(filter=Or([FieldFilter("s", "==", "x"), FieldFilter("n", ">", 5)])),
        "not-in": c.where(filter=FieldFilter("s", "not-in", ["y"])),
        "array": c.where(filter=FieldFilter("tags", "array_contains_any", ["p", "q"])),
    }
    qs = {k: queue.Queue() for k in queries}
    watches = [q.on_snapshot(lambda s, ch, rt, k=k: qs[k].put(changes_of(sorted(s, key=lambda d: d.id), ch)))
               for k, q in queries.items()]
    try:
        for k in queries:
            assert next_snapshot(qs[k]) == (["a"], [("ADDED", "a")]), k
        c.document("b").update({"n": 9, "tags": ["q"]})  # enters or and array; still y for not-in
        assert next_snapshot(qs["or"]) == (["a", "b"], [("ADDED", "b")])
        assert next_snapshot(qs["array"]) == (["a", "b"], [("ADDED", "b")])
        c.document("a").update({"s": "y"})  # leaves not-in, and (n is 1) the or too
        assert next_snapshot(qs["not-in"]) == ([], [("REMOVED", "a")])
        assert next_snapshot(qs["or"]) == (["b"], [("REMOVED", "a")])
        assert next_snapshot(qs["array"]) == (["a", "b"], [("MODIFIED", "a")])
        c.document("c").set({"s": None, "tags": ["p"], "n": 0})  # not-in skips null
        assert next_snapshot(qs["array"]) == (["a", "b", "c"], [("ADDED", "c")])
        for k in queries:
            settle(qs[k])
    finally:
        for w in watches:
            w.unsubscribe()
