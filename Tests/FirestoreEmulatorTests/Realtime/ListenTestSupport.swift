import Foundation
import HearthCore
@testable import FirestoreEmulator

/// One Listen stream on a test harness's engine, recording every batch its sink receives.
final class TestListener: @unchecked Sendable {
    private let lock = NSLock()
    private var _batches: [[ListenEvent]] = []
    private var _shared: [ListenBatch.Shared] = []
    /// Refuse every batch (a client that went away).
    var refuse = false
    let harness: TestHarness
    private(set) var stream: ListenStream!

    /// - Parameter writable: the client's flow control (false: it is not reading now).
    init(_ h: TestHarness, caller: Caller = .admin, writable: @escaping @Sendable () -> Bool = { true }) {
        harness = h
        stream = h.service.listeners.open(caller: caller, writable: writable) { [weak self] batch, _ in
            guard let self else { return false }
            self.lock.lock()
            defer { self.lock.unlock() }
            if self.refuse { return false }
            self._batches.append(batch.events)
            if case .shared(let snapshot, _) = batch.content { self._shared.append(snapshot) }
            return true
        }
    }

    var db: DatabaseID { DatabaseID(project: harness.project, database: "(default)") }

    /// Waits for what was queued on the engine, then returns the batches received so far and forgets them.
    func take() -> [[ListenEvent]] { drain(\._batches) }

    /// The shared snapshots (`ListenBatch.Shared`) among the batches received so far, forgotten.
    func takeShared() -> [ListenBatch.Shared] { drain(\._shared) }

    /// Waits for what was queued on the engine, then returns what `list` holds and empties it.
    private func drain<T>(_ list: ReferenceWritableKeyPath<TestListener, [T]>) -> [T] {
        harness.service.listeners.sync {}
        lock.lock()
        defer { lock.unlock() }
        let got = self[keyPath: list]
        self[keyPath: list] = []
        return got
    }

    /// `take`, flattened into one list of short descriptions.
    func takeSummary() -> [String] { take().flatMap { $0.map(Self.describe) } }

    func addQuery(_ structured: JSON, id: Int32, parent: String = "", resumeToken: [UInt8]? = nil, expectedCount: Int? = nil) throws {
        let parentPath = ResourcePath(parent.isEmpty ? [] : parent.split(separator: "/").map(String.init))
        let q = try QueryParser(database: db, parent: parentPath).parse(ProtoObject(json: structured, path: "structuredQuery"))
        harness.service.listeners.add(ListenTarget(database: db, id: id, kind: .query(q), resumeToken: resumeToken,
                                                   expectedCount: expectedCount), to: stream)
    }

    func addDocuments(_ paths: [String], id: Int32, resumeToken: [UInt8]? = nil) {
        let docs = paths.map { ResourcePath($0.split(separator: "/").map(String.init)) }
        harness.service.listeners.add(ListenTarget(database: db, id: id, kind: .documents(docs), resumeToken: resumeToken),
                                      to: stream)
    }

    func remove(_ id: Int32) { harness.service.listeners.remove(id, from: stream) }

    /// `ADD[1]`, `CHANGE a [1]`, `DELETE a [1]`, `REMOVE_DOC a [1]`, `CURRENT[1]`, `NO_CHANGE[]`,
    /// `REMOVE[1] 7`, `FILTER 1 n`, `END INVALID_ARGUMENT`: names are the path's last segment.
    static func describe(_ e: ListenEvent) -> String {
        func ids(_ i: [Int32]) -> String { "[" + i.map(String.init).joined(separator: ",") + "]" }
        switch e {
        case .targetChange(let kind, let targetIDs, let cause, _, _):
            let name = ["NO_CHANGE", "ADD", "REMOVE", "CURRENT", "RESET"][kind.rawValue]
            return name + ids(targetIDs) + (cause.map { " \($0.grpcCode)" } ?? "")
        case .documentChange(let d, let t): return "CHANGE \(d.path.lastSegment) \(ids(t))"
        case .documentDelete(let p, let t, _): return "DELETE \(p.lastSegment) \(ids(t))"
        case .documentRemove(let p, let t, _): return "REMOVE_DOC \(p.lastSegment) \(ids(t))"
        case .existenceFilter(let t, let n, _): return "FILTER \(t) \(n)"
        case .end(let error): return "END \(error.status)"
        }
    }
}

extension TestHarness {
    /// The caller an end user's ID token makes, exactly as a request's `authorization` decides it.
    func caller(_ uid: String) throws -> Caller {
        try Caller.from(authorization: "Bearer " + TestHarness.token(uid), projectID: project, verifier: TestVerifier(),
                        logger: Logger(format: .text, quiet: true, clock: clock, sink: { _ in }))
    }

    func delete(_ path: String) {
        let r = call("DELETE", api("/" + path))
        precondition(r.status == 200, "delete \(path) failed: \(r.json)")
    }

    /// Several writes in one commit as the owner.
    func commit(_ writes: [JSON]) {
        let r = call("POST", api(":commit"), .object(["writes": .array(writes)]))
        precondition(r.status == 200, "commit failed: \(r.json)")
    }

    func updateWrite(_ path: String, _ fields: [String: JSON]) -> JSON {
        .object(["update": .object(["name": .string(root + "/" + path),
                                    "fields": .object(JSONObject(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))])])
    }

    func deleteWrite(_ path: String) -> JSON { .object(["delete": .string(root + "/" + path)]) }
}
