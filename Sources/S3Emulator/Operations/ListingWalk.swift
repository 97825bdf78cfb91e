/// The walk behind ListObjects, ListObjectsV2 and ListObjectVersions: entries in key (UTF-8 byte)
/// order from a cursor, keys that contain `delimiter` after `prefix` rolled into common prefixes
/// (one page entry each, their keys skipped with one index seek), at most `maxKeys` entries.
enum ListingWalk {
    /// One entry of a page.
    enum Item<Entry> {
        case entry(Entry)
        case commonPrefix(String)
    }

    /// - Parameters:
    ///   - markerKey: the page's marker key; a common prefix at or before it belongs to an earlier page.
    ///   - start: where the first fetch starts.
    ///   - seek: the cursor just past every key starting with the given bytes.
    ///   - after: the cursor just past an entry.
    ///   - fetch: up to `limit` entries after a cursor, in order.
    /// - Returns: the page's items and whether more follow.
    static func walk<Entry, Cursor>(prefix: String, delimiter: String, markerKey: [UInt8]?, maxKeys: Int, start: Cursor?,
                                    key: (Entry) -> String, seek: ([UInt8]) -> Cursor, after: (Entry) -> Cursor,
                                    fetch: (Cursor?, Int) throws -> [Entry]) rethrows -> (items: [Item<Entry>], isTruncated: Bool) {
        var items: [Item<Entry>] = []
        guard maxKeys > 0 else { return (items, false) }
        var cursor = start
        scan: while true {
            let limit = min(1000, maxKeys - items.count + 1)
            let batch = try fetch(cursor, limit)
            if batch.isEmpty { break }
            var seeked = false
            for entry in batch {
                let entryKey = key(entry)
                if !delimiter.isEmpty {
                    let rest = String(decoding: entryKey.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
                    if let range = rest.range(of: delimiter) {
                        let commonPrefix = prefix + String(rest[..<range.upperBound])
                        let cpBytes = Array(commonPrefix.utf8)
                        let earlier = markerKey.map { !$0.lexicographicallyPrecedes(cpBytes) } ?? false
                        if !earlier {
                            if items.count == maxKeys { return (items, true) }
                            items.append(.commonPrefix(commonPrefix))
                        }
                        guard let skip = S3Store.successor(ofPrefix: cpBytes) else { break scan }
                        cursor = seek(skip)
                        seeked = true
                        break
                    }
                }
                if items.count == maxKeys { return (items, true) }
                items.append(.entry(entry))
                cursor = after(entry)
            }
            if !seeked && batch.count < limit { break }
        }
        return (items, false)
    }
}
