import Foundation
import HearthCore
import HearthSQLite
import SecurityRules
import Testing
@testable import FirestoreEmulator

/// `PreparedWrite`: what a write's rows are worked out from before the writer gives exactly what
/// the writer would work out from the document it stores (its fields' order, their encoding, their
/// index entries), and is not used where it could differ.
struct PreparedWriteTests {
    /// Names that sort in every position against each other, need quoting, or are not ASCII.
    private static let names = ["a", "ab", "A", "b", "z", "createdAt", "a.b", "`q`", "é", "e\u{301}", "😀", "_", "x y", "n1"]

    private struct Generator {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    private static func value(_ g: inout Generator, depth: Int = 0) -> FirestoreValue {
        switch g.next(depth < 2 ? 8 : 5) {
        case 0: return .integer(Int64(g.next(5)) - 2)
        case 1: return .string(names[g.next(names.count)])
        case 2: return .timestamp(Instant(unixMicros: Int64(g.next(3)) * 1_000_000))
        case 3: return .null
        case 4: return .double(Double(g.next(5)) / 2)
        case 5, 6:
            // Repeated elements: their entries appear once.
            return .array((0..<g.next(4)).map { _ in value(&g, depth: depth + 1) })
        default:
            var m: [ExactString: FirestoreValue] = [:]
            for _ in 0..<g.next(4) { m[ExactString(names[g.next(names.count)])] = value(&g, depth: depth + 1) }
            return .map(m)
        }
    }

    private static func transform(_ g: inout Generator, _ name: String) -> FieldTransform {
        let kinds: [FieldTransform.Kind] = [.serverTime, .increment(.integer(2)), .maximum(.double(1.5)),
                                           .appendMissingElements([.integer(1), .string("a")]), .removeAllFromArray([.integer(0)])]
        return FieldTransform(field: FieldPath([name]), kind: kinds[g.next(kinds.count)])
    }

    private func expectSame(_ write: Write, before: StoredDocument?, _ comment: Comment? = nil) {
        let at = Instant(unixMicros: 1_700_000_000_123_456)
        guard let doc = WriteApplier.apply(write, to: before, at: at).document else { return }
        let plain = OrderedEncoding.sortedMembers(doc.fields)
        guard let ready = PreparedWrite(write, forRules: true).document(doc.fields),
              let data = ready.rulesData else {
            Issue.record("nothing prepared for \(write)")
            return
        }
        #expect(ready.members.map { Array($0.key.string.utf8) } == plain.map { Array($0.key.string.utf8) }, comment)
        #expect(ready.members.map { $0.value } == plain.map { $0.value }, comment)
        #expect(StoredValueCodec.encodeFields(sorted: ready.members) == StoredValueCodec.encodeFields(doc.fields), comment)
        #expect(ready.entries == IndexEntry.entries(of: doc.fields), comment)
        // The rules' data: the same keys byte for byte, in the same order, with the same values.
        let rules = RulesConversion.map(doc.fields)
        #expect(data.keys.map { Array($0.utf8) } == rules.keys.map { Array($0.utf8) }, comment)
        #expect(data.values == rules.values, comment)
        #expect(PreparedWrite(write, forRules: false).document(doc.fields)?.rulesData == nil, comment)
    }

    @Test func preparedPartsEqualTheDocumentsOwn() {
        var g = Generator(state: 20)
        let path = ResourcePath(["users", "u1", "files", "f1"])
        for round in 0..<600 {
            var fields: [ExactString: FirestoreValue] = [:]
            for _ in 0..<g.next(7) { fields[ExactString(Self.names[g.next(Self.names.count)])] = Self.value(&g) }
            // Transforms on fields the update sets and on others, sometimes twice on one field.
            var transforms: [FieldTransform] = []
            for _ in 0..<g.next(4) { transforms.append(Self.transform(&g, Self.names[g.next(Self.names.count)])) }
            let write = Write(path: path, operation: .update(fields: fields, mask: nil), transforms: transforms)
            // What was stored before does not change what such a write stores.
            let before = g.next(2) == 0 ? nil : StoredDocument(
                path: path, fields: ["a": .integer(7), "zz": .string("old")],
                createTime: Instant(unixMicros: 1), updateTime: Instant(unixMicros: 2))
            expectSame(write, before: before, "round \(round)")
        }
    }

    @Test func benchCreate() {
        let path = ResourcePath(["users", "u1", "files", "f1"])
        let fields: [ExactString: FirestoreValue] = [
            "ownerUid": .string("u1"), "storage": .string("s3"), "s3Key": .string("users/u1/uploads/k.jpg"),
            "contentType": .string("image/jpeg"), "status": .string("ready"),
        ]
        let write = Write(path: path, operation: .update(fields: fields, mask: nil),
                          transforms: [FieldTransform(field: FieldPath(["createdAt"]), kind: .serverTime)],
                          precondition: Precondition(exists: false))
        expectSame(write, before: nil)
        let prepared = PreparedWrite(write, forRules: false)
        #expect(prepared.key == path.key)
        #expect(prepared.parentKey == path.parent.key)
    }

