"""Firestore's own database file: `firestore.sqlite` with 4 KiB pages beside `hearth.sqlite` (16 KiB,
the other services), and data directories of the older one-file layout moving over at start, however
often a start is killed (`kill -9`) while it moves them."""
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time

import boto3
import requests
from botocore.config import Config

from hearthharness import hearth_bin, start_hearth_on, stop_hearth

OWNER = {"Authorization": "Bearer owner"}


def urls(info):
    base = f"{info['services']['firestore']['url']}/v1/projects/{info['project']}/databases/(default)/documents"
    s3 = boto3.client("s3", endpoint_url=info["services"]["s3"]["url"], aws_access_key_id="test", aws_secret_access_key="test",
                      region_name="us-east-1", config=Config(retries={"max_attempts": 0}))
    return base, s3


def page_size(path):
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()


def fs_tables(path):
    db = sqlite3.connect(path)
    try:
        return [r[0] for r in db.execute(r"SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'fs\_%' ESCAPE '\'")]
    finally:
        db.close()


def write_documents(base, count):
    """`count` documents in batches of one commit each; returns their REST JSON by name."""
    session = requests.Session()
    root = base.split("/v1/", 1)[1]
    for start in range(0, count, 250):
        writes = [{"update": {"name": f"{root}/moved/d{i}", "fields": {"n": {"integerValue": str(i)}}}} for i in range(start, min(count, start + 250))]
        r = session.post(f"{base}:commit", headers=OWNER, json={"writes": writes})
        assert r.status_code == 200, r.text
    return read_documents(base, count)


def read_documents(base, count):
    session = requests.Session()
    out = {}
    for i in range(count):
        r = session.get(f"{base}/moved/d{i}", headers=OWNER)
        assert r.status_code == 200, f"moved/d{i}: {r.status_code} {r.text}"
        out[r.json()["name"]] = r.json()
    return out


def to_old_layout(data_dir):
    """Rewrites a stopped data directory into the layout of hearth before Firestore had its own file:
    Firestore's tables, rows and migration records in hearth.sqlite, no firestore.sqlite."""
    main, own = os.path.join(data_dir, "hearth.sqlite"), os.path.join(data_dir, "firestore.sqlite")
    db = sqlite3.connect(main, isolation_level=None)
    db.execute("ATTACH DATABASE ? AS own", (own,))
    db.execute("BEGIN")
    objects = db.execute(r"SELECT type, name, sql FROM own.sqlite_master WHERE name LIKE 'fs\_%' ESCAPE '\' AND sql IS NOT NULL "
                         "ORDER BY type = 'index'").fetchall()
    for kind, name, sql in objects:
        db.execute(sql)
        if kind == "table":
            db.execute(f'INSERT INTO main."{name}" SELECT * FROM own."{name}"')
    db.execute("INSERT INTO main.hearth_migrations SELECT * FROM own.hearth_migrations WHERE id LIKE 'firestore.%'")
    db.execute("COMMIT")
    db.execute("DETACH DATABASE own")
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(own + suffix):
            os.remove(own + suffix)


def test_firestore_has_its_own_small_page_file_and_s3_keeps_large_pages():
    tmp = tempfile.mkdtemp(prefix="hearth-fsfile-")
    try:
        data_dir, ready = os.path.join(tmp, "data"), os.path.join(tmp, "ready.json")
        proc, info = start_hearth_on(data_dir, ready)
        try:
            base, s3 = urls(info)
            write_documents(base, 3)
            s3.create_bucket(Bucket="pages")
            s3.put_object(Bucket="pages", Key="k", Body=b"x" * 100_000)
        finally:
            stop_hearth(proc)
        assert proc.returncode == 0
        assert page_size(os.path.join(data_dir, "firestore.sqlite")) == 4096
        assert page_size(os.path.join(data_dir, "hearth.sqlite")) == 16384
        assert fs_tables(os.path.join(data_dir, "hearth.sqlite")) == []
        assert "fs_documents" in fs_tables(os.path.join(data_dir, "firestore.sqlite"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_old_layout_moves_over_even_when_starts_are_killed_mid_move():
    tmp = tempfile.mkdtemp(prefix="hearth-fsmove-")
    try:
        data_dir, ready = os.path.join(tmp, "data"), os.path.join(tmp, "ready.json")
        proc, info = start_hearth_on(data_dir, ready)
        try:
            base, s3 = urls(info)
            documents = write_documents(base, 2000)
            s3.create_bucket(Bucket="kept")
            s3.put_object(Bucket="kept", Key="k", Body=b"s3 stays in hearth.sqlite")
        finally:
            stop_hearth(proc)
        assert proc.returncode == 0

        # Each round: the old layout, a start killed at some point of the move, then a start that must
        # come up with every document.
        for delay in (0.0, 0.01, 0.03, 0.06, 0.1, 0.2, None):
            to_old_layout(data_dir)
            assert "fs_documents" in fs_tables(os.path.join(data_dir, "hearth.sqlite"))
            assert not os.path.exists(os.path.join(data_dir, "firestore.sqlite"))
            if delay is not None:
                if os.path.exists(ready):
                    os.remove(ready)
                killed = subprocess.Popen(
                    [hearth_bin(), "start", "--data-dir", data_dir, "--ready-file", ready, "--quiet",
                     "--hub-port", "0", "--auth-port", "0", "--firestore-port", "0", "--s3-port", "0", "--api-port", "0",
                     "--ui-port", "0", "--storage-port", "0"])
                time.sleep(delay)
                killed.kill()
                killed.wait()
            proc, info = start_hearth_on(data_dir, ready)
            try:
                base, s3 = urls(info)
                assert read_documents(base, 2000) == documents
                assert s3.get_object(Bucket="kept", Key="k")["Body"].read() == b"s3 stays in hearth.sqlite"
            finally:
                stop_hearth(proc)
            assert proc.returncode == 0
            assert fs_tables(os.path.join(data_dir, "hearth.sqlite")) == []
            assert page_size(os.path.join(data_dir, "firestore.sqlite")) == 4096
            assert page_size(os.path.join(data_dir, "hearth.sqlite")) == 16384
            assert not os.path.exists(os.path.join(data_dir, "firestore.sqlite.moving"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
