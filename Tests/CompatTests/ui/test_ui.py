"""The web UI in a real browser: headless Chromium (Debian's chromium + chromium-driver) driven by
selenium against a running hearth. Data is made through the real APIs, then each page must show it;
edits made in the UI must be visible through the APIs. A screenshot of each page goes to
.build/ui-screenshots/."""
import json
import os
import queue
import time

import boto3
import pytest
import requests
from botocore.config import Config

from hearthharness import REPO, headless_chromium, start_hearth, stop_hearth

selenium = pytest.importorskip("selenium", reason="selenium is not installed (Tests/CompatTests/requirements.txt)")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

SHOTS = os.path.join(REPO, ".build", "ui-screenshots")
OWNER = {"Authorization": "Bearer owner"}


@pytest.fixture(scope="module")
def hearth_ui():
    proc, ready, _ = start_hearth()
    yield ready
    stop_hearth(proc)


@pytest.fixture(scope="module")
def browser():
    d = headless_chromium("--window-size=1280,900", capabilities={"goog:loggingPrefs": {"browser": "ALL"}})
    os.makedirs(SHOTS, exist_ok=True)
    yield d
    d.quit()


@pytest.fixture(scope="module")
def data(hearth_ui):
    """A user, a document, an object, a denied request and a failed signature, through the real APIs."""
    s = hearth_ui["services"]
    env = hearth_ui["env"]
    project = hearth_ui["project"]
    auth, fs = s["auth"]["url"], s["firestore"]["url"]
    user = requests.post(f"{auth}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                         json={"email": "alice@example.com", "password": "secret-pw", "returnSecureToken": True}).json()
    docs = f"{fs}/v1/projects/{project}/databases/(default)/documents"
    fields = {
        "title": {"stringValue": "hello"}, "count": {"integerValue": "42"}, "ratio": {"doubleValue": 0.5},
        "done": {"booleanValue": True}, "nothing": {"nullValue": None}, "at": {"timestampValue": "2030-01-02T03:04:05Z"},
        "blob": {"bytesValue": "aGk="}, "where": {"geoPointValue": {"latitude": 1.5, "longitude": -2.5}},
        "ref": {"referenceValue": f"projects/{project}/databases/(default)/documents/notes/other"},
        "tags": {"arrayValue": {"values": [{"stringValue": "a"}, {"integerValue": "2"}]}},
        "meta": {"mapValue": {"fields": {"nested": {"stringValue": "deep"}}}},
        "emb": {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"},
                                        "value": {"arrayValue": {"values": [{"doubleValue": 1.0}, {"doubleValue": 2.0}]}}}}},
    }
    r = requests.patch(f"{docs}/notes/n1", json={"fields": fields}, headers=OWNER)
    assert r.status_code == 200, r.text
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL_S3"], region_name=env["AWS_REGION"],
                      aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                      config=Config(s3={"addressing_style": "path"}))
    s3.put_object(Bucket="uploads", Key="photos/cat.txt", Body=b"meow", ContentType="text/plain")
    denied = requests.post(f"{docs}/users/alice/files", json={"fields": {"x": {"stringValue": "y"}}})
    assert denied.status_code == 403
    url = requests.post(f"{s['hub']['url']}/emulator/v1/s3/presign",
                        json={"method": "PUT", "bucket": "uploads", "key": "photos/dog.jpg", "headers": {"content-type": "image/jpeg"}}).json()["url"]
    bad = requests.put(url, data=b"woof", headers={"Content-Type": "image/png"})
    assert bad.status_code == 403 and "SignatureDoesNotMatch" in bad.text
    # What the client signed, as Hearth reproduced it from its presign record.
    assert "content-type:image/jpeg" in bad.text.split("<DiagnosisCanonicalRequest>")[1].split("</DiagnosisCanonicalRequest>")[0]
    return {"uid": user["localId"], "docs": docs, "project": project, "auth": auth, "hub": s["hub"]["url"], "ui": s["ui"]["url"], "env": env}


def wait(d, css, timeout=10):
    return WebDriverWait(d, timeout).until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))


