import Foundation
import HearthBlobs
import HearthCore
import HearthCrypto
import HearthSQLite

/// Seed data in and out: buckets with their configurations, objects with their metadata, and
/// object bytes as plain files (docs/import-export.md):
///
/// ```
/// s3/buckets.json                  buckets, configurations, object and version entries
/// s3/objects/<bucket>/<key>        each current object's bytes ('/' in a key makes folders)
/// s3/versions/<bucket>/<n>         each noncurrent version's bytes
/// ```
/// Bytes stream through one chunk-sized buffer both ways, so an object of any size costs one
/// chunk of memory.
extension S3Service {
    /// Why an S3 export or import failed.
    public struct ExportError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The file in the `s3` folder that describes everything.
    public static let exportFile = "buckets.json"

    /// Writes every bucket into `folder` (created if missing; earlier object files removed).
    /// - Returns: how many objects and versions were written.
    @discardableResult
    public func exportData(to folder: String) throws -> Int {
        let fm = FileManager.default
        for sub in ["objects", "versions"] {
            let path = (folder as NSString).appendingPathComponent(sub)
            if fm.fileExists(atPath: path) { try fm.removeItem(atPath: path) }
        }
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var buckets: [JSON] = []
        var count = 0
        for bucket in try store.buckets() {
            var o = JSONObject([("name", .string(bucket.name)), ("region", .string(bucket.region)),
                                ("owner", .string(bucket.owner)), ("createdAt", .string(bucket.createdAt.rfc3339()))])
            if let v = bucket.versioning { o["versioning"] = .string(v) }
            let (cors, configs) = try database.read { c -> (String?, [(String, String?)]) in
                let cors = try c.first("SELECT rules FROM s3_bucket_cors WHERE bucket = ?", [bucket.name]) { $0.text(0) }
                let configs = try c.rows("SELECT kind, document FROM s3_bucket_config WHERE bucket = ? ORDER BY kind", [bucket.name]) {
                    ($0.text(0), $0.optionalText(1))
                }
                return (cors, configs)
            }
            if let cors, let json = try? JSON.parse(Data(cors.utf8)) { o["cors"] = json }
            // Documents as stored (the policy exactly as it was put, lifecycle and the rest as
            // S3 answers them); null: explicitly deleted, so not even the default applies.
            o["configurations"] = .object(JSONObject(configs.map { ($0.0, $0.1.map(JSON.string) ?? .null) }))

            var names = ExportNames()
            var objects: [JSON] = []
            var after: [UInt8]? = nil
            while true {
                let page = try store.objects(bucket: bucket.name, prefix: "", after: after, inclusive: false, limit: 1000)
                for record in page {
                    let file = "objects/\(bucket.name)/" + names.path(for: record.key)
                    guard let written = try exportBody(of: record.key, in: bucket.name, versionID: nil,
                                                       to: (folder as NSString).appendingPathComponent(file)) else { continue }
                    objects.append(Self.entryJSON(written.record, file: file, sealed: written.sealed))
                    count += 1
                }
                guard page.count == 1000, let last = page.last else { break }
                after = Array(last.key.utf8)
            }
            o["objects"] = .array(objects)

            let history = try database.read { c in
                try c.rows("SELECT \(S3Store.versionColumns) FROM s3_object_versions WHERE bucket = ? ORDER BY key, seq",
                           [bucket.name], S3Store.versionEntry)
            }
            var versions: [JSON] = []
            for (i, (entry, _)) in history.enumerated() {
                if entry.isDeleteMarker {
                    var j = Self.entryJSON(entry.record, file: nil).objectValue ?? JSONObject()
                    j["deleteMarker"] = .bool(true)
                    for k in ["size", "etag"] { j[k] = nil }
                    versions.append(.object(j))
                    continue
                }
                let file = "versions/\(bucket.name)/\(i + 1)"
                guard let written = try exportBody(of: entry.record.key, in: bucket.name, versionID: entry.record.versionName,
                                                   to: (folder as NSString).appendingPathComponent(file)) else { continue }
                versions.append(Self.entryJSON(written.record, file: file, sealed: written.sealed))
                count += 1
            }
            if !versions.isEmpty { o["versions"] = .array(versions) }
            buckets.append(.object(o))
        }
        let json = JSON.object(JSONObject([("buckets", .array(buckets))]))
        let path = (folder as NSString).appendingPathComponent(Self.exportFile)
        try Data((json.serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        return count
    }

    /// Streams one object's (or version's) bytes into `path`; nil when it vanished meanwhile.
    ///
    /// SSE-S3 and SSE-KMS objects are written decrypted (the export is plain files, and the import
    /// encrypts them again); an SSE-C object cannot be opened without its client's key, so its
    /// chunk rows are written as stored, sealed, with their layout in `sealed` (stored length,
    /// start and length of each slice) and its wrapped data key kept in its `extra`.
    private func exportBody(of key: String, in bucket: String, versionID: String?,
                            to path: String) throws -> (record: ObjectRecord, sealed: [[Int64]]?)? {
        let outcome = try store.objectForRead(bucket: bucket, key: key, versionID: versionID) { (0, $0.size) }
        guard case .found(let found, let plan) = outcome else { return nil }
        var record = found.record
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw ExportError(description: "cannot create \(path)")
        }
        defer { try? handle.close() }
        switch plan {
        case .none: break
        case .inline(let bytes): try handle.write(contentsOf: bytes)
        case .segments(let segments) where record.metadata.extra.customerKeyMD5 != nil && record.metadata.extra.dataKey != nil:
            var layout: [[Int64]] = []
            for segment in segments {
                let row = try database.read { c in try BlobStore.storedBytes(c, of: segment) }
                guard let row else { throw BlobBodySource.ChunkMissing() }
                try handle.write(contentsOf: row)
                layout.append([Int64(row.count), segment.chunkStart, segment.length])
            }
            return (record, layout)
        case .segments(let segments):
            guard case .success(let dataKey) = self.dataKey(of: record.metadata.extra, customerKey: nil) else {
                throw ExportError(description: "\(bucket)/\(key): its KMS key is not in the key ring")
            }
            record.metadata.extra.dataKey = nil
            let source = BlobBodySource(database: database, segments: segments, start: 0, end: record.size, dataKey: dataKey)
            defer { source.close() }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                if n == 0 { break }
                try handle.write(contentsOf: buffer[0..<n])
            }
        }
        return (record, nil)
    }

