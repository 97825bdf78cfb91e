"""Listen and Write over WebChannel, as the Firebase web SDK sends them, against Hearth and the
official Cloud Firestore emulator (skipped visibly when gcloud is absent): the same requests and
the same assertions on both (docs/firestore.md, *WebChannel*).

`webchannelclient.Channel` speaks Closure's BrowserChannel (VER=8) exactly as the SDK's
`webchannel_connection.ts` configures it: headers encoded in the handshake body, raw-JSON messages,
the database as a URL parameter, a streaming (`CI=0`) or long-polling (`CI=1`) backchannel.
The same client also opens channels the two other ways Closure can: with the headers (and the
token) in a `$httpHeaders` URL parameter, and with the fast handshake (a GET, `SID=null`, the
first messages in `$req`, the `c` array in `X-HTTP-Initial-Response`).
The web SDK itself could not be run here (npm's registry is not reachable from these machines).
"""
import base64
import json
import os
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from webchannelclient import Channel, ChannelError, split_chunks

RULES = r"""rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /public/{doc} { allow read, write: if true; }
    match /private/{doc} { allow read, write: if false; }
    match /alice/{doc} { allow read, write: if request.auth.uid == 'alice'; }
  }
}
"""

MODES = ["streaming", "long-polling"]
# What the SDK puts in `initMessageHeaders` (rest_connection.ts modifyHeadersForRequest), sent
# encoded in the handshake body; `Content-Type: text/plain` is what it sets on its REST calls too.
SDK_HEADERS = {"X-Goog-Api-Client": "gl-js/ fire/11.0.0", "Content-Type": "text/plain"}


