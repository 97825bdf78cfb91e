import HearthCore

/// Reads a REST batchGet body straight from its JSON text, for the plain form clients send in a
/// transaction's read-modify-write loop: `{"documents": ["…"], "transaction": "…"}`.
///
/// The general path parses the body into a `JSON` tree and wraps it in a `ProtoObject` before the
/// members are read (for the transaction row's batchGet ~6k instructions of its ~75k,
/// docs/benchmarks.md, txn26). This reads the text once (`PlainJSONReader`) and gives exactly the
/// names and `transaction` string the general path reads from the same bytes: `documents` as an
/// array of plain strings and `transaction` as a string, each at most once and nothing else.
/// Anything else — `mask`, `newTransaction`, `readTime`, `requestOptions`, a number given for a
/// name, an escape, a repeated member, malformed text — falls back (nil), and the caller runs
/// the general path on the same bytes, which words every error as before.
struct BatchGetJSONDecoder {
    struct Body: Equatable {
        /// The `documents` as sent (names not yet parsed).
        var names: [String]
        /// The `transaction` member as sent (base64; not yet checked).
        var transaction: String?
    }

    typealias Fallback = PlainJSONReader.Fallback

    static func body(_ bytes: [UInt8]) -> Body? {
        bytes.withUnsafeBufferPointer { buffer in
            var r = PlainJSONReader(buffer)
            return try? body(&r)
        }
    }

    private static func body(_ r: inout PlainJSONReader) throws(Fallback) -> Body {
        let (names, transaction) = try r.listAndTransaction("documents", transactionAllowed: true) { r throws(Fallback) in
            try r.string()
        }
        return Body(names: names, transaction: transaction)
    }
}
