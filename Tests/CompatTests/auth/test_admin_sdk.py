"""firebase-admin (Python), unmodified, against Hearth's Auth emulator via FIREBASE_AUTH_EMULATOR_HOST."""
import time
import uuid

import pytest
import requests
from firebase_admin import auth

import authcompat
from authcompat import unique_email


def test_create_get_update_delete(admin_app):
    email = unique_email("crud")
    user = auth.create_user(email=email, password="secret-pass-1", display_name="Crud", phone_number=None, app=admin_app)
    assert len(user.uid) == 28
    assert user.email == email
    assert user.display_name == "Crud"
    assert user.email_verified is False
    assert user.disabled is False
    assert user.user_metadata.creation_timestamp > 0
    assert user.tokens_valid_after_timestamp > 0
    assert [p.provider_id for p in user.provider_data] == ["password"]

    assert auth.get_user(user.uid, app=admin_app).email == email
    assert auth.get_user_by_email(email.upper(), app=admin_app).uid == user.uid

    updated = auth.update_user(user.uid, display_name="Renamed", email_verified=True, photo_url="http://example.com/p.png",
                               disabled=True, app=admin_app)
    assert updated.display_name == "Renamed"
    assert updated.email_verified is True
    assert updated.photo_url == "http://example.com/p.png"
    assert updated.disabled is True
    cleared = auth.update_user(user.uid, display_name=auth.DELETE_ATTRIBUTE, app=admin_app)
    assert cleared.display_name is None

    auth.delete_user(user.uid, app=admin_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(user.uid, app=admin_app)
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_email(email, app=admin_app)


def test_create_with_uid_phone_and_duplicate_errors(admin_app):
    uid = "uid-" + unique_email("x").split("@")[0]
    email = unique_email("dup")
    user = auth.create_user(uid=uid, email=email, phone_number="+1555" + str(uuid.uuid4().int)[:7], app=admin_app)
    assert user.uid == uid
    assert auth.get_user_by_phone_number(user.phone_number, app=admin_app).uid == uid
    with pytest.raises(auth.UidAlreadyExistsError):
        auth.create_user(uid=uid, app=admin_app)
    with pytest.raises(auth.EmailAlreadyExistsError):
        auth.create_user(email=email, app=admin_app)


def test_custom_claims_reach_id_tokens(admin_app):
    email = unique_email("claims")
    user = auth.create_user(email=email, password="secret-pass-1", app=admin_app)
    auth.set_custom_user_claims(user.uid, {"admin": True, "tier": 3}, app=admin_app)
    assert auth.get_user(user.uid, app=admin_app).custom_claims == {"admin": True, "tier": 3}
    token = authcompat.sign_in(email).json()["idToken"]
    claims = auth.verify_id_token(token, app=admin_app)
    assert claims["admin"] is True and claims["tier"] == 3
    assert claims["uid"] == user.uid
    assert claims["firebase"]["sign_in_provider"] == "password"
    with pytest.raises(ValueError):
        auth.set_custom_user_claims(user.uid, {"sub": "x"}, app=admin_app)
    auth.set_custom_user_claims(user.uid, None, app=admin_app)
    assert auth.get_user(user.uid, app=admin_app).custom_claims is None


def test_reserved_claims_are_rejected_by_the_server(admin_app):
    user = auth.create_user(app=admin_app)
    r = authcompat.admin_post(f"projects/{authcompat.project()}/accounts:update",
                              {"localId": user.uid, "customAttributes": '{"firebase":1}'})
    assert r.status_code == 400
    assert authcompat.error_message(r) == "FORBIDDEN_CLAIM : firebase"
    r = authcompat.admin_post(f"projects/{authcompat.project()}/accounts:update",
                              {"localId": user.uid, "customAttributes": '{"k":"' + "x" * 1000 + '"}'})
    assert authcompat.error_message(r) == "CLAIMS_TOO_LARGE"


def test_list_users_pages(admin_app):
    tag = "page" + unique_email("t").split("@")[0][-6:]
    created = {auth.create_user(email=f"{tag}-{i}@example.com", app=admin_app).uid for i in range(5)}
    first = auth.list_users(max_results=2, app=admin_app)
    assert len(first.users) == 2
    assert first.next_page_token
    second = first.get_next_page()
    assert [u.uid for u in second.users] != [u.uid for u in first.users]
    seen = {u.uid for u in auth.list_users(max_results=2, app=admin_app).iterate_all()}
    assert created <= seen
    exported = [u for u in auth.list_users(app=admin_app).iterate_all() if u.uid in created]
    assert len(exported) == 5


def test_revoke_refresh_tokens_and_check_revoked(admin_app):
    email = unique_email("revoke")
    up = authcompat.sign_up(email)
    claims = auth.verify_id_token(up["idToken"], check_revoked=True, app=admin_app)
    assert claims["uid"] == up["localId"]
    time.sleep(1.1)  # validSince has second granularity: revoke strictly after the token's iat.
    auth.revoke_refresh_tokens(up["localId"], app=admin_app)
    assert auth.get_user(up["localId"], app=admin_app).tokens_valid_after_timestamp > claims["iat"] * 1000
    with pytest.raises(auth.RevokedIdTokenError):
        auth.verify_id_token(up["idToken"], check_revoked=True, app=admin_app)
    # Without check_revoked the SDK does not look the user up.
    assert auth.verify_id_token(up["idToken"], app=admin_app)["uid"] == up["localId"]
    r = authcompat.refresh(up["refreshToken"])
    assert r.status_code == 400
    assert authcompat.error_message(r) == "TOKEN_EXPIRED"
    fresh = authcompat.sign_in(email).json()
    assert auth.verify_id_token(fresh["idToken"], check_revoked=True, app=admin_app)["uid"] == up["localId"]


def test_check_revoked_reports_disabled_users(admin_app):
    up = authcompat.sign_up(unique_email("disabled"))
    auth.update_user(up["localId"], disabled=True, app=admin_app)
    with pytest.raises(auth.UserDisabledError):
        auth.verify_id_token(up["idToken"], check_revoked=True, app=admin_app)
    assert authcompat.error_message(authcompat.refresh(up["refreshToken"])) == "USER_DISABLED"


def test_deleted_user_refresh_token_is_user_not_found(admin_app):
    up = authcompat.sign_up(unique_email("deleted"))
    auth.delete_user(up["localId"], app=admin_app)
    assert authcompat.error_message(authcompat.refresh(up["refreshToken"])) == "USER_NOT_FOUND"
    with pytest.raises(auth.UserNotFoundError):
        auth.verify_id_token(up["idToken"], check_revoked=True, app=admin_app)


def test_custom_token_sign_in(admin_app):
    uid = "ct-" + unique_email("u").split("@")[0]
    token = auth.create_custom_token(uid, {"premium": True, "plan": "gold"}, app=admin_app)
    r = authcompat.client_post("accounts:signInWithCustomToken", {"token": token.decode(), "returnSecureToken": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["isNewUser"] is True
    claims = auth.verify_id_token(body["idToken"], check_revoked=True, app=admin_app)
    assert claims["uid"] == uid
    assert claims["premium"] is True and claims["plan"] == "gold"
    assert claims["firebase"]["sign_in_provider"] == "custom"
    refreshed = authcompat.refresh(body["refreshToken"]).json()
    assert auth.verify_id_token(refreshed["id_token"], app=admin_app)["plan"] == "gold"


def test_get_users_and_delete_users(admin_app):
    a = auth.create_user(email=unique_email("many"), app=admin_app)
    b = auth.create_user(email=unique_email("many"), app=admin_app)
    result = auth.get_users([auth.UidIdentifier(a.uid), auth.EmailIdentifier(b.email), auth.UidIdentifier("no-such-uid")],
                            app=admin_app)
    assert {u.uid for u in result.users} == {a.uid, b.uid}
    assert len(result.not_found) == 1
    deleted = auth.delete_users([a.uid, b.uid], app=admin_app)
    assert deleted.success_count == 2 and deleted.failure_count == 0
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user(a.uid, app=admin_app)


def test_import_users_with_password_hashes(admin_app):
    import hashlib
    import hmac

    key = b"import-signer-key"
    email = unique_email("imported")
    salt = b"pepper-and-salt"
    digest = hmac.new(key, b"imported-pass" + salt, hashlib.sha256).digest()
    user = auth.ImportUserRecord(uid="imp-" + email.split("@")[0], email=email, password_hash=digest, password_salt=salt,
                                 custom_claims={"imported": True})
    result = auth.import_users([user], hash_alg=auth.UserImportHash.hmac_sha256(key), app=admin_app)
    assert result.success_count == 1, [e.reason for e in result.errors]
    r = authcompat.sign_in(email, "imported-pass")
    assert r.status_code == 200, r.text
    assert auth.verify_id_token(r.json()["idToken"], app=admin_app)["imported"] is True
    assert authcompat.error_message(authcompat.sign_in(email, "wrong-pass")) == "INVALID_PASSWORD"

    pbkdf = auth.ImportUserRecord(uid="pb-" + email.split("@")[0], email="pb-" + email,
                                  password_hash=hashlib.pbkdf2_hmac("sha256", b"pbkdf-pass", salt, 1000), password_salt=salt)
    assert auth.import_users([pbkdf], hash_alg=auth.UserImportHash.pbkdf2_sha256(rounds=1000), app=admin_app).success_count == 1
    assert authcompat.sign_in("pb-" + email, "pbkdf-pass").status_code == 200


def test_email_action_links(admin_app):
    email = unique_email("links")
    auth.create_user(email=email, password="old-pass-1", app=admin_app)
    link = auth.generate_password_reset_link(email, app=admin_app)
    assert "/emulator/action?mode=resetPassword" in link and "oobCode=" in link
    r = requests.get(link + "&newPassword=new-pass-1")
    assert r.status_code == 200, r.text
    assert r.json()["authEmulator"]["success"] == "The password has been successfully updated."
    assert authcompat.sign_in(email, "new-pass-1").status_code == 200
    verify = auth.generate_email_verification_link(email, app=admin_app)
    assert requests.get(verify).status_code == 200
    assert auth.get_user_by_email(email, app=admin_app).email_verified is True
    with pytest.raises(auth.UserNotFoundError):
        auth.generate_email_verification_link(unique_email("nobody"), app=admin_app)


def test_session_cookies(admin_app):
    up = authcompat.sign_up(unique_email("cookie"))
    cookie = auth.create_session_cookie(up["idToken"], expires_in=3600, app=admin_app)
    claims = auth.verify_session_cookie(cookie, check_revoked=True, app=admin_app)
    assert claims["uid"] == up["localId"]
    assert claims["iss"] == f"https://session.firebase.google.com/{authcompat.project()}"


def test_an_account_an_admin_creates_has_not_signed_in_until_it_does(admin_app):
    # firebase-admin-python's own integration suite (test_create_user, run against production)
    # expects no last sign-in time on an account create_user made.
    email = unique_email("never")
    user = auth.create_user(email=email, password="secret-pass-1", app=admin_app)
    assert user.user_metadata.last_sign_in_timestamp is None
    assert auth.get_user(user.uid, app=admin_app).user_metadata.last_sign_in_timestamp is None

    assert authcompat.sign_in(email).status_code == 200
    signed_in = auth.get_user(user.uid, app=admin_app).user_metadata
    assert signed_in.last_sign_in_timestamp is not None
    assert signed_in.last_sign_in_timestamp >= user.user_metadata.creation_timestamp
