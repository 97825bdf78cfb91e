import Testing
@testable import FirestoreEmulator

/// `JSONWriter.string`'s escapes, checked eight bytes at a time, against the byte-by-byte loop they
/// replaced: every byte that needs an escape (controls, quote, backslash, U+2028/U+2029) and its
/// near misses (0x20, 0xE2 not followed by 80 A8/A9, E2 80 at the end) at every offset of strings
/// of 0–40 bytes, and 3,000 seeded strings mixing them with ASCII and other UTF-8.
struct JSONWriterEscapeTests {
    /// The loop `escaped` was before: the expected bytes.
    static func reference(_ s: String) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        let utf8 = Array(s.utf8)
        var out: [UInt8] = [0x22]
        var start = 0
        for i in 0..<utf8.count {
            let c = utf8[i]
            let needsEscape = c < 0x20 || c == 0x22 || c == 0x5C
                || (c == 0xE2 && i + 2 < utf8.count && utf8[i + 1] == 0x80 && (utf8[i + 2] == 0xA8 || utf8[i + 2] == 0xA9))
            guard needsEscape else { continue }
            if start < i { out.append(contentsOf: utf8[start..<i]) }
            switch c {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: out.append(contentsOf: [0x5C, 0x72])
            case 0x09: out.append(contentsOf: [0x5C, 0x74])
            case 0x08: out.append(contentsOf: [0x5C, 0x62])
            case 0x0C: out.append(contentsOf: [0x5C, 0x66])
            case 0xE2:
                out.append(contentsOf: Array("\\u202".utf8))
                out.append(utf8[i + 2] == 0xA8 ? 0x38 : 0x39)
                start = i + 3
                continue
            default:
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            }
            start = i + 1
        }
        if start < utf8.count { out.append(contentsOf: utf8[start...]) }
        out.append(0x22)
        return out
    }

    static func written(_ s: String) -> [UInt8] {
        var w = JSONWriter()
        w.string(s)
        return w.bytes
    }

    @Test func everyEscapeAtEveryOffset() {
        let pieces = ["\u{0}", "\u{1F}", "\n", "\r", "\t", "\u{8}", "\u{C}", "\"", "\\", "\u{2028}", "\u{2029}",
                      " ", "\u{2027}", "\u{202A}", "â", "é", "\u{7F}", "😀", "!", "]", "\u{1F}\u{2028}\""]
        for length in 0...40 {
            for offset in 0...length {
                for piece in pieces {
                    let s = String(repeating: "a", count: offset) + piece + String(repeating: "b", count: length - offset)
                    #expect(Self.written(s) == Self.reference(s), "\(Array(s.utf8))")
                }
            }
        }
    }

    @Test func seededStrings() {
        let alphabet: [String] = ["a", "Z", "0", " ", "/", "\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}",
                                  "\u{2026}", "é", "€", "😀", "\u{80}", "ÿ"]
        var x: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<3_000 {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17
            var s = ""
            for _ in 0..<Int(x % 48) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                // Mostly plain letters, so runs of eight plain bytes occur between the others.
                s += x % 3 == 0 ? alphabet[Int(x / 3 % UInt64(alphabet.count))] : "q"
            }
            #expect(Self.written(s) == Self.reference(s), "\(Array(s.utf8))")
        }
    }

    @Test func theWordTestNeverMissesAByte() {
        // Each byte value alone at each of the eight positions among plain letters.
        for value in 0...255 {
            for position in 0..<8 {
                var word: UInt64 = 0x6161_6161_6161_6161
                word &= ~(UInt64(0xFF) << (8 * position))
                word |= UInt64(value) << (8 * position)
                let flagged = value < 0x20 || value == 0x22 || value == 0x5C || value == 0xE2
                if flagged { #expect(JSONWriter.mayNeedEscape(word), "\(value) at \(position)") }
                if !flagged { #expect(!JSONWriter.mayNeedEscape(word), "\(value) at \(position)") }
            }
        }
    }
}
