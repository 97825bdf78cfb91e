import Foundation
import HearthCore
import HearthSQLite
import Testing
@testable import FirestoreEmulator

/// Collection scans, kind-less listings, `listCollectionIds` and `showMissing` read the primary key
/// and seek past sub-collections (`FirestoreStorage.walkSkipping`), without the parent index
/// `firestore.9` dropped: every answer equals what the stored keys say (an oracle over all rows),
/// in both directions, page by page across skipped subtrees, for ids that sort around `/`, escape
/// a zero byte, are numeric (whose 8 bytes hold `00 01`) or non-ASCII; and a walk reads one row
/// per sub-collection tree, not the trees.
@Suite struct ChildScanTests {
    private static let db = DatabaseID(project: "demo-test", database: "(default)")

    /// Ids of `c`'s documents: around `/` (`.` 2E, `0` 30), a zero byte, numeric ids (`__id1__`
    /// encodes as 80 00 … 00 01), non-ASCII.
    static let ids = ["a", "a.", "a-", "a0", "a\u{0}", "a\u{0}b", "a\u{7F}", "é", "日本", "__id1__", "__id-5__", "__id256__", "b", "z"]
    /// Parents that exist only through their sub-collections.
    static let missing = ["a1", "m", "__id2__", "ü"]

    /// Writes `paths` (each a document) in one commit.
    static func write(_ h: TestHarness, _ paths: [[String]]) {
        let writes: [JSON] = paths.enumerated().map { i, p in
            .object(["update": .object(["name": .string(h.root + "/" + p.joined(separator: "/")), "fields": .object(["n": int(Int64(i))])])])
        }
        let r = h.call("POST", h.api(":commit"), .object(["writes": .array(writes)]))
        #expect(r.status == 200, "\(r.json)")
    }

    /// `c`'s documents, each with sub-collections (a deep one under every other), the missing
    /// parents' sub-documents, a collection `c` under a document of `c`, and sibling collections
    /// whose keys sort right around `c`'s.
    static func seed() throws -> TestHarness {
        let h = try TestHarness()
        var paths: [[String]] = []
        for (i, id) in ids.enumerated() {
            paths.append(["c", id])
            paths.append(["c", id, "s", "x"])
            paths.append(["c", id, "s", "y"])
            if i % 2 == 0 {
                paths.append(["c", id, "s", "x", "t", "deep"])
                paths.append(["c", id, "c", "q"])
                paths.append(["c", id, "a\u{0}", "r"])
            }
        }
        for id in missing { paths.append(["c", id, "s", "x"]) }
        for other in ["b", "c0", "c.", "cc", "c\u{0}"] { paths.append([other, "a"]) }
        write(h, paths)
        return h
    }

    /// Every stored document's path, in key order.
    static func allPaths(_ h: TestHarness) throws -> [[String]] {
        try h.database.read { conn in
            try conn.rows("SELECT key FROM fs_documents ORDER BY key") { OrderedEncoding.segments(ofKey: $0.blob(0))! }
        }
    }

    static func run(_ h: TestHarness, _ query: Query) throws -> [[String]] {
        try h.database.read { conn in
            let space = try h.service.storage.space(of: db, conn)
            return try QueryExecutor(storage: h.service.storage, database: db).run(query, space: space, conn).documents.map(\.path.segments)
        }
    }

    static func query(_ collection: [String], descending: Bool = false, startAt: Cursor? = nil, endAt: Cursor? = nil,
                      limit: Int? = nil) -> Query {
        let order = [Ordering(field: .documentKey, descending: descending)]
        return Query(parent: ResourcePath(Array(collection.dropLast())), collectionID: collection.last!, allDescendants: false, filter: nil,
                     explicitOrder: descending ? order : [], order: order, startAt: startAt, endAt: endAt, offset: 0, limit: limit,
                     projection: nil)
    }

    static func cursor(_ path: [String], before: Bool) -> Cursor {
        Cursor(values: [.reference(db.name(of: ResourcePath(path)))], before: before)
    }

