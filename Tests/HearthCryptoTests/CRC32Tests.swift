import Testing
@testable import HearthCrypto

/// The eight-bytes-a-step CRC and the CPU's CRC-32C instruction agree with the bit-by-bit
/// definition for every length, alignment and split of the input, and with RFC 3720's vectors.
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

    /// Each way of computing: IEEE's table; CRC-32C's table, pinned; CRC-32C as `init(_:)` picks
    /// (the instruction on a CPU that has it).
    static let ways: [(CRC32.Variant, hardware: Bool, polynomial: UInt32)] = [
        (.ieee, false, 0xEDB8_8320), (.castagnoli, false, 0x82F6_3B78), (.castagnoli, true, 0x82F6_3B78),
    ]

    @Test(arguments: ways)
    func everyLengthOffsetAndSplitAgreesWithTheDefinition(variant: CRC32.Variant, hardware: Bool, polynomial: UInt32) {
        for start in 0..<9 {
            for length in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200, 291] where start + length <= Self.data.count {
                let slice = Array(Self.data[start..<(start + length)])
                let expected = Self.reference(slice, polynomial: polynomial)
                var whole = CRC32(variant, hardware: hardware)
                slice.withUnsafeBytes { whole.update($0) }
                #expect(whole.value == expected)
                for split in [0, 1, 3, 8, 33, length / 2, length] where split <= length {
                    var c = CRC32(variant, hardware: hardware)
                    Self.data[start..<(start + split)].withUnsafeBytes { c.update($0) }
                    Self.data[(start + split)..<(start + length)].withUnsafeBytes { c.update($0) }
                    #expect(c.value == expected)
                }
            }
        }
    }

    /// RFC 3720 appendix B.4's CRC32C examples (and the common check value of "123456789"), by
    /// the table and by the instruction.
    @Test(arguments: [false, true])
    func rfc3720Vectors(hardware: Bool) {
        let pdu: [UInt8] = [
            0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
            0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ]
        let vectors: [([UInt8], UInt32)] = [
            ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
            ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
            ((0..<32).map { UInt8($0) }, 0x46DD_794E),
            ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
            (pdu, 0xD996_3A56),
            (Array("123456789".utf8), 0xE306_9283),
            ([], 0),
        ]
        for (bytes, expected) in vectors {
            var c = CRC32(.castagnoli, hardware: hardware)
            bytes.withUnsafeBytes { c.update($0) }
            #expect(c.value == expected)
        }
    }

    /// The default CRC-32C uses the instruction exactly when the CPU has it; IEEE never does.
    @Test func theInstructionIsUsedWhereTheCPUHasIt() {
        #expect(CRC32(.castagnoli).usesHardware == CRC32.castagnoliHardware)
        #expect(!CRC32(.castagnoli, hardware: false).usesHardware)
        #expect(!CRC32(.ieee).usesHardware)
        #if arch(x86_64)
        // Every x86-64 CPU of the last fifteen years has SSE4.2; a false here means the CPUID
        // check is broken, not that the machine is old.
        #expect(CRC32.castagnoliHardware)
        #endif
    }
}
