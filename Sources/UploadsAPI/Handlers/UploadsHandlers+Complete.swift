import HearthCore
import HearthHTTP

extension UploadsHandlers {
    /// `POST /v1/files/{fileId}/complete` `{key, originalName?}`: after the PUT, records the file in
    /// Firestore (`users/{uid}/files/{fileId}`) from what S3 actually stored.
    func complete(_ request: Request, fileID: String) throws(UploadsError) -> Response {
        let caller = try authenticator.authenticate(request)
        try UploadKey.validateFileID(fileID)
        let body = try JSONBody(request.body)
        let key = try body.requiredString("key")
        try UploadKey.checkOwnership(key, uid: caller.uid, field: "key")
        try UploadKey.checkMintedShape(key, uid: caller.uid, field: "key")
        let originalName = try body.optionalString("originalName")
        if let name = originalName {
            let lower = name.lowercased()
            // The shipped rules refuse anything that could be a presigned URL; so does the API.
            if name.utf8.count > 1024 || name.utf8.contains(UInt8(ascii: "/")) || lower.hasPrefix("http") || lower.contains("x-amz-signature") {
                throw .invalidValue(field: "originalName", reason: "a file name of at most 1024 bytes, without '/', that is not a URL")
            }
        }
        let info = try head(key)

        var fields: JSONObject = [
            "ownerUid": .object(["stringValue": .string(caller.uid)]),
            "storage": .object(["stringValue": .string("s3")]),
            "s3Key": .object(["stringValue": .string(key)]),
            "contentType": .object(["stringValue": .string(info.contentType)]),
            "size": .object(["integerValue": .string(String(info.size))]),
            "status": .object(["stringValue": .string("ready")]),
        ]
        if let originalName { fields["originalName"] = .object(["stringValue": .string(originalName)]) }
        let path = "users/\(caller.uid)/files/\(fileID)"
        let document: JSON
        do {
            document = try documentStore.setDocument(projectID: configuration.projectID, path: path, fields: fields,
                                                     serverTimestampFields: ["createdAt"])
        } catch {
            throw .backend("cannot write \(path): \(error)")
        }
        var response = Response.json(.object(UploadsHandlers.fileResponse(document, id: fileID, path: path)))
        response.logFields.append(("uid", .string(caller.uid)))
        return response
    }

    /// The Firestore document as written (`name`, `fields`, `createTime`, `updateTime`) preceded by the
    /// same fields as plain JSON, so both REST-aware and plain clients can read it.
    static func fileResponse(_ document: JSON, id: String, path: String) -> JSONObject {
        var out: JSONObject = ["id": .string(id), "path": .string(path)]
        if let fields = document["fields"]?.objectValue {
            for (name, value) in fields { out[name] = plain(value) }
        }
        for (name, value) in document.objectValue ?? JSONObject() where out[name] == nil { out[name] = value }
        return out
    }

    /// A Firestore REST `Value` as ordinary JSON (integers as numbers, timestamps as RFC 3339 strings).
    static func plain(_ value: JSON) -> JSON {
        guard let o = value.objectValue, o.count == 1, let (kind, v) = o.members.first else { return value }
        switch kind {
        case "nullValue": return .null
        case "integerValue":
            if let s = v.stringValue, let i = Int64(s) { return .int(i) }
            return v
        case "stringValue", "booleanValue", "doubleValue", "timestampValue", "referenceValue", "bytesValue", "geoPointValue":
            return v
        case "arrayValue": return .array((v["values"]?.arrayValue ?? []).map(plain))
        case "mapValue":
            var m = JSONObject()
            for (k, x) in v["fields"]?.objectValue ?? JSONObject() { m[k] = plain(x) }
            return .object(m)
        default: return value
        }
    }
}
