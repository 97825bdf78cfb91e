import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The Listen engine driven by real commits through the service: exact event sequences.
@Suite struct ListenEngineTests {
    static let allOfC: JSON = .object(["from": .array([.object(["collectionId": .string("c")])])])

    static func whereEq(_ field: String, _ value: JSON, extra: [(String, JSON)] = []) -> JSON {
        var o: [(String, JSON)] = [
            ("from", .array([.object(["collectionId": .string("c")])])),
            ("where", .object(["fieldFilter": .object(["field": .object(["fieldPath": .string(field)]),
                                                       "op": .string("EQUAL"), "value": value])])),
        ]
        o.append(contentsOf: extra)
        return .object(JSONObject(o))
    }

    static func ordered(_ field: String, limit: Int, descending: Bool = false) -> JSON {
        .object(["from": .array([.object(["collectionId": .string("c")])]),
                 "orderBy": .array([.object(["field": .object(["fieldPath": .string(field)]),
                                             "direction": .string(descending ? "DESCENDING" : "ASCENDING")])]),
                 "limit": .int(Int64(limit))])
    }

    @Test func initialSnapshotThenIncrementalChanges() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        h.put("c/b", ["n": int(2)])
        h.put("other/x", ["n": int(1)])
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        #expect(l.takeSummary() == ["ADD[1]", "CHANGE a [1]", "CHANGE b [1]", "CURRENT[1]", "NO_CHANGE[]"])

