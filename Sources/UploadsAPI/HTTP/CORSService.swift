import HearthHTTP

/// Lets browser apps call the API from any origin: answers preflights and marks every response.
///
/// The API authenticates with a bearer token, never cookies, so reflecting the origin grants a page
/// nothing it could not do with the token anyway.
struct CORSService: HTTPService {
    let inner: any HTTPService
    static let allowedMethods = "GET, POST, OPTIONS"
    static let defaultAllowedHeaders = "Authorization, Content-Type, X-Firebase-AppCheck"

    func dispose(_ request: Request) -> RequestDisposition {
        let origin = request.headers["Origin"]
        if request.method == "OPTIONS" { return .respond(preflight(request, origin: origin)) }
        switch inner.dispose(request) {
        case .respond(let response):
            return .respond(CORSService.decorate(response, origin: origin))
        case .collect(let limit, let tooLarge, let handler):
            return .collect(limit: limit, tooLarge: CORSService.decorate(tooLarge, origin: origin)) { req in
                CORSService.decorate(handler(req), origin: origin)
            }
        case .stream(let consumer):
            return .stream(consumer)
        case .collectDeferred(let limit, let tooLarge, let handler):
            return .collectDeferred(limit: limit, tooLarge: CORSService.decorate(tooLarge, origin: origin)) { req, answer in
                handler(req, answer.mapping { CORSService.decorate($0, origin: origin) })
            }
        }
    }

    private func preflight(_ request: Request, origin: String?) -> Response {
        var response = Response(status: 204)
        response.headers.set("Allow", CORSService.allowedMethods)
        guard origin != nil else { return response }
        response = CORSService.decorate(response, origin: origin)
        response.headers.set("Access-Control-Allow-Methods", CORSService.allowedMethods)
        // Echo what the page asked for: any header is fine since authorization is by bearer token.
        let requested = request.headers["Access-Control-Request-Headers"].flatMap { $0.isEmpty ? nil : $0 }
        response.headers.set("Access-Control-Allow-Headers", requested ?? CORSService.defaultAllowedHeaders)
        response.headers.set("Access-Control-Max-Age", "7200")
        response.headers.add("Vary", "Access-Control-Request-Headers")
        return response
    }

    static func decorate(_ response: Response, origin: String?) -> Response {
        var r = response
        r.headers.set("Access-Control-Allow-Origin", origin ?? "*")
        if origin != nil { r.headers.add("Vary", "Origin") }
        return r
    }
}
