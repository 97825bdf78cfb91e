"""Realtime listeners, differential: one script of writes drives `on_snapshot` listeners (and, below,
raw gRPC Listen streams) against Hearth and against the official Cloud Firestore emulator, and the
two recordings must be equal.

Each run records, per step and per listener, every snapshot the SDK raised: its documents in the
SDK's order (ids and data) and its changes (type, old index, new index) — or, for a raw stream,
every ListenResponse (target change types and ids, document changes with their data and target ids,
deletes, removes, existence filters with their counts). Only what must differ is normalised: the
unique collection names, generated ids, timestamps' absolute values, resume tokens.

The official emulator's recording is kept in `fixtures/listen-emulator.json`, so the Hearth half
asserts it on machines without the emulator; with the emulator installed, its half runs the same
script and checks the recording still holds (so the two servers are compared live, through it).
`HEARTH_LISTEN_RECORD=1 pytest … -k official` writes the fixture again. Where the emulator
contradicts production Firestore, `DEVIATIONS` holds Hearth's documented answer and why
(docs/firestore.md, *Listen differential*).

Deterministic without sleeping for the expected: after each write the script waits (with a
timeout) until every listener's latest snapshot holds what a `get()` of its query returns now, then
waits a short quiet period so that a snapshot neither server should send would be recorded too.
"""
import json
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from google.api_core.datetime_helpers import DatetimeWithNanoseconds
from google.cloud import firestore
from google.cloud.firestore_v1 import types
from google.cloud.firestore_v1.base_query import FieldFilter, Or

from test_raw_grpc import Listen, commit, database

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "listen-emulator.json")
RECORD = os.environ.get("HEARTH_LISTEN_RECORD") == "1"
QUIET = 0.25  # seconds without a snapshot after a step's expected state is reached
# The official emulator's first listener after its JVM starts can take many seconds.
TIMEOUT = float(os.environ.get("HEARTH_LISTEN_TIMEOUT", 30))

# (scenario, step) -> what Hearth answers instead of the emulator, and why. Each is a place where
# the emulator fails where production refuses the request: it ends the stream with an empty
# UNKNOWN (its internal error) for these targets, where it answers other invalid targets, as
# production does, with REMOVE and the INVALID_ARGUMENT cause, and the stream goes on. Hearth
# answers every invalid target so.
_REFUSED = {"messages": [["ADD", [1]], ["REMOVE", [1], {"cause": "INVALID_ARGUMENT"}]], "states": [], "final": {},
            "filters agree": True, "resends": False}
DEVIATIONS = {
    ("raw_invalid", "a negative limit"): {"hearth": _REFUSED},
    ("raw_invalid", "no target type"): {"hearth": _REFUSED},
}


def load_fixture():
    if not os.path.exists(FIXTURE):
        return {}
    with open(FIXTURE) as f:
        return json.load(f)


def save_fixture(scenario, recording):
    recorded = load_fixture()
    recorded[scenario] = recording
    os.makedirs(os.path.dirname(FIXTURE), exist_ok=True)
    with open(FIXTURE, "w") as f:
        json.dump(recorded, f, indent=1, sort_keys=True)
        f.write("\n")


def check(scenario, target, recording):
    """The run's recording against the emulator's (Hearth: with the documented deviations)."""
    if os.environ.get("HEARTH_LISTEN_DUMP"):  # a directory: each run's recording, to compare by hand
        with open(os.path.join(os.environ["HEARTH_LISTEN_DUMP"], f"{scenario}-{target}.json"), "w") as f:
            json.dump(recording, f, indent=1, sort_keys=True)
    if RECORD and target == "official":
        save_fixture(scenario, recording)
        return
    recorded = load_fixture().get(scenario)
    assert recorded is not None, f"{FIXTURE} has no {scenario}: run with HEARTH_LISTEN_RECORD=1 against the official emulator"
    want = dict(recorded)
    if target == "hearth":
        for (s, step), dev in DEVIATIONS.items():
            if s == scenario:
                assert recorded[step] != dev["hearth"], f"{scenario}/{step}: the emulator now agrees; drop the deviation"
                want[step] = dev["hearth"]
    assert sorted(recording) == sorted(want), "the scenario's steps changed: record the fixture again"
    diffs = [f"{step}:\n  {target}: {json.dumps(recording[step], sort_keys=True)}\n  expected: {json.dumps(want[step], sort_keys=True)}"
             for step in want if comparable(recording[step], want[step]) != comparable(want[step], want[step])]
    assert not diffs, f"{len(diffs)} of {len(want)} steps differ:\n" + "\n".join(diffs)


