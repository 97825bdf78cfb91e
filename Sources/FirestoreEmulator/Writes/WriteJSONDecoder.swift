import HearthCore

/// Reads a REST commit (or batchWrite) body straight from its JSON text into `Write`s, for the
/// plain forms clients send (the camelCase members, the canonical value forms).
///
/// The general path parses the body into a `JSON` tree, wraps every object in a `ProtoObject`,
/// checks each against its set of known members and builds a location string for each field and
/// value before it is needed (only an error message uses it). This decoder reads the text once
/// (`PlainJSONReader`) and builds the `Write`s as it goes: for the bench's one-document create
/// the tree alone — parsing it and freeing it — was ~6% of the whole request. It accepts only
/// bodies the general path accepts and builds the same `Write`s from them
/// (`WriteJSONDecoderTests` compares the two, on mutated bodies too); anything else — invalid,
/// unusual or merely rare — falls back (`PlainWrite`), and the caller runs the general path on
/// the same bytes, which reports errors with Firestore's messages.
struct WriteJSONDecoder {
    /// The database of the request (a write naming another one is kept as `Write.database`).
    let database: DatabaseID

    typealias Fallback = PlainWrite.Fallback

    /// What a plain body holds.
    struct Body: Equatable {
        var writes: [Write]
        /// The `transaction` member as sent (base64; not yet checked).
        var transaction: String?
    }

    /// A body whose members are `writes` and, where `transaction` is allowed (a commit), a
    /// `transaction` string — every other member (`requestOptions`, `labels`) falls back; nil:
    /// parse the body with the general path.
    func body(_ bytes: [UInt8], transaction allowed: Bool) -> Body? {
        bytes.withUnsafeBufferPointer { buffer in
            var r = PlainJSONReader(buffer)
            return try? body(&r, transactionAllowed: allowed)
        }
    }

    private func body(_ r: inout PlainJSONReader, transactionAllowed: Bool) throws(Fallback) -> Body {
        let (writes, transaction) = try r.listAndTransaction("writes", transactionAllowed: transactionAllowed) { r throws(Fallback) in
            try write(&r)
        }
        return Body(writes: writes, transaction: transaction)
    }

    /// One `Write`: an update or a delete (a `transform` write, snake_case names and nulls take
    /// the general path).
    private func write(_ r: inout PlainJSONReader) throws(Fallback) -> Write {
        var update: (name: String, fields: [ExactString: FirestoreValue])?
        var delete: String?
        var mask: [String]?
        var precondition: Precondition?
        var transforms: [FieldTransform]?
        guard try r.openObject() else { throw Fallback() }
        repeat {
            let name = try r.name()
            if r.isName(name, "update") {
                guard update == nil, delete == nil else { throw Fallback() }
                update = try document(&r)
            } else if r.isName(name, "delete") {
                guard update == nil, delete == nil else { throw Fallback() }
                delete = try r.string()
            } else if r.isName(name, "updateMask") {
                guard mask == nil else { throw Fallback() }
                mask = try fieldPaths(&r)
            } else if r.isName(name, "currentDocument") {
                guard precondition == nil else { throw Fallback() }
                precondition = try self.precondition(&r)
            } else if r.isName(name, "updateTransforms") {
                guard transforms == nil else { throw Fallback() }
                var out: [FieldTransform] = []
                if try r.openArray() {
                    repeat { out.append(try transform(&r)) } while try r.next(0x5D)
                }
                transforms = out
            } else {
                throw Fallback()
            }
        } while try r.next(0x7D)
        return try PlainWrite.make(database: database, update: update, delete: delete, mask: mask,
                                   transforms: transforms ?? [], precondition: precondition)
    }

    /// A `Document` with a name and (optionally) fields.
    private func document(_ r: inout PlainJSONReader) throws(Fallback) -> (name: String, fields: [ExactString: FirestoreValue]) {
        var name: String?
        var fields: [ExactString: FirestoreValue]?
        guard try r.openObject() else { throw Fallback() }
        repeat {
            let member = try r.name()
            if r.isName(member, "name") {
                guard name == nil else { throw Fallback() }
                let s = try r.string()
                guard !s.isEmpty else { throw Fallback() }
                name = s
            } else if r.isName(member, "fields") {
                guard fields == nil else { throw Fallback() }
                fields = try Self.fields(&r, depth: 0, prefix: 0)
            } else {
                throw Fallback()
            }
        } while try r.next(0x7D)
        guard let name else { throw Fallback() }
        return (name, fields ?? [:])
    }

