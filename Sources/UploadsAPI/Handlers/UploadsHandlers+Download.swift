import HearthCore
import HearthHTTP

extension UploadsHandlers {
    /// `POST /v1/files/presign-download` `{s3Key, expiresSeconds?}` → a presigned GET for one of the caller's objects.
    func presignDownload(_ request: Request) throws(UploadsError) -> Response {
        let caller = try authenticator.authenticate(request)
        let body = try JSONBody(request.body)
        // `key` is accepted too, since presign answers with `key`.
        let field = body.object["s3Key"] != nil || body.object["key"] == nil ? "s3Key" : "key"
        let key = try body.requiredString(field)
        // Ownership before existence: another user's key gets 403 whether or not it exists.
        try UploadKey.checkOwnership(key, uid: caller.uid, field: field)
        let expires = try expiresSeconds(body, field: "expiresSeconds")
        let info = try head(key)
        // The URL would only meet S3's InvalidObjectState: refuse here, in this API's own shape.
        if let storageClass = info.archivedStorageClass { throw .objectArchived(field: field, key: key, storageClass: storageClass) }
        let now = clock.now()
        let url = try presignedURL(method: "GET", key: key, expiresSeconds: expires, signedHeaders: [:])
        var response = Response.json(.object([
            "getUrl": .string(url),
            "method": .string("GET"),
            "expiresSeconds": .int(Int64(expires)),
            "expiresAt": .string(now.adding(seconds: Double(expires)).rfc3339(fractionDigits: 0)),
            "s3Key": .string(key),
            "contentType": .string(info.contentType),
            "size": .int(info.size),
        ]))
        response.logFields.append(("uid", .string(caller.uid)))
        return response
    }
}
