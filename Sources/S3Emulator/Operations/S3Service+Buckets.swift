import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// An XML `200 OK` (`application/xml`, as S3 labels every result document).
    static func xmlResponse(_ xml: XMLWriter, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var h = headers
        h.set("Content-Type", "application/xml")
        return Response(status: status, headers: h, body: .bytes(xml.bytes))
    }

    /// `<Owner><ID>…</ID><DisplayName>…</DisplayName></Owner>` (or another element name) for the
    /// account a stored owner names.
    func writeOwner(_ x: inout XMLWriter, _ storedOwner: String, element: String = "Owner") {
        let account = accounts.owner(storedOwner)
        x.group(element) { x in
            x.element("ID", account.canonicalID)
            x.element("DisplayName", account.displayName)
        }
    }

    /// The bucket must exist.
    func requireBucket(_ ctx: S3Context) -> Result<BucketRecord, S3Error> {
        attempt(ctx) { try store.bucket(ctx.bucket) }.flatMap { b in
            b.map { .success($0) } ?? .failure(.noSuchBucket(bucket: ctx.bucket))
        }
    }

    // MARK: ListBuckets

    func listBuckets(_ ctx: S3Context) -> Result<Response, S3Error> {
        let allowed = configuration.credentials.first { $0.accessKey == ctx.accessKey }?.allowedBuckets
        let prefix = ctx.query("prefix") ?? ""
        var maxBuckets = 10_000
        if let m = ctx.query("max-buckets") {
            guard let n = Int(m), (1...10_000).contains(n) else {
                return .failure(.invalidArgument(message: "Argument max-buckets must be an integer between 1 and 10000.",
                                                 name: "max-buckets", value: m))
            }
            maxBuckets = n
        }
        var after: String?
        if let token = ctx.query("continuation-token") {
            guard let data = Data(base64Encoded: token), let name = String(data: data, encoding: .utf8) else {
                return .failure(.invalidArgument(message: "The continuation token provided is incorrect", name: "continuation-token", value: token))
            }
            after = name
        }
        return attempt(ctx) { try store.buckets() }.map { all in
            // An account lists its own buckets, as S3's ListBuckets does.
            let owner = ctx.ownerKey ?? defaultOwner
            let visible = all.filter { b in
                b.owner == owner && (allowed?.contains(b.name) ?? true) && b.name.hasPrefix(prefix) && (after.map { b.name > $0 } ?? true)
            }
            let page = visible.prefix(maxBuckets)
            var x = XMLWriter()
            x.group("ListAllMyBucketsResult", namespace: true) { x in
                writeOwner(&x, ctx.ownerKey ?? defaultOwner)
                x.group("Buckets") { x in
                    for b in page {
                        x.group("Bucket") { x in
                            x.element("Name", b.name)
                            x.element("CreationDate", b.createdAt.rfc3339(fractionDigits: 3))
                            x.element("BucketRegion", b.region)
                        }
                    }
                }
                if visible.count > page.count, let last = page.last {
                    x.element("ContinuationToken", Data(last.name.utf8).base64EncodedString())
                }
                if ctx.query("prefix") != nil { x.element("Prefix", prefix) }
            }
            return S3Service.xmlResponse(x)
        }
    }

    // MARK: CreateBucket

    func createBucket(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        let name = ctx.bucket
        guard BucketName.isValid(name) else { return .failure(.invalidBucketName(bucket: name)) }
        var constraint: String?
        if !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            guard let root = try? S3XMLParser.parse(body), root.name == "CreateBucketConfiguration" else { return .failure(.malformedXML) }
            if let c = root.childText("LocationConstraint")?.trimmingCharacters(in: .whitespacesAndNewlines), !c.isEmpty { constraint = c }
        }
        let region = configuration.region
        if region == "us-east-1" {
            // us-east-1 is the one region named by leaving the constraint out; naming it is an error.
            if let c = constraint {
                return .failure(c == "us-east-1" ? .invalidLocationConstraint(constraint: c) : .illegalLocationConstraint(constraint: c))
            }
        } else if constraint != region {
            return .failure(.illegalLocationConstraint(constraint: constraint))
        }
        let owner = ctx.ownerKey ?? defaultOwner
        var settings = S3Store.NewBucketSettings()
        var ownership = OwnershipControls.newBucketDefault.objectOwnership
        if let o = ctx.header("x-amz-object-ownership") {
            guard OwnershipControls.values.contains(o) else {
                return .failure(.invalidArgument(message: "Invalid x-amz-object-ownership header: \(o)", name: "x-amz-object-ownership", value: o))
            }
            ownership = o
            settings.ownershipControls = String(decoding: OwnershipControls(objectOwnership: o).document.bytes, as: UTF8.self)
        }
        let ownerID = accounts.owner(owner).canonicalID
        switch AccessControlList.fromHeaders({ ctx.header($0) }, owner: ownerID, bucketOwner: ownerID) {
        case .failure(let e): return .failure(e)
        case .success(nil): break
        case .success(let acl?):
            if ownership == "BucketOwnerEnforced" {
                guard acl.isOwnerFullControlOnly(ownerID) else { return .failure(.plain(.invalidBucketAclWithObjectOwnership)) }
            } else {
                if let e = checkGrantees(acl) { return .failure(e) }
                if !acl.isOwnerFullControlOnly(ownerID) { settings.acl = acl.serialized }
            }
        }
        if let lock = ctx.header("x-amz-bucket-object-lock-enabled") {
            guard lock.lowercased() == "true" || lock.lowercased() == "false" else {
                return .failure(.invalidArgument(message: "Invalid x-amz-bucket-object-lock-enabled header: \(lock)",
                                                 name: "x-amz-bucket-object-lock-enabled", value: lock))
            }
            if lock.lowercased() == "true" {
                settings.objectLock = String(decoding: ObjectLock.Configuration().document.bytes, as: UTF8.self)
            }
        }
        return attempt(ctx) {
            try store.createBucket(name, region: region, owner: owner, now: ctx.now, settings: settings)
            var h = HTTPHeaders()
            h.add("Location", "/" + name)
            return Response(status: 200, headers: h, body: .empty)
        }
    }

    // MARK: DeleteBucket, HeadBucket, GetBucketLocation

    func deleteBucket(_ ctx: S3Context) -> Result<Response, S3Error> {
        attempt(ctx) {
            try store.deleteBucket(ctx.bucket)
            lifecycleRules.set(ctx.bucket, nil)
            return Response(status: 204)
        }
    }

    func headBucket(_ ctx: S3Context) -> Result<Response, S3Error> {
        requireBucket(ctx).map { b in
            var h = HTTPHeaders()
            h.add("x-amz-bucket-region", b.region)
            h.add("x-amz-access-point-alias", "false")
            h.add("Content-Type", "application/xml")
            return Response(status: 200, headers: h, body: .empty)
        }
    }

    func getBucketLocation(_ ctx: S3Context) -> Result<Response, S3Error> {
        requireBucket(ctx).map { b in
            var x = XMLWriter()
            if b.region == "us-east-1" {
                x.empty("LocationConstraint", namespace: true)
            } else {
                x.open("LocationConstraint", namespace: true)
                x.text(b.region)
                x.close("LocationConstraint")
            }
            return S3Service.xmlResponse(x)
        }
    }

    // MARK: Bucket configuration reads

    /// Answers a read of a configuration Hearth cannot set, as S3 does for a bucket nobody
    /// configured: the default document, or the sub-resource's "does not exist" error.
    func getBucketConfiguration(_ name: String, _ ctx: S3Context) -> Result<Response, S3Error> {
        requireBucket(ctx).flatMap { b -> Result<Response, S3Error> in
            func missing(_ code: String, _ message: String) -> Result<Response, S3Error> {
                .failure(.noSuchBucketConfiguration(code: code, message: message, bucket: b.name))
            }
            var x = XMLWriter()
            switch name {
            case "accelerate": x.empty("AccelerateConfiguration", namespace: true)
            case "logging": x.empty("BucketLoggingStatus", namespace: true)
            case "notification": x.empty("NotificationConfiguration", namespace: true)
            case "requestPayment":
                x.group("RequestPaymentConfiguration", namespace: true) { $0.element("Payer", "BucketOwner") }
            case "replication": return missing("ReplicationConfigurationNotFoundError", "The replication configuration was not found")
            case "website": return missing("NoSuchWebsiteConfiguration", "The specified bucket does not have a website configuration")
            case "object-lock":
                return missing("ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this bucket")
            default: return .failure(.notImplemented(header: nil))
            }
            return .success(S3Service.xmlResponse(x))
        }
    }
}
