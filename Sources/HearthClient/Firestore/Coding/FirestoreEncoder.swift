import Foundation

/// Encodes `Encodable` values as Firestore `Value`s, the way the Firebase SDKs map Swift types:
/// `Bool` → boolean, integers → integer (64-bit), `Float`/`Double` → double, `String` → string,
/// `Date`/`Timestamp` → timestamp, `Data` → bytes, `GeoPoint` → geoPoint, `VectorValue` → vector, `DocumentReference` →
/// reference, arrays → array, structs and dictionaries → map, nil → null (omitted when the
/// synthesized code skips nil optionals), `URL` → string. `FieldValue` sentinels become transforms.
public struct FirestoreEncoder: Sendable {
    /// `projects/{p}/databases/{d}`, for turning a `DocumentReference` into a full resource name.
    public var databaseRoot: String?

    public init(databaseRoot: String? = nil) { self.databaseRoot = databaseRoot }

    /// Encodes one value; sentinels are not allowed here (they need a document to apply to).
    public func encode<T: Encodable>(_ value: T) throws -> FirestoreValue {
        let node = try _FirestoreValueEncoder.box(value, codingPath: [], options: self)
        var transforms: [FieldTransform] = []
        var deletes: [FieldPath] = []
        guard let v = try node.resolve(path: FieldPath([]), inArray: false, transforms: &transforms, deletes: &deletes),
              transforms.isEmpty, deletes.isEmpty else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "FieldValue sentinels are only allowed in document fields"))
        }
        return v
    }

    /// Encodes a document's data: it must encode as a map (a struct or a `[String: …]`).
    public func encodeDocument<T: Encodable>(_ value: T) throws -> EncodedDocument {
        let node = try _FirestoreValueEncoder.box(value, codingPath: [], options: self)
        guard case .map = node else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "a document must encode as a map (a struct or dictionary), not \(T.self)"))
        }
        var transforms: [FieldTransform] = []
        var deletes: [FieldPath] = []
        let resolved = try node.resolve(path: FieldPath([]), inArray: false, transforms: &transforms, deletes: &deletes)
        return EncodedDocument(fields: resolved?.mapValue ?? [:], transforms: transforms, deletes: deletes)
    }
}

/// A document's fields with the sentinels taken out.
public struct EncodedDocument: Sendable, Equatable {
    /// The plain field values.
    public var fields: [String: FirestoreValue]
    /// Transforms (server timestamp, increment, …) in encoding order.
    public var transforms: [FieldTransform]
    /// Fields set to `FieldValue.delete`.
    public var deletes: [FieldPath]

    /// The paths of every leaf value (maps are descended into), for a merging write's mask.
    public var leafPaths: [FieldPath] {
        var out: [FieldPath] = []
        func walk(_ fields: [String: FirestoreValue], _ prefix: FieldPath) {
            for key in fields.keys.sorted() {
                let path = prefix.appending(key)
                if case .map(let inner) = fields[key], !inner.isEmpty { walk(inner, path) } else { out.append(path) }
            }
        }
        walk(fields, FieldPath([]))
        return out
    }
}

/// The tree built while encoding: values, containers still being filled, sentinels.
indirect enum EncodingNode {
    case value(FirestoreValue)
    case map(MapStorage)
    case array(ArrayStorage)
    case sentinel(FieldValue)

    func resolve(path: FieldPath, inArray: Bool, transforms: inout [FieldTransform], deletes: inout [FieldPath]) throws -> FirestoreValue? {
        switch self {
        case .value(let v): return v
        case .sentinel(let s):
            guard !inArray else {
                throw EncodingError.invalidValue(s, .init(codingPath: [], debugDescription: "FieldValue sentinels cannot be used inside arrays (at \(path))"))
            }
            guard !path.segments.isEmpty else {
                throw EncodingError.invalidValue(s, .init(codingPath: [], debugDescription: "a sentinel must be a field's value"))
            }
            if case .delete = s { deletes.append(path) } else { transforms.append(FieldTransform(fieldPath: path, value: s)) }
            return nil
        case .array(let storage):
            var out: [FirestoreValue] = []
            for (i, item) in storage.items.enumerated() {
                out.append(try item.resolve(path: path.appending(String(i)), inArray: true, transforms: &transforms, deletes: &deletes) ?? .null)
            }
            return .array(out)
        case .map(let storage):
            var out: [String: FirestoreValue] = [:]
            var hadSentinel = false
            for key in storage.keys {
                guard let item = storage.values[key] else { continue }
                if let v = try item.resolve(path: path.appending(key), inArray: inArray, transforms: &transforms, deletes: &deletes) {
                    out[key] = v
                } else {
                    hadSentinel = true
                }
            }
            // A map left empty only because its members were sentinels is omitted: the transforms create it.
            if out.isEmpty && hadSentinel && !path.segments.isEmpty { return nil }
            return .map(out)
        }
    }
}

