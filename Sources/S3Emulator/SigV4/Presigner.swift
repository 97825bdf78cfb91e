import HearthCore

/// Why a URL could not be presigned.
enum PresignError: Error, Sendable, Equatable {
    /// The access key is not configured (or no key is).
    case unknownAccessKey(String)
    /// Expiry outside 1…604800 seconds (SigV4's limit).
    case invalidExpiry(Int)
    /// The endpoint is not `http(s)://host[:port]`.
    case invalidEndpoint(String)

    /// A sentence for error bodies.
    var message: String {
        switch self {
        case .unknownAccessKey(let key): key.isEmpty ? "No S3 credentials are configured" : "Unknown access key '\(key)'"
        case .invalidExpiry(let seconds): "Expiry must be between 1 and 604800 seconds, not \(seconds)"
        case .invalidEndpoint(let endpoint): "Invalid endpoint '\(endpoint)'; expected http(s)://host[:port]"
        }
    }
}

/// A presigned URL and what it signs.
struct PresignedURL: Sendable, Equatable {
    let url: String
    let method: String
    /// The headers the user of the URL must send with these exact values (`host` excluded).
    let requiredHeaders: [(name: String, value: String)]
    let expiresAt: Instant
    let signature: String

    static func == (a: PresignedURL, b: PresignedURL) -> Bool {
        a.url == b.url && a.method == b.method && a.expiresAt == b.expiresAt && a.signature == b.signature
            && a.requiredHeaders.map(\.name) == b.requiredHeaders.map(\.name) && a.requiredHeaders.map(\.value) == b.requiredHeaders.map(\.value)
    }
}

/// Mints SigV4 presigned URLs (query form) the way boto3's `generate_presigned_url` does with
/// `signature_version='s3v4'`, and remembers each in the ledger for the signature diagnosis.
struct Presigner: Sendable {
    let credentials: S3Credentials
    let region: String
    let clock: Clock
    let ledger: PresignLedger
    let signingKeys: SigningKeyCache

    init(credentials: S3Credentials, region: String, clock: Clock, ledger: PresignLedger, signingKeys: SigningKeyCache = SigningKeyCache()) {
        self.credentials = credentials
        self.region = region
        self.clock = clock
        self.ledger = ledger
        self.signingKeys = signingKeys
    }

    /// A presigned URL for an object (or, with an empty key, the bucket).
    /// - Parameters:
    ///   - endpoint: `http://127.0.0.1:9000` (the S3 listener as the URL's user will reach it).
    ///   - virtualHosted: put the bucket in the host name (`bucket.localhost:9000`) instead of the path.
    ///   - query: extra parameters to sign (e.g. `response-content-type`, `partNumber`, `uploadId`), decoded.
    ///   - headers: headers the user must send, signed with these values (e.g. `content-type`).
    ///   - accessKey: the key to sign with; the first configured key when nil.
    func presign(method: String, endpoint: String, bucket: String, key: String, virtualHosted: Bool = false,
                 query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
                 expiresSeconds: Int = 3600, accessKey: String? = nil) throws(PresignError) -> PresignedURL {
        guard let (scheme, host) = Self.split(endpoint: endpoint) else { throw .invalidEndpoint(endpoint) }
        let encodedKey = SigV4Encoding.encode(key, keepSlash: true)
        let rawPath: String
        let hostValue: String
        if virtualHosted {
            hostValue = "\(bucket).\(host)"
            rawPath = "/" + encodedKey
        } else {
            hostValue = host
            rawPath = "/" + SigV4Encoding.encode(bucket) + (key.isEmpty ? "" : "/" + encodedKey)
        }
        return try presign(method: method, scheme: scheme, host: hostValue, rawPath: rawPath, query: query, headers: headers,
                           expiresSeconds: expiresSeconds, accessKey: accessKey)
    }

    /// A presigned URL for an already-encoded path.
    func presign(method: String, scheme: String, host: String, rawPath: String, query: [(name: String, value: String)] = [],
                 headers: [(name: String, value: String)] = [], expiresSeconds: Int = 3600,
                 accessKey: String? = nil) throws(PresignError) -> PresignedURL {
        guard (1...604_800).contains(expiresSeconds) else { throw .invalidExpiry(expiresSeconds) }
        guard let keyPair = accessKey.map({ credentials.key($0) }) ?? credentials.keys.first else {
            throw .unknownAccessKey(accessKey ?? "")
        }
        let now = clock.now()
        let amzDate = SigV4Time.amzDate(now)
        let date = String(amzDate.prefix(8))
        let scope = CredentialScope(accessKey: keyPair.accessKey, date: date, region: region, service: "s3", terminal: "aws4_request")

        var signed: [(name: String, value: String)] = [("host", host)]
        for header in headers where header.name.lowercased() != "host" {
            signed.append((header.name.lowercased(), header.value))
        }
        signed.sort { $0.name < $1.name }
        let signedNames = signed.map(\.name)

        // Operation parameters first, then the auth parameters, as botocore orders them.
        var parameters = query
        parameters.append(("X-Amz-Algorithm", "AWS4-HMAC-SHA256"))
        parameters.append(("X-Amz-Credential", "\(keyPair.accessKey)/\(scope.scope)"))
        parameters.append(("X-Amz-Date", amzDate))
        parameters.append(("X-Amz-Expires", String(expiresSeconds)))
        parameters.append(("X-Amz-SignedHeaders", signedNames.joined(separator: ";")))
        let rawQuery = parameters.map { SigV4Encoding.encode($0.name) + "=" + SigV4Encoding.encode($0.value) }.joined(separator: "&")

        let authorization = SigV4Authorization(presigned: true, credential: scope, signedHeaders: signedNames, signature: "",
                                               amzDate: amzDate, requestTime: now, rawRequestTime: amzDate,
                                               expires: Int64(expiresSeconds))
        let parts = SignedRequestParts(method: method, rawPath: rawPath, rawQuery: rawQuery, headers: signed)
        let key = signingKeys.key(secret: keyPair.secret, date: date, region: region)
        let signature = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: "UNSIGNED-PAYLOAD", signingKey: key).signature
        let url = "\(scheme)://\(host)\(rawPath)?\(rawQuery)&X-Amz-Signature=\(signature)"

        ledger.record(PresignRecord(
            method: method, rawPath: rawPath,
            query: parameters.map { PresignRecord.Parameter(name: $0.name, value: $0.value) },
            headers: signed.map { PresignRecord.Header(name: $0.name, value: $0.value) },
            accessKey: keyPair.accessKey, amzDate: amzDate, expiresSeconds: Int64(expiresSeconds), signature: signature, url: url))
        return PresignedURL(url: url, method: method, requiredHeaders: signed.filter { $0.name != "host" },
                            expiresAt: now.adding(seconds: Double(expiresSeconds)), signature: signature)
    }

    /// `http://host:port[/]` → (`http`, `host:port`).
    static func split(endpoint: String) -> (scheme: String, host: String)? {
        for scheme in ["http", "https"] {
            let prefix = scheme + "://"
            guard endpoint.lowercased().hasPrefix(prefix) else { continue }
            var host = String(endpoint.dropFirst(prefix.count))
            while host.hasSuffix("/") { host.removeLast() }
            guard !host.isEmpty, !host.contains("/"), !host.contains("?"), !host.contains(" ") else { return nil }
            return (scheme, host)
        }
        return nil
    }
}
