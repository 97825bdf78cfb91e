import Foundation
import HearthCore
import HearthProtobuf

/// Reads the writes of a gRPC `CommitRequest` or `WriteRequest` from protobuf straight into
/// `Write`s, for the plain forms clients send.
///
/// The general path turns the message into proto3 JSON (`ProtoJSON`), wraps it in `ProtoObject`s
/// and hands it to `WriteParser`, the REST parser, so both transports share every check and
/// message; for a one-document create that round trip cost about a quarter of the whole call.
/// This decoder accepts only input the general path accepts and builds the same `Write` from it
/// (`WriteProtoDecoderTests` compares the two): anything unusual or invalid — an unknown value
/// kind, a field given twice, a transform write, a bad name, a value over a limit — makes it
/// answer nil, and the caller takes the general path, which reports the error with its message.
struct WriteProtoDecoder {
    /// The database of the request (a write naming another one is kept as `Write.database`).
    let database: DatabaseID

    typealias Fallback = PlainWrite.Fallback

    /// The top-level fields of a `CommitRequest` (the writes still undecoded).
    struct CommitRequest {
        var database = ""
        var writes: [ProtoReader] = []
        /// The transaction id as the REST body carries it (base64); nil when none.
        var transaction: String?
    }

    /// The fields of a `WriteRequest` (the writes still undecoded).
    struct WriteRequest {
        var database = ""
        var streamID = ""
        var streamToken: [UInt8] = []
        var writes: [ProtoReader] = []
    }

    /// `CommitRequest` {database = 1, writes = 2, transaction = 3}; nil: use the general path.
    static func commitRequest(_ bytes: [UInt8]) -> CommitRequest? {
        var r = ProtoReader(bytes)
        var out = CommitRequest()
        var seen = Set<Int>()
        do {
            while let (number, wire) = try r.nextField() {
                switch number {
                case 1, 3:
                    guard wire == .lengthDelimited, seen.insert(number).inserted else { return nil }
                    if number == 1 {
                        out.database = try r.readString()
                    } else {
                        // An empty id is an error of the general path's.
                        let id = try r.readBytes()
                        guard !id.isEmpty else { return nil }
                        out.transaction = Data(id).base64EncodedString()
                    }
                case 2:
                    guard wire == .lengthDelimited else { return nil }
                    out.writes.append(try r.readMessage())
                default:
                    try r.skip(wire)
                }
            }
        } catch {
            return nil
        }
        return out
    }

    /// `WriteRequest` {database = 1, stream_id = 2, writes = 3, stream_token = 4, labels = 5};
    /// nil: use the general path.
    static func writeRequest(_ bytes: [UInt8]) -> WriteRequest? {
        var r = ProtoReader(bytes)
        var out = WriteRequest()
        var seen = Set<Int>()
        do {
            while let (number, wire) = try r.nextField() {
                switch number {
                case 1, 2, 4:
                    guard wire == .lengthDelimited, seen.insert(number).inserted else { return nil }
                    switch number {
                    case 1: out.database = try r.readString()
                    case 2: out.streamID = try r.readString()
                    default: out.streamToken = try r.readBytes()
                    }
                case 3:
                    guard wire == .lengthDelimited else { return nil }
                    out.writes.append(try r.readMessage())
                default:
                    try r.skip(wire)  // labels, unknown fields: the general path ignores them too
                }
            }
        } catch {
            return nil
        }
        return out
    }

    /// Every write of `messages`; nil when any needs the general path.
    func writes(_ messages: [ProtoReader]) -> [Write]? {
        try? messages.map { m throws(Fallback) in try write(m) }
    }

    // MARK: Messages

