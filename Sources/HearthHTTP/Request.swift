import Foundation
import HearthCore

/// One HTTP request as a handler sees it.
///
/// `rawPath` and `rawQuery` are exactly the bytes of the request target (before any
/// percent-decoding): SigV4 signs the path as sent, so nothing here normalises it.
public final class Request: @unchecked Sendable {
    /// Method as sent (`GET`, `PUT`, …).
    public let method: String
    /// The request target's path, undecoded (`/bucket/a%20b`).
    public let rawPath: String
    /// The query string without `?`, undecoded; empty when absent.
    public let rawQuery: String
    /// Whether the target had a `?` at all.
    public let hasQuery: Bool
    /// Header fields.
    public let headers: HTTPHeaders
    /// HTTP version string (`HTTP/1.1`).
    public let version: String
    /// Whether the connection is TLS.
    public let isTLS: Bool
    /// The client's address (`127.0.0.1`).
    public let remoteAddress: String
    /// A request id unique in this process (S3 puts it in error bodies and it appears in the log).
    public let id: String
    /// The collected body; empty unless the handler asked to collect it.
    public internal(set) var body: [UInt8]
    /// Free-form facts a handler wants in the request's log line (never secrets).
    public var logFields: [(String, JSON)] = []
    /// When the server received the headers (`DispatchTime`'s uptime nanoseconds); 0 for a request
    /// no server received (tests). Recorders time the answer from it instead of reading the clock again.
    public internal(set) var receivedUptimeNanoseconds: UInt64 = 0

    public init(method: String, rawPath: String, rawQuery: String = "", hasQuery: Bool? = nil, headers: HTTPHeaders = HTTPHeaders(),
                version: String = "HTTP/1.1", isTLS: Bool = false, remoteAddress: String = "127.0.0.1",
                id: String = "0000000000000000", body: [UInt8] = []) {
        self.method = method
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.hasQuery = hasQuery ?? !rawQuery.isEmpty
        self.headers = headers
        self.version = version
        self.isTLS = isTLS
        self.remoteAddress = remoteAddress
        self.id = id
        self.body = body
    }

    /// Builds a request from a full target (`/path?query`).
    public convenience init(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        let (path, query, has) = Request.split(target: target)
        self.init(method: method, rawPath: path, rawQuery: query, hasQuery: has, headers: headers, body: body)
    }

    /// Splits a request target at the first `?`.
    /// Split on bytes, as RFC 3986 reads a target (the query starts at the first `?` byte): a scan by
    /// Characters cost more than the Firestore document read behind it, and would miss a `?` that
    /// a combining mark follows.
    /// The search runs over the contiguous bytes: through `String.UTF8View` it cost ~25
    /// instructions a byte of every request's target.
    public static func split(target: String) -> (path: String, query: String, hasQuery: Bool) {
        var bytes = target
        return bytes.withUTF8 { b in
            guard let q = b.firstIndex(of: UInt8(ascii: "?")) else { return (target, "", false) }
            return split(target: b, at: q)
        }
    }

    /// `split(target:)` of a target's bytes as received (invalid UTF-8 repaired as
    /// `String(decoding:)` repairs it — the same strings as repairing first: a `?` byte is never
    /// part of a repaired sequence). The server splits the bytes libmicrohttpd hands over, without
    /// making the whole target a string first (one allocation and UTF-8 check fewer a request).
    static func split(target b: UnsafeBufferPointer<UInt8>) -> (path: String, query: String, hasQuery: Bool) {
        guard let q = b.firstIndex(of: UInt8(ascii: "?")) else { return (String(decoding: b, as: UTF8.self), "", false) }
        return split(target: b, at: q)
    }

    private static func split(target b: UnsafeBufferPointer<UInt8>, at q: Int) -> (path: String, query: String, hasQuery: Bool) {
        (String(decoding: UnsafeBufferPointer(rebasing: b[..<q]), as: UTF8.self),
         String(decoding: UnsafeBufferPointer(rebasing: b[(q + 1)...]), as: UTF8.self), true)
    }

    /// The path percent-decoded (invalid escapes are kept literally).
    public var path: String { Request.percentDecode(rawPath) }

    /// Decoded path segments without empty leading segment (`/a/b%2Fc` → `["a", "b/c"]`).
    public var pathSegments: [String] {
        rawPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { Request.percentDecode(String($0)) }
    }

    /// Query parameters decoded (`+` as space, as form encoding), in order; a parameter without `=` has value nil.
    public lazy var queryItems: [(name: String, value: String?)] = Request.parseQuery(rawQuery, plusAsSpace: true)

