import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// A document's `fs_index` rows are exactly its entries after every kind of write (the entries
/// are sorted arrays merged on update, no longer sets).
struct IndexRowsTests {
    private struct Row: Equatable, CustomStringConvertible {
        let field: String
        let kind: Int
        let value: [UInt8]
        var description: String { "\(field)/\(kind)/\(value)" }
    }

    private func storedRows(_ h: TestHarness, _ path: String) throws -> [Row] {
        let path = ResourcePath(path.split(separator: "/").map(String.init))
        let scope = path.parent.key
        return try h.database.read { conn in
            try conn.rows("SELECT field, kind, value FROM fs_index WHERE scope = ? AND doc_key = ? ORDER BY field, kind, value",
                          [scope, IndexEntry.docKey(path.key, under: scope)]) {
                Row(field: $0.text(0), kind: $0.int(1), value: $0.blob(2))
            }
        }
    }

    private func expectedRows(_ h: TestHarness, _ path: String) throws -> [Row] {
        let key = ResourcePath(path.split(separator: "/").map(String.init)).key
        let doc = try h.database.read { conn in
            try conn.first("SELECT \(FirestoreStorage.documentColumns) FROM fs_documents WHERE key = ?", [key]) {
                try FirestoreStorage.document(from: $0)
            }
        }
        guard let doc else { return [] }
        // One collection-scope row per distinct entry of a registered field, in SQLite's order.
        let indexed = try h.indexedFields(doc.path.collectionID)
        return IndexEntry.entries(of: doc.fields).filter { indexed.contains(ExactString($0.field)) }
            .map { Row(field: $0.field, kind: $0.kind, value: $0.value) }
    }

    @Test func rowsFollowCreatesUpdatesAndDeletes() throws {
        let h = try TestHarness()
        let path = "rooms/r1/messages/m1"
        // Repeated array elements: one element row each.
        h.put(path, ["tags": arr([str("a"), str("b"), str("a"), int(3), str("b")]), "n": int(1),
                     "nested": map([("x", int(1)), ("y", str("q"))]), "text": str("hello")])
        // No query has needed a field yet: no rows.
        #expect(try storedRows(h, path).isEmpty)
        // Registering the fields builds the existing document's rows (`text` stays unregistered).
        try h.indexFields("messages", ["tags", "n", "nested", "nested.x", "nested.y", "extra"])
        let created = try storedRows(h, path)
        #expect(!created.contains { $0.field == "text" })
        #expect(created == (try expectedRows(h, path)))
        #expect(created.filter { $0.field == "tags" && $0.kind == IndexEntry.elementKind }.count == 3)
        #expect(created.contains { $0.field == "nested.y" })
        // An update changing some fields, dropping one, adding one and keeping one.
        h.put(path, ["tags": arr([str("b"), str("c")]), "n": int(1), "nested": map([("x", int(2))]), "extra": str("new")])
        let updated = try storedRows(h, path)
        #expect(updated == (try expectedRows(h, path)))
        #expect(!updated.contains { $0.field == "text" || $0.field == "nested.y" })
        #expect(updated.filter { $0.field == "tags" && $0.kind == IndexEntry.elementKind }.count == 2)
        // A rewrite with the same fields leaves the rows as they are.
        h.put(path, ["tags": arr([str("b"), str("c")]), "n": int(1), "nested": map([("x", int(2))]), "extra": str("new")])
        #expect(try storedRows(h, path) == updated)
        h.call("DELETE", h.api("/" + path))
        #expect(try storedRows(h, path).isEmpty)
    }

    /// A commit stores its write under the key it read the document by (`FirestoreStorage.put`'s
    /// `key`), and its index rows under the parent's key made from the path: both are the keys the
    /// path encodes to, for numeric ids (negative too) and non-ASCII ids, on a create and on an update.
    @Test func rowsOfWritesStoredByTheKeyTheyWereReadBy() throws {
        let h = try TestHarness()
        // Fields are registered once the database exists (its first write).
        h.put("rooms/r0/messages/first", ["n": int(0)])
        try h.indexFields("messages", ["n", "text"])
        for path in ["rooms/r1/messages/__id7__", "rooms/__id-9__/messages/m", "rooms/é/messages/ü", "rooms/r1/messages/plain"] {
            h.put(path, ["n": int(1), "text": str("a")])
            let created = try storedRows(h, path)
            #expect(created.count == 2, "\(path)")
            #expect(created == (try expectedRows(h, path)), "\(path)")
            h.put(path, ["n": int(2)])
            let updated = try storedRows(h, path)
            #expect(updated.count == 1, "\(path)")
            #expect(updated == (try expectedRows(h, path)), "\(path)")
            #expect(h.call("GET", h.api("/" + path)).json["fields"]?["n"]?["integerValue"]?.stringValue == "2")
        }
    }

