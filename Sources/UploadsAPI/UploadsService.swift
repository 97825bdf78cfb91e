import HearthCore
import HearthHTTP

/// The backend contract of the seed's upload flow, served on the api port (default 8000):
/// `POST /v1/uploads/presign`, `POST /v1/files/{fileId}/complete`, `POST /v1/files/presign-download`.
///
/// It keeps no state of its own: identities come from the auth emulator (`IDTokenVerifier`), objects
/// and presigned URLs from the S3 store (`ObjectStore`), file documents go to Firestore
/// (`DocumentStore`). docs/uploads.md describes the wire contract.
public final class UploadsService: Sendable {
    /// The settings it was made with.
    public let configuration: UploadsConfiguration
    /// What the api port serves.
    public let http: any HTTPService
    private let objectStore: any ObjectStore

    /// Makes the service and creates the uploads bucket when missing.
    /// - Parameters:
    ///   - appCheckVerifier: checks an `X-Firebase-AppCheck` token (AuthService's App Check
    ///     verification); consulted only when `configuration.requireAppCheck` is on.
    /// - Throws: when the bucket cannot be created.
    public init(clock: Clock, ids: IDGenerator, logger: Logger, configuration: UploadsConfiguration,
                tokenVerifier: any IDTokenVerifier, objectStore: any ObjectStore, documentStore: any DocumentStore,
                appCheckVerifier: (@Sendable (String) -> Bool)? = nil) throws {
        self.configuration = configuration
        self.objectStore = objectStore
        let handlers = UploadsHandlers(
            configuration: configuration, clock: clock, ids: ids, logger: logger,
            authenticator: CallerAuthenticator(projectID: configuration.projectID, tokenVerifier: tokenVerifier,
                                               requireAppCheck: configuration.requireAppCheck,
                                               appCheckVerifier: appCheckVerifier),
            contentTypes: ContentTypePolicy(configuration.allowedContentTypes),
            objectStore: objectStore, documentStore: documentStore)
        http = CORSService(inner: UploadsService.makeRouter(handlers, bodyLimit: configuration.maxBodyBytes))
        try objectStore.ensureBucket(configuration.bucket)
    }

    static func makeRouter(_ h: UploadsHandlers, bodyLimit: Int) -> Router {
        let router = Router(defaultBodyLimit: bodyLimit)
        router.notFound = { req in UploadsError.noRoute(method: req.method, path: req.rawPath).render() }
        router.methodNotAllowed = { req in UploadsError.methodNotAllowed(method: req.method, path: req.rawPath).render() }
        router.payloadTooLarge = UploadsError.bodyTooLarge(limit: bodyLimit).render()
        router.get("/") { _, _ in h.describe() }
        router.get("/healthz") { _, _ in .text("ok") }
        router.post("/v1/uploads/presign") { req, _ in h.respond { () throws(UploadsError) in try h.presign(req) } }
        // The literal route comes before `{fileId}` so that `presign-download` is never read as a file id.
        router.post("/v1/files/presign-download") { req, _ in h.respond { () throws(UploadsError) in try h.presignDownload(req) } }
        router.post("/v1/files/{fileId}/complete") { req, params in
            h.respond { () throws(UploadsError) in try h.complete(req, fileID: params["fileId"] ?? "") }
        }
        return router
    }

    /// The API has no emulator-only routes on the hub.
    public func registerHubRoutes(_ hub: Router) {}

    /// Nothing of its own to wipe; recreates the uploads bucket in case the S3 reset removed it.
    public func reset() throws {
        try objectStore.ensureBucket(configuration.bucket)
    }
}
