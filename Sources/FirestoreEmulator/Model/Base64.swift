/// Standard base64 with padding, as Google's JSON writes `bytes`.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ b: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i + 2 < b.count {
            let n = Int(b[i]) << 16 | Int(b[i + 1]) << 8 | Int(b[i + 2])
            out.append(alphabet[n >> 18 & 63]); out.append(alphabet[n >> 12 & 63])
            out.append(alphabet[n >> 6 & 63]); out.append(alphabet[n & 63])
            i += 3
        }
        let rest = b.count - i
        if rest == 1 {
            let n = Int(b[i]) << 16
            out.append(alphabet[n >> 18 & 63]); out.append(alphabet[n >> 12 & 63]); out.append(0x3D); out.append(0x3D)
        } else if rest == 2 {
            let n = Int(b[i]) << 16 | Int(b[i + 1]) << 8
            out.append(alphabet[n >> 18 & 63]); out.append(alphabet[n >> 12 & 63]); out.append(alphabet[n >> 6 & 63]); out.append(0x3D)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `s` is exactly what `encode` writes for some non-empty bytes: the standard alphabet,
    /// a length that is a multiple of 4, `=` only as the last one or two characters, and the bits
    /// the padding leaves unused zero. Such text decodes (by any base64 decoder) to bytes that
    /// `encode` turns back into `s`, so it needs neither.
    static func isCanonical(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { b in
            let n = b.count
            guard n > 0, n % 4 == 0 else { return false }
            let padding = b[n - 1] != 0x3D ? 0 : (b[n - 2] != 0x3D ? 1 : 2)
            for i in 0..<(n - padding) where sextet(b[i]) == nil { return false }
            guard let last = sextet(b[n - 1 - padding]) else { return false }
            // One `=`: the last character carries 2 unused bits; two: 4.
            switch padding {
            case 1: return last & 0x03 == 0
            case 2: return last & 0x0F == 0
            default: return true
            }
        }
    }

    /// The value of a standard-alphabet character, nil for any other byte.
    private static func sextet(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x41...0x5A: c - 0x41
        case 0x61...0x7A: c - 0x61 + 26
        case 0x30...0x39: c - 0x30 + 52
        case 0x2B: 62
        case 0x2F: 63
        default: nil
        }
    }
}
