import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The direct batchGet body reader gives exactly the `documents` and `transaction` the general path
/// reads from the same bytes (`JSON.parse`, then the members), and leaves every other body to it.
struct BatchGetJSONDecoderTests {
    static let name = "projects/p/databases/(default)/documents/users/u/files/f"

    /// What the general path reads from `bytes` when its only members are `documents` (strings)
    /// and `transaction` (a string); nil for any other body.
    static func general(_ bytes: [UInt8]) -> BatchGetJSONDecoder.Body? {
        guard case .object(let o)? = try? JSON.parse(bytes) else { return nil }
        var names: [String]?
        var transaction: String?
        for (key, value) in o {
            switch (key, value) {
            case ("documents", .array(let items)) where names == nil:
                var out: [String] = []
                for item in items {
                    guard case .string(let s) = item else { return nil }
                    out.append(s)
                }
                names = out
            case ("transaction", .string(let t)) where transaction == nil: transaction = t
            default: return nil
            }
        }
        return BatchGetJSONDecoder.Body(names: names ?? [], transaction: transaction)
    }

    /// Bodies in the plain form, as the SDKs and the bench's load generator send them.
    static let plain: [String] = [
        #"{"documents":["\#(name)"],"transaction":"AbC+/0123456789abcdefghijklmnopq=="}"#,
        #"{"transaction":"eHl6","documents":["\#(name)","\#(name)2"]}"#,
        #" { "documents" : [ "\#(name)" ] } "#,
        #"{"documents":[]}"#,
        #"{}"#,
        #"{"documents":["projects/p/databases/(default)/documents/c/é"]}"#,
        #"{"documents":["not a name"],"transaction":""}"#,
    ]

    /// Bodies the reader leaves to the general path (which accepts some and refuses others).
    static let others: [String] = [
        #"{"documents":["\#(name)"],"mask":{"fieldPaths":["a"]}}"#,
        #"{"documents":["\#(name)"],"newTransaction":{"readWrite":{}}}"#,
        #"{"documents":["\#(name)"],"readTime":"2024-01-01T00:00:00Z"}"#,
        #"{"documents":["\#(name)"],"requestOptions":{}}"#,
        #"{"documents":[1]}"#,
        #"{"documents":"\#(name)"}"#,
        #"{"documents":["\#(name)"],"documents":["\#(name)"]}"#,
        #"{"documents":["\#(name)"],"transaction":"a","transaction":"b"}"#,
        #"{"documents":["a\u002fb"]}"#,
        #"{"docu\u006dents":["\#(name)"]}"#,
        #"{"transaction":null}"#,
        #"{"documents":["\#(name)"]"#,
        #"{"documents":["\#(name)"]} x"#,
        #"[]"#,
        "",
        "\u{FEFF}{}",
    ]

    @Test func plainBodiesReadAsTheGeneralPathReadsThem() throws {
        for text in Self.plain {
            let bytes = Array(text.utf8)
            let direct = try #require(BatchGetJSONDecoder.body(bytes), "\(text)")
            #expect(direct == Self.general(bytes), "\(text)")
        }
    }

    @Test func otherBodiesFallBack() {
        for text in Self.others {
            #expect(BatchGetJSONDecoder.body(Array(text.utf8)) == nil, "\(text)")
        }
    }

    /// Every one-byte change of a plain body: whatever the reader takes, the general path reads the same.
    @Test func mutatedBodiesNeverDisagree() {
        let bytes = Array(Self.plain[0].utf8)
        for i in bytes.indices {
            for b: UInt8 in [0x20, 0x22, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x5C, 0x61, 0x00, 0xC3] {
                var m = bytes
                m[i] = b
                if let direct = BatchGetJSONDecoder.body(m) {
                    #expect(direct == Self.general(m), "\(String(decoding: m, as: UTF8.self))")
                }
            }
        }
    }
}
