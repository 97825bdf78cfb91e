import HearthCore
import HearthGRPC
import Testing
@testable import HearthUI

/// The request log names the database a failed gRPC call or a stream was for (its path names only
/// the method), so the UI opens a denial beside that database's rules.
@Suite struct RequestDatabaseTests {
    /// A length-delimited field (lengths under 128).
    static func field(_ number: UInt8, _ bytes: [UInt8]) -> [UInt8] { [number << 3 | 2, UInt8(bytes.count)] + bytes }
    static func field(_ number: UInt8, _ text: String) -> [UInt8] { field(number, Array(text.utf8)) }

    @Test func theDatabaseIsReadFromEachRequestShape() {
        // Commit/BatchGet/Listen/Write: `database`; GetDocument/DeleteDocument: `name`; RunQuery/List: `parent`.
        #expect(FirestoreStreamWire.database(ofRequest: Self.field(1, "projects/p/databases/other")) == "other")
        #expect(FirestoreStreamWire.database(ofRequest: Self.field(1, "projects/p/databases/(default)/documents/a/b")) == "(default)")
        // UpdateDocument: a Document (1) whose name (1) names it; other fields before it are skipped.
        let update = [0x10, 0x01] + Self.field(1, Self.field(1, "projects/p/databases/named/documents/c/d") + Self.field(2, "x"))
        #expect(FirestoreStreamWire.database(ofRequest: update) == "named")
        // Nothing to read: nil, never an error.
        #expect(FirestoreStreamWire.database(ofRequest: []) == nil)
        #expect(FirestoreStreamWire.database(ofRequest: Self.field(1, "projects/p")) == nil)
        #expect(FirestoreStreamWire.database(ofRequest: Self.field(1, "projects/p/databases/")) == nil)
        #expect(FirestoreStreamWire.database(ofRequest: [0x0a, 0x7f, 0x01]) == nil)  // truncated
    }

    struct Denying: GRPCService {
        let name = "google.firestore.v1.Firestore"
        func handler(for method: String) -> GRPCHandler? {
            .unary { request, _ throws(GRPCStatus) in
                if request.first == 0 { return [] }
                throw GRPCStatus(.permissionDenied, "false for 'get' @ L3")
            }
        }
    }

    @Test func aFailedUnaryCallNamesItsDatabaseAndAnOkOneIsUnchanged() throws {
        let log = RequestLog()
        let service = RecordingGRPCService("firestore", Denying(), log: log, clock: Clock(frozenAt: Instant(unixMicros: 0)))
        let context = GRPCContext(metadata: [], deadlineNanos: nil, remoteAddress: "127.0.0.1:1", requestID: "r1")
        guard case .unary(let get)? = service.handler(for: "GetDocument") else {
            Issue.record("expected a unary handler")
            return
        }
        #expect(throws: GRPCStatus(.permissionDenied, "false for 'get' @ L3")) {
            try get(Self.field(1, "projects/p/databases/other/documents/a/b"), context)
        }
        #expect(try get([0], context) == [])
        let entries = log.list(RequestLog.Filter()).entries
        #expect(entries.map(\.status) == [200, 403])
        #expect(entries.last?.fields.first { $0.0 == "database" }?.1 == .string("other"))
        #expect(entries.first?.fields.contains { $0.0 == "database" } == false)
    }

    @Test func aStreamsDeniedTargetAndItsEndNameItsDatabase() throws {
        let log = RequestLog()
        let context = GRPCContext(metadata: [], deadlineNanos: nil, remoteAddress: "127.0.0.1:1", requestID: "r2")
        let record = StreamRecord(listener: "firestore", method: "Listen", path: "/google.firestore.v1.Firestore/Listen",
                                  context: context, log: log, clock: Clock(frozenAt: Instant(unixMicros: 0)))
        record.opened()
        // ListenRequest: database (1), add_target (2) { documents (3) { documents (2) }, target_id (5) = 4 }.
        let target = Self.field(3, Self.field(2, "projects/p/databases/other/documents/a/b")) + [0x28, 0x04]
        record.received(Self.field(1, "projects/p/databases/other") + Self.field(2, target))
        // A later message naming another database changes nothing: the stream's is its first's.
        record.received(Self.field(1, "projects/p/databases/third"))
        // ListenResponse: target_change (2) { type (1) = REMOVE, target_ids (2) = 4, cause (3) { code 7, message } }.
        let cause = [0x08, 0x07] + Self.field(2, "denied")
        record.sent(Self.field(2, [0x08, 0x02, 0x10, 0x04] + Self.field(3, cause)))
        record.ended(GRPCStatus(.ok, ""))
        let entries = Array(log.list(RequestLog.Filter()).entries.reversed())
        let stream = entries.map { $0.fields.first { $0.0 == "stream" }?.1 }
        #expect(stream == [.string("opened"), .string("target removed"), .string("ended")])
        let database = entries.map { $0.fields.first { $0.0 == "database" }?.1 }
        #expect(database == [nil, .string("other"), .string("other")])
        #expect(entries[1].status == 403)
    }
}
