import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import FirestoreEmulator

@Suite struct EmulatorEndpointTests {
    @Test func rootAnswersOk() throws {
        let h = try TestHarness()
        let r = h.call("GET", "/", as: .anonymous)
        #expect(r.status == 200)
        #expect(String(decoding: r.response.bodyBytes ?? [], as: UTF8.self) == "Ok")
    }

    @Test func corsHeadersAndPreflight() throws {
        let h = try TestHarness()
        let pre = h.call("OPTIONS", h.api("/c/d"), as: .anonymous,
                         headers: [("Origin", "http://localhost:3000"), ("Access-Control-Request-Headers", "authorization,content-type")])
        #expect(pre.status == 204)
        #expect(pre.response.headers["Access-Control-Allow-Origin"] == "http://localhost:3000")
        #expect(pre.response.headers["Access-Control-Allow-Headers"] == "authorization,content-type")
        #expect(pre.response.headers["Access-Control-Allow-Methods"]?.contains("PATCH") == true)
        // The web SDK's requests carry credentials (XhrIo and WebChannel `withCredentials`).
        #expect(pre.response.headers["Access-Control-Allow-Credentials"] == "true")
        let get = h.call("GET", h.api("/c/d"), as: .anonymous, headers: [("Origin", "http://app")])
        #expect(get.response.headers["Access-Control-Allow-Origin"] == "http://app")
        #expect(get.response.headers["Access-Control-Allow-Credentials"] == "true")
        #expect(h.call("GET", "/", as: .anonymous).response.headers["Access-Control-Allow-Origin"] == "*")
    }

    /// A JSON answer's header fields, in order, with and without `Origin` — the shared fields of an
    /// answer to a request without one (`FirestoreHTTPService.jsonAnyOrigin`) are what adding the
    /// CORS field to its own would make — and a transaction's answers the same.
    @Test func jsonAnswersCarryTheirCORSFields() throws {
        let h = try TestHarness()
        func fields(_ r: Response) -> [String] { r.headers.fields.map { "\($0.name): \($0.value)" } }
        let json = "Content-Type: application/json; charset=UTF-8"
        let begin = h.call("POST", h.api(":beginTransaction"), .object([:]), as: .owner)
        #expect(begin.status == 200)
        #expect(fields(begin.response) == [json, "Access-Control-Allow-Origin: *"])
        #expect(begin.response.headers.sharesFields(with: FirestoreHTTPService.jsonAnyOrigin))
        let fromApp = h.call("POST", h.api(":beginTransaction"), .object([:]), as: .owner, headers: [("Origin", "http://app")])
        #expect(fields(fromApp.response) == [json, "Access-Control-Allow-Origin: http://app", "Access-Control-Allow-Credentials: true", "Vary: Origin"])
        guard case .string(let t)? = begin.json["transaction"] else {
            Issue.record("no transaction in \(begin.json)")
            return
        }
        let read = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/d")]), "transaction": .string(t)]))
        #expect(read.status == 200)
        #expect(fields(read.response) == [json, "Access-Control-Allow-Origin: *"])
        let commit = h.call("POST", h.api(":commit"), .object(["transaction": .string(t)]), headers: [("Origin", "http://app")])
        #expect(commit.status == 200)
        #expect(fields(commit.response) == [json, "Access-Control-Allow-Origin: http://app", "Access-Control-Allow-Credentials: true", "Vary: Origin"])
        // The begin's answer is the JSON tree's bytes.
        #expect(begin.response.bodyBytes == Array(JSON.object(["transaction": .string(t)]).serialized().utf8))
        // An answer that is not JSON gets the field added to its own.
        #expect(fields(h.call("GET", "/", as: .anonymous).response).last == "Access-Control-Allow-Origin: *")
    }

