import HearthBlobs
import HearthCore
import HearthCrypto
import HearthSQLite
import SecurityRules

/// Bytes ready to become an object's body: a writer's staged blob or a finished upload's pieces.
enum ObjectBody {
    case writer(StorageBlobWriter)
    case pieces([(blobID: Int64, size: Int64)])
    case copy(blobID: Int64, size: Int64)
}

extension StorageService {
    /// Validates bucket and object names.
    func checkNames(bucket: String, name: String) throws(StorageError) {
        if let why = ObjectName.problem(name) { throw .invalidObjectName(why) }
    }

    /// Makes `draft` (its fields set, generation and times not yet) the live generation of its name.
    ///
    /// `acl` chooses the new generation's ACL (refused on a bucket with uniform access when the
    /// request names one). `authorize`, when given, judges the final object (storage.rules) before anything is visible.
    /// The body's blob is created in the same transaction that switches the object over, so a
    /// failure at any point leaves the previous generation in place.
    func store(_ draft: StoredObject, body: ObjectBody, conditions: Preconditions, acl: ObjectACLChoice = .bucketDefault,
               authorize: ((StoredObject, StoredObject?) throws(StorageError) -> Void)? = nil,
               cleanup: ((Connection, StoredObject) throws -> Void)? = nil) throws(StorageError) -> StoredObject {
        let now = clock.now()
        var object = draft
        object.timeCreated = now
        object.updated = now
        object.metageneration = 1
        if let authorize {
            let existing = try read { c in try StorageStore.object(c, bucket: draft.bucket, name: draft.name) }
            object.generation = StorageStore.nextGeneration(existing, now: now)
            try authorize(object, existing)
        }
        let stored: StoredObject = try write { c in
            guard let bucket = try StorageStore.bucket(c, object.bucket) else { throw StorageError.noSuchBucket(object.bucket) }
            if acl.isLegacyACL && bucket.uniformAccess { throw StorageError.uniformObjectACL("insert") }
            let current = try StorageStore.object(c, bucket: object.bucket, name: object.name)
            try conditions.check(current)
            var o = object
            o.generation = StorageStore.nextGeneration(current, now: now)
            o.acl = acl.entries(defaultObjectACL: bucket.defaultObjectACL, owner: objectOwner)
            // A public ACL the request names is refused under public access prevention; one the
            // bucket's default object ACL gives is not (GCS: such objects are created, the grant overridden).
            if acl.isLegacyACL, bucket.enforcesPublicAccessPrevention, o.acl?.contains(where: \.isPublic) == true {
                throw StorageError.publicAccessPrevented
            }
            // Sources read before this transaction (copy, compose) may have been replaced since.
            let sources: [Int64] = switch body {
            case .writer: []
            case .pieces(let pieces): pieces.map(\.blobID)
            case .copy(let blob, _): [blob]
            }
            for blob in Set(sources) where try c.scalarInt("SELECT count(*) FROM \(StorageBlobNamespace.tables.blobs) WHERE id = ?", [blob]) != 1 {
                throw StorageError.noSuchObject(bucket: object.bucket, name: object.name)
            }
            switch body {
            case .writer(let w): o.blobID = try w.commit(c)
            case .pieces(let pieces): o.blobID = try StorageBlobs.concatenate(c, pieces.map { ($0.blobID, $0.size) }, now: now)
            case .copy(let blob, let size): o.blobID = try StorageBlobs.copyRange(c, from: blob, start: 0, length: size, now: now)
            }
            try StorageStore.write(c, o)
            if let current { try StorageBlobs.delete(c, blobID: current.blobID) }
            try cleanup?(c, o)
            return o
        }
        if case .writer(let w) = body { w.committed() }
        return stored
    }

    /// The entity that owns the objects Hearth stores: the JSON API's caller is privileged, as a
    /// service account is, and this names it (the project's App Engine default service account).
    var objectOwner: String { "user-\(configuration.projectID.lowercased())@appspot.gserviceaccount.com" }

    /// A new object record for `bucket`/`name` with `metadata` applied (body fields filled by `store`).
    func draft(bucket: String, name: String, metadata: ObjectMetadata, size: Int64, md5: [UInt8], crc32c: UInt32) -> StoredObject {
        var o = StoredObject(bucket: bucket, name: name, generation: 0, metageneration: 1, blobID: 0, size: size, md5: md5,
                             crc32c: crc32c, contentType: nil, contentEncoding: nil, contentDisposition: nil,
                             contentLanguage: nil, cacheControl: nil, metadata: [], timeCreated: clock.now(), updated: clock.now())
        metadata.apply(to: &o, mergeMetadata: false)
        return o
    }

    /// Adds a Firebase download token unless the object already has one.
    func withDownloadToken(_ o: StoredObject) -> StoredObject {
        guard o.downloadTokens.isEmpty else { return o }
        var o = o
        o.metadata.removeAll { $0.0 == StoredObject.downloadTokensKey }
        o.metadata.append((StoredObject.downloadTokensKey, ids.uuid()))
        return o
    }

    /// MD5 and CRC32C of a blob list, read back one chunk at a time (a resumable upload's pieces
    /// arrived in separate requests, possibly across restarts, so no running digest spans them).
    func digests(of pieces: [(blobID: Int64, size: Int64)]) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32) {
        let digest = ObjectDigest()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for p in pieces {
            let segments = try read { c in try StorageBlobs.segments(c, blobID: p.blobID, start: 0, end: p.size) }
            let source = StorageBodySource(database: database, segments: segments, start: 0, end: p.size)
            defer { source.close() }
            while true {
                let n: Int
                do { n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) } } catch {
                    logger.error("storage: reading an upload's pieces failed", [("error", .string("\(error)"))])
                    throw .internalError
                }
                if n == 0 { break }
                buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            }
        }
        return digest.finalize()
    }

    /// The CRC32C as a number from a writer's big-endian bytes.
    static func crcValue(_ bytes: [UInt8]?) -> UInt32 {
        guard let b = bytes, b.count == 4 else { return 0 }
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }
}
