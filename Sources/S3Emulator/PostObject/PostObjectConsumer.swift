import Foundation
import HearthCore
import HearthHTTP

/// Streams a browser form upload: collects the fields before the file (at most 20 KB), decides
/// from them whether the upload is allowed (`planPostObject`), then writes the file part into a
/// staging blob with bounded memory and commits it only when the form ended well and every check
/// passed. Fields after the file are ignored, as S3 ignores them.
///
/// A request signed in its headers has its raw body verified by the payload verifier first; the
/// form is read from what the verifier passes on.
final class PostObjectConsumer: RequestBodyConsumer {
    private enum Phase {
        /// Reading the fields before the file.
        case fields
        /// Reading the file part.
        case file
        /// The file part ended (or the upload was refused): the rest of the body is ignored.
        case done
    }

    private let service: S3Service
    private let ctx: S3Context
    private var reader: MultipartFormReader
    private var phase = Phase.fields
    private var fields: [(name: String, value: String)] = []
    private var fieldName: String?
    private var fieldBytes: [UInt8] = []
    private var plan: PostObjectPlan?
    private var writer: BlobWriter?
    private var fileSize: Int64 = 0
    private var fileComplete = false
    /// The largest file worth keeping: the object limit and every `content-length-range` maximum.
    private var keepLimit: Int64
    private var failure: S3Error?
    private var writeError: (any Error)?

    init(service: S3Service, ctx: S3Context, boundary: [UInt8]) {
        self.service = service
        self.ctx = ctx
        reader = MultipartFormReader(boundary: boundary)
        keepLimit = service.configuration.maxObjectSize
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        if let payload = ctx.payload {
            do throws(SigV4Failure) {
                try payload.feed(chunk) { decoded in read(decoded) }
            } catch {
                fail(.signature(error))
            }
        } else {
            read(chunk)
        }
    }

    private func read(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, phase != .done else { return }
        do throws(MultipartFormReader.Malformed) {
            try reader.feed(bytes) { event in handle(event) }
        } catch {
            fail(.postForm(.malformedBody(reason: error.reason)))
        }
        // Everything read while no file has begun is field data.
        if failure == nil, phase == .fields, reader.position > Int64(PostPolicyFailure.maxPreDataBytes) {
            fail(.postForm(.preDataTooLarge))
        }
    }

    private func handle(_ event: MultipartFormReader.Event) {
        guard failure == nil, phase != .done else { return }
        switch event {
        case .partBegin(let part, let dataOffset):
            guard phase == .fields else { return }
            if part.name.lowercased() == "file" {
                guard dataOffset <= Int64(PostPolicyFailure.maxPreDataBytes) else { return fail(.postForm(.preDataTooLarge)) }
                phase = .file
                beginFile(part)
            } else {
                fieldName = part.name
                fieldBytes.removeAll(keepingCapacity: true)
            }
        case .partData(let bytes):
            if phase == .fields {
                guard fieldBytes.count + bytes.count <= PostPolicyFailure.maxPreDataBytes else { return fail(.postForm(.preDataTooLarge)) }
                fieldBytes.append(contentsOf: bytes)
            } else {
                write(bytes)
            }
        case .partEnd:
            if phase == .fields, let name = fieldName {
                fields.append((name, String(decoding: fieldBytes, as: UTF8.self)))
                fieldName = nil
            } else if phase == .file {
                fileComplete = true
                phase = .done
            }
        case .end:
            break
        }
    }

