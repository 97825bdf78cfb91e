import Foundation
import HearthCore

/// The REST (proto3 JSON) form of values and documents, both ways.
///
/// Related: the `Value` message of Google's `firestore.v1` discovery document.
enum ValueJSON {
    /// Deepest nesting of maps and arrays Firestore accepts.
    static let maxDepth = 20
    /// Largest string or bytes value (1 MiB - 89 bytes, as Firestore documents).
    static let maxValueBytes = 1_048_487

    static let valueFields: Set<String> = [
        "nullValue", "booleanValue", "integerValue", "doubleValue", "timestampValue", "stringValue",
        "bytesValue", "referenceValue", "geoPointValue", "arrayValue", "mapValue",
    ]

    // MARK: Decoding

    /// Decodes a `fields` map (`{"name": Value, …}`) at `path` (`document.fields`).
    ///
    /// `prefix`: the bytes of the field path holding the map and its dot (0 at the top):
    /// Firestore bounds a field's whole path (`a.b`, names unquoted) by `FieldPath.maxBytes`.
    static func decodeFields(_ json: JSON?, path: String, depth: Int = 0, topLevel: String? = nil,
                             prefix: Int = 0) throws(FirestoreError) -> [ExactString: FirestoreValue] {
        guard let json, json != .null else { return [:] }
        guard case .object(let o) = json else {
            throw .invalidArgument("Invalid value at '\(path)' (type.googleapis.com/map), \(json.serialized())")
        }
        var out: [ExactString: FirestoreValue] = [:]
        out.reserveCapacity(o.count)
        for (i, (key, v)) in o.members.enumerated() {
            let entryPath = "\(path)[\(i)].value"
            // Inside a map Firestore names the top-level property that holds the bad entry.
            let property = topLevel ?? key
            if key.isEmpty {
                if let topLevel { throw .invalidArgument("Property \(topLevel) contains an invalid nested entity.") }
                throw .invalidArgument("The property.name is the empty string.")
            }
            let fieldPathBytes = prefix + key.utf8.count
            if fieldPathBytes > FieldPath.maxBytes {
                // Inside a map the official emulator names the top-level property, as for an empty key.
                if let topLevel { throw .invalidArgument("Property \(topLevel) contains an invalid nested entity.") }
                throw .invalidArgument("The property.name is longer than \(FieldPath.maxBytes) bytes.")
            }
            out[ExactString(key)] = try decode(v, path: entryPath, depth: depth, property: property, fieldPathBytes: fieldPathBytes)
        }
        return out
    }

