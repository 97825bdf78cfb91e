"""The processes a benchmark starts: Hearth, moto_server, nginx and the C ceilings.

Every process is started in its own session and recorded; `Registry.stop_all` ends exactly those
(by process group id), so a crashed or interrupted run leaves nothing behind.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from .httpc import Client, HarnessError, NotAvailable

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(port, path="/", timeout=0.5):
    """Status of one GET on a fresh connection, or None when nothing answers yet."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            head = s.recv(64)
            if not head.startswith(b"HTTP/"):
                return None
            return int(head.split()[1])
    except (OSError, ValueError, IndexError):
        return None


def proc_status(pid):
    """VmRSS, VmHWM, RssAnon, RssFile (KiB) and Threads from /proc/<pid>/status; {} when gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:", "Threads:")):
                    k, v = line.split(":", 1)
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def reset_peak_rss(pid):
    """Resets VmHWM to the current RSS (Linux `clear_refs` 5); False when not permitted."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class Registry:
    """Every child process of the run, stopped at the end in reverse order."""

    def __init__(self):
        self.procs = []

    def spawn(self, argv, log_path, cwd=None, env=None):
        log = open(log_path, "wb")  # a fresh log per process: n/a reasons quote its tail
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             cwd=cwd, env=env, start_new_session=True)
        log.close()
        self.procs.append(p)
        return p

    def stop(self, p, grace=10):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(5)
        if p in self.procs:
            self.procs.remove(p)

    def stop_all(self):
        for p in reversed(list(self.procs)):
            self.stop(p, grace=5)


def tail(path, n=600):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - n))
            return " ".join(f.read().decode("utf-8", "replace").split())
    except OSError:
        return ""


def compile_c(source, out, libs):
    """Compiles a ceiling program with cc -O2 into .build/bench/ (skipped when up to date: newer than
    its source and every header of bench/ceilings/, which the programs share)."""
    ceilings = os.path.join(BENCH_DIR, "ceilings")
    src = os.path.join(ceilings, source)
    newest = max([os.path.getmtime(src)] + [os.path.getmtime(os.path.join(ceilings, f))
                                            for f in os.listdir(ceilings) if f.endswith(".h")])
    if os.path.exists(out) and os.path.getmtime(out) >= newest:
        return out
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise HarnessError("no C compiler (cc) for the ceiling programs")
    r = subprocess.run([cc, "-O2", "-Wall", "-o", out, src] + libs, capture_output=True, text=True)
    if r.returncode != 0:
        raise HarnessError(f"cc {source} failed: {r.stderr.strip()[:400]}")
    return out


