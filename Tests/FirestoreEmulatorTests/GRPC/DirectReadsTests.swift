import Foundation
import HearthCore
import HearthGRPC
import Testing
@testable import FirestoreEmulator

/// BatchGetDocuments and RunQuery answered directly from the core send exactly the messages (and
/// fail with exactly the status) the general path makes from the REST handler's JSON.
///
/// The requests run in the same order on two identical stores (same documents, same frozen clock,
/// same id seed), the general path on one and the direct path on the other, so even a new
/// transaction's id agrees.
struct DirectReadsTests {
    static let rules = """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            match /users/{uid}/{rest=**} { allow read: if request.auth != null && request.auth.uid == uid; }
            match /open/{d} { allow read: if true; }
          }
        }
        """

    /// Collects what a handler sends.
    final class Collected: GRPCResponseStream, @unchecked Sendable {
        var messages: [[UInt8]] = []
        func send(_ message: [UInt8]) -> Bool { messages.append(message); return true }
        func finish(_ status: GRPCStatus) {}
        func waitUntilWritable() -> Bool { true }
        var bufferedBytes: Int { 0 }
        var isClosed: Bool { false }
    }

    /// What one path answered: its messages, or the status it failed with.
    enum Outcome: Equatable {
        case messages([[UInt8]])
        case failed(GRPCStatus.Code, String)
    }

    static func seeded() throws -> TestHarness {
        let h = try TestHarness(rules: rules)
        for i in 0..<5 {
            h.put("open/d\(i)", ["n": int(Int64(i)), "s": str("v\(i)"), "m": .object(["mapValue": .object(["fields": .object(["a": int(1), "b": str("x")])])])])
        }
        h.put("users/alice/files/f1", ["owner": str("alice"), "size": int(10)])
        h.put("users/alice/files/f2", ["owner": str("alice"), "size": int(20)])
        h.put("users/bob/files/f1", ["owner": str("bob")])
        return h
    }

    /// The request as protobuf, from its proto3 JSON.
    static func encoded(_ json: JSONObject, _ message: String) -> [UInt8] {
        ProtoJSON.encode(json, FirestoreSchemas.v1 + message)
    }

    static func context(_ who: TestHarness.As) -> GRPCContext {
        var metadata: [(name: String, value: String)] = []
        switch who {
        case .owner: metadata.append(("authorization", "Bearer owner"))
        case .user(let uid): metadata.append(("authorization", "Bearer " + TestHarness.token(uid)))
        case .anonymous: break
        case .header(let v): metadata.append(("authorization", v))
        }
        return GRPCContext(metadata: metadata, deadlineNanos: nil, remoteAddress: "127.0.0.1:1", requestID: "T")
    }

    /// Runs `request` through the general path on one store and the direct path on the other.
    func compare(_ method: String, _ request: JSONObject, as who: TestHarness.As = .owner,
                 on stores: (general: TestHarness, direct: TestHarness)) throws -> (general: Outcome, direct: Outcome) {
        let (general, direct) = stores
        let messageName = method == "RunQuery" ? "RunQueryRequest" : "BatchGetDocumentsRequest"
        let bytes = Self.encoded(request, messageName)
        let ctx = Self.context(who)

        let restGeneral = RESTBridge(service: general.service)
        let handler = method == "RunQuery"
            ? restGeneral.streamingVerb("RunQueryRequest", field: "parent", verb: "runQuery", response: "RunQueryResponse", markDone: true)
            : restGeneral.streamingVerb("BatchGetDocumentsRequest", field: "database", verb: "batchGet",
                                        response: "BatchGetDocumentsResponse", markDone: false)
        guard case .serverStreaming(let run) = handler else { throw FirestoreError.internal("not streaming") }
        let g = Collected()
        let generalOutcome: Outcome
        do throws(GRPCStatus) {
            try run(bytes, ctx, g)
            generalOutcome = .messages(g.messages)
        } catch {
            generalOutcome = .failed(error.code, error.message)
        }

        let restDirect = RESTBridge(service: direct.service)
        let d = Collected()
        let directOutcome: Outcome
        do throws(GRPCStatus) {
            let handled = method == "RunQuery" ? try restDirect.directRunQuery(bytes, ctx, d) : try restDirect.directBatchGet(bytes, ctx, d)
            #expect(handled, "the direct path declined \(request)")
            directOutcome = .messages(d.messages)
        } catch {
            directOutcome = .failed(error.code, error.message)
        }
        return (generalOutcome, directOutcome)
    }

