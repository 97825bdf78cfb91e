import Foundation
import AuthEmulator
import FirestoreEmulator
import HearthCore
import HearthHTTP
import HearthSQLite
import S3Emulator
import SecurityRules
import StorageEmulator
import UploadsAPI

/// Builds every service from the options and connects them through the HearthCore seams.
/// This is the only place that knows all services.
enum Wiring {
    static func makeUnits(_ c: ServiceContext) throws -> [ServiceUnit] {
        let o = c.options
        let visibleHost = o.advertisedHost

        let auth = try AuthService(
            database: c.files.main, clock: c.clock, ids: c.ids, logger: c.logger,
            configuration: AuthConfiguration(projectID: o.project, tokenSigning: o.tokenSigning == "rs256" ? .rs256 : .none))

        let firestore = FirestoreService(
            database: c.files.firestore, clock: c.clock, ids: c.ids, logger: c.logger,
            configuration: FirestoreConfiguration(projectID: o.project, rulesPath: o.rulesChoice.path,
                                                  rulesSource: o.rulesChoice == .shipped ? ShippedRules.source : nil,
                                                  host: visibleHost, port: o.firestorePort),
            tokenVerifier: auth.tokenVerifier)

        let tls = try loadTLS(o)
        let s3 = try S3Service(
            database: c.files.main, clock: c.clock, ids: c.ids, logger: c.logger,
            configuration: S3Configuration(
                region: o.s3Region,
                credentials: o.allS3Credentials.map {
                    S3Configuration.Credential(accessKey: $0.accessKey, secretKey: $0.secret, allowedBuckets: $0.buckets.map(Set.init),
                                               canonicalID: $0.canonicalID, displayName: $0.displayName, accountID: $0.accountID)
                },
                allowSigV2: o.s3AllowSigV2, isTLS: tls != nil,
                // Recreated after `DELETE /emulator/v1/s3` too, so presigned uploads keep working.
                defaultBuckets: [o.uploadsBucket], corsOrigins: o.s3CorsOrigins, allowSSECOverHTTP: o.s3AllowSSECOverHTTP,
                kmsKeys: o.s3KmsKeys.map { S3Configuration.KMSKey(keyID: $0.keyID, alias: $0.alias, accessKey: $0.accessKey) },
                restoreTiming: o.s3RestoreTiming))

        let uploads = try UploadsService(
            clock: c.clock, ids: c.ids, logger: c.logger,
            configuration: UploadsConfiguration(projectID: o.project, bucket: o.uploadsBucket,
                                                allowedContentTypes: o.uploadsContentTypes ?? UploadsConfiguration.defaultContentTypes,
                                                maxExpiresSeconds: o.uploadsMaxExpires, requireAppCheck: o.requireAppCheck),
            tokenVerifier: auth.tokenVerifier, objectStore: s3, documentStore: firestore,
            appCheckVerifier: { auth.verifyAppCheckToken($0) })

        let storage = try StorageService(
            database: c.files.main, clock: c.clock, ids: c.ids, logger: c.logger,
            configuration: StorageConfiguration(projectID: o.project, rulesPath: o.storageRulesChoice.path,
                                                rulesSource: o.storageRulesChoice == .shipped ? ShippedStorageRules.source : nil),
            tokenVerifier: auth.tokenVerifier, firestore: firestore)
        storage.startWatchingRules()

        let scheme = tls != nil ? "https" : "http"
        let urlHost = o.advertisedURLHost
        return [
            ServiceUnit(name: "auth", port: o.authPort, http: auth.http,
                        registerHubRoutes: auth.registerHubRoutes, reset: auth.reset,
                        exportData: auth.exportAccounts, importData: auth.importAccounts, exportFile: "accounts.json",
                        importFirebaseExport: { try auth.importFirebaseEmulatorExport(directory: $0, projectID: o.project, now: c.clock.now()) }),
            // REST (HTTP/1.1) and gRPC (HTTP/2) share the Firestore port, as the official emulator's do.
            ServiceUnit(name: "firestore", port: o.firestorePort, http: firestore.http, grpc: [firestore.grpc],
                        registerHubRoutes: { hub in
                            firestore.registerHubRoutes(hub)
                            RulesTestAPI.register(on: hub, rules: o.rulesChoice)
                        },
                        reset: firestore.reset, shutdown: firestore.stopWatchingRules,
                        exportData: firestore.exportDocuments, importData: firestore.importDocuments,
                        exportFile: "documents.json", importFirebaseExport: firestore.importEmulatorExport,
                        documentChanges: firestore),
            ServiceUnit(name: "s3", port: o.s3Port, http: s3.http,
                        tlsCertificatePEM: tls?.cert, tlsKeyPEM: tls?.key,
                        registerHubRoutes: s3.registerHubRoutes, reset: s3.reset,
                        didStart: { port in s3.setPublicBaseURL("\(scheme)://\(urlHost):\(port)") },
                        exportTo: { try s3.exportData(to: $0) }, importFrom: s3.importData),
            ServiceUnit(name: "storage", port: o.storagePort, http: storage.http,
                        registerHubRoutes: storage.registerHubRoutes, reset: storage.reset, shutdown: storage.stopWatchingRules,
                        exportTo: { try storage.exportData(to: $0) }, importFrom: storage.importData,
                        importFirebaseExport: storage.importFirebaseEmulatorExport),
            ServiceUnit(name: "api", port: o.apiPort, http: uploads.http,
                        registerHubRoutes: uploads.registerHubRoutes, reset: uploads.reset),
        ]
    }

