import Foundation
import HearthBlobs
import HearthCore
import HearthHTTP

extension StorageService {
    /// Which API a response is shaped for.
    enum API { case gcs, firebase }

    /// `GET …?alt=media` through the JSON API (privileged).
    func download(_ request: Request, bucket: String, name: String, api: API) throws(StorageError) -> Response {
        let object = try existing(request, bucket: bucket, name: name)
        var response = try media(request, object)
        // The JSON API sends the ETag bare, the resource's `etag` itself (`ETag: CAE=`), not quoted
        // as the XML API and the shared media headers have it; google-cloud-storage copies the
        // header into `blob.etag` after a download, and its own system tests compare the two.
        if let e = response.headers["ETag"], e.utf8.count >= 2, e.hasPrefix("\""), e.hasSuffix("\"") {
            response.headers.set("ETag", String(e.dropFirst().dropLast()))
        }
        return response
    }

    /// Bytes of an object planned in the read that found its metadata: the range to send and
    /// either the bytes themselves (a body up to `inlineLimit`) or the slices to stream them from.
    struct MediaBody {
        var start: Int64
        var end: Int64
        var partial: Bool
        var bytes: [UInt8]?
        var segments: [StorageBlobs.Segment]
        /// The object's media headers when a cache entry had them built.
        var headers: HTTPHeaders?
        /// Served decompressed (GCS's decompressive transcoding): the whole stored object, inflated.
        var transcode = false
    }

    /// Bodies up to one chunk row are read in the metadata's transaction and sent from memory
    /// (as S3's GetObject does); larger ones stream a chunk at a time.
    static let inlineLimit = Int64(StorageBlobWriter.chunkSize)

