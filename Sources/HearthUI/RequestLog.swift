import Foundation
import HearthCore

/// A bounded, in-memory log of every service's HTTP requests, newest last, for the UI's Requests
/// page and `GET /emulator/v1/requests` on the hub.
///
/// Entries hold no secrets: the path without its query (presigned signatures live there), the
/// caller as named by its credentials (a token's `user_id`, an S3 access key id, never a token or
/// secret), and, for failed requests only, the error body the client itself received — which is
/// where a rules trace or an S3 canonical request is.
public final class RequestLog: @unchecked Sendable {
    /// One request.
    public struct Entry: Sendable {
        /// Position in the log; increases by one per request, never reused (until a restart).
        public var seq: Int
        /// When it was answered, on the emulator clock.
        public var time: Instant
        /// The listener (`auth`, `firestore`, `s3`, `api`).
        public var service: String
        /// The HTTP method (`POST` for gRPC calls).
        public var method: String
        /// The raw path without the query (a gRPC call's `/service/Method`).
        public var path: String
        /// The HTTP status (a gRPC status as its HTTP equivalent).
        public var status: Int
        /// Time from the headers' arrival to the answer.
        public var durationMicros: Int64
        /// The request id the log line and S3's error body carry, spelled only when read (a gRPC
        /// call's is its 64 bits: the 16-byte text was an allocation per call, and most entries are
        /// never read).
        public var requestIDValue: RequestID
        /// The request id the log line and S3's error body carry.
        public var requestID: String {
            get { requestIDValue.text }
            set { requestIDValue = .text(newValue) }
        }
        /// Who the credentials name: an ID token's `user_id`, `owner`, or an S3 access key id.
        public var user: String?
        /// The handler's log fields (`s3.error`, `s3.diagnosis`, `uid`, …).
        public var fields: [(String, JSON)]
        /// The error body as the client received it (status ≥ 400, at most `maxBodyBytes`).
        public var errorBody: String?
        /// The error body's Content-Type.
        public var errorContentType: String?

        public init(seq: Int, time: Instant, service: String, method: String, path: String, status: Int, durationMicros: Int64,
                    requestID: RequestID, user: String?, fields: [(String, JSON)], errorBody: String?, errorContentType: String?) {
            self.seq = seq
            self.time = time
            self.service = service
            self.method = method
            self.path = path
            self.status = status
            self.durationMicros = durationMicros
            self.requestIDValue = requestID
            self.user = user
            self.fields = fields
            self.errorBody = errorBody
            self.errorContentType = errorContentType
        }

        public init(seq: Int, time: Instant, service: String, method: String, path: String, status: Int, durationMicros: Int64,
                    requestID: String, user: String?, fields: [(String, JSON)], errorBody: String?, errorContentType: String?) {
            self.init(seq: seq, time: time, service: service, method: method, path: path, status: status,
                      durationMicros: durationMicros, requestID: .text(requestID), user: user, fields: fields,
                      errorBody: errorBody, errorContentType: errorContentType)
        }
    }

    /// Longest error body kept per entry.
    public static let maxBodyBytes = 32 << 10
    /// Error bodies kept in all: past it, the oldest entries lose theirs (a flood of failures must
    /// not grow memory by a body each).
    public let bodyBudget: Int

    // Guarded by `lock`; appended from every listener's threads. Unchecked: the lock keeps the
    // accesses apart, and the runtime's exclusivity check cost ~0.2k instructions an append.
    private let lock = NSLock()
    @exclusivity(unchecked) private var ring: [Entry] = []
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private var nextSeq = 1
    /// Seqs of entries holding a body, oldest first (from `bodiesHead`), and their total bytes.
    @exclusivity(unchecked) private var bodies: [(seq: Int, bytes: Int)] = []
    @exclusivity(unchecked) private var bodiesHead = 0
    @exclusivity(unchecked) private var bodyBytes = 0
    /// Entries kept.
    public let capacity: Int
    /// Told of every entry as it is appended, under `lock` (so it sees entries in seq order and
    /// never between a `follow` replay and the registration it guards); keep it short.
    @exclusivity(unchecked) private var observer: (@Sendable (Entry) -> Void)?

    /// - Parameters:
    ///   - capacity: entries kept; older ones are dropped.
    ///   - bodyBudget: bytes of error bodies kept across entries.
    public init(capacity: Int = 20_000, bodyBudget: Int = 16 << 20) {
        self.capacity = max(1, capacity)
        self.bodyBudget = bodyBudget
        ring.reserveCapacity(min(self.capacity, 4096))
    }

    /// Appends an entry (its `seq` is assigned here) and returns that seq.
    @discardableResult
    public func append(_ entry: consuming Entry) -> Int {
        lock.lock()
        defer { lock.unlock() }
        // The entry is moved into its slot, not copied (a copy retained each of its strings).
        entry.seq = nextSeq
        let seq = nextSeq
        nextSeq += 1
        let bodyLength = entry.errorBody?.utf8.count
        // Told before the entry is moved into its slot and the bodies are trimmed (this entry still
        // has its body), still under the lock: the entry lent as it is, where reading it back out
        // of the ring copied it (retaining each of its strings, then releasing them).
        observer?(entry)
        if ring.count < capacity {
            // Grown by doubling, but never past `capacity`: left to itself the array would double
            // from 16,384 to 32,768 slots on the way to the default 20,000 and keep ~2 MiB of
            // slots no entry ever fills (measured by the soak, docs/reliability.md).
            if ring.count == ring.capacity { ring.reserveCapacity(min(capacity, max(16, ring.capacity * 2))) }
            ring.append(entry)
        } else {
            ring[head] = entry
            head = (head + 1) % capacity
        }
        if let bodyLength {
            bodies.append((seq, bodyLength))
            bodyBytes += bodyLength
            trimBodies()
        }
        return seq
    }

