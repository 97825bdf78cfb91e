"""How much request line and headers each listener takes (`StartCommand.connectionMemory`): the S3
port holds what Amazon S3 accepts (a header section up to 8 KB, a presigned request line on a long
key) in 32 KiB of connection memory, refuses a header section over 8 KB with S3's XML error
(`RequestHeaderSectionTooLarge`, docs/s3.md *Limits*) and user metadata over 2 KB with
`MetadataTooLarge`, and answers libmicrohttpd's 431 well before 64 KiB; the Google-facing ports
(Auth, Firestore, Storage) and the uploads API keep 64 KiB, so a 48 KiB header block still reaches
the service. Beyond each listener's memory libmicrohttpd answers 431 and closes
(test_connection_abuse.py sends 100 KiB to every port)."""
import os
import socket
import urllib.parse
import uuid
import xml.etree.ElementTree as ET

import boto3
import requests
from botocore.config import Config
from botocore.exceptions import ClientError


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
        # Fill the header section (signed, like any header the SDK sends) to just under 8 KB once
        # signed: signing adds X-Amz-Date, x-amz-content-sha256 and Authorization (~400 bytes), and
        # http.client the Host field. Set once: botocore's headers object appends a second field on
        # a second assignment.
        request.headers["X-Hearth-Pad"] = "p" * (7600 - header_bytes(request) - len("X-Hearth-Pad: \r\n"))

    def measure(request, **_):
        host = "" if "Host" in request.headers else f"Host: {urllib.parse.urlsplit(request.url).netloc}\r\n"
        sent["size"] = header_bytes(request) + len(host)

    s3.meta.events.register("before-sign.s3.PutObject", pad)
    s3.meta.events.register("before-send.s3.PutObject", measure)
    s3.put_object(Bucket=bucket, Key=key, Body=b"hello", Metadata={"note": "m" * 1900})
    assert 7900 <= sent["size"] <= 8192, sent
    got = s3.get_object(Bucket=bucket, Key=key)
    assert got["Body"].read() == b"hello" and got["Metadata"]["note"] == "m" * 1900
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600)
    assert len(url) > 2400
    r = requests.get(url, headers={"X-Pad": "q" * 7000}, timeout=15)
    assert r.status_code == 200 and r.content == b"hello", r.text[:300]
    s3.delete_object(Bucket=bucket, Key=key)
    s3.delete_bucket(Bucket=bucket)


def raw_exchange(host, port, head):
    """Sends a bodiless request (`head` ends with its blank line) on a fresh connection that closes
    after the answer; the status, the header fields (lower-cased names) and the body."""
    with socket.create_connection((host, port), timeout=15) as s:
        s.sendall(head)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    top, _, body = got.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split(" ")[1]), fields, body


def sized_get(host, port, section):
    """An unsigned ListBuckets whose header section (name: value CRLF each) is `section` bytes."""
    fields = [f"Host: {host}:{port}\r\n", "Connection: close\r\n"]
    fixed = sum(len(f) for f in fields) + len("X-Pad: \r\n")
    fields.append("X-Pad: " + "p" * (section - fixed) + "\r\n")
    assert sum(len(f.encode()) for f in fields) == section
    return ("GET / HTTP/1.1\r\n" + "".join(fields) + "\r\n").encode()


def test_s3_refuses_a_header_section_over_8_kb_with_its_xml_error():
    host, port = listener("s3")
    status, _, body = raw_exchange(host, port, sized_get(host, port, 8192))
    assert status == 403 and ET.fromstring(body).findtext("Code") == "AccessDenied", body[:300]
    for size in (8193, 16 << 10, 30 << 10):
        status, fields, body = raw_exchange(host, port, sized_get(host, port, size))
        assert status == 400, (size, status, body[:300])
        assert fields["content-type"] == "application/xml"
        error = ET.fromstring(body)
        assert [e.tag for e in error] == ["Code", "Message", "MaxSizeAllowed", "RequestId", "HostId"]
        assert error.findtext("Code") == "RequestHeaderSectionTooLarge"
        assert error.findtext("Message") == "Your request header section exceeds the maximum allowed size."
        assert error.findtext("MaxSizeAllowed") == "8192"
        assert error.findtext("RequestId") == fields["x-amz-request-id"]
        assert error.findtext("HostId") == fields["x-amz-id-2"]


def test_s3_sdk_sees_header_section_and_metadata_errors():
    s3 = boto3.client("s3", config=Config(signature_version="s3v4", retries={"max_attempts": 1}))
    bucket = "hl-" + uuid.uuid4().hex[:16]
    s3.create_bucket(Bucket=bucket)

    def pad(request, **_):
        request.headers["X-Hearth-Pad"] = "p" * (8193 - header_bytes(request) - len("X-Hearth-Pad: \r\n"))

    try:
        s3.put_object(Bucket=bucket, Key="m", Body=b"x", Metadata={"a": "m" * 2047})
        try:
            s3.put_object(Bucket=bucket, Key="big", Body=b"x", Metadata={"a": "m" * 2048})
            raise AssertionError("2,049 bytes of metadata were taken")
        except ClientError as e:
            assert e.response["Error"]["Code"] == "MetadataTooLarge"
            assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
            assert e.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-request-id"]
        s3.meta.events.register("before-sign.s3.PutObject", pad)
        try:
            s3.put_object(Bucket=bucket, Key="padded", Body=b"x")
            raise AssertionError("an 8,193-byte header section was taken")
        except ClientError as e:
            assert e.response["Error"]["Code"] == "RequestHeaderSectionTooLarge"
            assert e.response["Error"]["Message"] == "Your request header section exceeds the maximum allowed size."
            assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
            assert e.response["ResponseMetadata"]["RequestId"] == e.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-request-id"]
        s3.meta.events.unregister("before-sign.s3.PutObject", pad)
        assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["m"]
    finally:
        for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=o["Key"])
        s3.delete_bucket(Bucket=bucket)


def test_s3_refuses_a_header_block_past_its_32_kib():
    # libmicrohttpd's own answer: it refuses before any handler runs (docs/s3.md, *Limits*).
    host, port = listener("s3")
    big = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nX-Big: ".encode() + b"a" * (40 << 10) + b"\r\n\r\n"
    assert first_status(host, port, big) == 431


def test_google_ports_take_a_48_kib_header_block():
    for name in ("auth", "firestore", "storage", "api"):
        host, port = listener(name)
        req = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\nX-Big: ".encode() + b"a" * (48 << 10) + b"\r\n\r\n"
        status = first_status(host, port, req)
        assert status is not None and status != 431 and status < 500, f"{name}: 48 KiB of headers got {status}"
