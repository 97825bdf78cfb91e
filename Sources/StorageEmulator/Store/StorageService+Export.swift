import Foundation
import HearthCore
import HearthCrypto
import HearthSQLite

/// Seed data in and out, in the layout the Firebase emulators' Storage export uses
/// (`firebase emulators:export` writes it as `storage_export/`), so either tool reads the other's:
///
/// ```
/// storage/buckets.json                            {"buckets": [{"id": "<bucket>", …}, …]}
/// storage/blobs/<bucket>/<file>                   each object's bytes
/// storage/metadata/<bucket>/<file>.json           its metadata (the Firebase emulator's stored form)
/// ```
/// `<file>` is the object name percent-encoded into one file name (`users%2Falice%2Fa.png`); a name
/// too long for a file name, or one that would clash with another on a case-insensitive file
/// system, becomes `sha256-<hex of the name>`. The metadata file names the object, so importers
/// never decode file names, and a blob is found from its metadata file's path (minus `.json`),
/// which is how the Firebase emulator's importer finds it too. Bytes stream through one chunk-sized
/// buffer in both directions; size, md5Hash and crc32c are recomputed from the bytes on import.
///
/// Hearth adds what the Firebase emulator has no place for (its importer reads only the fields
/// it knows): a bucket's settings, ACLs and IAM policy beside its `id`, an object's `acl` in its
/// metadata. A stored value that does not decode is carried as its text under `unreadable` and
/// comes back as it was, still denying, rather than being dropped for a default.
extension StorageService {
    /// Why a Storage export or import failed.
    public struct ExportError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Writes every bucket and object into `folder` (created if missing; earlier blobs and
    /// metadata removed). - Returns: how many objects were written.
    @discardableResult
    public func exportData(to folder: String) throws -> Int {
        let fm = FileManager.default
        let blobs = (folder as NSString).appendingPathComponent("blobs")
        let metadata = (folder as NSString).appendingPathComponent("metadata")
        for path in [blobs, metadata] where fm.fileExists(atPath: path) { try fm.removeItem(atPath: path) }
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let stored = try database.read { c in try StorageStore.buckets(c) }
        let buckets = stored.map(\.name)
        let list = JSON.object(["buckets": .array(stored.map(\.exportJSON))])
        try Self.write(list, to: (folder as NSString).appendingPathComponent("buckets.json"))
        var count = 0
        for bucket in buckets {
            var names = ExportFileNames()
            let blobFolder = ((blobs as NSString).appendingPathComponent(bucket))
            let metaFolder = ((metadata as NSString).appendingPathComponent(bucket))
            try fm.createDirectory(atPath: blobFolder, withIntermediateDirectories: true)
            try fm.createDirectory(atPath: metaFolder, withIntermediateDirectories: true)
            var after: String?
            while true {
                let page = try database.read { c in try StorageStore.objects(c, bucket: bucket, prefix: "", after: after, limit: 1000) }
                for listed in page {
                    let file = names.file(for: listed.name)
                    guard let object = try exportBytes(of: listed, to: (blobFolder as NSString).appendingPathComponent(file)) else { continue }
                    try Self.write(object.exportJSON, to: (metaFolder as NSString).appendingPathComponent(file + ".json"))
                    count += 1
                }
                guard page.count == 1000, let last = page.last else { break }
                after = last.name
            }
        }
        return count
    }

    /// Streams the object's current bytes into `path`; the object as read (nil when it vanished meanwhile).
    private func exportBytes(of listed: StoredObject, to path: String) throws -> StoredObject? {
        let found = try database.read { c -> (StoredObject, [StorageBlobs.Segment])? in
            guard let o = try StorageStore.object(c, bucket: listed.bucket, name: listed.name) else { return nil }
            return (o, try StorageBlobs.segments(c, blobID: o.blobID, start: 0, end: o.size))
        }
        guard let (object, segments) = found else { return nil }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw ExportError(description: "cannot create \(path)")
        }
        defer { try? handle.close() }
        let source = StorageBodySource(database: database, segments: segments, start: 0, end: object.size)
        defer { source.close() }
        var buffer = [UInt8](repeating: 0, count: StorageBlobWriter.chunkSize)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            try handle.write(contentsOf: buffer[0..<n])
        }
        return object
    }

    private static func write(_ json: JSON, to path: String) throws {
        try Data((json.serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    // MARK: Import

    /// Loads a folder `exportData` (or the Firebase emulators' Storage export) wrote: buckets
    /// created, each object written with its metadata and its file's bytes, replacing one of the
    /// same name. - Returns: how many objects were written.
    @discardableResult
    public func importData(from folder: String) throws -> Int {
        let fm = FileManager.default
        let bucketsPath = (folder as NSString).appendingPathComponent("buckets.json")
        if let data = fm.contents(atPath: bucketsPath) {
            let json: JSON
            do { json = try JSON.parse(data) } catch { throw ExportError(description: "\(bucketsPath): \(error)") }
            for b in json["buckets"]?.arrayValue ?? [] {
                guard let id = b["id"]?.stringValue, ObjectName.isValidBucket(id) else {
                    throw ExportError(description: "\(bucketsPath): a bucket without a valid \"id\"")
                }
                let now = clock.now()
                let imported: StoredBucket?
                do throws(StorageError) { imported = try StoredBucket(exported: b, now: now) } catch {
                    throw ExportError(description: "\(bucketsPath): bucket \(id): \(error.message)")
                }
                try database.write { c in
                    try StorageStore.createBucket(c, id, now: now)
                    // An entry with only its id (the Firebase emulator's) leaves the bucket's settings alone.
                    if let imported { try StorageStore.updateBucket(c, imported) }
                }
            }
        }
        let metadata = (folder as NSString).appendingPathComponent("metadata")
        let blobs = (folder as NSString).appendingPathComponent("blobs")
        guard let walker = fm.enumerator(atPath: metadata) else { return 0 }
        var files: [String] = []
        while let rel = walker.nextObject() as? String {
            if rel.hasSuffix(".json"), walker.fileAttributes?[.type] as? FileAttributeType != .typeDirectory { files.append(rel) }
        }
        var count = 0
        for rel in files.sorted() {
            let metaPath = (metadata as NSString).appendingPathComponent(rel)
            let blobPath = (blobs as NSString).appendingPathComponent(String(rel.dropLast(".json".count)))
            do {
                guard let data = fm.contents(atPath: metaPath) else { throw ExportError(description: "cannot read it") }
                try importObject(try JSON.parse(data), bytesFrom: blobPath)
            } catch {
                throw ExportError(description: "\(metaPath): \(error)")
            }
            count += 1
        }
        return count
    }

    /// Loads the `storage_export` folder of a Firebase emulators export in `directory` (the folder
    /// its `firebase-export-metadata.json` names); nil when it holds none.
    public func importFirebaseEmulatorExport(directory: String) throws -> Int? {
        let metadata = FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent("firebase-export-metadata.json"))
            .flatMap { try? JSON.parse($0) }
        let folder = (directory as NSString).appendingPathComponent(metadata?["storage"]?["path"]?.stringValue ?? "storage_export")
        guard FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("buckets.json"))
            || FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("metadata")) else { return nil }
        return try importData(from: folder)
    }

    /// Writes one object from its metadata JSON and the bytes in `path`.
    private func importObject(_ m: JSON, bytesFrom path: String) throws {
        guard let bucket = m["bucket"]?.stringValue, ObjectName.isValidBucket(bucket) else { throw ExportError(description: "no valid \"bucket\"") }
        guard let name = m["name"]?.stringValue else { throw ExportError(description: "no \"name\"") }
        if let why = ObjectName.problem(name) { throw ExportError(description: "the object name is not valid: \(why)") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ExportError(description: "cannot read \(path)") }
        defer { try? handle.close() }
        let now = clock.now()
        let writer = StorageBlobWriter(database: database, now: now, checksums: [.crc32c])
        defer { writer.discard() }
        // One chunk at a time: the file is never held whole.
        while let data = try handle.read(upToCount: StorageBlobWriter.chunkSize), !data.isEmpty {
            try data.withUnsafeBytes { try writer.append($0) }
        }
        let d = writer.finalizeDigests()
        func number(_ key: String) -> Int64? { m[key].flatMap { $0.intValue ?? $0.stringValue.flatMap(Int64.init) } }
        func time(_ key: String) -> Instant? { m[key]?.stringValue.flatMap { Instant(rfc3339: $0) } }
        var custom: [(String, String)] = (m["customMetadata"]?.objectValue ?? [:]).compactMap { k, v in
            v.stringValue.map { (k, $0) } ?? (v.isNull ? nil : (k, v.serialized()))
        }
        // The Firebase emulator keeps tokens beside the custom metadata; Hearth keeps them in it, as GCS does.
        var tokens = custom.first { $0.0 == StoredObject.downloadTokensKey }?.1.split(separator: ",").map(String.init) ?? []
        custom.removeAll { $0.0 == StoredObject.downloadTokensKey }
        for t in m["downloadTokens"]?.arrayValue?.compactMap(\.stringValue) ?? [] where !tokens.contains(t) { tokens.append(t) }
        if !tokens.isEmpty { custom.append((StoredObject.downloadTokensKey, tokens.joined(separator: ","))) }
        let created = time("timeCreated") ?? now
        var object = StoredObject(bucket: bucket, name: name, generation: max(1, number("generation") ?? now.unixMicros),
                                  metageneration: max(1, number("metageneration") ?? 1), blobID: 0, size: writer.size, md5: d.md5,
                                  crc32c: Self.crcValue(d.checksums[.crc32c]), contentType: m["contentType"]?.stringValue,
                                  contentEncoding: m["contentEncoding"]?.stringValue, contentDisposition: m["contentDisposition"]?.stringValue,
                                  contentLanguage: m["contentLanguage"]?.stringValue, cacheControl: m["cacheControl"]?.stringValue,
                                  metadata: custom, timeCreated: created, updated: time("updated") ?? created,
                                  customTime: time("customTime"), componentCount: number("componentCount"))
        // A composite object has no MD5 (as exported).
        if object.componentCount != nil { object.md5 = [] }
        if let acl = m["acl"] {
            guard let list = AccessControlEntry.decode(acl.serialized()) else { throw ExportError(description: "\"acl\" is not a list of entities and roles") }
            object.acl = list
        }
        if let text = m["unreadable"]?["acl"]?.stringValue { object.unreadableACL = text }
        try database.write { c in
            try StorageStore.createBucket(c, bucket, now: now)
            object.blobID = try writer.commit(c)
            if let old = try StorageStore.object(c, bucket: bucket, name: name) { try StorageStore.delete(c, old) }
            try StorageStore.write(c, object)
        }
        writer.committed()
    }
}

