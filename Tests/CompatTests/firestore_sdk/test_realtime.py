"""Snapshot listeners (`on_snapshot`, the Listen stream) with google-cloud-firestore, unmodified."""
import os
import queue
import threading
import time
import uuid

import pytest
from google.cloud.firestore_v1.base_query import FieldFilter


# Generous: the official emulator's first listener after its JVM starts can take many seconds on a
# loaded machine; a passing wait returns as soon as its snapshot arrives.
def wait_for(q, predicate, timeout=60):
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


def _rest_write(host, path, fields=None):
    """A write from another client over REST (PATCH, or DELETE when `fields` is None), as an admin."""
    import json
    import urllib.request
    project = os.environ.get("HEARTH_PROJECT", "demo-hearth")
    url = f"http://{host}/v1/projects/{project}/databases/(default)/documents/{path}"
    body = None if fields is None else json.dumps({"fields": fields}).encode()
    req = urllib.request.Request(url, data=body, method="DELETE" if fields is None else "PATCH",
                                 headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200


def test_listener_sees_writes_from_other_clients_over_rest_and_grpc_and_stops_after_unsubscribe(db, emulator_host):
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore
    name = "rt" + uuid.uuid4().hex[:8]
    coll = db.collection(name)
    q = queue.Queue()

    def on(snaps, changes, read_time):
        q.put((sorted((s.id, s.get("n")) for s in snaps), sorted((c.type.name, c.document.id) for c in changes)))

    watch = coll.where(filter=FieldFilter("on", "==", True)).on_snapshot(on)
    other = firestore.Client(project=os.environ.get("HEARTH_PROJECT", "demo-hearth"), credentials=AnonymousCredentials())
    try:
        wait_for(q, lambda s: s[0] == [])
        _rest_write(emulator_host, f"{name}/r", {"on": {"booleanValue": True}, "n": {"integerValue": "1"}})
        wait_for(q, lambda s: s == ([("r", 1)], [("ADDED", "r")]))
        other.collection(name).document("g").set({"on": True, "n": 2})  # another gRPC client
        wait_for(q, lambda s: s == ([("g", 2), ("r", 1)], [("ADDED", "g")]))
        _rest_write(emulator_host, f"{name}/r", {"on": {"booleanValue": True}, "n": {"integerValue": "3"}})
        wait_for(q, lambda s: s == ([("g", 2), ("r", 3)], [("MODIFIED", "r")]))
        _rest_write(emulator_host, f"{name}/g")  # REST delete
        wait_for(q, lambda s: s == ([("r", 3)], [("REMOVED", "g")]))
    finally:
        watch.unsubscribe()
        other.close()
    # After unsubscribe no snapshot arrives for later writes.
    while not q.empty():
        q.get_nowait()
    _rest_write(emulator_host, f"{name}/late", {"on": {"booleanValue": True}, "n": {"integerValue": "9"}})
    time.sleep(1.0)
    assert q.empty(), f"a snapshot arrived after unsubscribe: {q.get_nowait()}"