    /// One object or version entry of `buckets.json`.
    static func entryJSON(_ r: ObjectRecord, file: String?, sealed: [[Int64]]? = nil) -> JSON {
        var o = JSONObject([("key", .string(r.key))])
        if let v = r.versionID { o["versionId"] = .string(v) }
        if let file { o["file"] = .string(file) }
        o["size"] = .int(r.size)
        o["etag"] = .string(r.etag)
        o["lastModified"] = .string(r.lastModified.rfc3339(fractionDigits: 6))
        o["owner"] = .string(r.owner)
        var m = r.metadata.json.objectValue ?? JSONObject()
        // User metadata as an object of name → value (names are unique, lower-cased).
        m["userMetadata"] = .object(JSONObject(r.metadata.userMetadata.map { ($0.name, JSON.string($0.value)) }))
        o["metadata"] = .object(m)
        if let c = r.checksum {
            o["checksum"] = .object(JSONObject([("algorithm", .string(c.algorithm.displayName)), ("value", .string(c.value)), ("type", .string(c.type))]))
        }
        if let parts = r.partSizes { o["partSizes"] = .array(parts.map { .int($0) }) }
        if let sealed { o["sealedChunks"] = .array(sealed.map { .array($0.map { JSON.int($0) }) }) }
        return .object(o)
    }

    // MARK: Import