    /// Masked updates, transforms of nested fields, deletes and transform-only writes depend on
    /// what was stored: nothing is prepared for them but the keys.
    @Test func onlyWholeDocumentWritesWithTopLevelTransforms() {
        let path = ResourcePath(["c", "d"])
        let masked = Write(path: path, operation: .update(fields: ["a": .integer(1)], mask: [FieldPath(["a"])]), transforms: [])
        let nested = Write(path: path, operation: .update(fields: ["a": .integer(1)], mask: nil),
                           transforms: [FieldTransform(field: FieldPath(["m", "at"]), kind: .serverTime)])
        let delete = Write(path: path, operation: .delete, transforms: [])
        let transformOnly = Write(path: path, operation: .transform,
                                  transforms: [FieldTransform(field: FieldPath(["n"]), kind: .increment(.integer(1)))])
        for w in [masked, nested, delete, transformOnly] {
            let prepared = PreparedWrite(w, forRules: true)
            #expect(prepared.fixed == nil)
            #expect(prepared.document(["a": .integer(1)]) == nil)
            #expect(prepared.key == path.key)
        }
        // Fields that are not the write's outcome (a field more or less, a transformed one missing): not used.
        let plain = Write(path: path, operation: .update(fields: ["a": .integer(1)], mask: nil),
                          transforms: [FieldTransform(field: FieldPath(["t"]), kind: .serverTime)])
        let prepared = PreparedWrite(plain, forRules: true)
        #expect(prepared.document(["a": .integer(1)]) == nil)
        #expect(prepared.document(["a": .integer(1), "b": .integer(2)]) == nil)
        #expect(prepared.document(["a": .integer(1), "t": .null, "u": .null]) == nil)
        #expect(prepared.document(["a": .integer(1), "t": .null]) != nil)
    }

    @Test func mergedEqualsSortedUnion() {
        var g = Generator(state: 7)
        for _ in 0..<300 {
            var a: [ExactString: FirestoreValue] = [:], b: [ExactString: FirestoreValue] = [:]
            for _ in 0..<g.next(5) { a[ExactString(Self.names[g.next(Self.names.count)])] = Self.value(&g) }
            for _ in 0..<g.next(5) {
                let name = ExactString(Self.names[g.next(Self.names.count)])
                if a[name] == nil { b[name] = Self.value(&g) }
            }
            let union = a.merging(b) { x, _ in x }
            #expect(IndexEntry.merged(IndexEntry.entries(of: a), IndexEntry.entries(of: b)) == IndexEntry.entries(of: union))
        }
        // Equal entries in both lists come out once.
        let e = IndexEntry.entries(of: ["a": .integer(1), "b": .string("x")])
        #expect(IndexEntry.merged(e, e) == e)
    }

    /// Through a commit: a create with a server timestamp, and two writes to one document in one
    /// commit (the second's document is stored; neither's prepared parts are used for it).
    @Test func committedRowsAreTheDocumentsOwn() throws {
        let h = try TestHarness()
        func write(_ path: String, _ fields: [(String, JSON)], serverTime: [String]) -> JSON {
            var w: [(String, JSON)] = [("update", .object(["name": .string(h.root + "/" + path), "fields": .object(JSONObject(fields))]))]
            if !serverTime.isEmpty {
                w.append(("updateTransforms", .array(serverTime.map { .object(["fieldPath": .string($0), "setToServerValue": .string("REQUEST_TIME")]) })))
            }
            return .object(JSONObject(w))
        }
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array([
            write("c/one", [("b", str("x")), ("z", int(1)), ("a", arr([int(1), int(1)]))], serverTime: ["m", "createdAt"]),
            write("c/two", [("k", int(1)), ("t", str("first"))], serverTime: ["t"]),
            write("c/two", [("k", int(2)), ("n", map([("x", int(1))]))], serverTime: []),
        ])]))
        #expect(r.status == 200, "\(r.json)")
        for path in ["c/one", "c/two"] {
            let p = ResourcePath(path.split(separator: "/").map(String.init))
            let (fieldsBlob, rows) = try h.database.read { conn -> ([UInt8], [IndexEntry]) in
                let blob = try conn.first("SELECT fields FROM fs_documents WHERE key = ?", [p.key]) { $0.blob(0) } ?? []
                let scope = p.parent.key
                let rows = try conn.rows("SELECT field, kind, value FROM fs_index WHERE scope = ? AND doc_key = ? ORDER BY field, kind, value",
                                         [scope, IndexEntry.docKey(p.key, under: scope)]) {
                    IndexEntry(field: $0.text(0), kind: $0.int(1), value: $0.blob(2))
                }
                return (blob, rows)
            }
            let fields = try fieldsBlob.withUnsafeBytes { try StoredValueCodec.decodeFields($0) }
            #expect(StoredValueCodec.encodeFields(fields) == fieldsBlob)
            #expect(rows == IndexEntry.entries(of: fields), "\(path)")
            #expect(!rows.isEmpty)
        }
    }
}
