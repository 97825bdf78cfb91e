"""`h2_floor.py --work-us` (bench/ceilings/h2_floor.c's WORK_US, `benchlib/h2floor.Floor(work_us=…)`): a
polling floor that spends N µs of CPU on each GetDocument before its answer, a probe of what work before
the answer costs the round trip — never a floor. Built and run for real (cc, libnghttp2, h2load)."""
import os
import shutil
import sys
import types

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib import grpcbench, h2floor  # noqa: E402
from benchlib.procs import Registry  # noqa: E402

ANSWER = b"\x00\x00\x00\x00\x03abc"  # one framed gRPC message: all the floor's GetDocument answers


@pytest.fixture
def ctx(tmp_path):
    if not shutil.which("h2load") or not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("h2load and a C compiler are needed (the bench's own Debian packages)")
    c = types.SimpleNamespace(build=str(tmp_path), run_dir=str(tmp_path), registry=Registry())
    yield c
    c.registry.stop_all()


def calls(ctx, floor, n):
    """h2load's summary of `n` GetDocument calls, one at a time, to `floor`."""
    frame = os.path.join(ctx.run_dir, "frame.bin")
    with open(frame, "wb") as f:
        f.write(b"\x00\x00\x00\x00\x00")
    return grpcbench.H2Load(ctx).run(floor.port, frame, "t", 1, 60, count=n)


def test_the_work_comes_before_each_answer_and_the_answer_is_the_floors(ctx):
    binary = h2floor.build(ctx)
    answer = os.path.join(ctx.run_dir, "answer.bin")
    with open(answer, "wb") as f:
        f.write(ANSWER)
    plain = h2floor.Floor(ctx, binary, "floor-poll", answer, 200).start()
    worked = h2floor.Floor(ctx, binary, "floor-poll+3000us", answer, 200, work_us=3000).start()
    try:
        a, b = calls(ctx, plain, 20), calls(ctx, worked, 20)
    finally:
        plain.stop(), worked.stop()
    # The same answer bytes for every call, with and without the work.
    assert a["done"] == b["done"] == 20 and a["bytes_data"] == b["bytes_data"] == 20 * len(ANSWER)
    # 3 ms of work before each answer: no call is answered sooner (a lower bound only — how much longer
    # a busy machine makes either side's calls is not this test's business).
    assert b["lat_min_us"] >= 3000


def test_a_work_side_is_named_for_its_work_and_never_the_rows_floor():
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import h2_floor
    assert h2floor.work_probe(8) == "floor-poll+8us" and h2floor.work_probe(2.5) == "floor-poll+2.5us"
    rec = lambda v: {"value": v, "machine": {"server": 1.0, "seconds": 1.0, "steal": 0, "others": 0, "disturbed": False},
                     "details": {"h2load": {"done": int(v), "seconds": 1.0}, "loadgen_cpu": 0.1}}
    s = h2_floor.summary("grpc.get.s1", {"floor-poll": [rec(20_000.0)], "floor-poll+8us": [rec(30_000.0)]})
    assert s["floor"]["side"] == "floor-poll" and s["floor"]["rate"] == 20_000.0


def test_the_work_probe_beside_the_rows_is_asked_for_and_never_picked(monkeypatch, tmp_path):
    """`run.py --work-probe-us N`: `start_beside` starts one more polling floor spending N µs a call,
    only when asked; `pick` still chooses among the designs only, whatever the probe's rate."""
    started = []

    class FakeFloor:
        def __init__(self, ctx, binary, name, answer, poll_us, read_ahead=True, work_us=0):
            self.name, self.poll_us, self.work_us = name, poll_us, work_us

        def start(self):
            started.append((self.name, self.poll_us, self.work_us))
            return self
    monkeypatch.setattr(h2floor, "Floor", FakeFloor)
    monkeypatch.setattr(h2floor, "build", lambda ctx: "h2_floor")
    monkeypatch.setattr(h2floor, "hearth_answer", lambda *a: b"")
    monkeypatch.setattr(grpcbench, "get_frame", lambda ctx, doc: b"")
    user = types.SimpleNamespace(uid="u", id_token="t")
    designs = [name for name, _ in h2floor.DESIGNS]
    for probe, names in ((None, designs), (5, designs + ["floor-poll+5us"])):
        started.clear()
        ctx = types.SimpleNamespace(run_dir=str(tmp_path), work_probe_us=probe)
        floors = h2floor.start_beside(ctx, 0, user)
        assert [f.name for f in floors] == names
    assert started[-1] == ("floor-poll+5us", h2floor.POLL_US, 5)

    from benchlib.report import Results
    r = Results()
    r.put("grpc.get.s1", "floor-block", 8_000.0)
    r.put("grpc.get.s1", "floor-poll", 20_000.0)
    r.put("grpc.get.s1", "floor-poll+5us", 30_000.0)
    h2floor.pick(r, "grpc.get.s1")
    assert r.get("grpc.get.s1", h2floor.FLOOR) == 20_000.0
