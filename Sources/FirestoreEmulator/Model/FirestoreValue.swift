import HearthCore

/// One Firestore value, as the v1 API's `Value` message defines it.
///
/// Timestamps keep microseconds, as Firestore stores them (finer input is truncated). References
/// hold the full resource name (`projects/p/databases/(default)/documents/users/u1`). Maps are
/// unordered here; every encoder sorts their keys so output and storage are deterministic.
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
    case map([String: FirestoreValue])

    /// Firestore's type order across types (null < bool < numbers < timestamps < strings < bytes
    /// < references < geopoints < arrays < maps); integers and doubles share one class.
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
        case .map: 9
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
    var mapValue: [String: FirestoreValue]? {
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

    /// Firestore's total order: negative, zero or positive.
    static func compare(_ a: FirestoreValue, _ b: FirestoreValue) -> Int {
        OrderedEncoding.compare(OrderedEncoding.encode(a), OrderedEncoding.encode(b))
    }
}
