import Foundation
import Testing
@testable import HearthHTTP

/// The stream's side of nghttp2's copy-free DATA frames (`HTTP2Connection.read` promises bytes,
/// `sendData` copies them into the frame): what was promised is what is copied, whatever other
/// threads write or discard in between.
@Suite struct HTTP2StreamTests {
    struct NoStreams: HTTP2StreamHandler {
        final class Ignore: HTTP2StreamDelegate {
            func received(_ bytes: [UInt8]) {}
            func endOfStream() {}
            func closed(errorCode: UInt32) {}
        }
        func open(_ stream: HTTP2Stream, headers: [(name: String, value: String)]) -> any HTTP2StreamDelegate { Ignore() }
    }

    /// A stream on a connection whose loop never runs: what it schedules stays queued.
    func stream() throws -> (HTTP2Stream, HTTP2Connection) {
        let loop = try EventLoop(name: "test-h2")
        let connection = HTTP2Connection(fd: -1, loop: loop, remoteAddress: "127.0.0.1:1", handler: NoStreams(),
                                          limits: HTTP2Engine.Limits())
        return (HTTP2Stream(id: 1, remoteAddress: "127.0.0.1:1", connection: connection), connection)
    }

    func copied(_ s: HTTP2Stream, _ count: Int) -> (ok: Bool, bytes: [UInt8]) {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { s.copyReserved(into: $0.baseAddress!, count: count) }
        return (ok, out)
    }

    @Test func promisedBytesAreCopiedInOrderAndTheLastCarryTheTrailers() throws {
        let (s, c) = try stream()
        _ = c
        s.write(Array(1...10))
        s.write(Array(11...12))
        let first = s.reserve(max: 5)
        #expect(first.count == 5 && first.more && first.trailers == nil)
        #expect(s.bufferedBytes == 12)
        let a = copied(s, 5)
        #expect(a.ok && a.bytes == Array(1...5))
        #expect(s.bufferedBytes == 7)
        s.finish(trailers: [("grpc-status", "0")])
        let last = s.reserve(max: 100)
        #expect(last.count == 7 && !last.more && last.trailers != nil)
        let b = copied(s, 7)
        #expect(b.ok && b.bytes == Array(6...12))
        #expect(s.bufferedBytes == 0)
    }

    /// A client that stopped reading has its unsent bytes dropped (`finish(discardingUnsent:)`), on
    /// another thread, possibly between nghttp2's two callbacks of one frame: the promised bytes
    /// stay, or the frame would be shorter than its header says.
    @Test func aDiscardKeepsTheBytesAFrameWasPromised() throws {
        let (s, c) = try stream()
        _ = c
        s.write(Array(1...20))
        let promised = s.reserve(max: 8)
        #expect(promised.count == 8 && promised.more)
        s.finish(trailers: [("grpc-status", "8")], discardingUnsent: true)
        #expect(s.bufferedBytes == 8)
        let frame = copied(s, 8)
        #expect(frame.ok && frame.bytes == Array(1...8))
        // Nothing after them: the trailers come next.
        let rest = s.reserve(max: 100)
        #expect(rest.count == 0 && !rest.more && rest.trailers != nil)
    }

    @Test func aDiscardWithNothingPromisedDropsEverything() throws {
        let (s, c) = try stream()
        _ = c
        s.write(Array(1...20))
        s.finish(trailers: [("grpc-status", "8")], discardingUnsent: true)
        #expect(s.bufferedBytes == 0)
        let rest = s.reserve(max: 100)
        #expect(rest.count == 0 && !rest.more && rest.trailers != nil)
    }

    @Test func aWriteOverTheLimitQueuesNothing() throws {
        let (s, c) = try stream()
        _ = c
        #expect(s.write(Array(repeating: 1, count: 60), bufferingAtMost: 100))
        #expect(!s.write(Array(repeating: 2, count: 41), bufferingAtMost: 100))
        #expect(s.bufferedBytes == 60)
        #expect(s.write(Array(repeating: 3, count: 40), bufferingAtMost: 100))
        #expect(s.bufferedBytes == 100)
    }
}
