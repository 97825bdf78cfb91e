import Foundation
import HearthCore
import HearthHTTP

extension S3Service {
    /// The attributes `x-amz-object-attributes` may ask for.
    static let objectAttributeNames: Set<String> = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]

    /// The attribute names a header lists (comma-separated, as SDKs send a list; blanks around and
    /// between commas ignored, a repeated name counted once). A name outside `allowed` is S3's
    /// InvalidArgument "Invalid attribute name specified." naming the header and its whole value —
    /// S3's answer for `x-amz-object-attributes` (GetObjectAttributes) and for
    /// `x-amz-optional-object-attributes` (listings). An absent or empty header lists nothing, which
    /// is the same InvalidArgument where the header is `required` (GetObjectAttributes).
    static func attributeNames(_ value: String?, header: String, allowed: Set<String>, required: Bool) -> Result<Set<String>, S3Error> {
        let names = (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !(required && names.isEmpty), names.allSatisfy(allowed.contains) else {
            return .failure(.invalidArgument(message: "Invalid attribute name specified.", name: header, value: value ?? ""))
        }
        return .success(Set(names))
    }

    /// GetObjectAttributes: the attributes named by `x-amz-object-attributes` (comma-separated),
    /// with `max-parts` / `part-number-marker` paging of a multipart object's parts.
    func getObjectAttributes(_ ctx: S3Context) -> Result<Response, S3Error> {
        let header = "x-amz-object-attributes"
        let set: Set<String>
        switch S3Service.attributeNames(ctx.header(header), header: header, allowed: S3Service.objectAttributeNames, required: true) {
        case .failure(let e): return .failure(e)
        case .success(let names): set = names
        }
        // GetObjectAttributes takes its paging in headers (x-amz-max-parts, x-amz-part-number-marker).
        var maxParts = 1000
        if let m = ctx.header("x-amz-max-parts") {
            guard let n = Int(m), n >= 0 else {
                return .failure(.invalidArgument(message: "Provided max-parts not an integer or within integer range", name: "max-parts", value: m))
            }
            maxParts = min(n, 1000)
        }
        let marker = Int(ctx.header("x-amz-part-number-marker") ?? "0") ?? 0
        return requireObject(ctx).flatMap { found in
            let record = found.record
            if case .failure(let e) = SSECustomerKey.forRead({ ctx.header($0) }, prefix: "x-amz-server-side-encryption-customer-",
                                                            stored: record.metadata.extra.customerKeyMD5) {
                return .failure(e)
            }
            var x = XMLWriter()
            x.group("GetObjectAttributesResponse", namespace: true) { x in
                if set.contains("ETag") { x.element("ETag", ETag.bare(record.etag)) }
                if set.contains("Checksum"), let c = record.checksum {
                    x.group("Checksum") { x in
                        x.element(c.algorithm.xmlName, c.value)
                        x.element("ChecksumType", c.type)
                    }
                }
                if set.contains("ObjectParts"), let sizes = record.partSizes {
                    x.group("ObjectParts") { x in
                        x.element("PartsCount", String(sizes.count))
                        let page = Array(sizes.enumerated().dropFirst(max(0, marker)).prefix(maxParts))
                        x.element("PartNumberMarker", String(marker))
                        if let last = page.last { x.element("NextPartNumberMarker", String(last.offset + 1)) }
                        x.element("MaxParts", String(maxParts))
                        x.element("IsTruncated", marker + page.count < sizes.count ? "true" : "false")
                        for (i, size) in page {
                            x.group("Part") { x in
                                x.element("PartNumber", String(i + 1))
                                x.element("Size", String(size))
                                if let c = record.checksum, let sums = record.metadata.extra.partChecksums, i < sums.count, !sums[i].isEmpty {
                                    x.element(c.algorithm.xmlName, sums[i])
                                }
                            }
                        }
                    }
                }
                if set.contains("StorageClass") { x.element("StorageClass", record.metadata.storageClass ?? "STANDARD") }
                if set.contains("ObjectSize") { x.element("ObjectSize", String(record.size)) }
            }
            var h = S3Service.versionHeader(record, versioned: found.versioned)
            h.add("Last-Modified", record.lastModified.httpDate)
            return .success(S3Service.xmlResponse(x, headers: h))
        }
    }
}