def call(host, method, path, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://{host}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        # The official emulator's first requests after its JVM starts can take long on a loaded machine.
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, dict(r.getheaders()), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


class Project:
    """A fresh project with RULES on one target, and the REST calls the tests make around a channel."""

    def __init__(self, host):
        self.host = host
        self.id = "demo-wc-" + uuid.uuid4().hex[:8]
        self.db = f"projects/{self.id}/databases/(default)"
        status, _, body = call(host, "PUT", f"/emulator/v1/projects/{self.id}:securityRules",
                               {"rules": {"files": [{"name": "firestore.rules", "content": RULES}]}})
        assert status == 200, body
        self.headers = {**SDK_HEADERS, "google-cloud-resource-prefix": self.db, "x-goog-request-params": self.db}

    def name(self, path):
        return f"{self.db}/documents/{path}"

    def commit(self, path, fields):
        status, _, body = call(self.host, "POST", f"/v1/{self.db}/documents:commit",
                               {"writes": [{"update": {"name": self.name(path), "fields": fields}}]},
                               {"Authorization": "Bearer owner"})
        assert status == 200, body

    def get(self, path):
        return call(self.host, "GET", f"/v1/{self.name(path)}", headers={"Authorization": "Bearer owner"})

    def channel(self, rpc, mode="streaming", headers=None):
        return Channel(self.host, rpc, self.db, {**self.headers, **(headers or {})}, long_polling=mode == "long-polling")


@pytest.fixture
def project(emulator_host):
    return Project(emulator_host)


def user_token(project, uid):
    """An unsigned token as the rules-unit-testing library makes one (both targets accept it)."""
    def b64(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    now = int(time.time())
    claims = {"iss": f"https://securetoken.google.com/{project}", "aud": project, "auth_time": now - 10, "iat": now - 10,
              "exp": now + 3600, "user_id": uid, "sub": uid, "firebase": {"identities": {}, "sign_in_provider": "custom"}}
    return b64({"alg": "none", "typ": "JWT"}) + "." + b64(claims) + "."


def kind(message):
    """A Listen answer's shape: its type (and target change type), its target ids."""
    if "targetChange" in message:
        tc = message["targetChange"]
        return (tc.get("targetChangeType", "NO_CHANGE"), tuple(tc.get("targetIds", [])))
    for k in ("documentChange", "documentDelete", "documentRemove", "filter", "error"):
        if k in message:
            return (k, ())
    return (json.dumps(message), ())


def until_global(message):
    """The snapshot marker: a NO_CHANGE for every target, with a read time."""
    return kind(message) == ("NO_CHANGE", ()) and "readTime" in message["targetChange"]


@pytest.mark.parametrize("mode", MODES)
def test_listen(project, mode):
    project.commit("public/a", {"x": {"integerValue": "1"}})
    ch = project.channel("Listen", mode)
    hs = ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/a")]}, "targetId": 2}})
    assert hs[0] == "c" and hs[2:] == ["", 8, 12, 30000], hs
    first = ch.drain(until_global, timeout=30)
    assert [kind(m) for m in first] == [("ADD", (2,)), ("documentChange", ()), ("CURRENT", (2,)), ("NO_CHANGE", ())]
    doc = first[1]["documentChange"]
    assert doc["document"]["name"] == project.name("public/a")
    assert doc["document"]["fields"] == {"x": {"integerValue": "1"}}
    assert doc["targetIds"] == [2] and "updateTime" in doc["document"] and "createTime" in doc["document"]
    assert first[2]["targetChange"]["resumeToken"] and first[2]["targetChange"]["readTime"]

    # A second target on the same channel (a forward POST): a denied query is ADD then REMOVE with
    # the cause, and the channel goes on.
    answer = ch.send({"database": project.db, "addTarget": {
        "query": {"parent": project.db + "/documents", "structuredQuery": {"from": [{"collectionId": "private"}]}},
        "targetId": 4}})
    assert len(answer) == 3 and answer[0] in (0, 1), answer
    denied = ch.drain(lambda m: kind(m)[0] == "REMOVE", timeout=30)
    assert [kind(m) for m in denied] == [("ADD", (4,)), ("REMOVE", (4,))]
    assert denied[1]["targetChange"]["cause"]["code"] == 7
    assert "false for 'list'" in denied[1]["targetChange"]["cause"]["message"]

    # A change reaches the first target.
    project.commit("public/a", {"x": {"integerValue": "2"}})
    changed = ch.drain(until_global, timeout=30)
    docs = [m["documentChange"]["document"] for m in changed if "documentChange" in m]
    assert docs and docs[-1]["fields"] == {"x": {"integerValue": "2"}}

    ch.send({"database": project.db, "removeTarget": 2})
    assert [kind(m) for m in ch.drain(lambda m: kind(m)[0] == "REMOVE", timeout=30)] == [("REMOVE", (2,))]

    # Array ids count up from the handshake's 0 without a gap (no-ops included).
    ids = [a[0] for a in ch.raw_arrays]
    assert ids == sorted(set(ids)) and ids[0] == 0
    status, body = ch.terminate()
    assert status == 200


def test_listen_missing_document_and_resume(project):
    ch = project.channel("Listen")
    ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/none")]}, "targetId": 6}})
    got = ch.drain(until_global, timeout=30)
    assert [kind(m) for m in got] == [("ADD", (6,)), ("documentDelete", ()), ("CURRENT", (6,)), ("NO_CHANGE", ())]
    assert got[1]["documentDelete"]["removedTargetIds"] == [6]
    token = got[2]["targetChange"]["resumeToken"]
    ch.terminate()
    # A new channel resuming the target with its token is answered as a listen.
    project.commit("public/none", {"y": {"stringValue": "é😀"}})
    again = project.channel("Listen")
    again.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/none")]},
                                                      "targetId": 6, "resumeToken": token}})
    got = again.drain(until_global, timeout=30)
    docs = [m["documentChange"]["document"] for m in got if "documentChange" in m]
    # A character outside the BMP: the chunk's length counts it as two UTF-16 units.
    assert docs and docs[-1]["fields"] == {"y": {"stringValue": "é😀"}}
    again.terminate()


@pytest.mark.parametrize("mode", MODES)
def test_write(project, target, mode):
    w = project.channel("Write", mode)
    w.open({"database": project.db})
    hello = w.next(30)
    # The handshake's answer: a stream id and token, no commit time, no results.
    assert set(hello) == {"streamId", "streamToken"}, hello
    w.send({"streamToken": hello["streamToken"], "writes": [
        {"update": {"name": project.name("public/w"), "fields": {"n": {"integerValue": "1"}}}},
        {"delete": project.name("public/gone")}]})
    done = w.next(30)
    assert set(done) == {"streamToken", "writeResults", "commitTime"}, done
    assert len(done["writeResults"]) == 2 and "updateTime" in done["writeResults"][0]
    assert done["writeResults"][1] in ({}, {"updateTime": done["commitTime"]})
    assert project.get("public/w")[0] == 200

    # A denied write ends the stream with its error; what was sent after it is not applied.
    w.send({"streamToken": done["streamToken"], "writes": [{"update": {"name": project.name("private/p"), "fields": {}}}]})
    w.send({"streamToken": done["streamToken"], "writes": [{"update": {"name": project.name("public/after"), "fields": {}}}]})
    err = w.next(30)
    assert err["error"]["status"] == "PERMISSION_DENIED", err
    assert err["error"]["message"].startswith("PERMISSION_DENIED: ")
    time.sleep(0.5)
    if target == "hearth":
        # The official emulator applies a write sent after the one that ended the stream; its gRPC
        # Write stream does not, nor does Hearth on either transport (docs/firestore.md, *WebChannel*).
        assert project.get("public/after")[0] == 404
    w.terminate()


