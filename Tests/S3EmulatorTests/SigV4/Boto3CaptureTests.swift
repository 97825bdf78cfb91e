import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// What boto3/botocore 1.44.8 sent (reference/s3/boto3-wire.txt), re-verified with the capture's
/// key pair and the clock frozen at each request's time.
@Suite(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing)) struct Boto3CaptureTests {
    static let accessKey = "AKIDEXAMPLE"
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

    struct Capture: Sendable, CustomTestStringConvertible {
        let section: String
        let method: String
        let target: String
        let headers: [(name: String, value: String)]
        /// The body when the capture shows all of it.
        let body: [UInt8]?
        var testDescription: String { "\(section): \(method) \(target.prefix(60))" }

        var request: Request {
            let (path, query, has) = Request.split(target: target)
            return Request(method: method, rawPath: path, rawQuery: query, hasQuery: has, headers: HTTPHeaders(headers), body: body ?? [])
        }

        var amzDate: String? { headers.first { $0.name.lowercased() == "x-amz-date" }?.value }
    }

    static let file = SigV4Fixtures.text(SigV4Fixtures.reference.appendingPathComponent("s3/boto3-wire.txt"))

    /// Every captured request, in file order.
    static let captures: [Capture] = {
        var captures: [Capture] = []
        var section = ""
        var current: (method: String, target: String, headers: [(name: String, value: String)], bodyLength: Int, head: [UInt8]?, tail: String?)?
        func flush() {
            guard let c = current else { return }
            let complete = c.head.map { $0.count == c.bodyLength } ?? (c.bodyLength == 0)
            captures.append(Capture(section: section, method: c.method, target: c.target, headers: c.headers,
                                    body: complete ? (c.head ?? []) : nil))
            current = nil
        }
        for line in file.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("=== ") {
                flush()
                section = String(line.dropFirst(4))
            } else if let space = line.firstIndex(of: " "), ["GET", "PUT", "POST", "DELETE", "HEAD"].contains(String(line[..<space])) {
                flush()
                current = (String(line[..<space]), String(line[line.index(after: space)...]), [], 0, nil, nil)
            } else if line.hasPrefix("  [body_len="), current != nil {
                current?.bodyLength = Int(line.dropFirst("  [body_len=".count).dropLast()) ?? -1
            } else if line.hasPrefix("  body_head="), current != nil {
                current?.head = pythonBytes(String(line.dropFirst("  body_head=".count)))
            } else if line.hasPrefix("  body_tail=") {
                continue
            } else if line.hasPrefix("  "), current != nil, let colon = line.range(of: ": ") {
                current?.headers.append((String(line[line.index(line.startIndex, offsetBy: 2)..<colon.lowerBound]), String(line[colon.upperBound...])))
            }
        }
        flush()
        return captures
    }()

    /// Decodes a Python `repr` of a byte string shown as text (`'34\r\nb\r\n…'`).
    static func pythonBytes(_ repr: String) -> [UInt8] {
        var scalars = Array(repr.unicodeScalars)
        guard let quote = scalars.first, scalars.count >= 2 else { return [] }
        scalars = Array(scalars.dropFirst().dropLast())
        _ = quote
        var out = [UInt8]()
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "\\", i + 1 < scalars.count {
                let e = scalars[i + 1]
                switch e {
                case "r": out.append(0x0D); i += 2
                case "n": out.append(0x0A); i += 2
                case "t": out.append(0x09); i += 2
                case "x":
                    let hex = String(String.UnicodeScalarView(scalars[(i + 2)..<(i + 4)]))
                    out.append(UInt8(hex, radix: 16) ?? 0)
                    i += 4
                default: out.append(UInt8(truncatingIfNeeded: e.value)); i += 2
                }
            } else {
                out.append(UInt8(truncatingIfNeeded: c.value))
                i += 1
            }
        }
        return out
    }

    /// Removes HTTP/1.1 chunked framing (what the server does before the service sees the body).
    static func dechunk(_ body: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        var i = 0
        while i < body.count {
            var j = i
            while j + 1 < body.count, !(body[j] == 0x0D && body[j + 1] == 0x0A) { j += 1 }
            let size = Int(String(decoding: body[i..<j], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            out += body[(j + 2)..<(j + 2 + size)]
            i = j + 2 + size + 2
        }
        return out
    }

    static var sigV4HeaderCaptures: [Capture] {
        captures.filter { $0.headers.contains { $0.name == "Authorization" && $0.value.hasPrefix("AWS4-HMAC-SHA256") } }
    }

    static func authenticator(at amzDate: String, allowSigV2: Bool = false, ledger: PresignLedger = PresignLedger()) -> RequestAuthenticator {
        RequestAuthenticator(credentials: S3Credentials(accessKey: accessKey, secret: secret), region: "us-east-1",
                             clock: SigV4Fixtures.clock(amzDate), allowSigV2: allowSigV2, presignLedger: ledger)
    }

    static func capture(section: String) throws -> Capture {
        try #require(captures.first { $0.section.hasPrefix(section) })
    }

    /// A presigned URL line; boto3's SigV2 URLs come first in the file, the s3v4 ones last.
    static func presignedURL(_ key: String, v4: Bool = true) throws -> String {
        let lines = file.split(separator: "\n").filter { $0.hasPrefix(key + ": ") }
        let line = try #require(v4 ? lines.last : lines.first)
        return String(line.dropFirst(key.count + 2))
    }

    static func request(url: String, method: String, headers: [(name: String, value: String)]) -> Request {
        let target = String(url.dropFirst("http://127.0.0.1:18555".count))
        let (path, query, has) = Request.split(target: target)
        return Request(method: method, rawPath: path, rawQuery: query, hasQuery: has,
                       headers: HTTPHeaders([("Host", "127.0.0.1:18555")] + headers))
    }

    @Test func captureIsParsed() {
        #expect(Self.captures.count == 31)
        #expect(Self.sigV4HeaderCaptures.count == 27)
    }

    @Test(arguments: sigV4HeaderCaptures)
    func headerSignedRequestsVerify(_ capture: Capture) throws {
        let amzDate = try #require(capture.amzDate)
        let authenticated = try #require(Self.authenticator(at: amzDate).authenticate(capture.request, bucket: "bkt").sigValue)
        #expect(authenticated.accessKey == Self.accessKey)
        // 16 minutes later the same request is too skewed.
        let late = SigV4Fixtures.clock(amzDate)
        late.advance(seconds: 961)
        let lateAuthenticator = RequestAuthenticator(credentials: S3Credentials(accessKey: Self.accessKey, secret: Self.secret), region: "us-east-1", clock: late)
        #expect(lateAuthenticator.authenticate(capture.request, bucket: "bkt").sigFailure?.code == "RequestTimeTooSkewed")
    }

    @Test func putObjectBodyAndChecksumVerify() throws {
        let capture = try Self.capture(section: "put_object small")
        let authenticated = try #require(Self.authenticator(at: capture.amzDate!).authenticate(capture.request, bucket: "bkt").sigValue)
        #expect(authenticated.headerChecksum == DeclaredChecksum(algorithm: .crc32, value: "DUoRhQ=="))
        let (bytes, payload) = try SigV4Fixtures.run(authenticated.makePayloadVerifier(), Array("hello world".utf8), split: 3)
        #expect(bytes == Array("hello world".utf8))
        #expect(payload.checksums[.crc32] == "DUoRhQ==")
        #expect(throws: SigV4Failure.contentSHA256Mismatch(clientComputed: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
                                                            computed: SigV4Fixtures.sha256Hex(Array("hello world!".utf8)))) {
            try SigV4Fixtures.run(authenticated.makePayloadVerifier(), Array("hello world!".utf8))
        }
    }

    @Test func httpsAWSChunkedWithCRC32TrailerVerifies() throws {
        let capture = try #require(Self.captures.first { $0.section == "put_object small bytes (https)" })
        let authenticated = try #require(Self.authenticator(at: capture.amzDate!).authenticate(capture.request, bucket: "bkt").sigValue)
        #expect(authenticated.payload == .streaming(signed: false, trailer: true, decodedLength: 11))
        #expect(authenticated.declaredTrailer == .crc32)
        let inner = Self.dechunk(try #require(capture.body))
        #expect(inner.count == 0x34)
        for split in [1, 2, 5, 52] {
            let (bytes, payload) = try SigV4Fixtures.run(authenticated.makePayloadVerifier(), inner, split: split)
            #expect(bytes == Array("hello world".utf8))
            #expect(payload.checksums[.crc32] == "DUoRhQ==")
            #expect(payload.trailers.map(\.name) == ["x-amz-checksum-crc32"])
        }
        // The same framing with another trailer value is a BadDigest.
        let altered = Array(String(decoding: inner, as: UTF8.self).replacingOccurrences(of: "DUoRhQ==", with: "AAAAAA==").utf8)
        #expect(throws: SigV4Failure.checksumMismatch(algorithm: .crc32, declared: "AAAAAA==", computed: "DUoRhQ==")) {
            try SigV4Fixtures.run(authenticated.makePayloadVerifier(), altered)
        }
    }

    @Test func presignedV4GetVerifies() throws {
        let url = try Self.presignedURL("presigned_get_url")
        let capture = try Self.capture(section: "urllib GET presigned v4")
        #expect(capture.target == String(url.dropFirst("http://127.0.0.1:18555".count)))
        let authenticated = try #require(Self.authenticator(at: "20261130T060320Z").authenticate(capture.request, bucket: "bkt").sigValue)
        #expect(authenticated.method == .sigV4Query)
        #expect(Self.authenticator(at: "20261130T070321Z").authenticate(capture.request, bucket: "bkt").sigFailure?.message == "Request has expired")
    }

    @Test func presignedV4PutWithAnotherContentTypeFails() throws {
        let capture = try Self.capture(section: "urllib PUT presigned v4 with Content-Type image/png")
        let failure = try #require(Self.authenticator(at: "20261130T060320Z").authenticate(capture.request, bucket: "bkt").sigFailure)
        #expect(failure.code == "SignatureDoesNotMatch")
        #expect(failure.httpStatus == 403)
        guard case .signatureDoesNotMatch(let mismatch) = failure else { return }
        #expect(mismatch.canonicalRequest?.contains("content-type:image/png\nhost:127.0.0.1:18555\n") == true)
        // Not minted by Hearth, yet the common-content-type suspects recover what boto3 signed.
        #expect(mismatch.diagnosis?.hasPrefix("Content-Type was signed as image/jpeg but the request sent image/png") == true)
        // With the same Content-Type it verifies.
        var fields = capture.headers
        fields.removeAll { $0.name == "Content-Type" }
        fields.append(("Content-Type", "image/jpeg"))
        let fixed = Capture(section: capture.section, method: capture.method, target: capture.target, headers: fields, body: nil)
        #expect(Self.authenticator(at: "20261130T060320Z").authenticate(fixed.request, bucket: "bkt").sigValue != nil)
    }

    @Test func hearthPresignsTheSameURLAndNamesTheChangedHeader() throws {
        let ledger = PresignLedger()
        let authenticator = Self.authenticator(at: "20261130T060320Z", ledger: ledger)
        let presigned = try authenticator.presigner.presign(method: "PUT", endpoint: "http://127.0.0.1:18555", bucket: "bkt", key: "photo 1.jpg",
                                                            headers: [("Content-Type", "image/jpeg")], expiresSeconds: 900)
        #expect(presigned.url == (try Self.presignedURL("presigned_put_url")))
        let get = try authenticator.presigner.presign(method: "GET", endpoint: "http://127.0.0.1:18555", bucket: "bkt", key: "photo 1.jpg")
        #expect(get.url == (try Self.presignedURL("presigned_get_url")))

        let capture = try Self.capture(section: "urllib PUT presigned v4 with Content-Type image/png")
        let failure = try #require(authenticator.authenticate(capture.request, bucket: "bkt").sigFailure)
        #expect(failure.diagnosis?.contains("Content-Type was signed as image/jpeg but the request sent image/png.") == true)
        #expect(failure.diagnosisHeaderValue?.contains("Content-Type was signed as image/jpeg") == true)
    }

    @Test func presignedV4ExpiresBeyondAWeekIsRefused() throws {
        let url = try Self.presignedURL("presigned_put_url_no_ct_expires_604801")
        let failure = Self.authenticator(at: "20261130T060320Z").authenticate(Self.request(url: url, method: "PUT", headers: []), bucket: "bkt").sigFailure
        #expect(failure == .queryExpiresTooLarge(given: 604801))
        #expect(failure?.code == "AuthorizationQueryParametersError")
        #expect(failure?.httpStatus == 400)
    }

    // MARK: SigV2 (boto3's default presigning for us-east-1)

    static let sigV2Time = "20261130T060300Z"

    @Test func sigV2URLsAreRefusedByDefault() throws {
        let capture = try Self.capture(section: "urllib GET presigned")
        let failure = try #require(Self.authenticator(at: Self.sigV2Time).authenticate(capture.request, bucket: "bkt").sigFailure)
        #expect(failure == .sigV2NotSupported(presigned: true))
        #expect(failure.code == "InvalidRequest")
        #expect(failure.httpStatus == 400)
        #expect(failure.message == "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.")
        #expect(failure.diagnosis?.contains("signature_version='s3v4'") == true)
        #expect(failure.diagnosis?.contains("s3 = signature_version = s3v4") == true)
    }

    @Test func sigV2URLsVerifyWhenAllowed() throws {
        let get = try Self.capture(section: "urllib GET presigned")
        #expect(get.target.contains("AWSAccessKeyId="))
        let authenticator = Self.authenticator(at: Self.sigV2Time, allowSigV2: true)
        #expect(authenticator.authenticate(get.request, bucket: "bkt").sigValue?.method == .sigV2Query)

        let put = try Self.capture(section: "urllib PUT to presigned URL with Content-Type image/png")
        let failure = try #require(authenticator.authenticate(put.request, bucket: "bkt").sigFailure)
        #expect(failure.code == "SignatureDoesNotMatch")
        guard case .sigV2SignatureDoesNotMatch(let mismatch) = failure else {
            Issue.record("expected a SigV2 mismatch")
            return
        }
        #expect(mismatch.stringToSign == "PUT\n\nimage/png\n1796019477\n/bkt/photo%201.jpg")
        #expect(mismatch.diagnosis == "Content-Type was signed as image/jpeg but the request sent image/png.")
        #expect(failure.xmlFields.map(\.0) == ["AWSAccessKeyId", "StringToSign", "SignatureProvided", "StringToSignBytes"])

        var fields = put.headers.filter { $0.name != "Content-Type" }
        fields.append(("Content-Type", "image/jpeg"))
        let fixed = Capture(section: put.section, method: put.method, target: put.target, headers: fields, body: nil)
        #expect(authenticator.authenticate(fixed.request, bucket: "bkt").sigValue != nil)

        // After Expires the URL is refused.
        let later = Self.authenticator(at: "20261130T080000Z", allowSigV2: true)
        #expect(later.authenticate(get.request, bucket: "bkt").sigFailure == .sigV2Expired(
            expiresAt: Instant(unixSeconds: 1_796_022_177), serverTime: SigV4Fixtures.instant("20261130T080000Z")))
    }
}