    /// Decodes one `Value`.
    ///
    /// `property` is the top-level field holding the value (Firestore names it in errors);
    /// `arraysInArrays` admits the array elements a query's `in` list may hold; `fieldPathBytes`,
    /// the bytes of the field path holding the value in a document (0: not in one, an operand).
    static func decode(_ json: JSON, path: String, depth: Int = 0, inArray: Bool = false, property: String? = nil,
                       arraysInArrays: Bool = false, fieldPathBytes: Int = 0) throws(FirestoreError) -> FirestoreValue {
        guard depth <= maxDepth else {
            throw .invalidArgument("Property \(property ?? "") contains an invalid nested entity.")
        }
        let o = try ProtoObject(json: json, path: path)
        for pipelineOnly in ["fieldReferenceValue", "functionValue", "pipelineValue", "variableReferenceValue"] where o.has(pipelineOnly) {
            throw .invalidArgument("Invalid value at '\(path)': \(pipelineOnly) is not allowed here (it is only valid in pipeline queries, never in documents or filters).")
        }
        try o.requireKnown(valueFields)
        let present = o.members.keys
        guard let first = present.first else {
            throw .invalidArgument("Cannot convert firestore.v1.Value with type unset.")
        }
        if present.count > 1 {
            throw .invalidArgument("Invalid JSON payload received. Oneof field 'value_type' is already set. Cannot set '\(present[1])' at '\(path)'.")
        }
        let name = valueFields.contains(first) ? first : (valueFields.first { ProtoObject.snake($0) == first } ?? first)
        // Force-unwrap safe: `first` is a key of the object.
        let raw = o.members[first]!
        func bad(_ type: String) -> FirestoreError {
            .invalidArgument("Invalid value at '\(path).\(ProtoObject.snake(name))' (\(type)), \(raw.serialized())")
        }
        // A number past a double's range (`1e400`) reads as infinity. The official emulator refuses
        // the whole payload (its JSON parser does); stored, it would have become Infinity.
        if case .double(let d) = raw, !d.isFinite { throw .invalidArgument("Payload isn't valid for request.") }
        switch name {
        case "nullValue":
            switch raw {
            case .null, .string("NULL_VALUE"), .int(0): return .null
            default: throw bad("type.googleapis.com/google.protobuf.NullValue")
            }
        case "booleanValue":
            switch raw {
            case .bool(let b): return .boolean(b)
            case .string("true"): return .boolean(true)
            case .string("false"): return .boolean(false)
            default: throw bad("TYPE_BOOL")
            }
        case "integerValue":
            guard let i = ProtoObject.int64(raw) else { throw bad("TYPE_INT64") }
            return .integer(i)
        case "doubleValue":
            switch raw {
            case .int(let i): return .double(Double(i))
            case .double(let d): return .double(d)
            case .string(let s):
                switch s {
                case "NaN": return .double(.nan)
                case "Infinity": return .double(.infinity)
                case "-Infinity": return .double(-.infinity)
                default:
                    guard let d = ProtoObject.decimal(s), d.isFinite else { throw bad("TYPE_DOUBLE") }
                    return .double(d)
                }
            default: throw bad("TYPE_DOUBLE")
            }
        case "timestampValue":
            guard case .string(let s) = raw, let t = parseTimestamp(s) else {
                throw .invalidArgument("Invalid value at '\(path).timestamp_value' (type.googleapis.com/google.protobuf.Timestamp), Field 'timestampValue', Invalid time format: \(raw.serialized())")
            }
            return .timestamp(t)
        case "stringValue":
            // Google's JSON parser takes a number or boolean for a string field as its text.
            let s: String
            switch raw {
            case .string(let v): s = v
            case .int, .double, .bool: s = raw.serialized()
            default: throw bad("TYPE_STRING")
            }
            if s.utf8.count > maxValueBytes {
                throw .invalidArgument("The value of property \"\(property ?? "")\" is longer than \(maxValueBytes) bytes.")
            }
            return .string(s)
        case "bytesValue":
            guard case .string(let s) = raw, let b = decodeBase64(s) else { throw bad("TYPE_BYTES") }
            if b.count > maxValueBytes {
                throw .invalidArgument("The value of property \"\(property ?? "")\" is longer than \(maxValueBytes) bytes.")
            }
            return .bytes(b)
        case "referenceValue":
            guard case .string(let s) = raw else { throw bad("TYPE_STRING") }
            let (_, p) = try ResourcePath.parseName(s, kind: "Resource name")
            guard !p.segments.isEmpty else {
                throw .invalidArgument("Resource name \"\(s)\" is invalid: Omit \"/documents\" when referencing a database (except as the parent of a document).")
            }
            guard p.isDocument else {
                throw .invalidArgument("Resource name \"\(s)\" lacks \"/\" at index \(s.utf8.count).")
            }
            return .reference(s)
        case "geoPointValue":
            let g = try ProtoObject(json: raw, path: path + ".geo_point_value")
            try g.requireKnown(["latitude", "longitude"])
            func coordinate(_ n: String) throws(FirestoreError) -> Double {
                guard let v = g.raw(n) else { return 0 }
                switch v {
                case .int(let i): return Double(i)
                case .double(let d): return d
                case .string("NaN"): return .nan
                case .string("Infinity"): return .infinity
                case .string("-Infinity"): return -.infinity
                case .string(let s):
                    if let d = ProtoObject.decimal(s) { return d }
                default: break
                }
                throw g.invalid(n, "TYPE_DOUBLE", v)
            }
            let lat = try coordinate("latitude")
            let lng = try coordinate("longitude")
            // The coordinate as Firestore's (Java) message prints it: NaN, Infinity.
            func shown(_ d: Double) -> String { d.isNaN ? "NaN" : d.isInfinite ? (d > 0 ? "Infinity" : "-Infinity") : "\(d)" }
            guard lat >= -90, lat <= 90 else {
                throw .invalidArgument("Geo point latitude '\(shown(lat))' outside permitted range -90.0 to 90.0.")
            }
            guard lng >= -180, lng <= 180 else {
                throw .invalidArgument("Geo point longitude '\(shown(lng))' outside permitted range -180.0 to 180.0.")
            }
            return .geoPoint(latitude: lat, longitude: lng)
        case "arrayValue":
            if inArray && !arraysInArrays {
                throw .invalidArgument("Cannot convert an array value in an array value.")
            }
            let a = try ProtoObject(json: raw, path: path + ".array_value")
            try a.requireKnown(["values"])
            let items = try a.array("values") ?? []
            var out: [FirestoreValue] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                // The elements of an `in` list stand for values of their own (arrays included).
                out.append(try decode(item, path: "\(path).array_value.values[\(i)]", depth: depth + 1, inArray: !arraysInArrays,
                                      property: property, fieldPathBytes: fieldPathBytes))
            }
            return .array(out)
        case "mapValue":
            let m = try ProtoObject(json: raw, path: path + ".map_value")
            try m.requireKnown(["fields"])
            let members = try decodeFields(m.raw("fields"), path: path + ".map_value.fields", depth: depth + 1, topLevel: property ?? "",
                                           prefix: fieldPathBytes == 0 ? 0 : fieldPathBytes + 1)
            // A `{__type__: "__vector__", value: […]}` map is a vector value.
            return try VectorValue.mapOrVector(members, inArray: inArray)
        default:
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(first)\" at '\(path)': Cannot find field.")
        }
    }

    /// Parses an RFC 3339 timestamp within Firestore's range (years 1–9999), truncated to microseconds.
    static func parseTimestamp(_ s: String) -> Instant? {
        // Google's JSON parser takes only upper-case `T` and `Z`, which RFC 3339 merely permits.
        guard !s.utf8.contains(where: { $0 == UInt8(ascii: "t") || $0 == UInt8(ascii: "z") }) else { return nil }
        // Nor a leap second (`23:59:60`, which RFC 3339 permits and `Instant` reads as :59): its
        // seconds run 0–59 (the official emulator rolls :60 over into the next minute; faith34).
        if s.utf8.dropFirst(17).starts(with: "60".utf8) { return nil }
        var text = s
        // Digits past nanoseconds are dropped, as Google's parser does (storage keeps microseconds).
        if let dot = s.firstIndex(of: "."),
           let end = s[dot...].firstIndex(where: { !$0.isNumber && $0 != "." }),
           s.distance(from: dot, to: end) > 10 {
            text = String(s[..<s.index(dot, offsetBy: 10)]) + String(s[end...])
        }
        guard let t = Instant(rfc3339: text) else { return nil }
        // 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999Z
        guard t.unixMicros >= -62_135_596_800_000_000, t.unixMicros <= 253_402_300_799_999_999 else { return nil }
        return t
    }

    /// Standard or URL-safe base64, padded or not.
    static func decodeBase64(_ s: String) -> [UInt8]? {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        t = t.replacingOccurrences(of: "=", with: "")
        while t.count % 4 != 0 { t.append("=") }
        guard let d = Data(base64Encoded: t) else { return nil }
        return [UInt8](d)
    }

    // MARK: Encoding

    /// RFC 3339 in UTC with 0, 3 or 6 fraction digits, as Google's JSON printer writes timestamps.
    static func formatTimestamp(_ t: Instant) -> String {
        TimestampFormat.string(t)
    }

    /// The `Value` JSON of `value`.
    static func encode(_ value: FirestoreValue) -> JSON {
        switch value {
        case .null: return .object(["nullValue": .null])
        case .boolean(let b): return .object(["booleanValue": .bool(b)])
        case .integer(let i): return .object(["integerValue": .string(String(i))])
        case .double(let d): return .object(["doubleValue": encodeDouble(d)])
        case .timestamp(let t): return .object(["timestampValue": .string(formatTimestamp(t))])
        case .string(let s): return .object(["stringValue": .string(s)])
        case .bytes(let b): return .object(["bytesValue": .string(Data(b).base64EncodedString())])
        case .reference(let r): return .object(["referenceValue": .string(r)])
        case .geoPoint(let lat, let lng):
            // proto3 JSON leaves zero-valued fields out.
            var g = JSONObject()
            if lat != 0 { g["latitude"] = .double(lat) }
            if lng != 0 { g["longitude"] = .double(lng) }
            return .object(["geoPointValue": .object(g)])
        case .array(let elements):
            var a = JSONObject()
            if !elements.isEmpty { a["values"] = .array(elements.map(encode)) }
            return .object(["arrayValue": .object(a)])
        case .vector(let elements):
            return encode(.map(VectorValue.members(elements)))
        case .map(let members):
            var m = JSONObject()
            if !members.isEmpty { m["fields"] = encodeFields(members) }
            return .object(["mapValue": .object(m)])
        }
    }

    static func encodeDouble(_ d: Double) -> JSON {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d > 0 ? "Infinity" : "-Infinity") }
        return .double(d)
    }

    /// A `fields` map, keys in byte order.
    static func encodeFields(_ fields: [ExactString: FirestoreValue]) -> JSON {
        // Built as one member array: JSONObject's subscript setter searches, which is quadratic here.
        .object(JSONObject(OrderedEncoding.sortedKeys(fields).map { ($0.string, encode(fields[$0]!)) }))
    }
}
