import HearthBlobs
import HearthCore
import HearthHTTP
import HearthSQLite
import SecurityRules

/// The Cloud Storage for Firebase emulator: the Firebase Storage REST API the client SDKs use
/// (`/v0/b/{bucket}/o…`, judged by storage.rules) and the Cloud Storage JSON API subset the
/// server libraries use (`/storage/v1`, `/upload/storage/v1`, `/download/storage/v1`, privileged
/// as a service account is), over one object store.
public final class StorageService: HTTPService, @unchecked Sendable {
    /// The Storage schema, for the process's migration list.
    public static let migrations: [Migration] = StorageSchema.migrations

    let database: Database
    let clock: Clock
    let ids: IDGenerator
    let logger: Logger
    let configuration: StorageConfiguration
    let tokenVerifier: any IDTokenVerifier
    let firestore: (any FirestoreRulesReader)?
    let rules: StorageRules
    let uploadDigests = UploadDigests()
    let objectCache = ObjectReadCache.make()

    /// - Parameters:
    ///   - database: the process's database, already migrated with `migrations`.
    ///   - firestore: what `firestore.get()`/`exists()` in storage.rules read (nil: every such read fails, so it denies).
    public init(database: Database, clock: Clock, ids: IDGenerator, logger: Logger, configuration: StorageConfiguration,
                tokenVerifier: any IDTokenVerifier, firestore: (any FirestoreRulesReader)?) throws {
        self.database = database
        self.clock = clock
        self.ids = ids
        self.logger = logger
        self.configuration = configuration
        self.tokenVerifier = tokenVerifier
        self.firestore = firestore
        rules = StorageRules(path: configuration.rulesPath, source: configuration.rulesSource, logger: logger)
        // Chunks of uploads cut off by a crash belong to no object and no acknowledged piece.
        let swept = try database.write { c in try StorageBlobs.deleteOrphans(c) }
        if swept > 0 { logger.info("storage: removed interrupted uploads' staged bytes", [("blobs", .int(Int64(swept)))]) }
        try createDefaultBuckets()
    }

    /// The listener's request handling.
    public var http: any HTTPService { self }

    private func createDefaultBuckets() throws {
        let now = clock.now()
        try database.write { c in
            for b in configuration.defaultBuckets { try StorageStore.createBucket(c, b, now: now) }
        }
    }

    /// Deletes every bucket and object, then recreates the default buckets.
    public func reset() throws {
        try database.write { c in try StorageStore.wipe(c) }
        uploadDigests.removeAll()
        try createDefaultBuckets()
    }

    /// Starts polling the rules file for changes.
    public func startWatchingRules() { rules.startWatching() }

    /// Stops the rules-file watcher.
    public func stopWatchingRules() { rules.stopWatching() }

    // MARK: Routing

    public func dispose(_ request: Request) -> RequestDisposition {
        if request.method == "OPTIONS" { return .respond(StorageCORS.preflight(request)) }
        return StorageCORS.wrap(route(request), origin: request.headers["Origin"])
    }

    private func route(_ request: Request) -> RequestDisposition {
        let segments = Self.pathSegments(request.rawPath)
        let route = StorageRoute(segments: segments)
        switch route {
        case .firebaseObjects, .firebaseObject:
            return disposeFirebase(request, route: route)
        case .uploadObjects(let bucket):
            return disposeUpload(request, bucket: bucket)
        case .publicObject(let bucket, let name):
            return .respond(disposePublicObject(request, bucket: bucket, name: name))
        case .unknown:
            if request.method == "GET", segments.allSatisfy(\.isEmpty) {
                return .respond(.json(.object(["emulator": .string("storage")])))
            }
            return .respond(StorageError.notFoundRoute(method: request.method, path: request.path).gcsResponse)
        default:
            return collectJSON(request) { [self] req in handleJSONAPI(req, route: route) }
        }
    }

    /// The '/'-separated segments of a request path after its leading '/', each percent-decoded.
    /// Split as bytes in place: '/' is ASCII, so every piece is whole UTF-8, and only a piece with
    /// a '%' goes through `percentDecode` (which finds nothing to do in the others). By Characters
    /// the split cost ~13k instructions a request, through the generic `split` of the UTF-8 view
    /// and a `percentDecode` per piece ~7k, in place ~3k (with the pieces' strings).
    static func pathSegments(_ path: String) -> [String] {
        path.utf8.withContiguousStorageIfAvailable { bytes -> [String] in
            var segments: [String] = []
            // The piece before the first '/' (empty for a path) is not a segment.
            var start: Int? = nil, escaped = false
            for i in 0...bytes.count {
                if i < bytes.count && bytes[i] != UInt8(ascii: "/") {
                    if bytes[i] == UInt8(ascii: "%") { escaped = true }
                    continue
                }
                if let start {
                    let piece = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                    segments.append(escaped ? Request.percentDecode(piece) : piece)
                }
                start = i + 1
                escaped = false
            }
            return segments
        } ?? Substring(path).utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .dropFirst().map { Request.percentDecode(String(Substring($0))) }
    }

    /// Collects a small body (JSON requests) and answers with `handler`.
    func collectJSON(_ request: Request, _ handler: @escaping @Sendable (Request) -> Response) -> RequestDisposition {
        .collect(limit: configuration.maxBufferedBody,
                 tooLarge: StorageError.payloadTooLarge(Int64(configuration.maxBufferedBody)).gcsResponse, handler: handler)
    }

