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
}
