import Foundation
import HearthCore
import HearthProtobuf

/// Decodes the Datastore `EntityProto` records of a Cloud Firestore emulator (or managed)
/// export into Firestore REST `Document` JSON, every value type exactly.
///
/// The layout (storage/onestore/v3 `entity.proto`, proto2, groups included):
/// - `EntityProto`: key = 13 (`Reference`), property = 14 and raw_property = 15 (`Property`,
///   indexed or not: both are fields).
/// - `Reference`: app = 13 (`dev~project`), path = 14 (`Path`: group 1 `Element` {type = 2,
///   id = 3, name = 4}), database_id = 23.
/// - `Property`: meaning = 1, name = 3, multiple = 4 (an array element: every element is a
///   property of the array's name), value = 5 (`PropertyValue`).
/// - `PropertyValue`: int64 = 1, boolean = 2, string = 3 (bytes), double = 4, group 5 point
///   {x = 6, y = 7}, group 12 reference {app = 13, group 14 element {type = 15, id = 16,
///   name = 17}, database_id = 23}; nothing set is null.
/// - Meanings: 7 timestamp (int64 microseconds), 9 geo point, 14/16 bytes (in string), 15 long
///   text, 19 map (string holds an embedded `EntityProto`), 24 empty array, 31 vector (one
///   `multiple` double property per element, like an array's).
struct EntityProtoDecoder {
    /// Why a record does not decode.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The project documents land in; references into the exported project follow them.
    let targetProject: String

    enum Meaning {
        static let timestamp: UInt64 = 7
        static let geoPoint: UInt64 = 9
        static let blob: UInt64 = 14
        static let text: UInt64 = 15
        static let byteString: UInt64 = 16
        static let embeddedEntity: UInt64 = 19
        static let emptyList: UInt64 = 24
        static let vector: UInt64 = 31
    }

    /// One exported document: its full name and its fields.
    func document(_ bytes: [UInt8]) throws -> (name: String, fields: JSON) {
        var reader = ProtoReader(bytes)
        var key: (app: String, path: [String], database: String)?
        var rawProperties: [ProtoReader] = []
        while let (number, type) = try reader.nextTag() {
            switch (number, type) {
            case (13, 2):
                var r = try reader.readMessage()
                key = try reference(&r, appField: 13, pathField: 14, pathIsGroup: false)
            case (14, 2), (15, 2):
                rawProperties.append(try reader.readMessage())
            default:
                try reader.skipField(number: number, wireType: type)
            }
        }
        guard let key, !key.path.isEmpty, key.path.count % 2 == 0 else { throw Failure(description: "an entity without a document key") }
        let name = "projects/\(targetProject)/databases/\(key.database)/documents/" + key.path.joined(separator: "/")
        // Decoded once the key is known: references into the document's own app follow it.
        var properties: [Property] = []
        for var r in rawProperties { properties.append(try property(&r, app: key.app)) }
        return (name, fields(properties))
    }

    /// One `Property`: its name, whether it is an element of a list (`multiple`), its value, and
    /// whether that list is a vector's.
    private typealias Property = (name: String, multiple: Bool, value: JSON, vector: Bool)

    /// Properties to a `fields` object; properties sharing a name with `multiple` set are one
    /// array (or, with the vector meaning, one vector's elements), in the order they appear.
    private func fields(_ properties: [Property]) -> JSON {
        // Names by their bytes (`ExactString`): two properties differing only in Unicode
        // normalisation are two fields.
        var order: [ExactString] = []
        var single: [ExactString: JSON] = [:]
        var arrays: [ExactString: [JSON]] = [:]
        var vectors: Set<ExactString> = []
        for p in properties {
            let name = ExactString(p.name)
            if single[name] == nil, arrays[name] == nil { order.append(name) }
            if p.multiple { arrays[name, default: []].append(p.value) } else { single[name] = p.value }
            if p.vector { vectors.insert(name) }
        }
        var o = JSONObject()
        for exact in order {
            let name = exact.string
            if let values = arrays[exact] {
                let array: JSON = .object(JSONObject([("arrayValue", .object(JSONObject([("values", .array(values))])))]))
                // The REST form of a vector: the typed map `VectorValue` reads.
                o[name] = vectors.contains(exact)
                    ? .object(JSONObject([("mapValue", .object(JSONObject([("fields", .object(JSONObject([
                        (VectorValue.typeKey, .object(JSONObject([("stringValue", .string(VectorValue.typeName))]))),
                        (VectorValue.valueKey, array),
                    ])))])))]))
                    : array
            } else if let v = single[exact] {
                o[name] = v
            }
        }
        return .object(o)
    }

    private func property(_ r: inout ProtoReader, app: String) throws -> Property {
        var meaning: UInt64 = 0
        var name: String?
        var multiple = false
        var valueBytes: ProtoReader?
        while let (number, type) = try r.nextTag() {
            switch (number, type) {
            case (1, 0): meaning = try r.readVarint()
            case (3, 2): name = try r.readString()
            case (4, 0): multiple = try r.readVarint() != 0
            case (5, 2): valueBytes = try r.readMessage()
            default: try r.skipField(number: number, wireType: type)
            }
        }
        guard let name else { throw Failure(description: "a property without a name") }
        guard var v = valueBytes else { throw Failure(description: "property \(name) without a value") }
        return (name, multiple, try value(&v, meaning: meaning, app: app), meaning == Meaning.vector)
    }

