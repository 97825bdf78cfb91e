import Foundation
import HearthCore
import HearthCrypto
import Testing
@testable import S3Emulator

@Suite struct ChunkedPayloadReaderTests {
    static let date = SigV4Fixtures.instant("20261130T060319Z")
    static let signer = RequestSigner(accessKey: "AK", secret: "secret", region: "us-east-1")
    static let seed = String(repeating: "ab", count: 32)
    static var signing: ChunkSigningContext {
        ChunkSigningContext(accessKey: "AK", signingKey: SigningKey.derive(secret: "secret", date: "20261130", region: "us-east-1", service: "s3"),
                            amzDate: "20261130T060319Z", scope: "20261130/us-east-1/s3/aws4_request", seedSignature: seed)
    }

    static func payload(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    /// Decodes `body` in pieces of `split` bytes.
    static func decode(_ body: [UInt8], signed: Bool, declared: Int64?, split: Int) throws(SigV4Failure) -> ([UInt8], [(name: String, value: String)]) {
        let reader = ChunkedPayloadReader(signing: signed ? signing : nil, declaredLength: declared)
        var out = [UInt8]()
        var start = 0
        while start < body.count {
            let end = min(start + split, body.count)
            var failure: SigV4Failure?
            body[start..<end].withUnsafeBytes { raw in
                do throws(SigV4Failure) { try reader.feed(raw) { out.append(contentsOf: $0) } } catch { failure = error }
            }
            if let failure { throw failure }
            start = end
        }
        let result = try reader.finish()
        #expect(result.decodedLength == Int64(out.count))
        return (out, result.trailers)
    }

    @Test(arguments: [0, 1, 100, 8192, 20_000])
    func signedRoundTripAtEverySplit(size: Int) throws {
        let data = Self.payload(size)
        let body = Self.signer.awsChunked(data, chunkSize: 8192, seedSignature: Self.seed, date: Self.date, signed: true)
        for split in [1, 2, 3, 7, 64, 85, 86, 87, 4096, body.count] {
            let (decoded, trailers) = try Self.decode(body, signed: true, declared: Int64(size), split: split)
            #expect(decoded == data)
            #expect(trailers.isEmpty)
        }
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func trailersSignedAndUnsigned(algorithm: ChecksumAlgorithm) throws {
        let data = Self.payload(10_000)
        for signed in [true, false] {
            let body = Self.signer.awsChunked(data, chunkSize: 4096, seedSignature: Self.seed, date: Self.date, signed: signed, trailer: algorithm)
            for split in [1, 13, 4096, body.count] {
                let (decoded, trailers) = try Self.decode(body, signed: signed, declared: 10_000, split: split)
                #expect(decoded == data)
                #expect(trailers.map(\.name) == [algorithm.headerName])
            }
        }
    }

    @Test func botoUnsignedTrailerFraming() throws {
        let body = Array("b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n".utf8)
        for split in 1...body.count {
            let (decoded, trailers) = try Self.decode(body, signed: false, declared: 11, split: split)
            #expect(decoded == Array("hello world".utf8))
            #expect(trailers.first?.value == "DUoRhQ==")
        }
    }

    @Test func lenientEndings() throws {
        // Without the closing empty line after the trailers, or after a signed final chunk.
        #expect(try Self.decode(Array("b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n".utf8), signed: false, declared: 11, split: 5).0.count == 11)
        var signed = Self.signer.awsChunked(Array("hello".utf8), chunkSize: 10, seedSignature: Self.seed, date: Self.date, signed: true)
        signed.removeLast(2)
        #expect(try Self.decode(signed, signed: true, declared: 5, split: 3).0 == Array("hello".utf8))
    }

    @Test func tamperedDataFailsItsChunk() {
        var body = Self.signer.awsChunked(Self.payload(20_000), chunkSize: 8192, seedSignature: Self.seed, date: Self.date, signed: true)
        body[body.count / 2] ^= 0xFF
        #expect(throws: SigV4Failure.self) { try Self.decode(body, signed: true, declared: 20_000, split: 1000) }
        do {
            _ = try Self.decode(body, signed: true, declared: 20_000, split: 1000)
        } catch {
            guard case .chunkSignatureDoesNotMatch(let mismatch) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(mismatch.accessKey == "AK")
            #expect(mismatch.diagnosis?.hasPrefix("Chunk 1 (decoded bytes 8192..<16384") == true)
        }
    }

    @Test func wrongSeedFailsTheFirstChunk() {
        let body = Self.signer.awsChunked(Self.payload(100), chunkSize: 64, seedSignature: String(repeating: "cd", count: 32), date: Self.date, signed: true)
        #expect(throws: SigV4Failure.self) { try Self.decode(body, signed: true, declared: 100, split: 100) }
    }

    @Test func unchainedSignaturesAreNamed() throws {
        // Every chunk signed from the seed instead of the previous chunk's signature.
        let key = Self.signing.signingKey
        var body = [UInt8]()
        for chunk in [Array("aaaa".utf8), Array("bbbb".utf8), []] {
            let sts = "AWS4-HMAC-SHA256-PAYLOAD\n20261130T060319Z\n20261130/us-east-1/s3/aws4_request\n\(Self.seed)\n\(SignatureVerifier.emptySHA256)\n\(SigV4Fixtures.sha256Hex(chunk))"
            body += Array("\(String(chunk.count, radix: 16));chunk-signature=\(SigningKey.sign(key, Array(sts.utf8)))\r\n".utf8) + chunk + [0x0D, 0x0A]
        }
        do {
            _ = try Self.decode(body, signed: true, declared: 8, split: 100)
            Issue.record("expected a failure")
        } catch {
            #expect(error.diagnosis?.contains("signed from the seed") == true)
        }
    }

    @Test func tamperedTrailers() throws {
        // ASCII data, so the body can be edited as text.
        let body = Self.signer.awsChunked([UInt8](repeating: 0x78, count: 100), chunkSize: 64, seedSignature: Self.seed, date: Self.date, signed: true, trailer: .crc32)
        let text = String(decoding: body, as: UTF8.self)
        let value = try #require(text.range(of: "x-amz-checksum-crc32:")).upperBound
        var altered = Array(text.utf8)
        let index = text.utf8.distance(from: text.startIndex, to: value)
        altered[index] = altered[index] == 0x41 ? 0x42 : 0x41
        do {
            _ = try Self.decode(altered, signed: true, declared: 100, split: 9)
            Issue.record("expected a trailer signature failure")
        } catch {
            guard case .trailerSignatureDoesNotMatch = error else { Issue.record("\(error)"); return }
        }
        let withoutSignature = Array(text.replacingOccurrences(of: #"x-amz-trailer-signature:[0-9a-f]{64}\r\n"#, with: "", options: .regularExpression).utf8)
        do {
            _ = try Self.decode(withoutSignature, signed: true, declared: 100, split: 9)
            Issue.record("expected a missing trailer signature failure")
        } catch {
            #expect(error.diagnosis?.contains("no x-amz-trailer-signature") == true)
        }
    }

    @Test(arguments: [
        ("zz\r\nab\r\n0\r\n\r\n", SigV4Failure.malformedChunkedEncoding(detail: "chunk size is not hexadecimal")),
        ("2 \r\nab\r\n0\r\n\r\n", .malformedChunkedEncoding(detail: "unexpected characters after the chunk size")),
        ("2\nab\r\n0\r\n\r\n", .malformedChunkedEncoding(detail: "chunk header line not terminated by CRLF")),
        ("2\r\nabc\r\n0\r\n\r\n", .malformedChunkedEncoding(detail: "chunk data longer than its declared size")),
        ("2\r\nab\rx0\r\n\r\n", .malformedChunkedEncoding(detail: "chunk data not terminated by CRLF")),
        ("2\r\nab\r\n0\r\n\r\nxyz", .malformedChunkedEncoding(detail: "data after the final chunk")),
        ("2\r\nab\r\n0\r\nno-colon\r\n\r\n", .malformedTrailer(detail: "trailer line without ':'")),
        ("2\r\nab\r\n", .incompleteBody),
        ("2\r\na", .incompleteBody),
        ("", .incompleteBody),
        ("10\r\nab", .decodedLengthMismatch(declared: 2, received: 16)),
    ])
    func malformedBodies(body: String, failure: SigV4Failure) {
        #expect(throws: failure) { try Self.decode(Array(body.utf8), signed: false, declared: 2, split: 1) }
        #expect(throws: failure) { try Self.decode(Array(body.utf8), signed: false, declared: 2, split: 1000) }
    }

    @Test func signedChunksNeedSignatures() {
        #expect(throws: SigV4Failure.malformedChunkedEncoding(detail: "chunk 0 has no chunk-signature")) {
            try Self.decode(Array("2\r\nab\r\n0\r\n\r\n".utf8), signed: true, declared: 2, split: 4)
        }
    }

    @Test func headerLinesAreBounded() {
        let long = Array(("1;" + String(repeating: "x", count: 5000) + "\r\n").utf8)
        #expect(throws: SigV4Failure.malformedChunkedEncoding(detail: "chunk header line too long")) {
            try Self.decode(long, signed: false, declared: nil, split: 100)
        }
    }

    @Test func failuresAreSticky() throws {
        let reader = ChunkedPayloadReader(signing: nil, declaredLength: nil)
        func feed(_ text: String) -> SigV4Failure? {
            var failure: SigV4Failure?
            Array(text.utf8).withUnsafeBytes { raw in
                do throws(SigV4Failure) { try reader.feed(raw) { _ in } } catch { failure = error }
            }
            return failure
        }
        #expect(feed("zz\r\n") == .malformedChunkedEncoding(detail: "chunk size is not hexadecimal"))
        #expect(feed("0\r\n\r\n") == .malformedChunkedEncoding(detail: "chunk size is not hexadecimal"))
        #expect(throws: SigV4Failure.malformedChunkedEncoding(detail: "chunk size is not hexadecimal")) { try reader.finish() }
    }

    @Test func checksumAlgorithms() {
        let data = Array("123456789".utf8)
        func value(_ algorithm: ChecksumAlgorithm) -> [UInt8] {
            let checksum = RunningChecksum(algorithm)
            data.withUnsafeBytes { checksum.update($0) }
            return checksum.finalize()
        }
        #expect(Hex.encode(value(.crc32)) == "cbf43926")
        #expect(Hex.encode(value(.crc32c)) == "e3069283")
        #expect(Hex.encode(value(.crc64nvme)) == "ae8b14860a799888")
        #expect(value(.sha1) == Digest.sha1(data))
        #expect(value(.sha256) == Digest.sha256(data))
        #expect(ChecksumAlgorithm(headerName: "X-Amz-Checksum-CRC32C") == .crc32c)
        #expect(ChecksumAlgorithm(headerName: "x-amz-checksum-mode") == nil)
        #expect(ChecksumAlgorithm.crc32.isWellFormed("DUoRhQ=="))
        #expect(!ChecksumAlgorithm.crc32.isWellFormed("DUoRhQ"))
        #expect(!ChecksumAlgorithm.sha256.isWellFormed("DUoRhQ=="))
    }
}
