import Foundation
import HearthSQLite

/// One page of a listing: objects and, with a delimiter, the "directories" rolled up into prefixes.
struct ObjectListing {
    /// What to list (the objects.list query parameters; the Firebase API uses the first four).
    struct Query {
        var prefix = ""
        var delimiter = ""
        var pageToken: String?
        var maxResults = 1000
        /// Names ≥ this (`startOffset`).
        var startOffset: String?
        /// Names < this (`endOffset`).
        var endOffset: String?
        /// Only names (and rolled-up prefixes) that match (`matchGlob`).
        var glob: NameGlob?
        /// An object whose name ends at the delimiter is listed as an item too (`includeTrailingDelimiter`).
        var includeTrailingDelimiter = false
    }

    var items: [StoredObject] = []
    var prefixes: [String] = []
    /// Where the next page starts (opaque to clients), nil on the last page.
    var nextPageToken: String?

    /// Lists `bucket` as GCS does: names in byte order, `maxResults` counting items and prefixes.
    static func list(_ c: Connection, bucket: String, _ q: Query) throws -> ObjectListing {
        var out = ObjectListing()
        var after: String? = q.pageToken.flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
        var count = 0
        func fetch(_ limit: Int) throws -> [StoredObject] {
            try StorageStore.objects(c, bucket: bucket, prefix: q.prefix, after: after, limit: limit,
                                     atLeast: q.startOffset, below: q.endOffset)
        }
        while count < q.maxResults {
            let batch = try fetch(1000)
            if batch.isEmpty { return out }
            for o in batch {
                if count == q.maxResults {
                    out.nextPageToken = after.map { Data($0.utf8).base64EncodedString() }
                    return out
                }
                let rest = String(o.name.unicodeScalars.dropFirst(q.prefix.unicodeScalars.count))
                if !q.delimiter.isEmpty, let r = rest.range(of: q.delimiter) {
                    let p = q.prefix + rest[..<r.upperBound]
                    if q.glob?.matches(p) ?? true {
                        out.prefixes.append(p)
                        count += 1
                        // The object named exactly like its prefix sorts first under it.
                        if q.includeTrailingDelimiter, o.name == p {
                            out.items.append(o)
                            count += 1
                        }
                    }
                    // Skip every other name under this prefix.
                    after = p + "\u{10FFFF}"
                    break
                }
                after = o.name
                guard q.glob?.matches(o.name) ?? true else { continue }
                out.items.append(o)
                count += 1
            }
        }
        // Is there anything after the last one?
        if try !fetch(1).isEmpty {
            out.nextPageToken = after.map { Data($0.utf8).base64EncodedString() }
        }
        return out
    }
}
