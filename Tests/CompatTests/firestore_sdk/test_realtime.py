"""Snapshot listeners (`on_snapshot`, the Listen stream) with google-cloud-firestore, unmodified."""
import queue
import threading
import time
import uuid

import pytest
from google.cloud.firestore_v1.base_query import FieldFilter


def wait_for(q, predicate, timeout=15):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        try:
            item = q.get(timeout=max(0.01, deadline - time.time()))
        except queue.Empty:
            break
        seen.append(item)
        if predicate(item):
            return item
    raise AssertionError(f"no matching snapshot in {timeout} s; saw {seen}")


def test_document_listener_sees_create_change_delete(db):
    ref = db.collection("rt" + uuid.uuid4().hex[:8]).document("d")
    q = queue.Queue()
    watch = ref.on_snapshot(lambda snaps, changes, read_time: q.put([(s.exists, s.to_dict() if s.exists else None) for s in snaps]))
    try:
        wait_for(q, lambda s: s == [(False, None)] or s == [])
        ref.set({"v": 1})
        wait_for(q, lambda s: s == [(True, {"v": 1})])
        ref.update({"v": 2})
        wait_for(q, lambda s: s == [(True, {"v": 2})])
        ref.delete()
        wait_for(q, lambda s: s == [(False, None)] or s == [])
    finally:
        watch.unsubscribe()


def test_query_listener_added_modified_removed(db):
    coll = db.collection("rt" + uuid.uuid4().hex[:8])
    coll.document("a").set({"status": "ready", "n": 1})
    coll.document("b").set({"status": "pending", "n": 2})
    q = queue.Queue()
    query = coll.where(filter=FieldFilter("status", "==", "ready"))

    def on(snaps, changes, read_time):
        q.put((sorted(s.id for s in snaps), sorted((c.type.name, c.document.id) for c in changes)))

    watch = query.on_snapshot(on)
    try:
        wait_for(q, lambda s: s[0] == ["a"])
        coll.document("b").update({"status": "ready"})
        wait_for(q, lambda s: s == (["a", "b"], [("ADDED", "b")]))
        coll.document("a").update({"n": 10})
        wait_for(q, lambda s: s == (["a", "b"], [("MODIFIED", "a")]))
        coll.document("a").update({"status": "done"})  # stops matching
        wait_for(q, lambda s: s == (["b"], [("REMOVED", "a")]))
        coll.document("b").delete()
        wait_for(q, lambda s: s == ([], [("REMOVED", "b")]))
    finally:
        watch.unsubscribe()


def test_limit_window_listener(db):
    coll = db.collection("rt" + uuid.uuid4().hex[:8])
    for i in range(3):
        coll.document(f"d{i}").set({"n": i})
    q = queue.Queue()
    watch = coll.order_by("n").limit(2).on_snapshot(lambda snaps, changes, rt: q.put([s.id for s in snaps]))
    try:
        wait_for(q, lambda s: s == ["d0", "d1"])
        coll.document("first").set({"n": -1})  # enters the window, pushes d1 out
        wait_for(q, lambda s: s == ["first", "d0"])
        coll.document("first").delete()  # d1 comes back
        wait_for(q, lambda s: s == ["d0", "d1"])
    finally:
        watch.unsubscribe()
