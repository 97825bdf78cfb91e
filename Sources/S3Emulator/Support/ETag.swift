import Foundation
import HearthCrypto

/// Entity-tag helpers for conditional requests.
enum ETag {
    /// `"<hex md5>"`.
    static func quoted(md5: [UInt8]) -> String { "\"" + SigV4Encoding.hex(md5) + "\"" }

    /// The bare value of an entity tag (`W/"abc"`, `"abc"` and `abc` all give `abc`).
    static func bare(_ tag: String) -> String {
        var t = Substring(tag.trimmingCharacters(in: .whitespaces))
        if t.hasPrefix("W/") { t = t.dropFirst(2) }
        if t.count >= 2, t.hasPrefix("\""), t.hasSuffix("\"") { t = t.dropFirst().dropLast() }
        return String(t)
    }

    /// Whether a condition header (`*`, one tag or a comma-separated list) matches `etag`.
    static func matches(_ condition: String, _ etag: String) -> Bool {
        let target = bare(etag)
        for item in condition.split(separator: ",") {
            let t = item.trimmingCharacters(in: .whitespaces)
            if t == "*" || bare(t) == target { return true }
        }
        return false
    }
}
