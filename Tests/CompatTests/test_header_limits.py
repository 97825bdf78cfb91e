"""How much request line and headers each listener takes (`StartCommand.connectionMemory`): the S3
port holds what Amazon S3 accepts (a header section up to 8 KB, a presigned request line on a long
key) in 32 KiB of connection memory and answers 431 well before 64 KiB; the Google-facing ports
(Auth, Firestore, Storage) and the uploads API keep 64 KiB, so a 48 KiB header block still reaches
the service. Beyond each listener's memory libmicrohttpd answers 431 and closes
(test_connection_abuse.py sends 100 KiB to every port)."""
import os
import socket
import urllib.parse
import uuid

import boto3
import requests
from botocore.config import Config


def listener(name):
    u = urllib.parse.urlsplit(os.environ[f"HEARTH_{name.upper()}_URL"])
    return u.hostname, u.port


def first_status(host, port, data):
    """Sends `data` on a fresh connection; the status of the first answer (None if none came)."""
    with socket.create_connection((host, port), timeout=15) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        got = b""
        while b"\r\n" not in got:
            try:
                chunk = s.recv(4096)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            got += chunk
    line = got.split(b"\r\n", 1)[0].split(b" ")
    return int(line[1]) if len(line) > 1 and line[1].isdigit() else None


def header_bytes(request):
    """The size of a prepared request's header section as sent (name: value CRLF each)."""
    return sum(len(k) + 2 + len(v) + 2 for k, v in request.headers.items())


def test_s3_takes_an_8_kb_header_section_and_a_long_presigned_url():
    s3 = boto3.client("s3", config=Config(signature_version="s3v4", retries={"max_attempts": 1}))
    bucket = "hl-" + uuid.uuid4().hex[:16]
    s3.create_bucket(Bucket=bucket)
    key = "k/" + "é" * 300 + "x" * 400  # 1,002 bytes of UTF-8, ~2.2 KB percent-encoded
    sent = {}

    def pad(request, **_):
        # Fill the header section (signed, like any header the SDK sends) to just under 8 KB. Set
        # once: botocore's headers object appends a second field on a second assignment.
        request.headers["X-Hearth-Pad"] = "p" * (8000 - header_bytes(request) - len("X-Hearth-Pad: \r\n"))
        sent["size"] = header_bytes(request)

    s3.meta.events.register("before-sign.s3.PutObject", pad)
    s3.put_object(Bucket=bucket, Key=key, Body=b"hello", Metadata={"note": "m" * 1900})
    assert 7900 <= sent["size"] <= 8000
    got = s3.get_object(Bucket=bucket, Key=key)
    assert got["Body"].read() == b"hello" and got["Metadata"]["note"] == "m" * 1900
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600)
    assert len(url) > 2400
    r = requests.get(url, headers={"X-Pad": "q" * 7000}, timeout=15)
    assert r.status_code == 200 and r.content == b"hello", r.text[:300]
    s3.delete_object(Bucket=bucket, Key=key)
    s3.delete_bucket(Bucket=bucket)


def test_s3_refuses_a_header_block_past_its_32_kib():
    host, port = listener("s3")
    big = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nX-Big: ".encode() + b"a" * (40 << 10) + b"\r\n\r\n"
    assert first_status(host, port, big) == 431


def test_google_ports_take_a_48_kib_header_block():
    for name in ("auth", "firestore", "storage", "api"):
        host, port = listener(name)
        req = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nX-Big: ".encode() + b"a" * (48 << 10) + b"\r\n\r\n"
        status = first_status(host, port, req)
        assert status is not None and status != 431 and status < 500, f"{name}: 48 KiB of headers got {status}"
