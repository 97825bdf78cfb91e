import Foundation
@testable import HearthHTTP
@testable import HearthGRPC

/// echo.Echo/Unary and /Chat, so fuzzed requests reach a real gRPC call (framing, inflating, trailers).
private struct FuzzEchoService: GRPCService {
    let name = "echo.Echo"
    final class Chat: GRPCRequestStream, @unchecked Sendable {
        let responses: any GRPCResponseStream
        init(_ responses: any GRPCResponseStream) { self.responses = responses }
        func received(_ message: [UInt8]) { responses.send(message) }
        func halfClosed() { responses.finish(.ok) }
        func cancelled() {}
    }
    func handler(for method: String) -> GRPCHandler? {
        switch method {
        case "Unary": .unary { request, _ in request }
        case "Chat": .bidirectional { _, responses in Chat(responses) }
        default: nil
        }
    }
}

extension FuzzTargets {
    /// One HTTP/2 engine for the whole run, as a listener has (a static `let`: made once, safely,
    /// though the replay tests run the target from several threads).
    private static let engine: HTTP2Engine? =
        try? HTTP2Engine(name: "fuzz", handler: GRPCServer(services: [FuzzEchoService()],
                                                           configuration: .init(maxReceiveMessageBytes: 1 << 20, workers: 2)))

    /// The connection front end: the client preface, then the input as the rest of the connection,
    /// through a socketpair into the same `HTTP2Engine` and gRPC server the Firestore port uses.
    /// The client then closes its side; the server must answer what it can and close too.
    static func http2(_ bytes: UnsafeRawBufferPointer) {
        guard let engine else { fatalError("no HTTP/2 engine") }
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { fatalError("socketpair: \(errno)") }
        let client = fds[0]
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        engine.adopt(fd: fds[1], remoteAddress: "fuzz")
        // A reader drains the answers while we write, so neither side blocks on a full socket.
        let done = DispatchSemaphore(value: 0)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while recv(client, &buffer, buffer.count, 0) > 0 {}
            done.signal()
        }.start()
        let input = ConnectionAcceptor.preface + Array(bytes)
        var offset = 0
        while offset < input.count {
            let n = input[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            offset += n
        }
        shutdown(client, Int32(SHUT_WR))
        // The server closes once it has read the end; a connection left open is a hang libFuzzer reports.
        done.wait()
        close(client)
    }

    /// gRPC's message inflater on its own (gzip and deflate, bounded).
    static func grpcFrames(_ bytes: UnsafeRawBufferPointer) {
        _ = MessageDecompressor.inflate(Array(bytes), limit: 1 << 20)
    }
}
