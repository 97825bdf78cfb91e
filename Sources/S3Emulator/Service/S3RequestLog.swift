import Foundation
import HearthCore

/// A bounded ring of recent S3 requests and their outcomes, for `GET /emulator/v1/s3/requests`.
///
/// Entries never hold secrets: the path is recorded without its query (where presigned
/// signatures live) and no header values are kept.
final class S3RequestLog: @unchecked Sendable {
    // Guarded by `lock`; appended from server threads, read by the hub.
    private let lock = NSLock()
    private var entries: [Entry] = []
    private var next = 0
    private let capacity: Int

    /// One request.
    struct Entry: Sendable, Equatable {
        var time: Instant
        var requestID: String
        var method: String
        var path: String
        var operation: String?
        var bucket: String?
        var key: String?
        var accessKey: String?
        var status: Int
        var errorCode: String?
        var diagnosis: String?
    }

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func record(_ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
        }
        next = (next + 1) % capacity
    }

    /// The most recent `limit` entries, newest first.
    func recent(limit: Int) -> [Entry] {
        lock.lock()
        defer { lock.unlock() }
        let ordered = entries.count < capacity ? entries : Array(entries[next...] + entries[..<next])
        return Array(ordered.reversed().prefix(max(0, limit)))
    }

    func clear() {
        lock.lock()
        entries = []
        next = 0
        lock.unlock()
    }
}
