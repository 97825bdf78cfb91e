import Foundation
import HearthFuzz

// libFuzzer's driver for every Hearth fuzz target (`make fuzz`). One binary serves them all;
// `HEARTH_FUZZ_TARGET` picks the target, so each keeps its own corpus and statistics.
// Built only when `HEARTH_FUZZ` is set, with `-sanitize=fuzzer,address`. SwiftPM gives executables
// their own entry point, so this one hands argv to libFuzzer's `LLVMFuzzerRunDriver`.
nonisolated(unsafe) private var selected: FuzzCatalog.Target?

/// One input through the selected target; a broken invariant stops the run as a crash does, so
/// libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func hearthFuzzOne(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    if selected == nil {
        let name = ProcessInfo.processInfo.environment["HEARTH_FUZZ_TARGET"] ?? ""
        guard let target = FuzzCatalog.target(name) else {
            let names = FuzzCatalog.targets.map(\.name).joined(separator: " ")
            FileHandle.standardError.write(Data("set HEARTH_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        selected = target
    }
    do {
        try selected?(UnsafeRawBufferPointer(start: data, count: count))
    } catch {
        FileHandle.standardError.write(Data("ERROR: invariant broken: \(error)\n".utf8))
        abort()
    }
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, hearthFuzzOne))
