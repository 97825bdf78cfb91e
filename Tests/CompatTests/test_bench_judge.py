"""The bench's judge (bench/benchlib/report.py, `Row.evaluate` and `render_table`) on rows with the
HTTP/2 floor: a 10× target Hearth misses is "bound" when the floor, measured in the same rounds, is
below 10× the emulator too, and stays NO when the floor reaches 10×. Real functions on fabricated
results; no server is measured here."""
import os
import sys

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib.report import NA, Results, Row, combine, jsonable, render_table  # noqa: E402

KEY, EMU, FLOOR, REST = "grpc.get.s1", "official emulator", "HTTP/2 floor", "REST get 1 conn"


def row(floor=True):
    return Row(KEY, "gRPC GetDocument, 1 stream", "calls/s", peers=[(EMU, "emulator")],
               ceilings=[(REST, ("fs.get.c1", "hearth"))] + ([(FLOOR, "floor")] if floor else []),
               target=[("min_ratio", REST, 1.0, "≥ the REST get"), ("min_ratio", EMU, 10, "≥ 10× emulator")],
               floor=FLOOR if floor else None)


def results(hearth, emulator, floor, rest=10_000.0):
    r = Results()
    r.put(KEY, "hearth", hearth)
    r.put(KEY, "emulator", emulator)
    if floor is not None:
        r.put(KEY, "floor", floor)
    r.put("fs.get.c1", "hearth", rest)
    return r


def met_cell(e):
    table, _ = render_table([e], quick=False)
    return table.splitlines()[2].rstrip(" |").rsplit("|", 1)[1].strip()


def test_a_miss_with_the_floor_below_10x_in_the_same_run_is_bound_and_shows_both_ratios():
    e = row().evaluate(results(24_000.0, 2_800.0, 26_600.0))   # Hearth 8.6×, floor 9.5×
    assert e["met"] == "bound"
    assert met_cell(e) == "bound"
    assert e["bounds"] == [{"ceiling": FLOOR, "ref": EMU, "ratio": pytest.approx(9.5), "threshold": 10}]
    table, _ = render_table([e], quick=False)
    assert "8.57× official emulator" in table and "HTTP/2 floor ÷ official emulator = 9.50×" in table
    assert jsonable(e)["met"] == "bound"


def test_a_miss_with_the_floor_at_or_above_10x_stays_no():
    for floor in (28_000.0, 30_000.0):                      # the floor at exactly 10× and above
        e = row().evaluate(results(24_000.0, 2_800.0, floor))
        assert e["met"] is False
        assert met_cell(e) == "**NO**"


def test_a_met_target_stays_yes_whatever_the_floor():
    e = row().evaluate(results(29_000.0, 2_800.0, 26_000.0))
    assert e["met"] is True and met_cell(e) == "yes"


def test_the_floor_does_not_excuse_another_target():
    # Hearth below the REST get: NO, even though the floor bounds the 10× target.
    e = row().evaluate(results(9_000.0, 2_800.0, 26_600.0, rest=10_000.0))
    assert e["met"] is False


def test_without_a_measured_floor_a_miss_is_no():
    for floor in (None, NA("the HTTP/2 floor could not run: cc failed")):
        r = results(24_000.0, 2_800.0, None)
        if floor is not None:
            r.put(KEY, "floor", floor)
        e = row().evaluate(r)
        assert e["met"] is False and e["bounds"] == []
    assert row(floor=False).evaluate(results(24_000.0, 2_800.0, 26_600.0))["met"] is False


def test_quick_runs_judge_nothing():
    e = row().evaluate(results(24_000.0, 2_800.0, 26_600.0), judge=False)
    assert e["met"] is None
    assert e["bounds"][0]["ratio"] == pytest.approx(9.5)


@pytest.mark.parametrize("verdicts,met", [([], None), ([None], None), ([True, None], True), ([True, "bound"], "bound"),
                                          (["bound", False], False), ([False, True], False)])
def test_a_rows_verdict_combines_its_targets(verdicts, met):
    assert combine(verdicts) == met


def test_the_rows_floor_is_the_better_designs_best_round():
    from benchlib import h2floor
    r = Results()
    r.put(KEY, "floor-poll", 22_000.0, rounds=[{"value": 22_000.0}])
    r.put(KEY, "floor-block", 25_000.0, rounds=[{"value": 25_000.0}, {"value": 20_000.0}])
    h2floor.pick(r, KEY)
    assert r.get(KEY, h2floor.FLOOR) == 25_000.0
    d = r.details[(KEY, h2floor.FLOOR)]
    assert d["design"] == "floor-block" and d["designs"] == {"floor-poll": 22_000.0, "floor-block": 25_000.0}
    assert [x["value"] for x in d["rounds"]] == [25_000.0, 20_000.0]
    # One design failed: the other is the floor; both failed: n/a with the first reason.
    r2 = Results()
    r2.na(KEY, "floor-poll", "floor-poll exited (1)")
    r2.put(KEY, "floor-block", 9_000.0)
    h2floor.pick(r2, KEY)
    assert r2.get(KEY, h2floor.FLOOR) == 9_000.0
    r3 = Results()
    r3.na(KEY, "floor-poll", "the HTTP/2 floor could not run: cc h2_floor.c failed")
    r3.na(KEY, "floor-block", "the HTTP/2 floor could not run: cc h2_floor.c failed")
    h2floor.pick(r3, KEY)
    assert isinstance(r3.get(KEY, h2floor.FLOOR), NA) and "cc h2_floor.c" in r3.get(KEY, h2floor.FLOOR).reason


def test_a_floor_that_cannot_be_built_is_a_reason_not_a_crash(monkeypatch):
    from benchlib import h2floor
    from benchlib.httpc import HarnessError

    def fail(ctx):
        raise HarnessError("cc h2_floor.c failed: nghttp2/nghttp2.h: No such file or directory")
    monkeypatch.setattr(h2floor, "build", fail)
    why = h2floor.start_beside(object(), 0, object())
    assert isinstance(why, str) and why.startswith("the HTTP/2 floor could not run: cc h2_floor.c failed")
    assert h2floor.start_beside(object(), 0, None) == "no user token (Auth not available)"