    @Test func entriesAreSortedDistinctAndDiffedByMerge() {
        let a = IndexEntry.entries(of: ["b": .array([.integer(2), .integer(1), .integer(2)]), "a": .string("x"), "é": .boolean(true)])
        // Sorted by canonical field bytes ("`é`" quoted, and "`" < "a" < "b"), kind, value; the
        // repeated element once.
        #expect(a.map(\.field) == ["`é`", "a", "b", "b", "b"])
        #expect(a.filter { $0.kind == IndexEntry.elementKind }.count == 2)
        for (x, y) in zip(a, a.dropFirst()) { #expect(IndexEntry.compare(x, y) < 0) }
        let b = IndexEntry.entries(of: ["b": .array([.integer(1)]), "c": .null])
        let (onlyA, onlyB) = IndexEntry.difference(a, b)
        #expect(Set(onlyA.map(\.field)) == ["a", "b", "`é`"])
        #expect(onlyA.count == 4)  // a, b's array value, b's element 2, é
        #expect(onlyB.map(\.field) == ["b", "c"])  // b's new array value, c
        #expect(IndexEntry.difference(a, a).onlyA.isEmpty)
    }

    /// The writer sorts a document's fields once (`sortedMembers`) for its encoding and its index
    /// entries. Walked in that order, names that need no quoting and scalar values come out in
    /// order already (no sort); quoted names, nested maps whose paths interleave with other names
    /// (`a.b` sorts after `a-x`: "." > "-") and arrays' elements still get sorted — either way the
    /// entries are strictly ascending, distinct, and the same as from the unsorted fields.
    @Test(arguments: [
        ["status": FirestoreValue.string("ready"), "ownerUid": .string("u"), "createdAt": .timestamp(Instant(unixMicros: 7)),
         "n": .integer(1), "Z": .null, "_x": .boolean(false)],
        ["a": .map(["b": .integer(1), "a": .integer(0)]), "a-x": .integer(2), "a0": .integer(3), "x y": .string("q"),
         "é": .boolean(true), "t": .array([.integer(2), .integer(1), .integer(2), .string("s")]), "`": .null],
    ])
    func entriesOfSortedFieldsAreInOrderWithOrWithoutASort(_ fields: [ExactString: FirestoreValue]) {
        let members = OrderedEncoding.sortedMembers(fields)
        let entries = IndexEntry.entries(ofSorted: members)
        for (x, y) in zip(entries, entries.dropFirst()) { #expect(IndexEntry.compare(x, y) < 0, "\(x.field) before \(y.field)") }
        #expect(entries == IndexEntry.entries(of: fields))
        // The same entries as sorting them from scratch, in any order, with repeats.
        var scrambled = entries.reversed() + entries.prefix(2)
        scrambled.swapAt(0, scrambled.count / 2)
        #expect(IndexEntry.sorted(Array(scrambled)) == entries)
        // And the stored encoding of the sorted fields is the one of the dictionary.
        #expect(StoredValueCodec.encodeFields(sorted: members) == StoredValueCodec.encodeFields(fields))
    }

    @Test func sortedDropsRepeatsOfAnAscendingRun() {
        let e = IndexEntry(field: "a", kind: IndexEntry.valueKind, value: [1])
        let f = IndexEntry(field: "b", kind: IndexEntry.valueKind, value: [1])
        #expect(IndexEntry.sorted([e, e, f]) == [e, f])
        #expect(IndexEntry.sorted([f, e]) == [e, f])
        #expect(IndexEntry.sorted([e, f]) == [e, f])
        #expect(IndexEntry.sorted([]) == [])
    }
}
