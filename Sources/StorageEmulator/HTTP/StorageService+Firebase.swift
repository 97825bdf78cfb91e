import Foundation
import HearthCore
import HearthHTTP
import SecurityRules

/// The Firebase Storage REST API the client SDKs use (`/v0/b/{bucket}/o…`), judged by storage.rules.
extension StorageService {
    func disposeFirebase(_ request: Request, route: StorageRoute) -> RequestDisposition {
        let caller: StorageCaller
        do throws(StorageError) { caller = try self.caller(request) } catch { return .respond(error.firebaseResponse) }
        switch (request.method, route) {
        case ("POST", .firebaseObjects(let bucket)), ("PUT", .firebaseObjects(let bucket)):
            return disposeFirebaseUpload(request, bucket: bucket, caller: caller)
        case ("POST", .firebaseObject(let bucket, let name)) where request.query("create_token") != nil || request.query("delete_token") != nil:
            return collectJSON(request) { [self] req in firebase { () throws(StorageError) in try tokenRequest(req, bucket: bucket, name: name, caller: caller) } }
        case ("GET", .firebaseObject(let bucket, let name)):
            return .respond(firebaseGet(request, bucket: bucket, name: name, caller: caller))
        case ("GET", .firebaseObjects(let bucket)):
            return .respond(firebase { () throws(StorageError) in try firebaseList(request, bucket: bucket, caller: caller) })
        case ("PATCH", .firebaseObject(let bucket, let name)):
            return collectJSON(request) { [self] req in
                firebase { () throws(StorageError) in
                    var meta = try ObjectMetadata(json: try parseJSON(req))
                    meta.keepsDownloadTokens = true
                    return try updateMetadata(bucket: bucket, name: name, conditions: try Preconditions(query: req.query), authorize: { [self] (next, current) throws(StorageError) in
                        try authorize(.update, caller: caller, bucket: bucket, name: name, requestResource: next.rulesResource, resource: current)
                    }) { o in
                        var o = o
                        meta.apply(to: &o, mergeMetadata: true)
                        return o
                    }.firebaseMetadata
                }
            }
        case ("DELETE", .firebaseObject(let bucket, let name)):
            return .respond(firebaseDelete(bucket: bucket, name: name, caller: caller))
        default:
            return .respond(StorageError.notFoundRoute(method: request.method, path: request.path).firebaseResponse)
        }
    }

    /// Runs `body` and answers its JSON, or its error in the Firebase API's form.
    func firebase(_ body: () throws(StorageError) -> JSON) -> Response {
        do throws(StorageError) { return .json(try body()) } catch { return error.firebaseResponse }
    }

