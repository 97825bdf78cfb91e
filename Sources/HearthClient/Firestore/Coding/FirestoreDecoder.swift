import Foundation

/// Decodes Firestore `Value`s into `Decodable` types (the inverse of `FirestoreEncoder`).
///
/// Numbers convert between integer and double when the value fits exactly; `Date` and `Timestamp`
/// read timestamps; `@DocumentID` properties get the document's id; an absent `@ServerTimestamp`
/// field decodes as nil.
public struct FirestoreDecoder: Sendable {
    public init() {}

    /// Decodes `T` from one value.
    public func decode<T: Decodable>(_ type: T.Type, from value: FirestoreValue, document: DocumentReference? = nil) throws -> T {
        let decoder = _FirestoreValueDecoder(value: value, codingPath: [], document: document)
        return try decoder.unbox(value, as: T.self)
    }

    /// Decodes `T` from a document's fields.
    public func decode<T: Decodable>(_ type: T.Type, fromFields fields: [String: FirestoreValue], document: DocumentReference? = nil) throws -> T {
        try decode(type, from: .map(fields), document: document)
    }
}

final class _FirestoreValueDecoder: Decoder {
    let value: FirestoreValue
    let codingPath: [any CodingKey]
    let document: DocumentReference?
    var userInfo: [CodingUserInfoKey: Any] {
        guard let document else { return [:] }
        return [.firestoreDocumentReference: document]
    }

    init(value: FirestoreValue, codingPath: [any CodingKey], document: DocumentReference?) {
        self.value = value
        self.codingPath = codingPath
        self.document = document
    }

