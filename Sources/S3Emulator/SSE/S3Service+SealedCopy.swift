import Foundation
import HearthBlobs
import HearthCore
import HearthHTTP

/// Copies whose bytes must be rewritten because the source and destination are not sealed with the
/// same data key: plain to encrypted or back (CopyObject), and any UploadPartCopy where either side
/// is encrypted (an upload has its own data key). The bytes stream through one chunk-sized buffer:
/// opened with the source's key, sealed with the destination's by the `BlobWriter`.
extension S3Service {
    /// Streams bytes `range` of `blobID` (opened with `key`) into `writer`.
    func copyBytes(_ blobID: Int64, range: Range<Int64>, key: BlobDataKey?, into writer: BlobWriter) throws {
        let segments = try database.read { c in try BlobStore.segments(c, blobID: blobID, start: range.lowerBound, end: range.upperBound) }
        let source = BlobBodySource(database: database, segments: segments, start: range.lowerBound, end: range.upperBound, dataKey: key)
        defer { source.close() }
        var buffer = [UInt8](repeating: 0, count: BlobWriter.chunkSize)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try writer.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }

    /// CopyObject by rewriting the bytes; nil when the source changed meanwhile (the caller retries).
    func copyRewritten(_ ctx: S3Context, source: CopySource, found: FoundSource, metadata: ObjectMetadata, owner: String,
                       keys: (source: BlobDataKey?, destination: BlobDataKey?), checksum algorithm: ChecksumAlgorithm?,
                       condition: S3Store.WriteCondition) -> Result<Response, S3Error>? {
        let record = found.record
        let writer = BlobWriter(database: database, now: ctx.now, checksums: algorithm.map { [$0] } ?? [], dataKey: keys.destination)
        if case .failure(let e) = attempt(ctx, { try copyBytes(record.blobID, range: 0..<record.size, key: keys.source, into: writer) }) {
            writer.discard()
            return .failure(e)
        }
        let digests = writer.finalizeDigests()
        let etag = S3Service.etag(md5: digests.md5, extra: metadata.extra, dataKey: keys.destination)
        let checksum = algorithm.flatMap { a in
            digests.checksums[a].map { ObjectChecksum(algorithm: a, value: Data($0).base64EncodedString(), type: "FULL_OBJECT") }
        }
        let now = Instant(unixSeconds: clock.now().unixSeconds)
        let result = attempt(ctx) { () throws -> String?? in
            do {
                return try database.write { c in
                    guard let current = try S3Service.currentSource(c, source), current.blobID == record.blobID else { throw SourceChanged() }
                    let blob = try writer.commit(c)
                    let stored = ObjectRecord(bucket: ctx.bucket, key: ctx.key, blobID: blob, size: record.size, etag: etag,
                                              lastModified: now, metadata: metadata, checksum: checksum, partSizes: nil, owner: owner)
                    return .some(try S3Store.storeObject(c, stored, condition: condition, newVersionID: newVersionID))
                }
            } catch is SourceChanged {
                return .none
            }
        }
        switch result {
        case .failure(let e):
            writer.discard()
            return .failure(e)
        case .success(.none):
            writer.discard()
            return nil
        case .success(.some(let versionID)):
            writer.committed()
            return .success(copyObjectResponse(now: now, etag: etag, checksum: checksum, found: found, versionID: versionID, extra: metadata.extra))
        }
    }

    /// UploadPartCopy by rewriting the bytes under the upload's data key.
    func copyPartSealed(_ ctx: S3Context, upload: UploadRecord, number: Int, source: CopySource, found: FoundSource,
                        range: Range<Int64>, keys: (source: BlobDataKey?, part: BlobDataKey?)) -> Result<Response, S3Error> {
        let algorithm = upload.checksumAlgorithm
        let writer = BlobWriter(database: database, now: ctx.now, checksums: algorithm.map { [$0] } ?? [], dataKey: keys.part)
        if case .failure(let e) = attempt(ctx, { try copyBytes(found.record.blobID, range: range, key: keys.source, into: writer) }) {
            writer.discard()
            return .failure(e)
        }
        let digests = writer.finalizeDigests()
        let etag = ETag.quoted(md5: digests.md5)
        let checksum = algorithm.flatMap { digests.checksums[$0] }.map { Data($0).base64EncodedString() }
        let now = Instant(unixSeconds: clock.now().unixSeconds)
        let size = writer.size
        let result = attempt(ctx) {
            try database.write { c in
                guard let current = try S3Service.currentSource(c, source), current.blobID == found.record.blobID else {
                    throw source.versionID.map { S3Error.noSuchVersion(key: source.key, versionID: $0) } ?? S3Error.noSuchKey(key: source.key)
                }
                let blob = try writer.commit(c)
                try S3Store.storePart(c, uploadID: upload.uploadID, bucket: ctx.bucket, key: ctx.key,
                                      part: PartRecord(partNumber: number, blobID: blob, size: size, etag: etag,
                                                       lastModified: now, checksumValue: checksum))
            }
        }
        guard case .success = result else {
            writer.discard()
            return result.map { _ in Response(status: 500, headers: HTTPHeaders(), body: .empty) }
        }
        writer.committed()
        return .success(copyPartResponse(now: now, etag: etag, algorithm: algorithm, checksum: checksum, found: found, upload: upload))
    }

    /// UploadPartCopy's answer.
    func copyPartResponse(now: Instant, etag: String, algorithm: ChecksumAlgorithm?, checksum: String?, found: FoundSource, upload: UploadRecord) -> Response {
        var x = XMLWriter()
        x.group("CopyPartResult", namespace: true) { x in
            x.element("LastModified", now.rfc3339(fractionDigits: 3))
            x.element("ETag", etag)
            if let algorithm, let checksum { x.element(algorithm.xmlName, checksum) }
        }
        var h = HTTPHeaders()
        found.addHeader(to: &h)
        S3Service.addEncryptionHeaders(&h, upload.metadata.extra)
        return S3Service.xmlResponse(x, headers: h)
    }
}
