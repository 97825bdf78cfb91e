"""Which vCPU each end of a one-connection load run ran on, and pinning them to one.

At one connection a request is a round trip: wrk sends, the server wakes, answers, wrk wakes. On this
two-vCPU VM (Firecracker, guest halt polling off: `haltpoll.guest_halt_poll_ns=0`) the kernel either
keeps both ends on one vCPU — each wakes the other where it runs, no vCPU ever halts — or puts them on
different vCPUs, where every request halts and wakes a vCPU twice (a VM exit and an inter-processor
interrupt each way). Which one it picks differs between runs of one server: nginx answered 23,888
req/s at a 22 µs median one way and 14,855 at ~60 µs the other in the same point of the 10:40 run.
An unpinned ratio at one connection could compare two layouts instead of two servers.

So the one-connection S3 points pin the layout, the same for every system: wrk and every thread of
the server (and of its child processes: nginx's workers) on one vCPU, SERVER_CPU = CLIENT_CPU. Then a
round trip is the two processes' CPU work and the loopback — the servers' work, not the hypervisor's
wake-ups, which in the split layout are more than half of it and move with the host
(docs/benchmarks.md, *c1layout*, has the measurements of every layout). Every run records where each
end actually ran (sampled from /proc: field 39 of each task's stat). The parsers take the files'
text, so the tests feed them sample texts.
"""
import os
import threading

CLIENT_CPU = 0
SERVER_CPU = 0       # the pinned layout: the server on wrk's vCPU
SPLIT_CPU = 1        # the other vCPU, for bench/c1_layout.py's split layout (measured, not used)
SAMPLE_S = 0.05      # one sample every 50 ms: ~100 in a 5 s run, well under 1% of a core
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SAME_CPU_SHARE = 0.5  # a run whose ends shared a vCPU in at least half of the samples is "same-CPU"


def parse_task_stat(text):
    """/proc/<pid>/task/<tid>/stat → (tid, state, utime + stime ticks, last CPU). The command name sits
    in parentheses and may hold spaces and parentheses, so fields are counted from the last ')';
    the CPU is field 39 ("processor": the CPU the task last ran on, proc(5))."""
    close = text.rindex(")")
    tid = int(text[:text.index("(")])
    f = text[close + 2:].split()
    # f[0] is field 3 (state): utime 14, stime 15, processor 39.
    return tid, f[0], int(f[11]) + int(f[12]), int(f[36])


def pinnable():
    """True when this process may put wrk and the server on the vCPUs the pinned layout names."""
    try:
        return {CLIENT_CPU, SERVER_CPU} <= os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return False


