import HearthCore
import HearthCrypto
import HearthHTTP

/// Signs requests with SigV4 in the Authorization header as the AWS SDKs do, and frames aws-chunked
/// bodies; used by tests (including the tampering tests) and tools that talk to the S3 port.
struct RequestSigner: Sendable {
    let accessKey: String
    let secret: String
    let region: String
    var service = "s3"

    /// Headers the SDKs leave unsigned (botocore's list).
    static let unsignedHeaders: Set<String> = ["authorization", "user-agent", "expect", "x-amzn-trace-id"]

    /// Returns `headers` plus `x-amz-date`, `x-amz-content-sha256` (unless present) and
    /// `Authorization`, signing every header but the SDKs' unsigned ones (or `signedHeaders`).
    func sign(method: String, rawPath: String, rawQuery: String, headers: HTTPHeaders, payloadHash: String, date: Instant,
              signedHeaders: [String]? = nil) -> (headers: HTTPHeaders, signature: String) {
        var headers = headers
        let amzDate = SigV4Time.amzDate(date)
        headers.set("X-Amz-Date", amzDate)
        if headers["x-amz-content-sha256"] == nil { headers.set("X-Amz-Content-SHA256", payloadHash) }
        let lowered = headers.fields.map { (name: $0.name.lowercased(), value: $0.value) }
        let names = signedHeaders?.map { $0.lowercased() }.sorted()
            ?? Array(Set(lowered.map(\.name)).subtracting(Self.unsignedHeaders)).sorted()
        let scope = CredentialScope(accessKey: accessKey, date: String(amzDate.prefix(8)), region: region, service: service, terminal: "aws4_request")
        let authorization = SigV4Authorization(presigned: false, credential: scope, signedHeaders: names, signature: "",
                                               amzDate: amzDate, requestTime: date, rawRequestTime: amzDate, expires: nil)
        let parts = SignedRequestParts(method: method, rawPath: rawPath, rawQuery: rawQuery, headers: lowered)
        let key = SigningKey.derive(secret: secret, date: scope.date, region: region, service: service)
        let signature = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: headers["x-amz-content-sha256"] ?? payloadHash,
                                                  signingKey: key).signature
        headers.set("Authorization", "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope.scope), SignedHeaders=\(names.joined(separator: ";")), Signature=\(signature)")
        return (headers, signature)
    }

    /// A complete signed request; the payload hash defaults to the body's SHA-256.
    func signedRequest(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                       date: Instant, payloadHash: String? = nil, signedHeaders: [String]? = nil) -> Request {
        let (path, query, hasQuery) = Request.split(target: target)
        let hash = payloadHash ?? Hex.encode(Digest.sha256(body))
        let signed = sign(method: method, rawPath: path, rawQuery: query, headers: headers, payloadHash: hash, date: date,
                          signedHeaders: signedHeaders).headers
        return Request(method: method, rawPath: path, rawQuery: query, hasQuery: hasQuery, headers: signed, body: body)
    }

    /// Frames `payload` as aws-chunked: signed chunks chained from `seedSignature` when `signed`,
    /// optionally followed by a checksum trailer (signed with `x-amz-trailer-signature` when `signed`).
    func awsChunked(_ payload: [UInt8], chunkSize: Int, seedSignature: String = "", date: Instant,
                    signed: Bool, trailer: ChecksumAlgorithm? = nil) -> [UInt8] {
        let amzDate = SigV4Time.amzDate(date)
        let scopeText = "\(amzDate.prefix(8))/\(region)/\(service)/aws4_request"
        let key = SigningKey.derive(secret: secret, date: String(amzDate.prefix(8)), region: region, service: service)
        var previous = seedSignature
        var out = [UInt8]()
        func chunk(_ data: ArraySlice<UInt8>) {
            var header = String(data.count, radix: 16)
            if signed {
                let sts = "AWS4-HMAC-SHA256-PAYLOAD\n\(amzDate)\n\(scopeText)\n\(previous)\n\(SignatureVerifier.emptySHA256)\n\(Hex.encode(Digest.sha256(Array(data))))"
                previous = SigningKey.sign(key, Array(sts.utf8))
                header += ";chunk-signature=\(previous)"
            }
            out.append(contentsOf: Array((header + "\r\n").utf8))
            out.append(contentsOf: data)
            if !data.isEmpty || trailer == nil { out.append(contentsOf: [0x0D, 0x0A]) }
        }
        var start = 0
        while start < payload.count {
            let end = min(start + max(1, chunkSize), payload.count)
            chunk(payload[start..<end])
            start = end
        }
        chunk([])
        if let trailer {
            let checksum = RunningChecksum(trailer)
            payload.withUnsafeBytes { checksum.update($0) }
            let line = "\(trailer.headerName):\(checksum.finalizeBase64())"
            out.append(contentsOf: Array((line + "\r\n").utf8))
            if signed {
                let sts = "AWS4-HMAC-SHA256-TRAILER\n\(amzDate)\n\(scopeText)\n\(previous)\n\(Hex.encode(Digest.sha256(Array((line + "\n").utf8))))"
                out.append(contentsOf: Array("x-amz-trailer-signature:\(SigningKey.sign(key, Array(sts.utf8)))\r\n".utf8))
            }
            out.append(contentsOf: [0x0D, 0x0A])
        }
        return out
    }
}