def precreate_firestore_file(data_dir):
    """An experiment (BENCH_FIRESTORE_PAGE_SIZE=N): a new data directory's firestore.sqlite created
    beforehand with N-byte pages, which Hearth then keeps (a page size only applies to a new, empty
    file), so one binary's rows can be counted at several page sizes."""
    size = os.environ.get("BENCH_FIRESTORE_PAGE_SIZE")
    if not size or not data_dir:
        return
    path = os.path.join(data_dir, "firestore.sqlite")
    if os.path.exists(path):
        return
    import sqlite3
    os.makedirs(data_dir, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA page_size={int(size)}")
    db.execute("PRAGMA journal_mode=WAL")
    db.close()


class Hearth:
    """One `hearth start` on free ports; `services` comes from the ready file."""

    def __init__(self, registry, binary, work_dir, data_dir=None, rules=None, extra=(), log_name="hearth"):
        self.registry, self.binary, self.work_dir = registry, binary, work_dir
        self.data_dir, self.rules, self.extra = data_dir, rules, list(extra)
        self.log = os.path.join(work_dir, f"{log_name}.log")
        self.ready_path = os.path.join(work_dir, f"{log_name}.ready.json")
        self.proc = None
        self.services = {}

    def argv(self, hub_port=0):
        a = [self.binary, "start"]
        a += ["--data-dir", self.data_dir] if self.data_dir else ["--in-memory"]
        a += ["--hub-port", str(hub_port), "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0",
              "--api-port", "0", "--ui-port", "0", "--storage-port", "0", "--ready-file", self.ready_path, "--quiet"]
        if self.rules:
            a += ["--rules", self.rules]
        return a + self.extra

    def start(self, timeout=60):
        if not os.access(self.binary, os.X_OK):
            raise NotAvailable(f"no hearth binary at {self.binary}")
        if os.path.exists(self.ready_path):
            os.remove(self.ready_path)
        precreate_firestore_file(self.data_dir)
        self.proc = self.registry.spawn(self.argv(), self.log, cwd=self.work_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise NotAvailable(f"hearth exited with {self.proc.returncode}: {tail(self.log, 300)}")
            try:
                with open(self.ready_path) as f:
                    ready = json.load(f)
                self.services = ready.get("services", {})
                return self
            except (OSError, ValueError):
                time.sleep(0.02)
        self.stop()
        raise NotAvailable(f"hearth wrote no ready file within {timeout}s: {tail(self.log, 300)}")

    @property
    def pid(self):
        return self.proc.pid

    def port(self, service):
        s = self.services.get(service)
        if not s:
            raise NotAvailable(f"no '{service}' listener in hearth's ready file (service not wired yet)")
        return int(s["port"])

    def busy_poll(self):
        """The hub's `busyPoll` list (each HTTP/2 loop's and polling REST worker's state and counts,
        `/emulator/v1/stats`), or None when the binary has none or the hub does not answer."""
        try:
            c = Client(self.port("hub"), timeout=5)
            try:
                r = c.request("GET", "/emulator/v1/stats")
                return r.json().get("busyPoll") if r.status == 200 else None
            finally:
                c.close()
        except (NotAvailable, OSError, ValueError):
            return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self):
        if not self.alive():
            raise NotAvailable(f"hearth is not running (exit {self.proc.returncode if self.proc else '?'}): "
                               f"{tail(self.log, 300)}")

    def stop(self):
        if self.proc is not None:
            self.registry.stop(self.proc)


def time_to_first_200(registry, argv, port, path, log, cwd, timeout=60, env=None):
    """Seconds from exec to the first 200 on 127.0.0.1:port/path; the process is stopped afterwards."""
    t0 = time.perf_counter()
    p = registry.spawn(argv, log, cwd=cwd, env=env)
    try:
        while True:
            if http_status(port, path) == 200:
                return time.perf_counter() - t0
            if p.poll() is not None:
                raise NotAvailable(f"{os.path.basename(argv[0])} exited with {p.returncode}: {tail(log, 300)}")
            if time.perf_counter() - t0 > timeout:
                raise NotAvailable(f"no 200 on {path} within {timeout}s")
            time.sleep(0.0005)
    finally:
        registry.stop(p)


class Moto:
    """`moto_server` from the venv, the S3 fake most Python users reach for."""

    def __init__(self, registry, binary, work_dir):
        self.registry, self.binary, self.work_dir = registry, binary, work_dir
        self.proc = None
        self.port = None
        self.log = os.path.join(work_dir, "moto.log")

    def argv(self, port):
        return [self.binary, "-H", "127.0.0.1", "-p", str(port)]

    def start(self, timeout=60):
        if not os.access(self.binary, os.X_OK):
            raise HarnessError(f"moto_server not installed at {self.binary} (bench/requirements.txt)")
        self.port = free_port()
        self.proc = self.registry.spawn(self.argv(self.port), self.log, cwd=self.work_dir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"moto_server exited with {self.proc.returncode}: {tail(self.log)}")
            if http_status(self.port, "/moto-api/data.json") == 200:
                return self
            time.sleep(0.05)
        raise HarnessError(f"moto_server did not answer within {timeout}s: {tail(self.log)}")

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc is not None:
            self.registry.stop(self.proc)


class Nginx:
    """nginx serving `root` as static files (sendfile, keep-alive, no access log) from a private prefix."""

    def __init__(self, registry, work_dir, root):
        self.registry, self.work_dir, self.root = registry, work_dir, root
        self.prefix = os.path.join(work_dir, "nginx")
        self.port = None
        self.proc = None

    def start(self, timeout=15):
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(binary, os.X_OK):
            raise HarnessError("nginx is not installed (Debian package nginx-light)")
        os.makedirs(os.path.join(self.prefix, "logs"), exist_ok=True)
        os.makedirs(os.path.join(self.prefix, "tmp"), exist_ok=True)
        self.port = free_port()
        with open(os.path.join(BENCH_DIR, "nginx.conf.in")) as f:
            conf = f.read()
        conf = (conf.replace("@PREFIX@", self.prefix).replace("@ROOT@", self.root)
                .replace("@PORT@", str(self.port))
                .replace("@USER@", "user root;" if os.geteuid() == 0 else ""))
        conf_path = os.path.join(self.prefix, "nginx.conf")
        with open(conf_path, "w") as f:
            f.write(conf)
        self.proc = self.registry.spawn([binary, "-p", self.prefix, "-c", conf_path, "-g", "daemon off;"],
                                        os.path.join(self.prefix, "logs", "stdout.log"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"nginx exited with {self.proc.returncode}: "
                                   f"{tail(os.path.join(self.prefix, 'logs', 'error.log'))}")
            if http_status(self.port, "/") in (200, 403, 404):
                return self
            time.sleep(0.02)
        raise HarnessError("nginx did not answer")

    def stop(self):
        if self.proc is not None:
            self.registry.stop(self.proc)


class BareMHD:
    """bench/ceilings/mhd_bare.c: libmicrohttpd as Hearth configures it, answering fixed bytes."""

    def __init__(self, registry, binary, work_dir, threads, body_file=None, name="mhd"):
        self.registry, self.binary, self.work_dir = registry, binary, work_dir
        self.threads, self.body_file, self.name = threads, body_file, name
        self.port = None
        self.proc = None

    def argv(self):
        return [self.binary, str(self.port), str(self.threads)] + ([self.body_file] if self.body_file else [])

    def start(self, timeout=10):
        self.port = free_port()
        self.proc = self.registry.spawn(self.argv(), os.path.join(self.work_dir, f"{self.name}.log"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f"{self.name} exited with {self.proc.returncode}")
            if http_status(self.port, "/") == 200:
                return self
            time.sleep(0.02)
        raise HarnessError(f"{self.name} did not answer")

    def stop(self):
        if self.proc is not None:
            self.registry.stop(self.proc)


def make_temp_dir(parent, prefix):
    os.makedirs(parent, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=parent)


class OfficialFirestore:
    """The official Cloud Firestore emulator (`gcloud emulators firestore start`, a JVM) with the same
    rules file Hearth runs; `pid` is the JVM's (what memory and threads are read from)."""

    def __init__(self, registry, work_dir, rules):
        self.registry, self.work_dir, self.rules = registry, work_dir, rules
        self.port = None
        self.proc = None
        self.java_pid = None
        self.log = os.path.join(work_dir, "firestore-emulator.log")

    @staticmethod
    def available():
        return shutil.which("gcloud") is not None and shutil.which("java") is not None

    def argv(self, port):
        a = ["gcloud", "emulators", "firestore", "start", f"--host-port=127.0.0.1:{port}"]
        return a + (["--rules", self.rules] if self.rules else [])

    def start(self, timeout=120):
        if not self.available():
            raise NotAvailable("gcloud (Google Cloud CLI with the Firestore emulator) or java is not installed")
        self.port = free_port()
        env = dict(os.environ, CLOUDSDK_CORE_DISABLE_PROMPTS="1")
        t0 = time.perf_counter()
        self.proc = self.registry.spawn(self.argv(self.port), self.log, cwd=self.work_dir, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise NotAvailable(f"the Firestore emulator exited with {self.proc.returncode}: {tail(self.log, 300)}")
            if http_status(self.port, "/") == 200:
                self.startup_seconds = time.perf_counter() - t0
                self.java_pid = self._find_java()
                return self
            time.sleep(0.05)
        self.stop()
        raise NotAvailable(f"the Firestore emulator did not answer within {timeout}s: {tail(self.log, 300)}")

    def _find_java(self):
        """The JVM among the processes of the emulator's session (gcloud → shell script → java)."""
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
                fields = stat[stat.rindex(")") + 2:].split()
                if int(fields[3]) == self.proc.pid and "(java)" in stat:  # fields[3]: session id
                    return int(entry)
            except (OSError, ValueError, IndexError):
                continue
        return self.proc.pid

    @property
    def pid(self):
        return self.java_pid or self.proc.pid

    def stop(self):
        if self.proc is not None:
            self.registry.stop(self.proc)
