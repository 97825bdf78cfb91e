import Foundation
import HearthCore
import HearthHTTP

/// Uploads through the JSON API (`/upload/storage/v1/b/{bucket}/o`): `uploadType=media`,
/// `multipart` and `resumable` (session URI, `Content-Range` chunks, 308 with `Range`).
extension StorageService {
    func disposeUpload(_ request: Request, bucket: String) -> RequestDisposition {
        if let uploadID = request.query("upload_id") {
            switch request.method {
            case "PUT", "POST": return disposeResumableChunk(request, uploadID: uploadID)
            case "DELETE":
                return .respond(cancelUpload(uploadID).map { _ in Response(status: 499) } ?? StorageError.noSuchUpload(uploadID).gcsResponse)
            default: return .respond(StorageError.notFoundRoute(method: request.method, path: request.path).gcsResponse)
            }
        }
        guard request.method == "POST" else {
            return .respond(StorageError.notFoundRoute(method: request.method, path: request.path).gcsResponse)
        }
        switch request.query("uploadType") ?? "media" {
        case "media":
            guard let name = request.query("name") else { return .respond(StorageError.required("Required parameter 'name' is missing.").gcsResponse) }
            do throws(StorageError) {
                try checkNames(bucket: bucket, name: name)
                let conditions = try Preconditions(query: request.query)
                let acl = try ObjectACLChoice(query: request.query, acl: nil)
                try refuseLegacyACLEarly(acl, bucket: bucket)
                var meta = ObjectMetadata()
                meta.contentType = request.headers["Content-Type"]
                let digest = ObjectDigest()
                return .stream(BlobUploadConsumer(service: self, digest: digest, finish: { [self] writer in
                    respond { () throws(StorageError) in
                        let d = digest.finalize()
                        let draft = draft(bucket: bucket, name: name, metadata: meta, size: writer.size, md5: d.md5, crc32c: d.crc32c)
                        let stored = try store(draft, body: .writer(writer), conditions: conditions, acl: acl)
                        return stored.gcsResource(base: baseURL(request), access: try accessView(request, bucket: bucket, otherwise: false))
                    }
                }, onError: { [self] e in internalError(e) }))
            } catch {
                return .respond(error.gcsResponse)
            }
        case "multipart":
            return disposeMultipart(request, bucket: bucket, api: .gcs)
        case "resumable":
            return collectJSON(request) { [self] req in
                do throws(StorageError) {
                    let u = try startResumable(req, bucket: bucket, api: "gcs", name: req.query("name"),
                                               declaredSize: req.headers["X-Upload-Content-Length"].flatMap(Int64.init),
                                               contentType: req.headers["X-Upload-Content-Type"])
                    var h = HTTPHeaders()
                    h.set("Location", "\(baseURL(req))/upload/storage/v1/b/\(StorageURL.encode(bucket))/o?uploadType=resumable&upload_id=\(u.id)")
                    h.set("X-GUploader-UploadID", u.id)
                    return Response(status: 200, headers: h)
                } catch {
                    return error.gcsResponse
                }
            }
        default:
            return .respond(StorageError.invalid("Invalid upload type: \(request.query("uploadType") ?? "")").gcsResponse)
        }
    }

    /// Runs `body` and answers its JSON, or its error in the JSON API's form.
    func respond(_ body: () throws(StorageError) -> JSON) -> Response {
        do throws(StorageError) { return .json(try body()) } catch { return error.gcsResponse }
    }

    func internalError(_ e: any Error) -> Response {
        logger.error("storage: upload failed", [("error", .string("\(e)"))])
        return StorageError.internalError.gcsResponse
    }

    /// A multipart upload (metadata part + media part), for either API: the media part streams
    /// into the blob store as it arrives; the object is made (and, for the Firebase API, judged by
    /// the rules) once the body is complete.
    func disposeMultipart(_ request: Request, bucket: String, api: API, caller: StorageCaller = .owner) -> RequestDisposition {
        let render: (StorageError) -> Response = { api == .firebase ? $0.firebaseResponse : $0.gcsResponse }
        guard let boundary = MultipartRelated.boundary(contentType: request.headers["Content-Type"] ?? "") else {
            return .respond(render(.invalid("Invalid multipart request: the Content-Type must be multipart/related with a boundary.")))
        }
        if api == .gcs {
            do throws(StorageError) { try refuseLegacyACLEarly(try ObjectACLChoice(query: request.query, acl: nil), bucket: bucket) } catch {
                return .respond(render(error))
            }
        }
        return .stream(MultipartUploadConsumer(service: self, boundary: boundary, finish: { [self] parts, writer in
            do throws(StorageError) {
                let (object, namedACL) = try multipartUpload(request, bucket: bucket, api: api, caller: caller, parts: parts, writer: writer)
                if api == .firebase { return .json(object.firebaseMetadata) }
                // objects.insert answers noAcl, unless the resource named an ACL.
                return .json(object.gcsResource(base: baseURL(request), access: try accessView(request, bucket: bucket, otherwise: namedACL)))
            } catch {
                return render(error)
            }
        }, onError: { [self] (e: any Error) -> Response in
            if let e = e as? StorageError { return render(e) }
            return internalError(e)
        }))
    }

