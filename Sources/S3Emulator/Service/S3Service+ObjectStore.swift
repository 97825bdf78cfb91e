import HearthCore

extension S3Service: ObjectStore {
    /// Size, Content-Type and ETag of an object, or nil when it (or its bucket) does not exist; an
    /// archived object not restored now says so by GetObject's own rule (`archivedClass`).
    public func headObject(bucket: String, key: String) -> StoredObjectInfo? {
        guard let r = try? store.object(bucket: bucket, key: key) else { return nil }
        return StoredObjectInfo(size: r.size, contentType: r.effectiveContentType, etag: r.etag, lastModified: r.lastModified,
                                archivedStorageClass: S3Service.archivedClass(r, now: clock.now()))
    }

    /// Creates the bucket (owned by the first configured key) when missing.
    public func ensureBucket(_ bucket: String) throws {
        guard BucketName.isValid(bucket) else { throw S3Error.invalidBucketName(bucket: bucket) }
        try store.ensureBucket(bucket, region: configuration.region, owner: defaultOwner, now: clock.now())
    }

    /// A SigV4 presigned URL on the S3 listener, signed with the first configured key; the
    /// presign ledger remembers it so a mismatching request gets a precise diagnosis.
    public func presignedURL(method: String, bucket: String, key: String, expiresSeconds: Int,
                             signedHeaders: [String: String]) throws -> String {
        do throws(PresignError) {
            return try presigner.presign(method: method.uppercased(), endpoint: publicBaseURL, bucket: bucket, key: key,
                                         headers: signedHeaders.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
                                         expiresSeconds: expiresSeconds).url
        } catch {
            throw S3PresignError(message: error.message)
        }
    }
}

/// Why a URL could not be presigned (bad expiry, no key configured, bad base URL).
public struct S3PresignError: Error, Sendable, CustomStringConvertible {
    /// The reason in plain words.
    public let message: String
    public var description: String { message }
}
