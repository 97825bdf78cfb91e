import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    // MARK: PutBucketCors, GetBucketCors, DeleteBucketCors

    /// PutBucketCors: validates and stores the configuration (replacing any).
    func putBucketCors(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        if let e = S3Service.verifyRequiredIntegrity(ctx, body: body) { return .failure(e) }
        return CORSConfiguration.parse(body).flatMap { configuration in
            attempt(ctx) {
                try store.putCorsConfiguration(ctx.bucket, configuration, now: ctx.now)
                return Response(status: 200)
            }
        }
    }

    /// GetBucketCors: the stored document, or `NoSuchCORSConfiguration` (404).
    func getBucketCors(_ ctx: S3Context) -> Result<Response, S3Error> {
        requireBucket(ctx).flatMap { _ in
            attempt(ctx) { try store.corsConfiguration(ctx.bucket) }.flatMap { configuration in
                guard let configuration else {
                    return .failure(.noSuchBucketConfiguration(code: "NoSuchCORSConfiguration",
                                                               message: "The CORS configuration does not exist", bucket: ctx.bucket))
                }
                return .success(S3Service.xmlResponse(configuration.document))
            }
        }
    }

    /// DeleteBucketCors: 204, with or without a configuration.
    func deleteBucketCors(_ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) {
            try store.deleteCorsConfiguration(ctx.bucket)
            return Response(status: 204)
        }
    }

    // MARK: Evaluation

    /// The rules that apply to `bucket`: its own configuration, else the `--s3-cors-origins`
    /// default (also for a bucket that does not exist, so a browser can read the error).
    func corsRules(for bucket: String?) -> CORSConfiguration? {
        if let bucket, let stored = try? store.corsConfiguration(bucket) { return stored }
        return configuration.corsOrigins.isEmpty ? nil : CORSConfiguration.permissive(origins: configuration.corsOrigins)
    }

    /// Answers a preflight `OPTIONS` request, unauthenticated, as S3 does.
    func preflight(_ ctx: S3Context) -> Response {
        ctx.operation = .preflight
        return complete(ctx, preflightResult(ctx))
    }

    private func preflightResult(_ ctx: S3Context) -> Result<Response, S3Error> {
        guard let origin = ctx.header("Origin") else {
            return .failure(.badRequest(message: "Insufficient information. Origin request header needed."))
        }
        let requestedMethod = ctx.header("Access-Control-Request-Method")
        let bucketExists = ctx.target.bucket.flatMap { b in try? store.bucket(b) } != nil
        let stored = bucketExists ? (try? store.corsConfiguration(ctx.bucket)) : nil
        let defaultRules = configuration.corsOrigins.isEmpty ? nil : CORSConfiguration.permissive(origins: configuration.corsOrigins)
        guard let rules = stored ?? defaultRules else {
            if !bucketExists {
                return .failure(.accessForbidden(
                    message: "CORSResponse: Bucket not found", method: requestedMethod ?? "OPTIONS", resourceType: "BUCKET",
                    diagnosis: "Bucket '\(ctx.target.bucket ?? "")' does not exist, so no CORS rule can allow this preflight."))
            }
            return .failure(.accessForbidden(
                message: "CORSResponse: CORS is not enabled for this bucket.", method: requestedMethod ?? "OPTIONS", resourceType: "BUCKET",
                diagnosis: "Bucket '\(ctx.bucket)' has no CORS configuration. Give it one (aws s3api put-bucket-cors, boto3 put_bucket_cors) or start Hearth with --s3-cors-origins for a permissive local default."))
        }
        guard let method = requestedMethod, CORSConfiguration.methods.contains(method) else {
            return .failure(.badRequest(message: "Invalid Access-Control-Request-Method: \(requestedMethod ?? "null")"))
        }
        let requestHeaders = CORSConfiguration.requestHeaderNames(ctx.header("Access-Control-Request-Headers"))
        guard let match = rules.match(origin: origin, method: method, requestHeaders: requestHeaders) else {
            return .failure(.accessForbidden(
                message: "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.",
                method: method, resourceType: ctx.target.key == nil ? "BUCKET" : "OBJECT",
                diagnosis: rules.explainMismatch(origin: origin, method: method, requestHeaders: requestHeaders)))
        }
        var headers = HTTPHeaders()
        for (name, value) in CORSConfiguration.responseHeaders(match, origin: origin, requestHeaders: requestHeaders) {
            headers.add(name, value)
        }
        return .success(Response(status: 200, headers: headers, body: .empty))
    }

    /// The `Access-Control-*` headers of an actual (non-preflight) request from `Origin`, when a
    /// rule allows it. As S3 does, `Access-Control-Request-Method` stands in for the method and
    /// `Access-Control-Request-Headers` must be allowed when present; errors get them too, so a
    /// page can read why its request failed.
    func corsHeaders(for ctx: S3Context) -> [(String, String)] {
        guard ctx.request.method != "OPTIONS", let origin = ctx.header("Origin"), let rules = corsRules(for: ctx.target.bucket) else { return [] }
        let method = ctx.header("Access-Control-Request-Method") ?? ctx.request.method
        let requestHeaders = CORSConfiguration.requestHeaderNames(ctx.header("Access-Control-Request-Headers"))
        guard let match = rules.match(origin: origin, method: method, requestHeaders: requestHeaders) else { return [] }
        return CORSConfiguration.responseHeaders(match, origin: origin, requestHeaders: requestHeaders)
    }
}
