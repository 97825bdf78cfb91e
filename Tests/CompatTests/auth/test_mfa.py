"""Phone (SMS) second factors through the Identity Toolkit v2 REST API, as the client SDKs drive
them, with the SMS codes read from the emulator's `verificationCodes` endpoint and the tokens
checked with firebase-admin (Python) `verify_id_token`."""
import uuid

import pytest
import requests
from firebase_admin import auth

import authcompat
from authcompat import admin_post, auth_url, client_post, error_message, refresh, unique_email

V2 = "identitytoolkit.googleapis.com/v2"


def v2_post(path, body):
    return requests.post(f"{auth_url()}/{V2}/{path}?key=fake-api-key", json=body)


def sms_code(session_info, tenant=None):
    scope = f"{authcompat.project()}/tenants/{tenant}" if tenant else authcompat.project()
    codes = requests.get(f"{auth_url()}/emulator/v1/projects/{scope}/verificationCodes").json()["verificationCodes"]
    return next(c for c in codes if c["sessionInfo"] == session_info)


def unique_phone():
    return "+1555" + str(uuid.uuid4().int)[:7]


def verified_user(admin_app, tenant=None):
    email = unique_email("mfa")
    body = {"email": email, "password": "secret-pass-1", "returnSecureToken": True}
    if tenant:
        body["tenantId"] = tenant
    up = client_post("accounts:signUp", body)
    assert up.status_code == 200, up.text
    path = f"projects/{authcompat.project()}" + (f"/tenants/{tenant}" if tenant else "")
    admin_post(f"{path}/accounts:update", {"localId": up.json()["localId"], "emailVerified": True})
    signed = client_post("accounts:signInWithPassword", {k: v for k, v in body.items() if k != "returnSecureToken"})
    return email, up.json()["localId"], signed.json()["idToken"]


def enroll(id_token, phone, tenant=None):
    start = {"idToken": id_token, "phoneEnrollmentInfo": {"phoneNumber": phone, "recaptchaToken": "ignored"}}
    if tenant:
        start["tenantId"] = tenant
    started = v2_post("accounts/mfaEnrollment:start", start)
    assert started.status_code == 200, started.text
    session_info = started.json()["phoneSessionInfo"]["sessionInfo"]
    sent = sms_code(session_info, tenant)
    assert sent["phoneNumber"] == phone
    finalize = {"idToken": id_token, "displayName": "phone", "phoneVerificationInfo": {"sessionInfo": session_info, "code": sent["code"]}}
    if tenant:
        finalize["tenantId"] = tenant
    return v2_post("accounts/mfaEnrollment:finalize", finalize)


def second_step(pending, tenant=None):
    factor = pending["mfaInfo"][0]
    start = {"mfaPendingCredential": pending["mfaPendingCredential"], "mfaEnrollmentId": factor["mfaEnrollmentId"], "phoneSignInInfo": {}}
    if tenant:
        start["tenantId"] = tenant
    started = v2_post("accounts/mfaSignIn:start", start)
    assert started.status_code == 200, started.text
    session_info = started.json()["phoneResponseInfo"]["sessionInfo"]
    finalize = {"mfaPendingCredential": pending["mfaPendingCredential"],
                "phoneVerificationInfo": {"sessionInfo": session_info, "code": sms_code(session_info, tenant)["code"]}}
    if tenant:
        finalize["tenantId"] = tenant
    return v2_post("accounts/mfaSignIn:finalize", finalize)


def test_enroll_and_sign_in_with_sms_second_factor(admin_app):
    email, uid, id_token = verified_user(admin_app)
    phone = unique_phone()
    enrolled = enroll(id_token, phone)
    assert enrolled.status_code == 200, enrolled.text
    assert set(enrolled.json()) == {"idToken", "refreshToken"}
    assert auth.verify_id_token(enrolled.json()["idToken"], app=admin_app)["firebase"]["sign_in_second_factor"] == "phone"

    looked_up = admin_post(f"projects/{authcompat.project()}/accounts:lookup", {"localId": [uid]}).json()["users"][0]
    [factor] = looked_up["mfaInfo"]
    assert factor["phoneInfo"] == phone and factor["displayName"] == "phone"

    first = client_post("accounts:signInWithPassword", {"email": email, "password": "secret-pass-1", "returnSecureToken": True})
    assert first.status_code == 200
    pending = first.json()
    assert "idToken" not in pending
    assert pending["mfaInfo"][0]["mfaEnrollmentId"] == factor["mfaEnrollmentId"]
    assert pending["mfaInfo"][0]["phoneInfo"].endswith(phone[-4:]) and "*" in pending["mfaInfo"][0]["phoneInfo"]

    done = second_step(pending)
    assert done.status_code == 200, done.text
    claims = auth.verify_id_token(done.json()["idToken"], app=admin_app)
    assert claims["uid"] == uid
    assert claims["firebase"]["sign_in_provider"] == "password"
    assert claims["firebase"]["sign_in_second_factor"] == "phone"
    assert claims["firebase"]["second_factor_identifier"] == factor["mfaEnrollmentId"]
    refreshed = refresh(done.json()["refreshToken"]).json()
    assert auth.verify_id_token(refreshed["id_token"], app=admin_app)["firebase"]["second_factor_identifier"] == factor["mfaEnrollmentId"]

    # The number cannot be a first factor any more; withdrawing the factor restores plain sign-in.
    admin_post(f"projects/{authcompat.project()}/accounts:update", {"localId": uid, "phoneNumber": phone})
    assert error_message(client_post("accounts:sendVerificationCode", {"phoneNumber": phone})).startswith("UNSUPPORTED_FIRST_FACTOR")
    withdrawn = v2_post("accounts/mfaEnrollment:withdraw", {"idToken": done.json()["idToken"], "mfaEnrollmentId": factor["mfaEnrollmentId"]})
    assert withdrawn.status_code == 200, withdrawn.text
    assert "idToken" in client_post("accounts:signInWithPassword", {"email": email, "password": "secret-pass-1"}).json()


