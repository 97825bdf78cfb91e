"""Plain-HTTP helpers for the Firestore REST API (the shapes of Google's firestore.v1 discovery document)."""
import base64
import json
import os
import uuid

import requests


def base_url():
    return os.environ["HEARTH_FIRESTORE_URL"].rstrip("/")


def project():
    return os.environ.get("HEARTH_PROJECT", "demo-hearth")


def root(p=None):
    return f"projects/{p or project()}/databases/(default)/documents"


def url(suffix="", p=None):
    return f"{base_url()}/v1/{root(p)}{suffix}"


def unique(prefix="c"):
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def b64url(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def mock_token(uid, p=None, **claims):
    """An unsigned ID token like the Firebase rules-unit-testing mock tokens (alg none, empty signature)."""
    p = p or project()
    payload = {"iss": f"https://securetoken.google.com/{p}", "aud": p, "iat": 0, "exp": 3600, "auth_time": 0,
               "sub": uid, "user_id": uid, "firebase": {"sign_in_provider": "custom", "identities": {}}}
    payload.update(claims)
    return b64url({"alg": "none", "type": "JWT"}) + "." + b64url(payload) + "."


OWNER = {"Authorization": "Bearer owner"}


def as_user(uid):
    return {"Authorization": "Bearer " + mock_token(uid)}


def s(v):
    return {"stringValue": v}


def i(v):
    return {"integerValue": str(v)}


def field_filter(path, op, value):
    return {"fieldFilter": {"field": {"fieldPath": path}, "op": op, "value": value}}


def run_query(structured, parent="", headers=OWNER, p=None, **extra):
    body = {"structuredQuery": structured}
    body.update(extra)
    return requests.post(url(parent + ":runQuery", p), json=body, headers=headers)


def ids(response_json):
    return [r["document"]["name"].rsplit("/", 1)[1] for r in response_json if "document" in r]


def commit(writes, headers=OWNER, p=None, transaction=None):
    body = {"writes": writes}
    if transaction:
        body["transaction"] = transaction
    return requests.post(url(":commit", p), json=body, headers=headers)


def update_write(path, fields, p=None, **extra):
    w = {"update": {"name": f"{root(p)}/{path}", "fields": fields}}
    w.update(extra)
    return w
