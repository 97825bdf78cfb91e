import Foundation
import HearthFuzz
import Testing

/// Every fuzz target in every `make test`, on the normal debug build (libFuzzer's instrumented
/// build costs minutes; `make fuzz` runs it): the committed seeds and every input that once broke
/// a target (`Fuzz/regressions/TARGET/`) go through it, then a seeded mutation pass over them.
/// A crash fails the run; a broken invariant fails the test with the input.
@Suite struct FuzzReplayTests {
    static let fuzzRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz")

    /// The files of `Fuzz/FOLDER/TARGET`, by name.
    static func inputs(_ folder: String, _ target: String) -> [(name: String, bytes: [UInt8])] {
        let dir = fuzzRoot.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path) else { return nil }
            return ("\(folder)/\(target)/\(name)", [UInt8](data))
        }
    }

    static let names = FuzzCatalog.targets.map(\.name)

    /// Mutated inputs per target (`HEARTH_FUZZ_MUTATIONS`), within `HEARTH_FUZZ_SECONDS` each.
    static let mutations = Int(ProcessInfo.processInfo.environment["HEARTH_FUZZ_MUTATIONS"] ?? "") ?? 3000
    static let seconds = Double(ProcessInfo.processInfo.environment["HEARTH_FUZZ_SECONDS"] ?? "") ?? 2

    static func run(_ target: FuzzCatalog.Target, _ bytes: [UInt8]) -> FuzzFailure? {
        bytes.withUnsafeBytes { buffer -> FuzzFailure? in
            do throws(FuzzFailure) {
                try target(buffer)
                return nil
            } catch {
                return error
            }
        }
    }

    @Test(arguments: names)
    func seedsAndRegressionInputsPass(_ name: String) throws {
        let target = try #require(FuzzCatalog.target(name))
        let seeds = Self.inputs("seeds", name)
        #expect(!seeds.isEmpty, "Fuzz/seeds/\(name) is empty")
        let before = FuzzChecks.made(by: name)
        for (file, bytes) in seeds + Self.inputs("regressions", name) {
            if let failure = Self.run(target, bytes) { Issue.record("\(file): \(failure)") }
        }
        // The targets that check answers must get that far on their seeds.
        if Self.checking.contains(name) {
            #expect(FuzzChecks.made(by: name) > before, "the seeds of \(name) never reach its checks")
        }
    }

    static let checking: Set<String> = ["value-order", "rules-eval", "percent", "storage-upload", "listen-write", "writes", "gunzip", "policy", "firestore-requests", "json", "import", "auth-requests"]

    @Test(arguments: names)
    func seededMutationsPass(_ name: String) throws {
        let target = try #require(FuzzCatalog.target(name))
        var seed: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in name.utf8 { seed = (seed ^ UInt64(b)) &* 0x100_0000_01B3 }
        var mutator = FuzzMutator(seed: seed, seeds: (Self.inputs("seeds", name) + Self.inputs("regressions", name)).map(\.bytes))
        let start = Date()
        var count = 0
        while count < Self.mutations, Date().timeIntervalSince(start) < Self.seconds {
            let input = mutator.next()
            count += 1
            if let failure = Self.run(target, input) {
                Issue.record("\(name), mutated input \(count) (base64 \(Data(input).base64EncodedString())): \(failure)")
                break
            }
        }
        print("fuzz \(name): \(count) mutated inputs in \(String(format: "%.1f", Date().timeIntervalSince(start))) s, \(FuzzChecks.made(by: name)) checks")
        #expect(count > 0)
    }
}