def wait_text(d, css, text, timeout=10):
    WebDriverWait(d, timeout).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
    return d.find_element(By.CSS_SELECTOR, css)


def until(fn, timeout=10):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(0.1)


def row_with(d, text):
    """The log row whose path ends with `text` once the filters applied (only 403s listed)."""
    rows = d.find_elements(By.CSS_SELECTOR, "#requests-body tr")
    if any("403" not in r.text for r in rows):
        return None
    return next((r.find_element(By.CSS_SELECTOR, "button.link") for r in rows if text in r.text), None)


def go(d, data, page):
    d.get(f"{data['ui']}/#/{page}")


def shot(d, name):
    d.save_screenshot(os.path.join(SHOTS, name + ".png"))


def test_overview_lists_services_exports_and_counts(browser, data):
    go(browser, data, "overview")
    wait_text(browser, "#env-exports", "FIRESTORE_EMULATOR_HOST=")
    body = browser.find_element(By.TAG_NAME, "main").text
    for name in ["hub", "auth", "firestore", "s3", "api", "ui"]:
        assert name in body
    assert until(lambda: "Auth users" in browser.find_element(By.TAG_NAME, "main").text)
    shot(browser, "overview")


def test_firestore_document_is_shown_and_edited_through_the_ui(browser, data):
    go(browser, data, "firestore/notes/n1")
    wait(browser, "#fields input.key")
    keys = [e.get_attribute("value") for e in browser.find_elements(By.CSS_SELECTOR, "#fields > .map > .field > input.key")]
    assert keys == sorted(["title", "count", "ratio", "done", "nothing", "at", "blob", "where", "ref", "tags", "meta", "emb"])
    types = [Select(e).first_selected_option.text for e in browser.find_elements(By.CSS_SELECTOR, "#fields > .map > .field > .value > .head > select.type")]
    assert types == ["timestamp", "bytes", "integer", "boolean", "vector", "map", "null", "double", "reference", "array", "string", "geoPoint"]
    assert "notes" in browser.find_element(By.ID, "collections").text
    shot(browser, "firestore")
    title_row = [r for r in browser.find_elements(By.CSS_SELECTOR, "#fields > .map > .field") if r.find_element(By.CSS_SELECTOR, "input.key").get_attribute("value") == "title"][0]
    value = title_row.find_element(By.CSS_SELECTOR, ".value > .head > input")
    value.clear()
    value.send_keys("edited in the UI")
    # A vector is edited as its numbers, and saved as the vector it is.
    emb_row = [r for r in browser.find_elements(By.CSS_SELECTOR, "#fields > .map > .field") if r.find_element(By.CSS_SELECTOR, "input.key").get_attribute("value") == "emb"][0]
    emb = emb_row.find_element(By.CSS_SELECTOR, ".value > .head > input")
    assert emb.get_attribute("value") == "1, 2"
    emb.clear()
    emb.send_keys("3, 4.5")
    browser.find_element(By.ID, "add-field").click()
    new_key = browser.switch_to.active_element
    new_key.send_keys("added")
    browser.find_element(By.ID, "save-document").click()
    doc = until(lambda: (lambda j: j if j["fields"]["title"].get("stringValue") == "edited in the UI" else None)(
        requests.get(f"{data['docs']}/notes/n1", headers=OWNER).json()))
    assert doc, "the edit did not reach Firestore"
    f = doc["fields"]
    assert f["added"] == {"stringValue": ""}
    assert f["count"] == {"integerValue": "42"} and f["ratio"] == {"doubleValue": 0.5} and f["at"] == {"timestampValue": "2030-01-02T03:04:05Z"}
    assert f["where"] == {"geoPointValue": {"latitude": 1.5, "longitude": -2.5}} and f["blob"] == {"bytesValue": "aGk="}
    assert f["tags"]["arrayValue"]["values"] == [{"stringValue": "a"}, {"integerValue": "2"}]
    assert f["meta"]["mapValue"]["fields"] == {"nested": {"stringValue": "deep"}}
    assert f["emb"]["mapValue"]["fields"] == {"__type__": {"stringValue": "__vector__"},
                                              "value": {"arrayValue": {"values": [{"doubleValue": 3}, {"doubleValue": 4.5}]}}}
    # Live: a write through the API appears without reloading the page.
    requests.patch(f"{data['docs']}/notes/n2", json={"fields": {}}, headers=OWNER)
    wait_text(browser, "#documents", "n2", timeout=8)