        h.put("c/c", ["n": int(3)])
        #expect(l.takeSummary() == ["CHANGE c [1]", "NO_CHANGE[]"])
        h.put("c/a", ["n": int(10)])
        #expect(l.takeSummary() == ["CHANGE a [1]", "NO_CHANGE[]"])
        h.delete("c/b")
        #expect(l.takeSummary() == ["DELETE b [1]", "NO_CHANGE[]"])
        // A write elsewhere sends nothing.
        h.put("other/x", ["n": int(2)])
        h.put("c/a/sub/s", ["n": int(2)])
        #expect(l.takeSummary() == [])
    }

    @Test func everySnapshotEndsWithAReadTimeAndAResumeTokenOfThatTime() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        let first = l.take().flatMap { $0 }
        guard case .documentChange(let doc, _) = first[1] else { Issue.record("no change: \(first)"); return }
        #expect(doc.createTime.unixMicros > 0 && doc.updateTime >= doc.createTime)
        guard case .targetChange(.noChange, let ids, nil, let readTime?, let token?) = first.last else {
            Issue.record("no global NO_CHANGE: \(first)"); return
        }
        #expect(ids.isEmpty)
        #expect(ResumeToken.decode(token) == readTime)
        #expect(readTime >= doc.updateTime)

        h.put("c/a", ["n": int(2)])
        let next = l.take().flatMap { $0 }
        guard case .documentChange(let changed, _) = next.first,
              case .targetChange(.noChange, _, _, let t2?, _) = next.last else { Issue.record("\(next)"); return }
        #expect(t2 == changed.updateTime)
    }

    @Test func aDocumentThatStopsMatchingIsRemovedAndOneThatStartsIsAdded() throws {
        let h = try TestHarness()
        h.put("c/a", ["color": str("red")])
        h.put("c/b", ["color": str("blue")])
        let l = TestListener(h)
        try l.addQuery(Self.whereEq("color", str("red")), id: 4)
        #expect(l.takeSummary() == ["ADD[4]", "CHANGE a [4]", "CURRENT[4]", "NO_CHANGE[]"])
        h.put("c/a", ["color": str("green")])
        #expect(l.takeSummary() == ["REMOVE_DOC a [4]", "NO_CHANGE[]"])
        h.put("c/b", ["color": str("red")])
        #expect(l.takeSummary() == ["CHANGE b [4]", "NO_CHANGE[]"])
        // A non-matching document changing again is not news.
        h.put("c/a", ["color": str("yellow")])
        #expect(l.takeSummary() == [])
    }

    /// A whole-collection query decides from a change's before and after alone; one ordered by a
    /// field (no limit) still evaluates the query: a document without the field is not in it,
    /// and leaves it when the field goes. Ordering by `__name__` alone is the whole collection.
    @Test func aWholeCollectionListenerAndOneOrderedByAFieldDisagreeOnADocumentWithoutIt() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        let all = TestListener(h), byN = TestListener(h), byName = TestListener(h)
        try all.addQuery(Self.allOfC, id: 1)
        try byN.addQuery(.object(["from": .array([.object(["collectionId": .string("c")])]),
                                  "orderBy": .array([.object(["field": .object(["fieldPath": .string("n")])])])]), id: 2)
        try byName.addQuery(.object(["from": .array([.object(["collectionId": .string("c")])]),
                                     "orderBy": .array([.object(["field": .object(["fieldPath": .string("__name__")]),
                                                                 "direction": .string("DESCENDING")])])]), id: 3)
        #expect(all.takeSummary() == ["ADD[1]", "CHANGE a [1]", "CURRENT[1]", "NO_CHANGE[]"])
        #expect(byN.takeSummary() == ["ADD[2]", "CHANGE a [2]", "CURRENT[2]", "NO_CHANGE[]"])
        #expect(byName.takeSummary() == ["ADD[3]", "CHANGE a [3]", "CURRENT[3]", "NO_CHANGE[]"])
        h.put("c/b", ["m": int(1)])
        #expect(all.takeSummary() == ["CHANGE b [1]", "NO_CHANGE[]"])
        #expect(byN.takeSummary() == [])
        #expect(byName.takeSummary() == ["CHANGE b [3]", "NO_CHANGE[]"])
        h.put("c/a", ["m": int(2)])
        #expect(all.takeSummary() == ["CHANGE a [1]", "NO_CHANGE[]"])
        #expect(byN.takeSummary() == ["REMOVE_DOC a [2]", "NO_CHANGE[]"])
        #expect(byName.takeSummary() == ["CHANGE a [3]", "NO_CHANGE[]"])
        h.delete("c/a")
        h.delete("c/b")
        #expect(all.takeSummary() == ["DELETE a [1]", "NO_CHANGE[]", "DELETE b [1]", "NO_CHANGE[]"])
        #expect(byN.takeSummary() == [])
        #expect(byName.takeSummary() == ["DELETE a [3]", "NO_CHANGE[]", "DELETE b [3]", "NO_CHANGE[]"])
        // A document in a subcollection of the collection's documents reaches none of them.
        h.put("c/x/c/y", ["n": int(1)])
        #expect(all.takeSummary() == [] && byN.takeSummary() == [] && byName.takeSummary() == [])
    }

    @Test func oneCommitIsOneSnapshot() throws {
        let h = try TestHarness()
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        _ = l.take()
        h.put("c/gone", ["n": int(0)])
        _ = l.take()
        h.commit([h.updateWrite("c/x", ["n": int(1)]), h.updateWrite("c/y", ["n": int(2)]), h.deleteWrite("c/gone")])
        let batches = l.take()
        #expect(batches.count == 1)
        #expect(batches.flatMap { $0.map(TestListener.describe) } == ["DELETE gone [1]", "CHANGE x [1]", "CHANGE y [1]", "NO_CHANGE[]"])
    }

    /// A commit's snapshot for the listeners of a whole collection is made once per shard and
    /// shared by them all (each stream gets its own target id), one per collection the commit
    /// wrote; a stream with another target hit by the same commit gets both targets' changes in
    /// one snapshot, as before.
    @Test func wholeCollectionListenersShareOneSnapshotPerCollection() throws {
        let h = try TestHarness()
        h.put("c/gone", ["n": int(0)])
        // More listeners of c than shards: at least two share a shard.
        let ofC = (0...ListenEngine.defaultShardCount).map { _ in TestListener(h) }
        let d = TestListener(h), both = TestListener(h)
        for (i, l) in ofC.enumerated() { try l.addQuery(Self.allOfC, id: Int32(10 + i)) }
        try d.addQuery(.object(["from": .array([.object(["collectionId": .string("d")])])]), id: 3)
        try both.addQuery(Self.allOfC, id: 4)
        try both.addQuery(Self.whereEq("n", int(1)), id: 5)
        for l in ofC + [d, both] {
            _ = l.take()
            _ = l.takeShared()
        }
        h.commit([h.updateWrite("c/x", ["n": int(1)]), h.updateWrite("d/y", ["n": int(2)]), h.deleteWrite("c/gone"),
                  h.updateWrite("c/w", ["n": int(3)])])
        for (i, l) in ofC.enumerated() {
            #expect(l.takeSummary() == ["DELETE gone [\(10 + i)]", "CHANGE w [\(10 + i)]", "CHANGE x [\(10 + i)]", "NO_CHANGE[]"])
        }
        #expect(d.takeSummary() == ["CHANGE y [3]", "NO_CHANGE[]"])
        #expect(both.takeSummary() == ["DELETE gone [4]", "CHANGE w [4]", "CHANGE x [4]", "CHANGE x [5]", "NO_CHANGE[]"])
        /// Each listener's one shared snapshot of the commit.
        func sharedOf(_ ls: [TestListener]) -> [ListenBatch.Shared?] {
            ls.map { l in
                let s = l.takeShared()
                #expect(s.count == 1)
                return s.first
            }
        }
        func expectSharedWithinShards(_ snapshots: [ListenBatch.Shared?]) {
            var pairs = 0
            for i in ofC.indices {
                for j in ofC.indices where j > i {
                    let sameShard = ofC[i].stream.shard === ofC[j].stream.shard
                    if sameShard { pairs += 1 }
                    #expect((snapshots[i] === snapshots[j]) == sameShard)
                }
            }
            #expect(pairs > 0)
        }
        let first = sharedOf(ofC)
        expectSharedWithinShards(first)
        let sd = d.takeShared()
        #expect(sd.count == 1 && first.allSatisfy { $0 !== sd.first })
        #expect(both.takeShared().isEmpty)
        // The next commit makes a new one.
        h.put("c/x", ["n": int(7)])
        #expect(ofC[0].takeSummary() == ["CHANGE x [10]", "NO_CHANGE[]"])
        #expect(both.takeSummary() == ["CHANGE x [4]", "REMOVE_DOC x [5]", "NO_CHANGE[]"])
        let next = sharedOf(ofC)
        expectSharedWithinShards(next)
        #expect(next[0] !== first[0])
    }

    @Test func limitWindowPushesOutAndRefills() throws {
        let h = try TestHarness()
        for (id, n) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] { h.put("c/\(id)", ["n": int(Int64(n))]) }
        let l = TestListener(h)
        try l.addQuery(Self.ordered("n", limit: 2), id: 2)
        #expect(l.takeSummary() == ["ADD[2]", "CHANGE a [2]", "CHANGE b [2]", "CURRENT[2]", "NO_CHANGE[]"])
        // A new first document pushes b out of the window.
        h.put("c/z", ["n": int(0)])
        #expect(l.takeSummary() == ["CHANGE z [2]", "REMOVE_DOC b [2]", "NO_CHANGE[]"])
        // Deleting one from the window brings the next one (b) back in.
        h.delete("c/a")
        #expect(l.takeSummary() == ["CHANGE b [2]", "DELETE a [2]", "NO_CHANGE[]"])
        // Changes outside the window send nothing.
        h.put("c/d", ["n": int(40)])
        #expect(l.takeSummary() == [])
        // limitToLast arrives as the reversed order with a limit.
        let last = TestListener(h)
        try last.addQuery(Self.ordered("n", limit: 1, descending: true), id: 3)
        #expect(last.takeSummary() == ["ADD[3]", "CHANGE d [3]", "CURRENT[3]", "NO_CHANGE[]"])
        h.put("c/c", ["n": int(50)])
        #expect(last.takeSummary() == ["CHANGE c [3]", "REMOVE_DOC d [3]", "NO_CHANGE[]"])
    }

    @Test func documentsTargets() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        let l = TestListener(h)
        l.addDocuments(["c/a"], id: 1)
        l.addDocuments(["c/missing"], id: 2)
        #expect(l.takeSummary() == ["ADD[1]", "CHANGE a [1]", "CURRENT[1]", "NO_CHANGE[]",
                                    "ADD[2]", "DELETE missing [2]", "CURRENT[2]", "NO_CHANGE[]"])
        h.put("c/missing", ["n": int(1)])
        #expect(l.takeSummary() == ["CHANGE missing [2]", "NO_CHANGE[]"])
        h.commit([h.deleteWrite("c/a"), h.updateWrite("c/missing", ["n": int(2)])])
        #expect(l.takeSummary() == ["DELETE a [1]", "CHANGE missing [2]", "NO_CHANGE[]"])
        // A sibling of the watched document is not news.
        h.put("c/other", ["n": int(1)])
        #expect(l.takeSummary() == [])
    }

    /// A documents target's first result comes in the order the client named the documents,
    /// missing ones (DELETE) among them, as the official emulator answers.
    @Test func aDocumentsTargetAnswersInTheOrderItNamesTheDocuments() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        h.put("c/z", ["n": int(1)])
        let l = TestListener(h)
        l.addDocuments(["c/z", "c/missing", "c/a"], id: 1)
        #expect(l.takeSummary() == ["ADD[1]", "CHANGE z [1]", "DELETE missing [1]", "CHANGE a [1]", "CURRENT[1]", "NO_CHANGE[]"])
    }

    /// A target that cannot be listened to is ADD and REMOVE with its error as the cause; the
    /// stream and its other targets go on (the mobile SDKs share one stream among their listeners).
    @Test func aRejectedTargetIsRemovedWithItsCauseAndTheStreamGoesOn() throws {
        let h = try TestHarness()
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        h.service.listeners.reject(5, .invalidArgument("bad query"), on: l.stream)
        // Id 0: the stream assigns one, as for an add (1 is in use).
        h.service.listeners.reject(0, .invalidArgument("bad name"), on: l.stream)
        #expect(l.takeSummary() == ["ADD[1]", "CURRENT[1]", "NO_CHANGE[]", "ADD[5]", "REMOVE[5] 3", "ADD[2]", "REMOVE[2] 3"])
        h.put("c/a", ["n": int(1)])
        #expect(l.takeSummary() == ["CHANGE a [1]", "NO_CHANGE[]"])
        // An id in use ends the stream, as for an add.
        h.service.listeners.reject(1, .invalidArgument("bad query"), on: l.stream)
        #expect(l.takeSummary() == ["END INVALID_ARGUMENT"])
    }

    @Test func collectionGroupTargets() throws {
        let h = try TestHarness()
        h.put("u/1/files/f1", ["n": int(1)])
        let l = TestListener(h)
        try l.addQuery(.object(["from": .array([.object(["collectionId": .string("files"), "allDescendants": .bool(true)])])]), id: 9)
        #expect(l.takeSummary() == ["ADD[9]", "CHANGE f1 [9]", "CURRENT[9]", "NO_CHANGE[]"])
        h.put("u/2/files/f2", ["n": int(1)])
        #expect(l.takeSummary() == ["CHANGE f2 [9]", "NO_CHANGE[]"])
        h.put("u/2/notes/n1", ["n": int(1)])
        #expect(l.takeSummary() == [])
    }

    @Test func removeTargetUnknownIDsIgnoredAndDuplicateIDs() throws {
        let h = try TestHarness()
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        try l.addQuery(Self.allOfC, id: 0)
        #expect(l.takeSummary() == ["ADD[1]", "CURRENT[1]", "NO_CHANGE[]", "ADD[2]", "CURRENT[2]", "NO_CHANGE[]"])
        l.remove(1)
        #expect(l.takeSummary() == ["REMOVE[1]"])
        h.put("c/a", ["n": int(1)])
        #expect(l.takeSummary() == ["CHANGE a [2]", "NO_CHANGE[]"])
        // An id the stream does not hold (never added, or removed already): nothing, and the
        // stream and its other target go on, as on the official emulator.
        l.remove(77)
        l.remove(1)
        #expect(l.takeSummary() == [])
        h.put("c/b", ["n": int(2)])
        #expect(l.takeSummary() == ["CHANGE b [2]", "NO_CHANGE[]"])
        l.remove(2)
        #expect(l.takeSummary() == ["REMOVE[2]"])
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 0)

        let d = TestListener(h)
        try d.addQuery(Self.allOfC, id: 5)
        try d.addQuery(Self.allOfC, id: 5)
        let events = d.take().flatMap { $0 }
        #expect(events.map(TestListener.describe).suffix(1) == ["END INVALID_ARGUMENT"])
        guard case .end(let e) = events.last else { return }
        #expect(e.message.contains("Target ID 5"))
    }

    @Test func resumeTokenSendsOnlyWhatChangedSince() throws {
        let h = try TestHarness()
        for id in ["a", "b", "c"] { h.put("c/\(id)", ["color": str("red")]) }
        let l = TestListener(h)
        try l.addQuery(Self.whereEq("color", str("red")), id: 1)
        let first = l.take().flatMap { $0 }
        guard case .targetChange(.noChange, _, _, _, let token?) = first.last else { Issue.record("\(first)"); return }
        h.service.listeners.close(l.stream)

        // While nobody listens: one changed, one deleted, one stops matching, one new.
        h.put("c/a", ["color": str("red"), "v": int(2)])
        h.delete("c/b")
        h.put("c/c", ["color": str("blue")])
        h.put("c/d", ["color": str("red")])
        let r = TestListener(h)
        try r.addQuery(Self.whereEq("color", str("red")), id: 1, resumeToken: token, expectedCount: 3)
        let resumed = r.take().flatMap { $0 }
        #expect(resumed.map(TestListener.describe) == ["ADD[1]", "CHANGE a [1]", "CHANGE d [1]", "DELETE b [1]", "REMOVE_DOC c [1]",
                                                       "FILTER 1 2", "CURRENT[1]", "NO_CHANGE[]"])
        // The filter's bloom filter holds exactly the names the client keeps (these two test clean).
        if case .existenceFilter(_, _, let bloom?) = resumed[5] {
            #expect(["a", "d"].allSatisfy { bloom.mightContain(r.db.name(of: ResourcePath(["c", $0]))) })
            #expect(!["b", "c"].contains { bloom.mightContain(r.db.name(of: ResourcePath(["c", $0]))) })
        } else { Issue.record("no bloom filter: \(resumed)") }

        // Unknown tokens: RESET and the full result.
        let u = TestListener(h)
        try u.addQuery(Self.whereEq("color", str("red")), id: 1, resumeToken: Array("bogus".utf8))
        #expect(u.takeSummary() == ["ADD[1]", "RESET[1]", "CHANGE a [1]", "CHANGE d [1]", "CURRENT[1]", "NO_CHANGE[]"])
    }

    @Test func heartbeatKeepsAnIdleStreamsResumeTokenCurrent() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        _ = l.take()
        // Nothing new: no heartbeat.
        h.service.listeners.sync { h.service.listeners.heartbeat() }
        #expect(l.take().isEmpty)
        // A commit elsewhere: a bare NO_CHANGE at its time.
        h.put("other/x", ["n": int(1)])
        #expect(l.take().isEmpty)
        h.service.listeners.sync { h.service.listeners.heartbeat() }
        let beat = l.take().flatMap { $0 }
        let x = try #require(h.service.read { conn in
            try h.service.load(h.service.storage.space(of: l.db, conn), ResourcePath(["other", "x"]), at: nil, conn)
        })
        guard beat.count == 1, case .targetChange(.noChange, [], nil, let t?, let token?) = beat[0] else {
            Issue.record("\(beat)"); return
        }
        #expect(t == x.updateTime && ResumeToken.decode(token) == t)
        h.service.listeners.sync { h.service.listeners.heartbeat() }
        #expect(l.take().isEmpty)
        // Resuming from the heartbeat's token: only what changed after it.
        h.service.listeners.close(l.stream)
        h.delete("c/a")
        let r = TestListener(h)
        try r.addQuery(Self.allOfC, id: 1, resumeToken: token)
        #expect(r.takeSummary() == ["ADD[1]", "DELETE a [1]", "CURRENT[1]", "NO_CHANGE[]"])
    }

    @Test func rulesDenyPerTargetAndTheStreamGoesOn() throws {
        let h = try TestHarness(rules: RulesEnforcementTests.rules("""
            match /users/{uid}/files/{f} {
              allow get, list: if request.auth != null && request.auth.uid == uid;
            }
            match /shared/{d} { allow get: if resource == null || resource.data.owner == request.auth.uid; }
        """))
        h.put("users/u1/files/f", ["n": int(1)])
        h.put("users/u2/files/g", ["n": int(1)])
        h.put("shared/s", ["owner": str("u1")])
        let l = TestListener(h, caller: try h.caller("u1"))
        try l.addQuery(.object(["from": .array([.object(["collectionId": .string("files")])])]), id: 1, parent: "users/u1")
        try l.addQuery(.object(["from": .array([.object(["collectionId": .string("files")])])]), id: 2, parent: "users/u2")
        l.addDocuments(["users/u2/files/g"], id: 3)
        l.addDocuments(["shared/s"], id: 4)
        let events = l.take().flatMap { $0 }
        #expect(events.map(TestListener.describe) == [
            "ADD[1]", "CHANGE f [1]", "CURRENT[1]", "NO_CHANGE[]",
            "ADD[2]", "REMOVE[2] 7",
            "ADD[3]", "REMOVE[3] 7",
            "ADD[4]", "CHANGE s [4]", "CURRENT[4]", "NO_CHANGE[]",
        ])
        // The denial carries the same message REST gives for the same read.
        let rest = h.call("GET", h.api("/users/u2/files/g"), as: .user("u1"))
        if case .targetChange(.remove, _, let cause?, _, _) = events[7] {
            #expect(cause.message == rest.json["error"]?["message"]?.stringValue)
        } else { Issue.record("no cause") }

        // Documents targets are judged again on every change.
        h.put("shared/s", ["owner": str("u2")])
        #expect(l.takeSummary() == ["REMOVE[4] 7", "NO_CHANGE[]"])
        h.put("users/u1/files/f2", ["n": int(1)])
        #expect(l.takeSummary() == ["CHANGE f2 [1]", "NO_CHANGE[]"])
    }

    @Test func clearResetsEveryTarget() throws {
        let h = try TestHarness()
        h.put("c/a", ["n": int(1)])
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        _ = l.take()
        #expect(h.call("DELETE", "/emulator/v1/projects/\(h.project)/databases/(default)/documents").status == 200)
        let cleared = l.take().flatMap { $0 }
        #expect(cleared.map(TestListener.describe) == ["RESET[1]", "CURRENT[1]", "NO_CHANGE[]"])
        h.put("c/b", ["n": int(1)])
        let after = l.take().flatMap { $0 }
        #expect(after.map(TestListener.describe) == ["CHANGE b [1]", "NO_CHANGE[]"])
        // Read times never go back on a stream.
        guard case .targetChange(.noChange, _, _, let t1?, _) = cleared.last,
              case .targetChange(.noChange, _, _, let t2?, _) = after.last else { Issue.record("no read times"); return }
        #expect(t2 >= t1)
    }

    @Test func aSinkThatRefusesFreesTheStream() throws {
        let h = try TestHarness()
        let l = TestListener(h)
        let other = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        try other.addQuery(Self.allOfC, id: 1)
        _ = l.take(); _ = other.take()
        l.refuse = true
        h.put("c/a", ["n": int(1)])
        #expect(l.takeSummary() == [])
        #expect(other.takeSummary() == ["CHANGE a [1]", "NO_CHANGE[]"])
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 1)
        h.service.listeners.close(other.stream)
        #expect(h.service.listeners.sync { h.service.listeners.indexedTargetCount } == 0)
    }

    @Test func concurrentCommitsReachEveryListenerInCommitOrder() throws {
        let h = try TestHarness()
        let listeners = (0..<8).map { _ in TestListener(h) }
        for l in listeners { try l.addQuery(Self.allOfC, id: 1); _ = l.take() }
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            h.put("c/d\(i % 10)", ["i": int(Int64(i))])
        }
        var sequences: [[Int64]] = []
        for l in listeners {
            var times: [Int64] = []
            for batch in l.take() {
                guard case .targetChange(.noChange, _, _, let t?, _) = batch.last else { continue }
                times.append(t.unixMicros)
                // Each snapshot's documents were written at its read time.
                for case .documentChange(let d, _) in batch { #expect(d.updateTime == t) }
            }
            #expect(times == times.sorted() && Set(times).count == times.count)
            sequences.append(times)
        }
        #expect(sequences.allSatisfy { $0 == sequences[0] })
        #expect(sequences[0].count == 200)
        #expect(h.service.listeners.feed.outstanding == 0)
    }

    @Test func largeDocumentsGoOutInPiecesOfAboutAMebibyte() throws {
        let h = try TestHarness()
        let big = String(repeating: "x", count: 400_000)
        for k in 0..<6 { h.put("c/d\(k)", ["blob": str(big)]) }
        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        let batches = l.take()
        #expect(batches.flatMap { $0 }.map(TestListener.describe) == ["ADD[1]"] + (0..<6).map { "CHANGE d\($0) [1]" } + ["CURRENT[1]", "NO_CHANGE[]"])
        // Each sink call stops once it passed ListenEngine.chunkBytes: never the whole result at once.
        let sizes = batches.map { $0.reduce(0) { n, e in if case .documentChange(let d, _) = e { n + d.storageSize } else { n } } }
        #expect(batches.count >= 3)
        #expect(sizes.allSatisfy { $0 < ListenEngine.chunkBytes + 400_100 }, "\(sizes)")
    }

    @Test func manyTargetsOnOneStream() throws {
        let h = try TestHarness()
        let l = TestListener(h)
        for i in 1...10_000 { l.addDocuments(["c/d\(i)"], id: Int32(i)) }
        #expect(l.take().count == 10_000)
        h.put("c/d5000", ["n": int(1)])
        #expect(l.takeSummary() == ["CHANGE d5000 [5000]", "NO_CHANGE[]"])
    }

    /// With no stream open, commits do not reach the shards at all (the feed skips them); the
    /// next stream's first result is read at the newest of them, and later commits reach it.
    @Test func commitsWithNoStreamOpenAreSkippedAndTheNextStreamReadsThemAll() throws {
        let h = try TestHarness()
        let engine = h.service.listeners
        let started = engine.sync { engine.shards.map(\.deliveredTime) }
        h.put("c/a", ["n": int(1)])
        h.put("c/b", ["n": int(2)])
        let newest = Instant(unixMicros: h.service.storage.latestCommitMicros)
        #expect(engine.sync { engine.shards.map(\.deliveredTime) } == started)

        let l = TestListener(h)
        try l.addQuery(Self.allOfC, id: 1)
        let first = l.take().flatMap { $0 }
        #expect(first.map(TestListener.describe) == ["ADD[1]", "CHANGE a [1]", "CHANGE b [1]", "CURRENT[1]", "NO_CHANGE[]"])
        guard case .targetChange(.noChange, _, _, let readTime?, _) = first.last else { Issue.record("\(first)"); return }
        #expect(readTime == newest)
        #expect(engine.sync { engine.shards.allSatisfy { $0.deliveredTime == newest } })
        h.put("c/c", ["n": int(3)])
        #expect(l.takeSummary() == ["CHANGE c [1]", "NO_CHANGE[]"])

        // The last stream closes: skipped again; the next one catches up to the newest.
        engine.close(l.stream)
        let closedAt = engine.sync { engine.shards.map(\.deliveredTime) }
        h.delete("c/a")
        h.put("c/d", ["n": int(4)])
        #expect(engine.sync { engine.shards.map(\.deliveredTime) } == closedAt)
        let next = TestListener(h)
        try next.addQuery(Self.allOfC, id: 1)
        #expect(next.takeSummary() == ["ADD[1]", "CHANGE b [1]", "CHANGE c [1]", "CHANGE d [1]", "CURRENT[1]", "NO_CHANGE[]"])
        h.put("c/e", ["n": int(5)])
        #expect(next.takeSummary() == ["CHANGE e [1]", "NO_CHANGE[]"])
    }

    /// Streams open (each the only one: the feed goes from skipping to delivering) and close while
    /// four threads keep updating 25 documents each (document k of writer w gets n = k, k + 25, …):
    /// each stream sees every version of every document from its first result on, with no gap and
    /// none twice, eventually up to what was acknowledged; the first result is at or before its
    /// read time, every later change after it.
    @Test func aStreamOpeningWhileCommitsRunLosesNothing() throws {
        let h = try TestHarness()
        final class Progress: @unchecked Sendable {
            private let lock = NSLock()
            private var acknowledged: [String: Int64] = [:]
            private var finished = 0
            private var streams = 0
            func add(_ path: String, _ n: Int64) { lock.withLock { acknowledged[path] = n } }
            func writerDone() { lock.withLock { finished += 1 } }
            func streamDone() { lock.withLock { streams += 1 } }
            var all: [String: Int64] { lock.withLock { acknowledged } }
            var writersDone: Int { lock.withLock { finished } }
            var streamsDone: Int { lock.withLock { streams } }
        }
        // The harness's clock is frozen: the first commit takes the time the engine started at,
        // which its shards count as delivered already. Made before any stream reads.
        h.put("c/first", ["n": int(0)])
        let progress = Progress()
        progress.add("c/first", 0)
        let group = DispatchGroup()
        // The writers go on until 40 streams have come and gone (or a bound, if they stall).
        // On threads of their own: writers blocked in commits on the global pool's few threads
        // would starve the engine's queues, which run there too.
        for w in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                var i: Int64 = 1
                while progress.streamsDone < 40 && i < 50_000 {
                    let path = "c/w\(w)-\(i % 25)"
                    h.put(path, ["n": int(i)])
                    progress.add(path, i)
                    i += 1
                }
                progress.writerDone()
            }.start()
        }
        var streams = 0
        repeat {
            let l = TestListener(h)
            try l.addQuery(Self.allOfC, id: 1)
            var held: [String: Int64] = [:]
            var gaps: [String] = []
            var readTime: Instant?
            var ordered = true
            func absorb(_ events: [ListenEvent]) {
                for e in events {
                    switch e {
                    case .documentChange(let d, _):
                        if let readTime, d.updateTime <= readTime { ordered = false }
                        guard case .integer(let n)? = d.fields["n"] else { Issue.record("no n in \(d)"); continue }
                        let path = d.path.string
                        // A change after the first result is the next version of its document (or,
                        // for one the first result did not have, its first).
                        if readTime != nil, path != "c/first", n != (held[path].map { $0 + 25 } ?? (n <= 25 ? n : -1)) {
                            gaps.append("\(path): \(held[path] ?? -1) then \(n)")
                        }
                        held[path] = n
                    case .targetChange(.noChange, _, _, let t?, _):
                        if readTime == nil { readTime = t }
                    default: break
                    }
                }
            }
            absorb(l.take().flatMap { $0 })
            usleep(UInt32.random(in: 0...2000))
            // Acknowledged is not yet due: a commit waits in the feed for an earlier ticket whose
            // writer has not published yet. So the stream gets a few seconds to catch up.
            let acknowledged = progress.all
            var behind: [String: Int64] = [:]
            for _ in 0..<3000 {
                absorb(l.take().flatMap { $0 })
                behind = acknowledged.filter { path, n in (held[path] ?? -1) < n }
                if behind.isEmpty { break }
                usleep(10_000)
            }
            h.service.listeners.close(l.stream)
            // Closed on its shard before the next opens: the feed skips commits in between.
            h.service.listeners.sync {}
            #expect(readTime != nil)
            #expect(ordered, "stream \(streams): a change at or before the first result's read time")
            #expect(gaps.isEmpty, "stream \(streams): \(gaps.prefix(5))")
            #expect(behind.isEmpty, "stream \(streams): lost \(behind.sorted { $0.key < $1.key }.prefix(5))")
            streams += 1
            progress.streamDone()
        } while progress.writersDone < 4
        group.wait()
        #expect(streams >= 40)
        #expect(h.service.listeners.sync { h.service.listeners.streams.isEmpty })
    }
}
