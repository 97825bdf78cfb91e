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
        /// Per stream: whether the connection said its fields repeat the previous stream's, and
        /// whether the memo it handed over was the one left by the previous stream.
        var repeated: [Bool] = []
        var memoKept: [Bool] = []
        final class Memo {}
        init(keepLists: Bool) { self.keepLists = keepLists }
        func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)], repeated: Bool,
                  memo: inout AnyObject?) -> any HTTP2StreamDelegate {
            let previous = lock.withLock { lastMemo }
            let kept = memo != nil && memo === previous
            let next = Memo()
            memo = next
            lock.withLock {
                self.repeated.append(repeated)
                memoKept.append(kept)
                lastMemo = next
            }
            return open(stream, headers: headers)
        }
        var lastMemo: Memo?
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

    /// The header block of POST, http, `:path` and `:authority` followed by `encoded` (HPACK
    /// representations made by hand), after `prefix` (a table size update must come first).
    static func rawBlock(_ path: String, prefix: [UInt8] = [], _ encoded: [UInt8]) -> [UInt8] {
        let p = Array(path.utf8), host = Array("localhost".utf8)
        return prefix + [0x83, 0x86, 0x04, UInt8(p.count)] + p + [0x01, UInt8(host.count)] + host + encoded
    }

    /// A field added to the dynamic table, with a new name (literal with incremental indexing).
    static func indexed(_ name: String, _ value: String) -> [UInt8] {
        [0x40, UInt8(name.utf8.count)] + Array(name.utf8) + [UInt8(value.utf8.count)] + Array(value.utf8)
    }

    /// Requests whose fields come from the connection's dynamic table (indexed, the table's entries
    /// evicted and made anew): nghttp2 hands them in its table's buffers, which the connection
    /// tells apart by address (`HTTP2FieldBuffers`). Each stream still gets exactly its fields.
    @Test(arguments: [false, true])
    func fieldsFromTheHeaderTableAreExactlyEachStreams(keepLists: Bool) throws {
        let tokenA = "Bearer " + String(repeating: "a", count: 60)
        let tokenB = String(tokenA.dropLast()) + "b"
        let auth = "authorization"
        // Dynamic table indexes: 62 is the newest entry (0x80 | index: an indexed field).
        let requests: [(String, [UInt8], [UInt8], [(String, String)])] = [
            ("/s/A", [], Self.indexed("x-one", "1") + Self.indexed(auth, tokenA), [("x-one", "1"), (auth, tokenA)]),
            // 62 = authorization: A, 63 = x-one: 1.
            ("/s/A", [], [0xBF, 0xBE], [("x-one", "1"), (auth, tokenA)]),
            // A new value under the name of entry 62 (0x40 | 62), added as 62; x-one is now 64.
            ("/s/B", [], [0x7E, UInt8(tokenB.utf8.count)] + Array(tokenB.utf8) + [0xC0], [(auth, tokenB), ("x-one", "1")]),
            ("/s/B", [], [0xBE, 0xC0], [(auth, tokenB), ("x-one", "1")]),
            ("/s/B", [], [0xBF, 0xC0], [(auth, tokenA), ("x-one", "1")]),
            // The table emptied (size 0, then 4096 again) and filled anew: the same bytes in new buffers.
            ("/s/A", [0x20, 0x3F, 0xE1, 0x1F], Self.indexed("x-one", "1") + Self.indexed(auth, tokenB), [("x-one", "1"), (auth, tokenB)]),
            ("/s/A", [], [0xBF, 0xBE], [("x-one", "1"), (auth, tokenB)]),
            ("/s/A", [], [0xBE], [(auth, tokenB)]),
            ("/s/A", [], [0xBE, 0xBF, 0xBF], [(auth, tokenB), ("x-one", "1"), ("x-one", "1")]),
        ]
        try Self.check(keepLists: keepLists, requests.map { Self.rawBlock($0.0, prefix: $0.1, $0.2) },
                       expected: requests.map { Self.expected($0.0, $0.3) })
    }

    /// Sends each header block on a stream of its own (END_HEADERS, no END_STREAM: the streams stay
    /// open, their delegates alive), one at a time — each read (and handled) before the next is
    /// sent —, and checks that each stream got exactly its fields.
    static func check(keepLists: Bool, _ blocks: [[UInt8]], expected: [[String]]) throws {
        let recorder = Recorder(keepLists: keepLists)
        let server = HTTPServer(name: "t", configuration: .init(port: 0, threads: 2), service: PlainService(), http2: recorder)
        try server.start()
        defer { server.stop(graceSeconds: 1) }
        let c = try RawSocket(port: server.port)
        c.send(preface + h2Frame(type: 4, flags: 0, stream: 0))
        for (i, block) in blocks.enumerated() {
            c.send(h2Frame(type: 1, flags: 4, stream: Int32(1 + 2 * i), block))
            for _ in 0..<3000 where recorder.count <= i { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(recorder.count == blocks.count)
        let seen = recorder.lock.withLock { recorder.seen }
        for (i, fields) in expected.enumerated() where i < seen.count {
            #expect(seen[i] == fields, "request \(i)")
        }
        // The connection says a list repeats exactly when it has the previous stream's fields, in
        // order (the first stream's never does), and hands over what the handler left for it.
        let (repeated, memoKept) = recorder.lock.withLock { (recorder.repeated, recorder.memoKept) }
        #expect(repeated.count == expected.count && memoKept.count == expected.count)
        for i in expected.indices where i < repeated.count && i < memoKept.count {
            #expect(repeated[i] == (i > 0 && expected[i] == expected[i - 1]), "request \(i) repeated")
            #expect(memoKept[i] == (i > 0), "request \(i) memo")
        }
        if keepLists {
            // Lists given to earlier streams did not change when later requests' fields did.
            let lists = recorder.lock.withLock { recorder.lists }
            for (i, list) in lists.enumerated() where i < expected.count {
                #expect(list.map { "\($0.name): \($0.value)" } == expected[i], "list \(i)")
            }
        }
    }

    @Test(arguments: [false, true])
    func everyStreamGetsExactlyItsFields(keepLists: Bool) throws {
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
        try Self.check(keepLists: keepLists, requests.map { Self.block($0.0, $0.1) }, expected: requests.map { Self.expected($0.0, $0.1) })
    }
}
