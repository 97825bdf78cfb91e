import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// `documents.list` pages are indexed range reads: each page reads about a page of rows from the
/// token's position, in every order and with `showMissing`, and walking the pages yields exactly
/// the unpaged listing.
@Suite struct ListDocumentsPagingTests {
    static let count = 3000

    /// `count` documents `items/d0000…` with `k` descending against the name, every tenth one
    /// replaced by a parent that exists only through its sub-collection.
    static func seed() throws -> TestHarness {
        let h = try TestHarness()
        for start in stride(from: 0, to: count, by: 500) {
            let writes: [JSON] = (start..<min(count, start + 500)).map { i in
                let id = String(format: "d%04d", i)
                let path = i % 10 == 3 ? "items/\(id)/sub/x" : "items/\(id)"
                return .object(["update": .object(["name": .string(h.root + "/" + path),
                                                   "fields": .object(["k": int(Int64(count - i)), "g": int(Int64(i % 7))])])])
            }
            #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        }
        // Fields queried before (a first query on a field scans, then builds its index rows).
        try h.indexFields("items", ["k", "g"])
        return h
    }

    static func page(_ h: TestHarness, order: [Ordering] = [], size: Int, token: String? = nil, showMissing: Bool = false,
                     consistency: ReadConsistency = .strong) throws -> FirestoreService.ListPage {
        try h.service.listDocuments(DatabaseID(project: h.project, database: "(default)"), collection: ResourcePath(["items"]),
                                    order: order, pageSize: size, pageToken: try token.map { try ListPageToken.parse($0) },
                                    showMissing: showMissing, consistency: consistency, caller: .admin)
    }

    static func ids(_ page: FirestoreService.ListPage) -> [String] { page.entries.map { $0.0.lastSegment } }

    @Test func aPageReadsAboutAPageWhereverItStarts() throws {
        let h = try Self.seed()
        // Walks every page; each reads at most a page and its look-ahead, however deep it is.
        func walk(order: [Ordering], showMissing: Bool, size: Int, bound: Int) throws -> [String] {
            var all: [String] = []
            var token: String?
            var pages = 0
            repeat {
                let p = try Self.page(h, order: order, size: size, token: token, showMissing: showMissing)
                #expect(p.examined <= bound, "page \(pages) read \(p.examined) rows")
                all += Self.ids(p)
                token = p.nextPageToken
                pages += 1
            } while token != nil && pages < 1000
            return all
        }
        let existing = (0..<Self.count).filter { $0 % 10 != 3 }.map { String(format: "d%04d", $0) }
        let everything = (0..<Self.count).map { String(format: "d%04d", $0) }

        // By name: pageSize + 1 documents.
        #expect(try walk(order: [], showMissing: false, size: 50, bound: 52) == existing)
        // By a field (its index, in order): the same.
        let byK = [Ordering(field: try QueryParser.fieldPath("k"), descending: false)]
        #expect(try walk(order: byK, showMissing: false, size: 50, bound: 52) == existing.reversed())
        let byKDesc = [Ordering(field: try QueryParser.fieldPath("k"), descending: true)]
        #expect(try walk(order: byKDesc, showMissing: false, size: 50, bound: 52) == existing)
        // showMissing: the documents plus one probe per child up to the page's last document.
        #expect(try walk(order: [], showMissing: true, size: 50, bound: 52 + 2 * 51) == everything)

        // A deep page through the HTTP API reads the same few rows (the token is a position).
        let first = h.call("GET", h.api("/items?pageSize=2500"))
        let token = first.json["nextPageToken"]?.stringValue ?? ""
        let deep = try Self.page(h, size: 10, token: token)
        #expect(Self.ids(deep).first == existing[2500])
        #expect(deep.examined <= 12)
    }

    /// SQLite's plan for a name-ordered page of a collection group seeks the group's own index rows:
    /// walking the primary key instead (SQLite's choice without statistics) would read every
    /// document of the collections around it, which `examined` cannot see (SQLite filters them
    /// itself). A collection's page seeks its key range from the cursor (`childScan`, a skip scan
    /// of the primary key: `ChildScanTests`).
    @Test func nameOrderedPagesSeekTheCollectionsIndex() throws {
        let h = try TestHarness()
        let collection = ResourcePath(["users"])
        let ref = FirestoreValue.reference(DatabaseID(project: h.project, database: "(default)").name(of: collection.appending("u1")))
        let plain = Query(parent: .root, collectionID: "users", allDescendants: false, filter: nil, explicitOrder: [],
                          order: [Ordering(field: .documentKey, descending: false)], startAt: Cursor(values: [ref], before: false),
                          endAt: nil, offset: 0, limit: 51, projection: nil)
        var group = plain
        group.allDescendants = true
        // The group's scan index exists once a collection-group query needed it (`GroupScanIndex`).
        try h.service.storage.groupScans.build(h.database)
        let scan = QueryExecutor.childScan(plain, keyRange: nil)
        #expect(scan?.prefix == collection.key && scan?.depth == 1)
        #expect(scan?.lower == collection.appending("u1").key && scan?.upper == OrderedEncoding.prefixEnd(collection.key))
        for (query, index) in [(group, "fs_documents_group")] {
            let (sql, values) = QueryExecutor.scanStatement(query, space: 1, keyRange: nil, descending: false)
            let plan = try h.database.read { conn in try conn.rows("EXPLAIN QUERY PLAN " + sql, values) { $0.text(3) } }
            #expect(plan.count == 1 && plan[0].contains("USING INDEX \(index) (space=? AND ") && plan[0].contains("key>"), "\(plan)")
        }
    }

    @Test func pagesAtAReadTimeAndInATransactionStayExact() throws {
        let h = try Self.seed()
        let before = h.service.latestTime()
        h.clock.advance(seconds: 1)
        // After the read time: a new document, a deleted one, a parent that gains a document.
        h.put("items/d0000a", ["k": int(-1)])
        #expect(h.call("DELETE", h.api("/items/d0001")).status == 200)
        h.put("items/d0003", ["k": int(7)])
        let walkedThen = try {
            var all: [String] = []
            var token: String?
            repeat {
                let p = try Self.page(h, size: 100, token: token, showMissing: true, consistency: .readTime(before))
                #expect(p.examined <= 102 + 2 * 101 + 3)
                all += Self.ids(p)
                token = p.nextPageToken
            } while token != nil
            return all
        }()
        #expect(walkedThen == (0..<Self.count).map { String(format: "d%04d", $0) })
        let first = try Self.page(h, size: 5, showMissing: true, consistency: .readTime(before))
        #expect(first.entries.map { $0.1 == nil } == [false, false, false, true, false])

        // A read-write transaction: a change inside the page (or its look-ahead) aborts the commit.
        func commitAfterList(_ interfere: (TestHarness) -> Void) throws -> Int {
            let txn = TransactionConflictTests.begin(h)
            let id = txn.stringValue?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let listed = h.call("GET", h.api("/items?pageSize=3&transaction=\(id)"))
            #expect(listed.status == 200)
            let token = listed.json["nextPageToken"]?.stringValue ?? ""
            #expect(h.call("GET", h.api("/items?pageSize=3&pageToken=\(token)&transaction=\(id)")).status == 200)
            interfere(h)
            return TransactionConflictTests.commitMarker(h, txn).status
        }
        #expect(try commitAfterList { $0.put("items/d0004", ["k": int(0)]) } == 409)  // on the second page
        #expect(try commitAfterList { $0.put("items/d0000b", ["k": int(0)]) } == 409)  // a phantom in the first
        #expect(try commitAfterList { $0.put("items/d2000", ["k": int(0)]) } == 200)  // far beyond both pages
    }

    @Test func tokensArePositionsAndRejectAnythingElse() throws {
        let h = try TestHarness()
        for id in ["a", "c", "e", "g"] { h.put("items/\(id)", ["k": int(1)]) }
        let first = h.call("GET", h.api("/items?pageSize=2"))
        let token = first.json["nextPageToken"]?.stringValue ?? ""
        // A document added before the position does not shift the next page.
        h.put("items/b", ["k": int(1)])
        let second = h.call("GET", h.api("/items?pageSize=2&pageToken=\(token)"))
        #expect(second.json["documents"]?.arrayValue?.compactMap { $0["name"]?.stringValue?.split(separator: "/").last } == ["e", "g"])
        // A full page has a token even when nothing follows (the official emulator's answer): the
        // page after it is empty and has none.
        let third = second.json["nextPageToken"]?.stringValue ?? ""
        #expect(!third.isEmpty)
        let last = h.call("GET", h.api("/items?pageSize=2&pageToken=\(third)"))
        #expect(last.status == 200 && last.json["documents"] == nil && last.json["nextPageToken"] == nil, "\(last.json)")
        let huge = h.call("GET", h.api("/items?pageSize=\(Int32.max)"))
        #expect(huge.status == 200, "\(huge.json)")
        #expect(huge.json["documents"]?.arrayValue?.count == 5 && huge.json["nextPageToken"] == nil)

        let invalid: JSON = .object(["error": .object(["code": .int(400), "message": .string("invalid page token"),
                                                        "status": .string("INVALID_ARGUMENT")])])
        let otherOrder = h.call("GET", h.api("/items?pageSize=2&orderBy=k")).json["nextPageToken"]?.stringValue ?? ""
        h.put("other/a", [:])
        h.put("other/b", [:])
        let otherCollection = h.call("GET", h.api("/other?pageSize=1")).json["nextPageToken"]?.stringValue ?? ""
        for (label, target) in [
            ("garbage", "/items?pageToken=garbage"),
            ("an offset token of old", "/items?pageToken=" + Data("o:2".utf8).base64EncodedString()),
            ("not base64", "/items?pageToken=%25%25%25"),
            ("another ordering", "/items?pageToken=\(otherOrder)"),
            ("another collection", "/items?pageToken=\(otherCollection)"),
            ("cut short", "/items?pageToken=\(token.dropLast(4))"),
        ] {
            let r = h.call("GET", h.api(target))
            #expect(r.status == 400, "\(label)")
            #expect(r.json == invalid, "\(label): \(r.json)")
        }
    }
}
