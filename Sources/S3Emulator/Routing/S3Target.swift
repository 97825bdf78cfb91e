import HearthHTTP

/// The bucket and key a request addresses, from path-style (`/bucket/key`) or virtual-hosted-style
/// (`bucket.localhost:9000/key`) addressing.
struct S3Target: Sendable, Equatable {
    /// The bucket, nil for service-level requests (ListBuckets).
    var bucket: String?
    /// The key, nil (never empty) for bucket-level requests.
    var key: String?
    /// Whether the bucket came from the Host header.
    var virtualHosted: Bool

    /// Why a request target could not be turned into a bucket and key.
    enum Failure: Error, Equatable { case invalidURI }

    /// Resolves `request` against the host names that mean "this endpoint" (`localhost`,
    /// `s3.localhost`, …): a Host that is `<bucket>.<one of them>` selects the bucket.
    static func resolve(_ request: Request, endpointHosts: [String]) throws(Failure) -> S3Target {
        try resolve(request, matchingHosts: matchOrder(endpointHosts))
    }

    /// `resolve` with the host names already in `matchOrder` (the service prepares them once
    /// rather than sorting and lower-casing them for every request).
    static func resolve(_ request: Request, matchingHosts: [String]) throws(Failure) -> S3Target {
        let path = request.rawPath
        guard path.utf8.first == UInt8(ascii: "/") else { throw .invalidURI }
        if let bucket = virtualHostBucket(request.headers["Host"], matchingHosts: matchingHosts) {
            let rawKey = String(path.dropFirst())
            let key = try decode(rawKey)
            return S3Target(bucket: bucket, key: key.isEmpty ? nil : key, virtualHosted: true)
        }
        // Split at the first `/` byte, as S3 reads a path (a `/` a combining mark follows still
        // separates); a search by Characters cost ~300 instructions a character of the bucket name.
        let utf8 = path.utf8
        let rest = utf8.index(after: utf8.startIndex)
        guard rest != utf8.endIndex else { return S3Target(bucket: nil, key: nil, virtualHosted: false) }
        let slash = utf8[rest...].firstIndex(of: UInt8(ascii: "/"))
        let bucket = try decode(String(decoding: utf8[rest..<(slash ?? utf8.endIndex)], as: UTF8.self))
        guard !bucket.isEmpty else { throw .invalidURI }
        var key: String?
        if let slash {
            let decoded = try decode(String(decoding: utf8[utf8.index(after: slash)...], as: UTF8.self))
            key = decoded.isEmpty ? nil : decoded
        }
        return S3Target(bucket: bucket, key: key, virtualHosted: false)
    }

    /// The bucket named by a virtual-hosted Host header, or nil for path-style hosts.
    static func virtualHostBucket(_ hostHeader: String?, endpointHosts: [String]) -> String? {
        virtualHostBucket(hostHeader, matchingHosts: matchOrder(endpointHosts))
    }

    /// Endpoint host names as matching needs them: longest first, so `b.s3.localhost` is bucket
    /// `b` and not bucket `b.s3` of `localhost`; lower-cased.
    static func matchOrder(_ endpointHosts: [String]) -> [String] {
        endpointHosts.sorted(by: { $0.count > $1.count }).map { $0.lowercased() }
    }

    /// `virtualHostBucket` with the host names already in `matchOrder`.
    static func virtualHostBucket(_ hostHeader: String?, matchingHosts: [String]) -> String? {
        guard let hostHeader, !hostHeader.isEmpty else { return nil }
        // Every request asks; most hosts (`127.0.0.1:9000`, `localhost:9000`) name no bucket. For an
        // ASCII host, rule those out on its bytes before lower-casing and slicing it as Strings.
        if let named = hostMayNameBucket(hostHeader, matchingHosts: matchingHosts), !named { return nil }
        var host = hostHeader.lowercased()
        if host.hasPrefix("[") { return nil }  // an IPv6 literal never carries a bucket
        if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        if host.hasSuffix(".") { host.removeLast() }
        for base in matchingHosts {
            if host == base { return nil }
            if host.hasSuffix("." + base) {
                let bucket = String(host.dropLast(base.count + 1))
                return bucket.isEmpty ? nil : bucket
            }
        }
        return nil
    }

    /// Whether an ASCII host header (port and one trailing dot dropped) ends with `.` + one of
    /// `matchingHosts` (lower-case), ignoring case; nil when the header is not ASCII or is an IPv6
    /// literal (the String path decides those).
    static func hostMayNameBucket(_ hostHeader: String, matchingHosts: [String]) -> Bool? {
        var header = hostHeader
        return header.withUTF8 { bytes -> Bool? in
            guard !bytes.contains(where: { $0 >= 0x80 }), bytes.first != 0x5B else { return nil }
            var end = bytes.count
            if let colon = bytes.lastIndex(of: 0x3A) { end = colon }
            if end > 0, bytes[end - 1] == 0x2E { end -= 1 }
            for base in matchingHosts {
                // The base's own bytes, compared in place (an array of them allocated per host per request).
                let b = base.utf8
                guard end > b.count, bytes[end - b.count - 1] == 0x2E else { continue }
                var i = end - b.count
                var equal = true
                for c in b {
                    if HTTPHeaders.asciiLowercase(bytes[i]) != c {
                        equal = false
                        break
                    }
                    i += 1
                }
                if equal { return true }
            }
            return false
        }
    }

    /// Strict percent-decoding: an escape must be two hex digits and the result valid UTF-8
    /// without NUL (SQLite text and XML listings cannot carry it).
    static func decode(_ raw: String) throws(Failure) -> String {
        // Bytes (Foundation's `contains` bridges to NSString), contiguous ones where the string has
        // them: the generic walk of the UTF-8 view cost ~0.3k instructions a name on every request.
        if !(raw.utf8.withContiguousStorageIfAvailable { $0.contains(0x25) } ?? raw.utf8.contains(0x25)) { return raw }
        var out = [UInt8]()
        out.reserveCapacity(raw.utf8.count)
        let b = Array(raw.utf8)
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 65...70: c - 55
            case 97...102: c - 87
            default: nil
            }
        }
        while i < b.count {
            if b[i] == UInt8(ascii: "%") {
                guard i + 2 < b.count, let h = hex(b[i + 1]), let l = hex(b[i + 2]) else { throw .invalidURI }
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(b[i])
                i += 1
            }
        }
        guard !out.contains(0), let s = String(validating: out, as: UTF8.self) else { throw .invalidURI }
        return s
    }
}
