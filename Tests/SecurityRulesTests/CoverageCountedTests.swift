import Foundation
import HearthCore
import Testing
@testable import SecurityRules

/// Visits the evaluator counts itself (`CoverageHints`) must leave the coverage report exactly as
/// folding every visit leaves it: each sequence here goes through a collector that counts repeats
/// and one that folds everything (`countsRepeats: false`, the previous recorder), and their JSON
/// and HTML reports are compared byte for byte wherever a report is read.
struct CoverageCountedTests {
    static let shippedSource = Fixtures.read(Fixtures.repoRoot.appendingPathComponent("rules/firestore.rules"))

    /// Both collectors, fed the same evaluations.
    final class Pair {
        let counting = RulesCoverage()
        let folding = RulesCoverage(countsRepeats: false)
        var reports = 0

        func judge(_ ruleset: Ruleset, _ request: RulesRequest, _ lookup: MapLookup = MapLookup()) {
            let a = ruleset.evaluate(request, lookup: lookup, coverage: counting)
            let b = ruleset.evaluate(request, lookup: lookup, coverage: folding)
            #expect(a.allowed == b.allowed)
            #expect(a.message == b.message)
        }

        /// Reads both reports of `ruleset` and records an issue where they differ.
        func compare(_ ruleset: Ruleset, _ label: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
            reports += 1
            // As bytes: `String`'s == is canonical equivalence, blind to which spelling a report shows.
            let j1 = counting.json(for: ruleset).serialized(pretty: true), j2 = folding.json(for: ruleset).serialized(pretty: true)
            let sameJSON = Array(j1.utf8) == Array(j2.utf8)
            let sameHTML = Array(counting.html(for: ruleset).utf8) == Array(folding.html(for: ruleset).utf8)
            #expect(sameJSON, "\(label): JSON reports differ", sourceLocation: sourceLocation)
            #expect(sameHTML, "\(label): HTML reports differ", sourceLocation: sourceLocation)
        }

        func reset() {
            counting.reset()
            folding.reset()
        }
    }

    static let path = ["databases", "(default)", "documents", "users", "u1", "files", "f1"]

    /// A create of users/u1/files/f1 on the shipped rules, varied by its arguments.
    static func create(uid: String = "u1", owner: String = "u1", status: String = "ready", size: RulesValue? = nil,
                       name: RulesValue? = nil, time: Int64 = 1_767_225_600) -> RulesRequest {
        let path = ["databases", "(default)", "documents", "users", uid, "files", "f1"]
        var data: [String: RulesValue] = [
            "ownerUid": .string(owner), "storage": .string("s3"),
            "s3Key": .string("users/\(owner)/uploads/123e4567-e89b-42d3-a456-426614174000.jpg"),
            "contentType": .string("image/jpeg"), "status": .string(status),
            "createdAt": .timestamp(seconds: time, nanos: 0),
        ]
        if let size { data["size"] = size }
        if let name { data["originalName"] = name }
        return RulesRequest(method: .create, path: path, auth: .map(["uid": .string(uid)]), time: .timestamp(seconds: time, nanos: 0),
                            requestResource: .map(["data": .map(RulesMap(data)), "id": .string("f1"), "__name__": .path(path)]),
                            resource: nil)
    }

    @Test func sameValueRepeated() {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let pair = Pair()
        for k in 0..<300 {
            pair.judge(shipped, Self.create())
            if k == 0 || k == 63 || k == 64 || k == 150 { pair.compare(shipped, "after \(k + 1) equal creates") }
        }
        // A value unique to each request from here on (the time), past the distinct-values cap.
        for k in 0..<80 { pair.judge(shipped, Self.create(time: 1_767_225_600 + Int64(k))) }
        pair.compare(shipped, "after unique times")
    }

    @Test func valuesAlternating() {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let pair = Pair()
        for k in 0..<400 {
            let request: RulesRequest
            switch k % 4 {
            case 0: request = Self.create(status: "pending", size: .int(Int64(k % 3)))
            case 1: request = Self.create(owner: "u2", status: "ready", size: .float(k % 8 == 1 ? 0.0 : -0.0))
            case 2: request = Self.create(status: k % 6 == 2 ? "gone" : "ready", name: .string(k % 10 == 2 ? "K.jpg" : "\u{212A}.jpg"))
            default: request = Self.create(uid: k % 8 == 3 ? "caf\u{E9}" : "cafe\u{301}", owner: k % 8 == 3 ? "cafe\u{301}" : "caf\u{E9}",
                                           name: k % 12 == 3 ? .int(1) : .string("a;b`c"))
            }
            pair.judge(shipped, request)
            if k % 37 == 0 { pair.compare(shipped, "alternating, after \(k + 1)") }
        }
        pair.compare(shipped, "alternating, at the end")
    }

