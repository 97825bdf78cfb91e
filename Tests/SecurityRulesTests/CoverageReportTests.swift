import Foundation
import HearthCore
import Testing
@testable import SecurityRules

/// The coverage report, byte for byte, after a varied mix of requests: the shipped rules with
/// creates, updates, reads and deletes (granted, denied, failing on errors, values unique to each
/// request past the distinct-values cap, equal values built apart and shared by identity) and a
/// second file with the constructs the shipped one lacks. The expected report was recorded from the
/// implementation that compared every visit with its entries one by one and that skipped the
/// evaluator's fast paths while recording; any change to how coverage records or folds must leave
/// it unchanged.
struct CoverageReportTests {
    static let extra = rules("""
        function both(a, b) { let s = a + '/' + b; return s.size() > 3 ? s : 'short'; }
        match /things/{id} {
          allow create: if request.resource.data.keys().hasAny(['n', 'f', 'tags'])
            && request.resource.data.keys().hasOnly(['n', 'f', 'tags', 'name', 'm'])
            && (!('n' in request.resource.data) || request.resource.data.n + 1 > 0)
            && (!('f' in request.resource.data) || request.resource.data.f == request.resource.data.f)
            && (!('tags' in request.resource.data) || request.resource.data.tags.size() < 4)
            && (!('name' in request.resource.data) || both(request.resource.data.name, id) != 'short')
            && [id, request.auth.uid, 'x'] != [1]
            && {'k': id, 'u': request.auth.uid}.size() == 2
            && request.resource.data.get('m', {}).keys().hasAll([])
            && request.path[3:5] != []
            && (id in ['a', 'b'] ? true : exists(/databases/$(database)/documents/things/$(id)) || true);
          allow read: if resource.data.owner == request.auth.uid || get(/databases/$(database)/documents/things/$(id)).data.public == true;
          allow update: if request.resource.data.diff(resource.data).affectedKeys().hasOnly(['n'])
            && debug(request.resource.data.n) is int;
        }
    """)

    /// A deterministic sequence of small numbers.
    struct Dice {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
    }

    static func time(_ k: Int) -> RulesValue { .timestamp(seconds: 1_767_225_600 + Int64(k / 3), nanos: Int32(k % 3) * 1000) }

    /// Requests against the shipped rules, some built once and judged again (their values share
    /// storage), most built fresh.
    static func shippedMix() -> [RulesRequest] {
        var dice = Dice()
        var out: [RulesRequest] = []
        let types = ["image/jpeg", "image/png", "text/html", "application/pdf"]
        var reused: RulesRequest?
        for k in 0..<420 {
            let uid = ["u1", "u2", "caf\u{E9}", "cafe\u{301}"][dice.next(4)]
            let owner = dice.next(6) == 0 ? "u9" : uid
            let file = "f\(k % 50)"
            let when = time(k)
            var data: [String: RulesValue] = [
                "ownerUid": .string(owner), "storage": .string(dice.next(10) == 0 ? "gcs" : "s3"),
                "s3Key": .string(dice.next(8) == 0 ? "https://x/?X-Amz-Signature=1" : "users/\(owner)/uploads/123e4567-e89b-42d3-a456-42661417400\(k % 10).jpg"),
                "contentType": .string(types[dice.next(types.count)]),
                "status": .string(["pending", "ready", "gone"][dice.next(3)]),
                "createdAt": dice.next(7) == 0 ? .timestamp(seconds: 1, nanos: 0) : when,
            ]
            switch dice.next(6) {
            case 0: data["size"] = .int(Int64(dice.next(3)) - 1)
            case 1: data["size"] = .float(dice.next(2) == 0 ? 0.0 : -0.0)
            case 2: data["originalName"] = .string(dice.next(2) == 0 ? "a.jpg" : "http://evil")
            case 3: data["originalName"] = .int(5)
            case 4: data["extra"] = .bool(true)
            default: break
            }
            if dice.next(12) == 0 { data["status"] = nil }
            let path = ["databases", "(default)", "documents", "users", uid, "files", file]
            let auth: RulesValue? = dice.next(9) == 0 ? nil : .map(["uid": .string(uid), "token": .map(["sub": .string(uid)])])
            let resource: RulesValue = .map(["data": .map(RulesMap(data)), "id": .string(file), "__name__": .path(path)])
            let method: RulesMethod = [.create, .create, .create, .update, .get, .delete][dice.next(6)]
            var existing = data
            existing["status"] = .string("pending")
            existing["createdAt"] = .timestamp(seconds: 7, nanos: 0)
            let stored: RulesValue = .map(["data": .map(RulesMap(existing)), "id": .string(file), "__name__": .path(path)])
            let request = RulesRequest(method: method, path: path, auth: auth, time: when,
                                       requestResource: method == .create || method == .update ? resource : nil,
                                       resource: method == .create ? nil : stored)
            if k % 40 == 0 { reused = request }
            out.append(request)
            if k % 7 == 0, let reused { out.append(reused) }
        }
        return out
    }