    /// Loads `folder` (an `exportData` folder): buckets created or updated, their configurations
    /// replaced, objects and versions written with their metadata. Bytes come from the files;
    /// the ETag and a full-object checksum are recomputed from them (so an edited fixture file
    /// stays consistent), a multipart object keeps its part layout while its size still matches.
    /// - Returns: how many objects and versions were written.
    @discardableResult
    public func importData(from folder: String) throws -> Int {
        let path = (folder as NSString).appendingPathComponent(Self.exportFile)
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        let json: JSON
        do { json = try JSON.parse(data) } catch { throw ExportError(description: "\(path): \(error)") }
        guard let buckets = json["buckets"]?.arrayValue else { throw ExportError(description: "\(path): expected a \"buckets\" array") }
        var count = 0
        let now = clock.now()
        for b in buckets {
            guard let name = b["name"]?.stringValue, BucketName.isValid(name) else {
                throw ExportError(description: "\(path): a bucket without a valid \"name\"")
            }
            let created = b["createdAt"]?.stringValue.flatMap { Instant(rfc3339: $0) } ?? now
            let owner = b["owner"]?.stringValue ?? defaultOwner
            try store.writeBuckets { c in
                try c.run("INSERT OR IGNORE INTO s3_buckets (name, region, owner, created_at) VALUES (?, ?, ?, ?)",
                          [name, b["region"]?.stringValue ?? configuration.region, owner, created.unixMicros])
                try c.run("UPDATE s3_buckets SET versioning = ? WHERE name = ?", [b["versioning"]?.stringValue, name])
                try c.run("DELETE FROM s3_bucket_cors WHERE bucket = ?", [name])
                if let cors = b["cors"], !cors.isNull {
                    try c.run("INSERT INTO s3_bucket_cors (bucket, rules, updated_at) VALUES (?, ?, ?)", [name, cors.serialized(), now.unixMicros])
                }
                try c.run("DELETE FROM s3_bucket_config WHERE bucket = ?", [name])
                for (kind, document) in b["configurations"]?.objectValue ?? [:] {
                    guard document.isNull || document.stringValue != nil else {
                        throw ExportError(description: "\(name) configuration \(kind) must be a string or null")
                    }
                    try c.run("INSERT INTO s3_bucket_config (bucket, kind, document, updated_at) VALUES (?, ?, ?, ?)",
                              [name, kind, document.stringValue, now.unixMicros])
                }
            }
            for entry in b["objects"]?.arrayValue ?? [] {
                try importEntry(entry, bucket: name, folder: folder, current: true)
                count += 1
            }
            for entry in b["versions"]?.arrayValue ?? [] {
                try importEntry(entry, bucket: name, folder: folder, current: false)
                count += 1
            }
        }
        return count
    }

