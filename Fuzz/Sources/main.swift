import Foundation

// libFuzzer's driver for every Hearth fuzz target (`make fuzz`). One binary serves them all;
// `HEARTH_FUZZ_TARGET` picks the parser, so each target keeps its own corpus and statistics.
// Built only when `HEARTH_FUZZ` is set, with `-sanitize=fuzzer,address`. SwiftPM gives executables
// their own entry point, so this one hands argv to libFuzzer's `LLVMFuzzerRunDriver`.
nonisolated(unsafe) private var selected: ((UnsafeRawBufferPointer) -> Void)?

/// Every target by name.
let fuzzTargets: [String: @Sendable (UnsafeRawBufferPointer) -> Void] = [
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

/// One input through the selected target.
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

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, hearthFuzzOne))
