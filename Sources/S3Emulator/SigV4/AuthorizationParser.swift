import HearthCore

/// How a request authenticates.
enum AuthScheme: Sendable, Equatable {
    /// No credentials at all.
    case anonymous
    /// `Authorization: AWS4-HMAC-SHA256 …` (the header's value).
    case sigV4Header(String)
    /// `X-Amz-Algorithm`/`X-Amz-Credential`/… query parameters.
    case sigV4Query
    /// `Authorization: AWS AKID:signature` (the header's value).
    case sigV2Header(String)
    /// `AWSAccessKeyId`/`Signature`/`Expires` query parameters.
    case sigV2Query
}

/// The credential scope `AKID/yyyyMMdd/region/service/aws4_request`.
struct CredentialScope: Sendable, Equatable {
    let accessKey: String
    let date: String
    let region: String
    let service: String
    let terminal: String

    /// `yyyyMMdd/region/service/aws4_request`, the third line of the string to sign.
    var scope: String { "\(date)/\(region)/\(service)/\(terminal)" }
}

/// A parsed SigV4 authorization, from the header or from a presigned query.
struct SigV4Authorization: Sendable {
    /// Whether it came from presigned query parameters.
    let presigned: Bool
    /// The credential scope (validated against the endpoint's region and `s3`).
    let credential: CredentialScope
    /// The signed header names, lower-cased, in the client's order.
    let signedHeaders: [String]
    /// The signature as sent.
    let signature: String
    /// The request timestamp as it appears in the string to sign (`yyyyMMdd'T'HHmmss'Z'`).
    let amzDate: String
    /// The request timestamp.
    let requestTime: Instant
    /// The timestamp header as sent (for RequestTimeTooSkewed's RequestTime).
    let rawRequestTime: String
    /// X-Amz-Expires for presigned requests.
    let expires: Int64?
}

/// A parsed SigV2 authorization.
struct SigV2Authorization: Sendable {
    let presigned: Bool
    let accessKey: String
    let signature: String
    /// The `Expires` value as sent (presigned only).
    let expires: String?
}

/// Reads the credentials a request carries and validates their shape, with S3's error for each
/// malformation (Related: "Authenticating Requests: Using the Authorization Header" and "Using Query
/// Parameters" in the S3 API reference).
enum AuthorizationParser {
    static let algorithm = "AWS4-HMAC-SHA256"
    private static let v4QueryParameters = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature"]
    private static let v2QueryParameters = ["AWSAccessKeyId", "Signature"]

    /// Which scheme the request uses.
    static func scheme(authorization: String?, query: QueryParameters) throws(SigV4Failure) -> AuthScheme {
        let v4Query = v4QueryParameters.contains(where: query.contains)
        let v2Query = !v4Query && v2QueryParameters.contains(where: query.contains)
        if let authorization {
            if v4Query || v2Query { throw .multipleAuthMechanisms(header: authorization) }
            if authorization == algorithm || authorization.hasPrefix(algorithm + " ") { return .sigV4Header(authorization) }
            if authorization.hasPrefix("AWS ") { return .sigV2Header(authorization) }
            throw .unsupportedAuthorizationType(header: authorization)
        }
        if v4Query { return .sigV4Query }
        if v2Query { return .sigV2Query }
        return .anonymous
    }

    // MARK: SigV4 header

    /// Parses `AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` and the request date.
    /// - Parameter headers: lower-cased header names with their values.
    static func parseHeader(_ value: String, headers: [(name: String, value: String)], expectedRegion: String,
                            service: String = "s3") throws(SigV4Failure) -> SigV4Authorization {
        var credential: String?
        var signedHeaders: String?
        var signature: String?
        // Split on bytes when the header is ASCII (as every signer writes it): splitting on
        // Characters cost more than the rest of the verification.
        let rest = value.dropFirst(algorithm.count)
        let parts = SigV4Encoding.isASCII(value) ? rest.utf8.split(separator: 0x2C).map { Substring($0) } : rest.split(separator: ",")
        for part in parts {
            let component = part.sigV4TrimmingSpaces
            if component.isEmpty { continue }
            guard let eq = component.firstIndex(of: "=") else { throw .headerComponentMalformed(component: String(component)) }
            let key = component[..<eq]
            let v = String(component[component.index(after: eq)...])
            switch key {
            case "Credential": credential = v
            case "SignedHeaders": signedHeaders = v
            case "Signature": signature = v
            default: throw .headerComponentMalformed(component: String(component))
            }
        }
        guard let credential, let signedHeaders, let signature else { throw .headerMissingComponents }
        let scope = try parseCredential(credential, presigned: false, expectedRegion: expectedRegion, service: service)

        // The timestamp: x-amz-date, else Date (Related: "x-amz-date … or the Date header").
        let amzDate: String
        let requestTime: Instant
        let raw: String
        if let xAmzDate = headers.first(where: { $0.name == "x-amz-date" })?.value {
            guard let t = SigV4Time.parseAmzDate(xAmzDate) else { throw .missingDate }
            (amzDate, requestTime, raw) = (xAmzDate, t, xAmzDate)
        } else if let date = headers.first(where: { $0.name == "date" })?.value, let t = SigV4Time.parseHTTPDate(date) {
            (amzDate, requestTime, raw) = (SigV4Time.amzDate(t), t, date)
        } else {
            throw .missingDate
        }
        guard amzDate.utf8.prefix(8).elementsEqual(scope.date.utf8) else {
            throw .headerCredentialDateMismatch(credentialDate: scope.date, requestDate: amzDate)
        }
        return SigV4Authorization(presigned: false, credential: scope, signedHeaders: splitSignedHeaders(signedHeaders),
                                  signature: signature, amzDate: amzDate, requestTime: requestTime, rawRequestTime: raw,
                                  expires: nil)
    }

