import Foundation
import HearthCore
import HearthCrypto
import HearthHTTP
@testable import S3Emulator

/// Builds browser form uploads (POST Object) the way boto3's `generate_presigned_post` and a
/// browser's `FormData` do, for the harness to send.
struct PostFormBuilder {
    var boundary = "----HearthFormBoundary7MA4YWxkTrZu0gW"
    /// Fields before the file, in order.
    var fields: [(String, String)] = []
    var file: [UInt8] = Array("hello form".utf8)
    /// The file part's `filename` parameter (nil: none).
    var filename: String? = "hello.txt"
    var fileContentType: String? = "text/plain"
    /// Fields after the file (S3 ignores them).
    var afterFile: [(String, String)] = []
    /// The name of the file part.
    var fileFieldName = "file"

    /// The multipart/form-data body.
    func body() -> [UInt8] {
        var out = [UInt8]()
        func part(_ name: String, _ value: [UInt8], filename: String? = nil, contentType: String? = nil) {
            out += Array("--\(boundary)\r\n".utf8)
            var disposition = "Content-Disposition: form-data; name=\"\(name)\""
            if let filename { disposition += "; filename=\"\(filename)\"" }
            out += Array((disposition + "\r\n").utf8)
            if let contentType { out += Array("Content-Type: \(contentType)\r\n".utf8) }
            out += Array("\r\n".utf8)
            out += value
            out += Array("\r\n".utf8)
        }
        for (n, v) in fields { part(n, Array(v.utf8)) }
        part(fileFieldName, file, filename: filename, contentType: fileContentType)
        for (n, v) in afterFile { part(n, Array(v.utf8)) }
        out += Array("--\(boundary)--\r\n".utf8)
        return out
    }

    /// The Content-Type header of the body.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// A request for `POST /bucket` (unsigned: the form carries the credentials).
    func request(bucket: String, host: String = "127.0.0.1:9000", virtualHosted: Bool = false,
                 headers: [(String, String)] = []) -> Request {
        let b = body()
        var h = HTTPHeaders()
        h.add("Host", virtualHosted ? "\(bucket).\(host)" : host)
        h.add("Content-Type", contentType)
        h.add("Content-Length", String(b.count))
        for (n, v) in headers { h.set(n, v) }
        return Request(method: "POST", target: virtualHosted ? "/" : "/\(bucket)", headers: h, body: b)
    }
}

/// Signs POST policies like boto3's `generate_presigned_post`.
enum PostPolicySigner {
    /// The hex SigV4 signature of `policy` (the base64 text).
    static func sign(_ policy: String, secret: String, date: String, region: String = "us-east-1") -> String {
        let key = SigningKey.derive(secret: secret, date: date, region: region, service: "s3")
        return SigningKey.sign(key, Array(policy.utf8))
    }

    /// The signature fields plus `policy` for `conditions` (boto3 appends the bucket, key and
    /// x-amz-* conditions; here the caller lists them, or `coverForm` adds one per field).
    /// - Parameters:
    ///   - fields: the form's own fields (key, Content-Type, …), before the signature fields.
    ///   - coverForm: add `["starts-with", "$name", ""]` for each of `fields` and `{"bucket": …}`.
    static func signedFields(_ fields: [(String, String)], bucket: String, conditions: [JSON] = [], coverForm: Bool = true,
                             expiration: String = "2026-12-31T00:00:00Z", accessKey: String = "test", secret: String = "test",
                             date: String = "20261130T063314Z", region: String = "us-east-1",
                             policyDocument: JSON? = nil) -> [(String, String)] {
        let credential = "\(accessKey)/\(date.prefix(8))/\(region)/s3/aws4_request"
        var all = fields
        all.append(("x-amz-algorithm", "AWS4-HMAC-SHA256"))
        all.append(("x-amz-credential", credential))
        all.append(("x-amz-date", date))
        var list: [JSON] = []
        if coverForm {
            list.append(.object(["bucket": .string(bucket)]))
            for (name, _) in fields { list.append(.array([.string("starts-with"), .string("$" + name), .string("")])) }
            list.append(.object(["x-amz-algorithm": .string("AWS4-HMAC-SHA256")]))
            list.append(.object(["x-amz-credential": .string(credential)]))
            list.append(.object(["x-amz-date": .string(date)]))
        }
        list += conditions
        let document = policyDocument ?? .object(["expiration": .string(expiration), "conditions": .array(list)])
        let policy = Data(document.serialized().utf8).base64EncodedString()
        all.append(("policy", policy))
        all.append(("x-amz-signature", sign(policy, secret: secret, date: String(date.prefix(8)), region: region)))
        return all
    }
}

extension S3Harness {
    /// Sends a form upload, streaming the body in `chunkSize` pieces.
    func post(_ form: PostFormBuilder, bucket: String, chunkSize: Int = 4_093, virtualHosted: Bool = false,
              headers: [(String, String)] = []) -> S3TestResponse {
        send(form.request(bucket: bucket, host: host, virtualHosted: virtualHosted, headers: headers), chunkSize: chunkSize)
    }

    /// A signed form for `key` in `bucket` with `extra` fields, every field covered by the policy.
    func signedForm(bucket: String, key: String, extra: [(String, String)] = [], conditions: [JSON] = [],
                    file: [UInt8] = Array("hello form".utf8)) -> PostFormBuilder {
        var form = PostFormBuilder()
        form.fields = PostPolicySigner.signedFields([("key", key)] + extra, bucket: bucket, conditions: conditions,
                                                    date: clock.now().amzDate)
        form.file = file
        return form
    }
}
