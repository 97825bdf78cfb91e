import HearthCore

/// Reads the `writes` of a REST commit body straight from its JSON into `Write`s, for the plain
/// forms clients send (the camelCase members, the canonical value forms).
///
/// The general path wraps every object in a `ProtoObject`, checks each against its set of known
/// members and builds a location string for each field and value before it is needed (only an
/// error message uses it): for a one-document create that was a tenth of the whole request. This
/// decoder accepts only input the general path accepts and builds the same `Write` from it
/// (`WriteJSONDecoderTests` compares the two); anything else falls back (`PlainWrite`).
struct WriteJSONDecoder {
    /// The database of the request (a write naming another one is kept as `Write.database`).
    let database: DatabaseID

    typealias Fallback = PlainWrite.Fallback

    /// The writes of a body's `writes` member (absent: none); nil when any needs the general path.
    func writes(_ json: JSON?) -> [Write]? {
        guard let json else { return [] }
        guard case .array(let items) = json else { return nil }
        return try? items.map { item throws(Fallback) in try write(item) }
    }

    /// One `Write`: an update or a delete (a `transform` write, snake_case names and nulls take
    /// the general path).
    func write(_ json: JSON) throws(Fallback) -> Write {
        let o = try Self.object(json)
        var update: (name: String, fields: [String: FirestoreValue])?
        var delete: String?
        var mask: [String]?
        var precondition: Precondition?
        var transforms: [FieldTransform]?
        for (key, value) in o.members {
            switch key {
            case "update":
                guard update == nil, delete == nil else { throw Fallback() }
                update = try document(value)
            case "delete":
                guard update == nil, delete == nil, case .string(let name) = value else { throw Fallback() }
                delete = name
            case "updateMask":
                guard mask == nil else { throw Fallback() }
                let m = try Self.object(value)
                guard m.count == 1, case .array(let paths)? = m["fieldPaths"] else { throw Fallback() }
                mask = try paths.map { p throws(Fallback) in
                    guard case .string(let s) = p else { throw Fallback() }
                    return s
                }
            case "currentDocument":
                guard precondition == nil else { throw Fallback() }
                precondition = try self.precondition(value)
            case "updateTransforms":
                guard transforms == nil, case .array(let items) = value else { throw Fallback() }
                transforms = try items.map { t throws(Fallback) in try transform(t) }
            default:
                throw Fallback()
            }
        }
        return try PlainWrite.make(database: database, update: update, delete: delete, mask: mask,
                                   transforms: transforms ?? [], precondition: precondition)
    }

    /// A `Document` with a name and (optionally) fields.
    private func document(_ json: JSON) throws(Fallback) -> (name: String, fields: [String: FirestoreValue]) {
        let o = try Self.object(json)
        var name: String?
        var fields: [String: FirestoreValue]?
        for (key, value) in o.members {
            switch key {
            case "name":
                guard name == nil, case .string(let s) = value, !s.isEmpty else { throw Fallback() }
                name = s
            case "fields":
                guard fields == nil else { throw Fallback() }
                fields = try Self.fields(value, depth: 0)
            default:
                throw Fallback()
            }
        }
        guard let name else { throw Fallback() }
        return (name, fields ?? [:])
    }

    /// `{"exists": bool}` or `{"updateTime": timestamp}`.
    private func precondition(_ json: JSON) throws(Fallback) -> Precondition {
        let o = try Self.object(json)
        guard o.count == 1 else { throw Fallback() }
        switch o.members[0] {
        case ("exists", .bool(let b)): return Precondition(exists: b)
        case ("updateTime", .string(let s)):
            guard let t = ValueJSON.parseTimestamp(s) else { throw Fallback() }
            return Precondition(updateTime: t)
        default: throw Fallback()
        }
    }

