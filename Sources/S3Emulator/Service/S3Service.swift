import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
import HearthSQLite

/// The Amazon S3 emulator: a drop-in S3 endpoint for the AWS SDKs and CLI, backed by SQLite.
///
/// Wiring: apply `S3Service.migrations` to the process database, create the service, serve
/// `http` on the S3 port, call `registerHubRoutes` on the hub router, and (when the port was
/// chosen at bind time) `setPublicBaseURL` with the listener's URL. It also implements the
/// `ObjectStore` seam for the uploads API.
public final class S3Service: HTTPService, Sendable {
    /// The S3 tables; apply them (with every other service's) before `init`.
    public static let migrations: [Migration] = S3Schema.migrations

    let database: Database
    let clock: Clock
    let ids: IDGenerator
    let logger: Logger
    let configuration: S3Configuration
    /// The accounts the configured keys act for.
    let accounts: S3Accounts
    let store: S3Store
    let authenticator: RequestAuthenticator
    let presignLedger: PresignLedger
    let presigner: Presigner
    let requestLog: S3RequestLog
    /// Group commit for the final transactions of concurrent uploads.
    let commits: GroupCommit
    /// When lifecycle rules last ran (emulator seconds).
    let lifecycleLastPass = LifecyclePassClock()
    /// Every bucket's lifecycle configuration, for `x-amz-expiration` without a read per request.
    let lifecycleRules = LifecycleRuleCache()
    /// Every answer's `Date`, formatted once per second.
    private let dateHeader = HTTPDateCache()
    /// The last `Last-Modified` formatted: repeated reads of one object format it once.
    let lastModifiedHeader = HTTPDateCache()
    private let baseURL: LockedValue<String?>
    /// Host names that mean "this endpoint" (configured ones plus the public base URL's host), in
    /// `S3Target.matchOrder`.
    private let endpointHostNames: LockedValue<[String]>

    /// Creates the service over an already-migrated database: sweeps staging blobs a crash left
    /// behind and creates the configured default buckets.
    public init(database: Database, clock: Clock, ids: IDGenerator, logger: Logger, configuration: S3Configuration) throws {
        self.database = database
        self.clock = clock
        self.ids = ids
        self.logger = logger
        self.configuration = configuration
        accounts = S3Accounts(configuration.credentials)
        store = S3Store(database: database)
        commits = GroupCommit(database: database, savepoint: "s3_batched_commit")
        let credentials = S3Credentials(configuration.credentials.map {
            S3Credentials.Key(accessKey: $0.accessKey, secret: $0.secretKey, allowedBuckets: $0.allowedBuckets)
        })
        presignLedger = PresignLedger()
        authenticator = RequestAuthenticator(credentials: credentials, region: configuration.region, clock: clock,
                                             allowSigV2: configuration.allowSigV2, presignLedger: presignLedger)
        presigner = authenticator.presigner
        requestLog = S3RequestLog(capacity: configuration.requestLogCapacity)
        baseURL = LockedValue(configuration.publicBaseURL)
        endpointHostNames = LockedValue(S3Target.matchOrder(S3Service.endpointHosts(configuration.endpointHosts, baseURL: configuration.publicBaseURL)))
        let orphans = try store.cleanOrphans()
        if orphans > 0 { logger.info("s3: removed \(orphans) unfinished upload(s) left by a previous run") }
        try createDefaultBuckets()
        try lifecycleRules.load(from: store)
        for k in configuration.kmsKeys {
            let account = k.accessKey.flatMap { accounts.account(accessKey: $0) } ?? accounts.primary
            if case .failure(let refused) = createKMSKey(account: account.accountID, keyID: k.keyID, alias: k.alias, description: nil as String?) {
                throw KMSKeyRing.ConfigurationError(description: "s3KmsKeys: \(refused.message)")
            }
        }
    }

    /// What the S3 port serves.
    public var http: any HTTPService { self }

    /// The listener URL presigned URLs start with (`http://127.0.0.1:9000`).
    public func setPublicBaseURL(_ url: String) {
        baseURL.set(url.hasSuffix("/") ? String(url.dropLast()) : url)
        endpointHostNames.set(S3Target.matchOrder(S3Service.endpointHosts(configuration.endpointHosts, baseURL: url)))
    }