    /// The first value of query parameter `name` (nil when absent; "" for `?name`).
    public func query(_ name: String) -> String? {
        for item in queryItems where item.name == name { return item.value ?? "" }
        return nil
    }

    /// Parses `a=1&b&c=%20` into pairs.
    public static func parseQuery(_ raw: String, plusAsSpace: Bool) -> [(name: String, value: String?)] {
        guard !raw.isEmpty else { return [] }
        // Every request with a query parses it; ASCII queries (all that clients send, as they
        // percent-encode the rest) are split on bytes. Otherwise `&` and `=` are found as
        // Characters, the rule this parser has always applied.
        var text = raw
        let ascii: [(name: String, value: String?)]? = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            var items: [(name: String, value: String?)] = []
            Request.forEachQueryPair(bytes) { name, value in
                items.append((decoded(name, plusAsSpace: plusAsSpace), value.map { decoded($0, plusAsSpace: plusAsSpace) }))
            }
            return items
        }
        if let ascii { return ascii }
        return raw.split(separator: "&", omittingEmptySubsequences: true).map { part in
            if let eq = part.firstIndex(of: "=") {
                return (percentDecode(String(part[..<eq]), plusAsSpace: plusAsSpace),
                        percentDecode(String(part[part.index(after: eq)...]), plusAsSpace: plusAsSpace))
            }
            return (percentDecode(String(part), plusAsSpace: plusAsSpace), nil)
        }
    }

    /// `percentDecode` of the text in `bytes`, without making that text first.
    private static func decoded(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String {
        if !bytes.contains(where: { $0 == 0x25 || (plusAsSpace && $0 == 0x2B) }) { return String(decoding: bytes, as: UTF8.self) }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        appendPercentDecoded(bytes, plusAsSpace: plusAsSpace, to: &out)
        return String(validating: out, as: UTF8.self) ?? String(decoding: bytes, as: UTF8.self)
    }

    /// Percent-decodes `text`; malformed escapes and invalid UTF-8 are kept as sent.
    public static func percentDecode(_ text: String, plusAsSpace: Bool = false) -> String {
        // A byte scan: Foundation's `contains` goes through NSString on every call.
        if !text.utf8.contains(where: { $0 == 0x25 || (plusAsSpace && $0 == 0x2B) }) { return text }
        var out = [UInt8]()
        let b = Array(text.utf8)
        out.reserveCapacity(b.count)
        appendPercentDecoded(b, plusAsSpace: plusAsSpace, to: &out)
        return String(validating: out, as: UTF8.self) ?? text
    }

    /// Appends `bytes` percent-decoded: `%XX` becomes its byte, `+` a space when `plusAsSpace`; a
    /// malformed escape is kept as sent. No UTF-8 check (callers decide what invalid bytes mean).
    // Inlinable so each caller gets a copy specialised to its collection type: unspecialised, every
    // byte went through the generic Collection witnesses (~450 instructions a byte; a presigned
    // query decodes ~180 bytes).
    @inlinable
    public static func appendPercentDecoded<C: Collection>(_ bytes: C, plusAsSpace: Bool, to out: inout [UInt8])
    where C.Element == UInt8, C.Index == Int {
        var i = bytes.startIndex
        let end = bytes.endIndex
        while i < end {
            let c = bytes[i]
            if c == 0x25, i + 2 < end, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else if c == 0x2B && plusAsSpace {
                out.append(0x20)
                i += 1
            } else {
                out.append(c)
                i += 1
            }
        }
    }

    @usableFromInline
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }

    /// The collected body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

extension Request {
    /// Calls `body` for each `name[=value]` of a raw query string's bytes, in order: split on `&`,
    /// then at the first `=` (value nil when there is none); empty segments are skipped. No decoding.
    public static func forEachQueryPair(_ bytes: UnsafeBufferPointer<UInt8>,
                                        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>?) -> Void) {
        var start = 0
        let n = bytes.count
        while start < n {
            var end = start
            var eq = -1
            while end < n, bytes[end] != 0x26 {
                if eq < 0 && bytes[end] == 0x3D { eq = end }
                end += 1
            }
            if end > start {
                if eq >= 0 {
                    body(UnsafeBufferPointer(rebasing: bytes[start..<eq]), UnsafeBufferPointer(rebasing: bytes[(eq + 1)..<end]))
                } else {
                    body(UnsafeBufferPointer(rebasing: bytes[start..<end]), nil)
                }
            }
            start = end + 1
        }
    }
}
