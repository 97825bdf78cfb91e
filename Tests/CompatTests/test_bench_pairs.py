"""The pure parts of the bench's paired Firestore rounds (bench/benchlib/pairs.py, machine.py): the order
of rounds, the best of them, the wait for quiet servers (a fake CPU sampler and clock), and the steal /
other-process accounting from sample /proc texts. No server is measured here."""
import os
import sys

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib import machine, pairs  # noqa: E402
from benchlib.httpc import NotAvailable  # noqa: E402
from benchlib.report import NA, Results, Row, render_table  # noqa: E402

H, E = pairs.HEARTH, pairs.PEER
TCK = machine.CLK_TCK


# Round order -------------------------------------------------------------------------------------

def test_three_rounds_interleave_as_h_e_e_h_h_e():
    assert pairs.round_order(3) == [H, E, E, H, H, E]


@pytest.mark.parametrize("n", [1, 2, 4, 5])
def test_every_pair_of_rounds_starts_with_the_side_the_previous_ended_with(n):
    order = pairs.round_order(n)
    assert len(order) == 2 * n
    assert order.count(H) == order.count(E) == n
    pairs_ = [order[i:i + 2] for i in range(0, len(order), 2)]
    assert all(sorted(p) == [E, H] for p in pairs_)
    for prev, nxt in zip(pairs_, pairs_[1:]):
        assert nxt[0] == prev[1]
    # Over an even number of pairs neither side goes first more often.
    if n % 2 == 0:
        assert sum(p[0] == H for p in pairs_) == n // 2


def test_one_side_alone_runs_its_rounds_back_to_back():
    assert pairs.round_order(3, [H]) == [H, H, H]


def test_three_sides_rotate_so_each_runs_first_middle_and_last_once_in_three_rounds():
    F = "floor"
    order = pairs.round_order(3, [H, E, F])
    assert order == [H, E, F, F, H, E, E, F, H]
    rounds = [order[i:i + 3] for i in range(0, 9, 3)]
    for side in (H, E, F):
        assert sorted(r.index(side) for r in rounds) == [0, 1, 2]
    for prev, nxt in zip(rounds, rounds[1:]):
        assert nxt[0] == prev[-1]
    # Two sides keep their order: the rotation of H E is E H.
    assert pairs.round_order(3, [H, E]) == pairs.round_order(3)


def test_a_floor_side_runs_its_rounds_beside_both_and_shows_in_the_rounds_column():
    ctx, calls, F = FakeCtx(), [], "floor"
    loads = {H: pairs.Load(scripted(calls, H, [900.0, 1000.0, 950.0])),
             E: pairs.Load(scripted(calls, E, [100.0, 80.0, 120.0])),
             F: pairs.Load(scripted(calls, F, [1100.0, 1300.0, 1200.0]))}
    pairing(ctx, systems=(H, E, F)).run("grpc.get.s1", loads)
    assert calls == [H, E, F, F, H, E, E, F, H]
    assert ctx.results.get("grpc.get.s1", F) == 1300.0
    assert [r["system"] for r in ctx.results.details[("grpc.get.s1", H)]["pair_rounds"]] == calls
    row = Row("grpc.get.s1", "gRPC get", "calls/s", peers=[("official emulator", E)],
              ceilings=[("HTTP/2 floor", F)], target=("min_ratio", "official emulator", 10, "≥ 10× emulator"),
              floor="HTTP/2 floor")
    table, _ = render_table([row.evaluate(ctx.results)], quick=False)
    assert "hearth 900–1,000; emulator 80–120; floor 1,100–1,300" in table.splitlines()[2]


# Best of the rounds ------------------------------------------------------------------------------

def test_best_round_is_the_highest_rate_or_the_lowest_latency_and_skips_failed_rounds():
    rounds = [{"value": 10.0}, {"value": None, "error": "x"}, {"value": 30.0}, {"value": 20.0}]
    assert pairs.best_round(rounds)["value"] == 30.0
    assert pairs.best_round(rounds, higher_is_better=False)["value"] == 10.0
    assert pairs.best_round([{"value": None}]) is None


# Waiting for quiet servers -----------------------------------------------------------------------

class FakeClock:
    """time.monotonic and time.sleep of a test: sleeping advances the clock."""

    def __init__(self):
        self.t = 100.0
        self.sleeps = []

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.sleeps.append(s)
        self.t += s


def sampler(clock, busy):
    """sample(group) → cumulative CPU seconds; busy[group](t) is the cores the group uses at time t
    (integrated in 0.01 s steps, as a kernel's tick counters would)."""
    used = {g: 0.0 for g in busy}
    last = {g: clock() for g in busy}

    def sample(group):
        if busy[group] is None:
            return None
        while last[group] < clock() - 1e-9:
            used[group] += busy[group](last[group]) * 0.01
            last[group] += 0.01
        return used[group]
    return sample


