/// Every fuzz target by name: what `HEARTH_FUZZ_TARGET` selects in `hearth-fuzz`, the names of
/// `Fuzz/seeds/` and `Fuzz/regressions/` folders, and what the replay tests run.
public enum FuzzCatalog {
    /// One input through a target; a thrown `FuzzFailure` is a finding, as a crash is.
    public typealias Target = @Sendable (UnsafeRawBufferPointer) throws(FuzzFailure) -> Void

    /// Parsers of untrusted bytes, then the differential and sequence targets.
    public static let targets: [(name: String, run: Target)] = [
        ("protobuf", { FuzzTargets.protobuf($0) }),
        ("http2", { FuzzTargets.http2($0) }),
        ("grpc-frames", { FuzzTargets.grpcFrames($0) }),
        ("rules", { FuzzTargets.rules($0) }),
        ("sigv4", { FuzzTargets.sigV4($0) }),
        ("chunked", { FuzzTargets.chunked($0) }),
        ("multipart", { FuzzTargets.multipart($0) }),
        ("xml", { FuzzTargets.xml($0) }),
        ("json", { bytes throws(FuzzFailure) in try FuzzTargets.json(bytes) }),
        ("firestore", { FuzzTargets.firestore($0) }),
        ("storage-upload", { bytes throws(FuzzFailure) in try FuzzTargets.storageUpload(bytes) }),
        ("rules-eval", { bytes throws(FuzzFailure) in try FuzzTargets.rulesEvaluation(bytes) }),
        ("value-order", { bytes throws(FuzzFailure) in try FuzzTargets.valueOrder(bytes) }),
        ("percent", { bytes throws(FuzzFailure) in try FuzzTargets.percentDecoding(bytes) }),
        ("listen-write", { bytes throws(FuzzFailure) in try FuzzTargets.listenWrite(bytes) }),
        ("writes", { bytes throws(FuzzFailure) in try FuzzTargets.writes(bytes) }),
        ("gunzip", { bytes throws(FuzzFailure) in try FuzzTargets.gunzip(bytes) }),
        ("policy", { bytes throws(FuzzFailure) in try FuzzTargets.policy(bytes) }),
        ("firestore-requests", { bytes throws(FuzzFailure) in try FuzzTargets.firestoreRequests(bytes) }),
        ("import", { bytes throws(FuzzFailure) in try FuzzTargets.importExport(bytes) }),
        ("auth-requests", { bytes throws(FuzzFailure) in try FuzzTargets.authRequests(bytes) }),
    ]

    /// The target called `name`.
    public static func target(_ name: String) -> Target? { targets.first { $0.name == name }?.run }
}
