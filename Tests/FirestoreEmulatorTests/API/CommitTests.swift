import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// commit with every write kind and transform, batchWrite, atomicity.
@Suite struct CommitTests {
    func update(_ h: TestHarness, _ path: String, _ fields: [(String, JSON)], mask: [String]? = nil,
                transforms: [JSON] = [], exists: Bool? = nil) -> JSON {
        var w: [(String, JSON)] = [("update", .object(["name": .string(h.root + "/" + path), "fields": .object(JSONObject(fields))]))]
        if let mask { w.append(("updateMask", .object(["fieldPaths": .array(mask.map { .string($0) })]))) }
        if !transforms.isEmpty { w.append(("updateTransforms", .array(transforms))) }
        if let exists { w.append(("currentDocument", .object(["exists": .bool(exists)]))) }
        return .object(JSONObject(w))
    }

    func transform(_ field: String, _ kind: String, _ value: JSON) -> JSON {
        .object(JSONObject([("fieldPath", .string(field)), (kind, value)]))
    }

    /// A document written twice in one commit in an order the emulator cannot collapse into one
    /// mutation: the whole commit refused before anything is read or written (`WriteCollapse`).
    @Test func aDocumentTwiceInAnOrderThatCannotCollapse() throws {
        let h = try TestHarness()
        let name = h.root + "/c/d"
        let set = update(h, "c/d", [("a", int(1))])
        let create = update(h, "c/d", [("a", int(2))], exists: false)
        let delete = JSON.object(["delete": .string(name)])
        let deleteExisting = JSON.object(JSONObject([("delete", .string(name)), ("currentDocument", .object(["exists": .bool(true)]))]))
        func atTime(_ t: String) -> JSON {
            .object(JSONObject([("update", .object(["name": .string(name), "fields": .object([:])])), ("currentDocument", .object(["updateTime": .string(t)]))]))
        }
        for (writes, message) in [
            ([set, create], "Cannot upsert then insert an entity in the same request."),
            ([create, create], "Cannot insert then insert an entity in the same request."),
            ([delete, deleteExisting], "Cannot delete then delete an entity in the same request."),
            ([delete, set, delete, atTime("2020-01-01T00:00:00Z")], "Cannot delete then update an entity in the same request."),
            ([set, atTime("2020-01-01T00:00:00Z")], "Cannot collapse mutations with different version preconditions "
                + "(null and VersionPrecondition{exactBaseVersion=1577836800000000, maxBaseVersion=null})"),
        ] {
            let r = h.call("POST", h.api(":commit"), .object(["writes": .array(writes)]))
            #expect(r.status == 400 && r.json["error"]?["message"]?.stringValue == message, "\(r.json)")
            #expect(h.call("GET", h.api("/c/d")).status == 404)
        }
        for writes in [[create, set, delete], [delete, create], [set, set], [set, update(h, "c/e", [], exists: false), delete]] {
            #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        }
    }

    @Test func everyTransformWithResults() throws {
        let h = try TestHarness()
        h.put("c/d", ["n": int(5), "d": dbl(1.5), "max": int(3), "min": int(3), "arr": arr([int(1), str("a"), int(2)]), "s": str("x")])
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            update(h, "c/d", [], mask: [], transforms: [
                transform("n", "increment", int(2)),
                transform("d", "increment", int(1)),
                transform("s", "increment", int(7)),
                transform("fresh", "increment", dbl(0.5)),
                transform("max", "maximum", dbl(3.0)),
                transform("min", "minimum", dbl(2.5)),
                transform("arr", "appendMissingElements", .object(["values": .array([dbl(1.0), int(9), int(9)])])),
                transform("gone", "removeAllFromArray", .object(["values": .array([int(1)])])),
                transform("when", "setToServerValue", .string("REQUEST_TIME")),
                transform("nested.at", "setToServerValue", .int(1)),
            ]),
        ])]))
        #expect(r.status == 200, "\(r.json)")
        let commitTime = r.json["commitTime"]?.stringValue ?? ""
        let results = r.json["writeResults"]?[0]?["transformResults"]?.arrayValue ?? []
        #expect(results.count == 10)
        #expect(results[0] == int(7))
        #expect(results[1] == dbl(2.5))
        #expect(results[2] == int(7))           // non-numeric field becomes the operand
        #expect(results[3] == dbl(0.5))
        #expect(results[4] == int(3))           // 3 vs 3.0: equivalent, the stored value stays
        #expect(results[5] == dbl(2.5))
        #expect(results[6] == nullV)            // array transforms report null
        // Server timestamps have millisecond precision: the commit time truncated to the millisecond.
        let requestTime = ValueJSON.formatTimestamp(WriteApplier.requestTime(ValueJSON.parseTimestamp(commitTime) ?? Instant(unixMicros: 0)))
        #expect(results[8] == ts(requestTime))
        #expect(r.json["writeResults"]?[0]?["updateTime"]?.stringValue == commitTime)
        let doc = h.call("GET", h.api("/c/d")).json["fields"]
        #expect(doc?["arr"] == arr([int(1), str("a"), int(2), int(9)]))
        #expect(doc?["gone"] == .object(["arrayValue": .object([:])]))
        #expect(doc?["when"] == ts(requestTime))
        #expect(doc?["nested"]?["mapValue"]?["fields"]?["at"] == ts(requestTime))
    }

    /// The server timestamps of one document's rewrites, each committed straight after the last.
    func rewrittenStamps(_ h: TestHarness, count: Int) -> [String] {
        (0..<count).map { i in
            let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
                update(h, "c/stamped", [("i", int(Int64(i)))], transforms: [transform("at", "setToServerValue", .string("REQUEST_TIME"))]),
            ])]))
            return r.json["writeResults"]?[0]?["transformResults"]?[0]?["timestampValue"]?.stringValue ?? ""
        }
    }

    @Test func aRewrittenServerTimestampIsLaterOnARunningClock() throws {
        // In process a commit takes microseconds: without the next millisecond, most of these
        // rewrites would store the timestamp the one before stored.
        let h = try TestHarness()
        h.clock.useSystemTime()
        let stamps = rewrittenStamps(h, count: 20).map { ValueJSON.parseTimestamp($0)?.unixMicros ?? 0 }
        for (a, b) in zip(stamps, stamps.dropFirst()) { #expect(a < b, "\(stamps)") }
        // Never further ahead of the clock than a millisecond.
        #expect((stamps.last ?? 0) <= h.clock.now().unixMicros + 1000)
    }

    @Test func aFrozenClockKeepsOneServerTimestamp() throws {
        let h = try TestHarness()
        let stamps = rewrittenStamps(h, count: 3)
        #expect(stamps == Array(repeating: "2026-01-02T03:04:05.123Z", count: 3))
    }

    @Test func theNextMillisecondOnlyWithinOneOfTheClock() {
        func at(_ m: Int64) -> Instant { Instant(unixMicros: m) }
        func next(_ t: Int64, _ previous: Int64, _ now: Int64) -> (Int64, Int64) {
            let r = WriteApplier.commitTime(at(t), afterStampedAt: at(previous), now: at(now))
            return (r.time.unixMicros, r.waitMicros)
        }
        // Same millisecond as the document's last write: the next one's first microsecond, at once.
        #expect(next(5_000_400, 5_000_100, 5_000_400) == (5_001_000, 0))
        // An earlier millisecond: unchanged.
        #expect(next(5_001_400, 5_000_900, 5_001_400) == (5_001_400, 0))
        // Commit times ahead of the clock: wait until it is within a millisecond of the next one.
        #expect(next(5_001_400, 5_001_100, 5_000_300) == (5_002_000, 700))
        #expect(next(5_001_400, 5_001_100, 5_001_000) == (5_002_000, 0))
        // More than a millisecond to wait (a clock moved back): unchanged, the stamps stay equal.
        #expect(next(5_001_400, 5_001_100, 4_999_900) == (5_001_400, 0))
    }

    @Test func integerIncrementSaturates() {
        #expect(WriteApplier.increment(.integer(.max - 1), by: .integer(5)) == .integer(.max))
        #expect(WriteApplier.increment(.integer(.min + 1), by: .integer(-5)) == .integer(.min))
        #expect(WriteApplier.increment(.integer(1), by: .double(0.5)) == .double(1.5))
        #expect(WriteApplier.extreme(.double(.nan), .integer(1), wantMax: true).isNaN)
        #expect(WriteApplier.extreme(.integer(1), .double(.nan), wantMax: false).isNaN)
        #expect(WriteApplier.extreme(.integer(0), .double(-0.0), wantMax: true) == .integer(0))
        #expect(WriteApplier.extreme(.integer(2), .double(2.5), wantMax: true) == .double(2.5))
        #expect(WriteApplier.extreme(nil, .integer(4), wantMax: false) == .integer(4))
    }

    @Test func removeAllUsesNumericEquivalence() {
        let (stored, result) = WriteApplier.transform(.removeAllFromArray([.double(1), .double(.nan)]),
                                                      current: .array([.integer(1), .double(.nan), .string("1"), .integer(1)]),
                                                      commitTime: Instant(unixMicros: 0))
        #expect(stored == .array([.string("1")]))
        #expect(result == .null)
    }

    @Test func commitIsAllOrNothing() throws {
        let h = try TestHarness()
        h.put("c/exists", ["x": int(1)])
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            update(h, "c/new", [("a", int(1))]),
            .object(["delete": .string(h.root + "/c/exists")]),
            update(h, "c/other", [("b", int(1))], exists: true),  // fails: missing
        ])]))
        #expect(r.status == 404)
        #expect(r.json["error"]?["message"]?.stringValue == "No document to update: \(h.root)/c/other")
        #expect(h.call("GET", h.api("/c/new")).status == 404)
        #expect(h.call("GET", h.api("/c/exists")).status == 200)
    }

    @Test func severalWritesToOneDocumentApplyInOrder() throws {
        let h = try TestHarness()
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            update(h, "c/d", [("a", int(1))]),
            update(h, "c/d", [("b", int(2))], mask: ["b"], transforms: [transform("a", "increment", int(10))]),
        ])]))
        #expect(r.status == 200)
        #expect(h.call("GET", h.api("/c/d")).json["fields"] == .object(["a": int(11), "b": int(2)]))
        #expect(r.json["writeResults"]?.arrayValue?.count == 2)
    }

    @Test func deprecatedTransformWriteAndDeleteResult() throws {
        let h = try TestHarness()
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            .object(["transform": .object(["document": .string(h.root + "/c/t"), "fieldTransforms": .array([transform("n", "increment", int(1))])])]),
            .object(["delete": .string(h.root + "/c/none")]),
        ])]))
        #expect(r.status == 200)
        #expect(r.json["writeResults"]?[1] == .object([:]))  // no updateTime after a delete
        #expect(h.call("GET", h.api("/c/t")).json["fields"] == .object(["n": int(1)]))
    }

    @Test(arguments: [
        #"{"writes":[{"update":{"name":"NAME","fields":{}},"delete":"NAME"}]}"#,
        #"{"writes":[{}]}"#,
        #"{"writes":[{"delete":"projects/other/databases/(default)/documents/c/d"},{"delete":"NAME"}]}"#,
        #"{"writes":[{"delete":"NAME","updateMask":{"fieldPaths":["a"]}}]}"#,
        #"{"writes":[{"update":{"name":"NAME"},"updateTransforms":[{"fieldPath":"a","increment":{"stringValue":"x"}}]}]}"#,
        #"{"writes":[{"update":{"name":"NAME"},"updateTransforms":[{"fieldPath":"a","setToServerValue":"NOW"}]}]}"#,
        #"{"writes":[{"update":{"name":"NAME"},"updateTransforms":[{"fieldPath":"a","increment":{"integerValue":"1"}},{"fieldPath":"a.b","increment":{"integerValue":"1"}}]}]}"#,
        #"{"writes":[{"currentDocument":{"exists":true}}]}"#,
        #"{"writes":[{"update":{"name":"NAME"},"currentDocument":{"exists":true,"updateTime":"2020-01-01T00:00:00Z"}}]}"#,
        #"{"writes":[{"update":{"name":"NAME"},"updateTransforms":[{"fieldPath":"a","appendMissingElements":{"values":[{"arrayValue":{}}]}}]}]}"#,
        #"{"transaction":"bm9wZQ==","writes":[]}"#,
    ])
    func invalidCommitsAreRejected(_ template: String) throws {
        let h = try TestHarness()
        let body = template.replacingOccurrences(of: "NAME", with: h.root + "/c/d")
        let r = h.rawCall("POST", h.api(":commit"), body)
        #expect(r.status == 400, "\(body) → \(r.json)")
        #expect(r.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
        #expect(h.call("GET", h.api("/c/d")).status == 404)
    }

    /// A commit acts on the database its document names name, whatever the URL says.
    @Test func writesNamingAnotherProjectLandThere() throws {
        let h = try TestHarness()
        let other = "projects/other/databases/(default)/documents"
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            .object(["update": .object(["name": .string(other + "/c/d"), "fields": .object(["x": int(1)])])]),
        ])]))
        #expect(r.status == 200, "\(r.json)")
        #expect(h.call("GET", "/v1/\(other)/c/d").json["fields"] == .object(["x": int(1)]))
        #expect(h.call("GET", h.api("/c/d")).status == 404)
        let got = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(other + "/c/d")])]))
        #expect(got.json[0]?["found"]?["name"]?.stringValue == other + "/c/d")
    }

    /// Firestore accepts two transforms of one field (applied in order) and a mask naming a path
    /// twice or with a path inside it.
    @Test func repeatedTransformsAndOverlappingMasksAreAccepted() throws {
        let h = try TestHarness()
        let body = #"{"writes":[{"update":{"name":"NAME","fields":{"a":{"mapValue":{"fields":{"b":{"integerValue":"1"}}}}}},"updateMask":{"fieldPaths":["a","a.b","a"]},"updateTransforms":[{"fieldPath":"n","increment":{"integerValue":"2"}},{"fieldPath":"n","increment":{"doubleValue":0.5}}]}]}"#
        let r = h.rawCall("POST", h.api(":commit"), body.replacingOccurrences(of: "NAME", with: h.root + "/c/d"))
        #expect(r.status == 200, "\(r.json)")
        #expect(r.json["writeResults"]?[0]?["transformResults"] == .array([int(2), .object(["doubleValue": .double(2.5)])]))
        #expect(h.call("GET", h.api("/c/d")).json["fields"]?["n"] == .object(["doubleValue": .double(2.5)]))
    }

    @Test func batchWriteReportsEachWrite() throws {
        let h = try TestHarness()
        h.put("c/old", ["x": int(1)])
        let r = h.call("POST", h.api(":batchWrite"), .object(["writes": .array([
            update(h, "c/a", [("x", int(1))]),
            update(h, "c/old", [("x", int(2))], exists: false),
            .object(["delete": .string(h.root + "/c/gone")]),
        ])]))
        #expect(r.status == 200)
        let statuses = r.json["status"]?.arrayValue ?? []
        #expect(statuses.count == 3)
        #expect(statuses[0] == .object([:]))
        #expect(statuses[1]["code"] == .int(6))
        #expect(statuses[1]["message"]?.stringValue == "Document already exists: \(h.root)/c/old")
        #expect(r.json["writeResults"]?[0]?["updateTime"] != nil)
        #expect(r.json["writeResults"]?[1] == .object([:]))
        #expect(h.call("GET", h.api("/c/a")).status == 200)
        #expect(h.call("GET", h.api("/c/old")).json["fields"] == .object(["x": int(1)]))
    }

    @Test func serverSideDocumentStoreWrite() throws {
        let h = try TestHarness(rules: "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read, write: if false; } } }")
        let doc = try h.service.setDocument(projectID: h.project, path: "users/u1/files/f1",
                                            fields: ["status": str("ready"), "size": int(3)], serverTimestampFields: ["createdAt"])
        #expect(doc["name"]?.stringValue == h.root + "/users/u1/files/f1")
        // A server timestamp is the commit time at millisecond precision.
        let commitInstant = ValueJSON.parseTimestamp(doc["updateTime"]?.stringValue ?? "") ?? Instant(unixMicros: 0)
        #expect(doc["fields"]?["createdAt"] == ts(ValueJSON.formatTimestamp(WriteApplier.requestTime(commitInstant))))
        #expect(h.call("GET", h.api("/users/u1/files/f1")).status == 200)
        #expect(throws: FirestoreService.DocumentStoreError.self) {
            try h.service.setDocument(projectID: h.project, path: "users/u1", fields: ["a": .object(["bogus": .int(1)])], serverTimestampFields: [])
        }
        #expect(throws: FirestoreService.DocumentStoreError.self) {
            try h.service.setDocument(projectID: h.project, path: "users", fields: [:], serverTimestampFields: [])
        }
    }
}
