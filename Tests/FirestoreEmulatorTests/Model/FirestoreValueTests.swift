import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

@Suite struct FirestoreValueTests {
    /// Firestore's documented total order, smallest first; each entry is strictly greater than the previous.
    static let ascending: [(String, FirestoreValue)] = [
        ("null", .null),
        ("false", .boolean(false)),
        ("true", .boolean(true)),
        ("NaN", .double(.nan)),
        ("-inf", .double(-.infinity)),
        ("Int64.min", .integer(.min)),
        ("-1.5", .double(-1.5)),
        ("-1", .integer(-1)),
        ("0", .integer(0)),
        ("0.5", .double(0.5)),
        ("1", .integer(1)),
        ("2^53+1", .integer(9_007_199_254_740_993)),
        ("9.223372036854775e18", .double(9.223372036854774784e18)),
        ("Int64.max", .integer(.max)),
        ("+inf", .double(.infinity)),
        ("ts 1969", .timestamp(Instant(unixMicros: -1))),
        ("ts 1970", .timestamp(Instant(unixMicros: 0))),
        ("ts 2026", .timestamp(Instant(unixMicros: 1_780_000_000_000_000))),
        ("empty string", .string("")),
        ("a", .string("a")),
        ("a\\0", .string("a\u{0}")),
        ("ab", .string("ab")),
        ("b", .string("b")),
        ("é (UTF-8 C3 A9)", .string("é")),
        ("emoji (F0…)", .string("😀")),
        ("empty bytes", .bytes([])),
        ("bytes 00", .bytes([0])),
        ("bytes 01", .bytes([1])),
        ("bytes FF", .bytes([0xFF])),
        ("ref a/b", .reference("projects/p/databases/(default)/documents/a/b")),
        ("ref a/b/c/d", .reference("projects/p/databases/(default)/documents/a/b/c/d")),
        ("ref a-b/c", .reference("projects/p/databases/(default)/documents/a-b/c")),
        ("ref b/a", .reference("projects/p/databases/(default)/documents/b/a")),
        ("geo -10,5", .geoPoint(latitude: -10, longitude: 5)),
        ("geo 0,-5", .geoPoint(latitude: 0, longitude: -5)),
        ("geo 0,5", .geoPoint(latitude: 0, longitude: 5)),
        ("empty array", .array([])),
        ("[null]", .array([.null])),
        ("[1]", .array([.integer(1)])),
        ("[1, 'a']", .array([.integer(1), .string("a")])),
        ("[2]", .array([.integer(2)])),
        // Vectors: after arrays, before maps; by dimension first, then element by element.
        ("vector [-inf]", .vector([-.infinity])),
        ("vector [5]", .vector([5])),
        ("vector [-5, 1]", .vector([-5, 1])),
        ("vector [0, 2]", .vector([0, 2])),
        ("vector [1, 2]", .vector([1, 2])),
        ("vector [1, 3]", .vector([1, 3])),
        ("vector [+inf, 0]", .vector([.infinity, 0])),
        ("vector [0, 0, 0]", .vector([0, 0, 0])),
        ("empty map", .map([:])),
        ("{a: 1}", .map(["a": .integer(1)])),
        ("{a: 1, b: 0}", .map(["a": .integer(1), "b": .integer(0)])),
        ("{a: 2}", .map(["a": .integer(2)])),
        ("{b: 0}", .map(["b": .integer(0)])),
    ]

    @Test func totalOrderAcrossAndWithinTypes() {
        let values = Self.ascending
        for i in 0..<values.count {
            for j in 0..<values.count {
                let c = FirestoreValue.compare(values[i].1, values[j].1)
                let expected = i < j ? -1 : (i > j ? 1 : 0)
                #expect(c.signum() == expected, "\(values[i].0) vs \(values[j].0): got \(c)")
            }
        }
    }

