"""Shared harness for the real-client suites: one `hearth start` for the whole session.

It runs the binary named by HEARTH_BIN (the Makefile passes the fresh build) on free ports with
an in-memory database and a fixed seed, waits for its ready file, and exports the environment a
client needs, exactly as `eval "$(hearth start …)"` would.
"""
import os

import pytest

from hearthharness import REPO, export_env, hearth_bin, start_hearth, stop_hearth  # noqa: F401


@pytest.fixture(scope="session", autouse=True)
def hearth():
    proc, ready, tmp = start_hearth()
    os.environ["HEARTH_READY"] = os.path.join(tmp, "ready.json")
    os.environ["HEARTH_BIN"] = hearth_bin()
    export_env(ready)
    yield ready
    stop_hearth(proc)


@pytest.fixture
def hub_url(hearth):
    return hearth["services"]["hub"]["url"]
