"""bench/txn_threads.py's pure parts: reading a process's threads from /proc and the difference of two
readings per thread name. No server is measured here."""
import os
import sys
import threading

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

import txn_threads  # noqa: E402

T = txn_threads.TICK


def test_threads_reads_this_process_by_thread():
    done = threading.Event()
    t = threading.Thread(target=done.wait, name="probe")
    t.start()
    try:
        got = txn_threads.threads(os.getpid())
    finally:
        done.set()
        t.join()
    assert os.getpid() in got  # the main thread's id is the process id
    assert len(got) >= 2
    for name, user, system, voluntary, involuntary in got.values():
        assert isinstance(name, str) and name
        assert min(user, system, voluntary, involuntary) >= 0


def test_split_sums_threads_of_one_name_and_counts_new_threads_from_zero():
    before = {1: ("MHD-worker", 10, 5, 100, 7), 2: ("MHD-worker", 0, 0, 3, 0), 3: ("checkpoint", 4, 4, 9, 9),
              4: ("gone", 50, 50, 50, 50)}
    after = {1: ("MHD-worker", 10 + T, 5 + T // 2, 130, 8), 2: ("MHD-worker", T, 0, 13, 2),
             3: ("checkpoint", 4, 4 + T, 10, 9), 5: ("group-commit", T // 4, 0, 6, 1)}
    rows = txn_threads.split(before, after)
    assert set(rows) == {"MHD-worker", "checkpoint", "group-commit"}  # an ended thread counts nothing
    w = rows["MHD-worker"]
    assert w["threads"] == 2
    assert abs(w["user"] - 2.0) < 1e-9 and abs(w["system"] - (T // 2) / T) < 1e-9
    assert (w["voluntary"], w["involuntary"]) == (40, 3)
    assert abs(rows["checkpoint"]["system"] - 1.0) < 1e-9 and rows["checkpoint"]["user"] == 0
    g = rows["group-commit"]  # started between the readings: all of it is the run's
    assert abs(g["user"] - (T // 4) / T) < 1e-9 and (g["voluntary"], g["involuntary"], g["threads"]) == (6, 1, 1)
