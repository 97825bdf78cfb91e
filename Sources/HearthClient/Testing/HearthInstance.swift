import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A running Hearth, described by its ready file (`hearth start --ready-file PATH`), with the
/// emulator-only controls tests need (reset, clock, admin shortcuts) and factories for the clients.
public struct HearthInstance: Sendable {
    /// One listener.
    public struct Service: Sendable, Equatable, Decodable {
        public let host: String
        public let port: Int
        public let url: URL
    }

    /// Listeners by name: `hub`, `auth`, `firestore`, `s3`, `api`.
    public let services: [String: Service]
    /// The default project id.
    public let projectID: String
    /// The environment a client process needs (`FIREBASE_AUTH_EMULATOR_HOST`, `AWS_ENDPOINT_URL_S3`, …).
    public let environment: [String: String]
    let transport: HTTPTransport

    /// Parses the ready JSON: `{"services": {"hub": {"host", "port", "url"}, …}, "env": {…}, "project": "…"}`.
    public init(readyJSON data: Data, session: URLSession = .shared) throws {
        struct Ready: Decodable {
            let services: [String: Service]
            let env: [String: String]?
            let project: String?
        }
        let ready: Ready
        do { ready = try JSONDecoder().decode(Ready.self, from: data) } catch {
            throw HearthClientError.decoding("ready file: \(error)")
        }
        services = ready.services
        projectID = ready.project ?? ready.env?["GCLOUD_PROJECT"] ?? "demo-hearth"
        environment = ready.env ?? [:]
        transport = HTTPTransport(session: session)
    }