    /// The mixes the recorded-report tests use (grants, denials, errors, `+` chains, get()/exists(),
    /// canonically equivalent strings, ±0.0, NaN), with reports read every 97 requests and the
    /// collectors reset once partway.
    @Test func recordedMixesWithReportsAndReset() {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let extra = compiled(CoverageReportTests.extra, "extra.rules")
        let chains = compiled(CoverageChainReportTests.source, "chains.rules")
        let lookup = MapLookup(documents: ["databases/(default)/documents/things/c1": ["public": .bool(true)],
                                           "databases/(default)/documents/chains/kk1": ["v": .string("open")]])
        let pair = Pair()
        let a = CoverageReportTests.shippedMix(), b = CoverageReportTests.extraMix(), c = CoverageChainReportTests.requests()
        var n = 0
        for k in 0..<max(a.count, b.count, c.count) {
            for (ruleset, list) in [(shipped, a), (extra, b), (chains, c)] where k < list.count {
                pair.judge(ruleset, list[k], lookup)
                n += 1
                if n % 97 == 0 { pair.compare(ruleset, "\(ruleset.fileName) after \(n)") }
            }
            if k == 300 {
                for r in [shipped, extra, chains] { pair.compare(r, "\(r.fileName) before the reset") }
                pair.reset()
            }
        }
        for r in [shipped, extra, chains] { pair.compare(r, "\(r.fileName) at the end") }
    }

    /// One string spelled two ways (canonically equivalent, so one entry whose representative is
    /// the newest spelling): a spelling counted by the evaluator must not leave an older one
    /// standing. ASCII strings with `K`, `;` or `` ` `` have a non-ASCII spelling (U+212A, U+037E,
    /// U+1FEF): the evaluator counts their ASCII bytes, and the fold, told where (a marker),
    /// puts those bytes back as the representative.
    @Test(arguments: [("K.jpg", "\u{212A}.jpg"), ("a;b", "a\u{037E}b"), ("`x", "\u{1FEF}x")])
    func spellingsOfOneString(_ ascii: String, _ other: String) {
        #expect(ascii == other && Array(ascii.utf8) != Array(other.utf8), "two spellings of one string")
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let pair = Pair()
        for _ in 0..<70 { pair.judge(shipped, Self.create(name: .string(ascii))) }
        pair.compare(shipped, "the ASCII spelling")
        for round in 0..<3 {
            pair.judge(shipped, Self.create(name: .string(other)))
            pair.judge(shipped, Self.create(name: .string(ascii)))
            pair.compare(shipped, "the other spelling, then the ASCII one, round \(round)")
        }
    }

    /// A uid with an upper-case `K` (a third of random uids): its strings (the owner, the key,
    /// the joined fields) are counted by the evaluator as a K-free uid's are, not folded, and the
    /// report stays the fold-everything one even when the other spelling (U+212A) interleaves.
    @Test func stringsWithKAreCounted() throws {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        func folded(_ uid: String) throws -> (visited: Int, hits: Int) {
            let pair = Pair()
            for _ in 0..<70 { pair.judge(shipped, Self.create(uid: uid, owner: uid)) }
            pair.compare(shipped, "uid \(uid), warm")
            let hints = try #require(pair.counting.hints(for: shipped))
            var e = Evaluation(program: shipped.program, request: Self.create(uid: uid, owner: uid),
                               accessor: LookupAccessor(lookup: MapLookup()), hints: hints)
            let allowed = e.run()
            #expect(allowed)
            pair.compare(shipped, "uid \(uid)")
            return (e.visited.count, e.hits.count)
        }
        let plain = try folded("u1abc"), withK = try folded("u1Kbc"), withSemicolon = try folded("u1;bc")
        #expect(withK.visited == plain.visited, "a K in the uid leaves \(withK.visited) visits to fold, not \(plain.visited)")
        #expect(withK.hits == plain.hits)
        #expect(withSemicolon.visited == plain.visited)
        // The two spellings interleaved, reports read in between.
        let pair = Pair()
        for k in 0..<200 {
            let uid = k % 23 == 5 || k % 31 == 7 ? "u1\u{212A}bc" : "u1Kbc"
            pair.judge(shipped, Self.create(uid: uid, owner: k % 17 == 3 ? "u1Kbc" : uid))
            if k % 29 == 6 || k % 23 == 5 || k % 23 == 6 { pair.compare(shipped, "interleaved spellings, after \(k + 1)") }
        }
        pair.compare(shipped, "interleaved spellings, at the end")
    }

