import Foundation
import Testing
@testable import S3Emulator

@Suite struct HostIDTests {
    /// The derivation as it was first written (bytes appended, then Foundation's base64): the
    /// direct encoder must give the very same ids, so `--seed` runs keep their `x-amz-id-2`.
    static func reference(_ requestID: String) -> String {
        var seed: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in requestID.utf8 { seed = (seed ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var bytes = [UInt8]()
        for _ in 0..<7 {
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            for k in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: z >> (8 * UInt64(k)))) }
        }
        return Data(bytes).base64EncodedString()
    }

    @Test func matchesTheFoundationEncodingOfTheSameBytes() {
        var ids = ["", "0000000000000000", "1A2B3C4D5E6F7081", "request-\u{E9}", String(repeating: "z", count: 300)]
        for i in 0..<2000 { ids.append(String(format: "%016llX", UInt64(i) &* 0x9E37_79B9_7F4A_7C15)) }
        for id in ids {
            let h = S3Service.hostID(for: id)
            #expect(h == Self.reference(id), "request id \(id)")
            #expect(h.utf8.count == 76 && h.hasSuffix("=") && Data(base64Encoded: h)?.count == 56)
        }
    }
}
