"""Fixtures of the Auth compatibility suites.

The session's shared `hearth` (root conftest) runs in the default `none` token mode; the rs256
suites start their own `hearth start --token-signing rs256` from HEARTH_BIN.
"""
import os

import firebase_admin
import pytest

import authcompat


@pytest.fixture(scope="session")
def admin_app(hearth):
    """A firebase-admin app for the shared Hearth (FIREBASE_AUTH_EMULATOR_HOST is exported)."""
    assert os.environ.get("FIREBASE_AUTH_EMULATOR_HOST"), "the harness must export FIREBASE_AUTH_EMULATOR_HOST"
    app = firebase_admin.initialize_app(options={"projectId": authcompat.project()}, name="hearth-auth-compat")
    yield app
    firebase_admin.delete_app(app)


@pytest.fixture(scope="module")
def rs256_hearth():
    """A second Hearth signing ID tokens with RS256; skipped without HEARTH_BIN."""
    if not os.environ.get("HEARTH_BIN"):
        pytest.skip("HEARTH_BIN is not set: cannot start a `hearth --token-signing rs256` for the RS256 suites")
    proc, ready, _ = authcompat.start_hearth(["--token-signing", "rs256", "--seed", "2"])
    if proc is None:
        pytest.skip(f"HEARTH_BIN={os.environ.get('HEARTH_BIN')} does not exist")
    try:
        yield ready
    finally:
        authcompat.stop_hearth(proc)
