import Foundation
import HearthCore
import HearthHTTP

/// Object Lock operations and the lock and encryption settings a write asks for in its headers.
extension S3Service {
    static let objectLockKind = "objectLock"

    /// The bucket's Object Lock configuration (nil: lock not enabled).
    /// `known`: the bucket's access settings as this request's authorization read them, if it did.
    func objectLockConfiguration(_ bucket: String, known: S3Store.BucketAccess? = nil) throws -> ObjectLock.Configuration? {
        let stored: String?
        if let known, known.bucket.name == bucket {
            stored = known.objectLock
        } else {
            stored = try store.setting(bucket, kind: S3Service.objectLockKind)
        }
        guard let text = stored else { return nil }
        return try ObjectLock.Configuration.parse(Array(text.utf8)).get()
    }

    // MARK: Get/PutObjectLockConfiguration

    func getObjectLockConfiguration(_ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) { try store.setting(ctx.bucket, kind: S3Service.objectLockKind) }.flatMap { text in
            guard let text else { return .failure(.plain(.objectLockConfigurationNotFound)) }
            return .success(S3Service.storedXML(text))
        }
    }

    func putObjectLockConfiguration(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        let bucket: BucketRecord
        switch requireBucket(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let b): bucket = b
        }
        let config: ObjectLock.Configuration
        switch ObjectLock.Configuration.parse(body) {
        case .failure(let e): return .failure(e)
        case .success(let c): config = c
        }
        guard bucket.versioning == "Enabled" else {
            return .failure(.plain(.invalidBucketState(message: "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")))
        }
        return attempt(ctx) {
            try store.setSetting(ctx.bucket, kind: S3Service.objectLockKind, String(decoding: config.document.bytes, as: UTF8.self), now: ctx.now)
            return Response(status: 200)
        }
    }

    // MARK: Retention and legal hold

    /// The object version a retention / legal hold request names, in a lock-enabled bucket.
    private func lockedObject(_ ctx: S3Context) -> Result<(record: ObjectRecord, versioned: Bool), S3Error> {
        switch attempt(ctx, { try objectLockConfiguration(ctx.bucket, known: ctx.bucketAccess) }) {
        case .failure(let e): return .failure(e)
        case .success(nil): return .failure(.invalidRequest(message: "Bucket is missing Object Lock Configuration"))
        case .success: return requireObject(ctx)
        }
    }

    func getObjectRetention(_ ctx: S3Context) -> Result<Response, S3Error> {
        lockedObject(ctx).flatMap { found in
            let extra = found.record.metadata.extra
            guard let mode = extra.lockMode, let until = extra.lockRetainUntil else {
                return .failure(.plain(.noSuchObjectLockConfiguration(message: "The specified object does not have a ObjectLock configuration")))
            }
            var x = XMLWriter()
            x.group("Retention", namespace: true) { x in
                x.element("Mode", mode)
                x.element("RetainUntilDate", until)
            }
            return .success(S3Service.xmlResponse(x))
        }
    }

    func putObjectRetention(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        lockedObject(ctx).flatMap { found in
            guard let root = try? S3XMLParser.parse(body), root.name == "Retention" else { return .failure(.malformedXML) }
            let mode = root.childText("Mode")
            guard mode == nil || mode == "GOVERNANCE" || mode == "COMPLIANCE" else { return .failure(.malformedXML) }
            var until: Instant?
            if let text = root.childText("RetainUntilDate") {
                guard let d = ObjectLock.parseDate(text) else { return .failure(.malformedXML) }
                until = d
            }
            if let until, until.unixMicros <= ctx.now.unixMicros {
                return .failure(.invalidArgument(message: "The retain until date must be in the future!", name: "RetainUntilDate", value: nil))
            }
            let old = found.record.metadata.extra
            if let oldMode = old.lockMode, let oldUntil = old.lockRetainUntil.flatMap(ObjectLock.parseDate),
               oldUntil.unixMicros > ctx.now.unixMicros {
                let shortens = (until?.unixMicros ?? 0) < oldUntil.unixMicros || mode != oldMode
                if shortens && (oldMode == "COMPLIANCE" || !S3Service.bypassGovernance(ctx)) {
                    return .failure(.accessDenied(message: "Access Denied"))
                }
            }
            return attempt(ctx) {
                try database.write { c in
                    try S3Store.updateExtra(c, bucket: ctx.bucket, key: ctx.key, versionID: found.record.versionName) { extra in
                        extra.lockMode = until == nil ? nil : mode
                        extra.lockRetainUntil = until.map(ObjectLock.format)
                    }
                }
                return Response(status: 200)
            }
        }
    }

    func getObjectLegalHold(_ ctx: S3Context) -> Result<Response, S3Error> {
        lockedObject(ctx).flatMap { found in
            var x = XMLWriter()
            x.group("LegalHold", namespace: true) { $0.element("Status", found.record.metadata.extra.legalHold ? "ON" : "OFF") }
            return .success(S3Service.xmlResponse(x))
        }
    }

    func putObjectLegalHold(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        lockedObject(ctx).flatMap { found in
            guard let root = try? S3XMLParser.parse(body), root.name == "LegalHold", let status = root.childText("Status"),
                  status == "ON" || status == "OFF" else { return .failure(.malformedXML) }
            return attempt(ctx) {
                try database.write { c in
                    try S3Store.updateExtra(c, bucket: ctx.bucket, key: ctx.key, versionID: found.record.versionName) { $0.legalHold = status == "ON" }
                }
                return Response(status: 200)
            }
        }
    }

    // MARK: Settings of a new object

    /// Everything a write's headers say about the new object beyond its stored headers: its ACL
    /// (and so its owner), Object Lock and encryption. Returns the owner.
    func newObjectSettings(_ ctx: S3Context, _ metadata: inout ObjectMetadata) -> Result<String, S3Error> {
        switch requestedObjectACL(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let r):
            metadata.extra.acl = r.acl
            return objectSettings(ctx, &metadata).map { r.owner }
        }
    }

    /// Applies a write's Object Lock headers (or the bucket's default retention) and its
    /// server-side encryption headers (or the bucket's default encryption) to `metadata`.
    func objectSettings(_ ctx: S3Context, _ metadata: inout ObjectMetadata) -> Result<Void, S3Error> {
        let mode = ctx.header("x-amz-object-lock-mode")
        let untilText = ctx.header("x-amz-object-lock-retain-until-date")
        let hold = ctx.header("x-amz-object-lock-legal-hold")
        let lock: ObjectLock.Configuration?
        switch attempt(ctx, { try objectLockConfiguration(ctx.bucket, known: ctx.bucketAccess) }) {
        case .failure(let e): return .failure(e)
        case .success(let c): lock = c
        }
        if mode != nil || untilText != nil || hold != nil {
            guard lock != nil else { return .failure(.invalidRequest(message: "Bucket is missing Object Lock Configuration")) }
            if (mode == nil) != (untilText == nil) {
                return .failure(.invalidArgument(message: "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied",
                                                 name: mode == nil ? "x-amz-object-lock-mode" : "x-amz-object-lock-retain-until-date", value: nil))
            }
            if let mode {
                guard mode == "GOVERNANCE" || mode == "COMPLIANCE" else {
                    return .failure(.invalidArgument(message: "Unknown wormMode directive.", name: "x-amz-object-lock-mode", value: mode))
                }
                guard let until = untilText.flatMap(ObjectLock.parseDate) else {
                    return .failure(.invalidArgument(message: "The retain until date must be provided in ISO 8601 format",
                                                     name: "x-amz-object-lock-retain-until-date", value: untilText))
                }
                guard until.unixMicros > ctx.now.unixMicros else {
                    return .failure(.invalidArgument(message: "The retain until date must be in the future!",
                                                     name: "x-amz-object-lock-retain-until-date", value: untilText))
                }
                metadata.extra.lockMode = mode
                metadata.extra.lockRetainUntil = ObjectLock.format(until)
            }
            if let hold {
                guard hold == "ON" || hold == "OFF" else {
                    return .failure(.invalidArgument(message: "Legal Hold must be either of 'ON' or 'OFF'", name: "x-amz-object-lock-legal-hold", value: hold))
                }
                metadata.extra.legalHold = hold == "ON"
            }
        }
        if metadata.extra.lockMode == nil, let (m, until) = lock?.defaultRetention(now: ctx.now) {
            metadata.extra.lockMode = m
            metadata.extra.lockRetainUntil = ObjectLock.format(until)
        }
        return encryptionSettings(ctx, &metadata.extra)
    }

    /// `x-amz-server-side-encryption` (`AES256`, `aws:kms`, `aws:kms:dsse`) with its KMS key id,
    /// or SSE-C's customer key headers; without them the bucket's default encryption.
    /// `field` reads the settings from elsewhere than the headers (a browser form's fields).
    func encryptionSettings(_ ctx: S3Context, _ extra: inout ObjectExtra, field: ((String) -> String?)? = nil) -> Result<Void, S3Error> {
        let header = field ?? { ctx.header($0) }
        let customerPrefix = "x-amz-server-side-encryption-customer-"
        // Without any such header `fromHeaders` answers nil; ruling them out first spares it
        // building four names and looking each up on every write.
        let customer: Result<SSECustomerKey?, S3Error> = field == nil && !ctx.mayHaveHeader(prefix: customerPrefix)
            ? .success(nil) : SSECustomerKey.fromHeaders(header, prefix: customerPrefix)
        switch customer {
        case .failure(let e): return .failure(e)
        case .success(let key?):
            if header("x-amz-server-side-encryption") != nil {
                return .failure(.invalidArgument(message: "Server Side Encryption with Customer provided key is incompatible with the encryption method specified",
                                                 name: "x-amz-server-side-encryption", value: header("x-amz-server-side-encryption")))
            }
            guard ctx.request.isTLS || configuration.allowSSECOverHTTP else {
                return .failure(.invalidRequest(message: "Requests specifying Server Side Encryption with Customer provided keys must be made over a secure connection."))
            }
            extra.customerKeyMD5 = key.md5
            return .success(())
        case .success(nil): break
        }
        let requested = header("x-amz-server-side-encryption")
        let keyID = header("x-amz-server-side-encryption-aws-kms-key-id")
        if let requested {
            guard ["AES256", "aws:kms", "aws:kms:dsse"].contains(requested) else {
                return .failure(.invalidArgument(message: "The encryption method specified is not supported",
                                                 name: "x-amz-server-side-encryption", value: requested))
            }
            if requested == "AES256", keyID != nil {
                return .failure(.invalidArgument(message: "Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms",
                                                 name: "x-amz-server-side-encryption-aws-kms-key-id", value: keyID))
            }
            extra.sse = requested
            if requested != "AES256" {
                extra.bucketKeyEnabled = header("x-amz-server-side-encryption-bucket-key-enabled")?.lowercased() == "true"
                return kmsKey(ctx, keyID).map { extra.kmsKeyID = $0 }
            }
            return .success(())
        }
        if let keyID {
            return .failure(.invalidArgument(message: "Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms",
                                             name: "x-amz-server-side-encryption-aws-kms-key-id", value: keyID))
        }
        // The bucket default.
        let known = ctx.bucketAccess.flatMap { $0.bucket.name == ctx.bucket ? $0.encryption : nil }
        if case .success(.document(let text)) = attempt(ctx, { try known ?? store.bucketConfig(ctx.bucket, .encryption) }),
           case .success(let rule) = EncryptionConfiguration.parse(Array(text.utf8)) {
            extra.sse = rule.algorithm
            if rule.algorithm != "AES256" {
                extra.bucketKeyEnabled = header("x-amz-server-side-encryption-bucket-key-enabled").map { $0.lowercased() == "true" } ?? rule.bucketKeyEnabled
                return kmsKey(ctx, rule.kmsMasterKeyID).map { extra.kmsKeyID = $0 }
            }
        }
        return .success(())
    }

    /// The ARN of the KMS key a request names for the caller's account (nil: the account's
    /// AWS-managed `aws/s3` key), as S3 reports it; an unknown key is `KMS.NotFoundException`.
    func kmsKey(_ ctx: S3Context, _ reference: String?) -> Result<String, S3Error> {
        let account = ctx.account ?? accounts.primary
        return attempt(ctx) { try keyRing.resolve(reference, account: account.accountID, ids: ids, now: clock.now()) }
            .flatMap { $0.map { keyRing.arn($0) } }
    }
}
