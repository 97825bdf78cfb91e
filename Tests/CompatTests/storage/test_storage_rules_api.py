"""storage.rules loaded through the hub, reading Hearth's own Firestore with firestore.get()/exists(),
and their coverage report."""
import urllib.parse
import uuid

import requests

RULES = """rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /teams/{team}/{file} {
      allow read, write: if request.auth != null
        && firestore.exists(/databases/(default)/documents/teams/$(team)/members/$(request.auth.uid))
        && firestore.get(/databases/(default)/documents/teams/$(team)).data.open == true;
    }
  }
}
"""


def sign_up(hearth):
    r = requests.post(f"{hearth['services']['auth']['url']}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                      json={"email": f"u-{uuid.uuid4().hex[:10]}@example.com", "password": "secret-pw", "returnSecureToken": True})
    r.raise_for_status()
    return r.json()


def test_rules_read_firestore_documents(hearth):
    hub, fs, storage = (hearth["services"][n]["url"] for n in ("hub", "firestore", "storage"))
    project = hearth["project"]
    rules_url = f"{hub}/emulator/v1/projects/{project}/storage:securityRules"
    previous = requests.get(rules_url).json()["rules"]["files"][0]["content"]
    bad = requests.put(rules_url, json={"rules": {"files": [{"name": "storage.rules", "content": "service firebase.storage {"}]}})
    assert bad.status_code == 400
    assert requests.put(rules_url, json={"rules": {"files": [{"name": "storage.rules", "content": RULES}]}}).status_code == 200
    try:
        member, outsider = sign_up(hearth), sign_up(hearth)
        team = "t" + uuid.uuid4().hex[:8]
        docs = f"{fs}/v1/projects/{project}/databases/(default)/documents"
        owner = {"Authorization": "Bearer owner"}
        assert requests.patch(f"{docs}/teams/{team}", json={"fields": {"open": {"booleanValue": True}}}, headers=owner).status_code == 200
        assert requests.patch(f"{docs}/teams/{team}/members/{member['localId']}", json={"fields": {}}, headers=owner).status_code == 200
        name = urllib.parse.quote(f"teams/{team}/notes.txt", safe="")

        def upload(user):
            return requests.post(f"{storage}/v0/b/{project}.appspot.com/o?name={name}", data=b"notes",
                                 headers={"Authorization": f"Firebase {user['idToken']}", "Content-Type": "text/plain"})

        assert upload(member).status_code == 200
        denied = upload(outsider)
        assert denied.status_code == 403 and denied.json()["error"]["message"].startswith("Permission denied.")
        # Closing the team in Firestore closes the bucket path: the rules read the live document.
        requests.patch(f"{docs}/teams/{team}", json={"fields": {"open": {"booleanValue": False}}}, headers=owner)
        assert upload(member).status_code == 403
        coverage = requests.get(f"{hub}/emulator/v1/storage/coverage")
        assert coverage.status_code == 200 and "firestore.exists" in coverage.text
    finally:
        requests.put(rules_url, json={"rules": {"files": [{"name": "storage.rules", "content": previous}]}})


BOTH = """rules_version = '2';
service cloud.firestore {
  match /{document=**} { allow read, write: if true; }
}
service firebase.storage {
  match /b/{bucket}/o {
    match /open/{file} { allow read, write: if true; }
  }
}
"""


def test_a_file_for_both_services_loads_and_storage_is_judged_by_its_own_block(hearth):
    """As the Firebase emulators accept it; the Firestore block's match /{document=**} must not
    grant Storage requests (fail closed), and a service declared twice is refused."""
    hub, storage = hearth["services"]["hub"]["url"], hearth["services"]["storage"]["url"]
    project = hearth["project"]
    rules_url = f"{hub}/emulator/v1/projects/{project}/storage:securityRules"
    previous = requests.get(rules_url).json()["rules"]["files"][0]["content"]
    twice = BOTH + BOTH[BOTH.index("service firebase.storage"):]
    refused = requests.put(rules_url, json={"rules": {"files": [{"name": "storage.rules", "content": twice}]}})
    assert refused.status_code == 400 and "Duplicate service name declaration." in refused.text
    assert requests.put(rules_url, json={"rules": {"files": [{"name": "storage.rules", "content": BOTH}]}}).status_code == 200
    try:
        user = sign_up(hearth)

        def upload(path):
            return requests.post(f"{storage}/v0/b/{project}.appspot.com/o?name={urllib.parse.quote(path, safe='')}",
                                 data=b"x", headers={"Authorization": f"Firebase {user['idToken']}", "Content-Type": "text/plain"})

        assert upload("open/a.txt").status_code == 200
        assert upload("closed/a.txt").status_code == 403
    finally:
        requests.put(rules_url, json={"rules": {"files": [{"name": "storage.rules", "content": previous}]}})
