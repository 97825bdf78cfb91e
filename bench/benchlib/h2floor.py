"""The HTTP/2 floor (`bench/ceilings/h2_floor.c`): the least a Firestore gRPC server on nghttp2 must do,
run as a server beside Hearth and the official emulator — by `bench/h2_floor.py` on its own, and by
`make bench` as the third side of the one-stream GetDocument rows (`fsrows.py`), where its rate in the
same rounds bounds what any design within the non-negotiables reaches (docs/benchmarks.md, *How to
read the table*, Met).

The floor answers GetDocument with the exact framed message Hearth answered for the bench's document
(fetched once with nghttp, checked against h2load's DATA bytes of one call), so h2load's byte check
(`grpcbench.counted_answers`) and the light client's document check hold for it as for Hearth.
"""
import json
import os
import shutil
import subprocess
import time

from . import grpcbench
from .firebase import file_fields
from .context import DOC_NAME_PREFIX, DOCS
from .httpc import Client, HarnessError, NotAvailable, expect
from .procs import compile_c, free_port, tail

FLOOR = "floor"
# The floor's polling window in µs: Hearth's HTTP/2 loops adapt theirs between 0 and this ceiling
# (BusyPoll: polling while it pays, sleeping in epoll_wait while it does not). The floor runs both
# ends as two processes, each a side of the rounds, and a row's floor is the better of the two: a
# loop that always polls (the quiet machine's best, 29,169 against 10,612–13,378 calls/s blocking,
# *The two floors on a quiet machine*) and one that always sleeps (the better one in some rounds on
# a busy machine, where the polling competes with the client for a core).
POLL_US = 200
DESIGNS = (("floor-poll", POLL_US), ("floor-block", 0))
# The rows the floor is a side of in `make bench`: the one-stream gets, the rows issue 20 judges with it.
KEYS = ("grpc.get.s1", "grpc.get.light.s1")
LABEL = "HTTP/2 floor"