def child_pids(pid):
    """Direct child processes of `pid` (nginx's master → its workers), from /proc/<pid>/task/*/children."""
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out += [int(c) for c in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return out


def process_tree(pid):
    """`pid` and its descendants."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.append(p)
            todo += child_pids(p)
    return seen


def tasks(pids):
    """Every thread id of the processes `pids`."""
    out = []
    for pid in pids:
        try:
            out += [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            pass
    return out


def read_tasks(pids):
    """{tid: (state, ticks, cpu)} for every thread of `pids` (threads that vanish are left out)."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    t, state, ticks, cpu = parse_task_stat(f.read())
            except (OSError, ValueError, IndexError):
                continue
            out[t] = (state, ticks, cpu)
    return out


def set_affinity(pid, cpus):
    """Every thread of `pid` and of its descendants on `cpus`; returns how many threads were set.
    Threads created later inherit the mask of the thread that creates them, so a pinned server stays
    pinned. sched_setaffinity on a thread id sets that thread only (Linux), hence the loop."""
    n = 0
    for tid in tasks(process_tree(pid)):
        try:
            os.sched_setaffinity(tid, cpus)
            n += 1
        except OSError:
            pass  # a thread that exited between the listing and the call
    return n


def busiest(first, last):
    """The thread that used the most CPU ticks between two read_tasks() results (None if none ran)."""
    best, most = None, -1
    for tid, (_, ticks, _) in last.items():
        used = ticks - first.get(tid, (None, ticks, None))[1]
        if used > most:
            best, most = tid, used
    return best


def cpu_seconds(first, last):
    """CPU seconds every thread in `last` used since `first` (threads that exited during the run are
    not counted: their ticks left with them)."""
    return sum(ticks - first.get(tid, (None, 0, None))[1] for tid, (_, ticks, _) in last.items()) / CLK_TCK


def classify(samples, client_tid, server_tid):
    """samples: [(client {tid: (state, ticks, cpu)}, server {…})]; the share of samples in which the
    client's and the server's busiest threads had last run on the same vCPU, and the layout name."""
    same = total = 0
    client_cpus, server_cpus = {}, {}
    for client, server in samples:
        if client_tid not in client or server_tid not in server:
            continue
        c, s = client[client_tid][2], server[server_tid][2]
        client_cpus[c] = client_cpus.get(c, 0) + 1
        server_cpus[s] = server_cpus.get(s, 0) + 1
        total += 1
        same += c == s
    share = same / total if total else None
    layout = "unknown" if share is None else ("same-CPU" if share >= SAME_CPU_SHARE else "cross-CPU")
    return {"same_cpu_share": None if share is None else round(share, 3), "layout": layout,
            "samples": total, "client_cpus": client_cpus, "server_cpus": server_cpus}


class Sampler(threading.Thread):
    """Samples both ends' threads every SAMPLE_S while a load run lasts; `result()` classifies."""

    def __init__(self, client_pid, server_pid):
        super().__init__(daemon=True)
        self.client_pids = [client_pid]
        self.server_pids = process_tree(server_pid)
        self.samples = []
        self._halt = threading.Event()
        self.first = (read_tasks(self.client_pids), read_tasks(self.server_pids))

    def run(self):
        while not self._halt.wait(SAMPLE_S):
            self.samples.append((read_tasks(self.client_pids), read_tasks(self.server_pids)))

    def result(self):
        self._halt.set()
        self.join(2)
        if not self.samples:
            return {"layout": "unknown", "same_cpu_share": None, "samples": 0}
        # The last sample that still saw the client (wrk may have exited before the final one).
        last_client = next((c for c, _ in reversed(self.samples) if c), {})
        last_server = read_tasks(self.server_pids)
        out = classify(self.samples, busiest(self.first[0], last_client), busiest(self.first[1], last_server))
        # The server's CPU time over the run (its threads' user + system ticks): what a request costs it.
        out["server_cpu_s"] = round(cpu_seconds(self.first[1], last_server), 2)
        return out


# --- The pinned real-time layout (`h2_floor.py --pin`, `get_rows.py --pin`) -------------------------
#
# Those scripts make themselves SCHED_FIFO on one CPU so that every process they start (servers moved
# to the other CPU, the load generators left on this one) inherits it. A SCHED_FIFO thread that spins
# without blocking is never preempted by another of the same priority nor by any ordinary thread
# beyond the kernel's real-time throttle: h2_floor.py once sat runnable for ~14 minutes behind such a
# spinner on its CPU, a pending SIGKILL undelivered because the killed process never got to run
# (grpcget35). The guard makes that impossible whoever spins: RLIMIT_RTTIME, which every child
# inherits, bounds the CPU time a real-time thread may use without a blocking system call (sched_yield
# does not count as one); past the soft limit the kernel sends SIGXCPU, one second later SIGKILL. A
# polling loop blocks whenever it runs out of work (Hearth's BusyPoll, the floor's loop sleep after
# `--poll-us`), so only a thread stuck spinning through a whole round and beyond reaches it.

def realtime_guard_seconds(round_seconds):
    """How long a pinned real-time thread may run without blocking: a few rounds' length, at least 20 s
    (a loaded round's warm-up and load together last a few seconds; a stuck spin, minutes)."""
    return max(20.0, 4.0 * float(round_seconds))


def read_rt_runtime(path="/proc/sys/kernel/sched_rt_runtime_us"):
    """The kernel's real-time throttle (µs of each period real-time threads may take), or None if unknown."""
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def pin_realtime(cpu, guard_seconds, rt_runtime=None):
    """This process on `cpu`, SCHED_FIFO priority 1, with RLIMIT_RTTIME at `guard_seconds` (hard limit
    one second more): inherited by every process it starts afterwards. Refuses (SystemExit) when the
    kernel's real-time throttle is off (sched_rt_runtime_us -1), which leaves ordinary threads — the
    kernel's own work on that CPU included — nothing while a real-time one runs. The limit is set
    before the policy, so no moment runs real-time unguarded."""
    import resource
    runtime = read_rt_runtime() if rt_runtime is None else rt_runtime
    if runtime is not None and runtime < 0:
        raise SystemExit("--pin: the kernel's real-time throttle is off (/proc/sys/kernel/sched_rt_runtime_us is -1); "
                         "a spinning SCHED_FIFO thread would own its CPU: not pinning")
    soft = max(1, int(guard_seconds * 1e6))
    resource.setrlimit(resource.RLIMIT_RTTIME, (soft, soft + 1_000_000))
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
