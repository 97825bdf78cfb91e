internal import CCRC32C

/// CRC-32 (IEEE, as zlib and S3's `x-amz-checksum-crc32`) and CRC-32C (Castagnoli, `x-amz-checksum-crc32c`).
///
/// These are checksums, not cryptography, and libcrypto has none; a table-driven loop is the standard
/// way. Eight bytes a step ("slicing-by-8", eight 256-entry tables) cuts the dependent table lookups
/// per byte from one to an eighth, which is what bounds a byte-at-a-time loop (a large upload
/// computes one of these over every byte). CRC-32C goes further where the CPU has SSE4.2: its
/// `crc32` instruction (CCRC32C's shim) does eight bytes in one instruction, about a tenth of the
/// table loop's instructions; elsewhere the table loop serves.
public struct CRC32: Sendable {
    /// The polynomial variant.
    public enum Variant: Sendable { case ieee, castagnoli }

    private static let ieeeTable = makeTables(0xEDB8_8320)
    private static let castagnoliTable = makeTables(0x82F6_3B78)
    /// Whether this CPU computes CRC-32C itself (asked once: CPUID is a serialising instruction).
    static let castagnoliHardware = hearth_crc32c_hardware() != 0

    /// Eight tables of 256, one after the other: `table[k * 256 + b]` is the CRC of byte `b`
    /// followed by `k` zero bytes.
    private let table: [UInt32]
    /// CRC-32C by the CPU's instruction rather than the table.
    private let hardware: Bool
    /// Whether this checksum runs on the CPU's instruction (tests check the choice).
    var usesHardware: Bool { hardware }
    private var crc: UInt32 = 0xFFFF_FFFF

    /// A running checksum of the given variant.
    public init(_ variant: Variant = .ieee) {
        self.init(variant, hardware: variant == .castagnoli && CRC32.castagnoliHardware)
    }

    /// A running checksum computed by the table loop (`hardware: false`) or, for CRC-32C on a CPU
    /// that has it, by the instruction; tests pin each path.
    init(_ variant: Variant, hardware: Bool) {
        table = variant == .ieee ? CRC32.ieeeTable : CRC32.castagnoliTable
        self.hardware = hardware && variant == .castagnoli && CRC32.castagnoliHardware
    }

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        if hardware {
            crc = hearth_crc32c_update(crc, base, bytes.count)
            return
        }
        var c = crc
        let n = bytes.count
        var i = 0
        table.withUnsafeBufferPointer { t in
            while n - i >= 8 {
                let one = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt32.self)) ^ c
                let two = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self))
                c = t[7 * 256 + Int(one & 0xff)] ^ t[6 * 256 + Int((one >> 8) & 0xff)]
                    ^ t[5 * 256 + Int((one >> 16) & 0xff)] ^ t[4 * 256 + Int(one >> 24)]
                    ^ t[3 * 256 + Int(two & 0xff)] ^ t[2 * 256 + Int((two >> 8) & 0xff)]
                    ^ t[256 + Int((two >> 16) & 0xff)] ^ t[Int(two >> 24)]
                i += 8
            }
            while i < n {
                c = t[Int((c ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xff)] ^ (c >> 8)
                i += 1
            }
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

    private static func makeTables(_ polynomial: UInt32) -> [UInt32] {
        var t = (0..<256).map { n -> UInt32 in
            var c = UInt32(n)
            for _ in 0..<8 { c = (c & 1) != 0 ? polynomial ^ (c >> 1) : c >> 1 }
            return c
        }
        t.reserveCapacity(8 * 256)
        for k in 1..<8 {
            for b in 0..<256 {
                let previous = t[(k - 1) * 256 + b]
                t.append((previous >> 8) ^ t[Int(previous & 0xff)])
            }
        }
        return t
    }
}
