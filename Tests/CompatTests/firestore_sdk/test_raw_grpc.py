"""Raw grpcio calls as the iOS SDK makes them: end-user ID tokens from Hearth's Auth port in the
`authorization` metadata, the shipped rules, the Write stream's handshake and pipelining, and the
Listen stream message by message (bad target ids, resumes, slow readers, many targets).
Hearth only (the official emulator runs with open rules in this suite), but for the last test,
which checks on the official emulator the differences the docs list."""
import hashlib
import os
import queue
import threading
import time
import uuid

import grpc
import pytest
import requests
from google.cloud.firestore_v1 import types
from google.protobuf import timestamp_pb2  # noqa: F401  (types need it loaded)

SERVICE = "/google.firestore.v1.Firestore/"


@pytest.fixture(scope="module")
def channel(hearth):
    ch = grpc.insecure_channel(os.environ["FIRESTORE_EMULATOR_HOST"])
    yield ch
    ch.close()


def database():
    return f"projects/{os.environ['HEARTH_PROJECT']}/databases/(default)"


def sign_up():
    """A new end user signed up through Hearth's Auth emulator: (uid, ID token)."""
    auth = os.environ["FIREBASE_AUTH_EMULATOR_HOST"]
    r = requests.post(f"http://{auth}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake",
                      json={"email": f"{uuid.uuid4().hex[:10]}@example.com", "password": "secret-pass", "returnSecureToken": True})
    assert r.status_code == 200, r.text
    return r.json()["localId"], r.json()["idToken"]


def metadata(token):
    return [("authorization", "Bearer " + token), ("google-cloud-resource-prefix", database()),
            ("x-goog-request-params", database())]


def file_write(uid, file_id):
    name = f"{database()}/documents/users/{uid}/files/{file_id}"
    fields = {"ownerUid": types.Value(string_value=uid), "storage": types.Value(string_value="s3"),
              "s3Key": types.Value(string_value=f"users/{uid}/uploads/{uuid.uuid4()}.jpg"),
              "contentType": types.Value(string_value="image/jpeg"), "status": types.Value(string_value="ready")}
    return types.Write(update=types.Document(name=name, fields=fields),
                       update_transforms=[types.DocumentTransform.FieldTransform(
                           field_path="createdAt", set_to_server_value=types.DocumentTransform.FieldTransform.ServerValue.REQUEST_TIME)],
                       current_document=types.Precondition(exists=False))


def unary(channel, method, request_type, response_type):
    return channel.unary_unary(SERVICE + method, request_serializer=request_type.serialize,
                               response_deserializer=response_type.deserialize)


def test_shipped_rules_allow_the_owner_and_deny_another_user(channel):
    alice, alice_token = sign_up()
    _, bob_token = sign_up()
    commit = unary(channel, "Commit", types.CommitRequest, types.CommitResponse)
    got = commit(types.CommitRequest(database=database(), writes=[file_write(alice, "f1")]), metadata=metadata(alice_token))
    assert len(got.write_results) == 1
    get = unary(channel, "GetDocument", types.GetDocumentRequest, types.Document)
    name = f"{database()}/documents/users/{alice}/files/f1"
    doc = get(types.GetDocumentRequest(name=name), metadata=metadata(alice_token))
    assert doc.fields["ownerUid"].string_value == alice
    with pytest.raises(grpc.RpcError) as denied:
        get(types.GetDocumentRequest(name=name), metadata=metadata(bob_token))
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "false for 'get'" in denied.value.details()
    with pytest.raises(grpc.RpcError) as denied:
        commit(types.CommitRequest(database=database(), writes=[file_write(alice, "f2")]), metadata=metadata(bob_token))
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as missing:
        get(types.GetDocumentRequest(name=f"{database()}/documents/users/{alice}/files/nope"), metadata=metadata(alice_token))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert missing.value.details() == f'Document ({database()}/documents/users/{alice}/files/nope) not found.'


def test_unknown_method_is_unimplemented(channel):
    call = channel.unary_unary(SERVICE + "Nope", request_serializer=lambda b: b, response_deserializer=lambda b: b)
    with pytest.raises(grpc.RpcError) as e:
        call(b"")
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert e.value.details() == "Method not found: google.firestore.v1.Firestore/Nope"


