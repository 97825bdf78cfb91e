import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP

/// Who a request's credentials name, for the request log: read, never verified (the service
/// verifies; the log only shows who the caller claims to be).
///
/// Runs for every logged request, so it stays on bytes: a user-token Firestore commit spent ~45%
/// of its instructions here when the token was trimmed, rewritten and base64-decoded through
/// Foundation's NSString (callgrind, bench/callgrind_commit.py). Token → name answers are cached.
enum CallerName {
    static func of(_ request: Request) -> String? {
        if let auth = request.headers[known: .authorization], let name = ofAuthorization(auth) { return name }
        if let credential = request.query("X-Amz-Credential") { return accessKey(credential) }
        if let key = request.query("AWSAccessKeyId") { return key }
        return nil
    }

    /// The caller an `Authorization` value names: a bearer token's user, or a signature's access key.
    static func ofAuthorization(_ auth: String) -> String? {
        // The value this thread named last, when it is the very same string (`sameWords`: the same
        // storage, or the same small string's bytes): a connection hands its calls one string call
        // after call, and the answer depends on the bytes alone. No lock, no comparison of the
        // kilobyte: the shared cache below cost ~0.3k instructions a gRPC get (an `NSLock`, a copy).
        let last = lastNamed.current { LastNamed() }
        if let value = last.value, ExactString.sameWords(value, auth) { return last.name }
        let name = namedAfresh(auth)
        last.value = auth
        last.name = name
        return name
    }

    /// This thread's last `Authorization` value and the name `ofAuthorization` gave it.
    private final class LastNamed {
        var value: String?
        var name: String?
    }
    private static let lastNamed = ThreadLocalObject<LastNamed>()

    /// `ofAuthorization` without this thread's memo.
    private static func namedAfresh(_ auth: String) -> String? {
        // The whole value compared first: trimming made a copy of the kilobyte token on every
        // request before the cache could answer (~0.9k instructions a gRPC get; callgrind,
        // bench/callgrind_get.py --width 16), and the prefix check cost ~0.3k more. Only bearer
        // values are remembered, so a hit is one.
        if let known = cache.name(ofAuthorization: auth) { return known }
        if startsWith(auth, "Bearer ") {
            let name = bearer(trimmed(auth.utf8.dropFirst(7)))
            cache.remember(name, forAuthorization: auth)
            return name
        }
        if auth.hasPrefix("AWS4-HMAC-SHA256"), let r = auth.range(of: "Credential=") {
            return accessKey(String(auth[r.upperBound...]))
        }
        if auth.hasPrefix("AWS "), let colon = auth.utf8.lastIndex(of: UInt8(ascii: ":")) {
            return trimmed(auth.utf8[auth.utf8.index(auth.utf8.startIndex, offsetBy: 4)..<colon])
        }
        return nil
    }

    /// `text.hasPrefix(prefix)` for an ASCII prefix, decided on the bytes when they settle it (when
    /// the byte after the prefix is ASCII or there is none, no Character straddles the prefix's end;
    /// other bytes mean no prefix, as no character of the prefixes used has another canonical form):
    /// `hasPrefix` compares Characters, ~300 instructions on every logged request.
    static func startsWith(_ text: String, _ prefix: StaticString) -> Bool {
        let p = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        let decided: Bool?? = text.utf8.withContiguousStorageIfAvailable { t -> Bool? in
            guard t.count >= p.count, memcmp(t.baseAddress!, p.baseAddress!, p.count) == 0 else { return false }
            return t.count == p.count || t[p.count] < 0x80 ? true : nil
        }
        if let decided, let answer = decided { return answer }
        return text.hasPrefix(prefix.description)
    }

