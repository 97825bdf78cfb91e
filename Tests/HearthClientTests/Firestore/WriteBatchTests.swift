import Foundation
import Testing
@testable import HearthClient

@Suite struct WriteBatchTests {
    func json(_ batch: WriteBatch) throws -> String {
        String(decoding: try WireJSON.encode(AnyJSON.array(batch.writes)), as: UTF8.self)
    }

    struct FileDoc: Codable {
        var ownerUid: String
        var s3Key: String
        @ServerTimestamp var createdAt: Date?
    }

    let root = "projects/p/databases/(default)"

    @Test func setReplacesWithTransforms() throws {
        var b = WriteBatch(databaseRoot: root)
        try b.set(FileDoc(ownerUid: "u", s3Key: "k"), at: "users/u/files/f")
        #expect(try json(b) == #"[{"update":{"fields":{"ownerUid":{"stringValue":"u"},"s3Key":{"stringValue":"k"}},"name":"projects/p/databases/(default)/documents/users/u/files/f"},"updateTransforms":[{"fieldPath":"createdAt","setToServerValue":"REQUEST_TIME"}]}]"#)
    }

    @Test func mergeMasksTheLeaves() throws {
        var b = WriteBatch(databaseRoot: root)
        try b.set(["a": ["b": 1, "c": 2], "d": 3] as [String: FirestoreValue], at: "x/y", merge: true)
        #expect(try json(b).contains(#""updateMask":{"fieldPaths":["a.b","a.c","d"]}"#))
    }

    @Test func createRequiresAbsence() throws {
        var b = WriteBatch(databaseRoot: root)
        try b.create(["a": 1], at: "x/y")
        #expect(try json(b).contains(#""currentDocument":{"exists":false}"#))
    }

    @Test func updateUsesDottedPathsAndRequiresExistence() throws {
        var b = WriteBatch(databaseRoot: root)
        try b.update(at: "x/y", fields: ["status": "ready", "meta.size": 12, "meta.at": FieldValue.serverTimestamp, "old": FieldValue.delete])
        let text = try json(b)
        #expect(text.contains(#""fields":{"meta":{"mapValue":{"fields":{"size":{"integerValue":"12"}}}},"status":{"stringValue":"ready"}}"#), "\(text)")
        #expect(text.contains(#""updateMask":{"fieldPaths":["meta.size","status","old"]}"#), "\(text)")
        #expect(text.contains(#""updateTransforms":[{"fieldPath":"meta.at","setToServerValue":"REQUEST_TIME"}]"#), "\(text)")
        #expect(text.contains(#""currentDocument":{"exists":true}"#))
    }

    @Test func transformsOfEveryKind() throws {
        var b = WriteBatch(databaseRoot: root)
        try b.update(at: "x/y", fields: ["n": FieldValue.increment(Int64(1)), "m": FieldValue.maximum(5), "tags": FieldValue.arrayUnion(["a"]),
                                         "gone": FieldValue.arrayRemove([1])])
        let text = try json(b)
        #expect(text.contains(#"{"fieldPath":"n","increment":{"integerValue":"1"}}"#))
        #expect(text.contains(#"{"fieldPath":"m","maximum":{"integerValue":"5"}}"#))
        #expect(text.contains(#"{"appendMissingElements":{"values":[{"stringValue":"a"}]},"fieldPath":"tags"}"#))
        #expect(text.contains(#"{"fieldPath":"gone","removeAllFromArray":{"values":[{"integerValue":"1"}]}}"#))
    }

    @Test func deleteWithAndWithoutPrecondition() throws {
        var b = WriteBatch(databaseRoot: root)
        try b.delete(at: "x/y")
        try b.delete(at: "x/z", mustExist: true)
        #expect(try json(b) == #"[{"delete":"projects/p/databases/(default)/documents/x/y"},{"currentDocument":{"exists":true},"delete":"projects/p/databases/(default)/documents/x/z"}]"#)
        #expect(b.count == 2)
    }

    @Test(arguments: ["users", "users/u/files", "", "a//b", "/a/b/"])
    func badDocumentPathsAreRefused(_ path: String) {
        var b = WriteBatch(databaseRoot: root)
        #expect(throws: HearthClientError.self) { try b.set(["a": 1], at: path) }
    }

    @Test func deleteSentinelOnlyWhereMeaningful() {
        var b = WriteBatch(databaseRoot: root)
        #expect(throws: HearthClientError.self) { try b.set(["a": FieldValue.delete], at: "x/y") }
        #expect(throws: HearthClientError.self) { try b.create(["a": FieldValue.delete], at: "x/y") }
        #expect(throws: HearthClientError.self) { try b.set("not a map", at: "x/y") }
    }
}
