"""OIDC and SAML provider configurations with firebase-admin (Python), unmodified, against Hearth.

firebase-admin's `*_provider_config` functions call `…/v2/projects/{p}/oauthIdpConfigs` and
`…/inboundSamlConfigs` on FIREBASE_AUTH_EMULATOR_HOST; a tenant's `auth_for_tenant(t)` client
calls the same under `tenants/{t}`. firebase-admin-python's own integration suite
(integration/test_auth.py, run against production) asserts what these tests assert.
"""
import uuid

import firebase_admin
import pytest
import requests
from firebase_admin import _utils, auth, credentials, tenant_mgt

import authcompat
from authcompat import auth_url, error_message

CERT_A = "-----BEGIN CERTIFICATE-----\nMIIBfakeA\n-----END CERTIFICATE-----\n"
CERT_B = "-----BEGIN CERTIFICATE-----\nMIIBfakeB\n-----END CERTIFICATE-----\n"


def v2_url(path):
    return f"{auth_url()}/identitytoolkit.googleapis.com/v2/projects/{authcompat.project()}/{path}"


def owner(method, path, **kwargs):
    return requests.request(method, v2_url(path), headers={"Authorization": "Bearer owner"}, **kwargs)


def oidc_id():
    return f"oidc.{uuid.uuid4().hex[:10]}"


def saml_id():
    return f"saml.{uuid.uuid4().hex[:10]}"


def new_oidc(provider_id, client=auth, **kwargs):
    return client.create_oidc_provider_config(
        provider_id, client_id="CLIENT", issuer="https://oidc.example.com/issuer", display_name="OIDC", enabled=True,
        id_token_response_type=True, code_response_type=False, **kwargs)


def new_saml(provider_id, client=auth, **kwargs):
    return client.create_saml_provider_config(
        provider_id, idp_entity_id="IDP", sso_url="https://idp.example.com/login", x509_certificates=[CERT_A],
        rp_entity_id="RP", callback_url="https://demo.firebaseapp.com/__/auth/handler", display_name="SAML", enabled=True,
        **kwargs)


