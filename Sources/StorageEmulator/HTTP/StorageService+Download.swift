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
        return try media(request, object)
    }

    /// The object's bytes (or the `Range` asked for), streamed from the blob the object had when
    /// its metadata was read: the slices are fixed in one read transaction with the metadata.
    func media(_ request: Request, _ object: StoredObject) throws(StorageError) -> Response {
        let size = object.size
        var start: Int64 = 0, end = size
        var partial = false
        if let header = request.headers["Range"], size > 0, let r = Self.parseRange(header, size: size) {
            guard let (a, b) = r else { throw .rangeNotSatisfiable(size: size) }
            start = a
            end = b
            partial = true
        }
        let found = try read { c -> (StoredObject, [StorageBlobs.Segment])? in
            guard let current = try StorageStore.object(c, bucket: object.bucket, name: object.name),
                  current.generation == object.generation else { return nil }
            return (current, try StorageBlobs.segments(c, blobID: current.blobID, start: start, end: end))
        }
        guard let (current, segments) = found else { throw .noSuchObject(bucket: object.bucket, name: object.name) }
        var h = HTTPHeaders()
        h.set("Content-Type", current.contentType ?? "application/octet-stream")
        h.set("Accept-Ranges", "bytes")
        h.set("ETag", "\"\(current.etag)\"")
        h.set("Last-Modified", current.updated.httpDate)
        h.set("x-goog-generation", String(current.generation))
        h.set("x-goog-metageneration", String(current.metageneration))
        h.set("x-goog-stored-content-length", String(current.size))
        h.set("x-goog-stored-content-encoding", current.contentEncoding ?? "identity")
        h.set("x-goog-storage-class", "STANDARD")
        h.set("x-goog-hash", current.googHash)
        if let v = current.contentEncoding { h.set("Content-Encoding", v) }
        if let v = current.contentDisposition { h.set("Content-Disposition", v) }
        if let v = current.contentLanguage { h.set("Content-Language", v) }
        if let v = current.cacheControl { h.set("Cache-Control", v) }
        if partial { h.set("Content-Range", "bytes \(start)-\(end - 1)/\(size)") }
        let source = StorageBodySource(database: database, segments: segments, start: start, end: end)
        return Response(status: partial ? 206 : 200, headers: h, body: .stream(length: end - start, source: source))
    }

    /// A single `bytes=` range as a half-open interval: nil when the header is not one range
    /// (served whole, as GCS does), `.some(nil)` when it is unsatisfiable.
    static func parseRange(_ header: String, size: Int64) -> (Int64, Int64)?? {
        let h = header.trimmingCharacters(in: .whitespaces)
        guard h.lowercased().hasPrefix("bytes="), !h.contains(",") else { return nil }
        let spec = h.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces), last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let n = Int64(last) else { return nil }
            if n == 0 { return .some(nil) }
            return .some((max(0, size - n), size))
        }
        guard let a = Int64(first) else { return nil }
        let b = last.isEmpty ? size - 1 : (Int64(last) ?? -1)
        guard b >= a else { return nil }
        if a >= size { return .some(nil) }
        return .some((a, min(b, size - 1) + 1))
    }
}
