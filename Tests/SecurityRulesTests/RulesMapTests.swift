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
