import Foundation
import Testing
@testable import HearthHTTP

/// Header values made from their bytes, or taken from a string that has exactly those bytes (a
/// connection's last `Authorization`, a common value's literal): the same strings either way.
@Suite struct ReceivedValuesTests {
    static func received(_ fields: [(String, [UInt8])], reusing: String?) -> HTTPHeaders {
        var h = HTTPHeaders(receiving: 16)
        for (n, v) in fields {
            var name = Array(n.utf8), value = v
            name.withUnsafeMutableBytes { nb in value.withUnsafeMutableBytes { vb in
                h.appendReceived(name: UnsafeRawBufferPointer(nb), value: UnsafeRawBufferPointer(vb), reusing: reusing)
            } }
        }
        return h
    }

    /// The two words of a string: equal words are the same storage.
    static func words(_ s: String) -> (UInt, UInt) { unsafeBitCast(s, to: (UInt, UInt).self) }

    @Test func aValueWithTheReusedBytesIsThatString() {
        let token = "Bearer " + String(repeating: "eyJhbGciOiJSUzI1NiJ9.", count: 40)
        let h = Self.received([("Host", Array("x".utf8)), ("Authorization", Array(token.utf8))], reusing: token)
        #expect(h[known: .authorization] == token)
        #expect(Self.words(h[known: .authorization]!) == Self.words(token))
    }

    /// Any byte off, a length off, or bytes that are not UTF-8: a string of the bytes received, never the
    /// reused one.
    @Test(arguments: [0, 7, 400, 846])
    func otherBytesAreDecodedAsReceived(position: Int) {
        let token = "Bearer " + String(repeating: "eyJhbGciOiJSUzI1NiJ9.", count: 40)
        var other = Array(token.utf8)
        other[position] ^= 0x01
        var invalid = Array(token.utf8)
        invalid[position] = 0xFF
        for bytes in [other, invalid, Array(other.dropLast()), Array(token.utf8) + [0x41]] {
            let h = Self.received([("Authorization", bytes)], reusing: token)
            #expect(h[known: .authorization] == String(decoding: bytes, as: UTF8.self))
            #expect(h[known: .authorization] != token)
        }
    }

    /// `application/json` is the literal; anything near it, its bytes.
    @Test func theCommonContentTypeIsTheLiteral() {
        for value in ["application/json", "application/jsoN", "application/json ", "application/jso", "Application/json",
                      "application/json; charset=utf-8", ""] {
            let h = Self.received([("Content-Type", Array(value.utf8))], reusing: nil)
            #expect(h["content-type"] == value)
            #expect(HTTPHeaders.commonValue(value.utf8.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0) }!)
                    == (value == "application/json" ? "application/json" : nil))
        }
    }

    /// Through the server: a keep-alive connection's requests each see their own `Authorization`,
    /// whether it repeats the previous one's, changes, or is left out; another connection's does not
    /// leak in.
    @Test(arguments: [true, false])
    func eachRequestSeesItsOwnAuthorization(ownAcceptLoop: Bool) throws {
        final class Echo: HTTPService {
            func dispose(_ request: Request) -> RequestDisposition {
                .respond(.text(request.headers[known: .authorization] ?? "-"))
            }
        }
        var c = HTTPServer.Configuration(port: 0, threads: 1)
        c.ownAcceptLoop = ownAcceptLoop
        let server = HTTPServer(name: "auth-echo", configuration: c, service: Echo())
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let long = "Bearer " + String(repeating: "a", count: 1000)
        let longer = "Bearer " + String(repeating: "a", count: 999) + "b"
        let a = try RawClient(port: server.port)
        let b = try RawClient(port: server.port)
        func get(_ client: RawClient, _ authorization: String?) -> String? {
            client.send("GET / HTTP/1.1\r\nHost: x\r\n" + (authorization.map { "Authorization: \($0)\r\n" } ?? "") + "\r\n")
            return client.readResponse().map { String(decoding: $0.body, as: UTF8.self) }
        }
        for (client, authorization) in [(a, long), (a, long), (b, longer), (a, longer), (a, nil), (a, long), (b, longer),
                                        (b, "Bearer short"), (b, long), (a, long)] as [(RawClient, String?)] {
            #expect(get(client, authorization) == (authorization ?? "-"))
        }
    }
}
