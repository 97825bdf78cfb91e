"""Firestore's streaming reads over gRPC (issue 20: every operation ≥ 10× the official emulator over
gRPC too): RunQuery on 1,000 documents at one stream (the REST runQuery row's query) and
BatchGetDocuments of 10 documents at 16 streams (the REST batchGet row's), both through grpc-go
(bench/grpcload -mode query / batchget, reads.go), each call read to its end and checked: RunQuery
must answer its 10 documents, BatchGetDocuments must find all 10. The same calls from grpcload's light
client (`-client h2`, h2unary.go: raw HTTP/2, each message walked field by field, the same counts
checked) are rows of their own (.light), as the GetDocument rows have them: at one stream grpc-go's
own CPU per call was as much as Hearth's on the same two cores (docs/benchmarks.md, grpcreads2), so
the grpc-go rows measure the client as much as the server. Both clients run against both servers.

`loads_for` prepares a fresh user whose users/{uid}/files holds 1,000 documents seeded as the runQuery
rows seed them, for Hearth and for the official emulator alike (same rules, same token), with a
warm-up before the timed rounds (longer for the JVM, as the other gRPC rows).
"""
from . import firebase
from .grpcbench import build_grpcload, grpcload_load
from .httpc import Client, NotAvailable
from .report import Row

DOCS = 1000
KEYS = ["grpc.query.1000.s1", "grpc.batchget.s16", "grpc.query.1000.light.s1", "grpc.batchget.light.s16"]


def loads_for(ctx, system, port, auth_port, warm):
    """{grpc.query.1000.s1, grpc.batchget.s16: `pairs.Load` or the reason it cannot run}, on a fresh
    user's collection of 1,000 documents; `warm` seconds of each load before the rounds."""
    try:
        build_grpcload(ctx)
        ac, fc = Client(auth_port), Client(port)
        try:
            user = firebase.sign_up(ac, f"bench-grpcreads-{system}@example.com")
            firebase.seed_docs(fc, user.uid, DOCS)
        finally:
            ac.close()
            fc.close()
    except (NotAvailable, OSError) as e:  # OSError: a server that stopped answering
        return dict.fromkeys(KEYS, f"{type(e).__name__}: {e}")
    docs = ",".join(f"users/{user.uid}/files/f{i:06d}" for i in range(10))
    return {KEYS[0]: grpcload_load(ctx, system, port, user, "query", "gRPC RunQuery", warm, "-per-conn", 16,
                                   "-expect", 10, streams=1),
            KEYS[1]: grpcload_load(ctx, system, port, user, "batchget", "gRPC BatchGetDocuments", warm, "-doc", docs,
                                   "-per-conn", 16),
            KEYS[2]: grpcload_load(ctx, system, port, user, "query", "gRPC RunQuery (grpcload h2)", warm, "-per-conn", 16,
                                   "-expect", 10, "-client", "h2", streams=1),
            KEYS[3]: grpcload_load(ctx, system, port, user, "batchget", "gRPC BatchGetDocuments (grpcload h2)", warm,
                                   "-doc", docs, "-per-conn", 16, "-client", "h2")}


def rows(emu, x10):
    return [
        Row(KEYS[0], f"gRPC RunQuery (== filter, orderBy, limit 10), {DOCS:,} docs, 1 stream (grpc-go)", "calls/s",
            peers=emu, target=x10),
        Row(KEYS[1], "gRPC BatchGetDocuments of 10 docs, user token, rules on, 16 streams (grpc-go, 1 conn)", "calls/s",
            peers=emu, target=x10),
        Row(KEYS[2], f"gRPC RunQuery (== filter, orderBy, limit 10), {DOCS:,} docs, 1 stream (light client)", "calls/s",
            peers=emu, target=x10),
        Row(KEYS[3], "gRPC BatchGetDocuments of 10 docs, user token, rules on, 16 streams (light client, 1 conn)", "calls/s",
            peers=emu, target=x10),
    ]