    /// One `PropertyValue` as REST `Value` JSON.
    private func value(_ r: inout ProtoReader, meaning: UInt64, app: String) throws -> JSON {
        var int: Int64?, bool: Bool?, bytes: [UInt8]?, double: Double?
        var point: (Double, Double)?
        var ref: (app: String, path: [String], database: String)?
        while let (number, type) = try r.nextTag() {
            switch (number, type) {
            case (1, 0): int = Int64(bitPattern: try r.readVarint())
            case (2, 0): bool = try r.readVarint() != 0
            case (3, 2): bytes = try r.readBytes()
            case (4, 1): double = Double(bitPattern: try r.readFixed64())
            case (5, ProtoReader.startGroup):
                var g = try r.readGroup(5)
                var x = 0.0, y = 0.0
                while let (n, t) = try g.nextTag() {
                    switch (n, t) {
                    case (6, 1): x = Double(bitPattern: try g.readFixed64())
                    case (7, 1): y = Double(bitPattern: try g.readFixed64())
                    default: try g.skipField(number: n, wireType: t)
                    }
                }
                point = (x, y)
            case (12, ProtoReader.startGroup):
                var g = try r.readGroup(12)
                ref = try reference(&g, appField: 13, pathField: 14, pathIsGroup: true)
            default:
                try r.skipField(number: number, wireType: type)
            }
        }
        func wrap(_ k: String, _ v: JSON) -> JSON { .object(JSONObject([(k, v)])) }
        switch meaning {
        case Meaning.emptyList:
            return wrap("arrayValue", .object(JSONObject()))
        case Meaning.embeddedEntity:
            var inner = ProtoReader(bytes ?? [])
            var properties: [Property] = []
            while let (number, type) = try inner.nextTag() {
                if (number == 14 || number == 15) && type == 2 {
                    var p = try inner.readMessage()
                    properties.append(try property(&p, app: app))
                } else {
                    try inner.skipField(number: number, wireType: type)
                }
            }
            let f = fields(properties)
            return wrap("mapValue", (f.objectValue?.isEmpty ?? true) ? .object(JSONObject()) : .object(JSONObject([("fields", f)])))
        case Meaning.timestamp where int != nil:
            return wrap("timestampValue", .string(Instant(unixMicros: int!).rfc3339(fractionDigits: 6)))
        case Meaning.geoPoint where point != nil:
            return wrap("geoPointValue", .object(JSONObject([("latitude", .double(point!.0)), ("longitude", .double(point!.1))])))
        case Meaning.blob, Meaning.byteString:
            return wrap("bytesValue", .string(Data(bytes ?? []).base64EncodedString()))
        default:
            break
        }
        if let int { return wrap("integerValue", .string(String(int))) }
        if let bool { return wrap("booleanValue", .bool(bool)) }
        if let double {
            if double.isNaN { return wrap("doubleValue", .string("NaN")) }
            if double.isInfinite { return wrap("doubleValue", .string(double < 0 ? "-Infinity" : "Infinity")) }
            return wrap("doubleValue", .double(double))
        }
        if let bytes {
            guard let s = String(bytes: bytes, encoding: .utf8) else { throw Failure(description: "a string value that is not UTF-8") }
            return wrap("stringValue", .string(s))
        }
        if let point { return wrap("geoPointValue", .object(JSONObject([("latitude", .double(point.0)), ("longitude", .double(point.1))]))) }
        if let ref {
            let project = ref.app.isEmpty || ref.app == app ? targetProject : Self.project(ofApp: ref.app)
            return wrap("referenceValue", .string("projects/\(project)/databases/\(ref.database)/documents/" + ref.path.joined(separator: "/")))
        }
        return wrap("nullValue", .null)
    }

    /// A `Reference` (message) or reference value (group): app, path elements, database.
    /// Element fields are 2/3/4 inside the message's `Path`, 15/16/17 inside the group.
    private func reference(_ r: inout ProtoReader, appField: Int, pathField: Int,
                           pathIsGroup: Bool) throws -> (app: String, path: [String], database: String) {
        var app = "", database = "(default)"
        var path: [String] = []
        func element(_ g: inout ProtoReader, type tf: Int, id idf: Int, name nf: Int) throws {
            var kind: String?, id: Int64?, name: String?
            while let (n, t) = try g.nextTag() {
                switch (n, t) {
                case (tf, 2): kind = try g.readString()
                case (idf, 0): id = Int64(bitPattern: try g.readVarint())
                case (nf, 2): name = try g.readString()
                default: try g.skipField(number: n, wireType: t)
                }
            }
            guard let kind else { throw Failure(description: "a key path element without a collection") }
            // Numeric ids are what Firestore names `__id<N>__`.
            guard let docID = name ?? id.map({ "__id\($0)__" }) else { throw Failure(description: "a key path element without an id") }
            path += [kind, docID]
        }
        while let (number, type) = try r.nextTag() {
            switch (number, type) {
            case (appField, 2): app = try r.readString()
            case (23, 2): database = try r.readString()
            case (pathField, 2) where !pathIsGroup:
                var p = try r.readMessage()
                while let (n, t) = try p.nextTag() {
                    if n == 1, t == ProtoReader.startGroup {
                        var g = try p.readGroup(1)
                        try element(&g, type: 2, id: 3, name: 4)
                    } else {
                        try p.skipField(number: n, wireType: t)
                    }
                }
            case (pathField, ProtoReader.startGroup) where pathIsGroup:
                var g = try r.readGroup(pathField)
                try element(&g, type: 15, id: 16, name: 17)
            default:
                try r.skipField(number: number, wireType: type)
            }
        }
        if database.isEmpty { database = "(default)" }
        return (app, path, database)
    }

    /// The project an app id names (`dev~demo-hearth`, `s~my-project`, `demo-hearth`).
    static func project(ofApp app: String) -> String {
        guard let tilde = app.firstIndex(of: "~") else { return app }
        return String(app[app.index(after: tilde)...])
    }
}
