"""--exit-with-parent: a hearth whose parent dies (even by SIGKILL, which cannot be forwarded) shuts
itself down instead of lingering on its ports."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from hearthharness import hearth_bin

# The parent: starts hearth, prints its pid and hub URL once ready, then sleeps until killed.
PARENT = r"""
import json, os, subprocess, sys, time
ready = sys.argv[2]
args = [sys.argv[1], "start", "--in-memory", "--quiet", "--ready-file", ready, "--hub-port", "0", "--auth-port", "0",
        "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0"] + sys.argv[3:]
child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(600):
    if os.path.exists(ready):
        break
    time.sleep(0.05)
hub = json.load(open(ready))["services"]["hub"]["url"]
print(child.pid, hub, flush=True)
time.sleep(3600)
"""


def _start(extra):
    tmp = tempfile.mkdtemp(prefix="hearth-parent-")
    parent = subprocess.Popen([sys.executable, "-c", PARENT, hearth_bin(), os.path.join(tmp, "ready.json"), *extra],
                              stdout=subprocess.PIPE, text=True)
    pid, hub = parent.stdout.readline().split()
    return parent, int(pid), hub


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_hearth_exits_when_its_parent_is_killed():
    parent, pid, hub = _start(["--exit-with-parent"])
    with urllib.request.urlopen(hub + "/healthz", timeout=5) as r:
        assert r.status == 200
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.time() + 10
    while time.time() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid), "hearth outlived its parent"


def test_without_the_flag_hearth_keeps_running():
    parent, pid, hub = _start([])
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        time.sleep(1.0)
        assert _alive(pid)
        with urllib.request.urlopen(hub + "/healthz", timeout=5) as r:
            assert r.status == 200
    finally:
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 10
        while time.time() < deadline and _alive(pid):
            time.sleep(0.05)
