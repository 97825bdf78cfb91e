"""Firestore's streaming reads over gRPC (issue 20: every operation ≥ 10× the official emulator over
gRPC too): RunQuery on 1,000 documents at one stream (the REST runQuery row's query) and
BatchGetDocuments of 10 documents at 16 streams (the REST batchGet row's), both through grpc-go
(bench/grpcload -mode query / batchget, reads.go), each call read to its end and checked: RunQuery
must answer its 10 documents, BatchGetDocuments must find all 10.

`rows_for` runs on a fresh user whose users/{uid}/files holds 1,000 documents seeded as the runQuery
rows seed them, for Hearth and for the official emulator alike (same rules, same token), with a
warm-up before the timed runs (longer for the JVM, as the other gRPC rows).
"""
from . import firebase
from .grpcbench import best_run, build_grpcload
from .httpc import Client, NotAvailable
from .report import Row

DOCS = 1000
KEYS = ["grpc.query.1000.s1", "grpc.batchget.s16"]


def rows_for(ctx, system, port, auth_port, role="hearth"):
    """Stores grpc.query.1000.s1 and grpc.batchget.s16 for `system` (n/a with the reason on failure)."""
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
        for k in KEYS:
            ctx.results.na(k, system, f"{type(e).__name__}: {e}")
        return
    warm = 0 if ctx.quick else (5 if role == "peer" else 1)
    best_run(ctx, system, KEYS[0], port, user, "query", "gRPC RunQuery", "calls/s", warm, "-per-conn", 16,
             "-expect", 10, streams=1)
    docs = ",".join(f"users/{user.uid}/files/f{i:06d}" for i in range(10))
    best_run(ctx, system, KEYS[1], port, user, "batchget", "gRPC BatchGetDocuments", "calls/s", warm, "-doc", docs,
             "-per-conn", 16)


def rows(emu, x10):
    return [
        Row(KEYS[0], f"gRPC RunQuery (== filter, orderBy, limit 10), {DOCS:,} docs, 1 stream (grpc-go)", "calls/s",
            peers=emu, target=x10),
        Row(KEYS[1], "gRPC BatchGetDocuments of 10 docs, user token, rules on, 16 streams (grpc-go, 1 conn)", "calls/s",
            peers=emu, target=x10),
    ]