    @Test(arguments: [
        (FirestoreValue.integer(3), FirestoreValue.double(3.0)),
        (.double(0.0), .double(-0.0)),
        (.double(.nan), .double(.nan)),
        (.array([.integer(1)]), .array([.double(1)])),
        (.map(["x": .integer(2)]), .map(["x": .double(2)])),
        (.vector([-0.0, 1]), .vector([0, 1])),
    ])
    func equivalentNumbersCompareEqual(_ a: FirestoreValue, _ b: FirestoreValue) {
        #expect(FirestoreValue.compare(a, b) == 0)
        #expect(a.firestoreEquals(b))
    }

    @Test func largeIntegersStayExactAgainstDoubles() {
        // 2^53 + 1 is not a double; it must sort after 2^53 (the double) and before 2^53 + 2.
        let twoTo53 = FirestoreValue.double(9_007_199_254_740_992)
        #expect(FirestoreValue.compare(.integer(9_007_199_254_740_993), twoTo53) > 0)
        #expect(FirestoreValue.compare(.integer(9_007_199_254_740_993), .double(9_007_199_254_740_994)) < 0)
        #expect(FirestoreValue.compare(.integer(9_007_199_254_740_992), twoTo53) == 0)
        #expect(FirestoreValue.compare(.integer(.max), .double(9.223372036854775808e18)) < 0)
    }

    @Test func storedCodecRoundTrips() throws {
        var fields: [ExactString: FirestoreValue] = [:]
        for (i, v) in Self.ascending.enumerated() { fields[ExactString("f\(i)")] = v.1 }
        fields["nested"] = .map(["deep": .array([.map(["x": .bytes([0, 1, 2])])])])
        let decoded = try StoredValueCodec.decodeFields(StoredValueCodec.encodeFields(fields))
        #expect(StoredValueCodec.encodeFields(decoded) == StoredValueCodec.encodeFields(fields))
        #expect(decoded["f3"]?.isNaN == true)
        #expect(decoded["nested"] == fields["nested"])
    }

    /// Keys and field names order by their UTF-8 bytes, as the generic byte comparison orders
    /// them (what the stored encodings and index rows were written in): prefixes first, é after z,
    /// canonically equivalent spellings apart.
    @Test func utf8OrderIsByteOrder() {
        let words = ["", "a", "aa", "ab", "b", "Z", "z", "é", "e\u{301}", "\u{FFFF}", "😀", "a\u{0}", "abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0124"]
        for a in words {
            for b in words {
                let reference = a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : (b.utf8.lexicographicallyPrecedes(a.utf8) ? 1 : 0)
                #expect(OrderedEncoding.utf8Compare(a, b) == reference, "\(a) vs \(b)")
                #expect(OrderedEncoding.utf8Less(a, b) == (reference < 0))
            }
        }
        // Canonically equivalent keys ("é" and "e\u{301}") are two members, as in Firestore.
        var members: [ExactString: FirestoreValue] = [:]
        for (i, w) in words.enumerated() { members[ExactString(w)] = .integer(Int64(i)) }
        let sorted = OrderedEncoding.sortedMembers(members)
        #expect(sorted.map(\.key.string) == words.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(sorted.count == words.count)
        #expect(sorted.allSatisfy { members[$0.key] == $0.value })
    }

