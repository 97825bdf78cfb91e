import Foundation
import HearthBlobs
import HearthCore
import HearthHTTP

extension S3Service {
    /// The form authenticator (shares the request authenticator's credentials, region and key cache).
    var postFormAuthenticator: PostFormAuthenticator {
        PostFormAuthenticator(credentials: authenticator.credentials, region: configuration.region,
                              signingKeys: authenticator.signingKeys, allowSigV2: configuration.allowSigV2)
    }

    /// Whether `request` is a browser form upload: `POST` to a bucket (path or host) without a
    /// sub-resource. Such a request authenticates with its form fields, so an unsigned one is not
    /// refused before its body is read.
    static func isFormUpload(_ request: Request, target: S3Target) -> Bool {
        guard request.method == "POST", target.bucket != nil, target.key == nil else { return false }
        return !request.queryItems.contains { S3Operation.subresources.contains($0.name) }
    }

    /// POST Object: checks what the headers allow before the body, then streams the form.
    ///
    /// Related: "POST Object" and "Browser-Based Uploads Using POST (AWS Signature Version 4)" in
    /// the S3 API reference.
    func postObject(_ ctx: S3Context) -> RequestDisposition {
        let boundary: [UInt8]
        switch FormContentType.parse(ctx.header("Content-Type")) {
        case .notFormData: return .respond(complete(ctx, .failure(.postForm(.notMultipart(contentType: ctx.header("Content-Type"))))))
        case .missingBoundary:
            return .respond(complete(ctx, .failure(.postForm(.malformedBody(reason: "the Content-Type has no usable boundary parameter")))))
        case .formData(let b): boundary = b
        }
        let chunked = ctx.header("Transfer-Encoding")?.lowercased().contains("chunked") ?? false
        if let text = ctx.header("Content-Length") {
            guard let length = Int64(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                return .respond(complete(ctx, .failure(.missingContentLength)))
            }
            // A body over the object limit cannot hold an acceptable file: refuse before reading it.
            if length > configuration.maxObjectSize, ctx.auth?.isAWSChunked != true {
                return .respond(complete(ctx, .failure(.entityTooLarge(proposedSize: length, maxSize: configuration.maxObjectSize))))
            }
        } else if !chunked {
            return .respond(complete(ctx, .failure(.missingContentLength)))
        }
        if case .failure(let e) = requireBucket(ctx) { return .respond(complete(ctx, .failure(e))) }
        return .stream(PostObjectConsumer(service: self, ctx: ctx, boundary: boundary))
    }

