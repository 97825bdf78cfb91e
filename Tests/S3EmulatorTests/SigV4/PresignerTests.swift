import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import S3Emulator

@Suite struct PresignerTests {
    static func presigner(ledger: PresignLedger = PresignLedger()) -> Presigner {
        Presigner(credentials: RequestAuthenticatorTests.credentials, region: "us-east-1",
                  clock: Clock(frozenAt: RequestAuthenticatorTests.now), ledger: ledger)
    }

    @Test func roundTripsThroughTheAuthenticator() throws {
        let url = try Self.presigner().presign(method: "GET", endpoint: "http://localhost:9000/", bucket: "bkt", key: "dir/ü ~+&.txt",
                                               query: [("response-content-disposition", "attachment; filename=\"a b.txt\"")])
        #expect(url.url.hasPrefix("http://localhost:9000/bkt/dir/%C3%BC%20~%2B%26.txt?response-content-disposition=attachment%3B%20filename%3D%22a%20b.txt%22&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=test%2F20261130%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261130T060000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature="))
        #expect(url.expiresAt == RequestAuthenticatorTests.now.adding(seconds: 3600))
        #expect(url.requiredHeaders.isEmpty)
        let request = Request(method: "GET", target: String(url.url.dropFirst("http://localhost:9000".count)), headers: ["Host": "localhost:9000"])
        #expect(RequestAuthenticatorTests.authenticator().authenticate(request, bucket: "bkt").sigValue?.method == .sigV4Query)
    }

    @Test func virtualHostedAndOtherKeys() throws {
        let url = try Self.presigner().presign(method: "PUT", endpoint: "https://s3.localhost:9443", bucket: "bkt", key: "k", virtualHosted: true,
                                               headers: [("Content-Type", "text/plain")], expiresSeconds: 60, accessKey: "limited")
        #expect(url.url.hasPrefix("https://bkt.s3.localhost:9443/k?X-Amz-Algorithm="))
        #expect(url.url.contains("X-Amz-Credential=limited%2F"))
        #expect(url.url.contains("X-Amz-SignedHeaders=content-type%3Bhost&"))
        #expect(url.requiredHeaders.map(\.name) == ["content-type"])
        let request = Request(method: "PUT", target: String(url.url.dropFirst("https://bkt.s3.localhost:9443".count)),
                              headers: ["Host": "bkt.s3.localhost:9443", "Content-Type": "text/plain"])
        #expect(RequestAuthenticatorTests.authenticator().authenticate(request, bucket: "bkt").sigFailure == .bucketAccessDenied(accessKey: "limited", bucket: "bkt"))
        #expect(RequestAuthenticatorTests.authenticator().authenticate(request, bucket: nil).sigValue?.accessKey == "limited")
    }

    @Test func recordsWhatItSigned() throws {
        let ledger = PresignLedger()
        let url = try Self.presigner(ledger: ledger).presign(method: "PUT", endpoint: "http://127.0.0.1:9000", bucket: "bkt", key: "a b",
                                                             headers: [("Content-Type", "image/jpeg")], expiresSeconds: 900)
        let record = try #require(ledger.lookup(signature: url.signature.uppercased()))
        #expect(record.method == "PUT")
        #expect(record.rawPath == "/bkt/a%20b")
        #expect(record.headers == [.init(name: "content-type", value: "image/jpeg"), .init(name: "host", value: "127.0.0.1:9000")])
        #expect(record.query.map(\.name) == ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders"])
        #expect(record.url == url.url)
        #expect(ledger.lookup(accessKey: "test", amzDate: "20261130T060000Z", rawPath: "/bkt/a b") == record)
    }