    /// Makes the object of a complete multipart body whose media part is in `writer` (and tells
    /// whether its resource named an ACL).
    private func multipartUpload(_ request: Request, bucket: String, api: API, caller: StorageCaller,
                                 parts: MultipartRelated, writer: StorageBlobWriter) throws(StorageError) -> (StoredObject, Bool) {
        let metaJSON: JSON
        do { metaJSON = parts.metadata.isEmpty ? .object([:]) : try JSON.parse(parts.metadata) } catch {
            throw .invalid("Invalid JSON payload received in the metadata part. \(error)")
        }
        var meta = try ObjectMetadata(json: metaJSON)
        if meta.contentType == nil { meta.contentType = parts.mediaContentType }
        guard let name = request.query("name") ?? meta.name else { throw .required("Required parameter 'name' is missing.") }
        try checkNames(bucket: bucket, name: name)
        let conditions = try Preconditions(query: request.query)
        let d = writer.finalizeDigests()
        let crc = Self.crcValue(d.checksums[.crc32c])
        try meta.verify(md5: d.md5, crc32c: crc)
        var draft = draft(bucket: bucket, name: name, metadata: meta, size: writer.size, md5: d.md5, crc32c: crc)
        if api == .firebase { draft = withDownloadToken(draft) }
        // The Firebase API has no ACLs: its objects get the bucket's default, as production's.
        let acl = api == .gcs ? try ObjectACLChoice(query: request.query, acl: meta.acl) : .bucketDefault
        let stored = try store(draft, body: .writer(writer), conditions: conditions, acl: acl,
                               authorize: api == .firebase ? { [self] (o, old) throws(StorageError) in try authorizeWrite(o, old, caller: caller) } : nil)
        return (stored, meta.acl != nil)
    }

    /// A `predefinedAcl` on a bucket with uniform access is refused before the body is read (the
    /// store refuses it again at the end, in the transaction that would make the object).
    private func refuseLegacyACLEarly(_ acl: ObjectACLChoice, bucket: String) throws(StorageError) {
        guard acl.isLegacyACL, let b = try read({ c in try StorageStore.bucket(c, bucket) }) else { return }
        if b.uniformAccess { throw .uniformObjectACL("insert") }
    }

    /// storage.rules' `create` or `update` for an upload of `object` over `existing`.
    func authorizeWrite(_ object: StoredObject, _ existing: StoredObject?, caller: StorageCaller) throws(StorageError) {
        try authorize(existing == nil ? .create : .update, caller: caller, bucket: object.bucket, name: object.name,
                      requestResource: object.rulesResource, resource: existing)
    }

    /// Opens a resumable upload session.
    func startResumable(_ request: Request, bucket: String, api: String, name: String?, declaredSize: Int64?,
                        contentType: String?, extra: JSON = .object([:])) throws(StorageError) -> ResumableUpload {
        let body = try parseJSON(request)
        var meta = try ObjectMetadata(json: body)
        guard let name = name ?? meta.name else { throw .required("Required parameter 'name' is missing.") }
        try checkNames(bucket: bucket, name: name)
        var resource = body.objectValue ?? JSONObject()
        if meta.contentType == nil, let contentType {
            meta.contentType = contentType
            resource = JSONObject(resource.members.filter { $0.0 != "contentType" } + [("contentType", .string(contentType))])
        }
        if let declaredSize, declaredSize < 0 { throw .invalid("Invalid upload length: \(declaredSize)") }
        var conditions = try Preconditions(query: request.query).json.objectValue ?? JSONObject()
        for (k, v) in extra.objectValue ?? JSONObject() { conditions = JSONObject(conditions.members + [(k, v)]) }
        // The ACL the object will get, kept with the session's preconditions (the JSON API only).
        let acl = api == "gcs" ? try ObjectACLChoice(query: request.query, acl: meta.acl) : .bucketDefault
        if acl.isLegacyACL { conditions["acl"] = acl.json }
        // objects.insert answers noAcl unless the resource names an ACL or the request asks for
        // `projection=full`; the session's last chunk gives that answer, so the choice is kept.
        if api == "gcs" && Self.fullProjection(request, otherwise: meta.acl != nil) { conditions["projection"] = .string("full") }
        let u = ResumableUpload(id: ids.alphanumeric(40), bucket: bucket, name: name, api: api, resource: .object(resource),
                                declaredSize: declaredSize, received: 0, conditions: .object(conditions))
        let now = clock.now()
        try write { c in
            guard let b = try StorageStore.bucket(c, bucket) else { throw StorageError.noSuchBucket(bucket) }
            // Refused at the start, before any byte is sent, as a one-shot upload would be at its end.
            if acl.isLegacyACL && b.uniformAccess { throw StorageError.uniformObjectACL("insert") }
            try StorageStore.createUpload(c, u, now: now)
        }
        return u
    }

