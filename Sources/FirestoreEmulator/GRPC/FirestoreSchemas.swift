/// The google.firestore.v1 messages the RPCs read, as `ProtoSchema` tables.
///
/// Field numbers and names are those of the googleapis protos (google/firestore/v1/*.proto);
/// `FirestoreSchemasTests` round-trips them against `protoc --encode`. Fields Hearth ignores
/// (`request_options`, pipeline values) are left out on purpose: unknown fields are skipped,
/// as every protobuf reader does.
enum FirestoreSchemas {
    typealias F = ProtoSchema.Field

    static let v1 = "google.firestore.v1."

    /// Every schema by full name.
    static let all: [String: ProtoSchema] = {
        var out: [String: ProtoSchema] = [:]
        for s in list + responses { out[s.name] = s }
        return out
    }()

    /// Each schema's fields by JSON name (for encoding responses).
    static let byName: [String: [String: ProtoSchema.Field]] = {
        var out: [String: [String: ProtoSchema.Field]] = [:]
        for (name, schema) in all {
            var fields: [String: ProtoSchema.Field] = [:]
            for f in schema.fields.values { fields[f.json] = f }
            out[name] = fields
        }
        return out
    }()

    static func fieldsByName(_ schema: String) -> [String: ProtoSchema.Field] { byName[schema] ?? [:] }

    /// `schema(named:)` for a name that is in the table (a programming error otherwise).
    static func schema(_ short: String) -> ProtoSchema {
        // Force-unwrap safe: every name passed is one of `list` (checked by the tests).
        all[v1 + short]!
    }

    static func m(_ short: String) -> ProtoSchema.Kind { .message(v1 + short) }

    static let consistency = "consistency_selector"

    static let fieldOperators: [Int64: String] = [
        0: "OPERATOR_UNSPECIFIED", 1: "LESS_THAN", 2: "LESS_THAN_OR_EQUAL", 3: "GREATER_THAN", 4: "GREATER_THAN_OR_EQUAL",
        5: "EQUAL", 6: "NOT_EQUAL", 7: "ARRAY_CONTAINS", 8: "IN", 9: "ARRAY_CONTAINS_ANY", 10: "NOT_IN",
    ]