    @Test func segmentEndsReadEveryShapeOfId() {
        for id in Self.ids + Self.missing + ["x", "\u{0}", "\u{0}\u{0}"] {
            let one = OrderedEncoding.key([id]), two = OrderedEncoding.key(["c", id, "s"])
            let ends = two.withUnsafeBytes { b in (1...3).map { OrderedEncoding.end(ofSegments: $0, in: b, from: 0) } }
            #expect(ends == [3, 3 + one.count, two.count], "\(id)")
            #expect(two.withUnsafeBytes { OrderedEncoding.end(ofSegments: 4, in: $0, from: 0) } == nil)
            #expect(two.withUnsafeBytes { OrderedEncoding.end(ofSegments: 1, in: $0, from: 3) } == 3 + one.count)
        }
        // A key cut inside a numeric id's 8 bytes is not a whole segment.
        let numeric = OrderedEncoding.key(["__id1__"])
        #expect(numeric.count == 12 && numeric[8...9] == [0, 1])
        #expect(Array(numeric[..<10]).withUnsafeBytes { OrderedEncoding.end(ofSegments: 1, in: $0, from: 0) } == nil)
    }

    @Test func collectionScansAnswerAsTheKeysSay() throws {
        let h = try Self.seed()
        let all = try Self.allPaths(h)
        #expect(all.count == 72)
        let collections = [["c"], ["c", "a", "s"], ["c", "m", "s"], ["c", "__id1__", "s"], ["c", "a\u{0}", "c"], ["c", "é", "a\u{0}"],
                           ["c", "a", "s", "x", "t"], ["c0"], ["c\u{0}"], ["nothing"]]
        for collection in collections {
            let expected = all.filter { $0.count == collection.count + 1 && Array($0.dropLast()) == collection }
            #expect(try Self.run(h, Self.query(collection)) == expected, "\(collection)")
            #expect(try Self.run(h, Self.query(collection, descending: true)) == expected.reversed(), "\(collection)")
        }
        let expected = all.filter { $0.count == 2 && $0[0] == "c" }
        #expect(expected.count == Self.ids.count)

        // Page by page from a cursor at each document (and at each missing parent, between
        // documents), both ways, across the skipped subtrees.
        for descending in [false, true] {
            let inOrder = descending ? Array(expected.reversed()) : expected
            for size in [1, 2, 5] {
                var pages: [[String]] = []
                var last: [String]?
                repeat {
                    let page = try Self.run(h, Self.query(["c"], descending: descending, startAt: last.map { Self.cursor($0, before: false) },
                                                          limit: size))
                    pages += page
                    last = page.count == size ? page.last : nil
                } while last != nil
                #expect(pages == inOrder, "size \(size) descending \(descending)")
            }
            for at in expected + Self.missing.map({ ["c", $0] }) {
                let key = OrderedEncoding.key(at)
                let after = inOrder.filter { descending ? OrderedEncoding.key($0).lexicographicallyPrecedes(key)
                                                        : key.lexicographicallyPrecedes(OrderedEncoding.key($0)) }
                let through = inOrder.filter { !after.contains($0) }
                #expect(try Self.run(h, Self.query(["c"], descending: descending, startAt: Self.cursor(at, before: false))) == after, "\(at)")
                #expect(try Self.run(h, Self.query(["c"], descending: descending, startAt: Self.cursor(at, before: true)))
                        == inOrder.filter { $0 == at } + after, "\(at)")
                #expect(try Self.run(h, Self.query(["c"], descending: descending, endAt: Self.cursor(at, before: false))) == through, "\(at)")
                #expect(try Self.run(h, Self.query(["c"], descending: descending, endAt: Self.cursor(at, before: true)))
                        == through.filter { $0 != at }, "\(at)")
            }
        }
    }

    @Test func kindlessListingsAnswerAsTheKeysSay() throws {
        let h = try Self.seed()
        let all = try Self.allPaths(h)
        for parent in [[], ["c", "a"], ["c", "m"], ["c", "é"], ["c", "a", "s", "x"], ["b", "a"]] {
            let expected = all.filter { $0.count == parent.count + 2 && Array($0.prefix(parent.count)) == parent }
            for descending in [false, true] {
                let order = [Ordering(field: .documentKey, descending: descending)]
                var q = Query(parent: ResourcePath(parent), collectionID: "", allDescendants: true, filter: nil, explicitOrder: order,
                              order: order, startAt: nil, endAt: nil, offset: 0, limit: nil, projection: nil)
                q.childrenOnly = true
                #expect(try Self.run(h, q) == (descending ? expected.reversed() : expected), "\(parent)")
            }
            // documents.list without a collection id, page by page.
            var listed: [[String]] = []
            var token: ListPageToken?
            repeat {
                let page = try h.service.listDocuments(Self.db, collection: ResourcePath(parent), order: [], pageSize: 2, pageToken: token,
                                                       showMissing: false, consistency: .strong, caller: .admin)
                listed += page.entries.map(\.0.segments)
                token = try page.nextPageToken.map { try ListPageToken.parse($0) }
            } while token != nil
            #expect(listed == expected, "\(parent)")
        }
    }

    @Test func childListingsAnswerAsTheKeysSay() throws {
        let h = try Self.seed()
        let all = try Self.allPaths(h)
        func sortedByKey(_ ids: Set<String>) -> [String] {
            ids.sorted { OrderedEncoding.key([$0]).lexicographicallyPrecedes(OrderedEncoding.key([$1])) }
        }
        // listCollectionIds: the distinct collection ids below each document (or the root).
        for parent in [[], ["c", "a"], ["c", "m"], ["c", "a\u{0}"], ["c", "z"], ["c", "a", "s", "x"], ["b", "a"]] {
            let expected = sortedByKey(Set(all.filter { $0.count > parent.count + 1 && Array($0.prefix(parent.count)) == parent }
                .map { $0[parent.count] }))
            #expect(try h.service.listCollectionIDs(Self.db, parent: ResourcePath(parent), caller: .admin) == expected, "\(parent)")
        }
        // showMissing: every document of `c` and every parent of a sub-collection, page by page.
        let expected = sortedByKey(Set(all.filter { $0.count >= 2 && $0[0] == "c" }.map { $0[1] }))
        #expect(expected.count == Self.ids.count + Self.missing.count)
        for size in [1, 3, 100] {
            var listed: [String] = []
            var token: ListPageToken?
            repeat {
                let page = try h.service.listDocuments(Self.db, collection: ResourcePath(["c"]), order: [], pageSize: size, pageToken: token,
                                                       showMissing: true, consistency: .strong, caller: .admin)
                listed += page.entries.map(\.0.lastSegment)
                #expect(page.entries.allSatisfy { ($0.1 == nil) == Self.missing.contains($0.0.lastSegment) })
                token = try page.nextPageToken.map { try ListPageToken.parse($0) }
            } while token != nil
            #expect(listed == expected, "size \(size)")
        }
    }

    /// Users with many files each: listing the users reads a row or two per user, not the files.
    @Test func aWalkReadsOneRowPerSubtree() throws {
        let h = try TestHarness()
        for u in 0..<20 {
            Self.write(h, [["users", "u\(u)"]] + (0..<100).map { ["users", "u\(u)", "files", "f\($0)"] })
        }
        Self.write(h, (20..<25).map { ["users", "u\($0)", "files", "only"] })  // users that exist only as parents
        let prefix = OrderedEncoding.key(["users"])
        for descending in [false, true] {
            var rows = 0
            var found: [String] = []
            try h.database.read { conn in
                let space = try h.service.storage.space(of: Self.db, conn)!
                try FirestoreStorage.walkSkipping(space: space, under: prefix, depth: 1, from: prefix, to: OrderedEncoding.prefixEnd(prefix),
                                                  descending: descending, conn) { row, end in
                    rows += 1
                    guard let end, end == row.withBlob(0, { $0.count }) else { return .skip }
                    found.append(OrderedEncoding.segments(ofKey: row.blob(0))!.last!)
                    return .step
                }
            }
            let users = (0..<20).map { "u\($0)" }.sorted()
            #expect(found == (descending ? users.reversed() : users))
            // Each user: itself and the first (or last) file below it; each parent-only user: one file.
            #expect(rows == 20 * 2 + 5, "descending \(descending)")
        }
        // So do the scans behind queries and listings, through the API.
        let listed = h.call("GET", h.api("/users?pageSize=300"))
        #expect(listed.json["documents"]?.arrayValue?.count == 20)
        let examined = try h.service.listDocuments(Self.db, collection: ResourcePath(["users"]), order: [], pageSize: nil, pageToken: nil,
                                                   showMissing: true, consistency: .strong, caller: .admin).examined
        #expect(examined <= 20 + 25)
    }

    /// A collection's scan seeks the primary key (SQLite's plan), with no secondary index left to name.
    @Test func theScanSeeksThePrimaryKey() throws {
        let h = try Self.seed()
        let plan = try h.database.read { conn in
            try conn.rows("EXPLAIN QUERY PLAN SELECT key FROM fs_documents WHERE space = ? AND key >= ? AND key < ? ORDER BY key DESC",
                          [Int64(1), [UInt8]([1]), [UInt8]([2])]) { $0.text(3) }
        }
        #expect(plan.count == 1 && plan[0].contains("USING PRIMARY KEY (space=? AND key>? AND key<?)"), "\(plan)")
        #expect(try !Self.hasParentIndex(h.database))
    }

    static func hasParentIndex(_ database: Database) throws -> Bool {
        try database.read { try $0.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'fs_documents_parent'") } == 1
    }

    @Test func anOldFileLosesTheParentIndexAndAnswersTheSame() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fs-childscan-\(UUID().uuidString).sqlite").path
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let paths = [["c", "a"], ["c", "a", "s", "x"], ["c", "m", "s", "x"], ["c", "b"]]
        do {
            // A file as the binaries before `firestore.9` left it: their `firestore.1` created the
            // index, and they wrote the `parent` column it covers (rows made by SQL: `OldFirestoreFile`).
            let old = try OldFirestoreFile.create(path: path, migrations: 8)
            #expect(FirestoreService.migrations[7].id == "firestore.8")
            try old.write { try $0.execute("CREATE INDEX fs_documents_parent ON fs_documents (space, parent, key)") }
            try OldFirestoreFile.insert(old, paths.map { ($0, ["n": .integer(1)]) })
            #expect(try Self.hasParentIndex(old))
        }
        let reopened = try Database(path: path, layout: FirestoreService.databaseLayout)
        try reopened.migrate(FirestoreService.migrations)
        #expect(try !Self.hasParentIndex(reopened))
        let h = try TestHarness(database: reopened)
        #expect(try Self.run(h, Self.query(["c"])) == [["c", "a"], ["c", "b"]])
        #expect(try Self.run(h, Self.query(["c"], descending: true)) == [["c", "b"], ["c", "a"]])
        #expect(try h.service.listCollectionIDs(Self.db, parent: ResourcePath(["c", "m"]), caller: .admin) == ["s"])
        // A binary before `firestore.9` refuses the file (unknown migrations) and changes nothing.
        let older = Array(FirestoreService.migrations.prefix(8))
        let again = try Database(path: path, layout: FirestoreService.databaseLayout)
        let refused = #expect(throws: DatabaseOpenError.self) { try again.migrate(older) }
        if case .newerThanBinary(_, let unknown)? = refused {
            #expect(unknown == ["firestore.10", "firestore.9"])
        } else {
            Issue.record("\(String(describing: refused))")
        }
        #expect(try !Self.hasParentIndex(again))
    }
}
