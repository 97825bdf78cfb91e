import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthSQLite
@testable import AuthEmulator

/// A fresh Auth service on an in-memory database, driven through `AuthService.http`.
struct AuthHarness {
    let service: AuthService
    let clock: Clock
    let ids: IDGenerator
    let database: Database

    static let it = "/identitytoolkit.googleapis.com/v1"
    static let project = "demo-hearth"
    /// 2027-01-15T08:00:00Z: a fixed emulator time so token times are predictable.
    static let start = Instant(unixSeconds: 1_800_000_000)

    init(signing: AuthConfiguration.TokenSigning = .none, seed: UInt64 = 7, database: Database? = nil,
         configuration: AuthConfiguration? = nil) throws {
        let db = try database ?? Database(path: nil)
        try db.migrate(AuthService.migrations)
        clock = Clock(frozenAt: Self.start)
        ids = IDGenerator(seed: seed)
        self.database = db
        let config = configuration ?? AuthConfiguration(tokenSigning: signing, passwordIterations: 2)
        service = try AuthService(database: db, clock: clock, ids: ids, logger: Logger(quiet: true), configuration: config)
    }

    /// A response as tests look at it.
    struct Reply {
        let status: Int
        let headers: HTTPHeaders
        let bytes: [UInt8]
        var json: JSON { (try? JSON.parse(bytes)) ?? .null }
        var text: String { String(decoding: bytes, as: UTF8.self) }
        /// `error.message`, for error replies.
        var errorMessage: String? { json["error"]?["message"]?.stringValue }
    }

    /// Sends a request through the service's disposition, as the HTTP server would.
    func send(_ method: String, _ target: String, body: [UInt8] = [], headers: HTTPHeaders = HTTPHeaders()) -> Reply {
        let response = service.http.answer(Request(method: method, target: target, headers: headers, body: body))
        return Reply(status: response.status, headers: response.headers, bytes: response.bodyBytes ?? [])
    }

    /// POSTs JSON with an API key (`admin`: with `Bearer owner` instead).
    @discardableResult
    func post(_ path: String, _ body: JSON = .object([:]), admin: Bool = false, key: Bool = true) -> Reply {
        var h = HTTPHeaders()
        h.set("Content-Type", "application/json")
        if admin { h.set("Authorization", "Bearer owner") }
        let target = (key && !admin) ? path + (path.contains("?") ? "&" : "?") + "key=fake-api-key" : path
        return send("POST", target, body: Array(body.serialized().utf8), headers: h)
    }

    /// GETs with admin credentials (or none).
    func get(_ path: String, admin: Bool = true) -> Reply {
        var h = HTTPHeaders()
        if admin { h.set("Authorization", "Bearer owner") }
        return send("GET", path, headers: h)
    }

    // MARK: Shortcuts

    /// Signs up an email/password user and returns the reply JSON.
    @discardableResult
    func signUp(_ email: String, _ password: String = "secret123", extra: [(String, JSON)] = []) -> JSON {
        var o = JSONObject([("email", .string(email)), ("password", .string(password)), ("returnSecureToken", .bool(true))])
        for (k, v) in extra { o[k] = v }
        return post("\(Self.it)/accounts:signUp", .object(o)).json
    }

    func signIn(_ email: String, _ password: String = "secret123") -> Reply {
        post("\(Self.it)/accounts:signInWithPassword",
             .object(["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)]))
    }

    func lookupAdmin(_ localId: String, project: String = AuthHarness.project) -> JSON? {
        post("\(Self.it)/projects/\(project)/accounts:lookup", .object(["localId": .array([.string(localId)])]), admin: true).json["users"]?[0]
    }

    func refresh(_ refreshToken: String) -> Reply {
        var h = HTTPHeaders()
        h.set("Content-Type", "application/x-www-form-urlencoded")
        let form = "grant_type=refresh_token&refresh_token=\(refreshToken)"
        return send("POST", "/securetoken.googleapis.com/v1/token?key=fake-api-key", body: Array(form.utf8), headers: h)
    }

    /// The decoded parts of a JWT.
    static func decode(_ token: String) -> (header: JSONObject, payload: JSONObject, signature: String)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let h = Base64URL.decode(parts[0]), let p = Base64URL.decode(parts[1]),
              let header = try? JSON.parse(h).objectValue, let payload = try? JSON.parse(p).objectValue else { return nil }
        return (header, payload, parts[2])
    }

    /// An unsigned token with the given header and payload.
    static func unsignedToken(header: JSONObject, payload: JSONObject) -> String {
        Base64URL.encode(Array(JSON.object(header).serialized().utf8)) + "." + Base64URL.encode(Array(JSON.object(payload).serialized().utf8)) + "."
    }
}

/// Literals keep the expectations readable.
extension JSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
}