def test_write_stream_as_the_ios_sdk_drives_it(channel):
    uid, token = sign_up()
    write = channel.stream_stream(SERVICE + "Write", request_serializer=types.WriteRequest.serialize,
                                  response_deserializer=types.WriteResponse.deserialize)
    other, _ = sign_up()
    # Handshake, then three pipelined batches: the second is denied (another user's path), so the
    # third must not be applied and the stream ends with PERMISSION_DENIED.
    requests_ = [types.WriteRequest(database=database()),
                 types.WriteRequest(writes=[file_write(uid, "w1")], stream_token=b"0"),
                 types.WriteRequest(writes=[file_write(other, "w2")], stream_token=b"1"),
                 types.WriteRequest(writes=[file_write(uid, "w3")], stream_token=b"2")]
    responses = write(iter(requests_), metadata=metadata(token))
    got = []
    with pytest.raises(grpc.RpcError) as e:
        for r in responses:
            got.append(r)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert got[0].stream_id and got[0].stream_token and not got[0].write_results
    assert len(got) == 2 and len(got[1].write_results) == 1 and got[1].commit_time
    get = unary(channel, "GetDocument", types.GetDocumentRequest, types.Document)
    assert get(types.GetDocumentRequest(name=f"{database()}/documents/users/{uid}/files/w1"), metadata=metadata(token))
    with pytest.raises(grpc.RpcError) as missing:
        get(types.GetDocumentRequest(name=f"{database()}/documents/users/{uid}/files/w3"), metadata=metadata(token))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_write_stream_handshake_errors(channel):
    write = channel.stream_stream(SERVICE + "Write", request_serializer=types.WriteRequest.serialize,
                                  response_deserializer=types.WriteResponse.deserialize)
    with pytest.raises(grpc.RpcError) as e:
        list(write(iter([types.WriteRequest()])))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details() == "'database' must be set on an initial write request."
    with pytest.raises(grpc.RpcError) as e:
        list(write(iter([types.WriteRequest(database=database(), stream_token=b"x")])))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# --- The Listen stream, raw: what the SDKs send, checked message by message -----------------------

class Listen:
    """One raw Listen call: requests are queued, responses collected by a reader thread."""

    def __init__(self, channel, token=None, read=True):
        self.requests = queue.Queue()
        self.responses = queue.Queue()
        self.error = None
        call = channel.stream_stream(SERVICE + "Listen", request_serializer=types.ListenRequest.serialize,
                                     response_deserializer=types.ListenResponse.deserialize)
        md = metadata(token) if token else [("authorization", "Bearer owner"), ("google-cloud-resource-prefix", database())]
        self.call = call(iter(self.requests.get, None), metadata=md)
        self.reader = threading.Thread(target=self._read, daemon=True)
        if read:
            self.reader.start()

    def _read(self):
        try:
            for r in self.call:
                self.responses.put(r)
        except grpc.RpcError as e:
            self.error = e
        self.responses.put(None)

    def start_reading(self):
        self.reader.start()

    def add(self, target):
        self.requests.put(types.ListenRequest(database=database(), add_target=target))

    def remove(self, target_id):
        self.requests.put(types.ListenRequest(database=database(), remove_target=target_id))

    def snapshot(self, timeout=15):
        """The responses up to and including the next global NO_CHANGE (what raises a snapshot)."""
        out = []
        deadline = time.time() + timeout
        while True:
            r = self.responses.get(timeout=max(0.01, deadline - time.time()))
            assert r is not None, f"stream ended ({self.error}) after {[describe(x) for x in out]}"
            out.append(r)
            tc = r.target_change if "target_change" in r else None
            if tc is not None and tc.target_change_type == types.TargetChange.TargetChangeType.NO_CHANGE \
                    and not tc.target_ids and tc.read_time:
                return out

    def ended(self, timeout=15):
        """Drains the stream; the status it ended with."""
        deadline = time.time() + timeout
        while self.responses.get(timeout=max(0.01, deadline - time.time())) is not None:
            pass
        return self.error

    def close(self):
        self.requests.put(None)
        self.call.cancel()


