import HearthCore

/// A JSON object read as a protobuf message in proto3 JSON form, the way Google's frontends read it.
///
/// Both field spellings are accepted (`structuredQuery` and `structured_query`), `null` means
/// "not set", 64-bit integers may be strings or numbers, enums may be names or numbers (the
/// `$alt=json;enum-encoding=int` clients send numbers), and unknown members are rejected with
/// Google's wording. Error locations use the proto field names (`structured_query.where`).
struct ProtoObject {
    let members: JSONObject
    /// The location of this message for error messages (`document.fields[0].value`); empty at the root.
    let path: String
    /// Whether a member name has an underscore: only then can a snake_case spelling be present,
    /// so lookups of absent members skip building it (most optional members are absent).
    private let hasSnakeNames: Bool

    init(_ members: JSONObject, path: String) {
        self.members = members
        self.path = path
        hasSnakeNames = members.members.contains { $0.0.utf8.contains(0x5F) }
    }

    /// The object `json`, or an error naming `path`.
    init(json: JSON, path: String) throws(FirestoreError) {
        guard case .object(let o) = json else {
            throw .invalidArgument("Invalid value at '\(path.isEmpty ? "body" : path)' (type.googleapis.com/message), \(json.serialized())")
        }
        self.init(o, path: path)
    }

    /// `structuredQuery` → `structured_query` (field names are ASCII).
    static func snake(_ camel: String) -> String {
        let utf8 = camel.utf8
        guard utf8.contains(where: { $0 >= 65 && $0 <= 90 }) else { return camel }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 4)
        for b in utf8 {
            if b >= 65 && b <= 90 {
                out.append(0x5F)
                out.append(b + 32)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func childPath(_ camel: String) -> String {
        path.isEmpty ? ProtoObject.snake(camel) : path + "." + ProtoObject.snake(camel)
    }

    /// The member `camel` (or its snake_case spelling); nil when absent or null.
    func raw(_ camel: String) -> JSON? {
        if let v = members[camel], v != .null { return v }
        guard hasSnakeNames else { return nil }
        let s = ProtoObject.snake(camel)
        if s != camel, let v = members[s], v != .null { return v }
        return nil
    }

    /// Whether the member is present (even as null).
    func has(_ camel: String) -> Bool {
        members[camel] != nil || (hasSnakeNames && members[ProtoObject.snake(camel)] != nil)
    }

    /// Rejects members that are not among `known` (camelCase names).
    func requireKnown(_ known: Set<String>) throws(FirestoreError) {
        for key in members.keys where !known.contains(key) {
            // snake_case spellings of known fields are fine
            if known.contains(where: { ProtoObject.snake($0) == key }) { continue }
            let location = path.isEmpty ? "" : " at '\(path)'"
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(key)\"\(location): Cannot find field.")
        }
    }

    func invalid(_ camel: String, _ type: String, _ value: JSON) -> FirestoreError {
        .invalidArgument("Invalid value at '\(childPath(camel))' (\(type)), \(value.serialized())")
    }

    func string(_ camel: String) throws(FirestoreError) -> String? {
        guard let v = raw(camel) else { return nil }
        guard case .string(let s) = v else { throw invalid(camel, "TYPE_STRING", v) }
        return s
    }

    func bool(_ camel: String) throws(FirestoreError) -> Bool? {
        guard let v = raw(camel) else { return nil }
        switch v {
        case .bool(let b): return b
        case .string("true"): return true
        case .string("false"): return false
        default: throw invalid(camel, "TYPE_BOOL", v)
        }
    }

    func int64(_ camel: String) throws(FirestoreError) -> Int64? {
        guard let v = raw(camel) else { return nil }
        if let i = ProtoObject.int64(v) { return i }
        throw invalid(camel, "TYPE_INT64", v)
    }

    func int32(_ camel: String) throws(FirestoreError) -> Int32? {
        guard let v = raw(camel) else { return nil }
        // Int32Value wrappers may also arrive as {"value": n}.
        if case .object(let o) = v, let inner = o["value"], let i = ProtoObject.int64(inner), let i32 = Int32(exactly: i) { return i32 }
        if let i = ProtoObject.int64(v), let i32 = Int32(exactly: i) { return i32 }
        throw invalid(camel, "TYPE_INT32", v)
    }

    /// A `double` (or `DoubleValue`, whose JSON form is the bare number): a number, a decimal
    /// string, or `"NaN"`, `"Infinity"`, `"-Infinity"`, as Google's parser reads them.
    func double(_ camel: String) throws(FirestoreError) -> Double? {
        guard let v = raw(camel) else { return nil }
        switch v {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let s):
            if let d = Self.decimal(s), d.isFinite { return d }
        default: break
        }
        throw invalid(camel, "TYPE_DOUBLE", v)
    }

    /// A number written in decimal (`1.5`, `-2e3`, `.5`, `5.`), as Google's JSON parser reads a
    /// number in a string; nil for anything else. Swift's `Double(_:)` reads text as C's `strtod`
    /// does, hexadecimal (`0x10`, `0x1p3`) and `inf`/`nan` spellings included, which the parser
    /// (and the official emulator) refuse (faith34).
    static func decimal(_ s: String) -> Double? {
        guard !s.isEmpty, s.utf8.allSatisfy({ b in
            (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: ".") || b == UInt8(ascii: "e")
                || b == UInt8(ascii: "E") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
        }) else { return nil }
        return Double(s)
    }

    /// A proto3 JSON integer: a number with an integral value, or a decimal string.
    static func int64(_ v: JSON) -> Int64? {
        switch v {
        case .int(let i): return i
        case .double(let d):
            guard d.rounded() == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { return nil }
            return Int64(d)
        case .string(let s):
            if let i = Int64(s) { return i }
            // "1e3" and "5.0" are accepted by Google's parser when integral.
            if let d = decimal(s), d.rounded() == d, d.magnitude < 9.223372036854775808e18 { return Int64(d) }
            return nil
        default: return nil
        }
    }

    func object(_ camel: String) throws(FirestoreError) -> ProtoObject? {
        guard let v = raw(camel) else { return nil }
        return try ProtoObject(json: v, path: childPath(camel))
    }

    func array(_ camel: String) throws(FirestoreError) -> [JSON]? {
        guard let v = raw(camel) else { return nil }
        guard case .array(let a) = v else {
            throw .invalidArgument("Invalid value at '\(childPath(camel))', \(v.serialized()): Proto field is not repeating, cannot start list.")
        }
        return a
    }

    /// An enum given by name or number; `names[number]` is the name of each number.
    func enumeration(_ camel: String, _ names: [Int64: String]) throws(FirestoreError) -> String? {
        guard let v = raw(camel) else { return nil }
        switch v {
        case .string(let s) where names.values.contains(s): return s
        case .int(let i):
            if let name = names[i] { return name }
        default: break
        }
        throw .invalidArgument("Invalid value at '\(childPath(camel))' (type.googleapis.com/enum), \(v.serialized())")
    }
}
