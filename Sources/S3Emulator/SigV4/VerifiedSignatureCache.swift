import Foundation
import HearthHTTP

/// SigV4 verifications that succeeded, remembered with every input they read, so a request
/// repeated byte for byte — a presigned URL fetched again, a signed request replayed within its
/// 15 minutes, as S3 allows — skips the query parsing, the canonical request, SHA-256 and the HMAC
/// (about a quarter of a presigned GET's instructions).
///
/// Why it is sound: apart from the clock and the credentials, a SigV4 verification is a pure
/// function of the method, the raw path, the raw query and the header fields it reads — the
/// signed ones, every `x-amz-*` one (unsigned ones are refused, checksums and payload modes are
/// read from them) and `Authorization`. An entry keeps all of those as bytes and a hit needs every
/// one equal (as UTF-8 bytes: Swift's `==` equates canonically equivalent text, which signs
/// differently). What can change between uses is checked again on every hit with the values of the
/// moment — the URL's expiry or the header date's skew against Hearth's clock as it now reads
/// (frozen or shifted by the admin endpoint), the access key still having the secret it was
/// verified with, the key being allowed on this request's bucket — and a hit that fails any check
/// goes through the full verifier, which gives the exact error. Failures are never remembered.
///
/// Bounded: at most `capacity` entries; when full it is emptied (a replayed request costs one full
/// verification again).
final class VerifiedSignatureCache: @unchecked Sendable {
    /// One successful verification and the inputs it read.
    /// A class: a hit takes one reference out of the dictionary under the lock, where the struct's
    /// ten fields were each retained and released (~0.5k instructions a presigned GET).
    final class Entry: Sendable {
        let method: String
        let rawPath: String
        let rawQuery: String
        /// The header fields the verification read (`reads`), names lower-cased, in the order received.
        let inputs: [(name: String, value: String)]
        let authorization: SigV4Authorization
        /// The secret the signature was verified with.
        let secret: String
        let result: AuthenticatedRequest
        /// The raw query's parameters as `Request.queryItems` parses them (a pure function of the
        /// raw query, which a hit has byte for byte): a hit hands them over so routing does not
        /// split and decode the long presigned query again.
        let queryItems: [(name: String, value: String?)]

        init(method: String, rawPath: String, rawQuery: String, inputs: [(name: String, value: String)],
             authorization: SigV4Authorization, secret: String, result: AuthenticatedRequest,
             queryItems: [(name: String, value: String?)]) {
            self.method = method
            self.rawPath = rawPath
            self.rawQuery = rawQuery
            self.inputs = inputs
            self.authorization = authorization
            self.secret = secret
            self.result = result
            self.queryItems = queryItems
        }
    }

    /// What carries the signature: the Authorization header's value, else the raw query.
    private struct Key: Hashable, Sendable {
        let carrier: ExactText
        let header: Bool

        /// Hashes the carrier's length and the 64 bytes after its last `Signature=` only (the whole
        /// carrier when it has none): the signature's hex digits already tell entries apart, and
        /// SipHash over a whole presigned query (~300 bytes) cost ~2,500 instructions per request.
        /// Equality still compares every byte, so a shared part costs a probe, never a wrong hit.
        func hash(into hasher: inout Hasher) {
            var text = carrier.text
            text.withUTF8 { bytes in
                let all = UnsafeRawBufferPointer(bytes)
                var part = all
                if let start = Self.signatureStart(bytes) {
                    part = UnsafeRawBufferPointer(rebasing: all[start..<min(all.count, start + 64)])
                }
                hasher.combine(bytes: part)
                hasher.combine(all.count)
            }
            hasher.combine(header)
        }

        /// The offset just past the last `Signature=` in `bytes`, if any. Searched from the end,
        /// where both carriers put the signature, so a presigned query is scanned over ~75 bytes,
        /// not its ~300.
        static func signatureStart(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
            let needle: StaticString = "Signature="
            let n = needle.utf8CodeUnitCount
            let p = needle.utf8Start
            var i = bytes.count - n
            while i >= 0 {
                if bytes[i] == p[0] {
                    var j = 1
                    while j < n && bytes[i + j] == p[j] { j += 1 }
                    if j == n { return i + n }
                }
                i -= 1
            }
            return nil
        }
    }

