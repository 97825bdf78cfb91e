import Foundation
import HearthCore
import Testing
@testable import SecurityRules

/// The coverage report, byte for byte, for the constructs whose recording is the most involved:
/// `+` chains of strings (left- and right-nested, with a non-string or a missing field partway
/// through, canonically equivalent spellings, a combining mark starting a later operand, results
/// short enough to sit inline in a String and long ones unique to each request), lists and ints
/// added, functions with lets, get()/exists() with interpolated paths, debug(), denials and
/// errors, and reports asked for partway through the traffic (a report must count everything
/// judged before it, whenever evaluations are folded). The expected checksum was recorded from
/// the implementation before coverage recorded `+` chains compactly and folded lazily, and
/// re-recorded when strings came to compare by their bytes (bytekeys): the canonically equivalent
/// spellings here ("caf\u{E9}", "cafe\u{301}") are now unequal, as in Google's evaluator, which
/// changes the decisions and counts that compare them; and again when errors took the official
/// emulator's words (`Expected: int + int, …` after an unsupported `+`) and a let's error became
/// the call's only where it is read (rulesrt33): `long()`'s body is now visited, and counted, when
/// `d.a` is missing.
struct CoverageChainReportTests {
    static let source = rules("""
        function join3(a, b, c) { return a + '/' + b + '/' + c; }
        function tagged(s) { let t = 'tag:' + s; return t + '!' + t.size(); }
        function long(d, id) { let x = d.a + '-' + d.b + '-' + id; return x + '|' + x + '|' + d.a; }
        match /chains/{id} {
          allow create: if join3(request.resource.data.a, request.resource.data.b, id).size() > 0
            && (request.resource.data.a + request.resource.data.b + '-' + id + '-' + request.resource.data.a).lower().matches('.*zz.*') == false
            && ('p' + ('q' + request.resource.data.a) + ('r' + id)).size() > 2
            && ([1] + [request.resource.data.n] + [id]).size() == 3
            && request.resource.data.n + 1 + 2 > 0
            && long(request.resource.data, id).size() < 500
            && (id.size() > 30 || tagged(id) != '')
            && exists(/databases/$(database)/documents/chains/$(id + '-' + request.resource.data.a)) == false;
          allow read: if resource.data.owner + '/' + id == request.auth.uid + '/' + id
            || get(/databases/$(database)/documents/chains/$('k' + id)).data.v + '!' == 'open!';
          allow update: if request.resource.data.a + '' == resource.data.owner + 'z'
            || request.resource.data.n + '' == 'x';
          allow delete: if debug('del:' + id + ':' + request.auth.uid) != null && request.auth.uid + '' == 'u1';
        }
    """)

    static func requests() -> [RulesRequest] {
        var dice = CoverageReportTests.Dice(state: 7)
        var out: [RulesRequest] = []
        var reused: RulesRequest?
        let pieces = ["a", "xyzzy", "caf\u{E9}", "cafe\u{301}", "cafe", "\u{301}x", "Grüße", "a-very-long-field-value-of-many-bytes"]
        for k in 0..<260 {
            let id: String
            switch dice.next(4) {
            case 0: id = "d\(k % 5)"
            case 1: id = "doc-\(k)-1234567890abcdef-unique"
            case 2: id = "k\(dice.next(3))"
            default: id = "short"
            }
            let path = ["databases", "(default)", "documents", "chains", id]
            var data: [String: RulesValue] = [
                "a": .string(pieces[dice.next(pieces.count)]),
                "b": dice.next(9) == 0 ? .int(7) : .string(dice.next(3) == 0 ? "b\(k)" : pieces[dice.next(pieces.count)]),
                "n": dice.next(7) == 0 ? .string("x") : .int(Int64(dice.next(4)) - 1),
            ]
            if dice.next(11) == 0 { data["a"] = nil }
            let uid = ["u1", "u2", "cafe\u{301}"][dice.next(3)]
            let auth: RulesValue? = dice.next(10) == 0 ? nil : .map(["uid": .string(uid)])
            let method: RulesMethod = [.create, .create, .create, .get, .update, .delete][dice.next(6)]
            let stored: RulesValue = .map(["data": .map(["owner": .string(dice.next(2) == 0 ? uid : "caf\u{E9}"), "v": .int(1)]),
                                           "id": .string(id), "__name__": .path(path)])
            let request = RulesRequest(method: method, path: path, auth: auth, time: CoverageReportTests.time(k),
                                       requestResource: method == .create || method == .update
                                           ? .map(["data": .map(RulesMap(data)), "id": .string(id), "__name__": .path(path)]) : nil,
                                       resource: method == .create ? nil : stored)
            if k % 30 == 0 { reused = request }
            out.append(request)
            if k % 9 == 0, let reused { out.append(reused) }
        }
        return out
    }

