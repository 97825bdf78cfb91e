"""What every scenario shares: mode, paths, processes, wrk, results and the test data files."""
import hashlib
import os
import random
import sys
import time

from .loadgen import Wrk
from .procs import Registry
from .report import Results
from .sigv4 import Signer

MiB = 1 << 20
PROJECT = "demo-hearth"
DOCS = f"/v1/projects/{PROJECT}/databases/(default)/documents"
DOC_NAME_PREFIX = f"projects/{PROJECT}/databases/(default)/documents"


class Settings:
    """Sizes, counts and durations: the full run as the issue defines it, or a brief QUICK pass."""

    def __init__(self, quick):
        self.quick = quick
        self.duration = 1 if quick else 5                 # seconds per wrk run
        self.wrk_reps = 1 if quick else 2                 # runs per point; the best one counts
        # Firestore rows: rounds per side, interleaved with the peer's (pairs.py); the best one counts.
        self.rounds = 1 if quick else 3
        self.startups = 3 if quick else 20                # starts per start-up median
        # Start-up with data uses the main phase's documents (the runQuery collections) plus these objects.
        self.startup_objects = 200 if quick else 10_000
        self.query_sizes = [1_000, 2_000, 5_000] if quick else [1_000, 10_000, 100_000]
        self.large_sizes = [16 * MiB] if quick else [100 * MiB, 1024 * MiB]
        self.clear_docs = 1_000 if quick else 10_000
        self.clear_reps = 1 if quick else 3
        self.rules_reps = 5 if quick else 20
        self.rules_cases = 20_000 if quick else 100_000
        self.sha_reps = 1 if quick else 3
        self.flow_workers = 2 if quick else 4
        self.flow_seconds = 2 if quick else 10
        self.sqlite_commits = 5_000 if quick else 50_000
        self.mhd_threads = 8                              # as HTTPServer.Configuration's default
        # Realtime: Listen streams on the committed query, and idle listeners held open.
        self.listener_counts = [1, 100] if quick else [1, 100, 1_000]
        self.idle_listeners = 1_000 if quick else 10_000

    def listener_commits(self, listeners):
        """Commits timed per listener count (every listener's snapshot of each is one sample)."""
        if self.quick:
            return 10
        return {1: 200, 100: 100}.get(listeners, 30)

    def peer_listener_commits(self, listeners):
        """Commits timed per listener count for the official emulator, which answers every change with
        RESET and the whole result to every listener: 100 commits at 100 listeners took it over the
        600 s limit (two runs), and 20 still did not finish (each took ~6 s to reach all 100, more as
        the result grew); p50/p99 come from listeners × commits samples."""
        if self.quick:
            return 10
        return {1: 50, 100: 5}.get(listeners, 2)


class Context:
    def __init__(self, quick, root, hearth_bin, moto_bin, rules_file):
        self.s = Settings(quick)
        self.quick = quick
        self.root = root
        self.build = os.path.join(root, ".build", "bench")
        self.run_dir = os.path.join(self.build, "run")
        self.data = os.path.join(self.build, "www")       # nginx's root: the same bytes Hearth serves
        os.makedirs(self.run_dir, exist_ok=True)
        os.makedirs(self.data, exist_ok=True)
        self.hearth_bin = hearth_bin
        self.moto_bin = moto_bin
        self.rules_file = rules_file
        self.peer = not quick                             # the official Firestore emulator beside Hearth
        self.pairing = None                               # pairs.Pairing of the Firestore phase, for the report
        self.hop_probe = None                             # () → the vCPUs' cache-line hop in ns (machine.vcpu_hop_ns)
        self.nginx_get = None                             # the 4 KiB GET ceiling beside the REST get, once nginx is up
        # system name → its server's pid: wrk records where each end ran and pins the one-connection
        # S3 points (layout.py), the same for every system.
        self.server_pids = {}
        self.registry = Registry()
        self.wrk = Wrk(self.run_dir, self.s.duration, self.s.wrk_reps)
        self.results = Results()
        self.signer = Signer()
        self.t0 = time.monotonic()
        self.obj4k = self._fixed_file("obj4k", 4096, seed=4)
        self.body64k = self._fixed_file("body64k", 64 * 1024, seed=64)

    def log(self, msg):
        print(f"[{time.monotonic() - self.t0:7.1f}s] {msg}", file=sys.stderr, flush=True)

    def _fixed_file(self, name, size, seed):
        path = os.path.join(self.data, name)
        data = random.Random(seed).randbytes(size)
        if not (os.path.exists(path) and os.path.getsize(path) == size):
            with open(path, "wb") as f:
                f.write(data)
        return path

    def large_file(self, size):
        """A file of `size` random bytes and its SHA-256 hex, generated once and kept under .build/bench."""
        path = os.path.join(self.data, f"large-{size // MiB}m.bin")
        hash_path = path + ".sha256"
        if os.path.exists(path) and os.path.getsize(path) == size and os.path.exists(hash_path):
            with open(hash_path) as f:
                return path, f.read().strip()
        self.log(f"generating {size // MiB} MiB test file")
        h = hashlib.sha256()
        with open(path + ".tmp", "wb") as f:
            left = size
            while left:
                chunk = os.urandom(min(left, 16 * MiB))
                h.update(chunk)
                f.write(chunk)
                left -= len(chunk)
        os.replace(path + ".tmp", path)
        with open(hash_path, "w") as f:
            f.write(h.hexdigest())
        return path, h.hexdigest()

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()
