"""The pure parts of the bench's one-connection layout (bench/benchlib/layout.py): parsing a thread's
/proc stat (its last CPU), the busiest thread of a run and the same-CPU classification, from
sample texts; and pinning this test's own thread, which needs no server."""
import os
import sys

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib import layout  # noqa: E402


def stat_line(tid, comm, state="S", utime=10, stime=5, cpu=1):
    """A /proc/<pid>/task/<tid>/stat line with the fields the parser reads at their real positions."""
    fields = [state] + ["0"] * 49
    fields[11], fields[12], fields[36] = str(utime), str(stime), str(cpu)  # fields 14, 15 and 39
    return f"{tid} ({comm}) " + " ".join(fields)


def test_a_thread_stat_gives_tid_state_ticks_and_last_cpu():
    assert layout.parse_task_stat(stat_line(4242, "wrk", "R", 7, 3, 0)) == (4242, "R", 10, 0)


def test_a_command_name_with_spaces_and_parentheses_is_skipped_whole():
    assert layout.parse_task_stat(stat_line(7, "MHD-worker (1) x", cpu=1)) == (7, "S", 15, 1)


def test_a_real_stat_line_of_this_process_parses():
    with open(f"/proc/self/task/{os.getpid()}/stat") as f:
        tid, state, ticks, cpu = layout.parse_task_stat(f.read())
    assert tid == os.getpid() and ticks >= 0 and cpu in os.sched_getaffinity(0) | {cpu}


def test_the_busiest_thread_is_the_one_that_used_most_ticks_in_the_run():
    first = {1: ("S", 100, 0), 2: ("S", 5, 1)}
    last = {1: ("S", 101, 0), 2: ("S", 50, 1), 3: ("S", 2, 1)}  # 3 started during the run
    assert layout.busiest(first, last) == 2
    assert layout.busiest({}, {}) is None


def sample(client_cpu, server_cpu):
    return ({10: ("S", 0, client_cpu)}, {20: ("S", 0, server_cpu), 21: ("S", 0, 1 - server_cpu)})


def test_a_run_whose_ends_shared_a_vcpu_most_of_the_time_is_same_cpu():
    r = layout.classify([sample(0, 0)] * 3 + [sample(0, 1)], 10, 20)
    assert r["layout"] == "same-CPU" and r["same_cpu_share"] == 0.75 and r["samples"] == 4
    assert r["client_cpus"] == {0: 4} and r["server_cpus"] == {0: 3, 1: 1}


def test_a_run_whose_ends_ran_apart_is_cross_cpu_and_half_is_same():
    assert layout.classify([sample(0, 1)] * 3 + [sample(1, 1)], 10, 20)["layout"] == "cross-CPU"
    assert layout.classify([sample(0, 1), sample(1, 1)], 10, 20)["layout"] == "same-CPU"


def test_samples_missing_a_thread_are_not_counted_and_none_is_unknown():
    r = layout.classify([({}, {20: ("S", 0, 0)}), sample(1, 1)], 10, 20)
    assert r["samples"] == 1 and r["layout"] == "same-CPU"
    assert layout.classify([], 10, 20)["layout"] == "unknown"
    assert layout.classify([sample(0, 0)], None, 20)["same_cpu_share"] is None


@pytest.mark.skipif(not layout.pinnable(), reason="needs the two vCPUs the layout names")
def test_set_affinity_pins_every_thread_of_a_process_and_can_undo_it():
    import subprocess
    p = subprocess.Popen([sys.executable, "-c", "import threading, time\n"
                          "t = threading.Thread(target=time.sleep, args=(30,), daemon=True); t.start(); time.sleep(30)"])
    try:
        import time
        deadline = time.monotonic() + 30
        while len(layout.tasks([p.pid])) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        everything = os.sched_getaffinity(0)
        assert layout.set_affinity(p.pid, {layout.SERVER_CPU}) == 2
        assert all(os.sched_getaffinity(t) == {layout.SERVER_CPU} for t in layout.tasks([p.pid]))
        layout.set_affinity(p.pid, everything)
        assert all(os.sched_getaffinity(t) == everything for t in layout.tasks([p.pid]))
    finally:
        p.kill()
        p.wait()


def test_cpu_seconds_sum_every_threads_ticks_since_the_first_reading():
    first = {1: ("S", 100, 0), 2: ("S", 5, 1)}
    last = {1: ("S", 100 + layout.CLK_TCK, 0), 2: ("S", 5 + layout.CLK_TCK, 1), 3: ("S", layout.CLK_TCK, 1)}
    assert layout.cpu_seconds(first, last) == 3


SPIN_CHILD = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from benchlib import layout
layout.pin_realtime(int(sys.argv[2]), float(sys.argv[3]), rt_runtime=950000)
print("pinned", os.sched_getscheduler(0) == os.SCHED_FIFO, flush=True)
end = time.monotonic() + float(sys.argv[4])
while time.monotonic() < end:
    if sys.argv[5] == "naps":
        # A polling loop's shape: runs ~50 ms, then blocks briefly, as a loop out of work does.
        t = time.monotonic() + 0.05
        while time.monotonic() < t:
            pass
        time.sleep(0.001)
print("done", flush=True)
"""


def run_spin_child(guard, seconds, shape):
    import signal
    import subprocess
    cpu = max(os.sched_getaffinity(0))
    p = subprocess.Popen([sys.executable, "-c", SPIN_CHILD, os.path.join(REPO, "bench"), str(cpu), str(guard),
                          str(seconds), shape], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, _ = p.communicate(timeout=seconds + 10)
    except subprocess.TimeoutExpired:
        p.kill()  # the guard failed: a spin still running, killed here (not starved: this test is not real-time)
        p.communicate()
        pytest.fail("a real-time spin outlived its guard")
    if "pinned" not in out:
        pytest.skip("SCHED_FIFO not permitted here")
    return p.returncode, out


def test_a_pinned_real_time_spin_is_killed_by_its_guard():
    # Spins 4 s without blocking under a 0.2 s guard: the kernel sends SIGXCPU (then SIGKILL).
    code, out = run_spin_child(0.2, 4.0, "spin")
    assert code in (-signal_number("SIGXCPU"), -signal_number("SIGKILL")) and "done" not in out


def test_a_pinned_thread_that_blocks_now_and_then_outlives_its_guard():
    # Runs 0.6 s in 50-ms stretches under a 0.2 s guard: each nap restarts the count.
    code, out = run_spin_child(0.2, 0.6, "naps")
    assert code == 0 and "done" in out


def test_pinning_is_refused_with_the_real_time_throttle_off():
    with pytest.raises(SystemExit):
        layout.pin_realtime(0, 1.0, rt_runtime=-1)
    assert os.sched_getscheduler(0) != os.SCHED_FIFO


def signal_number(name):
    import signal
    return int(getattr(signal, name))