    /// Rules reloaded: the same source compiled again is another ruleset with its own table, and
    /// going back to the first one continues its table.
    @Test func rulesReloaded() {
        let first = compiled(Self.shippedSource, "firestore.rules")
        let pair = Pair()
        for k in 0..<100 { pair.judge(first, Self.create(status: k % 5 == 0 ? "pending" : "ready")) }
        let second = compiled(Self.shippedSource, "firestore.rules")
        for k in 0..<100 { pair.judge(second, Self.create(owner: k % 3 == 0 ? "u2" : "u1")) }
        pair.compare(second, "the reloaded rules")
        for k in 0..<100 { pair.judge(first, Self.create(size: .int(Int64(k % 2)))) }
        pair.compare(first, "the first rules again")
        pair.compare(second, "the reloaded rules again")
    }

    /// An evaluation that read the hints before a reset and is recorded after it: its counted
    /// visits name entries of a table that is gone, and are folded as the values they were, in
    /// their places (a reset between judging and recording, which concurrent requests can meet).
    @Test func hintsReadBeforeAResetFoldAsValues() throws {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let pair = Pair()
        for _ in 0..<70 { pair.judge(shipped, Self.create()) }
        pair.compare(shipped, "before")
        let hints = try #require(pair.counting.hints(for: shipped))
        let accessor = LookupAccessor(lookup: MapLookup())
        var counted = Evaluation(program: shipped.program, request: Self.create(), accessor: accessor, hints: hints)
        let countedAllowed = counted.run()
        #expect(countedAllowed)
        #expect(counted.hits.count > 50, "most of a repeated create's visits are counted")
        var folded = Evaluation(program: shipped.program, request: Self.create(), accessor: accessor)
        let foldedAllowed = folded.run()
        #expect(foldedAllowed)
        pair.reset()
        pair.counting.record(counted, ruleset: shipped)
        pair.folding.record(folded, ruleset: shipped)
        pair.compare(shipped, "a stale evaluation after the reset")
        for _ in 0..<10 { pair.judge(shipped, Self.create(owner: "u2")) }
        pair.compare(shipped, "after the reset")
    }

    /// A denial judged with counted visits is judged again for its trace: the same message as
    /// when every visit is kept.
    @Test func denialsKeepTheirTrace() {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        let pair = Pair()
        for _ in 0..<70 { pair.judge(shipped, Self.create()) }
        pair.compare(shipped, "warm")
        let denied = Self.create(status: "gone")
        let plain = shipped.evaluate(denied, lookup: MapLookup())
        let counted = shipped.evaluate(denied, lookup: MapLookup(), coverage: pair.counting)
        #expect(!counted.allowed)
        #expect(counted.message == plain.message)
        #expect(counted.trace.visitedExpressions.count == plain.trace.visitedExpressions.count)
    }

    /// Several threads judging while reports are read: the final report is that of the same
    /// requests judged one after another (the requests are chosen so that their order cannot
    /// show: fewer distinct values per expression than the cap, one spelling per string).
    @Test func concurrentRequestsReportAsSequential() {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        var built: [RulesRequest] = []
        for k in 0..<1_600 {
            built.append(Self.create(owner: k % 7 == 0 ? "u2" : "u1", status: k % 3 == 0 ? "pending" : "ready",
                                        size: k % 5 == 0 ? .int(Int64(k % 2)) : nil, time: 1_767_225_600 + Int64(k % 2)))
        }
        let requests = built
        let concurrent = RulesCoverage()
        let lookup = MapLookup()
        DispatchQueue.concurrentPerform(iterations: 5) { t in
            if t == 4 {
                for _ in 0..<20 { _ = concurrent.json(for: shipped) }
                return
            }
            var k = t
            while k < requests.count {
                _ = shipped.evaluate(requests[k], lookup: lookup, coverage: concurrent)
                k += 4
            }
        }
        let sequential = RulesCoverage(countsRepeats: false)
        for r in requests { _ = shipped.evaluate(r, lookup: lookup, coverage: sequential) }
        let sameJSON = Array(concurrent.json(for: shipped).serialized(pretty: true).utf8) == Array(sequential.json(for: shipped).serialized(pretty: true).utf8)
        let sameHTML = Array(concurrent.html(for: shipped).utf8) == Array(sequential.html(for: shipped).utf8)
        #expect(sameJSON)
        #expect(sameHTML)
    }

