import Foundation
import HearthCore
import HearthProtobuf

/// Converts between protobuf bytes and the proto3 JSON tree, driven by `ProtoSchema` tables.
///
/// Requests are read into the JSON the REST adapter parses (so REST and gRPC share every check and
/// error message); responses the REST core renders are written back as protobuf. Unknown fields
/// are skipped; malformed input throws with the byte offset.
enum ProtoJSON {
    // MARK: Decoding

    /// The message `schema` names, read from `bytes` as proto3 JSON.
    static func decode(_ bytes: [UInt8], _ schema: String) throws(FirestoreError) -> JSONObject {
        var reader = ProtoReader(bytes)
        do {
            return try decode(&reader, schema)
        } catch {
            if Self.timestampLimits.contains(error.reason) { throw .invalidArgument(error.reason) }
            throw .invalidArgument("Invalid protobuf payload received: \(error).")
        }
    }

    /// What Google's frontend answers for a `google.protobuf.Timestamp` outside the range its proto
    /// defines (seconds in years 1–9999, nanos 0–999,999,999), as the official emulator does: the
    /// value has no RFC 3339 text, so the REST parser never sees it.
    static let timestampLimits = ["Timestamp seconds exceeds limit for field.", "Timestamp nanos exceeds limit for field."]

    static let valueSchema = FirestoreSchemas.v1 + "Value"

    /// What stands for a `Value` nested deeper than Firestore stores (`ValueJSON.maxDepth`): its bytes
    /// are not read. `ValueJSON.decode` refuses any value at that depth before looking at it
    /// ("Property m contains an invalid nested entity.", as Firestore answers however deep the
    /// nesting goes), so this is never stored. The decode recurses on the thread that received the
    /// request, an HTTP/2 loop's with a 256 KiB stack: a value 21 maps deep (63 nested readers, under
    /// `ProtoReader.maxDepth`) overflowed it in a debug build and ended the process; now a value of
    /// any depth costs no more stack than a valid one.
    static let tooDeepValue = JSONObject([("nullValue", JSON.null)])

    /// `valueDepth` counts the `Value`s around this message as `ValueJSON` counts them (a document
    /// field's value is at 0, a map's field one deeper). Other nesting stops at `ProtoReader.maxDepth`.
    static func decode(_ reader: inout ProtoReader, _ schemaName: String,
                       valueDepth: Int = 0) throws(ProtoDecodingError) -> JSONObject {
        let isValue = schemaName == valueSchema
        if isValue, valueDepth > ValueJSON.maxDepth { return tooDeepValue }
        // The messages inside a Value (MapValue, ArrayValue) hold Values one level deeper.
        let innerValueDepth = isValue ? valueDepth + 1 : valueDepth
        guard let schema = FirestoreSchemas.all[schemaName] else { return JSONObject() }
        var keys: [String: Int] = [:]
        var members: [(String, JSON)] = []
        var oneofOwner: [String: String] = [:]
        func set(_ name: String, _ value: JSON) {
            if let i = keys[name] { members[i].1 = value } else { keys[name] = members.count; members.append((name, value)) }
        }
        func remove(_ name: String) {
            guard let i = keys[name] else { return }
            members.remove(at: i)
            keys = [:]
            for (j, m) in members.enumerated() { keys[m.0] = j }
        }
        while let (number, wire) = try reader.nextField() {
            guard let field = schema.fields[number] else {
                try reader.skip(wire)
                continue
            }
            if let oneof = field.oneof {
                // Last member of a oneof on the wire wins.
                if let previous = oneofOwner[oneof], previous != field.json { remove(previous) }
                oneofOwner[oneof] = field.json
            }
            switch field.kind {
            case .stringMap, .valueMap:
                var entry = try reader.readMessage()
                var key = ""
                var value: JSON = field.kind.isStringMap ? .string("") : .object(JSONObject())
                while let (n, w) = try entry.nextField() {
                    if n == 1 && w == .lengthDelimited { key = try entry.readString() }
                    else if n == 2 && w == .lengthDelimited {
                        if field.kind.isStringMap { value = .string(try entry.readString()) }
                        else {
                            var v = try entry.readMessage()
                            value = .object(try decode(&v, valueSchema, valueDepth: innerValueDepth))
                        }
                    } else { try entry.skip(w) }
                }
                var map = members.first(where: { $0.0 == field.json })?.1.objectValue ?? JSONObject()
                map = JSONObject(map.members.filter { $0.0 != key } + [(key, value)])
                set(field.json, .object(map))
            default:
                if field.repeated, wire == .lengthDelimited, field.kind.isPackable {
                    // Packed repeated scalars.
                    var inner = try reader.readMessage()
                    while !inner.isAtEnd {
                        let v = try scalar(&inner, field.kind, wire: field.kind.wireType)
                        append(field.json, v, &members, &keys)
                    }
                    continue
                }
                let value: JSON
                if case .message(let name) = field.kind {
                    // Read here rather than in `scalar`, so each level of nesting costs one frame.
                    guard wire == .lengthDelimited else {
                        throw ProtoDecodingError("wrong wire type \(wire) for a \(field.kind) field", at: reader.offset)
                    }
                    var inner = try reader.readMessage()
                    value = .object(try decode(&inner, name, valueDepth: innerValueDepth))
                } else {
                    value = try scalar(&reader, field.kind, wire: wire)
                }
                if field.repeated { append(field.json, value, &members, &keys) } else { set(field.json, value) }
            }
        }
        return JSONObject(members)
    }

