"""Virtual-hosted-style addressing (`<bucket>.localhost:<port>`) with boto3.

`*.localhost` does not resolve everywhere, so the test points those names at the loopback address
inside this process, as a resolver that honours RFC 6761 would.
"""
import os
import socket
import urllib.parse
import uuid

import boto3
import pytest
from botocore.config import Config


@pytest.fixture
def localhost_resolves(monkeypatch):
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(".localhost"):
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_virtual_hosted_bucket_operations(localhost_resolves):
    port = urllib.parse.urlparse(os.environ["HEARTH_S3_URL"]).port
    s3 = boto3.client("s3", endpoint_url=f"http://localhost:{port}",
                      config=Config(s3={"addressing_style": "virtual"}, retries={"max_attempts": 1}))
    name = "v-" + uuid.uuid4().hex[:16]
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="dir/file name.txt", Body=b"virtual")
    assert s3.get_object(Bucket=name, Key="dir/file name.txt")["Body"].read() == b"virtual"
    listed = s3.list_objects_v2(Bucket=name, Delimiter="/")
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["dir/"]
    s3.delete_object(Bucket=name, Key="dir/file name.txt")
    s3.delete_bucket(Bucket=name)