    /// `Write` {update = 1, delete = 2, update_mask = 3, current_document = 4, transform = 6,
    /// update_transforms = 7}: an update or a delete (a `transform` write takes the general path).
    func write(_ message: ProtoReader) throws(Fallback) -> Write {
        var r = message
        var update: ProtoReader?
        var delete: String?
        var mask: [String]?
        var precondition: Precondition?
        var sawPrecondition = false
        var transforms: [FieldTransform] = []
        try Self.fields(&r) { (number, wire, r) throws(Fallback) in
            guard wire == .lengthDelimited else { throw Fallback() }
            switch number {
            case 1:
                guard update == nil, delete == nil else { throw Fallback() }
                update = try Self.nested(&r)
            case 2:
                guard update == nil, delete == nil else { throw Fallback() }
                delete = try Self.string(&r)
            case 3:
                guard mask == nil else { throw Fallback() }
                mask = try documentMask(Self.nested(&r))
            case 4:
                guard !sawPrecondition else { throw Fallback() }
                sawPrecondition = true
                precondition = try self.precondition(Self.nested(&r))
            case 7:
                transforms.append(try transform(Self.nested(&r)))
            default:
                throw Fallback()
            }
        }
        return try PlainWrite.make(database: database, update: update.map(document), delete: delete, mask: mask,
                                   transforms: transforms, precondition: precondition)
    }

    /// `Document` {name = 1, fields = 2}: its name and fields (checked by `PlainWrite.make`).
    private func document(_ message: ProtoReader) throws(Fallback) -> (name: String, fields: [ExactString: FirestoreValue]) {
        var r = message
        var name: String?
        var fields: [ExactString: FirestoreValue] = [:]
        // The count is not known before the entries are read: room for a typical document's fields
        // (and a server timestamp added to them), where growing from empty rehashed them three times.
        fields.reserveCapacity(8)
        try Self.fields(&r) { (number, wire, r) throws(Fallback) in
            guard wire == .lengthDelimited else { throw Fallback() }
            switch number {
            case 1:
                guard name == nil else { throw Fallback() }
                name = try Self.string(&r)
            case 2:
                try Self.mapEntry(&r, into: &fields, depth: 0, prefix: 0)
            default:
                throw Fallback()  // create/update times: rare, left to the general path
            }
        }
        guard let name, !name.isEmpty else { throw Fallback() }
        return (name, fields)
    }

    /// `DocumentMask` {field_paths = 1}: the paths as text (parsed by `PlainWrite.make`).
    private func documentMask(_ message: ProtoReader) throws(Fallback) -> [String] {
        var r = message
        var texts: [String] = []
        try Self.fields(&r) { (number, wire, r) throws(Fallback) in
            guard number == 1, wire == .lengthDelimited else { throw Fallback() }
            texts.append(try Self.string(&r))
        }
        return texts
    }

    /// `Precondition` {exists = 1, update_time = 2}; nil when it sets neither.
    private func precondition(_ message: ProtoReader) throws(Fallback) -> Precondition? {
        var r = message
        var out = Precondition()
        var set = 0
        try Self.fields(&r) { (number, wire, r) throws(Fallback) in
            set += 1
            switch (number, wire) {
            case (1, .varint): out.exists = try Self.varint(&r) != 0
            case (2, .lengthDelimited): out.updateTime = try Self.timestamp(Self.nested(&r))
            default: throw Fallback()
            }
        }
        // Both members of the oneof: the general path keeps the last.
        guard set <= 1 else { throw Fallback() }
        return set == 0 ? nil : out
    }

    /// `DocumentTransform.FieldTransform` {field_path = 1, set_to_server_value = 2, increment = 3,
    /// maximum = 4, minimum = 5, append_missing_elements = 6, remove_all_from_array = 7}.
    private func transform(_ message: ProtoReader) throws(Fallback) -> FieldTransform {
        var r = message
        var pathText: String?
        var kind: FieldTransform.Kind?
        try Self.fields(&r) { (number, wire, r) throws(Fallback) in
            if number == 1 {
                guard wire == .lengthDelimited, pathText == nil else { throw Fallback() }
                pathText = try Self.string(&r)
                return
            }
            guard kind == nil else { throw Fallback() }
            switch (number, wire) {
            case (2, .varint):
                // REQUEST_TIME is the only server value.
                guard try Self.varint(&r) == 1 else { throw Fallback() }
                kind = .serverTime
            case (3, .lengthDelimited), (4, .lengthDelimited), (5, .lengthDelimited):
                let v = try Self.value(Self.nested(&r), depth: 0, inArray: false)
                guard v.isNumber else { throw Fallback() }
                kind = number == 3 ? .increment(v) : (number == 4 ? .maximum(v) : .minimum(v))
            case (6, .lengthDelimited), (7, .lengthDelimited):
                let elements = try Self.arrayValues(Self.nested(&r), depth: 1)
                kind = number == 6 ? .appendMissingElements(elements) : .removeAllFromArray(elements)
            default:
                throw Fallback()
            }
        }
        guard let pathText, let kind else { throw Fallback() }
        return try PlainWrite.transform(pathText, kind)
    }

