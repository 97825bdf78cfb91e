import Testing
@testable import FirestoreEmulator

/// Document keys and references in Firestore's name order: numeric ids (`__id<N>__`) before every
/// string id and among themselves by N, segment by segment, a name before its descendants.
@Suite struct OrderedEncodingTests {
    /// Document paths in Firestore's order (the official emulator's, docs/firestore.md), each
    /// strictly after the previous.
    static let ascending: [[String]] = [
        ["c", "__id-9223372036854775808__"],
        ["c", "__id-9223372036854775808__", "s", "x"],
        ["c", "__id-3__"],
        ["c", "__id-1__"],
        ["c", "__id1__"],
        ["c", "__id5__"],
        ["c", "__id5__", "__id2__", "z"],
        ["c", "__id5__", "a", "b"],
        ["c", "__id12__"],
        ["c", "__id100__"],
        ["c", "__id9223372036854775807__"],
        ["c", "\u{1}"],
        ["c", "0"],
        ["c", "A"],
        ["c", "A", "sub", "__id2__"],
        ["c", "A", "sub", "b"],
        ["c", "Zed"],
        ["c", "__id05__"],  // not canonical: a string (Firestore refuses it as an id)
        ["c", "__id9223372036854775808__"],  // beyond Int64: a string too
        ["c", "__idx__"],
        ["c", "_x"],
        ["c", "a"],
        ["c", "\u{E9}"],
        ["c\u{0}", "__id-9223372036854775808__"],
        ["c\u{0}", "a"],
        ["d", "a"],
    ]

    @Test func keysSortInFirestoreOrder() {
        let keys = Self.ascending.map { OrderedEncoding.key($0) }
        for i in keys.indices {
            for j in keys.indices {
                let c = OrderedEncoding.compare(keys[i], keys[j])
                #expect(c.signum() == (i < j ? -1 : (i > j ? 1 : 0)), "\(Self.ascending[i]) against \(Self.ascending[j])")
            }
        }
    }

    @Test func referencesSortAsTheirKeys() {
        let refs = Self.ascending.map { FirestoreValue.reference("projects/p/databases/(default)/documents/" + $0.joined(separator: "/")) }
        for i in refs.indices {
            for j in refs.indices {
                #expect(FirestoreValue.compare(refs[i], refs[j]).signum() == (i < j ? -1 : (i > j ? 1 : 0)),
                        "\(Self.ascending[i]) against \(Self.ascending[j])")
            }
        }
    }

    /// A reference is not a prefix problem inside arrays: `[ref c, x]` sorts before `[ref c/__id1__]`
    /// whatever `x` is, as a shorter name sorts first.
    @Test func aNameSortsBeforeItsNumericChildWhateverFollows() {
        let root = "projects/p/databases/(default)/documents/c"
        for next: FirestoreValue in [.null, .map(["a": .integer(1)]), .string("z")] {
            let a = FirestoreValue.array([.reference(root), next])
            let b = FirestoreValue.array([.reference(root + "/__id-9223372036854775808__")])
            #expect(FirestoreValue.compare(a, b) < 0)
        }
    }

    @Test func keysDecodeBackToTheirSegments() {
        for segments in Self.ascending + [["c", "a\u{0}b", "__id7__", "x"], ["__id3__", "__id-3__"], ["c", "x\u{0}", "__id1__", "\u{0}"]] {
            let key = OrderedEncoding.key(segments)
            #expect(OrderedEncoding.segments(ofKey: key) == segments, "\(segments)")
            for n in 1..<segments.count {
                let prefix = OrderedEncoding.key(segments.prefix(n))
                #expect(key.starts(with: prefix), "a descendant's key starts with its ancestor's: \(segments)")
                #expect(OrderedEncoding.compare(key, OrderedEncoding.prefixEnd(prefix)) < 0)
                #expect(OrderedEncoding.segment(after: prefix, in: key) == segments[n], "\(segments) after \(n)")
            }
        }
    }

    @Test func aNumericIDIsTwelveBytes() {
        #expect(OrderedEncoding.key(["__id1__"]) == [0, 2, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 1])
        #expect(OrderedEncoding.key(["__id-1__"]) == [0, 2, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 1])
    }

    /// A cut or altered numeric segment is malformed, not some other name.
    @Test(arguments: [
        [0, 2, 0x80, 0, 0, 0, 0, 0, 0, 1, 0],
        [0, 2, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 2],
        [0, 2, 0x80, 0],
        [0x61, 0, 1, 0, 2, 0x80],
    ] as [[UInt8]])
    func malformedNumericSegmentsAreRefused(key: [UInt8]) {
        #expect(OrderedEncoding.segments(ofKey: key) == nil)
    }

    @Test(arguments: [
        ("__id1__", 1 as Int64?), ("__id-9223372036854775808__", .min), ("__id9223372036854775807__", .max),
        ("__id0__", nil), ("__id-0__", nil), ("__id01__", nil), ("__id+1__", nil), ("__id__", nil), ("__id1_", nil),
        ("_id1__", nil), ("__id9223372036854775808__", nil), ("id1", nil),
    ])
    func numericIDValue(id: String, value: Int64?) {
        #expect(ResourcePath.numericIDValue(id) == value)
    }
}
