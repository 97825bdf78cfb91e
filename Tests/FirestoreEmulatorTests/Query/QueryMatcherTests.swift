import HearthCore
import Testing
@testable import FirestoreEmulator

/// `FirestoreValue.compare` compares strings, integers, timestamps and booleans directly; every
/// answer must be the order of the values' encodings (the indexes' order).
@Suite struct QueryMatcherTests {
    private static let values: [FirestoreValue] = {
        // Byte order, not Swift's String order: NUL, a prefix, precomposed and decomposed é (equal
        // as Swift Strings, different bytes), characters beyond the BMP, the empty string.
        let strings = ["", "a", "a\u{0}", "a\u{0}b", "a\u{1}", "ab", "b", "\u{E9}", "e\u{301}", "\u{FFFF}", "\u{1F600}", "Z", "é"]
        let integers: [Int64] = [.min, .min + 1, -(1 << 53) - 1, -1, 0, 1, 2, 1 << 53, (1 << 53) + 1, .max - 1, .max]
        let micros: [Int64] = [.min, -1, 0, 1, 1_700_000_000_000_000, .max]
        return strings.map { .string($0) } + integers.map { .integer($0) } + micros.map { .timestamp(Instant(unixMicros: $0)) }
            + [.boolean(false), .boolean(true), .double(1.0), .double(-0.0), .null, .bytes([0x61])]
    }()

    @Test func directComparisonsAgreeWithTheEncodings() {
        for a in Self.values {
            for b in Self.values {
                #expect(FirestoreValue.compare(a, b) == OrderedEncoding.compare(OrderedEncoding.encode(a), OrderedEncoding.encode(b)),
                        "\(a) vs \(b)")
            }
        }
    }

    /// The order walk (`QueryExecutor.Walk`) passes a document only when every field its checks
    /// name was found: right only while no leaf matches a missing field.
    @Test func noLeafMatchesAMissingField() {
        for op in FieldOperator.allCases {
            for operand in Self.values + [.double(.nan), .array([.string("a"), .null])] {
                #expect(!QueryMatcher.matches(op, operand, nil), "\(op) \(operand)")
            }
        }
        for op in [UnaryOperator.isNull, .isNaN, .isNotNull, .isNotNaN] {
            #expect(!QueryMatcher.matches(op, nil), "\(op)")
        }
    }
}
