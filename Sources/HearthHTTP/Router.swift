/// Parameters captured from a route pattern.
public struct RouteParameters: Sendable {
    public private(set) var values: [String: String] = [:]
    public init(_ values: [String: String] = [:]) { self.values = values }
    /// The decoded value of `{name}`.
    public subscript(name: String) -> String? { values[name] }
}

/// A handler for a routed request whose body has been collected.
public typealias RouteHandler = @Sendable (Request, RouteParameters) -> Response

/// Matches method and path patterns to handlers; an `HTTPService` for JSON-style APIs.
///
/// Patterns are `/`-separated. A segment is a literal (`accounts:signUp`), `{name}` (one segment),
/// `{name}` followed by a literal suffix inside the segment (`{project}:securityRules`, matched by
/// the last occurrence of the suffix), or `{name...}` as the last segment (the rest of the path,
/// possibly empty, segments joined by `/`). Matching is against the percent-decoded segments.
public final class Router: HTTPService, @unchecked Sendable {
    // Routes are only added during wiring, before the server starts; after that the router is read-only.
    private struct Route {
        let method: String?
        let segments: [Segment]
        let bodyLimit: Int
        let handler: RouteHandler
    }

    private enum Segment {
        case literal(String)
        case variable(name: String, suffix: String)
        case rest(String)
    }

    private var routes: [Route] = []
    /// Largest body collected by default (bytes).
    public let defaultBodyLimit: Int
    /// The response when no route matches (method, path).
    public var notFound: @Sendable (Request) -> Response
    /// The response when a path matches but not the method.
    public var methodNotAllowed: @Sendable (Request) -> Response
    /// The response when a body is larger than the route allows.
    public var payloadTooLarge: Response

    public init(defaultBodyLimit: Int = 16 << 20) {
        self.defaultBodyLimit = defaultBodyLimit
        notFound = { _ in Response.text("Not Found", status: 404) }
        methodNotAllowed = { _ in Response.text("Method Not Allowed", status: 405) }
        payloadTooLarge = Response.text("Payload Too Large", status: 413)
    }

    /// Adds a route; `method` nil matches any method.
    public func add(_ method: String?, _ pattern: String, bodyLimit: Int? = nil, _ handler: @escaping RouteHandler) {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        let segments: [Segment] = parts.map { part in
            if part.hasPrefix("{"), let close = part.firstIndex(of: "}") {
                let name = String(part[part.index(after: part.startIndex)..<close])
                if name.hasSuffix("...") { return .rest(String(name.dropLast(3))) }
                return .variable(name: name, suffix: String(part[part.index(after: close)...]))
            }
            return .literal(part)
        }
        routes.append(Route(method: method, segments: segments, bodyLimit: bodyLimit ?? defaultBodyLimit, handler: handler))
    }

    public func get(_ pattern: String, _ handler: @escaping RouteHandler) { add("GET", pattern, handler) }
    public func post(_ pattern: String, _ handler: @escaping RouteHandler) { add("POST", pattern, handler) }
    public func put(_ pattern: String, _ handler: @escaping RouteHandler) { add("PUT", pattern, handler) }
    public func patch(_ pattern: String, _ handler: @escaping RouteHandler) { add("PATCH", pattern, handler) }
    public func delete(_ pattern: String, _ handler: @escaping RouteHandler) { add("DELETE", pattern, handler) }

    public func dispose(_ request: Request) -> RequestDisposition {
        let segments = request.pathSegments
        var pathMatched = false
        for route in routes {
            guard let params = Router.match(route.segments, segments) else { continue }
            pathMatched = true
            if let m = route.method, m != request.method && !(m == "GET" && request.method == "HEAD") { continue }
            let handler = route.handler
            return .collect(limit: route.bodyLimit, tooLarge: payloadTooLarge) { req in handler(req, params) }
        }
        return .respond(pathMatched ? methodNotAllowed(request) : notFound(request))
    }

    /// Answers a request directly (tests, or one service delegating to another router).
    public func respond(to request: Request) -> Response {
        switch dispose(request) {
        case .respond(let r): return r
        case .collect(_, _, let handler): return handler(request)
        case .stream(let consumer):
            request.body.withUnsafeBytes { consumer.consume($0) }
            return consumer.finish()
        case .collectDeferred(_, _, let handler):
            return DeferredAnswer.wait { handler(request, $0) }
        }
    }

    private static func match(_ pattern: [Segment], _ path: [String]) -> RouteParameters? {
        var values: [String: String] = [:]
        var i = 0
        for (n, seg) in pattern.enumerated() {
            switch seg {
            case .rest(let name):
                guard n == pattern.count - 1 else { return nil }
                values[name] = path[min(i, path.count)...].joined(separator: "/")
                return RouteParameters(values)
            case .literal(let lit):
                guard i < path.count, path[i] == lit else { return nil }
            case .variable(let name, let suffix):
                guard i < path.count else { return nil }
                let s = path[i]
                if suffix.isEmpty {
                    guard !s.isEmpty else { return nil }
                    values[name] = s
                } else {
                    guard let r = s.range(of: suffix, options: .backwards), r.upperBound == s.endIndex, r.lowerBound > s.startIndex else { return nil }
                    values[name] = String(s[..<r.lowerBound])
                }
            }
            i += 1
        }
        return i == path.count ? RouteParameters(values) : nil
    }
}
