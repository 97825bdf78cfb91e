"""Connection abuse on every port of a running hearth (docs/reliability.md, issue 19): slowloris
headers and bodies, a header block over 64 KiB, pipelined garbage in HTTP/1.1 and after the
HTTP/2 preface, and 1,000 idle connections (the per-listener cap) — each port in turn, while every
other client keeps being served and memory stays bounded.

`ConnectionAbuseTests` (HearthHTTPTests) checks the same on one in-process listener with short
timeouts, including that idle and slowloris sockets are reclaimed at the idle timeout; here it is
the real binary, every listener it opens (the Firestore port on Hearth's own accept loop with
HTTP/2, the others on libmicrohttpd's), with its real limits (60 s idle timeout, 1,000
connections, 64 KiB of header memory per connection — 32 KiB on the S3 port, so 64 KiB bounds
every port: test_header_limits.py checks each port's own limit)."""
import os
import resource
import signal
import socket
import subprocess
import time
import urllib.parse

import pytest
import requests

from hearthharness import start_hearth

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
CAP = 1000               # HTTPServer.Configuration.connectionLimit, every listener
HEADER_MEMORY = 64 << 10  # the largest listener's connectionMemoryLimit (StartCommand.connectionMemory)


@pytest.fixture(scope="module")
def hearth_alone():
    """A hearth of its own: the abuse must not disturb the session's shared one. Its descriptor
    limit is raised first (it inherits ours) so that the caps, not the limit, are what is met."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4 * CAP + 1024
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"the descriptor limit ({hard}) is below the {want} this test needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    proc, ready, _ = start_hearth()
    yield proc, ready
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def ports(ready):
    """(name, host, port) of every listener in the ready file."""
    out = []
    for name, s in sorted(ready["services"].items()):
        u = urllib.parse.urlsplit(s["url"])
        out.append((name, u.hostname, u.port))
    return out


def served(host, port):
    """A fresh client gets a well-formed answer below 500 (each port's own 404s and 403s count)."""
    r = requests.get(f"http://{host}:{port}/", headers={"Connection": "close"}, timeout=15)
    return r.status_code < 500


def assert_all_served(ready, proc, but=None):
    assert proc.poll() is None, f"hearth exited with {proc.returncode}"
    for name, host, port in ports(ready):
        if name != but:
            assert served(host, port), f"{name} did not serve a plain request"


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def exchange(host, port, data, wait=10.0):
    """Sends `data` (tolerating the peer closing mid-send) and reads until the peer closes or
    `wait` seconds pass: (bytes received, closed by the peer)."""
    s = socket.create_connection((host, port), timeout=wait)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        got = b""
        deadline = time.time() + wait
        while time.time() < deadline:
            s.settimeout(max(0.05, deadline - time.time()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return got, False
            except ConnectionResetError:
                return got, True
            if not chunk:
                return got, True
            got += chunk
        return got, False
    finally:
        s.close()


def status_of(raw):
    line = raw.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    return int(parts[1]) if len(parts) > 1 and line.startswith(b"HTTP/1.") and parts[1].isdigit() else None


def test_oversized_headers_garbage_and_h2_garbage_are_refused_on_every_port(hearth_alone):
    proc, ready = hearth_alone
    for name, host, port in ports(ready):
        authority = f"{host}:{port}".encode()
        # A header block past the 64 KiB of connection memory: 431 and a close.
        big = b"GET / HTTP/1.1\r\nHost: " + authority + b"\r\nX-Big: " + b"a" * (HEADER_MEMORY + (36 << 10)) + b"\r\n\r\n"
        raw, closed = exchange(host, port, big)
        assert status_of(raw) == 431 and closed, f"{name}: {HEADER_MEMORY >> 10}+ KiB of headers got {raw[:80]!r}, closed={closed}"
        # Pipelined garbage: 400 and a close.
        raw, closed = exchange(host, port, b"GARBAGE \x01\x02 NOT HTTP\r\n\r\n" * 2000)
        assert status_of(raw) == 400 and closed, f"{name}: garbage got {raw[:80]!r}, closed={closed}"
        # A good request and garbage behind it on the same connection: the first is answered, then
        # the garbage gets 400 and the connection closes.
        raw, closed = exchange(host, port, b"GET / HTTP/1.1\r\nHost: " + authority + b"\r\n\r\n" + b"\xff\xfe NOT HTTP\r\n\r\n" * 100)
        assert status_of(raw) is not None and status_of(raw) < 500 and b"HTTP/1.1 400" in raw and closed, \
            f"{name}: request then garbage got {raw[:120]!r}, closed={closed}"
        # The HTTP/2 preface then garbage frames: a GOAWAY where HTTP/2 is served (a frame of type 7
        # after our SETTINGS), 505 elsewhere (libmicrohttpd); the connection closes either way.
        raw, closed = exchange(host, port, PREFACE + b"\x00\x00\x08\x07\x00\x00\x00\x00\x00" + os.urandom(4096))
        assert closed, f"{name}: HTTP/2 garbage left the connection open"
        if name == "firestore":
            assert goaway_in(raw), f"{name}: HTTP/2 garbage got {raw[:80]!r}, no GOAWAY"
        else:
            assert status_of(raw) == 505, f"{name}: the HTTP/2 preface got {raw[:80]!r}"
        assert_all_served(ready, proc)


def goaway_in(raw):
    """Whether the server's HTTP/2 frames include a GOAWAY (type 7)."""
    i = 0
    while i + 9 <= len(raw):
        length = int.from_bytes(raw[i:i + 3], "big")
        if raw[i + 3] == 7:
            return True
        i += 9 + length
    return False


def test_slowloris_headers_and_bodies_do_not_starve_anyone(hearth_alone):
    proc, ready = hearth_alone
    before = rss_mib(proc.pid)
    slow = []
    for name, host, port in ports(ready):
        authority = f"{host}:{port}".encode()
        for i in range(20):
            # Half a header block, never the blank line.
            h = socket.create_connection((host, port), timeout=5)
            h.sendall(b"GET / HTTP/1.1\r\nHost: " + authority + b"\r\nX-Slow: ")
            # A whole header block announcing a 1 MiB body that arrives a byte at a time.
            b = socket.create_connection((host, port), timeout=5)
            b.sendall(b"PUT /slow/body-" + str(i).encode() + b" HTTP/1.1\r\nHost: " + authority
                      + b"\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\n")
            slow += [(name, h), (name, b)]
    for _ in range(3):
        time.sleep(0.5)
        for name, c in slow:
            try:
                c.sendall(b"x")
            except OSError:
                pass  # answered early (a 4xx before the body) and closed: fine
        assert_all_served(ready, proc)
    # 280 slow clients hold at most their header memory each.
    grown = rss_mib(proc.pid) - before
    assert grown < len(slow) * HEADER_MEMORY / 2**20 + 32, f"RSS grew {grown:.1f} MiB for {len(slow)} slow clients"
    for _, c in slow:
        c.close()
    assert_all_served(ready, proc)


def test_a_thousand_idle_connections_on_each_port(hearth_alone):
    proc, ready = hearth_alone
    assert_all_served(ready, proc)
    baseline = rss_mib(proc.pid)
    peak = baseline
    for name, host, port in ports(ready):
        idle = []
        try:
            for _ in range(CAP):
                idle.append(socket.create_connection((host, port), timeout=10))
            time.sleep(0.5)
            peak = max(peak, rss_mib(proc.pid))
            # Every other port is served while this one is at its cap.
            assert_all_served(ready, proc, but=name)
            # A client past the cap is closed at once (Hearth's own accept loop) or waits in the
            # listen backlog (libmicrohttpd stops accepting at its limit) — but once the idle
            # sockets go, it is answered or closed, never left hanging.
            extra = socket.create_connection((host, port), timeout=10)
            try:
                extra.sendall(f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
            except OSError:
                pass
        finally:
            for c in idle:
                c.close()
        extra.settimeout(15)
        try:
            answer = extra.recv(65536)
        except ConnectionResetError:
            answer = b""
        except socket.timeout:
            pytest.fail(f"{name}: a client queued past the cap was neither answered nor closed after the cap was given back")
        finally:
            extra.close()
        assert answer == b"" or status_of(answer) is not None, f"{name}: past the cap got {answer[:80]!r}"
        # The cap is given back as the idle sockets close: this port serves again.
        deadline = time.time() + 15
        while True:
            try:
                if served(host, port):
                    break
            except requests.RequestException:
                pass
            assert time.time() < deadline, f"{name} did not serve again after its idle connections closed"
            time.sleep(0.2)
    # What 1,000 idle connections may hold is bounded by the cap times the header memory.
    assert peak - baseline < CAP * HEADER_MEMORY / 2**20 + 32, f"RSS rose {peak - baseline:.1f} MiB with {CAP} idle connections"
    assert_all_served(ready, proc)
