import Foundation

/// Hex and base64 encodings used across the wire formats.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hex of `bytes`.
    public static func encode<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out = [UInt8]()
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of a hex string (either case); nil when it is not hex of whole bytes.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Base64 in the URL-safe alphabet without padding (JWT, JWK).
public enum Base64URL {
    /// Encodes without padding.
    public static func encode<D: ContiguousBytes>(_ data: D) -> String {
        let bytes = data.withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes with or without padding; nil when not base64url.
    public static func decode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !s.contains("=") || text.hasSuffix("=") else { return nil }
        s = s.replacingOccurrences(of: "=", with: "")
        while s.count % 4 != 0 { s.append("=") }
        return Data(base64Encoded: s)
    }
}