    /// Reads and parses a ready file.
    public init(readyFile path: String, session: URLSession = .shared) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HearthClientError.invalidArgument("cannot read ready file \(path)")
        }
        try self.init(readyJSON: data, session: session)
    }

    /// An instance from explicit URLs (for a Hearth started elsewhere, e.g. with default ports).
    public init(hub: URL, auth: URL, firestore: URL, s3: URL, api: URL, projectID: String = "demo-hearth", session: URLSession = .shared) {
        func service(_ url: URL) -> Service { Service(host: url.host ?? "127.0.0.1", port: url.port ?? 80, url: url) }
        services = ["hub": service(hub), "auth": service(auth), "firestore": service(firestore), "s3": service(s3), "api": service(api)]
        self.projectID = projectID
        environment = [:]
        transport = HTTPTransport(session: session)
    }

    func url(_ name: String) throws(HearthClientError) -> URL {
        guard let s = services[name] else { throw .invalidArgument("the ready file lists no '\(name)' service") }
        return s.url
    }

    /// The hub (health, clock, reset).
    public var hubURL: URL { get throws { try url("hub") } }
    /// The Firebase Auth emulator.
    public var authURL: URL { get throws { try url("auth") } }
    /// The Firestore emulator.
    public var firestoreURL: URL { get throws { try url("firestore") } }
    /// The S3 endpoint.
    public var s3URL: URL { get throws { try url("s3") } }
    /// The uploads API.
    public var apiURL: URL { get throws { try url("api") } }
    /// The Cloud Storage for Firebase emulator.
    public var storageURL: URL { get throws { try url("storage") } }

    // MARK: Clients

    /// An Auth client for this instance.
    public func auth() throws -> AuthClient { AuthClient(emulatorURL: try authURL, session: transport.session) }

    /// A Firestore client for this instance acting with `token` (`.owner` bypasses the rules).
    public func firestore(token: BearerToken = .none) throws -> FirestoreClient {
        FirestoreClient(emulatorURL: try firestoreURL, projectID: projectID, token: token, session: transport.session)
    }

    /// An uploads client for this instance.
    public func uploads(token: BearerToken, appCheckToken: String? = nil) throws -> UploadsClient {
        UploadsClient(baseURL: try apiURL, token: token, appCheckToken: appCheckToken, session: transport.session)
    }

    /// A Cloud Storage client for this instance acting with `token`, on `bucket` (default: the
    /// project's `<project>.appspot.com`).
    public func storage(token: BearerToken, bucket: String? = nil) throws -> StorageClient {
        StorageClient(emulatorURL: try storageURL, bucket: bucket ?? "\(projectID).appspot.com", token: token, session: transport.session)
    }

    // MARK: Emulator controls

    /// Wipes every service's data (`POST /emulator/v1/reset` on the hub).
    public func reset() async throws {
        try await hub("POST", "/emulator/v1/reset", [:])
    }

    /// Stops the emulator clock at `date` (`PUT /emulator/v1/clock {"frozenAt": …}`).
    public func freezeClock(at date: Date) async throws {
        try await hub("PUT", "/emulator/v1/clock", ["frozenAt": .string(Timestamp(date: date).rfc3339)])
    }

    /// Moves the emulator clock by `seconds` (`{"advanceSeconds": N}`): tokens and presigned URLs expire.
    public func advanceClock(by seconds: Int) async throws {
        try await hub("PUT", "/emulator/v1/clock", ["advanceSeconds": .int(Int64(seconds))])
    }

    /// Lets the emulator clock follow the system clock again (`{"mode": "system"}`).
    public func useSystemClock() async throws {
        try await hub("PUT", "/emulator/v1/clock", ["mode": .string("system")])
    }

    /// Revokes the user's refresh tokens, as the Admin SDK's `revoke_refresh_tokens` does
    /// (`accounts:update` with `validSince` = now on the emulator clock): ID tokens issued before
    /// now fail `checkRevoked` verification and refresh fails with TOKEN_EXPIRED.
    public func revokeRefreshTokens(uid: String, at date: Date) async throws {
        try await authAdmin("accounts:update", ["localId": .string(uid), "validSince": .string(String(Int64(date.timeIntervalSince1970)))])
    }

    /// Revokes the user's refresh tokens as of the emulator clock's current second.
    public func revokeRefreshTokens(uid: String) async throws {
        try await revokeRefreshTokens(uid: uid, at: try await clockNow())
    }

    /// Disables or enables the user (`accounts:update` with `disableUser`).
    public func setDisabled(_ disabled: Bool, uid: String) async throws {
        try await authAdmin("accounts:update", ["localId": .string(uid), "disableUser": .bool(disabled)])
    }

    /// The emulator clock's current time (`GET /emulator/v1/clock`).
    public func clockNow() async throws -> Date {
        let result = try await transport.send("GET", try URLBuilder.url(try hubURL, "/emulator/v1/clock"))
        guard result.isSuccess else { throw HearthClientError.from(result, method: "GET") }
        struct Clock: Decodable { let now: String }
        let c = try WireJSON.decode(Clock.self, from: result, what: "clock")
        guard let t = Timestamp(rfc3339: c.now) else { throw HearthClientError.decoding("clock time '\(c.now)'") }
        return t.dateValue
    }

    func hub(_ method: String, _ path: String, _ body: [String: AnyJSON]?) async throws {
        let url = try URLBuilder.url(try hubURL, path)
        let data = try body.map { b throws(HearthClientError) in try WireJSON.encode(b) }
        let result = try await transport.send(method, url, headers: data == nil ? [:] : ["Content-Type": "application/json"], body: data ?? Data())
        guard result.isSuccess else { throw HearthClientError.from(result, method: method) }
    }

    func authAdmin(_ method: String, _ body: [String: AnyJSON]) async throws {
        let url = try URLBuilder.url(try authURL, "/identitytoolkit.googleapis.com/v1/projects/\(projectID)/\(method)")
        let result = try await transport.send("POST", url, headers: ["Content-Type": "application/json", "Authorization": "Bearer owner"],
                                              body: try WireJSON.encode(body))
        guard result.isSuccess else { throw HearthClientError.from(result, method: "POST") }
    }
}
