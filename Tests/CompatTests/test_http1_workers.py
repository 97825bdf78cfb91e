"""The Firestore listener's HTTP/1.1 connections go to its libmicrohttpd workers in turn, whatever
descriptor numbers the kernel gives them.

libmicrohttpd hands a socket added by the accept loop to worker `fd % pool size`, and the kernel gives
the lowest free number: in a long-lived process whose descriptor table has holes, a burst of new
connections landed on the workers those holes named — the bench's 16 transaction clients once 13 on one
worker of four (docs/benchmarks.md, txn37). The worker a connection went to is visible from outside as
its server-side descriptor number modulo 4 (`ss -p`), Hearth's default of four Firestore workers.
"""
import collections
import shutil
import socket
import subprocess
import time
from urllib.parse import urlparse

import pytest

WORKERS = 4  # hearth start's default --firestore-threads

pytestmark = pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read the server's descriptors")


def server_fds(port):
    """{client port: the server's descriptor number} of the established connections to `port`."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True, check=True).stdout
    fds = {}
    for line in out.splitlines():
        if "fd=" not in line:
            continue
        peer = int(line.split()[3].rsplit(":", 1)[1])
        fds[peer] = int(line.split("fd=")[1].split(")")[0].split(",")[0])
    return fds


def connect(port, n):
    """`n` keep-alive connections, each having had one request answered (so each is libmicrohttpd's)."""
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(f"GET /v1/projects/p/databases/(default)/documents/a/b HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert s.recv(65536).startswith(b"HTTP/1.1 ")
        socks.append(s)
    return socks


def workers_of(port, socks):
    """How many of `socks` each worker serves (by the server's descriptor number modulo WORKERS)."""
    for _ in range(50):
        fds = server_fds(port)
        mine = [fds.get(s.getsockname()[1]) for s in socks]
        if None not in mine:
            c = collections.Counter(fd % WORKERS for fd in mine)
            return [c.get(w, 0) for w in range(WORKERS)]
        time.sleep(0.1)
    pytest.fail("ss did not show every connection with its descriptor")


def test_a_burst_of_connections_is_spread_over_the_workers_despite_holes_in_the_descriptor_table(hearth):
    port = urlparse(hearth["services"]["firestore"]["url"]).port
    held = connect(port, 48)
    fresh = []
    try:
        # Holes: the idle connections one worker serves are closed, the others kept open. Without the
        # turn, the next connections filled those holes first and most went to that one worker.
        fds = server_fds(port)
        for s in list(held):
            if fds.get(s.getsockname()[1], -1) % WORKERS == WORKERS - 1:
                s.close()
                held.remove(s)
        assert len(held) < 48
        time.sleep(0.5)  # the server closes its ends: free numbers below the ones still open
        fresh = connect(port, 16)
        assert workers_of(port, fresh) == [4, 4, 4, 4]
        # The connections still work after being renumbered: a second request on each is answered.
        for s in fresh:
            s.sendall(f"GET /v1/projects/p/databases/(default)/documents/a/c HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert s.recv(65536).startswith(b"HTTP/1.1 ")
    finally:
        for s in held + fresh:
            s.close()
