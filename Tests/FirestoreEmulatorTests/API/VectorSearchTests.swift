import Foundation
import HearthCore
import HearthProtobuf
import Testing
@testable import FirestoreEmulator

/// Vector values and `findNearest` through the REST API: storage, ordering, equality filters, the
/// clause's checks in the official emulator's words, pre-filters, result fields and Listen.
@Suite struct VectorSearchTests {
    static func vec(_ xs: Double...) -> JSON {
        map([("__type__", str("__vector__")), ("value", arr(xs.map(dbl)))])
    }

    static func nearest(_ measure: String, _ v: JSON, limit: JSON = .int(10), extra: [(String, JSON)] = []) -> (String, JSON) {
        ("findNearest", .object(JSONObject([("vectorField", .object(["fieldPath": .string("e")])), ("queryVector", v),
                                            ("distanceMeasure", .string(measure)), ("limit", limit)] + extra)))
    }

    static func query(_ base: JSON, _ nearest: (String, JSON)) -> JSON {
        guard case .object(var o) = base else { return base }
        o[nearest.0] = nearest.1
        return .object(o)
    }

    static func beans() throws -> TestHarness {
        let h = try TestHarness()
        h.put("beans/a", ["e": vec(1, 0), "tag": str("x"), "n": int(1)])
        h.put("beans/b", ["e": vec(0, 1), "tag": str("x"), "n": int(2)])
        h.put("beans/c", ["e": vec(1, 1), "tag": str("y"), "n": int(3)])
        h.put("beans/d", ["e": vec(3, 4), "tag": str("x"), "n": int(4)])
        h.put("beans/g3", ["e": vec(1, 0, 0), "tag": str("x"), "n": int(5)])
        h.put("beans/arr", ["e": arr([dbl(1), dbl(0)]), "tag": str("x"), "n": int(6)])
        return h
    }

    @Test func aVectorIsStoredReadOrderedAndFilteredAsItsOwnType() throws {
        let h = try Self.beans()
        let got = h.call("GET", h.api("/beans/a"))
        #expect(got.json["fields"]?["e"] == Self.vec(1, 0))
        // Arrays < vectors (by dimension, then elements) < maps.
        h.put("beans/m", ["e": map([("a", int(1))]), "n": int(7)])
        #expect(h.query(sq("beans", orderBy: [order("e")])).ids == ["arr", "b", "a", "c", "d", "g3", "m"])
        #expect(h.query(sq("beans", where: ff("e", "EQUAL", Self.vec(1, 1)))).ids == ["c"])
        #expect(h.query(sq("beans", where: ff("e", "GREATER_THAN", Self.vec(1, 0)))).ids == ["c", "d", "g3"])
        // A vector is one value: its wire members are not fields.
        #expect(h.query(sq("beans", where: ff("e.__type__", "EQUAL", str("__vector__")))).ids == [])
        // Refused in written documents, as the emulator refuses them.
        let bad = h.call("PATCH", h.api("/beans/z"), .object(["fields": .object(["e": map([("__type__", str("__vector__")), ("value", arr([int(1)]))])])]))
        #expect(bad.status == 400 && bad.json["error"]?["message"]?.stringValue == "Vector must only contain values of type 'double'")
    }

    @Test func findNearestRanksPreFilteredResultsAndAddsTheDistance() throws {
        let h = try Self.beans()
        // Read once so the stored version's encoding is cached: the distance must still be added.
        _ = h.call("GET", h.api("/beans/a"))
        _ = h.query(sq("beans"))
        let r = h.query(Self.query(sq("beans"), Self.nearest("EUCLIDEAN", Self.vec(1, 0), extra: [("distanceResultField", .string("dist"))])))
        #expect(r.ids == ["a", "c", "b", "d"])
        let distances = (r.json.arrayValue ?? []).compactMap { $0["document"]?["fields"]?["dist"] }
        #expect(distances == [dbl(0), dbl(1), dbl(2.0.squareRoot()), dbl(20.0.squareRoot())])
        // Pre-filtered; the dot product ranks the largest first; a threshold bounds it.
        let x = h.query(Self.query(sq("beans", where: ff("tag", "EQUAL", str("x"))), Self.nearest("DOT_PRODUCT", Self.vec(1, 0), extra: [("distanceThreshold", .double(0.5))])))
        #expect(x.ids == ["d", "a"])
        // A projection keeps only what it names (the distance field too when named).
        let p = h.query(Self.query(sq("beans", select: ["dist"]), Self.nearest("COSINE", Self.vec(1, 0), limit: .int(1), extra: [("distanceResultField", .string("dist"))])))
        #expect(p.json[0]?["document"]?["fields"] == .object(["dist": dbl(0)]))
        // The stored document is unchanged for the next plain read.
        #expect(h.call("GET", h.api("/beans/a")).json["fields"]?["dist"] == nil)
        #expect(h.query(sq("beans", where: ff("n", "EQUAL", int(1)))).json[0]?["document"]?["fields"]?["dist"] == nil)
    }