    /// The base URL for presigned URLs.
    var publicBaseURL: String {
        baseURL.get() ?? "\(configuration.isTLS ? "https" : "http")://127.0.0.1:9000"
    }

    /// The owner of buckets created outside any request (start-up, uploads API).
    var defaultOwner: String { accounts.primary.key }

    /// Deletes every bucket and object, then recreates the default buckets.
    public func reset() throws {
        try store.wipe()
        requestLog.clear()
        presignLedger.removeAll()
        lifecycleLastPass.reset()
        try lifecycleRules.load(from: store)
        try createDefaultBuckets()
    }

    private func createDefaultBuckets() throws {
        for name in configuration.defaultBuckets {
            try store.ensureBucket(name, region: configuration.region, owner: defaultOwner, now: clock.now())
        }
    }

    // MARK: Request handling

    public func dispose(_ request: Request) -> RequestDisposition {
        let now = clock.now()
        runLifecycleIfDue(now)
        let hostID = S3Service.hostID(for: request.id)
        let resolved = try? S3Target.resolve(request, matchingHosts: endpointHosts)
        // S3's front end refuses an oversized header section before anything else, preflights too.
        if request.headers.sectionSize > S3Error.maxHeaderSection {
            let ctx = S3Context(request: request, target: resolved ?? S3Target(bucket: nil, key: nil, virtualHosted: false), now: now, hostID: hostID)
            if let resolved, case .success(let operation) = S3Operation.resolve(request, target: resolved) { ctx.operation = operation }
            return .respond(complete(ctx, .failure(.requestHeaderSectionTooLarge)))
        }
        guard let target = resolved else {
            let ctx = S3Context(request: request, target: S3Target(bucket: nil, key: nil, virtualHosted: false), now: now, hostID: hostID)
            return .respond(complete(ctx, .failure(.invalidURI)))
        }
        let ctx = S3Context(request: request, target: target, now: now, hostID: hostID)
        // Browsers send preflights without credentials; S3 answers them from the CORS rules alone.
        if request.method == "OPTIONS" { return .respond(preflight(ctx)) }
        switch authenticator.authenticate(request, bucket: target.bucket, virtualHosted: target.virtualHosted) {
        case .failure(.anonymous) where S3Service.isFormUpload(request, target: target):
            // A browser form upload carries its credentials in the body: read the form first.
            ctx.operation = .postObject
            return postObject(ctx)
        case .failure(let failure):
            // An unsigned request goes ahead only where its bucket's policy allows it.
            guard case .anonymous = failure, case .success(let operation) = S3Operation.resolve(request, target: target),
                  let access = anonymousAccess(ctx, operation: operation) else {
                // The request log names what was attempted and by which key, even when it failed.
                if case .success(let operation) = S3Operation.resolve(request, target: target) { ctx.operation = operation }
                ctx.accessKey = S3Service.claimedAccessKey(request)
                return .respond(complete(ctx, .failure(.signature(failure))))
            }
            ctx.anonymousAccess = access
            ctx.operation = operation
            return route(operation, ctx)
        case .success(let auth):
            ctx.accessKey = auth.accessKey
            ctx.account = accounts.account(accessKey: auth.accessKey)
            ctx.auth = auth
            ctx.payload = auth.makePayloadVerifier()
        }
        switch S3Operation.resolve(request, target: target) {
        case .failure(let error):
            return .respond(complete(ctx, .failure(error)))
        case .success(let operation):
            ctx.operation = operation
            if let denied = authorize(ctx, operation) { return .respond(complete(ctx, .failure(denied))) }
            return route(operation, ctx)
        }
    }

    private var endpointHosts: [String] { endpointHostNames.get() }

    /// The access key a request claims (SigV4 header or query credential, SigV2 header or query),
    /// whether or not its signature holds.
    static func claimedAccessKey(_ request: Request) -> String? {
        if let auth = request.headers["Authorization"] {
            if let r = auth.range(of: "Credential=") {
                let rest = auth[r.upperBound...]
                return rest.firstIndex(of: "/").map { String(rest[..<$0]) }
            }
            if auth.hasPrefix("AWS "), let colon = auth.lastIndex(of: ":") {
                return String(auth[auth.index(auth.startIndex, offsetBy: 4)..<colon])
            }
        }
        if let credential = request.query("X-Amz-Credential") {
            return credential.split(separator: "/", maxSplits: 1).first.map(String.init)
        }
        return request.query("AWSAccessKeyId")
    }