    /// `http://host:port` as the client addressed us (links in resources point back to it).
    func baseURL(_ request: Request) -> String {
        "\(request.isTLS ? "https" : "http")://\(request.headers["Host"] ?? "127.0.0.1")"
    }

    /// Runs a write transaction, turning storage failures into a logged 500.
    func write<T>(_ body: (Connection) throws -> T) throws(StorageError) -> T {
        do {
            return try database.write(body)
        } catch let e as StorageError {
            throw e
        } catch {
            logger.error("storage: database write failed", [("error", .string("\(error)"))])
            throw .internalError
        }
    }

    /// Runs a read transaction, turning storage failures into a logged 500.
    func read<T>(_ body: (Connection) throws -> T) throws(StorageError) -> T {
        do {
            return try database.read(body)
        } catch let e as StorageError {
            throw e
        } catch {
            logger.error("storage: database read failed", [("error", .string("\(error)"))])
            throw .internalError
        }
    }
}

/// Which endpoint a path names (segments already percent-decoded, so an object name is one segment).
enum StorageRoute: Equatable {
    case buckets
    case bucket(String)
    case objects(bucket: String)
    case object(bucket: String, name: String)
    case copy(verb: String, bucket: String, name: String, toBucket: String, toName: String)
    case compose(bucket: String, name: String)
    /// `POST /b/{b}/o/{o}/restore`: restores a soft-deleted generation.
    case restore(bucket: String, name: String)
    /// `/b/{b}/acl[/{entity}]`, `/b/{b}/defaultObjectAcl[/{entity}]`, `/b/{b}/o/{o}/acl[/{entity}]`.
    case bucketACL(bucket: String, entity: String?)
    case defaultObjectACL(bucket: String, entity: String?)
    case objectACL(bucket: String, name: String, entity: String?)
    /// `/b/{b}/iam` and `/b/{b}/iam/testPermissions`.
    case iam(bucket: String)
    case iamTest(bucket: String)
    case uploadObjects(bucket: String)
    case download(bucket: String, name: String)
    case firebaseObjects(bucket: String)
    case firebaseObject(bucket: String, name: String)
    /// `/{bucket}/{object}`: an object's public URL (the object name may hold '/').
    case publicObject(bucket: String, name: String)
    case unknown

    init(segments s: [String]) {
        switch s.count {
        case 3 where s[0] == "storage" && s[1] == "v1" && s[2] == "b": self = .buckets
        case 4 where s[0] == "storage" && s[1] == "v1" && s[2] == "b": self = .bucket(s[3])
        case 5 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "acl": self = .bucketACL(bucket: s[3], entity: nil)
        case 5 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "defaultObjectAcl":
            self = .defaultObjectACL(bucket: s[3], entity: nil)
        case 5 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "iam": self = .iam(bucket: s[3])
        case 6 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "acl": self = .bucketACL(bucket: s[3], entity: s[5])
        case 6 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "defaultObjectAcl":
            self = .defaultObjectACL(bucket: s[3], entity: s[5])
        case 6 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "iam" && s[5] == "testPermissions": self = .iamTest(bucket: s[3])
        case 7 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o" && s[6] == "restore":
            self = .restore(bucket: s[3], name: s[5])
        case 7 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o" && s[6] == "acl":
            self = .objectACL(bucket: s[3], name: s[5], entity: nil)
        case 8 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o" && s[6] == "acl":
            self = .objectACL(bucket: s[3], name: s[5], entity: s[7])
        case 4 where s[0] == "v0" && s[1] == "b" && s[3] == "o": self = .firebaseObjects(bucket: s[2])
        case 5 where s[0] == "v0" && s[1] == "b" && s[3] == "o": self = .firebaseObject(bucket: s[2], name: s[4])
        case 5 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o": self = .objects(bucket: s[3])
        case 6 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o": self = .object(bucket: s[3], name: s[5])
        case 6 where s[0] == "upload" && s[1] == "storage" && s[2] == "v1" && s[3] == "b" && s[5] == "o": self = .uploadObjects(bucket: s[4])
        case 7 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o" && s[6] == "compose":
            self = .compose(bucket: s[3], name: s[5])
        case 7 where s[0] == "download" && s[1] == "storage" && s[2] == "v1" && s[3] == "b" && s[5] == "o":
            self = .download(bucket: s[4], name: s[6])
        case 11 where s[0] == "storage" && s[1] == "v1" && s[2] == "b" && s[4] == "o" && (s[6] == "copyTo" || s[6] == "rewriteTo")
                && s[7] == "b" && s[9] == "o":
            self = .copy(verb: s[6], bucket: s[3], name: s[5], toBucket: s[8], toName: s[10])
        default:
            // Any other path of at least two segments whose first names no API is a public URL.
            if s.count >= 2, !["storage", "upload", "download", "v0", "emulator"].contains(s[0]), !s[0].isEmpty,
               !s[1...].joined(separator: "/").isEmpty {
                self = .publicObject(bucket: s[0], name: s[1...].joined(separator: "/"))
            } else {
                self = .unknown
            }
        }
    }
}
