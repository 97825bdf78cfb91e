import Foundation
import HearthHTTP
import HearthCore
import Testing
@testable import FirestoreEmulator

/// get, list, createDocument, patch, delete, batchGet through the REST surface.
@Suite struct DocumentMethodsTests {
    @Test func createGetPatchDelete() throws {
        let h = try TestHarness()
        let created = h.call("POST", h.api("/cities?documentId=SF"), .object(["fields": .object(["name": str("San Francisco"), "pop": int(870_000)])]))
        #expect(created.status == 200)
        #expect(created.json["name"]?.stringValue == h.root + "/cities/SF")
        #expect(created.json["createTime"] == created.json["updateTime"])
        #expect(created.json["createTime"]?.stringValue == "2026-01-02T03:04:05.123456Z")

        let got = h.call("GET", h.api("/cities/SF"))
        #expect(got.status == 200)
        #expect(got.json["fields"]?["pop"]?["integerValue"]?.stringValue == "870000")

        // Second create of the same id: ALREADY_EXISTS with Firestore's wording.
        let again = h.call("POST", h.api("/cities?documentId=SF"), .object(["fields": .object([:])]))
        #expect(again.status == 409)
        #expect(again.json["error"]?["status"]?.stringValue == "ALREADY_EXISTS")
        #expect(again.json["error"]?["message"]?.stringValue == "Document already exists: \(h.root)/cities/SF")

        // Merge with a mask: `name` kept, `pop` replaced, `gone` (in mask, absent) deleted.
        h.put("cities/SF", ["name": str("San Francisco"), "pop": int(1), "gone": bool(true)])
        let patched = h.call("PATCH", h.api("/cities/SF?updateMask.fieldPaths=pop&updateMask.fieldPaths=gone&mask.fieldPaths=pop"),
                             .object(["fields": .object(["pop": int(2), "name": str("ignored")])]))
        #expect(patched.status == 200)
        #expect(patched.json["fields"] == .object(["pop": int(2)]))  // response masked
        let after = h.call("GET", h.api("/cities/SF")).json
        #expect(after["fields"]?["name"] == str("San Francisco"))
        #expect(after["fields"]?["gone"] == nil)
        #expect(after["createTime"] == created.json["createTime"])
        #expect(after["updateTime"] != created.json["updateTime"])

        let deleted = h.call("DELETE", h.api("/cities/SF"))
        #expect(deleted.status == 200)
        #expect(deleted.json == .object([:]))
        let missing = h.call("GET", h.api("/cities/SF"))
        #expect(missing.status == 404)
        #expect(missing.json["error"]?["message"]?.stringValue == "Document (\(h.root)/cities/SF) not found.")
        #expect(missing.json["error"]?["status"]?.stringValue == "NOT_FOUND")
    }

    @Test func autoIDsAreTwentyAlphanumerics() throws {
        let h = try TestHarness()
        let r = h.call("POST", h.api("/things"), .object(["fields": .object(["a": int(1)])]))
        let id = r.json["name"]?.stringValue?.split(separator: "/").last.map(String.init) ?? ""
        #expect(id.count == 20)
        #expect(id.allSatisfy { $0.isLetter || $0.isNumber })
    }

    @Test func preconditionsOnPatchAndDelete() throws {
        let h = try TestHarness()
        let noDoc = h.call("PATCH", h.api("/c/d?currentDocument.exists=true"), .object(["fields": .object([:])]))
        #expect(noDoc.status == 404)
        #expect(noDoc.json["error"]?["message"]?.stringValue == "No document to update: \(h.root)/c/d")
        let v1 = h.put("c/d", ["x": int(1)])
        let stale = "2020-01-01T00:00:00Z"
        let wrongTime = h.call("PATCH", h.api("/c/d?currentDocument.updateTime=\(stale)"), .object(["fields": .object([:])]))
        #expect(wrongTime.status == 400)
        #expect(wrongTime.json["error"]?["status"]?.stringValue == "FAILED_PRECONDITION")
        let t = v1["updateTime"]?.stringValue ?? ""
        let rightTime = h.call("PATCH", h.api("/c/d?currentDocument.updateTime=\(t)"), .object(["fields": .object(["x": int(2)])]))
        #expect(rightTime.status == 200)
        let exists = h.call("DELETE", h.api("/c/d?currentDocument.exists=false"))
        #expect(exists.status == 409)
        #expect(h.call("GET", h.api("/c/d")).status == 200)
        // Deleting a missing document without a precondition succeeds.
        #expect(h.call("DELETE", h.api("/c/nothing")).status == 200)
    }