extension StoredObject {
    /// The object's metadata as the Firebase emulator stores and exports it (`StoredFileMetadata`):
    /// numbers as numbers, `crc32c` as the decimal value, tokens in `downloadTokens`.
    var exportJSON: JSON {
        var m: [(String, JSON)] = [
            ("name", .string(name)), ("bucket", .string(bucket)), ("generation", .int(generation)),
            ("metageneration", .int(metageneration)),
        ]
        if let contentType { m.append(("contentType", .string(contentType))) }
        m += [
            ("timeCreated", .string(timeCreated.rfc3339(fractionDigits: 6))), ("updated", .string(updated.rfc3339(fractionDigits: 6))),
            ("storageClass", .string("STANDARD")), ("size", .int(size)),
        ]
        if !md5.isEmpty { m.append(("md5Hash", .string(md5Base64))) }
        for (k, v) in [("contentEncoding", contentEncoding), ("contentDisposition", contentDisposition),
                       ("contentLanguage", contentLanguage), ("cacheControl", cacheControl)] {
            if let v { m.append((k, .string(v))) }
        }
        // Hearth's own field (the Firebase emulator has no customTime): kept across export and import.
        if let customTime { m.append(("customTime", .string(customTime.rfc3339(fractionDigits: 6)))) }
        if let componentCount { m.append(("componentCount", .int(componentCount))) }
        m += [("crc32c", .string(String(crc32c))), ("etag", .string(etag)), ("downloadTokens", .array(downloadTokens.map { .string($0) }))]
        let custom = metadata.filter { $0.0 != Self.downloadTokensKey }
        if !custom.isEmpty { m.append(("customMetadata", .object(JSONObject(custom.map { ($0.0, JSON.string($0.1)) })))) }
        // Hearth's own: the legacy ACL (none stored: the bucket's default applies, as before export).
        if let acl { m.append(("acl", AccessControlEntry.storedJSON(acl))) }
        if let unreadableACL { m.append(("unreadable", .object(["acl": .string(unreadableACL)]))) }
        return .object(JSONObject(m))
    }
}

