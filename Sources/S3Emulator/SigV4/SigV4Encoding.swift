import HearthHTTP

/// Percent-encoding as SigV4 defines it, on bytes.
///
/// Related: "URI-encode each byte except the unreserved characters A–Z a–z 0–9 - _ . ~; space is
/// %20, never +; hex digits upper case" (the SigV4 canonical request documentation).
enum SigV4Encoding {
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Whether `c` is an RFC 3986 unreserved character, which SigV4 never encodes.
    @inline(__always)
    static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: true
        default: false
        }
    }

    /// Appends `bytes` URI-encoded to `out`; `/` is kept when `keepSlash`.
    @inline(__always)
    static func appendEncoded<C: Collection>(_ bytes: C, keepSlash: Bool, to out: inout [UInt8]) where C.Element == UInt8 {
        for c in bytes {
            if isUnreserved(c) || (keepSlash && c == 0x2F) {
                out.append(c)
            } else {
                out.append(0x25)
                out.append(hexDigits[Int(c >> 4)])
                out.append(hexDigits[Int(c & 0x0F)])
            }
        }
    }

    /// `text` URI-encoded.
    static func encode(_ text: String, keepSlash: Bool = false) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count + 8)
        appendEncoded(text.utf8, keepSlash: keepSlash, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always)
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x41...0x46: c - 0x41 + 10
        case 0x61...0x66: c - 0x61 + 10
        default: nil
        }
    }

    /// `text` percent-decoded (bytes that are not UTF-8 are replaced, which only matters for display).
    static func decode(_ text: String, plusAsSpace: Bool = false) -> String {
        if !text.utf8.contains(0x25) && !(plusAsSpace && text.utf8.contains(0x2B)) { return text }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        let bytes = Array(text.utf8)
        Request.appendPercentDecoded(bytes, plusAsSpace: plusAsSpace, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let lowerHex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether `text` is all ASCII (byte-wise parsing then agrees with Character-wise parsing).
    static func isASCII(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { !$0.contains(where: { $0 >= 0x80 }) }
            ?? !text.utf8.contains(where: { $0 >= 0x80 })
    }

    /// Lower-case hex of `bytes` (signatures and hashes), without generic overhead.
    static func hex(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            lowerHex.withUnsafeBufferPointer { digits in
                var i = 0
                for b in bytes {
                    buffer[i] = digits[Int(b >> 4)]
                    buffer[i + 1] = digits[Int(b & 0x0F)]
                    i += 2
                }
            }
            return bytes.count * 2
        }
    }

    /// Lower-case hex bytes separated by single spaces, as S3's `StringToSignBytes` and
    /// `CanonicalRequestBytes` show them.
    static func spacedHex(_ text: String) -> String {
        let lower: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count * 3)
        for c in text.utf8 {
            if !out.isEmpty { out.append(0x20) }
            out.append(lower[Int(c >> 4)])
            out.append(lower[Int(c & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
