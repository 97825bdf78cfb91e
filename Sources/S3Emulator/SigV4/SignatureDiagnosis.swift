/// Finds why a signature did not match, in plain words; run only after a verification failed.
///
/// First, when the request presents a URL Hearth presigned itself, it compares the request with
/// what was signed and names each difference. Otherwise it recomputes the signature with the usual
/// suspects, one at a time, and reports the one that reproduces the client's signature.
struct SignatureDiagnosis: Sendable {
    let credentials: S3Credentials
    let ledger: PresignLedger
    let signingKeys: SigningKeyCache

    /// Regions a misconfigured client may have derived its signing key for.
    static let regions = [
        "us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1",
        "eu-central-2", "eu-north-1", "eu-south-1", "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
        "ap-southeast-1", "ap-southeast-2", "ap-east-1", "ca-central-1", "sa-east-1", "me-south-1", "af-south-1",
        "cn-north-1", "us-gov-west-1", "auto", "",
    ]

    private static let methods = ["GET", "PUT", "HEAD", "POST", "DELETE"]

    // MARK: SigV4

    /// The cause of a SigV4 mismatch, or a hint on what to compare when no suspect matched.
    /// - Parameter secret: the secret configured for the access key the request names.
    func diagnose(_ parts: SignedRequestParts, authorization: SigV4Authorization, payloadHash: String, secret: String) -> String {
        diagnoseWithEvidence(parts, authorization: authorization, payloadHash: payloadHash, secret: secret).message
    }

    /// The diagnosis, and the computation that reproduces the client's signature when one was
    /// found: the canonical request and string to sign the client must have signed (the web UI
    /// shows them as a line diff against Hearth's).
    func diagnoseWithEvidence(_ parts: SignedRequestParts, authorization: SigV4Authorization, payloadHash: String,
                              secret: String) -> (message: String, signed: SignatureVerifier.Computation?) {
        let provided = authorization.signature.lowercased()
        let scope = authorization.credential
        let key = signingKeys.key(secret: secret, date: scope.date, region: scope.region, service: scope.service)
        var signed: SignatureVerifier.Computation?
        func matches(options: CanonicalRequest.Options = CanonicalRequest.Options(), method: String? = nil,
                     headers: [(name: String, value: String)]? = nil, payload: String? = nil, signingKey: [UInt8]? = nil) -> Bool {
            let c = SignatureVerifier.compute(parts, authorization: authorization, payloadHash: payload ?? payloadHash,
                                              signingKey: signingKey ?? key, options: options, method: method, headers: headers)
            if c.signature == provided { signed = c }
            return c.signature == provided
        }
        if let ledgerFinding = compareWithLedger(parts, authorization: authorization) {
            // What Hearth presigned: its method and header values, kept only if it reproduces the signature.
            if let record = ledger.lookup(signature: authorization.signature) {
                var headers = parts.headers
                for h in record.headers where h.name != "host" { headers = replacing(h.name, with: h.value, in: headers) }
                _ = matches(method: record.method, headers: headers)
            }
            return (ledgerFinding, signed)
        }
        let message = diagnoseBySuspects(parts, authorization: authorization, payloadHash: payloadHash, secret: secret, check: { matches(options: $0, method: $1, headers: $2, payload: $3, signingKey: $4) })
        return (message, signed)
    }

