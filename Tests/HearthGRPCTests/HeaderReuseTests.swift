import Foundation
import Testing
import HearthHTTP

/// A connection's requests start from the previous request's header list and change only the
/// fields that differ (`HTTP2Connection.previousHeaders`): each stream must still get exactly the
/// fields it was sent, in order — fewer, more, or changed ones, whether or not an earlier stream
/// still holds the list it was given.
@Suite struct HeaderReuseTests {
    /// Records each stream's fields as text (`keepLists` false: the handler keeps no list, so the
    /// connection's list is its own and changed in place) or keeps the lists themselves (shared with
    /// the connection's, which must then be copied before a change).
    final class Recorder: HTTP2StreamHandler, @unchecked Sendable {
        final class Ignore: HTTP2StreamDelegate {
            func received(_ bytes: [UInt8]) {}
            func endOfStream() {}
            func closed(errorCode: UInt32) {}
        }
        let keepLists: Bool
        let lock = NSLock()
        var seen: [[String]] = []
        var lists: [[(name: String, value: String)]] = []
        init(keepLists: Bool) { self.keepLists = keepLists }
        func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate {
            lock.withLock {
                seen.append(headers.map { "\($0.name): \($0.value)" })
                if keepLists { lists.append(headers) }
            }
            return Ignore()
        }
        var count: Int { lock.withLock { seen.count } }
    }

    /// `fields` after POST, http, `:path` and `:authority` (HPACK literals without indexing).
    static func block(_ path: String, _ fields: [(String, String)]) -> [UInt8] {
        let p = Array(path.utf8), host = Array("localhost".utf8)
        var out: [UInt8] = [0x83, 0x86, 0x04, UInt8(p.count)] + p + [0x01, UInt8(host.count)] + host
        for (name, value) in fields {
            out += [0x00, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
        }
        return out
    }

    static func expected(_ path: String, _ fields: [(String, String)]) -> [String] {
        [":method: POST", ":scheme: http", ":path: \(path)", ":authority: localhost"] + fields.map { "\($0.0): \($0.1)" }
    }

    @Test(arguments: [false, true])
    func everyStreamGetsExactlyItsFields(keepLists: Bool) throws {
        let recorder = Recorder(keepLists: keepLists)
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(), http2: recorder)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let tokenA = "Bearer " + String(repeating: "a", count: 60)
        let tokenB = String(tokenA.dropLast()) + "b"
        let requests: [(String, [(String, String)])] = [
            ("/s/A", [("x-one", "1"), ("authorization", tokenA)]),
            ("/s/A", [("x-one", "1"), ("authorization", tokenA)]),       // the same fields
            ("/s/B", [("authorization", tokenB)]),                        // fewer, moved and changed
            ("/s/B", [("authorization", tokenB), ("x-two", "2"), ("x-three", "33")]),  // more
            ("/s/B", [("authorization", tokenA), ("x-two", "2"), ("x-three", "34")]),  // changed in place
            ("/s/A", [("x-one", "1"), ("authorization", tokenA)]),
            ("/s/A", []),
        ]
        let c = try RawSocket(port: server.port)
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0))
        for (i, (path, fields)) in requests.enumerated() {
            // END_HEADERS, no END_STREAM: the streams stay open, their delegates alive. One block at a
            // time: each is read (and handled) before the next is sent.
            c.send(h2Frame(type: 1, flags: 4, stream: Int32(1 + 2 * i), Self.block(path, fields)))
            for _ in 0..<500 where recorder.count <= i { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(recorder.count == requests.count)
        let seen = recorder.lock.withLock { recorder.seen }
        for (i, (path, fields)) in requests.enumerated() where i < seen.count {
            #expect(seen[i] == Self.expected(path, fields), "request \(i)")
        }
        if keepLists {
            // Lists given to earlier streams did not change when later requests' fields did.
            let lists = recorder.lock.withLock { recorder.lists }
            for (i, list) in lists.enumerated() where i < requests.count {
                #expect(list.map { "\($0.name): \($0.value)" } == Self.expected(requests[i].0, requests[i].1), "list \(i)")
            }
        }
    }
}
