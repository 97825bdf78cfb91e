import HearthCore
import HearthHTTP

extension UploadsHandlers {
    /// `POST /v1/uploads/presign` `{contentType, fileExt, expiresSeconds?}` → a presigned PUT for a new key.
    func presign(_ request: Request) throws(UploadsError) -> Response {
        let caller = try authenticator.authenticate(request)
        let body = try JSONBody(request.body)
        let contentType = try contentTypes.check(try body.requiredString("contentType"))
        let fileExt = try body.requiredString("fileExt")
        try UploadKey.validateExtension(fileExt)
        let expires = try expiresSeconds(body, field: "expiresSeconds")

        let key = UploadKey.make(uid: caller.uid, uuid: ids.uuid(), fileExt: fileExt)
        // No bucket check here: it is created at start and by `reset()`, and ensuring it per request
        // would take the database's single writer for every presign. A bucket deleted through the
        // S3 API makes the PUT fail with NoSuchBucket, as it would against a real backend.
        let now = clock.now()
        let url = try presignedURL(method: "PUT", key: key, expiresSeconds: expires, signedHeaders: ["content-type": contentType])
        var response = Response.json(.object([
            "key": .string(key),
            "putUrl": .string(url),
            "method": .string("PUT"),
            "headers": .object(["Content-Type": .string(contentType)]),
            "expiresSeconds": .int(Int64(expires)),
            "expiresAt": .string(now.adding(seconds: Double(expires)).rfc3339(fractionDigits: 0)),
            "bucket": .string(configuration.bucket),
        ]))
        response.logFields.append(("uid", .string(caller.uid)))
        return response
    }
}
