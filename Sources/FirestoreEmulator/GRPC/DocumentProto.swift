import Foundation
import HearthCore
import HearthProtobuf

/// Writes Firestore's model types straight as google.firestore.v1 protobuf.
///
/// The general gRPC path renders the REST answer as JSON and re-reads it into protobuf; for the
/// hot answers (a document, a commit's results) that round trip cost more than the read itself.
/// The bytes are those `ProtoJSON.encode` makes from the REST JSON of the same value, field for
/// field (`DocumentProtoTests` compares the two).
enum DocumentProto {
    /// A `google.firestore.v1.Document`: name, fields (keys in byte order), create and update time.
    static func document(_ doc: StoredDocument, in database: DatabaseID, mask: [FieldPath]? = nil, into w: inout ProtoWriter) {
        w.string(1, database.name(of: doc.path))
        fields(2, mask.map { DocumentFields.project(doc.fields, onto: $0) } ?? doc.fields, into: &w)
        timestamp(3, doc.createTime, into: &w)
        timestamp(4, doc.updateTime, into: &w)
    }

    static func document(_ doc: StoredDocument, in database: DatabaseID) -> [UInt8] {
        var w = ProtoWriter(capacity: 256)
        document(doc, in: database, into: &w)
        return w.bytes
    }

    /// A `map<string, Value>` field: one entry message per key, in the order the REST JSON lists them.
    static func fields(_ number: Int, _ members: [ExactString: FirestoreValue], into w: inout ProtoWriter) {
        for key in OrderedEncoding.sortedKeys(members) {
            // Force-unwrap safe: the key comes from the same dictionary.
            let v = members[key]!
            w.message(number) { e in
                e.string(1, key.string)
                e.message(2) { inner in value(v, into: &inner) }
            }
        }
    }

    /// The fields of one `Value` (its one set `value_type`, always written, as a oneof member is).
    static func value(_ v: FirestoreValue, into w: inout ProtoWriter) {
        switch v {
        case .null: w.int64(11, 0)
        case .boolean(let b): w.bool(1, b)
        case .integer(let i): w.int64(2, i)
        // Any NaN is written as the one the JSON form ("NaN") reads back as.
        case .double(let d): w.double(3, d.isNaN ? .nan : d)
        case .timestamp(let t): timestamp(10, t, into: &w)
        case .string(let s): w.string(17, s)
        case .bytes(let b): w.bytes(18, b)
        case .reference(let r): w.string(5, r)
        case .geoPoint(let latitude, let longitude):
            // proto3 leaves zero coordinates out, as the JSON form does.
            w.message(8) { g in
                if latitude != 0 { g.double(1, latitude) }
                if longitude != 0 { g.double(2, longitude) }
            }
        case .array(let elements):
            w.message(9) { a in
                for e in elements { a.message(1) { inner in value(e, into: &inner) } }
            }
        case .vector(let elements):
            w.message(6) { m in fields(1, VectorValue.members(elements), into: &m) }
        case .map(let members):
            w.message(6) { m in fields(1, members, into: &m) }
        }
    }

    /// A `google.protobuf.Timestamp` field (zero seconds and nanos left out).
    static func timestamp(_ number: Int, _ t: Instant, into w: inout ProtoWriter) {
        w.message(number) { inner in
            inner.int64IfNonZero(1, t.unixSeconds)
            inner.int64IfNonZero(2, Int64(t.nanos))
        }
    }

    /// A response holding only a new transaction's id (`transaction`, a bytes field, is its base64 text,
    /// as in the REST JSON).
    static func transactionOnly(_ transaction: String, field: Int, into w: inout ProtoWriter) {
        w.bytes(field, Data(base64Encoded: transaction).map { [UInt8]($0) } ?? [])
    }

    /// A `CommitResponse`: one `WriteResult` per write (update time, transform results), the commit
    /// time — none for a commit of no writes, as Firestore answers (see the REST twin).
    static func commitResponse(commitTime: Instant, results: [FirestoreService.WriteOutcome]) -> [UInt8] {
        var w = ProtoWriter(capacity: 64 + 32 * results.count)
        for r in results {
            w.message(1) { e in writeResult(r, into: &e) }
        }
        if !results.isEmpty { timestamp(2, commitTime, into: &w) }
        return w.bytes
    }

    /// A `WriteResult`.
    static func writeResult(_ r: FirestoreService.WriteOutcome, into w: inout ProtoWriter) {
        if let t = r.updateTime { timestamp(1, t, into: &w) }
        for v in r.transformResults {
            w.message(2) { inner in value(v, into: &inner) }
        }
    }
}