    /// The configured host names plus the base URL's host when it is a name (not an IP literal).
    static func endpointHosts(_ configured: [String], baseURL: String?) -> [String] {
        var hosts = configured
        if let base = baseURL, let host = URLComponents(string: base)?.host?.lowercased(), !host.isEmpty,
           host.rangeOfCharacter(from: .letters) != nil, !host.contains(":"), !hosts.contains(host) {
            hosts.append(host)
        }
        return hosts
    }

    private func route(_ operation: S3Operation, _ ctx: S3Context) -> RequestDisposition {
        switch operation {
        case .listBuckets: bodiless(ctx, listBuckets)
        case .createBucket: withBody(ctx, limit: 64 << 10, createBucket)
        case .deleteBucket: bodiless(ctx, deleteBucket)
        case .headBucket: bodiless(ctx, headBucket)
        case .getBucketLocation: bodiless(ctx, getBucketLocation)
        case .getBucketConfiguration(let name): bodiless(ctx) { self.getBucketConfiguration(name, $0) }
        case .getBucketACL, .getObjectACL: bodiless(ctx, getACL)
        case .putBucketACL, .putObjectACL: withBody(ctx, limit: 1 << 20, putACL)
        case .getObjectAttributes: bodiless(ctx, getObjectAttributes)
        case .getObjectLockConfiguration: bodiless(ctx, getObjectLockConfiguration)
        case .putObjectLockConfiguration: withBody(ctx, limit: 64 << 10, putObjectLockConfiguration)
        case .getObjectRetention: bodiless(ctx, getObjectRetention)
        case .putObjectRetention: withBody(ctx, limit: 64 << 10, putObjectRetention)
        case .getObjectLegalHold: bodiless(ctx, getObjectLegalHold)
        case .putObjectLegalHold: withBody(ctx, limit: 64 << 10, putObjectLegalHold)
        case .listObjectsV1: bodiless(ctx) { self.listObjects($0, version: .v1) }
        case .listObjectsV2: bodiless(ctx) { self.listObjects($0, version: .v2) }
        case .listObjectVersions: bodiless(ctx, listObjectVersions)
        case .deleteObjects: withBody(ctx, limit: 2 << 20, deleteObjects)
        case .putObject: putObject(ctx)
        case .copyObject: bodiless(ctx, copyObject)
        case .getObject, .headObject: bodiless(ctx, getObject)
        case .deleteObject: bodiless(ctx, deleteObject)
        case .createMultipartUpload: bodiless(ctx, createMultipartUpload)
        case .uploadPart: uploadPart(ctx)
        case .uploadPartCopy: bodiless(ctx, uploadPartCopy)
        case .completeMultipartUpload: withBody(ctx, limit: 4 << 20, completeMultipartUpload)
        case .abortMultipartUpload: bodiless(ctx, abortMultipartUpload)
        case .listParts: bodiless(ctx, listParts)
        case .getObjectTagging: bodiless(ctx, getObjectTagging)
        case .putObjectTagging: withBody(ctx, limit: 64 << 10, putObjectTagging)
        case .deleteObjectTagging: bodiless(ctx, deleteObjectTagging)
        case .restoreObject: withBody(ctx, limit: 64 << 10, restoreObject)
        case .listMultipartUploads: bodiless(ctx, listMultipartUploads)
        case .postObject: postObject(ctx)
        case .getBucketCors: bodiless(ctx, getBucketCors)
        case .putBucketCors: withBody(ctx, limit: 64 << 10, putBucketCors)
        case .deleteBucketCors: bodiless(ctx, deleteBucketCors)
        case .preflight: .respond(preflight(ctx))
        case .getBucketConfig(let kind): bodiless(ctx) { self.getBucketConfig(kind, $0) }
        case .putBucketConfig(let kind): withBody(ctx, limit: 1 << 20) { self.putBucketConfig(kind, $0, body: $1) }
        case .deleteBucketConfig(let kind): bodiless(ctx) { self.deleteBucketConfig(kind, $0) }
        case .getBucketPolicyStatus: bodiless(ctx, getBucketPolicyStatus)
        case .getBucketVersioning: bodiless(ctx, getBucketVersioning)
        case .putBucketVersioning: withBody(ctx, limit: 64 << 10, putBucketVersioning)
        }
    }