def comparable(step, expected):
    """What of a recorded step is compared. A raw step where the expected server resent what the
    client held (RESET and the whole result, or unchanged documents again) is compared by the
    documents the client holds once the step is over: the official emulator answers every write
    to a query target's collection (even one that changes nothing the target holds) and every
    resume so, and a documents target's change with all its documents; production sends only what
    changed, as Hearth does, and the client ends up holding the same documents either way."""
    if "messages" not in expected:  # an on_snapshot step: every listener's snapshots
        return step
    if expected["resends"]:
        return step["final"], step["filters agree"]
    return step["messages"], step["states"], step["final"], step["filters agree"]


# ---- normalising -------------------------------------------------------------------------------

class Names:
    """Replaces what differs per run (unique collection names, generated ids) by stable stand-ins."""

    def __init__(self):
        self.map = {}

    def unique(self, prefix, stand_in):
        name = prefix + uuid.uuid4().hex[:10]
        self.map[name] = stand_in
        return name

    def generated(self, doc_id):
        self.map[doc_id] = f"<auto{len([v for v in self.map.values() if v.startswith('<auto')]) + 1}>"

    def path(self, path):
        return "/".join(self.map.get(seg, seg) for seg in path.split("/"))

    def value(self, v):
        if isinstance(v, DatetimeWithNanoseconds):
            return "<timestamp>"
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        return v


# ---- google-cloud-firestore on_snapshot ----------------------------------------------------------

class Listener:
    """One `on_snapshot` listener and the snapshots it raised since the last step (kept as raised,
    normalised when taken: a generated id is known only once its write returned)."""

    def __init__(self, names, subject):
        self.names = names
        self.subject = subject  # a DocumentReference or a Query
        self.lock = threading.Lock()
        self.snapshots = []
        self.held = None  # the documents of the last snapshot, sorted (None before the first)
        self.watch = subject.on_snapshot(self._on)

    def _on(self, docs, changes, read_time):
        snap = ([(d.reference.path, d.to_dict()) for d in docs if d.exists],
                [(c.type.name, c.document.reference.path, c.old_index, c.new_index) for c in changes])
        with self.lock:
            self.snapshots.append(snap)
            self.held = sorted(snap[0])

    def truth(self):
        """What the listener must hold once the server has told it the last write: a read, now."""
        if isinstance(self.subject, firestore.DocumentReference):
            s = self.subject.get()
            docs = [s] if s.exists else []
        else:
            docs = list(self.subject.get())
        return sorted((d.reference.path, d.to_dict()) for d in docs)

    def holds(self, want):
        with self.lock:
            return self.held == want

    def take(self):
        with self.lock:
            out, self.snapshots = self.snapshots, []
        n = self.names
        return [{"docs": [[n.path(p), n.value(d)] for p, d in docs],
                 "changes": [[kind, n.path(p), old, new] for kind, p, old, new in changes]} for docs, changes in out]