    private func live(bucket: String, name: String) throws(StorageError) -> StoredObject? {
        try read { c -> StoredObject? in
            guard try StorageStore.bucketExists(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
            return try StorageStore.object(c, bucket: bucket, name: name)
        }
    }

    /// Metadata, or the bytes with `alt=media`. A download token that matches one of the object's
    /// tokens grants the download without rules (that is what download URLs are for); such a
    /// download reads metadata and bytes in one transaction.
    private func firebaseGet(_ request: Request, bucket: String, name: String, caller: StorageCaller) -> Response {
        do throws(StorageError) {
            let isMedia = request.query("alt") == "media"
            let object: StoredObject?
            if isMedia, let token = request.query("token") {
                let found = try readMedia(request, bucket: bucket, name: name) { $0.hasDownloadToken(token) }
                if let o = found.object, let body = found.body { return mediaResponse(o, body) }
                object = found.object
            } else {
                object = try live(bucket: bucket, name: name)
            }
            try authorize(.get, caller: caller, bucket: bucket, name: name, resource: object)
            guard let object else { throw StorageError.noSuchObject(bucket: bucket, name: name) }
            return isMedia ? try media(request, object) : .json(object.firebaseMetadata)
        } catch {
            return error.firebaseResponse
        }
    }

    private func firebaseList(_ request: Request, bucket: String, caller: StorageCaller) throws(StorageError) -> JSON {
        let prefix = request.query("prefix") ?? ""
        try authorize(.list, caller: caller, bucket: bucket, name: prefix)
        var q = ObjectListing.Query()
        q.prefix = prefix
        q.delimiter = request.query("delimiter") ?? ""
        q.pageToken = request.query("pageToken")
        q.maxResults = try Self.maxResults(request)
        let listing = try read { c -> ObjectListing in
            guard try StorageStore.bucketExists(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
            return try ObjectListing.list(c, bucket: bucket, q)
        }
        var m: [(String, JSON)] = [
            ("prefixes", .array(listing.prefixes.map { .string($0) })),
            ("items", .array(listing.items.map { .object(["name": .string($0.name), "bucket": .string($0.bucket)]) })),
        ]
        if let token = listing.nextPageToken { m.append(("nextPageToken", .string(token))) }
        return .object(JSONObject(m))
    }

    private func firebaseDelete(bucket: String, name: String, caller: StorageCaller) -> Response {
        do throws(StorageError) {
            let object = try live(bucket: bucket, name: name)
            try authorize(.delete, caller: caller, bucket: bucket, name: name, resource: object)
            guard let object else { throw StorageError.noSuchObject(bucket: bucket, name: name) }
            try write { c in
                guard let current = try StorageStore.object(c, bucket: bucket, name: name), current.generation == object.generation else {
                    throw StorageError.noSuchObject(bucket: bucket, name: name)
                }
                try StorageStore.delete(c, current)
            }
            return Response(status: 204)
        } catch {
            return error.firebaseResponse
        }
    }

    /// `create_token=true` adds a download token; `delete_token=T` removes one (owner only, as in production).
    private func tokenRequest(_ request: Request, bucket: String, name: String, caller: StorageCaller) throws(StorageError) -> JSON {
        guard case .owner = caller else { throw .permissionDenied(operation: "WRITE", message: "Missing admin credentials.") }
        let add = request.query("create_token")
        if let add, add != "true" { throw .invalid("create_token must be 'true'.") }
        let remove = request.query("delete_token")
        let token = ids.uuid()
        return try updateMetadata(bucket: bucket, name: name, conditions: try Preconditions(query: request.query)) { o in
            var tokens = o.downloadTokens
            if add != nil { tokens.append(token) }
            if let remove { tokens.removeAll { $0 == remove } }
            var o = o
            o.metadata.removeAll { $0.0 == StoredObject.downloadTokensKey }
            if !tokens.isEmpty { o.metadata.append((StoredObject.downloadTokensKey, tokens.joined(separator: ","))) }
            return o
        }.firebaseMetadata
    }

    // MARK: Uploads

    private func disposeFirebaseUpload(_ request: Request, bucket: String, caller: StorageCaller) -> RequestDisposition {
        let proto = request.headers["X-Goog-Upload-Protocol"]?.lowercased()
        // The SDKs send the protocol header on `start` only; the later commands go to the upload URL.
        if proto == "resumable" || request.headers["X-Goog-Upload-Command"] != nil { return disposeFirebaseResumable(request, bucket: bucket, caller: caller) }
        if proto == "multipart" || request.query("uploadType") == "multipart" {
            return disposeMultipart(request, bucket: bucket, api: .firebase, caller: caller)
        }
        // A raw body: the bytes are the object, its Content-Type the object's.
        guard let name = request.query("name") else { return .respond(StorageError.required("Required parameter 'name' is missing.").firebaseResponse) }
        do throws(StorageError) { try checkNames(bucket: bucket, name: name) } catch { return .respond(error.firebaseResponse) }
        var meta = ObjectMetadata()
        meta.contentType = request.headers["Content-Type"]
        let digest = ObjectDigest()
        return .stream(BlobUploadConsumer(service: self, digest: digest, finish: { [self] writer in
            firebase { () throws(StorageError) in
                let d = digest.finalize()
                let draft = withDownloadToken(draft(bucket: bucket, name: name, metadata: meta, size: writer.size, md5: d.md5, crc32c: d.crc32c))
                return try store(draft, body: .writer(writer), conditions: try Preconditions(query: request.query),
                                 authorize: { [self] (o, old) throws(StorageError) in try authorizeWrite(o, old, caller: caller) }).firebaseMetadata
            }
        }, onError: { [self] e in internalError(e) }))
    }

    /// The resumable protocol as the SDKs drive it: `X-Goog-Upload-Command: start`, then `upload`
    /// with `X-Goog-Upload-Offset`, `upload, finalize` or `finalize`, `query`, `cancel`.
    private func disposeFirebaseResumable(_ request: Request, bucket: String, caller: StorageCaller) -> RequestDisposition {
        let commands = Set((request.headers["X-Goog-Upload-Command"] ?? "").lowercased().split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) })
        if commands.contains("start") {
            return collectJSON(request) { [self] req in startFirebaseResumable(req, bucket: bucket, caller: caller) }
        }
        guard let id = request.query("upload_id") else {
            return .respond(StorageError.required("Required parameter 'upload_id' is missing.").firebaseResponse)
        }
        let session: ResumableUpload
        do throws(StorageError) {
            guard let u = try read({ c in try StorageStore.upload(c, id) }), u.api == "firebase", u.bucket == bucket else {
                throw .noSuchUpload(id)
            }
            session = u
        } catch {
            return .respond(error.firebaseResponse)
        }
        if session.finalGeneration != nil {
            // The final response may have been lost: any command on a completed upload reports it.
            do throws(StorageError) {
                guard let o = try completedObject(session) else { throw .noSuchObject(bucket: session.bucket, name: session.name) }
                var r = Response.json(o.firebaseMetadata)
                r.headers.set("X-Goog-Upload-Status", "final")
                r.headers.set("X-Goog-Upload-Size-Received", String(session.received))
                return .respond(r)
            } catch {
                return .respond(error.firebaseResponse)
            }
        }
        if commands.contains("cancel") {
            _ = cancelUpload(id)
            return .respond(uploadStatus("cancelled", received: session.received))
        }
        if commands.contains("query") {
            return .respond(uploadStatus("active", received: session.received))
        }
        guard commands.contains("upload") || commands.contains("finalize") else {
            return .respond(StorageError.invalid("Unknown X-Goog-Upload-Command: \(request.headers["X-Goog-Upload-Command"] ?? "")").firebaseResponse)
        }
        let finalizing = commands.contains("finalize")
        guard commands.contains("upload") else {
            return .respond(finishFirebase(session, request: request, caller: caller))
        }
        guard let offsetText = request.headers["X-Goog-Upload-Offset"], let offset = Int64(offsetText), offset >= 0 else {
            return .respond(StorageError.required("An upload command needs X-Goog-Upload-Offset.").firebaseResponse)
        }
        guard offset == session.received else {
            var r = StorageError.wrongOffset(expected: session.received, got: offset).firebaseResponse
            r.headers.set("X-Goog-Upload-Status", "active")
            r.headers.set("X-Goog-Upload-Size-Received", String(session.received))
            return .respond(r)
        }
        let digest = uploadDigests.begin(session.id, at: session.received)
        return .stream(BlobUploadConsumer(service: self, digest: digest?.digest, finish: { [self] writer in
            do throws(StorageError) {
                if let declared = session.declaredSize, session.received + writer.size > declared {
                    throw .sizeMismatch(declared: declared, received: session.received + writer.size)
                }
                let updated = try appendPiece(session, writer: writer, digest: digest)
                return finalizing ? finishFirebase(updated, request: request, caller: caller) : uploadStatus("active", received: updated.received)
            } catch {
                if let digest { uploadDigests.end(session.id, digest, persisted: nil) }
                return error.firebaseResponse
            }
        }, onError: { [self] e in
            if let digest { uploadDigests.end(session.id, digest, persisted: nil) }
            return internalError(e)
        }, onAbandon: { [self] in if let digest { uploadDigests.end(session.id, digest, persisted: nil) } }))
    }

