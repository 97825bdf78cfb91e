"""Targets for the official-SDK suites: Hearth (always) and the official Cloud Firestore emulator
(when the Google Cloud CLI is on the machine; skipped visibly otherwise).

Every test here runs once per target with the same assertions, so a test that passes on both is a
differential check: Hearth answers as the official emulator does.
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

_official = {}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_official():
    if "proc" in _official or "error" in _official:
        return _official
    gcloud = shutil.which("gcloud")
    if not gcloud or os.environ.get("HEARTH_SKIP_OFFICIAL"):
        _official["error"] = "the official Cloud Firestore emulator (gcloud) is not installed"
        return _official
    port = _free_port()
    tmp = tempfile.mkdtemp(prefix="official-firestore-")
    rules = os.path.join(tmp, "open.rules")
    with open(rules, "w") as f:
        f.write('rules_version = "2";\nservice cloud.firestore { match /databases/{d}/documents '
                '{ match /{p=**} { allow read, write: if true; } } }\n')
    log = open(os.path.join(tmp, "emulator.log"), "wb")
    proc = subprocess.Popen([gcloud, "emulators", "firestore", "start", f"--host-port=127.0.0.1:{port}",
                             "--rules", rules], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 120  # a JVM start on a loaded 2-core machine took over 60 s
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                _official.update(proc=proc, host=f"127.0.0.1:{port}")
                # The JVM runs in a session of its own, so a pytest killed before sessionfinish
                # (a timeout, ^C twice) would leave it running: a watcher stops it when we go.
                subprocess.Popen(["sh", "-c", f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 2; done; "
                                  f"kill -TERM -{proc.pid} 2>/dev/null"], start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                return _official
        except OSError:
            time.sleep(0.25)
    # The launcher is a shell script running java in the session it leads: end them both, or a
    # JVM that was merely slow to start (a loaded machine) keeps running with no one to stop it.
    try:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
    proc.wait()
    _official["error"] = "the official emulator did not start in 120 s"
    return _official


def pytest_sessionfinish(session, exitstatus):
    proc = _official.get("proc")
    if proc:
        try:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=10)
        except Exception:
            pass


@pytest.fixture(params=["hearth", "official"])
def emulator_host(request, hearth):
    """`host:port` of the target for FIRESTORE_EMULATOR_HOST."""
    if request.param == "hearth":
        return os.environ["FIRESTORE_EMULATOR_HOST"]
    info = _start_official()
    if "error" in info:
        pytest.skip(info["error"])
    return info["host"]


@pytest.fixture
def target(emulator_host, request):
    """`hearth` or `official`."""
    return request.node.callspec.params["emulator_host"]


@pytest.fixture
def db(emulator_host, monkeypatch):
    """A google-cloud-firestore client on the target, as a user's backend builds one."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import firestore
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", emulator_host)
    client = firestore.Client(project=os.environ.get("HEARTH_PROJECT", "demo-hearth"), credentials=AnonymousCredentials())
    yield client
    client.close()
