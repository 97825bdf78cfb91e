import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// The account id Hearth's messages name (it has no IAM; LocalStack uses the same).
    static let accountID = "000000000000"

    /// What S3 answers when a bucket has no configuration of `kind` (and `kind` has no default).
    static func notConfigured(_ kind: BucketConfigKind, bucket: String) -> S3Error {
        let (code, message) = switch kind {
        case .policy: ("NoSuchBucketPolicy", "The bucket policy does not exist")
        case .lifecycle: ("NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist")
        case .encryption: ("ServerSideEncryptionConfigurationNotFoundError", "The server side encryption configuration was not found")
        case .publicAccessBlock: ("NoSuchPublicAccessBlockConfiguration", "The public access block configuration was not found")
        case .ownershipControls: ("OwnershipControlsNotFoundError", "The bucket ownership controls were not found")
        case .tagging: ("NoSuchTagSet", "The TagSet does not exist")
        }
        return .noSuchBucketConfiguration(code: code, message: message, bucket: bucket)
    }

    /// A stored XML document as a 200 answer.
    static func storedXML(_ text: String, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var h = headers
        h.set("Content-Type", "application/xml")
        return Response(status: 200, headers: h, body: .bytes(Array(text.utf8)))
    }

    // MARK: Get

    /// GetBucketPolicy, GetBucketLifecycleConfiguration, GetBucketEncryption, GetPublicAccessBlock,
    /// GetBucketOwnershipControls, GetBucketTagging.
    func getBucketConfig(_ kind: BucketConfigKind, _ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) { try store.bucketConfig(ctx.bucket, kind) }.flatMap { stored -> Result<Response, S3Error> in
            switch (kind, stored) {
            case (.policy, .document(let text)):
                var h = HTTPHeaders()
                h.set("Content-Type", "application/json")
                return .success(Response(status: 200, headers: h, body: .bytes(Array(text.utf8))))
            case (.lifecycle, .document(let text)):
                guard let stored = StoredLifecycle(text) else { return .failure(.internalError) }
                var h = HTTPHeaders()
                h.add("x-amz-transition-default-minimum-object-size", stored.minimumObjectSize)
                return .success(S3Service.storedXML(stored.document, headers: h))
            case (.encryption, .document(let text)), (.publicAccessBlock, .document(let text)),
                 (.ownershipControls, .document(let text)), (.tagging, .document(let text)):
                return .success(S3Service.storedXML(text))
            // Every bucket encrypts with SSE-S3 unless told otherwise (S3 since January 2023).
            case (.encryption, _): return .success(S3Service.xmlResponse(EncryptionConfiguration.sseS3.document))
            // A new bucket blocks public access and enforces bucket-owner ownership (S3 since April 2023).
            case (.publicAccessBlock, .absent): return .success(S3Service.xmlResponse(PublicAccessBlock.newBucketDefault.document))
            case (.ownershipControls, .absent): return .success(S3Service.xmlResponse(OwnershipControls.newBucketDefault.document))
            default: return .failure(S3Service.notConfigured(kind, bucket: ctx.bucket))
            }
        }
    }

    // MARK: Put

    /// PutBucketPolicy, PutBucketLifecycleConfiguration, PutBucketEncryption, PutPublicAccessBlock,
    /// PutBucketOwnershipControls, PutBucketTagging: the bucket first, then the integrity header,
    /// then the document, as S3 checks them.
    func putBucketConfig(_ kind: BucketConfigKind, _ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        if case .failure(let e) = requireBucket(ctx) { return .failure(e) }
        // S3 insists on an integrity header for a lifecycle configuration; for the others it checks
        // one when sent (every SDK sends one).
        let integrity = kind == .lifecycle ? S3Service.verifyRequiredIntegrity(ctx, body: body)
                                           : S3Service.verifyOptionalIntegrity(ctx, body: body)
        if let integrity { return .failure(integrity) }
        switch kind {
        case .policy: return putBucketPolicy(ctx, body: body)
        case .lifecycle: return putBucketLifecycle(ctx, body: body)
        case .encryption: return saveConfig(.encryption, EncryptionConfiguration.parse(body).map { $0.document }, ctx, status: 200)
        case .publicAccessBlock: return saveConfig(.publicAccessBlock, PublicAccessBlock.parse(body).map { $0.document }, ctx, status: 200)
        case .ownershipControls: return saveConfig(.ownershipControls, OwnershipControls.parse(body).map { $0.document }, ctx, status: 200)
        case .tagging:
            return BucketTagging.parse(body).flatMap { tagging in
                // An empty tag set leaves the bucket untagged.
                if tagging.tags.isEmpty {
                    return attempt(ctx) {
                        try store.clearBucketConfig(ctx.bucket, .tagging)
                        return Response(status: 204)
                    }
                }
                return saveConfig(.tagging, .success(tagging.document), ctx, status: 204)
            }
        }
    }

    private func saveConfig(_ kind: BucketConfigKind, _ parsed: Result<XMLWriter, S3Error>, _ ctx: S3Context, status: Int) -> Result<Response, S3Error> {
        parsed.flatMap { document in
            attempt(ctx) {
                try store.setBucketConfig(ctx.bucket, kind, String(decoding: document.bytes, as: UTF8.self), now: ctx.now)
                return Response(status: status)
            }
        }
    }

    /// PutBucketPolicy: validated; a public policy is refused while BlockPublicPolicy is on. 204.
    private func putBucketPolicy(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        BucketPolicy.parse(body, bucket: ctx.bucket).flatMap { policy in
            attempt(ctx) {
                if policy.isPublic, PublicAccessBlock.effective(try store.bucketConfig(ctx.bucket, .publicAccessBlock)).blockPublicPolicy {
                    throw S3Error.accessDenied(message:
                        "User: arn:aws:iam::\(S3Service.accountID):root is not authorized to perform: s3:PutBucketPolicy on resource: \"arn:aws:s3:::\(ctx.bucket)\" because public policies are blocked by the BlockPublicPolicy block public access setting.")
                }
                try store.setBucketConfig(ctx.bucket, .policy, policy.normalized, now: ctx.now)
                return Response(status: 204)
            }
        }
    }

    /// The values `x-amz-transition-default-minimum-object-size` may take.
    static let transitionMinimumSizes: Set<String> = ["all_storage_classes_128K", "varies_by_storage_class"]

    /// PutBucketLifecycleConfiguration: validated and stored (Hearth does not run it). 200.
    private func putBucketLifecycle(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        let minimum = ctx.header("x-amz-transition-default-minimum-object-size") ?? "all_storage_classes_128K"
        guard S3Service.transitionMinimumSizes.contains(minimum) else {
            return .failure(.invalidRequest(message: "Invalid TransitionDefaultMinimumObjectSize found: \(minimum)"))
        }
        // S3 names a rule sent without an ID with the base64 of a fresh UUID.
        let parsed = LifecycleConfiguration.parse(body) { Data(ids.uuid().utf8).base64EncodedString() }
        return parsed.flatMap { configuration in
            attempt(ctx) {
                let stored = StoredLifecycle(document: String(decoding: configuration.document.bytes, as: UTF8.self), minimumObjectSize: minimum)
                try store.setBucketConfig(ctx.bucket, .lifecycle, stored.text, now: ctx.now)
                lifecycleRules.set(ctx.bucket, configuration)
                var h = HTTPHeaders()
                h.add("x-amz-transition-default-minimum-object-size", minimum)
                return Response(status: 200, headers: h, body: .empty)
            }
        }
    }

    // MARK: Delete

    /// DeleteBucketPolicy, DeleteBucketLifecycle, DeleteBucketEncryption (back to SSE-S3),
    /// DeletePublicAccessBlock and DeleteBucketOwnershipControls (none left, not even the default),
    /// DeleteBucketTagging: 204, configured or not.
    func deleteBucketConfig(_ kind: BucketConfigKind, _ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) {
            switch kind {
            case .publicAccessBlock, .ownershipControls: try store.setBucketConfig(ctx.bucket, kind, nil, now: ctx.now)
            case .policy, .lifecycle, .encryption, .tagging: try store.clearBucketConfig(ctx.bucket, kind)
            }
            if kind == .lifecycle { lifecycleRules.set(ctx.bucket, nil) }
            return Response(status: 204)
        }
    }

    // MARK: GetBucketPolicyStatus

    /// `<PolicyStatus><IsPublic>…`; without a policy S3 answers `NoSuchBucketPolicy`.
    func getBucketPolicyStatus(_ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) { try store.bucketConfig(ctx.bucket, .policy) }.flatMap { stored in
            guard case .document(let text) = stored else { return .failure(S3Service.notConfigured(.policy, bucket: ctx.bucket)) }
            let isPublic = (try? BucketPolicy.parse(Array(text.utf8), bucket: ctx.bucket).get())?.isPublic ?? false
            var x = XMLWriter()
            x.group("PolicyStatus", namespace: true) { $0.element("IsPublic", String(isPublic)) }
            return .success(S3Service.xmlResponse(x))
        }
    }
}
