"""The client REST API (what the Firebase client SDKs send), spoken with plain `requests`."""
import base64
import json
import urllib.parse

import requests

import authcompat
from authcompat import auth_url, client_post, error_message, unique_email


def decode(token):
    header, payload, signature = token.split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)
    return json.loads(base64.urlsafe_b64decode(pad(header))), json.loads(base64.urlsafe_b64decode(pad(payload))), signature


def test_ready():
    assert requests.get(auth_url() + "/").json()["authEmulator"]["ready"] is True


def test_sign_up_sign_in_lookup_and_token_shape():
    email = unique_email("Shape")
    up = authcompat.sign_up(email)
    assert up["kind"] == "identitytoolkit#SignupNewUserResponse"
    assert up["email"] == email.lower()
    assert up["expiresIn"] == "3600"
    header, payload, signature = decode(up["idToken"])
    assert header == {"alg": "none", "typ": "JWT"}
    assert signature == ""
    assert list(payload) == ["email", "email_verified", "auth_time", "user_id", "firebase", "iat", "exp", "aud", "iss", "sub"]
    assert payload["exp"] == payload["iat"] + 3600
    assert payload["aud"] == authcompat.project()
    assert payload["iss"] == f"https://securetoken.google.com/{authcompat.project()}"
    assert payload["firebase"] == {"identities": {"email": [email.lower()]}, "sign_in_provider": "password"}

    signed_in = authcompat.sign_in(email)
    assert signed_in.status_code == 200
    assert signed_in.json()["registered"] is True
    users = client_post("accounts:lookup", {"idToken": signed_in.json()["idToken"]}).json()["users"]
    assert users[0]["localId"] == up["localId"]
    assert users[0]["providerUserInfo"][0]["providerId"] == "password"


def test_anonymous_sign_up():
    r = client_post("accounts:signUp", {"returnSecureToken": True})
    payload = decode(r.json()["idToken"])[1]
    assert payload["provider_id"] == "anonymous"
    assert payload["firebase"]["sign_in_provider"] == "anonymous"


def test_error_bodies_have_googles_shape():
    email = unique_email("errors")
    authcompat.sign_up(email)
    r = client_post("accounts:signUp", {"email": email, "password": "secret-pass-1"})
    assert r.status_code == 400
    assert r.json() == {"error": {"code": 400, "message": "EMAIL_EXISTS",
                                  "errors": [{"message": "EMAIL_EXISTS", "reason": "invalid", "domain": "global"}]}}
    cases = [
        ("accounts:signUp", {"email": unique_email("weak"), "password": "12345"}, "WEAK_PASSWORD : Password should be at least 6 characters"),
        ("accounts:signUp", {"email": "not-an-email", "password": "secret-pass-1"}, "INVALID_EMAIL"),
        ("accounts:signUp", {"email": unique_email("nopass")}, "MISSING_PASSWORD"),
        ("accounts:signInWithPassword", {"email": email, "password": "wrong-pass"}, "INVALID_PASSWORD"),
        ("accounts:signInWithPassword", {"email": unique_email("ghost"), "password": "x-pass-1"}, "EMAIL_NOT_FOUND"),
        ("accounts:signInWithPassword", {"password": "x-pass-1"}, "MISSING_EMAIL"),
        ("accounts:lookup", {"idToken": "not-a-token"}, "INVALID_ID_TOKEN"),
        ("accounts:signInWithCustomToken", {"token": "garbage"}, "INVALID_CUSTOM_TOKEN : Invalid assertion format"),
    ]
    for path, body, message in cases:
        r = client_post(path, body)
        assert r.status_code == 400, (path, r.text)
        assert error_message(r) == message


