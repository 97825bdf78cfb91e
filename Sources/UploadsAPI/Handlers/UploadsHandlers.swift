import HearthCore
import HearthHTTP

/// The API's request handlers and everything they use; a value so route closures hold no cycle.
struct UploadsHandlers: Sendable {
    let configuration: UploadsConfiguration
    let clock: Clock
    let ids: IDGenerator
    let logger: Logger
    let authenticator: CallerAuthenticator
    let contentTypes: ContentTypePolicy
    let objectStore: any ObjectStore
    let documentStore: any DocumentStore

    /// Runs a handler and renders its error, the one place errors become responses.
    func respond(_ body: () throws(UploadsError) -> Response) -> Response {
        do { return try body() } catch {
            if error.httpStatus >= 500 { logger.error("uploads: \(error.message)") }
            return error.render()
        }
    }

    /// `GET /`: what this listener is.
    func describe() -> Response {
        .json(.object([
            "service": .string("hearth uploads API"),
            "projectId": .string(configuration.projectID),
            "bucket": .string(configuration.bucket),
            "requireAppCheck": .bool(configuration.requireAppCheck),
            "endpoints": .array([
                .string("POST /v1/uploads/presign"),
                .string("POST /v1/files/{fileId}/complete"),
                .string("POST /v1/files/presign-download"),
            ]),
        ]))
    }

    /// The lifetime a request asks for (`field`), defaulted and bounded by the configuration.
    func expiresSeconds(_ body: JSONBody, field: String) throws(UploadsError) -> Int {
        let max = configuration.maxExpiresSeconds
        guard let requested = try body.optionalInt(field) else { return min(configuration.defaultExpiresSeconds, max) }
        guard requested >= 1, requested <= Int64(max) else {
            throw .expiresOutOfRange(field: field, value: String(requested), max: max)
        }
        return Int(requested)
    }

    /// Presigns through the object store; its failures are server-side.
    func presignedURL(method: String, key: String, expiresSeconds: Int, signedHeaders: [String: String]) throws(UploadsError) -> String {
        do {
            return try objectStore.presignedURL(method: method, bucket: configuration.bucket, key: key,
                                                expiresSeconds: expiresSeconds, signedHeaders: signedHeaders)
        } catch {
            throw .backend("cannot presign \(method) for \(key): \(error)")
        }
    }

    /// The object's facts, or 404.
    func head(_ key: String) throws(UploadsError) -> StoredObjectInfo {
        guard let info = objectStore.headObject(bucket: configuration.bucket, key: key) else {
            throw .objectNotFound(key: key, bucket: configuration.bucket)
        }
        return info
    }
}