    /// `{"fieldPath": …, <one transform>}`.
    private func transform(_ json: JSON) throws(Fallback) -> FieldTransform {
        let o = try Self.object(json)
        guard o.count == 2, case .string(let path)? = o["fieldPath"] else { throw Fallback() }
        guard let (name, value) = o.members.first(where: { $0.0 != "fieldPath" }) else { throw Fallback() }
        let kind: FieldTransform.Kind
        switch name {
        case "setToServerValue":
            guard value == .string("REQUEST_TIME") else { throw Fallback() }
            kind = .serverTime
        case "increment", "maximum", "minimum":
            let v = try Self.value(value, depth: 0, inArray: false)
            guard v.isNumber else { throw Fallback() }
            kind = name == "increment" ? .increment(v) : (name == "maximum" ? .maximum(v) : .minimum(v))
        case "appendMissingElements", "removeAllFromArray":
            let elements = try Self.arrayValues(value, depth: 1)
            kind = name == "appendMissingElements" ? .appendMissingElements(elements) : .removeAllFromArray(elements)
        default:
            throw Fallback()
        }
        return try PlainWrite.transform(path, kind)
    }

    // MARK: Values

    /// A `fields` map.
    private static func fields(_ json: JSON, depth: Int) throws(Fallback) -> [String: FirestoreValue] {
        let o = try object(json)
        var out: [String: FirestoreValue] = [:]
        out.reserveCapacity(o.count)
        for (key, v) in o.members {
            try PlainWrite.checkKey(key)
            // A repeated name: the last wins, as in the general path.
            out[key] = try value(v, depth: depth, inArray: false)
        }
        return out
    }

    /// A `Value` with exactly one member in its canonical form; references, geo points and the
    /// lenient spellings Google's parser also takes (numbers as strings and so on) fall back.
    private static func value(_ json: JSON, depth: Int, inArray: Bool) throws(Fallback) -> FirestoreValue {
        guard depth <= ValueJSON.maxDepth, case .object(let o) = json, o.count == 1 else { throw Fallback() }
        let (kind, raw) = o.members[0]
        switch (kind, raw) {
        case ("stringValue", .string(let s)): return try PlainWrite.string(s)
        case ("integerValue", .string), ("integerValue", .int):
            guard let i = ProtoObject.int64(raw) else { throw Fallback() }
            return .integer(i)
        case ("doubleValue", .double(let d)): return .double(d)
        case ("doubleValue", .int(let i)): return .double(Double(i))
        case ("booleanValue", .bool(let b)): return .boolean(b)
        case ("nullValue", .null), ("nullValue", .string("NULL_VALUE")): return .null
        case ("timestampValue", .string(let s)):
            guard let t = ValueJSON.parseTimestamp(s) else { throw Fallback() }
            return .timestamp(t)
        case ("bytesValue", .string(let s)):
            guard let b = ValueJSON.decodeBase64(s) else { throw Fallback() }
            return try PlainWrite.bytes(b)
        case ("mapValue", .object(let m)):
            guard m.count <= 1 else { throw Fallback() }
            guard let f = m["fields"] else {
                if m.isEmpty { return .map([:]) }
                throw Fallback()
            }
            return try PlainWrite.mapOrVector(try fields(f, depth: depth + 1), inArray: inArray)
        case ("arrayValue", _):
            guard !inArray else { throw Fallback() }
            return .array(try arrayValues(raw, depth: depth + 1))
        default:
            throw Fallback()
        }
    }

    /// The values of an `ArrayValue` (`{"values": […]}` or `{}`), each at `depth` inside an array.
    private static func arrayValues(_ json: JSON, depth: Int) throws(Fallback) -> [FirestoreValue] {
        let o = try object(json)
        guard o.count <= 1 else { throw Fallback() }
        guard let values = o["values"] else {
            if o.isEmpty { return [] }
            throw Fallback()
        }
        guard case .array(let items) = values else { throw Fallback() }
        var out: [FirestoreValue] = []
        out.reserveCapacity(items.count)
        for item in items { out.append(try value(item, depth: depth, inArray: true)) }
        return out
    }

    private static func object(_ json: JSON) throws(Fallback) -> JSONObject {
        guard case .object(let o) = json else { throw Fallback() }
        return o
    }
}
