import Foundation
import HearthSQLite

/// One page of a listing: objects and, with a delimiter, the "directories" rolled up into prefixes.
struct ObjectListing {
    var items: [StoredObject] = []
    var prefixes: [String] = []
    /// Where the next page starts (opaque to clients), nil on the last page.
    var nextPageToken: String?

    /// Lists `bucket` as GCS does: names in byte order, `maxResults` counting items and prefixes.
    static func list(_ c: Connection, bucket: String, prefix: String, delimiter: String, pageToken: String?,
                     maxResults: Int) throws -> ObjectListing {
        var out = ObjectListing()
        var after: String? = pageToken.flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
        var count = 0
        while count < maxResults {
            let batch = try StorageStore.objects(c, bucket: bucket, prefix: prefix, after: after, limit: 1000)
            if batch.isEmpty { return out }
            for o in batch {
                if count == maxResults {
                    out.nextPageToken = after.map { Data($0.utf8).base64EncodedString() }
                    return out
                }
                let rest = String(o.name.unicodeScalars.dropFirst(prefix.unicodeScalars.count))
                if !delimiter.isEmpty, let r = rest.range(of: delimiter) {
                    let p = prefix + rest[..<r.upperBound]
                    out.prefixes.append(p)
                    count += 1
                    // Skip every other name under this prefix.
                    after = p + "\u{10FFFF}"
                    break
                }
                out.items.append(o)
                count += 1
                after = o.name
            }
        }
        // Is there anything after the last one?
        if try !StorageStore.objects(c, bucket: bucket, prefix: prefix, after: after, limit: 1).isEmpty {
            out.nextPageToken = after.map { Data($0.utf8).base64EncodedString() }
        }
        return out
    }
}