    /// `encodeAlike` answers what comparing the two encodings answers, on every pair of a set of
    /// documents that differ in one place each: values `==` calls equal but whose bits differ (0 and
    /// -0.0, NaN payloads, canonically equal spellings), an integer against the same double, keys
    /// apart by one byte, nested maps, arrays and vectors, a missing or extra member.
    @Test func encodeAlikeAgreesWithTheEncodings() {
        let values: [FirestoreValue] = Self.ascending.map(\.1) + [
            .double(-0.0), .double(0.0), .double(Double(bitPattern: 0x7FF8_0000_0000_0001)), .double(1), .integer(1),
            .string("é"), .string("e\u{301}"), .string(""), .reference("é"), .reference("e\u{301}"),
            .bytes([]), .bytes([0]), .boolean(false), .timestamp(Instant(unixMicros: 1)), .timestamp(Instant(unixMicros: 2)),
            .geoPoint(latitude: 0.0, longitude: 1), .geoPoint(latitude: -0.0, longitude: 1),
            .array([]), .array([.integer(1)]), .array([.double(1)]), .array([.integer(1), .null]),
            .vector([]), .vector([0.0]), .vector([-0.0]),
            .map([:]), .map(["a": .integer(1)]), .map(["a": .double(1)]), .map(["b": .integer(1)]),
            .map(["a": .integer(1), "b": .null]), .map(["é": .null]), .map(["e\u{301}": .null]),
        ]
        let base: [ExactString: FirestoreValue] = ["status": .string("pending"), "size": .integer(3), "é": .null]
        var documents: [[ExactString: FirestoreValue]] = [[:], base]
        for v in values {
            var d = base
            d["status"] = v
            documents.append(d)
            documents.append(["x": v])
        }
        var extra = base
        extra["more"] = .null
        documents.append(extra)
        var renamed = base
        renamed["é"] = nil
        renamed["e\u{301}"] = .null
        documents.append(renamed)
        for a in documents {
            for b in documents {
                let encoded = StoredValueCodec.encodeFields(a) == StoredValueCodec.encodeFields(b)
                #expect(StoredValueCodec.encodeAlike(a, b) == encoded, "\(a) vs \(b)")
            }
        }
    }

    @Test func damagedStoredBytesAreAnErrorNotACrash() {
        let good = StoredValueCodec.encodeFields(["a": .string("hello"), "b": .array([.integer(1)])])
        for cut in 0..<good.count {
            _ = try? StoredValueCodec.decodeFields(Array(good.prefix(cut)))
        }
        #expect(throws: StoredValueCodec.DecodeError.self) { try StoredValueCodec.decodeFields([0x05, 0xFF, 0xFF]) }
    }

    @Test func documentKeysOrderSegmentBySegment() {
        // As whole strings "a-b/c" < "a/b", but names compare segment by segment: "a" < "a-b".
        let a = ResourcePath(["a", "b"]).key
        let ab = ResourcePath(["a-b", "c"]).key
        #expect(OrderedEncoding.compare(a, ab) < 0)
        #expect(OrderedEncoding.segments(ofKey: ResourcePath(["x\u{0}y", "z"]).key) == ["x\u{0}y", "z"])
        #expect(OrderedEncoding.segments(ofKey: ResourcePath(["users", "u1", "files", "é\u{0}"]).key) == ["users", "u1", "files", "é\u{0}"])
        #expect(OrderedEncoding.segments(ofKey: ResourcePath(["users", "u1"]).key) == ["users", "u1"])
        #expect(OrderedEncoding.segments(ofKey: []) == [])
        #expect(OrderedEncoding.segments(ofKey: Array("users".utf8)) == nil)  // no segment end
        #expect(OrderedEncoding.segments(ofKey: [0x61, 0x00, 0x02]) == nil)  // not a separator or an escape
        #expect(DatabaseID(project: "p", database: "(default)").name(of: ResourcePath(["c", "é"])) == "projects/p/databases/(default)/documents/c/é")
        // Descendants share the key as a prefix and stay below prefixEnd.
        let parent = ResourcePath(["users", "u1"]).key
        let child = ResourcePath(["users", "u1", "files", "f"]).key
        let sibling = ResourcePath(["users", "u10"]).key
        #expect(child.starts(with: parent))
        #expect(OrderedEncoding.compare(child, OrderedEncoding.prefixEnd(parent)) < 0)
        #expect(OrderedEncoding.compare(sibling, OrderedEncoding.prefixEnd(parent)) > 0)
    }
}