    @Test func clearingOneProjectIsConstantWorkAndLeavesOthers() throws {
        let h = try TestHarness()
        // Three projects of 10 000 documents each, written straight into storage (fast to set up),
        // and one of a single document: the clear's work must not grow with the documents.
        let projects = ["clear-a", "clear-b", "clear-c"]
        for (p, count) in projects.map({ ($0, 10_000) }) + [("clear-small", 1)] {
            let db = DatabaseID(project: p, database: "(default)")
            try h.database.write { conn in
                let space = try h.service.storage.writableSpace(of: db, conn)
                for i in 0..<count {
                    let doc = StoredDocument(path: ResourcePath(["docs", "d\(i)"]), fields: ["i": .integer(Int64(i)), "s": .string("v\(i % 97)")],
                                             createTime: Instant(unixMicros: 1), updateTime: Instant(unixMicros: 1))
                    try h.service.storage.put(space: space, doc, replacing: nil, conn)
                }
            }
        }
        h.call("PATCH", "/v1/projects/keep/databases/(default)/documents/k/1", .object(["fields": .object([:])]))
        #expect(h.call("GET", "/v1/projects/clear-a/databases/(default)/documents/docs/d5").status == 200)
        let rowsBefore = try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_documents") }
        // What the whole HTTP call runs in SQLite (the harness's database is in memory: every read
        // and write is on the one writer connection), counted in virtual-machine instructions — a
        // count no machine's load changes, unlike its wall time. The background collector, which
        // does visit the rows, is held until the clears are counted.
        h.service.storage.collector.suspend()
        var collectorSuspended = true
        defer { if collectorSuspended { h.service.storage.collector.resume() } }
        func clearCounted(_ p: String) throws -> Int {
            try h.database.withWriter { $0.startCountingInstructions() }
            let r = h.call("DELETE", "/emulator/v1/projects/\(p)/databases/(default)/documents", as: .anonymous)
            let instructions = try h.database.withWriter { $0.stopCountingInstructions() }
            #expect(r.status == 200)
            #expect(r.json == .object([:]))
            return instructions
        }
        let small = try clearCounted("clear-small")
        let large = try projects.map(clearCounted)
        // A clear that visited its 10 000 rows would run several instructions per row; a
        // constant-time one runs the same few statements whatever the database holds.
        print("clear: \(small) SQLite instructions for 1 document, \(large) for 10,000 each")
        #expect(small > 0)
        for n in large {
            #expect(n < 10_000, "clearing 10 000 documents ran \(n) SQLite instructions: it visits the rows")
            #expect(n <= small + 64, "clearing 10 000 documents ran \(n) SQLite instructions, one document \(small)")
        }
        // Nor did it delete them: every row is still there, in spaces handed to the collector.
        #expect(try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_documents") } == rowsBefore)
        collectorSuspended = false
        h.service.storage.collector.resume()
        for p in projects {
            #expect(h.call("GET", "/v1/projects/\(p)/databases/(default)/documents/docs/d5").status == 404)
            let q = h.call("POST", "/v1/projects/\(p)/databases/(default)/documents:runQuery",
                           .object(["structuredQuery": sq("docs", where: ff("i", "EQUAL", int(5)))]))
            #expect(q.json[0]?["document"] == nil)
        }
        #expect(h.call("GET", "/v1/projects/keep/databases/(default)/documents/k/1").status == 200)
        // Writing again after a clear starts from an empty database; old rows are collected.
        h.call("PATCH", "/v1/projects/clear-a/databases/(default)/documents/docs/d5", .object(["fields": .object(["i": int(1)])]))
        h.service.storage.collectGarbage()
        let leftover = try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_documents") }
        #expect(leftover == 2)
        let indexRows = try h.database.read { try $0.scalarInt("SELECT count(*) FROM fs_index") }
        // None: no query has needed a field of the new database (k/1 has no fields).
        #expect(indexRows == 0)
    }

    @Test func resetWipesEverything() throws {
        let h = try TestHarness()
        h.put("a/b", ["x": int(1)])
        h.call("PATCH", "/v1/projects/p2/databases/(default)/documents/a/b", .object(["fields": .object([:])]))
        try h.service.reset()
        #expect(h.call("GET", h.api("/a/b")).status == 404)
        #expect(h.call("GET", "/v1/projects/p2/databases/(default)/documents/a/b").status == 404)
    }

    @Test func oversizedBodiesGetGooglesMessage() throws {
        let h = try TestHarness()
        let request = HearthHTTP.Request(method: "POST", target: h.api(":commit"))
        // A commit's answer comes later (the connection parked while its batch commits).
        guard case .collectDeferred(let limit, let tooLarge, _) = h.service.http.dispose(request) else {
            Issue.record("the API must collect bodies")
            return
        }
        #expect(limit == 10 * 1024 * 1024)
        #expect(tooLarge.status == 400)
        let json = try JSON.parse(tooLarge.bodyBytes ?? [])
        #expect(json["error"]?["message"]?.stringValue == "Request payload size exceeds the limit: 10485760 bytes.")
    }
}

@Suite struct SpaceAllocationTests {
    @Test func aRolledBackFirstWriteDoesNotLeakItsSpace() throws {
        let h = try TestHarness()
        let a = "/v1/projects/pa/databases/(default)/documents"
        let b = "/v1/projects/pb/databases/(default)/documents"
        #expect(h.call("PATCH", a + "/c/x?currentDocument.exists=true", .object(["fields": .object([:])])).status == 404)
        #expect(h.call("PATCH", b + "/c/y", .object(["fields": .object([:])])).status == 200)
        #expect(h.call("PATCH", a + "/c/z", .object(["fields": .object([:])])).status == 200)
        let inA = h.call("GET", a + "/c").json["documents"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        let inB = h.call("GET", b + "/c").json["documents"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(inA == ["projects/pa/databases/(default)/documents/c/z"])
        #expect(inB == ["projects/pb/databases/(default)/documents/c/y"])
    }
}

@Suite struct MethodOverrideTests {
    @Test func postWithMethodOverrideActsAsPatch() throws {
        let h = try TestHarness()
        let r = h.call("POST", h.api("/c/d"), .object(["fields": .object(["x": int(1)])]), headers: [("X-HTTP-Method-Override", "PATCH")])
        #expect(r.status == 200)
        #expect(r.json["name"]?.stringValue == h.root + "/c/d")
    }
}
