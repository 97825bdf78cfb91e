import Foundation
import HearthCore
import HearthCrypto
import SecurityRules

/// Who a request acts for, from its `Authorization` header, as the Firestore emulator decides it.
enum Caller {
    /// `Bearer owner` (or a Google OAuth access token): rules do not apply.
    case admin
    /// A client: `auth` is `request.auth` (nil when signed out).
    case client(auth: RulesValue?)

    var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }

    /// Reads the header. A bearer that is not a JWT is refused with the emulator's `invalid jwt`.
    ///
    /// The verifier (the auth emulator's) decides signed and unsigned tokens first; when it
    /// refuses a token that still decodes as a JWT, the token is accepted as decoded, because the
    /// Firestore emulator never checks signatures, expiry or audience (the rules-unit-testing mock
    /// tokens carry `exp` 3600 seconds after 1970). `known` remembers tokens whose answer cannot
    /// change (see `CallerCache`), so a client's repeated token is not decoded again.
    ///
    /// One refusal is final: a token whose `iat` is after `now` (the clock was moved back) is
    /// UNAUTHENTICATED, as production's verifiers refuse it, cached or not.
    static func from(authorization: String?, projectID: String, verifier: any IDTokenVerifier,
                     logger: Logger, known: CallerCache? = nil, now: Int64? = nil) throws(FirestoreError) -> Caller {
        guard let authorization else { return .client(auth: nil) }
        // The header a client sent last, compared whole: finding the token in it first copied the
        // kilobyte token into a string of its own on every request (~1.3k instructions).
        if let (auth, issuedAt) = known?.entry(forHeader: authorization) {
            if let now, let issuedAt, issuedAt > now { throw futureToken }
            return .client(auth: auth)
        }
        if let token = simpleBearerToken(authorization) {
            let caller = try from(token: token, projectID: projectID, verifier: verifier, known: known, now: now)
            known?.noteHeader(authorization, of: token)
            return caller
        }
        let header = authorization.trimmingCharacters(in: .whitespaces)
        guard !header.isEmpty else { return .client(auth: nil) }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw .unauthenticated("Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
        }
        return try from(token: parts[1].trimmingCharacters(in: .whitespaces), projectID: projectID, verifier: verifier,
                        known: known, now: now)
    }

    /// The token of `Bearer <token>` when the header is the plain ASCII form every client sends,
    /// found without Foundation's trimming (which bridges the whole header through UTF-16 and cost
    /// more than the rest of a document read); nil when the general path must decide.
    ///
    /// It agrees with that path whenever it answers: both ends are printable ASCII (nothing to trim),
    /// `bearer` in any case is followed by exactly one space and a printable ASCII byte (so the
    /// space is a whole `Character`, the first separator, and the token needs no trimming either).
    static func simpleBearerToken(_ header: String) -> String? {
        let utf8 = header.utf8
        guard utf8.count > 7, let last = utf8.last, isPrintableASCII(last) else { return nil }
        var i = utf8.startIndex
        for expected in "bearer".utf8 {
            // ASCII letters only: `| 0x20` folds upper case onto lower case.
            guard utf8[i] | 0x20 == expected else { return nil }
            i = utf8.index(after: i)
        }
        guard utf8[i] == 0x20 else { return nil }
        i = utf8.index(after: i)
        guard isPrintableASCII(utf8[i]) else { return nil }
        return String(header[i...])
    }

    private static func isPrintableASCII(_ b: UInt8) -> Bool { b > 0x20 && b < 0x7F }

    private static func from(token: String, projectID: String, verifier: any IDTokenVerifier,
                             known: CallerCache?, now: Int64?) throws(FirestoreError) -> Caller {
        // Any string that lower-cases to "owner" is short; a JWT is not worth lower-casing.
        if (token.utf8.count <= 64 && token.lowercased() == "owner") || token.hasPrefix("ya29.") { return .admin }
        if let (auth, issuedAt) = known?.entry(for: token) {
            if let now, let issuedAt, issuedAt > now { throw futureToken }
            return .client(auth: auth)
        }
        let verified: RulesValue
        let issuedAt: Int64?
        do {
            let v = try verifier.verify(idToken: token, projectID: projectID, checkRevoked: false)
            verified = RulesConversion.auth(uid: v.uid, claims: v.claims)
            issuedAt = v.claims["iat"]?.intValue
        } catch .issuedInFuture {
            throw futureToken
        } catch {
            guard let decoded = unverifiedAuth(token) else { throw .invalidArgument("invalid jwt") }
            return .client(auth: decoded)
        }
        // Remembered only when the token as decoded says the same: then a later refusal (expiry on
        // the emulator clock, say) would fall back to exactly this answer, so it cannot change.
        if let known, unverifiedAuth(token) == verified { known.remember(verified, issuedAt: issuedAt, for: token) }
        return .client(auth: verified)
    }

    private static let futureToken = FirestoreError.unauthenticated(
        "Request had invalid authentication credentials. " + IDTokenError.issuedInFuture.message)

    /// `request.auth` from the token's claims as decoded (uid `user_id`, else `sub`); nil when not a JWT.
    private static func unverifiedAuth(_ token: String) -> RulesValue? {
        guard let claims = decodeUnverified(token) else { return nil }
        let uid = claims["user_id"]?.stringValue ?? claims["sub"]?.stringValue ?? ""
        return RulesConversion.auth(uid: uid, claims: claims)
    }

    /// The payload of a JWT (`header.payload.signature`), unverified; nil when not a JWT.
    static func decodeUnverified(_ token: String) -> JSONObject? {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
              let headerData = Base64URL.decode(String(segments[0])),
              case .object? = try? JSON.parse(headerData),
              let payloadData = Base64URL.decode(String(segments[1])),
              case .object(let claims)? = try? JSON.parse(payloadData)
        else { return nil }
        return claims
    }
}