    /// Sets the one observer told of every appended entry, in seq order, under the log's lock
    /// (the live event stream; `nil` removes it).
    public func observe(_ observer: (@Sendable (Entry) -> Void)?) {
        lock.withLock { self.observer = observer }
    }

    /// Runs `body` with the kept entries after `seq` that match `filter` (oldest first, at most
    /// `limit`), the newest seq overall, and whether entries after `seq` were already dropped;
    /// no entry is appended meanwhile, so what `body` registers sees exactly the entries after these.
    public func follow<T>(after seq: Int, filter: Filter, limit: Int,
                          _ body: (_ entries: [Entry], _ latest: Int, _ gap: Bool) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        var out: [Entry] = []
        let n = ring.count
        let oldest = n == 0 ? nextSeq : ring[n < capacity ? 0 : head].seq
        var i = 0
        // Newest first, stopping at `seq`; reversed below.
        while i < n {
            let e = ring[(head - 1 - i + n * 2) % n]
            if e.seq <= seq { break }
            if filter.matches(e) { out.append(e) }
            i += 1
        }
        let gap = seq < oldest - 1 || out.count > limit
        if out.count > limit { out.removeLast(out.count - limit) }
        return body(out.reversed(), nextSeq - 1, gap)
    }

    /// Drops the oldest bodies until the kept ones fit the budget (caller holds the lock).
    private func trimBodies() {
        while bodyBytes > bodyBudget && bodiesHead < bodies.count {
            let (seq, bytes) = bodies[bodiesHead]
            bodiesHead += 1
            bodyBytes -= bytes
            if let i = index(of: seq) {
                ring[i].errorBody = nil
                ring[i].errorContentType = nil
            }
        }
        if bodiesHead > 1024 && bodiesHead * 2 > bodies.count {
            bodies.removeFirst(bodiesHead)
            bodiesHead = 0
        }
    }

    /// Slots the ring has allocated (for the test that it never exceeds `capacity` by much).
    var reservedSlots: Int { lock.withLock { ring.capacity } }

    /// The ring slot of `seq`, if still kept (caller holds the lock).
    private func index(of seq: Int) -> Int? {
        guard !ring.isEmpty else { return nil }
        let first = ring[ring.count < capacity ? 0 : head].seq
        guard seq >= first, seq < nextSeq else { return nil }
        let offset = seq - first
        return ring.count < capacity ? offset : (head + offset) % capacity
    }

    /// What a listing asks for.
    public struct Filter: Sendable {
        /// Only this listener's requests.
        public var service: String?
        /// `403`, `4xx`, `error` (≥ 400) or `ok` (< 400).
        public var status: String?
        /// A substring of the caller's name, any case.
        public var user: String?
        /// A substring of the path.
        public var path: String?
        /// Only entries with a larger seq (live updates).
        public var after: Int?
        /// Only entries with a smaller seq (older pages).
        public var before: Int?
        /// At most this many entries.
        public var limit = 100

        /// No filter: the newest 100.
        public init() {}

        /// Whether `e` passes every filter.
        public func matches(_ e: Entry) -> Bool {
            if let after, e.seq <= after { return false }
            if let before, e.seq >= before { return false }
            if let service, !service.isEmpty, e.service != service { return false }
            if let user, !user.isEmpty, !(e.user ?? "").localizedCaseInsensitiveContains(user) { return false }
            if let path, !path.isEmpty, !e.path.localizedCaseInsensitiveContains(path) { return false }
            if let status, !status.isEmpty {
                switch status.lowercased() {
                case "error": if e.status < 400 { return false }
                case "ok": if e.status >= 400 { return false }
                case let s where s.count == 3 && s.hasSuffix("xx"):
                    if String(e.status / 100) != String(s.prefix(1)) { return false }
                case let s:
                    if String(e.status) != s { return false }
                }
            }
            return true
        }
    }

    /// Entries matching `filter`, newest first, at most `filter.limit`; and the newest seq overall.
    public func list(_ filter: Filter) -> (entries: [Entry], latest: Int, count: Int) {
        lock.lock()
        defer { lock.unlock() }
        var out: [Entry] = []
        let n = ring.count
        var i = 0
        while i < n && out.count < filter.limit {
            // Newest first: the slot before `head`, walking backwards.
            let e = ring[(head - 1 - i + n * 2) % n]
            if let after = filter.after, e.seq <= after { break }
            if filter.matches(e) { out.append(e) }
            i += 1
        }
        return (out, nextSeq - 1, n)
    }

    /// The entry with `seq`, if still kept.
    public func entry(_ seq: Int) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        return index(of: seq).map { ring[$0] }
    }

    /// Forgets every entry (sequence numbers keep increasing, so live readers never go back).
    public func clear() {
        lock.lock()
        ring.removeAll(keepingCapacity: true)
        head = 0
        bodies.removeAll()
        bodiesHead = 0
        bodyBytes = 0
        lock.unlock()
    }
}
