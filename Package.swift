// swift-tools-version:6.0
// Hearth: Firebase Auth + Cloud Firestore + Amazon S3, offline, in one process.
import PackageDescription

let package = Package(
    name: "Hearth",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .executable(name: "hearth", targets: ["hearth"]),
        .library(name: "HearthClient", targets: ["HearthClient"]),
    ],
    targets: [
        // System libraries: module maps and static-inline shims only.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CNGHTTP2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // libc's epoll, eventfd and accept4, which the Glibc module does not export.
        .systemLibrary(name: "CLinuxIO"),
        // The CPU's CRC-32C instruction (SSE4.2), which Swift cannot emit: a header-only shim.
        .systemLibrary(name: "CCRC32C"),

        // Foundation layers.
        .target(name: "HearthCore"),
        .target(name: "HearthCrypto", dependencies: ["COpenSSL", "CCRC32C"]),
        .target(name: "HearthSQLite", dependencies: ["CSQLite", "HearthCore"]),
        .target(name: "HearthHTTP", dependencies: ["CMicroHTTPD", "CNGHTTP2", "CLinuxIO", "CZlib", "HearthCore"]),
        // gRPC over HearthHTTP's HTTP/2 streams; messages cross it as bytes.
        .target(name: "HearthGRPC", dependencies: ["HearthHTTP", "HearthCore"]),
        // The protobuf wire codec (no generator): pure Swift.
        .target(name: "HearthProtobuf"),

        // Streaming, bounded-memory, crash-safe blob storage in SQLite: one code path for the bytes
        // of every object service (S3, Cloud Storage), each in its own tables.
        .target(name: "HearthBlobs", dependencies: ["HearthCore", "HearthSQLite", "HearthHTTP", "HearthCrypto"]),

        // Pure language module.
        .target(name: "SecurityRules", dependencies: ["HearthCore", "HearthCrypto"]),

        // Services: each depends only on the foundation (and rules, for Firestore).
        .target(name: "AuthEmulator", dependencies: ["HearthCore", "HearthHTTP", "HearthSQLite", "HearthCrypto"]),
        .target(name: "S3Emulator", dependencies: ["HearthCore", "HearthHTTP", "HearthSQLite", "HearthCrypto", "HearthBlobs"]),
        .target(name: "FirestoreEmulator", dependencies: ["HearthCore", "HearthHTTP", "HearthGRPC", "HearthProtobuf", "HearthSQLite", "HearthCrypto", "SecurityRules"]),
        .target(name: "StorageEmulator", dependencies: ["HearthCore", "HearthHTTP", "HearthSQLite", "HearthCrypto", "HearthBlobs", "SecurityRules"]),
        .target(name: "UploadsAPI", dependencies: ["HearthCore", "HearthHTTP", "HearthCrypto"]),
        // The web UI: its files as Swift strings, the request log, Host/Origin checks; it reaches
        // services only through their HTTP handlers.
        .target(name: "HearthUI", dependencies: ["HearthCore", "HearthCrypto", "HearthHTTP", "HearthGRPC", "HearthProtobuf"]),

        // A client library for app and CI code: Foundation only, speaks the real services' REST shapes.
        .target(name: "HearthClient"),
        .executableTarget(name: "hearth-upload-flow", dependencies: ["HearthClient"], path: "Examples/UploadFlow"),

        // The executable only wires.
        .executableTarget(name: "hearth", dependencies: [
            "HearthCore", "HearthHTTP", "HearthGRPC", "HearthSQLite", "HearthCrypto", "SecurityRules",
            "AuthEmulator", "S3Emulator", "FirestoreEmulator", "UploadsAPI", "HearthUI", "StorageEmulator",
        ]),

        .testTarget(name: "HearthCoreTests", dependencies: ["HearthCore"]),
        .testTarget(name: "HearthCryptoTests", dependencies: ["HearthCrypto"]),
        .testTarget(name: "HearthSQLiteTests", dependencies: ["HearthSQLite", "HearthCore"]),
        .testTarget(name: "HearthHTTPTests", dependencies: ["HearthHTTP", "HearthCore"]),
        .testTarget(name: "HearthProtobufTests", dependencies: ["HearthProtobuf"]),
        .testTarget(name: "HearthGRPCTests", dependencies: ["HearthGRPC", "HearthHTTP", "HearthCore"]),
        .testTarget(name: "HearthBlobsTests", dependencies: ["HearthBlobs", "HearthCore", "HearthSQLite"]),
        .testTarget(name: "SecurityRulesTests", dependencies: ["SecurityRules", "HearthCore"]),
        .testTarget(name: "S3EmulatorTests", dependencies: ["S3Emulator", "HearthCore", "HearthCrypto", "HearthHTTP", "HearthSQLite", "HearthBlobs"]),
        .testTarget(name: "AuthEmulatorTests", dependencies: ["AuthEmulator", "HearthCore", "HearthCrypto", "HearthHTTP", "HearthSQLite"]),
        .testTarget(name: "FirestoreEmulatorTests", dependencies: ["FirestoreEmulator", "SecurityRules", "HearthCore", "HearthHTTP", "HearthSQLite", "HearthGRPC"]),
        .testTarget(name: "StorageEmulatorTests", dependencies: ["StorageEmulator", "SecurityRules", "HearthCore", "HearthHTTP", "HearthSQLite"]),
        .testTarget(name: "UploadsAPITests", dependencies: ["UploadsAPI", "HearthCore", "HearthHTTP", "HearthCrypto"]),
        .testTarget(name: "HearthUITests", dependencies: ["HearthUI", "HearthHTTP", "HearthGRPC", "HearthCore"]),
        .testTarget(name: "HearthClientTests", dependencies: ["HearthClient"]),
        .testTarget(name: "hearthTests", dependencies: ["HearthCore"]),

        // The fuzz targets' bodies (Fuzz/): `make fuzz` drives them with libFuzzer, and
        // HearthFuzzTests replays the seeds and regression inputs through them and runs a short
        // seeded mutation pass in every `make test`. Debug builds only (it uses @testable imports);
        // no product names it, so the release build never compiles it.
        .target(name: "HearthFuzz",
                dependencies: ["HearthCore", "HearthProtobuf", "HearthHTTP", "HearthGRPC", "S3Emulator",
                               "FirestoreEmulator", "StorageEmulator", "AuthEmulator", "SecurityRules"],
                path: "Fuzz/Sources/HearthFuzz"),
        .testTarget(name: "HearthFuzzTests", dependencies: ["HearthFuzz"]),
    ]
)

// `make fuzz` only: the libFuzzer targets (Fuzz/), built with -sanitize=fuzzer,address into
// .build/fuzz. Other builds never see them, so they need no sanitizer runtime.
if Context.environment["HEARTH_FUZZ"] != nil {
    package.targets.append(.executableTarget(
        name: "hearth-fuzz",
        dependencies: ["HearthFuzz"],
        path: "Fuzz/Sources/hearth-fuzz"))
}

// One set of Swift settings for every target (as swift-log does).
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
