import Foundation
import HearthCore
import HearthHTTP

/// What the auth port serves: the Identity Toolkit, securetoken and App Check REST APIs under
/// their host-named prefixes, the emulator-only endpoints, and the published signing keys.
///
/// Every response carries the CORS headers the Firebase emulator sends (reflected origin), and
/// `OPTIONS` preflights are answered for any path, so browser SDKs can call it directly.
final class AuthHTTPService: HTTPService, Sendable {
    let router: Router
    let operations: AuthOperations
    let clock: Clock
    let logger: Logger

    /// Largest request body accepted (Google APIs' 10 MiB).
    static let bodyLimit = 10 << 20

    /// Whether a route needs an API key or a bearer token.
    enum Access: Sendable { case open, credentials }

    /// Whether and how a route acts on a tenant's accounts.
    enum Tenancy: Sendable {
        /// Project-level: a `tenantId` in the body is ignored.
        case none
        /// Account operations: the tenant comes from the path (`tenants/{tenant}`), the body
        /// (`tenantId`), the presented `idToken` (`firebase.tenant`) or `mfaPendingCredential`, and
        /// must exist (TENANT_NOT_FOUND for a path, INVALID_TENANT_ID otherwise) with
        /// authentication on (PROJECT_DISABLED).
        case accounts
        /// Emulator-only endpoints: the path's tenant, which need not exist.
        case emulator
    }

    /// A route's operation: context and body in, response JSON out.
    typealias Operation = @Sendable (OperationContext, RequestBody, Request, RouteParameters) throws(AuthError) -> JSON

    init(operations: AuthOperations, clock: Clock, logger: Logger) {
        self.operations = operations
        self.clock = clock
        self.logger = logger
        router = Router(defaultBodyLimit: Self.bodyLimit)
        router.notFound = { req in AuthError.notFound.response(pretty: Self.pretty(req)) }
        router.methodNotAllowed = { req in AuthError.notFound.response(pretty: Self.pretty(req)) }
        AuthRoutes.register(on: self)
    }

    // MARK: HTTPService

    func dispose(_ request: Request) -> RequestDisposition {
        if request.method == "OPTIONS" { return .respond(Self.preflight(request)) }
        switch router.dispose(request) {
        case .respond(let r):
            return .respond(Self.cors(r, request))
        case .collect(let limit, _, let handler):
            let tooLarge = AuthError.invalidArgument("Request payload size exceeds the limit: \(limit) bytes.", reason: "badRequest")
            return .collect(limit: limit, tooLarge: Self.cors(tooLarge.response(pretty: Self.pretty(request)), request)) { req in
                Self.cors(handler(req), req)
            }
        case .stream(let consumer):
            return .stream(consumer)
        case .collectDeferred(let limit, _, let handler):
            let tooLarge = AuthError.invalidArgument("Request payload size exceeds the limit: \(limit) bytes.", reason: "badRequest")
            return .collectDeferred(limit: limit, tooLarge: Self.cors(tooLarge.response(pretty: Self.pretty(request)), request)) { req, answer in
                handler(req, answer.mapping { Self.cors($0, req) })
            }
        }
    }

    // MARK: Route helpers

    /// Adds an API route whose handler gets a resolved context and a parsed body.
    ///
    /// The handler captures the operations, clock and logger rather than the service, so the
    /// router's closures do not keep the service alive in a cycle.
    func api(_ method: String?, _ pattern: String, access: Access = .credentials, tenancy: Tenancy = .none, formBody: Bool = false,
             _ op: @escaping Operation) {
        let (operations, clock, logger) = (self.operations, self.clock, self.logger)
        router.add(method, pattern) { req, params in
            let pretty = Self.pretty(req)
            do throws(AuthError) {
                let ctx = try Self.context(req, params, access: access, defaultProject: operations.configuration.projectID, clock: clock)
                var body = try Self.body(req, form: formBody)
                try body.validateCommonFields()
                var project = ctx.projectID
                if let target = try body.nonEmptyString("targetProjectId") {
                    guard ctx.privileged else { throw .insufficientPermissionTargetProject }
                    project = target
                }
                if formBody {
                    // securetoken also takes its parameters in the query string.
                    var merged = body.object
                    for item in req.queryItems where item.name != "key" {
                        let name = RequestBody.camelCase(item.name)
                        if merged[name] == nil { merged[name] = .string(item.value ?? "") }
                    }
                    body = RequestBody(merged)
                }
                let resolved = try Self.resolveTenant(tenancy, project: project, privileged: ctx.privileged, baseURL: ctx.baseURL,
                                                      now: ctx.now, body: body, params: params, operations: operations)
                return Self.json(try op(resolved, body, req, params), pretty: pretty)
            } catch {
                if case .internalError(let what) = error {
                    logger.error("auth internal error", [("path", .string(req.rawPath)), ("error", .string(what))])
                }
                return error.response(pretty: pretty)
            }
        }
    }

    /// Resolves credentials and the project from the path, as the Firebase emulator does: any
    /// non-empty API key or a privileged bearer; a path project needs the bearer.
    static func context(_ req: Request, _ params: RouteParameters, access: Access, defaultProject: String,
                        clock: Clock) throws(AuthError) -> OperationContext {
        var privileged = false
        if access == .credentials { privileged = try credentials(req) }
        var project = defaultProject
        if let p = params["project"] {
            guard privileged || access == .open else { throw .insufficientPermissionTargetProject }
            project = p
        }
        return OperationContext(projectID: project, privileged: privileged, baseURL: baseURL(req), now: clock.now())
    }

