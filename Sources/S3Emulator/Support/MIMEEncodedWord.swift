import Foundation

/// RFC 2047 encoded words for user metadata. S3: "Values of such headers are character decoded as
/// per RFC 2047 before storing and encoded as per RFC 2047 to make them mail-safe before
/// returning" — a value with non-US-ASCII characters is answered as `=?UTF-8?B?<base64>?=`, and a
/// value sent as an encoded word is stored decoded.
enum MIMEEncodedWord {
    /// The value as S3 answers it: unchanged when it is printable US-ASCII, else one UTF-8 B-encoded word.
    static func encode(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 >= 0x80 || ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return value }
        return "=?UTF-8?B?" + Data(value.utf8).base64EncodedString() + "?="
    }

    /// The text of a value that is a single UTF-8 encoded word (`B` or `Q`); anything else unchanged.
    static func decode(_ value: String) -> String {
        let parts = value.split(separator: "?", maxSplits: 4, omittingEmptySubsequences: false)
        guard value.hasPrefix("=?"), value.hasSuffix("?="), parts.count == 5, parts[0] == "=", parts[4] == "=",
              ["utf-8", "utf8"].contains(parts[1].lowercased()) else { return value }
        let text = String(parts[3])
        var bytes: [UInt8]?
        switch parts[2].uppercased() {
        case "B": bytes = Data(base64Encoded: text).map(Array.init)
        case "Q": bytes = decodeQ(text)
        default: bytes = nil
        }
        guard let bytes, let decoded = String(validating: bytes, as: UTF8.self) else { return value }
        return decoded
    }

    /// RFC 2047 §4.2: `_` is a space, `=XX` a byte in hex.
    private static func decodeQ(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let c = bytes.popFirst() {
            switch c {
            case UInt8(ascii: "_"): out.append(0x20)
            case UInt8(ascii: "="):
                guard bytes.count >= 2, let b = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                out.append(b)
                bytes = bytes.dropFirst(2)
            default: out.append(c)
            }
        }
        return out
    }
}
