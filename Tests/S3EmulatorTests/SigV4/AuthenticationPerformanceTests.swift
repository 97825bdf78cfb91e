import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

/// Verification on the hot path, repeated: every one of thousands of verifications of the same
/// request gives the same verdict (the caches it uses do not drift). The cost is printed for a
/// look, not asserted: performance claims come from `make bench` (docs/benchmarks.md), never from
/// a timed unit test, which a loaded machine can fail.
@Suite struct AuthenticationPerformanceTests {
    static func measure(_ iterations: Int, _ body: () -> Void) -> Duration {
        for _ in 0..<50 { body() }
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations { body() }
        return (clock.now - start) / iterations
    }

    @Test func presignedGet() throws {
        let request = try RequestAuthenticatorTests.presigned("GET", key: "photos/2026/a.jpg")
        let authenticator = RequestAuthenticatorTests.authenticator()
        #expect(authenticator.authenticate(request, bucket: "bkt").sigValue != nil)
        var accepted = 0
        let perRequest = Self.measure(2000) { if authenticator.authenticate(request, bucket: "bkt").sigValue != nil { accepted += 1 } }
        print("presigned GET verification: \(perRequest)")
        #expect(accepted == 2050)
    }

    @Test func headerSignedPut() {
        let request = RequestAuthenticatorTests.signed("PUT", "/bkt/photos/2026/a.jpg", headers: [
            "Host": "127.0.0.1:9000", "Content-Type": "image/jpeg", "x-amz-checksum-crc32": "DUoRhQ==", "x-amz-sdk-checksum-algorithm": "CRC32",
        ], body: Array("hello world".utf8))
        let authenticator = RequestAuthenticatorTests.authenticator()
        #expect(authenticator.authenticate(request, bucket: "bkt").sigValue != nil)
        var accepted = 0
        let perRequest = Self.measure(2000) { if authenticator.authenticate(request, bucket: "bkt").sigValue != nil { accepted += 1 } }
        print("header-signed PUT verification: \(perRequest)")
        #expect(accepted == 2050)
    }

    @Test func chunkedThroughput() throws {
        let data = [UInt8](repeating: 0x61, count: 4 << 20)
        let body = ChunkedPayloadReaderTests.signer.awsChunked(data, chunkSize: 64 << 10, seedSignature: ChunkedPayloadReaderTests.seed,
                                                               date: ChunkedPayloadReaderTests.date, signed: true, trailer: .crc32)
        let request = AuthenticatedRequest(accessKey: "AK", method: .sigV4Header, payload: .streaming(signed: true, trailer: true, decodedLength: Int64(data.count)),
                                           declaredTrailer: .crc32, headerChecksum: nil, chunkSigning: ChunkedPayloadReaderTests.signing)
        let clock = ContinuousClock()
        let start = clock.now
        let (_, payload) = try SigV4Fixtures.run(request.makePayloadVerifier(), body, split: 16 << 10)
        let elapsed = clock.now - start
        print("signed aws-chunked + CRC32 trailer, 4 MiB: \(elapsed)")
        #expect(payload.length == Int64(data.count))
    }
}