    /// The context with the tenant a request acts on, as the Firebase emulator finds it: the path
    /// and the body must agree (TENANT_ID_MISMATCH), then a presented ID token's tenant or a
    /// pending second-factor credential's fills in for an absent one.
    static func resolveTenant(_ tenancy: Tenancy, project: String, privileged: Bool, baseURL: String, now: Instant,
                              body: RequestBody, params: RouteParameters, operations: AuthOperations) throws(AuthError) -> OperationContext {
        let base = OperationContext(projectID: project, privileged: privileged, baseURL: baseURL, now: now)
        if tenancy == .none { return base }
        let pathTenant = params["tenant"]
        let bodyTenant = try body.nonEmptyString("tenantId")
        if let pathTenant, let bodyTenant, pathTenant != bodyTenant { throw .tenantIdMismatch }
        var tenantID = pathTenant ?? bodyTenant
        if tenancy == .emulator {
            return OperationContext(scope: AuthScope(projectID: project, tenantID: tenantID), privileged: privileged, baseURL: baseURL, now: now)
        }
        if let idToken = try body.nonEmptyString("idToken"), let jwt = try? JWT(decoding: idToken),
           let tokenTenant = jwt.payload["firebase"]?["tenant"]?.stringValue {
            if let tenantID, tenantID != tokenTenant { throw .tenantIdMismatch }
            tenantID = tokenTenant
        }
        if tenantID == nil, let credential = try body.nonEmptyString("mfaPendingCredential") {
            tenantID = operations.pendingCredentialTenant(project: project, credential)
        }
        guard let tenantID else { return base }
        guard let tenant = try operations.tenant(project: project, tenantID) else {
            throw pathTenant != nil ? .tenantNotFound : .invalidTenantId
        }
        if tenant.disableAuth { throw .projectDisabled }
        return base.within(tenant)
    }

    /// `true` for admin credentials, `false` for an API key; throws without either.
    static func credentials(_ req: Request) throws(AuthError) -> Bool {
        if let authorization = req.headers["Authorization"], authorization.lowercased().hasPrefix("bearer ") {
            let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            // "owner" is the emulator's admin credential; `ya29.` tokens are real Google access
            // tokens (case-sensitive prefix), assumed to own the project.
            if token.lowercased() == "owner" || token.hasPrefix("ya29.") { return true }
            throw .invalidCredentials
        }
        if let key = req.query("key"), !key.isEmpty { return false }
        if let key = req.headers["x-goog-api-key"], !key.isEmpty { return false }
        throw .missingAPIKey
    }

    /// Parses the body: JSON, or a form when allowed and sent as one.
    static func body(_ req: Request, form: Bool) throws(AuthError) -> RequestBody {
        if req.method == "GET" || req.method == "HEAD" || req.method == "DELETE" { return .empty }
        if form {
            let type = req.headers["Content-Type"]?.lowercased() ?? ""
            let text = req.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
            if type.hasPrefix("application/x-www-form-urlencoded") || (!text.isEmpty && !text.hasPrefix("{")) {
                return RequestBody.form(text)
            }
        }
        return try RequestBody.parse(req.body)
    }

    /// `http://host:port` as the client addressed this server.
    static func baseURL(_ req: Request) -> String {
        let host = req.headers["Host"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1:9099"
        return (req.isTLS ? "https://" : "http://") + host
    }

    /// Google APIs pretty-print unless `prettyPrint=false`.
    static func pretty(_ req: Request) -> Bool {
        req.query("prettyPrint") != "false"
    }

    /// A 200 JSON response.
    static func json(_ value: JSON, pretty: Bool = true, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        Response(status: 200, contentType: "application/json; charset=utf-8", body: Array(value.serialized(pretty: pretty).utf8),
                 headers: headers)
    }

    // MARK: CORS

    /// Adds the reflected-origin headers the `cors({origin: true})` middleware sends.
    static func cors(_ response: Response, _ req: Request) -> Response {
        var r = response
        if let origin = req.headers["Origin"] { r.headers.set("Access-Control-Allow-Origin", origin) }
        r.headers.add("Vary", "Origin")
        if req.headers["Access-Control-Request-Private-Network"] != nil {
            r.headers.set("Access-Control-Allow-Private-Network", "true")
        }
        return r
    }

    /// The answer to an `OPTIONS` preflight, for any path.
    static func preflight(_ req: Request) -> Response {
        var h = HTTPHeaders()
        if let origin = req.headers["Origin"] { h.set("Access-Control-Allow-Origin", origin) }
        h.add("Vary", "Origin")
        h.set("Access-Control-Allow-Methods", "GET,HEAD,PUT,PATCH,POST,DELETE")
        if let requested = req.headers["Access-Control-Request-Headers"] {
            h.set("Access-Control-Allow-Headers", requested)
            h.add("Vary", "Access-Control-Request-Headers")
        }
        if req.headers["Access-Control-Request-Private-Network"] != nil { h.set("Access-Control-Allow-Private-Network", "true") }
        return Response(status: 204, headers: h, body: .empty)
    }
}
