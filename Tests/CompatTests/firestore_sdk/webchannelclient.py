"""A WebChannel (Closure BrowserChannel, VER=8) client that sends what the Firebase web SDK sends.

The Firebase JS SDK (`packages/firestore/src/platform/browser/webchannel_connection.ts`) opens its
Listen and Write streams as WebChannels on `/google.firestore.v1.Firestore/<rpc>/channel` with
`httpSessionIdParam: 'gsessionid'`, `messageUrlParams: {database}`, `sendRawJson: true`,
`encodeInitMessageHeaders: true` and, for long polling, `forceLongPolling`. Closure's
`webchannelbase.js` then sends (facts in docs/firestore.md, *WebChannel*):

- the handshake: POST `?database=…&VER=8&RID=<n>&CVER=22&X-HTTP-Session-Id=gsessionid&zx=…&t=1`, body
  `headers=<url-encoded "Name:value\\r\\n"…>&count=1&ofs=0&req0___data__=<url-encoded JSON>`; the
  answer is chunked (`<length>\\n<JSON array>`) and starts `[[0,["c",SID,"",8,…]]]`; its
  `X-HTTP-Session-Id` header is sent back as `gsessionid` on every later request;
- the backchannel: GET `?…&RID=rpc&SID=…&AID=<last array id>&CI=0|1&TYPE=xmlhttp`, whose chunks
  carry `[[arrayId,[message]],…]`;
- more messages: POST `?…&SID=…&RID=<n+1>&AID=…`, body `count=1&ofs=<map id>&req0___data__=…`,
  answered `[backchannelPresent,lastArrayId,outstandingBytes]`;
- the end: `?…&SID=…&RID=<n>&TYPE=terminate`.

Two other ways Closure opens a channel, both served: `headers_in_url` sends the headers as a
`$httpHeaders` URL parameter (`httpHeadersOverwriteParam`, what SDKs before
`encodeInitMessageHeaders` sent, with the token in it) and no `headers=` field; `fast_handshake`
(Closure's `fastHandshake`) sends the handshake as a GET with the forward body in `$req` and
`SID=null`, reads the `c` array from the `X-HTTP-Initial-Response` header and keeps reading the
answer's body as the first backchannel.

Chunk lengths count UTF-16 code units, as a browser's `responseText.length` does.
Test-side only: it has no dependency beyond the standard library.
"""
import http.client
import json
import queue
import random
import string
import threading
import urllib.parse


def utf16_len(text):
    return len(text.encode("utf-16-le")) // 2


def split_chunks(text):
    """(chunks, rest): the complete `<length>\\n<payload>` chunks at the start of `text`."""
    chunks = []
    while True:
        nl = text.find("\n")
        if nl < 0:
            return chunks, text
        size = int(text[:nl])
        body = text[nl + 1:]
        # Walk code points until `size` UTF-16 units are covered.
        units, i = 0, 0
        while units < size and i < len(body):
            units += 2 if ord(body[i]) > 0xFFFF else 1
            i += 1
        if units < size:
            return chunks, text
        chunks.append(body[:i])
        text = body[i:]


class ChannelError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body[:300]!r}")
        self.status = status
        self.body = body


