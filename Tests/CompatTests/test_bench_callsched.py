"""What ran during a one-stream call's round trip (bench/benchlib/callsched.py, `h2_floor.py
--perf-sched`) from `perf script` lines: fabricated lines in perf's format, real parsing and
arithmetic; nothing is measured here."""
import os
import sys

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib import callsched  # noqa: E402

SERVER, LOOP, FOLD, CLIENT = 100, 101, 102, 201
NAMES = {LOOP: "firestore-h2-0", FOLD: "rules-coverage"}
US = 1e-6


def ev(comm, pid, tid, cpu, t, event, trace):
    return f"{comm:>16s} {pid:5d}/{tid:<5d} [{cpu:03d}] {t:.9f}: {event}: {trace}"


def switch(cpu, t, prev, prev_comm, nxt, nxt_comm):
    pid = SERVER if prev in NAMES else (0 if prev == 0 else 200)
    return ev(prev_comm, pid, prev, cpu, t, "sched:sched_switch",
              f"prev_comm={prev_comm} prev_pid={prev} prev_prio=120 prev_state=S ==> next_comm={nxt_comm} next_pid={nxt} next_prio=120")


def sent(t):
    return ev("firestore-h2-0", SERVER, LOOP, 1, t, "syscalls:sys_exit_sendto", "0x189")


def calls(k, fold_at=None):
    """k cycles of 30 µs on CPU 1, loop and client by turns; the cycle `fold_at` is 50 µs longer, the
    coverage thread (woken by the loop) running 50 µs on CPU 1 inside it."""
    lines, t = [], 1000.0
    for i in range(k):
        lines.append(sent(t))
        lines.append(switch(1, t + 1 * US, LOOP, "firestore-h2-0", CLIENT, "h2load"))
        if i == fold_at:
            lines.append(ev("firestore-h2-0", SERVER, LOOP, 1, t + 0.5 * US, "sched:sched_wakeup",
                            "comm=rules-coverage pid=102 prio=120 target_cpu=001"))
            lines.append(switch(1, t + 10 * US, CLIENT, "h2load", FOLD, "rules-coverage"))
            lines.append(switch(1, t + 60 * US, FOLD, "rules-coverage", LOOP, "firestore-h2-0"))
            t += 50 * US
        else:
            lines.append(switch(1, t + 10 * US, CLIENT, "h2load", LOOP, "firestore-h2-0"))
        t += 30 * US
    lines.append(sent(t))
    # Another process on CPU 0 all along: not on the round trip's CPU, never stolen from it.
    lines.append(switch(0, 999.0, 0, "swapper/0", 300, "cc1"))
    lines.append(switch(0, t + 1, 300, "cc1", 0, "swapper/0"))
    return "\n".join(lines)


def test_a_wake_up_in_the_tail_is_attributed():
    a = callsched.analyse(calls(200, fold_at=150), SERVER, NAMES)
    assert a["calls"] == 201
    assert a["cycle"]["median"] == 30.0
    # the one slow cycle is the tail; its 50 µs are the coverage thread's, nothing else's
    assert a["tail"]["cycles"] == 1 and a["tail"]["mean_excess_us"] == 50.0
    assert a["tail_stolen_us_per_call"] == {"hearth:rules-coverage": round(50 / 200, 3)}
    assert a["tail_cycles_with"] == {"hearth:rules-coverage": 1}
    assert a["switched_in_per_1000"]["hearth:rules-coverage"] == round(1 / 201 * 1000, 2)
    assert a["wakeups_per_1000"] == {"hearth:<loop> → hearth:rules-coverage": round(1 / 201 * 1000, 2)}
    # the compiler on the other CPU ran the whole time but was never on the round trip's CPU
    assert "cc1" not in a["stolen_us_per_call"] and a["switched_in_per_1000"]["cc1"] > 0
    assert any("rules-coverage" in line for line in callsched.lines(a))


def test_no_server_lines():
    assert callsched.analyse(switch(0, 1.0, 0, "swapper/0", 300, "cc1"), SERVER, NAMES) == {}


def test_the_layout_of_each_cycle():
    """Cycles whose client ran on the loop's CPU (same) and on the other one (split), told apart, with
    the client's wait from its wake-up and the loop's switch-outs."""
    a = callsched.analyse(calls(100), SERVER, NAMES)
    same = a["layout"]["same"]
    assert set(a["layout"]) == {"same"} and same["share"] == 1.0 and same["median"] == 30.0
    assert same["loop_out_asleep"] == 1.0 and same["loop_out_runnable"] == 0.0  # fabricated prev_state=S
    # Now 100 cycles of 40 µs with the client on CPU 0: woken by the answer, running 12 µs later
    # (a halted vCPU's wake-up), while the loop polls on CPU 1 and never leaves it.
    lines, t = [], 2000.0
    for _ in range(100):
        lines.append(sent(t))
        lines.append(ev("firestore-h2-0", SERVER, LOOP, 1, t + 0.5 * US, "sched:sched_wakeup",
                        f"comm=h2load pid={CLIENT} prio=120 target_cpu=000"))
        lines.append(switch(0, t + 12.5 * US, 0, "swapper/0", CLIENT, "h2load"))
        lines.append(switch(0, t + 30 * US, CLIENT, "h2load", 0, "swapper/0"))
        t += 40 * US
    lines.append(sent(t))
    split = callsched.analyse("\n".join(lines), SERVER, NAMES)["layout"]
    assert set(split) == {"split"}
    assert split["split"]["share"] == 1.0 and split["split"]["median"] == 40.0
    assert split["split"]["client_wait_median"] == 12.0
    assert split["split"]["loop_out_runnable"] == 0.0 and split["split"]["loop_out_asleep"] == 0.0
    assert any("layout split" in line for line in callsched.lines(callsched.analyse("\n".join(lines), SERVER, NAMES)))