    // MARK: SigV4 query

    /// Parses and validates the presigned-URL parameters.
    static func parseQuery(_ query: QueryParameters, expectedRegion: String, service: String = "s3") throws(SigV4Failure) -> SigV4Authorization {
        guard let algorithmValue = query.first("X-Amz-Algorithm"), let credential = query.first("X-Amz-Credential"),
              let signature = query.first("X-Amz-Signature"), let date = query.first("X-Amz-Date"),
              let signedHeaders = query.first("X-Amz-SignedHeaders"), let expiresText = query.first("X-Amz-Expires")
        else { throw .queryMissingParameters }
        guard algorithmValue == algorithm else { throw .queryUnsupportedAlgorithm(given: algorithmValue) }
        let scope = try parseCredential(credential, presigned: true, expectedRegion: expectedRegion, service: service)
        guard let requestTime = SigV4Time.parseAmzDate(date) else { throw .queryDateFormat(given: date) }
        guard let expires = Int64(expiresText) else { throw .queryExpiresNotNumber(given: expiresText) }
        guard expires >= 0 else { throw .queryExpiresNegative }
        guard expires <= 604_800 else { throw .queryExpiresTooLarge(given: expires) }
        guard date.utf8.prefix(8).elementsEqual(scope.date.utf8) else {
            throw .queryCredentialDateMismatch(credentialDate: scope.date, requestDate: String(date.prefix(8)))
        }
        return SigV4Authorization(presigned: true, credential: scope, signedHeaders: splitSignedHeaders(signedHeaders),
                                  signature: signature, amzDate: date, requestTime: requestTime, rawRequestTime: date,
                                  expires: expires)
    }

    // MARK: Credential

    /// Parses and validates `AKID/yyyyMMdd/region/service/aws4_request`.
    static func parseCredential(_ text: String, presigned: Bool, expectedRegion: String, service expectedService: String) throws(SigV4Failure) -> CredentialScope {
        let parts = text.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).map { String(Substring($0)) }
        guard parts.count == 5 else { throw presigned ? .queryCredentialMalformed : .headerCredentialMalformed }
        let (accessKey, date, region, service, terminal) = (parts[0], parts[1], parts[2], parts[3], parts[4])
        guard !accessKey.isEmpty else { throw presigned ? .queryEmptyAccessKey : .headerEmptyAccessKey }
        guard SigV4Time.isValidScopeDate(date) else {
            throw presigned ? .queryCredentialDateFormat(date: date) : .headerCredentialDateFormat(date: date)
        }
        guard region == expectedRegion else {
            throw presigned ? .queryWrongRegion(given: region, expected: expectedRegion) : .headerWrongRegion(given: region, expected: expectedRegion)
        }
        guard service == expectedService else { throw presigned ? .queryWrongService(given: service) : .headerWrongService(given: service) }
        guard terminal == "aws4_request" else { throw presigned ? .queryWrongTerminal(given: terminal) : .headerWrongTerminal(given: terminal) }
        return CredentialScope(accessKey: accessKey, date: date, region: region, service: service, terminal: terminal)
    }

    /// `host;x-amz-date` → `["host", "x-amz-date"]` (lower-cased, empty names dropped).
    static func splitSignedHeaders(_ text: String) -> [String] {
        text.utf8.split(separator: 0x3B, omittingEmptySubsequences: true)
            .map { String(Substring($0)).sigV4TrimmingSpaces.lowercased() }.filter { !$0.isEmpty }
    }

    // MARK: SigV2

    /// Parses `AWS AKID:signature`.
    static func parseSigV2Header(_ value: String) throws(SigV4Failure) -> SigV2Authorization {
        let credentials = value.dropFirst(4).sigV4TrimmingSpaces
        guard let colon = credentials.lastIndex(of: ":") else { throw .sigV2HeaderMalformed(header: value) }
        let accessKey = String(credentials[..<colon])
        let signature = String(credentials[credentials.index(after: colon)...])
        guard !accessKey.isEmpty, !signature.isEmpty else { throw .sigV2HeaderMalformed(header: value) }
        return SigV2Authorization(presigned: false, accessKey: accessKey, signature: signature, expires: nil)
    }

    /// Parses the presigned `AWSAccessKeyId`, `Signature` and `Expires` parameters.
    static func parseSigV2Query(_ query: QueryParameters) throws(SigV4Failure) -> SigV2Authorization {
        guard let accessKey = query.first("AWSAccessKeyId"), let signatureItem = query.item("Signature"),
              let expires = query.first("Expires")
        else { throw .sigV2MissingQueryParameters }
        // Base64 holds `+`; a client that left it unencoded meant a plus, not a space.
        let signature = SigV4Encoding.decode(signatureItem.rawValue ?? "", plusAsSpace: false)
        return SigV2Authorization(presigned: true, accessKey: accessKey, signature: signature, expires: expires)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var sigV4TrimmingSpaces: SubSequence {
        var start = startIndex
        var end = endIndex
        while start < end, self[start] == " " || self[start] == "\t" { start = index(after: start) }
        while end > start, self[index(before: end)] == " " || self[index(before: end)] == "\t" { end = index(before: end) }
        return self[start..<end]
    }
}
