import Foundation

/// What Hearth signed when it minted one presigned URL, so a failing use of the URL can be compared
/// against it field by field.
struct PresignRecord: Sendable, Equatable {
    /// One query parameter, decoded.
    struct Parameter: Sendable, Equatable {
        let name: String
        let value: String
    }

    /// One signed header, name lower-cased, value as signed.
    struct Header: Sendable, Equatable {
        let name: String
        let value: String
    }

    let method: String
    /// The path as it appears in the URL (encoded).
    let rawPath: String
    /// Query parameters other than X-Amz-Signature, decoded.
    let query: [Parameter]
    /// The signed headers, `host` included.
    let headers: [Header]
    let accessKey: String
    let amzDate: String
    let expiresSeconds: Int64
    /// X-Amz-Signature (lower-case hex).
    let signature: String
    /// The complete URL.
    let url: String

    /// The secondary lookup key: a request presenting an edited signature still names the same
    /// credential, date and path.
    var scopeKey: String { PresignLedger.scopeKey(accessKey: accessKey, amzDate: amzDate, rawPath: rawPath) }
}

/// Remembers the presigned URLs Hearth minted (uploads API, hub presign endpoint), bounded and least
/// recently used first out, so SignatureDoesNotMatch on one of them can name what changed.
final class PresignLedger: @unchecked Sendable {
    // Every field below is guarded by `lock`.
    private final class Node {
        let record: PresignRecord
        // Weak: a strong link both ways is a cycle, and the nodes of a ledger that goes away
        // (every S3Service a test makes) were never freed (LeakSanitizer, make test-asan).
        weak var previous: Node?
        var next: Node?
        init(_ record: PresignRecord) { self.record = record }
    }

    private let lock = NSLock()
    private let capacity: Int
    private var bySignature: [String: Node] = [:]
    private var byScope: [String: Node] = [:]
    private var newest: Node?
    private var oldest: Node?

    /// Records kept by default: about 1.9 KiB each (the URL, its decoded query and headers, two
    /// index keys), so ~2 MiB in all. It was 4,096 (~7.7 MiB), which the soak's two presigns a
    /// second filled for 34 minutes, a climb that looked like a leak (docs/reliability.md, *Soak*);
    /// a URL that fails is almost always one of the last thousand minted, and older ones still get
    /// the recomputed diagnosis.
    static let defaultCapacity = 1024

    /// A ledger keeping the `capacity` most recently used records.
    init(capacity: Int = PresignLedger.defaultCapacity) { self.capacity = max(1, capacity) }

    /// How many records are kept.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return bySignature.count
    }

    /// Remembers `record` (replacing one with the same signature).
    func record(_ record: PresignRecord) {
        lock.lock()
        defer { lock.unlock() }
        if let existing = bySignature[record.signature] { remove(existing) }
        let node = Node(record)
        bySignature[record.signature] = node
        byScope[record.scopeKey] = node
        node.next = newest
        newest?.previous = node
        newest = node
        if oldest == nil { oldest = node }
        while bySignature.count > capacity, let last = oldest { remove(last) }
    }

    /// The record of the URL with this X-Amz-Signature (any case).
    func lookup(signature: String) -> PresignRecord? {
        lock.lock()
        defer { lock.unlock() }
        guard let node = bySignature[signature.lowercased()] else { return nil }
        touch(node)
        return node.record
    }

    /// The most recent record for this credential, X-Amz-Date and path.
    func lookup(accessKey: String, amzDate: String, rawPath: String) -> PresignRecord? {
        lock.lock()
        defer { lock.unlock() }
        guard let node = byScope[Self.scopeKey(accessKey: accessKey, amzDate: amzDate, rawPath: rawPath)] else { return nil }
        touch(node)
        return node.record
    }

    /// Forgets every record (emulator reset).
    func removeAll() {
        lock.lock()
        defer { lock.unlock() }
        bySignature.removeAll()
        byScope.removeAll()
        // Break the links so the nodes are freed.
        var node = newest
        while let current = node {
            node = current.next
            current.previous = nil
            current.next = nil
        }
        newest = nil
        oldest = nil
    }

    static func scopeKey(accessKey: String, amzDate: String, rawPath: String) -> String {
        "\(accessKey)\u{0}\(amzDate)\u{0}\(SigV4Encoding.decode(rawPath))"
    }

    private func touch(_ node: Node) {
        guard newest !== node else { return }
        unlink(node)
        node.next = newest
        newest?.previous = node
        newest = node
        if oldest == nil { oldest = node }
    }

    private func unlink(_ node: Node) {
        node.previous?.next = node.next
        node.next?.previous = node.previous
        if newest === node { newest = node.next }
        if oldest === node { oldest = node.previous }
        node.previous = nil
        node.next = nil
    }

    private func remove(_ node: Node) {
        unlink(node)
        bySignature.removeValue(forKey: node.record.signature)
        if byScope[node.record.scopeKey] === node { byScope.removeValue(forKey: node.record.scopeKey) }
    }
}
