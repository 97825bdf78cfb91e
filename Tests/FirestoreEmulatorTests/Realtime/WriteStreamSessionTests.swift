import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The Write stream's logic as the iOS SDK drives it: handshake, pipelined batches, a failure that
/// ends the stream with nothing after it applied.
@Suite struct WriteStreamSessionTests {
    static func write(_ h: TestHarness, _ path: String, _ n: Int64) throws -> Write {
        try WriteParser(database: DatabaseID(project: h.project, database: "(default)"))
            .parseWrite(ProtoObject(json: h.updateWrite(path, ["n": int(n)]), path: "writes[0]"))
    }

    @Test func handshakeValidation() throws {
        let h = try TestHarness()
        let noDB = WriteStreamSession(service: h.service, caller: .admin, streamID: "1")
        #expect(throws: FirestoreError.invalidArgument("'database' must be set on an initial write request.")) {
            try noDB.handle(.init(database: ""))
        }
        #expect(try noDB.handle(.init(database: "projects/\(h.project)/databases/(default)")) == nil)
        let token = WriteStreamSession(service: h.service, caller: .admin, streamID: "2")
        #expect(throws: FirestoreError.invalidArgument("Resuming streams is not supported, 'stream_token' must not be set on an initial write request.")) {
            try token.handle(.init(database: "projects/\(h.project)/databases/(default)", streamToken: [1]))
        }
    }

    @Test func pipelinedBatchesEachCommitAtomicallyInOrder() throws {
        let h = try TestHarness()
        let s = WriteStreamSession(service: h.service, caller: .admin, streamID: "7")
        let db = "projects/\(h.project)/databases/(default)"
        let hello = try #require(try s.handle(.init(database: db)))
        #expect(hello == .init(streamID: "7", streamToken: Array("0".utf8), commitTime: nil, results: []))

        let first = try #require(try s.handle(.init(database: "", writes: [try Self.write(h, "c/a", 1), try Self.write(h, "c/b", 2)],
                                                    streamToken: hello.streamToken)))
        #expect(first.streamToken == Array("1".utf8))
        #expect(first.results.count == 2 && first.results.allSatisfy { $0.updateTime == first.commitTime })
        let del = try WriteParser(database: DatabaseID(project: h.project, database: "(default)"))
            .parseWrite(ProtoObject(json: h.deleteWrite("c/a"), path: "writes[0]"))
        let second = try #require(try s.handle(.init(database: "", writes: [del], streamToken: first.streamToken)))
        let secondTime = try #require(second.commitTime)
        #expect(secondTime > first.commitTime!)
        // A delete reports the commit time as its version.
        #expect(second.results == [.init(updateTime: secondTime, transformResults: [])])
        let empty = try #require(try s.handle(.init(database: "", streamToken: second.streamToken)))
        #expect(empty.commitTime == nil && empty.streamToken == Array("3".utf8))
        #expect(h.call("GET", h.api("/c/a")).status == 404)
        #expect(h.call("GET", h.api("/c/b")).status == 200)
    }

    @Test func aDeniedBatchEndsTheStreamAndNothingAfterItIsApplied() throws {
        let h = try TestHarness(rules: RulesEnforcementTests.rules("""
            match /users/{uid}/{d=**} { allow read, write: if request.auth.uid == uid; }
        """))
        let s = WriteStreamSession(service: h.service, caller: try h.caller("u1"), streamID: "1")
        _ = try s.handle(.init(database: "projects/\(h.project)/databases/(default)"))
        _ = try #require(try s.handle(.init(database: "", writes: [try Self.write(h, "users/u1/f/a", 1)])))
        do {
            // One allowed and one denied write in one batch: neither is stored.
            _ = try s.handle(.init(database: "", writes: [try Self.write(h, "users/u1/f/b", 1), try Self.write(h, "users/u2/f/x", 1)]))
            Issue.record("the denied batch was accepted")
        } catch {
            #expect((error as? FirestoreError)?.status == "PERMISSION_DENIED")
        }
        // Pipelined after the failure: ignored.
        #expect(try s.handle(.init(database: "", writes: [try Self.write(h, "users/u1/f/c", 1)])) == nil)
        #expect(h.call("GET", h.api("/users/u1/f/a")).status == 200)
        #expect(h.call("GET", h.api("/users/u1/f/b")).status == 404)
        #expect(h.call("GET", h.api("/users/u1/f/c")).status == 404)
    }

    @Test func writesThroughTheStreamReachListeners() throws {
        let h = try TestHarness()
        let l = TestListener(h)
        try l.addQuery(ListenEngineTests.allOfC, id: 1)
        _ = l.take()
        let s = WriteStreamSession(service: h.service, caller: .admin, streamID: "1")
        _ = try s.handle(.init(database: "projects/\(h.project)/databases/(default)"))
        _ = try s.handle(.init(database: "", writes: [try Self.write(h, "c/a", 1), try Self.write(h, "c/b", 1)]))
        #expect(l.takeSummary() == ["CHANGE a [1]", "CHANGE b [1]", "NO_CHANGE[]"])
    }
}
