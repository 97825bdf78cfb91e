"""The Go Firestore client (Debian's golang-google-cloud-dev, GOPATH mode, no module download):
an independent gRPC implementation doing a backend's core operations (goclient/main.go)."""
import os
import shutil
import subprocess
import uuid

import pytest

GOPATH = "/usr/share/gocode"
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="session")
def go_program(tmp_path_factory):
    go = shutil.which("go")
    if not go or not os.path.isdir(os.path.join(GOPATH, "src", "cloud.google.com", "go", "firestore")):
        pytest.skip("go and golang-google-cloud-dev are not installed (make test installs them)")
    out = str(tmp_path_factory.mktemp("go") / "fsgo")
    env = dict(os.environ, GO111MODULE="off", GOPATH=GOPATH, GOFLAGS="",
               GOCACHE=str(tmp_path_factory.mktemp("gocache")))
    build = subprocess.run([go, "build", "-o", out, "."], cwd=os.path.join(HERE, "goclient"), env=env,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    return out


def test_go_client_core_operations(go_program, emulator_host):
    env = dict(os.environ, FIRESTORE_EMULATOR_HOST=emulator_host,
               GCLOUD_PROJECT=os.environ.get("HEARTH_PROJECT", "demo-hearth"))
    run = subprocess.run([go_program, "go" + uuid.uuid4().hex[:10]], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split("\n")[:-1] == ["ok " + s for s in
                                           ["set-get", "update-transforms", "preconditions", "queries", "getall",
                                            "transaction", "batch", "list", "snapshots"]]