def test_oidc_config_create_get_update_list_delete(admin_app):
    pid = oidc_id()
    created = new_oidc(pid, app=admin_app)
    assert (created.provider_id, created.client_id, created.issuer, created.display_name) == (
        pid, "CLIENT", "https://oidc.example.com/issuer", "OIDC")
    assert (created.enabled, created.id_token_response_type, created.code_response_type) == (True, True, False)
    assert created.client_secret is None

    fetched = auth.get_oidc_provider_config(pid, app=admin_app)
    assert (fetched.provider_id, fetched.client_id, fetched.enabled) == (pid, "CLIENT", True)

    updated = auth.update_oidc_provider_config(pid, client_id="CLIENT2", enabled=False, client_secret="SECRET",
                                               id_token_response_type=False, code_response_type=True, app=admin_app)
    assert (updated.client_id, updated.issuer, updated.enabled) == ("CLIENT2", "https://oidc.example.com/issuer", False)
    assert (updated.id_token_response_type, updated.code_response_type, updated.client_secret) == (False, True, "SECRET")
    cleared = auth.update_oidc_provider_config(pid, display_name=auth.DELETE_ATTRIBUTE, app=admin_app)
    assert cleared.display_name is None
    assert cleared.client_id == "CLIENT2"

    assert pid in [c.provider_id for c in auth.list_oidc_provider_configs(app=admin_app).iterate_all()]

    auth.delete_oidc_provider_config(pid, app=admin_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_oidc_provider_config(pid, app=admin_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.delete_oidc_provider_config(pid, app=admin_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.update_oidc_provider_config(pid, enabled=True, app=admin_app)


def test_saml_config_create_get_update_list_delete(admin_app):
    pid = saml_id()
    created = new_saml(pid, app=admin_app)
    assert (created.provider_id, created.idp_entity_id, created.sso_url) == (pid, "IDP", "https://idp.example.com/login")
    assert created.x509_certificates == [CERT_A]
    assert (created.rp_entity_id, created.callback_url) == ("RP", "https://demo.firebaseapp.com/__/auth/handler")
    assert (created.display_name, created.enabled) == ("SAML", True)

    updated = auth.update_saml_provider_config(pid, sso_url="https://idp.example.com/login2", x509_certificates=[CERT_B],
                                               rp_entity_id="RP2", enabled=False, app=admin_app)
    # Members the mask does not name stay (idpEntityId beside ssoUrl, callbackUri beside spEntityId).
    assert (updated.idp_entity_id, updated.sso_url, updated.x509_certificates) == ("IDP", "https://idp.example.com/login2", [CERT_B])
    assert (updated.rp_entity_id, updated.callback_url, updated.enabled) == ("RP2", "https://demo.firebaseapp.com/__/auth/handler", False)
    assert auth.get_saml_provider_config(pid, app=admin_app).sso_url == "https://idp.example.com/login2"

    assert pid in [c.provider_id for c in auth.list_saml_provider_configs(app=admin_app).iterate_all()]
    # The two kinds are separate collections.
    assert pid not in [c.provider_id for c in auth.list_oidc_provider_configs(app=admin_app).iterate_all()]

    auth.delete_saml_provider_config(pid, app=admin_app)
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_saml_provider_config(pid, app=admin_app)


def test_list_pages_in_id_order(admin_app):
    prefix = f"oidc.page{uuid.uuid4().hex[:6]}"
    ids = [f"{prefix}-{i}" for i in range(3)]
    for pid in reversed(ids):
        new_oidc(pid, app=admin_app)
    try:
        page = auth.list_oidc_provider_configs(max_results=1, app=admin_app)
        seen = []
        while page:
            assert len(page.provider_configs) <= 1
            seen += [c.provider_id for c in page.provider_configs]
            page = page.get_next_page()
        mine = [pid for pid in seen if pid.startswith(prefix)]
        assert mine == ids
        assert seen == sorted(seen)
    finally:
        for pid in ids:
            auth.delete_oidc_provider_config(pid, app=admin_app)


def test_create_errors_are_the_services_codes(admin_app):
    pid = oidc_id()
    new_oidc(pid, app=admin_app)
    try:
        r = owner("POST", "oauthIdpConfigs", params={"oauthIdpConfigId": pid},
                  json={"clientId": "C", "issuer": "https://oidc.example.com"})
        assert (r.status_code, error_message(r)) == (400, "CONFIGURATION_EXISTS")
    finally:
        auth.delete_oidc_provider_config(pid, app=admin_app)

    cases = [
        ("oauthIdpConfigs", {}, {"clientId": "C", "issuer": "https://i.example.com"}, "MISSING_CONFIG_ID"),
        ("oauthIdpConfigs", {"oauthIdpConfigId": "saml.x"}, {"clientId": "C", "issuer": "https://i.example.com"}, "INVALID_CONFIG_ID"),
        ("oauthIdpConfigs", {"oauthIdpConfigId": oidc_id()}, {"issuer": "https://i.example.com"}, "MISSING_OAUTH_CLIENT_ID"),
        ("oauthIdpConfigs", {"oauthIdpConfigId": oidc_id()}, {"clientId": "C"}, "MISSING_ISSUER"),
        ("oauthIdpConfigs", {"oauthIdpConfigId": oidc_id()}, {"clientId": "C", "issuer": "not a url"}, "INVALID_CONFIG"),
        ("oauthIdpConfigs", {"oauthIdpConfigId": oidc_id()},
         {"clientId": "C", "issuer": "https://i.example.com", "responseType": {"code": True}}, "INVALID_CONFIG"),
        ("oauthIdpConfigs", {"oauthIdpConfigId": oidc_id()},
         {"clientId": "C", "issuer": "https://i.example.com", "clientSecret": "S", "responseType": {"code": True, "idToken": True}},
         "INVALID_CONFIG"),
        ("inboundSamlConfigs", {"inboundSamlConfigId": saml_id()},
         {"spConfig": {"spEntityId": "RP", "callbackUri": "https://x.example.com/cb"}}, "MISSING_CONFIG"),
        ("inboundSamlConfigs", {"inboundSamlConfigId": saml_id()},
         {"idpConfig": {"idpEntityId": "I", "ssoUrl": "https://i.example.com", "idpCertificates": [{"x509Certificate": CERT_A}]}},
         "MISSING_SAML_RELYING_PARTY_CONFIG"),
        ("inboundSamlConfigs", {"inboundSamlConfigId": saml_id()},
         {"idpConfig": {"idpEntityId": "I", "ssoUrl": "https://i.example.com", "idpCertificates": []},
          "spConfig": {"spEntityId": "RP", "callbackUri": "https://x.example.com/cb"}}, "INVALID_CONFIG"),
    ]
    for collection, params, body, code in cases:
        r = owner("POST", collection, params=params, json=body)
        assert r.status_code == 400, (collection, body, r.text)
        assert error_message(r).split(" : ")[0] == code, (collection, body, r.text)

    r = owner("POST", "oauthIdpConfigs", params={"oauthIdpConfigId": oidc_id()}, json={"clientId": 5, "issuer": ["x"]})
    assert r.status_code == 400 and r.json()["error"]["status"] == "INVALID_ARGUMENT", r.text
    # Only admins manage provider configurations.
    r = requests.get(v2_url("oauthIdpConfigs") + "?key=fake-api-key")
    assert (r.status_code, error_message(r)) == (400, "INSUFFICIENT_PERMISSION : Only authenticated requests can specify target_project_id.")


def test_an_update_that_breaks_the_configuration_is_refused_and_changes_nothing(admin_app):
    pid = oidc_id()
    new_oidc(pid, app=admin_app)
    try:
        # code without a client secret, then clearing the issuer.
        r = owner("PATCH", f"oauthIdpConfigs/{pid}", params={"updateMask": "responseType.code,responseType.idToken"},
                  json={"responseType": {"code": True, "idToken": False}})
        assert error_message(r).startswith("INVALID_CONFIG"), r.text
        r = owner("PATCH", f"oauthIdpConfigs/{pid}", params={"updateMask": "issuer"}, json={})
        assert (r.status_code, error_message(r)) == (400, "MISSING_ISSUER")
        kept = auth.get_oidc_provider_config(pid, app=admin_app)
        assert (kept.issuer, kept.id_token_response_type, kept.code_response_type) == ("https://oidc.example.com/issuer", True, False)
    finally:
        auth.delete_oidc_provider_config(pid, app=admin_app)


class _OwnerCredential(credentials.Base):
    """The emulator's admin credential: `tenant_mgt` wants an app credential even where its
    tenant clients then follow FIREBASE_AUTH_EMULATOR_HOST."""

    def get_credential(self):
        return _utils.EmulatorAdminCredentials()


@pytest.fixture
def tenant_client_app(hearth):
    app = firebase_admin.initialize_app(_OwnerCredential(), options={"projectId": authcompat.project()},
                                        name=f"hearth-provider-configs-{uuid.uuid4().hex[:6]}")
    yield app
    firebase_admin.delete_app(app)


def test_tenants_have_their_own_configurations(admin_app, tenant_client_app):
    r = owner("POST", "tenants", json={"displayName": f"cfg{uuid.uuid4().hex[:8]}"})
    assert r.status_code == 200, r.text
    tenant_id = r.json()["name"].split("/")[-1]
    client = tenant_mgt.auth_for_tenant(tenant_id, app=tenant_client_app)
    pid = oidc_id()
    created = new_oidc(pid, client=client)
    assert created.provider_id == pid
    assert created._data["name"] == f"projects/{authcompat.project()}/tenants/{tenant_id}/oauthIdpConfigs/{pid}"
    assert client.get_oidc_provider_config(pid).client_id == "CLIENT"
    # Not the project's, and the same id may exist in the project too.
    with pytest.raises(auth.ConfigurationNotFoundError):
        auth.get_oidc_provider_config(pid, app=admin_app)
    new_oidc(pid, app=admin_app)
    auth.delete_oidc_provider_config(pid, app=admin_app)
    assert client.get_oidc_provider_config(pid).provider_id == pid

    # A deleted (or unknown) tenant has none: TENANT_NOT_FOUND.
    assert owner("DELETE", f"tenants/{tenant_id}").status_code == 200
    r = owner("GET", f"tenants/{tenant_id}/oauthIdpConfigs/{pid}")
    assert (r.status_code, error_message(r)) == (400, "TENANT_NOT_FOUND")
