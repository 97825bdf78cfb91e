/// A path to a field inside a document, as segments; rendered with Firestore's quoting rules.
public struct FieldPath: Sendable, Hashable, CustomStringConvertible {
    public let segments: [String]

    public init(_ segments: [String]) { self.segments = segments }

    /// Splits a dotted path (`address.city`); segments are taken literally (no backquote parsing).
    public init(dotted: String) { segments = dotted.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    /// The document name pseudo-field `__name__`.
    public static let documentID = FieldPath(["__name__"])

    /// The path as the REST API wants it: simple segments bare, others in backquotes with `\` and `` ` `` escaped.
    public var escaped: String {
        segments.map { s in
            if FieldPath.isSimple(s) { return s }
            return "`" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "`", with: "\\`") + "`"
        }.joined(separator: ".")
    }

    public var description: String { escaped }

    static func isSimple(_ s: String) -> Bool {
        guard let first = s.utf8.first, first == 95 || (first >= 65 && first <= 90) || (first >= 97 && first <= 122) else { return false }
        return s.utf8.allSatisfy { $0 == 95 || ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
    }

    func appending(_ segment: String) -> FieldPath { FieldPath(segments + [segment]) }
}
