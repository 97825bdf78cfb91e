import HearthHTTP

/// CORS for the Firebase API: the web SDK calls `/v0` from pages on other origins, and production
/// (firebasestorage.googleapis.com) answers any origin, exposing the resumable protocol's headers.
enum StorageCORS {
    static let exposed = "X-Goog-Upload-URL, X-Goog-Upload-Status, X-Goog-Upload-Size-Received, X-Goog-Upload-Chunk-Granularity, "
        + "X-Goog-Upload-Control-URL, X-GUploader-UploadID, Content-Range, Range, Location, ETag, x-goog-hash, x-goog-generation"

    /// The answer to a preflight `OPTIONS`.
    static func preflight(_ request: Request) -> Response {
        var h = HTTPHeaders()
        h.set("Access-Control-Allow-Origin", request.headers["Origin"] ?? "*")
        h.set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
        h.set("Access-Control-Allow-Headers", request.headers["Access-Control-Request-Headers"] ?? "*")
        h.set("Access-Control-Max-Age", "3600")
        h.set("Vary", "Origin")
        return Response(status: 204, headers: h)
    }

    static func decorate(_ response: Response, origin: String?) -> Response {
        guard let origin else { return response }
        var r = response
        r.headers.set("Access-Control-Allow-Origin", origin)
        r.headers.set("Access-Control-Expose-Headers", exposed)
        r.headers.set("Vary", "Origin")
        return r
    }

    /// `disposition` with CORS headers on whatever it answers, for a request from `origin`.
    static func wrap(_ disposition: RequestDisposition, origin: String?) -> RequestDisposition {
        guard let origin else { return disposition }
        switch disposition {
        case .respond(let r): return .respond(decorate(r, origin: origin))
        case .collect(let limit, let tooLarge, let handler):
            return .collect(limit: limit, tooLarge: decorate(tooLarge, origin: origin)) { decorate(handler($0), origin: origin) }
        case .stream(let consumer): return .stream(Decorating(inner: consumer, origin: origin))
        case .collectDeferred(let limit, let tooLarge, let handler):
            return .collectDeferred(limit: limit, tooLarge: decorate(tooLarge, origin: origin)) { req, answer in
                handler(req, answer.mapping { decorate($0, origin: origin) })
            }
        }
    }

    private final class Decorating: RequestBodyConsumer {
        let inner: any RequestBodyConsumer
        let origin: String
        init(inner: any RequestBodyConsumer, origin: String) {
            self.inner = inner
            self.origin = origin
        }
        func consume(_ chunk: UnsafeRawBufferPointer) { inner.consume(chunk) }
        func finish() -> Response { decorate(inner.finish(), origin: origin) }
        func abandon() { inner.abandon() }
    }
}
