import HearthCore

/// Hearth's opaque Listen resume token: the read time of the snapshot it came with.
///
/// The format is ours (the SDKs never look inside): `HRT`, a version byte, then the read time in
/// microseconds as 8 big-endian bytes. A token that does not decode is treated as unknown
/// (RESET and the full result), as Firestore treats an expired one.
enum ResumeToken {
    private static let magic: [UInt8] = Array("HRT".utf8) + [1]

    /// The token for a snapshot read at `time`.
    static func encode(_ time: Instant) -> [UInt8] {
        var bytes = magic
        let v = UInt64(bitPattern: time.unixMicros)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
        return bytes
    }

    /// The read time `token` was made for, or nil when it is not one of ours.
    static func decode(_ token: [UInt8]) -> Instant? {
        guard token.count == magic.count + 8, Array(token.prefix(magic.count)) == magic else { return nil }
        var v: UInt64 = 0
        for b in token.dropFirst(magic.count) { v = v << 8 | UInt64(b) }
        return Instant(unixMicros: Int64(bitPattern: v))
    }
}
