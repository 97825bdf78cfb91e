import Foundation
import HearthCore

/// What the headers of a PutObject / UploadPart / CreateMultipartUpload say about the body and
/// the object to store, validated as S3 validates them before reading the body.
struct UploadHeaders {
    var metadata = ObjectMetadata()
    /// `Content-MD5` as sent and decoded.
    var contentMD5: (text: String, digest: [UInt8])?
    /// The one `x-amz-checksum-<algorithm>` header value, decoded.
    var headerChecksum: (algorithm: ChecksumAlgorithm, digest: [UInt8])?
    /// The algorithm of a checksum sent in the aws-chunked trailer (`x-amz-trailer`).
    var trailerChecksum: ChecksumAlgorithm?
    /// `x-amz-sdk-checksum-algorithm`.
    var sdkAlgorithm: ChecksumAlgorithm?
    /// The decoded body length the client announced, when it announced one.
    var declaredLength: Int64?

    /// The checksum algorithm whose value is stored with the object, if any.
    var checksumAlgorithm: ChecksumAlgorithm? { headerChecksum?.algorithm ?? trailerChecksum ?? sdkAlgorithm }


    static let storageClasses: Set<String> = [
        "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER", "DEEP_ARCHIVE",
        "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE",
    ]

    /// Object metadata from request headers (PutObject, CreateMultipartUpload, CopyObject REPLACE).
    static func metadata(from headers: [(name: String, value: String)]) -> Result<ObjectMetadata, S3Error> {
        var m = ObjectMetadata()
        var userSize = 0
        for (name, value) in headers {
            let lower = name.lowercased()
            if lower.hasPrefix("x-amz-meta-") {
                // S3 lower-cases metadata names (HTTP header names are case-insensitive) and joins repeats with commas.
                let key = String(lower.dropFirst("x-amz-meta-".count))
                let value = MIMEEncodedWord.decode(value)
                if let i = m.userMetadata.firstIndex(where: { $0.name == key }) {
                    m.userMetadata[i].value += "," + value
                } else {
                    m.userMetadata.append(ObjectMetadata.Pair(name: key, value: value))
                }
                userSize += key.utf8.count + value.utf8.count
            }
        }
        if userSize > 2048 { return .failure(.metadataTooLarge(size: userSize)) }
        let h = HTTPHeadersView(headers)
        m.contentType = h["Content-Type"]
        m.contentDisposition = h["Content-Disposition"]
        m.contentLanguage = h["Content-Language"]
        m.cacheControl = h["Cache-Control"]
        m.expires = h["Expires"]
        m.websiteRedirect = h["x-amz-website-redirect-location"]
        m.tagging = h["x-amz-tagging"]
        let encodings = headers.filter { $0.name.lowercased() == "content-encoding" }.map(\.value)
        if !encodings.isEmpty {
            // `aws-chunked` describes the transfer, not the object: S3 drops it from what it stores.
            let kept = encodings.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && $0.lowercased() != "aws-chunked" }
            m.contentEncoding = kept.isEmpty ? nil : kept.joined(separator: ", ")
        }
        if let sc = h["x-amz-storage-class"] {
            guard storageClasses.contains(sc) else { return .failure(.invalidStorageClass(storageClass: sc)) }
            m.storageClass = sc == "STANDARD" ? nil : sc
        }
        return .success(m)
    }

    /// Parses and validates the headers of a body upload.
    /// - Parameter maxSize: the largest body allowed (5 GiB for both objects and parts).
    static func parse(_ ctx: S3Context, maxSize: Int64) -> Result<UploadHeaders, S3Error> {
        var u = UploadHeaders()
        let headers = ctx.request.headers
        switch metadata(from: headers.fields) {
        case .success(let m): u.metadata = m
        case .failure(let e): return .failure(e)
        }
        if let md5 = headers["Content-MD5"] {
            guard let d = Data(base64Encoded: md5.trimmingCharacters(in: .whitespaces)), d.count == 16 else {
                return .failure(.invalidDigest(contentMD5: md5))
            }
            u.contentMD5 = (md5, [UInt8](d))
        }
        switch checksumHeaders(headers.fields) {
        case .failure(let e): return .failure(e)
        case .success(let c): u.headerChecksum = c
        }
        if let trailer = headers["x-amz-trailer"] {
            for name in trailer.split(separator: ",") {
                if let a = ChecksumAlgorithm(headerName: name.trimmingCharacters(in: .whitespaces)) { u.trailerChecksum = a }
            }
        }
        if let sdk = headers["x-amz-sdk-checksum-algorithm"] {
            guard let a = ChecksumAlgorithm(name: sdk) else {
                return .failure(.invalidRequest(message: "Value for x-amz-sdk-checksum-algorithm header is invalid."))
            }
            u.sdkAlgorithm = a
            if u.headerChecksum == nil && u.trailerChecksum == nil {
                return .failure(.invalidRequest(message:
                    "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found."))
            }
        }
        // The body length: aws-chunked bodies announce their decoded length separately. A
        // `Content-Encoding: aws-chunked` whose payload hash is not a streaming one and that
        // announces no decoded length is a plain body (S3 stores it, dropping the token).
        let sha = headers["x-amz-content-sha256"] ?? ""
        let chunked = sha.hasPrefix("STREAMING-")
            || ((headers["Content-Encoding"] ?? "").lowercased().contains("aws-chunked") && headers["x-amz-decoded-content-length"] != nil)
        if chunked {
            guard let text = headers["x-amz-decoded-content-length"] else { return .failure(.missingContentLength) }
            guard let n = S3Service.contentLength(text), n >= 0 else {
                return .failure(.invalidArgument(message: "x-amz-decoded-content-length is not a valid number",
                                                 name: "x-amz-decoded-content-length", value: text))
            }
            u.declaredLength = n
        } else if let text = headers["Content-Length"] {
            guard let n = S3Service.contentLength(text), n >= 0 else { return .failure(.missingContentLength) }
            u.declaredLength = n
        } else if let te = headers["Transfer-Encoding"], te.lowercased().contains("chunked") {
            // Plain HTTP chunked uploads are refused by S3: it needs the length up front.
            return .failure(.notImplemented(header: "Transfer-Encoding"))
        } else {
            return .failure(.missingContentLength)
        }
        if let n = u.declaredLength, n > maxSize {
            return .failure(.entityTooLarge(proposedSize: n, maxSize: maxSize))
        }
        return .success(u)
    }

    /// The single `x-amz-checksum-<algorithm>` header, validated.
    static func checksumHeaders(_ fields: [(name: String, value: String)]) -> Result<(algorithm: ChecksumAlgorithm, digest: [UInt8])?, S3Error> {
        var found: (algorithm: ChecksumAlgorithm, digest: [UInt8])?
        for (name, value) in fields {
            let lower = name.lowercased()
            guard lower.hasPrefix("x-amz-checksum-"), !["x-amz-checksum-algorithm", "x-amz-checksum-mode", "x-amz-checksum-type"].contains(lower),
                  let algorithm = ChecksumAlgorithm(headerName: lower) else { continue }
            if found != nil {
                return .failure(.invalidRequest(message: "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed."))
            }
            guard let digest = algorithm.decode(value) else {
                return .failure(.invalidRequest(message: "Value for \(lower) header is invalid."))
            }
            found = (algorithm, digest)
        }
        return .success(found)
    }
}

/// Case-insensitive lookup over raw header pairs.
struct HTTPHeadersView {
    let fields: [(name: String, value: String)]
    init(_ fields: [(name: String, value: String)]) { self.fields = fields }
    subscript(name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }
}
