import HearthCore
import HearthHTTP
import HearthGRPC
import HearthSQLite

/// What one service contributes to the process: a listener, hub routes, a reset and a shutdown.
struct ServiceUnit {
    /// Name in logs, `/emulators` and the ready file (`auth`, `firestore`, `s3`, `api`).
    let name: String
    let port: Int
    let http: any HTTPService
    /// gRPC services served over HTTP/2 on the same port; nil: HTTP/1.1 only.
    var grpc: [any GRPCService]? = nil
    var tlsCertificatePEM: String? = nil
    var tlsKeyPEM: String? = nil
    var registerHubRoutes: (Router) -> Void = { _ in }
    var reset: () throws -> Void = {}
    /// Called with the bound port once the listener is up (port 0 picks one).
    var didStart: (Int) -> Void = { _ in }
    var shutdown: () -> Void = {}
    /// Its data as JSON for `SeedData` (nil: the service has nothing to export yet).
    var exportData: (() throws -> JSON)? = nil
    /// Loads `exportData`'s JSON; returns how many items it wrote.
    var importData: ((JSON) throws -> Int)? = nil
    /// The file in `<export>/<name>/` that holds it.
    var exportFile = "data.json"
    /// Writes its data into the folder `<export>/<name>/` itself (a service whose export is more
    /// than one JSON file, e.g. S3's object bytes); used instead of `exportData`.
    var exportTo: ((String) throws -> Void)? = nil
    /// Loads what `exportTo` wrote from `<export>/<name>/`; returns how many items it wrote.
    var importFrom: ((String) throws -> Int)? = nil
    /// Loads this service's part of a Firebase emulators export directory (Auth's `auth_export`,
    /// Firestore's `firestore_export`); returns how many items it wrote, nil when it holds none.
    var importFirebaseExport: ((String) throws -> Int?)? = nil
    /// Its committed document changes, for the UI's live views (Firestore).
    var documentChanges: (any DocumentChangeFeed)? = nil
}

/// Shared process-wide objects handed to every service.
struct ServiceContext {
    let options: StartOptions
    /// The data directory's databases (Firestore's file and the others').
    let files: DataFiles
    let clock: Clock
    let ids: IDGenerator
    let logger: Logger
}
