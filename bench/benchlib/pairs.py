"""Hearth and its peer measured in interleaved rounds, so that both see the same machine moments.

Issue 20 judges the Firestore rows as Hearth ÷ the official emulator in the same run. On the shared
two-core VM the emulator's rates moved 1.4–2.3× between two runs of unchanged software
(docs/benchmarks.md, run of 4 December 01:02), so one Hearth pass followed by one emulator pass
compares two different machines. Here both servers stay up and every row with a peer runs N rounds
per side in the order H E E H H E … (each pair of rounds starts with the side the previous pair
ended with, so neither always goes first or last); each side keeps its best round, and every round's
value is published. Before each round the harness waits, bounded, until both servers are quiet, so
one's background work (a JVM's GC or JIT, Hearth's checkpoint) does not land in the other's round,
and `machine.account` says what else the machine did during it (steal, other processes).
"""
import time

from . import machine
from .httpc import NotAvailable

HEARTH, PEER = "hearth", "emulator"

# Quiet: every server below this many cores over one window, waiting at most `QUIET_TIMEOUT` seconds.
QUIET_LIMIT = 0.05
QUIET_WINDOW = 0.5
QUIET_TIMEOUT = 10.0

# Details a load reports per round that stay in every round's record (the rest of a round's details
# is kept for the best round only, `strip`): the transaction rows' client CPU (grpcbench.txn_load) and
# where wrk and the server ran in a one-connection wrk round (firebase.wrk_load, layout.py).
ROUND_NOTES = ("client_us_per_txn", "layout")


def round_order(rounds, systems=(HEARTH, PEER)):
    """The order of `rounds` × the systems' runs: H E, E H, H E, … for two systems, `rounds` runs for
    one. Each round runs them all, the previous round's order rotated by one to the right: with three
    (a floor beside them: make bench's one-stream gets, bench/rest_floor.py, bench/h2_floor.py) A B C,
    C A B, B C A, … — each round starts with the side the previous one ended with, and in three rounds
    every side runs once first, once in the middle and once last (forwards then backwards kept the
    middle side always in the middle)."""
    systems = list(systems)
    n = len(systems)
    out = []
    for i in range(rounds):
        k = i % n if n else 0
        out += systems[n - k:] + systems[:n - k]
    return out


def best_round(rounds, higher_is_better=True):
    """The round with the best value (the highest rate, or the lowest latency); None without one."""
    done = [r for r in rounds if r.get("value") is not None]
    if not done:
        return None
    pick = max if higher_is_better else min
    return pick(done, key=lambda r: r["value"])


def wait_quiet(sample, groups, clock=time.monotonic, sleep=time.sleep, limit=QUIET_LIMIT, window=QUIET_WINDOW,
               timeout=QUIET_TIMEOUT):
    """Waits until every group (a server's session) used less than `limit` cores over one `window`, or
    until `timeout` seconds passed. `sample(group)` → cumulative CPU seconds, None for a group with no
    process left (it counts as quiet). Returns (quiet, seconds waited, {group: cores of the last window})."""
    t0 = clock()
    prev, tp = {g: sample(g) for g in groups}, t0
    while True:
        sleep(window)
        now, tn = {g: sample(g) for g in groups}, clock()
        span = max(tn - tp, 1e-9)
        load = {g: 0.0 if now[g] is None or prev[g] is None else max(0.0, now[g] - prev[g]) / span for g in groups}
        waited = tn - t0
        if all(v < limit for v in load.values()):
            return True, waited, load
        if waited >= timeout:
            return False, waited, load
        prev, tp = now, tn


class Load:
    """One system's load for one row. `once()` runs one timed measurement and returns (value, details);
    `warmup()`, when given, runs once before the rounds (a JVM compiles its hot paths)."""

    def __init__(self, once, warmup=None):
        self.once, self.warmup = once, warmup


