"""Accounts imported with every Firebase password-hash algorithm sign in with their password.

firebase-admin's `auth.import_users` uploads the hashes (`accounts:batchCreate`); sign-in goes
through the REST `accounts:signInWithPassword` a client SDK calls. Every expected hash is
computed here with hashlib, hmac and cryptography (or is a published Firebase vector), so the
suite does not depend on Hearth's own hashing code. The conventions are production's: HMAC over
password + salt, SHA and MD5 over salt + password (each swappable with `passwordHashOrder`), MD5
stored as lower-case hex, PBKDF2 as long as the stored hash, Firebase's modified scrypt as
AES-256-CTR of the signer key.
"""
import base64
import hashlib
import hmac
import uuid

import pytest
import requests
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from firebase_admin import auth, exceptions

import authcompat

PASSWORD = b"correct horse battery"
SALT = b"NaCl-salt\x00\xff"
KEY = b"hearth-signer-key"

# github.com/firebase/scrypt README: a project's hash parameters and an exported account.
FIREBASE_SIGNER_KEY = base64.b64decode(
    "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==")
FIREBASE_SALT_SEPARATOR = base64.b64decode("Bw==")
README_SALT = base64.b64decode("42xEC+ixf3L2lw==")
README_HASH = base64.b64decode(
    "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==")


def firebase_scrypt(password, salt, separator, key, rounds, memory_cost):
    derived = hashlib.scrypt(password, salt=salt + separator, n=1 << memory_cost, r=rounds, p=1, dklen=64,
                             maxmem=64 * 1024 * 1024)
    encryptor = Cipher(algorithms.AES(derived[:32]), modes.CTR(b"\0" * 16)).encryptor()
    return encryptor.update(key) + encryptor.finalize()


def b64decode_any(text):
    """Standard or URL-safe base64, padded or not."""
    text = text.replace("-", "+").replace("_", "/").rstrip("=")
    return base64.b64decode(text + "=" * (-len(text) % 4))


def repeated(name, data, rounds):
    digest = hashlib.new(name, data).digest()
    for _ in range(rounds - 1):
        digest = hashlib.new(name, digest).digest()
    return digest


def md5_hex(data, rounds, password):
    digest = hashlib.md5(data).digest()
    for _ in range(rounds):
        digest = hashlib.md5(digest + password).digest()
    return digest.hex().encode()


# (case id, UserImportHash, hash of PASSWORD with SALT)
CASES = [
    ("scrypt", auth.UserImportHash.scrypt(key=FIREBASE_SIGNER_KEY, rounds=8, memory_cost=14,
                                          salt_separator=FIREBASE_SALT_SEPARATOR),
     firebase_scrypt(PASSWORD, SALT, FIREBASE_SALT_SEPARATOR, FIREBASE_SIGNER_KEY, 8, 14)),
    ("scrypt-no-separator", auth.UserImportHash.scrypt(key=KEY, rounds=4, memory_cost=10),
     firebase_scrypt(PASSWORD, SALT, b"", KEY, 4, 10)),
    ("standard_scrypt", auth.UserImportHash.standard_scrypt(memory_cost=1024, parallelization=16, block_size=8,
                                                            derived_key_length=64),
     hashlib.scrypt(PASSWORD, salt=SALT, n=1024, r=8, p=16, dklen=64)),
    ("standard_scrypt-n16384", auth.UserImportHash.standard_scrypt(memory_cost=16384, parallelization=1, block_size=8,
                                                                   derived_key_length=32),
     hashlib.scrypt(PASSWORD, salt=SALT, n=16384, r=8, p=1, dklen=32)),
    ("hmac_sha512", auth.UserImportHash.hmac_sha512(KEY), hmac.new(KEY, PASSWORD + SALT, hashlib.sha512).digest()),
    ("hmac_sha256", auth.UserImportHash.hmac_sha256(KEY), hmac.new(KEY, PASSWORD + SALT, hashlib.sha256).digest()),
    ("hmac_sha1", auth.UserImportHash.hmac_sha1(KEY), hmac.new(KEY, PASSWORD + SALT, hashlib.sha1).digest()),
    ("hmac_md5", auth.UserImportHash.hmac_md5(KEY), hmac.new(KEY, PASSWORD + SALT, hashlib.md5).digest()),
    ("sha512", auth.UserImportHash.sha512(rounds=3), repeated("sha512", SALT + PASSWORD, 3)),
    ("sha256", auth.UserImportHash.sha256(rounds=1), repeated("sha256", SALT + PASSWORD, 1)),
    ("sha1", auth.UserImportHash.sha1(rounds=2), repeated("sha1", SALT + PASSWORD, 2)),
    ("md5-rounds-0", auth.UserImportHash.md5(rounds=0), md5_hex(SALT + PASSWORD, 0, PASSWORD)),
    ("md5-rounds-2", auth.UserImportHash.md5(rounds=2), md5_hex(SALT + PASSWORD, 2, PASSWORD)),
    ("pbkdf_sha1", auth.UserImportHash.pbkdf_sha1(rounds=1000), hashlib.pbkdf2_hmac("sha1", PASSWORD, SALT, 1000)),
    ("pbkdf_sha1-64-bytes", auth.UserImportHash.pbkdf_sha1(rounds=500),
     hashlib.pbkdf2_hmac("sha1", PASSWORD, SALT, 500, 64)),
    ("pbkdf2_sha256", auth.UserImportHash.pbkdf2_sha256(rounds=1000),
     hashlib.pbkdf2_hmac("sha256", PASSWORD, SALT, 1000)),
    # The wire field the Python and Node SDKs do not expose, through UserImportHash's own constructor.
    ("hmac_sha256-salt-first", auth.UserImportHash("HMAC_SHA256", {"signerKey": base64.urlsafe_b64encode(KEY).decode(),
                                                                   "passwordHashOrder": "SALT_AND_PASSWORD"}),
     hmac.new(KEY, SALT + PASSWORD, hashlib.sha256).digest()),
    ("sha512-password-first", auth.UserImportHash("SHA512", {"rounds": 2, "passwordHashOrder": "PASSWORD_AND_SALT"}),
     repeated("sha512", PASSWORD + SALT, 2)),
]