    static func extraMix() -> [RulesRequest] {
        var dice = Dice(state: 42)
        var out: [RulesRequest] = []
        for k in 0..<150 {
            let id = ["a", "b", "c\(k % 40)", "long-identifier-\(k % 3)"][dice.next(4)]
            let path = ["databases", "(default)", "documents", "things", id]
            var data: [String: RulesValue] = [:]
            switch dice.next(5) {
            case 0: data["n"] = .int(Int64(dice.next(5)) - 2)
            case 1: data["f"] = .float([0.0, -0.0, .nan, 1.5][dice.next(4)])
            case 2: data["tags"] = .list((0..<dice.next(6)).map { .string("t\($0)") })
            case 3: data["name"] = dice.next(3) == 0 ? .int(1) : .string(["x", "abcdef", "caf\u{E9}", "cafe\u{301}"][dice.next(4)])
            default: data["q"] = .null
            }
            if dice.next(4) == 0 { data["m"] = .map(["z": .int(Int64(k % 3))]) }
            let method: RulesMethod = [.create, .create, .get, .update][dice.next(4)]
            let auth: RulesValue? = dice.next(8) == 0 ? nil : .map(["uid": .string("u\(dice.next(3))")])
            let stored: RulesValue = .map(["data": .map(["owner": .string("u\(dice.next(3))"), "n": .int(1)]), "id": .string(id), "__name__": .path(path)])
            out.append(RulesRequest(method: method, path: path, auth: auth, time: time(k),
                                    requestResource: method == .get ? nil : .map(["data": .map(RulesMap(data)), "id": .string(id), "__name__": .path(path)]),
                                    resource: method == .create ? nil : stored))
        }
        return out
    }

    static func report() -> String {
        let shippedSource = Fixtures.read(Fixtures.repoRoot.appendingPathComponent("rules/firestore.rules"))
        let shipped = compiled(shippedSource, "firestore.rules")
        let extra = compiled(Self.extra, "extra.rules")
        let lookup = MapLookup(documents: ["databases/(default)/documents/things/c1": ["public": .bool(true)],
                                           "databases/(default)/documents/things/c2": ["public": .string("yes")]])
        // One collector for both files, as a project's collector sees reloads; interleaved so
        // folds see both tables in one batch.
        let coverage = RulesCoverage()
        var allowed = 0
        let a = shippedMix(), b = extraMix()
        for k in 0..<max(a.count, b.count) {
            if k < a.count, shipped.evaluate(a[k], lookup: lookup, coverage: coverage).allowed { allowed += 1 }
            if k < b.count, extra.evaluate(b[k], lookup: lookup, coverage: coverage).allowed { allowed += 1 }
        }
        var out = "allowed \(allowed) of \(a.count + b.count)\n"
        for r in [shipped, extra] {
            out += "== \(r.fileName) json\n" + coverage.json(for: r).serialized(pretty: true) + "\n"
            out += "== \(r.fileName) html\n" + coverage.html(for: r) + "\n"
        }
        return out
    }

    /// FNV-1a over the report's UTF-8 (a checksum to compare with, not a secret).
    static func digest(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    /// The recorded report (1.7 MB, so only its length and checksum are kept here).
    static let recordedLength = 1_680_200
    static let recordedDigest: UInt64 = 0x8ae1_7bde_e6c4_4009

    /// Records an issue unless `got` has the recorded length and checksum; a mismatch is written
    /// to a temporary file, for a diff against a report written by the recording implementation.
    static func expectRecorded(_ got: String, length: Int, digest recorded: UInt64, name: String) throws {
        guard got.utf8.count != length || digest(got) != recorded else { return }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try got.write(to: file, atomically: true, encoding: .utf8)
        Issue.record("the report (\(got.utf8.count) bytes, checksum \(String(digest(got), radix: 16))) differs from the recorded one; written to \(file.path)")
    }

    @Test func reportIsUnchanged() throws {
        try Self.expectRecorded(Self.report(), length: Self.recordedLength, digest: Self.recordedDigest, name: "hearth-coverage-report.txt")
    }

    /// A fresh collector given the same requests reports the same, whichever folds ran in the
    /// background and which inline (more evaluations wait than the inline limit).
    @Test func reportsRepeat() {
        #expect(Self.report() == Self.report())
    }
}
