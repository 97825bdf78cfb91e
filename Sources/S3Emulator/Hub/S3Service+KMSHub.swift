import HearthCore
import HearthHTTP

/// The key ring's hub endpoints (docs/s3.md, *Server-side encryption*):
/// - `POST /emulator/v1/s3/kms/keys` `{"accessKeyId"?, "keyId"?, "alias"?, "description"?}` creates
///   a key for the account of `accessKeyId` (the first configured key's by default) → the key;
/// - `GET /emulator/v1/s3/kms/keys[?accessKeyId=…]` lists the keys (the AWS-managed `aws/s3`
///   keys among them, once used). Key material never leaves the process.
extension S3Service {
    func registerKMSRoutes(_ hub: Router) {
        hub.post("/emulator/v1/s3/kms/keys") { [self] request, _ in createKMSKeyRoute(request) }
        hub.get("/emulator/v1/s3/kms/keys") { [self] request, _ in
            var account: String?
            if let accessKey = request.query("accessKeyId") {
                guard let a = accounts.account(accessKey: accessKey) else {
                    return S3Service.hubError(400, "INVALID_ARGUMENT", "accessKeyId \(accessKey) is not a configured S3 key")
                }
                account = a.accountID
            }
            do {
                return .json(.object(["keys": .array(try keyRing.keys(account: account).map(kmsKeyJSON))]))
            } catch {
                logger.error("s3 key ring read failed", [("error", .string("\(error)"))])
                return S3Service.hubError(500, "INTERNAL", "key ring read failed")
            }
        }
    }

    private func createKMSKeyRoute(_ request: Request) -> Response {
        let body: JSON
        do {
            body = request.body.isEmpty ? .object([:]) : try JSON.parse(request.body)
        } catch {
            return S3Service.hubError(400, "INVALID_ARGUMENT", "body must be JSON: \(error)")
        }
        var account = accounts.primary
        if let accessKey = body["accessKeyId"]?.stringValue {
            guard let a = accounts.account(accessKey: accessKey) else {
                return S3Service.hubError(400, "INVALID_ARGUMENT", "accessKeyId \(accessKey) is not a configured S3 key")
            }
            account = a
        }
        switch createKMSKey(account: account.accountID, keyID: body["keyId"]?.stringValue, alias: body["alias"]?.stringValue,
                            description: body["description"]?.stringValue) {
        case .success(let key): return .json(kmsKeyJSON(key))
        case .failure(let refused): return S3Service.hubError(400, "INVALID_ARGUMENT", refused.message)
        }
    }

    /// Why a key could not be created, said for a person.
    struct KMSKeyRefused: Error {
        let message: String
    }

    /// Creates a key (the hub endpoint and the `s3KmsKeys` configuration).
    func createKMSKey(account: String, keyID: String?, alias: String?, description: String?) -> Result<KMSKeyRing.Key, KMSKeyRefused> {
        if let keyID, keyID.isEmpty || keyID.count > 256 || keyID.contains("/") || keyID.contains(":") {
            return .failure(KMSKeyRefused(message: "keyId must be 1-256 characters without '/' or ':'"))
        }
        do {
            switch try keyRing.create(account: account, keyID: keyID, alias: alias, description: description, ids: ids, now: clock.now()) {
            case .success(let key): return .success(key)
            case .failure(.keyIDTaken(let id)): return .failure(KMSKeyRefused(message: "key \(id) already exists with another account or alias"))
            case .failure(.aliasTaken(let a)): return .failure(KMSKeyRefused(message: "alias \(a) already names another key of this account"))
            case .failure(.badAlias(let a)): return .failure(KMSKeyRefused(message: "alias \(a) must start with alias/ and not alias/aws/"))
            }
        } catch {
            logger.error("s3 key ring write failed", [("error", .string("\(error)"))])
            return .failure(KMSKeyRefused(message: "key ring write failed: \(error)"))
        }
    }

    private func kmsKeyJSON(_ key: KMSKeyRing.Key) -> JSON {
        var o = JSONObject([("keyId", .string(key.keyID)), ("arn", .string(keyRing.arn(key))), ("accountId", .string(key.account))])
        if let alias = key.alias { o["alias"] = .string(alias) }
        if let d = key.description { o["description"] = .string(d) }
        o["createdAt"] = .string(key.createdAt.rfc3339(fractionDigits: 3))
        return .object(o)
    }
}
