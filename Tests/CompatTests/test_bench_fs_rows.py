"""The SQLite ceiling of the bench's Firestore create (`bench/ceilings/fs_rows.h`, through
`firestore_rows.c`; the floor servers share it) writes the row Hearth writes: the same
`fs_documents` columns, no secondary index on it, no `fs_index` rows, and byte for byte the same key,
collection id and fields size for the same create of users/{uid}/files/{id} — so a ceiling is not
priced with rows Hearth stopped writing (the `parent` column, `firestore.10`; its index,
`firestore.9`; the collection-group index, `firestore.8`; index rows of fields no query registered)."""
import os
import shutil
import sqlite3
import subprocess
import tempfile

import pytest
import requests

from hearthharness import REPO, start_hearth_on, stop_hearth

OWNER = {"Authorization": "Bearer owner"}
# The ceiling's user and first document (fs_rows.h, firestore_rows.c's ids).
UID = "Xq3vB9kLm2PzR7tY1wNc5hJd8sFa"
DOC_ID = "m-0-0"


def bench_create(info):
    """The bench's create (bench/benchlib/firebase.py: file_fields, create_write) of users/UID/files/DOC_ID."""
    root = f"projects/{info['project']}/databases/(default)/documents"
    base = f"{info['services']['firestore']['url']}/v1/{root}"
    fields = {
        "ownerUid": {"stringValue": UID},
        "storage": {"stringValue": "s3"},
        "s3Key": {"stringValue": f"users/{UID}/uploads/0b5c7d1e-6a6b-4c1e-9d55-0123456789ab.jpg"},
        "contentType": {"stringValue": "image/jpeg"},
        "status": {"stringValue": "ready"},
    }
    write = {"update": {"name": f"{root}/users/{UID}/files/{DOC_ID}", "fields": fields},
             "updateTransforms": [{"fieldPath": "createdAt", "setToServerValue": "REQUEST_TIME"}],
             "currentDocument": {"exists": False}}
    r = requests.post(f"{base}:commit", headers=OWNER, json={"writes": [write]}, timeout=30)
    assert r.status_code == 200, r.text


def shape(path):
    """What a create left in a Firestore file: fs_documents' columns and indexes, the index rows, the row."""
    db = sqlite3.connect(path)
    try:
        columns = [(r[1], r[2].upper(), r[3], r[5]) for r in db.execute("PRAGMA table_info(fs_documents)")]
        indexes = [r[1] for r in db.execute("PRAGMA index_list(fs_documents)") if r[3] == "c"]
        index_rows = db.execute("SELECT count(*) FROM fs_index").fetchone()[0]
        rows = db.execute("SELECT space, key, collection_id, length(fields), create_time = update_time FROM fs_documents").fetchall()
        return {"columns": columns, "indexes": indexes, "index_rows": index_rows, "rows": rows}
    finally:
        db.close()


@pytest.fixture(scope="module")
def firestore_rows():
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    out = os.path.join(tempfile.mkdtemp(prefix="hearth-fsrows-bin-"), "firestore_rows")
    r = subprocess.run([cc, "-O2", "-Wall", "-o", out, os.path.join(REPO, "bench", "ceilings", "firestore_rows.c"), "-lsqlite3"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def test_the_ceiling_writes_the_row_hearth_writes(firestore_rows):
    tmp = tempfile.mkdtemp(prefix="hearth-fsrows-")
    try:
        data_dir, ready = os.path.join(tmp, "data"), os.path.join(tmp, "ready.json")
        proc, info = start_hearth_on(data_dir, ready)
        try:
            bench_create(info)
        finally:
            stop_hearth(proc)
        hearth = shape(os.path.join(data_dir, "firestore.sqlite"))

        ceiling_db = os.path.join(tmp, "ceiling.db")
        r = subprocess.run([firestore_rows, ceiling_db, "1", "1", "200", "inline"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        ceiling = shape(ceiling_db)

        assert hearth["rows"] and hearth["rows"][0][1].endswith(b"files\x00\x01m-0-0\x00\x01")
        assert ceiling == hearth
        assert hearth["indexes"] == [] and hearth["index_rows"] == 0
        assert [c[0] for c in hearth["columns"]] == ["space", "key", "collection_id", "fields", "create_time", "update_time"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_parts_hearth_writes_only_later_can_be_added(firestore_rows):
    """`+index` and `+group` price what Hearth writes once a query needed it; the default leaves them out."""
    tmp = tempfile.mkdtemp(prefix="hearth-fsrows-")
    try:
        db = os.path.join(tmp, "added.db")
        r = subprocess.run([firestore_rows, db, "3", "1", "200", "inline", "+index,+group"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        added = shape(db)
        assert added["index_rows"] == 3 * 6
        assert added["indexes"] == ["fs_documents_group"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
