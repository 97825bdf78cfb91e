/// A seeded, coverage-blind mutator: what `make test` runs through every target in the normal
/// debug build, where libFuzzer's instrumented build would cost minutes. It cannot steer toward
/// new code as libFuzzer does, but it does push every target through thousands of damaged
/// variants of its seeds (flipped bits, cut, repeated and spliced ranges, interesting bytes)
/// on every run, the same ones each time for a given seed.
public struct FuzzMutator {
    private var state: UInt64
    private let seeds: [[UInt8]]

    /// `seeds`: the inputs to damage (an empty list mutates from nothing).
    public init(seed: UInt64, seeds: [[UInt8]]) {
        state = seed
        self.seeds = seeds.isEmpty ? [[]] : seeds
    }

    /// SplitMix64.
    private mutating func random() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    private mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(random() % UInt64(n)) }

    /// Bytes that end or break parsers: NUL, separators, quotes, escapes, high bytes, digits.
    private static let interesting: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF, 0x0A, 0x0D, 0x20, 0x22, 0x25, 0x26, 0x27, 0x2B,
                                               0x2C, 0x2D, 0x2F, 0x30, 0x39, 0x3A, 0x3B, 0x3D, 0x3F, 0x5C, 0x7B, 0x7D]

    /// The next input: a seed with 1–8 mutations, now and then spliced with another seed.
    public mutating func next() -> [UInt8] {
        var bytes = seeds[below(seeds.count)]
        for _ in 0..<(1 + below(8)) {
            let at = below(bytes.count + 1)
            switch below(9) {
            case 0 where !bytes.isEmpty:
                let i = below(bytes.count)
                bytes[i] ^= UInt8(1) << UInt8(below(8))
            case 1 where !bytes.isEmpty:
                bytes[below(bytes.count)] = UInt8(truncatingIfNeeded: random())
            case 2:
                bytes.insert(Self.interesting[below(Self.interesting.count)], at: at)
            case 3 where !bytes.isEmpty:
                let i = below(bytes.count)
                bytes.removeSubrange(i..<min(bytes.count, i + 1 + below(32)))
            case 4 where !bytes.isEmpty:
                // Repeat a range (long fields, nesting, repeated frames).
                let i = below(bytes.count)
                let range = bytes[i..<min(bytes.count, i + 1 + below(64))]
                bytes.insert(contentsOf: Array(range), at: at)
            case 5:
                let other = seeds[below(seeds.count)]
                guard !other.isEmpty else { continue }
                let i = below(other.count)
                bytes.insert(contentsOf: other[i..<min(other.count, i + 1 + below(128))], at: at)
            case 6 where !bytes.isEmpty:
                bytes.removeSubrange(below(bytes.count)...)
            case 7 where bytes.count >= 2:
                // An arithmetic change of a byte, as length and count fields want.
                let i = below(bytes.count)
                bytes[i] = bytes[i] &+ UInt8(truncatingIfNeeded: below(70) - 35)
            default:
                bytes.insert(UInt8(truncatingIfNeeded: random()), at: at)
            }
        }
        return bytes
    }
}