def describe(r):
    """`ADD[1]`, `CHANGE a [1]`, `DELETE b [1]`, `REMOVE_DOC c [1]`, `FILTER 1 n`, … (names: last segment)."""
    kind = r._pb.WhichOneof("response_type")
    if kind == "target_change":
        tc = r.target_change
        return types.TargetChange.TargetChangeType(tc.target_change_type).name + str(list(tc.target_ids)).replace(" ", "")
    if kind == "document_change":
        return f"CHANGE {r.document_change.document.name.rsplit('/', 1)[1]} {list(r.document_change.target_ids)}"
    if kind == "document_delete":
        return f"DELETE {r.document_delete.document.rsplit('/', 1)[1]} {list(r.document_delete.removed_target_ids)}"
    if kind == "document_remove":
        return f"REMOVE_DOC {r.document_remove.document.rsplit('/', 1)[1]} {list(r.document_remove.removed_target_ids)}"
    if kind == "filter":
        return f"FILTER {r.filter.target_id} {r.filter.count}"
    return kind


def query_target(target_id, collection, where=None, **extra):
    q = types.StructuredQuery(from_=[types.StructuredQuery.CollectionSelector(collection_id=collection)])
    if where:
        field, value = where
        q.where = types.StructuredQuery.Filter(field_filter=types.StructuredQuery.FieldFilter(
            field=types.StructuredQuery.FieldReference(field_path=field),
            op=types.StructuredQuery.FieldFilter.Operator.EQUAL, value=types.Value(string_value=value)))
    return types.Target(target_id=target_id, query=types.Target.QueryTarget(parent=f"{database()}/documents",
                                                                            structured_query=q), **extra)


def commit(channel, writes):
    return unary(channel, "Commit", types.CommitRequest, types.CommitResponse)(
        types.CommitRequest(database=database(), writes=writes), metadata=[("authorization", "Bearer owner")])


def put(collection, doc_id, **fields):
    return types.Write(update=types.Document(name=f"{database()}/documents/{collection}/{doc_id}",
                                             fields={k: types.Value(string_value=v) for k, v in fields.items()}))


def delete(collection, doc_id):
    return types.Write(delete=f"{database()}/documents/{collection}/{doc_id}")


def bloom_bits(bloom, name):
    """The bit positions the SDKs' BloomFilter.mightContain probes for `name`, written from the
    proto's description (independent of Hearth's)."""
    m = len(bloom.bits.bitmap) * 8 - bloom.bits.padding
    d = hashlib.md5(name.encode()).digest()
    h1, h2 = int.from_bytes(d[:8], "little"), int.from_bytes(d[8:], "little")
    return {(h1 + i * h2) % 2**64 % m for i in range(bloom.hash_count)} if m else set()