    /// An operation without a request body. A body sent anyway is still read and checked against
    /// the signed payload hash, as S3 does.
    private func bodiless(_ ctx: S3Context, _ handler: @escaping @Sendable (S3Context) -> Result<Response, S3Error>) -> RequestDisposition {
        if S3Service.declaresBody(ctx.request) {
            return withBody(ctx, limit: 1 << 20) { c, _ in handler(c) }
        }
        do throws(SigV4Failure) {
            _ = try ctx.payload?.finish()
        } catch {
            return .respond(complete(ctx, .failure(.signature(error))))
        }
        return .respond(complete(ctx, handler(ctx)))
    }

    /// An operation with a small body (XML), collected and verified against the signature first.
    private func withBody(_ ctx: S3Context, limit: Int,
                          _ handler: @escaping @Sendable (S3Context, [UInt8]) -> Result<Response, S3Error>) -> RequestDisposition {
        let tooLarge = S3ErrorRenderer.response(.entityTooLarge(proposedSize: Int64(ctx.header("Content-Length") ?? "") ?? Int64(limit + 1),
                                                                maxSize: Int64(limit)),
                                                requestID: ctx.request.id, hostID: ctx.hostID, method: ctx.request.method)
        return .collect(limit: limit, tooLarge: addCommonHeaders(tooLarge, ctx)) { [self] request in
            var decoded: [UInt8] = []
            if let payload = ctx.payload {
                let failure = request.body.withUnsafeBytes { raw -> SigV4Failure? in
                    do throws(SigV4Failure) {
                        try payload.feed(raw) { decoded.append(contentsOf: $0) }
                        _ = try payload.finish()
                        return nil
                    } catch {
                        return error
                    }
                }
                if let failure { return complete(ctx, .failure(.signature(failure))) }
            } else {
                decoded = request.body
            }
            return complete(ctx, handler(ctx, decoded))
        }
    }

    /// Whether the request announces a body (a positive Content-Length or chunked framing).
    static func declaresBody(_ request: Request) -> Bool {
        if let te = request.headers["Transfer-Encoding"], !te.isEmpty { return true }
        if let cl = request.headers["Content-Length"], let n = S3Service.contentLength(cl), n > 0 { return true }
        return false
    }

