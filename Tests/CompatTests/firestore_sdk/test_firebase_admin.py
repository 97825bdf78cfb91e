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


def test_admin_errors_transforms_and_listings(admin_db):
    """What a Firebase backend's tests assert through firebase-admin: the same statuses and documents."""
    from firebase_admin import firestore
    from google.api_core import exceptions
    from google.cloud.firestore_v1.base_query import FieldFilter
    c = admin_db.collection("adm" + uuid.uuid4().hex[:8])
    ref = c.document("p")
    ref.create({"tags": ["a"], "n": 1, "profile": {"name": "x"}})
    with pytest.raises(exceptions.AlreadyExists):
        ref.create({})
    with pytest.raises(exceptions.NotFound):
        c.document("nobody").update({"n": 1})
    ref.update({"tags": firestore.ArrayUnion(["b", "a"]), "n": firestore.Increment(2), "profile.name": firestore.DELETE_FIELD,
                "seen": firestore.SERVER_TIMESTAMP})
    got = ref.get().to_dict()
    assert got["tags"] == ["a", "b"] and got["n"] == 3 and got["profile"] == {} and got["seen"] is not None
    c.document("q").collection("inner").document("i").set({"n": 5})
    assert [d.id for d in c.list_documents()] == ["p", "q"]
    assert admin_db.recursive_delete(c.document("q")) == 2
    assert [s.id for s in c.where(filter=FieldFilter("n", ">", 0)).stream()] == ["p"]
    with pytest.raises(exceptions.InvalidArgument):
        list(c.where(filter=FieldFilter("n", "not-in", list(range(11)))).stream())


def test_admin_async_client(emulator_host, monkeypatch):
    import asyncio
    import firebase_admin
    from firebase_admin import firestore, firestore_async
    from google.api_core import exceptions
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", emulator_host)
    app = firebase_admin.initialize_app(_owner_credential(), options={"projectId": os.environ.get("HEARTH_PROJECT", "demo-hearth")},
                                        name="fsa-" + uuid.uuid4().hex[:8])

    async def body():
        db = firestore_async.client(app)
        c = db.collection("adma" + uuid.uuid4().hex[:8])
        await c.document("a").set({"n": 1})
        with pytest.raises(exceptions.NotFound):
            await c.document("b").update({"n": 1})

        @firestore.async_transactional
        async def bump(txn):
            snap = await c.document("a").get(transaction=txn)
            txn.update(c.document("a"), {"n": snap.get("n") + 1})

        await bump(db.transaction())
        assert (await c.document("a").get()).to_dict() == {"n": 2}
        assert (await c.count().get())[0][0].value == 1
        db.close()

    try:
        asyncio.run(body())
    finally:
        firebase_admin.delete_app(app)