    /// `{"fieldPaths": [text, …]}`.
    private func fieldPaths(_ r: inout PlainJSONReader) throws(Fallback) -> [String] {
        guard try r.openObject() else { throw Fallback() }
        let name = try r.name()
        guard r.isName(name, "fieldPaths") else { throw Fallback() }
        var paths: [String] = []
        if try r.openArray() {
            repeat { paths.append(try r.string()) } while try r.next(0x5D)
        }
        guard !(try r.next(0x7D)) else { throw Fallback() }
        return paths
    }

    /// `{"exists": bool}` or `{"updateTime": timestamp}`.
    private func precondition(_ r: inout PlainJSONReader) throws(Fallback) -> Precondition {
        guard try r.openObject() else { throw Fallback() }
        let name = try r.name()
        let out: Precondition
        if r.isName(name, "exists"), case .bool(let b) = try r.scalar() {
            out = Precondition(exists: b)
        } else if r.isName(name, "updateTime") {
            guard let t = ValueJSON.parseTimestamp(try r.string()) else { throw Fallback() }
            out = Precondition(updateTime: t)
        } else {
            throw Fallback()
        }
        guard !(try r.next(0x7D)) else { throw Fallback() }
        return out
    }

    /// `{"fieldPath": …, <one transform>}`, in either order.
    private func transform(_ r: inout PlainJSONReader) throws(Fallback) -> FieldTransform {
        var path: String?
        var kind: FieldTransform.Kind?
        guard try r.openObject() else { throw Fallback() }
        repeat {
            let name = try r.name()
            if r.isName(name, "fieldPath") {
                guard path == nil else { throw Fallback() }
                path = try r.string()
            } else {
                guard kind == nil else { throw Fallback() }
                kind = try transformKind(name, &r)
            }
        } while try r.next(0x7D)
        guard let path, let kind else { throw Fallback() }
        return try PlainWrite.transform(path, kind)
    }

    private func transformKind(_ name: PlainJSONReader.Name, _ r: inout PlainJSONReader) throws(Fallback) -> FieldTransform.Kind {
        if r.isName(name, "setToServerValue") {
            guard try r.scalar() == .string("REQUEST_TIME") else { throw Fallback() }
            return .serverTime
        }
        if r.isName(name, "increment") { return .increment(try Self.number(&r)) }
        if r.isName(name, "maximum") { return .maximum(try Self.number(&r)) }
        if r.isName(name, "minimum") { return .minimum(try Self.number(&r)) }
        if r.isName(name, "appendMissingElements") { return .appendMissingElements(try Self.arrayValues(&r, depth: 1)) }
        if r.isName(name, "removeAllFromArray") { return .removeAllFromArray(try Self.arrayValues(&r, depth: 1)) }
        throw Fallback()
    }

    private static func number(_ r: inout PlainJSONReader) throws(Fallback) -> FirestoreValue {
        let v = try value(&r, depth: 0, inArray: false)
        guard v.isNumber else { throw Fallback() }
        return v
    }

    // MARK: Values

    /// A `fields` map under a field path of `prefix` bytes (`PlainWrite.checkKey`).
    private static func fields(_ r: inout PlainJSONReader, depth: Int, prefix: Int) throws(Fallback) -> [ExactString: FirestoreValue] {
        guard try r.openObject() else { return [:] }
        // Room for a small document (the usual one) before its first rehash, allocated once (an
        // empty dictionary's `reserveCapacity` made the storage through a resize).
        var out = [ExactString: FirestoreValue](minimumCapacity: 8)
        repeat {
            let name = try r.name()
            let key = try r.text(name)
            let path = try PlainWrite.checkKey(key, prefix: prefix)
            // A repeated name: the last wins, as in the general path.
            out[ExactString(key)] = try value(&r, depth: depth, inArray: false, path: path)
        } while try r.next(0x7D)
        return out
    }

