import Foundation
import HearthCore
import HearthGRPC
import HearthProtobuf

/// Writes `ListenResponse`s straight as protobuf, and encodes each document version once however
/// many streams send it (one per service: `FirestoreService.listenResponses`).
///
/// A commit seen by a thousand listeners of one query is one `Document` sent a thousand times,
/// each with its own target ids: the document's bytes are made once and copied into each
/// response. A document version (name, create and update time) never changes its contents (every
/// commit has its own, later time), so the bytes of one version are the bytes of any copy of it.
/// The responses are those `ProtoJSON` makes from the JSON form (`ListenResponseEncoderTests`
/// compares the two).
final class ListenResponseEncoder: @unchecked Sendable {
    private struct Key: Hashable {
        var database: DatabaseID
        var path: ResourcePath
        var createTime: Instant
        var updateTime: Instant
    }

    // Under `lock`.
    private let lock = NSLock()
    /// Encoded versions of the newest update time seen: the documents of the latest commit, which
    /// its fan-out asks for once per listener (interleaved when the commit wrote several, so `last`
    /// alone would miss). A newer commit replaces them, and an older version (a first result, read
    /// as a client takes it) is not kept: the cache once kept every version until it reached its
    /// bound, which the 30-minute soak saw as ~0.07 MiB/min of heap growth for ~an hour.
    private var documents: [Key: [UInt8]] = [:]
    private var newest = Instant(unixMicros: 0)
    private var cachedBytes = 0
    /// What the cache may hold: a commit of up to ~500 typical documents. A larger commit's later
    /// documents are encoded once per stream (its first ones stay shared).
    static let cacheLimit = 1 << 20

    /// The global NO_CHANGE last encoded (every stream a commit reaches ends its snapshot with it).
    private var lastSnapshotEnd: (readTime: Instant, token: [UInt8], bytes: [UInt8])?

    /// One event as a `ListenResponse` appended to `batch` (`.end` appends nothing). A document
    /// change, what a commit sends every listener, is written straight into the batch.
    func encode(_ event: ListenEvent, _ db: DatabaseID, into batch: inout GRPCMessageBatch) {
        switch event {
        case .end:
            return
        case .documentChange(let doc, let targetIDs):
            let field = documentField(doc, db)
            batch.append { out in Self.documentChange(field, targetIDs, into: &out) }
        default:
            batch.append(encode(event, db))
        }
    }

    /// A shared snapshot's responses for a stream whose target is `targetIDs` (what `encode` makes
    /// of `snapshot.events(targetIDs)`), from the snapshot's documents and NO_CHANGE encoded once
    /// for all its streams: per listener only the target ids are written.
    ///
    /// Into an empty batch, a snapshot of changed documents (a commit's usual fan-out) is laid out
    /// whole at its exact size in one array: per listener one allocation and a copy of each shared
    /// piece, where appending message by message grew and patched the batch.
    func encode(_ snapshot: ListenBatch.Shared, targetIDs: [Int32], _ db: DatabaseID, into batch: inout GRPCMessageBatch) {
        let encoded = snapshot.cached { Encoded(snapshot, db, self) }
        guard encoded.database == db else {
            // Not this snapshot's database (a stream's targets are all of its own): encoded anew.
            for e in snapshot.events(targetIDs) { encode(e, db, into: &batch) }
            return
        }
        if batch.count == 0, batch.framed.isEmpty, let fields = encoded.changedFields {
            batch = Self.framed(fields, targetIDs, then: encoded.framedSnapshotEnd)
            return
        }
        for piece in encoded.changes {
            switch piece {
            case .changed(let field): batch.append { out in Self.documentChange(field, targetIDs, into: &out) }
            case .deleted(let path):
                batch.append(encode(.documentDelete(path, removedTargetIDs: targetIDs, readTime: snapshot.readTime), db))
            }
        }
        batch.append(encoded.snapshotEnd)
    }

    /// A shared snapshot's bytes that do not depend on the stream (`ListenBatch.Shared.cached`).
    private final class Encoded {
        enum Piece {
            /// A changed document's `document` field (`documentField`).
            case changed([UInt8])
            /// A deleted document (its response names the target: written per stream).
            case deleted(ResourcePath)
        }

        let database: DatabaseID
        let changes: [Piece]
        /// The closing global NO_CHANGE.
        let snapshotEnd: [UInt8]
        /// `snapshotEnd` with its gRPC prefix.
        let framedSnapshotEnd: [UInt8]
        /// Every change's `document` field, when every change is a changed document (nil: a delete).
        let changedFields: [[UInt8]]?