    var root: String { "projects/demo-test/databases/(default)/documents" }
    var database: JSON { .string("projects/demo-test/databases/(default)") }

    @Test func batchGetAnswersAsTheGeneralPath() throws {
        let names: JSON = .array([.string(root + "/open/d1"), .string(root + "/open/missing"), .string(root + "/open/d3"),
                                  .string(root + "/open/d1")])
        let requests: [(JSONObject, TestHarness.As)] = [
            (["database": database, "documents": names], .owner),
            (["database": database, "documents": names, "mask": .object(["fieldPaths": .array([.string("s"), .string("m.b")])])], .owner),
            (["database": database, "documents": names, "newTransaction": .object(["readOnly": .object([:])])], .owner),
            (["database": database, "documents": names, "readTime": .string("2026-01-02T03:04:05.123456Z")], .owner),
            (["database": database, "documents": .array([.string(root + "/users/alice/files/f1"), .string(root + "/users/alice/files/nope")])],
             .user("alice")),
            // Denied by the rules, a foreign database, a malformed name, no documents at all.
            (["database": database, "documents": .array([.string(root + "/users/bob/files/f1")])], .user("alice")),
            (["database": database, "documents": .array([.string(root + "/open/d1"), .string("projects/other/databases/(default)/documents/open/d1")])],
             .owner),
            (["database": database, "documents": .array([.string("projects/demo-test/databases/(default)/documents/open")])], .owner),
            (["database": database], .owner),
        ]
        var answered = 0
        let stores = (try Self.seeded(), try Self.seeded())
        for (request, who) in requests {
            let (general, direct) = try compare("BatchGetDocuments", request, as: who, on: stores)
            #expect(general == direct, "\(request)")
            if case .messages(let m) = general, !m.isEmpty { answered += 1 }
        }
        #expect(answered == 5)  // the rest fail, each with the same status both ways
    }

    @Test func runQueryAnswersAsTheGeneralPath() throws {
        func query(_ q: JSONObject, parent: String? = nil, extra: [(String, JSON)] = []) -> JSONObject {
            JSONObject([("parent", .string(parent ?? root)), ("structuredQuery", .object(q))] + extra)
        }
        let open: JSON = .array([.object(["collectionId": .string("open")])])
        let files: JSON = .array([.object(["collectionId": .string("files")])])
        let byN: JSON = .array([.object(["field": .object(["fieldPath": .string("n")]), "direction": .string("DESCENDING")])])
        let requests: [(JSONObject, TestHarness.As)] = [
            (query(["from": open]), .owner),
            (query(["from": open, "orderBy": byN, "limit": .int(3)]), .owner),
            (query(["from": open, "orderBy": byN, "offset": .int(2)]), .owner),
            (query(["from": open, "offset": .int(9)]), .owner),
            (query(["from": open, "select": .object(["fields": .array([.object(["fieldPath": .string("m.a")])])])]), .owner),
            (query(["from": open, "where": .object(["fieldFilter": .object([
                "field": .object(["fieldPath": .string("n")]), "op": .string("GREATER_THAN_OR_EQUAL"), "value": int(3)])])]), .owner),
            (query(["from": open], extra: [("newTransaction", .object(["readOnly": .object([:])]))]), .owner),
            (query(["from": .array([.object(["collectionId": .string("nothing")])])], extra: [("newTransaction", .object([:]))]), .owner),
            (query(["from": files], parent: root + "/users/alice"), .user("alice")),
            (query(["from": .array([.object(["collectionId": .string("files"), "allDescendants": .bool(true)])])]), .owner),
            // Denied by the rules, a collection as the parent, a bad query, no query.
            (query(["from": files], parent: root + "/users/bob"), .user("alice")),
            (query(["from": open], parent: root + "/open"), .owner),
            (query(["from": open, "limit": .int(-1)]), .owner),
            (JSONObject([("parent", .string(root))]), .owner),
        ]
        var answered = 0
        let stores = (try Self.seeded(), try Self.seeded())
        for (request, who) in requests {
            let (general, direct) = try compare("RunQuery", request, as: who, on: stores)
            #expect(general == direct, "\(request)")
            if case .messages(let m) = general, !m.isEmpty { answered += 1 }
        }
        #expect(answered == 10)
    }
}
