/// The google.firestore.v1 response messages (and google.rpc.Status), as `ProtoSchema` tables:
/// the REST core's JSON answers are written through them as protobuf.
extension FirestoreSchemas {
    static let responses: [ProtoSchema] = [
        ProtoSchema(v1 + "WriteResult", [F(1, "updateTime", .timestamp), F(2, "transformResults", m("Value"), repeated: true)]),
        ProtoSchema(v1 + "CommitResponse", [F(1, "writeResults", m("WriteResult"), repeated: true), F(2, "commitTime", .timestamp)]),
        ProtoSchema(v1 + "BeginTransactionResponse", [F(1, "transaction", .bytes)]),
        ProtoSchema(v1 + "BatchGetDocumentsResponse", [
            F(1, "found", m("Document"), oneof: "result"), F(2, "missing", .string, oneof: "result"),
            F(3, "transaction", .bytes), F(4, "readTime", .timestamp),
        ]),
        ProtoSchema(v1 + "RunQueryResponse", [
            F(2, "transaction", .bytes), F(1, "document", m("Document")), F(3, "readTime", .timestamp),
            F(4, "skippedResults", .int32), F(6, "done", .bool, oneof: "continuation_selector"),
        ]),
        ProtoSchema(v1 + "AggregationResult", [F(2, "aggregateFields", .valueMap)]),
        ProtoSchema(v1 + "RunAggregationQueryResponse", [
            F(1, "result", m("AggregationResult")), F(2, "transaction", .bytes), F(3, "readTime", .timestamp),
        ]),
        ProtoSchema(v1 + "ListDocumentsResponse", [F(1, "documents", m("Document"), repeated: true), F(2, "nextPageToken", .string)]),
        ProtoSchema(v1 + "ListCollectionIdsResponse", [F(1, "collectionIds", .string, repeated: true), F(2, "nextPageToken", .string)]),
        ProtoSchema(v1 + "PartitionQueryResponse", [F(1, "partitions", m("Cursor"), repeated: true), F(2, "nextPageToken", .string)]),
        ProtoSchema(v1 + "BatchWriteResponse", [F(1, "writeResults", m("WriteResult"), repeated: true),
                                                F(2, "status", .message("google.rpc.Status"), repeated: true)]),
        ProtoSchema("google.rpc.Status", [F(1, "code", .int32), F(2, "message", .string)]),
        ProtoSchema(v1 + "WriteResponse", [F(1, "streamId", .string), F(2, "streamToken", .bytes),
                                           F(3, "writeResults", m("WriteResult"), repeated: true), F(4, "commitTime", .timestamp)]),
        ProtoSchema(v1 + "ListenResponse", [
            F(2, "targetChange", m("TargetChange"), oneof: "response_type"),
            F(3, "documentChange", m("DocumentChange"), oneof: "response_type"),
            F(4, "documentDelete", m("DocumentDelete"), oneof: "response_type"),
            F(6, "documentRemove", m("DocumentRemove"), oneof: "response_type"),
            F(5, "filter", m("ExistenceFilter"), oneof: "response_type"),
        ]),
        ProtoSchema(v1 + "TargetChange", [
            F(1, "targetChangeType", .enumeration([0: "NO_CHANGE", 1: "ADD", 2: "REMOVE", 3: "CURRENT", 4: "RESET"])),
            F(2, "targetIds", .int32, repeated: true), F(3, "cause", .message("google.rpc.Status")),
            F(4, "resumeToken", .bytes), F(6, "readTime", .timestamp),
        ]),
        ProtoSchema(v1 + "DocumentChange", [F(1, "document", m("Document")), F(5, "targetIds", .int32, repeated: true),
                                            F(6, "removedTargetIds", .int32, repeated: true)]),
        ProtoSchema(v1 + "DocumentDelete", [F(1, "document", .string), F(6, "removedTargetIds", .int32, repeated: true),
                                            F(4, "readTime", .timestamp)]),
        ProtoSchema(v1 + "DocumentRemove", [F(1, "document", .string), F(2, "removedTargetIds", .int32, repeated: true),
                                            F(4, "readTime", .timestamp)]),
        ProtoSchema(v1 + "ExistenceFilter", [F(1, "targetId", .int32), F(2, "count", .int32), F(3, "unchangedNames", m("BloomFilter"))]),
        ProtoSchema(v1 + "BloomFilter", [F(1, "bits", m("BitSequence")), F(2, "hashCount", .int32)]),
        ProtoSchema(v1 + "BitSequence", [F(1, "bitmap", .bytes), F(2, "padding", .int32)]),
    ]
}
