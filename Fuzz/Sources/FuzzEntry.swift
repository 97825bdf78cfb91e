import Foundation

/// libFuzzer's entry point for every Hearth fuzz target (`make fuzz`). One binary serves them all;
/// `HEARTH_FUZZ_TARGET` picks the parser, so each target keeps its own corpus and statistics.
/// Built only when `HEARTH_FUZZ` is set, with `-sanitize=fuzzer,address`.
nonisolated(unsafe) private var selected: ((UnsafeRawBufferPointer) -> Void)?

/// Every target by name.
let fuzzTargets: [String: (UnsafeRawBufferPointer) -> Void] = [
    "protobuf": FuzzTargets.protobuf,
    "http2": FuzzTargets.http2,
    "grpc-frames": FuzzTargets.grpcFrames,
    "rules": FuzzTargets.rules,
    "sigv4": FuzzTargets.sigV4,
    "chunked": FuzzTargets.chunked,
    "multipart": FuzzTargets.multipart,
    "xml": FuzzTargets.xml,
    "json": FuzzTargets.json,
    "firestore": FuzzTargets.firestore,
]

@_cdecl("LLVMFuzzerTestOneInput")
public func hearthFuzzOne(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    if selected == nil {
        let name = ProcessInfo.processInfo.environment["HEARTH_FUZZ_TARGET"] ?? ""
        guard let target = fuzzTargets[name] else {
            let names = fuzzTargets.keys.sorted().joined(separator: " ")
            FileHandle.standardError.write(Data("set HEARTH_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        selected = target
    }
    selected?(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
