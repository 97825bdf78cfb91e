import Foundation
import Testing

/// `protoc --encode/--decode` with a descriptor set built from the shared protos: the oracle
/// the hand-written codec and schemas are checked against. Absent ../shared or protoc: the
/// tests using it are skipped (with `Protoc.skipReason`).
enum Protoc {
    /// The shared protos, relative to the checkout (a fresh clone has no ../shared).
    static let protosDirectory: String = {
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return checkout.deletingLastPathComponent().appendingPathComponent("shared/reference/firestore-grpc/protos").path
    }()

    static let executable: String? = ["/usr/bin/protoc", "/usr/local/bin/protoc"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static var available: Bool {
        executable != nil && FileManager.default.fileExists(atPath: protosDirectory + "/google/firestore/v1/firestore.proto")
    }

    static let skipReason: Comment = "protoc (Debian protobuf-compiler) or ../shared/reference/firestore-grpc/protos is absent"

    /// The descriptor set, built once per test process.
    static let descriptorSet: String = {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-firestore-\(getpid()).desc").path
        _ = try? run(["-I", protosDirectory, "--include_imports", "--descriptor_set_out=" + out, "google/firestore/v1/firestore.proto"], input: [])
        return out
    }()

    /// Text format → wire bytes.
    static func encode(_ message: String, _ text: String) throws -> [UInt8] {
        try run(["--descriptor_set_in=" + descriptorSet, "--encode=" + message], input: Array(text.utf8))
    }

    /// Wire bytes → text format.
    static func decode(_ message: String, _ bytes: [UInt8]) throws -> String {
        String(decoding: try run(["--descriptor_set_in=" + descriptorSet, "--decode=" + message], input: bytes), as: UTF8.self)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private static func run(_ arguments: [String], input: [UInt8]) throws -> [UInt8] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable ?? "/usr/bin/protoc")
        p.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        p.standardError = stderr
        try p.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw Failure(description: String(decoding: err, as: UTF8.self)) }
        return [UInt8](out)
    }
}
