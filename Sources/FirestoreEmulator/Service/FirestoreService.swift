import Foundation
import HearthCore
import HearthGRPC
import HearthHTTP
import HearthSQLite
import SecurityRules

/// The Cloud Firestore emulator: the v1 REST API on its own port, security rules enforced on
/// every client request, data in its own SQLite database (`firestore.sqlite` in a data directory).
///
/// Construct it after applying `FirestoreService.migrations`, serve `http` on the Firestore
/// port, and pass it as the `DocumentStore` of services that write documents server-side.
public final class FirestoreService: Sendable {
    /// Schema migrations (`firestore.N`); apply them before constructing the service.
    public static let migrations: [Migration] = FirestoreStorage.migrations
    /// The page size and checkpointing of Firestore's database file (its own, not shared with other
    /// services: the page size is one per file, and S3's bodies want large pages).
    public static let databaseLayout: Database.Layout = FirestoreStorage.layout

    let clock: Clock
    let ids: IDGenerator
    let logger: Logger
    let configuration: FirestoreConfiguration
    let tokenVerifier: any IDTokenVerifier
    let storage: FirestoreStorage
    let rules: RulesManager
    let transactions: TransactionRegistry
    /// ID tokens already decided (see `CallerCache`).
    let callers = CallerCache()
    /// gRPC RunQuery requests already read (see `ParsedQueryCache`).
    let parsedQueries = ParsedQueryCache()
    /// Listen targets and the change feed every commit publishes to.
    let listeners = ListenEngine()
    /// The gRPC Listen streams' encoder, shared by this service's streams only: a document version
    /// (path, create and update time) names one content within one service, whose commit times
    /// only grow; other services in the process (tests) may reuse the same times.
    let listenResponses = ListenResponseEncoder()
    /// The web SDK's Listen and Write streams over WebChannel, by session id.
    let webChannels: WebChannelSessions

    /// - Parameters:
    ///   - database: Firestore's database (opened with `databaseLayout`), already migrated with `migrations`.
    ///   - tokenVerifier: decides `Authorization: Bearer <ID token>` (the auth emulator's verifier).
    public init(database: Database, clock: Clock, ids: IDGenerator, logger: Logger,
                configuration: FirestoreConfiguration, tokenVerifier: any IDTokenVerifier) {
        self.clock = clock
        self.ids = ids
        self.logger = logger
        self.configuration = configuration
        self.tokenVerifier = tokenVerifier
        storage = FirestoreStorage(database: database, logger: logger)
        rules = RulesManager(rulesPath: configuration.rulesPath, source: configuration.rulesSource,
                             defaultProject: configuration.projectID, logger: logger)
        transactions = TransactionRegistry(clock: clock, ids: ids)
        webChannels = WebChannelSessions(clock: clock)
        // Read times must not fall behind commits made before a restart.
        do { try storage.loadLastCommit() } catch { logger.error("firestore: reading the last commit time failed", [("error", .string("\(error)"))]) }
        if configuration.watchRules { rules.startWatching(interval: configuration.rulesPollInterval) }
        // Data of databases cleared before a restart may still be waiting for collection.
        storage.scheduleCollection()
        listeners.service = self
        listeners.start(at: latestTime())
    }

    /// What the Firestore port serves.
    public var http: any HTTPService { FirestoreHTTPService(service: self) }

    /// What the Firestore port serves over gRPC (HTTP/2 on the same port): `google.firestore.v1.Firestore`.
    public var grpc: any GRPCService { FirestoreGRPCService(service: self) }

    /// Deletes every document of every project, open transactions, and rules installed through
    /// the API (the rules file stays in force).
    public func reset() throws {
        try publishingClear(nil) { try storage.clearAll() }
        transactions.removeAll()
        rules.resetInstalled()
    }

    /// Empties one database (`DELETE /emulator/v1/projects/{p}/databases/{d}/documents`).
    func clear(_ db: DatabaseID) throws {
        try publishingClear(db) { try storage.clear(db) }
        transactions.removeAll(database: db)
    }

    /// Deletes a document or a collection and every document below it, as admin writes of 500
    /// deletes each (listeners see each delete), until nothing is left under `path`
    /// (`DELETE /emulator/v1/projects/{p}/databases/{d}/documents/{path}`).
    func clear(_ db: DatabaseID, under path: ResourcePath) throws(FirestoreError) {
        if path.isDocument {
            _ = try commit(db, writes: [Write(path: path, operation: .delete, transforms: [], precondition: nil)],
                           transaction: nil, caller: .admin)
        }
        while true {
            let page = try listDocuments(db, collection: path, order: [], pageSize: 500, pageToken: nil, showMissing: false,
                                         recursive: true, consistency: .strong, caller: .admin)
            let writes = page.entries.map { Write(path: $0.0, operation: .delete, transforms: [], precondition: nil) }
            if writes.isEmpty { return }
            _ = try commit(db, writes: writes, transaction: nil, caller: .admin)
        }
    }

    /// Runs a clear of `db` (every database when nil) and tells listeners, which then re-read
    /// their targets from scratch (RESET).
    private func publishingClear(_ db: DatabaseID?, _ body: () throws -> Void) throws {
        let ticket = listeners.feed.reserve()
        do { try body() } catch {
            listeners.feed.withdraw(ticket)
            throw error
        }
        listeners.feed.publish(ticket, CommittedChange(database: db, commitTime: latestTime(), kind: .cleared))
    }

    /// Stops polling the rules file.
    public func stopWatchingRules() {
        rules.stopWatching()
    }

    /// Checks the rules file for changes now (instead of waiting for the next poll).
    public func reloadRulesIfChanged() {
        rules.poll()
    }

    /// Runs `body` in a read transaction, mapping storage failures to INTERNAL.
    func read<T>(_ body: (Connection) throws -> T) throws(FirestoreError) -> T {
        do {
            return try storage.database.read(body)
        } catch let e as FirestoreError {
            throw e
        } catch {
            logger.error("firestore: read failed", [("error", .string("\(error)"))])
            throw .internal("Internal error: \(error)")
        }
    }

    /// Runs `body` in a write transaction on the single writer (committed before it returns,
    /// together with concurrent writes; rolled back on throw).
    func write<T>(savepoint: Bool = true, _ body: (Connection) throws -> T) throws(FirestoreError) -> T {
        do {
            return try storage.write(savepoint: savepoint, body)
        } catch {
            throw writeFailure(error)
        }
    }

    /// `write` without holding the calling thread while its batch waits: `completion` gets the
    /// result after the commit, on the thread that committed it (`GroupCommit.submit`).
    func submitWrite<T>(savepoint: Bool = true, lead: Bool = true, _ body: @escaping (Connection) throws -> T,
                        completion: @escaping (Result<T, FirestoreError>) -> Void) {
        storage.submit(savepoint: savepoint, lead: lead, body) { [self] result in completion(result.mapError(writeFailure)) }
    }

    /// A failed write transaction's error as the API reports it.
    private func writeFailure(_ error: any Error) -> FirestoreError {
        if let e = error as? FirestoreError { return e }
        if let e = error as? SQLiteError, e.isDiskFull {
            // Nothing was written (the transaction rolled back); it succeeds again once there is room.
            logger.error("firestore: write failed, the disk is full", [("error", .string("\(e)"))])
            return .resourceExhausted("The data directory's disk is full; the write was not applied.")
        }
        logger.error("firestore: write failed", [("error", .string("\(error)"))])
        return .internal("Internal error: \(error)")
    }
}
