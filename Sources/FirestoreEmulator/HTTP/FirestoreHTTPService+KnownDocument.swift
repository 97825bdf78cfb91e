import HearthHTTP

/// A REST get of a document the read cache holds, taken to `getDocument` straight from the raw path.
///
/// The router splits the path into a string per segment, builds the `ResourcePath` and then the
/// full name again to look the document up: ~10k instructions of a ~170k get (docs/benchmarks.md,
/// reads1). A client reads the same few documents over and over, so the name it asks for is most
/// often a key of the read cache already, and the entry holds the database and path the router
/// would find. This takes the request only when the router provably would take it the same way;
/// everything else is routed as before.
extension FirestoreHTTPService {
    /// The cached entry that `GET /v1/{name}` (no query) names, when the router would take the
    /// request to `getDocument` of that entry's database and path; nil: route it.
    ///
    /// The router percent-decodes each `/`-separated piece (splitting Characters when the path is
    /// not ASCII). A path of ASCII bytes without `%` is therefore split exactly at its `/` bytes,
    /// with nothing decoded. An entry's name is `projects/{p}/databases/{d}/documents/{s1}/…/{sn}`
    /// (`DocumentCache.Entry`: always `database.name(of: path)`), so when the name has exactly
    /// 4 + n slashes, none of p, d or the segments holds one and the router's pieces are exactly
    /// `v1`, `projects`, p, `databases`, d, `documents`, s1 … sn; with none of them empty the router
    /// drops nothing, and with an even n it calls `getDocument` — after `validate`, whose verdict
    /// `knownGet` takes from the entry (`DocumentCache.Entry.validate`).
    func knownDocument(_ request: Request) -> DocumentCache.Entry? {
        guard request.method == "GET", !request.hasQuery else { return nil }
        var raw = request.rawPath
        let scanned: (name: String, slashes: Int)? = raw.withUTF8 { bytes in
            // "/v1/" and at least "projects/…".
            guard bytes.count > 13, bytes[0] == 0x2F, bytes[1] == 0x76, bytes[2] == 0x31, bytes[3] == 0x2F else { return nil }
            var slashes = 0
            for b in bytes[4...] {
                if b >= 0x80 || b == 0x25 { return nil }
                if b == 0x2F { slashes += 1 }
            }
            return (String(decoding: UnsafeBufferPointer(rebasing: bytes[4...]), as: UTF8.self), slashes)
        }
        guard let scanned, let entry = service.storage.readCache.entry(scanned.name) else { return nil }
        let segments = entry.path.segments
        guard entry.path.isDocument, scanned.slashes == 4 + segments.count,
              !entry.database.project.isEmpty, !entry.database.database.isEmpty,
              !segments.contains(where: \.isEmpty) else { return nil }
        return entry
    }

    /// What the router does with a request `knownDocument` recognised as naming `entry`.
    func knownGet(_ request: Request, _ entry: DocumentCache.Entry) throws(FirestoreError) -> Response {
        try entry.validate()
        let context = try RequestContext(request: request, database: entry.database, service: service)
        return try getDocument(context, path: entry.path, name: entry.name, known: entry)
    }
}
