import Foundation
import HearthCore
import SecurityRules
import Testing
@testable import FirestoreEmulator

/// The `Authorization` header's fast path agrees with the general one, and a token's answer is
/// remembered only when the verifier's verdict could not change it.
struct CallerTests {
    /// Counts calls; accepts test tokens (uid = `sub`) until `refusing` is set.
    final class CountingVerifier: IDTokenVerifier, @unchecked Sendable {
        private let lock = NSLock()
        private var _calls = 0
        private var _refusing = false
        var calls: Int { lock.lock(); defer { lock.unlock() }; return _calls }
        var refusing: Bool {
            get { lock.lock(); defer { lock.unlock() }; return _refusing }
            set { lock.lock(); _refusing = newValue; lock.unlock() }
        }

        func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
            lock.lock()
            _calls += 1
            let refuse = _refusing
            lock.unlock()
            if refuse { throw .expired }
            return try TestVerifier().verify(idToken: token, projectID: projectID, checkRevoked: checkRevoked)
        }
    }

    static let jwt = TestHarness.token("alice")

    static let simple: [(String, String?)] = [
        ("Bearer " + jwt, jwt),
        ("bearer " + jwt, jwt),
        ("BeArEr " + jwt, jwt),
        ("Bearer owner", "owner"),
        // Everything else takes the general path, which trims and splits by Character.
        ("Bearer  " + jwt, nil),
        ("Bearer\t" + jwt, nil),
        (" Bearer " + jwt, nil),
        ("Bearer " + jwt + " ", nil),
        ("Bearer", nil),
        ("Bearerx " + jwt, nil),
        ("Basic abc", nil),
        ("Bearer é", nil),
    ]

    @Test(arguments: simple)
    func simpleHeaders(header: String, token: String?) {
        #expect(Caller.simpleBearerToken(header) == token)
    }

    /// What the header decides, whichever path reads it: a uid, "admin", "anonymous", or nil (refused).
    static let decided: [(String, String?)] = [
        ("Bearer " + jwt, "alice"),
        ("bearer   " + jwt + "  ", "alice"),
        ("\tBearer\t" + jwt, nil),  // a tab does not separate the scheme from the token
        ("Bearer OWNER", "admin"),
        (" Bearer owner ", "admin"),
        ("Bearer ya29.a0AfH6", "admin"),
        ("", "anonymous"),
        ("   ", "anonymous"),
    ]

    @Test(arguments: decided)
    func headersDecideTheCaller(header: String, expected: String?) {
        let result = try? Caller.from(authorization: header, projectID: "p", verifier: TestVerifier(), logger: Logger(quiet: true))
        switch result {
        case .admin?: #expect(expected == "admin")
        case .client(let auth?)?: #expect(auth.uid == expected)
        case .client(nil)?: #expect(expected == "anonymous")
        case nil: #expect(expected == nil)
        }
    }

    @Test func anyOtherBearerIsAnInvalidJWT() {
        #expect(throws: FirestoreError.invalidArgument("invalid jwt")) {
            try Caller.from(authorization: "Bearer not-a-token", projectID: "p", verifier: TestVerifier(), logger: Logger(quiet: true))
        }
        #expect(throws: FirestoreError.self) {
            try Caller.from(authorization: "Basic abc", projectID: "p", verifier: TestVerifier(), logger: Logger(quiet: true))
        }
    }

    @Test func aVerifiedTokenIsDecodedOnce() throws {
        let verifier = CountingVerifier()
        let known = CallerCache()
        for _ in 0..<3 {
            let c = try Caller.from(authorization: "Bearer " + Self.jwt, projectID: "p", verifier: verifier,
                                    logger: Logger(quiet: true), known: known)
            guard case .client(let auth?) = c else { Issue.record("not a client: \(c)"); return }
            #expect(auth.uid == "alice")
        }
        #expect(verifier.calls == 1)
        // Refused later (expired, say), the token would be used as decoded: the same answer.
        verifier.refusing = true
        let unknown = try Caller.from(authorization: "Bearer " + Self.jwt, projectID: "p", verifier: verifier, logger: Logger(quiet: true))
        let cached = try Caller.from(authorization: "Bearer " + Self.jwt, projectID: "p", verifier: verifier,
                                     logger: Logger(quiet: true), known: known)
        guard case .client(let a?) = unknown, case .client(let b?) = cached else { Issue.record("not clients"); return }
        #expect(a == b)
    }

    @Test func theLastHeaderIsAnsweredAsItsToken() throws {
        let verifier = CountingVerifier()
        let known = CallerCache()
        let alice = "Bearer " + Self.jwt
        func uid(_ header: String, now: Int64? = 10) throws -> String? {
            let c = try Caller.from(authorization: header, projectID: "p", verifier: verifier, logger: Logger(quiet: true),
                                    known: known, now: now)
            guard case .client(let auth?) = c else { return nil }
            return auth.uid
        }
        // Verified, then found by its token (which notes the header), then found by the header.
        #expect(known.entry(forHeader: alice) == nil)
        #expect(try uid(alice) == "alice")
        #expect(try uid(alice) == "alice")
        #expect(known.entry(forHeader: alice) != nil)
        #expect(try uid(alice) == "alice")
        #expect(verifier.calls == 1)
        // Another header is not answered as the last one; the same token in another case of
        // `bearer` is answered by its token.
        #expect(try uid("Bearer " + TestHarness.token("bob")) == "bob")
        #expect(try uid("bearer " + Self.jwt) == "alice")
        #expect(known.entry(forHeader: "Bearer " + Self.jwt + "x") == nil)
        #expect(throws: FirestoreError.invalidArgument("invalid jwt")) { try uid("Bearer x" + Self.jwt) }
        // The clock moved back before the token's `iat` (0): refused from the header as from the token.
        #expect(known.entry(forHeader: "bearer " + Self.jwt) != nil)
        #expect(throws: FirestoreError.self) { try uid("bearer " + Self.jwt, now: -1) }
        #expect(try uid("bearer " + Self.jwt) == "alice")
    }

    /// A remembered token answers only for its own bytes: `String`'s `==` (canonical equivalence)
    /// took a token with U+212A KELVIN SIGN in place of a `K` for the verified one — by header and
    /// by token alike — where that token, not a JWT (its base64 does not decode), is refused.
    @Test func aCanonicallyEquivalentTokenIsNotTheRememberedOne() throws {
        // A uid whose token has a `K` in its header or payload (where the base64 is decoded).
        guard let token = ["J", "aJ", "aaJ", "aaaJ"].lazy.map({ TestHarness.token($0) })
            .first(where: { $0.split(separator: ".").prefix(2).contains { $0.contains("K") } }) else {
            Issue.record("no token with a K in its first two segments")
            return
        }
        let imitation = token.replacingOccurrences(of: "K", with: "\u{212A}")
        #expect(!imitation.utf8.elementsEqual(token.utf8))
        func caller(_ header: String, _ known: CallerCache?) throws -> Caller {
            try Caller.from(authorization: header, projectID: "p", verifier: TestVerifier(), logger: Logger(quiet: true), known: known)
        }
        // Unremembered, the imitation is refused.
        #expect(throws: FirestoreError.invalidArgument("invalid jwt")) { try caller("Bearer " + imitation, nil) }
        for header in ["Bearer ", "bearer  "] {
            let known = CallerCache()
            // The real token remembered (and its header noted), then the imitation: still refused.
            for _ in 0..<2 { _ = try caller(header + token, known) }
            #expect(known.entry(for: token) != nil)
            #expect(known.entry(for: imitation) == nil)
            #expect(known.entry(forHeader: header + imitation) == nil)
            #expect(throws: FirestoreError.invalidArgument("invalid jwt")) { try caller(header + imitation, known) }
        }
    }

    @Test func tokensWhoseAnswerCouldChangeAreNotRemembered() throws {
        let known = CallerCache()
        // user_id differs from sub: verified, uid is sub; refused, it would be user_id.
        let odd = TestHarness.token("alice", extra: [("user_id", .string("mallory"))])
        let verifier = CountingVerifier()
        for _ in 0..<2 {
            let c = try Caller.from(authorization: "Bearer " + odd, projectID: "p", verifier: verifier, logger: Logger(quiet: true), known: known)
            guard case .client(let auth?) = c else { Issue.record("not a client"); return }
            #expect(auth.uid == "alice")
        }
        #expect(verifier.calls == 2)
        // Refused tokens are used as decoded, every time through the verifier.
        verifier.refusing = true
        for _ in 0..<2 {
            let c = try Caller.from(authorization: "Bearer " + Self.jwt, projectID: "p", verifier: verifier, logger: Logger(quiet: true), known: known)
            guard case .client(let auth?) = c else { Issue.record("not a client"); return }
            #expect(auth.uid == "alice")
        }
        #expect(verifier.calls == 4)
    }
}

private extension RulesValue {
    /// `request.auth.uid`.
    var uid: String? {
        guard case .map(let m) = self, case .string(let s)? = m["uid"] else { return nil }
        return s
    }
}
