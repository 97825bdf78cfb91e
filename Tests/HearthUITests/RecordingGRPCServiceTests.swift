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
            default: nil
            }
        }
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

    @Test func statusNamesAreGoogles() {
        #expect(RecordingGRPCService.statusName(.invalidArgument) == "INVALID_ARGUMENT")
        #expect(RecordingGRPCService.statusName(.internal) == "INTERNAL")
        #expect(RecordingGRPCService.statusName(.ok) == "OK")
    }
}
