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

    /// A previous request's field is kept only for exactly its bytes (`HTTP2Connection.previousHeaders`).
    @Test func aPreviousFieldMatchesOnlyItsExactBytes() {
        func matches(_ previous: String, _ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBufferPointer { HTTP2FieldText.matches(previous, $0.baseAddress, $0.count) }
        }
        let token = "Bearer " + String(repeating: "x", count: 40)
        for previous in [token, "te", "application/grpc", "", "é"] {
            #expect(matches(previous, Array(previous.utf8)))
            #expect(!matches(previous, Array(previous.utf8) + [0x78]))
            #expect(!matches(previous, Array(previous.utf8.dropLast())) || previous.isEmpty)
        }
        #expect(!matches(token, Array((String(token.dropLast()) + "y").utf8)))
        #expect(matches("", []))
        // Bytes that are not UTF-8 never match a repaired string, even one showing the replacement.
        let repaired = "aaaaaaaaaaaaaaaa\u{FFFD}"
        #expect(!matches(repaired, Array("aaaaaaaaaaaaaaaa".utf8) + [0xFF]))
        #expect(value(Array("aaaaaaaaaaaaaaaa".utf8) + [0xFF]) == repaired)
    }

    @Test func bytesThatAreNotUTF8AreRepaired() {
        #expect(value([0x61, 0xFF, 0x62]) == "a\u{FFFD}b")
        #expect(value([0xE2, 0x82]) == "\u{FFFD}")
        #expect(HTTP2FieldText.value(nil, count: 0) == "")
    }
}
