import HearthCore

/// The `nextPageToken` of `documents.list`: where the page ended, so the next page is one seek.
///
/// A token holds the last listed entry's values of the page's orderings (`__name__` last, as a
/// reference) and the orderings themselves, so the next page starts just after that position
/// (a `startAfter` cursor) and reads only its own rows. A position, unlike a count of entries
/// already listed, stays right when documents before it are added or deleted between pages, as
/// a query cursor does. The bytes are opaque to clients: a magic prefix, the stored-value
/// encoding, URL-safe base64. Anything else, or a token of another ordering or collection, is
/// Firestore's "invalid page token".
struct ListPageToken {
    /// The position's values, one per ordering of the listing (`__name__` last).
    let values: [FirestoreValue]

    private static let magic: [UInt8] = Array("HLP1".utf8)

    private init(values: [FirestoreValue], orderSignature: String) {
        self.values = values
        self.orderSignature = orderSignature
    }

    /// What the token remembers of the orderings (a token is only valid for the same ones).
    private static func signature(_ order: [Ordering]) -> String {
        order.map { $0.field.canonical + ($0.descending ? " desc" : " asc") }.joined(separator: ",")
    }

    /// The token of the position `values` in a listing ordered by `order`.
    static func encode(values: [FirestoreValue], order: [Ordering]) -> String {
        let bytes = magic + StoredValueCodec.encodeFields(["o": .string(signature(order)), "v": .array(values)])
        var text = Base64.encode(bytes)
        // URL-safe, unpadded: the token travels in query strings, where `+` and `/` need escaping.
        text = String(text.compactMap { c -> Character? in
            switch c {
            case "+": "-"
            case "/": "_"
            case "=": nil
            default: c
            }
        })
        return text
    }

    /// The orderings the token was made for (their signature).
    private let orderSignature: String

    /// Reads a token's bytes; anything not made by `encode` is INVALID_ARGUMENT.
    static func parse(_ text: String) throws(FirestoreError) -> ListPageToken {
        guard let bytes = ValueJSON.decodeBase64(text), bytes.count > magic.count, bytes.starts(with: magic),
              let fields = try? StoredValueCodec.decodeFields(Array(bytes.dropFirst(magic.count))),
              case .string(let signature)? = fields["o"], case .array(let values)? = fields["v"],
              case .reference? = values.last
        else { throw invalid }
        return ListPageToken(values: values, orderSignature: signature)
    }

    /// Checks that the token came from the listing of `collection` (any descendant when
    /// `anyDepth`) in `database` ordered by `order`.
    func check(order: [Ordering], database: DatabaseID, collection: ResourcePath, anyDepth: Bool) throws(FirestoreError) {
        guard orderSignature == Self.signature(order), values.count == order.count,
              case .reference(let name)? = values.last,
              let (db, path) = try? ResourcePath.parseName(name), db == database, path.isDocument,
              anyDepth ? collection.isAncestor(of: path) : path.parent == collection
        else { throw Self.invalid }
    }

    private static var invalid: FirestoreError { .invalidArgument("invalid page token") }

    /// The listed document the position is at (its last value).
    var path: ResourcePath? {
        guard case .reference(let name)? = values.last, let (_, path) = try? ResourcePath.parseName(name) else { return nil }
        return path
    }
}