    /// The object a completed session made (nil: it was replaced or deleted since).
    func completedObject(_ u: ResumableUpload) throws(StorageError) -> StoredObject? {
        guard let g = u.finalGeneration else { return nil }
        let o = try read { c in try StorageStore.object(c, bucket: u.bucket, name: u.name) }
        return o?.generation == g ? o : nil
    }

    /// Deletes a session; nil when there is none.
    func cancelUpload(_ id: String) -> Void? {
        try? write { c -> Void? in
            guard try StorageStore.upload(c, id) != nil else { return nil }
            try StorageStore.deleteUpload(c, id)
            return ()
        }.map { uploadDigests.drop(id) }
    }

    /// A chunk PUT to a JSON API session URI (`Content-Range: bytes a-b/total`, or `bytes */total`
    /// to ask how much has been persisted).
    private func disposeResumableChunk(_ request: Request, uploadID: String) -> RequestDisposition {
        let session: ResumableUpload
        do throws(StorageError) {
            guard let u = try read({ c in try StorageStore.upload(c, uploadID) }), u.api == "gcs" else { throw .noSuchUpload(uploadID) }
            session = u
        } catch {
            return .respond(error.gcsResponse)
        }
        if session.finalGeneration != nil {
            // Every request to a completed session answers with its object, as GCS does.
            do throws(StorageError) {
                guard let o = try completedObject(session) else { throw .noSuchObject(bucket: session.bucket, name: session.name) }
                return .respond(.json(o.gcsResource(base: baseURL(request), access: try sessionAccessView(request, session))))
            } catch {
                return .respond(error.gcsResponse)
            }
        }
        let range: ContentRange
        if let header = request.headers["Content-Range"] {
            guard let r = ContentRange(header) else {
                return .respond(StorageError.invalid("Invalid Content-Range header: \(header)").gcsResponse)
            }
            range = r
        } else {
            range = ContentRange(first: session.received, last: nil, total: nil)
        }
        if let total = range.total, let declared = session.declaredSize, total != declared {
            return .respond(StorageError.sizeMismatch(declared: declared, received: total).gcsResponse)
        }
        guard let first = range.first else {
            // A status query.
            return .respond(chunkStatus(request, session, total: range.total))
        }
        if first > session.received {
            return .respond(StorageError.wrongOffset(expected: session.received, got: first).gcsResponse)
        }
        let digest = uploadDigests.begin(session.id, at: session.received)
        return .stream(BlobUploadConsumer(service: self, skip: session.received - first, digest: digest?.digest, finish: { [self] writer in
            do throws(StorageError) {
                let got = writer.size + (session.received - first)
                if let last = range.last, last - first + 1 != got {
                    throw .sizeMismatch(declared: last - first + 1, received: got)
                }
                if range.last == nil, got != 0, range.total == nil {
                    throw .invalid("Invalid Content-Range: a chunk with data names its bytes (bytes a-b/total).")
                }
                let updated = try appendPiece(session, writer: writer, digest: digest)
                return chunkStatus(request, updated, total: range.total)
            } catch {
                if let digest { uploadDigests.end(session.id, digest, persisted: nil) }
                return error.gcsResponse
            }
        }, onError: { [self] e in
            if let digest { uploadDigests.end(session.id, digest, persisted: nil) }
            return internalError(e)
        }, onAbandon: { [self] in if let digest { uploadDigests.end(session.id, digest, persisted: nil) } }))
    }