    // MARK: Values

    /// One entry of a `map<string, Value>` {key = 1, value = 2}, added to `fields` (a repeated key:
    /// the last wins, as in the general path).
    /// `prefix`: the bytes of the enclosing field path and its dot (`PlainWrite.checkKey`).
    private static func mapEntry(_ r: inout ProtoReader, into fields: inout [ExactString: FirestoreValue], depth: Int,
                                 prefix: Int) throws(Fallback) {
        var entry = try nested(&r)
        var key: String?
        var value: ProtoReader?
        try Self.fields(&entry) { (number, wire, e) throws(Fallback) in
            guard wire == .lengthDelimited else { throw Fallback() }
            switch number {
            case 1:
                guard key == nil else { throw Fallback() }
                key = try string(&e)
            case 2:
                guard value == nil else { throw Fallback() }
                value = try nested(&e)  // decoded once its key (its path's length) is known
            default:
                throw Fallback()
            }
        }
        guard let key, let value else { throw Fallback() }
        let path = try PlainWrite.checkKey(key, prefix: prefix)
        fields[ExactString(key)] = try Self.value(value, depth: depth, inArray: false, path: path)
    }

    /// `Value`, one member of its oneof set; references and pipeline-only kinds take the general path.
    /// `path`: the bytes of the field path holding it (0: a transform's operand).
    private static func value(_ message: ProtoReader, depth: Int, inArray: Bool, path: Int = 0) throws(Fallback) -> FirestoreValue {
        guard depth <= ValueJSON.maxDepth else { throw Fallback() }
        var r = message
        var out: FirestoreValue?
        try fields(&r) { (number, wire, r) throws(Fallback) in
            guard out == nil else { throw Fallback() }
            switch (number, wire) {
            case (11, .varint):
                _ = try varint(&r)
                out = .null
            case (1, .varint): out = .boolean(try varint(&r) != 0)
            case (2, .varint): out = .integer(Int64(bitPattern: try varint(&r)))
            case (3, .fixed64): out = .double(Double(bitPattern: try fixed64(&r)))
            case (10, .lengthDelimited): out = .timestamp(try timestamp(nested(&r)))
            case (17, .lengthDelimited): out = try PlainWrite.string(string(&r))
            case (18, .lengthDelimited): out = try PlainWrite.bytes(bytes(&r))
            case (8, .lengthDelimited): out = try geoPoint(nested(&r))
            case (9, .lengthDelimited):
                guard !inArray else { throw Fallback() }
                out = .array(try arrayValues(nested(&r), depth: depth + 1, path: path))
            case (6, .lengthDelimited):
                var m = try nested(&r)
                var map: [ExactString: FirestoreValue] = [:]
                try fields(&m) { (number, wire, m) throws(Fallback) in
                    guard number == 1, wire == .lengthDelimited else { throw Fallback() }
                    try mapEntry(&m, into: &map, depth: depth + 1, prefix: path == 0 ? 0 : path + 1)
                }
                out = try PlainWrite.mapOrVector(map, inArray: inArray)
            default:
                throw Fallback()
            }
        }
        guard let out else { throw Fallback() }
        return out
    }

