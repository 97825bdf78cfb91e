import Foundation
import HearthBlobs
import HearthCore
import HearthCrypto
import HearthHTTP

extension S3Service {
    /// Smallest part except the last (5 MiB).
    static let minPartSize: Int64 = 5 << 20
    /// Largest part (5 GiB).
    static let maxPartSize: Int64 = 5 << 30

    static func partNumber(_ ctx: S3Context) -> Result<Int, S3Error> {
        let raw = ctx.query("partNumber") ?? ""
        guard let n = Int(raw), (1...10_000).contains(n) else {
            return .failure(.invalidArgument(message: "Part number must be an integer between 1 and 10000, inclusive", name: "partNumber", value: raw))
        }
        return .success(n)
    }

    /// The upload named by `uploadId`, which must belong to this bucket and key.
    func requireUpload(_ ctx: S3Context) -> Result<UploadRecord, S3Error> {
        let uploadID = ctx.query("uploadId") ?? ""
        if case .failure(let e) = requireBucket(ctx) { return .failure(e) }
        return attempt(ctx) { try store.upload(bucket: ctx.bucket, key: ctx.key, uploadID: uploadID) }.flatMap { u in
            u.map { .success($0) } ?? .failure(.noSuchUpload(uploadID: uploadID))
        }
    }

    // MARK: CreateMultipartUpload

    func createMultipartUpload(_ ctx: S3Context) -> Result<Response, S3Error> {
        if let e = S3Service.checkKey(ctx.key) { return .failure(e) }
        var metadata: ObjectMetadata
        switch UploadHeaders.metadata(from: ctx.request.headers.fields) {
        case .failure(let e): return .failure(e)
        case .success(let m): metadata = m
        }
        let owner: String
        switch newObjectSettings(ctx, &metadata) {
        case .failure(let e): return .failure(e)
        case .success(let o): owner = o
        }
        var algorithm: ChecksumAlgorithm?
        if let a = ctx.header("x-amz-checksum-algorithm") {
            guard let parsed = ChecksumAlgorithm(name: a) else { return .failure(S3Service.unsupportedChecksumAlgorithm) }
            algorithm = parsed
        }
        var type: String?
        if let t = ctx.header("x-amz-checksum-type")?.uppercased() {
            guard t == "COMPOSITE" || t == "FULL_OBJECT" else {
                return .failure(.invalidRequest(message: "Value for x-amz-checksum-type header is invalid."))
            }
            guard let a = algorithm else {
                return .failure(.invalidRequest(message: "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header."))
            }
            if t == "FULL_OBJECT" && !a.supportsFullObjectMultipart || t == "COMPOSITE" && a == .crc64nvme {
                return .failure(.invalidRequest(message: "The \(t) checksum type cannot be used with the \(a.rawValue) checksum algorithm."))
            }
            type = t
        }
        if let a = algorithm, type == nil { type = a == .crc64nvme ? "FULL_OBJECT" : "COMPOSITE" }
        // One data key for the whole upload: every part is sealed with it, so completion only
        // concatenates slices, as for plain uploads.
        if case .failure(let e) = sealNew(&metadata.extra, customerKey: S3Service.customerKey(ctx)) { return .failure(e) }
        let upload = UploadRecord(uploadID: ids.alphanumeric(64), bucket: ctx.bucket, key: ctx.key,
                                  initiated: Instant(unixSeconds: ctx.now.unixSeconds), owner: owner,
                                  metadata: metadata, checksumAlgorithm: algorithm, checksumType: type)
        return attempt(ctx) {
            try store.createUpload(upload)
            var x = XMLWriter()
            x.group("InitiateMultipartUploadResult", namespace: true) { x in
                x.element("Bucket", upload.bucket)
                x.element("Key", upload.key)
                x.element("UploadId", upload.uploadID)
            }
            var h = HTTPHeaders()
            S3Service.addEncryptionHeaders(&h, upload.metadata.extra)
            if let algorithm, let type {
                h.add("x-amz-checksum-algorithm", algorithm.displayName)
                h.add("x-amz-checksum-type", type)
            }
            return S3Service.xmlResponse(x, headers: h)
        }
    }

    // MARK: UploadPart

