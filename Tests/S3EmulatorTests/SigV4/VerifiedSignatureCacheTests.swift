import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// The verified-signature cache: repeated requests are answered from it, and it never decides
/// differently from the full verifier — for the tampered variants of TamperingTests, for random
/// mutations of signed and presigned requests, at other clock times and for other buckets.
@Suite struct VerifiedSignatureCacheTests {
    static let now = RequestAuthenticatorTests.now

    /// How an authentication ended, comparable across authenticators.
    enum Decision: Equatable, CustomStringConvertible {
        case refused(SigV4Failure)
        case accepted(String)

        init(_ result: Result<AuthenticatedRequest, SigV4Failure>) {
            switch result {
            case .failure(let f): self = .refused(f)
            case .success(let a):
                self = .accepted("\(a.accessKey) \(a.method) \(a.payload) \(String(describing: a.declaredTrailer)) "
                    + "\(String(describing: a.headerChecksum)) \(a.chunkSigning.map { "\($0.seedSignature) \($0.amzDate)" } ?? "-")")
            }
        }

        var description: String {
            switch self {
            case .refused(let f): "refused \(f.code): \(f.message)"
            case .accepted(let s): "accepted \(s)"
            }
        }
    }

    static func authenticator(_ clock: Clock, capacity: Int = 512) -> RequestAuthenticator {
        RequestAuthenticator(credentials: RequestAuthenticatorTests.credentials, region: "us-east-1", clock: clock,
                             verified: VerifiedSignatureCache(capacity: capacity))
    }

    /// A presigned GET signed by `accessKey`.
    static func presigned(accessKey: String = "test", key: String = "key.txt", bucket: String = "bkt") throws -> Request {
        let presigner = Presigner(credentials: RequestAuthenticatorTests.credentials, region: "us-east-1", clock: Clock(frozenAt: now),
                                  ledger: PresignLedger())
        let url = try presigner.presign(method: "GET", endpoint: "http://127.0.0.1:9000", bucket: bucket, key: key, accessKey: accessKey).url
        return Request(method: "GET", target: String(url.dropFirst("http://127.0.0.1:9000".count)), headers: ["Host": "127.0.0.1:9000"])
    }

    /// Checks that `warm` (which has verified `primer` already) decides `request` as an authenticator
    /// that never saw anything does — on first sight and again once it may have remembered it.
    static func expectSameDecision(_ request: Request, warm: RequestAuthenticator, clock: Clock, bucket: String?,
                                   _ label: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = Decision(authenticator(clock).authenticate(request, bucket: bucket))
        let first = Decision(warm.authenticate(request, bucket: bucket))
        let second = Decision(warm.authenticate(request, bucket: bucket))
        #expect(first == expected, "\(label()): \(first) vs full verifier \(expected)", sourceLocation: sourceLocation)
        #expect(second == expected, "\(label()) (repeated): \(second) vs full verifier \(expected)", sourceLocation: sourceLocation)
    }

    // MARK: Hits

    @Test func repeatedRequestsAreAnsweredFromTheCache() throws {
        let clock = Clock(frozenAt: Self.now)
        let auth = Self.authenticator(clock)
        for request in [try Self.presigned(), TamperingTests.headerSigned] {
            let first = Decision(auth.authenticate(request, bucket: "bkt"))
            #expect(auth.verified.lookup(request, authorization: request.headers["Authorization"]) != nil)
            #expect(Decision(auth.authenticate(request, bucket: "bkt")) == first)
            guard case .accepted = first else {
                Issue.record("the unchanged request was refused: \(first)")
                continue
            }
        }
        #expect(auth.verified.count == 2)
        // A hit hands over the query as parsed for the verified request: the same parameters.
        let again = try Self.presigned()
        #expect(auth.authenticate(again, bucket: "bkt").sigValue != nil)
        let parsed = Request.parseQuery(again.rawQuery, plusAsSpace: true)
        #expect(again.queryItems.map(\.name) == parsed.map(\.name))
        #expect(again.queryItems.map(\.value) == parsed.map(\.value))
        #expect(again.query("X-Amz-Expires") == "3600")
    }