    static let lookup = MapLookup(documents: [
        "databases/(default)/documents/chains/kk0": ["v": .string("open")],
        "databases/(default)/documents/chains/kk1": ["v": .int(3)],
        "databases/(default)/documents/chains/short-a": [:],
    ])

    /// The traffic judged in order, with reports taken after the given numbers of requests and at the end.
    static func report(snapshotsAt: [Int] = [1, 50, 137, 200]) -> String {
        let r = compiled(Self.source, "chains.rules")
        let coverage = RulesCoverage()
        var out = ""
        var allowed = 0
        for (k, request) in requests().enumerated() {
            if snapshotsAt.contains(k) {
                out += "== after \(k) json\n" + coverage.json(for: r).serialized(pretty: true) + "\n"
            }
            if r.evaluate(request, lookup: lookup, coverage: coverage).allowed { allowed += 1 }
        }
        out += "allowed \(allowed)\n"
        out += "== json\n" + coverage.json(for: r).serialized(pretty: true) + "\n"
        out += "== html\n" + coverage.html(for: r) + "\n"
        return out
    }

    /// The recorded report (3.6 MB: its length and FNV-1a checksum).
    static let recordedLength = 3_594_549
    static let recordedDigest: UInt64 = 0xdbd5_4759_d6d3_4f25

    @Test func reportIsUnchanged() throws {
        try CoverageReportTests.expectRecorded(Self.report(), length: Self.recordedLength, digest: Self.recordedDigest,
                                               name: "hearth-coverage-chains.txt")
    }

    /// The last report does not depend on whether reports were asked for before it.
    @Test func earlierReportsChangeNothing() {
        func tail(_ s: String) -> Substring { s[s.range(of: "allowed ")!.lowerBound...] }
        #expect(tail(Self.report()) == tail(Self.report(snapshotsAt: [])))
    }

    /// Evaluations recorded from several threads at once are all counted: the report equals the
    /// one from judging the same requests one after another (values here stay under the
    /// distinct-values cap and have one spelling each, so order cannot show in the report).
    @Test func concurrentRecordingCountsEverything() async {
        let r = compiled(Self.source, "chains.rules")
        let plain = ["a", "xyzzy", "b", "long-long-long-long-value"]
        let batch: [RulesRequest] = (0..<120).map { k in
            let id = "d\(k % 6)"
            let path = ["databases", "(default)", "documents", "chains", id]
            let data: RulesValue = .map(["a": .string(plain[k % 4]), "b": .string(plain[(k / 4) % 4]), "n": .int(Int64(k % 3))])
            return RulesRequest(method: k % 5 == 0 ? .get : .create, path: path, auth: .map(["uid": .string("u\(k % 2)")]),
                                time: CoverageReportTests.time(k % 4),
                                requestResource: k % 5 == 0 ? nil : .map(["data": data, "id": .string(id), "__name__": .path(path)]),
                                resource: k % 5 == 0 ? .map(["data": .map(["owner": .string("u1"), "v": .int(1)]), "id": .string(id), "__name__": .path(path)]) : nil)
        }
        let threads = 4
        let sequential = RulesCoverage()
        for _ in 0..<threads { for request in batch { _ = r.evaluate(request, lookup: Self.lookup, coverage: sequential) } }
        let concurrent = RulesCoverage()
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<threads {
                group.addTask {
                    for (k, request) in batch.enumerated() {
                        _ = r.evaluate(request, lookup: Self.lookup, coverage: concurrent)
                        // Reports asked for while others record.
                        if t == 0, k % 40 == 39 { _ = concurrent.json(for: r) }
                    }
                }
            }
        }
        #expect(concurrent.json(for: r).serialized(pretty: true) == sequential.json(for: r).serialized(pretty: true))
        #expect(concurrent.html(for: r) == sequential.html(for: r))
    }
}
