"""gRPC transport details with real grpcio: gzip-compressed requests (grpcio compresses with
`compression=grpc.Compression.Gzip`), the 10 MiB limit after decompression, and many calls
multiplexed on one channel. Hearth only: they exercise the transport, not Firestore semantics."""
import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from google.cloud.firestore_v1 import types

SERVICE = "/google.firestore.v1.Firestore/"
OWNER = [("authorization", "Bearer owner")]


def database():
    return f"projects/{os.environ['HEARTH_PROJECT']}/databases/(default)"


@pytest.fixture(scope="module")
def gzip_channel(hearth):
    """Every request message this channel sends is gzip-compressed (grpc-encoding: gzip)."""
    ch = grpc.insecure_channel(os.environ["FIRESTORE_EMULATOR_HOST"], compression=grpc.Compression.Gzip)
    yield ch
    ch.close()


def unary(channel, method, request_type, response_type):
    return channel.unary_unary(SERVICE + method, request_serializer=request_type.serialize,
                               response_deserializer=response_type.deserialize)


def test_gzip_requests_are_inflated(gzip_channel):
    path = f"{database()}/documents/gz/{uuid.uuid4().hex}"
    # A long, compressible value: the message really travels compressed.
    text = "compress me " * 2000
    commit = unary(gzip_channel, "Commit", types.CommitRequest, types.CommitResponse)
    got = commit(types.CommitRequest(database=database(), writes=[types.Write(update=types.Document(
        name=path, fields={"text": types.Value(string_value=text)}))]), metadata=OWNER)
    assert len(got.write_results) == 1
    get = unary(gzip_channel, "GetDocument", types.GetDocumentRequest, types.Document)
    doc = get(types.GetDocumentRequest(name=path), metadata=OWNER)
    assert doc.fields["text"].string_value == text
    # Per call too, and on a server-streaming method.
    batch = gzip_channel.unary_stream(SERVICE + "BatchGetDocuments", request_serializer=types.BatchGetDocumentsRequest.serialize,
                                      response_deserializer=types.BatchGetDocumentsResponse.deserialize)
    answers = list(batch(types.BatchGetDocumentsRequest(database=database(), documents=[path, path + "-missing"]),
                         metadata=OWNER, compression=grpc.Compression.Deflate))
    assert {a.found.name or a.missing for a in answers} == {path, path + "-missing"}


def test_gzip_on_the_write_stream(gzip_channel):
    write = gzip_channel.stream_stream(SERVICE + "Write", request_serializer=types.WriteRequest.serialize,
                                       response_deserializer=types.WriteResponse.deserialize)
    path = f"{database()}/documents/gz/{uuid.uuid4().hex}"

    def requests_():
        yield types.WriteRequest(database=database())
        yield types.WriteRequest(writes=[types.Write(update=types.Document(name=path, fields={"n": types.Value(integer_value=7)}))],
                                 stream_token=b"0")

    responses = write(requests_(), metadata=OWNER)
    got = [next(responses), next(responses)]
    responses.cancel()
    assert got[0].stream_token and len(got[1].write_results) == 1
    doc = unary(gzip_channel, "GetDocument", types.GetDocumentRequest, types.Document)(
        types.GetDocumentRequest(name=path), metadata=OWNER)
    assert doc.fields["n"].integer_value == 7


def test_decompression_bomb_is_resource_exhausted(gzip_channel):
    """11 MiB of zeros compress to a few KiB: under the limit on the wire, over it once inflated."""
    raw = gzip_channel.unary_unary(SERVICE + "GetDocument", request_serializer=lambda b: b, response_deserializer=lambda b: b)
    with pytest.raises(grpc.RpcError) as e:
        raw(b"\0" * (11 << 20), metadata=OWNER)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "after decompression larger than max" in e.value.details()
    # The same channel (and connection) keeps serving.
    with pytest.raises(grpc.RpcError) as missing:
        unary(gzip_channel, "GetDocument", types.GetDocumentRequest, types.Document)(
            types.GetDocumentRequest(name=f"{database()}/documents/gz/none"), metadata=OWNER)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


def test_two_thousand_calls_multiplexed_on_one_channel(hearth):
    ch = grpc.insecure_channel(os.environ["FIRESTORE_EMULATOR_HOST"])
    try:
        get = unary(ch, "GetDocument", types.GetDocumentRequest, types.Document)

        def call(i):
            try:
                get(types.GetDocumentRequest(name=f"{database()}/documents/mux/d{i}"), metadata=OWNER)
                return "found"
            except grpc.RpcError as e:
                return e.code()

        with ThreadPoolExecutor(64) as pool:
            results = list(pool.map(call, range(2000)))
        assert results.count(grpc.StatusCode.NOT_FOUND) == 2000
    finally:
        ch.close()
