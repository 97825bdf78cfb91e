"""The Docker packaging stays correct by construction (no Docker engine runs in CI)."""
import os
import re

import yaml

from hearthharness import REPO


def test_compose_file_parses_and_exposes_every_port():
    with open(os.path.join(REPO, "docker-compose.yml")) as f:
        compose = yaml.safe_load(f)
    svc = compose["services"]["hearth"]
    published = {int(p.split(":")[-1]) for p in svc["ports"]}
    assert published == {4400, 9099, 8080, 9000, 8000}
    assert "0.0.0.0" in svc["command"]
    mounts = {v.split(":")[1] for v in svc["volumes"]}
    assert mounts == {"/work/emulator-data", "/work/rules"}


def test_dockerfile_is_multi_stage_with_the_runtime_libraries():
    text = open(os.path.join(REPO, "Dockerfile")).read()
    stages = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert len(stages) == 2 and stages[0].startswith("swift:") and "slim" in stages[1]
    for lib in ["libsqlite3-0", "libssl3", "libmicrohttpd12"]:
        assert lib in text
    for port in ["4400", "9099", "8080", "9000", "8000"]:
        assert port in text
