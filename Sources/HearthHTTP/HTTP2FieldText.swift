import Foundation

/// Strings for received HTTP/2 header field names and values, shared where the bytes are a common one.
///
/// Every request carries the same dozen names and a few of the same values; making a `String` of each
/// validated its UTF-8 and, past 15 bytes, allocated it (`google-cloud-resource-prefix`,
/// `application/grpc`) — on every call. A literal's string is immortal: no allocation, no reference
/// counting. The candidate is picked by length and first byte (a table walk comparing each entry cost
/// as much as the decoding it saved) and compared whole; anything else is decoded as before (invalid
/// UTF-8 repaired, never trusted).
///
/// A field that is none of those — a client's kilobyte ID token in `authorization`, the method's
/// `:path`, its resource-prefix and request-params — is usually what the connection's previous
/// request sent in the same place: the connection keeps that field when `matches` finds the bytes
/// its (one `memcmp` instead of an allocation, a copy, a UTF-8 check and a free per field per
/// call; `HTTP2Connection.previousHeaders`). Any difference, even in the last byte, is decoded as before.
enum HTTP2FieldText {
    /// The name's string: a shared one when it is a common name (nghttp2 hands names over lower-case).
    static func name(_ bytes: UnsafePointer<UInt8>?, count: Int) -> String {
        if let bytes, count > 0 {
            switch (count, bytes[0]) {
            case (2, UInt8(ascii: "t")): if same(bytes, "te") { return "te" }
            case (5, UInt8(ascii: ":")): if same(bytes, ":path") { return ":path" }
            case (7, UInt8(ascii: ":")):
                if same(bytes, ":method") { return ":method" }
                if same(bytes, ":scheme") { return ":scheme" }
            case (10, UInt8(ascii: ":")): if same(bytes, ":authority") { return ":authority" }
            case (10, UInt8(ascii: "u")): if same(bytes, "user-agent") { return "user-agent" }
            case (12, UInt8(ascii: "c")): if same(bytes, "content-type") { return "content-type" }
            case (12, UInt8(ascii: "g")): if same(bytes, "grpc-timeout") { return "grpc-timeout" }
            case (13, UInt8(ascii: "a")): if same(bytes, "authorization") { return "authorization" }
            case (13, UInt8(ascii: "g")): if same(bytes, "grpc-encoding") { return "grpc-encoding" }
            case (14, UInt8(ascii: "c")): if same(bytes, "content-length") { return "content-length" }
            case (15, UInt8(ascii: "a")): if same(bytes, "accept-encoding") { return "accept-encoding" }
            case (17, UInt8(ascii: "x")): if same(bytes, "x-goog-api-client") { return "x-goog-api-client" }
            case (20, UInt8(ascii: "g")): if same(bytes, "grpc-accept-encoding") { return "grpc-accept-encoding" }
            case (21, UInt8(ascii: "x")): if same(bytes, "x-goog-request-params") { return "x-goog-request-params" }
            case (28, UInt8(ascii: "g")): if same(bytes, "google-cloud-resource-prefix") { return "google-cloud-resource-prefix" }
            default: break
            }
        }
        return decoded(bytes, count)
    }

    /// The value's string: a shared one when it is a value requests send unchanged.
    static func value(_ bytes: UnsafePointer<UInt8>?, count: Int) -> String {
        if let bytes, count > 0 {
            switch (count, bytes[0]) {
            case (3, UInt8(ascii: "G")): if same(bytes, "GET") { return "GET" }
            case (4, UInt8(ascii: "P")): if same(bytes, "POST") { return "POST" }
            case (4, UInt8(ascii: "h")): if same(bytes, "http") { return "http" }
            case (4, UInt8(ascii: "g")): if same(bytes, "gzip") { return "gzip" }
            case (5, UInt8(ascii: "h")): if same(bytes, "https") { return "https" }
            case (8, UInt8(ascii: "t")): if same(bytes, "trailers") { return "trailers" }
            case (16, UInt8(ascii: "a")): if same(bytes, "application/grpc") { return "application/grpc" }
            case (21, UInt8(ascii: "i")): if same(bytes, "identity,deflate,gzip") { return "identity,deflate,gzip" }
            default: break
            }
        }
        return decoded(bytes, count)
    }

    /// Whether `text` is exactly the `count` bytes at `bytes` (its UTF-8; a string made from
    /// invalid UTF-8 was repaired, so it never matches those bytes).
    /// Borrowed, not copied: a copy was a retain and a release per field (~0.5k instructions a
    /// gRPC get). A string without contiguous UTF-8 (never one made here) does not match.
    @inline(__always)
    static func matches(_ text: borrowing String, _ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { utf8 in
            guard utf8.count == count else { return false }
            guard count > 0, let bytes else { return true }
            return memcmp(utf8.baseAddress!, bytes, count) == 0
        } ?? false
    }

    /// Whether the `text.utf8CodeUnitCount` bytes at `bytes` are `text` (the caller checked the length).
    @inline(__always)
    private static func same(_ bytes: UnsafePointer<UInt8>, _ text: StaticString) -> Bool {
        memcmp(bytes, text.utf8Start, text.utf8CodeUnitCount) == 0
    }

    private static func decoded(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
