"""bench/grpcload's Go tests (txnraw_test.go: the REST transaction's checks through net/http and the light
HTTP/1.1 client against a fake server, a wrong answer counted as a failure), built in GOPATH mode from
Debian's Go packages as `make bench` builds grpcload (bench/benchlib/grpcbench.py). No Hearth is measured."""
import os
import shutil
import subprocess
import sys

import pytest

from hearthharness import REPO

sys.dont_write_bytecode = True  # no __pycache__ inside bench/
sys.path.insert(0, os.path.join(REPO, "bench"))

from benchlib.grpcbench import GOPATH  # noqa: E402


def test_grpcload_go_tests_pass():
    go = shutil.which("go")
    if not go or not os.path.isdir(os.path.join(GOPATH, "src", "google.golang.org", "genproto", "googleapis",
                                                "firestore", "v1")):
        pytest.skip("go and golang-google-cloud-dev are not installed (the Makefile's DEB_PACKAGES)")
    env = dict(os.environ, GO111MODULE="off", GOPATH=GOPATH, GOFLAGS="",
               GOCACHE=os.path.join(REPO, ".build", "gocache"))
    r = subprocess.run([go, "test", "-count=1", "."], cwd=os.path.join(REPO, "bench", "grpcload"), env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
