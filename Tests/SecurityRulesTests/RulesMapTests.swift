import Testing
@testable import SecurityRules

/// A map built from entries in any order is the map built from the same pairs as a sequence:
/// same keys in the same order, same lookups.
struct RulesMapTests {
    static let pairs: [(String, RulesValue)] = [
        ("size", .int(3)), ("ownerUid", .string("u")), ("createdAt", .timestamp(seconds: 1, nanos: 2)),
        ("é", .bool(true)), ("e\u{301}x", .null), ("Z", .float(1.5)), ("", .string("empty")), ("a", .list([.int(1)])),
    ]

    @Test(arguments: [0, 1, 2, 3])
    func entriesInAnyOrderMakeTheSameMap(rotation: Int) {
        var shuffled = Self.pairs
        shuffled.rotate(by: rotation)
        if rotation == 3 { shuffled.reverse() }
        let reference = RulesMap(uniqueKeysWithValues: shuffled)
        let built = RulesMap(uniqueEntries: shuffled.map { (key: $0.0, value: $0.1) })
        #expect(built == reference)
        #expect(built.keys == reference.keys)
        for (k, v) in Self.pairs { #expect(built[k] == v) }
        #expect(built["missing"] == nil)
    }

    /// Entries already in key order are kept as given; out of order by one pair, sorted.
    @Test func sortedEntriesStaySorted() {
        let sorted = RulesMap(uniqueKeysWithValues: Self.pairs).map { (key: $0.key, value: $0.value) }
        #expect(RulesMap(uniqueEntries: sorted).keys == sorted.map(\.key))
        var swapped = sorted
        swapped.swapAt(2, 3)
        #expect(RulesMap(uniqueEntries: swapped).keys == sorted.map(\.key))
        #expect(RulesMap(uniqueEntries: []).isEmpty)
    }
}

private extension Array {
    mutating func rotate(by k: Int) {
        guard !isEmpty else { return }
        let s = k % count
        self = Array(self[s...] + self[..<s])
    }
}

/// Keys and strings differing only in Unicode normalisation are two keys and unequal strings, as in
/// Google's evaluator (recorded from the official emulator: Tests/CompatTests/firestore/differential/unicodecases.py).
struct RulesNormalisationTests {
    static let nfc = "\u{E9}"
    static let nfd = "e\u{301}"

    @Test func mapsKeepBothKeys() {
        let m = RulesMap(uniqueKeysWithValues: [(Self.nfc, RulesValue.int(1)), (Self.nfd, .int(2))])
        #expect(m.count == 2)
        #expect(m[Self.nfc] == .int(1) && m[Self.nfd] == .int(2))
        #expect(m.keys == [Self.nfd, Self.nfc])  // byte order
        var n = RulesMap()
        n[Self.nfd] = .int(2)
        #expect(n[Self.nfc] == nil)
        n[Self.nfc] = .int(1)
        #expect(n == m)
        let merged = RulesMap([(Self.nfc, RulesValue.int(0)), (Self.nfd, .int(2)), (Self.nfc, .int(1))])
        #expect(merged == m)
    }

    @Test func stringsCompareByBytes() throws {
        #expect(!RulesValue.rulesEqual(.string(Self.nfc), .string(Self.nfd)))
        #expect(!RulesValue.rulesEqual(.path(["d", Self.nfc]), .path(["d", Self.nfd])))
        #expect(try RulesValue.compare(.string(Self.nfd), .string(Self.nfc), op: "<") == -1)
        #expect(!RulesValue.rulesEqual(.map(RulesMap(uniqueKeysWithValues: [(Self.nfc, RulesValue.int(1))])),
                                       .map(RulesMap(uniqueKeysWithValues: [(Self.nfd, RulesValue.int(1))]))))
    }
}