def test_write_clean_end(project, target):
    # The SDK's clean close: an empty `writes` list, then it closes the channel.
    w = project.channel("Write")
    w.open({"database": project.db})
    token = w.next(30)["streamToken"]
    w.send({"streamToken": token, "writes": []})
    assert set(w.next(30)) == {"streamToken"}
    if target == "official":
        # The emulator ends the stream OK: a "close" array.
        assert w.next(30) == ("closed", "close")
    else:
        # Hearth keeps the stream open, as its gRPC Write stream does (docs/firestore.md, *Realtime*).
        w.send({"streamToken": token, "writes": [{"update": {"name": project.name("public/more"), "fields": {}}}]})
        assert "commitTime" in w.next(30)
    assert w.terminate()[0] == 200


@pytest.mark.parametrize("first,message", [
    ({"database": "{db}", "streamToken": "MA=="},
     "INVALID_ARGUMENT: Resuming streams is not supported, 'stream_token' must not be set on an initial write request."),
    ({}, "INVALID_ARGUMENT: 'database' must be set on an initial write request."),
])
def test_write_bad_first_request(project, first, message):
    w = project.channel("Write")
    w.open({k: (v.format(db=project.db) if isinstance(v, str) else v) for k, v in first.items()})
    err = w.next(30)
    assert err == {"error": {"message": message, "status": "INVALID_ARGUMENT"}}
    w.terminate()


def test_unknown_session(project):
    ch = project.channel("Listen")
    ch.sid = "bogus-session"
    with pytest.raises(ChannelError) as e:
        ch.send({"removeTarget": 1})
    assert e.value.status == 400
    status, _ = ch.backchannel_once(aid=0)[0].status, None
    assert status == 400


def test_terminate_ends_the_session(project):
    ch = project.channel("Listen")
    ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/t")]}, "targetId": 2}})
    ch.drain(until_global, timeout=30)
    assert ch.terminate()[0] == 200
    ch._stop.clear()
    with pytest.raises(ChannelError) as e:
        ch.send({"removeTarget": 2})
    assert e.value.status == 400


def test_long_poll_returns_pending_arrays_at_once(project):
    project.commit("public/lp", {"x": {"integerValue": "1"}})
    ch = project.channel("Listen", "long-polling")
    ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/lp")]}, "targetId": 2}},
            backchannel=False)
    # A long poll with arrays waiting answers them at once, in one chunk, and ends.
    deadline = time.time() + 30
    while True:
        start = time.time()
        resp, body = ch.backchannel_once(aid=0)
        assert resp.status == 200 and time.time() - start < 10
        chunks, rest = split_chunks(body)
        assert rest == ""
        arrays = [a for c in chunks for a in json.loads(c)]
        messages = [a[1][0] for a in arrays if a[1] != ["noop"]]
        if any(until_global(m) for m in messages) or time.time() > deadline:
            break
        time.sleep(0.2)
    assert arrays[0][0] == 1
    assert [kind(m) for m in messages] == [("ADD", (2,)), ("documentChange", ()), ("CURRENT", (2,)), ("NO_CHANGE", ())]
    # Asked again from the same AID, the same arrays come again (nothing was acknowledged).
    resp, again = ch.backchannel_once(aid=0)
    assert [a for c in split_chunks(again)[0] for a in json.loads(c)][:len(arrays)] == arrays
    ch.terminate()


# Hearth only: what the official emulator cannot show or answers otherwise.

