"""Helpers for the Auth compatibility suites (plain functions; fixtures live in conftest.py)."""
import json
import os
import signal
import subprocess
import tempfile
import time
import uuid

import requests

X509_PATH = "/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
JWKS_PATH = "/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"


def auth_url():
    return os.environ["HEARTH_AUTH_URL"].rstrip("/")


def project():
    return os.environ.get("HEARTH_PROJECT", "demo-hearth")


def unique_email(tag="user"):
    return f"{tag}-{uuid.uuid4().hex[:12]}@example.com"


def it_url(path, base=None):
    return f"{base or auth_url()}/identitytoolkit.googleapis.com/v1/{path}"


def client_post(path, body=None, base=None, **kwargs):
    """POSTs a client (API-key) request to an Identity Toolkit v1 path."""
    return requests.post(it_url(path, base) + "?key=fake-api-key", json=body if body is not None else {}, **kwargs)


def admin_post(path, body=None, base=None):
    return requests.post(it_url(path, base), json=body if body is not None else {}, headers={"Authorization": "Bearer owner"})


def sign_up(email=None, password="secret-pass-1", base=None):
    body = {"returnSecureToken": True}
    if email:
        body.update(email=email, password=password)
    r = client_post("accounts:signUp", body, base)
    assert r.status_code == 200, r.text
    return r.json()


def sign_in(email, password="secret-pass-1", base=None):
    return client_post("accounts:signInWithPassword", {"email": email, "password": password, "returnSecureToken": True}, base)


def refresh(refresh_token, base=None):
    return requests.post(f"{base or auth_url()}/securetoken.googleapis.com/v1/token?key=fake-api-key",
                         data={"grant_type": "refresh_token", "refresh_token": refresh_token})


def error_message(response):
    return response.json()["error"]["message"]


def start_hearth(extra_args):
    """Starts an extra `hearth` (HEARTH_BIN) on free ports; returns (process, ready json, log path)."""
    binary = os.environ.get("HEARTH_BIN")
    if not binary or not os.path.exists(binary):
        return None, None, None
    tmp = tempfile.mkdtemp(prefix="hearth-auth-")
    ready_path = os.path.join(tmp, "ready.json")
    log_path = os.path.join(tmp, "hearth.log")
    args = [binary, "start", "--in-memory", "--ready-file", ready_path, "--hub-port", "0", "--auth-port", "0",
            "--firestore-port", "0", "--s3-port", "0", "--api-port", "0", "--ui-port", "0", "--storage-port", "0", "--quiet", *extra_args]
    rules = os.path.join(REPO, "rules", "firestore.rules")
    if os.path.exists(rules):
        args += ["--rules", rules]
    proc = subprocess.Popen(args, stdout=open(log_path, "wb"), stderr=subprocess.STDOUT, cwd=tmp)
    deadline = time.time() + 60
    while time.time() < deadline:
        if os.path.exists(ready_path):
            time.sleep(0.05)
            with open(ready_path) as f:
                return proc, json.load(f), log_path
        if proc.poll() is not None:
            raise RuntimeError(f"hearth {' '.join(extra_args)} exited with {proc.returncode}: {open(log_path).read()}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("hearth did not become ready in 60 s")


def stop_hearth(proc):
    if proc is None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