/// File names for object names in one bucket's `blobs/` and `metadata/` folders.
struct ExportFileNames {
    // Compared lower-cased: on a case-insensitive file system (macOS) `A` and `a` are one file.
    private var taken = Set<String>()

    /// Unreserved characters stay as they are, every other byte becomes %XX.
    private static let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~".utf8)

    mutating func file(for name: String) -> String {
        var encoded = ""
        for b in name.utf8 {
            if Self.kept.contains(b) { encoded.append(Character(Unicode.Scalar(b))) } else { encoded += String(format: "%%%02X", b) }
        }
        // 200 bytes leaves room for ".json" within the usual 255-byte file-name limit.
        if encoded.utf8.count <= 200, taken.insert(encoded.lowercased()).inserted { return encoded }
        let hashed = "sha256-" + Digest.sha256(Array(name.utf8)).map { String(format: "%02x", $0) }.joined()
        var candidate = hashed
        var n = 1
        while !taken.insert(candidate.lowercased()).inserted {
            n += 1
            candidate = "\(hashed)-\(n)"
        }
        return candidate
    }
}

extension StoredBucket {
    /// The bucket's entry in `buckets.json`: the Firebase emulator's `id`, then Hearth's own
    /// fields (each only when it differs from a new bucket's).
    var exportJSON: JSON {
        var m: [(String, JSON)] = [
            ("id", .string(name)), ("metageneration", .int(metageneration)),
            ("timeCreated", .string(created.rfc3339(fractionDigits: 6))), ("updated", .string(updated.rfc3339(fractionDigits: 6))),
        ]
        if unreadable[.settings] == nil && !settings.isEmpty { m.append(("settings", .object(settings))) }
        for (column, list) in [(Column.acl, acl), (.defaultObjectAcl, defaultObjectAcl)] where unreadable[column] == nil {
            if let list { m.append((column == .acl ? "acl" : "defaultObjectAcl", AccessControlEntry.storedJSON(list))) }
        }
        if unreadable[.iamPolicy] == nil, let iamPolicy { m.append(("iamPolicy", iamPolicy)) }
        if !unreadable.isEmpty {
            m.append(("unreadable", .object(JSONObject(unreadable.sorted { $0.key.rawValue < $1.key.rawValue }.map { ($0.key.rawValue, .string($0.value)) }))))
        }
        return .object(JSONObject(m))
    }

