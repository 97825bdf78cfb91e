// The rules language's map: entries kept sorted by key. Documents are small maps read field by
// field, and a lookup that scans a few keys (lengths first) costs a fraction of hashing the
// name, which was a fifth of a decision's time with a Dictionary. Sorted entries are also the
// order `keys()` and `values()` report, so they need no sorting per call.
//
// Keys are ordered and compared by their UTF-8 bytes (`ExactString`), never by `String`'s canonical
// equivalence: "é" precomposed and decomposed are two keys to Firestore, and to Google's evaluator
// (`m['é'] ` finds only the spelling written).

import HearthCore

/// A rules map from string keys to values, in key order.
public struct RulesMap: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: RulesValue)

    /// Sorted by key, keys unique.
    private var entries: [Element]

    /// Maps up to this size are searched linearly; larger ones by bisection.
    private static let scanLimit = 16

    /// An empty map.
    public init() { entries = [] }

    /// The dictionary's entries.
    public init(_ dictionary: [String: RulesValue]) {
        entries = dictionary.map { (key: $0.key, value: $0.value) }
        entries.sort { RulesMap.less($0.key, $1.key) }
    }

    /// Entries from pairs whose keys are known to be distinct (a Dictionary's, say).
    public init<S: Sequence>(uniqueKeysWithValues pairs: S) where S.Element == (String, RulesValue) {
        entries = pairs.map { (key: $0.0, value: $0.1) }
        entries.sort { RulesMap.less($0.key, $1.key) }
    }

    /// Entries whose keys are known to be distinct (a Dictionary's, say), in any order. The same
    /// map as `init(uniqueKeysWithValues:)`, without the generic sequence: called from another
    /// module that one is not specialised, and building a document's `data` through it cost
    /// about four times the entries' own work. Entries already in key order (a literal written
    /// sorted) are only checked, not sorted.
    public init(uniqueEntries: [Element]) {
        entries = uniqueEntries
        var sorted = true
        var i = 1
        while i < entries.count {
            if !RulesMap.less(entries[i - 1].key, entries[i].key) { sorted = false; break }
            i += 1
        }
        if !sorted { entries.sort { RulesMap.less($0.key, $1.key) } }
    }

    /// The pairs' entries; a later pair replaces an earlier one with the same key.
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, RulesValue) {
        var all = pairs.enumerated().map { (offset: $0.offset, key: $0.element.0, value: $0.element.1) }
        all.sort {
            let c = ExactString.compare($0.key, $1.key)
            return c != 0 ? c < 0 : $0.offset < $1.offset
        }
        entries = []
        entries.reserveCapacity(all.count)
        for e in all {
            if let last = entries.last, ExactString.equal(last.key, e.key) {
                entries[entries.count - 1].value = e.value
            } else {
                entries.append((key: e.key, value: e.value))
            }
        }
    }

    public init(dictionaryLiteral elements: (String, RulesValue)...) {
        self.init(elements)
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    /// Keys in order.
    public var keys: [String] { entries.map(\.key) }
    /// Values in key order.
    public var values: [RulesValue] { entries.map(\.value) }
    /// The entries in key order (by their keys' UTF-8 bytes, `ExactString.compare`), for walks
    /// over two maps at once.
    var sortedEntries: [Element] { entries }

    /// The address of the entries' storage: equal for copies of one map, so it tells "the same
    /// map" apart from "an equal map" in O(1) while the map is alive.
    var storageIdentity: UInt { unsafeBitCast(entries, to: UInt.self) }

    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }

    /// Whether `list` is this map's key list byte for byte: the same count, and each item a string
    /// with the bytes of the key at its place (`ExactString.equal`, so another spelling of a key
    /// is not its key). The values are not read.
    func hasKeyList(_ list: [RulesValue]) -> Bool {
        guard list.count == entries.count else { return false }
        for k in entries.indices {
            guard case .string(let s) = list[k], ExactString.equal(s, entries[k].key) else { return false }
        }
        return true
    }

    /// The exact count, so `map` and `Array(_:)` over a map reserve their result once
    /// (Sequence's default of 0 grew `keys()`'s list four times for a six-field document).
    public var underestimatedCount: Int { entries.count }

    /// The value under key; setting nil removes the key.
    public subscript(key: String) -> RulesValue? {
        get {
            guard let i = index(of: key) else { return nil }
            return entries[i].value
        }
        set {
            let (i, found) = position(of: key)
            switch (newValue, found) {
            case (let v?, true): entries[i].value = v
            case (let v?, false): entries.insert((key: key, value: v), at: i)
            case (nil, true): entries.remove(at: i)
            case (nil, false): break
            }
        }
    }

    /// The same keys with transformed values.
    public func mapValues(_ transform: (RulesValue) throws -> RulesValue) rethrows -> RulesMap {
        var out = self
        for i in out.entries.indices { out.entries[i].value = try transform(out.entries[i].value) }
        return out
    }

    /// Whether both maps hold the very same entries storage (then they are equal, bit for bit).
    /// An empty map shares nothing. Only meaningful while both are alive: a map kept by the caller
    /// holds its storage, so no other map takes that address meanwhile.
    @inline(__always)
    func sharesStorage(with other: RulesMap) -> Bool {
        guard entries.count == other.entries.count, !entries.isEmpty else { return false }
        return entries.withUnsafeBufferPointer { a in other.entries.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress } }
    }

    public static func == (a: RulesMap, b: RulesMap) -> Bool {
        guard a.entries.count == b.entries.count else { return false }
        for i in a.entries.indices where !ExactString.equal(a.entries[i].key, b.entries[i].key) || a.entries[i].value != b.entries[i].value {
            return false
        }
        return true
    }

    private func index(of key: String) -> Int? {
        if entries.count <= RulesMap.scanLimit {
            // The same two words first: a field name written in the rules and the document's key
            // are mostly small strings with identical words, and two equal words are equal bytes
            // (`ExactString.equal`). Only a pass that finds none compares bytes.
            for i in entries.indices where ExactString.sameWords(entries[i].key, key) { return i }
            // Lengths first: unequal keys of documents mostly differ in length, and comparing
            // lengths is cheaper than comparing strings.
            let length = key.utf8.count
            for i in entries.indices where entries[i].key.utf8.count == length && ExactString.equal(entries[i].key, key) { return i }
            return nil
        }
        let (i, found) = position(of: key)
        return found ? i : nil
    }

    /// Where key is or would be inserted.
    private func position(of key: String) -> (Int, Bool) {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if RulesMap.less(entries[mid].key, key) { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < entries.count && ExactString.equal(entries[lo].key, key))
    }

    /// The keys' order: UTF-8 bytes.
    private static func less(_ a: String, _ b: String) -> Bool { ExactString.compare(a, b) < 0 }
}
