"""google-cloud-firestore's AsyncClient (grpc.aio underneath), unmodified, against Hearth and the official
emulator with the same assertions: what an async backend (FastAPI, aiohttp) and its tests do."""
import asyncio
import os
import uuid

import pytest
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter


@pytest.fixture
def run(emulator_host, monkeypatch):
    """Runs `body(client)` on a fresh event loop with an AsyncClient on the target."""
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", emulator_host)

    def runner(body):
        async def main():
            client = firestore.AsyncClient(project=os.environ.get("HEARTH_PROJECT", "demo-hearth"),
                                           credentials=AnonymousCredentials())
            try:
                return await body(client, client.collection("as" + uuid.uuid4().hex[:10]))
            finally:
                client.close()
        return asyncio.run(main())
    return runner


def test_async_crud_and_errors(run):
    async def body(db, c):
        ref = c.document("a")
        await ref.create({"v": 1, "m": {"x": 1}})
        with pytest.raises(exceptions.AlreadyExists):
            await ref.create({"v": 2})
        with pytest.raises(exceptions.NotFound):
            await c.document("missing").update({"v": 1})
        await ref.update({"m.y": 2, "v": firestore.Increment(1), "tags": firestore.ArrayUnion(["t"])})
        snap = await ref.get()
        assert snap.to_dict() == {"v": 2, "m": {"x": 1, "y": 2}, "tags": ["t"]}
        with pytest.raises(exceptions.FailedPrecondition):
            await ref.update({"v": 3}, option=db.write_option(last_update_time=snap.create_time))
        await ref.set({"w": 1}, merge=True)
        assert (await ref.get(["w", "v"])).to_dict() == {"w": 1, "v": 2}
        await ref.delete()
        assert not (await ref.get()).exists
        _, added = await c.add({"n": 1})
        assert len(added.id) == 20
    run(body)


def test_async_queries_aggregations_and_listings(run):
    async def body(db, c):
        for i in range(6):
            await c.document(f"d{i}").set({"n": i, "even": i % 2 == 0})
        await c.document("d0").collection("sub").document("s").set({"n": 99})
        q = c.where(filter=FieldFilter("even", "==", True)).order_by("n", direction=firestore.Query.DESCENDING)
        assert [s.id async for s in q.stream()] == ["d4", "d2", "d0"]
        assert [s.id for s in await q.limit(2).get()] == ["d4", "d2"]
        assert [s.id for s in await c.order_by("n").limit_to_last(2).get()] == ["d4", "d5"]
        assert (await c.count().get())[0][0].value == 6
        total = await c.sum("n", alias="s").get()
        assert total[0][0].value == 15
        avg = await c.avg("n").get()
        assert avg[0][0].value == 2.5
        assert [s.id async for s in db.collection_group("sub").stream() if s.reference.parent.parent.parent.id == c.id] == ["s"]
        assert [d.id async for d in c.list_documents(page_size=4)] == [f"d{i}" for i in range(6)]
        assert [x.id async for x in c.document("d0").collections()] == ["sub"]
        snaps = [s async for s in db.get_all([c.document("d1"), c.document("nope")])]
        assert sorted((s.id, s.exists) for s in snaps) == [("d1", True), ("nope", False)]
        with pytest.raises(exceptions.InvalidArgument):
            [s async for s in c.where(filter=FieldFilter("n", "in", list(range(31)))).stream()]
    run(body)


def test_async_transactions_batches_and_recursive_delete(run):
    async def body(db, c):
        await c.document("acct").set({"balance": 10})

        @firestore.async_transactional
        async def spend(txn, amount):
            snap = await c.document("acct").get(transaction=txn)
            if snap.get("balance") < amount:
                raise ValueError("insufficient")
            txn.update(c.document("acct"), {"balance": snap.get("balance") - amount})
            txn.create(c.document(f"spent{amount}"), {"amount": amount})

        await spend(db.transaction(), 3)
        with pytest.raises(ValueError):
            await spend(db.transaction(), 100)
        assert (await c.document("acct").get()).get("balance") == 7
        assert not (await c.document("spent100").get()).exists

        @firestore.async_transactional
        async def duplicate(txn):
            txn.create(c.document("spent3"), {"amount": 0})

        with pytest.raises(exceptions.AlreadyExists):
            await duplicate(db.transaction())

        batch = db.batch()
        batch.set(c.document("b1"), {"x": 1})
        batch.update(c.document("absent"), {"x": 1})
        with pytest.raises(exceptions.NotFound):
            await batch.commit()
        assert not (await c.document("b1").get()).exists

        await c.document("acct").collection("log").document("l1").set({"x": 1})
        assert await db.recursive_delete(c) == 3
        assert [d async for d in c.list_documents()] == []
    run(body)


def test_async_read_only_transaction_refuses_writes(run):
    async def body(db, c):
        await c.document("r").set({"v": 1})

        @firestore.async_transactional
        async def write(txn):
            await c.document("r").get(transaction=txn)
            txn.update(c.document("r"), {"v": 2})

        with pytest.raises(ValueError):  # the SDK refuses before sending
            await write(db.transaction(read_only=True))
        # The server refuses it too, for a client that sends it anyway.
        api, meta = db._firestore_api, db._rpc_metadata
        began = await api.begin_transaction(request={"database": db._database_string, "options": {"read_only": {}}},
                                            metadata=meta)
        write_pb = {"update": {"name": c.document("r")._document_path, "fields": {"v": {"integer_value": 2}}}}
        with pytest.raises(exceptions.GoogleAPICallError) as info:
            await api.commit(request={"database": db._database_string, "writes": [write_pb],
                                      "transaction": began.transaction}, metadata=meta)
        assert (type(info.value).__name__, info.value.message) == \
            ("InvalidArgument", "Cannot modify entities in a read-only transaction.")
        assert (await c.document("r").get()).get("v") == 1
    run(body)
