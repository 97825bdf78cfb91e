/// SQL text that a connection prepares once and then finds by identity (`Connection.prepare(_:)`),
/// for statements run on every request: finding a statement by its text hashes and compares the
/// whole text each time, which for a multi-row INSERT costs more than binding one of its rows.
///
/// Keep instances in `static let`s: each instance is its own cache entry on every connection.
public final class PreparedSQL: Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }
}
