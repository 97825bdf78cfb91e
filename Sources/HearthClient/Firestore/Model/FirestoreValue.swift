import Foundation

/// A Firestore `Value` (https://firebase.google.com/docs/firestore/reference/rest/v1/Value), whose
/// `Codable` form is exactly the REST JSON: `{"stringValue": "x"}`, `{"integerValue": "42"}`, …
public enum FirestoreValue: Sendable, Hashable {
    case null
    case boolean(Bool)
    case integer(Int64)
    case double(Double)
    case timestamp(Timestamp)
    case string(String)
    case bytes(Data)
    /// A full resource name: `projects/{p}/databases/{d}/documents/{path}`.
    case reference(String)
    case geoPoint(GeoPoint)
    case array([FirestoreValue])
    case map([String: FirestoreValue])
    /// A vector embedding; on the wire the map `{"__type__": "__vector__", "value": [...]}`.
    case vector(VectorValue)

    /// The string, when this is one.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The integer, when this is one.
    public var integerValue: Int64? { if case .integer(let i) = self { return i }; return nil }
    /// The map's fields, when this is one.
    public var mapValue: [String: FirestoreValue]? { if case .map(let m) = self { return m }; return nil }
    /// The timestamp, when this is one.
    public var timestampValue: Timestamp? { if case .timestamp(let t) = self { return t }; return nil }

    /// The member at `key` of a map value.
    public subscript(key: String) -> FirestoreValue? { mapValue?[key] }

    /// The JSON type name used in errors.
    var kindName: String {
        switch self {
        case .null: "null"
        case .boolean: "boolean"
        case .integer: "integer"
        case .double: "double"
        case .timestamp: "timestamp"
        case .string: "string"
        case .bytes: "bytes"
        case .reference: "reference"
        case .geoPoint: "geo point"
        case .array: "array"
        case .map: "map"
        case .vector: "vector"
        }
    }
}

extension FirestoreValue: Codable {
    private enum Kind: String, CodingKey {
        case nullValue, booleanValue, integerValue, doubleValue, timestampValue, stringValue, bytesValue
        case referenceValue, geoPointValue, arrayValue, mapValue
    }

    private enum Inner: String, CodingKey { case values, fields }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Kind.self)
        switch self {
        case .null: try c.encodeNil(forKey: .nullValue)
        case .boolean(let b): try c.encode(b, forKey: .booleanValue)
        case .integer(let i): try c.encode(String(i), forKey: .integerValue)  // int64 travels as a string in JSON
        case .double(let d):
            // proto3 JSON spells the non-finite doubles as strings.
            if d.isNaN { try c.encode("NaN", forKey: .doubleValue) } else if d == .infinity {
                try c.encode("Infinity", forKey: .doubleValue)
            } else if d == -.infinity {
                try c.encode("-Infinity", forKey: .doubleValue)
            } else {
                try c.encode(d, forKey: .doubleValue)
            }
        case .timestamp(let t): try c.encode(t.rfc3339, forKey: .timestampValue)
        case .string(let s): try c.encode(s, forKey: .stringValue)
        case .bytes(let d): try c.encode(d.base64EncodedString(), forKey: .bytesValue)
        case .reference(let r): try c.encode(r, forKey: .referenceValue)
        case .geoPoint(let g): try c.encode(g, forKey: .geoPointValue)
        case .array(let values):
            var inner = c.nestedContainer(keyedBy: Inner.self, forKey: .arrayValue)
            if !values.isEmpty { try inner.encode(values, forKey: .values) }
        case .map(let fields):
            var inner = c.nestedContainer(keyedBy: Inner.self, forKey: .mapValue)
            if !fields.isEmpty { try inner.encode(fields, forKey: .fields) }
        case .vector(let v):
            var inner = c.nestedContainer(keyedBy: Inner.self, forKey: .mapValue)
            try inner.encode(v.wireFields, forKey: .fields)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Kind.self)
        guard let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a Value needs one of its kinds"))
        }
        switch key {
        case .nullValue: self = .null
        case .booleanValue: self = .boolean(try c.decode(Bool.self, forKey: key))
        case .integerValue:
            // Strings on the wire; numbers are accepted too, as proto3 JSON parsers do.
            if let s = try? c.decode(String.self, forKey: key) {
                guard let i = Int64(s) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "integerValue '\(s)' is not an int64")
                }
                self = .integer(i)
            } else {
                self = .integer(try c.decode(Int64.self, forKey: key))
            }
        case .doubleValue:
            if let s = try? c.decode(String.self, forKey: key) {
                switch s {
                case "NaN": self = .double(.nan)
                case "Infinity": self = .double(.infinity)
                case "-Infinity": self = .double(-.infinity)
                default:
                    guard let d = Double(s) else {
                        throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "doubleValue '\(s)'")
                    }
                    self = .double(d)
                }
            } else {
                self = .double(try c.decode(Double.self, forKey: key))
            }
        case .timestampValue:
            let s = try c.decode(String.self, forKey: key)
            guard let t = Timestamp(rfc3339: s) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "timestampValue '\(s)'")
            }
            self = .timestamp(t)
        case .stringValue: self = .string(try c.decode(String.self, forKey: key))
        case .bytesValue:
            let s = try c.decode(String.self, forKey: key)
            // The API may send base64url; accept both alphabets.
            guard let d = Data(base64Encoded: s) ?? Base64URL.decode(s) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "bytesValue is not base64")
            }
            self = .bytes(d)
        case .referenceValue: self = .reference(try c.decode(String.self, forKey: key))
        case .geoPointValue:
            // Zero coordinates are omitted on the wire, as proto3 JSON omits default values.
            let g = try c.nestedContainer(keyedBy: GeoKey.self, forKey: key)
            self = .geoPoint(GeoPoint(latitude: try g.decodeIfPresent(Double.self, forKey: .latitude) ?? 0,
                                      longitude: try g.decodeIfPresent(Double.self, forKey: .longitude) ?? 0))
        case .arrayValue:
            let inner = try c.nestedContainer(keyedBy: Inner.self, forKey: key)
            self = .array(try inner.decodeIfPresent([FirestoreValue].self, forKey: .values) ?? [])
        case .mapValue:
            let inner = try c.nestedContainer(keyedBy: Inner.self, forKey: key)
            let fields = try inner.decodeIfPresent([String: FirestoreValue].self, forKey: .fields) ?? [:]
            // The server answers a vector as its marked map; read it back as the vector it is.
            if let v = VectorValue.from(map: fields) {
                self = .vector(v)
            } else {
                self = .map(fields)
            }
        }
    }

    private enum GeoKey: String, CodingKey { case latitude, longitude }
}

extension FirestoreValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: FirestoreValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, FirestoreValue)...) {
        self = .map(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
