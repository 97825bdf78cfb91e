import Foundation
import Testing
@testable import FirestoreEmulator

/// The `unchanged_names` bloom filter against the Firestore backend's own golden vector (shipped
/// with the SDKs' tests as `Validation_BloomFilterTest_MD5_500_01`): 500 names
/// `…/documents/coll/doc0` … `doc499` at a 1 % false-positive rate. The SDKs must agree with the
/// server bit for bit, so matching it checks the hashing, the bit layout and the sizing at once.
@Suite struct BloomFilterTests {
    static let prefix = "projects/project-1/databases/database-1/documents/coll/doc"
    static let goldenBitmap = """
        n+36qf4UgWXLxRabHwqwva8jpXlZ7yfdCjRNwHQ5MBmgc35tGNWFvTgrWyfmznuz1j0wMabH29pR84MjjWGgAxLhDXU3dyYTY505812+BYTO5GXEAyGoUZhcBlUZPK+RAqSZ+9e3q9Gxpmoes/4iCbxJFc5eew0+95v5Z0h5fvlF2Y9iRBDu2PWC1pVGuc/j3W+34+5IwPtDLPbtfvYhnohTfXP02vsf2/77YqEtfmMVFfIMZJ5e7uLOA+rcmQC5fFfxjubJfKR5R+Rzw/UWd0Eg3gi+FCUIk/WUP5938R4tPH3fnrtQjclvsZhtj5dak7WWw1Ph4ZFdJE2XdFBH1JSvggI5tFKH5WUeIBlHYj+V3HomQ2gDrwMXGsIJokcwQi1qTUjECnwYGlOl/FRjZQg7h3QoSkyxgBnp6w7XKttc/EJf+279WLkvm6K/sTuQiFsOGqdQQ+c6osu9SzICn7Rtu4+RzmfxgCx1i2rX1OvVt+DLWa8/K5TlLvVM7GqXiHeaLuvkaz4uR754T1Iurp8/Ps2yJdXYHLyGndJa+7DJ1BPsGK8ZYbYFN7jGamHF9de+3K/syp1raDltsNUxUGAaMBghK1nIRDtHLSHBtVkuxvUkP3iVIkm6pEp0K/2npYUEAsbYVkug4Iv7qhnLTGwMUXP3piTMySLLoZ9bGY0k13FMX7h/s79dJDcIIf4fR9S0SN6fWXKdZOBLFzyXGcxbD+o0o3NO/UOZDgmTet2or8rvipr4tGDyGluUnW1o/fWPlGvEIo/7Ep6avGyw7jilLKYiunAA
        """
    /// The golden membership result for doc0…doc999: the 500 members, and these false positives.
    static let goldenFalsePositives: Set<Int> = [533, 684]

    static var golden: BloomFilter {
        BloomFilter(bitmap: [UInt8](Data(base64Encoded: goldenBitmap)!), padding: 7, hashCount: 7)
    }

    @Test func membershipMatchesTheBackendsGoldenResult() {
        let f = Self.golden
        #expect(f.bitCount == 4793)
        let members = (0..<1000).filter { f.mightContain(Self.prefix + String($0)) }
        #expect(members == Array(0..<500) + Self.goldenFalsePositives.sorted())
    }

    @Test func buildingTheSameNamesGivesTheBackendsBitmap() {
        let built = BloomFilter((0..<500).map { Self.prefix + String($0) }, falsePositiveRate: 0.01)
        #expect(built.hashCount == 7 && built.padding == 7)
        #expect(built == Self.golden)
    }

    @Test func emptyAndDegenerateFilters() {
        let empty = BloomFilter([String]())
        #expect(empty.bitmap.isEmpty && empty.padding == 0 && empty.hashCount == 0)
        #expect(!empty.mightContain("abc"))
        // The SDKs' own shape check: 5 bytes less 3 bits of padding are 37 bits.
        #expect(BloomFilter(bitmap: [151, 153, 236, 116, 7], padding: 3, hashCount: 13).bitCount == 37)
        let one = BloomFilter(["projects/p/databases/(default)/documents/c/a"])
        #expect(one.mightContain("projects/p/databases/(default)/documents/c/a"))
        #expect(!one.mightContain(""))
    }

    @Test func everyInsertedNameIsFoundAtScale() {
        let names = (0..<20_000).map { "projects/p/databases/(default)/documents/c/\($0)" }
        let f = BloomFilter(names)
        #expect(names.allSatisfy(f.mightContain))
        let strangers = (0..<20_000).filter { f.mightContain("projects/p/databases/(default)/documents/x/\($0)") }.count
        #expect(strangers < 400, "false positives well above 1 %: \(strangers)")
    }
}
