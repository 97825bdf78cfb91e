"""Raw grpcio calls as the iOS SDK makes them: end-user ID tokens from Hearth's Auth port in the
`authorization` metadata, the shipped rules, and the Write stream's handshake and pipelining.
Hearth only (the official emulator runs with open rules in this suite)."""
import os
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
