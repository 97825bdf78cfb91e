"""A one-stream call's round trip in steps, from the system calls of the server's loop and its client
(`h2_floor.py --perf-steps`): `perf record -a` on the system-call tracepoints while a load runs, then
per answer

- *work*: the loop's `recvfrom` that returned bytes → its `sendto` entered: all the server's
  user-space work on the call (nghttp2's receive, the call, the answer's framing), the one step a
  server's design owns outright;
- *sendto*: the answer's `sendto`, entered → returned (the loopback transmit, and the client's wake-up
  when it sleeps);
- *after*: the `sendto` returned → the loop's next `epoll_wait` entered (the loop's work after the
  answer left: what a client woken onto the loop's CPU waits for);
- *turn*: the `sendto` returned → the client's next `write`/`writev`/`sendmsg` entered (the client's
  own work on the answer and the next request);
- *detect*: that write entered → the loop's `recvfrom` returned the request (the loopback transmit
  and the loop noticing: a poll round, or a wake-up from `epoll_wait`);

with medians (robust to the machine's other work) and means (what the rate sees), the share of calls
whose request the loop read after sleeping (an `epoll_wait` with a timeout other than 0 since the
answer before: the polling window shut, or a trial's sleeping half), and the cycle
(`sendto` returned → the next `sendto` returned): its mean, p50, p90, p99. The tracepoints add a
little to every system call, the same for every server measured.

Why not per thread of the client: h2load and grpcload run one loop each, so their writes are the
requests.
"""
import bisect
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time

EVENTS = ("syscalls:sys_exit_recvfrom", "syscalls:sys_enter_sendto", "syscalls:sys_exit_sendto",
          "syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_write", "syscalls:sys_enter_writev", "syscalls:sys_enter_sendmsg")
CLIENTS = ("h2load", "grpcload")
LINE = re.compile(r"\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)")
RET = re.compile(r"0x([0-9a-f]+)")
TIMEOUT = re.compile(r"timeout: 0x([0-9a-f]+)")
# Set by `h2_floor.py --pin`: perf itself runs on any CPU at the normal policy, not pinned with the load.
UNPIN = False


def record(pid, load):
    """(the load's value, its details, the steps) of one run of `load` (a `pairs.Load`) against the
    server process `pid`, under `perf record -a`."""
    value, details, text = perf_run(EVENTS, load, "comm,pid,tid,time,event,trace")
    return value, details, analyse(text, pid)


def perf_run(events, load, fields):
    """(the load's value, its details, `perf script`'s text with `fields`) of one run of `load` under
    `perf record -a` on `events`."""
    fd, out = tempfile.mkstemp(suffix=".perf.data")
    os.close(fd)
    p = subprocess.Popen(["perf", "record", "-q", "-a", "-e", ",".join(events), "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if UNPIN:
        # `h2_floor.py --pin` pins its children to the load generator's CPU, SCHED_FIFO: perf is not the load.
        os.sched_setscheduler(p.pid, os.SCHED_OTHER, os.sched_param(0))
        os.sched_setaffinity(p.pid, range(os.cpu_count()))
    time.sleep(0.5)
    try:
        value, details = load.once()
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)
    try:
        text = subprocess.run(["perf", "script", "--ns", "-i", out, "-F", fields],
                              capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(out)
    return value, details, text


def analyse(text, pid):
    """The steps (µs) of `perf script` output: the server's loop is `pid`'s thread with most sendtos."""
    threads, client = {}, []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        comm, p, tid, t, event, trace = m.groups()
        if int(p) == pid:
            threads.setdefault(int(tid), []).append((float(t), event, trace))
        elif comm in CLIENTS and ("enter_write" in event or "sendmsg" in event):
            client.append(float(t))
    if not threads:
        return {}
    loop = threads[max(threads, key=lambda k: sum(1 for e in threads[k] if e[1].endswith("enter_sendto")))]
    client.sort()
    reads, sends, work, sendto = [], [], [], []
    last_read = entered = None
    slept = asleep = 0
    after, sent = [], None
    for t, event, trace in loop:
        if event.endswith("enter_epoll_wait"):
            if sent is not None:
                after.append(t - sent)
                sent = None
            timeout = TIMEOUT.search(trace)
            asleep |= bool(timeout and int(timeout[1], 16) != 0)
        elif event.endswith("exit_recvfrom"):
            r = RET.search(trace)
            if r and 0 < int(r[1], 16) < 1 << 40:  # bytes, not EAGAIN (a negative errno)
                reads.append(t)
                last_read = t
                slept += asleep
                asleep = 0
        elif event.endswith("enter_sendto"):
            if last_read is not None:
                work.append(t - last_read)
            entered, last_read = t, None
        elif event.endswith("exit_sendto") and entered is not None:
            sendto.append(t - entered)
            sends.append(t)
            sent = t
    turn, detect = [], []
    for s in sends:
        i, j = bisect.bisect_left(client, s), bisect.bisect_left(reads, s)
        if i < len(client) and j < len(reads) and client[i] <= reads[j]:
            turn.append(client[i] - s)
            detect.append(reads[j] - client[i])
    cycle = [b - a for a, b in zip(sends, sends[1:])]
    out = {"calls": len(work), "slept": round(slept / max(1, len(reads)), 3)}
    for name, v in (("work", work), ("sendto", sendto), ("after", after), ("turn", turn), ("detect", detect), ("cycle", cycle)):
        if v:
            out[name] = {"median": round(statistics.median(v) * 1e6, 2), "mean": round(statistics.mean(v) * 1e6, 2)}
    if len(cycle) > 100:
        q = statistics.quantiles(cycle, n=100)
        out["cycle"].update(p90=round(q[89] * 1e6, 2), p99=round(q[98] * 1e6, 2))
    return out


def line(steps):
    """One printable line of `analyse`'s answer."""
    parts = [f"{k} {v['median']:.2f}/{v['mean']:.2f}" for k, v in steps.items() if isinstance(v, dict)]
    return f"slept before {steps.get('slept', 0):.1%} of requests; µs median/mean: " + ", ".join(parts) + (f"; cycle p90 {steps['cycle']['p90']:.1f}, p99 {steps['cycle']['p99']:.1f}"
                                                     if "p99" in steps.get("cycle", {}) else "")
