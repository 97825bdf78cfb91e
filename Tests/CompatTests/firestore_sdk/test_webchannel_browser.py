"""WebChannel in a real browser: headless Chromium (Debian's chromium + chromium-driver, driven by
selenium) runs `fixtures/webchannel_page.html`, served from an origin other than Firestore's, which
speaks WebChannel with fetch and XMLHttpRequest, credentials included, as the web SDK's Closure does
(docs/firestore.md, *WebChannel*). What only a browser enforces is checked here: the CORS preflight
of a request with an Authorization header, `Access-Control-Allow-Origin` / `-Allow-Credentials` on
every answer the page reads, a streamed body read as it comes, and a header the page may read only
because the answer exposes it (`X-HTTP-Initial-Response`, the fast handshake's) while one it does
not expose stays hidden.

Run against Hearth and, when installed, the official emulator (the same page, the same
assertions). Skipped visibly when Chromium, chromedriver or selenium is missing.
"""
import http.server
import os
import threading
import uuid

import pytest

from hearthharness import headless_chromium

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "webchannel_page.html")


@pytest.fixture(scope="module")
def page_origin():
    """An HTTP server for the page on a port of its own: an origin other than Firestore's."""
    with open(PAGE, "rb") as f:
        html = f.read()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    d = headless_chromium()
    d.set_script_timeout(90)
    yield d
    d.quit()


def test_webchannel_from_another_origin(browser, page_origin, emulator_host, target):
    project = "demo-wcb-" + uuid.uuid4().hex[:8]
    db = f"projects/{project}/databases/(default)"
    base = f"http://{emulator_host}"
    assert not base.startswith(page_origin)
    browser.get(page_origin + "/")
    out = browser.execute_async_script(
        "runWebChannel(arguments[0], arguments[1], arguments[2], arguments[3]);", base, db, "owner")
    assert out["errors"] == [], out
    assert out["origin"] == page_origin
    # The REST commit passed its preflight and could be read.
    assert out["restStatus"] == 200 and out["restCommitTime"], out
    # Listen: the handshake's `c` array, then the query's first snapshot and the write's change,
    # all read from a backchannel still streaming.
    assert out["listenHandshake"][0] == "c" and out["listenHandshake"][2:] == ["", 8, 12, 30000], out
    assert out["listenerSaw"] == {"by": {"stringValue": "browser"}}, out
    assert out["listenKinds"][:2] == ["targetChange", "documentChange"], out
    # Write over the fast handshake: the exposed header could be read, the unexposed one could not.
    assert out["writeStatus"] == 200
    assert out["initialResponse"][0] == "c" and out["initialResponse"][2:] == ["", 8, 12, 30000], out
    assert out["hiddenHeader"] is None, out
    assert out["writeHello"] == ["streamId", "streamToken"], out
    assert len(out["forwardAnswer"]) == 3 and out["forwardAnswer"][0] == 1, out
    assert out["writeResult"] == ["commitTime", "streamToken", "writeResults"], out
    terminated = {k: v for k, v in out.items() if k.startswith("terminate")}
    if target == "hearth":
        assert out["terminateListen"] == 200 and out["terminateWrite"] == 200, terminated
    else:
        # Observed: the official emulator has sometimes forgotten one of the two sessions by then
        # (400, empty: its unknown SID) when run from the browser, never from webchannelclient.py;
        # the answer is readable either way, which is what this test is about.
        assert out["terminateListen"] in (200, 400) and out["terminateWrite"] in (200, 400), terminated