def with_loadgen_cpu(load):
    """`load` whose timed runs also record the load generator's CPU seconds (`details["loadgen_cpu"]`,
    `machine.children_cpu`); a reason string (the row is n/a) is passed through."""
    if isinstance(load, str):
        return load

    def once():
        before = machine.children_cpu()
        value, details = load.once()
        return value, dict(details, loadgen_cpu=machine.children_cpu() - before)
    return Load(once, load.warmup)


class Side:
    """A server taking part: its name in the results and its session id (what `machine` accounts);
    `polls`, for Hearth: a function returning its loops' polling state (`Hearth.busy_poll`), recorded
    around each of its rounds (`busy_poll_delta`)."""

    def __init__(self, system, sid, polls=None):
        self.system, self.sid, self.polls = system, sid, polls


def busy_poll_delta(before, after):
    """What each HTTP/2 loop or REST worker that had traffic did during a round: its polling state
    and window at the end, the pauses it polled through or slept, its trials' verdicts — only those
    whose counts moved. A loop that slept through a one-stream row shows here (docs/benchmarks.md,
    h2poll)."""
    if before is None or not after:
        return None
    was = {r["name"]: r for r in before}
    out = []
    for r in after:
        b = was.get(r["name"], {})
        d = {k: r[k] - b.get(k, 0) for k in ("pausesPolled", "pausesSlept", "trialsKeptPolling", "trialsKeptSleeping")}
        if d["pausesPolled"] or d["pausesSlept"]:
            out.append(dict(name=r["name"], polling=r["polling"], window_us=r["windowMicroseconds"], **d))
    return out


