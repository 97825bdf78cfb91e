"""Multi-tenancy with firebase-admin (Python) `tenant_mgt`, unmodified, and the REST client API.

firebase-admin's tenant management client always calls production's Identity Toolkit URL with the
app's credential (it ignores FIREBASE_AUTH_EMULATOR_HOST), so the fixture points that URL at Hearth
and gives the app a credential that sends the emulator's `Bearer owner`; everything else
(`auth_for_tenant` clients, token minting and verification) runs as shipped.
"""
import hashlib
import hmac
import re
import uuid

import firebase_admin
import pytest
import requests
from firebase_admin import _utils, auth, credentials, tenant_mgt

import authcompat
from authcompat import auth_url, client_post, error_message, refresh, unique_email


class _OwnerCredential(credentials.Base):
    """The emulator's admin credential (`Authorization: Bearer owner`)."""

    def get_credential(self):
        return _utils.EmulatorAdminCredentials()


@pytest.fixture(scope="module")
def tenant_app(hearth):
    original = tenant_mgt._TenantManagementService.TENANT_MGT_URL
    tenant_mgt._TenantManagementService.TENANT_MGT_URL = f"{auth_url()}/identitytoolkit.googleapis.com/v2"
    app = firebase_admin.initialize_app(_OwnerCredential(), options={"projectId": authcompat.project()},
                                        name=f"hearth-tenants-{uuid.uuid4().hex[:6]}")
    yield app
    firebase_admin.delete_app(app)
    tenant_mgt._TenantManagementService.TENANT_MGT_URL = original


def display_name(tag="t"):
    return f"{tag}{uuid.uuid4().hex[:10]}"


def test_tenant_crud_with_tenant_mgt(tenant_app):
    name = display_name("crud")
    tenant = tenant_mgt.create_tenant(name, allow_password_sign_up=True, app=tenant_app)
    assert re.fullmatch(rf"{name.lower()}-[a-z0-9]{{5}}", tenant.tenant_id)
    assert tenant.display_name == name
    assert tenant.allow_password_sign_up is True
    assert tenant.enable_email_link_sign_in is False

    fetched = tenant_mgt.get_tenant(tenant.tenant_id, app=tenant_app)
    assert (fetched.tenant_id, fetched.display_name) == (tenant.tenant_id, name)

    updated = tenant_mgt.update_tenant(tenant.tenant_id, display_name="Renamed-1", enable_email_link_sign_in=True, app=tenant_app)
    assert updated.display_name == "Renamed-1"
    assert updated.enable_email_link_sign_in is True
    assert updated.allow_password_sign_up is True

    listed = [t.tenant_id for t in tenant_mgt.list_tenants(max_results=2, app=tenant_app).iterate_all()]
    assert tenant.tenant_id in listed
    assert listed == sorted(listed)

    tenant_mgt.delete_tenant(tenant.tenant_id, app=tenant_app)
    with pytest.raises(tenant_mgt.TenantNotFoundError):
        tenant_mgt.get_tenant(tenant.tenant_id, app=tenant_app)


def test_display_name_rules_are_production_rules(tenant_app):
    r = requests.post(f"{auth_url()}/identitytoolkit.googleapis.com/v2/projects/{authcompat.project()}/tenants",
                      json={"displayName": "9lives"}, headers={"Authorization": "Bearer owner"})
    assert r.status_code == 400
    assert error_message(r).startswith("INVALID_DISPLAY_NAME")


