"""ID tokens issued "in the future" (the hub clock moved back after they were minted) are refused by
every service with Firebase's errors, as production verifiers refuse an `iat` after now.

A private hearth: moving the clock back on the session's shared one would break other suites."""
import pytest
import requests

from hearthharness import start_hearth, stop_hearth

API_KEY = "fake-api-key"


@pytest.fixture(params=["none", "rs256"])
def private(request):
    proc, ready, _ = start_hearth(["--token-signing", request.param, "--clock", "2026-06-01T12:00:00Z"])
    yield {name: s["url"] for name, s in ready["services"].items()}
    stop_hearth(proc)


def test_a_token_from_the_future_is_refused_everywhere(private):
    up = requests.post(f"{private['auth']}/identitytoolkit.googleapis.com/v1/accounts:signUp?key={API_KEY}",
                       json={"email": "clock@example.com", "password": "secret-pw", "returnSecureToken": True}).json()
    token = up["idToken"]
    bearer = {"Authorization": f"Bearer {token}"}
    doc = f"{private['firestore']}/v1/projects/demo-hearth/databases/(default)/documents/users/{up['localId']}/files/f1"

    def calls():
        lookup = requests.post(f"{private['auth']}/identitytoolkit.googleapis.com/v1/accounts:lookup?key={API_KEY}",
                               json={"idToken": token})
        read = requests.get(doc, headers=bearer)
        presign = requests.post(f"{private['api']}/v1/uploads/presign", json={"contentType": "image/jpeg", "fileExt": "jpg"},
                                headers=bearer)
        return lookup, read, presign

    lookup, read, presign = calls()
    assert lookup.status_code == 200 and read.status_code == 404 and presign.status_code == 200, (lookup.text, read.text, presign.text)

    requests.put(f"{private['hub']}/emulator/v1/clock", json={"frozenAt": "2026-06-01T11:59:00Z"}).raise_for_status()
    lookup, read, presign = calls()
    assert lookup.status_code == 400 and lookup.json()["error"]["message"] == "INVALID_ID_TOKEN"
    assert read.status_code == 401 and read.json()["error"]["status"] == "UNAUTHENTICATED", read.text
    assert "in the future" in read.json()["error"]["message"]
    assert presign.status_code == 401, presign.text
    assert "in the future" in presign.text

    # Back at the minute it was issued, the same token works again: only iat > now is refused.
    requests.put(f"{private['hub']}/emulator/v1/clock", json={"frozenAt": "2026-06-01T12:00:00Z"}).raise_for_status()
    lookup, read, presign = calls()
    assert lookup.status_code == 200 and read.status_code == 404 and presign.status_code == 200