    /// Writes one object (the key's current version) or one noncurrent version / delete marker.
    private func importEntry(_ e: JSON, bucket: String, folder: String, current: Bool) throws {
        guard let key = e["key"]?.stringValue, !key.isEmpty else { throw ExportError(description: "\(bucket): an entry without \"key\"") }
        let lastModified = e["lastModified"]?.stringValue.flatMap { Instant(rfc3339: $0) } ?? clock.now()
        let owner = e["owner"]?.stringValue ?? defaultOwner
        var metadata = ObjectMetadata(json: .object(JSONObject()))
        if let m = e["metadata"] {
            var plain = m.objectValue ?? JSONObject()
            plain["userMetadata"] = nil
            metadata = ObjectMetadata(json: .object(plain))
            metadata.userMetadata = (m["userMetadata"]?.objectValue ?? [:]).compactMap { name, value in
                value.stringValue.map { ObjectMetadata.Pair(name: name.lowercased(), value: $0) }
            }
        }
        let versionID = e["versionId"]?.stringValue
        if e["deleteMarker"]?.boolValue == true {
            guard !current, let versionID else { throw ExportError(description: "\(bucket)/\(key): a delete marker needs a versionId") }
            try database.write { c in
                let seq = (try c.scalarInt("SELECT max(seq) FROM s3_object_versions WHERE bucket = ? AND key = ?", [bucket, key]) ?? 0) + 1
                try c.run("DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?", [bucket, key, versionID])
                try c.run("""
                    INSERT INTO s3_object_versions (bucket, key, seq, version_id, delete_marker, last_modified, owner)
                    VALUES (?, ?, ?, ?, 1, ?, ?)
                    """, [bucket, key, seq, versionID, lastModified.unixMicros, owner])
            }
            return
        }
        guard let file = e["file"]?.stringValue, !file.split(separator: "/").contains("..") else {
            throw ExportError(description: "\(bucket)/\(key): \"file\" is missing or leaves the export")
        }
        let path = (folder as NSString).appendingPathComponent(file)
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw ExportError(description: "\(bucket)/\(key): cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var checksum: ObjectChecksum?
        if let c = e["checksum"], let name = c["algorithm"]?.stringValue, let algorithm = ChecksumAlgorithm(name: name),
           let value = c["value"]?.stringValue {
            checksum = ObjectChecksum(algorithm: algorithm, value: value, type: c["type"]?.stringValue ?? "FULL_OBJECT")
        }
        // An SSE-C object comes sealed, as it was stored; SSE-S3 and SSE-KMS objects come plain and
        // are sealed again under a fresh data key (their KMS key recreated when the ring lacks it).
        let layout = e["sealedChunks"]?.arrayValue?.map { $0.arrayValue?.compactMap(\.intValue) ?? [] }
        let sealed = layout != nil && metadata.extra.customerKeyMD5 != nil && metadata.extra.dataKey != nil
        if !sealed { metadata.extra.dataKey = nil }
        var dataKey: BlobDataKey?
        if !sealed, metadata.extra.customerKeyMD5 == nil, let sse = metadata.extra.sse {
            if sse != "AES256", let arn = metadata.extra.kmsKeyID, let id = KMSKeyRing.keyID(fromARN: arn), try keyRing.key(id: id) == nil {
                let account = arn.split(separator: ":", omittingEmptySubsequences: false).dropFirst(4).first.map(String.init) ?? accounts.primary.accountID
                _ = try keyRing.create(account: account, keyID: id, alias: nil, description: "imported", ids: ids, now: clock.now())
            }
            switch sealNew(&metadata.extra, customerKey: nil) {
            case .failure(let e): throw ExportError(description: "\(bucket)/\(key): \(e.message)")
            case .success(let k): dataKey = k
            }
        }
        var staged: (blob: Int64, size: Int64)?
        if sealed, let layout {
            staged = try stageSealed(fd, layout: layout, path: path)
        }
        let recompute = sealed ? [] : checksum.map { $0.type == "FULL_OBJECT" ? [$0.algorithm] : [] } ?? []
        let writer = BlobWriter(database: database, now: clock.now(), checksums: recompute, dataKey: dataKey)
        do {
            // One reused buffer and read(2): the file is never mapped or held whole.
            var buffer = [UInt8](repeating: 0, count: BlobWriter.chunkSize)
            while staged == nil {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ExportError(description: "cannot read \(path): \(String(cString: strerror(errno)))")
                }
                if n == 0 { break }
                try buffer.withUnsafeBytes { try writer.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            }
        } catch {
            writer.discard()
            throw ExportError(description: "\(bucket)/\(key): \(error)")
        }
        let size = staged?.size ?? writer.size
        let digests = writer.finalizeDigests()
        var etag = ETag.quoted(md5: digests.md5)
        if staged != nil || S3Service.hasDerivedETag(metadata.extra) {
            etag = e["etag"]?.stringValue ?? S3Service.etag(md5: digests.md5, extra: metadata.extra, dataKey: dataKey)
        }
        var partSizes = e["partSizes"]?.arrayValue?.compactMap(\.intValue)
        if let parts = partSizes, parts.reduce(0, +) == size, let exported = e["etag"]?.stringValue, exported.contains("-") {
            etag = exported  // A multipart ETag is the MD5 of the parts' MD5s: kept while the layout holds.
        } else {
            partSizes = nil
            if checksum?.type == "COMPOSITE" { checksum = nil }
        }
        if staged == nil, let c = checksum, c.type == "FULL_OBJECT" {
            checksum?.value = digests.checksums[c.algorithm].map { Data($0).base64EncodedString() } ?? c.value
        }
        let record = ObjectRecord(bucket: bucket, key: key, blobID: 0, size: size, etag: etag, lastModified: lastModified,
                                  metadata: metadata, checksum: checksum, partSizes: partSizes, owner: owner,
                                  versionID: versionID == "null" ? nil : versionID)
        do {
            try database.write { c in
                var r = record
                if let staged {
                    try BlobStore.promote(c, blobID: staged.blob)
                    r.blobID = staged.blob
                } else {
                    r.blobID = try writer.commit(c)
                }
                if current {
                    if let old = try S3Store.object(c, bucket: bucket, key: key) {
                        try c.run("DELETE FROM s3_objects WHERE bucket = ? AND key = ?", [bucket, key])
                        try BlobStore.delete(c, blobID: old.blobID)
                    }
                    try S3Store.insertCurrent(c, r, replace: false)
                } else {
                    let vid = versionID ?? "null"
                    if let old = try c.first("SELECT blob_id FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?",
                                             [bucket, key, vid], { $0.isNull(0) ? nil : $0.int64(0) }), let blob = old {
                        try BlobStore.delete(c, blobID: blob)
                    }
                    try c.run("DELETE FROM s3_object_versions WHERE bucket = ? AND key = ? AND version_id = ?", [bucket, key, vid])
                    // Entries come newest first, so each takes the next larger seq (older).
                    let seq = (try c.scalarInt("SELECT max(seq) FROM s3_object_versions WHERE bucket = ? AND key = ?", [bucket, key]) ?? 0) + 1
                    try c.run("""
                        INSERT INTO s3_object_versions (\(S3Store.objectColumns), delete_marker, seq)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
                        """, [
                            r.bucket, r.key, r.blobID, r.size, r.etag, r.lastModified.unixMicros,
                            r.metadata.contentType, r.metadata.contentDisposition, r.metadata.contentEncoding,
                            r.metadata.contentLanguage, r.metadata.cacheControl, r.metadata.expires,
                            r.metadata.userMetadataJSON, r.metadata.storageClass, r.metadata.websiteRedirect,
                            r.metadata.tagging, r.checksum?.algorithm.displayName, r.checksum?.value, r.checksum?.type,
                            r.partSizes.map { $0.map(String.init).joined(separator: ",") }, r.owner, vid,
                            r.metadata.extra.isEmpty ? nil : r.metadata.extra.serialized, seq,
                        ])
                }
            }
            writer.committed()
        } catch {
            writer.discard()
            throw ExportError(description: "\(bucket)/\(key): \(error)")
        }
    }
}

/// File names for object keys below `objects/<bucket>/`: the key itself, `/` making folders,
/// when every segment is a usable file name and no other key already took the path as a file or
/// a folder; otherwise `.hashed/<sha256 of the key>`. `buckets.json` names each object's file,
/// so the importer never decodes names.
struct ExportNames {
    // Compared lower-cased: on a case-insensitive file system (macOS) `A` and `a` are one file.
    private var files = Set<String>()
    private var folders = Set<String>()

