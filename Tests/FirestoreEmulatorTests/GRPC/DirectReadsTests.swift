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

    /// Where the loop's path (`quickRunQuery`, `quickBatchGet`) answered a call.
    enum QuickPath: Equatable { case loop, handedOn, declined, failed }

    /// Runs `request` through the loop's path on `store`: what `GRPCCall` does with its answer —
    /// every message at once, the rest run as a worker would, or (declined) the general handler.
    func quick(_ method: String, _ request: JSONObject, as who: TestHarness.As = .owner, on store: TestHarness) -> (Outcome, QuickPath) {
        let bytes = Self.encoded(request, method == "RunQuery" ? "RunQueryRequest" : "BatchGetDocumentsRequest")
        let ctx = Self.context(who)
        let rest = RESTBridge(service: store.service)
        let c = Collected()
        do throws(GRPCStatus) {
            switch method == "RunQuery" ? try rest.quickRunQuery(bytes, ctx) : try rest.quickBatchGet(bytes, ctx) {
            case .answered(let batch)?:
                batch.forEachMessage { c.messages.append(Array($0)) }
                return (.messages(c.messages), .loop)
            case .rest(let run)?:
                try run(c)
                return (.messages(c.messages), .handedOn)
            case nil:
                _ = method == "RunQuery" ? try rest.directRunQuery(bytes, ctx, c) : try rest.directBatchGet(bytes, ctx, c)
                return (.messages(c.messages), .declined)
            }
        } catch {
            return (.failed(error.code, error.message), .failed)
        }
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
        var paths: [QuickPath] = []
        let stores = (try Self.seeded(), try Self.seeded())
        let onLoop = try Self.seeded()
        try onLoop.indexFields("open", ["n"])  // queried before (a first query on a field goes on on a worker: below)
        for (request, who) in requests {
            let (general, direct) = try compare("BatchGetDocuments", request, as: who, on: stores)
            #expect(general == direct, "\(request)")
            let (quick, path) = quick("BatchGetDocuments", request, as: who, on: onLoop)
            #expect(quick == general, "on the loop: \(request)")
            paths.append(path)
            if case .messages(let m) = general, !m.isEmpty { answered += 1 }
        }
        #expect(answered == 5)  // the rest fail, each with the same status every way
        #expect(paths == [.loop, .loop, .loop, .loop, .loop, .failed, .failed, .failed, .loop])  // the last: no documents, no message
    }

    /// A BatchGetDocuments naming more documents than the loop takes goes on on a worker, with
    /// the same answer.
    @Test func aLargeBatchGetGoesOnOnAWorker() throws {
        let many: JSON = .array((0..<(RESTBridge.quickBatchGetDocuments + 1)).map { .string(root + "/open/d\($0 % 7)x\($0)") }
                                + [.string(root + "/open/d1")])
        let stores = (try Self.seeded(), try Self.seeded())
        let onLoop = try Self.seeded()
        let request: JSONObject = ["database": database, "documents": many]
        let (general, direct) = try compare("BatchGetDocuments", request, on: stores)
        #expect(general == direct)
        let (quick, path) = quick("BatchGetDocuments", request, on: onLoop)
        #expect(quick == general && path == .handedOn)
        guard case .messages(let m) = quick else { Issue.record("failed: \(quick)"); return }
        #expect(m.count == RESTBridge.quickBatchGetDocuments + 2)
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
        var paths: [QuickPath] = []
        let stores = (try Self.seeded(), try Self.seeded())
        let onLoop = try Self.seeded()
        try onLoop.indexFields("open", ["n"])  // queried before (a first query on a field goes on on a worker: below)
        try onLoop.service.storage.groupScans.build(onLoop.database)  // likewise a first collection-group query (below)
        for (request, who) in requests {
            let (general, direct) = try compare("RunQuery", request, as: who, on: stores)
            #expect(general == direct, "\(request)")
            let (quick, path) = quick("RunQuery", request, as: who, on: onLoop)
            #expect(quick == general, "on the loop: \(request)")
            paths.append(path)
            if case .messages(let m) = general, !m.isEmpty { answered += 1 }
        }
        #expect(answered == 10)
        // New transactions go on on a worker; errors are thrown on the loop.
        #expect(paths == [.loop, .loop, .loop, .loop, .loop, .loop, .handedOn, .handedOn, .loop, .loop,
                          .failed, .failed, .failed, .failed])
        // The first collection-group query goes on on a worker, which builds the group's scan index
        // (`GroupScanIndex`; on the loop it would walk the whole space); the next one is answered on the loop.
        let fresh = try Self.seeded()
        let group = requests[9].0
        let (first, firstPath) = quick("RunQuery", group, on: fresh)
        let (second, secondPath) = quick("RunQuery", group, on: fresh)
        #expect(first == second && firstPath == .handedOn && secondPath == .loop)
        #expect(fresh.service.storage.groupScans.isBuilt)
    }

    /// A RunQuery request read before (`ParsedQueryCache`) is answered from its kept `Query`, and
    /// still judged per call: the same bytes from the owner, another user, nobody and a bad token
    /// answer as the general path does for each, whichever comes first. Requests in a transaction or
    /// at a read time are not kept; a request that failed its checks is not kept.
    @Test func aQueryReadBeforeIsStillJudgedPerCall() throws {
        let files: JSON = .array([.object(["collectionId": .string("files")])])
        let request = JSONObject([("parent", .string(root + "/users/alice")), ("structuredQuery", .object(["from": files]))])
        let callers: [TestHarness.As] = [.user("alice"), .user("bob"), .anonymous, .header("Bearer not-a-token"), .owner, .user("alice")]
        let stores = (try Self.seeded(), try Self.seeded())
        let onLoop = try Self.seeded()
        for (i, who) in callers.enumerated() {
            let (general, _) = try compare("RunQuery", request, as: who, on: stores)
            let (quick, _) = quick("RunQuery", request, as: who, on: onLoop)
            #expect(quick == general, "\(who), call \(i)")
            if case .user("alice") = who, case .messages(let m) = quick { #expect(m.count == 2) }
        }
        #expect(onLoop.service.parsedQueries.count == 1)
        // Not kept: a transaction's, a read time's, a bad query's, a parent that is not a document.
        for extra in [("newTransaction", JSON.object([:])), ("readTime", .string("2026-01-02T03:04:05Z"))] {
            _ = quick("RunQuery", JSONObject(request.members + [extra]), on: onLoop)
        }
        _ = quick("RunQuery", JSONObject([("parent", .string(root)), ("structuredQuery", .object(["from": files, "limit": .int(-1)]))]), on: onLoop)
        _ = quick("RunQuery", JSONObject([("parent", .string(root + "/open")), ("structuredQuery", .object(["from": files]))]), on: onLoop)
        #expect(onLoop.service.parsedQueries.count == 1)
    }

    /// A query answered on the loop since the last write is answered again from its kept answer
    /// (`DocumentCache.answer`), byte for byte, and still judged per call as the general path judges
    /// it; a write through the service ends it, and rules that read documents never use it (their
    /// reads must share the query's snapshot).
    @Test func aRepeatedQueryIsAnsweredFromItsKeptAnswerUntilAWrite() throws {
        let files: JSON = .array([.object(["collectionId": .string("files")])])
        let request = JSONObject([("parent", .string(root + "/users/alice")), ("structuredQuery", .object(["from": files]))])
        let stores = (try Self.seeded(), try Self.seeded())
        let onLoop = try Self.seeded()
        let cache = onLoop.service.storage.readCache
        let (first, firstPath) = quick("RunQuery", request, as: .user("alice"), on: onLoop)
        guard case .messages(let m) = first else { Issue.record("no answer: \(first)"); return }
        #expect(m.count == 2 && firstPath == .loop && cache.answerCount == 1)
        #expect(try compare("RunQuery", request, as: .user("alice"), on: stores).general == first)
        // The rows go behind the cache's back (not through the service: no write ends its
        // generation), so only the kept answer still holds the documents.
        try onLoop.database.write { conn in try conn.run("DELETE FROM fs_documents") }
        let (again, againPath) = quick("RunQuery", request, as: .user("alice"), on: onLoop)
        #expect(again == first && againPath == .loop)
        // Judged per call: other callers are answered as the general path answers them.
        for who: TestHarness.As in [.user("bob"), .anonymous, .header("Bearer not-a-token"), .owner] {
            let (general, _) = try compare("RunQuery", request, as: who, on: stores)
            let (kept, _) = quick("RunQuery", request, as: who, on: onLoop)
            #expect(kept == general, "\(who)")
        }
        // A write through the service ends the kept answer: the store's state (the new document only).
        onLoop.put("users/alice/files/f3", ["owner": str("alice")])
        #expect(cache.answerCount == 0)
        let (after, _) = quick("RunQuery", request, as: .user("alice"), on: onLoop)
        if case .messages(let m) = after { #expect(m.count == 1) } else { Issue.record("no answer: \(after)") }
        #expect(cache.answerCount == 1)

        // Rules that read documents: the query reads the store every time.
        let reading = try TestHarness(rules: """
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /users/{uid}/{rest=**} {
                  allow read: if request.auth.uid == uid || exists(/databases/$(database)/documents/open/d0);
                }
              }
            }
            """)
        reading.put("users/alice/files/f1", ["owner": str("alice")])
        let (one, _) = quick("RunQuery", request, as: .user("alice"), on: reading)
        if case .messages(let m) = one { #expect(m.count == 1) } else { Issue.record("no answer: \(one)") }
        try reading.database.write { conn in try conn.run("DELETE FROM fs_documents") }
        let (none, _) = quick("RunQuery", request, as: .user("alice"), on: reading)
        // One message still (no document: only the read time and `done`), not the kept document's.
        if case .messages(let m) = none { #expect(m.count == 1 && none != one) } else { Issue.record("no answer: \(none)") }
    }

    /// A query that reads more rows or bytes than the loop may (`QueryRowCap`) stops there and goes
    /// on on a worker, its rules decision already made, with the same answer as the general path's —
    /// and a denial is still a denial, thrown on the loop before anything is read.
    @Test func aQueryPastTheLoopsCapGoesOnOnAWorker() throws {
        func seeded() throws -> TestHarness {
            let h = try Self.seeded()
            for i in 0..<(RESTBridge.quickQueryRows + 20) { h.put("many/m\(i)", ["n": int(Int64(i)), "even": .object(["booleanValue": .bool(i % 2 == 0)])]) }
            // Four documents whose stored fields pass the byte cap together (not alone).
            let big = String(repeating: "x", count: RESTBridge.quickQueryBytes / 3)
            for i in 0..<4 { h.put("users/alice/big/b\(i)", ["n": int(Int64(i)), "s": str(big)]) }
            // Fields queried before (a first query on a field scans, then builds its index rows).
            try h.indexFields("many", ["n", "even"])
            return h
        }
        let many: JSON = .array([.object(["collectionId": .string("many")])])
        let big: JSON = .array([.object(["collectionId": .string("big")])])
        let byN: JSON = .array([.object(["field": .object(["fieldPath": .string("n")]), "direction": .string("DESCENDING")])])
        let odd: JSON = .object(["fieldFilter": .object(["field": .object(["fieldPath": .string("even")]), "op": .string("EQUAL"),
                                                         "value": .object(["booleanValue": .bool(false)])])])
        func query(_ q: JSONObject, parent: String? = nil) -> JSONObject {
            JSONObject([("parent", .string(parent ?? root)), ("structuredQuery", .object(q))])
        }
        let cases: [(JSONObject, TestHarness.As, QuickPath)] = [
            (query(["from": many, "orderBy": byN, "limit": .int(10)]), .owner, .loop),
            (query(["from": many, "where": odd, "orderBy": byN, "limit": .int(10)]), .owner, .loop),
            (query(["from": many]), .owner, .handedOn),
            (query(["from": many, "where": odd, "orderBy": byN, "limit": .int(105)]), .owner, .handedOn),
            (query(["from": big], parent: root + "/users/alice"), .user("alice"), .handedOn),
            (query(["from": big, "limit": .int(1)], parent: root + "/users/alice"), .user("alice"), .loop),
            // Within the cap, but its answer is more than one batch: sent from a worker as the client reads.
            (query(["from": big, "limit": .int(2)], parent: root + "/users/alice"), .user("alice"), .handedOn),
            (query(["from": big], parent: root + "/users/alice"), .user("bob"), .failed),
        ]
        let stores = (try seeded(), try seeded())
        let onLoop = try seeded()
        for (request, who, expected) in cases {
            let (general, direct) = try compare("RunQuery", request, as: who, on: stores)
            #expect(general == direct, "\(request)")
            let (quick, path) = quick("RunQuery", request, as: who, on: onLoop)
            #expect(quick == general, "on the loop: \(request)")
            #expect(path == expected, "\(request) \(who)")
        }
    }

    /// A first query on a field no query has needed goes on on a worker, however few rows it reads:
    /// building the field's index rows writes one for every document of the collection id under
    /// every parent, and the loop thread must not wait for that. The worker builds them, so the
    /// same query's next call is answered on the loop, and both answers are the general path's.
    @Test func aFirstQueryOnAFreshFieldBuildsOnAWorker() throws {
        let files: JSON = .array([.object(["collectionId": .string("files")])])
        let bySize: JSON = .array([.object(["field": .object(["fieldPath": .string("size")]), "direction": .string("DESCENDING")])])
        let request = JSONObject([("parent", .string(root + "/users/alice")),
                                  ("structuredQuery", .object(["from": files, "orderBy": bySize, "limit": .int(1)]))])
        let stores = (try Self.seeded(), try Self.seeded())
        let onLoop = try Self.seeded()
        var paths: [QuickPath] = []
        for _ in 0..<2 {
            let (general, _) = try compare("RunQuery", request, as: .user("alice"), on: stores)
            let (quick, path) = quick("RunQuery", request, as: .user("alice"), on: onLoop)
            #expect(quick == general)
            if case .messages(let m) = quick { #expect(m.count == 1) } else { Issue.record("no answer: \(quick)") }
            paths.append(path)
        }
        #expect(paths == [.handedOn, .loop])
    }

    /// Every value type and its edge values, as stored through REST.
    static let everyType: [String: JSON] = [
        "null": nullV, "yes": bool(true), "no": bool(false),
        "big": int(.max), "small": int(.min), "zero": int(0), "n": int(-5),
        "f": dbl(1.5), "whole": dbl(2), "negZero": dbl(-0.0), "tiny": dbl(.leastNonzeroMagnitude), "huge": dbl(1e300),
        "nan": .object(["doubleValue": .string("NaN")]), "inf": .object(["doubleValue": .string("Infinity")]),
        "ninf": .object(["doubleValue": .string("-Infinity")]),
        "s": str("héllo \"quoted\" \n\u{2028}"), "empty": str(""),
        "b": .object(["bytesValue": .string("AP8B")]), "noBytes": .object(["bytesValue": .string("")]),
        "r": .object(["referenceValue": .string("projects/demo-test/databases/(default)/documents/c/e")]),
        "g": .object(["geoPointValue": .object(["latitude": .double(1.5), "longitude": .double(-2)])]),
        "g0": .object(["geoPointValue": .object(["latitude": .double(0), "longitude": .double(0)])]),
        "t": ts("2026-01-02T03:04:05.123456Z"), "tn": ts("2023-11-14T22:13:20.987654321Z"), "epoch": ts("1970-01-01T00:00:00Z"),
        "old": ts("1969-12-31T23:59:58.5Z"),
        "a": arr([bool(true), str(""), map([("in", arr([int(1)]))]), map([]), nullV, dbl(-0.0)]), "noItems": arr([]),
        "m": map([("inner", map([("deep", int(1))])), ("B", nullV), ("a", dbl(0.1))]), "noMembers": map([]),
        "Z": int(1), "é": int(2), "10": int(3), "9": int(4),
    ]

    static func seededWithEveryType() throws -> TestHarness {
        let h = try TestHarness(rules: rules)
        h.put("open/all", everyType)
        h.put("open/bare", [:])
        h.put("open/one", ["n": int(1), "m": map([("a", int(1)), ("b", str("x"))])])
        return h
    }

    /// Documents answered from a kept encoding (`DocumentCache.proto(of:)`), and ones encoded afresh,
    /// are the bytes the general path makes from the REST JSON: the first call keeps each document's
    /// encoding, the second answers from it; masks, projections, past reads and transactions are
    /// encoded for themselves.
    @Test func everyValueTypeAnswersAsTheGeneralPathWhetherKeptOrNot() throws {
        let open: JSON = .array([.object(["collectionId": .string("open")])])
        let names: JSON = .array([.string(root + "/open/all"), .string(root + "/open/gone"), .string(root + "/open/bare"),
                                  .string(root + "/open/one")])
        let stores = (try Self.seededWithEveryType(), try Self.seededWithEveryType())
        let query = JSONObject([("parent", .string(root)), ("structuredQuery", .object(["from": open]))])
        let batchGet: JSONObject = ["database": database, "documents": names]
        let onLoop = try Self.seededWithEveryType()
        // Nothing kept yet, then each document's encoding kept by the first call and used by the second.
        for round in 0..<2 {
            for (method, request) in [("RunQuery", query), ("BatchGetDocuments", batchGet)] {
                let (general, direct) = try compare(method, request, on: stores)
                #expect(general == direct, "\(method), round \(round)")
                let (quick, path) = quick(method, request, on: onLoop)
                #expect(quick == general && path == .loop, "\(method) on the loop, round \(round)")
                guard case .messages(let m) = direct else { Issue.record("\(method) failed: \(direct)"); continue }
                #expect(m.count == (method == "RunQuery" ? 3 : 4))
            }
            #expect(stores.1.service.storage.readCache.entry(root + "/open/all") != nil)
        }
        // Kept by a get (its entry's encoding), then answered by a query and a batchGet.
        let fresh = (try Self.seededWithEveryType(), try Self.seededWithEveryType())
        for h in [fresh.0, fresh.1] {
            for doc in ["all", "bare", "one"] {
                _ = try h.service.getLatest(DatabaseID(project: "demo-test", database: "(default)"),
                                            path: ResourcePath(["open", doc]), caller: .admin)
            }
        }
        for (method, request) in [("RunQuery", query), ("BatchGetDocuments", batchGet)] {
            let (general, direct) = try compare(method, request, on: fresh)
            #expect(general == direct, "\(method) after gets")
        }
        // Shaped or past reads beside kept entries: each answers its own version and fields.
        let before = try #require(stores.0.call("GET", stores.0.api("/open/one")).json["updateTime"]?.stringValue)
        stores.0.put("open/one", ["n": int(2)])
        stores.1.put("open/one", ["n": int(2)])
        let mask: JSON = .object(["fieldPaths": .array([.string("m.b"), .string("nan"), .string("g")])])
        let select: JSON = .object(["fields": .array([.object(["fieldPath": .string("m.a")]), .object(["fieldPath": .string("tn")])])])
        let requests: [(String, JSONObject)] = [
            ("RunQuery", query),
            ("BatchGetDocuments", batchGet),
            ("RunQuery", JSONObject([("parent", .string(root)), ("structuredQuery", .object(["from": open, "select": select]))])),
            ("BatchGetDocuments", ["database": database, "documents": names, "mask": mask]),
            ("RunQuery", JSONObject(query.members + [("newTransaction", .object(["readOnly": .object([:])]))])),
            ("BatchGetDocuments", ["database": database, "documents": names, "newTransaction": .object([:])]),
            ("RunQuery", JSONObject(query.members + [("readTime", .string(before))])),
            ("BatchGetDocuments", ["database": database, "documents": names, "readTime": .string(before)]),
        ]
        for (method, request) in requests {
            let (general, direct) = try compare(method, request, on: stores)
            #expect(general == direct, "\(method) \(request)")
            if case .failed = direct { Issue.record("\(method) failed: \(direct)") }
        }
    }
}