final class MapStorage {
    var keys: [String] = []
    var values: [String: EncodingNode] = [:]

    func set(_ key: String, _ node: EncodingNode) {
        if values.updateValue(node, forKey: key) == nil { keys.append(key) }
    }
}

final class ArrayStorage {
    var items: [EncodingNode] = []
}

/// The `Encoder` the standard library drives.
final class _FirestoreValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    let options: FirestoreEncoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var result: EncodingNode?

    init(codingPath: [any CodingKey], options: FirestoreEncoder) {
        self.codingPath = codingPath
        self.options = options
    }

    /// Encodes `value`, handling the types Firestore represents natively.
    static func box<T: Encodable>(_ value: T, codingPath: [any CodingKey], options: FirestoreEncoder) throws -> EncodingNode {
        switch value {
        case let v as FirestoreValue: return .value(v)
        case let v as FieldValue: return .sentinel(v)
        case let v as Date: return .value(.timestamp(Timestamp(date: v)))
        case let v as Timestamp: return .value(.timestamp(v))
        case let v as Data: return .value(.bytes(v))
        case let v as GeoPoint: return .value(.geoPoint(v))
        case let v as VectorValue: return .value(.vector(v))
        case let v as DocumentReference:
            if v.path.hasPrefix("projects/") { return .value(.reference(v.path)) }
            guard let root = options.databaseRoot else {
                throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "encoding a DocumentReference needs FirestoreEncoder.databaseRoot"))
            }
            return .value(.reference("\(root)/documents/\(v.path)"))
        case let v as URL: return .value(.string(v.absoluteString))
        case let v as Decimal: return .value(.double(NSDecimalNumber(decimal: v).doubleValue))
        default:
            let encoder = _FirestoreValueEncoder(codingPath: codingPath, options: options)
            try value.encode(to: encoder)
            // A type that encodes nothing is an empty map, as JSONEncoder makes it `{}`.
            return encoder.result ?? .map(MapStorage())
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: MapStorage
        if case .map(let existing)? = result { storage = existing } else {
            storage = MapStorage()
            result = .map(storage)
        }
        return KeyedEncodingContainer(FirestoreKeyedEncodingContainer<Key>(encoder: self, storage: storage, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: ArrayStorage
        if case .array(let existing)? = result { storage = existing } else {
            storage = ArrayStorage()
            result = .array(storage)
        }
        return FirestoreUnkeyedEncodingContainer(encoder: self, storage: storage, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }
}

extension _FirestoreValueEncoder: SingleValueEncodingContainer {
    func encodeNil() throws { result = .value(.null) }
    func encode(_ value: Bool) throws { result = .value(.boolean(value)) }
    func encode(_ value: String) throws { result = .value(.string(value)) }
    func encode(_ value: Double) throws { result = .value(.double(value)) }
    func encode(_ value: Float) throws { result = .value(.double(Double(value))) }
    func encode(_ value: Int) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: Int8) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: Int16) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: Int32) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: Int64) throws { result = .value(.integer(value)) }
    func encode(_ value: UInt) throws { result = .value(try Self.unsigned(UInt64(value), codingPath)) }
    func encode(_ value: UInt8) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: UInt16) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: UInt32) throws { result = .value(.integer(Int64(value))) }
    func encode(_ value: UInt64) throws { result = .value(try Self.unsigned(value, codingPath)) }
    func encode<T: Encodable>(_ value: T) throws { result = try Self.box(value, codingPath: codingPath, options: options) }

    /// Firestore integers are signed 64-bit.
    static func unsigned(_ v: UInt64, _ path: [any CodingKey]) throws -> FirestoreValue {
        guard v <= UInt64(Int64.max) else {
            throw EncodingError.invalidValue(v, .init(codingPath: path, debugDescription: "\(v) does not fit Firestore's signed 64-bit integers"))
        }
        return .integer(Int64(v))
    }
}

