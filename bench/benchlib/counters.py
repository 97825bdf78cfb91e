"""Per-operation kernel-side counts of a server under a row's load: what CPU time is made of besides
instructions (docs/benchmarks.md, restcpu).

`with_counters(load, pid, tool, totals)` wraps a `pairs.Load` so that each timed run is also counted on
the server `pid`:
- tool "perf": `perf stat` software events on every thread of the process (task-clock, context
  switches, CPU migrations, page faults; hardware events when the machine has them), plus each
  thread name's voluntary and involuntary switches and CPU from /proc/<pid>/task (threads that exit
  during the run are missed there; perf's totals keep them only if they existed when it attached);
- tool "strace": `strace -c -f` system call counts (strace slows every call: the counts per
  operation are what to read, not the rate);
- tool "record": `perf record -g` of every thread, kept for `perf report` (its path is logged);
- tool "syscalls": `perf stat` of the kernel's system-call tracepoints (every call, and the calls an
  HTTP/1.1 answer and a commit make one by one) with task-clock and context switches: the counts
  strace gives, taken natively — strace stops the process at every call, which changes how requests
  meet (under strace a REST commit found the writer busy and parked twice as often; txn35). The
  tracepoints cost some CPU of their own: read the counts, not that round's rate.
The counts are added to `totals` ({name: number}, with "ops" the successful operations), so several
rounds sum up; `per_op(totals)` divides. The counting process is started and reaped outside the
load generator's CPU window (`with_loadgen_cpu` wraps the load inside this).
"""
import os
import signal
import subprocess
import tempfile
import time

from .machine import stat_cpu_seconds, stat_fields, task_files
from .pairs import Load

PERF_EVENTS = "task-clock,context-switches,cpu-migrations,page-faults,instructions,cycles"
# The calls a request, its answer, a park and a commit make (tool "syscalls"); raw_syscalls counts all.
SYSCALLS = ("sendmsg", "sendto", "writev", "recvfrom", "epoll_wait", "epoll_ctl", "futex", "write", "read",
            "poll", "sched_yield", "pwrite64", "pread64", "fcntl", "fdatasync")
SYSCALL_EVENTS = ",".join(["task-clock", "context-switches", "raw_syscalls:sys_enter"]
                          + [f"syscalls:sys_enter_{name}" for name in SYSCALLS])


def thread_counts(pid):
    """{thread name: [voluntary switches, involuntary switches, CPU seconds]} summed by name, and the
    whole process's user and system seconds (names "process user", "process system": [0, 0, s])."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = stat_fields(f.read())
        out["process user"] = [0, 0, int(s[11]) / tick]
        out["process system"] = [0, 0, int(s[12]) / tick]
        stats = dict(task_files(pid, "stat"))
        statuses = list(task_files(pid, "status"))
    except OSError:
        return out
    for tid, status in statuses:
        if tid not in stats:
            continue  # ended between the two reads
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        row = out.setdefault(fields.get("Name", "?").strip(), [0, 0, 0.0])
        row[0] += int(fields.get("voluntary_ctxt_switches", 0))
        row[1] += int(fields.get("nonvoluntary_ctxt_switches", 0))
        row[2] += stat_cpu_seconds(stats[tid])
    return out


def parse_perf(path):
    """{event: value} from `perf stat -x,` output (events perf could not count are left out). A system
    call's tracepoint is named by the call ("syscalls:sys_enter_sendmsg" → "sendmsg"), every call
    together "syscalls" ("raw_syscalls:sys_enter")."""
    out = {}
    with open(path) as f:
        for line in f:
            p = line.strip().split(",")
            if len(p) < 3 or not p[0] or p[0].startswith("<"):
                continue
            try:
                value = float(p[0])
            except ValueError:
                continue
            name = p[2]
            if name == "raw_syscalls:sys_enter":
                name = "syscalls"
            elif name.startswith("syscalls:sys_enter_"):
                name = name[len("syscalls:sys_enter_"):]
            out[name] = value
    return out


def parse_strace(report):
    """{syscall: calls} from the text of `strace -c`'s table (the errors column may be empty)."""
    out = {}
    for line in report.splitlines():
        p = line.split()
        if len(p) >= 5 and p[0][0].isdigit() and p[3].isdigit() and p[-1] not in ("total", "syscall"):
            out[p[-1]] = int(p[3])
    return out


def with_counters(load, pid, tool, totals, operations):
    """`load` whose timed runs are counted on `pid` with `tool` into `totals`; `operations(details)` →
    the run's successful operations. A reason string (the row is n/a) is passed through."""
    if isinstance(load, str) or not tool:
        return load

    def once():
        out = os.path.join(tempfile.mkdtemp(prefix="counters-"), "out.txt")
        if tool in ("perf", "syscalls"):
            argv = ["perf", "stat", "-x,", "-e", PERF_EVENTS if tool == "perf" else SYSCALL_EVENTS, "-p", str(pid), "-o", out]
        elif tool == "record":
            out = os.path.join(os.path.dirname(out), "perf.data")
            argv = ["perf", "record", "-g", "-F", "4999", "-p", str(pid), "-o", out]
        else:
            argv = ["strace", "-c", "-f", "-p", str(pid), "-o", out]
        before = thread_counts(pid)
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3 if tool in ("perf", "syscalls") else 1.0)  # attached to every thread before the load starts
        try:
            value, details = load.once()
        finally:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=60)
        after = thread_counts(pid)
        ops = operations(details)
        totals["ops"] = totals.get("ops", 0) + ops
        if tool == "record":
            print(f"perf record of pid {pid}, {ops} operations: {out}", flush=True)
            got = {}
        else:
            with open(out) as f:
                got = parse_perf(out) if tool in ("perf", "syscalls") else parse_strace(f.read())
        for k, v in got.items():
            totals[k] = totals.get(k, 0) + v
        for name, (v, n, cpu) in after.items():
            b = before.get(name, (0, 0, 0.0))
            for suffix, d in (("vol", v - b[0]), ("invol", n - b[1]), ("cpu_s", cpu - b[2])):
                if d:
                    key = f"{name if name.startswith('process ') else 'thread ' + name} {suffix}"
                    totals[key] = totals.get(key, 0) + d
        return value, details
    return Load(once, load.warmup)


def per_op(totals):
    """Every count divided by the operations (task-clock and thread CPU in µs)."""
    ops = max(1, totals.get("ops", 0))
    out = {}
    for k, v in totals.items():
        if k == "ops":
            continue
        if k == "task-clock":  # perf reports milliseconds
            out["task-clock µs"] = v * 1e3 / ops
        elif k.endswith("cpu_s"):
            out[k[:-len("cpu_s")] + "cpu µs"] = v * 1e6 / ops
        else:
            out[k] = v / ops
    return out