    private static func append(_ name: String, _ value: JSON, _ members: inout [(String, JSON)], _ keys: inout [String: Int]) {
        if let i = keys[name], case .array(var a) = members[i].1 {
            a.append(value)
            members[i].1 = .array(a)
        } else {
            keys[name] = members.count
            members.append((name, .array([value])))
        }
    }

    private static func scalar(_ r: inout ProtoReader, _ kind: ProtoSchema.Kind, wire: WireType) throws(ProtoDecodingError) -> JSON {
        let at = r.offset
        func expect(_ w: WireType) throws(ProtoDecodingError) {
            guard wire == w else { throw ProtoDecodingError("wrong wire type \(wire) for a \(kind) field", at: at) }
        }
        switch kind {
        case .string:
            try expect(.lengthDelimited)
            return .string(try r.readString())
        case .bytes:
            try expect(.lengthDelimited)
            return .string(Data(try r.readBytes()).base64EncodedString())
        case .bool:
            try expect(.varint)
            return .bool(try r.readVarint() != 0)
        case .int32:
            try expect(.varint)
            return .int(Int64(Int32(truncatingIfNeeded: try r.readVarint())))
        case .int64:
            try expect(.varint)
            return .string(String(Int64(bitPattern: try r.readVarint())))
        case .double:
            try expect(.fixed64)
            return double(Double(bitPattern: try r.readFixed64()))
        case .enumeration(let names):
            try expect(.varint)
            let n = Int64(Int32(truncatingIfNeeded: try r.readVarint()))
            return names[n].map(JSON.string) ?? .int(n)
        case .message:
            throw ProtoDecodingError("message field read as a scalar", at: at)  // `decode` reads them
        case .timestamp:
            try expect(.lengthDelimited)
            var inner = try r.readMessage()
            var seconds: Int64 = 0
            var nanos: Int64 = 0
            while let (n, w) = try inner.nextField() {
                if n == 1 && w == .varint { seconds = Int64(bitPattern: try inner.readVarint()) }
                else if n == 2 && w == .varint { nanos = Int64(Int32(truncatingIfNeeded: try inner.readVarint())) }
                else { try inner.skip(w) }
            }
            guard seconds >= -62_135_596_800, seconds <= 253_402_300_799 else { throw ProtoDecodingError(timestampLimits[0], at: at) }
            guard nanos >= 0, nanos < 1_000_000_000 else { throw ProtoDecodingError(timestampLimits[1], at: at) }
            return .string(timestampText(seconds: seconds, nanos: nanos))
        case .int32Value, .int64Value, .doubleValue:
            try expect(.lengthDelimited)
            var inner = try r.readMessage()
            var value: JSON = kind.isDoubleWrapper ? .double(0) : (kind.isInt64Wrapper ? .string("0") : .int(0))
            while let (n, w) = try inner.nextField() {
                if n == 1 && w == .varint && !kind.isDoubleWrapper {
                    let raw = try inner.readVarint()
                    value = kind.isInt64Wrapper ? .string(String(Int64(bitPattern: raw))) : .int(Int64(Int32(truncatingIfNeeded: raw)))
                } else if n == 1 && w == .fixed64 && kind.isDoubleWrapper {
                    value = double(Double(bitPattern: try inner.readFixed64()))
                } else { try inner.skip(w) }
            }
            return value
        case .nullValue:
            try expect(.varint)
            _ = try r.readVarint()
            return .null
        case .stringMap, .valueMap:
            throw ProtoDecodingError("map field read as a scalar", at: at)
        }
    }

