import Testing
import HearthCore

/// `SmallASCII.string` makes exactly the string `String(decoding:as:)` makes: for up to 15 ASCII
/// bytes the same two words (so `ExactString`'s word compares hold for it), otherwise the same text.
struct SmallASCIITests {
    static func words(_ s: String) -> (UInt64, UInt64) { unsafeBitCast(s, to: (UInt64, UInt64).self) }

    /// Every length from empty to past the small capacity, with zero bytes, 0x7F and the 8-byte
    /// word edge; non-ASCII bytes (valid and not) at the end, which must take the decoding path.
    static let inputs: [[UInt8]] = {
        let alphabet: [UInt8] = Array("abcXYZ019/-_.:~ \u{7F}".utf8) + [0]
        var out: [[UInt8]] = []
        for n in 0...20 {
            for seed in 0..<6 {
                out.append((0..<n).map { alphabet[($0 * 7 + seed * 13 + $0 * seed) % alphabet.count] })
            }
            out.append(Array(repeating: 0x61, count: n) + [0xC3, 0xA9])
            out.append(Array(repeating: 0x61, count: n) + [0xFF])
        }
        return out
    }()

    @Test(arguments: inputs)
    func sameStringAsDecoding(_ bytes: [UInt8]) {
        let made = bytes.withUnsafeBytes { SmallASCII.string($0) }
        let decoded = String(decoding: bytes, as: UTF8.self)
        #expect(Array(made.utf8) == Array(decoded.utf8))
        #expect(made == decoded)
        if bytes.count <= 15 && bytes.allSatisfy({ $0 < 0x80 }) {
            #expect(Self.words(made) == Self.words(decoded), "\(bytes)")
        }
    }
}