    @Test func updateTimesIncreaseStrictlyWithAFrozenClock() throws {
        let h = try TestHarness()
        var last = ""
        for i in 0..<5 {
            let t = h.put("c/d\(i % 2)", ["i": int(Int64(i))])["updateTime"]?.stringValue ?? ""
            #expect(t > last, "\(t) after \(last)")
            last = t
        }
    }

    @Test func unchangedWriteKeepsUpdateTime() throws {
        let h = try TestHarness()
        let a = h.put("c/d", ["x": int(1)])
        let b = h.put("c/d", ["x": int(1)])
        #expect(a["updateTime"] == b["updateTime"])
    }

    @Test func listPagesInOrderWithMaskAndShowMissing() throws {
        let h = try TestHarness()
        for id in ["b", "a", "d", "c"] { h.put("items/\(id)", ["n": str(id), "k": int(Int64(id.unicodeScalars.first!.value))]) }
        h.put("items/zz/sub/x", ["n": str("child")])  // items/zz does not exist
        let page1 = h.call("GET", h.api("/items?pageSize=3&mask.fieldPaths=n"))
        let names1 = page1.json["documents"]?.arrayValue?.compactMap { $0["name"]?.stringValue?.split(separator: "/").last.map(String.init) }
        #expect(names1 == ["a", "b", "c"])
        #expect(page1.json["documents"]?[0]?["fields"] == .object(["n": str("a")]))
        let token = page1.json["nextPageToken"]?.stringValue ?? ""
        #expect(!token.isEmpty)
        let page2 = h.call("GET", h.api("/items?pageSize=3&pageToken=\(token)"))
        #expect(page2.json["documents"]?.arrayValue?.count == 1)
        #expect(page2.json["nextPageToken"] == nil)

        let desc = h.call("GET", h.api("/items?orderBy=k%20desc"))
        let namesDesc = desc.json["documents"]?.arrayValue?.compactMap { $0["name"]?.stringValue?.split(separator: "/").last.map(String.init) }
        #expect(namesDesc == ["d", "c", "b", "a"])

        let missing = h.call("GET", h.api("/items?showMissing=true"))
        let last = missing.json["documents"]?.arrayValue?.last
        #expect(last?["name"]?.stringValue == h.root + "/items/zz")
        #expect(last?["fields"] == nil && last?["createTime"] == nil)

        #expect(h.call("GET", h.api("/nothing")).json == .object([:]))
        #expect(h.call("GET", h.api("/items?pageToken=%%%")).status == 400)
    }

    @Test func batchGetFoundMissingAndNewTransaction() throws {
        let h = try TestHarness()
        h.put("c/a", ["x": int(1), "y": int(2)])
        let r = h.call("POST", h.api(":batchGet"), .object([
            "documents": .array([.string(h.root + "/c/a"), .string(h.root + "/c/missing"), .string(h.root + "/c/a")]),
            "mask": .object(["fieldPaths": .array([.string("x")])]),
            "newTransaction": .object(["readOnly": .object([:])]),
        ]))
        #expect(r.status == 200)
        // The new transaction comes first on its own, as Firestore sends it; the duplicate is elided.
        let items = r.json.arrayValue ?? []
        #expect(items.count == 3)
        #expect(items[0]["transaction"]?.stringValue?.isEmpty == false)
        #expect(items[0]["found"] == nil && items[0]["readTime"] == nil)
        #expect(items[1]["found"]?["fields"] == .object(["x": int(1)]))
        #expect(items[1]["readTime"] != nil)
        #expect(items[2]["missing"]?.stringValue == h.root + "/c/missing")
        #expect(items[2]["transaction"] == nil)
        // Names of two databases in one request are refused (one names the database read).
        let mixed = h.call("POST", h.api(":batchGet"), .object(["documents": .array([
            .string(h.root + "/c/a"), .string("projects/other/databases/(default)/documents/c/a")])]))
        #expect(mixed.status == 400)
    }