    /// `AKID/20240101/us-east-1/s3/aws4_request, …` → `AKID`.
    /// Split at the first `/` or `,` byte, as S3 reads a credential: a walk by Characters cost
    /// ~2,300 instructions on every presigned S3 request (callgrind, bench/callgrind_s3.py).
    static func accessKey(_ credential: String) -> String? {
        let bytes = credential.utf8
        let end = bytes.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ",") } ?? bytes.endIndex
        return end == bytes.startIndex ? nil : String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// An ID token's `user_id` (or `sub`); `owner` as is; nil for anything else.
    static func bearer(_ token: String) -> String? {
        if token == "owner" { return "owner" }
        if let known = cache.name(of: token) { return known }
        let name = decodeBearer(token)
        cache.store(name, for: token)
        return name
    }

    private static func decodeBearer(_ token: String) -> String? {
        let bytes = token.utf8
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")) else { return nil }
        let rest = bytes[bytes.index(after: dot)...]
        let end = rest.firstIndex(of: UInt8(ascii: ".")) ?? rest.endIndex
        guard let payload = Base64URL.decode(String(decoding: rest[..<end], as: UTF8.self)),
              let json = try? JSON.parse(payload) else { return nil }
        return json["user_id"]?.stringValue ?? json["sub"]?.stringValue
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trimmed(_ text: Substring.UTF8View) -> String {
        var s = text
        while let f = s.first, f == 0x20 || f == 0x09 { s = s.dropFirst() }
        while let l = s.last, l == 0x20 || l == 0x09 { s = s.dropLast() }
        return String(decoding: s, as: UTF8.self)
    }

    private static let cache = Cache()

    /// Names of recently seen tokens (a client sends the same ID token for an hour); emptied when
    /// full, so a stream of distinct tokens costs a bounded amount of memory.
    private final class Cache: @unchecked Sendable {
        // `names` is guarded by `lock`. An `NSLock` (a glibc mutex), not an `InlineLock`: every
        // logged request takes it from every server thread at once, and the standard library's
        // `Mutex` waits on a priority-inheritance futex that hands the lock over in strict turns
        // through the kernel — under contention a convoy (docs/benchmarks.md, *Run of 5 December*).
        private let lock = NSLock()
        // Keyed and compared by bytes (`ExactString`): by `String`'s canonical equivalence a token
        // with U+212A KELVIN SIGN for a `K` was logged under the name of the token it imitates.
        private var names: [ExactString: String?] = [:]
        private static let capacity = 1024

        /// `.some(nil)`: the token names nobody; nil: not cached.
        /// The name found last: a client sends one token for an hour, and comparing it (a memcmp)
        /// spares hashing its kilobyte on every request.
        private var last: (token: String, name: String?)?

        func name(of token: String) -> String?? {
            lock.lock()
            defer { lock.unlock() }
            if let last, ExactString.equal(last.token, token) { return .some(last.name) }
            guard let found = names[ExactString(token)] else { return nil }
            last = (token, found)
            return found
        }

        /// The `Authorization` value named last, compared whole (no trimming, no hashing).
        private var lastAuthorization: (value: String, name: String?)?

        func name(ofAuthorization value: String) -> String?? {
            lock.lock()
            defer { lock.unlock() }
            guard let lastAuthorization, ExactString.equal(lastAuthorization.value, value) else { return nil }
            // The same bytes in another string (a new connection's first request): that one is
            // kept instead, as the next request's is the same string again, and `==` of one string
            // is a comparison of two words where equal kilobyte tokens were compared byte by byte.
            if !ExactString.sameWords(lastAuthorization.value, value) { self.lastAuthorization = (value, lastAuthorization.name) }
            return .some(lastAuthorization.name)
        }

        func remember(_ name: String?, forAuthorization value: String) {
            lock.lock()
            defer { lock.unlock() }
            lastAuthorization = (value, name)
        }

        func store(_ name: String?, for token: String) {
            lock.lock()
            defer { lock.unlock() }
            if names.count >= Self.capacity {
                names.removeAll(keepingCapacity: true)
                last = nil
            }
            names[ExactString(token)] = .some(name)
            if let last, ExactString.equal(last.token, token) { self.last = nil }
        }
    }
}
