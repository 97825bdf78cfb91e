import Foundation
import AuthEmulator
import FirestoreEmulator
import HearthCore
import HearthSQLite
import S3Emulator
import StorageEmulator

/// `hearth export DIR [--data-dir D]`: seed data out of a stopped hearth's data directory, in the
/// format `--import` reads. A running hearth holds the directory's lock; export it through its hub
/// instead (`POST /emulator/v1/export {"path": DIR}`), which sees in-memory instances too.
enum ExportCommand {
    static let usage = """
    Usage: hearth export DIR [--data-dir D]
    Writes the data of the hearth data directory D (default emulator-data) to DIR as JSON
    (DIR/hearth-export.json, DIR/auth/accounts.json, DIR/firestore/documents.json,
    DIR/s3/buckets.json and DIR/s3/objects/…); hearth start --import DIR loads it.
    For a running hearth: curl -X POST http://127.0.0.1:4400/emulator/v1/export -d '{"path": "DIR"}'

    """

    /// Refuses every token: an export serves no requests.
    struct NoRequests: IDTokenVerifier {
        func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken {
            throw .malformed("hearth export serves no requests")
        }
    }

    static func run(_ args: [String]) -> Int32 {
        var status: Int32 = 0
        guard let parsed = CommandArguments.parse(args, command: "export", flags: ["--data-dir"], usage: usage,
                                                  exitStatus: &status) else { return status }
        guard parsed.words.count == 1, let target = parsed.words.first else {
            StartCommand.fail("hearth export needs one DIR (see hearth export --help)")
            return 2
        }
        let dataDir = parsed.values["--data-dir"] ?? "emulator-data"
        let path = (dataDir as NSString).appendingPathComponent(DataFiles.mainFile)
        guard FileManager.default.fileExists(atPath: path) else {
            StartCommand.fail("no hearth database at \(path) (--data-dir names another directory?)")
            return 2
        }
        do {
            // Held for the export, so no hearth starts on the directory meanwhile; a running one
            // makes this fail with its pid (then use the hub).
            let lock = try DataDirectoryLock(directory: dataDir)
            defer { withExtendedLifetime(lock) {} }
            // Opening migrates, as `hearth start` would (an old layout's documents move to their own file).
            let files = try DataFiles(directory: dataDir)
            let database = files.main
            let logger = Logger(quiet: true)
            let firestore = FirestoreService(database: files.firestore, clock: Clock(), ids: IDGenerator(),
                                             logger: logger, configuration: FirestoreConfiguration(watchRules: false),
                                             tokenVerifier: NoRequests())
            let auth = try AuthService(database: database, clock: Clock(), ids: IDGenerator(), logger: logger)
            let s3 = try S3Service(database: database, clock: Clock(), ids: IDGenerator(), logger: logger, configuration: S3Configuration())
            // No default buckets: exporting must not add a project's buckets to someone's data.
            let storage = try StorageService(database: database, clock: Clock(), ids: IDGenerator(), logger: logger,
                                             configuration: StorageConfiguration(projectID: "", defaultBuckets: []),
                                             tokenVerifier: NoRequests(), firestore: nil)
            let units = [
                ServiceUnit(name: "auth", port: 0, http: auth.http, exportData: auth.exportAccounts, exportFile: "accounts.json"),
                ServiceUnit(name: "firestore", port: 0, http: firestore.http, exportData: firestore.exportDocuments,
                            exportFile: "documents.json"),
                ServiceUnit(name: "s3", port: 0, http: s3.http, exportTo: { try s3.exportData(to: $0) }),
                ServiceUnit(name: "storage", port: 0, http: storage.http, exportTo: { try storage.exportData(to: $0) }),
            ]
            try SeedData.export(units, to: target)
            print("exported \(dataDir) to \(target)")
            return 0
        } catch {
            StartCommand.fail("\(error)")
            return 2
        }
    }
}