    mutating func path(for key: String) -> String {
        let segments = key.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let usable = segments.allSatisfy { s in
            !s.isEmpty && s != "." && s != ".." && s.utf8.count <= 200 && !s.utf8.contains(0)
        }
        let folded = key.lowercased()
        if usable, segments[0] != ".hashed", !files.contains(folded), !folders.contains(folded) {
            var prefixes: [String] = []
            var ok = true
            for i in 1..<segments.count {
                let prefix = segments[0..<i].joined(separator: "/").lowercased()
                if files.contains(prefix) { ok = false; break }
                prefixes.append(prefix)
            }
            if ok {
                files.insert(folded)
                folders.formUnion(prefixes)
                return key
            }
        }
        return ".hashed/" + Digest.sha256(Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension S3Service {
    /// Writes an exported SSE-C object's sealed chunk rows, as they were stored, into a staging
    /// blob (swept at start if the import dies before its commit promotes it).
    /// - Parameter layout: per slice, the stored row's length, the slice's start and length.
    func stageSealed(_ fd: Int32, layout: [[Int64]], path: String) throws -> (blob: Int64, size: Int64) {
        let now = clock.now()
        let blob = try database.write { c in try BlobStore.createStaging(c, now: now) }
        var offset: Int64 = 0
        for slice in layout {
            let overhead = Int64(BlobDataKey.overhead)
            guard slice.count == 3, slice[0] > overhead, slice[0] <= Int64(BlobWriter.chunkSize) + overhead,
                  slice[1] >= 0, slice[2] >= 0, slice[1] + slice[2] <= slice[0] - overhead else {
                throw ExportError(description: "\(path): a malformed sealedChunks entry")
            }
            var row = [UInt8](repeating: 0, count: Int(slice[0]))
            var filled = 0
            while filled < row.count {
                let n = row.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw ExportError(description: "\(path): shorter than its sealedChunks say") }
                filled += n
            }
            let at = offset
            try database.write { c in
                try row.withUnsafeBytes {
                    try BlobStore.appendChunk(c, blobID: blob, offset: at, bytes: $0, length: slice[2], chunkStart: slice[1])
                }
            }
            offset += slice[2]
        }
        return (blob, offset)
    }
}