    /// A `Value` with exactly one member in its canonical form; references, geo points and the
    /// lenient spellings Google's parser also takes (numbers as strings and so on) fall back.
    /// `path`: the bytes of the field path holding it (0: a transform's operand).
    private static func value(_ r: inout PlainJSONReader, depth: Int, inArray: Bool, path: Int = 0) throws(Fallback) -> FirestoreValue {
        guard depth <= ValueJSON.maxDepth, try r.openObject() else { throw Fallback() }
        let kind = try r.name()
        let out: FirestoreValue
        if r.isName(kind, "stringValue") {
            out = try PlainWrite.string(try r.string())
        } else if r.isName(kind, "integerValue") {
            let raw = try r.scalar()
            switch raw {
            case .string, .int:
                guard let i = ProtoObject.int64(raw) else { throw Fallback() }
                out = .integer(i)
            default: throw Fallback()
            }
        } else if r.isName(kind, "doubleValue") {
            switch try r.scalar() {
            // Past a double's range: the general path words the refusal.
            case .double(let d) where d.isFinite: out = .double(d)
            case .int(let i): out = .double(Double(i))
            default: throw Fallback()
            }
        } else if r.isName(kind, "booleanValue") {
            guard case .bool(let b) = try r.scalar() else { throw Fallback() }
            out = .boolean(b)
        } else if r.isName(kind, "nullValue") {
            switch try r.scalar() {
            case .null, .string("NULL_VALUE"): out = .null
            default: throw Fallback()
            }
        } else if r.isName(kind, "timestampValue") {
            guard let t = ValueJSON.parseTimestamp(try r.string()) else { throw Fallback() }
            out = .timestamp(t)
        } else if r.isName(kind, "bytesValue") {
            guard let b = ValueJSON.decodeBase64(try r.string()) else { throw Fallback() }
            out = try PlainWrite.bytes(b)
        } else if r.isName(kind, "mapValue") {
            if try r.openObject() {
                let member = try r.name()
                guard r.isName(member, "fields") else { throw Fallback() }
                out = try PlainWrite.mapOrVector(try fields(&r, depth: depth + 1, prefix: path == 0 ? 0 : path + 1), inArray: inArray)
                guard !(try r.next(0x7D)) else { throw Fallback() }
            } else {
                out = .map([:])
            }
        } else if r.isName(kind, "arrayValue") {
            guard !inArray else { throw Fallback() }
            out = .array(try arrayValues(&r, depth: depth + 1, path: path))
        } else {
            throw Fallback()
        }
        guard !(try r.next(0x7D)) else { throw Fallback() }
        return out
    }

    /// The values of an `ArrayValue` (`{"values": […]}` or `{}`), each at `depth` inside an array.
    private static func arrayValues(_ r: inout PlainJSONReader, depth: Int, path: Int = 0) throws(Fallback) -> [FirestoreValue] {
        var out: [FirestoreValue] = []
        guard try r.openObject() else { return out }
        let member = try r.name()
        guard r.isName(member, "values") else { throw Fallback() }
        if try r.openArray() {
            repeat { out.append(try value(&r, depth: depth, inArray: true, path: path)) } while try r.next(0x5D)
        }
        guard !(try r.next(0x7D)) else { throw Fallback() }
        return out
    }
}

extension WriteJSONDecoder {
    /// The general path this decoder stands for, on a whole body: the JSON tree, its known members,
    /// then `WriteParser` (what `FirestoreHTTPService.parseWrites` runs on a body `body(_:transaction:)`
    /// leaves). The reference `WriteJSONDecoderTests` and the `writes` fuzz target compare with.
    func general(_ bytes: [UInt8], transaction: Bool) -> Result<Body, FirestoreError> {
        do throws(FirestoreError) {
            var json = JSON.object([:])  // an empty (or blank) body is an empty message (`RequestContext.body`)
            if !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
                do { json = try JSON.parse(bytes) } catch { throw .badJSON(error) }
            }
            let body = try ProtoObject(json: json, path: "")
            try body.requireKnown(transaction ? ["writes", "transaction", "requestOptions"] : ["writes", "labels", "requestOptions"])
            return .success(try Self.writes(of: body, database: database, transaction: transaction))
        } catch {
            return .failure(error)
        }
    }

    /// A parsed commit or write body's writes (each through `WriteParser`) and its transaction:
    /// the general path's last step, shared by `FirestoreHTTPService.parseWrites` and `general`.
    static func writes(of body: ProtoObject, database: DatabaseID, transaction: Bool) throws(FirestoreError) -> Body {
        let parser = WriteParser(database: database)
        var out: [Write] = []
        for (i, item) in (try body.array("writes") ?? []).enumerated() {
            out.append(try parser.parseWrite(try ProtoObject(json: item, path: "writes[\(i)]")))
        }
        return Body(writes: out, transaction: transaction ? try body.string("transaction") : nil)
    }
}
