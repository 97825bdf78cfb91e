import HearthCrypto
import HearthHTTP

/// The SigV4 canonical request, built exactly as S3 builds it.
///
/// ```
/// <METHOD>\n<canonical URI>\n<canonical query>\n<name:value\n per signed header>\n<signed;headers>\n<payload hash>
/// ```
/// S3 differs from other services in the path: it takes the path as sent, decodes it and
/// URI-encodes each segment once, with no dot-segment or `//` normalisation (Related: "Create a
/// canonical request" in the S3 SigV4 documentation: "you do not normalize URI paths for requests to
/// Amazon S3"). The other forms (`PathForm`, `PlusForm`, untrimmed values) exist for the diagnosis,
/// which recomputes with the mistakes clients make.
struct CanonicalRequest: Sendable {
    /// How the canonical URI is made from the raw path.
    enum PathForm: Sendable, Equatable {
        /// Each segment decoded then encoded once (S3).
        case s3
        /// Encoded twice, as generic SigV4 signers for other services do.
        case doubleEncoded
        /// Decoded and not encoded again.
        case decoded
        /// The raw path verbatim.
        case asSent
        /// Dot segments and repeated slashes removed before encoding (other services' rule).
        case normalized
    }

    /// How `+` in the raw query is read.
    enum PlusForm: Sendable, Equatable {
        /// A space (S3's form decoding); re-encoded as `%20`.
        case space
        /// A literal plus; re-encoded as `%2B`.
        case literal
        /// Left as a raw `+` in the canonical form (a signer that did not encode it).
        case raw
    }

    /// Variations of the canonical form; the defaults are S3's rules.
    struct Options: Sendable, Equatable {
        var path: PathForm = .s3
        var plus: PlusForm = .space
        /// Trim header values and collapse inner whitespace runs (SigV4's rule).
        var trimHeaderValues = true
        /// Query parameters (decoded names) left out, as if added after signing.
        var droppedQueryParameters: Set<String> = []
        /// Query parameters in the order sent, not sorted (curl's `--aws-sigv4` with a hand-built
        /// query, naive signers).
        var unsortedQuery = false
        /// A parameter sent without `=` (`?uploads`) written as its bare name, not `name=`.
        var bareQueryNames = false
    }

    /// The canonical request bytes.
    let bytes: [UInt8]

    /// The canonical request as text.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Lower-case hex SHA-256 of the canonical request (the last line of the string to sign).
    var hashHex: String { SigV4Encoding.hex(Digest.sha256(bytes)) }

    /// Builds the canonical request.
    /// - Parameters:
    ///   - headers: the request's header fields with lower-cased names, in the order received.
    ///   - signedHeaders: the lower-case names the client listed as signed, in its order.
    ///   - presigned: leave `X-Amz-Signature` out of the query.
    init(method: String, rawPath: String, rawQuery: String, presigned: Bool,
         headers: [(name: String, value: String)], signedHeaders: [String], payloadHash: String,
         options: Options = Options()) {
        var out = [UInt8]()
        out.reserveCapacity(256 + rawPath.utf8.count + rawQuery.utf8.count)
        out.append(contentsOf: method.utf8)
        out.append(0x0A)
        CanonicalRequest.appendURI(rawPath: rawPath, form: options.path, to: &out)
        out.append(0x0A)
        CanonicalRequest.appendQuery(rawQuery: rawQuery, presigned: presigned, plus: options.plus,
                                     dropped: options.droppedQueryParameters, unsorted: options.unsortedQuery,
                                     bareNames: options.bareQueryNames, to: &out)
        out.append(0x0A)
        for name in signedHeaders {
            out.append(contentsOf: name.utf8)
            out.append(0x3A)
            var first = true
            for field in headers where field.name == name {
                if !first { out.append(0x2C) }
                first = false
                if options.trimHeaderValues {
                    CanonicalRequest.appendTrimmed(field.value, to: &out)
                } else {
                    out.append(contentsOf: field.value.utf8)
                }
            }
            out.append(0x0A)
        }
        out.append(0x0A)
        var firstName = true
        for name in signedHeaders {
            if !firstName { out.append(0x3B) }
            firstName = false
            out.append(contentsOf: name.utf8)
        }
        out.append(0x0A)
        out.append(contentsOf: payloadHash.utf8)
        bytes = out
    }

    // MARK: URI