class Script:
    """Runs steps against a set of listeners and records what each listener raised per step."""

    def __init__(self, db, names):
        self.db = db
        self.names = names
        self.listeners = {}
        self.recording = {}
        self.pool = ThreadPoolExecutor(8)  # the reads a step waits for, side by side

    def _settle(self, step, listeners):
        truths = dict(zip(listeners, self.pool.map(lambda l: l.truth(), listeners.values())))
        deadline = time.time() + TIMEOUT
        while not all(l.holds(truths[n]) for n, l in listeners.items()):
            if time.time() > deadline:
                print(f"{step}: timed out waiting for {[n for n, l in listeners.items() if not l.holds(truths[n])]}")
                break  # recorded as it is: the comparison shows what is missing
            time.sleep(0.01)
        time.sleep(QUIET)
        self.recording[step] = {n: l.take() for n, l in sorted(self.listeners.items())}

    def listen(self, **subjects):
        """New listeners, side by side: their first snapshots are the step `listen <names>`."""
        new = {name.rstrip("_").replace("_", "-"): Listener(self.names, s) for name, s in subjects.items()}
        self.listeners.update(new)
        self._settle("listen " + ", ".join(new), new)

    def unsubscribe(self, name):
        self.listeners.pop(name).watch.unsubscribe()

    def step(self, name, action):
        action()
        self._settle(name, self.listeners)

    def close(self):
        for l in self.listeners.values():
            l.watch.unsubscribe()
        self.pool.shutdown()


@pytest.fixture
def script(db):
    s = Script(db, Names())
    yield s
    s.close()


def test_query_and_document_listeners(script, target):
    """Windows that documents enter, move in and leave; `!=`, `not-in`, `in`, `array-contains-any`
    and OR filters that documents enter and leave; a listener on a document and on a missing one;
    a batch and a transaction as one snapshot each; writes that change nothing a listener holds."""
    db, names = script.db, script.names
    c = db.collection(names.unique("ld", "C"))
    c.document("a").set({"n": 10, "s": "x", "tags": ["p"]})
    c.document("b").set({"n": 20, "s": "y", "tags": []})
    c.document("c").set({"n": 30, "s": "z", "tags": ["q"]})
    where = lambda f, op, v: c.where(filter=FieldFilter(f, op, v))  # noqa: E731
    script.listen(window=c.order_by("n").limit(3), whole=c, ne=where("s", "!=", "x"),
                  not_in=where("s", "not-in", ["x", "y"]), in_=where("s", "in", ["x", "z"]),
                  any=where("tags", "array_contains_any", ["p", "q"]),
                  or_=c.where(filter=Or([FieldFilter("s", "==", "x"), FieldFilter("n", ">", 50)])),
                  doc=c.document("a"), missing=c.document("m"))

    script.step("create d outside the window", lambda: c.document("d").set({"n": 40, "s": "w", "tags": ["r"]}))
    script.step("create e, first in the window", lambda: c.document("e").set({"n": 5, "s": "x", "tags": []}))
    script.step("b moves to the front", lambda: c.document("b").update({"n": 1}))
    script.step("a modified in place", lambda: c.document("a").update({"extra": True}))
    script.step("a written with its own data", lambda: c.document("a").set({"n": 10, "s": "x", "tags": ["p"], "extra": True}))
    script.step("c becomes x", lambda: c.document("c").update({"s": "x"}))
    script.step("d gets tag p", lambda: c.document("d").update({"tags": firestore.ArrayUnion(["p"])}))
    script.step("d above 50", lambda: c.document("d").update({"n": 60}))
    script.step("d's s becomes null", lambda: c.document("d").update({"s": None}))
    script.step("d's tags emptied", lambda: c.document("d").update({"tags": []}))
    script.step("delete e", lambda: c.document("e").delete())

    def batch():
        b = db.batch()
        b.set(c.document("f"), {"n": 2, "s": "y", "tags": ["q"]})
        b.update(c.document("a"), {"n": 11})
        b.delete(c.document("b"))
        b.commit()
    script.step("a batch", batch)

    @firestore.transactional
    def bump(tx):
        n = c.document("a").get(transaction=tx).get("n")
        tx.update(c.document("a"), {"n": n + 1})
        tx.create(c.document("g"), {"n": 3, "s": "z", "tags": []})
    script.step("a transaction", lambda: bump(db.transaction()))
    script.step("a server timestamp", lambda: c.document("c").update({"at": firestore.SERVER_TIMESTAMP}))
    script.step("the missing document created", lambda: c.document("m").set({"n": 100, "s": "m", "tags": []}))
    script.step("the missing document deleted", lambda: c.document("m").delete())
    script.step("a write in a subcollection", lambda: c.document("a").collection("sub").document("x").set({"n": 0}))
    script.step("a deleted", lambda: c.document("a").delete())
    script.step("a deleted again", lambda: c.document("a").delete())
    check("sdk_queries", target, script.recording)


