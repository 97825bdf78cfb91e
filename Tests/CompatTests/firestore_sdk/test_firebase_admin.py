"""firebase-admin's `firestore.client()`, as a Firebase backend builds it, against the emulator host."""
import os
import uuid

import pytest


def _owner_credential():
    """firebase-admin's `firestore.client()` asks the app's credential for Google credentials even with
    FIRESTORE_EMULATOR_HOST set (Application Default Credentials fail on a machine without any), so the
    app gets the emulator's admin credential (`Bearer owner`), as firebase-admin's own emulator helpers use."""
    from firebase_admin import _utils, credentials

    class Owner(credentials.Base):
        def get_credential(self):
            return _utils.EmulatorAdminCredentials()

    return Owner()


@pytest.fixture
def admin_db(emulator_host, monkeypatch):
    import firebase_admin
    from firebase_admin import firestore
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", emulator_host)
    app = firebase_admin.initialize_app(_owner_credential(), options={"projectId": os.environ.get("HEARTH_PROJECT", "demo-hearth")},
                                        name="fs-" + uuid.uuid4().hex[:8])
    yield firestore.client(app)
    firebase_admin.delete_app(app)


def test_admin_client_writes_queries_and_transacts(admin_db):
    from firebase_admin import firestore
    from google.cloud.firestore_v1.base_query import FieldFilter
    uid = "u" + uuid.uuid4().hex[:8]
    files = admin_db.collection("users").document(uid).collection("files")
    files.document("f1").set({"ownerUid": uid, "status": "ready", "size": 3, "createdAt": firestore.SERVER_TIMESTAMP})
    files.document("f2").set({"ownerUid": uid, "status": "pending", "size": 5})
    ready = [s.id for s in files.where(filter=FieldFilter("status", "==", "ready")).stream()]
    assert ready == ["f1"]

    @firestore.transactional
    def finish(txn):
        snap = files.document("f2").get(transaction=txn)
        txn.update(files.document("f2"), {"status": "ready", "size": snap.get("size") + 1})

    finish(admin_db.transaction())
    assert files.document("f2").get().to_dict() == {"ownerUid": uid, "status": "ready", "size": 6}
    assert files.count().get()[0][0].value == 2
