import Testing
@testable import HearthCrypto

/// The eight-bytes-a-step CRC agrees with the bit-by-bit definition for every length, alignment
/// and split of the input.
@Suite struct CRC32Tests {
    /// The definition: one bit at a time, reflected, as RFC 3720 (CRC32C) and zlib (IEEE) define it.
    static func reference(_ bytes: [UInt8], polynomial: UInt32) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = (c & 1) != 0 ? polynomial ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }

    static let data: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) }

    @Test(arguments: [(CRC32.Variant.ieee, UInt32(0xEDB8_8320)), (.castagnoli, 0x82F6_3B78)])
    func everyLengthOffsetAndSplitAgreesWithTheDefinition(variant: CRC32.Variant, polynomial: UInt32) {
        for start in 0..<9 {
            for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200] where start + length <= Self.data.count {
                let slice = Array(Self.data[start..<(start + length)])
                let expected = Self.reference(slice, polynomial: polynomial)
                #expect(CRC32.checksum(slice, variant: variant) == expected)
                for split in [0, 1, 3, 8, length / 2, length] where split <= length {
                    var c = CRC32(variant)
                    Self.data[start..<(start + split)].withUnsafeBytes { c.update($0) }
                    Self.data[(start + split)..<(start + length)].withUnsafeBytes { c.update($0) }
                    #expect(c.value == expected)
                }
            }
        }
    }
}