    /// Strings offered for counting have no other spelling: non-ASCII text and the three ASCII
    /// characters a non-ASCII one decomposes to are never offered.
    @Test(arguments: [("image/jpeg", true), ("", true), ("K", false), ("a;b", false), ("`", false), ("caf\u{E9}", false), ("k", true)])
    func offerableStrings(_ s: String, _ expected: Bool) {
        #expect(CoverageHints.offerable(s) == expected)
        // Offered by bytes (with a marker where another spelling exists): any ASCII string.
        #expect(CoverageHints.offerableBytes(s) == s.utf8.allSatisfy { $0 < 0x80 })
        #expect(CoverageHints.hasSpellings(s) == (CoverageHints.offerableBytes(s) && !expected))
    }

    /// Strings built the ways a request's strings are: literals, decoded bytes, a slice, a
    /// concatenation, `lower()`, a string with spare capacity; small (≤ 15 bytes) and stored
    /// apart; ASCII and not.
    static func builtStrings() -> [String] {
        var spare = String()
        spare.reserveCapacity(64)
        spare += "image/jpeg"
        var spareLong = String()
        spareLong.reserveCapacity(256)
        spareLong += "users/u1/uploads/123e4567-e89b-42d3-a456-426614174000.jpg"
        var spareAccent = String()
        spareAccent.reserveCapacity(64)
        spareAccent += "caf\u{E9}"
        return ["", "a", "image/jpeg", "exactly15bytes!", "sixteen bytes!!!", String(repeating: "x", count: 100),
                String(decoding: Array("users/u1/uploads/123e4567-e89b-42d3-a456-426614174000.jpg".utf8), as: UTF8.self),
                String(decoding: Array("s3".utf8), as: UTF8.self), String("xxusers/u1/files/f1, a longer string".dropFirst(2)),
                "image/" + "jpeg", String(repeating: "ab", count: 20) + "c", "ABCDEFGHIJKLMNOPQRSTUVWXYZ".lowercased(),
                spare, spareLong, spareAccent, "caf\u{E9}", "cafe\u{301}", "\u{212A}", "K",
                String(repeating: "\u{E9}", count: 20), String(decoding: Array("na\u{EF}ve, and long enough".utf8), as: UTF8.self),
                String(decoding: [0x61, 0xFF, 0x62], as: UTF8.self)]
    }

    /// `CoverageHints.flaggedASCII` reads the standard library's own ASCII flag: never set on a
    /// string with a non-ASCII byte, and set on every native ASCII string built here — so the
    /// K-free create's strings are not scanned (`RulesCoverage.holdsNonASCII`). A changed string
    /// layout fails here rather than making the fast path silently wrong or never taken.
    @Test func asciiFlag() {
        for s in Self.builtStrings() {
            let ascii = s.utf8.allSatisfy { $0 < 0x80 }
            #expect(CoverageHints.flaggedASCII(s) == ascii, "\(Array(s.utf8).prefix(20)): flagged \(CoverageHints.flaggedASCII(s)), ASCII \(ascii)")
            #expect(CoverageHints.offerableBytes(s) == ascii)
            let visits = [Visit(1, .value(.string("image/jpeg"))), Visit(2, .value(.string(s))), Visit(3, .value(.int(1)))]
            #expect(RulesCoverage.holdsNonASCII(visits) == !ascii)
        }
    }

    /// Field values with the offered bytes but stored apart (spare capacity) are still counted
    /// (compared byte for byte), and the reports match folding every visit.
    @Test func offeredStringsBuiltApart() throws {
        let shipped = compiled(Self.shippedSource, "firestore.rules")
        func spare(_ s: String) -> String {
            var out = String()
            out.reserveCapacity(64)
            out += s
            return out
        }
        let pair = Pair()
        for _ in 0..<70 { pair.judge(shipped, Self.create()) }
        pair.compare(shipped, "warm")
        let hints = try #require(pair.counting.hints(for: shipped))
        func counted(_ request: RulesRequest) -> (visited: Int, hits: Int) {
            var e = Evaluation(program: shipped.program, request: request, accessor: LookupAccessor(lookup: MapLookup()), hints: hints)
            let allowed = e.run()
            #expect(allowed)
            return (e.visited.count, e.hits.count)
        }
        let small = counted(Self.create())
        let apart = counted(Self.create(status: spare("ready")))
        #expect(apart.hits == small.hits, "a status stored apart was counted \(apart.hits) times, not \(small.hits)")
        #expect(apart.visited == small.visited)
        for k in 0..<200 {
            let status = k % 3 == 0 ? spare("ready") : k % 7 == 1 ? "pending" : k % 11 == 2 ? spare("pending") : "ready"
            pair.judge(shipped, Self.create(status: status))
            if k % 41 == 0 { pair.compare(shipped, "statuses built apart, after \(k + 1)") }
        }
        pair.compare(shipped, "statuses built apart, at the end")
    }