def test_hearth_session_expires_on_hearths_clock(hearth):
    host = os.environ["FIRESTORE_EMULATOR_HOST"]
    hub = hearth["services"]["hub"]["url"]
    project = Project(host)
    ch = project.channel("Listen", "long-polling")
    ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/e")]}, "targetId": 2}},
            backchannel=False)
    # One long poll, answered with the target's first arrays: then no backchannel is open.
    resp, body = ch.backchannel_once(aid=0)
    assert resp.status == 200 and "ADD" in body
    req = urllib.request.Request(f"{hub}/emulator/v1/clock", data=json.dumps({"advanceSeconds": 120}).encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
    resp, body = ch.backchannel_once()
    assert resp.status == 400 and "Unknown SID" in body


def advance_clock(hearth, seconds):
    hub = hearth["services"]["hub"]["url"]
    req = urllib.request.Request(f"{hub}/emulator/v1/clock", data=json.dumps({"advanceSeconds": seconds}).encode(),
                                 method="PUT", headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def test_hearth_timers_run_on_hearths_clock(hearth):
    # A long poll with nothing to say ends after 30 s, and any backchannel quiet for 10 s gets a
    # no-op: both due when Hearth's clock moves (the sessions' timer looks every 2 s), so neither
    # takes its real time here.
    project = Project(os.environ["FIRESTORE_EMULATOR_HOST"])
    ch = project.channel("Listen", "long-polling")
    ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/clock")]}, "targetId": 2}},
            backchannel=False)
    deadline = time.time() + 30
    last = 0
    while time.time() < deadline:
        resp, body = ch.backchannel_once(aid=last)
        arrays = [a for c in split_chunks(body)[0] for a in json.loads(c)]
        last = arrays[-1][0]
        if any(a[1] != ["noop"] and until_global(a[1][0]) for a in arrays):
            break
    # Everything acknowledged: the next long poll opens with a no-op and waits.
    result = {}

    def poll():
        start = time.time()
        resp, body = ch.backchannel_once(aid=last)
        result.update(status=resp.status, body=body, seconds=time.time() - start)

    t = threading.Thread(target=poll)
    t.start()
    time.sleep(1)
    assert t.is_alive(), result  # parked: a no-op does not end a long poll
    advance_clock(hearth, 31)
    t.join(timeout=20)
    assert not t.is_alive(), "the long poll did not end after Hearth's clock moved 31 s"
    arrays = [a for c in split_chunks(result["body"])[0] for a in json.loads(c)]
    assert result["status"] == 200 and [a[1] for a in arrays] == [["noop"]] * len(arrays) and len(arrays) >= 2, result
    assert result["seconds"] < 20, result

    # A streaming backchannel quiet since it opened gets a no-op once the clock moves 10 s.
    stream = project.channel("Listen")
    stream.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/clock")]}, "targetId": 2}})
    stream.drain(until_global, timeout=30)
    noops = lambda: sum(1 for a in stream.raw_arrays if a[1] == ["noop"])  # noqa: E731
    before = noops()
    time.sleep(0.5)
    advance_clock(hearth, 11)
    deadline = time.time() + 10
    while noops() == before and time.time() < deadline:
        time.sleep(0.1)
    assert noops() > before, stream.raw_arrays
    stream.terminate()
    ch.terminate()


def test_hearth_bad_token_is_the_streams_error(hearth):
    # The official emulator never answers this handshake (it hangs); Hearth ends the stream with
    # the error the gRPC stream gets, as the first message.
    project = Project(os.environ["FIRESTORE_EMULATOR_HOST"])
    w = project.channel("Write", headers={"Authorization": "Bearer garbage"})
    w.open({"database": project.db})
    err = w.next(30)
    assert err["error"]["status"] in ("INVALID_ARGUMENT", "UNAUTHENTICATED"), err
    w.terminate()


def test_rest_with_the_web_sdks_headers(project):
    # The SDK's unary calls: POST with a JSON body labelled text/plain, credentials included, from
    # another origin (a dev server); the answer must let the page read it.
    origin = "http://localhost:5173"
    project.commit("public/r", {"x": {"integerValue": "1"}})
    status, headers, body = call(project.host, "POST", f"/v1/{project.db}/documents:runQuery",
                                 {"structuredQuery": {"from": [{"collectionId": "public"}]}},
                                 {**project.headers, "Origin": origin, "Content-Type": "text/plain"})
    assert status == 200, body
    assert any("document" in r for r in json.loads(body))
    h = {k.lower(): v for k, v in headers.items()}
    assert h["access-control-allow-origin"] == origin
    assert h["access-control-allow-credentials"] == "true"
    req_headers = "authorization,content-type,google-cloud-resource-prefix,x-goog-api-client,x-goog-request-params,x-firebase-gmpid"
    status, headers, _ = call(project.host, "OPTIONS", f"/v1/{project.db}/documents:commit", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": req_headers})
    h = {k.lower(): v for k, v in headers.items()}
    assert status in (200, 204)
    assert h["access-control-allow-origin"] == origin and h["access-control-allow-credentials"] == "true"
    assert h["access-control-allow-headers"].lower() == req_headers
    assert "POST" in h["access-control-allow-methods"]


@pytest.mark.parametrize("mode", ["fast-handshake", "fast-handshake-long-polling"])
def test_fast_handshake(project, mode):
    # Closure's `fastHandshake`: the handshake is a GET whose answer is the first backchannel.
    project.commit("public/f", {"x": {"integerValue": "1"}})
    ch = Channel(project.host, "Listen", project.db, project.headers, fast_handshake=True,
                 long_polling=mode.endswith("long-polling"))
    hs = ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("public/f")]}, "targetId": 2}})
    assert hs[0] == "c" and hs[2:] == ["", 8, 12, 30000], hs
    h = ch.handshake_headers
    assert h["content-type"].startswith("text/plain")
    assert "x-http-initial-response" in h["access-control-expose-headers"]
    first = ch.drain(until_global, timeout=30)
    assert [kind(m) for m in first] == [("ADD", (2,)), ("documentChange", ()), ("CURRENT", (2,)), ("NO_CHANGE", ())]
    # The answer's body opened with a no-op as array 1, before the messages' answers.
    assert ch.raw_arrays[:2] == [[0, hs], [1, ["noop"]]], ch.raw_arrays[:3]
    # The session is an ordinary one from here: a change comes, a forward POST is answered.
    project.commit("public/f", {"x": {"integerValue": "2"}})
    changed = ch.drain(until_global, timeout=30)
    assert [m["documentChange"]["document"]["fields"] for m in changed if "documentChange" in m][-1] == {"x": {"integerValue": "2"}}
    answer = ch.send({"database": project.db, "removeTarget": 2})
    assert len(answer) == 3, answer
    assert [kind(m) for m in ch.drain(lambda m: kind(m)[0] == "REMOVE", timeout=30)] == [("REMOVE", (2,))]
    assert ch.terminate()[0] == 200