def test_collection_group_late_and_resubscribed_listeners(script, target):
    """A collection-group listener, one added to an already populated collection, and one
    unsubscribed and subscribed again after writes it missed."""
    db, names = script.db, script.names
    c = db.collection(names.unique("ld", "C"))
    group = names.unique("lg", "G")
    c.document("u1").collection(group).document("x").set({"n": 1})
    script.listen(group=db.collection_group(group),
                  group_above_1=db.collection_group(group).where(filter=FieldFilter("n", ">", 1)))

    def batch():
        b = db.batch()
        b.set(c.document("u1").collection(group).document("y"), {"n": 2})
        b.set(c.document("u2").collection(group).document("x"), {"n": 3})
        b.set(c.document("u2").collection("other").document("z"), {"n": 4})
        b.set(c.document("u2"), {"n": 5})
        b.commit()
    script.step("a batch across parents", batch)

    def add():
        _, ref = c.document("u3").collection(group).add({"n": 6})
        names.generated(ref.id)
    script.step("a generated id", add)
    script.step("x leaves the filter", lambda: c.document("u2").collection(group).document("x").update({"n": 0}))
    script.step("a group document deleted", lambda: c.document("u1").collection(group).document("x").delete())

    # A listener on a collection that already holds documents, and its life cycle.
    for id_, n in [("p", 3), ("q", 1), ("r", 2)]:
        c.document("late").collection("items").document(id_).set({"n": n})
    items = c.document("late").collection("items")
    script.listen(late=items.order_by("n"))
    script.step("late: a change", lambda: items.document("q").update({"n": 9}))
    script.unsubscribe("late")
    script.step("late: unsubscribed, a change", lambda: items.document("p").update({"n": 0}))
    script.step("late: unsubscribed, a delete", lambda: items.document("r").delete())
    script.listen(late=items.order_by("n"))
    script.step("late: subscribed again, a change", lambda: items.document("s").set({"n": 4}))
    check("sdk_group_and_lifecycle", target, script.recording)


# ---- raw gRPC Listen -----------------------------------------------------------------------------

