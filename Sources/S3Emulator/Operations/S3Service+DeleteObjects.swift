import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// Most keys one DeleteObjects request may name.
    static let maxDeleteKeys = 1000

    /// DeleteObjects: the batch `<Delete>` document, optionally `<Quiet>`.
    func deleteObjects(_ ctx: S3Context, body: [UInt8]) -> Result<Response, S3Error> {
        // S3 insists on an integrity header for this operation.
        if let e = S3Service.verifyRequiredIntegrity(ctx, body: body) { return .failure(e) }
        guard let root = try? S3XMLParser.parse(body), root.name == "Delete" else { return .failure(.malformedXML) }
        let objects = root.children(named: "Object")
        guard !objects.isEmpty, objects.count <= S3Service.maxDeleteKeys else { return .failure(.malformedXML) }
        var keys: [(key: String, versionID: String?)] = []
        for o in objects {
            guard let key = o.childText("Key") else { return .failure(.malformedXML) }
            keys.append((key, o.childText("VersionId")))
        }
        let quiet = root.childText("Quiet")?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "true"
        if case .failure(let e) = requireBucket(ctx) { return .failure(e) }
        let now = Instant(unixSeconds: clock.now().unixSeconds)
        let owner = ctx.ownerKey ?? defaultOwner
        let bypass = S3Service.bypassGovernance(ctx)
        return attempt(ctx) {
            var outcomes: [(key: String, versionID: String?, result: Result<S3Store.DeleteOutcome, S3Error>)] = []
            try database.write { c in
                guard let bucket = try S3Store.bucket(c, ctx.bucket) else { throw S3Error.noSuchBucket(bucket: ctx.bucket) }
                for (key, versionID) in keys {
                    if let e = S3Service.checkKey(key) {
                        outcomes.append((key, versionID, .failure(e)))
                    } else if let access = ctx.anonymousAccess,
                              !access.permits(versionID == nil ? "s3:DeleteObject" : "s3:DeleteObjectVersion", key: key) {
                        outcomes.append((key, versionID, .failure(.accessDenied(message: "Access Denied"))))
                    } else if let v = versionID {
                        // A version id S3 could not have issued names no version.
                        guard v == "null" || VersionID.isWellFormed(v) else {
                            outcomes.append((key, versionID, .failure(.noSuchVersion(key: key, versionID: v))))
                            continue
                        }
                        if let entry = try S3Store.version(c, bucket: bucket.name, key: key, versionID: v), !entry.isDeleteMarker {
                            do {
                                // Retention dates have sub-second precision; `now` is whole seconds (for markers).
                                try ObjectLock.checkDeletable(entry.record.metadata.extra, now: clock.now(), bypassGovernance: bypass)
                            } catch let e as S3Error {
                                outcomes.append((key, versionID, .failure(e.code == "AccessDenied" ? .accessDenied(message: "Access Denied") : e)))
                                continue
                            } catch let u as ObjectLock.Unreadable {
                                _ = lockedUnreadable(ctx, u, key: key)
                                outcomes.append((key, versionID, .failure(.accessDenied(message: "Access Denied"))))
                                continue
                            }
                        }
                        outcomes.append((key, versionID, .success(try S3Store.deleteVersion(c, bucket: bucket.name, key: key, versionID: v))))
                    } else {
                        let outcome = try S3Store.deleteCurrent(c, bucket: bucket, key: key, owner: owner, now: now, newVersionID: newVersionID)
                        outcomes.append((key, nil, .success(outcome)))
                    }
                }
            }
            var x = XMLWriter()
            x.group("DeleteResult", namespace: true) { x in
                for o in outcomes {
                    switch o.result {
                    case .failure(let e):
                        x.group("Error") { x in
                            x.element("Key", o.key)
                            x.element("VersionId", ifPresent: o.versionID)
                            x.element("Code", e.code)
                            x.element("Message", e.message)
                        }
                    case .success(let outcome) where !quiet:
                        x.group("Deleted") { x in
                            x.element("Key", o.key)
                            x.element("VersionId", ifPresent: o.versionID)
                            if outcome.deleteMarker {
                                x.element("DeleteMarker", "true")
                                x.element("DeleteMarkerVersionId", outcome.versionID ?? "null")
                            }
                        }
                    case .success: break
                    }
                }
            }
            return S3Service.xmlResponse(x)
        }
    }
}
