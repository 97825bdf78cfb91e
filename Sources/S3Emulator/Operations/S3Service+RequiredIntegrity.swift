import Foundation
import HearthCrypto

extension S3Service {
    /// The integrity header S3 requires on some configuration uploads (PutBucketCors,
    /// DeleteObjects): `Content-MD5` or an `x-amz-checksum-*` header, verified against `body`.
    static func verifyRequiredIntegrity(_ ctx: S3Context, body: [UInt8]) -> S3Error? {
        let checksum: (algorithm: ChecksumAlgorithm, digest: [UInt8])?
        switch UploadHeaders.checksumHeaders(ctx.request.headers.fields) {
        case .failure(let e): return e
        case .success(let c): checksum = c
        }
        let md5Header = ctx.header("Content-MD5")
        guard md5Header != nil || checksum != nil else {
            return .invalidRequest(message: "Missing required header for this request: Content-MD5")
        }
        if let md5Header {
            guard let d = Data(base64Encoded: md5Header.trimmingCharacters(in: .whitespaces)), d.count == 16 else {
                return .invalidDigest(contentMD5: md5Header)
            }
            let actual = Digest.md5(body)
            if [UInt8](d) != actual { return .badDigest(expected: md5Header, calculated: Data(actual).base64EncodedString()) }
        }
        if let checksum, RunningChecksum.checksum(checksum.algorithm, body) != checksum.digest {
            return .checksumMismatch(checksum.algorithm)
        }
        return nil
    }

    /// The same check where S3 only verifies an integrity header that was sent (the other bucket
    /// configuration uploads): nothing to check without one.
    static func verifyOptionalIntegrity(_ ctx: S3Context, body: [UInt8]) -> S3Error? {
        let checksum = ctx.request.headers.fields.contains { field in
            let lower = field.name.lowercased()
            return lower.hasPrefix("x-amz-checksum-") && ChecksumAlgorithm(headerName: lower) != nil
        }
        return ctx.header("Content-MD5") != nil || checksum ? verifyRequiredIntegrity(ctx, body: body) : nil
    }
}
