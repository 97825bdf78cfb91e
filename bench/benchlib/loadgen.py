"""Load from a second process: wrk with bench/wrk/replay.lua over precomputed requests."""
import json
import os
import shutil
import subprocess

from . import layout
from .httpc import HarnessError, NotAvailable, check_loopback
from .procs import BENCH_DIR

REPLAY = os.path.join(BENCH_DIR, "wrk", "replay.lua")


def lua_string(value):
    """A Lua string literal for any bytes or str (non-printable bytes as decimal escapes)."""
    if isinstance(value, str):
        value = value.encode()
    out = ['"']
    for b in value:
        if b in (0x22, 0x5C):
            out.append("\\" + chr(b))
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append("\\%03d" % b)
    out.append('"')
    return "".join(out)


def write_requests(path, requests):
    """Writes the list that replay.lua replays. Each request: dict(method, path, headers, body?,
    body_file?, template?)."""
    parts = ["return {\n"]
    for r in requests:
        headers = ", ".join(f"[{lua_string(k)}] = {lua_string(str(v))}" for k, v in r.get("headers", {}).items())
        fields = [f"method = {lua_string(r['method'])}", f"path = {lua_string(r['path'])}",
                  f"headers = {{ {headers} }}"]
        if r.get("body") is not None:
            fields.append(f"body = {lua_string(r['body'])}")
        if r.get("body_file"):
            fields.append(f"body_file = {lua_string(r['body_file'])}")
        if r.get("template"):
            fields.append("template = true")
        parts.append("  { " + ", ".join(fields) + " },\n")
    parts.append("}\n")
    with open(path, "w") as f:
        f.write("".join(parts))
    return path