    private static let list: [ProtoSchema] = [
        // document.proto
        ProtoSchema(v1 + "Document", [F(1, "name", .string), F(2, "fields", .valueMap), F(3, "createTime", .timestamp),
                                      F(4, "updateTime", .timestamp)]),
        ProtoSchema(v1 + "Value", [
            F(11, "nullValue", .nullValue, oneof: "value_type"), F(1, "booleanValue", .bool, oneof: "value_type"),
            F(2, "integerValue", .int64, oneof: "value_type"), F(3, "doubleValue", .double, oneof: "value_type"),
            F(10, "timestampValue", .timestamp, oneof: "value_type"), F(17, "stringValue", .string, oneof: "value_type"),
            F(18, "bytesValue", .bytes, oneof: "value_type"), F(5, "referenceValue", .string, oneof: "value_type"),
            F(8, "geoPointValue", .message("google.type.LatLng"), oneof: "value_type"),
            F(9, "arrayValue", m("ArrayValue"), oneof: "value_type"), F(6, "mapValue", m("MapValue"), oneof: "value_type"),
            // Pipeline-only values: decoded so the shared parser rejects them with its message.
            F(19, "fieldReferenceValue", .string, oneof: "value_type"),
            F(22, "variableReferenceValue", .string, oneof: "value_type"),
        ]),
        ProtoSchema(v1 + "ArrayValue", [F(1, "values", m("Value"), repeated: true)]),
        ProtoSchema(v1 + "MapValue", [F(1, "fields", .valueMap)]),
        ProtoSchema("google.type.LatLng", [F(1, "latitude", .double), F(2, "longitude", .double)]),

        // common.proto
        ProtoSchema(v1 + "DocumentMask", [F(1, "fieldPaths", .string, repeated: true)]),
        ProtoSchema(v1 + "Precondition", [F(1, "exists", .bool, oneof: "condition_type"),
                                          F(2, "updateTime", .timestamp, oneof: "condition_type")]),
        ProtoSchema(v1 + "TransactionOptions", [F(2, "readOnly", m("TransactionOptions.ReadOnly"), oneof: "mode"),
                                                F(3, "readWrite", m("TransactionOptions.ReadWrite"), oneof: "mode")]),
        ProtoSchema(v1 + "TransactionOptions.ReadOnly", [F(2, "readTime", .timestamp, oneof: consistency)]),
        ProtoSchema(v1 + "TransactionOptions.ReadWrite", [
            F(1, "retryTransaction", .bytes),
            F(2, "concurrencyMode", .enumeration([0: "CONCURRENCY_MODE_UNSPECIFIED", 1: "OPTIMISTIC", 2: "PESSIMISTIC"])),
        ]),

        // write.proto
        ProtoSchema(v1 + "Write", [
            F(1, "update", m("Document"), oneof: "operation"), F(2, "delete", .string, oneof: "operation"),
            F(6, "transform", m("DocumentTransform"), oneof: "operation"), F(3, "updateMask", m("DocumentMask")),
            F(7, "updateTransforms", m("DocumentTransform.FieldTransform"), repeated: true),
            F(4, "currentDocument", m("Precondition")),
        ]),
        ProtoSchema(v1 + "DocumentTransform", [F(1, "document", .string),
                                               F(2, "fieldTransforms", m("DocumentTransform.FieldTransform"), repeated: true)]),
        ProtoSchema(v1 + "DocumentTransform.FieldTransform", [
            F(1, "fieldPath", .string),
            F(2, "setToServerValue", .enumeration([0: "SERVER_VALUE_UNSPECIFIED", 1: "REQUEST_TIME"]), oneof: "transform_type"),
            F(3, "increment", m("Value"), oneof: "transform_type"), F(4, "maximum", m("Value"), oneof: "transform_type"),
            F(5, "minimum", m("Value"), oneof: "transform_type"),
            F(6, "appendMissingElements", m("ArrayValue"), oneof: "transform_type"),
            F(7, "removeAllFromArray", m("ArrayValue"), oneof: "transform_type"),
        ]),

        // query.proto
        ProtoSchema(v1 + "StructuredQuery", [
            F(1, "select", m("StructuredQuery.Projection")), F(2, "from", m("StructuredQuery.CollectionSelector"), repeated: true),
            F(3, "where", m("StructuredQuery.Filter")), F(4, "orderBy", m("StructuredQuery.Order"), repeated: true),
            F(7, "startAt", m("Cursor")), F(8, "endAt", m("Cursor")), F(6, "offset", .int32), F(5, "limit", .int32Value),
            F(9, "findNearest", m("StructuredQuery.FindNearest")),
        ]),
        ProtoSchema(v1 + "StructuredQuery.CollectionSelector", [F(2, "collectionId", .string), F(3, "allDescendants", .bool)]),
        ProtoSchema(v1 + "StructuredQuery.Filter", [
            F(1, "compositeFilter", m("StructuredQuery.CompositeFilter"), oneof: "filter_type"),
            F(2, "fieldFilter", m("StructuredQuery.FieldFilter"), oneof: "filter_type"),
            F(3, "unaryFilter", m("StructuredQuery.UnaryFilter"), oneof: "filter_type"),
        ]),
        ProtoSchema(v1 + "StructuredQuery.CompositeFilter", [
            F(1, "op", .enumeration([0: "OPERATOR_UNSPECIFIED", 1: "AND", 2: "OR"])),
            F(2, "filters", m("StructuredQuery.Filter"), repeated: true),
        ]),
        ProtoSchema(v1 + "StructuredQuery.FieldFilter", [F(1, "field", m("StructuredQuery.FieldReference")),
                                                         F(2, "op", .enumeration(fieldOperators)), F(3, "value", m("Value"))]),
        ProtoSchema(v1 + "StructuredQuery.UnaryFilter", [
            F(1, "op", .enumeration([0: "OPERATOR_UNSPECIFIED", 2: "IS_NAN", 3: "IS_NULL", 4: "IS_NOT_NAN", 5: "IS_NOT_NULL"])),
            F(2, "field", m("StructuredQuery.FieldReference"), oneof: "operand_type"),
        ]),
        ProtoSchema(v1 + "StructuredQuery.Order", [
            F(1, "field", m("StructuredQuery.FieldReference")),
            F(2, "direction", .enumeration([0: "DIRECTION_UNSPECIFIED", 1: "ASCENDING", 2: "DESCENDING"])),
        ]),
        ProtoSchema(v1 + "StructuredQuery.FieldReference", [F(2, "fieldPath", .string)]),
        ProtoSchema(v1 + "StructuredQuery.Projection", [F(2, "fields", m("StructuredQuery.FieldReference"), repeated: true)]),
        ProtoSchema(v1 + "StructuredQuery.FindNearest", [
            F(1, "vectorField", m("StructuredQuery.FieldReference")), F(2, "queryVector", m("Value")),
            F(3, "distanceMeasure", .enumeration([0: "DISTANCE_MEASURE_UNSPECIFIED", 1: "EUCLIDEAN", 2: "COSINE", 3: "DOT_PRODUCT"])),
            F(4, "limit", .int32Value), F(5, "distanceResultField", .string), F(6, "distanceThreshold", .doubleValue),
        ]),
        ProtoSchema(v1 + "Cursor", [F(1, "values", m("Value"), repeated: true), F(2, "before", .bool)]),
        ProtoSchema(v1 + "StructuredAggregationQuery", [
            F(1, "structuredQuery", m("StructuredQuery"), oneof: "query_type"),
            F(3, "aggregations", m("StructuredAggregationQuery.Aggregation"), repeated: true),
        ]),
        ProtoSchema(v1 + "StructuredAggregationQuery.Aggregation", [
            F(1, "count", m("StructuredAggregationQuery.Aggregation.Count"), oneof: "operator"),
            F(2, "sum", m("StructuredAggregationQuery.Aggregation.Sum"), oneof: "operator"),
            F(3, "avg", m("StructuredAggregationQuery.Aggregation.Avg"), oneof: "operator"),
            F(7, "alias", .string),
        ]),
        ProtoSchema(v1 + "StructuredAggregationQuery.Aggregation.Count", [F(1, "upTo", .int64Value)]),
        ProtoSchema(v1 + "StructuredAggregationQuery.Aggregation.Sum", [F(1, "field", m("StructuredQuery.FieldReference"))]),
        ProtoSchema(v1 + "StructuredAggregationQuery.Aggregation.Avg", [F(1, "field", m("StructuredQuery.FieldReference"))]),
        ProtoSchema(v1 + "ExplainOptions", [F(1, "analyze", .bool)]),

        // firestore.proto: requests
        ProtoSchema(v1 + "GetDocumentRequest", [
            F(1, "name", .string), F(2, "mask", m("DocumentMask")),
            F(3, "transaction", .bytes, oneof: consistency), F(5, "readTime", .timestamp, oneof: consistency),
        ]),
        ProtoSchema(v1 + "ListDocumentsRequest", [
            F(1, "parent", .string), F(2, "collectionId", .string), F(3, "pageSize", .int32), F(4, "pageToken", .string),
            F(6, "orderBy", .string), F(7, "mask", m("DocumentMask")),
            F(8, "transaction", .bytes, oneof: consistency), F(10, "readTime", .timestamp, oneof: consistency),
            F(12, "showMissing", .bool),
        ]),
        ProtoSchema(v1 + "CreateDocumentRequest", [
            F(1, "parent", .string), F(2, "collectionId", .string), F(3, "documentId", .string),
            F(4, "document", m("Document")), F(5, "mask", m("DocumentMask")),
        ]),
        ProtoSchema(v1 + "UpdateDocumentRequest", [
            F(1, "document", m("Document")), F(2, "updateMask", m("DocumentMask")), F(3, "mask", m("DocumentMask")),
            F(4, "currentDocument", m("Precondition")),
        ]),
        ProtoSchema(v1 + "DeleteDocumentRequest", [F(1, "name", .string), F(2, "currentDocument", m("Precondition"))]),
        ProtoSchema(v1 + "BatchGetDocumentsRequest", [
            F(1, "database", .string), F(2, "documents", .string, repeated: true), F(3, "mask", m("DocumentMask")),
            F(4, "transaction", .bytes, oneof: consistency), F(5, "newTransaction", m("TransactionOptions"), oneof: consistency),
            F(7, "readTime", .timestamp, oneof: consistency),
        ]),
        ProtoSchema(v1 + "BeginTransactionRequest", [F(1, "database", .string), F(2, "options", m("TransactionOptions"))]),
        ProtoSchema(v1 + "CommitRequest", [F(1, "database", .string), F(2, "writes", m("Write"), repeated: true),
                                           F(3, "transaction", .bytes)]),
        ProtoSchema(v1 + "RollbackRequest", [F(1, "database", .string), F(2, "transaction", .bytes)]),
        ProtoSchema(v1 + "RunQueryRequest", [
            F(1, "parent", .string), F(2, "structuredQuery", m("StructuredQuery"), oneof: "query_type"),
            F(5, "transaction", .bytes, oneof: consistency), F(6, "newTransaction", m("TransactionOptions"), oneof: consistency),
            F(7, "readTime", .timestamp, oneof: consistency), F(10, "explainOptions", m("ExplainOptions")),
        ]),
        ProtoSchema(v1 + "RunAggregationQueryRequest", [
            F(1, "parent", .string),
            F(2, "structuredAggregationQuery", m("StructuredAggregationQuery"), oneof: "query_type"),
            F(4, "transaction", .bytes, oneof: consistency), F(5, "newTransaction", m("TransactionOptions"), oneof: consistency),
            F(6, "readTime", .timestamp, oneof: consistency), F(8, "explainOptions", m("ExplainOptions")),
        ]),
        ProtoSchema(v1 + "PartitionQueryRequest", [
            F(1, "parent", .string), F(2, "structuredQuery", m("StructuredQuery"), oneof: "query_type"),
            F(3, "partitionCount", .int64), F(4, "pageToken", .string), F(5, "pageSize", .int32),
            F(6, "readTime", .timestamp, oneof: consistency),
        ]),
        ProtoSchema(v1 + "ListCollectionIdsRequest", [
            F(1, "parent", .string), F(2, "pageSize", .int32), F(3, "pageToken", .string),
            F(4, "readTime", .timestamp, oneof: consistency),
        ]),
        ProtoSchema(v1 + "BatchWriteRequest", [F(1, "database", .string), F(2, "writes", m("Write"), repeated: true),
                                               F(3, "labels", .stringMap)]),

        // firestore.proto: the streams (read by the realtime engine)
        ProtoSchema(v1 + "ListenRequest", [
            F(1, "database", .string), F(2, "addTarget", m("Target"), oneof: "target_change"),
            F(3, "removeTarget", .int32, oneof: "target_change"), F(4, "labels", .stringMap),
        ]),
        ProtoSchema(v1 + "Target", [
            F(2, "query", m("Target.QueryTarget"), oneof: "target_type"),
            F(3, "documents", m("Target.DocumentsTarget"), oneof: "target_type"),
            F(4, "resumeToken", .bytes, oneof: "resume_type"), F(11, "readTime", .timestamp, oneof: "resume_type"),
            F(5, "targetId", .int32), F(6, "once", .bool), F(12, "expectedCount", .int32Value),
        ]),
        ProtoSchema(v1 + "Target.QueryTarget", [F(1, "parent", .string),
                                                F(2, "structuredQuery", m("StructuredQuery"), oneof: "query_type")]),
        ProtoSchema(v1 + "Target.DocumentsTarget", [F(2, "documents", .string, repeated: true)]),
        ProtoSchema(v1 + "WriteRequest", [
            F(1, "database", .string), F(2, "streamId", .string), F(3, "writes", m("Write"), repeated: true),
            F(4, "streamToken", .bytes), F(5, "labels", .stringMap),
        ]),
    ]
}