    /// Decides, from the fields before the file, whether and what the form may store: signature,
    /// policy (expiration, conditions, extra fields), key and object properties.
    func planPostObject(_ ctx: S3Context, fields: [(name: String, value: String)], filename: String?) -> Result<PostObjectPlan, S3Error> {
        var form = PostForm(fields)
        form.substituteFilename(filename)
        guard let key = form["key"] else { return .failure(.postForm(.missingField(name: "key"))) }

        var lengthRanges: [(min: Int64, max: Int64)] = []
        var owner = ctx.accessKey
        switch postFormAuthenticator.authenticate(form, bucket: ctx.bucket) {
        case .failure(.postForm(.policyWithoutSignature)) where ctx.auth != nil:
            // The request's own signature authenticates it; an unsigned policy adds nothing.
            break
        case .failure(let e): return .failure(e)
        case .success(.unsigned):
            // Only a request signed in its headers or URL may omit the form's signature — or a
            // bucket whose policy lets anyone put the object.
            guard ctx.auth != nil || anonymousFormAllowed(ctx, key: key) else { return .failure(.postForm(.anonymous)) }
        case .success(.signed(let accessKey, let policyText, let sigV2)):
            owner = accessKey
            ctx.accessKey = accessKey
            let policy: PostPolicy
            do throws(PostPolicyFailure) {
                policy = try PostPolicy.parse(base64: policyText)
            } catch {
                return .failure(.postForm(error))
            }
            if ctx.now > policy.expiration {
                return .failure(.postForm(.expired(expiration: policy.expirationText, serverTime: ctx.now)))
            }
            let exempt: Set<String> = sigV2 ? ["signature", "awsaccesskeyid", "file", "policy"] : ["x-amz-signature", "file", "policy"]
            if let failure = policy.check(form, bucket: ctx.bucket, exempt: exempt) { return .failure(.postForm(failure)) }
            lengthRanges = policy.lengthRanges
        }

        guard !key.isEmpty else { return .failure(.postForm(.emptyKey)) }
        if let e = S3Service.checkKey(key) { return .failure(e) }
        guard !key.utf8.contains(0) else {
            return .failure(.invalidArgument(message: "Object key must not contain a NUL character", name: "key", value: key))
        }
        ctx.formKey = key

        var metadata: ObjectMetadata
        switch UploadHeaders.metadata(from: form.fields) {
        case .failure(let e): return .failure(e)
        case .success(let m): metadata = m
        }
        if let tagging = form["tagging"] {
            switch S3Service.taggingQuery(fromXML: Array(tagging.utf8)) {
            case .failure(let e): return .failure(e)
            case .success(let encoded): metadata.tagging = encoded
            }
        }

        let declared: (algorithm: ChecksumAlgorithm, digest: [UInt8])?
        switch UploadHeaders.checksumHeaders(form.fields) {
        case .failure(let e): return .failure(e)
        case .success(let c): declared = c
        }
        var algorithm = declared?.algorithm
        if let name = form["x-amz-checksum-algorithm"] {
            guard let named = ChecksumAlgorithm(name: name) else {
                return .failure(.invalidRequest(message:
                    "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]"))
            }
            if let declared, declared.algorithm != named {
                return .failure(.invalidRequest(message:
                    "Checksum Type mismatch occurred, expected checksum Type: \(named.rawValue), actual checksum Type: \(declared.algorithm.rawValue)"))
            }
            algorithm = named
        }
        if case .failure(let e) = encryptionSettings(ctx, &metadata.extra, field: { form[$0] }) { return .failure(e) }
        let dataKey: BlobDataKey?
        let customerKey: SSECustomerKey?
        if case .success(let k) = SSECustomerKey.fromHeaders({ form[$0] }, prefix: "x-amz-server-side-encryption-customer-") { customerKey = k } else { customerKey = nil }
        switch sealNew(&metadata.extra, customerKey: customerKey) {
        case .failure(let e): return .failure(e)
        case .success(let k): dataKey = k
        }
        var contentMD5: (text: String, digest: [UInt8])?
        if let md5 = form["Content-MD5"] {
            guard let d = Data(base64Encoded: md5.trimmingCharacters(in: .whitespaces)), d.count == 16 else {
                return .failure(.invalidDigest(contentMD5: md5))
            }
            contentMD5 = (md5, [UInt8](d))
        }
        return .success(PostObjectPlan(
            key: key, owner: owner, metadata: metadata, dataKey: dataKey, declaredChecksum: declared, checksumAlgorithm: algorithm,
            contentMD5: contentMD5, lengthRanges: lengthRanges,
            redirect: PostObjectPlan.redirectTarget(form["success_action_redirect"] ?? form["redirect"]),
            status: PostObjectPlan.successStatus(form["success_action_status"])))
    }

    /// The answer to a stored form upload: a 303 to the redirect URL with `bucket`, `key` and
    /// `etag` added to its query, else the status the form asked for (201 with a `PostResponse`).
    func postObjectResponse(_ ctx: S3Context, plan: PostObjectPlan, etag: String, checksum: ObjectChecksum?) -> Response {
        let location = objectURL(ctx, key: plan.key)
        var h = S3Service.storedObjectHeaders(etag: etag, checksum: checksum, extra: plan.metadata.extra)
        if let redirect = plan.redirect {
            let query = "bucket=\(SigV4Encoding.encode(ctx.bucket))&key=\(SigV4Encoding.encode(plan.key))&etag=\(SigV4Encoding.encode(etag))"
            h.add("Location", redirect + (redirect.contains("?") ? "&" : "?") + query)
            return Response(status: 303, headers: h, body: .empty)
        }
        h.add("Location", location)
        guard plan.status == 201 else { return Response(status: plan.status, headers: h, body: .empty) }
        var x = XMLWriter()
        x.group("PostResponse") { x in
            x.element("Location", location)
            x.element("Bucket", ctx.bucket)
            x.element("Key", plan.key)
            x.element("ETag", etag)
        }
        return S3Service.xmlResponse(x, status: 201, headers: h)
    }

    /// The URL of an object as the client addressed the bucket (its Host, path or virtual-hosted),
    /// with the key fully percent-encoded as S3 writes it in `Location`.
    func objectURL(_ ctx: S3Context, key: String) -> String {
        let scheme = ctx.request.isTLS ? "https" : "http"
        let host = ctx.header("Host") ?? URLComponents(string: publicBaseURL)?.host ?? "127.0.0.1"
        let encodedKey = SigV4Encoding.encode(key)
        return ctx.target.virtualHosted ? "\(scheme)://\(host)/\(encodedKey)"
            : "\(scheme)://\(host)/\(SigV4Encoding.encode(ctx.bucket))/\(encodedKey)"
    }

    /// Whether the bucket's policy allows an unsigned form to put `key` (`s3:PutObject`).
    private func anonymousFormAllowed(_ ctx: S3Context, key: String) -> Bool {
        anonymousAccess(ctx, bucket: ctx.bucket)?.permits("s3:PutObject", key: key) ?? false
    }
}
