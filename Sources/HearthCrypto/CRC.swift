/// CRC-32 (IEEE, as zlib and S3's `x-amz-checksum-crc32`) and CRC-32C (Castagnoli, `x-amz-checksum-crc32c`).
///
/// These are checksums, not cryptography, and libcrypto has none; a table-driven loop is the standard way.
public struct CRC32: Sendable {
    /// The polynomial variant.
    public enum Variant: Sendable { case ieee, castagnoli }

    private static let ieeeTable = makeTable(0xEDB8_8320)
    private static let castagnoliTable = makeTable(0x82F6_3B78)

    private let table: [UInt32]
    private var crc: UInt32 = 0xFFFF_FFFF

    /// A running checksum of the given variant.
    public init(_ variant: Variant = .ieee) {
        table = variant == .ieee ? CRC32.ieeeTable : CRC32.castagnoliTable
    }

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var c = crc
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = t[Int((c ^ UInt32(b)) & 0xff)] ^ (c >> 8) }
        }
        crc = c
    }

    /// Adds bytes.
    public mutating func update<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    /// The checksum of everything added so far.
    public var value: UInt32 { crc ^ 0xFFFF_FFFF }

    /// The checksum as the four big-endian bytes S3 base64-encodes.
    public var bigEndianBytes: [UInt8] {
        let v = value
        return [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
    }

    /// One-shot checksum.
    public static func checksum<S: Sequence>(_ bytes: S, variant: Variant = .ieee) -> UInt32 where S.Element == UInt8 {
        var c = CRC32(variant)
        c.update(bytes)
        return c.value
    }

    private static func makeTable(_ polynomial: UInt32) -> [UInt32] {
        (0..<256).map { n -> UInt32 in
            var c = UInt32(n)
            for _ in 0..<8 { c = (c & 1) != 0 ? polynomial ^ (c >> 1) : c >> 1 }
            return c
        }
    }
}
