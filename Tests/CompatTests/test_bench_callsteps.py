"""The round trip's steps (bench/benchlib/callsteps.py, `h2_floor.py --perf-steps`) from `perf script`
lines: fabricated lines in perf's format, real parsing and arithmetic; nothing is measured here."""
import os
import sys

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib import callsteps  # noqa: E402

SERVER, LOOP, OTHER = 100, 101, 102


def server(tid, t, event, trace):
    return f"  firestore-h2-0 {SERVER}/{tid} {t:.9f}: syscalls:{event}: {trace}"


def client(t, event="sys_enter_writev"):
    return f"          h2load 200/201 {t:.9f}: syscalls:{event}: fd: 0x00000005, vec: 0x1, vlen: 0x00000001"


def call(t, sleep):
    """One call starting at t (s): the loop reads the request, answers 8 µs later (a 5 µs sendto), the
    client writes the next request 10 µs after, the loop reads it 4 µs after that."""
    us = 1e-6
    return [
        server(LOOP, t, "sys_exit_recvfrom", "0x243"),
        server(LOOP, t + 8 * us, "sys_enter_sendto", "fd: 0x8c, buff: 0x1, len: 0x189, flags: 0x4000"),
        server(LOOP, t + 13 * us, "sys_exit_sendto", "0x189"),
        server(LOOP, t + 14 * us, "sys_enter_epoll_wait",
               "epfd: 0x4a, events: 0x1, maxevents: 0x40, timeout: " + ("0xffffffff" if sleep else "0x00000000")),
        server(LOOP, t + 15 * us, "sys_exit_recvfrom", "0xfffffffffffffff5"),  # EAGAIN: not a request
        client(t + 23 * us),
    ]


def test_steps_of_regular_calls():
    lines = []
    for k in range(10):
        lines += call(1000 + k * 27e-6, sleep=k % 2 == 0)
    # a thread of the server that sends nothing is not the loop; an unrelated process is ignored
    lines.append(server(OTHER, 1000.0001, "sys_enter_epoll_wait", "epfd: 0x4, events: 0x1, maxevents: 0x40, timeout: 0xffffffff"))
    lines.append("            java 300/301 1000.000100000: syscalls:sys_enter_write: fd: 0x1, buf: 0x1, count: 0x1")
    s = callsteps.analyse("\n".join(lines), SERVER)
    assert s["calls"] == 10
    assert s["work"]["median"] == 8.0 and s["sendto"]["median"] == 5.0 and s["after"]["median"] == 1.0
    assert s["turn"]["median"] == 10.0  # sendto returned (t+13) → the client's write (t+23)
    assert s["detect"]["median"] == 4.0  # the write (t+23) → the next call's read (t+27)
    assert s["cycle"]["median"] == 27.0
    # every other call's request came after a blocking epoll_wait (the first read has none before it)
    assert s["slept"] == 0.5
    assert "work 8.00/8.00" in callsteps.line(s)


def test_no_server_lines():
    assert callsteps.analyse(client(1.0), SERVER) == {}
