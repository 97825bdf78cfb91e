import Foundation
import HearthCore
import Testing
@testable import S3Emulator

@Suite struct PayloadVerifierTests {
    static func request(_ payload: PayloadMode, trailer: ChecksumAlgorithm? = nil, header: DeclaredChecksum? = nil,
                        signing: ChunkSigningContext? = nil) -> AuthenticatedRequest {
        AuthenticatedRequest(accessKey: "AK", method: .sigV4Header, payload: payload, declaredTrailer: trailer, headerChecksum: header, chunkSigning: signing)
    }

    static let hello = Array("hello world".utf8)

    @Test func unsignedPassesThrough() throws {
        let (bytes, payload) = try SigV4Fixtures.run(Self.request(.unsigned).makePayloadVerifier(), Self.hello, split: 4)
        #expect(bytes == Self.hello)
        #expect(payload.length == 11)
        #expect(payload.checksums.isEmpty)
    }

    @Test func sha256IsChecked() throws {
        let good = Self.request(.sha256(SigV4Fixtures.sha256Hex(Self.hello)))
        #expect(try SigV4Fixtures.run(good.makePayloadVerifier(), Self.hello, split: 1).bytes == Self.hello)
        #expect(throws: SigV4Failure.contentSHA256Mismatch(clientComputed: SigV4Fixtures.sha256Hex(Self.hello), computed: SignatureVerifier.emptySHA256)) {
            try SigV4Fixtures.run(good.makePayloadVerifier(), [])
        }
    }

    @Test func headerChecksumIsChecked() throws {
        let request = Self.request(.unsigned, header: DeclaredChecksum(algorithm: .crc32, value: "DUoRhQ=="))
        #expect(try SigV4Fixtures.run(request.makePayloadVerifier(), Self.hello).payload.checksums == [.crc32: "DUoRhQ=="])
        let failure = Result { () throws(SigV4Failure) in try SigV4Fixtures.run(request.makePayloadVerifier(), Array("hello worlD".utf8)) }.sigFailure
        #expect(failure?.code == "BadDigest")
        #expect(failure?.message == "The CRC32 you specified did not match the calculated checksum.")
    }

    static func unsignedTrailer(_ data: [UInt8], trailer: String?) -> [UInt8] {
        var body = Array("\(String(data.count, radix: 16))\r\n".utf8) + data + Array("\r\n0\r\n".utf8)
        if let trailer { body += Array("\(trailer)\r\n".utf8) }
        return body + [0x0D, 0x0A]
    }

    @Test func trailerChecksums() throws {
        let request = Self.request(.streaming(signed: false, trailer: true, decodedLength: 11), trailer: .crc32)
        #expect(try SigV4Fixtures.run(request.makePayloadVerifier(), Self.unsignedTrailer(Self.hello, trailer: "x-amz-checksum-crc32:DUoRhQ==")).bytes == Self.hello)
        #expect(throws: SigV4Failure.checksumMismatch(algorithm: .crc32, declared: "AAAAAA==", computed: "DUoRhQ==")) {
            try SigV4Fixtures.run(request.makePayloadVerifier(), Self.unsignedTrailer(Self.hello, trailer: "x-amz-checksum-crc32:AAAAAA=="))
        }
        #expect(throws: SigV4Failure.invalidChecksumTrailer(name: "x-amz-checksum-crc32")) {
            try SigV4Fixtures.run(request.makePayloadVerifier(), Self.unsignedTrailer(Self.hello, trailer: "x-amz-checksum-crc32:nope"))
        }
        #expect(throws: SigV4Failure.missingTrailer(name: "x-amz-checksum-crc32")) {
            try SigV4Fixtures.run(request.makePayloadVerifier(), Self.unsignedTrailer(Self.hello, trailer: nil))
        }
        #expect(throws: SigV4Failure.malformedTrailer(detail: "undeclared trailer x-amz-checksum-sha1")) {
            try SigV4Fixtures.run(request.makePayloadVerifier(), Self.unsignedTrailer(Self.hello, trailer: "x-amz-checksum-sha1:Kq5sNclPz7QV2+lfQIuc6R7oRu0="))
        }
    }

    @Test(arguments: ChecksumAlgorithm.allCases)
    func signedTrailerEveryAlgorithm(_ algorithm: ChecksumAlgorithm) throws {
        let signing = ChunkedPayloadReaderTests.signing
        let data = ChunkedPayloadReaderTests.payload(5000)
        let body = ChunkedPayloadReaderTests.signer.awsChunked(data, chunkSize: 1024, seedSignature: signing.seedSignature,
                                                               date: ChunkedPayloadReaderTests.date, signed: true, trailer: algorithm)
        let request = Self.request(.streaming(signed: true, trailer: true, decodedLength: 5000), trailer: algorithm, signing: signing)
        let (bytes, payload) = try SigV4Fixtures.run(request.makePayloadVerifier(), body, split: 333)
        #expect(bytes == data)
        let expected = RunningChecksum(algorithm)
        data.withUnsafeBytes { expected.update($0) }
        #expect(payload.checksums[algorithm] == expected.finalizeBase64())
    }

    @Test func decodedLengthMustMatch() {
        let request = Self.request(.streaming(signed: false, trailer: false, decodedLength: 12))
        #expect(throws: SigV4Failure.decodedLengthMismatch(declared: 12, received: 11)) {
            try SigV4Fixtures.run(request.makePayloadVerifier(), Array("b\r\nhello world\r\n0\r\n\r\n".utf8))
        }
        let short = Self.request(.streaming(signed: false, trailer: false, decodedLength: 10))
        #expect(throws: SigV4Failure.decodedLengthMismatch(declared: 10, received: 11)) {
            try SigV4Fixtures.run(short.makePayloadVerifier(), Array("b\r\nhello world\r\n0\r\n\r\n".utf8))
        }
    }

    @Test func failuresAreSticky() {
        let verifier = Self.request(.streaming(signed: false, trailer: false, decodedLength: 1)).makePayloadVerifier()
        var first: SigV4Failure?
        Array("zz\r\n".utf8).withUnsafeBytes { raw in
            do throws(SigV4Failure) { try verifier.feed(raw) { _ in } } catch { first = error }
        }
        #expect(first != nil)
        #expect(throws: first!) { try verifier.finish() }
    }
}