    private func diagnoseBySuspects(_ parts: SignedRequestParts, authorization: SigV4Authorization, payloadHash: String, secret: String,
                                    check: (CanonicalRequest.Options, String?, [(name: String, value: String)]?, String?, [UInt8]?) -> Bool) -> String {
        let scope = authorization.credential
        func matches(options: CanonicalRequest.Options = CanonicalRequest.Options(), method: String? = nil,
                     headers: [(name: String, value: String)]? = nil, payload: String? = nil, signingKey: [UInt8]? = nil) -> Bool {
            check(options, method, headers, payload, signingKey)
        }

        // Another configured key's secret.
        for other in credentials.keys where other.accessKey != scope.accessKey {
            let otherKey = signingKeys.key(secret: other.secret, date: scope.date, region: scope.region, service: scope.service)
            if matches(signingKey: otherKey) {
                return "The signature was made with the secret key of access key '\(other.accessKey)', but the request names access key '\(scope.accessKey)': the client pairs one key's id with another key's secret."
            }
        }

        // Another method (a URL presigned for GET used with HEAD or PUT, …).
        for method in Self.methods where method != parts.method {
            if matches(method: method) {
                return "The signature is valid for a \(method) request, but this request is \(parts.method): a signature, and a presigned URL, is bound to one method."
            }
        }

        // Host with or without the port.
        let host = parts.header("host") ?? ""
        for candidate in hostVariants(host, isTLS: parts.isTLS, forwarded: parts.header("x-forwarded-host")) where candidate != host {
            if matches(headers: replacing("host", with: candidate, in: parts.headers)) {
                return "The client signed the Host header as '\(candidate)' but the request sent '\(host)': sign the host exactly as sent, port included (a proxy, or an endpoint URL that differs from the address used, changes it)."
            }
        }

        // A signed Content-Type other than the one sent: the classic presigned-PUT bug. A URL Hearth
        // did not mint does not say what was signed, so try the types clients commonly presign with.
        if authorization.signedHeaders.contains("content-type") {
            let sent = parts.header("content-type")
            var candidates = Self.commonContentTypes
            if let sent, let semicolon = sent.firstIndex(of: ";") {
                candidates.insert(String(sent[..<semicolon]).trimmingCharacters(in: .whitespaces), at: 0)
            }
            for candidate in candidates where candidate != sent {
                if matches(headers: replacing("content-type", with: candidate, in: parts.headers)) {
                    return "Content-Type was signed as \(candidate) but the request sent \(sent ?? "no Content-Type"): a presigned URL that signs content-type only accepts the exact value given when it was presigned."
                }
            }
        }

        // Path encoding.
        let canonicalPath = CanonicalRequest.uri(rawPath: parts.rawPath)
        let pathSuspects: [(CanonicalRequest.PathForm, String)] = [
            (.doubleEncoded, "The client URI-encoded the path twice (as '\(CanonicalRequest.uri(rawPath: parts.rawPath, form: .doubleEncoded))'); S3 encodes each path segment once. Generic SigV4 signers double-encode for other services: turn that off for S3 (e.g. Java SDK signer `doubleUrlEncode=false`, aws-sigv4 `uri_escape_path: false`)."),
            (.decoded, "The client signed the path without URI-encoding it ('\(CanonicalRequest.uri(rawPath: parts.rawPath, form: .decoded))' instead of '\(canonicalPath)')."),
            (.asSent, "The client signed the path as sent ('\(parts.rawPath)') instead of S3's canonical encoding ('\(canonicalPath)'): it encodes characters S3 leaves alone, or leaves some S3 encodes."),
            (.normalized, "The client removed '.'/'..' segments or repeated slashes before signing ('\(CanonicalRequest.uri(rawPath: parts.rawPath, form: .normalized))'); S3 signs the path exactly as sent."),
        ]
        for (form, message) in pathSuspects where CanonicalRequest.uri(rawPath: parts.rawPath, form: form) != canonicalPath {
            if matches(options: CanonicalRequest.Options(path: form)) { return message }
        }

        // `+` and `%20` in the query.
        if parts.rawQuery.contains("+") {
            if matches(options: CanonicalRequest.Options(plus: .literal)) {
                return "The query holds a raw '+' that the client signed as a literal plus (%2B); S3 reads '+' in a query as a space. Encode a literal plus as %2B in the URL."
            }
            if matches(options: CanonicalRequest.Options(plus: .raw)) {
                return "The client signed the query with a raw '+' instead of encoding it; SigV4 encodes every value (space as %20, plus as %2B)."
            }
        }

        // Query parameters in the order sent, or a parameter without `=` signed bare.
        if QueryParameters(rawQuery: parts.rawQuery).items.count > 1, matches(options: CanonicalRequest.Options(unsortedQuery: true)) {
            return "The client signed the query parameters in the order they were sent; SigV4 sorts them by name (then value) in the canonical query. curl's --aws-sigv4 and hand-written signers are the usual cause: sort the parameters before signing, or send them sorted."
        }
        if parts.rawQuery.split(separator: "&").contains(where: { !$0.contains("=") }) {
            if matches(options: CanonicalRequest.Options(bareQueryNames: true)) {
                let bare = parts.rawQuery.split(separator: "&").filter { !$0.contains("=") }.map { "'\($0)'" }.joined(separator: ", ")
                return "The client signed the query parameter(s) \(bare) without '='; SigV4's canonical query writes a parameter without a value as 'name=' (e.g. '?uploads' is signed as 'uploads=')."
            }
            if matches(options: CanonicalRequest.Options(unsortedQuery: true, bareQueryNames: true)) {
                return "The client signed the query unsorted and with bare names (no '='); SigV4 sorts the parameters and writes a parameter without a value as 'name='."
            }
        }

        // Header values before trimming.
        let signedValues = parts.headers.filter { authorization.signedHeaders.contains($0.name) }
        if signedValues.contains(where: { CanonicalRequest.trimmed($0.value) != $0.value }),
           matches(options: CanonicalRequest.Options(trimHeaderValues: false)) {
            let names = signedValues.filter { CanonicalRequest.trimmed($0.value) != $0.value }.map { "'\($0.name)'" }
            return "The client signed header value(s) of \(names.joined(separator: ", ")) untrimmed; SigV4 trims header values and collapses inner runs of spaces to one before signing."
        }

        // Another x-amz-content-sha256 mode.
        var payloads = [SignatureVerifier.emptySHA256, "UNSIGNED-PAYLOAD"]
        if let header = parts.header("x-amz-content-sha256") { payloads.insert(header, at: 0) }
        for payload in payloads where payload != payloadHash {
            if matches(payload: payload) {
                return "The client signed the payload hash as '\(payload)' but the request declares '\(payloadHash)': x-amz-content-sha256 must be the value that was signed (UNSIGNED-PAYLOAD, the body's SHA-256, or a STREAMING-* mode)."
            }
        }

        // Query parameters added after signing.
        let reserved: Set<String> = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
                                     "X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token"]
        let added = QueryParameters(rawQuery: parts.rawQuery).items.map(\.name).filter { !reserved.contains($0) }
        if !added.isEmpty && added.count <= 16 {
            for name in added where matches(options: CanonicalRequest.Options(droppedQueryParameters: [name])) {
                return "Query parameter '\(name)' was added to the URL after it was signed."
            }
            if added.count > 1, matches(options: CanonicalRequest.Options(droppedQueryParameters: Set(added))) {
                return "Query parameters \(added.map { "'\($0)'" }.joined(separator: ", ")) were added to the URL after it was signed."
            }
        }

