import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// The S3 documentation's worked examples (s3-doc-vectors.json) through the full authenticator.
@Suite(.enabled(if: SigV4Fixtures.hasReference, SigV4Fixtures.referenceMissing)) struct S3DocVectorTests {
    struct Vectors: Decodable {
        struct Chunk: Decodable {
            let bytes: Int
            let signature: String
        }

        struct Case: Decodable {
            let name: String
            let canonicalRequest: String
            let signature: String?
            let seedSignature: String?
            let chunkSignatures: [Chunk]?
        }

        let accessKey: String
        let secretKey: String
        let amzDate: String
        let region: String
        let cases: [Case]
    }

    static let vectors: Vectors = {
        let data = (try? Data(contentsOf: SigV4Fixtures.sigv4.appendingPathComponent("s3-doc-vectors.json"))) ?? Data()
        return (try? JSONDecoder().decode(Vectors.self, from: data)) ?? Vectors(accessKey: "", secretKey: "", amzDate: "", region: "", cases: [])
    }()

    static func vector(_ prefix: String) throws -> Vectors.Case {
        try #require(vectors.cases.first { $0.name.hasPrefix(prefix) })
    }

    static var authenticator: RequestAuthenticator {
        RequestAuthenticator(credentials: S3Credentials(accessKey: vectors.accessKey, secret: vectors.secretKey),
                             region: vectors.region, clock: SigV4Fixtures.clock(vectors.amzDate))
    }

    /// A request rebuilt from a canonical request, with the signature in the header or the query.
    static func request(from canonical: String, signature: String, presigned: Bool) -> Request {
        let lines = canonical.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var headers = HTTPHeaders()
        var i = 3
        while i < lines.count, !lines[i].isEmpty {
            let colon = lines[i].firstIndex(of: ":")!
            headers.add(String(lines[i][..<colon]), String(lines[i][lines[i].index(after: colon)...]))
            i += 1
        }
        let signed = lines[i + 1]
        var query = lines[2]
        if presigned {
            query += "&X-Amz-Signature=" + signature
        } else {
            let credential = "\(vectors.accessKey)/\(vectors.amzDate.prefix(8))/\(vectors.region)/s3/aws4_request"
            headers.add("Authorization", "AWS4-HMAC-SHA256 Credential=\(credential),SignedHeaders=\(signed),Signature=\(signature)")
        }
        return Request(method: lines[0], rawPath: lines[1], rawQuery: query, headers: headers)
    }

    @Test func vectorsArePresent() {
        #expect(Self.vectors.cases.count == 3)
    }

    @Test func rangeGetWithHeaderAuthentication() throws {
        let vector = try Self.vector("GET object with Range")
        let request = Self.request(from: vector.canonicalRequest, signature: try #require(vector.signature), presigned: false)
        let result = Self.authenticator.authenticate(request, bucket: "examplebucket")
        let authenticated = try #require(result.sigValue)
        #expect(authenticated.accessKey == Self.vectors.accessKey)
        #expect(authenticated.method == .sigV4Header)
        #expect(authenticated.payload == .sha256(SignatureVerifier.emptySHA256))

        // A wrong signature reports the canonical request S3 (and the vector) computed.
        let wrong = Self.request(from: vector.canonicalRequest, signature: String(repeating: "0", count: 64), presigned: false)
        guard case .signatureDoesNotMatch(let mismatch) = Self.authenticator.authenticate(wrong, bucket: "examplebucket").sigFailure else {
            Issue.record("expected SignatureDoesNotMatch")
            return
        }
        #expect(mismatch.canonicalRequest == vector.canonicalRequest)
        #expect(mismatch.stringToSign.hasPrefix("AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"))
    }

    @Test func presignedGet() throws {
        let vector = try Self.vector("presigned GET")
        let request = Self.request(from: vector.canonicalRequest, signature: try #require(vector.signature), presigned: true)
        let authenticated = try #require(Self.authenticator.authenticate(request, bucket: "examplebucket").sigValue)
        #expect(authenticated.method == .sigV4Query)
        #expect(authenticated.payload == .unsigned)
        // Valid for X-Amz-Expires=86400 seconds, not one more.
        let dayLater = RequestAuthenticator(credentials: S3Credentials(accessKey: Self.vectors.accessKey, secret: Self.vectors.secretKey),
                                            region: "us-east-1", clock: Clock(frozenAt: SigV4Fixtures.instant(Self.vectors.amzDate).adding(seconds: 86401)))
        #expect(dayLater.authenticate(request, bucket: "examplebucket").sigFailure?.code == "AccessDenied")
    }

    /// The streaming example's body: 65536 + 1024 bytes of `a` with the documented chunk signatures.
    static func streamingBody(_ vector: Vectors.Case) -> [UInt8] {
        var body = [UInt8]()
        for chunk in vector.chunkSignatures ?? [] {
            body += Array("\(String(chunk.bytes, radix: 16));chunk-signature=\(chunk.signature)\r\n".utf8)
            body += [UInt8](repeating: 0x61, count: chunk.bytes)
            body += [0x0D, 0x0A]
        }
        return body
    }

    @Test(arguments: [1, 7, 100, 8192, 65536, 66824])
    func streamingUploadDecodesAndVerifies(split: Int) throws {
        let vector = try Self.vector("streaming PUT")
        let request = Self.request(from: vector.canonicalRequest, signature: try #require(vector.seedSignature), presigned: false)
        let authenticated = try #require(Self.authenticator.authenticate(request, bucket: "examplebucket").sigValue)
        #expect(authenticated.payload == .streaming(signed: true, trailer: false, decodedLength: 66560))
        #expect(authenticated.isAWSChunked)
        let body = Self.streamingBody(vector)
        #expect(body.count == 66824)
        let (decoded, payload) = try SigV4Fixtures.run(authenticated.makePayloadVerifier(), body, split: split)
        #expect(decoded == [UInt8](repeating: 0x61, count: 66560))
        #expect(payload.length == 66560)
    }

    @Test func streamingChunkSignaturesAreReproduced() throws {
        let vector = try Self.vector("streaming PUT")
        let signer = RequestSigner(accessKey: Self.vectors.accessKey, secret: Self.vectors.secretKey, region: "us-east-1")
        let framed = signer.awsChunked([UInt8](repeating: 0x61, count: 66560), chunkSize: 65536, seedSignature: try #require(vector.seedSignature),
                                       date: SigV4Fixtures.instant(Self.vectors.amzDate), signed: true)
        #expect(framed == Self.streamingBody(vector))
    }

    @Test func streamingUploadRejectsAnAlteredChunk() throws {
        let vector = try Self.vector("streaming PUT")
        let request = Self.request(from: vector.canonicalRequest, signature: try #require(vector.seedSignature), presigned: false)
        let authenticated = try #require(Self.authenticator.authenticate(request, bucket: "examplebucket").sigValue)
        var body = Self.streamingBody(vector)
        body[66_000] = 0x62 // inside the second chunk's data
        #expect(throws: SigV4Failure.self) { try SigV4Fixtures.run(authenticated.makePayloadVerifier(), body, split: 4096) }
        do {
            _ = try SigV4Fixtures.run(authenticated.makePayloadVerifier(), body, split: 4096)
        } catch {
            guard case .chunkSignatureDoesNotMatch(let mismatch) = error else {
                Issue.record("expected a chunk signature failure, got \(error)")
                return
            }
            #expect(mismatch.signatureProvided == vector.chunkSignatures?[1].signature)
            #expect(mismatch.stringToSign.hasPrefix("AWS4-HMAC-SHA256-PAYLOAD\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\nad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\n"))
            #expect(error.code == "SignatureDoesNotMatch")
            #expect(error.httpStatus == 403)
        }
    }
}