    private func uploadStatus(_ status: String, received: Int64) -> Response {
        var h = HTTPHeaders()
        h.set("X-Goog-Upload-Status", status)
        h.set("X-Goog-Upload-Size-Received", String(received))
        return Response(status: 200, headers: h)
    }

    private func startFirebaseResumable(_ request: Request, bucket: String, caller: StorageCaller) -> Response {
        do throws(StorageError) {
            let declared = try request.headers["X-Goog-Upload-Header-Content-Length"].map { (v: String) throws(StorageError) -> Int64 in
                guard let n = Int64(v), n >= 0 else { throw .invalid("Invalid X-Goog-Upload-Header-Content-Length: \(v)") }
                return n
            }
            let contentType = request.headers["X-Goog-Upload-Header-Content-Type"]
            // Judge the upload on what it declares, so a denied upload is refused before any byte is sent.
            let body = try parseJSON(request)
            let name = request.query("name") ?? body["name"]?.stringValue
            if let name {
                var meta = try ObjectMetadata(json: body)
                if meta.contentType == nil { meta.contentType = contentType }
                let existing = try live(bucket: bucket, name: name)
                var probe = draft(bucket: bucket, name: name, metadata: meta, size: declared ?? 0, md5: [], crc32c: 0)
                probe.generation = StorageStore.nextGeneration(existing, now: clock.now())
                try authorizeWrite(probe, existing, caller: caller)
            }
            let u = try startResumable(request, bucket: bucket, api: "firebase", name: name, declaredSize: declared, contentType: contentType)
            var h = HTTPHeaders()
            h.set("X-Goog-Upload-Status", "active")
            h.set("X-Goog-Upload-URL", "\(baseURL(request))/v0/b/\(StorageURL.encode(bucket))/o?name=\(StorageURL.encode(u.name))&upload_id=\(u.id)&upload_protocol=resumable")
            h.set("X-Goog-Upload-Chunk-Granularity", "262144")
            h.set("X-GUploader-UploadID", u.id)
            return Response(status: 200, headers: h)
        } catch {
            return error.firebaseResponse
        }
    }

    private func finishFirebase(_ session: ResumableUpload, request: Request, caller: StorageCaller) -> Response {
        do throws(StorageError) {
            let object = try finalize(session, caller: caller)
            var r = Response.json(object.firebaseMetadata)
            r.headers.set("X-Goog-Upload-Status", "final")
            return r
        } catch {
            var r = error.firebaseResponse
            r.headers.set("X-Goog-Upload-Status", "active")
            return r
        }
    }
}
