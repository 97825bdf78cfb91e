import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// `partitionQuery`: cursors that split a collection-group query into parts, usable as
/// `startAt`/`endBefore` of the same query, at the current time or a `readTime`.
@Suite struct PartitionQueryTests {
    static func group() -> JSON { sq("g", allDescendants: true) }

    static func partition(_ h: TestHarness, count: Int, query: JSON = group(), extra: [(String, JSON)] = []) -> (status: Int, json: JSON) {
        var body: [(String, JSON)] = [("structuredQuery", query), ("partitionCount", .string(String(count)))]
        body.append(contentsOf: extra)
        let r = h.call("POST", h.api(":partitionQuery"), .object(JSONObject(body)))
        return (r.status, r.json)
    }

    static func cursors(_ json: JSON) -> [JSON] {
        (json["partitions"]?.arrayValue ?? []).compactMap { $0["values"]?[0] }
    }

    @Test func partitionsCoverTheResultsExactlyOnce() throws {
        let h = try TestHarness()
        for i in 0..<10 { h.put("a/x/g/d\(i)", [:]) }
        for i in 0..<7 { h.put("g/e\(i)", [:]) }
        let r = Self.partition(h, count: 3)
        #expect(r.status == 200, "\(r.json)")
        let points = Self.cursors(r.json)
        #expect(points.count == 3)
        // query endBefore A; startAt A endBefore B; …; startAt C.
        var bounds: [(JSON?, JSON?)] = []
        var previous: JSON?
        for p in points {
            bounds.append((previous, p))
            previous = p
        }
        bounds.append((previous, nil))
        var seen: [String] = []
        for (start, end) in bounds {
            var o: [(String, JSON)] = [("from", .array([.object(["collectionId": .string("g"), "allDescendants": .bool(true)])])),
                                       ("orderBy", .array([order("__name__")]))]
            if let start { o.append(("startAt", .object(["values": .array([start]), "before": .bool(true)]))) }
            if let end { o.append(("endAt", .object(["values": .array([end]), "before": .bool(true)]))) }
            let part = h.query(.object(JSONObject(o)))
            #expect(part.ids.count >= 4 && part.ids.count <= 5, "\(part.ids)")
            seen += part.ids
        }
        #expect(seen.count == 17 && Set(seen).count == 17)
        #expect(seen == h.query(sq("g", allDescendants: true)).ids)
    }

    @Test func fewResultsGiveFewerPartitionsAndPagesWork() throws {
        let h = try TestHarness()
        #expect(Self.partition(h, count: 5).json == .object([:]))
        h.put("g/a", [:])
        #expect(Self.cursors(Self.partition(h, count: 5).json).isEmpty)
        h.put("g/b", [:])
        h.put("g/c", [:])
        #expect(Self.cursors(Self.partition(h, count: 5).json).count == 2)
        let first = Self.partition(h, count: 5, extra: [("pageSize", .int(1))])
        #expect(Self.cursors(first.json).count == 1)
        let token = first.json["nextPageToken"] ?? .null
        let second = Self.partition(h, count: 5, extra: [("pageSize", .int(1)), ("pageToken", token)])
        #expect(Self.cursors(second.json).count == 1)
        #expect(second.json["nextPageToken"] == nil)
    }

    @Test func readTimeAndInvalidRequests() throws {
        let h = try TestHarness()
        for i in 0..<4 { h.put("g/d\(i)", [:]) }
        h.clock.advance(seconds: 1)
        let t = h.clock.now()
        h.clock.advance(seconds: 1)
        for i in 4..<12 { h.put("g/d\(i)", [:]) }
        let past = Self.partition(h, count: 10, extra: [("readTime", .string(ValueJSON.formatTimestamp(t)))])
        #expect(Self.cursors(past.json).count == 3)
        #expect(Self.cursors(Self.partition(h, count: 10).json).count == 10)
        let bad: [(String, JSON)] = [
            ("not a group", sq("g")),
            ("filtered", sq("g", allDescendants: true, where: ff("x", "EQUAL", int(1)))),
            ("other order", sq("g", allDescendants: true, orderBy: [order("x")])),
            ("descending", sq("g", allDescendants: true, orderBy: [order("__name__", "DESCENDING")])),
            ("limit", sq("g", allDescendants: true, limit: 3)),
        ]
        for (label, query) in bad {
            let r = Self.partition(h, count: 2, query: query)
            #expect(r.status == 400, "\(label)")
            #expect(r.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT", "\(label)")
        }
        #expect(Self.partition(h, count: 0).status == 400)
        #expect(Self.partition(h, count: 2, query: sq("g", allDescendants: true, orderBy: [order("__name__")])).status == 200)
    }
}