    @Test(arguments: [
        ("a query vector that is an array", nearest("EUCLIDEAN", arr([dbl(1)])), "Query Value must be of type vector."),
        ("no query vector", ("findNearest", .object(["vectorField": .object(["fieldPath": .string("e")]), "distanceMeasure": .string("EUCLIDEAN"), "limit": .int(1)])),
         "Cannot convert firestore.v1.Value with type unset."),
        ("an empty query vector", nearest("EUCLIDEAN", map([("__type__", str("__vector__")), ("value", .object(["arrayValue": .object([:])]))])), "Cannot have a zero length vector."),
        ("no measure", nearest("DISTANCE_MEASURE_UNSPECIFIED", vec(1)), "Unknown Distance Measure."),
        ("limit 0", nearest("EUCLIDEAN", vec(1), limit: .int(0)), "FindNearest.limit must be a positive integer of no more than 1000"),
        ("limit 1001", nearest("EUCLIDEAN", vec(1), limit: .int(1001)), "FindNearest.limit must be a positive integer of no more than 1000"),
        ("a reserved result field", nearest("EUCLIDEAN", vec(1), extra: [("distanceResultField", .string("__x__"))]),
         "The distanceResultField.property.name \"__x__\" is reserved."),
        ("an infinite threshold", nearest("EUCLIDEAN", vec(1), extra: [("distanceThreshold", .string("Infinity"))]), "distanceThreshold must be a finite number."),
    ])
    func badClausesAreRefused(_ name: String, _ clause: (String, JSON), _ message: String) throws {
        let h = try TestHarness()
        let r = h.query(Self.query(sq("beans"), clause))
        #expect(r.status == 400)
        #expect(r.json["error"]?["message"]?.stringValue == message, "\(name)")
    }

    /// A number past a double's range anywhere in a REST body read as ±infinity: a threshold of
    /// `1e400` was refused in the words for `"Infinity"`, a limit of it by the int32 check. The official
    /// emulator refuses each such body whole with "Payload isn't valid for request." (run against it
    /// here for all of these: threshold, limit, the query's own limit and offset, a `readTime`'s
    /// seconds, a filter value, a member it does not know).
    @Test(arguments: [
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}], "findNearest": {"vectorField": {"fieldPath": "e"}, "queryVector": VEC, "distanceMeasure": "EUCLIDEAN", "limit": 3, "distanceThreshold": 1e400}}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}], "findNearest": {"vectorField": {"fieldPath": "e"}, "queryVector": VEC, "distanceMeasure": "EUCLIDEAN", "limit": 1e400}}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}], "findNearest": {"vectorField": {"fieldPath": "e"}, "queryVector": VEC, "distanceMeasure": "DOT_PRODUCT", "limit": 3, "distanceThreshold": -1e999}}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}], "limit": 1e400}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}], "offset": -1e400}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}]}, "readTime": {"seconds": 1e400}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}], "where": {"fieldFilter": {"field": {"fieldPath": "n"}, "op": "EQUAL", "value": {"doubleValue": 2e308}}}}}"#,
        #"{"structuredQuery": {"from": [{"collectionId": "beans"}]}, "bogus": 1e400}"#,
    ])
    func aNumberPastADoublesRangeIsRefusedAsTheEmulatorRefusesIt(body: String) throws {
        let h = try Self.beans()
        let vector = #"{"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1}, {"doubleValue": 0}]}}}}}"#
        let r = h.call("POST", h.api(":runQuery"), text: body.replacingOccurrences(of: "VEC", with: vector))
        #expect(r.status == 400)
        #expect(r.json["error"]?["message"]?.stringValue == "Payload isn't valid for request.")
        #expect(r.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
    }

    @Test func aLimitOffsetOrCursorBesideItIsRefused() throws {
        let h = try TestHarness()
        let clause = Self.nearest("EUCLIDEAN", Self.vec(1))
        for (q, message) in [
            (sq("beans", limit: 1), "A query limit cannot be used with FindNearest"),
            (sq("beans", offset: 1), "A query offset cannot be used with FindNearest"),
            (sq("beans", orderBy: [order("n")], startAt: .object(["values": .array([int(1)])])), "A cursor cannot be used with FindNearest"),
        ] {
            #expect(h.query(Self.query(q, clause)).json["error"]?["message"]?.stringValue == message)
        }
    }

    @Test func aListenTargetCannotSearchVectors() throws {
        let db = "projects/p/databases/(default)"
        guard case .object(let nearest) = Self.query(sq("beans"), Self.nearest("EUCLIDEAN", Self.vec(1))) else { return }
        let request: JSON = .object(["database": .string(db), "addTarget": .object(["targetId": .int(1), "query": .object([
            "parent": .string(db + "/documents"), "structuredQuery": .object(nearest)])])])
        guard case .object(let o) = request else { return }
        let bytes = ProtoJSON.encode(o, FirestoreSchemas.v1 + "ListenRequest")
        // Refused like every target that cannot be listened to: ADD and REMOVE with the cause, the
        // stream going on for the other targets (ListenCall.Action.reject).
        let action = try FirestoreGRPCService.decodeListen(bytes).action
        guard case .reject(let id, .invalidArgument(let message))? = action else {
            Issue.record("not rejected: \(String(describing: action))")
            return
        }
        #expect(id == 1)
        #expect(message.contains("FindNearest cannot be used in a Listen target"))
    }
}