    static func loadTLS(_ o: StartOptions) throws -> (cert: String, key: String)? {
        switch (o.tlsCert, o.tlsKey) {
        case (nil, nil): return nil
        case (let cert?, let key?):
            guard let c = FileManager.default.contents(atPath: cert) else { throw StartCommand.StartupError(description: "cannot read --tls-cert \(cert)") }
            guard let k = FileManager.default.contents(atPath: key) else { throw StartCommand.StartupError(description: "cannot read --tls-key \(key)") }
            return (String(decoding: c, as: UTF8.self), String(decoding: k, as: UTF8.self))
        default:
            throw StartCommand.StartupError(description: "--tls-cert and --tls-key go together")
        }
    }
}

/// `POST /v1/projects/{p}:test` on the hub: Google's `firebaserules.projects.test`.
enum RulesTestAPI {
    /// Without `source` in the body the suite runs against the rules `hearth start` enforces.
    static func register(on hub: Router, rules: RulesChoice) {
        hub.post("/v1/projects/{project}:test") { req, _ in
            let body: JSON
            do { body = try JSON.parse(req.body) } catch {
                return .json(Hub.errorBody(400, "INVALID_ARGUMENT", "Invalid JSON payload received. \(error)"), status: 400)
            }
            let fileName: String
            let source: String
            if let file = body["source"]?["files"]?[0] {
                guard let content = file["content"]?.stringValue else {
                    return .json(Hub.errorBody(400, "INVALID_ARGUMENT", "source.files[0].content is required"), status: 400)
                }
                source = content
                fileName = file["name"]?.stringValue ?? "firestore.rules"
            } else {
                switch rules {
                case .file(let path):
                    guard let data = FileManager.default.contents(atPath: path) else {
                        return .json(Hub.errorBody(400, "INVALID_ARGUMENT", "`source` is required (no rules file at \(path))"), status: 400)
                    }
                    source = String(decoding: data, as: UTF8.self)
                    fileName = path
                case .shipped:
                    source = ShippedRules.source
                    fileName = ShippedRules.fileName
                case .open:
                    return .json(Hub.errorBody(400, "INVALID_ARGUMENT", "`source` is required (hearth runs with --rules open)"), status: 400)
                }
            }
            let suite = body["testSuite"] ?? .object([:])
            return .json(RulesTestRunner.run(source: source, fileName: fileName, testSuite: suite))
        }
    }
}
