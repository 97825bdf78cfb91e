"""`bench/run.py --only fs --sequence`: Firestore rows in the order given, a row as often as named, on one
Hearth (bench/benchlib/fsrows.py `Phase.sequence`, run.py `sequence_text`). Fake loads and a fake
machine; no server is measured here."""
import os
import sys
import types

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

import run  # noqa: E402
from benchlib import fsrows, machine, pairs  # noqa: E402
from benchlib.context import Settings  # noqa: E402
from benchlib.httpc import NotAvailable  # noqa: E402
from benchlib.report import Results  # noqa: E402

H, E = pairs.HEARTH, pairs.PEER


class FakeCtx:
    def __init__(self):
        self.results = Results()
        self.s = Settings(False)
        self.s.rounds = 2
        self.quick = False
        self.rows_only = None
        self.server_pids = {}
        self.lines = []

    def log(self, msg):
        self.lines.append(msg)


class Running:
    """A server process that has not exited."""
    pid = 1
    returncode = None

    def poll(self):
        return None


def phase(monkeypatch, ctx, made, measured):
    """A Phase over Hearth alone whose loads only record what was set up and measured."""
    hearth = types.SimpleNamespace(pid=1, proc=Running(), port=lambda name: 9099)

    def load(key):
        def once():
            measured.append(key)
            return 1000.0, {}
        return pairs.Load(once)

    def rest_loads(ctx_, port, user, system):
        made.append("rest")
        return {k: load(k) for k in fsrows.REST_KEYS}

    def txn_load(ctx_, system, port, user, warm, client):
        made.append(f"txn-{client}")
        return load({v: k for k, v in fsrows.grpcbench.TXN_CLIENTS.items()}[client])
    monkeypatch.setattr(fsrows.firebase, "rest_loads", rest_loads)
    monkeypatch.setattr(fsrows.grpcbench, "txn_load", txn_load)
    t = [0.0]

    def snapshot():
        t[0] += 1.0
        return machine.Snapshot(t[0], {"steal": 0}, {})
    p = pairs.Pairing(ctx, [pairs.Side(H, 1)], ctx.s.rounds, sample=lambda group: 0.0, snapshot=snapshot,
                      quiet_timeout=0, sleep=lambda s: None)
    return fsrows.Phase(ctx, p, hearth, None, {H: 8080}, object(), peer_rows_only=True)


def test_rows_run_in_the_order_given_each_as_often_as_named_with_their_own_rounds(monkeypatch):
    ctx, made, measured = FakeCtx(), [], []
    ph = phase(monkeypatch, ctx, made, measured)
    ph.sequence(["fs.txn.light.c16:1", "fs.get.c1", "fs.commit.c16:3", "fs.txn.light.c16"])
    # One set-up per kind of load, the REST one first (it stores the documents the gRPC rows read).
    assert made == ["rest", "txn-grpc", "txn-raw"]
    assert measured == ["fs.txn.light.c16"] + ["fs.get.c1"] * 2 + ["fs.commit.c16"] * 3 + ["fs.txn.light.c16"] * 2
    assert [(s["step"], s["key"], len(s["rounds"])) for s in ctx.sequence_log] == [
        (1, "fs.txn.light.c16", 1), (2, "fs.get.c1", 2), (3, "fs.commit.c16", 3), (4, "fs.txn.light.c16", 2)]
    assert all(r["key"] == s["key"] for s in ctx.sequence_log for r in s["rounds"])
    assert ctx.rows_only is None and ph.pairing.rounds == 2  # restored for what runs after


def test_a_key_that_is_not_such_a_row_is_refused_before_anything_runs(monkeypatch):
    ctx, made, measured = FakeCtx(), [], []
    ph = phase(monkeypatch, ctx, made, measured)
    with pytest.raises(NotAvailable, match="fs.query.1000"):
        ph.sequence(["fs.get.c1", "fs.query.1000"])
    assert made == [] and measured == []


def test_each_step_prints_its_rounds_with_the_servers_cpu_per_operation():
    ctx = types.SimpleNamespace(sequence_log=[
        {"step": 1, "key": "fs.txn.light.c16", "rounds": [
            {"system": H, "value": 5000.0, "machine": {"server": 1.25}, "client_us_per_txn": 80.0},
            {"system": E, "value": 500.0, "machine": {"server": 1.8}, "client_us_per_txn": 160.0},
            {"system": H, "value": 4000.0, "machine": {"server": 1.2}, "client_us_per_txn": 90.0}]},
        {"step": 2, "key": "fs.get.c1", "rounds": [
            {"system": H, "value": None, "error": "x", "machine": {"server": 0.0}},
            {"system": H, "value": 2000.0, "machine": {"server": 0.1}}]}])
    assert run.sequence_text(ctx).splitlines() == [
        "step  1 fs.txn.light.c16       hearth   5,000 / 4,000 /s; server µs per op 250.0 / 300.0; client µs 80.0 / 90.0",
        "step  1 fs.txn.light.c16       emulator 500 /s; server µs per op 3600.0; client µs 160.0",
        "step  2 fs.get.c1              hearth   2,000 /s; server µs per op 50.0",
    ]
    assert run.sequence_text(types.SimpleNamespace()) == ""
