import Foundation
import HearthBlobs
import HearthCore
import HearthCrypto

/// Encryption at rest (docs/s3.md, *Server-side encryption*): envelope encryption as S3 and KMS do
/// it. Every encrypted object (and multipart upload) has its own random data key, which seals its
/// chunk rows (`BlobDataKey`, AES-256-GCM per chunk); the data key is stored only wrapped
/// (AES-256-GCM) in the object's `extra` under the key its encryption names — the client's SSE-C
/// key, the key ring's KMS key, or the SSE-S3 master key.
extension S3Service {
    /// The local KMS key ring.
    var keyRing: KMSKeyRing { KMSKeyRing(database: database, region: configuration.region) }

    /// The SSE-C key the request's headers under `prefix` carry (already validated by then; nil
    /// when absent or malformed).
    static func customerKey(_ ctx: S3Context, prefix: String = "x-amz-server-side-encryption-customer-") -> SSECustomerKey? {
        guard ctx.mayHaveHeader(prefix: prefix) else { return nil }  // spares building four names on every write
        if case .success(let key?) = SSECustomerKey.fromHeaders({ ctx.header($0) }, prefix: prefix) { return key }
        return nil
    }

    /// The key-encryption key for an object stored with `extra` (nil: stored as sent).
    private func wrappingKey(_ extra: ObjectExtra, customerKey: SSECustomerKey?) throws -> Result<[UInt8]?, S3Error> {
        if let md5 = extra.customerKeyMD5 {
            guard let customerKey, customerKey.md5 == md5 else { return .failure(.accessDenied(message: "Access Denied")) }
            return .success(customerKey.key)
        }
        guard let sse = extra.sse else { return .success(nil) }
        if sse == "AES256" { return .success(try keyRing.sseS3Key(ids: ids, now: clock.now()).material) }
        guard let arn = extra.kmsKeyID, let id = KMSKeyRing.keyID(fromARN: arn), let key = try keyRing.key(id: id) else {
            return .failure(.plain(.kmsNotFound(message: "Key '\(extra.kmsKeyID ?? "")' does not exist")))
        }
        return .success(key.material)
    }

    /// For a new object or upload whose settings are `extra`: its data key (`reuse`, or a fresh
    /// one), recorded wrapped in `extra.dataKey`; nil when the object is stored as sent.
    ///
    /// Objects without a requested encryption (no header, no bucket default configuration) are
    /// stored as sent, though answered as SSE-S3 as S3 answers them: the answer is the same, and
    /// the hot path stays free of cipher work.
    func sealNew(_ extra: inout ObjectExtra, customerKey: SSECustomerKey?, reuse: BlobDataKey? = nil) -> Result<BlobDataKey?, S3Error> {
        extra.dataKey = nil
        let kek: [UInt8]
        do {
            switch try wrappingKey(extra, customerKey: customerKey) {
            case .failure(let e): return .failure(e)
            case .success(nil): return .success(nil)
            case .success(let k?): kek = k
            }
        } catch {
            logger.error("s3 key ring read failed", [("error", .string("\(error)"))])
            return .failure(.internalError)
        }
        let dataKey = reuse ?? BlobDataKey.random()
        extra.dataKey = Data(AESGCM.seal(dataKey.bytes, key: kek)).base64EncodedString()
        return .success(dataKey)
    }

    /// The data key of an existing object or upload stored with `extra` (nil: stored as sent).
    /// The wrong SSE-C key is 403 `AccessDenied`, as S3 answers it.
    func dataKey(of extra: ObjectExtra, customerKey: SSECustomerKey?) -> Result<BlobDataKey?, S3Error> {
        guard let wrapped = extra.dataKey else { return .success(nil) }
        do {
            switch try wrappingKey(extra, customerKey: customerKey) {
            case .failure(let e): return .failure(e)
            case .success(nil): return .success(nil)
            case .success(let kek?):
                guard let box = Data(base64Encoded: wrapped).map(Array.init), let bytes = try? AESGCM.open(box, key: kek),
                      let key = BlobDataKey(bytes) else {
                    return .failure(.accessDenied(message: "Access Denied"))
                }
                return .success(key)
            }
        } catch {
            logger.error("s3 key ring read failed", [("error", .string("\(error)"))])
            return .failure(.internalError)
        }
    }

    /// The ETag of a single-part object: the MD5 of its bytes, except for SSE-C and SSE-KMS
    /// objects, whose ETag S3 documents as "not an MD5 digest of their object data". Hearth's is
    /// 32 hex digits derived from the MD5 and the object's data key, so it stays stable for the
    /// object, changes with its content, and reveals nothing about the plaintext.
    static func etag(md5: [UInt8], extra: ObjectExtra, dataKey: BlobDataKey?) -> String {
        guard let dataKey, hasDerivedETag(extra) else { return ETag.quoted(md5: md5) }
        return ETag.quoted(md5: Array(HMAC.sha256(key: dataKey.bytes, data: md5).prefix(16)))
    }

    /// Whether an object stored with `extra` has an ETag that is not the MD5 of its bytes (SSE-C, SSE-KMS).
    static func hasDerivedETag(_ extra: ObjectExtra) -> Bool {
        extra.dataKey != nil && (extra.customerKeyMD5 != nil || (extra.sse != nil && extra.sse != "AES256"))
    }
}
