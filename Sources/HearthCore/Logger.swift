import Foundation

/// Line-oriented logging to standard error, as text or JSON lines. A line that cannot be written
/// (full disk, closed pipe) is dropped and counted by `StandardStream`, never fatal.
///
/// Callers never pass secrets (tokens, signatures, passwords): request lines carry the path
/// without the query string, which is where presigned signatures live.
public final class Logger: @unchecked Sendable {
    /// Output format.
    public enum Format: String, Sendable { case text, json }

    private let lock = NSLock()
    public let format: Format
    /// When true only warnings and errors are written.
    public let quiet: Bool
    private let clock: Clock?
    private let sink: @Sendable (String) -> Void
    /// Fields appended to every line, e.g. `rules=OPEN` while security rules are switched off, so
    /// no request line can be read without seeing it.
    public let everyLine: [(String, JSON)]

    /// A logger writing to stderr (or `sink`).
    public init(format: Format = .text, quiet: Bool = false, clock: Clock? = nil, everyLine: [(String, JSON)] = [],
                sink: @escaping @Sendable (String) -> Void = { line in StandardStream.write(line + "\n", to: StandardStream.error) }) {
        self.format = format
        self.quiet = quiet
        self.clock = clock
        self.everyLine = everyLine
        self.sink = sink
    }

    /// Severity.
    public enum Level: String, Sendable { case debug, info, warning, error }

    /// Writes one line with `fields` appended (text) or merged (JSON); in text form the fields
    /// named in `textOmits` are left out because the message already says them.
    public func log(_ level: Level, _ message: String, _ fields: [(String, JSON)] = [], textOmits: Set<String> = []) {
        if quiet && (level == .info || level == .debug) { return }
        let time = (clock?.now() ?? Instant(Date())).rfc3339(fractionDigits: 3)
        let fields = fields + everyLine
        let line: String
        switch format {
        case .json:
            var o = JSONObject([("time", .string(time)), ("level", .string(level.rawValue)), ("msg", .string(message))])
            for (k, v) in fields { o[k] = v }
            line = JSON.object(o).serialized()
        case .text:
            var s = "\(time) \(level.rawValue.uppercased()) \(message)"
            for (k, v) in fields where !textOmits.contains(k) {
                if case .string(let text) = v { s += " \(k)=\(text)" } else { s += " \(k)=\(v.serialized())" }
            }
            line = s
        }
        lock.lock()
        sink(line)
        lock.unlock()
    }

    public func info(_ message: String, _ fields: [(String, JSON)] = []) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [(String, JSON)] = []) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [(String, JSON)] = []) { log(.error, message, fields) }
}