def test_quiet_wait_returns_after_the_first_window_in_which_every_server_is_below_the_limit():
    clock = FakeClock()
    # Server 1 busy (a JVM's GC: 0.8 core) for 1.2 s, server 2 idle throughout.
    sample = sampler(clock, {1: lambda t: 0.8 if t < 101.2 else 0.0, 2: lambda t: 0.01})
    quiet, waited, load = pairs.wait_quiet(sample, [1, 2], clock=clock, sleep=clock.sleep)
    assert quiet is True
    # Windows end at 0.5, 1.0 (both busy), 1.5 (0.2 s of GC in it: 0.32 core), 2.0 (quiet).
    assert waited == pytest.approx(2.0)
    assert load[1] < pairs.QUIET_LIMIT and load[2] == pytest.approx(0.01, abs=0.005)


def test_quiet_wait_is_bounded_and_says_it_gave_up():
    clock = FakeClock()
    sample = sampler(clock, {1: lambda t: 0.0, 2: lambda t: 0.3})
    quiet, waited, load = pairs.wait_quiet(sample, [1, 2], clock=clock, sleep=clock.sleep, timeout=3.0)
    assert quiet is False
    assert waited == pytest.approx(3.0)
    assert load[2] == pytest.approx(0.3, abs=0.02)


def test_a_server_with_no_process_left_counts_as_quiet():
    clock = FakeClock()
    sample = sampler(clock, {1: lambda t: 0.0, 2: None})
    quiet, waited, _ = pairs.wait_quiet(sample, [1, 2], clock=clock, sleep=clock.sleep)
    assert quiet is True and waited == pytest.approx(pairs.QUIET_WINDOW)


def test_a_server_just_above_the_limit_is_not_quiet():
    clock = FakeClock()
    sample = sampler(clock, {1: lambda t: 0.06})
    quiet, _, _ = pairs.wait_quiet(sample, [1], clock=clock, sleep=clock.sleep, timeout=1.0)
    assert quiet is False


# /proc parsing and accounting ----------------------------------------------------------------------

STAT_BEFORE = """cpu  4507725 246026 542999 7331658 20672 0 71038 72270 0 0
cpu0 2210187 117269 254331 3740686 6635 0 31449 35484 0 0
intr 1 2 3
"""


def cpu_line(user, steal):
    return f"cpu  {user} 246026 542999 7331658 20672 0 71038 {steal} 0 0\nctxt 5\n"


def pid_stat(pid, comm, ppid, sid, utime, stime, start=1000, flags=4194304):
    """A /proc/<pid>/stat line with the fields accounting reads (the rest as a real one has them)."""
    return (f"{pid} ({comm}) S {ppid} {sid} {sid} 0 -1 {flags} 102 0 0 0 {utime} {stime} 0 0 20 0 1 0 {start} "
            f"3133440 394 18446744073709551615 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0")


def test_cpu_line_fields():
    cpu = machine.parse_cpu_line(STAT_BEFORE)
    assert cpu["user"] == 4507725 and cpu["idle"] == 7331658 and cpu["steal"] == 72270


def test_cpu_line_of_an_old_kernel_without_steal_reads_zero():
    assert machine.parse_cpu_line("cpu  1 2 3 4 5 6 7\n")["steal"] == 0


def test_pid_stat_with_spaces_and_parentheses_in_the_command_name():
    p = machine.parse_pid_stat(pid_stat(4242, "tmux: server (x) y)", 1, 4242, 7, 3))
    assert (p.pid, p.comm, p.ppid, p.sid, p.ticks, p.start) == (4242, "tmux: server (x) y)", 1, 4242, 10, 1000)
    assert not p.kernel
    assert machine.parse_pid_stat(pid_stat(9, "ksoftirqd/0", 2, 0, 5, 5, flags=0x00208040)).kernel


def snapshots(before_steal, after_steal, before, after, seconds=2.0):
    return (machine.Snapshot.from_texts(10.0, cpu_line(1, before_steal), before),
            machine.Snapshot.from_texts(10.0 + seconds, cpu_line(1, after_steal), after))


