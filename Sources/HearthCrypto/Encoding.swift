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

/// Base64 in the standard alphabet with padding (RFC 4648 §4), as Foundation's
/// `base64EncodedString()` writes it, in one pass without `Data`.
public enum StandardBase64 {
    /// The alphabet as the encoder reads it: a literal's bytes, no array to check bounds in.
    static let digits: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Encodes with `=` padding to a multiple of four characters.
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        encode(bytes, alphabet: digits, padded: true)
    }

    /// Encodes bytes in memory with `=` padding, without copying them into an array first (S3's
    /// `x-amz-id-2` is encoded on every answer: through the generic encoder, ~1.8k instructions).
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        encode(raw: bytes, alphabet: digits, padded: true)
    }

    /// The encoder of both alphabets for any collection: its contiguous bytes when it has them.
    static func encode<C: Collection>(_ bytes: C, alphabet: StaticString, padded: Bool) -> String where C.Element == UInt8 {
        if let s = bytes.withContiguousStorageIfAvailable({ encode(raw: UnsafeRawBufferPointer($0), alphabet: alphabet, padded: padded) }) {
            return s
        }
        return Array(bytes).withUnsafeBytes { encode(raw: $0, alphabet: alphabet, padded: padded) }
    }

    /// The one encoder of both alphabets: 3 bytes to 4 characters, then the 1 or 2 left over to
    /// 2 or 3 characters (and `=` up to four when `padded`).
    static func encode(raw input: UnsafeRawBufferPointer, alphabet: StaticString, padded: Bool) -> String {
        let count = input.count
        let rest = count % 3
        let outCount = padded ? (count + 2) / 3 * 4 : (count / 3) * 4 + (rest == 0 ? 0 : rest + 1)
        let a = alphabet.utf8Start
        return String(unsafeUninitializedCapacity: outCount) { out in
            var o = 0
            var i = 0
            while i + 3 <= count {
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = a[Int(n >> 18 & 63)]
                out[o + 1] = a[Int(n >> 12 & 63)]
                out[o + 2] = a[Int(n >> 6 & 63)]
                out[o + 3] = a[Int(n & 63)]
                i += 3
                o += 4
            }
            if rest > 0 {
                let n = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                out[o] = a[Int(n >> 18 & 63)]
                out[o + 1] = a[Int(n >> 12 & 63)]
                o += 2
                if rest == 2 {
                    out[o] = a[Int(n >> 6 & 63)]
                    o += 1
                }
                while padded && o < outCount {
                    out[o] = UInt8(ascii: "=")
                    o += 1
                }
            }
            return o
        }
    }
}

/// Base64 in the URL-safe alphabet without padding (JWT, JWK).
public enum Base64URL {
    private static let alphabet = Array(digits.description.utf8)
    private static let digits: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// Encodes without padding, in one pass (tokens are encoded on every sign-in).
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        StandardBase64.encode(bytes, alphabet: digits, padded: false)
    }

    /// Encodes `data` without padding.
    public static func encode(_ data: Data) -> String { encode(Array(data)) }

    private static let decodeTable: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        // The standard alphabet's two characters too, as lenient JWT readers accept them.
        t[Int(UInt8(ascii: "+"))] = 62
        t[Int(UInt8(ascii: "/"))] = 63
        return t
    }()

    /// Decodes with or without padding; nil when not base64url (one pass: ID tokens are decoded
    /// on every Firestore and uploads request).
    public static func decode(_ text: String) -> Data? {
        var bytes = Array(text.utf8)
        if let firstPad = bytes.firstIndex(of: UInt8(ascii: "=")) {
            // Padding only at the end, at most two, and only to a multiple of four.
            let pads = bytes.count - firstPad
            guard pads <= 2, bytes[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") }), bytes.count % 4 == 0 else { return nil }
            bytes.removeLast(pads)
        }
        guard bytes.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for c in bytes {
            let v = decodeTable[Int(c)]
            guard v != 0xFF else { return nil }
            acc = acc << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return Data(out)
    }
}