    @Test func failuresAreNotRemembered() throws {
        let auth = Self.authenticator(Clock(frozenAt: Self.now))
        let bad = TamperingTests.query("X-Amz-Signature=", "X-Amz-Signature=0")(try Self.presigned())
        #expect(auth.authenticate(bad, bucket: "bkt").sigFailure?.code == "SignatureDoesNotMatch")
        #expect(auth.verified.count == 0)
    }

    // MARK: What is judged again on every use

    @Test func expiryIsJudgedAtEachUseWithTheClockAsItNowReads() throws {
        let clock = Clock(frozenAt: Self.now)
        let auth = Self.authenticator(clock)
        let request = try Self.presigned()
        #expect(auth.authenticate(request, bucket: "bkt").sigValue != nil)
        clock.freeze(at: Self.now.adding(seconds: 3601))
        let expired = try #require(auth.authenticate(request, bucket: "bkt").sigFailure)
        #expect(expired.code == "AccessDenied")
        #expect(expired.message == "Request has expired")
        Self.expectSameDecision(request, warm: auth, clock: clock, bucket: "bkt", "after expiry")
        // Not yet valid: dated more than 15 minutes ahead of the clock.
        clock.freeze(at: Self.now.adding(seconds: -901))
        Self.expectSameDecision(request, warm: auth, clock: clock, bucket: "bkt", "before the date")
        clock.freeze(at: Self.now.adding(seconds: 3600))
        #expect(auth.authenticate(request, bucket: "bkt").sigValue != nil)
    }

    @Test func headerDateSkewIsJudgedAtEachUse() throws {
        let clock = Clock(frozenAt: Self.now)
        let auth = Self.authenticator(clock)
        let request = TamperingTests.headerSigned
        #expect(auth.authenticate(request, bucket: "bkt").sigValue != nil)
        clock.freeze(at: Self.now.adding(seconds: 901))
        #expect(auth.authenticate(request, bucket: "bkt").sigFailure?.code == "RequestTimeTooSkewed")
        Self.expectSameDecision(request, warm: auth, clock: clock, bucket: "bkt", "skewed")
        // A shifted emulator clock still accepts requests signed on the real clock (`unshifted`).
        let shifted = Clock(systemNow: { Self.now })
        let shiftedAuth = Self.authenticator(shifted)
        #expect(shiftedAuth.authenticate(request, bucket: "bkt").sigValue != nil)
        shifted.advance(seconds: 86_400)
        Self.expectSameDecision(request, warm: shiftedAuth, clock: shifted, bucket: "bkt", "shifted clock")
    }

    @Test func bucketRestrictionIsJudgedAtEachUse() throws {
        let clock = Clock(frozenAt: Self.now)
        let auth = Self.authenticator(clock)
        let request = try Self.presigned(accessKey: "limited", bucket: "allowed-bkt")
        #expect(auth.authenticate(request, bucket: "allowed-bkt").sigValue != nil)
        #expect(auth.authenticate(request, bucket: "bkt").sigFailure?.code == "AccessDenied")
        Self.expectSameDecision(request, warm: auth, clock: clock, bucket: "bkt", "other bucket")
        Self.expectSameDecision(request, warm: auth, clock: clock, bucket: nil, "no bucket")
    }

    @Test func canonicallyEquivalentButDifferentBytesAreNotConflated() throws {
        // Swift's `==` equates "café" precomposed and decomposed; their signatures differ.
        let clock = Clock(frozenAt: Self.now)
        let auth = Self.authenticator(clock)
        let encoded = try Self.presigned(key: "caf\u{E9}")
        let precomposed = TamperingTests.rebuild(encoded, path: "/bkt/caf\u{E9}")
        let decomposed = TamperingTests.rebuild(encoded, path: "/bkt/cafe\u{301}")
        #expect(precomposed.rawPath == decomposed.rawPath)
        #expect(auth.authenticate(precomposed, bucket: "bkt").sigValue != nil)
        #expect(auth.authenticate(decomposed, bucket: "bkt").sigFailure?.code == "SignatureDoesNotMatch")
        Self.expectSameDecision(decomposed, warm: auth, clock: clock, bucket: "bkt", "decomposed path")
        var headers = HTTPHeaders()
        headers.add("Host", "127.0.0.1:9000")
        headers.add("x-amz-meta-owner", "Jos\u{E9}")
        let signed = RequestAuthenticatorTests.signed("GET", "/bkt/k", headers: headers)
        #expect(auth.authenticate(signed, bucket: "bkt").sigValue != nil)
        var other = signed.headers
        other.set("x-amz-meta-owner", "Jose\u{301}")
        Self.expectSameDecision(TamperingTests.rebuild(signed, headers: other), warm: auth, clock: clock, bucket: "bkt", "decomposed header")
    }