def test_firestore_collection_group_lists_documents_at_any_depth(browser, data):
    requests.patch(f"{data['docs']}/users/alice/notes/deep", json={"fields": {}}, headers=OWNER)
    go(browser, data, "firestore")
    wait(browser, "#group-id").send_keys("notes\n")
    text = wait_text(browser, "#group-documents", "users/alice/notes/deep").text
    assert "notes/n1" in text
    # A document that does not exist (yet) opens empty, ready to be created by Save.
    go(browser, data, "firestore/notes/missing")
    wait_text(browser, "main", "does not exist yet")


def test_data_browser_pages_a_large_collection_by_cursor(browser, data):
    """120 documents: pages of 50 from the server (documents.list page tokens), Next and Previous."""
    db = f"projects/{data['project']}/databases/(default)/documents"
    writes = [{"update": {"name": f"{db}/paged/d{i:03d}", "fields": {"n": {"integerValue": str(i)}}}} for i in range(120)]
    r = requests.post(f"{data['docs']}:commit", json={"writes": writes}, headers=OWNER)
    assert r.status_code == 200, r.text

    def ids():  # read in one step: the list is redrawn as pages arrive
        return browser.execute_script("return [...document.querySelectorAll('#documents li')].map(li => li.textContent)")

    def click(button):
        browser.execute_script(f"document.getElementById('{button}').click()")
    go(browser, data, "firestore/paged")
    WebDriverWait(browser, 10).until(lambda d: len(ids()) == 50)
    assert ids()[0] == "d000" and ids()[-1] == "d049"
    assert browser.find_element(By.ID, "previous-page").get_attribute("disabled")
    click("next-page")
    WebDriverWait(browser, 10).until(lambda d: ids()[:1] == ["d050"])
    click("next-page")
    WebDriverWait(browser, 10).until(lambda d: ids()[:1] == ["d100"])
    assert len(ids()) == 20 and browser.find_element(By.ID, "next-page").get_attribute("disabled")
    click("previous-page")
    WebDriverWait(browser, 10).until(lambda d: ids()[:1] == ["d050"])

    # Documents that exist only as parents of subcollections are listed (in italics) and paged too.
    writes = [{"update": {"name": f"{db}/parents/p{i:03d}/kids/k", "fields": {}}} for i in range(60)]
    assert requests.post(f"{data['docs']}:commit", json={"writes": writes}, headers=OWNER).status_code == 200
    go(browser, data, "firestore/parents")
    WebDriverWait(browser, 10).until(lambda d: len(ids()) == 50)
    assert ids()[0] == "p000" and len(browser.find_elements(By.CSS_SELECTOR, "#documents li i")) == 50
    click("next-page")
    WebDriverWait(browser, 10).until(lambda d: ids()[:1] == ["p050"])
    assert len(ids()) == 10

    # In a collection larger than a page as well: every third entry of 90 is only a parent.
    writes = [{"update": {"name": f"{db}/mixed/m{i:03d}" + ("/kids/k" if i % 3 == 0 else ""), "fields": {}}} for i in range(90)]
    assert requests.post(f"{data['docs']}:commit", json={"writes": writes}, headers=OWNER).status_code == 200
    go(browser, data, "firestore/mixed")
    WebDriverWait(browser, 10).until(lambda d: len(ids()) == 50)
    assert ids()[:4] == ["m000", "m001", "m002", "m003"] and len(browser.find_elements(By.CSS_SELECTOR, "#documents li i")) == 17
    click("next-page")
    WebDriverWait(browser, 10).until(lambda d: ids()[:1] == ["m050"])
    assert len(ids()) == 40 and len(browser.find_elements(By.CSS_SELECTOR, "#documents li i")) == 13


