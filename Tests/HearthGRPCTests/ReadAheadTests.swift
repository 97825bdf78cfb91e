import Foundation
import Testing
@testable import HearthHTTP

/// A polling loop reads the socket that last ended a pause itself (`EventLoop.readAheadFound`) and
/// hands the read to that socket's handler (`takeReadAhead`): every byte still reaches the handler
/// once and in order, a socket whose interest left EPOLLIN is not read, and a client's close is
/// handed over as the handler's own `recv` would have seen it.
@Suite struct ReadAheadTests {
    /// What the handler saw: reads taken from the loop, reads of its own, bytes in order, closes.
    final class Seen: @unchecked Sendable {
        var ahead = 0
        var own = 0
        var bytes: [UInt8] = []
        var closes = 0
    }

    /// Registers `server` on `loop` with a handler that echoes every byte it gets, taking a read
    /// made ahead when there is one (as `HTTP2Connection.receive` does).
    static func echo(_ loop: EventLoop, _ server: Int32, _ seen: Seen) {
        _ = BusyPollTests.onLoop(loop) {
            loop.register(server, events: 1 /* EPOLLIN */, readsAhead: true) { _ in
                let buffer = loop.scratch
                let n: Int
                if let ahead = loop.takeReadAhead(server) {
                    seen.ahead += 1
                    n = ahead.result
                } else {
                    seen.own += 1
                    n = recv(server, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                }
                if n == 0 { seen.closes += 1; loop.unregister(server); return }
                guard n > 0 else { return }
                seen.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<n]))
                // Never blocking the loop: a test that does not read its echoes loses them.
                _ = send(server, buffer.baseAddress, n, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            return true
        }
    }

    /// Runs `body` with a socket pair whose server end is echoed (`echo`) by a loop that polls in
    /// every pause, then stops the loop and closes both ends.
    static func withEchoingLoop(_ body: (_ client: Int32, _ server: Int32, EventLoop, Seen) throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let (client, server) = (fds[0], fds[1])
        defer { close(client); close(server) }
        let loop = try EventLoop(name: "read-ahead-test")
        loop.busyPoll = BusyPoll(alwaysPollingMicroseconds: 1000)
        loop.start()
        defer { loop.stop() }
        let seen = Seen()
        Self.echo(loop, server, seen)
        try body(client, server, loop, seen)
    }

    @Test func sequentialCallsAreReadAheadWholeAndInOrder() throws {
        try Self.withEchoingLoop { client, server, loop, seen in
            var echoed = 0
            var calls = 0
            // At least 300 calls, and on until one was read ahead (bounded): the polling reads a
            // request only when it arrives after the pause's first round, which a busy machine (the
            // loop descheduled through the client's turn) can delay for many calls.
            let deadline = Date().addingTimeInterval(20)
            while calls < 300 || (BusyPollTests.onLoop(loop) { seen.ahead } == 0 && Date() < deadline) {
                let i = calls
                calls += 1
                // Two bytes a call, sent apart now and then: a read ahead may find one or both.
                var call: [UInt8] = [UInt8(i & 0xFF), UInt8((i * 7) & 0xFF)]
                _ = write(client, &call, 2)
                var back: [UInt8] = [0, 0]
                var got = 0
                while got < 2 {
                    let n = back.withUnsafeMutableBytes { read(client, $0.baseAddress! + got, 2 - got) }
                    guard n > 0 else { break }
                    got += n
                }
                if got == 2 && back == call { echoed += 1 }
            }
            #expect(echoed == calls)
            let (ahead, own, bytes) = BusyPollTests.onLoop(loop) { (seen.ahead, seen.own, seen.bytes) }
            var sent: [UInt8] = []
            for i in 0..<calls { sent += [UInt8(i & 0xFF), UInt8((i * 7) & 0xFF)] }
            #expect(bytes == sent)
            // The polling loop found requests by reading the socket itself.
            #expect(ahead > 0)
            #expect(ahead + own >= calls)
            // The client's close reaches the handler (read ahead or not) and the loop lets go of the socket.
            shutdown(client, Int32(SHUT_WR))
            let closeDeadline = Date().addingTimeInterval(30)
            while BusyPollTests.onLoop(loop, { seen.closes }) == 0 && Date() < closeDeadline { usleep(1000) }
            #expect(BusyPollTests.onLoop(loop) { seen.closes } == 1)
        }
    }

    /// A socket whose owner took EPOLLIN out of its interest (a client not reading its answers) is
    /// not read ahead either: its bytes stay in the kernel until the interest comes back.
    @Test func aSocketNotBeingReadIsNotReadAhead() throws {
        try Self.withEchoingLoop { client, server, loop, seen in
            let deadline = Date().addingTimeInterval(20)
            var i = 0
            while i < 100 || (BusyPollTests.onLoop(loop) { seen.ahead } == 0 && Date() < deadline) {
                i += 1
                var byte = UInt8(i & 0xFF)
                _ = write(client, &byte, 1)
                var back: UInt8 = 0
                _ = read(client, &back, 1)
            }
            #expect(BusyPollTests.onLoop(loop) { seen.ahead } > 0)
            _ = BusyPollTests.onLoop(loop) { loop.modify(server, events: 0); return true }
            let before = BusyPollTests.onLoop(loop) { seen.bytes.count }
            var byte: UInt8 = 0xAB
            _ = write(client, &byte, 1)
            usleep(50_000)
            #expect(BusyPollTests.onLoop(loop) { seen.bytes.count } == before)
            var pending: Int32 = 0
            _ = ioctl(server, UInt(FIONREAD), &pending)
            #expect(pending == 1)
            // Interest back: the byte is read and echoed.
            _ = BusyPollTests.onLoop(loop) { loop.modify(server, events: 1); return true }
            var back: UInt8 = 0
            #expect(read(client, &back, 1) == 1 && back == 0xAB)
            _ = BusyPollTests.onLoop(loop) { loop.unregister(server); return true }
        }
    }
}
