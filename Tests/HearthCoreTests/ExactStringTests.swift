import Testing
import HearthCore

/// `ExactString.equal` and `compare` answer by UTF-8 bytes whichever way the strings are stored:
/// their shortcut for two strings with the same representation must agree with the bytes.
struct ExactStringTests {
    static let texts = ["", "a", "status", "contentType", "fifteen-bytes-x", "sixteen-bytes-xy",
                        "users/abcdefghijklmnopqrstuvwxyz12/files/f-w3", "é", "e\u{301}", "\u{212A}", "K",
                        // From 64 bytes `equal` compares by memcmp: lengths at the edge, a kilobyte
                        // token, and same-length texts differing at the first and at the last byte.
                        String(repeating: "t", count: 63), String(repeating: "t", count: 64),
                        String(repeating: "t", count: 63) + "u", "u" + String(repeating: "t", count: 63),
                        String(repeating: "eyJ0", count: 240), String(repeating: "eyJ0", count: 240) + "K",
                        String(repeating: "eyJ0", count: 240) + "k", String(repeating: "eyJ0", count: 240) + "\u{212A}",
                        // Small strings compared by their words (`bothSmall`): zero bytes against the
                        // zero padding, prefixes, each word's first and last byte, bytes from 0x80 (which
                        // a signed compare would put first), the count's byte beside the last one.
                        "\u{0}", "a\u{0}", "ab", "ab\u{0}", "statu", "abcdefgh", "abcdefgi", "abcdefgh\u{0}",
                        "abcdefghi", "bbcdefgh", "\u{7F}", "\u{80}", "\u{FF}", "fifteen-bytes-y", "fifteen-bytes-\u{0}",
                        "fourteen-bytes", "fifteen-bytes-\u{7F}"]

    /// The same text built again from its bytes (another storage for long strings).
    static func rebuilt(_ s: String) -> String { String(decoding: Array(s.utf8), as: UTF8.self) }

    /// The same text in a large string's storage even when it would fit a small one.
    static func stored(_ s: String) -> String {
        var out = String()
        out.reserveCapacity(64)
        out.append(s)
        return out
    }

    @Test func equalAndCompareFollowTheBytes() {
        for a in Self.texts {
            for b in Self.texts {
                for (x, y) in [(a, b), (Self.rebuilt(a), b), (a, Self.rebuilt(b)), (Self.rebuilt(a), Self.rebuilt(b)),
                               (Self.stored(a), b), (a, Self.stored(b))] {
                    let bytesEqual = Array(x.utf8) == Array(y.utf8)
                    #expect(ExactString.equal(x, y) == bytesEqual, "\(x) vs \(y)")
                    let order = Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)) ? -1 : bytesEqual ? 0 : 1
                    #expect(ExactString.compare(x, y) == order, "\(x) vs \(y)")
                }
            }
        }
    }

    /// A copy shares its original's storage; appending to either leaves the other as it was.
    @Test func sharedStorageStaysItsOwnBytes() {
        let original = "users/abcdefghijklmnopqrstuvwxyz12/files"
        var copy = original
        #expect(ExactString.equal(original, copy))
        copy.append("/x")
        #expect(!ExactString.equal(original, copy))
        #expect(ExactString.compare(original, copy) == -1)
        var grown = String()
        grown.reserveCapacity(64)
        grown.append("status")
        #expect(ExactString.equal(grown, "status") && ExactString.compare(grown, "status") == 0)
        grown.append("!")
        #expect(!ExactString.equal(grown, "status"))
    }
}
