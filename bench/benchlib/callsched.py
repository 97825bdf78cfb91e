"""What else ran while a one-stream call's round trip took long (`h2_floor.py --perf-sched`): one run
under `perf record -a` on the scheduler's switch and wake-up tracepoints and the loop's `sendto`, then

- the *cycle* (the loop's `sendto` returned → its next `sendto` returned): median, mean, p90, p99;
- per thread of the server other than the loop (by name: `rules-coverage`, a gRPC worker, the
  checkpoint thread, libdispatch's pool) and per other process: how often it was switched in per
  1,000 calls, and its CPU time per call;
- the wake-ups between the server's threads (waker → wakee, by name) per 1,000 calls;
- the *layout* of each cycle: whether the client ran on the CPU the loop answered from (the scheduler
  put it there: *same*) or on the other (*split*), the share of cycles of each, their cycle median
  and mean, and the client's wait from its wake-up to running (on a halted vCPU: the host's wake-up;
  on the loop's: until the loop yields or sleeps), with the loop's switch-outs per call, runnable
  (`R`: it yielded or was preempted) or asleep (`S`): where the polling loop's round trip goes;
- each cycle's *stolen* time: what threads other than the loop and the client ran, on the CPUs the
  loop or the client ran on during that cycle, by name (the server's threads `hearth:<name>`, other
  processes by command, `idle` for the idle task: a CPU of the round trip that was asleep, waiting
  for a wake-up); summed per call over all cycles and over the tail's (cycles above the p90), and the
  tail's excess over the median beside it, so what the tail is made of is counted, not guessed.

The tracepoints add a little to every switch, the same for every server measured.
"""
import bisect
import re
import statistics
from collections import defaultdict

from benchlib import callsteps, machine

EVENTS = ("sched:sched_switch", "sched:sched_wakeup", "syscalls:sys_exit_sendto")
CLIENTS = ("h2load", "grpcload")
LINE = re.compile(r"\s*(.+?)\s+(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)")
SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) .*?==> next_comm=(.*?) next_pid=(\d+)")
STATE = re.compile(r"prev_state=(\S+)")
WAKEUP = re.compile(r"comm=(.*?) pid=(\d+) ")


def record(pid, load):
    """(the load's value, its details, the analysis) of one run of `load` (a `pairs.Load`) against the
    server process `pid`, under `perf record -a`."""
    value, details, text = callsteps.perf_run(EVENTS, load, "comm,pid,tid,cpu,time,event,trace")
    return value, details, analyse(text, pid, machine.thread_names(pid))


