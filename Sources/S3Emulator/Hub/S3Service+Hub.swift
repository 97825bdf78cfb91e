import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// Adds the emulator-only S3 endpoints to the hub:
    /// - `DELETE /emulator/v1/s3` wipes every bucket and object;
    /// - `POST /emulator/v1/s3/presign` signs a URL (`{method, bucket, key, expiresSeconds, headers}` → `{url}`)
    ///   and remembers what it signed, for the signature diagnosis;
    /// - `GET /emulator/v1/s3/requests?limit=N` lists recent S3 requests, newest first;
    /// - `/emulator/v1/s3/kms/keys` creates and lists the key ring's KMS keys.
    public func registerHubRoutes(_ hub: Router) {
        registerKMSRoutes(hub)
        hub.delete("/emulator/v1/s3") { [self] _, _ in
            do {
                try reset()
                return .json(.object([:]))
            } catch {
                logger.error("s3 reset failed", [("error", .string("\(error)"))])
                return S3Service.hubError(500, "INTERNAL", "reset failed: \(error)")
            }
        }
        hub.post("/emulator/v1/s3/presign") { [self] request, _ in presignRoute(request) }
        hub.get("/emulator/v1/s3/requests") { [self] request, _ in
            let limit = request.query("limit").flatMap(Int.init) ?? 100
            let entries = requestLog.recent(limit: max(0, min(limit, configuration.requestLogCapacity)))
            return .json(.object(["requests": .array(entries.map(S3Service.json))]))
        }
    }

    static func hubError(_ status: Int, _ code: String, _ message: String) -> Response {
        .json(.object(["error": .object(["code": .int(Int64(status)), "status": .string(code), "message": .string(message)])]), status: status)
    }

    private func presignRoute(_ request: Request) -> Response {
        let body: JSON
        do {
            body = try JSON.parse(request.body)
        } catch {
            return S3Service.hubError(400, "INVALID_ARGUMENT", "body must be JSON: \(error)")
        }
        guard let bucket = body["bucket"]?.stringValue, !bucket.isEmpty, let key = body["key"]?.stringValue, !key.isEmpty else {
            return S3Service.hubError(400, "INVALID_ARGUMENT", "bucket and key are required strings")
        }
        let method = (body["method"]?.stringValue ?? "GET").uppercased()
        guard ["GET", "PUT", "HEAD", "DELETE", "POST"].contains(method) else {
            return S3Service.hubError(400, "INVALID_ARGUMENT", "method must be GET, PUT, HEAD, DELETE or POST")
        }
        let expires = Int(body["expiresSeconds"]?.intValue ?? 900)
        var headers: [String: String] = [:]
        if let h = body["headers"] {
            guard let object = h.objectValue else { return S3Service.hubError(400, "INVALID_ARGUMENT", "headers must be an object of strings") }
            for (name, value) in object {
                guard let v = value.stringValue else { return S3Service.hubError(400, "INVALID_ARGUMENT", "header \(name) must be a string") }
                headers[name.lowercased()] = v
            }
        }
        do {
            let url = try presignedURL(method: method, bucket: bucket, key: key, expiresSeconds: expires, signedHeaders: headers)
            return .json(.object(["url": .string(url), "expiresSeconds": .int(Int64(expires))]))
        } catch let e as S3PresignError {
            return S3Service.hubError(400, "INVALID_ARGUMENT", e.message)
        } catch {
            return S3Service.hubError(400, "INVALID_ARGUMENT", "\(error)")
        }
    }

    static func json(_ e: S3RequestLog.Entry) -> JSON {
        var o = JSONObject()
        o["time"] = .string(e.time.rfc3339(fractionDigits: 3))
        o["requestId"] = .string(e.requestID)
        o["method"] = .string(e.method)
        o["path"] = .string(e.path)
        if let v = e.operation { o["operation"] = .string(v) }
        if let v = e.bucket { o["bucket"] = .string(v) }
        if let v = e.key { o["key"] = .string(v) }
        if let v = e.accessKey { o["accessKeyId"] = .string(v) }
        o["status"] = .int(Int64(e.status))
        o["errorCode"] = e.errorCode.map(JSON.string) ?? .null
        o["diagnosis"] = e.diagnosis.map(JSON.string) ?? .null
        return .object(o)
    }
}
