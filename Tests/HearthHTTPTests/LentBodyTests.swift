import Foundation
import Testing
@testable import HearthHTTP

/// Answers `/shared/N` with the first N bytes of one array the service keeps (as the S3 object cache
/// keeps an object's bytes), `/fresh/N` with an array made for the request and dropped by the handler.
final class SharedBytesService: HTTPService, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [UInt8]
    private var answered = 0
    /// Requests for `/shared/…` answered so far.
    var sharedAnswers: Int { lock.withLock { answered } }

    init(count: Int) { stored = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    var bytes: [UInt8] {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    static func pattern(_ n: Int, seed: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed) } }

    func dispose(_ request: Request) -> RequestDisposition {
        let parts = request.pathSegments
        let n = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        if parts.first == "shared" {
            let all = bytes
            lock.withLock { answered += 1 }
            return .respond(Response(status: 200, body: .bytes(n == all.count ? all : Array(all.prefix(n)))))
        }
        return .respond(Response(status: 200, body: .bytes(SharedBytesService.pattern(n, seed: n))))
    }
}

/// Byte bodies go to libmicrohttpd without a copy (`LentBody`): the bytes must arrive intact however
/// large (sent over several writes after the handler returned) and whoever else holds the array, and
/// the array must be released once the response is done.
@Suite struct LentBodyTests {
    static let sharedCount = 1 << 20

    func withSharedServer(_ body: (HTTPServer, SharedBytesService) throws -> Void) throws {
        let service = SharedBytesService(count: LentBodyTests.sharedCount)
        // libmicrohttpd's own listener: the S3 port's path.
        let server = HTTPServer(name: "lent", configuration: HTTPServer.Configuration(port: 0, threads: 4), service: service)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        try body(server, service)
    }

    @Test func bodiesArriveIntactAtEverySize() throws {
        try withSharedServer { server, service in
            let c = try RawClient(port: server.port)
            let all = service.bytes
            for n in [0, 1, 15, 4096, 65_537, LentBodyTests.sharedCount] {
                for kind in ["shared", "fresh"] {
                    c.send("GET /\(kind)/\(n) HTTP/1.1\r\nHost: h\r\n\r\n")
                    let r = try #require(c.readResponse(), "\(kind) \(n)")
                    #expect(r.status == 200)
                    #expect(r.headers["content-length"] == "\(n)")
                    #expect(r.body == (kind == "shared" ? Array(all.prefix(n)) : SharedBytesService.pattern(n, seed: n)), "\(kind) \(n)")
                }
            }
        }
    }

    @Test func aReplacedArrayDoesNotChangeABodyBeingSent() throws {
        try withSharedServer { server, service in
            let c = try RawClient(port: server.port)
            let before = service.bytes
            // 1 MiB does not fit the socket's buffers: most of it is sent after the handler returned,
            // while the service drops its reference to the array the body came from.
            c.send("GET /shared/\(LentBodyTests.sharedCount) HTTP/1.1\r\nHost: h\r\n\r\n")
            // Once the handler has answered (a sleep would let a slow server take the new bytes).
            #expect(until { service.sharedAnswers >= 1 })
            service.bytes = SharedBytesService.pattern(LentBodyTests.sharedCount, seed: 99)
            let r = try #require(c.readResponse())
            #expect(r.body == before)
        }
    }

    @Test func theArrayIsReleasedWhenTheResponseIsDone() throws {
        let service = SharedBytesService(count: 4096)
        do {
            let server = HTTPServer(name: "lent", configuration: HTTPServer.Configuration(port: 0, threads: 2), service: service)
            try server.start()
            let c = try RawClient(port: server.port)
            for _ in 0..<50 {
                c.send("GET /shared/4096 HTTP/1.1\r\nHost: h\r\n\r\n")
                #expect(c.readResponse()?.body.count == 4096)
            }
            server.stop(graceSeconds: 1)
        }
        // If a response still held the array, writing to it would copy its storage first.
        var bytes = service.bytes
        service.bytes = []
        let address = bytes.withUnsafeBufferPointer { $0.baseAddress }
        bytes[0] ^= 1
        #expect(bytes.withUnsafeBufferPointer { $0.baseAddress } == address, "a response kept the body's array alive")
    }
}
