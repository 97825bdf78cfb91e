import HearthCore

/// One Firestore value, as the v1 API's `Value` message defines it.
///
/// Timestamps keep microseconds, as Firestore stores them (finer input is truncated). References
/// hold the full resource name (`projects/p/databases/(default)/documents/users/u1`). Maps are
/// unordered here; every encoder sorts their keys so output and storage are deterministic.
///
/// A vector is its own case although every wire form, and the rules, see it as the map
/// `{__type__: "__vector__", value: [doubles]}` (`VectorValue`): it sorts in a class of its own
/// (after arrays, before maps, by dimension first), is one index entry rather than a map's
/// members, and is what `findNearest` measures; a case makes every switch say so, where a map
/// recognised by its shape would have to be re-checked in each of them.
enum FirestoreValue: Sendable, Equatable {
    case null
    case boolean(Bool)
    case integer(Int64)
    case double(Double)
    case timestamp(Instant)
    case string(String)
    case bytes([UInt8])
    case reference(String)
    case geoPoint(latitude: Double, longitude: Double)
    case array([FirestoreValue])
    /// A vector value's elements (at most `VectorValue.maxDimensions`).
    case vector([Double])
    case map([ExactString: FirestoreValue])

    /// Firestore's type order across types (null < bool < numbers < timestamps < strings < bytes
    /// < references < geopoints < arrays < vectors < maps); integers and doubles share one class.
    var typeOrder: Int {
        switch self {
        case .null: 0
        case .boolean: 1
        case .integer, .double: 2
        case .timestamp: 3
        case .string: 4
        case .bytes: 5
        case .reference: 6
        case .geoPoint: 7
        case .array: 8
        case .vector: 9
        case .map: 10
        }
    }

    /// Structural equality (`firestoreEquals` is the query one), with strings and references
    /// compared by their bytes: "é" precomposed and decomposed are two values to Firestore, where
    /// the synthesized `==` used `String`'s canonical equivalence.
    static func == (a: FirestoreValue, b: FirestoreValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.boolean(let x), .boolean(let y)): return x == y
        case (.integer(let x), .integer(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.timestamp(let x), .timestamp(let y)): return x == y
        case (.string(let x), .string(let y)), (.reference(let x), .reference(let y)): return ExactString.equal(x, y)
        case (.bytes(let x), .bytes(let y)): return x == y
        case (.geoPoint(let a1, let o1), .geoPoint(let a2, let o2)): return a1 == a2 && o1 == o2
        case (.array(let x), .array(let y)): return x == y
        case (.vector(let x), .vector(let y)): return x == y
        case (.map(let x), .map(let y)): return x == y
        default: return false
        }
    }

    /// Whether this is NaN.
    var isNaN: Bool {
        if case .double(let d) = self { return d.isNaN }
        return false
    }

    /// Whether this is a number (integer or double).
    var isNumber: Bool { typeOrder == 2 }

    /// The map's members, when this is a map.
    var mapValue: [ExactString: FirestoreValue]? {
        if case .map(let m) = self { return m }
        return nil
    }

    /// The elements, when this is an array.
    var arrayValue: [FirestoreValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Firestore equality as queries and array transforms use it: `3 == 3.0`, `NaN == NaN`,
    /// `0.0 == -0.0`; decided by the order-preserving encoding so it agrees with sorting.
    func firestoreEquals(_ other: FirestoreValue) -> Bool {
        guard typeOrder == other.typeOrder else { return false }
        return OrderedEncoding.encode(self) == OrderedEncoding.encode(other)
    }

    /// Firestore's total order: negative, zero or positive — the order of the values'
    /// `OrderedEncoding`s (the indexes' order). The common pairs of one type are compared directly:
    /// encoding both operands (two arrays) was most of judging `status == "ready"` on a document.
    /// Strings compare by UTF-8 bytes (what their escaped encodings' order is), integers and
    /// timestamps by value, booleans false first; every other pair through the encodings.
    static func compare(_ a: FirestoreValue, _ b: FirestoreValue) -> Int {
        switch (a, b) {
        case (.string(let x), .string(let y)): return OrderedEncoding.utf8Compare(x, y)
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.timestamp(let x), .timestamp(let y)): return x.unixMicros < y.unixMicros ? -1 : (x.unixMicros == y.unixMicros ? 0 : 1)
        case (.boolean(let x), .boolean(let y)): return x == y ? 0 : (x ? 1 : -1)
        default: return OrderedEncoding.compare(OrderedEncoding.encode(a), OrderedEncoding.encode(b))
        }
    }
}
