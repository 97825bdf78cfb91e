"""The byte check of the bench's h2load GetDocument runs (bench/benchlib/grpcbench.py, `counted_answers`):
each answer is the document (L DATA bytes) or an error (Trailers-Only, none), and a run of fixed length
ends with calls in flight whose DATA may have arrived in part. No server is measured here."""
import os
import sys

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib.grpcbench import counted_answers  # noqa: E402
from benchlib.httpc import NotAvailable  # noqa: E402

L = 362


def run(done, data, started=None, ok=None):
    return {"done": done, "started": done if started is None else started, "status_2xx": done if ok is None else ok,
            "bytes_data": data}


def test_every_answer_whole_and_nothing_in_flight_counts_every_call():
    assert counted_answers(run(1000, 1000 * L), L, "x") == 1000


def test_a_stream_cut_at_the_end_is_accepted_and_what_it_could_hide_is_not_counted():
    # The emulator's run of 4 December: 56 bytes over answers × 362, one of 16 streams cut mid-message.
    s = run(39_000, 39_000 * L + 56, started=39_016)
    # 16 calls in flight could hold 16 × 362 bytes; 56 arrived, so up to 15 errors' missing bytes could
    # hide behind them: those 15 answers are not counted.
    assert counted_answers(s, L, "x") == 39_000 - 15
    assert s["cut_bytes"] == 56 and s["cut_calls"] == 16
    # Whole answers of every call in flight: nothing could hide.
    assert counted_answers(run(500, 510 * L, started=510), L, "x") == 500


def test_calls_in_flight_with_no_data_yet_may_hide_as_many_errors():
    assert counted_answers(run(500, 500 * L, started=501), L, "x") == 499


def test_answers_without_the_document_fail_the_run_saying_how_many():
    with pytest.raises(NotAvailable, match="at least 2 answers carried no document"):
        counted_answers(run(100, 98 * L + 10), L, "x")


def test_more_bytes_than_the_answers_and_the_calls_in_flight_can_hold_fail_the_run():
    with pytest.raises(NotAvailable, match="more than the 1 calls in flight"):
        counted_answers(run(100, 102 * L, started=101), L, "x")
    with pytest.raises(NotAvailable, match="more than the 0 calls in flight"):
        counted_answers(run(100, 100 * L + 1), L, "x")


def test_answers_that_are_not_http_200_or_no_answers_fail_the_run():
    with pytest.raises(NotAvailable):
        counted_answers(run(100, 100 * L, ok=99), L, "x")
    with pytest.raises(NotAvailable):
        counted_answers(run(0, 0), L, "x")