def import_one(admin_app, hash_alg, password_hash, salt=SALT, tag="imp"):
    uid = f"{tag}-{uuid.uuid4().hex[:16]}"
    email = f"{uid}@example.com"
    record = auth.ImportUserRecord(uid=uid, email=email, password_hash=password_hash, password_salt=salt)
    result = auth.import_users([record], hash_alg=hash_alg, app=admin_app)
    assert result.success_count == 1, [e.reason for e in result.errors]
    return uid, email


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_imported_hash_signs_in_with_its_password(admin_app, case):
    _, hash_alg, password_hash = case
    uid, email = import_one(admin_app, hash_alg, password_hash)

    r = authcompat.sign_in(email, PASSWORD.decode())
    assert r.status_code == 200, r.text
    assert r.json()["localId"] == uid
    claims = auth.verify_id_token(r.json()["idToken"], app=admin_app)
    assert claims["uid"] == uid and claims["firebase"]["sign_in_provider"] == "password"

    assert authcompat.error_message(authcompat.sign_in(email, PASSWORD.decode() + "!")) == "INVALID_PASSWORD"
    assert authcompat.error_message(authcompat.sign_in(email, PASSWORD.decode()[:-1])) == "INVALID_PASSWORD"
    # The password keeps working after the first sign-in.
    assert authcompat.sign_in(email, PASSWORD.decode()).status_code == 200


def test_firebase_scrypt_readme_sample(admin_app):
    """The exported account of github.com/firebase/scrypt signs in with `user1password`."""
    hash_alg = auth.UserImportHash.scrypt(key=FIREBASE_SIGNER_KEY, rounds=8, memory_cost=14,
                                          salt_separator=FIREBASE_SALT_SEPARATOR)
    assert firebase_scrypt(b"user1password", README_SALT, FIREBASE_SALT_SEPARATOR, FIREBASE_SIGNER_KEY, 8, 14) == README_HASH
    uid, email = import_one(admin_app, hash_alg, README_HASH, salt=README_SALT, tag="readme")
    r = authcompat.sign_in(email, "user1password")
    assert r.status_code == 200, r.text
    assert r.json()["localId"] == uid
    assert authcompat.error_message(authcompat.sign_in(email, "user2password")) == "INVALID_PASSWORD"


def test_imported_hash_is_exported_as_imported(admin_app):
    """list_users (accounts:batchGet) returns the uploaded hash and salt, base64."""
    hash_alg = auth.UserImportHash.hmac_sha512(KEY)
    digest = hmac.new(KEY, PASSWORD + SALT, hashlib.sha512).digest()
    uid, _ = import_one(admin_app, hash_alg, digest, tag="export")
    exported = {u.uid: u for u in auth.list_users(app=admin_app).iterate_all()}[uid]
    assert b64decode_any(exported.password_hash) == digest
    assert b64decode_any(exported.password_salt) == SALT


def test_bcrypt_imports_but_cannot_sign_in(admin_app):
    """libcrypto has no bcrypt and Hearth does not hand-roll it: the account imports, the password fails."""
    bcrypt_hash = b"$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"
    _, email = import_one(admin_app, auth.UserImportHash.bcrypt(), bcrypt_hash, salt=None, tag="bcrypt")
    assert authcompat.error_message(authcompat.sign_in(email, "password")) == "INVALID_PASSWORD"