class Raw:
    """Raw Listen streams on one channel, their responses described without tokens and times."""

    def __init__(self, host, names):
        self.channel = grpc.insecure_channel(host)
        self.names = names
        self.streams = []
        self.recording = {}

    def close(self):
        for s in self.streams:
            s.close()
        self.channel.close()

    def listen(self, holds=None):
        """A new stream; `holds`: what its client already holds per target (a resume)."""
        s = Listen(self.channel)
        s.held = {t: dict(docs) for t, docs in (holds or {}).items()}
        self.streams.append(s)
        return s

    @staticmethod
    def apply(held, message):
        """Applies one described response to what a client holds per target, as the SDKs do;
        whether it only told the client what it already held (a resend)."""
        kind = message[0]
        if kind == "ADD":  # a resumed target keeps what the client held
            held.setdefault(message[1][0], {})
        elif kind == "RESET":  # the whole result follows again
            held[message[1][0]] = {}
            return True
        if kind == "REMOVE":
            for t in message[1]:
                held.pop(t, None)
        elif kind == "CHANGE":
            _, name, fields, ids, removed = message
            resend = bool(ids) and all(held.get(t, {}).get(name) == fields for t in ids)
            for t in ids:
                held.setdefault(t, {})[name] = fields
            for t in removed:
                held.get(t, {}).pop(name, None)
            return resend
        elif kind in ("DELETE", "REMOVE_DOC"):
            for t in message[2]:
                held.get(t, {}).pop(message[1], None)
        return False

    @staticmethod
    def state(held):
        return {str(t): sorted([name, fields] for name, fields in docs.items()) for t, docs in sorted(held.items())}

    def describe(self, r):
        kind = r._pb.WhichOneof("response_type")
        if kind == "target_change":
            tc = r.target_change
            out = [types.TargetChange.TargetChangeType(tc.target_change_type).name, sorted(tc.target_ids)]
            if tc.cause.code:
                out.append({"cause": next(s for s in grpc.StatusCode if s.value[0] == tc.cause.code).name})
            return out
        if kind == "document_change":
            dc = r.document_change
            return ["CHANGE", self.name(dc.document.name), self.fields(dc.document), sorted(dc.target_ids),
                    sorted(dc.removed_target_ids)]
        if kind == "document_delete":
            return ["DELETE", self.name(r.document_delete.document), sorted(r.document_delete.removed_target_ids)]
        if kind == "document_remove":
            return ["REMOVE_DOC", self.name(r.document_remove.document), sorted(r.document_remove.removed_target_ids)]
        if kind == "filter":
            return ["FILTER", r.filter.target_id, r.filter.count]
        return [kind]

    def name(self, full):
        return self.names.path(full.split("/documents/", 1)[1])

    @staticmethod
    def fields(doc):
        out = {}
        for k, v in doc.fields.items():
            which = v._pb.WhichOneof("value_type")
            out[k] = getattr(v._pb, which) if which != "null_value" else None
        return out

    def read(self, stream, snapshots=1, timeout=TIMEOUT, removed=False):
        """The next `snapshots` snapshots (each up to its global NO_CHANGE; with `removed`, up to a
        target's REMOVE instead), then whatever else arrives in the quiet period; an error ending
        the stream is recorded as `ERROR <code>`."""
        out = []
        deadline = time.time() + timeout
        ended = False

        def get(until):
            nonlocal ended
            try:
                r = stream.responses.get(timeout=max(0.01, until - time.time()))
            except Exception:
                return None
            if r is None:
                ended = True
                out.append(["ERROR", stream.error.code().name if stream.error else "OK"])
                return None
            out.append(self.describe(r))
            return r

        seen = 0
        while seen < snapshots and not ended and time.time() < deadline:
            r = get(deadline)
            if r is None or "target_change" not in r:
                continue
            kind = r.target_change.target_change_type
            if kind == types.TargetChange.TargetChangeType.NO_CHANGE and not r.target_change.target_ids:
                stream.last_snapshot = r.target_change  # its resume token and read time
                seen += 1
            elif removed and kind == types.TargetChange.TargetChangeType.REMOVE:
                seen += 1
        if seen < snapshots and not ended:
            out.append(["TIMEOUT"])
        quiet = time.time() + QUIET
        while not ended and time.time() < quiet:
            get(quiet)
        return out

    def step(self, name, stream, snapshots=1, action=None, removed=False):
        """Records the step's responses, the documents the client holds after each snapshot and
        once the step is over, whether every existence filter's count is what the client holds,
        and whether the server told the client again what it held (RESET and the whole result)."""
        if action:
            action()
        messages = self.read(stream, snapshots, removed=removed)
        states, resends, filters = [], False, True
        for m in messages:
            if m[0] == "FILTER":
                filters &= m[2] == len(stream.held.get(m[1], {}))
                continue
            resends |= self.apply(stream.held, m)
            if m == ["NO_CHANGE", []]:
                states.append(self.state(stream.held))
        self.recording[name] = {"messages": messages, "states": states, "final": self.state(stream.held),
                                "filters agree": filters, "resends": resends}


def query(coll, where=None, order=None, limit=None, descending=False):
    q = types.StructuredQuery(from_=[types.StructuredQuery.CollectionSelector(collection_id=coll)])
    if where:
        field, value = where
        q.where = types.StructuredQuery.Filter(field_filter=types.StructuredQuery.FieldFilter(
            field=types.StructuredQuery.FieldReference(field_path=field),
            op=types.StructuredQuery.FieldFilter.Operator.EQUAL, value=value_of(value)))
    if order:
        q.order_by = [types.StructuredQuery.Order(
            field=types.StructuredQuery.FieldReference(field_path=order),
            direction=types.StructuredQuery.Direction.DESCENDING if descending else types.StructuredQuery.Direction.ASCENDING)]
    if limit:
        q.limit = limit
    return types.Target.QueryTarget(parent=f"{database()}/documents", structured_query=q)