def live_mode(d):
    """How the open page stays live: 'events' (the hub's server-sent events) or 'polling'."""
    return d.execute_script("return document.documentElement.dataset.live || ''")


def test_live_views_are_pushed_without_reload(browser, data):
    """A document written through the REST API and a request made by a client appear in the open
    page by themselves, carried by the hub's event stream (not the polling fallback)."""
    go(browser, data, "firestore/pushed")
    wait_text(browser, "main", "No documents.")
    WebDriverWait(browser, 10).until(lambda d: live_mode(d) == "events")
    browser.execute_script("window.__notReloaded = true")
    requests.patch(f"{data['docs']}/pushed/p1", json={"fields": {"v": {"integerValue": "1"}}}, headers=OWNER)
    wait_text(browser, "#documents", "p1", timeout=8)
    # A first document in a new root collection shows up in the collection list too.
    assert "pushed" in wait_text(browser, "#collections", "pushed").text

    go(browser, data, "requests")
    wait(browser, "#requests-body tr")
    WebDriverWait(browser, 10).until(lambda d: live_mode(d) == "events")
    path = f"/v1/projects/{data['project']}/databases/(default)/documents/pushed/by-a-client"
    r = requests.get(f"{data['docs']}/pushed/by-a-client")  # an unauthenticated client: denied
    assert r.status_code == 403
    wait_text(browser, "#requests-body", "pushed/by-a-client", timeout=8)
    assert browser.execute_script("return window.__notReloaded === true")
    assert live_mode(browser) == "events"
    assert path.endswith("pushed/by-a-client")


def test_event_stream_replays_after_last_event_id(data):
    """The hub's stream directly: a reconnect with Last-Event-ID gets the entries it missed."""
    requests.get(f"{data['docs']}/pushed/replay-1")
    latest = requests.get(f"{data['hub']}/emulator/v1/requests?limit=1").json()["latest"]
    requests.get(f"{data['docs']}/pushed/replay-2")
    with requests.get(f"{data['hub']}/emulator/v1/events?topics=requests&service=firestore",
                      headers={"Last-Event-ID": str(latest)}, stream=True, timeout=10) as r:
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/event-stream")
        seen = ""
        for line in r.iter_lines(decode_unicode=True):
            seen += line + "\n"
            if "replay-2" in line:
                break
    assert "event: hello" in seen and '"resumed":true' in seen
    assert "replay-1" not in seen


def log_entries(data, **filters):
    return requests.get(f"{data['hub']}/emulator/v1/requests", params={"limit": 1000, **filters}).json()["requests"]