    /// A bucket from its `buckets.json` entry, each field checked as a stored row is read; nil
    /// for an entry that carries nothing but its `id`.
    /// - Throws: `StorageError.invalid` naming the field that does not decode.
    init?(exported e: JSON, now: Instant) throws(StorageError) {
        guard let name = e["id"]?.stringValue else { throw .required("no \"id\"") }
        let keys = ["metageneration", "settings", "acl", "defaultObjectAcl", "iamPolicy", "unreadable"]
        guard keys.contains(where: { e[$0] != nil }) else { return nil }
        let created = e["timeCreated"]?.stringValue.flatMap { Instant(rfc3339: $0) } ?? now
        self.init(name: name, created: created, updated: e["updated"]?.stringValue.flatMap { Instant(rfc3339: $0) } ?? created,
                  metageneration: max(1, e["metageneration"]?.intValue ?? 1), settings: JSONObject(), acl: nil,
                  defaultObjectAcl: nil, iamPolicy: nil)
        if let s = e["settings"] {
            guard let decoded = Self.decodeSettings(s.serialized()) else { throw .invalid("\"settings\" do not decode") }
            settings = decoded
        }
        func list(_ key: String) throws(StorageError) -> [AccessControlEntry]? {
            guard let v = e[key] else { return nil }
            guard let decoded = AccessControlEntry.decode(v.serialized()) else { throw .invalid("\"\(key)\" does not decode") }
            return decoded
        }
        if let decoded = try list("acl") { acl = decoded }
        if let decoded = try list("defaultObjectAcl") { defaultObjectAcl = decoded }
        if let p = e["iamPolicy"] {
            guard let decoded = Self.decodeIAMPolicy(p.serialized()) else { throw .invalid("\"iamPolicy\" does not decode") }
            iamPolicy = decoded
        }
        // Set last: the properties' observers above clear the column's unreadable text.
        for (k, v) in e["unreadable"]?.objectValue ?? [:] {
            guard let column = Column(rawValue: k), let text = v.stringValue else { throw .invalid("\"unreadable\" names \(k)") }
            unreadable[column] = text
        }
    }
}