    /// `s.lower().matches(…)` judged for coverage records lower()'s value lazily (the receiver,
    /// `Visit(_:lowering:)`) and counts it at its offer by the lowered bytes: reports must match
    /// folding every visit for receivers of every kind — upper-case ASCII, non-ASCII capitals
    /// lower() leaves alone, the bytes next to the letters, `K`/`;`/`` ` `` and their twins,
    /// non-strings, a missing field —, repeated (offered) and unique past the cap, with patterns
    /// the native matcher runs and ones it leaves to NSRegularExpression.
    @Test func loweredMatchesCountedAndFolded() throws {
        let ruleset = compiled("""
            rules_version = '2';
            service cloud.firestore {
              match /databases/{database}/documents {
                match /{document=**} {
                  allow read: if request.auth.f.lower().matches('(?sm).*(^http|x-amz-signature).*')
                    || request.auth.f.lower().matches('[a-z;`]+')
                    || request.auth.f.lower().matches('(?i)HTTP.*');
                }
              }
            }
            """, "lower.rules")
        let receivers: [RulesValue?] = [
            .string("HTTP://X"), .string("Hello\nHTTP://a"), .string("\u{C9}COLE"), .string("abc"), .string("ABC"),
            .string("AZ[\\]^_`az{@"), .string(""), .string("K;`"), .string("\u{212A};`"), .string("k\u{37E}\u{1FEF}"),
            .string("X-Amz-Signature=1"), .int(7), .null, .list([.string("A")]), nil,
        ]
        func request(_ k: Int) -> RulesRequest {
            var auth: RulesMap = ["uid": .string("u1")]
            if k % 5 == 4 {
                auth["f"] = .string("Unique Value \(k) Past The Cap")
            } else if let v = receivers[k % receivers.count] {
                auth["f"] = v
            }
            return RulesRequest(method: .get, path: ["databases", "(default)", "documents", "p", "d"], auth: .map(auth),
                                time: .timestamp(seconds: 1_700_000_000, nanos: 0))
        }
        let pair = Pair()
        for k in 0..<400 {
            pair.judge(ruleset, request(k))
            if k % 53 == 0 || k == 64 || k == 65 { pair.compare(ruleset, "lowered, after \(k + 1)") }
        }
        pair.compare(ruleset, "lowered, at the end")
        // With the hints published, lower() of a new string is kept as its receiver, and a repeated
        // one is counted at its offer.
        let hints = try #require(pair.counting.hints(for: ruleset))
        var unique = Evaluation(program: ruleset.program, request: request(999), accessor: LookupAccessor(lookup: MapLookup()), hints: hints)
        _ = unique.run()
        #expect(unique.visited.contains { $0.prefix == Visit.lowering })
        #expect(unique.visited.filter { $0.prefix == Visit.lowering }.allSatisfy {
            if case .value(.string(let s)) = $0.traced { s == "unique value 999 past the cap" } else { false }
        })
    }

    /// The offer's eight-byte lowering is `lower()`'s byte mapping in every lane, for every byte
    /// value beside every other in the lanes around it.
    @Test func loweredWordsMapEveryByte() {
        for b in 0...255 {
            for lane in 0..<8 {
                for neighbour in [0x00, 0x40, 0x41, 0x5A, 0x5B, 0x60, 0x61, 0x7A, 0x7F, 0x80, 0xC0, 0xDA, 0xFF] {
                    var bytes = [UInt8](repeating: UInt8(neighbour), count: 8)
                    bytes[lane] = UInt8(b)
                    let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let expected = bytes.map { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    if CoverageHints.Offers.lowered(word) != expected {
                        Issue.record("byte \(b) in lane \(lane) beside \(neighbour)")
                        return
                    }
                }
            }
        }
    }
}