        // A signing key derived for another region than the scope names.
        for region in Self.regions where region != scope.region {
            let otherKey = signingKeys.key(secret: secret, date: scope.date, region: region, service: scope.service)
            if matches(signingKey: otherKey) {
                return "The signing key was derived for region '\(region)' while the credential scope says '\(scope.region)': use one region for both."
            }
        }

        var message = "No known cause: Hearth recomputed the signature with the usual suspects (the other configured secret keys, other methods, the host with and without port or as localhost/127.0.0.1, the path encoded twice or not at all, '+' versus '%20', the query unsorted or with bare names, untrimmed header values, other x-amz-content-sha256 modes, query parameters added after signing, other regions) and none matched"
        let bound = authorization.signedHeaders.filter { $0 != "host" }
        if authorization.presigned && !bound.isEmpty {
            // A presigned URL that signs headers fails whenever the caller sends other values; Hearth
            // cannot know the signed values of a URL it did not mint, so it says what was sent.
            let sent = bound.map { name in "\(Self.displayName(name)): \(parts.header(name).map { "'\($0)'" } ?? "(not sent)")" }
            message += ". This URL signs \(bound.joined(separator: ", ")), so the request must send exactly the values that were signed; this one sent \(sent.joined(separator: ", ")). A different Content-Type than the one given when presigning is the classic cause. Otherwise the secret key for '\(scope.accessKey)' is wrong."
        } else {
            message += ". What remains is a secret key for '\(scope.accessKey)' other than the configured one, or a signer that builds the canonical request in a way Hearth does not know."
        }
        return message + " Compare the CanonicalRequest and StringToSign here with the client's (boto3: boto3.set_stream_logger('botocore.auth'))."
    }

    /// Names each difference between the request and what Hearth presigned, when the URL is one of
    /// Hearth's.
    private func compareWithLedger(_ parts: SignedRequestParts, authorization: SigV4Authorization) -> String? {
        guard authorization.presigned else { return nil }
        guard let record = ledger.lookup(signature: authorization.signature)
            ?? ledger.lookup(accessKey: authorization.credential.accessKey, amzDate: authorization.amzDate, rawPath: parts.rawPath)
        else { return nil }
        var differences: [String] = []
        if record.method != parts.method {
            differences.append("The URL was presigned for \(record.method) but the request used \(parts.method).")
        }
        if SigV4Encoding.decode(record.rawPath) != SigV4Encoding.decode(parts.rawPath) {
            differences.append("The URL was presigned for path \(record.rawPath) but the request asked for \(parts.rawPath).")
        }
        let query = QueryParameters(rawQuery: parts.rawQuery).items.filter { $0.name != "X-Amz-Signature" }
        for parameter in record.query {
            if let sent = query.first(where: { $0.name == parameter.name }) {
                if sent.value != parameter.value {
                    differences.append("Query parameter \(parameter.name) was signed as '\(parameter.value)' but the request sent '\(sent.value)'.")
                }
            } else {
                differences.append("Query parameter \(parameter.name) was signed but is missing from the request.")
            }
        }
        if authorization.signature.lowercased() != record.signature {
            differences.append("X-Amz-Signature differs from the one Hearth issued.")
        }
        for item in query where !record.query.contains(where: { $0.name == item.name }) {
            differences.append("Query parameter \(item.name) was added after signing.")
        }
        for header in record.headers {
            let values = parts.headers.filter { $0.name == header.name }.map { CanonicalRequest.trimmed($0.value) }
            let name = Self.displayName(header.name)
            if values.isEmpty {
                differences.append("\(name) was signed as \(header.value) but the request did not send it.")
            } else if values.joined(separator: ",") != CanonicalRequest.trimmed(header.value) {
                differences.append("\(name) was signed as \(header.value) but the request sent \(values.joined(separator: ",")).")
            }
        }
        guard !differences.isEmpty else { return nil }
        let signed = record.headers.map(\.name).joined(separator: ";")
        return "This URL was presigned by Hearth for \(record.method) \(record.rawPath) (signed headers: \(signed)). " + differences.joined(separator: " ")
    }

    // MARK: SigV2

    /// The cause of a SigV2 mismatch.
    func diagnoseSigV2(_ parts: SignedRequestParts, authorization: SigV2Authorization, query: QueryParameters,
                       resourceBucket: String?, secret: String) -> String {
        func signature(method: String? = nil, rawPath: String? = nil, headers: [(name: String, value: String)]? = nil,
                       bucket: String?? = .none, secret s: String? = nil) -> String {
            let sts = SigV2.stringToSign(method: method ?? parts.method, rawPath: rawPath ?? parts.rawPath, query: query,
                                         headers: headers ?? parts.headers, resourceBucket: bucket ?? resourceBucket,
                                         expires: authorization.expires)
            return SigV2.signature(secret: s ?? secret, stringToSign: sts)
        }
        let provided = authorization.signature
        // The classic: a URL presigned with a Content-Type, used with another one (or none).
        if authorization.presigned, let signedType = query.items.first(where: { $0.name.lowercased() == "content-type" })?.value {
            let sent = parts.header("content-type")
            if sent != signedType, signature(headers: replacing("content-type", with: signedType, in: parts.headers)) == provided {
                return "Content-Type was signed as \(signedType) but the request sent \(sent ?? "none")."
            }
        }
        for other in credentials.keys where other.accessKey != authorization.accessKey {
            if signature(secret: other.secret) == provided {
                return "The signature was made with the secret key of access key '\(other.accessKey)', but the request names access key '\(authorization.accessKey)'."
            }
        }
        for method in Self.methods where method != parts.method {
            if signature(method: method) == provided {
                return "The signature is valid for a \(method) request, but this request is \(parts.method)."
            }
        }
        if let sent = parts.header("content-type"), signature(headers: parts.headers.filter { $0.name != "content-type" }) == provided {
            return "The client signed without a Content-Type but the request sent Content-Type: \(sent)."
        }
        let decoded = SigV4Encoding.decode(parts.rawPath)
        if decoded != parts.rawPath, signature(rawPath: decoded) == provided {
            return "The client signed the resource with the decoded path ('\(decoded)'); SigV2 signs the path as sent in the URL ('\(parts.rawPath)')."
        }
        if resourceBucket != nil, signature(bucket: .some(nil)) == provided {
            return "The client signed the resource without the bucket name; with virtual-hosted addressing SigV2 signs '/bucket/key'."
        }
        return "No common cause matched (other secrets, methods, Content-Type, path encoding, bucket in the resource): most likely the secret key for '\(authorization.accessKey)' is wrong. Compare the StringToSign here with the client's."
    }

    // MARK: Helpers

    /// Content types clients most often presign uploads with (tried only after a mismatch).
    static let commonContentTypes = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "image/heif", "image/svg+xml",
        "application/octet-stream", "binary/octet-stream", "application/pdf", "application/json", "application/zip",
        "application/x-www-form-urlencoded", "multipart/form-data", "text/plain", "text/plain; charset=utf-8",
        "text/html", "text/csv", "video/mp4", "video/quicktime", "audio/mpeg", "audio/mp4", "",
    ]

    private func hostVariants(_ host: String, isTLS: Bool, forwarded: String?) -> [String] {
        var variants: [String] = []
        if let forwarded { variants.append(forwarded) }
        // A URL signed for `localhost` sent to `127.0.0.1` (or the reverse): the same server, another Host.
        for (a, b) in [("127.0.0.1", "localhost"), ("localhost", "127.0.0.1"), ("[::1]", "localhost"), ("localhost", "[::1]")]
        where host == a || host.hasPrefix(a + ":") {
            variants.append(b + host.dropFirst(a.count))
        }
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
            variants.append(String(host[..<colon]))
        } else if !host.isEmpty {
            variants.append(host + (isTLS ? ":443" : ":80"))
        }
        return variants
    }

    private func replacing(_ name: String, with value: String, in headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        var out = headers.filter { $0.name != name }
        out.append((name, value))
        return out
    }

    /// `Content-Type` for `content-type`; `x-amz-*` names stay lower-case as clients write them.
    static func displayName(_ name: String) -> String {
        if name.hasPrefix("x-amz-") { return name }
        return name.split(separator: "-").map { part in
            part == "md5" ? "MD5" : part.prefix(1).uppercased() + part.dropFirst()
        }.joined(separator: "-")
    }
}