def test_accounting_splits_the_round_between_server_peer_harness_kernel_and_others():
    harness = 700
    before = [
        pid_stat(500, "hearth", 700, 500, 1000, 500),      # the measured server (its own session)
        pid_stat(600, "gcloud", 700, 600, 50, 50),         # the peer: gcloud's wrapper …
        pid_stat(601, "java", 600, 600, 9000, 1000),       # … and its JVM, one session
        pid_stat(700, "python3", 1, 1, 300, 100),          # the harness
        pid_stat(800, "swift-frontend", 1, 800, 100, 0),   # another tenant
        pid_stat(810, "cron", 1, 810, 40, 0, start=500),   # its pid is reused during the round
        pid_stat(9, "ksoftirqd/0", 2, 0, 10, 10, flags=0x00208040),
    ]
    after = [
        pid_stat(500, "hearth", 700, 500, 1000 + 2 * TCK, 500 + TCK),       # 1.5 cores over 2 s
        pid_stat(600, "gcloud", 700, 600, 50, 50),
        pid_stat(601, "java", 600, 600, 9000 + TCK // 5, 1000),           # GC: 0.1 core
        pid_stat(700, "python3", 1, 1, 300 + TCK // 10, 100),
        pid_stat(701, "wrk", 700, 1, TCK, TCK // 2),                       # the load generator, new
        pid_stat(800, "swift-frontend", 1, 800, 100 + TCK, 0),            # 0.5 core
        pid_stat(810, "sh", 1, 810, TCK // 10, 0, start=900),             # new process: counted whole
        pid_stat(9, "ksoftirqd/0", 2, 0, 10 + TCK // 2, 10, flags=0x00208040),  # loopback softirqs: 0.25
    ]
    b, a = snapshots(72270, 72270 + TCK // 5, before, after)
    m = machine.account(b, a, server_sid=500, peer_sids=[600], harness_pid=harness)
    assert m["seconds"] == pytest.approx(2.0)
    assert m["steal"] == pytest.approx(0.1, abs=0.01)
    assert m["server"] == pytest.approx(1.5, abs=0.01)
    assert m["peer"] == pytest.approx(0.1, abs=0.01)
    assert m["harness"] == pytest.approx(0.8, abs=0.01)
    assert m["kernel"] == pytest.approx(0.25, abs=0.01)
    assert m["others"] == pytest.approx(0.55, abs=0.01)
    assert [name for name, _ in m["top_others"]] == ["swift-frontend[800]", "sh[810]"]
    assert m["disturbed"] is True
    assert "steal 0.10" in m["why"] and "other processes 0.55" in m["why"] and "idle peer 0.10" in m["why"]


def test_a_round_alone_on_the_machine_is_not_disturbed():
    before = [pid_stat(500, "hearth", 700, 500, 0, 0), pid_stat(700, "python3", 1, 1, 0, 0),
              pid_stat(800, "sshd", 1, 800, 5, 0)]
    after = [pid_stat(500, "hearth", 700, 500, 3 * TCK, 0), pid_stat(700, "python3", 1, 1, TCK, 0),
             pid_stat(800, "sshd", 1, 800, 5 + TCK // 50, 0)]   # 0.01 core
    b, a = snapshots(100, 100 + TCK // 100, before, after, seconds=5.0)
    m = machine.account(b, a, server_sid=500, harness_pid=700)
    assert m["disturbed"] is False and m["why"] == ""
    assert m["server"] == pytest.approx(0.6, abs=0.01)
    assert m["steal"] < machine.STEAL_LIMIT


def test_steal_alone_marks_a_round_disturbed():
    b, a = snapshots(0, TCK // 2, [], [], seconds=5.0)   # 0.1 core stolen, nothing else ran
    m = machine.account(b, a, server_sid=500)
    assert m["disturbed"] is True and m["why"].startswith("steal 0.10")


# Rounds of a row -----------------------------------------------------------------------------------

class FakeCtx:
    def __init__(self):
        self.results = Results()
        self.lines = []

    def log(self, msg):
        self.lines.append(msg)


def pairing(ctx, systems=(H, E), rounds=3, hop=None):
    """A Pairing on an idle machine: servers that use no CPU, snapshots with nothing in them."""
    t = [0.0]

    def snapshot():
        t[0] += 1.0
        return machine.Snapshot(t[0], {"steal": 0}, {})
    clock = FakeClock()
    return pairs.Pairing(ctx, [pairs.Side(s, i + 1) for i, s in enumerate(systems)], rounds,
                         sample=lambda group: 0.0, snapshot=snapshot, clock=clock, sleep=clock.sleep, hop=hop)


def scripted(calls, system, values):
    it = iter(values)

    def once():
        calls.append(system)
        v = next(it)
        if isinstance(v, Exception):
            raise v
        return v, {"wrk": {"lat_mean_us": 1e6 / v}}
    return once


def test_a_row_runs_interleaved_keeps_each_sides_best_and_publishes_every_round():
    ctx, calls = FakeCtx(), []
    warm = []
    loads = {H: pairs.Load(scripted(calls, H, [900.0, 1000.0, 950.0]), warmup=lambda: warm.append(H)),
             E: pairs.Load(scripted(calls, E, [100.0, 80.0, 120.0]), warmup=lambda: warm.append(E))}
    p = pairing(ctx)
    best = p.run("fs.get.c1", loads, derived={"fs.query_latency.x": lambda d: d["wrk"]["lat_mean_us"]})
    assert warm == [H, E]
    assert calls == [H, E, E, H, H, E]
    assert ctx.results.get("fs.get.c1", H) == 1000.0
    assert ctx.results.get("fs.get.c1", E) == 120.0
    assert ctx.results.get("fs.query_latency.x", H) == pytest.approx(1000.0)
    d = ctx.results.details[("fs.get.c1", H)]
    assert [r["value"] for r in d["rounds"]] == [900.0, 1000.0, 950.0]
    assert [r["system"] for r in d["pair_rounds"]] == [H, E, E, H, H, E]
    assert d["order"] == [H, E, E, H, H, E] and d["disturbed"] == 0
    assert best[H]["wrk"]["lat_mean_us"] == pytest.approx(1000.0)
    assert len(p.log) == 6 and p.summary()["rounds"] == 6


def test_a_failed_round_makes_that_side_na_and_stops_its_rounds_but_not_the_others():
    ctx, calls = FakeCtx(), []
    loads = {H: pairs.Load(scripted(calls, H, [900.0, 1000.0, 950.0])),
             E: pairs.Load(scripted(calls, E, [100.0, NotAvailable("3 of 300 requests failed"), 1.0]))}
    pairing(ctx).run("fs.commit.c16", loads, derived={"x": lambda d: 1})
    assert calls == [H, E, E, H, H]
    assert ctx.results.get("fs.commit.c16", H) == 1000.0
    na = ctx.results.get("fs.commit.c16", E)
    assert isinstance(na, NA) and "3 of 300" in na.reason
    assert isinstance(ctx.results.get("x", E), NA)


def test_a_side_that_cannot_run_is_na_with_its_reason_and_the_other_runs_alone():
    ctx, calls = FakeCtx(), []
    loads = {H: pairs.Load(scripted(calls, H, [5.0, 3.0, 4.0])), E: "the emulator exited with 1"}
    pairing(ctx).run("rt.latency.1", loads, higher_is_better=False)
    assert calls == [H, H, H]
    assert ctx.results.get("rt.latency.1", H) == 3.0
    assert ctx.results.get("rt.latency.1", E).reason == "the emulator exited with 1"


def test_every_round_records_the_vcpu_hop_before_and_after_it():
    ctx, calls, hops = FakeCtx(), [], iter([60.0, 240.0, 250.0, 55.0])
    loads = {H: pairs.Load(scripted(calls, H, [5.0])), E: pairs.Load(scripted(calls, E, [1.0]))}
    pairing(ctx, rounds=1, hop=lambda: next(hops)).run("fs.commit.c16", loads)
    rounds = ctx.results.details[("fs.commit.c16", H)]["pair_rounds"]
    assert [r["hop_ns"] for r in rounds] == [[60.0, 240.0], [250.0, 55.0]]
    assert "vCPU hop 60/240 ns" in ctx.lines[0]
    # Without a probe nothing is recorded, and a probe that could not run shows nothing.
    ctx2 = FakeCtx()
    pairing(ctx2, rounds=1, hop=lambda: None).run("fs.get.c1", {H: pairs.Load(scripted([], H, [5.0]))})
    assert ctx2.results.details[("fs.get.c1", H)]["rounds"][0]["hop_ns"] == [None, None]
    assert "hop" not in ctx2.lines[0]


def test_without_a_peer_side_its_loads_are_not_run():
    ctx, calls = FakeCtx(), []
    loads = {H: pairs.Load(scripted(calls, H, [5.0])), E: pairs.Load(scripted(calls, E, [1.0]))}
    pairing(ctx, systems=(H,), rounds=1).run("fs.get.c16", loads)
    assert calls == [H] and ctx.results.get("fs.get.c16", E) is None


def test_the_table_shows_each_sides_rounds_and_flags_disturbed_ones(monkeypatch):
    ctx, calls = FakeCtx(), []
    loads = {H: pairs.Load(scripted(calls, H, [900.0, 1000.0, 950.0])),
             E: pairs.Load(scripted(calls, E, [100.0, 80.0, 120.0]))}
    flags = iter([False, True, False, False, True, False])
    real = machine.account
    monkeypatch.setattr(machine, "account", lambda *a, **k: dict(real(*a, **k), disturbed=next(flags)))
    pairing(ctx).run("fs.get.c1", loads)
    row = Row("fs.get.c1", "Firestore get", "req/s", peers=[("official emulator", E)])
    table, notes = render_table([row.evaluate(ctx.results)], quick=False)
    line = table.splitlines()[2]
    assert "| hearth 900–1,000; emulator 80–120 ⚑2/6 |" in line
    assert any(n.startswith("⚑ k/N") for n in notes)