    private func beginFile(_ part: MultipartFormReader.Part) {
        switch service.planPostObject(ctx, fields: fields, filename: part.filename) {
        case .failure(let e):
            fail(e)
        case .success(let p):
            plan = p
            for range in p.lengthRanges { keepLimit = min(keepLimit, range.max) }
            writer = BlobWriter(database: service.database, now: ctx.now, checksums: p.checksumAlgorithm.map { [$0] } ?? [], dataKey: p.dataKey)
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) {
        fileSize += Int64(bytes.count)
        guard let writer, writeError == nil else { return }
        if fileSize > keepLimit {
            // It will be refused for its size; stop storing but keep counting, as S3 reports the size.
            writer.discard()
            return
        }
        do {
            try writer.append(bytes)
        } catch {
            writeError = error
            service.logger.error("s3 form upload write failed", [("requestId", .string(ctx.request.id)), ("error", .string("\(error)"))])
            fail(.internalError)
        }
    }

    private func fail(_ error: S3Error) {
        guard failure == nil else { return }
        failure = error
        phase = .done
        writer?.discard()
    }

    func finish() -> Response {
        if let payload = ctx.payload {
            // The verifier saw the whole body (it is fed even after the form stopped mattering):
            // a body that does not match its signature is refused for that first.
            do throws(SigV4Failure) {
                _ = try payload.finish()
            } catch {
                writer?.discard()
                return service.complete(ctx, .failure(.signature(error)))
            }
        }
        if let failure { return service.complete(ctx, .failure(failure)) }
        guard fileComplete, let plan, let writer else {
            if phase == .fields {
                do throws(MultipartFormReader.Malformed) {
                    try reader.finish()
                } catch {
                    return service.complete(ctx, .failure(.postForm(.malformedBody(reason: error.reason))))
                }
                return service.complete(ctx, .failure(.postForm(.noFile)))
            }
            self.writer?.discard()
            return service.complete(ctx, .failure(.postForm(.malformedBody(
                reason: "the body ended inside the file part, before the boundary line that closes it"))))
        }
        let result = commit(plan, writer)
        switch result {
        case .success: writer.committed()
        case .failure: writer.discard()
        }
        return service.complete(ctx, result)
    }

    private func commit(_ plan: PostObjectPlan, _ writer: BlobWriter) -> Result<Response, S3Error> {
        for range in plan.lengthRanges {
            if fileSize < range.min { return .failure(.postForm(.fileTooSmall(size: fileSize, min: range.min))) }
            if fileSize > range.max { return .failure(.postForm(.fileTooLarge(size: fileSize, max: range.max))) }
        }
        let maxSize = service.configuration.maxObjectSize
        if fileSize > maxSize { return .failure(.entityTooLarge(proposedSize: fileSize, maxSize: maxSize)) }
        let digests = writer.finalizeDigests()
        if let md5 = plan.contentMD5, md5.digest != digests.md5 {
            return .failure(.badDigest(expected: md5.text, calculated: Data(digests.md5).base64EncodedString()))
        }
        if let declared = plan.declaredChecksum, digests.checksums[declared.algorithm] != declared.digest {
            return .failure(.checksumMismatch(declared.algorithm))
        }
        let etag = S3Service.etag(md5: digests.md5, extra: plan.metadata.extra, dataKey: plan.dataKey)
        let checksum = plan.checksumAlgorithm.flatMap { a in
            digests.checksums[a].map { ObjectChecksum(algorithm: a, value: Data($0).base64EncodedString(), type: "FULL_OBJECT") }
        }
        let now = Instant(unixSeconds: service.clock.now().unixSeconds)
        let size = fileSize
        return service.attempt(ctx) {
            let versionID = try service.database.write { c in
                let blob = try writer.commit(c)
                let record = ObjectRecord(bucket: ctx.bucket, key: plan.key, blobID: blob, size: size, etag: etag, lastModified: now,
                                          metadata: plan.metadata, checksum: checksum, partSizes: nil,
                                          owner: plan.owner ?? service.defaultOwner)
                return try S3Store.storeObject(c, record, condition: S3Store.WriteCondition(), newVersionID: service.newVersionID)
            }
            var response = service.postObjectResponse(ctx, plan: plan, etag: etag, checksum: checksum)
            if let versionID { response.headers.add("x-amz-version-id", versionID) }
            return response
        }
    }

    func abandon() {
        writer?.discard()
        service.recordAbandoned(ctx)
    }
}
