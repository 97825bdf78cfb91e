"""What else the machine did during a measured round: the VM's steal time and the CPU of every process
that is neither the server being measured nor the load generator.

The bench runs on a shared two-core VM. A round that ran while the hypervisor took CPU away (steal) or
while another tenant's build, the idle peer server's garbage collector or a daemon used a core did not
see the same machine as its neighbours; `account` says so, and `pairs.py` marks the round disturbed.

Everything is read from /proc: the aggregate `cpu` line of /proc/stat (steal) and /proc/<pid>/stat of
every process (utime + stime, its session and parent). The parsers take the files' text, so the tests
feed them sample texts.
"""
import json
import os
import resource
import subprocess
import time

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PF_KTHREAD = 0x00200000  # task flags: a kernel thread (include/linux/sched.h)

# A round is disturbed when, averaged over the round, the hypervisor stole this much of a core or
# processes outside the measurement used this much: 0.10 core is 5% of the two cores the server and
# its load generator share — a visible share of a CPU-bound rate.
STEAL_LIMIT = 0.05
OTHERS_LIMIT = 0.10

CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def parse_cpu_line(stat_text):
    """The aggregate `cpu` line of /proc/stat as {field: ticks} (the fields an old kernel lacks are 0)."""
    for line in stat_text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            values = [int(v) for v in parts[1:1 + len(CPU_FIELDS)]]
            values += [0] * (len(CPU_FIELDS) - len(values))
            return dict(zip(CPU_FIELDS, values))
    raise ValueError("no aggregate cpu line in /proc/stat")


class Proc:
    """One line of /proc/<pid>/stat: what accounting needs."""

    __slots__ = ("pid", "comm", "ppid", "sid", "flags", "ticks", "start")

    def __init__(self, pid, comm, ppid, sid, flags, ticks, start):
        self.pid, self.comm, self.ppid, self.sid = pid, comm, ppid, sid
        self.flags, self.ticks, self.start = flags, ticks, start

    @property
    def kernel(self):
        return bool(self.flags & PF_KTHREAD)


def parse_pid_stat(text):
    """/proc/<pid>/stat → Proc. The command name sits in parentheses and may itself hold spaces and
    parentheses, so the fields are counted from the last ')' (proc(5))."""
    close = text.rindex(")")
    pid = int(text[:text.index("(")])
    comm = text[text.index("(") + 1:close]
    f = text[close + 2:].split()
    # f[0] is field 3 (state): ppid 4, session 6, flags 9, utime 14, stime 15, starttime 22.
    return Proc(pid, comm, int(f[1]), int(f[3]), int(f[6]), int(f[11]) + int(f[12]), int(f[19]))


class Snapshot:
    """The machine at one moment: the cpu line, every process, the monotonic time."""

    def __init__(self, at, cpu, procs):
        self.at, self.cpu, self.procs = at, cpu, procs

    @classmethod
    def from_texts(cls, at, stat_text, pid_texts):
        procs = {}
        for text in pid_texts:
            try:
                p = parse_pid_stat(text)
            except (ValueError, IndexError):
                continue
            procs[p.pid] = p
        return cls(at, parse_cpu_line(stat_text), procs)


def read_snapshot(proc_root="/proc"):
    texts = []
    for entry in os.listdir(proc_root):
        if entry.isdigit():
            try:
                with open(os.path.join(proc_root, entry, "stat")) as f:
                    texts.append(f.read())
            except OSError:  # exited meanwhile
                continue
    with open(os.path.join(proc_root, "stat")) as f:
        stat = f.read()
    return Snapshot.from_texts(time.monotonic(), stat, texts)


def session_cpu_seconds(sid, proc_root="/proc"):
    """CPU seconds used so far by every process of session `sid` (a server and what it started: gcloud's
    wrapper and its JVM share one); None when no process of it is left."""
    total, found = 0, False
    for entry in os.listdir(proc_root):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc_root, entry, "stat")) as f:
                p = parse_pid_stat(f.read())
        except (OSError, ValueError, IndexError):
            continue
        if p.sid == sid:
            total += p.ticks
            found = True
    return total / CLK_TCK if found else None


def descendants(procs, root):
    """Pids of `root` and everything under it in `procs` (by parent pid)."""
    children = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out.add(pid)
        todo.extend(children.get(pid, []))
    return out


