"""Crash safety: every write hearth acknowledged is still there after `kill -9` and a restart."""
import os
import shutil
import signal
import tempfile
import threading
import time

import boto3
import pytest
import requests
from botocore.config import Config

from hearthharness import start_hearth_on


def start_on(data_dir, ready):
    return start_hearth_on(data_dir, ready)


def test_acknowledged_writes_survive_kill_9():
    tmp = tempfile.mkdtemp(prefix="hearth-crash-")
    data_dir = os.path.join(tmp, "data")
    ready = os.path.join(tmp, "ready.json")
    proc, info = start_on(data_dir, ready)
    fs = info["services"]["firestore"]["url"]
    s3_url = info["services"]["s3"]["url"]
    project = info["project"]
    base = f"{fs}/v1/projects/{project}/databases/(default)/documents"
    owner = {"Authorization": "Bearer owner"}
    s3 = boto3.client("s3", endpoint_url=s3_url, aws_access_key_id="test", aws_secret_access_key="test",
                      region_name="us-east-1", config=Config(retries={"max_attempts": 0}))
    s3.create_bucket(Bucket="crash")

    acked_docs, acked_objects = [], []
    stop = threading.Event()

    def write_docs():
        i = 0
        session = requests.Session()
        while not stop.is_set():
            try:
                r = session.patch(f"{base}/crash/doc{i}", headers=owner,
                                  json={"fields": {"n": {"integerValue": str(i)}}}, timeout=5)
            except requests.RequestException:
                return
            if r.status_code == 200:
                acked_docs.append(i)
            i += 1

    def write_objects():
        i = 0
        while not stop.is_set():
            try:
                s3.put_object(Bucket="crash", Key=f"obj{i}", Body=os.urandom(1024) + str(i).encode())
            except Exception:
                return
            acked_objects.append(i)
            i += 1

    threads = [threading.Thread(target=write_docs), threading.Thread(target=write_objects)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    proc.send_signal(signal.SIGKILL)  # in the middle of the burst
    proc.wait()
    stop.set()
    for t in threads:
        t.join()
    assert len(acked_docs) > 10 and len(acked_objects) > 10

    proc, info = start_on(data_dir, ready)
    try:
        fs = info["services"]["firestore"]["url"]
        base = f"{fs}/v1/projects/{project}/databases/(default)/documents"
        session = requests.Session()
        for i in acked_docs:
            r = session.get(f"{base}/crash/doc{i}", headers=owner)
            assert r.status_code == 200, f"acknowledged doc{i} lost after kill -9"
            assert r.json()["fields"]["n"]["integerValue"] == str(i)
        s3 = boto3.client("s3", endpoint_url=info["services"]["s3"]["url"], aws_access_key_id="test",
                          aws_secret_access_key="test", region_name="us-east-1")
        for i in acked_objects:
            body = s3.get_object(Bucket="crash", Key=f"obj{i}")["Body"].read()
            assert body.endswith(str(i).encode()), f"acknowledged obj{i} lost or torn after kill -9"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        shutil.rmtree(tmp, ignore_errors=True)