def analyse(text, pid, names=None):
    """The analysis (module doc) of `perf script` output; `pid`: the server process, `names`: its
    threads' names by tid (else the names perf printed)."""
    names = dict(names or {})
    server_tids = set(names)
    sends = defaultdict(list)  # server tid → exit_sendto times
    sent_on = {}  # exit_sendto time → the CPU it ran on
    states = []  # (time, prev tid, prev_state) of every switch
    switches = []  # (time, cpu, prev tid, next tid, next comm)
    wakes = []  # (time, waker tid, wakee tid)
    comm_of = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        comm, p, tid, cpu, t, event, trace = m.groups()
        p, tid, cpu, t = int(p), int(tid), int(cpu), float(t)
        comm_of.setdefault(tid, comm.strip())
        if p == pid:
            server_tids.add(tid)
            names.setdefault(tid, comm.strip())
        if event.endswith("sys_exit_sendto"):
            if p == pid:
                sends[tid].append(t)
                sent_on[t] = cpu
        elif event.endswith("sched_switch"):
            s = SWITCH.search(trace)
            if s:
                switches.append((t, cpu, int(s[2]), int(s[4])))
                st = STATE.search(trace)
                states.append((t, int(s[2]), st[1] if st else "?"))
                comm_of.setdefault(int(s[4]), s[3])
                comm_of.setdefault(int(s[2]), s[1])
        elif event.endswith("sched_wakeup"):
            w = WAKEUP.search(trace)
            if w:
                wakes.append((t, tid, int(w[2])))
                comm_of.setdefault(int(w[2]), w[1])
    if not sends:
        return {}
    wakes.sort()
    loop = max(sends, key=lambda k: len(sends[k]))
    cycles_at = sends[loop]
    calls = len(cycles_at)
    clients = {t for t, c in comm_of.items() if c in CLIENTS}

    def label(tid):
        if tid == 0:
            return "idle"
        if tid in server_tids:
            return "hearth:" + names.get(tid, comm_of.get(tid, str(tid)))
        return comm_of.get(tid, str(tid))

    # Per CPU, the run intervals (start, end, tid) from the switches.
    switches.sort()
    runs = defaultdict(list)
    current = {}
    for t, cpu, prev, nxt in switches:
        if cpu in current:
            start, tid = current[cpu]
            runs[cpu].append((start, t, tid))
        current[cpu] = (t, nxt)
    starts = {cpu: [r[0] for r in rs] for cpu, rs in runs.items()}

    per_call_switches, per_call_cpu = defaultdict(int), defaultdict(float)
    for cpu, rs in runs.items():
        for a, b, tid in rs:
            if tid in (loop,) or tid in clients:
                continue
            per_call_switches[label(tid)] += 1
            per_call_cpu[label(tid)] += b - a

    woke = defaultdict(int)
    for _, waker, wakee in wakes:
        if wakee in server_tids and wakee != loop or waker in server_tids and waker != loop:
            woke[f"{label(waker) if waker != loop else 'hearth:<loop>'} → {label(wakee) if wakee != loop else 'hearth:<loop>'}"] += 1

    cycles = [b - a for a, b in zip(cycles_at, cycles_at[1:])]
    if not cycles:
        return {"calls": calls}
    median = statistics.median(cycles)
    q = statistics.quantiles(cycles, n=100) if len(cycles) > 100 else [max(cycles)] * 99
    p90 = q[89]
    stolen_all, stolen_tail = defaultdict(float), defaultdict(float)
    tail_n, tail_excess, cycles_with = 0, 0.0, defaultdict(int)
    for a, b in zip(cycles_at, cycles_at[1:]):
        # The CPUs the loop or the client ran on during the cycle, and who else ran there.
        seen = defaultdict(float)
        mine = set()
        spans = []
        for cpu, rs in runs.items():
            i = max(0, bisect.bisect_left(starts[cpu], a) - 1)
            while i < len(rs) and rs[i][0] < b:
                s, e, tid = rs[i]
                overlap = min(e, b) - max(s, a)
                if overlap > 0:
                    spans.append((cpu, tid, overlap))
                    if tid == loop or tid in clients:
                        mine.add(cpu)
                i += 1
        for cpu, tid, overlap in spans:
            if cpu in mine and tid != loop and tid not in clients:
                seen[label(tid)] += overlap
        tail = b - a > p90
        if tail:
            tail_n += 1
            tail_excess += b - a - median
        for k, v in seen.items():
            stolen_all[k] += v
            if tail:
                stolen_tail[k] += v
                cycles_with[k] += 1
    n = len(cycles)
    out = {
        "layout": layout(cycles_at, sent_on, runs, starts, wakes, states, loop, clients),
        "calls": calls,
        "cycle": {"median": round(median * 1e6, 2), "mean": round(statistics.mean(cycles) * 1e6, 2),
                  "p90": round(p90 * 1e6, 2), "p99": round(q[98] * 1e6, 2)},
        "tail": {"cycles": tail_n, "excess_per_call_us": round(tail_excess / n * 1e6, 3),
                 "mean_excess_us": round(tail_excess / max(1, tail_n) * 1e6, 2)},
        "switched_in_per_1000": {k: round(v / calls * 1000, 2) for k, v in sorted(per_call_switches.items(), key=lambda kv: -kv[1])},
        "cpu_us_per_call": {k: round(v / calls * 1e6, 3) for k, v in sorted(per_call_cpu.items(), key=lambda kv: -kv[1])},
        "wakeups_per_1000": {k: round(v / calls * 1000, 2) for k, v in sorted(woke.items(), key=lambda kv: -kv[1])},
        "stolen_us_per_call": {k: round(v / n * 1e6, 3) for k, v in sorted(stolen_all.items(), key=lambda kv: -kv[1])},
        "tail_stolen_us_per_call": {k: round(v / n * 1e6, 3) for k, v in sorted(stolen_tail.items(), key=lambda kv: -kv[1])},
        "tail_cycles_with": {k: v for k, v in sorted(cycles_with.items(), key=lambda kv: -kv[1])},
    }
    return out


