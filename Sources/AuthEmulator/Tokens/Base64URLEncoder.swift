/// Unpadded base64url encoding on the token hot path.
///
/// Every sign-in encodes three JWT segments and a refresh token; `HearthCrypto.Base64URL.encode`
/// goes through Foundation's base64 and three `replacingOccurrences` passes, which made it a
/// quarter of a sign-in's CPU time. This is the same output (the tests compare them), in one pass.
/// Decoding still uses `Base64URL.decode`.
enum Base64URLEncoder {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in the URL-safe alphabet without padding.
    static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let input = Array(bytes)
        let count = input.count
        let outCount = (count / 3) * 4 + [0, 2, 3][count % 3]
        return String(unsafeUninitializedCapacity: outCount) { out in
            var o = 0
            var i = 0
            while i + 3 <= count {
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(n >> 18 & 63)]
                out[o + 1] = alphabet[Int(n >> 12 & 63)]
                out[o + 2] = alphabet[Int(n >> 6 & 63)]
                out[o + 3] = alphabet[Int(n & 63)]
                i += 3
                o += 4
            }
            switch count - i {
            case 1:
                let n = UInt32(input[i]) << 16
                out[o] = alphabet[Int(n >> 18 & 63)]
                out[o + 1] = alphabet[Int(n >> 12 & 63)]
                o += 2
            case 2:
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                out[o] = alphabet[Int(n >> 18 & 63)]
                out[o + 1] = alphabet[Int(n >> 12 & 63)]
                out[o + 2] = alphabet[Int(n >> 6 & 63)]
                o += 3
            default:
                break
            }
            return o
        }
    }
}
