"""Starting and stopping hearth for the real-client suites (imported by conftest and tests)."""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def headless_chromium(*extra_args, capabilities=None):
    """A selenium driver of headless Chromium (Debian's chromium + chromium-driver), for the suites
    that need a real browser; skips the caller visibly when either or selenium is missing."""
    import shutil
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (Tests/CompatTests/requirements.txt)")
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    if not chrome or not driver:
        pytest.skip("Chromium or chromedriver is not installed (make test installs Debian's chromium and "
                    "chromium-driver when it can); the browser suite cannot run")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              "--disable-extensions", "--disable-background-networking", *extra_args]:
        opts.add_argument(a)
    for k, v in (capabilities or {}).items():
        opts.set_capability(k, v)
    d = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver), options=opts)
    d.set_page_load_timeout(20)
    return d


def hearth_bin():
    path = os.environ.get("HEARTH_BIN") or os.path.join(REPO, ".build", "debug", "hearth")
    if not os.path.exists(path):
        pytest.exit(f"hearth binary not found at {path}; build first (make test does)", returncode=2)
    return path


def start_hearth(extra_args=(), env=None, in_memory=True):
    """Starts hearth on free ports; returns (process, ready-json, tmpdir)."""
    tmp = tempfile.mkdtemp(prefix="hearth-compat-")
    ready = os.path.join(tmp, "ready.json")
    args = [hearth_bin(), "start", *(["--in-memory"] if in_memory else []), "--seed", "1", "--ready-file", ready,
            "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0",
            "--rules", os.path.join(REPO, "rules", "firestore.rules"), "--quiet", "--exit-with-parent", *extra_args]
    log = open(os.path.join(tmp, "hearth.log"), "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=tmp, env=env)
    deadline = time.time() + 30
    while time.time() < deadline:
        if os.path.exists(ready):
            with open(ready) as f:
                return proc, json.load(f), tmp
        if proc.poll() is not None:
            raise RuntimeError(f"hearth exited with {proc.returncode}: " + open(os.path.join(tmp, "hearth.log")).read())
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("hearth did not become ready in 30 s")


def start_hearth_on(data_dir, ready, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, quiet=True):
    """Starts hearth on `data_dir` (None: in memory) with its ready file at `ready` and its output
    where the caller says (a pipe, a file on a full disk); returns (process, ready-json)."""
    if os.path.exists(ready):
        os.remove(ready)
    args = [hearth_bin(), "start", *(["--data-dir", data_dir] if data_dir else ["--in-memory"]), "--ready-file", ready,
            "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0",
            "--ui-port", "0", "--storage-port", "0", "--rules", os.path.join(REPO, "rules", "firestore.rules"), *(["--quiet"] if quiet else [])]
    proc = subprocess.Popen(args, stdout=stdout, stderr=stderr)
    deadline = time.time() + 30
    while time.time() < deadline:
        if os.path.exists(ready):
            with open(ready) as f:
                return proc, json.load(f)
        assert proc.poll() is None, f"hearth exited with {proc.returncode}"
        time.sleep(0.02)
    proc.kill()
    raise RuntimeError("hearth did not start")


def stop_hearth(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def export_env(ready):
    services = ready["services"]
    for name, var in [("hub", "HEARTH_HUB_URL"), ("s3", "HEARTH_S3_URL"), ("auth", "HEARTH_AUTH_URL"),
                      ("firestore", "HEARTH_FIRESTORE_URL"), ("api", "HEARTH_API_URL"),
                      ("storage", "HEARTH_STORAGE_URL")]:
        if name in services:
            os.environ[var] = services[name]["url"]
    os.environ["HEARTH_PROJECT"] = ready["project"]
    for k, v in ready["env"].items():
        os.environ[k] = v


def kill_9_during(proc, writers, stop, enough, seconds=1.5):
    """Runs each writer in a thread, kills hearth with SIGKILL in the middle of the burst — after
    `seconds` and once `enough()` says the writers got that far (a loaded machine is slow; at most
    60 s) — then stops the writers and waits for them."""
    threads = [threading.Thread(target=w) for w in writers]
    for t in threads:
        t.start()
    time.sleep(seconds)
    deadline = time.monotonic() + 60
    while not enough() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stop.set()
    for t in threads:
        t.join()