/// Writes the members of a map.
struct FirestoreKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: _FirestoreValueEncoder
    let storage: MapStorage
    let codingPath: [any CodingKey]

    private func put(_ key: Key, _ value: FirestoreValue) { storage.set(key.stringValue, .value(value)) }

    mutating func encodeNil(forKey key: Key) throws { put(key, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(key, .boolean(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(key, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(key, .double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(key, .double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(key, .integer(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(key, try _FirestoreValueEncoder.unsigned(UInt64(value), codingPath + [key])) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(key, .integer(Int64(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(key, try _FirestoreValueEncoder.unsigned(value, codingPath + [key])) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        // A document's id is where it lives, not a field in it.
        if value is DocumentID { return }
        storage.set(key.stringValue, try _FirestoreValueEncoder.box(value, codingPath: codingPath + [key], options: encoder.options))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = MapStorage()
        storage.set(key.stringValue, .map(nested))
        return KeyedEncodingContainer(FirestoreKeyedEncodingContainer<NestedKey>(encoder: encoder, storage: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayStorage()
        storage.set(key.stringValue, .array(nested))
        return FirestoreUnkeyedEncodingContainer(encoder: encoder, storage: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        _SlotEncoder(codingPath: codingPath + [IndexKey(stringValue: "super")], options: encoder.options) { [storage] node in
            storage.set("super", node)
        }
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        _SlotEncoder(codingPath: codingPath + [key], options: encoder.options) { [storage] node in storage.set(key.stringValue, node) }
    }
}

/// Appends the elements of an array.
struct FirestoreUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: _FirestoreValueEncoder
    let storage: ArrayStorage
    let codingPath: [any CodingKey]
    var count: Int { storage.items.count }

    private func append(_ value: FirestoreValue) { storage.items.append(.value(value)) }
    private var indexKey: any CodingKey { IndexKey(intValue: count) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.boolean(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.integer(value)) }
    mutating func encode(_ value: UInt) throws { append(try _FirestoreValueEncoder.unsigned(UInt64(value), codingPath + [indexKey])) }
    mutating func encode(_ value: UInt8) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(try _FirestoreValueEncoder.unsigned(value, codingPath + [indexKey])) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        storage.items.append(try _FirestoreValueEncoder.box(value, codingPath: codingPath + [indexKey], options: encoder.options))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = MapStorage()
        let path = codingPath + [indexKey]
        storage.items.append(.map(nested))
        return KeyedEncodingContainer(FirestoreKeyedEncodingContainer<NestedKey>(encoder: encoder, storage: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayStorage()
        let path = codingPath + [indexKey]
        storage.items.append(.array(nested))
        return FirestoreUnkeyedEncodingContainer(encoder: encoder, storage: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let index = storage.items.count
        storage.items.append(.value(.null))
        return _SlotEncoder(codingPath: codingPath + [IndexKey(intValue: index)], options: encoder.options) { [storage] node in
            storage.items[index] = node
        }
    }
}

/// An encoder whose result is stored into its parent when it is released (`superEncoder`).
final class _SlotEncoder: Encoder {
    private let inner: _FirestoreValueEncoder
    private let store: (EncodingNode) -> Void
    var codingPath: [any CodingKey] { inner.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(codingPath: [any CodingKey], options: FirestoreEncoder, store: @escaping (EncodingNode) -> Void) {
        inner = _FirestoreValueEncoder(codingPath: codingPath, options: options)
        self.store = store
    }

    deinit { store(inner.result ?? .map(MapStorage())) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { inner.container(keyedBy: type) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { inner.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { inner.singleValueContainer() }
}

/// An array position as a coding key.
struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String
    init(intValue: Int) {
        self.intValue = intValue
        stringValue = String(intValue)
    }
    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = Int(stringValue)
    }
}