    /// The cache hashes only the bytes after `Signature=` (and the length): carriers that share
    /// those and differ elsewhere fall in one bucket, and each is still decided by its own bytes.
    @Test func carriersSharingTheirSignatureAreStillToldApart() throws {
        let clock = Clock(frozenAt: Self.now)
        let auth = Self.authenticator(clock)
        let good = try Self.presigned()
        #expect(auth.authenticate(good, bucket: "bkt").sigValue != nil)
        // Same length, same signature, another expiry: the full verifier refuses it, and so must the cache.
        let twin = TamperingTests.query("X-Amz-Expires=3600", "X-Amz-Expires=3601")(good)
        #expect(twin.rawQuery.utf8.count == good.rawQuery.utf8.count && twin.rawQuery != good.rawQuery)
        Self.expectSameDecision(twin, warm: auth, clock: clock, bucket: "bkt", "expiry changed, signature kept")
        #expect(auth.authenticate(twin, bucket: "bkt").sigFailure?.code == "SignatureDoesNotMatch")
        // A header carrier likewise (its signature last, as in every Authorization header).
        let header = TamperingTests.headerSigned
        #expect(auth.authenticate(header, bucket: "bkt").sigValue != nil)
        let tampered = TamperingTests.authorization("Credential=test/", "Credential=tesu/")(header)
        Self.expectSameDecision(tampered, warm: auth, clock: clock, bucket: "bkt", "Authorization changed before its signature")
        // The verified ones are still answered from the cache.
        #expect(auth.verified.lookup(good, authorization: nil) != nil)
        #expect(auth.verified.lookup(header, authorization: header.headers["Authorization"]) != nil)
    }

    @Test func sizeIsBounded() throws {
        let auth = Self.authenticator(Clock(frozenAt: Self.now), capacity: 3)
        for i in 0..<10 {
            #expect(auth.authenticate(try Self.presigned(key: "k\(i)"), bucket: "bkt").sigValue != nil)
            #expect(auth.verified.count <= 3)
        }
    }

    // MARK: Differential

    @Test(arguments: TamperingTests.headerTampers + TamperingTests.presignedTampers)
    func tamperedVariantsDecideAsTheFullVerifier(_ tamper: TamperingTests.Tamper) {
        let clock = Clock(frozenAt: Self.now)
        for original in [TamperingTests.headerSigned, TamperingTests.presigned] {
            let warm = Self.authenticator(clock)
            #expect(warm.authenticate(original, bucket: "bkt").sigValue != nil)
            Self.expectSameDecision(tamper.apply(original), warm: warm, clock: clock, bucket: "bkt", tamper.name)
        }
    }

    /// SplitMix64: reproducible mutations.
    struct Random {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    static let alphabet = Array("aZ09%&=+-_.~/ ;:2F3D".utf8)
    static let extraHeaders: [(String, String)] = [
        ("x-amz-acl", "private"), ("X-Amz-Meta-Owner", "me"), ("x-amz-meta-owner", "you"), ("Host", "127.0.0.1:9000"),
        ("host", "127.0.0.1:9001"), ("Content-Type", "text/plain"), ("Authorization", "AWS4-HMAC-SHA256 Credential=test"),
        ("x-amz-content-sha256", "UNSIGNED-PAYLOAD"), ("X-AMZ-DATE", "20261130T060000Z"), ("Range", "bytes=0-1"),
        ("x-amz-checksum-crc32", "AAAAAA=="), ("x-amz-decoded-content-length", "5"),
        // Names that are not ASCII: lowered by Unicode's rules, never by bytes (U+212A lowers to `k`).
        ("X-Amz-Meta-\u{130}", "v"), ("\u{212A}ey", "v"), ("HOST\u{E9}", "127.0.0.1:9000"),
    ]