def test_tenant_users_are_isolated(tenant_app, admin_app):
    t1 = tenant_mgt.create_tenant(display_name("iso"), allow_password_sign_up=True, app=tenant_app)
    t2 = tenant_mgt.create_tenant(display_name("iso"), allow_password_sign_up=True, app=tenant_app)
    c1 = tenant_mgt.auth_for_tenant(t1.tenant_id, app=tenant_app)
    c2 = tenant_mgt.auth_for_tenant(t2.tenant_id, app=tenant_app)
    email = unique_email("tenant")

    u1 = c1.create_user(email=email, password="secret-pass-1", uid="same-uid")
    u2 = c2.create_user(email=email, password="secret-pass-2", uid="same-uid")
    assert u1.tenant_id == t1.tenant_id and u2.tenant_id == t2.tenant_id
    assert c1.get_user_by_email(email).tenant_id == t1.tenant_id
    with pytest.raises(auth.UserNotFoundError):
        auth.get_user_by_email(email, app=admin_app)
    assert [u.uid for u in c2.list_users().iterate_all()] == ["same-uid"]

    # Client sign-in through REST names the tenant; the ID token carries it, refreshes keep it.
    signed = client_post("accounts:signInWithPassword", {"email": email, "password": "secret-pass-1", "tenantId": t1.tenant_id,
                                                          "returnSecureToken": True})
    assert signed.status_code == 200, signed.text
    decoded = c1.verify_id_token(signed.json()["idToken"])
    assert decoded["uid"] == "same-uid"
    assert decoded["firebase"]["tenant"] == t1.tenant_id
    with pytest.raises(tenant_mgt.TenantIdMismatchError):
        c2.verify_id_token(signed.json()["idToken"])
    refreshed = refresh(signed.json()["refreshToken"])
    assert c1.verify_id_token(refreshed.json()["id_token"])["firebase"]["tenant"] == t1.tenant_id

    wrong = client_post("accounts:signInWithPassword", {"email": email, "password": "secret-pass-1", "tenantId": t2.tenant_id})
    assert error_message(wrong) == "INVALID_PASSWORD"
    mismatch = client_post("accounts:lookup", {"idToken": signed.json()["idToken"], "tenantId": t2.tenant_id})
    assert error_message(mismatch) == "TENANT_ID_MISMATCH"
    unknown = client_post("accounts:signUp", {"email": unique_email(), "password": "secret-pass-1", "tenantId": "no-such-tenant"})
    assert error_message(unknown) == "INVALID_TENANT_ID"


def test_tenant_custom_tokens_import_and_links(tenant_app):
    tenant = tenant_mgt.create_tenant(display_name("tok"), allow_password_sign_up=True, app=tenant_app)
    client = tenant_mgt.auth_for_tenant(tenant.tenant_id, app=tenant_app)

    token = client.create_custom_token("custom-user", {"role": "admin"})
    signed = client_post("accounts:signInWithCustomToken", {"token": token.decode(), "tenantId": tenant.tenant_id,
                                                             "returnSecureToken": True})
    assert signed.status_code == 200, signed.text
    claims = client.verify_id_token(signed.json()["idToken"])
    assert claims["role"] == "admin"
    assert claims["firebase"]["tenant"] == tenant.tenant_id
    assert client.get_user("custom-user").tenant_id == tenant.tenant_id

    email = unique_email("imported")
    digest = hmac.new(b"signer-key", b"secret-pass-1" + b"salt", hashlib.sha256).digest()
    result = client.import_users([auth.ImportUserRecord(uid="imported-user", email=email, password_hash=digest, password_salt=b"salt")],
                                 hash_alg=auth.UserImportHash.hmac_sha256(key=b"signer-key"))
    assert result.success_count == 1, [e.reason for e in result.errors]
    assert client.get_user_by_email(email).uid == "imported-user"
    signed_in = client_post("accounts:signInWithPassword", {"email": email, "password": "secret-pass-1", "tenantId": tenant.tenant_id})
    assert signed_in.json()["localId"] == "imported-user"

    link = client.generate_password_reset_link(email)
    assert f"tenantId={tenant.tenant_id}" in link
    codes = requests.get(f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/tenants/{tenant.tenant_id}/oobCodes").json()
    assert codes["oobCodes"][-1]["email"] == email

    deleted = requests.delete(f"{auth_url()}/emulator/v1/projects/{authcompat.project()}/tenants/{tenant.tenant_id}/accounts")
    assert deleted.json() == {}
    with pytest.raises(auth.UserNotFoundError):
        client.get_user("imported-user")


def test_tenant_sign_in_settings(tenant_app):
    tenant = tenant_mgt.create_tenant(display_name("cfg"), app=tenant_app)
    email = unique_email("closed")
    body = {"email": email, "password": "secret-pass-1", "tenantId": tenant.tenant_id, "returnSecureToken": True}
    assert error_message(client_post("accounts:signUp", body)) == "OPERATION_NOT_ALLOWED"
    assert error_message(client_post("accounts:signUp", {"tenantId": tenant.tenant_id})) == "ADMIN_ONLY_OPERATION"
    tenant_mgt.update_tenant(tenant.tenant_id, allow_password_sign_up=True, app=tenant_app)
    assert client_post("accounts:signUp", body).status_code == 200

    disabled = requests.patch(f"{auth_url()}/identitytoolkit.googleapis.com/v2/projects/{authcompat.project()}/tenants/"
                              f"{tenant.tenant_id}?updateMask=disableAuth", json={"disableAuth": True},
                              headers={"Authorization": "Bearer owner"})
    assert disabled.json()["disableAuth"] is True
    assert error_message(client_post("accounts:signInWithPassword", body)) == "PROJECT_DISABLED"