def build(ctx):
    """h2_floor compiled under .build/bench/bin (HarnessError when the C build fails)."""
    bin_dir = os.path.join(ctx.build, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    return compile_c("h2_floor.c", os.path.join(bin_dir, "h2_floor"), ["-lnghttp2", "-lsqlite3", "-lpthread"])


class Floor:
    """One bench/ceilings/h2_floor.c process on a fresh database file."""

    def __init__(self, ctx, binary, name, answer_file, poll_us, read_ahead=True, work_us=0):
        self.ctx, self.binary, self.name = ctx, binary, name
        self.answer_file, self.poll_us, self.read_ahead = answer_file, poll_us, read_ahead
        # µs of CPU each GetDocument spends before its answer (h2_floor.c's WORK_US): 0 is the floor;
        # more is a probe of what work before the answer costs the round trip (`h2_floor.py --work-us`).
        self.work_us = work_us
        self.dir = os.path.join(ctx.run_dir, name)
        self.log = os.path.join(ctx.run_dir, f"{name}.log")
        self.proc = self.port = None
        self.prefix = []  # arguments between `binary` and the floor's own (valgrind's)

    def start(self, timeout=10):
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.port = free_port()
        argv = [self.binary] + self.prefix + [str(self.port), os.path.join(self.dir, "firestore.sqlite"), self.answer_file, str(self.poll_us),
                                         "1" if self.read_ahead else "0"] + ([str(self.work_us)] if self.work_us else [])
        self.proc = self.ctx.registry.spawn(argv, self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"{self.name} exited with {self.proc.returncode}: {tail(self.log)}")
            if "ready" in self.lines():
                return self
            time.sleep(0.02)
        raise HarnessError(f"{self.name} did not start: {tail(self.log)}")

    def stop(self):
        """Stops it; returns its counts (calls, commits, transactions, checkpoint passes)."""
        if self.proc is None:
            return {}
        self.ctx.registry.stop(self.proc)
        line = next((l for l in self.lines() if l.startswith('{"calls"')), None)
        return json.loads(line) if line else {"log": tail(self.log, 300)}

    def lines(self):
        """Its log's lines (valgrind's own go there too)."""
        with open(self.log, errors="replace") as f:
            return f.read().splitlines()


def seed(port, user, what):
    """users/{uid}/files/f0, as `make bench`'s REST rows store it before the gRPC rows (admin commit)."""
    c = Client(port)
    try:
        writes = [{"update": {"name": f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f0",
                              "fields": file_fields(user.uid, created="2024-01-01T00:00:00Z")}}]
        expect(c.request("POST", f"{DOCS}:commit", headers={"Authorization": "Bearer owner"}, body={"writes": writes}),
               f"{what} Firestore admin commit")
    finally:
        c.close()


def hearth_answer(ctx, port, user, frame, path):
    """The framed GetDocument answer Hearth sends for the request in the file `frame` (nghttp prints
    the DATA), checked to be as long as the DATA of one h2load call, written to `path`; NotAvailable
    when it cannot be read."""
    nghttp = shutil.which("nghttp")
    if not nghttp:
        raise NotAvailable("nghttp is not installed (Debian package nghttp2-client)")
    r = subprocess.run([nghttp, "-d", frame, "-H", "content-type: application/grpc", "-H", "te: trailers",
                        "-H", f"authorization: Bearer {user.id_token}",
                        f"http://127.0.0.1:{port}/google.firestore.v1.Firestore/GetDocument"],
                       capture_output=True, timeout=30)
    answer = r.stdout
    one = grpcbench.H2Load(ctx).run(port, frame, user.id_token, 1, 0, count=1)
    if r.returncode != 0 or len(answer) < 6 or answer[0] != 0 or int.from_bytes(answer[1:5], "big") != len(answer) - 5 \
            or len(answer) != one.get("bytes_data"):
        raise NotAvailable(f"Hearth's GetDocument answer could not be read ({r.returncode}, {len(answer)} bytes, "
                           f"h2load {one.get('bytes_data')}): {r.stderr[-200:]!r}")
    with open(path, "wb") as f:
        f.write(answer)
    return answer


def work_probe(us):
    """The name of the polling floor spending `us` µs of CPU before each answer (`Floor(work_us=…)`)."""
    return f"floor-poll+{us:g}us"


def start_beside(ctx, hearth_port, user):
    """Fresh floors (`DESIGNS`) for `make bench`'s Firestore phase, answering what Hearth (on
    `hearth_port`) answers `user`'s get of f0: [Floor], or the reason they cannot run (a string: the
    rows' floor is then n/a with it; a failed C build or start never stops the harness). With
    `ctx.work_probe_us` (`run.py --work-probe-us N`, off unless asked) one more: the polling floor
    spending N µs of CPU before each answer (`work_probe`), a side of the same rounds but never a
    floor (`pick` takes `DESIGNS` only) — what N µs more before the answer cost in that run's layout."""
    if user is None:
        return "no user token (Auth not available)"
    floors = []
    try:
        binary = build(ctx)
        frame = os.path.join(ctx.run_dir, "floor-getdoc.bin")
        with open(frame, "wb") as f:
            f.write(grpcbench.get_frame(ctx, f"users/{user.uid}/files/f0"))
        answer = os.path.join(ctx.run_dir, "floor-answer.bin")
        hearth_answer(ctx, hearth_port, user, frame, answer)
        for name, poll_us in DESIGNS:
            floors.append(Floor(ctx, binary, name, answer, poll_us).start())
        probe = getattr(ctx, "work_probe_us", None)
        if probe:
            floors.append(Floor(ctx, binary, work_probe(probe), answer, POLL_US, work_us=probe).start())
        return floors
    except (HarnessError, NotAvailable, OSError, subprocess.SubprocessError) as e:
        for f in floors:
            f.stop()
        return f"the HTTP/2 floor could not run: {e}"


def pick(results, key):
    """The row's floor (`FLOOR`): the better design's best round, with the design and both designs'
    bests in its details; n/a with the first reason when neither design ran."""
    values = {name: results.get(key, name) for name, _ in DESIGNS}
    done = {name: v for name, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if not done:
        why = next((getattr(v, "reason", None) for v in values.values() if v is not None), None)
        results.na(key, FLOOR, why or "the HTTP/2 floor was not measured")
        return
    best = max(done, key=done.get)
    rounds = results.details.get((key, best), {}).get("rounds", [])
    results.put(key, FLOOR, done[best], design=best, designs=done, rounds=rounds)
