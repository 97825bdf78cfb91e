import Foundation
import HearthCore
import HearthProtobuf
@testable import FirestoreEmulator

/// The Firestore request parts no other target reads from raw bytes: every gRPC request message
/// through `ProtoJSON` (the listen-write and writes targets send well-formed Listen, Write and
/// Commit requests), a structured query from protobuf and from JSON through `QueryParser` (filters,
/// cursors, offsets, `findNearest`), a REST batchGet body through `BatchGetJSONDecoder`, and the
/// opaque tokens a client hands back: list page tokens (base64 of the stored-value codec's bytes,
/// so `StoredValueCodec` reads client bytes), resume tokens, and the unverified ID token whose
/// claims become `request.auth`.
///
/// Invariant: whatever the batchGet fast path reads, the general path (the JSON tree) reads the
/// same names and transaction from the same bytes.
extension FuzzTargets {
    static let requestSchemas = ["RunQueryRequest", "RunAggregationQueryRequest", "BatchGetDocumentsRequest", "ListenRequest",
                                 "WriteRequest", "GetDocumentRequest", "ListDocumentsRequest", "BeginTransactionRequest",
                                 "PartitionQueryRequest", "BatchWriteRequest", "ListCollectionIdsRequest", "UpdateDocumentRequest"]
        .map { FirestoreSchemas.v1 + $0 }

    static func firestoreRequests(_ bytes: UnsafeRawBufferPointer) throws(FuzzFailure) {
        let raw = Array(bytes)
        let database = DatabaseID(project: "p", database: "(default)")
        let parser = QueryParser(database: database, parent: .root)
        // gRPC: the first byte picks the request message; a structured query is read whole.
        if let first = raw.first {
            let rest = Array(raw.dropFirst())
            _ = try? ProtoJSON.decode(rest, requestSchemas[Int(first) % requestSchemas.count])
            if let query = try? ProtoJSON.decode(rest, FirestoreSchemas.v1 + "StructuredQuery") {
                _ = try? parser.parse(ProtoObject(query, path: "structuredQuery"))
            }
        }
        // REST: the same bytes as a JSON structured query and as a batchGet body.
        if let json = try? JSON.parse(raw) {
            if let query = try? ProtoObject(json: json, path: "structuredQuery") { _ = try? parser.parse(query) }
            if let fast = BatchGetJSONDecoder.body(raw) {
                let object = json.objectValue
                let names = object?["documents"]?.arrayValue?.compactMap(\.stringValue)
                let transaction = object?["transaction"]?.stringValue
                guard object?.keys.allSatisfy({ $0 == "documents" || $0 == "transaction" }) == true,
                      fast.names == names ?? [], fast.transaction == transaction else {
                    throw FuzzFailure("batchGet: the fast path read \(fast), the JSON tree \(json.serialized())")
                }
                FuzzChecks.count("firestore-requests")
            }
        }
        // Tokens handed back: as the client sends them (text) and as bytes that decode.
        let text = text(bytes)
        _ = try? ListPageToken.parse(text)
        _ = try? ListPageToken.parse(Data(Array("HLP1".utf8) + raw).base64EncodedString())
        _ = try? StoredValueCodec.decodeFields(raw)
        _ = ResumeToken.decode(raw)
        if let claims = Caller.decodeUnverified(text) {
            _ = RulesConversion.auth(uid: claims["user_id"]?.stringValue ?? "", claims: claims)
        }
        _ = Caller.simpleBearerToken(text)
    }
}
