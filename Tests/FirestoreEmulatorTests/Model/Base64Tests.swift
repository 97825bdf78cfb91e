import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

@Suite struct Base64Tests {
    /// What `RequestContext.transactionID` answered before its canonical shortcut: decoded by the
    /// general decoder, encoded again by Foundation (nil: refused).
    static func generalTransactionID(_ raw: String) -> String? {
        guard let bytes = ValueJSON.decodeBase64(raw), !bytes.isEmpty else { return nil }
        return Data(bytes).base64EncodedString()
    }

    @Test func encodeMatchesFoundationForEveryLengthAndPadding() {
        var g = SplitMix(seed: 7)
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: g.next()) }
            #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString())
        }
    }

    @Test func whatEncodeWritesIsCanonicalAndKeptAsSent() throws {
        var g = SplitMix(seed: 11)
        for length in 1...64 {
            for _ in 0..<8 {
                let text = Base64.encode((0..<length).map { _ in UInt8(truncatingIfNeeded: g.next()) })
                #expect(Base64.isCanonical(text), "\(text)")
                #expect(try RequestContext.transactionID(text) == text)
                #expect(Self.generalTransactionID(text) == text)
            }
        }
    }

    @Test(arguments: [
        "",             // no bytes
        "QQ",           // padding left out
        "QQ=",          // short padding
        "QR==",         // bits past the one byte set (decodes to "A" all the same)
        "QUJ=",         // likewise with two bytes
        "QUJD\n",       // a line break
        " QUJD",        // a space
        "QU JD",
        "QUJD====",     // padding past a whole group
        "Q===",
        "====",
        "QQ==QUJD",     // padding inside
        "A+_/",         // the URL alphabet mixed in
        "-_-_",         // the URL alphabet
        "QUJDé",
        "QUJD\u{0}",
    ])
    func otherFormsTakeTheGeneralPath(_ text: String) {
        #expect(!Base64.isCanonical(text))
        // The answer is the general path's, as before the shortcut: the canonical id, or the same refusal.
        let id = try? RequestContext.transactionID(text)
        #expect(id == Self.generalTransactionID(text))
    }

    @Test func everyOneByteChangeOfAnIdAgreesWithTheGeneralPath() {
        let id = Array(Base64.encode([0xFB, 0xEF, 0xBE, 0x00, 0x01, 0x02, 0x7F, 0x80]).utf8)  // "++++AAECf4A=": both odd characters, padding
        let replacements = Array("AQZaz09+/-_= .\u{7F}".utf8) + [0x80, 0xC3]
        for i in id.indices {
            for r in replacements {
                var changed = id
                changed[i] = r
                let text = String(decoding: changed, as: UTF8.self)
                let answer = try? RequestContext.transactionID(text)
                #expect(answer == Self.generalTransactionID(text), "\(text)")
            }
        }
    }
}