def value_of(v):
    return types.Value(integer_value=v) if isinstance(v, int) else types.Value(string_value=v)


def put(coll, doc_id, **fields):
    return types.Write(update=types.Document(name=f"{database()}/documents/{coll}/{doc_id}",
                                             fields={k: value_of(v) for k, v in fields.items()}))


def delete(coll, doc_id):
    return types.Write(delete=f"{database()}/documents/{coll}/{doc_id}")


@pytest.fixture
def raw(emulator_host):
    r = Raw(emulator_host, Names())
    yield r
    r.close()


def test_raw_listen_changes_limits_and_targets(raw, target):
    """Adding a target, its changes, deletes and removes; a limited window in both directions; a
    documents target on a missing document; two targets on one stream; removing a target."""
    ch = raw.channel
    c = raw.names.unique("lr", "C")
    commit(ch, [put(c, d, color="red", n=n) for d, n in (("a", 1), ("b", 2), ("c", 3))])

    one = raw.listen()
    one.add(types.Target(target_id=1, query=query(c, where=("color", "red"))))
    raw.step("add a query target", one)
    raw.step("a modified", one, action=lambda: commit(ch, [put(c, "a", color="red", n=10)]))
    raw.step("b deleted", one, action=lambda: commit(ch, [delete(c, "b")]))
    raw.step("c stops matching", one, action=lambda: commit(ch, [put(c, "c", color="blue", n=3)]))
    raw.step("d created", one, action=lambda: commit(ch, [put(c, "d", color="red", n=4)]))
    raw.step("a written with its own data", one, snapshots=0, action=lambda: commit(ch, [put(c, "a", color="red", n=10)]))
    raw.step("a non-matching document changed", one, snapshots=0, action=lambda: commit(ch, [put(c, "c", color="blue", n=30)]))
    raw.step("two documents in one commit", one,
             action=lambda: commit(ch, [put(c, "e", color="red", n=5), delete(c, "d")]))

    w = raw.names.unique("lw", "W")
    commit(ch, [put(w, d, n=n) for d, n in (("a", 1), ("b", 2), ("c", 3), ("d", 4))])
    window = raw.listen()
    window.add(types.Target(target_id=1, query=query(w, order="n", limit=2)))
    raw.step("add a limit 2 target", window)
    raw.step("a new first document", window, action=lambda: commit(ch, [put(w, "z", n=0)]))
    raw.step("the first document deleted", window, action=lambda: commit(ch, [delete(w, "z")]))
    raw.step("a leaves the window", window, action=lambda: commit(ch, [put(w, "a", n=9)]))
    raw.step("outside the window", window, snapshots=0, action=lambda: commit(ch, [put(w, "d", n=8)]))
    last = raw.listen()  # limitToLast as the SDKs send it: the reversed order with a limit
    last.add(types.Target(target_id=7, query=query(w, order="n", limit=2, descending=True)))
    raw.step("add a descending limit 2 target", last)
    raw.step("a new last document", last, action=lambda: commit(ch, [put(w, "y", n=99)]))

    docs = raw.listen()
    docs.add(types.Target(target_id=3, documents=types.Target.DocumentsTarget(
        documents=[f"{database()}/documents/{c}/m", f"{database()}/documents/{c}/a"])))
    raw.step("add a documents target, one missing", docs)
    raw.step("the missing document created", docs, action=lambda: commit(ch, [put(c, "m", color="green", n=7)]))
    raw.step("the document deleted", docs, action=lambda: commit(ch, [delete(c, "m")]))

    two = raw.listen()
    two.add(types.Target(target_id=1, query=query(c, where=("color", "red"))))
    raw.step("two targets: the first", two)
    two.add(types.Target(target_id=2, query=query(c, order="n")))
    raw.step("two targets: the second", two)
    raw.step("two targets: a document of both", two, action=lambda: commit(ch, [put(c, "f", color="red", n=6)]))
    raw.step("two targets: a document of one", two, action=lambda: commit(ch, [put(c, "g", color="blue", n=7)]))
    raw.step("two targets: one stops matching", two, action=lambda: commit(ch, [put(c, "f", color="blue", n=6)]))
    raw.step("two targets: a delete of both", two, action=lambda: commit(ch, [delete(c, "e")]))
    two.remove(1)
    raw.step("remove the first target", two, snapshots=0)
    raw.step("after the remove", two, action=lambda: commit(ch, [put(c, "h", color="red", n=8)]))
    check("raw_targets", target, raw.recording)