class Pairing:
    """Runs rows as rounds between the sides present (Hearth alone when the peer is off or absent)."""

    def __init__(self, ctx, sides, rounds, sample=machine.session_cpu_seconds, snapshot=machine.read_snapshot,
                 harness_pid=None, quiet_timeout=QUIET_TIMEOUT, clock=time.monotonic, sleep=time.sleep, hop=None):
        self.ctx, self.sides, self.rounds = ctx, {s.system: s for s in sides}, rounds
        self.sample, self.snapshot, self.clock, self.sleep = sample, snapshot, clock, sleep
        # hop() → ns a cache line takes between the two vCPUs just now (machine.vcpu_hop_ns), or None:
        # measured before and after every round, since it moves the REST commit row by ~20%.
        self.hop = hop
        self.harness_pid = harness_pid
        self.quiet_timeout = quiet_timeout
        self.log = []  # every round of every row, for the report's summary

    def run(self, key, loads, higher_is_better=True, rounds=None, derived=None):
        """Measures `key` for every system in `loads` ({system: Load, or a reason string when that side
        cannot run}); stores each side's best round under (key, system) with every round in its details,
        and `derived` ({other key: f(best details)}) beside it. Returns {system: best round's details}."""
        rounds = rounds or self.rounds
        live = {}
        for system, load in loads.items():
            if isinstance(load, str):
                self.na(key, system, load, derived)
            elif system in self.sides:
                live[system] = load
        for system, load in list(live.items()):
            if load.warmup is not None:
                try:
                    load.warmup()
                except NotAvailable as e:
                    self.na(key, system, str(e), derived)
                    del live[system]
                except OSError as e:
                    self.na(key, system, f"{type(e).__name__}: {e}", derived)
                    del live[system]
        systems = [s for s in (HEARTH, PEER) if s in live] + [s for s in live if s not in (HEARTH, PEER)]
        order = round_order(rounds, systems) if systems else []
        done, failed = [], {}
        for i, system in enumerate(order):
            if system in failed:
                continue
            rec = self.one_round(key, i, system, live[system])
            done.append(rec)
            self.log.append(dict(strip([rec])[0], key=key))
            if rec.get("error"):
                failed[system] = rec["error"]
        every = strip(done)
        disturbed = sum(1 for r in every if r["machine"].get("disturbed"))
        out = {}
        for system in systems:
            mine = [r for r in done if r["system"] == system]
            if system in failed:
                self.na(key, system, failed[system], derived)
                self.ctx.results.details[(key, system)] = {"rounds": strip(mine), "order": order}
                continue
            best = best_round(mine, higher_is_better)
            details = dict(best["details"], rounds=strip(mine), order=order, pair_rounds=every, disturbed=disturbed)
            self.ctx.results.put(key, system, best["value"], **details)
            for other, f in (derived or {}).items():
                self.ctx.results.put(other, system, f(best["details"]))
            out[system] = best["details"]
        return out

    def na(self, key, system, reason, derived=None):
        self.ctx.results.na(key, system, reason)
        for other in derived or {}:
            self.ctx.results.na(other, system, reason)

    def one_round(self, key, index, system, load):
        hop_before = self.hop() if self.hop else None
        groups = [s.sid for s in self.sides.values()]
        quiet, waited, busy = wait_quiet(self.sample, groups, clock=self.clock, sleep=self.sleep,
                                         timeout=self.quiet_timeout)
        before = self.snapshot()
        rec = {"index": index, "system": system, "quiet": quiet, "quiet_wait_s": round(waited, 2),
               "busy_before": {str(g): round(v, 3) for g, v in busy.items()}}
        polls = self.sides[system].polls
        polls_before = polls() if polls else None
        try:
            value, details = load.once()
            rec.update(value=value, details=details)
            rec.update({k: details[k] for k in ROUND_NOTES if k in details})
        except NotAvailable as e:
            rec.update(value=None, error=str(e))
        except OSError as e:  # a socket timeout from a server that stopped answering
            rec.update(value=None, error=f"{type(e).__name__}: {e}")
        after = self.snapshot()
        if self.hop:
            rec["hop_ns"] = [hop_before, self.hop()]
        if polls:
            rec["busy_poll"] = busy_poll_delta(polls_before, polls())
        peers = [s.sid for name, s in self.sides.items() if name != system]
        rec["machine"] = machine.account(before, after, self.sides[system].sid, peers, self.harness_pid)
        flag = " ⚑ " + rec["machine"]["why"] if rec["machine"]["disturbed"] else ""
        shown = f"{rec['value']:,.2f}" if rec["value"] is not None else f"failed: {rec['error'][:120]}"
        if rec.get("client_us_per_txn") is not None:
            shown += f" (client {rec['client_us_per_txn']:.0f} CPU µs per transaction)"
        hop = f" (vCPU hop {rec['hop_ns'][0]:.0f}/{rec['hop_ns'][1]:.0f} ns)" if None not in rec.get("hop_ns", [None]) else ""
        self.ctx.log(f"    round {index + 1} {system:8s} {key:24s} {shown}{hop}"
                     f"{'' if quiet else f' (not quiet after {waited:.0f}s)'}{flag}{busy_poll_note(rec.get('busy_poll'))}")
        return rec

    def summary(self):
        """Rounds run, how many were disturbed, and the worst steal / other CPU seen."""
        n = len(self.log)
        dist = [r for r in self.log if r["machine"].get("disturbed")]
        return {
            "rounds": n, "disturbed": len(dist),
            "not_quiet": sum(1 for r in self.log if not r["quiet"]),
            "max_steal": max((r["machine"]["steal"] for r in self.log), default=0.0),
            "max_others": max((r["machine"]["others"] for r in self.log), default=0.0),
            "max_peer": max((r["machine"]["peer"] for r in self.log), default=0.0),
        }


def busy_poll_note(delta):
    """The round's busiest polling loop or worker in a few words, for the log line."""
    if not delta:
        return ""
    r = max(delta, key=lambda r: r["pausesPolled"] + r["pausesSlept"])
    n = r["pausesPolled"] + r["pausesSlept"]
    return (f" [{r['name']}: {100 * r['pausesPolled'] / n:.0f}% of {n:,} pauses polled, "
            f"trials {r['trialsKeptPolling']} poll / {r['trialsKeptSleeping']} sleep, "
            f"now {'polling' if r['polling'] else 'sleeping'} {r['window_us']} µs]")


def strip(rounds):
    """Rounds without their full load-generator summaries (the best one's is the row's details)."""
    return [{k: v for k, v in r.items() if k != "details"} for r in rounds]