def test_listen_and_write_streams_are_in_the_request_log(browser, data):
    """Real grpcio streams with an end user's ID token: each stream's opening and end are logged
    (status, counts, the user), and a Listen target the rules deny is logged as a 403 with the
    rules trace, which the Requests page opens beside the rules."""
    grpc = pytest.importorskip("grpc")
    from google.cloud.firestore_v1 import types

    fs = data["env"]["FIRESTORE_EMULATOR_HOST"]
    db = f"projects/{data['project']}/databases/(default)"
    user = requests.post(f"{data['auth']}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=k",
                         json={"email": "streamer@example.com", "password": "secret-pw", "returnSecureToken": True}).json()
    md = [("authorization", "Bearer " + user["idToken"]), ("google-cloud-resource-prefix", db)]
    channel = grpc.insecure_channel(fs)
    try:
        listen = channel.stream_stream("/google.firestore.v1.Firestore/Listen", request_serializer=types.ListenRequest.serialize,
                                       response_deserializer=types.ListenResponse.deserialize)
        other = f"{db}/documents/users/someone-else/files/f1"
        outbox = queue.Queue()  # kept open: the client cancels, as an app leaving a screen does
        outbox.put(types.ListenRequest(database=db, add_target=types.Target(target_id=7, documents=types.Target.DocumentsTarget(documents=[other]))))
        call = listen(iter(outbox.get, None), metadata=md)
        for r in call:
            if r.target_change.target_change_type == types.TargetChange.TargetChangeType.REMOVE:
                assert r.target_change.cause.code == 7
                break
        call.cancel()

        write = channel.stream_stream("/google.firestore.v1.Firestore/Write", request_serializer=types.WriteRequest.serialize,
                                      response_deserializer=types.WriteResponse.deserialize)
        mine = types.Write(update=types.Document(name=f"{db}/documents/users/{user['localId']}/files/w1",
                                                 fields={"ownerUid": types.Value(string_value=user["localId"])}))
        handshake = list(write(iter([types.WriteRequest(database=db)]), metadata=md))
        assert handshake and handshake[0].stream_token
        token = handshake[0].stream_token
        sid = handshake[0].stream_id
        # A second stream: handshake, then one write (it may be denied by the shipped rules: either is logged).
        try:
            list(write(iter([types.WriteRequest(database=db), types.WriteRequest(stream_id=sid, stream_token=token, writes=[mine, mine])]), metadata=md))
        except grpc.RpcError:
            pass
    finally:
        channel.close()

    path = "/google.firestore.v1.Firestore/Listen"
    entries = until(lambda: (lambda es: es if any(e["fields"].get("stream") == "ended" for e in es) else None)(
        [e for e in log_entries(data, path=path) if e["user"] == user["localId"]]))
    assert entries, "the Listen stream's end was not logged"
    kinds_logged = [e["fields"]["stream"] for e in reversed(entries)]
    assert kinds_logged == ["opened", "target removed", "ended"], kinds_logged
    removed = next(e for e in entries if e["fields"]["stream"] == "target removed")
    assert removed["status"] == 403 and removed["fields"]["targetId"] == 7 and removed["fields"]["target"] == "users/someone-else/files/f1"
    ended = next(e for e in entries if e["fields"]["stream"] == "ended")
    assert ended["fields"]["targetsAdded"] == 1 and ended["fields"]["targetsDenied"] == 1 and ended["status"] == 499
    detail = requests.get(f"{data['hub']}/emulator/v1/requests/{removed['seq']}").json()
    assert "false for 'get'" in json.loads(detail["errorBody"])["error"]["message"]

    writes = [e for e in log_entries(data, path="/google.firestore.v1.Firestore/Write") if e["user"] == user["localId"]]
    ends = [e for e in writes if e["fields"]["stream"] == "ended"]
    assert len(ends) == 2 and sorted(e["fields"]["writes"] for e in ends) == [0, 2], writes
    assert len([e for e in writes if e["fields"]["stream"] == "opened"]) == 2

    # The denied target opens to its rules trace like a denied REST request.
    go(browser, data, f"requests/{removed['seq']}")
    wait_text(browser, "#denial-trace", "false for 'get'")
    wait(browser, "#denial-rules .ln.fail")


def open_denied(d, data, service, path):
    """Opens the Requests page filtered to `service`'s 403s and clicks the row of `path`."""
    go(d, data, "requests")
    Select(wait(d, "#filter-service")).select_by_value(service)
    Select(d.find_element(By.ID, "filter-status")).select_by_value("403")
    WebDriverWait(d, 10).until(lambda d: row_with(d, path)).click()


def test_denied_firestore_request_opens_to_its_rules_trace(browser, data):
    open_denied(browser, data, "firestore", "/users/alice/files")
    trace = wait_text(browser, "#denial-trace", "false for 'create'")
    assert "@ L" in trace.text
    wait(browser, "#denial-rules .ln.fail")
    browser.set_window_size(1280, 1150)  # tall enough for the table, the trace and the failing line
    try:
        time.sleep(0.3)
        shot(browser, "requests-firestore")
    finally:
        browser.set_window_size(1280, 900)