class Wrk:
    def __init__(self, work_dir, duration, reps=1, timeout_s=10):
        self.binary = shutil.which("wrk")
        if not self.binary:
            raise HarnessError("wrk is not installed (Debian package wrk)")
        self.work_dir = work_dir
        self.duration = duration
        self.reps = reps
        self.timeout_s = timeout_s
        self.runs = 0
        # With --perf: every run while profile_pid is set (the Hearth phase) is sampled with
        # `perf record -g` on that process; the top symbols land in .build/bench/perf/<run>.txt.
        self.profile_dir = None
        self.profile_pid = None
        # One-connection runs given a server pid run in the pinned layout (layout.py) unless this is off.
        self.pin_c1 = True

    def run(self, port, requests, connections, name, duration=None, host="127.0.0.1", profile=True,
            server_pid=None, pin=None):
        """Runs wrk `reps` times against 127.0.0.1:port replaying `requests`; returns the best run's
        done() summary (most successful requests per second) with every run's rate in `runs_rps`.
        Best-of-N for every system alike keeps a burst of unrelated load on the shared machine from
        deciding a ratio. Threads: 1 for one connection, else 2 (2 cores, shared with the server).

        `server_pid`: each run records where wrk and the server ran (`layout`, layout.py); `pin`
        (None: pin one-connection runs when the machine allows it, as `pin_c1` says) puts wrk and
        every thread of the server on one vCPU for the run (layout.CLIENT_CPU / SERVER_CPU), the
        same for every system, and gives the server back every CPU afterwards."""
        best, rates, layouts = None, [], []
        for _ in range(self.reps):
            s = self._run_once(port, requests, connections, name, duration, host, profile, server_pid, pin)
            rates.append(round(s["rps"], 1))
            layouts.append(s.get("layout", {}).get("layout"))
            if best is None or s["rps"] * (s["requests"] - s["error_count"]) / max(1, s["requests"]) > \
                    best["rps"] * (best["requests"] - best["error_count"]) / max(1, best["requests"]):
                best = s
        best["runs_rps"] = rates
        if server_pid is not None:
            best["runs_layout"] = layouts
        return best

    def once(self, port, requests, connections, name, duration=None, profile=True, server_pid=None, pin=None):
        """One wrk run (no best-of): a round of `pairs.py`, which keeps the best round itself."""
        return self._run_once(port, requests, connections, name, duration, "127.0.0.1", profile, server_pid, pin)

    def _pinned(self, connections, server_pid, pin):
        if server_pid is None:
            return False
        want = (self.pin_c1 and connections == 1) if pin is None else pin
        return want and layout.pinnable()

    def _run_once(self, port, requests, connections, name, duration, host, profile, server_pid=None, pin=None):
        check_loopback(host)
        duration = duration or self.duration
        self.runs += 1
        # "@@RUN@@" makes templated ids unique across runs too (replay.lua makes them unique within one).
        tag = f"r{os.getpid()}x{self.runs}"
        requests = [dict(r, path=r["path"].replace("@@RUN@@", tag),
                         body=r["body"].replace("@@RUN@@", tag) if isinstance(r.get("body"), str) else r.get("body"))
                    for r in requests]
        data = write_requests(os.path.join(self.work_dir, f"wrk-{self.runs:03d}-{name}.lua"), requests)
        threads = 1 if connections == 1 else 2
        argv = [self.binary, "-t", str(threads), "-c", str(connections), "-d", f"{duration}s",
                "--timeout", f"{self.timeout_s}s", "-s", REPLAY, f"http://{host}:{port}/", "--", data]
        pinned = self._pinned(connections, server_pid, pin)
        placed = {"pinned": pinned}
        if pinned:
            placed.update(client_cpu=layout.CLIENT_CPU, server_cpu=layout.SERVER_CPU,
                          server_threads=layout.set_affinity(server_pid, {layout.SERVER_CPU}))
        perf = (self._start_perf(f"{self.runs:03d}-{name}", duration)
                if profile and self.profile_dir and self.profile_pid else None)
        sampler = None
        try:
            # wrk's own affinity is set in the child before exec, so its threads start on their vCPU.
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=(lambda: os.sched_setaffinity(0, {layout.CLIENT_CPU})) if pinned else None)
            if server_pid is not None:
                sampler = layout.Sampler(p.pid, server_pid)
                sampler.start()
            try:
                out, err = p.communicate(timeout=duration + 60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()
                raise HarnessError(f"wrk did not finish: {' '.join(argv)}")
        finally:
            if sampler:
                placed.update(sampler.result())
            if pinned:
                layout.set_affinity(server_pid, os.sched_getaffinity(0))
            if perf:
                self._finish_perf(*perf)
        line = next((l for l in out.splitlines() if l.startswith("BENCHJSON ")), None)
        if p.returncode != 0 or line is None:
            raise HarnessError(f"wrk failed ({p.returncode}): {err.strip()[:300]} {out.strip()[:300]}")
        s = json.loads(line[len("BENCHJSON "):])
        if server_pid is not None:
            s["layout"] = placed
        secs = s["duration_us"] / 1e6
        s["rps"] = s["requests"] / secs if secs > 0 else 0.0
        s["connections"] = connections
        s["threads"] = threads
        bad = s["status_errors"] + s["connect_errors"] + s["read_errors"] + s["write_errors"] + s["timeouts"]
        s["error_count"] = bad
        return s


    def _start_perf(self, name, duration):
        os.makedirs(self.profile_dir, exist_ok=True)
        data = os.path.join(self.profile_dir, f"{name}.data")
        p = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-o", data, "-p", str(self.profile_pid),
                              "--", "sleep", str(max(1, duration - 1))],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return p, data, name

    def _finish_perf(self, p, data, name):
        try:
            p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", "1",
                                 "-g", "none", "--sort", "dso,symbol"], capture_output=True, text=True, timeout=300)
        text = report.stdout
        demangle = shutil.which("swift-demangle") or shutil.which("swift")
        if demangle and text:
            args = [demangle] if demangle.endswith("swift-demangle") else [demangle, "demangle"]
            d = subprocess.run(args + ["--simplified"], input=text, capture_output=True, text=True, timeout=120)
            text = d.stdout or text
        with open(os.path.join(self.profile_dir, f"{name}.txt"), "w") as f:
            f.write(text)


def require_clean(summary, what):
    """NotAvailable when more than 1% of a wrk run's requests failed (status ≥ 400, socket errors)."""
    n = max(1, summary["requests"])
    if summary["error_count"] > 0.01 * n or summary["requests"] == 0:
        raise NotAvailable(f"{what}: {summary['error_count']} of {summary['requests']} requests failed under load "
                           f"(status≥400 {summary['status_errors']}, connect {summary['connect_errors']}, "
                           f"read {summary['read_errors']}, timeouts {summary['timeouts']})")
    return summary
