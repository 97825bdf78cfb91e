import Testing
@testable import SecurityRules

/// Malformed input never crashes or hangs: it compiles, or every error has a position.
struct FuzzTests {
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    }

    static let alphabet: [UInt8] = Array("{}()[];:,./$=*!&|?'\"\\ \nabxyz019_ifletmatchallowreturn".utf8) + [0xC3, 0xA9, 0x00, 0xFF]

    static let rounds = 30

    /// The shipped rules (always present) and every corpus file (when ../shared is beside the checkout).
    static let sources: [String] = ["rules/firestore.rules"] + Fixtures.corpusFiles

    static func source(_ file: String) -> String {
        file == "rules/firestore.rules" ? Fixtures.read(Fixtures.repoRoot.appendingPathComponent(file)) : Fixtures.corpus(file)
    }

    @Test(arguments: sources)
    func mutatedRulesFilesNeverCrash(_ file: String) {
        let original = Array(FuzzTests.source(file).utf8)
        #expect(!original.isEmpty)
        // A stable seed per file (String.hashValue is randomised per process).
        var seed: UInt64 = 1469598103934665603
        for b in file.utf8 { seed = (seed ^ UInt64(b)) &* 1099511628211 }
        var rng = SplitMix(state: seed)
        for _ in 0..<FuzzTests.rounds {
            var bytes = original
            for _ in 0..<(1 + rng.below(8)) {
                guard !bytes.isEmpty else { break }
                let at = rng.below(bytes.count)
                switch rng.below(4) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(FuzzTests.alphabet[rng.below(FuzzTests.alphabet.count)], at: at)
                case 2: bytes[at] = FuzzTests.alphabet[rng.below(FuzzTests.alphabet.count)]
                default:
                    let len = min(rng.below(40), bytes.count - at)
                    bytes.removeSubrange(at..<(at + len))
                }
            }
            let source = String(decoding: bytes, as: UTF8.self)
            let (ruleset, issues) = Ruleset.compile(source, fileName: file)
            if ruleset == nil {
                #expect(issues.contains { $0.severity == .error })
            }
            for issue in issues {
                #expect(FuzzTests.placed(issue, sourceIsEmpty: bytes.isEmpty))
            }
            if let ruleset {
                // Whatever compiled also evaluates without trapping.
                _ = ruleset.evaluate(Req.make(.get, "a/b"), lookup: MapLookup())
            }
        }
    }

    /// Every issue points into the source: line and column from 1, except the empty source's one
    /// issue at L0:0, where the emulator places it.
    static func placed(_ issue: RulesIssue, sourceIsEmpty: Bool) -> Bool {
        if sourceIsEmpty { return issue.line == 0 && issue.column == 0 }
        return issue.line >= 1 && issue.column >= 1
    }

    @Test func truncatedPrefixesNeverCrash() {
        let source = Array(FuzzTests.source("rules/firestore.rules").utf8)
        #expect(!source.isEmpty)
        var cut = 0
        while cut < source.count {
            let (_, issues) = Ruleset.compile(String(decoding: source[0..<cut], as: UTF8.self))
            #expect(issues.allSatisfy { FuzzTests.placed($0, sourceIsEmpty: cut == 0) })
            cut += 97
        }
    }
}