def test_failed_s3_signature_shows_the_diagnosis(browser, data):
    open_denied(browser, data, "s3", "photos/dog.jpg")
    diag = wait_text(browser, "#s3-diagnosis", "image/jpeg")
    assert "image/png" in diag.text
    # The diff of what the client signed against what Hearth computed marks the Content-Type lines.
    assert browser.find_element(By.CSS_SELECTOR, "#request-detail .diff .ln.del").text.endswith("content-type:image/jpeg")
    assert browser.find_element(By.CSS_SELECTOR, "#request-detail .diff .ln.add").text.endswith("content-type:image/png")
    shot(browser, "requests-s3")


def test_auth_user_is_listed_and_edited_through_the_ui(browser, data):
    go(browser, data, "auth")
    wait_text(browser, "#users-body", "alice@example.com")
    browser.find_element(By.CSS_SELECTOR, f'#users-body tr[data-uid="{data["uid"]}"] button').click()
    name = wait(browser, "#user-name")
    name.send_keys("Alice From UI")
    browser.find_element(By.ID, "user-disabled").click()
    claims = browser.find_element(By.ID, "user-claims")
    claims.clear()
    claims.send_keys('{"role": "editor"}')
    shot(browser, "auth")
    browser.find_element(By.ID, "save-user").click()

    def looked_up():
        r = requests.post(f"{data['auth']}/identitytoolkit.googleapis.com/v1/projects/{data['project']}/accounts:lookup",
                          json={"localId": [data["uid"]]}, headers=OWNER).json()
        u = r["users"][0]
        return u if u.get("displayName") == "Alice From UI" else None
    u = until(looked_up)
    assert u, "the edit did not reach Auth"
    assert u["disabled"] is True
    assert json.loads(u["customAttributes"]) == {"role": "editor"}
    # A user added through the UI signs in through the API.
    browser.find_element(By.ID, "add-user").click()
    wait(browser, "#user-email").send_keys("bob@example.com")
    browser.find_element(By.ID, "user-password").send_keys("bob-secret")
    browser.find_element(By.ID, "save-user").click()
    signed_in = until(lambda: requests.post(f"{data['auth']}/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=k",
                                            json={"email": "bob@example.com", "password": "bob-secret"}).ok)
    assert signed_in


def test_s3_object_is_listed_with_its_metadata(browser, data):
    go(browser, data, "s3/uploads/photos/")
    button = WebDriverWait(browser, 10).until(lambda d: d.find_element(By.CSS_SELECTOR, '#objects-body tr[data-key="photos/cat.txt"] button'))
    button.click()
    wait_text(browser, "#object-detail", "text/plain")
    browser.find_element(By.ID, "presign").click()
    url = wait_text(browser, "#presigned-url", "X-Amz-Signature").text
    assert requests.get(url).content == b"meow"
    shot(browser, "s3")
    # An upload from the page is a SigV4-signed PUT made by the page itself.
    path = os.path.join(SHOTS, "upload-me.txt")
    with open(path, "wb") as f:
        f.write(b"uploaded from the UI")
    browser.find_element(By.ID, "upload-file").send_keys(path)
    browser.find_element(By.CSS_SELECTOR, "#upload-file + button").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, '#objects-body tr[data-key="photos/upload-me.txt"]'))
    env = data["env"]
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL_S3"], region_name=env["AWS_REGION"],
                      aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
    assert s3.get_object(Bucket="uploads", Key="photos/upload-me.txt")["Body"].read() == b"uploaded from the UI"


def test_rules_playground_decides_with_the_same_engine(browser, data):
    go(browser, data, "rules")
    wait(browser, "#rules-source .ln")
    Select(browser.find_element(By.ID, "play-method")).select_by_value("get")
    path = browser.find_element(By.ID, "play-path")
    path.clear()
    path.send_keys("users/alice/files/f1")
    browser.find_element(By.ID, "play-existing").send_keys('{"ownerUid": "alice"}')
    browser.find_element(By.ID, "play-run").click()
    assert wait(browser, "#play-verdict").text == "DENY"  # signed out
    browser.find_element(By.ID, "play-uid").send_keys("alice")
    browser.find_element(By.ID, "play-run").click()
    wait_text(browser, "#play-verdict", "ALLOW")
    shot(browser, "rules")
    # An edit that does not compile: its errors, in place.
    browser.find_element(By.ID, "rules-editor").send_keys("\nallow everything;")
    browser.find_element(By.ID, "rules-check").click()
    assert "line" in wait(browser, "#rules-errors").text
    wait(browser, "#rules-issues .ln.issue")
    # Loading it is refused (400, as the official emulator answers) and marks the same errors.
    browser.execute_script("document.getElementById('rules-issues').replaceChildren()")
    browser.find_element(By.ID, "rules-load").click()
    assert "line" in wait(browser, "#rules-errors").text
    wait(browser, "#rules-issues .ln.issue")