    private static func double(_ d: Double) -> JSON {
        if d.isNaN { return .string("NaN") }
        if d.isInfinite { return .string(d > 0 ? "Infinity" : "-Infinity") }
        return .double(d)
    }

    /// RFC 3339 with as many fraction digits as the nanos need (Google's JSON form).
    static func timestampText(seconds: Int64, nanos: Int64) -> String {
        let base = Instant(unixSeconds: seconds).rfc3339(fractionDigits: 0)
        guard nanos > 0, nanos < 1_000_000_000 else { return base }
        var digits = String(nanos)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("000") { digits.removeLast(3) }
        return String(base.dropLast()) + "." + digits + "Z"
    }

    // MARK: Encoding

    /// The proto3 JSON object `json` as the message `schema` names.
    static func encode(_ json: JSONObject, _ schemaName: String) -> [UInt8] {
        var w = ProtoWriter(capacity: 256)
        encode(json, schemaName, into: &w)
        return w.bytes
    }

    static func encode(_ json: JSONObject, _ schemaName: String, into w: inout ProtoWriter) {
        let byName = FirestoreSchemas.fieldsByName(schemaName)
        for (name, value) in json {
            guard let field = byName[name] ?? byName[camel(name)] else { continue }
            switch field.kind {
            case .stringMap, .valueMap:
                guard case .object(let map) = value else { continue }
                for (k, v) in map {
                    w.message(field.number) { e in
                        e.string(1, k)
                        if field.kind.isStringMap { e.string(2, v.stringValue ?? "") }
                        else if case .object(let o) = v { e.message(2) { inner in encode(o, FirestoreSchemas.v1 + "Value", into: &inner) } }
                    }
                }
            default:
                if field.repeated, case .array(let items) = value {
                    for item in items { scalar(item, field, into: &w) }
                } else {
                    scalar(value, field, into: &w)
                }
            }
        }
    }

    private static func camel(_ snake: String) -> String {
        guard snake.contains("_") else { return snake }
        var out = ""
        var upper = false
        for c in snake {
            if c == "_" { upper = true; continue }
            out.append(upper ? Character(c.uppercased()) : c)
            upper = false
        }
        return out
    }

    private static func scalar(_ value: JSON, _ field: ProtoSchema.Field, into w: inout ProtoWriter) {
        let n = field.number
        switch field.kind {
        case .string:
            w.string(n, value.stringValue ?? "")
        case .bytes:
            w.bytes(n, value.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? [])
        case .bool:
            w.bool(n, value.boolValue ?? false)
        case .int32:
            w.int64(n, Int64(Int32(truncatingIfNeeded: ProtoObject.int64(value) ?? 0)))
        case .int64:
            w.int64(n, ProtoObject.int64(value) ?? 0)
        case .double:
            w.double(n, doubleOf(value))
        case .enumeration(let names):
            let number: Int64
            if case .string(let s) = value { number = names.first(where: { $0.value == s })?.key ?? 0 } else { number = ProtoObject.int64(value) ?? 0 }
            w.int64(n, number)
        case .message(let name):
            let o = value.objectValue ?? JSONObject()
            w.message(n) { inner in encode(o, name, into: &inner) }
        case .timestamp:
            guard let text = value.stringValue, let t = Instant(rfc3339: text) else { return }
            w.message(n) { inner in
                inner.int64IfNonZero(1, t.unixSeconds)
                inner.int64IfNonZero(2, Int64(t.nanos))
            }
        case .int32Value, .int64Value:
            w.message(n) { inner in inner.int64IfNonZero(1, ProtoObject.int64(value) ?? 0) }
        case .doubleValue:
            w.message(n) { inner in inner.double(1, doubleOf(value)) }
        case .nullValue:
            w.int64(n, 0)
        case .stringMap, .valueMap:
            break
        }
    }

    private static func doubleOf(_ value: JSON) -> Double {
        switch value {
        case .double(let d): return d
        case .int(let i): return Double(i)
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        case .string(let s): return Double(s) ?? 0
        default: return 0
        }
    }
}

extension ProtoSchema.Kind {
    var isStringMap: Bool { if case .stringMap = self { return true }; return false }
    var isDoubleWrapper: Bool { if case .doubleValue = self { return true }; return false }
    var isInt64Wrapper: Bool { if case .int64Value = self { return true }; return false }
    /// Scalars that may arrive packed.
    var isPackable: Bool {
        switch self {
        case .bool, .int32, .int64, .double, .enumeration: return true
        default: return false
        }
    }
    var wireType: WireType {
        switch self {
        case .double: return .fixed64
        default: return .varint
        }
    }
}
