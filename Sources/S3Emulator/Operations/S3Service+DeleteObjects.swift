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
        return attempt(ctx) {
            var outcomes: [(key: String, versionID: String?, error: S3Error?)] = []
            try database.write { c in
                for (key, versionID) in keys {
                    if let e = S3Service.checkKey(key) {
                        outcomes.append((key, versionID, e))
                    } else if let v = versionID, v != "null" {
                        outcomes.append((key, versionID, .noSuchVersion(key: key, versionID: v)))
                    } else {
                        try S3Store.deleteObject(c, bucket: ctx.bucket, key: key)
                        outcomes.append((key, versionID, nil))
                    }
                }
            }
            var x = XMLWriter()
            x.group("DeleteResult", namespace: true) { x in
                for o in outcomes {
                    if let e = o.error {
                        x.group("Error") { x in
                            x.element("Key", o.key)
                            x.element("VersionId", ifPresent: o.versionID)
                            x.element("Code", e.code)
                            x.element("Message", e.message)
                        }
                    } else if !quiet {
                        x.group("Deleted") { x in
                            x.element("Key", o.key)
                            x.element("VersionId", ifPresent: o.versionID)
                        }
                    }
                }
            }
            return S3Service.xmlResponse(x)
        }
    }
}
