import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import StorageEmulator

/// The JSON API's object resource as google-cloud-storage uses it: customTime, `metadata: null`,
/// composite objects, `…NotMatch` and ETag preconditions on reads, boolean query parameters.
@Suite struct ObjectResourceTests {
    let b = StorageHarness.bucket

    func put(_ h: StorageHarness, _ name: String, _ body: [UInt8] = [1, 2, 3]) -> JSON {
        let r = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=\(name)", body: body)
        #expect(r.status == 200)
        return r.json
    }

    func patch(_ h: StorageHarness, _ name: String, _ json: String) -> TestResponse {
        h.send("PATCH", "/storage/v1/b/\(b)/o/\(name)", body: Array(json.utf8))
    }

    @Test func customTimeIsKeptAndNeverMovesEarlierNorGoes() throws {
        let h = try StorageHarness()
        _ = put(h, "t")
        #expect(patch(h, "t", #"{"customTime": "not a time"}"#).status == 400)
        let set = patch(h, "t", #"{"customTime": "2024-01-02T03:04:05.000Z"}"#)
        #expect(set.status == 200 && set.json["customTime"]?.stringValue == "2024-01-02T03:04:05.000Z")
        #expect(patch(h, "t", #"{"customTime": "2023-01-01T00:00:00Z"}"#).status == 400)
        // A PUT without it would remove it: refused too.
        #expect(h.send("PUT", "/storage/v1/b/\(b)/o/t", body: Array(#"{"contentType": "text/plain"}"#.utf8)).status == 400)
        #expect(patch(h, "t", #"{"customTime": "2025-01-01T00:00:00Z"}"#).json["customTime"]?.stringValue == "2025-01-01T00:00:00.000Z")
        #expect(patch(h, "t", #"{"contentType": "text/plain"}"#).json["customTime"]?.stringValue == "2025-01-01T00:00:00.000Z")
        // A new generation has none.
        #expect(put(h, "t")["customTime"] == nil)
    }

    @Test func metadataNullRemovesEveryKey() throws {
        let h = try StorageHarness()
        _ = put(h, "m")
        #expect(patch(h, "m", #"{"metadata": {"a": "1", "b": "2"}}"#).json["metadata"]?["b"]?.stringValue == "2")
        #expect(patch(h, "m", #"{"metadata": {"a": null}}"#).json["metadata"] == .object(["b": .string("2")]))
        #expect(patch(h, "m", #"{"metadata": null}"#).json["metadata"] == nil)
    }

    @Test func aComposedObjectIsCompositeWithoutAnMD5() throws {
        let h = try StorageHarness()
        _ = put(h, "a", [1, 2])
        _ = put(h, "c", [3])
        func compose(_ dest: String, _ sources: [String]) -> TestResponse {
            let list = sources.map { #"{"name": "\#($0)"}"# }.joined(separator: ",")
            return h.send("POST", "/storage/v1/b/\(b)/o/\(dest)/compose", body: Array(#"{"sourceObjects": [\#(list)]}"#.utf8))
        }
        let ab = compose("ab", ["a", "c"])
        #expect(ab.status == 200 && ab.json["componentCount"]?.intValue == 2 && ab.json["md5Hash"] == nil)
        #expect(ab.json["crc32c"] != nil)
        #expect(compose("abc", ["ab", "a"]).json["componentCount"]?.intValue == 3)
        let media = h.send("GET", "/download/storage/v1/b/\(b)/o/ab?alt=media")
        #expect(media.body == [1, 2, 3] && media.headers["x-goog-hash"]?.contains("md5=") == false)
        #expect(put(h, "ab")["componentCount"] == nil)
    }

    @Test func notMatchOnAReadIsNotModifiedAndOnAWriteFails() throws {
        let h = try StorageHarness()
        let o = put(h, "n")
        let g = try #require(o["generation"]?.stringValue), etag = try #require(o["etag"]?.stringValue)
        for path in ["/storage/v1/b/\(b)/o/n", "/download/storage/v1/b/\(b)/o/n?alt=media&"] {
            let sep = path.hasSuffix("&") ? "" : "?"
            let r = h.send("GET", "\(path)\(sep)ifGenerationNotMatch=\(g)")
            #expect(r.status == 304 && r.body.isEmpty, "\(path)")
            #expect(h.send("GET", "\(path)\(sep)ifMetagenerationNotMatch=1").status == 304)
            #expect(h.send("GET", "\(path)\(sep)ifMetagenerationNotMatch=2").status == 200)
            #expect(h.send("GET", "\(path)\(sep)ifMetagenerationMatch=2").status == 412)
            #expect(h.send("GET", path, headers: [("If-None-Match", "\"\(etag)\"")]).status == 304)
            #expect(h.send("GET", path, headers: [("If-Match", "other, \(etag)")]).status == 200)
            #expect(h.send("GET", path, headers: [("If-Match", "other")]).status == 412)
        }
        #expect(h.send("DELETE", "/storage/v1/b/\(b)/o/n?ifGenerationNotMatch=\(g)").status == 412)
    }

    @Test func booleanQueryParametersAreReadWhateverTheirCase() throws {
        let h = try StorageHarness()
        _ = put(h, "dir/")
        _ = put(h, "dir/x")
        for value in ["true", "True", "TRUE"] {
            let r = h.send("GET", "/storage/v1/b/\(b)/o?delimiter=/&includeTrailingDelimiter=\(value)")
            #expect(r.json["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["dir/"], "\(value)")
        }
    }
}
