import HearthCore
import HearthHTTP
import SecurityRules

/// Who sends a Firebase API request.
enum StorageCaller {
    /// `Authorization: Bearer owner`: bypasses rules, as in the Firebase emulator.
    case owner
    /// An end user (nil: signed out).
    case user(VerifiedIDToken?)
}

extension StorageService {
    /// The caller of a Firebase API request: `Firebase <ID token>` (what the SDKs send) or `Bearer <ID token>`.
    func caller(_ request: Request) throws(StorageError) -> StorageCaller {
        guard let header = request.headers["Authorization"]?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            return .user(nil)
        }
        let parts = header.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["firebase", "bearer"].contains(parts[0].lowercased()) else {
            throw .unauthenticated("Invalid authorization header; expected 'Firebase <ID token>'.")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        if token == "owner" { return .owner }
        do throws(IDTokenError) {
            return .user(try tokenVerifier.verify(idToken: token, projectID: configuration.projectID, checkRevoked: false))
        } catch {
            throw .unauthenticated(error.message)
        }
    }

    /// The rules path of an object (or a list prefix): `["b", bucket, "o", …name split at '/']`.
    /// Split at the `/` bytes, as Cloud Storage names are: splitting `Character`s left a `/`
    /// followed by a combining mark inside one segment, so `users/alice/x/\u{301}y` matched
    /// `/users/{uid}/{file}`, which no production rule matches it with.
    static func rulesPath(bucket: String, name: String) -> [String] {
        ["b", bucket, "o"] + name.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(Substring($0)) }
    }

    /// Judges a Firebase API request with storage.rules; throws 403 with the rules' reason when denied.
    /// A failed `firestore.get()` read denies whatever the rules said (fail closed).
    func authorize(_ method: RulesMethod, caller: StorageCaller, bucket: String, name: String,
                   requestResource: RulesValue? = nil, resource: StoredObject? = nil) throws(StorageError) {
        guard case .user(let token) = caller else { return }
        let operation = (method == .get || method == .list) ? (method == .list ? "LIST" : "READ") : "WRITE"
        switch rules.current {
        case .broken(let why):
            throw .permissionDenied(operation: operation, message: "Permission denied. No \(operation) permission.\n\(why)")
        case .ruleset(let ruleset, let coverage):
            let now = clock.now()
            let request = RulesRequest(
                method: method, path: Self.rulesPath(bucket: bucket, name: name),
                auth: token.map { RulesValue.auth(uid: $0.uid, claims: $0.claims) },
                time: .timestamp(seconds: now.unixSeconds, nanos: now.nanos),
                requestResource: requestResource, resource: resource.map(\.rulesResource))
            let lookup = FirestoreLookup(reader: firestore, projectID: configuration.projectID)
            let decision = ruleset.evaluate(request, lookup: lookup, coverage: coverage)
            if let failure = lookup.failure {
                logger.error("storage: a firestore.get() read failed; denying", [("error", .string(failure))])
                throw .permissionDenied(operation: operation, message: "Permission denied. No \(operation) permission.\nevaluation error: a Firestore document read by the rules could not be loaded.")
            }
            if !decision.allowed {
                throw .permissionDenied(operation: operation, message: "Permission denied. No \(operation) permission.\n" + decision.message)
            }
        }
    }
}

extension StoredObject {
    /// The object as storage.rules see it (`resource`, `request.resource`).
    var rulesResource: RulesValue {
        var m: RulesMap = [
            "name": .string(name), "bucket": .string(bucket), "generation": .int(generation),
            "metageneration": .int(metageneration), "size": .int(size),
            "timeCreated": .timestamp(seconds: timeCreated.unixSeconds, nanos: timeCreated.nanos),
            "updated": .timestamp(seconds: updated.unixSeconds, nanos: updated.nanos),
            "crc32c": .string(crc32cBase64), "etag": .string(etag),
            "contentType": .string(contentType ?? "application/octet-stream"),
            "contentDisposition": .string(contentDisposition ?? "inline"),
            "contentEncoding": .string(contentEncoding ?? "identity"),
            "contentLanguage": contentLanguage.map(RulesValue.string) ?? .null,
            "cacheControl": cacheControl.map(RulesValue.string) ?? .null,
        ]
        // A composite object has no MD5 in GCS, so the rules see no `md5Hash` (reading it is an
        // error, which denies) rather than an empty string no real object has.
        if !md5.isEmpty { m["md5Hash"] = .string(md5Base64) }
        m["metadata"] = .map(RulesMap(metadata.filter { $0.0 != Self.downloadTokensKey }.map { ($0.0, RulesValue.string($0.1)) }))
        return .map(m)
    }
}

/// `firestore.get()` / `firestore.exists()` through the Firestore seam; remembers a failed read.
final class FirestoreLookup: RulesDocumentLookup {
    let reader: (any FirestoreRulesReader)?
    let projectID: String
    private(set) var failure: String?

    init(reader: (any FirestoreRulesReader)?, projectID: String) {
        self.reader = reader
        self.projectID = projectID
    }

    func get(_ path: [String]) -> RulesValue? {
        guard let reader else {
            failure = "no Firestore is wired to the Storage emulator"
            return nil
        }
        do {
            return try reader.rulesResource(projectID: projectID, path: path)
        } catch {
            if failure == nil { failure = "\(error)" }
            return nil
        }
    }

    func getAfter(_ path: [String]) -> RulesValue? { get(path) }
}
