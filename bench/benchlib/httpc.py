"""Small HTTP clients for set-up, probing and large transfers (stdlib only, 127.0.0.1 only)."""
import http.client
import json
import socket
import time
import urllib.parse

LOOPBACK = ("127.0.0.1", "localhost")


class NotAvailable(Exception):
    """A Hearth endpoint is missing or failing: the scenario reports "n/a: <reason>" and the run goes on."""


class HarnessError(Exception):
    """The harness itself is broken (a ceiling or peer does not start, wrk fails): the run exits non-zero."""


def check_loopback(host):
    if host not in LOOPBACK:
        raise HarnessError(f"refusing to send load to {host}: benchmarks talk to 127.0.0.1 only")


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def snippet(self, n=160):
        text = self.body.decode("utf-8", "replace") if isinstance(self.body, bytes) else str(self.body)
        text = " ".join(text.split())
        return text[:n] + ("…" if len(text) > n else "")


class Client:
    """One keep-alive connection to 127.0.0.1:port; reconnects once when the server closed it."""

    def __init__(self, port, host="127.0.0.1", timeout=30):
        check_loopback(host)
        self.host, self.port, self.timeout = host, port, timeout
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, method, path, body=None, headers=None):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            headers = dict(headers or {})
            headers.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        for attempt in (0, 1):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request(method, path, body=body, headers=headers or {})
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.close()
                return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest, http.client.ResponseNotReady):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def describe_failure(what, r):
    """The n/a reason for an unexpected answer: 404/501 mean "not served yet"."""
    if r.status in (404, 501) and not r.body.lstrip().startswith(b"<?xml"):
        return f"{what} → {r.status} (not served yet): {r.snippet(100)}"
    return f"{what} → {r.status}: {r.snippet(160)}"


def expect(r, what, ok=(200,)):
    if r.status not in ok:
        raise NotAvailable(describe_failure(what, r))
    return r


def parse_url(url):
    """(host, port, path-and-query) of an http URL on loopback."""
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http":
        raise NotAvailable(f"unexpected URL scheme in {url}")
    check_loopback(u.hostname)
    return u.hostname, u.port or 80, u.path + ("?" + u.query if u.query else "")


def _read_head(sock):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before the response head")
        buf += chunk
        if len(buf) > 1 << 20:
            raise ConnectionError("response head too large")
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, rest


def _read_body(sock, headers, rest, keep=True, limit=None):
    """Reads a Content-Length body; returns (bytes or None, count). Discards when keep is False."""
    length = int(headers.get("content-length", "-1"))
    got = len(rest)
    kept = [rest] if keep else None
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    while length < 0 or got < length:
        n = sock.recv_into(view)
        if n == 0:
            break
        got += n
        if keep:
            kept.append(bytes(view[:n]))
        if limit and got > limit:
            break
    return (b"".join(kept) if keep else None), got


def upload_file(port, method, path, headers, file_path, size, timeout=600):
    """Sends `file_path` as the body with sendfile(2); returns (status, body, seconds from first byte sent
    to response read). A server that answers early (e.g. 403) is read even if the send breaks."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
        lines.append(f"Content-Length: {size}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        t0 = time.perf_counter()
        sock.sendall(head)
        try:
            with open(file_path, "rb") as f:
                sock.sendfile(f, 0, size)
        except (BrokenPipeError, ConnectionResetError):
            pass
        status, rheaders, rest = _read_head(sock)
        body, _ = _read_body(sock, rheaders, rest, keep=True, limit=1 << 20)
        return status, body, time.perf_counter() - t0
    finally:
        sock.close()


def download(port, path, headers, timeout=600):
    """GETs `path` and discards the body; returns (status, bytes received, seconds)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = [f"GET {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
        t0 = time.perf_counter()
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        status, rheaders, rest = _read_head(sock)
        _, n = _read_body(sock, rheaders, rest, keep=False)
        return status, n, time.perf_counter() - t0
    finally:
        sock.close()
