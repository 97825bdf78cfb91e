import HearthCore
import HearthHTTP

/// The web UI's listener: the embedded assets, and each of hearth's services mounted under a
/// prefix (`/hub/…`, `/auth/…`, `/firestore/…`, `/s3/…`, `/api/…`) so the page reaches them from
/// its own origin.
///
/// A mounted request goes to the very `HTTPService` of that listener, with the prefix removed and
/// `Host` set to the service's own address (as a reverse proxy would, so SigV4 signatures made for
/// the S3 address verify): the UI uses exactly the public and emulator endpoints a script uses.
/// These requests do not pass through the request log's recorder, so the UI watching the log does
/// not fill it.
public struct UIService: HTTPService {
    /// A service reachable under `/<prefix>/`.
    public struct Mount: Sendable {
        /// The first path segment (`firestore`).
        public let prefix: String
        /// The listener's own handler.
        public let service: any HTTPService
        /// The `Host` the service sees (`127.0.0.1:9000`).
        public let host: String

        /// Mounts `service` under `/<prefix>/`, presenting `host` as its `Host`.
        public init(prefix: String, service: any HTTPService, host: String) {
            self.prefix = prefix
            self.service = service
            self.host = host
        }
    }

    let mounts: [Mount]

    /// Serves the assets and `mounts`.
    public init(mounts: [Mount]) {
        self.mounts = mounts
    }

    public func dispose(_ request: Request) -> RequestDisposition {
        let path = request.rawPath
        if path == "/" || path == "/index.html" { return .respond(UIService.asset("index.html", request)) }
        if path.hasPrefix("/ui/") { return .respond(UIService.asset(String(path.dropFirst(4)), request)) }
        for mount in mounts {
            let base = "/" + mount.prefix
            guard path == base || path.hasPrefix(base + "/") else { continue }
            let inner = path == base ? "/" : String(path.dropFirst(base.count))
            return forward(request, to: mount, path: inner)
        }
        return .respond(.json(RequestLog.error(404, "NOT_FOUND", "No UI route for \(request.method) \(path)"), status: 404))
    }

    private func forward(_ request: Request, to mount: Mount, path: String) -> RequestDisposition {
        var rewritten = request.headers
        rewritten.set("Host", mount.host)
        let headers = rewritten
        let make: @Sendable ([UInt8]) -> Request = { body in
            Request(method: request.method, rawPath: path, rawQuery: request.rawQuery, hasQuery: request.hasQuery,
                    headers: headers, version: request.version, isTLS: request.isTLS,
                    remoteAddress: request.remoteAddress, id: request.id, body: body)
        }
        switch mount.service.dispose(make([])) {
        case .respond(let r): return .respond(r)
        case .collect(let limit, let tooLarge, let handler):
            return .collect(limit: limit, tooLarge: tooLarge) { req in handler(make(req.body)) }
        case .stream(let consumer): return .stream(consumer)
        case .collectDeferred(let limit, let tooLarge, let handler):
            return .collectDeferred(limit: limit, tooLarge: tooLarge) { req, answer in handler(make(req.body), answer) }
        }
    }

    /// An embedded file with the headers that keep the page to itself: no framing (clickjacking),
    /// no script or connection to anywhere but this origin, no content sniffing.
    static func asset(_ name: String, _ request: Request) -> Response {
        guard let file = UIAssets.files[name] else {
            return .json(RequestLog.error(404, "NOT_FOUND", "No UI asset \(name)"), status: 404)
        }
        var headers = HTTPHeaders()
        headers.set("Cache-Control", "no-cache")
        headers.set("X-Content-Type-Options", "nosniff")
        headers.set("X-Frame-Options", "DENY")
        headers.set("Referrer-Policy", "no-referrer")
        headers.set("Content-Security-Policy",
                    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
        return Response(status: 200, contentType: file.contentType, body: Array(file.text.utf8), headers: headers)
    }
}