        init(_ snapshot: ListenBatch.Shared, _ db: DatabaseID, _ encoder: ListenResponseEncoder) {
            database = db
            changes = snapshot.changes.map { c in
                switch c {
                case .changed(let d): .changed(encoder.documentField(d, db))
                case .deleted(let p): .deleted(p)
                }
            }
            snapshotEnd = encoder.encode(.targetChange(.noChange, targetIDs: [], cause: nil, readTime: snapshot.readTime,
                                                       resumeToken: snapshot.resumeToken), db)
            var end = GRPCMessageBatch(capacity: snapshotEnd.count + 5)
            end.append(snapshotEnd)
            framedSnapshotEnd = end.framed
            var fields: [[UInt8]]? = []
            for piece in changes {
                guard case .changed(let field) = piece else {
                    fields = nil
                    break
                }
                fields?.append(field)
            }
            changedFields = fields
        }
    }

    /// A stream's whole batch for a snapshot of changed documents: a framed `document_change` of
    /// each field (`documentChange`'s bytes) for `targetIDs`, then `end` (framed already), laid out
    /// in one array of the exact size.
    private static func framed(_ fields: [[UInt8]], _ targetIDs: [Int32], then end: [UInt8]) -> GRPCMessageBatch {
        var idsLength = 0
        for id in targetIDs { idsLength += varintSize(UInt64(bitPattern: Int64(id))) }
        let idsField = idsLength == 0 ? 0 : 1 + varintSize(UInt64(idsLength)) + idsLength
        var total = end.count
        for field in fields {
            let body = field.count + idsField
            total += 5 + 1 + varintSize(UInt64(body)) + body
        }
        // Reserved at once, then plain appends (no closure touches the array: one that captured it
        // cost a runtime exclusivity check per byte). Allocating it any other way —
        // `init(repeating:count:)`, `init(unsafeUninitializedCapacity:)` — went through the array's
        // unspecialized buffer initializer and a generic metadata lookup on every call.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        for field in fields {
            let body = field.count + idsField
            let n = 1 + varintSize(UInt64(body)) + body
            // gRPC's prefix: uncompressed, the length big-endian.
            bytes.append(0)
            bytes.append(UInt8(truncatingIfNeeded: n >> 24))
            bytes.append(UInt8(truncatingIfNeeded: n >> 16))
            bytes.append(UInt8(truncatingIfNeeded: n >> 8))
            bytes.append(UInt8(truncatingIfNeeded: n))
            documentChange(field, targetIDs, into: &bytes)
        }
        bytes.append(contentsOf: end)
        assert(bytes.count == total, "the batch's size was miscounted")
        return GRPCMessageBatch(framed: bytes, count: fields.count + 1)
    }

    /// A `ListenResponse` with `document_change` of an encoded `Document` field (`documentField`):
    /// lengths first, so the document is copied once (no nested-length fix-up moving it). Written
    /// with plain appends: this runs once per listener per commit, and only the target ids differ
    /// from one listener's message to the next (the document's tag, length and bytes are shared).
    private static func documentChange(_ field: [UInt8], _ targetIDs: [Int32], into out: inout [UInt8]) {
        var idsLength = 0
        for id in targetIDs { idsLength += varintSize(UInt64(bitPattern: Int64(id))) }
        let idsField = idsLength == 0 ? 0 : 1 + varintSize(UInt64(idsLength)) + idsLength
        let body = field.count + idsField
        out.reserveCapacity(out.count + 1 + varintSize(UInt64(body)) + body)
        out.append(0x1a)  // field 3 (document_change), length-delimited
        appendVarint(UInt64(body), to: &out)
        out.append(contentsOf: field)
        if idsLength > 0 {
            out.append(0x2a)  // field 5 (target_ids), packed
            appendVarint(UInt64(idsLength), to: &out)
            for id in targetIDs { appendVarint(UInt64(bitPattern: Int64(id)), to: &out) }
        }
    }

    @inline(__always)
    private static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// One event as a `ListenResponse` (document names in `db`); `.end` has no message (empty).
    func encode(_ event: ListenEvent, _ db: DatabaseID) -> [UInt8] {
        // Made per case: the shared NO_CHANGE (every listener, every commit) allocates nothing.
        var w: ProtoWriter
        switch event {
        case .targetChange(.noChange, let targetIDs, nil, let readTime?, let token?) where targetIDs.isEmpty:
            lock.lock()
            let last = lastSnapshotEnd
            lock.unlock()
            if let last, last.readTime == readTime, last.token == token { return last.bytes }
            w = ProtoWriter(capacity: 96)
            w.message(2) { m in
                m.bytesIfNonEmpty(4, token)
                DocumentProto.timestamp(6, readTime, into: &m)
            }
            lock.lock()
            lastSnapshotEnd = (readTime, token, w.bytes)
            lock.unlock()
        case .targetChange(let kind, let targetIDs, let cause, let readTime, let token):
            w = ProtoWriter(capacity: 96)
            w.message(2) { m in
                m.int64IfNonZero(1, Int64(kind.rawValue))
                m.packedVarints(2, Self.ids(targetIDs))
                if let cause {
                    m.message(3) { c in
                        c.int64IfNonZero(1, cause.grpcCode)
                        c.stringIfNonEmpty(2, cause.message)
                    }
                }
                if let token { m.bytesIfNonEmpty(4, token) }
                if let readTime { DocumentProto.timestamp(6, readTime, into: &m) }
            }
        case .documentChange(let doc, let targetIDs):
            w = ProtoWriter(capacity: 0)
            Self.documentChange(documentField(doc, db), targetIDs, into: &w.bytes)
        case .documentDelete(let path, let removed, let readTime):
            w = ProtoWriter(capacity: 96)
            w.message(4) { m in
                m.string(1, db.name(of: path))
                m.packedVarints(6, Self.ids(removed))
                DocumentProto.timestamp(4, readTime, into: &m)
            }
        case .documentRemove(let path, let removed, let readTime):
            w = ProtoWriter(capacity: 96)
            w.message(6) { m in
                m.string(1, db.name(of: path))
                m.packedVarints(2, Self.ids(removed))
                DocumentProto.timestamp(4, readTime, into: &m)
            }
        case .existenceFilter(let target, let count, let bloom):
            w = ProtoWriter(capacity: 96)
            w.message(5) { m in
                m.int64IfNonZero(1, Int64(target))
                m.int64IfNonZero(2, Int64(count))
                if let bloom {
                    m.message(3) { b in
                        b.message(1) { bits in
                            bits.bytesIfNonEmpty(1, bloom.bitmap)
                            bits.int64IfNonZero(2, Int64(bloom.padding))
                        }
                        b.int64IfNonZero(2, Int64(bloom.hashCount))
                    }
                }
            }
        case .end:
            return []
        }
        return w.bytes
    }

    /// Bytes of `v` as a varint.
    private static func varintSize(_ v: UInt64) -> Int {
        var n = 1
        var v = v
        while v >= 0x80 {
            v >>= 7
            n += 1
        }
        return n
    }

    /// int32 values as protobuf writes them (negative ones sign-extended to 64 bits).
    private static func ids(_ ids: [Int32]) -> [UInt64] {
        ids.map { UInt64(bitPattern: Int64($0)) }
    }

    /// The version encoded last, checked before hashing: a commit's listeners ask for the same
    /// version one after another, and comparing a path with itself is a pointer check. Kept
    /// whatever its size or age, so a document too large for the cache is still shared. A class:
    /// taking it out of the lock is one retain (an optional tuple of the key and the bytes was
    /// copied member by member, a retain of each name, once per listener).
    private final class Last {
        let key: Key
        let bytes: [UInt8]
        init(_ key: Key, _ bytes: [UInt8]) {
            self.key = key
            self.bytes = bytes
        }
    }
    private var last: Last?

    /// `document` (field 1 of `DocumentChange`: its tag, length and `Document` bytes) of this
    /// version, made once while it is cached.
    private func documentField(_ doc: StoredDocument, _ db: DatabaseID) -> [UInt8] {
        lock.lock()
        let recent = last
        lock.unlock()
        // The fan-out's case, checked field by field (times first) without building a key: a key
        // retains the path and the database's names.
        if let recent, recent.key.updateTime == doc.updateTime, recent.key.createTime == doc.createTime,
           recent.key.path == doc.path, recent.key.database == db {
            return recent.bytes
        }
        lock.lock()
        let key = Key(database: db, path: doc.path, createTime: doc.createTime, updateTime: doc.updateTime)
        let cached = documents[key]
        if let cached { last = Last(key, cached) }
        lock.unlock()
        if let cached { return cached }
        var w = ProtoWriter(capacity: 0)
        w.encodedMessage(1, DocumentProto.document(doc, in: db))
        let bytes = w.bytes
        lock.lock()
        last = Last(key, bytes)
        if doc.updateTime > newest {
            // A newer commit: the previous one's fan-out is over (or nearly; a straggler encodes again).
            documents.removeAll(keepingCapacity: documents.count <= 64)
            cachedBytes = 0
            newest = doc.updateTime
        }
        if doc.updateTime == newest, cachedBytes + bytes.count <= Self.cacheLimit {
            documents[key] = bytes
            cachedBytes += bytes.count
        }
        lock.unlock()
        return bytes
    }

    /// Versions cached now, and their bytes (tests check the bound).
    var cached: (count: Int, bytes: Int) { lock.withLock { (documents.count, cachedBytes) } }
}
