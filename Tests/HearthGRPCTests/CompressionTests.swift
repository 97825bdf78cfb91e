import Foundation
import Testing
@testable import HearthGRPC
import HearthHTTP

/// `bytes` compressed by Debian's gzip (an independent encoder).
func gzipped(_ bytes: [UInt8]) throws -> [UInt8] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/gzip")
    p.arguments = ["-c", "-n"]
    let input = Pipe(), output = Pipe()
    p.standardInput = input
    p.standardOutput = output
    try p.run()
    // Write from another thread: a large input would fill the pipe while we are not reading yet.
    let writer = Thread {
        input.fileHandleForWriting.write(Data(bytes))
        try? input.fileHandleForWriting.close()
    }
    writer.start()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return Array(data)
}

/// A message with the compressed flag set.
func compressedFrame(_ payload: [UInt8]) -> [UInt8] {
    var f = framed(payload)
    f[0] = 1
    return f
}

@Suite struct MessageDecompressorTests {
    @Test func inflatesGzip() throws {
        let text = Array(String(repeating: "hearth ", count: 5000).utf8)
        #expect(MessageDecompressor.inflate(try gzipped(text), limit: 1 << 20) == .success(text))
        #expect(MessageDecompressor.inflate(try gzipped([]), limit: 10) == .success([]))
    }

    @Test func aBombStopsAtTheLimit() throws {
        let bomb = try gzipped([UInt8](repeating: 0, count: 11 << 20))
        #expect(bomb.count < 64 << 10)
        #expect(MessageDecompressor.inflate(bomb, limit: 10 << 20) == .failure(.tooLarge))
        #expect(MessageDecompressor.inflate(try gzipped([1, 2, 3, 4]), limit: 3) == .failure(.tooLarge))
    }

    @Test func brokenInputIsCorrupt() throws {
        let good = try gzipped(Array("some message".utf8))
        #expect(MessageDecompressor.inflate([], limit: 100) == .failure(.corrupt))
        #expect(MessageDecompressor.inflate(Array("not gzip at all".utf8), limit: 100) == .failure(.corrupt))
        #expect(MessageDecompressor.inflate(Array(good.dropLast(6)), limit: 100) == .failure(.corrupt))
        #expect(MessageDecompressor.inflate(good + [0x42], limit: 100) == .failure(.corrupt))
        var flipped = good
        flipped[good.count - 5] ^= 0xFF  // the CRC no longer matches
        #expect(MessageDecompressor.inflate(flipped, limit: 100) == .failure(.corrupt))
    }
}

@Suite struct CompressionTests {
    @Test func gzipRequestIsInflatedAndAnsweredUncompressed() throws {
        try withGRPCServer { server in
            let message = Array(String(repeating: "echo ", count: 1000).utf8)
            let r = try curl(server.port, "/echo.Echo/Unary", body: compressedFrame(try gzipped(message)),
                             headers: ["content-type: application/grpc", "grpc-encoding: gzip"])
            #expect(r.field("grpc-status") == "0")
            #expect(r.body == framed(message))
            #expect(r.field("grpc-encoding") == nil)
            #expect(r.field("grpc-accept-encoding") == "identity,deflate,gzip")
            // Uncompressed messages stay allowed on a gzip call (the flag decides per message).
            let plain = try curl(server.port, "/echo.Echo/Unary", body: framed([7]),
                                 headers: ["content-type: application/grpc", "grpc-encoding: gzip"])
            #expect(plain.body == framed([7]))
        }
    }

    @Test func compressedFlagWithoutEncodingIsInternal() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Unary", body: compressedFrame(try gzipped([1])))
            #expect(r.field("grpc-status") == "13")
            #expect(r.field("grpc-message") == "Compressed message received with grpc-encoding identity")
        }
    }

    @Test func unknownEncodingIsUnimplementedAndListsOurs() throws {
        try withGRPCServer { server in
            let r = try curl(server.port, "/echo.Echo/Unary", body: [],
                             headers: ["content-type: application/grpc", "grpc-encoding: snappy"])
            #expect(r.field("grpc-status") == "12")
            #expect(r.field("grpc-message") == "Unsupported grpc-encoding: snappy")
            #expect(r.field("grpc-accept-encoding") == "identity,deflate,gzip")
        }
    }

    @Test func bombAndGarbageEndOnlyTheirCall() throws {
        try withGRPCServer { server in
            let bomb = try curl(server.port, "/echo.Echo/Unary", body: compressedFrame(try gzipped([UInt8](repeating: 0, count: 11 << 20))),
                                headers: ["content-type: application/grpc", "grpc-encoding: gzip"])
            #expect(bomb.field("grpc-status") == "8")
            let garbage = try curl(server.port, "/echo.Echo/Unary", body: compressedFrame(Array("nope".utf8)),
                                   headers: ["content-type: application/grpc", "grpc-encoding: gzip"])
            #expect(garbage.field("grpc-status") == "13")
            let chat = try curl(server.port, "/echo.Echo/Chat", body: compressedFrame(try gzipped([3, 3])) + framed([4]),
                                headers: ["content-type: application/grpc", "grpc-encoding: gzip"])
            #expect(chat.body == framed([3, 3]) + framed([4]))
            try expectStillServing(server)
        }
    }
}
