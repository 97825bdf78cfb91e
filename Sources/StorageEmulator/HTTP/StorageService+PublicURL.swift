import Foundation
import HearthBlobs
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
/// the privileged caller of the JSON API. Errors are the XML API's. `HEAD` answers GET's headers
/// without the body; the XML API's conditional headers apply to both (`xmlReadConditionFailure`).
extension StorageService {
    func disposePublicObject(_ request: Request, bucket: String, name: String) -> Response {
        let isHead = request.method == "HEAD"
        do throws(StorageError) {
            guard request.method == "GET" || isHead else { throw .notFoundRoute(method: request.method, path: request.path) }
            let b = try existingBucket(bucket)
            let anonymous = request.headers["Authorization"] == nil
            let access = PublicAccess(bucket: b, owner: objectOwner)
            if anonymous, case .unreadable(let column)? = access.bucketDecision {
                warnUnreadable(bucket: bucket, name: name, column: column)
                throw .anonymousAccessDenied
            }
            // Access first, then the request's conditions (RFC 9110 §13.2.2: before any Range).
            var decision = PublicAccess.Decision.allowed
            var unmet: StorageError?
            let found = try readMedia(request, bucket: bucket, name: name) { o in
                if anonymous { decision = access.decide(o) }
                guard decision == .allowed else { return false }
                unmet = Self.xmlReadConditionFailure(request, o)
                return unmet == nil
            }
            if let o = found.object, let body = found.body {
                var response = mediaResponse(o, body)
                response.headers.set("ETag", Self.xmlETag(o))
                return isHead ? Self.withoutBody(response) : response
            }
            if let o = found.object, let unmet {
                // A 304 names the representation it stands for (RFC 9110 §15.4.5).
                if unmet == .notModified {
                    var h = HTTPHeaders()
                    h.add("ETag", Self.xmlETag(o))
                    h.add("Last-Modified", o.updated.httpDate)
                    return Response(status: 304, headers: h)
                }
                throw unmet
            }
            if case .unreadable(let column) = decision { warnUnreadable(bucket: bucket, name: name, column: column) }
            if found.object == nil && (!anonymous || access.bucketIsPublic) { throw .noSuchObject(bucket: bucket, name: name) }
            throw .anonymousAccessDenied
        } catch {
            return isHead ? Self.withoutBody(error.xmlResponse) : error.xmlResponse
        }
    }

    /// The XML API's ETag: the MD5 in hex for an object that has one (GCS's "Hashes and ETags"
    /// page: the JSON API's etag differs); a composite object has no MD5 and keeps the JSON API's.
    static func xmlETag(_ o: StoredObject) -> String {
        o.md5.isEmpty ? "\"\(o.etag)\"" : "\"" + o.md5.map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// The XML API's read conditions (its "HEAD object" and "GET object" pages): a `generation`
    /// other than the live one is 404; `If-Match`, `If-Unmodified-Since`,
    /// `x-goog-if-generation-match` and `x-goog-if-metageneration-match` that fail are 412;
    /// `If-None-Match` naming the ETag (or, without it, an `If-Modified-Since` the object is not
    /// newer than) is 304. Dates that do not parse are ignored, as RFC 9110 asks.
    static func xmlReadConditionFailure(_ request: Request, _ o: StoredObject) -> StorageError? {
        if let g = request.query("generation"), Int64(g) != o.generation { return .noSuchObject(bucket: o.bucket, name: o.name) }
        if let g = request.headers["x-goog-if-generation-match"], Int64(g) != o.generation { return .preconditionFailed }
        if let m = request.headers["x-goog-if-metageneration-match"], Int64(m) != o.metageneration { return .preconditionFailed }
        let etag = xmlETag(o)
        func names(_ header: String) -> Bool {
            header.split(separator: ",").contains { item in
                var v = item.trimmingCharacters(in: .whitespaces)
                if v.hasPrefix("W/") { v.removeFirst(2) }
                return v == "*" || v == etag || "\"\(v)\"" == etag
            }
        }
        let modified = o.updated.unixMicros / 1_000_000
        if let h = request.headers["If-Match"] {
            if !names(h) { return .preconditionFailed }
        } else if let since = request.headers["If-Unmodified-Since"].flatMap(HTTPDate.parse), modified > since.unixMicros / 1_000_000 {
            return .preconditionFailed
        }
        if let h = request.headers["If-None-Match"] {
            if names(h) { return .notModified }
        } else if let since = request.headers["If-Modified-Since"].flatMap(HTTPDate.parse), modified <= since.unixMicros / 1_000_000 {
            return .notModified
        }
        return nil
    }

    /// A HEAD answer: GET's status and headers (Content-Length included), no body.
    static func withoutBody(_ r: Response) -> Response {
        var r = r
        switch r.body {
        case .empty, .push: break
        case .bytes(let b): r.body = .stream(length: Int64(b.count), source: EmptyBodySource())
        case .stream(let length, let source):
            source.close()
            r.body = .stream(length: length, source: EmptyBodySource())
        }
        return r
    }

    /// A refusal because stored access control is unreadable: the operator must learn which row to mend.
    private func warnUnreadable(bucket: String, name: String, column: String) {
        logger.warning("storage: stored access control is unreadable; denying the anonymous read",
                       [("bucket", .string(bucket)), ("object", .string(name)), ("column", .string(column))])
    }
}
