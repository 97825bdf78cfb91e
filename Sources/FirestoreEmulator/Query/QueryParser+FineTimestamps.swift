// Timestamp operands finer than a microsecond.
//
// Firestore stores timestamps to the microsecond ("any additional precision is rounded down",
// *Supported data types*) and Hearth's value decoders truncate every timestamp they read. A filter
// or cursor operand is compared whole by the official emulator, though: `== …123456789` matches
// nothing stored, `>= …123456789` is `> …123456`, `< …123456789` is `<= …123456`. Since no stored
// value has digits past the microsecond, each such comparison has an exact equivalent on the
// truncated operand, so the operand is read as decoded and the filter or cursor rewritten here
// (faith38), rather than carrying nanoseconds through `FirestoreValue` and every comparison.
// Both transports reach this: gRPC's `Timestamp` is converted to JSON text with its nanoseconds.
// Only a top-level operand of `==`, `!=`, `<`, `<=`, `>`, `>=`, `array-contains` and a cursor's are
// compared whole there; the elements of `in`, `not-in` and `array-contains-any`, and a timestamp
// nested in an array or map operand, are truncated there as here (`in [ …123456789 ]` matches
// `…123456`).

import HearthCore

extension QueryParser {
    /// Whether `raw` is a `Value` JSON object holding a timestamp with nonzero digits past the
    /// microsecond (`"2024-01-01T00:00:00.123456789Z"`).
    static func isFinerThanMicroseconds(_ raw: JSON) -> Bool {
        guard case .object(let o) = raw, case .string(let s)? = o["timestampValue"] ?? o["timestamp_value"],
              let dot = s.utf8.firstIndex(of: UInt8(ascii: ".")) else { return false }
        var k = 0
        for c in s.utf8[s.utf8.index(after: dot)...] {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { break }
            k += 1
            if k > 6, c != UInt8(ascii: "0") { return true }
        }
        return false
    }

    /// `.field(field, op, value)` for an operand `raw` the emulator compares whole, rewritten on
    /// the truncated `value` to what it selects among stored (whole-microsecond) values.
    static func fineTimestampFilter(_ field: FieldPath, _ op: FieldOperator, _ value: FirestoreValue,
                                    raw: JSON) -> QueryFilter {
        guard isFinerThanMicroseconds(raw) else { return .field(field, op, value) }
        switch op {
        case .lessThan, .lessThanOrEqual: return .field(field, .lessThanOrEqual, value)
        case .greaterThan, .greaterThanOrEqual: return .field(field, .greaterThan, value)
        // Every present, non-null value differs from it: `IS_NOT_NULL` selects exactly those (an
        // inequality as `!=` is, so the field joins the order alike).
        case .notEqual: return .unary(field, .isNotNull)
        case .equal, .arrayContains: return nothing(field)
        // The emulator truncates a list operator's elements, as it stores values.
        case .in, .notIn, .arrayContainsAny: return .field(field, op, value)
        }
    }

    /// A filter no document matches, of equalities only (no inequality joins the query's order):
    /// the field null and false at once.
    private static func nothing(_ field: FieldPath) -> QueryFilter {
        .and([.field(field, .equal, .null), .field(field, .equal, .boolean(false))])
    }

    /// A cursor whose value at `i` is a timestamp finer than a microsecond: its position lies
    /// between the stored values, just after every `…123456` in ascending order and just before
    /// them in descending, so it becomes the prefix up to `i` (truncated) placed there — the same
    /// for a start and an end cursor, `before` or not.
    static func fineTimestampCursor(_ values: [FirestoreValue], rawItems: [JSON], order: [Ordering], before: Bool) -> Cursor {
        guard let i = rawItems.indices.first(where: { $0 < values.count && isFinerThanMicroseconds(rawItems[$0]) }),
              i < order.count else {
            return Cursor(values: values, before: before)
        }
        return Cursor(values: Array(values[...i]), before: order[i].descending)
    }
}