def bloom_might_contain(bloom, name):
    bits = bloom_bits(bloom, name)
    return bool(bits) and all(bloom.bits.bitmap[b // 8] >> (b % 8) & 1 for b in bits)


def bloom_set_bits(bloom):
    bitmap = bloom.bits.bitmap
    return {b for b in range(len(bitmap) * 8 - bloom.bits.padding) if bitmap[b // 8] >> (b % 8) & 1}


def test_listen_unknown_remove_is_ignored_and_duplicate_add_is_invalid_argument(channel):
    coll = "lr" + uuid.uuid4().hex[:8]
    listen = Listen(channel)
    listen.add(query_target(1, coll))
    assert [describe(r) for r in listen.snapshot()] == ["ADD[1]", "CURRENT[1]", "NO_CHANGE[]"]
    # An id the stream does not hold (a client removing what the server just removed): nothing
    # happens and the stream goes on, as on the official emulator.
    listen.remove(99)
    listen.add(query_target(2, coll))
    assert [describe(r) for r in listen.snapshot()] == ["ADD[2]", "CURRENT[2]", "NO_CHANGE[]"]

    listen = Listen(channel)
    listen.add(query_target(5, coll))
    listen.add(query_target(5, coll))
    error = listen.ended()
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == "Target ID 5 is already in use on this stream; remove it before adding it again."


def test_listen_resume_sends_only_what_changed_including_deletes(channel):
    coll = "lr" + uuid.uuid4().hex[:8]
    commit(channel, [put(coll, d, color="red") for d in ("a", "b", "c")])
    listen = Listen(channel)
    listen.add(query_target(1, coll, where=("color", "red")))
    first = listen.snapshot()
    assert [describe(r) for r in first] == ["ADD[1]", "CHANGE a [1]", "CHANGE b [1]", "CHANGE c [1]", "CURRENT[1]", "NO_CHANGE[]"]
    token, read_time = first[-1].target_change.resume_token, first[-1].target_change.read_time
    listen.close()

    # While nobody listens: one changed, one deleted, one stops matching, one new.
    commit(channel, [put(coll, "a", color="red", v="2")])
    commit(channel, [delete(coll, "b")])
    commit(channel, [put(coll, "c", color="blue"), put(coll, "d", color="red")])

    # The iOS SDK resumes with the token and the count it holds.
    resumed = Listen(channel)
    resumed.add(query_target(1, coll, where=("color", "red"), resume_token=token, expected_count=3))
    got = resumed.snapshot()
    assert [describe(r) for r in got] == ["ADD[1]", "CHANGE a [1]", "CHANGE d [1]", "DELETE b [1]", "REMOVE_DOC c [1]",
                                          "FILTER 1 2", "CURRENT[1]", "NO_CHANGE[]"]
    bloom = got[5].filter.unchanged_names
    names = {d: f"{database()}/documents/{coll}/{d}" for d in "abcd"}
    assert bloom_might_contain(bloom, names["a"]) and bloom_might_contain(bloom, names["d"])
    # Exactly a's and d's bits are set: b and c were left out (a membership probe for them could
    # be a bloom filter's false positive, so the test compares the bits themselves).
    assert bloom_set_bits(bloom) == bloom_bits(bloom, names["a"]) | bloom_bits(bloom, names["d"])
    resumed.close()

    # By read time instead of token: the same changes.
    by_time = Listen(channel)
    by_time.add(query_target(1, coll, where=("color", "red"), read_time=read_time))
    assert [describe(r) for r in by_time.snapshot()] == ["ADD[1]", "CHANGE a [1]", "CHANGE d [1]", "DELETE b [1]",
                                                         "REMOVE_DOC c [1]", "CURRENT[1]", "NO_CHANGE[]"]
    by_time.close()

    # A token Hearth never gave: RESET and the full result.
    unknown = Listen(channel)
    unknown.add(query_target(1, coll, where=("color", "red"), resume_token=b"\x0a\x09garbage"))
    assert [describe(r) for r in unknown.snapshot()] == ["ADD[1]", "RESET[1]", "CHANGE a [1]", "CHANGE d [1]",
                                                         "CURRENT[1]", "NO_CHANGE[]"]
    unknown.close()


def test_a_client_that_stops_reading_is_cut_and_other_listeners_go_on(channel):
    coll = "lr" + uuid.uuid4().hex[:8]
    # The slow client on its own connection, as another app would be.
    slow_channel = grpc.insecure_channel(os.environ["FIRESTORE_EMULATOR_HOST"])
    slow = Listen(slow_channel, read=False)
    # Several targets on one collection: each write is queued once per target, so the
    # stream's backlog passes Hearth's bound (64 MiB) after a handful of ~900 KB writes. 24 of
    # them queue ~170 MB: a loaded machine's client may have taken tens of MB into its own
    # buffers (its flow-control window grows) before it stops taking more.
    for t in range(1, 9):
        slow.add(query_target(t, coll))
    # A reading listener on the slow client's connection: streams of one connection share its
    # Listen shard, so once this one has a commit the slow stream has been handed it too. Without
    # it, on a loaded machine the slow connection's shard could still be behind when the client
    # starts reading, and it would read its backlog before the bound was ever passed.
    barrier = Listen(slow_channel)
    barrier.add(query_target(1, coll))
    barrier.snapshot()
    fast = Listen(channel)
    fast.add(query_target(1, coll))
    fast.snapshot()
    big = "x" * 900_000
    for i in range(24):
        commit(channel, [put(coll, f"d{i}", blob=big)])
        got = fast.snapshot()
        assert [describe(r) for r in got] == [f"CHANGE d{i} [1]", "NO_CHANGE[]"]
    seen = []
    while "CHANGE d23 [1]" not in seen:
        seen += [describe(r) for r in barrier.snapshot()]
    assert [x for x in seen if x.startswith("CHANGE")] == [f"CHANGE d{i} [1]" for i in range(24)]
    slow.start_reading()
    error = slow.ended(timeout=30)
    assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    assert "not reading its Listen stream fast enough" in error.details()
    # The fast listener is unaffected.
    commit(channel, [delete(coll, "d0")])
    assert [describe(r) for r in fast.snapshot()] == ["DELETE d0 [1]", "NO_CHANGE[]"]
    fast.close()
    barrier.close()
    slow_channel.close()


def test_ten_thousand_targets_on_one_stream(channel):
    coll = "lr" + uuid.uuid4().hex[:8]
    listen = Listen(channel)
    for t in range(1, 10_001):
        listen.requests.put(types.ListenRequest(database=database(), add_target=types.Target(
            target_id=t, documents=types.Target.DocumentsTarget(documents=[f"{database()}/documents/{coll}/d{t}"]))))
    for t in range(1, 10_001):
        got = [describe(r) for r in listen.snapshot(timeout=60)]
        assert got == [f"ADD[{t}]", f"DELETE d{t} [{t}]", f"CURRENT[{t}]", "NO_CHANGE[]"], got
    commit(channel, [put(coll, "d7777", v="1")])
    assert [describe(r) for r in listen.snapshot()] == ["CHANGE d7777 [7777]", "NO_CHANGE[]"]
    listen.close()


def test_listen_with_an_end_user_token_is_judged_per_target(channel):
    """As the iOS SDK listens for a signed-in user under the shipped rules: the user's own files
    stream; another user's file is REMOVE with cause 7 and the stream goes on."""
    alice, alice_token = sign_up()
    bob, bob_token = sign_up()
    commit = unary(channel, "Commit", types.CommitRequest, types.CommitResponse)
    commit(types.CommitRequest(database=database(), writes=[file_write(alice, "a1")]), metadata=metadata(alice_token))
    commit(types.CommitRequest(database=database(), writes=[file_write(bob, "b1")]), metadata=metadata(bob_token))
    listen = Listen(channel, token=alice_token)
    own = types.Target(target_id=2, query=types.Target.QueryTarget(
        parent=f"{database()}/documents/users/{alice}",
        structured_query=types.StructuredQuery(from_=[types.StructuredQuery.CollectionSelector(collection_id="files")])))
    listen.add(own)
    assert [describe(r) for r in listen.snapshot()] == ["ADD[2]", "CHANGE a1 [2]", "CURRENT[2]", "NO_CHANGE[]"]
    listen.add(types.Target(target_id=4, documents=types.Target.DocumentsTarget(
        documents=[f"{database()}/documents/users/{bob}/files/b1"])))
    add = listen.responses.get(timeout=15)
    removed = listen.responses.get(timeout=15)
    assert describe(add) == "ADD[4]" and describe(removed) == "REMOVE[4]"
    assert removed.target_change.cause.code == 7 and "false for 'get'" in removed.target_change.cause.message
    # The stream and its other target go on.
    commit(types.CommitRequest(database=database(), writes=[file_write(alice, "a2")]), metadata=metadata(alice_token))
    assert [describe(r) for r in listen.snapshot()] == ["CHANGE a2 [2]", "NO_CHANGE[]"]
    listen.close()


@pytest.mark.parametrize("emulator_host", ["official"], indirect=True)
def test_the_official_emulator_differs_where_the_docs_say(emulator_host):
    """The differences docs/ios.md lists, observed on the official emulator (skipped without it):
    a resume gets RESET and everything again, and a duplicate target id ends the stream with an
    empty UNKNOWN. Hearth's answers to the same requests are checked above."""
    ch = grpc.insecure_channel(emulator_host)
    try:
        coll = "lr" + uuid.uuid4().hex[:8]
        commit(ch, [put(coll, d, color="red") for d in ("a", "b")])
        listen = Listen(ch)
        listen.add(query_target(1, coll))
        token = listen.snapshot()[-1].target_change.resume_token
        listen.close()
        commit(ch, [delete(coll, "b")])
        resumed = Listen(ch)
        resumed.add(query_target(1, coll, resume_token=token, expected_count=2))
        got = [describe(r) for r in resumed.snapshot()]
        assert got[:2] == ["ADD[1]", "RESET[1]"] and "CHANGE a [1]" in got and not any("DELETE" in g for g in got), got
        resumed.close()

        dup = Listen(ch)
        dup.add(query_target(5, coll))
        dup.add(query_target(5, coll))
        error = dup.ended()
        assert error.code() == grpc.StatusCode.UNKNOWN, error
    finally:
        ch.close()