NAMED_RULES = """rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /open/{id} { allow read, write: if request.auth == null; }
    match /closed/{id} { allow read, write: if request.auth != null; }
  }
}
"""


def set_editor(d, text):
    d.execute_script("arguments[0].value = arguments[1]", d.find_element(By.ID, "rules-editor"), text)


def test_rules_view_sets_a_named_databases_own_rules_that_judge_it_alone(browser, data):
    """The rules view picks a named database, shows whose rules judge it, loads rules for it alone
    (refusing ones that do not compile, with their errors), and real REST requests then show that
    those rules judge that database and not the default one; its coverage counts them, the data
    browser shows the same database, and a denial there opens beside that database's rules."""
    db = "ui-named"
    fs = "http://" + data["env"]["FIRESTORE_EMULATOR_HOST"]
    project = data["project"]
    named = f"{fs}/v1/projects/{project}/databases/{db}/documents"
    rules_url = f"{fs}/emulator/v1/projects/{project}/databases/{db}:securityRules"
    # The database exists (a document written as the owner), so the picker lists it.
    assert requests.patch(f"{named}/notes/n1", json={"fields": {"x": {"stringValue": "y"}}}, headers=OWNER).status_code == 200
    # Before: judged by the rules file hearth started with, as the default database is.
    assert requests.post(f"{named}/open", json={"fields": {}}).status_code == 403
    try:
        go(browser, data, "overview")  # the Rules page may be open already: drawn again, it lists the new database
        go(browser, data, "rules")
        Select(wait(browser, "#database-select")).select_by_value(db)
        wait_text(browser, "#rules-judge", f"Requests to {db} are judged by the rules file")
        assert Select(browser.find_element(By.ID, "rules-target")).first_selected_option.get_attribute("value") == "database"
        # Rules that do not compile: refused with their errors, nothing installed.
        set_editor(browser, "rules_version = '2';\nservice cloud.firestore { nope }\n")
        browser.find_element(By.ID, "rules-load").click()
        assert "line 2" in wait(browser, "#rules-errors").text
        assert requests.get(rules_url).json()["rules"]["files"][0]["content"] != NAMED_RULES
        # The database's own rules, loaded through the UI.
        set_editor(browser, NAMED_RULES)
        browser.find_element(By.ID, "rules-load").click()
        wait_text(browser, "#rules-judge", f"Requests to {db} are judged by its own rules")
        assert requests.get(rules_url).json()["rules"]["files"][0]["content"] == NAMED_RULES
        listed = requests.get(f"{data['hub']}/emulator/v1/firestore/projects/{project}/databases").json()["databases"]
        assert {d["database"]: d["rules"]["from"] for d in listed}[db] == "database"
        assert {d["database"]: d["ownRules"] for d in listed}["(default)"] is False

        # Real requests, signed out: the named database's rules judge it, the default one keeps the file's.
        assert requests.post(f"{named}/open", json={"fields": {"a": {"stringValue": "b"}}}).status_code == 200
        assert requests.get(f"{named}/closed/c1").status_code == 403
        assert requests.post(f"{data['docs']}/open", json={"fields": {}}).status_code == 403
        assert requests.post(f"{named}/users/alice/files", json={"fields": {}}).status_code == 403

        # Coverage of the database's own rules counts those decisions (the view reloads them).
        go(browser, data, "overview")
        go(browser, data, "rules")
        wait_text(browser, "#rules-judge", "its own rules")
        assert browser.find_element(By.ID, "database-select").get_attribute("value") == db
        wait(browser, "#rules-source .ln.heat1")
        shot(browser, "rules-named-database")
        # A database written to while the page is open is offered once the picker gets focus.
        later = f"{fs}/v1/projects/{project}/databases/ui-later/documents/a/b"
        assert requests.patch(later, json={"fields": {}}, headers=OWNER).status_code == 200
        browser.execute_script("arguments[0].focus()", browser.find_element(By.ID, "database-select"))
        wait(browser, '#database-select option[value="ui-later"]')
        assert browser.find_element(By.ID, "database-select").get_attribute("value") == db

        # The data browser shows the same database.
        go(browser, data, "firestore/notes")
        assert wait(browser, "#database-select").get_attribute("value") == db
        wait_text(browser, "nav.crumbs", f"databases/{db}/documents")
        wait_text(browser, "#documents", "n1")

        # The denial on the named database opens beside that database's rules, not the default's.
        open_denied(browser, data, "firestore", "closed/c1")
        wait_text(browser, "#denial-database", db)
        assert "match /closed/{id}" in wait(browser, "#denial-rules").text
        wait(browser, "#denial-rules .ln.fail")
    finally:
        browser.execute_script("sessionStorage.removeItem('hearth.database')")