    /// The values of an `ArrayValue` {values = 1}, each at `depth` inside an array.
    private static func arrayValues(_ message: ProtoReader, depth: Int, path: Int = 0) throws(Fallback) -> [FirestoreValue] {
        var r = message
        var out: [FirestoreValue] = []
        try fields(&r) { (number, wire, r) throws(Fallback) in
            guard number == 1, wire == .lengthDelimited else { throw Fallback() }
            out.append(try value(nested(&r), depth: depth, inArray: true, path: path))
        }
        return out
    }

    /// `google.type.LatLng` {latitude = 1, longitude = 2} within Firestore's ranges.
    private static func geoPoint(_ message: ProtoReader) throws(Fallback) -> FirestoreValue {
        var r = message
        var lat = 0.0, lng = 0.0
        try fields(&r) { (number, wire, r) throws(Fallback) in
            guard wire == .fixed64, number == 1 || number == 2 else { throw Fallback() }
            let d = Double(bitPattern: try fixed64(&r))
            if number == 1 { lat = d } else { lng = d }
        }
        return try PlainWrite.geoPoint(lat, lng)
    }

    /// `google.protobuf.Timestamp` {seconds = 1, nanos = 2} in Firestore's range (years 1–9999),
    /// truncated to microseconds as the general path's text round trip truncates it.
    private static func timestamp(_ message: ProtoReader) throws(Fallback) -> Instant {
        var r = message
        var seconds: Int64 = 0
        var nanos: Int64 = 0
        do {
            while let (n, w) = try r.nextField() {
                if n == 1 && w == .varint { seconds = Int64(bitPattern: try r.readVarint()) }
                else if n == 2 && w == .varint { nanos = Int64(Int32(truncatingIfNeeded: try r.readVarint())) }
                else { try r.skip(w) }
            }
        } catch {
            throw Fallback()
        }
        // Out of range: the general path refuses it in Google's words (ProtoJSON.timestampLimits).
        guard seconds >= -62_135_596_800, seconds <= 253_402_300_799, nanos >= 0, nanos < 1_000_000_000 else { throw Fallback() }
        return Instant(unixMicros: seconds * 1_000_000 + nanos / 1000)
    }

    // MARK: Reading

    /// Calls `body` with each field of `r` (number, wire type, the reader positioned at its value).
    private static func fields(_ r: inout ProtoReader,
                               _ body: (Int, WireType, inout ProtoReader) throws(Fallback) -> Void) throws(Fallback) {
        while true {
            let next: (number: Int, wireType: WireType)?
            do { next = try r.nextField() } catch { throw Fallback() }
            guard let (number, wire) = next else { return }
            try body(number, wire, &r)
        }
    }

    private static func nested(_ r: inout ProtoReader) throws(Fallback) -> ProtoReader {
        do { return try r.readMessage() } catch { throw Fallback() }
    }

    private static func string(_ r: inout ProtoReader) throws(Fallback) -> String {
        do { return try r.readString() } catch { throw Fallback() }
    }

    private static func bytes(_ r: inout ProtoReader) throws(Fallback) -> [UInt8] {
        do { return try r.readBytes() } catch { throw Fallback() }
    }

    private static func varint(_ r: inout ProtoReader) throws(Fallback) -> UInt64 {
        do { return try r.readVarint() } catch { throw Fallback() }
    }

    private static func fixed64(_ r: inout ProtoReader) throws(Fallback) -> UInt64 {
        do { return try r.readFixed64() } catch { throw Fallback() }
    }
}

extension WriteProtoDecoder {
    /// The general path this decoder stands for, on a whole CommitRequest: proto3 JSON, then
    /// `WriteParser` (what the gRPC Commit ran before this decoder). The reference
    /// `WriteProtoDecoderTests` and the `writes` fuzz target compare with.
    func general(_ bytes: [UInt8]) -> Result<[Write], FirestoreError> {
        do throws(FirestoreError) {
            let o = try ProtoJSON.decode(bytes, FirestoreSchemas.v1 + "CommitRequest")
            let body = ProtoObject(JSONObject(o.members.filter { $0.0 != "database" }), path: "")
            return .success(try WriteJSONDecoder.writes(of: body, database: database, transaction: false).writes)
        } catch {
            return .failure(error)
        }
    }
}