def test_enrollment_needs_a_verified_email_and_a_valid_code(admin_app):
    up = client_post("accounts:signUp", {"email": unique_email("unverified"), "password": "secret-pass-1", "returnSecureToken": True}).json()
    r = v2_post("accounts/mfaEnrollment:start", {"idToken": up["idToken"], "phoneEnrollmentInfo": {"phoneNumber": unique_phone()}})
    assert error_message(r).startswith("UNVERIFIED_EMAIL")
    _, _, id_token = verified_user(admin_app)
    started = v2_post("accounts/mfaEnrollment:start", {"idToken": id_token, "phoneEnrollmentInfo": {"phoneNumber": unique_phone()}}).json()
    wrong = v2_post("accounts/mfaEnrollment:finalize", {"idToken": id_token, "phoneVerificationInfo": {
        "sessionInfo": started["phoneSessionInfo"]["sessionInfo"], "code": "not-it"}})
    assert error_message(wrong) == "INVALID_CODE"
    assert error_message(v2_post("accounts/mfaSignIn:start", {"mfaPendingCredential": "forged", "mfaEnrollmentId": "x"})) \
        == "INVALID_MFA_PENDING_CREDENTIAL"


def test_second_factor_in_a_tenant(admin_app):
    created = requests.post(f"{auth_url()}/{V2}/projects/{authcompat.project()}/tenants",
                            json={"displayName": f"mfa{uuid.uuid4().hex[:8]}", "allowPasswordSignup": True,
                                  "mfaConfig": {"state": "ENABLED", "enabledProviders": ["PHONE_SMS"]}},
                            headers={"Authorization": "Bearer owner"}).json()
    tenant = created["name"].split("/")[-1]
    email, uid, id_token = verified_user(admin_app, tenant)
    assert enroll(id_token, unique_phone(), tenant).status_code == 200
    pending = client_post("accounts:signInWithPassword", {"email": email, "password": "secret-pass-1", "tenantId": tenant}).json()
    done = second_step(pending, tenant)
    assert done.status_code == 200, done.text
    claims = auth.verify_id_token(done.json()["idToken"], app=admin_app)
    assert claims["firebase"]["tenant"] == tenant
    assert claims["firebase"]["sign_in_second_factor"] == "phone"
    assert claims["uid"] == uid


def test_admin_sets_enrollments_and_project_config(admin_app):
    user = auth.create_user(email=unique_email("admin-mfa"), email_verified=True, app=admin_app)
    phone = unique_phone()
    updated = admin_post(f"projects/{authcompat.project()}/accounts:update", {"localId": user.uid, "mfa": {"enrollments": [
        {"phoneInfo": phone, "displayName": "desk", "mfaEnrollmentId": "desk-phone"}]}})
    assert updated.status_code == 200, updated.text
    [factor] = admin_post(f"projects/{authcompat.project()}/accounts:lookup", {"localId": [user.uid]}).json()["users"][0]["mfaInfo"]
    assert (factor["mfaEnrollmentId"], factor["phoneInfo"], factor["displayName"]) == ("desk-phone", phone, "desk")
    exported = [u for u in auth.list_users(app=admin_app).iterate_all() if u.uid == user.uid]
    assert exported and exported[0]._data["mfaInfo"][0]["mfaEnrollmentId"] == "desk-phone"

    other_project = f"mfa-{uuid.uuid4().hex[:8]}"
    config_url = f"{auth_url()}/{V2}/projects/{other_project}/config"
    patched = requests.patch(f"{config_url}?updateMask=mfa", json={"mfa": {"state": "DISABLED"}}, headers={"Authorization": "Bearer owner"})
    assert patched.json()["mfa"] == {"state": "DISABLED"}
    bad = requests.patch(f"{config_url}?updateMask=mfa", json={"mfa": {"state": "NEVER"}}, headers={"Authorization": "Bearer owner"})
    assert bad.status_code == 400
