import Foundation
import HearthCrypto

/// The bloom filter of an `ExistenceFilter`'s `unchanged_names`: every document name the target
/// holds, so a client whose count disagrees can tell which of its documents are gone without
/// listening again from scratch.
///
/// The layout is fixed by the clients that read it (google/firestore/v1/bloom_filter.proto, and
/// the SDKs' `BloomFilter.mightContain`, which must agree bit for bit with the server): MD5 of the
/// UTF-8 name read as two little-endian unsigned 64-bit values h1 and h2; the i-th probe (i from 0)
/// is bit `(h1 + i·h2) mod bitCount`, with wrapping arithmetic; bit n is `bitmap[n / 8] & (1 << n % 8)`;
/// `padding` bits of the last byte are unused.
struct BloomFilter: Sendable, Equatable {
    private(set) var bitmap: [UInt8]
    private(set) var padding: Int
    private(set) var hashCount: Int

    /// The bits in use.
    var bitCount: Int { bitmap.count * 8 - padding }

    /// A filter as received (tests decode the SDKs' vectors with it).
    init(bitmap: [UInt8], padding: Int, hashCount: Int) {
        self.bitmap = bitmap
        self.padding = padding
        self.hashCount = hashCount
    }

    /// An empty filter of `bitCount` bits probed `hashCount` times.
    init(bitCount: Int, hashCount: Int) {
        let bytes = (bitCount + 7) / 8
        self.init(bitmap: [UInt8](repeating: 0, count: bytes), padding: bytes * 8 - bitCount,
                  hashCount: bitCount == 0 ? 0 : hashCount)
    }

    /// A filter holding `names`, sized for a false-positive rate of `rate` by the usual optimum
    /// (m = −n·ln p / ln²2 bits, k = m/n·ln 2 probes, both rounded up). No names: the empty
    /// filter (no bits, no probes), which the SDKs accept and which contains nothing.
    init(_ names: some Collection<String>, falsePositiveRate rate: Double = 0.01) {
        let n = Double(names.count)
        guard n > 0 else {
            self.init(bitmap: [], padding: 0, hashCount: 0)
            return
        }
        let bits = Int((-n * Foundation.log(rate) / (Foundation.log(2.0) * Foundation.log(2.0))).rounded(.up))
        let probes = max(1, Int((Double(bits) / n * Foundation.log(2.0)).rounded(.up)))
        self.init(bitCount: max(bits, 1), hashCount: probes)
        for name in names { insert(name) }
    }

    /// Adds `name`.
    mutating func insert(_ name: String) {
        for bit in probes(name) { bitmap[bit / 8] |= 1 << UInt8(bit % 8) }
    }

    /// False when `name` is certainly not in the filter. The SDKs never look up the empty name,
    /// and an empty filter contains nothing.
    func mightContain(_ name: String) -> Bool {
        guard bitCount > 0, !name.isEmpty else { return false }
        return probes(name).allSatisfy { bitmap[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }
    }

    /// The bit indexes `name` sets.
    private func probes(_ name: String) -> [Int] {
        let digest = Digest.md5(Array(name.utf8))
        var h1: UInt64 = 0
        var h2: UInt64 = 0
        for i in (0..<8).reversed() {
            h1 = h1 << 8 | UInt64(digest[i])
            h2 = h2 << 8 | UInt64(digest[8 + i])
        }
        let m = UInt64(bitCount)
        return (0..<hashCount).map { i in Int((h1 &+ UInt64(i) &* h2) % m) }
    }
}
