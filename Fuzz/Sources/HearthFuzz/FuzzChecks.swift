import Foundation

/// How many invariant checks each target has made (a snapshot compared with a fresh read, a pair
/// of values ordered both ways, a request judged in both evaluation modes, a stored object read
/// back), so a test can tell a target that checks something from one whose inputs never get that far.
public enum FuzzChecks {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var counts: [String: Int] = [:]

    static func count(_ target: String, _ n: Int = 1) {
        lock.withLock { counts[target, default: 0] += n }
    }

    /// Checks made by `target` so far in this process.
    public static func made(by target: String) -> Int {
        lock.withLock { counts[target, default: 0] }
    }
}
