import Foundation
import Testing
@testable import HearthClient

@Suite struct QueryTests {
    func json(_ q: Query) throws -> String { String(decoding: try WireJSON.encode(q.structuredQuery), as: UTF8.self) }

    @Test func aFullQuery() throws {
        let q = Query(collection: "files", parent: "users/u1")
            .whereField("status", .equal, "ready")
            .filter(.or([.field("size", .greaterThan, 10), .unary("note", .isNull)]))
            .order(by: "createdAt", descending: true)
            .start(after: [.timestamp(Timestamp(seconds: 1))])
            .end(at: [.timestamp(Timestamp(seconds: 2))])
            .offset(1).limit(5).select(["s3Key", "the size"])
        let text = try json(q)
        #expect(text.contains(#""from":[{"allDescendants":false,"collectionId":"files"}]"#))
        #expect(text.contains(#""where":{"compositeFilter":{"filters":[{"fieldFilter":{"field":{"fieldPath":"status"},"op":"EQUAL","value":{"stringValue":"ready"}}},{"compositeFilter":{"filters":[{"fieldFilter":{"field":{"fieldPath":"size"},"op":"GREATER_THAN","value":{"integerValue":"10"}}},{"unaryFilter":{"field":{"fieldPath":"note"},"op":"IS_NULL"}}],"op":"OR"}}],"op":"AND"}}"#), "\(text)")
        #expect(text.contains(#""orderBy":[{"direction":"DESCENDING","field":{"fieldPath":"createdAt"}}]"#))
        #expect(text.contains(#""startAt":{"before":false,"values":[{"timestampValue":"1970-01-01T00:00:01Z"}]}"#))
        #expect(text.contains(#""endAt":{"before":false,"values":[{"timestampValue":"1970-01-01T00:00:02Z"}]}"#))
        #expect(text.contains(#""limit":5"#))
        #expect(text.contains(#""offset":1"#))
        #expect(text.contains(#""select":{"fields":[{"fieldPath":"s3Key"},{"fieldPath":"`the size`"}]}"#))
    }

    @Test func aSingleFilterIsNotWrapped() throws {
        let text = try json(Query(collection: "c").whereField("a", .in, [1, 2]))
        #expect(text.contains(#""where":{"fieldFilter":{"field":{"fieldPath":"a"},"op":"IN","value":{"arrayValue":{"values":[{"integerValue":"1"},{"integerValue":"2"}]}}}}"#))
    }

    @Test func collectionGroup() throws {
        #expect(try json(Query(collection: "files", allDescendants: true)).contains(#""allDescendants":true"#))
    }
}