/// ID tokens already turned into `request.auth`, so a client's every request does not verify,
/// decode and convert the same token again (that was two thirds of a document read).
///
/// Only answers that cannot change are kept: the verifier accepted the token, and the claims as
/// decoded give the same `request.auth`. Accepted, the verifier answers the same for the same token
/// (uid and claims come from the token); refused later (expired on the emulator clock, another
/// project), the token is used as decoded — the same value again. So entries never go stale.
///
/// Tokens and headers are compared by their bytes (`ExactString`), never by `String`'s `==`:
/// canonical equivalence made a token with U+212A KELVIN SIGN where the verified one has `K` the
/// same key, and answered that token (which is no JWT: its base64 does not decode) as the verified
/// one's caller.
final class CallerCache: @unchecked Sendable {
    // `entries` is guarded by `lock`.
    private let lock = NSLock()
    private var entries: [ExactString: (auth: RulesValue, issuedAt: Int64?)] = [:]
    /// The entry found last (always one of `entries`).
    private var last: (token: String, auth: RulesValue, issuedAt: Int64?)?
    /// A plain `Bearer` header (`Caller.simpleBearerToken`) whose token is `last`'s, with that answer.
    private var lastHeader: (header: String, auth: RulesValue, issuedAt: Int64?)?

    /// Distinct tokens kept; when full the cache starts over (tokens are re-verified once).
    static let capacity = 1024

    func auth(for token: String) -> RulesValue? { entry(for: token)?.auth }

    /// The remembered `request.auth` and the token's `iat` (checked against the clock on every use).
    func entry(for token: String) -> (auth: RulesValue, issuedAt: Int64?)? {
        lock.lock()
        defer { lock.unlock() }
        // A client sends one token for an hour: comparing it with the last one found (a memcmp)
        // spares hashing its kilobyte on every request.
        if let last, ExactString.equal(last.token, token) { return (last.auth, last.issuedAt) }
        guard let found = entries[ExactString(token)] else { return nil }
        last = (token, found.auth, found.issuedAt)
        return found
    }

    /// The remembered answer for a whole `Authorization` value, when it is the header noted last
    /// (`noteHeader`): the token in it is remembered, so this is its `entry(for:)`.
    func entry(forHeader header: String) -> (auth: RulesValue, issuedAt: Int64?)? {
        lock.lock()
        defer { lock.unlock() }
        guard let lastHeader, ExactString.equal(lastHeader.header, header) else { return nil }
        // The same bytes in another string (a new connection's first request, whose connection
        // then hands the same string over call after call): that one is kept instead, so the next
        // `==` is a comparison of two words, not of the kilobyte token byte by byte.
        if !ExactString.sameWords(lastHeader.header, header) { self.lastHeader = (header, lastHeader.auth, lastHeader.issuedAt) }
        return (lastHeader.auth, lastHeader.issuedAt)
    }

    /// Notes that `header` is a plain `Bearer` header of `token`, if `token` is the entry found last.
    func noteHeader(_ header: String, of token: String) {
        lock.lock()
        defer { lock.unlock() }
        guard let last, ExactString.equal(last.token, token) else { return }
        lastHeader = (header, last.auth, last.issuedAt)
    }

    func remember(_ auth: RulesValue, issuedAt: Int64? = nil, for token: String) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= Self.capacity {
            entries.removeAll(keepingCapacity: true)
            last = nil
            lastHeader = nil
        }
        entries[ExactString(token)] = (auth, issuedAt)
        if let last, ExactString.equal(last.token, token) { self.last = nil }
    }
}
