import Foundation
import HearthCore
import HearthHTTP

/// DNS-rebinding and cross-site protection for the listeners a browser may reach (UI and hub).
///
/// A web page on another site can make the user's browser send requests to `127.0.0.1`: directly
/// (cross-site requests carry that site's `Origin`) or by rebinding its own name to `127.0.0.1`
/// (then the `Host` header still names the attacker's domain). So a request is answered only when
/// its `Host` is one this hearth is reachable at, and a state-changing request only when it has no
/// `Origin` (scripts, curl, SDKs) or an `Origin` on one of those hosts and on one of hearth's own
/// browser-facing ports.
public struct HostGuard: Sendable {
    /// Host names (lower-case, IPv6 without brackets) a request's `Host` may name.
    public let allowedHosts: Set<String>
    /// Ports an `Origin` of a state-changing request may name (the UI's and the hub's).
    public let allowedOriginPorts: @Sendable () -> Set<Int>

    /// - Parameters:
    ///   - boundHost: the address listeners bind to (`--host`).
    ///   - publicHost: the advertised address (`--public-host` or derived).
    ///   - originPorts: the ports of hearth's browser-facing listeners, read per request because
    ///     port 0 is resolved only once they started.
    public init(boundHost: String, publicHost: String, originPorts: @escaping @Sendable () -> Set<Int>) {
        var hosts: Set<String> = ["localhost", "127.0.0.1", "::1"]
        for h in [boundHost, publicHost] {
            let n = HostGuard.normalize(h)
            // The wildcard addresses are where hearth listens, never a name a client uses.
            if !n.isEmpty && n != "0.0.0.0" && n != "::" { hosts.insert(n) }
        }
        allowedHosts = hosts
        allowedOriginPorts = originPorts
    }

    /// Why a request is refused, or nil when it may proceed.
    public func refusal(for request: Request) -> String? {
        // Browsers always send Host, so a request without one (HTTP/1.0 health probes) cannot be a
        // rebound page's; only a Host naming another site is refused.
        if let hostHeader = request.headers["Host"] {
            guard let host = HostGuard.hostPart(of: hostHeader), allowedHosts.contains(host) else {
                return "Host '\(hostHeader)' is not an address this hearth is reachable at (DNS-rebinding protection; allowed: \(allowedHosts.sorted().joined(separator: ", ")) — set --public-host to add one)"
            }
        }
        if !HostGuard.isSafeMethod(request.method), let origin = request.headers["Origin"], !isAllowedOrigin(origin) {
            return "Origin '\(origin)' may not change this hearth's state (cross-site request refused)"
        }
        return nil
    }

    /// The 403 answer for a refused request (Google-style error JSON, as the hub's other errors).
    public func response(for reason: String) -> Response {
        .json(.object(["error": .object(["code": .int(403), "message": .string(reason), "status": .string("PERMISSION_DENIED")])]), status: 403)
    }

    /// Whether `origin` is `http(s)://<allowed host>:<allowed port>`.
    public func isAllowedOrigin(_ origin: String) -> Bool {
        let lower = origin.lowercased()
        let rest: Substring
        let defaultPort: Int
        if lower.hasPrefix("http://") {
            rest = lower.dropFirst(7)
            defaultPort = 80
        } else if lower.hasPrefix("https://") {
            rest = lower.dropFirst(8)
            defaultPort = 443
        } else {
            return false // `null` (sandboxed frames, file:) and other schemes
        }
        guard !rest.contains("/"), let host = HostGuard.hostPart(of: String(rest)), allowedHosts.contains(host) else { return false }
        let port = HostGuard.portPart(of: String(rest)) ?? defaultPort
        return allowedOriginPorts().contains(port)
    }

    static func isSafeMethod(_ method: String) -> Bool {
        method == "GET" || method == "HEAD" || method == "OPTIONS"
    }

    /// `Example.COM:4000` → `example.com`; `[::1]:4000` → `::1`; nil when malformed.
    static func hostPart(of authority: String) -> String? {
        let a = authority.trimmingCharacters(in: .whitespaces)
        if a.hasPrefix("[") {
            guard let close = a.firstIndex(of: "]") else { return nil }
            let after = a[a.index(after: close)...]
            guard after.isEmpty || (after.hasPrefix(":") && Int(after.dropFirst()) != nil) else { return nil }
            return normalize(String(a[a.index(after: a.startIndex)..<close]))
        }
        let parts = a.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let name = parts.first, !name.isEmpty else { return nil }
        if parts.count == 2 && Int(parts[1]) == nil { return nil }
        // A trailing dot names the same host (`localhost.`).
        return normalize(name.hasSuffix(".") ? String(name.dropLast()) : String(name))
    }

    static func portPart(of authority: String) -> Int? {
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        if let close = authority.lastIndex(of: "]"), close > colon { return nil }
        return Int(authority[authority.index(after: colon)...])
    }

    static func normalize(_ host: String) -> String {
        var h = host.lowercased()
        if h.hasPrefix("[") && h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        return h
    }
}
