import HearthHTTP

/// A raw query string split into parameters, kept both as sent and decoded.
///
/// S3 reads `+` in a query as a space (form decoding), so `name` and `value` do too; the canonical
/// query string re-encodes from the raw bytes. Parsing works on UTF-8 bytes: this runs for every
/// request.
struct QueryParameters: Sendable {
    /// One `name=value` (or bare `name`) part of the query.
    struct Item: Sendable {
        /// The name as sent.
        let rawName: String
        /// The value as sent; nil for a bare `name` without `=`.
        let rawValue: String?
        /// The name decoded.
        let name: String
        /// The value decoded ("" for a bare name).
        let value: String
    }

    /// The parameters in the order sent (empty `&&` parts dropped).
    let items: [Item]

    /// Splits `rawQuery` (without the `?`).
    init(rawQuery: String) {
        guard !rawQuery.isEmpty else {
            items = []
            return
        }
        var parsed: [Item] = []
        var raw = rawQuery
        raw.withUTF8 { bytes in
            Request.forEachQueryPair(bytes) { name, value in
                let rawName = String(decoding: name, as: UTF8.self)
                if let value {
                    let rawValue = String(decoding: value, as: UTF8.self)
                    parsed.append(Item(rawName: rawName, rawValue: rawValue,
                                       name: Self.decoded(name, raw: rawName), value: Self.decoded(value, raw: rawValue)))
                } else {
                    parsed.append(Item(rawName: rawName, rawValue: nil, name: Self.decoded(name, raw: rawName), value: ""))
                }
            }
        }
        items = parsed
    }

    /// `bytes` (whose text is `raw`) form-decoded (`%XX` and `+` as space); `raw` itself, sharing its
    /// storage, when there is nothing to decode.
    private static func decoded(_ bytes: UnsafeBufferPointer<UInt8>, raw: String) -> String {
        if !bytes.contains(where: { $0 == 0x25 || $0 == 0x2B }) { return raw }
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        Request.appendPercentDecoded(bytes, plusAsSpace: true, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The first decoded value of `name` (exact case, as S3 matches its auth parameters).
    func first(_ name: String) -> String? { items.first(where: { $0.name == name })?.value }

    /// The first parameter named `name`.
    func item(_ name: String) -> Item? { items.first(where: { $0.name == name }) }

    /// Whether a parameter `name` is present.
    func contains(_ name: String) -> Bool { items.contains(where: { $0.name == name }) }
}