    static func mutate(_ request: Request, _ random: inout Random) -> (Request, String) {
        func edit(_ text: String) -> String {
            var bytes = Array(text.utf8)
            guard !bytes.isEmpty else { return String(decoding: [alphabet[random.next(alphabet.count)]], as: UTF8.self) }
            let at = random.next(bytes.count)
            switch random.next(3) {
            case 0: bytes[at] = alphabet[random.next(alphabet.count)]
            case 1: bytes.remove(at: at)
            default: bytes.insert(alphabet[random.next(alphabet.count)], at: at)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var headers = request.headers
        switch random.next(7) {
        case 0: return (TamperingTests.rebuild(request, query: edit(request.rawQuery)), "query byte")
        case 1: return (TamperingTests.rebuild(request, path: edit(request.rawPath)), "path byte")
        case 2:
            let method = ["GET", "HEAD", "PUT", "get", "POST"][random.next(5)]
            return (TamperingTests.rebuild(request, method: method), "method \(method)")
        case 3:
            let (name, value) = extraHeaders[random.next(extraHeaders.count)]
            headers.add(name, value)
            return (TamperingTests.rebuild(request, headers: headers), "header \(name) added")
        case 4:
            guard !headers.fields.isEmpty else { return (request, "none") }
            let field = headers.fields[random.next(headers.fields.count)]
            var kept = HTTPHeaders()
            var dropped = false
            for f in headers.fields {
                if !dropped && f.name == field.name && f.value == field.value { dropped = true } else { kept.add(f.name, f.value) }
            }
            return (TamperingTests.rebuild(request, headers: kept), "header \(field.name) removed")
        case 5:
            guard !headers.fields.isEmpty else { return (request, "none") }
            let i = random.next(headers.fields.count)
            let fields = headers.fields.enumerated().map { j, f in
                (name: j == i ? f.name.uppercased() : f.name, value: j == i ? edit(f.value) : f.value)
            }
            return (TamperingTests.rebuild(request, headers: HTTPHeaders(fields)), "header \(headers.fields[i].name) value")
        default:
            let fields = headers.fields.map { (name: $0.name.uppercased(), value: $0.value) }
            return (TamperingTests.rebuild(request, headers: HTTPHeaders(fields)), "header names upper-cased")
        }
    }

    @Test func randomMutationsDecideAsTheFullVerifier() throws {
        var random = Random(state: 20)
        let originals = [TamperingTests.headerSigned, TamperingTests.presigned, try Self.presigned(accessKey: "limited", bucket: "allowed-bkt")]
        let buckets: [String?] = ["bkt", "allowed-bkt", nil]
        let times = [Self.now, Self.now.adding(seconds: 1200), Self.now.adding(seconds: -1200), Self.now.adding(seconds: 4000)]
        var accepted = 0
        for round in 0..<600 {
            let original = originals[round % originals.count]
            let clock = Clock(frozenAt: Self.now)
            let warm = Self.authenticator(clock)
            _ = warm.authenticate(original, bucket: round % originals.count == 2 ? "allowed-bkt" : "bkt")
            var request = original
            var labels: [String] = []
            for _ in 0...random.next(3) {
                let (mutated, label) = Self.mutate(request, &random)
                request = mutated
                labels.append(label)
            }
            // Mostly the unmutated request too (so hits are exercised), at another time or bucket.
            if random.next(4) == 0 { request = original; labels = ["unmutated"] }
            clock.freeze(at: times[random.next(times.count)])
            let bucket = buckets[random.next(buckets.count)]
            if case .accepted = Decision(Self.authenticator(clock).authenticate(request, bucket: bucket)) { accepted += 1 }
            Self.expectSameDecision(request, warm: warm, clock: clock, bucket: bucket, "round \(round): \(labels.joined(separator: ", "))")
        }
        // The mutations must leave some requests acceptable, or the comparison proves little.
        #expect(accepted > 20)
    }
}