    @Test func refusals() {
        let presigner = Self.presigner()
        #expect(throws: PresignError.invalidExpiry(0)) { try presigner.presign(method: "GET", endpoint: "http://h", bucket: "b", key: "k", expiresSeconds: 0) }
        #expect(throws: PresignError.invalidExpiry(604_801)) { try presigner.presign(method: "GET", endpoint: "http://h", bucket: "b", key: "k", expiresSeconds: 604_801) }
        #expect(throws: PresignError.unknownAccessKey("nope")) { try presigner.presign(method: "GET", endpoint: "http://h", bucket: "b", key: "k", accessKey: "nope") }
        #expect(throws: PresignError.invalidEndpoint("ftp://h")) { try presigner.presign(method: "GET", endpoint: "ftp://h", bucket: "b", key: "k") }
        #expect(throws: PresignError.invalidEndpoint("http://h/path")) { try presigner.presign(method: "GET", endpoint: "http://h/path", bucket: "b", key: "k") }
        let empty = Presigner(credentials: S3Credentials([]), region: "us-east-1", clock: Clock(), ledger: PresignLedger())
        #expect(throws: PresignError.unknownAccessKey("")) { try empty.presign(method: "GET", endpoint: "http://h", bucket: "b", key: "k") }
        #expect(PresignError.invalidExpiry(0).message.contains("604800"))
    }

    @Test func headerSignerMatchesBoto() throws {
        // boto3's create_bucket from the capture, re-signed by RequestSigner with the same inputs.
        let signer = RequestSigner(accessKey: Boto3CaptureTests.accessKey, secret: Boto3CaptureTests.secret, region: "us-east-1")
        let request = signer.signedRequest(method: "PUT", target: "/bkt", headers: ["Host": "127.0.0.1:18555"],
                                           date: SigV4Fixtures.instant("20261130T060257Z"))
        #expect(request.headers["authorization"]?.hasSuffix("Signature=a125d0ee91b16fe4ac7b36586e4e166f89cb98cb60f435501263eeac89db3851") == true)
    }
}

@Suite struct PresignLedgerTests {
    static func record(_ n: Int) -> PresignRecord {
        PresignRecord(method: "GET", rawPath: "/bkt/k\(n)", query: [], headers: [.init(name: "host", value: "h")], accessKey: "AK",
                      amzDate: "20261130T060000Z", expiresSeconds: 60, signature: String(format: "%064x", n), url: "http://h/bkt/k\(n)")
    }

    @Test func evictsTheLeastRecentlyUsed() {
        let ledger = PresignLedger(capacity: 3)
        for n in 0..<3 { ledger.record(Self.record(n)) }
        #expect(ledger.lookup(signature: Self.record(0).signature) != nil) // 0 is now the most recent
        ledger.record(Self.record(3))
        #expect(ledger.count == 3)
        #expect(ledger.lookup(signature: Self.record(1).signature) == nil)
        #expect(ledger.lookup(accessKey: "AK", amzDate: "20261130T060000Z", rawPath: "/bkt/k1") == nil)
        #expect(ledger.lookup(signature: Self.record(0).signature) != nil)
        #expect(ledger.lookup(signature: Self.record(2).signature) != nil)
        #expect(ledger.lookup(accessKey: "AK", amzDate: "20261130T060000Z", rawPath: "/bkt/k3") == Self.record(3))
        ledger.record(Self.record(3))
        #expect(ledger.count == 3)
        ledger.removeAll()
        #expect(ledger.count == 0)
        #expect(ledger.lookup(signature: Self.record(3).signature) == nil)
    }

    @Test func theDefaultLedgerKeepsTheLastThousandTwentyFour() {
        // Each record is ~1.9 KiB; 4,096 of them was a 7.7 MiB climb in the soak (docs/reliability.md).
        let ledger = PresignLedger()
        for n in 0..<1100 { ledger.record(Self.record(n)) }
        #expect(ledger.count == 1024)
        #expect(ledger.lookup(signature: Self.record(75).signature) == nil)
        #expect(ledger.lookup(signature: Self.record(76).signature) != nil)
    }

    @Test func concurrentUseStaysBounded() {
        let ledger = PresignLedger(capacity: 64)
        DispatchQueue.concurrentPerform(iterations: 2000) { n in
            ledger.record(Self.record(n))
            _ = ledger.lookup(signature: Self.record(n / 2).signature)
        }
        #expect(ledger.count == 64)
    }
}
