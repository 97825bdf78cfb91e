import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The shipped `rules/firestore.rules` through the REST API: owner allowed, others denied.
@Suite struct ShippedRulesTests {
    static let rulesPath = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("rules/firestore.rules").path

    static func harness() throws -> TestHarness {
        try TestHarness(rulesPath: rulesPath)
    }

    static let uuid = "123e4567-e89b-42d3-a456-426614174000"

    /// The seed's metadata write: `users/{uid}/files/{autoId}` with a server timestamp.
    static func metadataWrite(_ h: TestHarness, uid: String, fileID: String = "f1", fields overrides: [(String, JSON?)] = [],
                              serverCreatedAt: Bool = true) -> JSON {
        var fields = JSONObject([
            ("ownerUid", str(uid)), ("storage", str("s3")), ("s3Key", str("users/\(uid)/uploads/\(uuid).jpg")),
            ("contentType", str("image/jpeg")), ("status", str("ready")),
        ])
        for (k, v) in overrides { fields[k] = v }
        var write: [(String, JSON)] = [
            ("update", .object(["name": .string("\(h.root)/users/\(uid)/files/\(fileID)"), "fields": .object(fields)])),
            ("currentDocument", .object(["exists": .bool(false)])),
        ]
        if serverCreatedAt {
            write.append(("updateTransforms", .array([.object(["fieldPath": .string("createdAt"), "setToServerValue": .string("REQUEST_TIME")])])))
        }
        return .object(["writes": .array([.object(JSONObject(write))])])
    }

    @Test func theRulesFileLoaded() throws {
        let h = try Self.harness()
        guard case .ruleset = h.service.rules.active(for: h.project, database: "(default)") else {
            Issue.record("rules did not load from \(Self.rulesPath): \(h.logLines)")
            return
        }
    }

    @Test func ownerCreatesTheSeedMetadataDocument() throws {
        let h = try Self.harness()
        let r = h.call("POST", h.api(":commit"), Self.metadataWrite(h, uid: "u1"), as: .user("u1"))
        #expect(r.status == 200, "\(r.json)")
        let doc = h.call("GET", h.api("/users/u1/files/f1"), as: .user("u1"))
        #expect(doc.status == 200)
        // A server timestamp is the commit time at millisecond precision.
        let commitInstant = ValueJSON.parseTimestamp(r.json["commitTime"]?.stringValue ?? "") ?? Instant(unixMicros: 0)
        #expect(doc.json["fields"]?["createdAt"] == ts(ValueJSON.formatTimestamp(WriteApplier.requestTime(commitInstant))))
    }

    @Test(arguments: [("other user", TestHarness.As.user("u2")), ("signed out", .anonymous)])
    func othersCannotCreate(_ label: String, _ who: TestHarness.As) throws {
        let h = try Self.harness()
        let r = h.call("POST", h.api(":commit"), Self.metadataWrite(h, uid: "u1"), as: who)
        #expect(r.status == 403, "\(label)")
        #expect(r.json["error"]?["status"]?.stringValue == "PERMISSION_DENIED")
        #expect(r.json["error"]?["code"] == .int(403))
        let message = r.json["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("for 'create' @ L"), "\(message)")
        #expect(h.call("GET", h.api("/users/u1/files/f1")).status == 404)
    }

    @Test(arguments: [
        ("extra field", [("url", Optional(str("http://x")))], true),
        ("presigned URL in a field", [("originalName", Optional(str("https://s3/x?X-Amz-Signature=abc")))], true),
        ("missing status", [("status", nil)], true),
        ("bad status", [("status", Optional(str("done")))], true),
        ("wrong storage", [("storage", Optional(str("gcs")))], true),
        ("key of another user", [("s3Key", Optional(str("users/u2/uploads/\(uuid).jpg")))], true),
        ("key not an upload key", [("s3Key", Optional(str("users/u1/other.jpg")))], true),
        ("content type not allowed", [("contentType", Optional(str("text/html")))], true),
        ("ownerUid of another user", [("ownerUid", Optional(str("u2")))], true),
        ("client createdAt", [("createdAt", Optional(ts("2020-01-01T00:00:00Z")))], false),
    ])
    func badFieldSetsAreDenied(_ label: String, _ overrides: [(String, JSON?)], _ serverCreatedAt: Bool) throws {
        let h = try Self.harness()
        let r = h.call("POST", h.api(":commit"), Self.metadataWrite(h, uid: "u1", fields: overrides, serverCreatedAt: serverCreatedAt), as: .user("u1"))
        #expect(r.status == 403, "\(label): \(r.json)")
    }

    @Test func readsListsUpdatesAndDeletes() throws {
        let h = try Self.harness()
        #expect(h.call("POST", h.api(":commit"), Self.metadataWrite(h, uid: "u1"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/files/f1"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/files/f1"), as: .user("u2")).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files/f1"), as: .anonymous).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files/missing"), as: .user("u1")).status == 404)
        #expect(h.call("GET", h.api("/users/u1/files/missing"), as: .user("u2")).status == 403)

        #expect(h.query(sq("files"), parent: "/users/u1", as: .user("u1")).ids == ["f1"])
        #expect(h.query(sq("files"), parent: "/users/u1", as: .user("u2")).status == 403)
        #expect(h.call("GET", h.api("/users/u1/files"), as: .user("u1")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/files"), as: .anonymous).status == 403)
        // Collection-group queries are not covered by the shipped rules.
        #expect(h.query(sq("files", allDescendants: true), as: .user("u1")).status == 403)

        let statusOnly = h.call("PATCH", h.api("/users/u1/files/f1?updateMask.fieldPaths=status"),
                                .object(["fields": .object(["status": str("pending")])]), as: .user("u1"))
        #expect(statusOnly.status == 200, "\(statusOnly.json)")
        let moveKey = h.call("PATCH", h.api("/users/u1/files/f1?updateMask.fieldPaths=s3Key"),
                             .object(["fields": .object(["s3Key": str("users/u1/uploads/\(Self.uuid).png")])]), as: .user("u1"))
        #expect(moveKey.status == 403)
        #expect(moveKey.json["error"]?["message"]?.stringValue?.contains("for 'update' @ L") == true)
        #expect(h.call("PATCH", h.api("/users/u1/files/f1?updateMask.fieldPaths=status"),
                       .object(["fields": .object(["status": str("ready")])]), as: .user("u2")).status == 403)

        #expect(h.call("DELETE", h.api("/users/u1/files/f1"), as: .user("u2")).status == 403)
        #expect(h.call("DELETE", h.api("/users/u1/files/f1"), as: .user("u1")).status == 200)
        // Anything outside users/{uid}/files is denied.
        #expect(h.call("PATCH", h.api("/public/x"), .object(["fields": .object([:])]), as: .user("u1")).status == 403)
        // The owner bearer bypasses rules.
        #expect(h.call("PATCH", h.api("/public/x"), .object(["fields": .object([:])]), as: .owner).status == 200)
    }

    @Test func batchGetIsJudgedPerDocument() throws {
        let h = try Self.harness()
        #expect(h.call("POST", h.api(":commit"), Self.metadataWrite(h, uid: "u1"), as: .user("u1")).status == 200)
        #expect(h.call("POST", h.api(":commit"), Self.metadataWrite(h, uid: "u2"), as: .user("u2")).status == 200)
        let own = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/users/u1/files/f1")])]), as: .user("u1"))
        #expect(own.status == 200)
        let mixed = h.call("POST", h.api(":batchGet"), .object(["documents": .array([
            .string(h.root + "/users/u1/files/f1"), .string(h.root + "/users/u2/files/f1"),
        ])]), as: .user("u1"))
        #expect(mixed.status == 403)
    }
}