    /// Persists a chunk's bytes as the session's next piece; the chunk is acknowledged only after this commit.
    func appendPiece(_ session: ResumableUpload, writer: StorageBlobWriter, digest: UploadDigests.Entry?) throws(StorageError) -> ResumableUpload {
        guard writer.size > 0 else {
            if let digest { uploadDigests.end(session.id, digest, persisted: session.received) }
            return session
        }
        let updated: ResumableUpload = try write { c in
            // Another request may have added this range meanwhile; the offset must still be ours.
            guard var u = try StorageStore.upload(c, session.id) else { throw StorageError.noSuchUpload(session.id) }
            guard u.received == session.received else { throw StorageError.wrongOffset(expected: u.received, got: session.received) }
            let blob = try writer.commit(c)
            try StorageStore.addPiece(c, uploadID: u.id, offset: u.received, blobID: blob, size: writer.size)
            u.received += writer.size
            return u
        }
        writer.committed()
        if let digest { uploadDigests.end(session.id, digest, persisted: updated.received) }
        return updated
    }

    /// After a chunk (or a query): 308 with the persisted `Range`, or the object once `total` bytes are in.
    private func chunkStatus(_ request: Request, _ u: ResumableUpload, total: Int64?) -> Response {
        if let total, u.received >= total {
            guard u.received == total else { return StorageError.sizeMismatch(declared: total, received: u.received).gcsResponse }
            do throws(StorageError) {
                let o = try finalize(u, caller: .owner)
                return .json(o.gcsResource(base: baseURL(request), access: try sessionAccessView(request, u)))
            } catch {
                return error.gcsResponse
            }
        }
        var h = HTTPHeaders()
        if u.received > 0 { h.set("Range", "bytes=0-\(u.received - 1)") }
        h.set("X-GUploader-UploadID", u.id)
        h.set("Content-Length", "0")
        return Response(status: 308, headers: h)
    }

    /// What the answer with a session's object shows of access control: the projection chosen at
    /// the session's start, unless this request names one.
    private func sessionAccessView(_ request: Request, _ u: ResumableUpload) throws(StorageError) -> ObjectAccessView? {
        try accessView(request, bucket: u.bucket, otherwise: u.conditions["projection"]?.stringValue == "full")
    }

    /// Turns a session's pieces into the object (and ends the session) in one transaction.
    func finalize(_ u: ResumableUpload, caller: StorageCaller) throws(StorageError) -> StoredObject {
        if let declared = u.declaredSize, declared != u.received { throw .sizeMismatch(declared: declared, received: u.received) }
        let pieces = try read { c in try StorageStore.pieces(c, uploadID: u.id) }
        let d: (md5: [UInt8], crc32c: UInt32)
        if let running = uploadDigests.take(u.id, received: u.received) { d = running } else { d = try digests(of: pieces) }
        let meta = try ObjectMetadata(json: u.resource)
        try meta.verify(md5: d.md5, crc32c: d.crc32c)
        var draft = draft(bucket: u.bucket, name: u.name, metadata: meta, size: u.received, md5: d.md5, crc32c: d.crc32c)
        if u.api == "firebase" { draft = withDownloadToken(draft) }
        return try store(draft, body: .pieces(pieces), conditions: Preconditions(json: u.conditions),
                         acl: ObjectACLChoice(json: u.conditions["acl"]), authorize: u.api == "firebase" ? { [self] (o, old) throws(StorageError) in try authorizeWrite(o, old, caller: caller) } : nil,
                         cleanup: { c, o in
                             // Finalized by a concurrent request meanwhile: this one must not make a second generation.
                             guard try StorageStore.upload(c, u.id)?.finalGeneration == nil else { throw StorageError.uploadNotActive(u.id) }
                             try StorageStore.completeUpload(c, u.id, generation: o.generation)
                         })
    }
}

/// `Content-Range: bytes a-b/total`, `bytes a-b/*`, `bytes */total`, `bytes */*`.
struct ContentRange {
    var first: Int64?
    var last: Int64?
    var total: Int64?

    init(first: Int64?, last: Int64?, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    init?(_ header: String) {
        let h = header.trimmingCharacters(in: .whitespaces)
        guard h.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = h.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" { total = nil } else {
            guard let t = Int64(parts[1]), t >= 0 else { return nil }
            total = t
        }
        if parts[0] == "*" { return }
        let ab = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ab.count == 2, let a = Int64(ab[0]), let b = Int64(ab[1]), a >= 0, b >= a else { return nil }
        if let total, b >= total { return nil }
        first = a
        last = b
    }
}