def test_fast_handshake_write(project):
    w = Channel(project.host, "Write", project.db, project.headers, fast_handshake=True)
    w.open({"database": project.db})
    hello = w.next(30)
    assert set(hello) == {"streamId", "streamToken"}, hello
    w.send({"streamToken": hello["streamToken"], "writes": [
        {"update": {"name": project.name("public/fw"), "fields": {"n": {"integerValue": "1"}}}}]})
    done = w.next(30)
    assert set(done) == {"streamToken", "writeResults", "commitTime"}, done
    assert project.get("public/fw")[0] == 200
    w.terminate()


def test_fast_handshake_without_req(project):
    # A GET with SID=null and no `$req`: 400, nothing in the body.
    ch = project.channel("Listen")
    resp, body = ch._request("GET", ch._url(RID=1, CVER=22, SID="null"))
    assert resp.status == 400 and body == ""


@pytest.mark.parametrize("mode", ["headers-in-url", "fast-handshake"])
def test_http_headers_name_the_caller(project, mode):
    # The token in `$httpHeaders` (the URL) decides what the rules see: none, alice, bob.
    results = []
    for uid in (None, "alice", "bob"):
        headers = dict(project.headers)
        if uid:
            headers["Authorization"] = "Bearer " + user_token(project.id, uid)
        ch = Channel(project.host, "Listen", project.db, headers, headers_in_url=True,
                     fast_handshake=mode == "fast-handshake")
        ch.open({"database": project.db, "addTarget": {"documents": {"documents": [project.name("alice/a")]}, "targetId": 2}})
        got = ch.drain(lambda m: kind(m)[0] in ("CURRENT", "REMOVE"), timeout=30)
        results.append(kind(got[-1])[0])
        if kind(got[-1])[0] == "REMOVE":
            assert got[-1]["targetChange"]["cause"]["code"] == 7
        ch.terminate()
    assert results == ["REMOVE", "CURRENT", "REMOVE"]
