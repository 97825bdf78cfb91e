/// The small protocols through which services use each other without importing each other.
///
/// The `hearth` executable wires concrete implementations (AuthEmulator verifies tokens, S3Emulator
/// stores objects, FirestoreEmulator writes documents) into the services that need them.

/// The claims of an ID token that verified, in the order the token carried them.
public struct VerifiedIDToken: Sendable, Equatable {
    /// The user's id (`sub` / `user_id`).
    public let uid: String
    /// Every claim of the payload, as issued.
    public let claims: JSONObject
    /// Whether the token was signed (`rs256`) rather than unsigned (`alg: none`).
    public let isSigned: Bool

    public init(uid: String, claims: JSONObject, isSigned: Bool) {
        self.uid = uid
        self.claims = claims
        self.isSigned = isSigned
    }
}

/// Why an ID token was refused.
public enum IDTokenError: Error, Sendable, Equatable {
    /// Not a JWT, bad base64 or JSON, or a wrong/absent signature.
    case malformed(String)
    /// `aud`/`iss` name another project.
    case wrongProject(String)
    /// `exp` is past on the emulator clock.
    case expired
    /// `iat` is after now on the emulator clock (it was moved back after the token was minted);
    /// production's verifiers require `iat` in the past.
    case issuedInFuture
    /// Issued before the user's `validSince` (refresh tokens revoked).
    case revoked
    /// The user is disabled.
    case disabled
    /// The user no longer exists.
    case userNotFound

    /// A short sentence for error bodies.
    public var message: String {
        switch self {
        case .malformed(let why): "Invalid ID token: \(why)"
        case .wrongProject(let why): "ID token has incorrect audience or issuer: \(why)"
        case .expired: "ID token has expired"
        case .issuedInFuture: "ID token was issued in the future: its \"iat\" claim is after now (was the clock moved back?)"
        case .revoked: "ID token has been revoked"
        case .disabled: "The user account has been disabled"
        case .userNotFound: "The user of this ID token does not exist"
        }
    }
}

/// Verifies Firebase ID tokens the way the current signing mode requires.
public protocol IDTokenVerifier: Sendable {
    /// Verifies `token` for `projectID`.
    /// - Parameter checkRevoked: also look the user up (disabled, deleted, revoked), as
    ///   `verify_id_token(check_revoked=True)` does.
    func verify(idToken token: String, projectID: String, checkRevoked: Bool) throws(IDTokenError) -> VerifiedIDToken
}

/// What the uploads API needs of the S3 store.
public protocol ObjectStore: Sendable {
    /// Size, Content-Type and ETag of an object, or nil when it does not exist.
    func headObject(bucket: String, key: String) -> StoredObjectInfo?
    /// Creates the bucket when missing.
    func ensureBucket(_ bucket: String) throws
    /// A SigV4-presigned URL for `method` on the object, signing `signedHeaders` (lower-case names)
    /// besides `host`; the store remembers what it signed for its signature diagnosis.
    func presignedURL(method: String, bucket: String, key: String, expiresSeconds: Int,
                      signedHeaders: [String: String]) throws -> String
}

/// Facts about one stored object.
public struct StoredObjectInfo: Sendable, Equatable {
    public let size: Int64
    public let contentType: String
    public let etag: String
    public let lastModified: Instant
    /// The object's storage class when it is archived (S3 GLACIER, DEEP_ARCHIVE) with no restored
    /// copy, so that reads of it are refused until a restore; nil for a readable object.
    public let archivedStorageClass: String?

    public init(size: Int64, contentType: String, etag: String, lastModified: Instant, archivedStorageClass: String? = nil) {
        self.size = size
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.archivedStorageClass = archivedStorageClass
    }
}

/// What the uploads API needs of Firestore: a server-side (admin) document write.
public protocol DocumentStore: Sendable {
    /// Writes the document at `path` (e.g. `users/u1/files/f1`) in `projectID`, replacing it.
    /// Values are Firestore REST `Value` JSON; a `"__serverTimestamp__": true` marker is not used:
    /// fields named in `serverTimestampFields` get the commit time.
    /// - Returns: the written document in REST JSON form.
    func setDocument(projectID: String, path: String, fields: JSONObject, serverTimestampFields: [String]) throws -> JSON
}

/// A document change as watchers outside Firestore see it (the UI's live data browser).
public struct DocumentChangeNotice: Sendable, Equatable {
    /// What happened to the document.
    public enum Kind: String, Sendable {
        case created, updated, deleted
        /// Every document of `database` is gone (nil database: of every database); `path` is empty.
        case cleared
    }

    /// `projects/p/databases/d`; nil only for a clear of every database.
    public var database: String?
    /// The document's path under the documents root (`users/u1`); empty for `cleared`.
    public var path: String
    public var kind: Kind
    /// The commit time.
    public var time: Instant

    public init(database: String?, path: String, kind: Kind, time: Instant) {
        self.database = database
        self.path = path
        self.kind = kind
        self.time = time
    }
}

/// Where watchers outside Firestore hear of committed document changes.
public protocol DocumentChangeFeed: Sendable {
    /// Calls `handler` with the documents of each commit, in commit order, on Firestore's delivery
    /// queue (never on the writer): keep it short. Watches last as long as the process.
    func watchDocumentChanges(_ handler: @escaping @Sendable ([DocumentChangeNotice]) -> Void)
    /// The same, for commits during which `wanted` is true (asked once per commit, first): a
    /// watcher with nobody to tell (the UI with no browser open) then costs no notices.
    func watchDocumentChanges(when wanted: @escaping @Sendable () -> Bool,
                              _ handler: @escaping @Sendable ([DocumentChangeNotice]) -> Void)
}

extension DocumentChangeFeed {
    public func watchDocumentChanges(when wanted: @escaping @Sendable () -> Bool,
                                     _ handler: @escaping @Sendable ([DocumentChangeNotice]) -> Void) {
        watchDocumentChanges { notices in if wanted() { handler(notices) } }
    }
}
