"""The differential script's database-level methods sent over gRPC instead of REST.

Each `POST …/documents[/{document}]:{verb}` case of diffcases.py becomes the same request message
(its JSON body parsed into the google.firestore.v1 type, with `database` or `parent` from the path)
sent on a gRPC channel; answers are rendered back to proto3 JSON and normalised as the REST ones
are. Other cases (document paths, bad JSON the client library cannot even encode) are left out, on
both servers alike. Needs google-cloud-firestore (the venv has it); `python diffgrpc.py --record`
rewrites fixtures/emulator-grpc.json from the official emulator.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "emulator-grpc.json")
sys.path.insert(0, HERE)
import diffcases  # noqa: E402
import diffrun  # noqa: E402

# verb → (transport method, request type name, the path member, streams)
VERBS = {
    "commit": ("commit", "CommitRequest", "database", False),
    "batchGet": ("batch_get_documents", "BatchGetDocumentsRequest", "database", True),
    "beginTransaction": ("begin_transaction", "BeginTransactionRequest", "database", False),
    "rollback": ("rollback", "RollbackRequest", "database", False),
    "batchWrite": ("batch_write", "BatchWriteRequest", "database", False),
    "runQuery": ("run_query", "RunQueryRequest", "parent", True),
    "runAggregationQuery": ("run_aggregation_query", "RunAggregationQueryRequest", "parent", True),
    "listCollectionIds": ("list_collection_ids", "ListCollectionIdsRequest", "parent", False),
}


def grpc_cases():
    """The cases with a gRPC form: database-level verbs with a JSON body, on the suite's project."""
    out = []
    for c in diffcases.cases():
        path = c["p"]
        if c.get("m") != "POST" or path.startswith("^") or ":" not in path or "b" not in c or "raw_auth" in c:
            continue
        prefix, verb = path.rsplit(":", 1)
        if verb in VERBS:
            out.append(dict(c, verb=verb, prefix=prefix))
    return out


def run(target):
    """Sends every gRPC case in order to `target` (host:port); returns {name: normalised answer}."""
    import grpc
    from google.cloud.firestore_v1 import types
    from google.cloud.firestore_v1.services.firestore.transports import FirestoreGrpcTransport
    from google.protobuf import json_format

    transport = FirestoreGrpcTransport(channel=grpc.insecure_channel(target))
    database = f"projects/{diffrun.PROJECT}/databases/(default)"
    env = {}
    out = {}
    for c in grpc_cases():
        c = diffrun._substitute(c, env)
        method, type_name, member, streams = VERBS[c["verb"]]
        body = dict(c["b"] or {})
        body[member] = database if member == "database" else database + "/documents" + c["prefix"]
        auth = c.get("a", "owner")
        metadata = []
        if auth == "owner":
            metadata.append(("authorization", "Bearer owner"))
        elif auth is not None:
            metadata.append(("authorization", "Bearer " + diffcases.mock_token(auth)))
        try:
            request = getattr(types, type_name).from_json(json.dumps(body))
        except Exception:  # noqa: BLE001 — the client library refuses to encode it: nothing is sent
            out[c["name"]] = {"status": "UNENCODABLE", "body": None}
            continue
        try:
            answer = getattr(transport, method)(request, metadata=metadata, timeout=15)
            messages = list(answer) if streams else [answer]
            # The transport hands back protobuf messages (proto-plus wrappers when it wraps them).
            rendered = [json_format.MessageToDict(m._pb if hasattr(m, "_pb") else m) for m in messages]
            payload = rendered if streams else rendered[0]
            status = "OK"
        except grpc.RpcError as e:
            payload = {"error": {"status": e.code().name, "message": e.details() or ""}}
            status = e.code().name
        for var, where in (c.get("save") or {}).items():
            try:
                env[var] = str(diffrun._dig(payload, where))
            except (KeyError, IndexError, TypeError, ValueError):
                env[var] = "<unset:" + var + ">"
        out[c["name"]] = diffrun.normalise(status, json.dumps(payload), env)
    transport.close()
    return out


DEVIATIONS = os.path.join(HERE, "fixtures", "deviations-grpc.json")


def write_deviations(url):
    """Runs the gRPC cases against a running Hearth at `url`; keeps its answers for the deviation cases
    (the classes of deviations.py, which gRPC shares with REST)."""
    import deviations
    diffrun.prepare_hearth(url)
    answers = run(url.split("//", 1)[1])
    out = {name: {"class": cls, "hearth": answers[name]}
           for name, cls in sorted(deviations.by_case().items()) if name in answers}
    with open(DEVIATIONS, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"kept Hearth's gRPC answers for {len(out)} documented deviations in {DEVIATIONS}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--deviations":
        write_deviations(sys.argv[2].rstrip("/"))
        return 0
    if "--record" not in sys.argv:
        print("usage: python diffgrpc.py --record            (runs the official emulator, rewrites fixtures/emulator-grpc.json)\n"
              "       python diffgrpc.py --deviations URL    (a running Hearth's gRPC answers for the documented deviations)")
        return 2
    proc, url = diffrun.start_emulator()
    try:
        diffrun.reset(url)
        answers = run(url.split("//", 1)[1])
    finally:
        diffrun.stop_emulator(proc)
    with open(FIXTURE, "w") as f:
        json.dump(answers, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"recorded {len(answers)} gRPC answers into {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