def test_clock_moves_from_the_ui(browser, data):
    go(browser, data, "clock")
    wait(browser, "#clock-now")
    browser.find_element(By.ID, "clock-freeze").click()
    assert until(lambda: requests.get(f"{data['hub']}/emulator/v1/clock").json()["mode"] == "frozen")
    before = requests.get(f"{data['hub']}/emulator/v1/clock").json()["now"]
    secs = browser.find_element(By.ID, "advance-seconds")
    secs.clear()
    secs.send_keys("7200")
    browser.find_element(By.ID, "clock-advance").click()
    after = until(lambda: (lambda n: n if n != before else None)(requests.get(f"{data['hub']}/emulator/v1/clock").json()["now"]))
    from datetime import datetime
    parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))
    assert (parse(after) - parse(before)).total_seconds() == 7200
    wait_text(browser, "#clock-now", after[:16])
    shot(browser, "clock")
    browser.find_element(By.ID, "clock-release").click()
    assert until(lambda: requests.get(f"{data['hub']}/emulator/v1/clock").json()["mode"] == "system")


def test_phone_width_has_no_horizontal_scroll(browser, data):
    browser.set_window_size(390, 844)
    try:
        for page in ["overview", "firestore/notes/n1", "requests", "auth", "rules"]:
            go(browser, data, page)
            wait(browser, "main h1")
            time.sleep(0.3)
            width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= width[1] + 1, f"{page} overflows at 390 px: {width}"
        go(browser, data, "firestore/notes/n1")
        wait(browser, "#fields input.key")
        shot(browser, "firestore-phone")
    finally:
        browser.set_window_size(1280, 900)


def test_keyboard_reaches_the_pages(browser, data):
    go(browser, data, "overview")
    wait(browser, "#env-exports")
    links = browser.find_elements(By.CSS_SELECTOR, "#nav a")
    assert [l.text for l in links] == ["Overview", "Firestore", "Requests", "Auth", "S3", "Rules", "Clock"]
    assert all(l.get_attribute("href") for l in links)  # real links: Tab and Enter work


def test_the_ui_and_hub_refuse_foreign_hosts_and_origins(data):
    assert requests.get(data["ui"] + "/", headers={"Host": "rebound.example"}).status_code == 403
    assert requests.post(data["ui"] + "/hub/emulator/v1/reset", headers={"Origin": "https://evil.example"}).status_code == 403
    assert requests.post(data["hub"] + "/emulator/v1/reset", headers={"Origin": "null"}).status_code == 403
    assert requests.get(data["ui"] + "/").status_code == 200


def test_browser_console_has_no_errors(browser, data):
    # Last: every page above ran in this browser.
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe
