import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// Identity, list decisions, getAfter in batches, the rules endpoints, and the file watcher.
@Suite struct RulesEnforcementTests {
    static func rules(_ body: String) -> String {
        """
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
        \(body)
          }
        }
        """
    }

    @Test func identityFromTheAuthorizationHeader() throws {
        let h = try TestHarness(rules: Self.rules("match /{d=**} { allow read: if request.auth != null && request.auth.token.email == 'a@x.com'; }"))
        h.put("c/d", ["x": int(1)])
        let bad = h.call("GET", h.api("/c/d"), as: .header("Bearer notajwt"))
        #expect(bad.status == 400)
        #expect(bad.json == .object(["error": .object(["code": .int(400), "message": .string("invalid jwt"), "status": .string("INVALID_ARGUMENT")])]))
        #expect(h.call("GET", h.api("/c/d"), as: .anonymous).status == 403)
        #expect(h.call("GET", h.api("/c/d"), as: .user("u1")).status == 403)
        let withEmail = "Bearer " + TestHarness.token("u1", extra: [("email", .string("a@x.com"))])
        #expect(h.call("GET", h.api("/c/d"), as: .header(withEmail)).status == 200)
        #expect(h.call("GET", h.api("/c/d"), as: .header("Bearer OWNER")).status == 200)
        #expect(h.call("GET", h.api("/c/d"), as: .header("Basic abc")).status == 401)
    }

    @Test func listIsDecidedFromTheQueryNotTheData() throws {
        let h = try TestHarness(rules: Self.rules("""
            match /notes/{id} { allow list: if resource.data.owner == request.auth.uid; }
            match /limited/{id} { allow list: if request.query.limit <= 10; }
            match /named/{id} { allow list: if resource.id == 'a'; }
        """))
        h.put("notes/1", ["owner": str("u1")])
        h.put("notes/2", ["owner": str("u2")])
        let cases: [(String, JSON, String, Int, [String])] = [
            ("filtered by own uid", sq("notes", where: ff("owner", "EQUAL", str("u1"))), "u1", 200, ["1"]),
            ("no filter, though every stored doc would pass for u1 alone", sq("notes", where: ff("owner", "IN", arr([str("u1"), str("u2")]))), "u1", 403, []),
            ("filtered by another uid", sq("notes", where: ff("owner", "EQUAL", str("u2"))), "u1", 403, []),
            ("unfiltered", sq("notes"), "u1", 403, []),
            ("in with one value", sq("notes", where: ff("owner", "IN", arr([str("u1")]))), "u1", 200, ["1"]),
            ("OR of the same uid", sq("notes", where: composite("OR", [ff("owner", "EQUAL", str("u1")), composite("AND", [ff("owner", "EQUAL", str("u1")), ff("x", "EQUAL", int(1))])])), "u1", 200, ["1"]),
            ("OR with another uid", sq("notes", where: composite("OR", [ff("owner", "EQUAL", str("u1")), ff("owner", "EQUAL", str("u2"))])), "u1", 403, []),
            ("range is not equality", sq("notes", where: ff("owner", "GREATER_THAN_OR_EQUAL", str("u1"))), "u1", 403, []),
            ("filtered but empty result", sq("notes", where: ff("owner", "EQUAL", str("u9"))), "u9", 200, []),
            ("limit within", sq("limited", limit: 5), "u1", 200, []),
            ("limit over", sq("limited", limit: 50), "u1", 403, []),
            ("no limit", sq("limited"), "u1", 403, []),
            ("name pinned", sq("named", where: ff("__name__", "EQUAL", .object(["referenceValue": .string(h.root + "/named/a")]))), "u1", 200, []),
            ("name not pinned", sq("named"), "u1", 403, []),
        ]
        for (label, q, uid, status, ids) in cases {
            let r = h.query(q, as: .user(uid))
            #expect(r.status == status, "\(label): \(r.json)")
            if status == 200 { #expect(r.ids == ids, "\(label)") }
        }
    }

    @Test func collectionGroupQueriesNeedRecursiveWildcards() throws {
        let covered = try TestHarness(rules: Self.rules("match /{path=**}/posts/{post} { allow list: if true; }"))
        covered.put("users/a/posts/1", [:])
        #expect(covered.query(sq("posts", allDescendants: true), as: .anonymous).ids == ["1"])
        let topLevelOnly = try TestHarness(rules: Self.rules("match /posts/{post} { allow list: if true; }"))
        #expect(topLevelOnly.query(sq("posts", allDescendants: true), as: .anonymous).status == 403)
        #expect(topLevelOnly.query(sq("posts"), as: .anonymous).status == 200)
    }

    @Test func getAfterSeesTheWholeBatchAndGetSeesTheStoredState() throws {
        let h = try TestHarness(rules: Self.rules("""
            match /rooms/{room} {
              allow create: if getAfter(/databases/$(database)/documents/logs/$(room)).data.by == request.auth.uid;
            }
            match /logs/{room} {
              allow create: if existsAfter(/databases/$(database)/documents/rooms/$(room))
                            && !exists(/databases/$(database)/documents/rooms/$(room));
              allow read: if true;
            }
        """))
        func batch(_ includeLog: Bool) -> JSON {
            var writes: [JSON] = [.object(["update": .object(["name": .string(h.root + "/rooms/r1"), "fields": .object([:])])])]
            if includeLog {
                writes.append(.object(["update": .object(["name": .string(h.root + "/logs/r1"), "fields": .object(["by": str("u1")])])]))
            }
            return .object(["writes": .array(writes)])
        }
        #expect(h.call("POST", h.api(":commit"), batch(false), as: .user("u1")).status == 403)
        #expect(h.call("POST", h.api(":commit"), batch(true), as: .user("u2")).status == 403)
        #expect(h.call("POST", h.api(":commit"), batch(true), as: .user("u1")).status == 200)
    }

    @Test func requestTimeIsTheCommitTime() throws {
        let h = try TestHarness(rules: Self.rules("match /t/{id} { allow create: if request.resource.data.at == request.time; }"))
        let serverTime: JSON = .object(["writes": .array([.object([
            "update": .object(["name": .string(h.root + "/t/1"), "fields": .object([:])]),
            "updateTransforms": .array([.object(["fieldPath": .string("at"), "setToServerValue": .string("REQUEST_TIME")])]),
        ])])])
        #expect(h.call("POST", h.api(":commit"), serverTime, as: .anonymous).status == 200)
        let clientTime: JSON = .object(["writes": .array([.object(["update": .object(["name": .string(h.root + "/t/2"), "fields": .object(["at": ts("2026-01-02T03:04:05.123456Z")])])])])])
        #expect(h.call("POST", h.api(":commit"), clientTime, as: .anonymous).status == 403)
    }

    @Test func securityRulesEndpointInstallsAndReportsIssues() throws {
        let h = try TestHarness(rules: Self.rules("match /{d=**} { allow read, write: if false; }"))
        #expect(h.call("PATCH", h.api("/open/x"), .object(["fields": .object([:])]), as: .anonymous).status == 403)
        let put = h.call("PUT", "/emulator/v1/projects/\(h.project):securityRules", .object(["rules": .object(["files": .array([
            .object(["name": .string("firestore.rules"), "content": .string(Self.rules("match /open/{d} { allow read, write: if true; }"))]),
        ])])]), as: .anonymous)
        #expect(put.status == 200)
        #expect(put.json == .object([:]))  // no issues: an empty answer, as the emulator's
        #expect(h.call("PATCH", h.api("/open/x"), .object(["fields": .object([:])]), as: .anonymous).status == 200)
        // Another project keeps the base rules.
        #expect(h.call("PATCH", "/v1/projects/elsewhere/databases/(default)/documents/open/x", .object(["fields": .object([:])]), as: .anonymous).status == 403)

        let broken = h.call("PUT", "/emulator/v1/projects/\(h.project):securityRules", .object(["rules": .object(["files": .array([
            .object(["name": .string("bad.rules"), "content": .string("service cloud.firestore {\n  match /x { allow read: if ; }\n}")]),
        ])])]), as: .anonymous)
        // Rules that do not compile: 400 with each error as `L<line>:<column> <description>`, as the
        // official emulator answers (faith31; `@firebase/rules-unit-testing` throws on it).
        #expect(broken.status == 400)
        #expect(broken.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
        let message = broken.json["error"]?["message"]?.stringValue ?? ""
        #expect(message.hasPrefix("Error compiling rules:\nL2:"), "\(message)")
        // Warnings alone install the rules and are listed.
        let warned = h.call("PUT", "/emulator/v1/projects/\(h.project):securityRules", .object(["rules": .object(["files": .array([
            .object(["name": .string("firestore.rules"), "content": .string(Self.rules("match /open/{d} { allow read, write: if unknownVar == 1 || true; }"))]),
        ])])]), as: .anonymous)
        #expect(warned.status == 200, "\(warned.json)")
        #expect(warned.json["issues"]?[0]?["severity"]?.stringValue == "WARNING", "\(warned.json)")
        // The last good rules stay in force.
        #expect(h.call("PATCH", h.api("/open/y"), .object(["fields": .object([:])]), as: .anonymous).status == 200)

        let coverage = h.call("GET", "/emulator/v1/projects/\(h.project):ruleCoverage", as: .anonymous)
        #expect(coverage.status == 200)
        #expect(coverage.json.objectValue != nil)
        let html = h.call("GET", "/emulator/v1/projects/\(h.project):ruleCoverage.html", as: .anonymous)
        #expect(html.status == 200)
        #expect(html.response.headers["Content-Type"]?.hasPrefix("text/html") == true)
    }

    @Test func storageRulesLoadedIntoFirestoreDenyEverything() throws {
        // A storage-only file loads (as on the official emulator) but judges no Firestore request:
        // its `match /{all=**}` would otherwise match Firestore's paths and allow them.
        let storageOnly = "rules_version = '2';\nservice firebase.storage {\n  match /{all=**} { allow read, write: if true; }\n}\n"
        let base = try TestHarness(rules: storageOnly)
        #expect(base.call("PATCH", base.api("/open/x"), .object(["fields": .object([:])]), as: .anonymous).status == 403)
        #expect(base.call("GET", base.api("/open/x"), as: .user("u1")).status == 403)
        #expect(base.call("GET", base.api("/open/x"), as: .owner).status == 404)  // admin is not judged

        let h = try TestHarness(rules: Self.rules("match /{d=**} { allow read, write: if true; }"))
        #expect(h.call("PATCH", h.api("/open/x"), .object(["fields": .object([:])]), as: .anonymous).status == 200)
        let put = h.call("PUT", "/emulator/v1/projects/\(h.project):securityRules", .object(["rules": .object(["files": .array([
            .object(["name": .string("storage.rules"), "content": .string(storageOnly)]),
        ])])]), as: .anonymous)
        #expect(put.status == 200, "\(put.json)")
        let denied = h.call("GET", h.api("/open/x"), as: .anonymous)
        #expect(denied.status == 403)
        #expect(denied.json["error"]?["message"]?.stringValue?.contains("firebase.storage") == true, "\(denied.json)")
        // What was loaded is still what GET securityRules shows.
        let shown = h.call("GET", "/emulator/v1/projects/\(h.project):securityRules", as: .anonymous)
        #expect(shown.json["rules"]?["files"]?[0]?["content"]?.stringValue == storageOnly)
    }

    @Test func rulesFileIsReloadedWhenItChanges() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fs-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("firestore.rules")
        try Self.rules("match /{d=**} { allow read: if false; }").write(to: file, atomically: true, encoding: .utf8)
        let h = try TestHarness(rulesPath: file.path, watch: true)
        defer { h.service.stopWatchingRules() }
        h.put("c/d", [:])
        #expect(h.call("GET", h.api("/c/d"), as: .anonymous).status == 403)

        try Self.rules("match /{d=**} { allow read: if true; }").write(to: file, atomically: true, encoding: .utf8)
        // The watcher polls every 500 ms; wait for it rather than poking it.
        var status = 0
        for _ in 0..<600 {
            status = h.call("GET", h.api("/c/d"), as: .anonymous).status
            if status == 200 { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(status == 200)

        try "service cloud.firestore { match /x { allow read: if ; } }".write(to: file, atomically: true, encoding: .utf8)
        h.service.reloadRulesIfChanged()
        #expect(h.call("GET", h.api("/c/d"), as: .anonymous).status == 200)  // last good rules kept
        #expect(h.logLines.contains { $0.contains("ERROR") && $0.contains("keeping the previous rules") })
    }

    @Test func brokenRulesAtStartDenyEverything() throws {
        let h = try TestHarness(rules: "service cloud.firestore { nonsense")
        #expect(h.call("GET", h.api("/c/d"), as: .anonymous).status == 403)
        #expect(h.call("GET", h.api("/c/d"), as: .owner).status == 404)
        let open = try TestHarness()
        #expect(open.call("GET", open.api("/c/d"), as: .anonymous).status == 404)
    }
}
