"""Fixtures for the S3 real-client suite (boto3, requests, the AWS CLI).

Everything reaches the emulator through the environment the session harness exports
(AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, HEARTH_S3_URL,
HEARTH_HUB_URL), exactly as an application would.
"""
import os
import uuid

import boto3
import pytest
import requests
from botocore.config import Config


def s3_url():
    return os.environ["HEARTH_S3_URL"]


def hub():
    return os.environ["HEARTH_HUB_URL"]


@pytest.fixture
def s3():
    """A default boto3 S3 client (path-style against the emulator, current SDK defaults)."""
    return boto3.client("s3", config=Config(retries={"max_attempts": 1}))


@pytest.fixture
def s3v4():
    """A client that presigns with SigV4 (boto3 presigns SigV2 for us-east-1 by default)."""
    return boto3.client("s3", config=Config(signature_version="s3v4", retries={"max_attempts": 1}))


@pytest.fixture
def bucket(s3):
    """A fresh, uniquely named bucket, emptied and deleted afterwards."""
    name = "t-" + uuid.uuid4().hex[:20]
    s3.create_bucket(Bucket=name)
    yield name
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                s3.delete_objects(Bucket=name, Delete={"Objects": keys, "Quiet": True})
        for u in s3.list_multipart_uploads(Bucket=name).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=name, Key=u["Key"], UploadId=u["UploadId"])
        s3.delete_bucket(Bucket=name)
    except Exception:
        pass


@pytest.fixture
def clock():
    """Moves the emulator clock; always returns it to system time afterwards."""

    def advance(seconds):
        r = requests.put(hub() + "/emulator/v1/clock", json={"advanceSeconds": seconds}, timeout=10)
        assert r.status_code == 200, r.text

    yield advance
    requests.put(hub() + "/emulator/v1/clock", json={"mode": "system"}, timeout=10)