    /// A Content-Length value as a number (surrounding white space allowed); plain digits skip
    /// Foundation's trimming, which bridges to NSString on every request.
    static func contentLength(_ text: String) -> Int64? {
        if !text.isEmpty && text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Int64(text) }
        return Int64(text.trimmingCharacters(in: .whitespaces))
    }

    /// Adds S3's common headers, renders an error, and records the request in the log.
    func complete(_ ctx: S3Context, _ result: consuming Result<Response, S3Error>) -> Response {
        var response: Response
        var error: S3Error?
        // Consumed: the handler's response is moved, so its header array is this answer's alone
        // and the common headers go into it in place.
        switch consume result {
        case .success(let r): response = r
        case .failure(let e):
            error = e
            response = S3ErrorRenderer.response(e, requestID: ctx.request.id, hostID: ctx.hostID, method: ctx.request.method)
        }
        addCommonHeaders(&response, ctx)
        record(ctx, status: response.status, error: error)
        if let op = ctx.operation { response.logFields.append(("s3.operation", .string(op.name))) }
        if let error {
            response.logFields.append(("s3.error", .string(error.code)))
            if let d = error.diagnosis { response.logFields.append(("s3.diagnosis", .string(d))) }
        }
        return response
    }

    /// Records a request whose body the client abandoned.
    func recordAbandoned(_ ctx: S3Context) {
        record(ctx, status: 499, error: nil)
    }

    private func record(_ ctx: S3Context, status: Int, error: S3Error?) {
        requestLog.record(S3RequestLog.Entry(
            time: ctx.now, requestID: ctx.request.id, method: ctx.request.method, path: ctx.request.rawPath,
            operation: ctx.operation?.name, bucket: ctx.target.bucket, key: ctx.formKey ?? ctx.target.key, accessKey: ctx.accessKey,
            status: status, errorCode: error?.code, diagnosis: error?.diagnosis))
    }

    private func addCommonHeaders(_ response: Response, _ ctx: S3Context) -> Response {
        var r = response
        addCommonHeaders(&r, ctx)
        return r
    }

    /// S3's request ids and `Date` before the answer's own fields, its CORS fields and `Server`
    /// after them. Inserted into the answer's array (a new array with every field copied into it
    /// cost ~1k instructions a GET).
    private func addCommonHeaders(_ r: inout Response, _ ctx: S3Context) {
        let cors = corsHeaders(for: ctx)
        r.headers.reserveCapacity(r.headers.fields.count + 4 + cors.count)
        r.headers.insert("x-amz-id-2", ctx.hostID, at: 0)
        r.headers.insert("x-amz-request-id", ctx.request.id, at: 1)
        r.headers.insert("Date", dateHeader.value(for: clock.now()), at: 2)
        for (name, value) in cors { r.headers.add(name, value) }
        r.headers.add("Server", "AmazonS3")
    }

    /// Runs storage work, mapping S3 conditions to themselves and anything else to InternalError.
    func attempt<T>(_ ctx: S3Context, _ body: () throws -> T) -> Result<T, S3Error> {
        do {
            return .success(try body())
        } catch let e as S3Error {
            return .failure(e)
        } catch let f as SigV4Failure {
            return .failure(.signature(f))
        } catch let u as ObjectLock.Unreadable {
            return .failure(lockedUnreadable(ctx, u))
        } catch {
            logger.error("s3 internal error", [("requestId", .string(ctx.request.id)), ("error", .string("\(error)"))])
            return .failure(.internalError)
        }
    }

    /// The answer to a change of an object version whose lock settings are unreadable: a
    /// locked version's `AccessDenied` (fail closed), logged with what could not be read.
    func lockedUnreadable(_ ctx: S3Context, _ u: ObjectLock.Unreadable, key: String? = nil) -> S3Error {
        logger.error("s3: an object's Object Lock settings are unreadable; denying", [
            ("requestId", .string(ctx.request.id)), ("bucket", .string(ctx.bucket)), ("key", .string(key ?? ctx.key)),
            ("reason", .string(u.reason)),
        ])
        return .plain(.objectLocked)
    }

    /// `x-amz-id-2`: derived from the request id so it costs no randomness (and `--seed` runs
    /// stay reproducible), shaped like S3's base64 host ids (56 bytes). The id is opaque, so the
    /// derivation need not be cryptographic: a SplitMix64 stream seeded with the id's FNV-1a hash
    /// costs a few hundred instructions where two SHA-256 digests cost several thousand. The bytes
    /// go to the encoder from the stack: through `Data` and Foundation's encoder the id cost ~4,000
    /// instructions per request, more than its derivation.
    static func hostID(for requestID: String) -> String {
        var seed: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in requestID.utf8 { seed = (seed ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &words) { raw in
            let w = raw.bindMemory(to: UInt64.self)
            for i in 0..<7 {
                seed &+= 0x9E37_79B9_7F4A_7C15
                var z = seed
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                w[i] = z.littleEndian  // the bytes least significant first, as they were always appended
            }
            return StandardBase64.encode(UnsafeRawBufferPointer(raw))
        }
    }
}

/// An HTTP date remembered for its second: the `Date` of every answer is formatted once per second
/// rather than for each, and so is the `Last-Modified` of an object read again and again.
final class HTTPDateCache: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var second = Int64.min
    private var text = ""

    /// `now.httpDate`.
    func value(for now: Instant) -> String {
        let s = now.unixSeconds
        lock.lock()
        defer { lock.unlock() }
        if s != second {
            second = s
            text = now.httpDate
        }
        return text
    }
}

/// A value behind a lock (for the few settings that change after start).
final class LockedValue<T: Sendable>: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value: T

    init(_ value: T) { self.value = value }

    func get() -> T {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set(_ newValue: T) {
        lock.lock()
        value = newValue
        lock.unlock()
    }
}