def test_raw_listen_resumes(raw, target):
    """Resuming with a resume token (with and without an expected count) and with a read time,
    after writes made while nobody listened."""
    ch = raw.channel
    c = raw.names.unique("lr", "C")
    commit(ch, [put(c, d, color="red", n=1) for d in ("a", "b", "c")])
    first = raw.listen()
    first.add(types.Target(target_id=1, query=query(c, where=("color", "red"))))
    raw.step("first listen", first)
    token, read_time = first.last_snapshot.resume_token, first.last_snapshot.read_time
    held = first.held
    first.close()
    commit(ch, [put(c, "a", color="red", n=2)])
    commit(ch, [delete(c, "b")])
    commit(ch, [put(c, "c", color="blue", n=1), put(c, "d", color="red", n=1)])

    by_token = raw.listen(held)
    by_token.add(types.Target(target_id=1, query=query(c, where=("color", "red")), resume_token=token))
    raw.step("resume by token", by_token)
    counted = raw.listen(held)
    counted.add(types.Target(target_id=1, query=query(c, where=("color", "red")), resume_token=token, expected_count=3))
    raw.step("resume by token with the expected count", counted)
    by_time = raw.listen(held)
    by_time.add(types.Target(target_id=1, query=query(c, where=("color", "red")), read_time=read_time))
    raw.step("resume by read time", by_time)
    check("raw_resumes", target, raw.recording)


def test_raw_listen_invalid_targets(raw, target):
    """Targets the server refuses: the error's code, and whether the stream ends or the target is
    removed with a cause while the stream goes on."""
    c = raw.names.unique("lr", "C")
    cases = {
        "a collection's name as a document": types.Target(target_id=1, documents=types.Target.DocumentsTarget(
            documents=[f"{database()}/documents/{c}"])),
        "in with no values": types.Target(target_id=1, query=types.Target.QueryTarget(
            parent=f"{database()}/documents", structured_query=types.StructuredQuery(
                from_=[types.StructuredQuery.CollectionSelector(collection_id=c)],
                where=types.StructuredQuery.Filter(field_filter=types.StructuredQuery.FieldFilter(
                    field=types.StructuredQuery.FieldReference(field_path="n"),
                    op=types.StructuredQuery.FieldFilter.Operator.IN,
                    value=types.Value(array_value=types.ArrayValue(values=[]))))))),
        "a negative limit": types.Target(target_id=1, query=types.Target.QueryTarget(
            parent=f"{database()}/documents", structured_query=types.StructuredQuery(
                from_=[types.StructuredQuery.CollectionSelector(collection_id=c)], limit=-1))),
        "no target type": types.Target(target_id=1),
    }
    for name, bad in cases.items():
        s = raw.listen()
        s.add(bad)
        raw.step(name, s, removed=True)
    # The stream and its other targets go on.
    s = raw.listen()
    s.add(types.Target(target_id=1, query=query(c)))
    raw.step("a good target", s)
    bad = cases["in with no values"]
    bad.target_id = 2
    s.add(bad)
    raw.step("a bad target beside it", s, removed=True)
    raw.step("the good target goes on", s, action=lambda: commit(raw.channel, [put(c, "a", n=1)]))
    check("raw_invalid", target, raw.recording)