    /// An upload begun with an SSE-C key needs the same key on every part.
    static func partKeyError(_ ctx: S3Context, _ upload: UploadRecord) -> S3Error? {
        switch SSECustomerKey.fromHeaders({ ctx.header($0) }, prefix: "x-amz-server-side-encryption-customer-") {
        case .failure(let e): return e
        case .success(let key):
            guard let stored = upload.metadata.extra.customerKeyMD5 else {
                return key == nil ? nil : .invalidRequest(message: "The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.")
            }
            guard let key else {
                return .invalidRequest(message: "The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.")
            }
            return key.md5 == stored ? nil : .invalidRequest(message: "The provided encryption parameters did not match the ones used originally.")
        }
    }

    func uploadPart(_ ctx: S3Context) -> RequestDisposition {
        let number: Int
        switch S3Service.partNumber(ctx) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let n): number = n
        }
        let headers: UploadHeaders
        switch UploadHeaders.parse(ctx, maxSize: S3Service.maxPartSize) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let h): headers = h
        }
        let upload: UploadRecord
        switch requireUpload(ctx) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let u): upload = u
        }
        if let e = S3Service.partKeyError(ctx, upload) { return .respond(complete(ctx, .failure(e))) }
        if let expected = upload.checksumAlgorithm, let sent = headers.checksumAlgorithm, sent != expected {
            return .respond(complete(ctx, .failure(.invalidRequest(message:
                "Checksum Type mismatch occurred, expected checksum Type: \(expected.rawValue), actual checksum Type: \(sent.rawValue)"))))
        }
        let dataKey: BlobDataKey?
        switch self.dataKey(of: upload.metadata.extra, customerKey: S3Service.customerKey(ctx)) {
        case .failure(let e): return .respond(complete(ctx, .failure(e)))
        case .success(let k): dataKey = k
        }
        let algorithm = upload.checksumAlgorithm ?? headers.checksumAlgorithm
        let consumer = UploadConsumer(service: self, ctx: ctx, headers: headers, checksums: algorithm.map { [$0] } ?? [],
                                      maxSize: S3Service.maxPartSize, dataKey: dataKey) { [self] writer, body in
            let etag = ETag.quoted(md5: body.md5)
            let checksum = algorithm.flatMap { body.checksums[$0] }.map { Data($0).base64EncodedString() }
            let now = Instant(unixSeconds: clock.now().unixSeconds)
            try commits.perform { c in
                let blob = try writer.commit(c)
                try S3Store.storePart(c, uploadID: upload.uploadID, bucket: ctx.bucket, key: ctx.key,
                                      part: PartRecord(partNumber: number, blobID: blob, size: body.size, etag: etag,
                                                       lastModified: now, checksumValue: checksum))
            }
            var h = HTTPHeaders()
            h.add("ETag", etag)
            if let algorithm, let checksum { h.add(algorithm.headerName, checksum) }
            S3Service.addEncryptionHeaders(&h, upload.metadata.extra)
            return Response(status: 200, headers: h, body: .empty)
        }
        return .stream(consumer)
    }

    // MARK: UploadPartCopy

    func uploadPartCopy(_ ctx: S3Context) -> Result<Response, S3Error> {
        let number: Int
        switch S3Service.partNumber(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let n): number = n
        }
        let source: CopySource
        switch S3Service.copySource(ctx, forPart: true) {
        case .failure(let e): return .failure(e)
        case .success(let s): source = s
        }
        let upload: UploadRecord
        switch requireUpload(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let u): upload = u
        }
        if let e = S3Service.partKeyError(ctx, upload) { return .failure(e) }
        let sourceRecord: ObjectRecord
        let foundSource: FoundSource
        switch copySourceRecord(ctx, source) {
        case .failure(let e): return .failure(e)
        case .success(let found): (foundSource, sourceRecord) = (found, found.record)
        }
        let sourceKey: SSECustomerKey?
        switch SSECustomerKey.forRead({ ctx.header($0) }, prefix: "x-amz-copy-source-server-side-encryption-customer-",
                                      stored: sourceRecord.metadata.extra.customerKeyMD5) {
        case .failure(let e): return .failure(e)
        case .success(let key): sourceKey = key
        }
        let keys: (source: BlobDataKey?, part: BlobDataKey?)
        switch (dataKey(of: sourceRecord.metadata.extra, customerKey: sourceKey),
                dataKey(of: upload.metadata.extra, customerKey: S3Service.customerKey(ctx))) {
        case (.failure(let e), _), (_, .failure(let e)): return .failure(e)
        case (.success(let s), .success(let p)): keys = (s, p)
        }
        var start: Int64 = 0
        var end = sourceRecord.size  // exclusive
        if let range = ctx.header("x-amz-copy-source-range") {
            let malformed = S3Error.invalidArgument(
                message: "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy",
                name: "x-amz-copy-source-range", value: range)
            guard range.hasPrefix("bytes=") else { return .failure(malformed) }
            let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first <= last else { return .failure(malformed) }
            guard last < sourceRecord.size else {
                return .failure(.invalidArgument(message: "Range specified is not valid for source object of size: \(sourceRecord.size)",
                                                 name: "x-amz-copy-source-range", value: range))
            }
            start = first
            end = last + 1
        }
        if end - start > S3Service.maxPartSize {
            return .failure(.entityTooLarge(proposedSize: end - start, maxSize: S3Service.maxPartSize))
        }
        let algorithm = upload.checksumAlgorithm
        if keys.source != nil || keys.part != nil {
            return copyPartSealed(ctx, upload: upload, number: number, source: source, found: foundSource, range: start..<end, keys: keys)
        }
        let digest: (md5: [UInt8], checksum: [UInt8]?)
        switch attempt(ctx, { try digestBlob(sourceRecord.blobID, start: start, end: end, checksum: algorithm) }) {
        case .failure(let e): return .failure(e)
        case .success(let d): digest = d
        }
        let etag = ETag.quoted(md5: digest.md5)
        let now = Instant(unixSeconds: clock.now().unixSeconds)
        let checksum = digest.checksum.map { Data($0).base64EncodedString() }
        return attempt(ctx) {
            try database.write { c in
                guard let current = try S3Service.currentSource(c, source), current.blobID == sourceRecord.blobID else {
                    throw source.versionID.map { S3Error.noSuchVersion(key: source.key, versionID: $0) } ?? S3Error.noSuchKey(key: source.key)
                }
                let blob = try BlobStore.copyRange(c, from: current.blobID, start: start, length: end - start, now: now)
                try S3Store.storePart(c, uploadID: upload.uploadID, bucket: ctx.bucket, key: ctx.key,
                                      part: PartRecord(partNumber: number, blobID: blob, size: end - start, etag: etag,
                                                       lastModified: now, checksumValue: checksum))
            }
            return copyPartResponse(now: now, etag: etag, algorithm: algorithm, checksum: checksum, found: foundSource, upload: upload)
        }
    }

    // MARK: CompleteMultipartUpload

    func completeMultipartUpload(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        let upload: UploadRecord
        switch requireUpload(ctx) {
        case .failure(.noSuchUpload(let id)):
            // A retry of a completion that succeeded (an SDK whose first attempt timed out) gets
            // the same answer again, as S3 gives it.
            if case .success(let done?) = attempt(ctx, { try store.completedUpload(bucket: ctx.bucket, key: ctx.key, uploadID: id) }) {
                return .success(completionResponse(ctx, done))
            }
            return .failure(.noSuchUpload(uploadID: id))
        case .failure(let e): return .failure(e)
        case .success(let u): upload = u
        }
        // S3 documents the SSE-C key on completion as "required only when the object was created
        // using a checksum algorithm"; a key that is sent must be the upload's.
        if upload.metadata.extra.customerKeyMD5 != nil,
           upload.checksumAlgorithm != nil || ctx.header("x-amz-server-side-encryption-customer-algorithm") != nil
            || ctx.header("x-amz-server-side-encryption-customer-key") != nil,
           let e = S3Service.partKeyError(ctx, upload) {
            return .failure(e)
        }
        guard let root = try? S3XMLParser.parse(body), root.name == "CompleteMultipartUpload" else { return .failure(.malformedXML) }
        var requested: [(number: Int, etag: String, checksum: String?)] = []
        for p in root.children(named: "Part") {
            guard let n = p.childText("PartNumber").flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
                  let etag = p.childText("ETag") else { return .failure(.malformedXML) }
            let checksum = upload.checksumAlgorithm.flatMap { p.childText($0.xmlName) }
            requested.append((n, etag, checksum))
        }
        guard !requested.isEmpty else { return .failure(.malformedXML) }
        for i in requested.indices.dropFirst() where requested[i].number <= requested[i - 1].number {
            return .failure(.invalidPartOrder(uploadID: upload.uploadID))
        }
        let condition: S3Store.WriteCondition
        switch S3Service.writeCondition(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let c): condition = c
        }
        let stored: [Int: PartRecord]
        switch attempt(ctx, { try store.parts(uploadID: upload.uploadID, after: 0, limit: 10_000) }) {
        case .failure(let e): return .failure(e)
        case .success(let parts): stored = Dictionary(parts.map { ($0.partNumber, $0) }, uniquingKeysWith: { a, _ in a })
        }
        var chosen: [PartRecord] = []
        for r in requested {
            guard let part = stored[r.number], ETag.bare(part.etag) == ETag.bare(r.etag) else {
                return .failure(.invalidPart(uploadID: upload.uploadID, partNumber: r.number, etag: r.etag))
            }
            if let sent = r.checksum, let have = part.checksumValue, sent != have {
                return .failure(.invalidPart(uploadID: upload.uploadID, partNumber: r.number, etag: r.etag))
            }
            chosen.append(part)
        }
        for (i, part) in chosen.enumerated() where i < chosen.count - 1 && part.size < S3Service.minPartSize {
            return .failure(.entityTooSmall(proposedSize: part.size, minSize: S3Service.minPartSize, partNumber: part.partNumber, etag: part.etag))
        }
        // `"<md5 of the concatenated binary part MD5s>-<count>"`, as S3 computes it.
        var md5s = [UInt8]()
        for part in chosen { md5s += Hex.decode(ETag.bare(part.etag)) ?? [] }
        let etag = "\"" + Hex.encode(Digest.md5(md5s)) + "-\(chosen.count)\""
        var checksum: ObjectChecksum?
        if let algorithm = upload.checksumAlgorithm {
            if upload.checksumType == "FULL_OBJECT" {
                // A CRC of the whole object: read the parts once (the CRC of a concatenation).
                let sum = RunningChecksum(algorithm)
                let dataKey: BlobDataKey?
                switch self.dataKey(of: upload.metadata.extra, customerKey: S3Service.customerKey(ctx)) {
                case .failure(let e): return .failure(e)
                case .success(let k): dataKey = k
                }
                for part in chosen {
                    let r = attempt(ctx) { try feedBlob(part.blobID, size: part.size, into: sum, dataKey: dataKey) }
                    if case .failure(let e) = r { return .failure(e) }
                }
                checksum = ObjectChecksum(algorithm: algorithm, value: Data(sum.finalize()).base64EncodedString(), type: "FULL_OBJECT")
                if let sent = ctx.header(algorithm.headerName), sent != checksum?.value {
                    return .failure(.checksumMismatch(algorithm))
                }
            } else {
                var raw = [UInt8]()
                for part in chosen { raw += part.checksumValue.flatMap { algorithm.decode($0) } ?? [] }
                let composite = Data(RunningChecksum.checksum(algorithm, raw)).base64EncodedString()
                checksum = ObjectChecksum(algorithm: algorithm, value: composite + "-\(chosen.count)", type: "COMPOSITE")
                // A whole-object value sent with the completion must be the composite one (with or without its `-N`).
                if let sent = ctx.header(algorithm.headerName), sent != composite, sent != composite + "-\(chosen.count)" {
                    return .failure(.checksumMismatch(algorithm))
                }
            }
        }
        let size = chosen.reduce(Int64(0)) { $0 + $1.size }
        if size > configuration.maxObjectSize * 1024 {
            return .failure(.entityTooLarge(proposedSize: size, maxSize: configuration.maxObjectSize * 1024))
        }
        let finalChecksum = checksum
        return attempt(ctx) {
            let versionID = try database.write { c in
                guard try S3Store.upload(c, bucket: ctx.bucket, key: ctx.key, uploadID: upload.uploadID) != nil else {
                    throw S3Error.noSuchUpload(uploadID: upload.uploadID)
                }
                let blob = try BlobStore.concatenate(c, chosen.map { ($0.blobID, $0.size) }, now: ctx.now)
                // S3 dates a multipart object by when its upload was initiated.
                var metadata = upload.metadata
                if upload.checksumAlgorithm != nil { metadata.extra.partChecksums = chosen.map { $0.checksumValue ?? "" } }
                let record = ObjectRecord(bucket: ctx.bucket, key: ctx.key, blobID: blob, size: size, etag: etag,
                                          lastModified: upload.initiated, metadata: metadata, checksum: finalChecksum,
                                          partSizes: chosen.map(\.size), owner: upload.owner)
                let versionID = try S3Store.storeObject(c, record, condition: condition, newVersionID: newVersionID)
                try S3Store.deleteUpload(c, upload.uploadID)
                try S3Store.rememberCompleted(c, S3Store.CompletedUpload(uploadID: upload.uploadID, bucket: ctx.bucket, key: ctx.key,
                                                                        etag: etag, versionID: versionID, checksum: finalChecksum,
                                                                        extra: upload.metadata.extra), now: ctx.now)
                return versionID
            }
            return completionResponse(ctx, S3Store.CompletedUpload(uploadID: upload.uploadID, bucket: ctx.bucket, key: ctx.key, etag: etag,
                                                                   versionID: versionID, checksum: finalChecksum, extra: upload.metadata.extra))
        }
    }

    /// CompleteMultipartUpload's answer.
    func completionResponse(_ ctx: S3Context, _ done: S3Store.CompletedUpload) -> Response {
        var x = XMLWriter()
        x.group("CompleteMultipartUploadResult", namespace: true) { x in
            x.element("Location", objectURL(ctx))
            x.element("Bucket", ctx.bucket)
            x.element("Key", ctx.key)
            x.element("ETag", done.etag)
            if let c = done.checksum {
                x.element(c.algorithm.xmlName, c.value)
                x.element("ChecksumType", c.type)
            }
        }
        var h = HTTPHeaders()
        S3Service.addEncryptionHeaders(&h, done.extra)
        if let versionID = done.versionID { h.add("x-amz-version-id", versionID) }
        return S3Service.xmlResponse(x, headers: h)
    }

    /// Feeds a whole blob to a running checksum.
    func feedBlob(_ blobID: Int64, size: Int64, into sum: RunningChecksum, dataKey: BlobDataKey?) throws {
        let segments = try database.read { c in try BlobStore.segments(c, blobID: blobID, start: 0, end: size) }
        let source = BlobBodySource(database: database, segments: segments, start: 0, end: size, dataKey: dataKey)
        defer { source.close() }
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { break }
            buffer.withUnsafeBytes { sum.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }

    /// The object's URL as the client addressed this endpoint (CompleteMultipartUpload's Location).
    func objectURL(_ ctx: S3Context) -> String {
        let scheme = ctx.request.isTLS ? "https" : "http"
        let host = ctx.header("Host") ?? "127.0.0.1"
        let path = ctx.target.virtualHosted ? "/" + ctx.key : "/" + ctx.bucket + "/" + ctx.key
        return "\(scheme)://\(host)\(S3URLEncoding.pathEncode(path))"
    }

    // MARK: AbortMultipartUpload

    func abortMultipartUpload(_ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) {
            try store.abortUpload(bucket: ctx.bucket, key: ctx.key, uploadID: ctx.query("uploadId") ?? "")
            return Response(status: 204)
        }
    }

    // MARK: ListParts

    func listParts(_ ctx: S3Context) -> Result<Response, S3Error> {
        let maxParts: Int
        switch S3Service.pageSize(ctx, "max-parts") {
        case .failure(let e): return .failure(e)
        case .success(let n): maxParts = n
        }
        var marker = 0
        if let m = ctx.query("part-number-marker"), !m.isEmpty {
            guard let n = Int(m), n >= 0 else {
                return .failure(.invalidArgument(message: "Provided part-number-marker not an integer or within integer range",
                                                 name: "part-number-marker", value: m))
            }
            marker = n
        }
        let upload: UploadRecord
        switch requireUpload(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let u): upload = u
        }
        return attempt(ctx) {
            let fetched = try store.parts(uploadID: upload.uploadID, after: marker, limit: maxParts + 1)
            let page = Array(fetched.prefix(maxParts))
            let truncated = fetched.count > maxParts
            var x = XMLWriter()
            x.group("ListPartsResult", namespace: true) { x in
                x.element("Bucket", upload.bucket)
                x.element("Key", upload.key)
                x.element("UploadId", upload.uploadID)
                x.element("PartNumberMarker", String(marker))
                x.element("NextPartNumberMarker", String(page.last?.partNumber ?? 0))
                x.element("MaxParts", String(maxParts))
                x.element("IsTruncated", truncated ? "true" : "false")
                for p in page {
                    x.group("Part") { x in
                        x.element("PartNumber", String(p.partNumber))
                        x.element("LastModified", p.lastModified.rfc3339(fractionDigits: 3))
                        x.element("ETag", p.etag)
                        x.element("Size", String(p.size))
                        if let a = upload.checksumAlgorithm, let v = p.checksumValue { x.element(a.xmlName, v) }
                    }
                }
                writeOwner(&x, upload.owner, element: "Initiator")
                writeOwner(&x, upload.owner)
                x.element("StorageClass", upload.metadata.storageClass ?? "STANDARD")
                if let a = upload.checksumAlgorithm {
                    x.element("ChecksumAlgorithm", a.displayName)
                    x.element("ChecksumType", upload.checksumType ?? "COMPOSITE")
                }
            }
            return S3Service.xmlResponse(x)
        }
    }

    // MARK: ListMultipartUploads

    func listMultipartUploads(_ ctx: S3Context) -> Result<Response, S3Error> {
        let urlEncoded: Bool
        switch S3Service.listingURLEncoding(ctx) {
        case .failure(let e): return .failure(e)
        case .success(let u): urlEncoded = u
        }
        func encode(_ text: String) -> String { urlEncoded ? S3URLEncoding.listingEncode(text) : text }
        let maxUploads: Int
        switch S3Service.pageSize(ctx, "max-uploads") {
        case .failure(let e): return .failure(e)
        case .success(let n): maxUploads = n
        }
        let prefix = ctx.query("prefix") ?? ""
        let delimiter = ctx.query("delimiter") ?? ""
        let keyMarker = ctx.query("key-marker").flatMap { $0.isEmpty ? nil : $0 }
        let uploadIDMarker = ctx.query("upload-id-marker")
        if case .failure(let e) = requireBucket(ctx) { return .failure(e) }
        return attempt(ctx) {
            // Uploads are few; group them in memory.
            let all = try store.uploads(bucket: ctx.bucket, prefix: prefix, keyMarker: keyMarker, uploadIDMarker: uploadIDMarker, limit: 100_000)
            var uploads: [UploadRecord] = []
            var prefixes: [String] = []
            var truncated = false
            var count = 0
            for u in all {
                var commonPrefix: String?
                if !delimiter.isEmpty {
                    let rest = String(decoding: u.key.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
                    if let r = rest.range(of: delimiter) { commonPrefix = prefix + String(rest[..<r.upperBound]) }
                }
                if let cp = commonPrefix, prefixes.last == cp { continue }
                if count == maxUploads {
                    truncated = true
                    break
                }
                if let cp = commonPrefix { prefixes.append(cp) } else { uploads.append(u) }
                count += 1
            }
            var x = XMLWriter()
            x.group("ListMultipartUploadsResult", namespace: true) { x in
                x.element("Bucket", ctx.bucket)
                x.element("KeyMarker", encode(keyMarker ?? ""))
                x.element("UploadIdMarker", uploadIDMarker ?? "")
                if truncated {
                    x.element("NextKeyMarker", encode(uploads.last?.key ?? ""))
                    x.element("NextUploadIdMarker", uploads.last?.uploadID ?? "")
                }
                if !delimiter.isEmpty { x.element("Delimiter", encode(delimiter)) }
                x.element("Prefix", encode(prefix))
                x.element("MaxUploads", String(maxUploads))
                if urlEncoded { x.element("EncodingType", "url") }
                x.element("IsTruncated", truncated ? "true" : "false")
                for u in uploads {
                    x.group("Upload") { x in
                        x.element("Key", encode(u.key))
                        x.element("UploadId", u.uploadID)
                        writeOwner(&x, u.owner, element: "Initiator")
                        writeOwner(&x, u.owner)
                        x.element("StorageClass", u.metadata.storageClass ?? "STANDARD")
                        x.element("Initiated", u.initiated.rfc3339(fractionDigits: 3))
                        if let a = u.checksumAlgorithm {
                            x.element("ChecksumAlgorithm", a.displayName)
                            x.element("ChecksumType", u.checksumType ?? "COMPOSITE")
                        }
                    }
                }
                for p in prefixes { x.group("CommonPrefixes") { $0.element("Prefix", encode(p)) } }
            }
            return S3Service.xmlResponse(x)
        }
    }
}