class Channel:
    """One WebChannel to `host` for `rpc` (`Listen` or `Write`)."""

    def __init__(self, host, rpc, database, headers=None, long_polling=False, timeout=30,
                 headers_in_url=False, fast_handshake=False):
        self.host = host
        self.headers_in_url = headers_in_url or fast_handshake
        self.fast_handshake = fast_handshake
        self.path = f"/google.firestore.v1.Firestore/{rpc}/channel"
        self.database = database
        self.headers = headers or {}
        self.long_polling = long_polling
        self.timeout = timeout
        self.rid = random.randrange(100000)
        self.map_id = 0
        self.sid = None
        self.gsessionid = None
        self.last_array_id = -1
        self.messages = queue.Queue()  # each item: a message, or ("closed", reason)
        self.raw_arrays = []  # every [arrayId, payload] received, in order
        self.handshake = None  # the "c" array
        self.handshake_headers = {}
        self._stop = threading.Event()
        self._thread = None
        self._backchannel_conn = None

    # --- wire -------------------------------------------------------------------------------

    def _zx(self):
        return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(12))

    def _url(self, **params):
        q = [("database", self.database)]
        if self.gsessionid:
            q.append(("gsessionid", self.gsessionid))
        q.append(("VER", "8"))
        q += [(k, str(v)) for k, v in params.items()]
        q += [("zx", self._zx()), ("t", "1")]
        return self.path + "?" + urllib.parse.urlencode(q)

    def _header_block(self):
        return "".join(f"{k}:{v}\r\n" for k, v in self.headers.items())

    def _body(self, messages, with_headers=False):
        parts = []
        if with_headers and self.headers and not self.headers_in_url:
            block = "".join(f"{k}:{v}\r\n" for k, v in self.headers.items())
            parts.append("headers=" + urllib.parse.quote(block, safe=""))
        parts.append(f"count={len(messages)}")
        parts.append(f"ofs={self.map_id}")
        for i, m in enumerate(messages):
            parts.append(f"req{i}___data__=" + urllib.parse.quote(json.dumps(m, separators=(",", ":")), safe=""))
        self.map_id += len(messages)
        return "&".join(parts)

    def _request(self, method, url, body=None):
        conn = http.client.HTTPConnection(self.host, timeout=self.timeout)
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
        conn.request(method, url, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read().decode("utf-8")
        conn.close()
        return resp, data

    # --- protocol ---------------------------------------------------------------------------

    def open(self, first=None, backchannel=True):
        """The handshake, with `first` sent in it as the SDK does; returns the handshake array.
        `backchannel=False`: no backchannel is opened (the caller polls with `backchannel_once`)."""
        rid = self.rid
        self.rid += 1
        params = {"RID": rid, "CVER": 22, "X-HTTP-Session-Id": "gsessionid"}
        if self.headers_in_url and self.headers:
            params["$httpHeaders"] = self._header_block()
        body = self._body([first] if first is not None else [], with_headers=True)
        if self.fast_handshake:
            return self._open_fast(params, body)
        resp, data = self._request("POST", self._url(**params), body)
        self.handshake_headers = {k.lower(): v for k, v in resp.getheaders()}
        if resp.status != 200:
            raise ChannelError(resp.status, data)
        chunks, rest = split_chunks(data)
        arrays = [a for c in chunks for a in json.loads(c)]
        self._opened(arrays, resp)
        if backchannel:
            self._thread = threading.Thread(target=self._backchannel, daemon=True)
            self._thread.start()
        return self.handshake

    def _open_fast(self, params, body):
        """The fast handshake: GET `…&$req=<body>&SID=null`, answered with the `c` array in
        `X-HTTP-Initial-Response` and a body that is the session's first backchannel."""
        params["$req"] = body
        params["SID"] = "null"
        conn = http.client.HTTPConnection(self.host, timeout=self.timeout + 60)
        conn.request("GET", self._url(**params))
        resp = conn.getresponse()
        self.handshake_headers = {k.lower(): v for k, v in resp.getheaders()}
        if resp.status != 200:
            data = resp.read().decode("utf-8", "replace")
            conn.close()
            raise ChannelError(resp.status, data)
        initial = resp.getheader("X-HTTP-Initial-Response")
        assert initial, self.handshake_headers
        self._opened(json.loads(initial), resp)
        self._backchannel_conn = conn
        self._thread = threading.Thread(target=self._backchannel, args=((conn, resp),), daemon=True)
        self._thread.start()
        return self.handshake

    def _opened(self, arrays, resp):
        self.raw_arrays += arrays
        first_array = arrays[0]
        self.last_array_id = first_array[0]
        self.handshake = first_array[1]
        assert self.handshake[0] == "c", self.handshake
        self.sid = self.handshake[1]
        self.gsessionid = resp.getheader("X-HTTP-Session-Id")
        for a in arrays[1:]:
            self._deliver(a)

    def send(self, message):
        """One forward-channel POST; returns its answer `[backchannelPresent, lastArrayId, outstanding]`."""
        rid = self.rid
        self.rid += 1
        resp, data = self._request("POST", self._url(SID=self.sid, RID=rid, AID=self.last_array_id),
                                   self._body([message]))
        if resp.status != 200:
            raise ChannelError(resp.status, data)
        chunks, rest = split_chunks(data)
        return json.loads(chunks[0]) if chunks else json.loads(data)

    def terminate(self):
        rid = self.rid
        self.rid += 1
        self._stop.set()
        resp, data = self._request("GET", self._url(SID=self.sid, RID=rid, TYPE="terminate"))
        if self._backchannel_conn is not None:
            try:
                self._backchannel_conn.sock.shutdown(2)
            except Exception:
                pass
        return resp.status, data

    def backchannel_once(self, aid=None, ci=None):
        """One backchannel GET read to its end (long polling), as (status, body)."""
        ci = ci if ci is not None else 1
        return self._request("GET", self._url(RID="rpc", SID=self.sid, AID=self.last_array_id if aid is None else aid,
                                              CI=ci, TYPE="xmlhttp"))

    def _deliver(self, array):
        self.last_array_id = array[0]
        payload = array[1]
        if payload in (["noop"],):
            return
        if payload and payload[0] in ("stop", "close"):
            self.messages.put(("closed", payload[0]))
            return
        # sendRawJson: each payload is [message] (the SDK takes data[0]).
        self.messages.put(payload[0] if len(payload) == 1 else payload)

    def _backchannel(self, opened=None):
        """Reads backchannels until stopped; `opened`: (connection, response) of one already open
        (a fast handshake's answer), read first."""
        while not self._stop.is_set():
            if opened:
                conn, resp = opened
                opened = None
            else:
                conn, resp = None, None
            try:
                if conn is None:
                    url = self._url(RID="rpc", SID=self.sid, AID=self.last_array_id, CI=1 if self.long_polling else 0,
                                    TYPE="xmlhttp")
                    conn = http.client.HTTPConnection(self.host, timeout=self.timeout + 60)
                    self._backchannel_conn = conn
                    conn.request("GET", url)
                    resp = conn.getresponse()
                if resp.status != 200:
                    body = resp.read().decode("utf-8", "replace")
                    self.messages.put(("closed", f"HTTP {resp.status} {body}"))
                    return
                text = ""
                decoder = __import__("codecs").getincrementaldecoder("utf-8")()
                while True:
                    data = resp.read1(65536)
                    if not data:
                        break
                    text += decoder.decode(data)
                    chunks, text = split_chunks(text)
                    for c in chunks:
                        for a in json.loads(c):
                            self.raw_arrays.append(a)
                            self._deliver(a)
            except (OSError, http.client.HTTPException) as e:
                if self._stop.is_set():
                    return
                self.messages.put(("closed", f"error {e}"))
                return
            finally:
                conn.close()
            if not self.long_polling:
                # A streaming backchannel that ends is reopened by the SDK too.
                continue

    def next(self, timeout=10):
        return self.messages.get(timeout=timeout)

    def drain(self, until, timeout=10):
        """Messages until `until(message)` holds (that one included)."""
        got = []
        while True:
            m = self.next(timeout)
            got.append(m)
            if until(m):
                return got