    func mismatch(_ expected: Any.Type, _ found: FirestoreValue, _ path: [any CodingKey]) -> DecodingError {
        .typeMismatch(expected, .init(codingPath: path, debugDescription: "expected \(expected), found a Firestore \(found.kindName) value"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let fields) = value else { throw mismatch([String: Any].self, value, codingPath) }
        return KeyedDecodingContainer(FirestoreKeyedDecodingContainer<Key>(decoder: self, fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let values) = value else { throw mismatch([Any].self, value, codingPath) }
        return FirestoreUnkeyedDecodingContainer(decoder: self, values: values, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// Decodes `value` as `T`, handling Firestore's native types.
    func unbox<T: Decodable>(_ value: FirestoreValue, as type: T.Type, path: [any CodingKey]? = nil) throws -> T {
        let path = path ?? codingPath
        switch type {
        case is FirestoreValue.Type: return value as! T  // swiftformat:disable:this — T is FirestoreValue here
        case is Date.Type:
            guard case .timestamp(let t) = value else { throw mismatch(Date.self, value, path) }
            return t.dateValue as! T
        case is Timestamp.Type:
            guard case .timestamp(let t) = value else { throw mismatch(Timestamp.self, value, path) }
            return t as! T
        case is Data.Type:
            guard case .bytes(let d) = value else { throw mismatch(Data.self, value, path) }
            return d as! T
        case is GeoPoint.Type:
            guard case .geoPoint(let g) = value else { throw mismatch(GeoPoint.self, value, path) }
            return g as! T
        case is VectorValue.Type:
            guard case .vector(let v) = value else { throw mismatch(VectorValue.self, value, path) }
            return v as! T
        case is DocumentReference.Type:
            guard case .reference(let name) = value else { throw mismatch(DocumentReference.self, value, path) }
            // `projects/p/databases/d/documents/a/b` → `a/b`.
            if let r = name.range(of: "/documents/") { return DocumentReference(unchecked: String(name[r.upperBound...])) as! T }
            return DocumentReference(unchecked: name) as! T
        case is URL.Type:
            guard case .string(let s) = value, let url = URL(string: s) else { throw mismatch(URL.self, value, path) }
            return url as! T
        default:
            let decoder = _FirestoreValueDecoder(value: value, codingPath: path, document: document)
            return try T(from: decoder)
        }
    }

    // Number conversions shared by every container.
    static func int64(_ value: FirestoreValue) -> Int64? {
        switch value {
        case .integer(let i): return i
        case .double(let d) where d.rounded() == d && d >= -9.223372036854775808e18 && d < 9.223372036854775808e18: return Int64(d)
        default: return nil
        }
    }

    func integer<I: FixedWidthInteger>(_ value: FirestoreValue, _ type: I.Type, _ path: [any CodingKey]) throws -> I {
        guard let v = Self.int64(value) else { throw mismatch(type, value, path) }
        guard let converted = I(exactly: v) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(v) does not fit \(type)"))
        }
        return converted
    }

    func double(_ value: FirestoreValue, _ path: [any CodingKey]) throws -> Double {
        switch value {
        case .double(let d): return d
        case .integer(let i): return Double(i)
        default: throw mismatch(Double.self, value, path)
        }
    }

    func bool(_ value: FirestoreValue, _ path: [any CodingKey]) throws -> Bool {
        guard case .boolean(let b) = value else { throw mismatch(Bool.self, value, path) }
        return b
    }

    func string(_ value: FirestoreValue, _ path: [any CodingKey]) throws -> String {
        guard case .string(let s) = value else { throw mismatch(String.self, value, path) }
        return s
    }
}

extension _FirestoreValueDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try integer(value, type, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(value, type, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(value, type, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(value, type, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(value, type, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(value, type, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(value, type, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(value, type, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(value, type, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(value, type, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(value, as: type) }
}

struct FirestoreKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: _FirestoreValueDecoder
    let fields: [String: FirestoreValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { fields.keys.sorted().compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    private func value(_ key: Key) throws -> FirestoreValue {
        guard let v = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no field '\(key.stringValue)'"))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.bool(try value(key), codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.string(try value(key), codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.double(try value(key), codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decoder.double(try value(key), codingPath + [key])) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.integer(try value(key), type, codingPath + [key]) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.integer(try value(key), type, codingPath + [key]) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // The document id comes from where the document lives, not from a field.
        if type == DocumentID.self { return DocumentID(wrappedValue: decoder.document?.documentID) as! T }
        if let defaultable = type as? any _MissingFieldDefaultable.Type, fields[key.stringValue] == nil {
            return defaultable.missingFieldValue as! T
        }
        return try decoder.unbox(try value(key), as: type, path: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let v = try value(key)
        guard case .map(let inner) = v else { throw decoder.mismatch([String: Any].self, v, codingPath + [key]) }
        return KeyedDecodingContainer(FirestoreKeyedDecodingContainer<NestedKey>(decoder: decoder, fields: inner, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let v = try value(key)
        guard case .array(let inner) = v else { throw decoder.mismatch([Any].self, v, codingPath + [key]) }
        return FirestoreUnkeyedDecodingContainer(decoder: decoder, values: inner, codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder {
        _FirestoreValueDecoder(value: fields["super"] ?? .null, codingPath: codingPath + [IndexKey(stringValue: "super")], document: decoder.document)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        _FirestoreValueDecoder(value: fields[key.stringValue] ?? .null, codingPath: codingPath + [key], document: decoder.document)
    }
}

struct FirestoreUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: _FirestoreValueDecoder
    let values: [FirestoreValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(decoder: _FirestoreValueDecoder, values: [FirestoreValue], codingPath: [any CodingKey]) {
        self.decoder = decoder
        self.values = values
        self.codingPath = codingPath
    }

    var count: Int? { values.count }
    var isAtEnd: Bool { currentIndex >= values.count }

    private mutating func next(_ type: Any.Type) throws -> (FirestoreValue, [any CodingKey]) {
        let path = codingPath + [IndexKey(intValue: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "the array has only \(values.count) elements"))
        }
        defer { currentIndex += 1 }
        return (values[currentIndex], path)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, values[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (v, p) = try next(type); return try decoder.bool(v, p) }
    mutating func decode(_ type: String.Type) throws -> String { let (v, p) = try next(type); return try decoder.string(v, p) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (v, p) = try next(type); return try decoder.double(v, p) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (v, p) = try next(type); return Float(try decoder.double(v, p)) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (v, p) = try next(type); return try decoder.integer(v, type, p) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { let (v, p) = try next(type); return try decoder.unbox(v, as: type, path: p) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, p) = try next([String: Any].self)
        guard case .map(let inner) = v else { throw decoder.mismatch([String: Any].self, v, p) }
        return KeyedDecodingContainer(FirestoreKeyedDecodingContainer<NestedKey>(decoder: decoder, fields: inner, codingPath: p))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, p) = try next([Any].self)
        guard case .array(let inner) = v else { throw decoder.mismatch([Any].self, v, p) }
        return FirestoreUnkeyedDecodingContainer(decoder: decoder, values: inner, codingPath: p)
    }

    mutating func superDecoder() throws -> any Decoder {
        let (v, p) = try next(Any.self)
        return _FirestoreValueDecoder(value: v, codingPath: p, document: decoder.document)
    }
}