    /// The live object `bucket`/`name` and, when `mayRead` says the caller may have its bytes, the
    /// bytes the request's `Range` asks for, in one snapshot (the bytes are the metadata's): from
    /// the download cache when no write has happened since it was filled, else in one read
    /// transaction. `mayRead` is pure (a token check, a generation check): it runs inside the read.
    /// A download that GCS would transcode (`GzipTranscoding`) ignores `Range` and plans the whole object.
    /// - Throws: `noSuchBucket`; `rangeNotSatisfiable` for a readable object.
    func readMedia(_ request: Request, bucket: String, name: String,
                   mayRead: (StoredObject) -> Bool) throws(StorageError) -> (object: StoredObject?, body: MediaBody?) {
        let range = request.headers["Range"]
        // Read before the transaction, so an entry it stores is never labelled newer than its data.
        let generation = database.writeGeneration
        let key = ObjectKey(bucket: bucket, name: name)
        let cached = objectCache.lookup(key, generation: generation)
        if let cached, let bytes = cached.bytes {
            // No write since the entry was read: it is the live object, bytes and all.
            guard mayRead(cached.object) else { return (cached.object, nil) }
            let transcode = GzipTranscoding.applies(to: cached.object, request: request) && GzipTranscoding.isGzip(bytes)
            var body = try Self.plan(transcode ? nil : range, size: cached.object.size)
            body.bytes = body.partial ? Array(bytes[Int(body.start)..<Int(body.end)]) : bytes
            body.headers = cached.headers
            body.transcode = transcode
            return (cached.object, body)
        }
        return try read { c -> (StoredObject?, MediaBody?) in
            let object: StoredObject
            var slices: [StorageBlobs.Segment]?
            var headers: HTTPHeaders?
            if let cached, let v = try StorageStore.objectVersion(c, bucket: bucket, name: name),
               v.generation == cached.object.generation, v.metageneration == cached.object.metageneration, v.blobID == cached.object.blobID {
                object = cached.object
                slices = cached.segments
                headers = cached.headers
            } else {
                guard let found = try StorageStore.object(c, bucket: bucket, name: name) else {
                    // A bucket with objects cannot be deleted, so only a miss asks about the bucket.
                    guard try StorageStore.bucketExists(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
                    return (nil, nil)
                }
                object = found
                if found.size <= Self.inlineLimit {
                    let whole = try StorageBlobs.segments(c, blobID: found.blobID, start: 0, end: found.size)
                    let bytes = found.size <= ObjectReadCache.bytesLimit
                        ? try StorageBodySource.bytes(c, segments: whole, start: 0, end: found.size) : nil
                    let h = Self.mediaHeaders(found)
                    objectCache.store(key, ObjectReadEntry(object: found, segments: whole, bytes: bytes, headers: h), generation: generation)
                    (slices, headers) = (whole, h)
                }
            }
            guard mayRead(object) else { return (object, nil) }
            var transcode = false
            if GzipTranscoding.applies(to: object, request: request) {
                // The first bytes decide whether the stored object is gzip at all.
                let n = min(object.size, 3)
                let head = try slices.map { s in s.filter { $0.offset < n } }
                    ?? StorageBlobs.segments(c, blobID: object.blobID, start: 0, end: n)
                transcode = GzipTranscoding.isGzip(try StorageBodySource.bytes(c, segments: head, start: 0, end: n))
            }
            var body = try Self.plan(transcode ? nil : range, size: object.size)
            body.headers = headers
            body.transcode = transcode
            if let slices {
                let (start, end) = (body.start, body.end)
                body.segments = slices.filter { $0.offset < end && $0.offset + $0.length > start }
            } else {
                body.segments = try StorageBlobs.segments(c, blobID: object.blobID, start: body.start, end: body.end)
            }
            if body.end - body.start <= Self.inlineLimit {
                body.bytes = try StorageBodySource.bytes(c, segments: body.segments, start: body.start, end: body.end)
            }
            return (object, body)
        }
    }

    /// The part of an object of `size` bytes that `range` (the request's `Range`, if any) asks for.
    /// - Throws: `rangeNotSatisfiable`.
    static func plan(_ range: String?, size: Int64) throws(StorageError) -> MediaBody {
        var body = MediaBody(start: 0, end: size, partial: false, bytes: nil, segments: [])
        if let range, let r = parseRange(range, size: size) {
            guard let (a, b) = r else { throw .rangeNotSatisfiable(size: size) }
            (body.start, body.end, body.partial) = (a, b, true)
        }
        return body
    }

    /// The object's bytes (or the `Range` asked for), read again together with its metadata so
    /// both belong to the generation `object` names (a newer one answers 404).
    func media(_ request: Request, _ object: StoredObject) throws(StorageError) -> Response {
        let found = try readMedia(request, bucket: object.bucket, name: object.name) { $0.generation == object.generation }
        guard let current = found.object, let body = found.body else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
        return mediaResponse(current, body)
    }

    /// The headers GCS sends with an object's bytes (a partial answer adds `Content-Range`).
    static func mediaHeaders(_ current: StoredObject) -> HTTPHeaders {
        // A fresh set of distinct names: `add` skips `set`'s search for an earlier field.
        var h = HTTPHeaders()
        h.add("Content-Type", current.contentType ?? "application/octet-stream")
        h.add("Accept-Ranges", "bytes")
        h.add("ETag", "\"\(current.etag)\"")
        h.add("Last-Modified", current.updated.httpDate)
        h.add("x-goog-generation", String(current.generation))
        h.add("x-goog-metageneration", String(current.metageneration))
        h.add("x-goog-stored-content-length", String(current.size))
        h.add("x-goog-stored-content-encoding", current.contentEncoding ?? "identity")
        h.add("x-goog-storage-class", "STANDARD")
        h.add("x-goog-hash", current.googHash)
        if let v = current.contentEncoding { h.add("Content-Encoding", v) }
        if let v = current.contentDisposition { h.add("Content-Disposition", v) }
        if let v = current.contentLanguage { h.add("Content-Language", v) }
        if let v = current.cacheControl { h.add("Cache-Control", v) }
        return h
    }

    /// The answer carrying `body` of `object`, with the headers GCS sends with object bytes.
    func mediaResponse(_ current: StoredObject, _ body: MediaBody) -> Response {
        var h = body.headers ?? Self.mediaHeaders(current)
        // Bytes already in memory are inflated once before any header goes out: when they are not
        // whole gzip the object is served as stored, as one that does not open a gzip member is.
        if body.transcode, body.bytes.map(GzipTranscoding.inflatesWhole) != false {
            // No Content-Length: the inflated size is known only once it is sent (chunked).
            h = GzipTranscoding.transcodedHeaders(h)
            let stored: any ResponseBodySource = body.bytes.map { BytesBodySource($0) }
                ?? StorageBodySource(database: database, segments: body.segments, start: body.start, end: body.end)
            return Response(status: 200, headers: h, body: .stream(length: nil, source: GunzipBodySource(inner: stored)))
        }
        if body.partial { h.add("Content-Range", "bytes \(body.start)-\(body.end - 1)/\(current.size)") }
        let status = body.partial ? 206 : 200
        if let bytes = body.bytes { return Response(status: status, headers: h, body: .bytes(bytes)) }
        let source = StorageBodySource(database: database, segments: body.segments, start: body.start, end: body.end)
        return Response(status: status, headers: h, body: .stream(length: body.end - body.start, source: source))
    }

    /// A single `bytes=` range as a half-open interval: nil when the header is not one valid range
    /// (served whole, as GCS does), `.some(nil)` when it is unsatisfiable (416).
    ///
    /// As GCS (and RFC 9110 §14.1.1): a range that starts at or past the end is unsatisfiable, so
    /// `bytes=N-` with N = the size is 416, and so is any first-byte range of an empty object
    /// (`bytes=0-` included). A suffix range `bytes=-N` (N > 0) of an empty object is satisfiable by
    /// the RFC but has no byte to send, so the whole (empty) object answers 200; `bytes=-0` is 416.
    static func parseRange(_ header: String, size: Int64) -> (Int64, Int64)?? {
        let h = header.trimmingCharacters(in: .whitespaces)
        guard h.lowercased().hasPrefix("bytes="), !h.contains(",") else { return nil }
        let spec = h.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces), last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let n = Int64(last), n >= 0 else { return nil }
            if n == 0 { return .some(nil) }
            if size == 0 { return nil }
            return .some((max(0, size - n), size))
        }
        guard let a = Int64(first), a >= 0 else { return nil }
        let b: Int64
        if last.isEmpty {
            b = .max
        } else {
            guard let v = Int64(last) else { return nil }
            b = v
        }
        // `last < first` is not a valid range: the header is ignored (RFC 9110 §14.2).
        guard b >= a else { return nil }
        if a >= size { return .some(nil) }
        return .some((a, min(b, size - 1) + 1))
    }
}