def test_malformed_requests_are_400_invalid_argument():
    url = authcompat.it_url("accounts:signUp") + "?key=k"
    for raw in ["{", "[]", '{"email": 5, "password": {}}', '{"returnSecureToken": "maybe"}']:
        r = requests.post(url, data=raw, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, raw
        assert r.json()["error"]["status"] == "INVALID_ARGUMENT"
    r = requests.post(url, data=b" " * (10 * 1024 * 1024 + 1), headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["status"] == "INVALID_ARGUMENT"


def test_credentials_rules():
    url = authcompat.it_url("accounts:signUp")
    r = requests.post(url, json={})
    assert r.status_code == 403
    assert r.json()["error"]["message"] == "The request is missing a valid API key."
    assert r.json()["error"]["status"] == "PERMISSION_DENIED"
    assert requests.post(url, json={}, headers={"x-goog-api-key": "any"}).status_code == 200
    assert requests.post(url, json={}, headers={"Authorization": "Bearer owner"}).status_code == 200
    bad = requests.post(url + "?key=k", json={}, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    assert bad.json()["error"]["status"] == "UNAUTHENTICATED"
    scoped = requests.post(authcompat.it_url(f"projects/{authcompat.project()}/accounts:lookup") + "?key=k", json={})
    assert error_message(scoped) == "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id."


def test_update_profile_password_and_refresh_revocation():
    email = unique_email("update")
    up = authcompat.sign_up(email)
    r = client_post("accounts:update", {"idToken": up["idToken"], "displayName": "Upd", "returnSecureToken": True})
    assert r.json()["displayName"] == "Upd"
    assert "idToken" not in r.json()
    changed = client_post("accounts:update", {"idToken": up["idToken"], "password": "brand-new-pass", "returnSecureToken": True}).json()
    assert changed["idToken"] and changed["refreshToken"]
    assert error_message(authcompat.refresh(up["refreshToken"])) == "TOKEN_EXPIRED"
    assert authcompat.refresh(changed["refreshToken"]).status_code == 200
    assert authcompat.sign_in(email, "brand-new-pass").status_code == 200
    payload = decode(authcompat.sign_in(email, "brand-new-pass").json()["idToken"])[1]
    assert payload["name"] == "Upd"
    assert client_post("accounts:delete", {"idToken": changed["idToken"]}).json()["kind"] == "identitytoolkit#DeleteAccountResponse"
    assert error_message(authcompat.sign_in(email, "brand-new-pass")) == "EMAIL_NOT_FOUND"


def test_securetoken_form_and_json():
    up = authcompat.sign_up(unique_email("refresh"))
    form = authcompat.refresh(up["refreshToken"]).json()
    assert set(form) == {"id_token", "access_token", "expires_in", "refresh_token", "token_type", "user_id", "project_id"}
    assert form["user_id"] == up["localId"] and form["token_type"] == "Bearer" and form["expires_in"] == "3600"
    as_json = requests.post(f"{auth_url()}/securetoken.googleapis.com/v1/token?key=k",
                            json={"grant_type": "refresh_token", "refresh_token": up["refreshToken"]})
    assert as_json.status_code == 200
    for data, message in [({"grant_type": "password"}, "INVALID_GRANT_TYPE"),
                          ({"grant_type": "refresh_token"}, "MISSING_REFRESH_TOKEN"),
                          ({"grant_type": "refresh_token", "refresh_token": "nope"}, "INVALID_REFRESH_TOKEN"),
                          ({}, "MISSING_GRANT_TYPE")]:
        r = requests.post(f"{auth_url()}/securetoken.googleapis.com/v1/token?key=k", data=data)
        assert r.status_code == 400 and error_message(r) == message


def test_password_reset_with_recorded_oob_code():
    email = unique_email("reset")
    authcompat.sign_up(email, "old-pass-1")
    assert client_post("accounts:sendOobCode", {"requestType": "PASSWORD_RESET", "email": email}).status_code == 200
    codes = requests.get(f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/oobCodes").json()["oobCodes"]
    mine = [c for c in codes if c["email"] == email]
    assert mine and mine[-1]["requestType"] == "PASSWORD_RESET"
    code = mine[-1]["oobCode"]
    assert client_post("accounts:resetPassword", {"oobCode": code}).json()["email"] == email
    assert client_post("accounts:resetPassword", {"oobCode": code, "newPassword": "new-pass-1"}).status_code == 200
    assert authcompat.sign_in(email, "new-pass-1").status_code == 200
    assert error_message(client_post("accounts:resetPassword", {"oobCode": code, "newPassword": "x-pass-12"})) == "INVALID_OOB_CODE"


def test_email_link_sign_in():
    email = unique_email("emaillink")
    client_post("accounts:sendOobCode", {"requestType": "EMAIL_SIGNIN", "email": email, "continueUrl": "http://localhost/done"})
    codes = requests.get(f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/oobCodes").json()["oobCodes"]
    code = [c for c in codes if c["email"] == email][-1]
    assert "continueUrl=http%3A%2F%2Flocalhost%2Fdone" in code["oobLink"]
    r = client_post("accounts:signInWithEmailLink", {"email": email, "oobCode": code["oobCode"]})
    assert r.status_code == 200 and r.json()["isNewUser"] is True
    assert decode(r.json()["idToken"])[1]["email_verified"] is True


def test_idp_sign_in_with_fake_google_credential():
    sub = unique_email("g").split("@")[0]
    claims = json.dumps({"sub": sub, "email": f"{sub}@gmail.test", "email_verified": True, "name": "Goo Gle"})
    body = {"requestUri": "http://localhost", "returnSecureToken": True, "returnIdpCredential": True,
            "postBody": urllib.parse.urlencode({"id_token": claims, "providerId": "google.com"})}
    r = client_post("accounts:signInWithIdp", body)
    assert r.status_code == 200, r.text
    assert r.json()["isNewUser"] is True
    payload = decode(r.json()["idToken"])[1]
    assert payload["firebase"]["sign_in_provider"] == "google.com"
    assert payload["firebase"]["identities"]["google.com"] == [sub]
    again = client_post("accounts:signInWithIdp", body).json()
    assert again["localId"] == r.json()["localId"] and "isNewUser" not in again


def test_create_auth_uri():
    email = unique_email("methods")
    authcompat.sign_up(email)
    r = client_post("accounts:createAuthUri", {"identifier": email, "continueUri": "http://localhost"}).json()
    assert r["registered"] is True and r["signinMethods"] == ["password"]


def test_phone_sign_in_with_recorded_code():
    phone = "+1555" + str(abs(hash(unique_email())))[:7]
    session = client_post("accounts:sendVerificationCode", {"phoneNumber": phone}).json()["sessionInfo"]
    codes = requests.get(f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/verificationCodes").json()["verificationCodes"]
    code = [c for c in codes if c["sessionInfo"] == session][0]["code"]
    r = client_post("accounts:signInWithPhoneNumber", {"sessionInfo": session, "code": code})
    assert r.status_code == 200 and r.json()["phoneNumber"] == phone


def test_cors_for_browser_sdks():
    origin = "http://localhost:5173"
    pre = requests.options(authcompat.it_url("accounts:signUp"),
                           headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                    "Access-Control-Request-Headers": "content-type,x-client-version"})
    assert pre.status_code == 204
    assert pre.headers["Access-Control-Allow-Origin"] == origin
    assert "POST" in pre.headers["Access-Control-Allow-Methods"]
    assert pre.headers["Access-Control-Allow-Headers"] == "content-type,x-client-version"
    r = client_post("accounts:signUp", {}, headers={"Origin": origin})
    assert r.headers["Access-Control-Allow-Origin"] == origin


def test_legacy_v3_paths():
    email = unique_email("legacy")
    base = f"{auth_url()}/www.googleapis.com/identitytoolkit/v3/relyingparty"
    r = requests.post(f"{base}/signupNewUser?key=k", json={"email": email, "password": "secret-pass-1", "returnSecureToken": True})
    assert r.json()["kind"] == "identitytoolkit#SignupNewUserResponse"
    assert requests.post(f"{base}/verifyPassword?key=k", json={"email": email, "password": "secret-pass-1"}).status_code == 200


def test_emulator_config_and_account_wipe_are_per_project():
    other = "auth-compat-wipe"
    created = authcompat.admin_post(f"projects/{other}/accounts", {"email": unique_email("wipe")}).json()
    cfg = requests.patch(f"{auth_url()}/emulator/v1/projects/{other}/config",
                         json={"signIn": {"allowDuplicateEmails": True}, "emailPrivacyConfig": {"enableImprovedEmailPrivacy": True}})
    assert cfg.json() == {"signIn": {"allowDuplicateEmails": True}, "emailPrivacyConfig": {"enableImprovedEmailPrivacy": True}}
    default_cfg = requests.get(f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/config").json()
    assert default_cfg["signIn"]["allowDuplicateEmails"] is False
    assert requests.delete(f"{auth_url()}/emulator/v1/projects/{other}/accounts").json() == {}
    lookup = authcompat.admin_post(f"projects/{other}/accounts:lookup", {"localId": [created["localId"]]}).json()
    assert "users" not in lookup


def test_improved_email_privacy_toggle():
    email = unique_email("privacy")
    authcompat.sign_up(email)
    url = f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/config"
    requests.patch(url, json={"emailPrivacyConfig": {"enableImprovedEmailPrivacy": True}})
    try:
        assert error_message(authcompat.sign_in(email, "wrong-pass")) == "INVALID_LOGIN_CREDENTIALS"
        assert error_message(authcompat.sign_in(unique_email("ghost"))) == "INVALID_LOGIN_CREDENTIALS"
    finally:
        requests.patch(url, json={"emailPrivacyConfig": {"enableImprovedEmailPrivacy": False}})
    assert error_message(authcompat.sign_in(email, "wrong-pass")) == "INVALID_PASSWORD"