    // Guarded by `lock`; entries are immutable.
    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private let capacity: Int

    /// A cache of at most `capacity` verifications.
    init(capacity: Int = 512) { self.capacity = max(1, capacity) }

    /// How many verifications are remembered.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }

    /// Whether the verifier reads header `name` (lower-case) of a request signing `signedHeaders`.
    /// The prefix is matched on the bytes (`hasPrefix` compares Characters, ~0.3k instructions a
    /// field): a name whose Characters start with `x-amz-` has those bytes first, so this reads every
    /// field it did and at most a few more — compared as well, which only makes a hit stricter.
    static func reads(_ name: String, signedHeaders: [String]) -> Bool {
        S3Context.nameHasPrefix(name, "x-amz-") || name == "authorization" || signedHeaders.contains(name)
    }

    /// The entry whose inputs are byte for byte `request`'s, if any. `authorization` is the
    /// request's first Authorization header.
    func lookup(_ request: Request, authorization: String?) -> Entry? {
        guard let key = Self.key(rawQuery: request.rawQuery, authorization: authorization) else { return nil }
        lock.lock()
        let found = entries[key]
        lock.unlock()
        guard let entry = found, ExactText.sameBytes(entry.method, request.method), ExactText.sameBytes(entry.rawPath, request.rawPath),
              ExactText.sameBytes(entry.rawQuery, request.rawQuery) else { return nil }
        // The fields the verifier would read, in order, against those it read. An ASCII name (every
        // real one) is compared lower-cased byte by byte without making its lower-cased string.
        var i = 0
        let signed = entry.authorization.signedHeaders
        for field in request.headers.fields {
            if HTTPHeaders.isASCIIName(field.name) {
                guard Self.reads(asciiName: field.name, signedHeaders: signed) else { continue }
                guard i < entry.inputs.count, HTTPHeaders.lowercasedASCIIName(field.name, is: entry.inputs[i].name),
                      ExactText.sameBytes(entry.inputs[i].value, field.value) else { return nil }
                i += 1
                continue
            }
            let name = HTTPHeaders.lowercasedName(field.name)
            guard Self.reads(name, signedHeaders: signed) else { continue }
            guard i < entry.inputs.count, ExactText.sameBytes(entry.inputs[i].name, name),
                  ExactText.sameBytes(entry.inputs[i].value, field.value) else { return nil }
            i += 1
        }
        return i == entry.inputs.count ? entry : nil
    }

    /// `reads(lowercasedName(name), signedHeaders:)` decided on the bytes of an ASCII `name`
    /// (`HTTPHeaders.isASCIIName`; a name with other bytes needs Unicode's rules to be lowered).
    static func reads(asciiName name: String, signedHeaders: [String]) -> Bool {
        S3Context.nameHasPrefix(name, "x-amz-") || HTTPHeaders.lowercasedASCIIName(name, is: "authorization")
            || signedHeaders.contains { HTTPHeaders.lowercasedASCIIName(name, is: $0) }
    }

    /// Remembers a successful verification of `parts` (the request as received, names lower-cased),
    /// with the request's parsed query parameters.
    func store(_ parts: SignedRequestParts, authorization: SigV4Authorization, secret: String, result: AuthenticatedRequest,
               queryItems: [(name: String, value: String?)]) {
        guard let key = Self.key(rawQuery: parts.rawQuery, authorization: parts.header("authorization")) else { return }
        let entry = Entry(method: parts.method, rawPath: parts.rawPath, rawQuery: parts.rawQuery,
                          inputs: parts.headers.filter { Self.reads($0.name, signedHeaders: authorization.signedHeaders) },
                          authorization: authorization, secret: secret, result: result, queryItems: queryItems)
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= capacity && entries[key] == nil { entries.removeAll(keepingCapacity: true) }
        entries[key] = entry
    }

    /// Forgets every verification.
    func removeAll() {
        lock.lock()
        entries.removeAll()
        lock.unlock()
    }

    private static func key(rawQuery: String, authorization: String?) -> Key? {
        if let authorization { return Key(carrier: ExactText(authorization), header: true) }
        return rawQuery.isEmpty ? nil : Key(carrier: ExactText(rawQuery), header: false)
    }
}
