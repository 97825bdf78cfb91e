import HearthCore
import HearthHTTP

/// An object's public URL, `{endpoint}/{bucket}/{object}` — what google-cloud-storage's
/// `blob.public_url` names (under `STORAGE_EMULATOR_HOST`, the emulator) and where a browser
/// fetches a public object. It is the one place Hearth enforces legacy ACLs and bucket IAM:
/// a request without credentials reads an object only when `allUsers` may (a READER or OWNER
/// entry in its ACL on a bucket without uniform access, or a bucket IAM binding that gives
/// `allUsers` `storage.objects.get`, and never when the bucket enforces public access
/// prevention; `PublicAccess` decides, failing closed on stored settings that do not decode);
/// anything else is GCS's 403 `AccessDenied`, for a missing object too, as GCS
/// does not tell an anonymous caller what exists. A request with an `Authorization` header is
/// the privileged caller of the JSON API. Errors are the XML API's.
extension StorageService {
    func disposePublicObject(_ request: Request, bucket: String, name: String) -> Response {
        do throws(StorageError) {
            guard request.method == "GET" else { throw .notFoundRoute(method: request.method, path: request.path) }
            let b = try existingBucket(bucket)
            if request.headers["Authorization"] != nil {
                let found = try readMedia(request, bucket: bucket, name: name) { _ in true }
                guard let o = found.object, let body = found.body else { throw .noSuchObject(bucket: bucket, name: name) }
                return mediaResponse(o, body)
            }
            let access = PublicAccess(bucket: b, owner: objectOwner)
            if case .unreadable(let column)? = access.bucketDecision {
                warnUnreadable(bucket: bucket, name: name, column: column)
                throw .anonymousAccessDenied
            }
            var decision = PublicAccess.Decision.denied
            let found = try readMedia(request, bucket: bucket, name: name) { o in
                decision = access.decide(o)
                return decision == .allowed
            }
            if let o = found.object, let body = found.body { return mediaResponse(o, body) }
            if case .unreadable(let column) = decision { warnUnreadable(bucket: bucket, name: name, column: column) }
            if found.object == nil && access.bucketIsPublic { throw .noSuchObject(bucket: bucket, name: name) }
            throw .anonymousAccessDenied
        } catch {
            return error.xmlResponse
        }
    }

    /// A refusal because stored access control is unreadable: the operator must learn which row to mend.
    private func warnUnreadable(bucket: String, name: String, column: String) {
        logger.warning("storage: stored access control is unreadable; denying the anonymous read",
                       [("bucket", .string(bucket)), ("object", .string(name)), ("column", .string(column))])
    }
}
