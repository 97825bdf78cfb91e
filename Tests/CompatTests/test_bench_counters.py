"""bench/benchlib/counters.py's pure parts: `perf stat -x,` output with system-call tracepoints read
into per-call counts, and the per-operation division. No server is measured here."""
import os
import sys

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib import counters  # noqa: E402

# What `perf stat -x, -e <SYSCALL_EVENTS> -p PID -o FILE` wrote in a txn35 run (4 s of the
# transaction row), with one event perf could not count.
PERF_OUTPUT = """# started on Sun Dec  6 13:22:32 2026

4277.63,msec,task-clock,4277627598,100.00,0.963,CPUs utilized
22089,,context-switches,4246607409,100.00,5.164,K/sec
248502,,raw_syscalls:sys_enter,4321309330,100.00,58.093,K/sec
44576,,syscalls:sys_enter_sendmsg,4277697289,100.00,10.421,K/sec
0,,syscalls:sys_enter_sendto,4277722546,100.00,0.000,/sec
49622,,syscalls:sys_enter_recvfrom,4183573107,100.00,11.600,K/sec
12735,,syscalls:sys_enter_epoll_ctl,4184034758,100.00,2.977,K/sec
<not supported>,,syscalls:sys_enter_writev,0,100.00,,
"""


def test_tracepoints_are_named_by_their_call(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text(PERF_OUTPUT)
    got = counters.parse_perf(str(path))
    assert got == {
        "task-clock": 4277.63, "context-switches": 22089, "syscalls": 248502,
        "sendmsg": 44576, "sendto": 0, "recvfrom": 49622, "epoll_ctl": 12735,
    }
    # Per transaction (three answers each: one sendmsg per answer), as rest_floor.py prints them.
    per = counters.per_op(dict(got, ops=14859))
    assert round(per["sendmsg"], 2) == 3.00
    assert round(per["syscalls"], 2) == 16.72
    assert round(per["task-clock µs"], 1) == 287.9


def test_the_syscalls_tool_counts_every_call_and_each_named_one():
    events = counters.SYSCALL_EVENTS.split(",")
    assert events[:3] == ["task-clock", "context-switches", "raw_syscalls:sys_enter"]
    named = [e[len("syscalls:sys_enter_"):] for e in events[3:]]
    assert named == list(counters.SYSCALLS)
    # An answer's send (whichever call libmicrohttpd uses), a park's and a commit's calls.
    for call in ("sendmsg", "sendto", "writev", "recvfrom", "epoll_wait", "epoll_ctl", "write", "read",
                 "futex", "pwrite64", "fcntl"):
        assert call in named
