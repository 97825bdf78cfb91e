#!/usr/bin/env python3
"""Real-client gRPC load on an instrumented hearth (docs/reliability.md, Sanitizers): `python3
bench/sanitizer_load.py --hearth-bin .build-tsan/debug/hearth [--rounds 2] [--listeners 300]`.

`make test-tsan` drives the code paths the Swift tests reach, mostly one thread at a time; the
gRPC paths whose threads meet only under real traffic are driven here, from the same clients
`make bench` uses, against the TSan (or ASan) build that `make test-tsan` leaves in
`.build-tsan/debug/hearth`. Each round runs three phases, each its loads at the same time (all
together, the fan-out kept the loops so busy that the reads only waited behind it and no loop ever
ran out of work to poll):

- fan-out: Listen streams on one collection (grpcload `idle`, 100 per connection, so several
  connections and HTTP/2 loops) and timed commits reaching them and the `listen` run's own 50
  streams (each snapshot checked to arrive), beside Commits at 16 streams (grpcload `commit`): one
  commit's shared snapshot (`ListenBatch.Shared`) is encoded by several loop threads at once;
- reads: BatchGetDocuments and RunQuery (16 streams each, answered from the read cache's kept
  protobuf, `DocumentCache.proto(of:)`) and GetDocument (grpcload's light client, 16 streams)
  while creates through 4 Write streams invalidate the cache;
- gets: GetDocument from h2load on one connection, 16 and then 1 in flight: the loop runs out of
  work between calls, so it polls and tries polling against sleeping (`BusyPoll`,
  `EventLoop.pollThenWait`).

Every call's status is checked (grpcload counts non-zero grpc-status; h2load's answers must all be
200 with the expected bytes). The sanitizer's reports go where the caller's `TSAN_OPTIONS` /
`ASAN_OPTIONS` `log_path` says (this script sets neither); the script fails when a load fails, or
when the server does not exit 0 within STOP_GRACE seconds of SIGTERM (LeakSanitizer checks at exit;
a sanitizer that reported makes the exit status non-zero).
Needs go with golang-google-cloud-dev and h2load (nghttp2-client), as `make bench`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import types

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import firebase, grpcbench  # noqa: E402
from benchlib.context import DOC_NAME_PREFIX  # noqa: E402
from benchlib.httpc import Client  # noqa: E402
from benchlib.procs import Hearth, Registry  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Seconds an instrumented server gets to exit after SIGTERM (LeakSanitizer's exit check included).
STOP_GRACE = 300


def run(argv, timeout, stdin=None):
    """One load generator to its end; its GRPCLOAD summary (grpcload) or its output (h2load)."""
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=stdin)
    line = next((l for l in r.stdout.splitlines() if l.startswith("GRPCLOAD ")), None)
    if line is None:
        if r.returncode != 0:
            raise RuntimeError(f"{os.path.basename(argv[0])} failed ({r.returncode}): {(r.stderr or r.stdout)[-400:]}")
        return r.stdout
    s = json.loads(line[len("GRPCLOAD "):])
    if r.returncode != 0 or sum((s.get("failed") or {}).values()) or not (s.get("ok") or s.get("samples")):
        raise RuntimeError(f"grpcload {argv[argv.index('-mode') + 1]}: {s} {r.stderr[-300:]}")
    return s


def h2load_argv(h2load, frame, user, port, extra):
    """h2load's GetDocument calls on one connection (one HTTP/2 loop), the user's token."""
    return [h2load, "-c", "1", "-t", "1", "-d", frame, "-H", "content-type: application/grpc", "-H", "te: trailers",
            "-H", f"authorization: Bearer {user.id_token}",
            "-H", f"google-cloud-resource-prefix: {DOC_NAME_PREFIX.rsplit('/documents', 1)[0]}"] + extra + [
        f"http://127.0.0.1:{port}/google.firestore.v1.Firestore/GetDocument"]


def run_phase(title, base, h2load_argv, h2load, frame, user, port, answer_len, loads, with_idle, listeners, tag):
    """Runs `loads` (grpcload arguments by name; "h2load": h2load's) at once, with `listeners` idle
    Listen streams on the collection held through them when `with_idle`; the failures, described."""
    idle = None
    if with_idle:
        idle = subprocess.Popen(base + ["-mode", "idle", "-uid", user.uid, "-listeners", str(listeners), "-per-conn", "100"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = idle.stdout.readline()
        if not ready.startswith("GRPCLOAD ") or not json.loads(ready[len("GRPCLOAD "):]).get("ready"):
            raise SystemExit(f"idle listeners not current: {ready!r} {idle.stderr.read()[-400:]}")
    results = {}

    def one(name, args):
        argv = h2load_argv(h2load, frame, user, port, args) if name == "h2load" else base + args + ["-tag", f"{tag}{name}"]
        try:
            results[name] = run(argv, timeout=900)
        except Exception as e:  # noqa: BLE001 - reported below with the load's name
            results[name] = e
    threads = [threading.Thread(target=one, args=kv) for kv in loads.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if idle:
        idle.stdin.close()
        idle.wait(timeout=120)
    failures = []
    for name, s in results.items():
        if isinstance(s, Exception):
            failures.append(f"{title} {name}: {s}")
            print(f"{title} {name}: FAILED {s}", flush=True)
        elif name == "h2load":
            stats = grpcbench.parse_h2load(s)
            done = stats.get("done", 0)
            ok = done > 0 and stats.get("succeeded") == done and stats.get("status_2xx") == done \
                and answer_len > 0 and stats.get("bytes_data") == done * answer_len
            print(f"{title} h2load {' '.join(loads[name][:2])}: {done} GetDocument calls, each the document: {ok}", flush=True)
            if not ok:
                failures.append(f"{title} h2load: {stats}")
        else:
            print(f"{title} {name}: {s.get('ok') or s.get('samples')} calls or snapshots, none failed", flush=True)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth-bin", default=os.path.join(ROOT, ".build-tsan", "debug", "hearth"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--listeners", type=int, default=300, help="idle Listen streams on the collection (100 per connection)")
    ap.add_argument("--seconds", type=float, default=20, help="length of each load of a round")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sanitizer-load-", dir=os.path.join(ROOT, ".build"))
    data = os.path.join(work, "data")
    os.makedirs(data)
    grpcload = grpcbench.build_grpcload(types.SimpleNamespace(build=os.path.join(ROOT, ".build"), grpcload=None))
    h2load = grpcbench.H2Load(None).binary
    if not h2load:
        raise SystemExit("h2load is not installed (Debian package nghttp2-client)")
    reg = Registry()
    # Instrumented and on a shared machine: slow to start.
    h = Hearth(reg, args.hearth_bin, work, data_dir=data, rules=os.path.join(ROOT, "bench", "bench.rules"))
    failures = []
    try:
        h.start(timeout=300)
        port = h.port("firestore")
        ac, fc = Client(h.port("auth")), Client(port)
        user = firebase.sign_up(ac, "sanitizer-load@example.com")
        firebase.seed_docs(fc, user.uid, 100)
        ac.close()
        fc.close()
        # An instrumented server beside the rest of the load answers slowly: no call gives up before 10 minutes.
        base = [grpcload, "-addr", f"127.0.0.1:{port}", "-token", user.id_token, "-timeout", "600"]
        doc = f"users/{user.uid}/files/f000000"
        frame = os.path.join(work, "get.bin")
        with open(frame, "wb") as f:
            f.write(subprocess.run([grpcload, "-mode", "frame", "-doc", doc], capture_output=True, check=True).stdout)
        # One call's DATA bytes: every h2load answer must be exactly that document.
        one_call = grpcbench.parse_h2load(run(h2load_argv(h2load, frame, user, port, ["-n", "1"]), timeout=300))
        answer_len = one_call.get("bytes_data", 0)
        docs = ",".join(f"users/{user.uid}/files/f{i:06d}" for i in range(10))
        secs = str(args.seconds)
        n_secs = str(max(1, int(args.seconds)))
        # Three phases a round, each its loads at once. Together they would not do: the fan-out keeps
        # the loops busy, so the reads wait behind it and a loop never runs out of work to poll.
        phases = [
            # The fan-out: the idle listeners (held through the phase) and the listen run's get every
            # commit of the three writers.
            ("fan-out", True, {
                "listen": ["-mode", "listen", "-uid", user.uid, "-listeners", "50", "-per-conn", "25",
                           "-commits", "15", "-warm", "2", "-commit-wait", "120"],
                "commit": ["-mode", "commit", "-uid", user.uid, "-streams", "16", "-duration", secs],
            }),
            # The reads from the read cache, while Write streams' commits invalidate it (here rather
            # than beside the fan-out: under TSan there a Write stream's handshake waited longer than
            # the run behind the fan-out on its loop, so no write was made).
            ("reads", False, {
                "batchget": ["-mode", "batchget", "-doc", docs, "-streams", "16", "-per-conn", "16", "-duration", secs],
                "query": ["-mode", "query", "-uid", user.uid, "-streams", "16", "-per-conn", "16", "-duration", secs,
                          "-expect", "10"],
                "get-light": ["-mode", "get", "-doc", doc, "-streams", "16", "-duration", secs, "-client", "h2"],
                "write": ["-mode", "write", "-uid", user.uid, "-streams", "4", "-duration", secs, "-client", "h2"],
            }),
            # Gets alone, 16 and then 1 in flight on one connection: the loop runs out of work between
            # calls, so it polls (and tries sleeping against polling).
            ("gets", False, {"h2load": ["-m", "16", "-D", n_secs]}),
            ("get", False, {"h2load": ["-m", "1", "-D", n_secs]}),
        ]
        for r in range(args.rounds):
            for phase, with_idle, loads in phases:
                failures += run_phase(f"round {r + 1} {phase}", base, h2load_argv, h2load, frame, user, port, answer_len,
                                      loads, with_idle, args.listeners, tag=f"r{r}{phase}")
                h.check_alive()
    finally:
        # An instrumented server exits slowly, and under ASan its exit is when LeakSanitizer checks
        # the heap: the registry's 5 s before SIGKILL lost that check (and ended in a traceback).
        if h.proc is not None:
            reg.stop(h.proc, grace=STOP_GRACE)
            if h.proc.returncode is not None and h.proc.returncode < 0:
                failures.append(f"hearth did not exit within {STOP_GRACE} s of SIGTERM (killed: no leak check)")
            elif h.proc.returncode:
                failures.append(f"hearth exited with {h.proc.returncode} (a sanitizer report makes it exit non-zero)")
        reg.stop_all()
    if failures:
        raise SystemExit("failed: " + "; ".join(failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