    /// The canonical URI of `rawPath` in `form`.
    static func uri(rawPath: String, form: PathForm = .s3) -> String {
        var out = [UInt8]()
        appendURI(rawPath: rawPath, form: form, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendURI(rawPath: String, form: PathForm, to out: inout [UInt8]) {
        switch form {
        case .s3:
            appendS3URI(rawPath: rawPath, to: &out)
        case .doubleEncoded:
            var once = [UInt8]()
            appendS3URI(rawPath: rawPath, to: &once)
            SigV4Encoding.appendEncoded(once, keepSlash: true, to: &out)
        case .decoded:
            let raw = Array(rawPath.utf8)
            if raw.first != 0x2F { out.append(0x2F) }
            Request.appendPercentDecoded(raw, plusAsSpace: false, to: &out)
        case .asSent:
            if rawPath.utf8.first != 0x2F { out.append(0x2F) }
            out.append(contentsOf: rawPath.utf8)
        case .normalized:
            var once = [UInt8]()
            appendS3URI(rawPath: rawPath, to: &once)
            var segments: [ArraySlice<UInt8>] = []
            for segment in once.split(separator: 0x2F, omittingEmptySubsequences: true) {
                if segment.elementsEqual([0x2E]) { continue }
                if segment.elementsEqual([0x2E, 0x2E]) {
                    if !segments.isEmpty { segments.removeLast() }
                    continue
                }
                segments.append(segment)
            }
            out.append(0x2F)
            for (i, segment) in segments.enumerated() {
                if i > 0 { out.append(0x2F) }
                out.append(contentsOf: segment)
            }
            if !segments.isEmpty, once.last == 0x2F { out.append(0x2F) }
        }
    }

    private static func appendS3URI(rawPath: String, to out: inout [UInt8]) {
        let raw = rawPath.utf8
        if raw.isEmpty {
            out.append(0x2F)
            return
        }
        if raw.first != 0x2F { out.append(0x2F) }
        // Most paths need no re-encoding; copy them as they are.
        if raw.allSatisfy({ SigV4Encoding.isUnreserved($0) || $0 == 0x2F }) {
            out.append(contentsOf: raw)
            return
        }
        let bytes = Array(raw)
        var decoded = [UInt8]()
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x2F { end += 1 }
            decoded.removeAll(keepingCapacity: true)
            Request.appendPercentDecoded(bytes[start..<end], plusAsSpace: false, to: &decoded)
            SigV4Encoding.appendEncoded(decoded, keepSlash: false, to: &out)
            if end < bytes.count { out.append(0x2F) }
            start = end + 1
        }
    }

    // MARK: Query

    /// The canonical query string of `rawQuery`.
    static func query(rawQuery: String, presigned: Bool = false, plus: PlusForm = .space, dropped: Set<String> = []) -> String {
        var out = [UInt8]()
        appendQuery(rawQuery: rawQuery, presigned: presigned, plus: plus, dropped: dropped, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let signatureParameter = Array("X-Amz-Signature".utf8)

    static func appendQuery(rawQuery: String, presigned: Bool, plus: PlusForm, dropped: Set<String>, unsorted: Bool = false,
                            bareNames: Bool = false, to out: inout [UInt8]) {
        guard !rawQuery.isEmpty else { return }
        var pairs: [(name: [UInt8], value: [UInt8], bare: Bool)] = []
        var raw = rawQuery
        raw.withUTF8 { bytes in
            var scratch = [UInt8]()
            Request.forEachQueryPair(bytes) { name, rawValue in
                let value = rawValue ?? UnsafeBufferPointer(rebasing: name[name.endIndex..<name.endIndex])
                if presigned || !dropped.isEmpty {
                    scratch.removeAll(keepingCapacity: true)
                    Request.appendPercentDecoded(name, plusAsSpace: true, to: &scratch)
                    if presigned && scratch == signatureParameter { return }
                    if !dropped.isEmpty && dropped.contains(String(decoding: scratch, as: UTF8.self)) { return }
                }
                pairs.append((canonicalComponent(name, plus: plus, scratch: &scratch), canonicalComponent(value, plus: plus, scratch: &scratch),
                              bareNames && rawValue == nil))
            }
        }
        if !unsorted {
            pairs.sort { a, b in
                if a.name != b.name { return a.name.lexicographicallyPrecedes(b.name) }
                return a.value.lexicographicallyPrecedes(b.value)
            }
        }
        for (i, pair) in pairs.enumerated() {
            if i > 0 { out.append(0x26) }
            out.append(contentsOf: pair.name)
            if pair.bare { continue }
            out.append(0x3D)
            out.append(contentsOf: pair.value)
        }
    }

    /// One query name or value decoded and re-encoded (`plus` says how a raw `+` reads).
    private static func canonicalComponent(_ raw: UnsafeBufferPointer<UInt8>, plus: PlusForm, scratch: inout [UInt8]) -> [UInt8] {
        // Most names and values are already canonical.
        if raw.allSatisfy(SigV4Encoding.isUnreserved) { return Array(raw) }
        var encoded = [UInt8]()
        encoded.reserveCapacity(raw.count + 8)
        if plus == .raw {
            // A signer that encoded everything but left a raw `+` alone.
            var i = 0
            while i < raw.count {
                let c = raw[i]
                if c == 0x2B {
                    encoded.append(c)
                    i += 1
                } else if c == 0x25, i + 2 < raw.count, let h = SigV4Encoding.hexValue(raw[i + 1]), let l = SigV4Encoding.hexValue(raw[i + 2]) {
                    SigV4Encoding.appendEncoded(CollectionOfOne(h << 4 | l), keepSlash: false, to: &encoded)
                    i += 3
                } else {
                    SigV4Encoding.appendEncoded(CollectionOfOne(c), keepSlash: false, to: &encoded)
                    i += 1
                }
            }
            return encoded
        }
        scratch.removeAll(keepingCapacity: true)
        Request.appendPercentDecoded(raw, plusAsSpace: plus == .space, to: &scratch)
        SigV4Encoding.appendEncoded(scratch, keepSlash: false, to: &encoded)
        return encoded
    }

    // MARK: Headers

    @inline(__always)
    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0B || c == 0x0C }

    /// Appends `value` trimmed, with every inner run of whitespace collapsed to one space.
    static func appendTrimmed(_ value: String, to out: inout [UInt8]) {
        var pendingSpace = false
        var started = false
        for c in value.utf8 {
            if isSpace(c) {
                pendingSpace = started
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                started = true
                out.append(c)
            }
        }
    }

    /// A header value as SigV4 canonicalises it.
    static func trimmed(_ value: String) -> String {
        var out = [UInt8]()
        appendTrimmed(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
