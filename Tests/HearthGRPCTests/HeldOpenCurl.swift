import Foundation

/// A curl client with one gRPC call open on `path`: it streams a pipe the test never closes, so the
/// call stays open until `kill()` (the client vanishing mid-stream, as a dropped app does).
struct HeldOpenCurl {
    let process = Process()
    /// Kept: when it goes away its write end closes and curl half-closes the stream.
    private let input = Pipe()

    /// Starts curl and sends `first` as one framed message.
    init(port: Int, path: String, first: [UInt8]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        // -T - streams stdin as it comes (--data-binary @- would read it all first).
        process.arguments = ["-s", "--http2-prior-knowledge", "-X", "POST", "-T", "-", "-H", "content-type: application/grpc",
                             "http://127.0.0.1:\(port)\(path)"]
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(framed(first)))
    }

    /// SIGKILL, not terminate(): a child spawned from a test thread inherits its blocked signal mask,
    /// so curl never sees SIGTERM (that, not the server, was why a test once hung).
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