def account(before, after, server_sid, peer_sids=(), harness_pid=None):
    """What happened between two snapshots besides the measurement, in cores (CPU seconds per second):

    - steal: time the hypervisor gave this VM's CPUs to someone else (/proc/stat);
    - others: processes outside the measurement — other tenants, daemons;
    - peer: the other server(s), idle by design (a JVM collecting garbage, a checkpoint);
    - kernel: kernel threads (loopback softirqs follow the load itself, so they are shown, not judged).
    The measured server (session `server_sid`) and the harness (`harness_pid`, this process, and its
    children: the load generators) are the measurement. A process that started during the round counts
    whole; one that ended during it is not seen (/proc no longer has it)."""
    secs = max(after.at - before.at, 1e-9)
    steal = (after.cpu["steal"] - before.cpu["steal"]) / CLK_TCK / secs
    harness = set()
    if harness_pid is not None:
        harness = descendants(before.procs, harness_pid) | descendants(after.procs, harness_pid)
    peers = set(peer_sids)
    used = {"server": 0, "harness": 0, "peer": 0, "kernel": 0, "others": 0}
    top = {}
    for pid, p in after.procs.items():
        b = before.procs.get(pid)
        delta = p.ticks - b.ticks if b is not None and b.start == p.start else p.ticks
        if delta <= 0:
            continue
        if p.sid == server_sid:
            kind = "server"
        elif p.sid in peers:
            kind = "peer"
        elif pid in harness:
            kind = "harness"
        elif p.kernel:
            kind = "kernel"
        else:
            kind = "others"
            top[f"{p.comm}[{pid}]"] = delta
        used[kind] += delta
    cores = {k: v / CLK_TCK / secs for k, v in used.items()}
    out = {"seconds": round(secs, 3), "steal": round(steal, 3)}
    out.update({k: round(v, 3) for k, v in cores.items()})
    out["top_others"] = [(name, round(t / CLK_TCK / secs, 3))
                         for name, t in sorted(top.items(), key=lambda kv: -kv[1])[:3]]
    reasons = []
    if steal >= STEAL_LIMIT:
        reasons.append(f"steal {steal:.2f} core")
    if cores["others"] + cores["peer"] >= OTHERS_LIMIT:
        reasons.append(f"other processes {cores['others']:.2f} core"
                       + (f", idle peer {cores['peer']:.2f} core" if peers else ""))
    out["disturbed"] = bool(reasons)
    out["why"] = "; ".join(reasons)
    return out


def children_cpu():
    """User + system CPU seconds of this process's waited-for children (the load generators: they start
    and end within a round, so `account`'s /proc snapshots never see them; a server not yet waited
    for is not in here)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def stat_fields(text):
    """The fields of a /proc/<pid>/stat (or task stat) line after the command name, which sits in
    parentheses and may hold spaces: [0] is the state, [11] / [12] user / system ticks, [16] nice."""
    return text.rsplit(")", 1)[1].split()


def stat_cpu_seconds(text):
    """User + system CPU seconds from a /proc stat line."""
    fields = stat_fields(text)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def task_files(pid, name):
    """(thread id, text of /proc/<pid>/task/<tid>/<name>) for every thread still there."""
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/{name}") as f:
                yield tid, f.read()
        except OSError:
            continue


def thread_names(pid):
    """{tid: the thread's name} of every thread of process `pid` (Hearth names its loops and workers);
    empty when the process is gone."""
    try:
        return {int(tid): text.strip() for tid, text in task_files(pid, "comm")}
    except OSError:
        return {}


def vcpu_hop_ns(binary):
    """Nanoseconds one cache line takes from one vCPU to the other just now (`bench/ceilings/pingpong.c`,
    ≤ 0.05 s of both CPUs spinning), or None when it cannot run. On this VM it is bimodal — ~50–75 ns or
    ~220–260 ns, as the host places the two vCPUs — and the REST commit at 16 connections costs ~20% more
    CPU per commit in the slow mode (docs/benchmarks.md, commitvar): a round's rate is read with it."""
    try:
        r = subprocess.run([binary, "100000"], capture_output=True, text=True, timeout=30)
        return json.loads(r.stdout)["ns_per_handover"]
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return None
