import Foundation
import HearthBlobs
import HearthCore
import HearthHTTP

/// What a verified upload body produced.
struct UploadedBody {
    let size: Int64
    let md5: [UInt8]
    /// Every checksum computed, by algorithm.
    let checksums: [ChecksumAlgorithm: [UInt8]]
}

/// Streams a PutObject / UploadPart body into a staging blob and commits it only when every check
/// passed: the payload signature (chunk signatures, payload hash, trailer and header checksums,
/// decoded length — the `PayloadVerifier`), the length the client announced, and `Content-MD5`.
/// Any failure, or the client going away, deletes the staged bytes and leaves the previous object
/// untouched.
final class UploadConsumer: RequestBodyConsumer {
    typealias Commit = (_ writer: BlobWriter, _ body: UploadedBody) throws -> Response

    private let service: S3Service
    private let ctx: S3Context
    private let headers: UploadHeaders
    private let writer: BlobWriter
    private let maxSize: Int64
    private let commit: Commit
    private var failure: S3Error?
    private var writeError: (any Error)?

    /// - Parameter checksums: algorithms whose values the commit needs; those the payload verifier
    ///   computes anyway (a declared trailer or checksum header) are taken from it, not recomputed.
    /// - Parameter dataKey: seals the stored chunks (an encrypted object or upload).
    init(service: S3Service, ctx: S3Context, headers: UploadHeaders, checksums: [ChecksumAlgorithm], maxSize: Int64,
         dataKey: BlobDataKey? = nil, commit: @escaping Commit) {
        self.service = service
        self.ctx = ctx
        self.headers = headers
        self.maxSize = maxSize
        self.commit = commit
        let verified = Set([ctx.auth?.declaredTrailer, ctx.auth?.headerChecksum?.algorithm].compactMap { $0 })
        writer = BlobWriter(database: service.database, now: ctx.now, checksums: checksums.filter { !verified.contains($0) },
                            dataKey: dataKey)
    }

    func consume(_ chunk: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        do throws(SigV4Failure) {
            if let payload = ctx.payload {
                try payload.feed(chunk) { decoded in append(decoded) }
            } else {
                append(chunk)
            }
        } catch {
            failure = .signature(error)
        }
        if failure == nil, let writeError {
            service.logger.error("s3 upload write failed", [("requestId", .string(ctx.request.id)), ("error", .string("\(writeError)"))])
            failure = .internalError
        }
        if failure == nil, writer.size > maxSize {
            failure = .entityTooLarge(proposedSize: writer.size, maxSize: maxSize)
        }
        // Nothing more will be kept: free the staged chunks now rather than at the end of the body.
        if failure != nil { writer.discard() }
    }

    private func append(_ bytes: UnsafeRawBufferPointer) {
        guard writeError == nil, writer.size <= maxSize else { return }
        do {
            try writer.append(bytes)
        } catch {
            writeError = error
        }
    }

    func finish() -> Response {
        var verified: VerifiedPayload?
        if failure == nil {
            do throws(SigV4Failure) {
                verified = try ctx.payload?.finish()
            } catch {
                failure = .signature(error)
            }
        }
        if failure == nil, let declared = headers.declaredLength, declared != writer.size {
            failure = .incompleteBody
        }
        if let failure {
            writer.discard()
            return service.complete(ctx, .failure(failure))
        }
        let digests = writer.finalizeDigests()
        var checksums = digests.checksums
        for (algorithm, value) in verified?.checksums ?? [:] where checksums[algorithm] == nil {
            if let bytes = algorithm.decode(value) { checksums[algorithm] = bytes }
        }
        let body = UploadedBody(size: writer.size, md5: digests.md5, checksums: checksums)
        if let md5 = headers.contentMD5, md5.digest != body.md5 {
            writer.discard()
            return service.complete(ctx, .failure(.badDigest(expected: md5.text, calculated: Data(body.md5).base64EncodedString())))
        }
        if let sent = headers.headerChecksum, body.checksums[sent.algorithm] != sent.digest {
            writer.discard()
            return service.complete(ctx, .failure(.checksumMismatch(sent.algorithm)))
        }
        let result = service.attempt(ctx) { try commit(writer, body) }
        switch result {
        case .success: writer.committed()
        case .failure: writer.discard()
        }
        return service.complete(ctx, result)
    }

    func abandon() {
        writer.discard()
        service.recordAbandoned(ctx)
    }
}
