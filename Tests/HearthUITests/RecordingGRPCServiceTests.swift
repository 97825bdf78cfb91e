import HearthCore
import HearthGRPC
import Testing
@testable import HearthUI

@Suite struct RecordingGRPCServiceTests {
    struct Fake: GRPCService {
        let name = "google.firestore.v1.Firestore"
        func handler(for method: String) -> GRPCHandler? {
            switch method {
            case "Commit": .unary { _, _ throws(GRPCStatus) in throw GRPCStatus(.permissionDenied, "false for 'create' @ L5") }
            case "GetDocument": .unary { request, _ in request }
            // Answers a request starting with 1 itself and leaves the others to `run`.
            case "Quick": .unaryQuick(quick: { request, _ in request.first == 1 ? request : nil }, run: { _, _ in [9] })
            // Answers [1] on the loop, fails [2] there, hands [3] on (which fails: [3, 1]) and leaves the others to `run`.
            case "QuickStream": .serverStreamingQuick(quick: { request, _ throws(GRPCStatus) in
                switch request.first {
                case 1: return .answered(GRPCMessageBatch())
                case 2: throw GRPCStatus(.permissionDenied, "no")
                case 3: return .rest { _ throws(GRPCStatus) in if request.count > 1 { throw GRPCStatus(.aborted, "later") } }
                default: return nil
                }
            }, run: { _, _, _ in })
            default: nil
            }
        }
    }

    final class Discard: GRPCResponseStream, @unchecked Sendable {
        func send(_ message: [UInt8]) -> Bool { true }
        func finish(_ status: GRPCStatus) {}
        func waitUntilWritable() -> Bool { true }
        var bufferedBytes: Int { 0 }
        var isClosed: Bool { false }
    }

    /// A quick server-streaming call is recorded once: where it was answered, failed, or ended on a worker.
    @Test func quickStreamingCallsAreLoggedOnceWhereverTheyEnd() throws {
        let log = RequestLog()
        let service = RecordingGRPCService("firestore", Fake(), log: log, clock: Clock(frozenAt: Instant(unixMicros: 0)))
        let context = GRPCContext(metadata: [], deadlineNanos: nil, remoteAddress: "127.0.0.1:1", requestID: "r1")
        guard case .serverStreamingQuick(let quick, let run)? = service.handler(for: "QuickStream") else {
            Issue.record("expected a quick server-streaming handler")
            return
        }
        var statuses: [Int] { log.list(RequestLog.Filter()).entries.reversed().map(\.status) }
        guard case .answered? = try quick([1], context) else { Issue.record("not answered"); return }
        #expect(statuses == [200])
        #expect(throws: GRPCStatus(.permissionDenied, "no")) { _ = try quick([2], context) }
        #expect(statuses == [200, 403])
        guard case .rest(let ok)? = try quick([3], context), case .rest(let failing)? = try quick([3, 1], context) else {
            Issue.record("not handed on")
            return
        }
        #expect(statuses == [200, 403])  // not yet: they have not ended
        try ok(Discard())
        #expect(throws: GRPCStatus(.aborted, "later")) { try failing(Discard()) }
        #expect(statuses == [200, 403, 200, 409])
        #expect(try quick([0], context) == nil)
        try run([0], context, Discard())
        #expect(statuses == [200, 403, 200, 409, 200])
    }

    @Test func unaryCallsAreLoggedWithTheirStatusAndDenialMessage() throws {
        let log = RequestLog()
        let service = RecordingGRPCService("firestore", Fake(), log: log, clock: Clock(frozenAt: Instant(unixMicros: 0)))
        let context = GRPCContext(metadata: [("authorization", "Bearer owner")], deadlineNanos: nil, remoteAddress: "127.0.0.1:1", requestID: "r1")
        guard case .unary(let commit)? = service.handler(for: "Commit"), case .unary(let get)? = service.handler(for: "GetDocument") else {
            Issue.record("expected unary handlers")
            return
        }
        #expect(throws: GRPCStatus(.permissionDenied, "false for 'create' @ L5")) { try commit([], context) }
        #expect(try get([1, 2], context) == [1, 2])
        #expect(service.handler(for: "Nope") == nil)
        let entries = log.list(RequestLog.Filter()).entries
        #expect(entries.map(\.path) == ["/google.firestore.v1.Firestore/GetDocument", "/google.firestore.v1.Firestore/Commit"])
        #expect(entries.map(\.status) == [200, 403])
        let denied = try #require(entries.last)
        #expect(denied.user == "owner" && denied.requestID == "r1")
        let body = try JSON.parse(denied.errorBody ?? "")
        #expect(body["error"]?["status"]?.stringValue == "PERMISSION_DENIED")
        #expect(body["error"]?["message"]?.stringValue == "false for 'create' @ L5")
    }

    /// A quick call is recorded once, by the path that answered it.
    @Test func quickCallsAreLoggedOnceWhicheverPathAnswers() throws {
        let log = RequestLog()
        let service = RecordingGRPCService("firestore", Fake(), log: log, clock: Clock(frozenAt: Instant(unixMicros: 0)))
        let context = GRPCContext(metadata: [], deadlineNanos: nil, remoteAddress: "127.0.0.1:1", requestID: "r1")
        guard case .unaryQuick(let quick, let run)? = service.handler(for: "Quick") else {
            Issue.record("expected a quick unary handler")
            return
        }
        #expect(try quick([1], context) == [1])
        #expect(try quick([0], context) == nil)
        #expect(try run([0], context) == [9])
        #expect(log.list(RequestLog.Filter()).entries.map(\.status) == [200, 200])
    }

    @Test func statusNamesAreGoogles() {
        #expect(RecordingGRPCService.statusName(.invalidArgument) == "INVALID_ARGUMENT")
        #expect(RecordingGRPCService.statusName(.internal) == "INTERNAL")
        #expect(RecordingGRPCService.statusName(.ok) == "OK")
    }
}
