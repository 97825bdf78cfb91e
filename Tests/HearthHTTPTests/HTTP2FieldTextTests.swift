import Foundation
import Testing
@testable import HearthHTTP

/// Received header fields become the same strings whether or not they are one of the shared ones
/// (docs/benchmarks.md, grpcs1c): a near miss (same length, same first byte) is decoded, not taken
/// for the shared one, and bytes that are not UTF-8 are repaired as before.
@Suite struct HTTP2FieldTextTests {
    func name(_ bytes: [UInt8]) -> String { bytes.withUnsafeBufferPointer { HTTP2FieldText.name($0.baseAddress, count: $0.count) } }
    func value(_ bytes: [UInt8]) -> String { bytes.withUnsafeBufferPointer { HTTP2FieldText.value($0.baseAddress, count: $0.count) } }

    @Test(arguments: [":method", ":scheme", ":path", ":authority", "content-type", "te", "user-agent", "authorization",
                      "grpc-timeout", "grpc-encoding", "grpc-accept-encoding", "accept-encoding", "content-length",
                      "google-cloud-resource-prefix", "x-goog-request-params", "x-goog-api-client",
                      // Near misses of shared names, and names that are none.
                      "tf", ":patx", ":methox", ":schemf", ":authoritx", "user-agenx", "grpc-timeoux", "authorizatiom",
                      "x-goog-request-paramz", "google-cloud-resource-prefiy", "x-field", "a", "custom-header-name"])
    func namesComeBackAsSent(text: String) {
        #expect(name(Array(text.utf8)) == text)
    }

    @Test(arguments: ["GET", "POST", "http", "https", "gzip", "trailers", "application/grpc", "identity,deflate,gzip",
                      "GEt", "POSt", "httq", "trailerz", "application/grpx", "identity,deflate,gzix", "Bearer abc", "", "x"])
    func valuesComeBackAsSent(text: String) {
        #expect(value(Array(text.utf8)) == text)
    }

    /// The previous request's field is the answer only for exactly its bytes.
    @Test func aPreviousFieldIsReusedOnlyForItsExactBytes() {
        let previous = "Bearer " + String(repeating: "x", count: 40)
        func value(_ text: String) -> String {
            Array(text.utf8).withUnsafeBufferPointer { HTTP2FieldText.value($0.baseAddress, count: $0.count, previous: previous) }
        }
        func name(_ text: String) -> String {
            Array(text.utf8).withUnsafeBufferPointer { HTTP2FieldText.name($0.baseAddress, count: $0.count, previous: previous) }
        }
        for text in [previous, String(previous.dropLast()) + "y", previous + "x", String(previous.dropLast()), "application/grpc", "short"] {
            #expect(value(text) == text)
            #expect(name(text) == text)
        }
        // Invalid UTF-8 is repaired even where the previous field had the replacement's bytes.
        let repaired = "aaaaaaaaaaaaaaaa\u{FFFD}"
        let bytes: [UInt8] = Array("aaaaaaaaaaaaaaaa".utf8) + [0xFF]
        #expect(bytes.withUnsafeBufferPointer { HTTP2FieldText.value($0.baseAddress, count: $0.count, previous: repaired) } == repaired)
    }

    @Test func bytesThatAreNotUTF8AreRepaired() {
        #expect(value([0x61, 0xFF, 0x62]) == "a\u{FFFD}b")
        #expect(value([0xE2, 0x82]) == "\u{FFFD}")
        #expect(HTTP2FieldText.value(nil, count: 0) == "")
    }
}