def test_new_password_replaces_the_imported_hash(admin_app):
    uid, email = import_one(admin_app, auth.UserImportHash.sha256(rounds=1), hashlib.sha256(SALT + PASSWORD).digest(),
                            tag="update")
    auth.update_user(uid, password="brand-new-pass", app=admin_app)
    assert authcompat.error_message(authcompat.sign_in(email, PASSWORD.decode())) == "INVALID_PASSWORD"
    assert authcompat.sign_in(email, "brand-new-pass").status_code == 200


@pytest.mark.parametrize("hash_alg,code", [
    (auth.UserImportHash.pbkdf_sha1(rounds=0), "INVALID_HASH_ROUNDS"),
    (auth.UserImportHash.pbkdf2_sha256(rounds=0), "INVALID_HASH_ROUNDS"),
    (auth.UserImportHash("SCRYPT", {"signerKey": "a2V5", "rounds": 8, "memoryCost": 15}), "INVALID_HASH_MEMORY_COST"),
    (auth.UserImportHash("SCRYPT", {"signerKey": "a2V5", "rounds": 9, "memoryCost": 14}), "INVALID_HASH_ROUNDS"),
    (auth.UserImportHash("SHA256", {"rounds": 8193}), "INVALID_HASH_ROUNDS"),
    (auth.UserImportHash("HMAC_SHA256", {}), "EMPTY_HASH_KEY"),
    (auth.UserImportHash("STANDARD_SCRYPT", {"cpuMemCost": 1000, "blockSize": 8, "parallelization": 1, "dkLen": 32}),
     "INVALID_HASH_MEMORY_COST"),
    (auth.UserImportHash("NOT_AN_ALGORITHM"), "INVALID_HASH_ALGORITHM"),
], ids=["pbkdf_sha1-0", "pbkdf2_sha256-0", "scrypt-memory-15", "scrypt-rounds-9", "sha256-8193", "hmac-no-key",
        "standard_scrypt-not-power-of-two", "unknown"])
def test_bad_hash_parameters_are_rejected(admin_app, hash_alg, code):
    record = auth.ImportUserRecord(uid=f"bad-{uuid.uuid4().hex[:12]}", password_hash=b"x" * 20, password_salt=b"s")
    with pytest.raises(exceptions.InvalidArgumentError) as raised:
        auth.import_users([record], hash_alg=hash_alg, app=admin_app)
    assert code in str(raised.value)


def test_rest_batch_create_with_password_hash_order(admin_app):
    """Raw accounts:batchCreate, as the Go SDK and the CLI send it (URL-safe base64, enum names)."""
    uid = f"rest-{uuid.uuid4().hex[:12]}"
    email = f"{uid}@example.com"
    digest = hashlib.md5(PASSWORD + SALT).hexdigest().encode()
    r = authcompat.admin_post(f"projects/{authcompat.project()}/accounts:batchCreate", {
        "hashAlgorithm": "MD5", "rounds": 0, "passwordHashOrder": "PASSWORD_AND_SALT",
        "users": [{"localId": uid, "email": email, "passwordHash": base64.urlsafe_b64encode(digest).decode().rstrip("="),
                   "salt": base64.urlsafe_b64encode(SALT).decode().rstrip("=")}],
    })
    assert r.status_code == 200, r.text
    assert r.json().get("error", []) == []
    assert authcompat.sign_in(email, PASSWORD.decode()).status_code == 200

    bad = authcompat.admin_post(f"projects/{authcompat.project()}/accounts:batchCreate", {
        "hashAlgorithm": "SHA1", "rounds": 1, "passwordHashOrder": "SIDEWAYS", "users": [{"localId": uid + "x"}],
    })
    assert bad.status_code == 400
    assert "password_hash_order" in authcompat.error_message(bad)


def test_go_sdk_standard_scrypt_field_names(admin_app):
    """The Go Admin SDK sends STANDARD_SCRYPT's CPU/memory cost as `memoryCost`."""
    uid = f"go-{uuid.uuid4().hex[:12]}"
    email = f"{uid}@example.com"
    digest = hashlib.scrypt(PASSWORD, salt=SALT, n=2048, r=4, p=2, dklen=40)
    r = requests.post(authcompat.it_url(f"projects/{authcompat.project()}/accounts:batchCreate"),
                      headers={"Authorization": "Bearer owner"},
                      json={"hashAlgorithm": "STANDARD_SCRYPT", "memoryCost": 2048, "blockSize": 4, "parallelization": 2,
                            "dkLen": 40, "users": [{"localId": uid, "email": email,
                                                    "passwordHash": base64.b64encode(digest).decode(),
                                                    "salt": base64.b64encode(SALT).decode()}]})
    assert r.status_code == 200 and r.json().get("error", []) == [], r.text
    assert authcompat.sign_in(email, PASSWORD.decode()).status_code == 200