    @Test func listCollectionIdsUnderRootAndDocument() throws {
        let h = try TestHarness()
        h.put("b/1", [:])
        h.put("a/1", [:])
        h.put("a/1/x/1", [:])
        h.put("a/1/y/2/z/3", [:])   // a/1/y/2 does not exist, but collection y does
        h.put("a/10/w/1", [:])
        let root = h.call("POST", h.api(":listCollectionIds"), .object([:]))
        #expect(root.json["collectionIds"] == .array([.string("a"), .string("b")]))
        let under = h.call("POST", h.api("/a/1:listCollectionIds"), .object(["pageSize": .int(1)]))
        #expect(under.json["collectionIds"] == .array([.string("x")]))
        let token = under.json["nextPageToken"]?.stringValue ?? ""
        let next = h.call("POST", h.api("/a/1:listCollectionIds"), .object(["pageToken": .string(token)]))
        #expect(next.json["collectionIds"] == .array([.string("y")]))
        #expect(h.call("POST", h.api("/a/2:listCollectionIds"), .object([:])).json == .object([:]))
        // Without rules every client may list; with rules only the admin may (rules have no method for it).
        #expect(h.call("POST", h.api(":listCollectionIds"), .object([:]), as: .user("u1")).status == 200)
        let ruled = try TestHarness(rules: "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read: if true; } } }")
        ruled.put("a/1", [:])
        #expect(ruled.call("POST", ruled.api(":listCollectionIds"), .object([:]), as: .user("u1")).status == 403)
        #expect(ruled.call("POST", ruled.api(":listCollectionIds"), .object([:]), as: .owner).status == 200)
    }

    @Test func encodedDefaultDatabaseAndAltParametersWork() throws {
        let h = try TestHarness()
        h.put("c/d", ["x": int(1)])
        let encoded = h.call("GET", "/v1/projects/\(h.project)/databases/%28default%29/documents/c/d?alt=json&$alt=json;enum-encoding=int&prettyPrint=false")
        #expect(encoded.status == 200)
        #expect(encoded.json["fields"]?["x"] == int(1))
        let pretty = h.call("GET", h.api("/c/d?prettyPrint=true"))
        #expect(String(decoding: pretty.response.bodyBytes ?? [], as: UTF8.self).contains("\n"))
    }

    @Test func projectsAreIsolated() throws {
        let h = try TestHarness()
        h.put("c/d", ["x": int(1)])
        #expect(h.call("GET", "/v1/projects/other/databases/(default)/documents/c/d").status == 404)
        #expect(h.call("GET", "/v1/projects/\(h.project)/databases/named/documents/c/d").status == 404)
    }

