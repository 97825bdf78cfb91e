"""RS256 mode: production verification code (google-auth, PyJWT, firebase-admin) against Hearth's keys.

Runs its own `hearth start --token-signing rs256` (HEARTH_BIN); see the `rs256_hearth` fixture.
"""
import base64
import datetime
import json
import os

import firebase_admin
import google.auth.transport.requests
import jwt
import pytest
import requests
from firebase_admin import auth
from google.oauth2 import id_token as google_id_token

import authcompat
from authcompat import JWKS_PATH, X509_PATH, unique_email


@pytest.fixture(scope="module")
def base(rs256_hearth):
    return rs256_hearth["services"]["auth"]["url"].rstrip("/")


@pytest.fixture(scope="module")
def hub(rs256_hearth):
    return rs256_hearth["services"]["hub"]["url"].rstrip("/")


@pytest.fixture(scope="module")
def project(rs256_hearth):
    return rs256_hearth.get("project", "demo-hearth")


@pytest.fixture
def clock(hub):
    """Moves the rs256 Hearth's clock; always released afterwards."""
    def move(body):
        r = requests.put(f"{hub}/emulator/v1/clock", json=body)
        assert r.status_code == 200, r.text
        return r.json()
    yield move
    requests.put(f"{hub}/emulator/v1/clock", json={"mode": "system"})


def tamper(token, **changes):
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{forged}.{signature}"


def test_tokens_are_rs256_with_a_published_kid(base):
    token = authcompat.sign_up(unique_email("rs"), base=base)["idToken"]
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "RS256" and header["typ"] == "JWT"
    certs = requests.get(base + X509_PATH)
    assert certs.status_code == 200
    assert header["kid"] in certs.json()
    assert certs.json()[header["kid"]].startswith("-----BEGIN CERTIFICATE-----")
    assert "max-age=" in certs.headers["Cache-Control"]
    jwks = requests.get(base + JWKS_PATH).json()
    assert [k["kid"] for k in jwks["keys"]] == [header["kid"]]


def test_google_auth_verify_token(base, project):
    up = authcompat.sign_up(unique_email("gauth"), base=base)
    request = google.auth.transport.requests.Request()
    claims = google_id_token.verify_token(up["idToken"], request, audience=project, certs_url=base + X509_PATH)
    assert claims["sub"] == up["localId"]
    assert claims["iss"] == f"https://securetoken.google.com/{project}"
    with pytest.raises(ValueError):
        google_id_token.verify_token(tamper(up["idToken"], sub="intruder"), request, audience=project, certs_url=base + X509_PATH)
    with pytest.raises(ValueError):
        google_id_token.verify_token(up["idToken"], request, audience="another-project", certs_url=base + X509_PATH)


def test_pyjwt_with_jwks_client(base, project):
    up = authcompat.sign_up(unique_email("pyjwt"), base=base)
    client = jwt.PyJWKClient(base + JWKS_PATH)
    key = client.get_signing_key_from_jwt(up["idToken"])
    claims = jwt.decode(up["idToken"], key.key, algorithms=["RS256"], audience=project,
                        issuer=f"https://securetoken.google.com/{project}", options={"require": ["exp", "iat", "sub"]})
    assert claims["user_id"] == up["localId"]
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(tamper(up["idToken"], admin=True), key.key, algorithms=["RS256"], audience=project)


def test_token_minted_two_hours_ago_is_expired_for_real_verifiers(base, project, clock):
    """With Hearth's clock set back two hours, a fresh sign-in yields a token whose `exp` is already
    past in real time: production verifiers reject it as expired."""
    two_hours_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)
    clock({"frozenAt": two_hours_ago.strftime("%Y-%m-%dT%H:%M:%SZ")})
    token = authcompat.sign_up(unique_email("old"), base=base)["idToken"]
    clock({"mode": "system"})
    key = jwt.PyJWKClient(base + JWKS_PATH).get_signing_key_from_jwt(token)
    with pytest.raises(jwt.ExpiredSignatureError):
        jwt.decode(token, key.key, algorithms=["RS256"], audience=project)
    with pytest.raises(ValueError, match="expired"):
        google_id_token.verify_token(token, google.auth.transport.requests.Request(), audience=project, certs_url=base + X509_PATH)


def test_clock_advance_expires_tokens_inside_hearth(base, clock):
    up = authcompat.sign_up(unique_email("adv"), base=base)
    assert authcompat.client_post("accounts:lookup", {"idToken": up["idToken"]}, base=base).status_code == 200
    clock({"advanceSeconds": 7200})
    r = authcompat.client_post("accounts:lookup", {"idToken": up["idToken"]}, base=base)
    assert r.status_code == 400 and authcompat.error_message(r) == "INVALID_ID_TOKEN"
    refreshed = authcompat.refresh(up["refreshToken"], base=base)
    assert refreshed.status_code == 200
    assert authcompat.client_post("accounts:lookup", {"idToken": refreshed.json()["id_token"]}, base=base).status_code == 200


def test_unsigned_tokens_are_refused_in_rs256_mode(base, project):
    unsigned = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + base64.urlsafe_b64encode(json.dumps({
        "iss": f"https://securetoken.google.com/{project}", "aud": project, "sub": "x", "user_id": "x",
        "iat": 0, "exp": 9999999999}).encode()).rstrip(b"=").decode() + "."
    r = authcompat.client_post("accounts:lookup", {"idToken": unsigned}, base=base)
    assert authcompat.error_message(r) == "INVALID_ID_TOKEN"


def test_firebase_admin_verify_id_token_in_rs256_mode(rs256_hearth, base, project, monkeypatch):
    host = rs256_hearth["env"].get("FIREBASE_AUTH_EMULATOR_HOST") or base.split("://", 1)[1]
    monkeypatch.setenv("FIREBASE_AUTH_EMULATOR_HOST", host)
    app = firebase_admin.initialize_app(options={"projectId": project}, name="hearth-auth-rs256")
    try:
        up = authcompat.sign_up(unique_email("admin-rs"), base=base)
        claims = auth.verify_id_token(up["idToken"], check_revoked=True, app=app)
        assert claims["uid"] == up["localId"]
        auth.update_user(up["localId"], disabled=True, app=app)
        with pytest.raises(auth.UserDisabledError):
            auth.verify_id_token(up["idToken"], check_revoked=True, app=app)
    finally:
        firebase_admin.delete_app(app)


def test_app_check_debug_exchange_verifies_with_its_jwks(base, project):
    app_id = "1:123456789:web:abcdef"
    r = requests.post(f"{base}/v1/projects/{project}/apps/{app_id}:exchangeDebugToken?key=k", json={"debugToken": "debug-1"})
    assert r.status_code == 200, r.text
    assert r.json()["ttl"] == "3600s"
    token = r.json()["token"]
    key = jwt.PyJWKClient(f"{base}/v1/jwks").get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=f"projects/{project}")
    assert claims["sub"] == app_id and claims["provider"] == "debug"
