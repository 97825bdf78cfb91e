"""Auth, Firestore and the seed's upload flow against Hearth's REST APIs."""
import json
import multiprocessing
import signal
import time
import urllib.parse

from . import listing
from .context import DOC_NAME_PREFIX, DOCS
from .httpc import Client, NotAvailable, expect, parse_url
from .loadgen import require_clean
from .pairs import Load

API_KEY = "bench"
PASSWORD = "bench-password-1"
UPLOAD_UUID = "0b5c7d1e-6a6b-4c1e-9d55-0123456789ab"


class User:
    def __init__(self, email, uid, id_token, refresh_token):
        self.email, self.uid, self.id_token, self.refresh_token = email, uid, id_token, refresh_token


def sign_up(client, email):
    r = client.request("POST", f"/identitytoolkit.googleapis.com/v1/accounts:signUp?key={API_KEY}",
                       body={"email": email, "password": PASSWORD, "returnSecureToken": True})
    j = expect(r, "Auth accounts:signUp").json() or {}
    if not j.get("idToken") or not j.get("localId"):
        raise NotAvailable(f"Auth accounts:signUp answered without idToken/localId: {r.snippet()}")
    return User(email, j["localId"], j["idToken"], j.get("refreshToken", ""))


def auth(ctx, hearth):
    """signInWithPassword and securetoken refresh per second at 16 connections; returns a signed-up user."""
    port = hearth.port("auth")
    host = f"127.0.0.1:{port}"
    c = Client(port)
    try:
        user = sign_up(c, "bench-auth@example.com")
    finally:
        c.close()
    signin = {"method": "POST", "path": f"/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key={API_KEY}",
              "headers": {"Host": host, "Content-Type": "application/json"},
              "body": json.dumps({"email": user.email, "password": PASSWORD, "returnSecureToken": True})}
    refresh = {"method": "POST", "path": f"/securetoken.googleapis.com/v1/token?key={API_KEY}",
               "headers": {"Host": host, "Content-Type": "application/x-www-form-urlencoded"},
               "body": urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": user.refresh_token})}
    for key, req, what in (("auth.signin", signin, "accounts:signInWithPassword"),
                           ("auth.refresh", refresh, "securetoken refresh")):
        try:
            c = Client(port)
            try:
                r = expect(c.request(req["method"], req["path"], body=req["body"], headers=req["headers"]), what)
            finally:
                c.close()
            if not (r.json() or {}).get("idToken") and not (r.json() or {}).get("id_token"):
                raise NotAvailable(f"{what} answered without a token: {r.snippet()}")
            s = require_clean(ctx.wrk.run(port, [req], 16, key), what)
            ctx.results.put(key, "hearth", s["rps"], wrk=s)
            ctx.log(f"  {what}: {s['rps']:,.0f} req/s")
        except NotAvailable as e:
            ctx.results.na(key, "hearth", str(e))
    return user


def file_fields(uid, status="ready", n=None, created=None, key=None):
    f = {
        "ownerUid": {"stringValue": uid},
        "storage": {"stringValue": "s3"},
        "s3Key": {"stringValue": key or f"users/{uid}/uploads/{UPLOAD_UUID}.jpg"},
        "contentType": {"stringValue": "image/jpeg"},
        "status": {"stringValue": status},
    }
    if n is not None:
        f["n"] = {"integerValue": str(n)}
    if created is not None:
        f["createdAt"] = {"timestampValue": created}
    return f


def create_write(uid, doc_id, fields):
    """A create of users/{uid}/files/{doc_id} with createdAt = serverTimestamp, as the seed app writes it."""
    return {
        "update": {"name": f"{DOC_NAME_PREFIX}/users/{uid}/files/{doc_id}", "fields": fields},
        "updateTransforms": [{"fieldPath": "createdAt", "setToServerValue": "REQUEST_TIME"}],
        "currentDocument": {"exists": False},
    }


def seed_docs(client, uid, count, start=0, batch=500):
    """Stores `count` documents in users/{uid}/files through admin commits of `batch` writes each."""
    headers = {"Authorization": "Bearer owner"}
    for lo in range(start, start + count, batch):
        writes = []
        for i in range(lo, min(start + count, lo + batch)):
            writes.append({"update": {"name": f"{DOC_NAME_PREFIX}/users/{uid}/files/f{i:06d}",
                                      "fields": file_fields(uid, "ready" if i % 2 == 0 else "pending", n=i,
                                                            created="2024-01-01T00:00:00Z")}})
        expect(client.request("POST", f"{DOCS}:commit", body={"writes": writes}, headers=headers),
               f"Firestore admin commit of {len(writes)} writes")


def wrk_load(ctx, port, req, conns, name, what, system, warmup=None):
    """A `pairs.Load` of one wrk point: each round one run of `ctx.s.duration` seconds, its rate counted
    only when clean; `warmup` seconds of the same load at 16 connections first (None: no warm-up)."""
    def once():
        # One connection: where wrk and the server ran is recorded, never pinned (a JVM's compiler and
        # collector threads on one vCPU would be the emulator's handicap, not its speed).
        pid = ctx.server_pids.get(system) if conns == 1 else None
        s = require_clean(ctx.wrk.once(port, [req], conns, f"{system}-{name}", profile=system == "hearth",
                                       server_pid=pid, pin=False), what)
        return s["rps"], {"wrk": s, **({"layout": s["layout"]} if "layout" in s else {})}

    def warm():
        ctx.wrk.once(port, [req], 16, f"{system}-{name}-warmup", duration=warmup, profile=False)
    return Load(once, warm if warmup and not ctx.quick else None)


REST_POINTS = (("get", (1, 16)), ("commit", (1, 16)), ("batchget", (16,)))


def rest_loads(ctx, port, user, system="hearth"):
    """{fs.get.c1, fs.get.c16, fs.commit.c1, fs.commit.c16, fs.batchget.c16: Load, or the reason it
    cannot run}: get and commit with rules on (user token) at 1 and 16 connections, batchGet of 10
    documents at 16, each probed once first. `system` is "hearth" or "emulator" (the official one: same
    rules, same token, same data); the emulator's first point of each kind gets 5 s of warm-up (JIT)."""
    keys = [f"fs.{name}.c{c}" for name, points in REST_POINTS for c in points]
    host = f"127.0.0.1:{port}"
    if user is None:
        return dict.fromkeys(keys, "no user token (Auth not available)")
    c = Client(port)
    try:
        writes = [{"update": {"name": f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f{i}",
                              "fields": file_fields(user.uid, created="2024-01-01T00:00:00Z")}} for i in range(10)]
        expect(c.request("POST", f"{DOCS}:commit", headers={"Authorization": "Bearer owner"}, body={"writes": writes}),
               f"{system} Firestore admin commit")
    except (NotAvailable, OSError) as e:
        return dict.fromkeys(keys, str(e))
    finally:
        c.close()
    doc_path = f"{DOCS}/users/{user.uid}/files/f0"
    get_user = {"method": "GET", "path": doc_path, "headers": {"Host": host, "Authorization": f"Bearer {user.id_token}"}}
    commit_body = json.dumps({"writes": [create_write(user.uid, "b-@@RUN@@-@@SEQ@@", file_fields(user.uid))]})
    commit = {"method": "POST", "path": f"{DOCS}:commit", "template": True, "body": commit_body,
              "headers": {"Host": host, "Authorization": f"Bearer {user.id_token}", "Content-Type": "application/json"}}
    batch_body = json.dumps({"documents": [f"{DOC_NAME_PREFIX}/users/{user.uid}/files/f{i}" for i in range(10)]})
    batch = {"method": "POST", "path": f"{DOCS}:batchGet", "body": batch_body,
             "headers": {"Host": host, "Authorization": f"Bearer {user.id_token}", "Content-Type": "application/json"}}
    probes = {"get": (get_user, None, "Firestore get (user token, rules on)"),
              "commit": (commit, commit_body.replace("@@RUN@@-@@SEQ@@", "probe"),
                         "Firestore commit (user token, serverTimestamp, rules on)"),
              "batchget": (batch, batch_body, "Firestore batchGet of 10 documents (user token, rules on)")}
    out = {}
    for name, points in REST_POINTS:
        req, body, what = probes[name]
        try:
            r = probe(port, req, f"{system} {what}", body)
            if name == "get" and (r.json() or {}).get("name", "").split("/")[-1] != "f0":
                raise NotAvailable(f"{what} answered an unexpected body: {r.snippet()}")
            if name == "batchget":
                found = [x for x in (r.json() or []) if isinstance(x, dict) and "found" in x]
                if len(found) != 10:
                    raise NotAvailable(f"{what} found {len(found)} of 10 documents: {r.snippet()}")
        except (NotAvailable, OSError) as e:
            out.update({f"fs.{name}.c{c}": str(e) for c in points})
            continue
        for i, conns in enumerate(points):
            out[f"fs.{name}.c{conns}"] = wrk_load(ctx, port, req, conns, f"fs-{name}-c{conns}", f"{system} {what}", system,
                                                  warmup=5 if system != "hearth" and i == 0 else None)
    return out


def probe(port, req, what, body=None):
    c = Client(port)
    try:
        return expect(c.request(req["method"], req["path"], body=body, headers=req["headers"]), what)
    finally:
        c.close()


def rules_insitu(ctx, port, user):
    """The same get as the admin (rules bypassed) at one connection; the difference from the user-token
    get's mean latency bounds token verification plus rules evaluation from above."""
    try:
        user_run = ctx.results.details.get(("fs.get.c1", "hearth"), {}).get("wrk")
        if not user_run or user is None:
            raise NotAvailable("Firestore get with a user token not measured")
        get_admin = {"method": "GET", "path": f"{DOCS}/users/{user.uid}/files/f0",
                     "headers": {"Host": f"127.0.0.1:{port}", "Authorization": "Bearer owner"}}
        probe(port, get_admin, "Firestore get (admin)")
        s = require_clean(ctx.wrk.run(port, [get_admin], 1, "fs-get-admin-c1"), "Firestore admin get")
        ctx.results.put("rules.insitu", "hearth", max(0.0, user_run["lat_mean_us"] - s["lat_mean_us"]),
                        user_mean_us=user_run["lat_mean_us"], admin_mean_us=s["lat_mean_us"])
    except NotAvailable as e:
        ctx.results.na("rules.insitu", "hearth", str(e))


QUERY_BODY = json.dumps({"structuredQuery": {
    "from": [{"collectionId": "files"}],
    "where": {"fieldFilter": {"field": {"fieldPath": "status"}, "op": "EQUAL", "value": {"stringValue": "ready"}}},
    "orderBy": [{"field": {"fieldPath": "n"}, "direction": "DESCENDING"}],
    "limit": 10}})


def seed_collection(ctx, port, auth_port, size, system):
    """A user signed up on Hearth's Auth (the official emulator takes the same tokens) whose
    users/{uid}/files holds `size` documents, stored through the server on `port`: the runQuery and
    documents.list rows' collection."""
    ac, fc = Client(auth_port), Client(port)
    try:
        user = sign_up(ac, f"bench-q{size}-{system}@example.com")
        t0 = time.perf_counter()
        seed_docs(fc, user.uid, size)
        ctx.log(f"  {system}: seeded {size:,} documents in {time.perf_counter() - t0:.1f}s")
        return user
    finally:
        ac.close()
        fc.close()


def query_load(ctx, port, user, size, system):
    """A `pairs.Load` of runQuery (equality filter + orderBy + limit 10, user token) on the `size`
    documents of `user`'s collection (seed_collection), checked once for the right 10 names first; an
    untimed run before the rounds (listing.warm_up)."""
    req = {"method": "POST", "path": f"{DOCS}/users/{user.uid}:runQuery", "body": QUERY_BODY,
           "headers": {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {user.id_token}",
                       "Content-Type": "application/json"}}
    r = probe(port, req, f"{system} Firestore runQuery", QUERY_BODY)
    docs = [x["document"] for x in (r.json() or []) if isinstance(x, dict) and "document" in x]
    want = [f"f{i:06d}" for i in range(size - 1, -1, -1) if i % 2 == 0][:10]
    got = [d.get("name", "").rsplit("/", 1)[-1] for d in docs]
    if got != want:
        raise NotAvailable(f"runQuery returned {got[:3]}… instead of {want[:3]}…")

    def once():
        s = require_clean(ctx.wrk.once(port, [req], 1, f"{system}-fs-query-{size}", profile=system == "hearth"),
                          f"{system} Firestore runQuery")
        return s["rps"], {"wrk": s}
    return Load(once, lambda: listing.warm_up(ctx, port, req, f"{system}-fs-query-{size}", system))


def clear(ctx, hearth):
    """Milliseconds for DELETE /emulator/v1/projects/{p}/databases/(default)/documents over N documents."""
    port = hearth.port("firestore")
    ac = Client(hearth.port("auth"))
    fc = Client(port)
    times = []
    try:
        user = sign_up(ac, "bench-clear@example.com")
        for _ in range(ctx.s.clear_reps):
            seed_docs(fc, user.uid, ctx.s.clear_docs)
            t0 = time.perf_counter()
            expect(fc.request("DELETE", "/emulator/v1/projects/demo-hearth/databases/(default)/documents"),
                   "Firestore emulator clear")
            times.append(time.perf_counter() - t0)
            r = fc.request("GET", f"{DOCS}/users/{user.uid}/files/f000000", headers={"Authorization": "Bearer owner"})
            if r.status != 404:
                raise NotAvailable(f"after the clear a document still answers {r.status}")
    finally:
        ac.close()
        fc.close()
    return times


# The seed flow: whole flows per second from several client processes.

def _default_signals():
    # The driver turns SIGTERM into KeyboardInterrupt for its clean-up; workers just end.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _flow_worker(args):
    api_port, fs_port, token, uid, seconds, max_flows, body_path = args
    with open(body_path, "rb") as f:
        body = f.read()
    api, fs = Client(api_port), Client(fs_port)
    s3 = {}
    auth = {"Authorization": f"Bearer {token}"}
    done, errors, first_error = 0, 0, None
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline and done + errors < max_flows:
        try:
            r = api.request("POST", "/v1/uploads/presign", headers=auth,
                            body={"contentType": "image/jpeg", "fileExt": "jpg", "expiresSeconds": 900})
            if r.status != 200:
                raise RuntimeError(f"presign → {r.status}: {r.snippet()}")
            j = r.json()
            _, port, path = parse_url(j["putUrl"])
            s3c = s3.get(port) or s3.setdefault(port, Client(port))
            r = s3c.request("PUT", path, body=body, headers={"Content-Type": "image/jpeg"})
            if r.status != 200:
                raise RuntimeError(f"PUT putUrl → {r.status}: {r.snippet()}")
            file_id = j["key"].rsplit("/", 1)[-1].split(".")[0]
            fields = file_fields(uid, "ready", key=j["key"])
            fields["size"] = {"integerValue": str(len(body))}
            r = fs.request("POST", f"{DOCS}:commit", headers=auth, body={"writes": [create_write(uid, file_id, fields)]})
            if r.status != 200:
                raise RuntimeError(f"metadata commit → {r.status}: {r.snippet()}")
            done += 1
        except Exception as e:  # counted and reported; a worker never dies silently
            errors += 1
            first_error = first_error or str(e)
    return done, errors, first_error


def seed_flow(ctx, hearth, user):
    """Flows per second: presign (api) → PUT 64 KiB (s3, signed Content-Type) → metadata commit
    (Firestore, rules on), with the sign-in token reused."""
    if user is None:
        raise NotAvailable("no user token (Auth not available)")
    api_port, fs_port = hearth.port("api"), hearth.port("firestore")
    probe = _flow_worker((api_port, fs_port, user.id_token, user.uid, 30, 1, ctx.body64k))
    if probe[0] != 1:
        raise NotAvailable(f"one flow failed: {probe[2]}")
    n = ctx.s.flow_workers
    args = [(api_port, fs_port, user.id_token, user.uid, ctx.s.flow_seconds, 1_000_000, ctx.body64k)] * n
    t0 = time.perf_counter()
    pool = multiprocessing.get_context("fork").Pool(n, initializer=_default_signals)
    try:
        out = pool.map(_flow_worker, args, chunksize=1)
    finally:
        pool.close()
        pool.join()
    secs = time.perf_counter() - t0
    done = sum(o[0] for o in out)
    errors = sum(o[1] for o in out)
    if errors > 0.01 * max(1, done):
        raise NotAvailable(f"{errors} of {done + errors} flows failed: {next(o[2] for o in out if o[2])}")
    ctx.results.put("seed.flow", "hearth", done / secs, flows=done, seconds=secs, workers=n)
    ctx.log(f"  seed flow: {done / secs:,.0f} flows/s ({n} client processes)")