def layout(cycles_at, sent_on, runs, starts, wakes, states, loop, clients):
    """Per layout (*same*: the client ran on the CPU the loop answered from, for most of its run time
    in the cycle; *split*: on another), the share of cycles, their median and mean (µs), the client's
    wait from wake-up to running (µs, median and mean), and the loop's switch-outs per call by state."""
    # The client's wake-up → its next switch-in.
    switch_in = defaultdict(list)
    for cpu, rs in runs.items():
        for s, _, tid in rs:
            if tid in clients:
                switch_in[tid].append(s)
    for v in switch_in.values():
        v.sort()
    waits = []  # (wake-up time, wait)
    for t, _, wakee in wakes:
        if wakee in clients:
            ins = switch_in.get(wakee, [])
            i = bisect.bisect_left(ins, t)
            if i < len(ins):
                waits.append((t, ins[i] - t))
    wait_at = [w[0] for w in waits]
    outs = sorted((t, st) for t, prev, st in states if prev == loop)
    out_at = [o[0] for o in outs]
    by = defaultdict(lambda: {"cycles": [], "waits": [], "R": 0, "S": 0})
    for a, b in zip(cycles_at, cycles_at[1:]):
        home = sent_on.get(a)
        on = defaultdict(float)
        for cpu, rs in runs.items():
            i = max(0, bisect.bisect_left(starts[cpu], a) - 1)
            while i < len(rs) and rs[i][0] < b:
                s, e, tid = rs[i]
                if tid in clients:
                    on[cpu == home] += max(0.0, min(e, b) - max(s, a))
                i += 1
        k = by["same" if on[True] >= on[False] else "split"]
        k["cycles"].append(b - a)
        k["waits"] += [w for _, w in waits[bisect.bisect_left(wait_at, a):bisect.bisect_left(wait_at, b)]]
        for _, st in outs[bisect.bisect_left(out_at, a):bisect.bisect_left(out_at, b)]:
            k["R" if st.startswith("R") else "S"] += 1
    n = max(1, len(cycles_at) - 1)
    out = {}
    for name, k in sorted(by.items()):
        c, w = k["cycles"], k["waits"]
        out[name] = {"share": round(len(c) / n, 4), "median": round(statistics.median(c) * 1e6, 2),
                     "mean": round(statistics.mean(c) * 1e6, 2),
                     "client_wait_median": round(statistics.median(w) * 1e6, 2) if w else None,
                     "client_wait_mean": round(statistics.mean(w) * 1e6, 2) if w else None,
                     "loop_out_runnable": round(k["R"] / len(c), 3), "loop_out_asleep": round(k["S"] / len(c), 3)}
    return out


def lines(a, top=8):
    """Printable lines of `analyse`'s answer."""
    if "cycle" not in a:
        return [f"calls {a.get('calls', 0)}"]
    c, t = a["cycle"], a["tail"]
    out = [f"calls {a['calls']}; cycle µs median {c['median']:.2f}, mean {c['mean']:.2f}, p90 {c['p90']:.1f}, p99 {c['p99']:.1f}; "
           f"tail (> p90) {t['cycles']} cycles, {t['mean_excess_us']:.1f} µs over the median each, {t['excess_per_call_us']:.2f} µs a call"]
    for name, k in a.get("layout", {}).items():
        out.append(f"  layout {name}: {k['share']:.1%} of cycles, median {k['median']:.2f} mean {k['mean']:.2f} µs; "
                   f"client wake-up → running median {k['client_wait_median']} mean {k['client_wait_mean']} µs; "
                   f"loop switched out runnable {k['loop_out_runnable']}, asleep {k['loop_out_asleep']} a call")
    for key, title in (("tail_stolen_us_per_call", "tail's stolen µs a call"), ("stolen_us_per_call", "all stolen µs a call"),
                       ("switched_in_per_1000", "switched in /1000 calls"), ("cpu_us_per_call", "CPU µs a call"),
                       ("wakeups_per_1000", "wake-ups /1000 calls")):
        items = list(a[key].items())[:top]
        out.append(f"  {title}: " + ", ".join(f"{k} {v}" for k, v in items))
    return out