    @Test(arguments: [
        ("GET", "/c", "", 200),                         // a collection: list
        ("GET", "/c/d/e", "", 200),                    // sub-collection list
        ("PATCH", "/c", #"{"fields":{}}"#, 400),       // patch on a collection
        ("PUT", "/c/d", #"{"fields":{}}"#, 404),       // no route: a bare Not Found
        ("GET", "/c//d", "", 400),                      // empty segment
        ("GET", "/c/__x__", "", 400),                   // reserved id
        ("GET", "/c/..", "", 400),
        ("POST", "/c?documentId=__bad__", #"{}"#, 400),
        ("POST", "/c?documentId=a&bogus=1", #"{}"#, 400),
        ("POST", ":commit", #"{"writes": ["#, 400),    // malformed JSON
        ("POST", ":commit", #"{"writez": []}"#, 400),   // unknown field
        ("POST", ":commit", #"[]"#, 400),
        ("PATCH", "/c/d", #"{"fields":{"a":{"stringValue":"x","booleanValue":true}}}"#, 400),
        ("PATCH", "/c/d", #"{"fields":{"__reserved__":{"nullValue":null}}}"#, 400),
        ("PATCH", "/c/d?updateMask.fieldPaths=a..b", #"{}"#, 400),
        ("POST", ":runQuery", #"{}"#, 400),
        ("POST", ":frobnicate", #"{}"#, 404),
    ])
    func badInputIsAGoogleError(_ method: String, _ suffix: String, _ body: String, _ status: Int) throws {
        let h = try TestHarness()
        // Raw (possibly malformed) bodies go straight through the service.
        let raw = h.rawCall(method, h.api(suffix), body)
        #expect(raw.status == status, "\(method) \(suffix): \(raw.json)")
        // A path no route takes is Google's bare 404, not an API error.
        if status == 404 {
            #expect(raw.json["error"] == nil)
        } else if status >= 400 {
            #expect(raw.json["error"]?["code"]?.intValue == Int64(status))
            #expect(raw.json["error"]?["status"]?.stringValue != nil)
            #expect(raw.json["error"]?["message"]?.stringValue?.isEmpty == false)
        }
    }

    /// A mask or transform path naming `__.*__` at any depth would store a field no document may hold:
    /// refused (the official emulator's wording), and the document stays as it was.
    @Test(arguments: [
        ("/c/d?updateMask.fieldPaths=v.__type__", "the name __type__ is reserved"),
        ("/c/d?updateMask.fieldPaths=a.%60__x__%60", "Invalid reserved name in field path __x__"),
        ("/c/d?updateMask.fieldPaths=__key__", #"Invalid property path member name "__key__"."#),
    ])
    func reservedNamesInMasksAreRefused(_ suffix: String, _ message: String) throws {
        let h = try TestHarness()
        #expect(h.rawCall("PATCH", h.api("/c/d"), #"{"fields":{"a":{"integerValue":"1"}}}"#).status == 200)
        let r = h.rawCall("PATCH", h.api(suffix), #"{"fields":{"a":{"integerValue":"2"}}}"#)
        #expect(r.status == 400)
        #expect(r.json["error"]?["message"]?.stringValue == message, "\(r.json)")
        #expect(h.rawCall("GET", h.api("/c/d"), "").json["fields"]?["a"]?["integerValue"]?.stringValue == "1")
    }

    @Test(arguments: ["a.__x__", "__type__", "x.__name__", "`__id5__`"])
    func reservedNamesInTransformsAreRefused(_ path: String) throws {
        let h = try TestHarness()
        let doc = "projects/\(h.project)/databases/(default)/documents/c/t"
        let body = #"{"writes":[{"transform":{"document":"\#(doc)","fieldTransforms":[{"fieldPath":"\#(path)","setToServerValue":"REQUEST_TIME"}]}}]}"#
        let r = h.rawCall("POST", h.api(":commit"), body)
        #expect(r.status == 400, "\(r.json)")
        #expect(r.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
        #expect(h.rawCall("GET", h.api("/c/t"), "").status == 404)
    }

    @Test func oversizedDocumentIsRejected() throws {
        let h = try TestHarness()
        let big = String(repeating: "x", count: 600_000)
        let r = h.call("PATCH", h.api("/c/big"), .object(["fields": .object(["a": str(big), "b": str(big)])]))
        #expect(r.status == 400)
        #expect(r.json["error"]?["message"]?.stringValue?.contains("exceeds the maximum allowed size of 1,048,576 bytes") == true)
        #expect(h.call("GET", h.api("/c/big")).status == 404)
    }
}

extension TestHarness {
    /// Sends raw body bytes (possibly malformed JSON) as the owner.
    func rawCall(_ method: String, _ target: String, _ body: String) -> (status: Int, json: JSON) {
        let request = HearthHTTP.Request(method: method, target: target, headers: ["Authorization": "Bearer owner"], body: Array(body.utf8))
        let response: HearthHTTP.Response
        switch service.http.dispose(request) {
        case .respond(let r): response = r
        case .collect(_, _, let handler): response = handler(request)
        case .collectDeferred(_, _, let handler): response = DeferredAnswer.wait { handler(request, $0) }
        case .stream: fatalError("unexpected")
        }
        let data = response.bodyBytes ?? []
        return (response.status, (try? JSON.parse(data)) ?? .string(String(decoding: data, as: UTF8.self)))
    }
}

@Suite struct ReadTimeTests {
    @Test func pointReadsSeeTheVersionCurrentAtReadTime() throws {
        let h = try TestHarness()
        let t0 = h.clock.now()
        h.clock.advance(seconds: 10)
        let v1 = h.put("c/d", ["v": int(1)])
        h.clock.advance(seconds: 10)
        let t1 = h.clock.now()
        h.clock.advance(seconds: 10)
        h.put("c/d", ["v": int(2)])
        h.clock.advance(seconds: 10)
        let t2 = h.clock.now()
        h.clock.advance(seconds: 10)
        #expect(h.call("DELETE", h.api("/c/d")).status == 200)
        h.clock.advance(seconds: 10)
        func at(_ t: Instant) -> (Int, JSON) {
            let r = h.call("GET", h.api("/c/d?readTime=\(ValueJSON.formatTimestamp(t))"))
            return (r.status, r.json["fields"]?["v"] ?? .null)
        }
        #expect(at(t0).0 == 404)
        #expect(at(t1) == (200, int(1)))
        #expect(at(t2) == (200, int(2)))
        #expect(at(h.clock.now()).0 == 404)
        let batch = h.call("POST", h.api(":batchGet"), .object(["documents": .array([.string(h.root + "/c/d")]),
                                                                "readTime": .string(ValueJSON.formatTimestamp(t1))]))
        #expect(batch.json[0]?["found"]?["fields"]?["v"] == int(1))
        #expect(batch.json[0]?["found"]?["updateTime"] == v1["updateTime"])
        #expect(batch.json[0]?["readTime"]?.stringValue == ValueJSON.formatTimestamp(t1))
        // A read-only transaction at a read time reads that version too.
        let t = h.call("POST", h.api(":beginTransaction"), .object(["options": .object(["readOnly": .object(["readTime": .string(ValueJSON.formatTimestamp(t1))])])]))
        let id = t.json["transaction"]?.stringValue?.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        #expect(h.call("GET", h.api("/c/d?transaction=\(id)")).json["fields"]?["v"] == int(1))

        #expect(h.call("GET", h.api("/c/d?readTime=\(ValueJSON.formatTimestamp(h.clock.now().adding(seconds: 60)))")).status == 400)
        // Beyond the hour only whole minutes are valid (point-in-time recovery snapshots, not kept here).
        let twoHoursAgo = (h.clock.now().unixMicros - 7_200_000_000) / 60_000_000 * 60_000_000
        let old = h.call("GET", h.api("/c/d?readTime=\(ValueJSON.formatTimestamp(Instant(unixMicros: twoHoursAgo)))"))
        #expect(old.status == 400)
        #expect(old.json["error"]?["status"]?.stringValue == "FAILED_PRECONDITION")
        #expect(old.json["error"]?["message"]?.stringValue == "The requested 'read_time' is too old.")
        let odd = h.call("GET", h.api("/c/d?readTime=\(ValueJSON.formatTimestamp(Instant(unixMicros: twoHoursAgo + 1_000)))"))
        #expect(odd.json["error"]?["status"]?.stringValue == "INVALID_ARGUMENT")
    }
}

@Suite struct ListVariantsTests {
    @Test func listWithoutCollectionAndRecursive() throws {
        let h = try TestHarness()
        h.put("a/1", [:])
        h.put("b/2", [:])
        h.put("a/1/sub/3", [:])
        h.put("a/1/sub/3/deep/4", [:])
        func names(_ r: JSON) -> [String] {
            (r["documents"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue?.replacingOccurrences(of: h.root + "/", with: "") }
        }
        #expect(names(h.call("GET", h.api("")).json) == ["a/1", "b/2"])
        #expect(names(h.call("GET", h.api("?recursive=true")).json) == ["a/1", "a/1/sub/3", "a/1/sub/3/deep/4", "b/2"])
        #expect(names(h.call("GET", h.api("?collectionId=a")).json) == ["a/1"])
        #expect(names(h.call("GET", h.api("/a/1/sub?recursive=true")).json) == ["a/1/sub/3", "a/1/sub/3/deep/4"])
        #expect(names(h.call("GET", h.api("/a/1/sub")).json) == ["a/1/sub/3"])
        #expect(h.call("GET", h.api("/a?recursive=true&showMissing=true")).status == 400)
    }
}
