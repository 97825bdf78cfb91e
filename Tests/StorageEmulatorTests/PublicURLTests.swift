import Foundation
import HearthCore
import HearthHTTP
import Testing
@testable import StorageEmulator

/// An object's public URL as the XML API answers it: HEAD, the XML ETag, ranges and the
/// conditional headers, for callers with and without credentials.
@Suite struct PublicURLTests {
    let b = StorageHarness.bucket
    let body = Array("hello, world".utf8)
    /// MD5 of `body` in hex: the XML API's ETag of a non-composite object.
    let md5 = "\"e4d7f1b4ed2e42d15898f4b27b019da4\""

    func publicObject(_ h: StorageHarness) {
        let r = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=p.txt&predefinedAcl=publicRead",
                       headers: [("Content-Type", "text/plain")], body: body)
        #expect(r.status == 200)
    }

    @Test func headAnswersGetsHeadersWithoutTheBody() throws {
        let h = try StorageHarness()
        publicObject(h)
        let get = h.send("GET", "/\(b)/p.txt")
        let head = h.send("HEAD", "/\(b)/p.txt")
        #expect(get.status == 200 && get.body == body)
        #expect(head.status == 200 && head.body.isEmpty)
        for name in ["Content-Type", "ETag", "Last-Modified", "x-goog-generation", "x-goog-metageneration", "x-goog-hash",
                     "x-goog-stored-content-length", "x-goog-stored-content-encoding"] {
            #expect(head.headers[name] != nil && head.headers[name] == get.headers[name], "\(name)")
        }
        #expect(get.headers["ETag"] == md5)
        let ranged = h.send("HEAD", "/\(b)/p.txt", headers: [("Range", "bytes=0-4")])
        #expect(ranged.status == 206 && ranged.body.isEmpty && ranged.headers["Content-Range"] == "bytes 0-4/12")
        // Errors keep their status and drop their document.
        let missing = h.send("HEAD", "/\(b)/nothing")
        #expect(missing.status == 403 && missing.body.isEmpty)
        #expect(h.send("HEAD", "/\(b)/nothing", headers: [("Authorization", "Bearer owner")]).status == 404)
        #expect(h.send("DELETE", "/\(b)/p.txt").status == 404)
    }

    @Test func conditionalHeadersAsTheXMLAPI() throws {
        let h = try StorageHarness()
        publicObject(h)
        let get = h.send("GET", "/\(b)/p.txt")
        let generation = get.headers["x-goog-generation"] ?? ""
        let lastModified = get.headers["Last-Modified"] ?? ""
        func status(_ headers: [(String, String)], method: String = "GET", query: String = "") -> Int {
            h.send(method, "/\(b)/p.txt\(query)", headers: headers).status
        }
        let notModified = h.send("GET", "/\(b)/p.txt", headers: [("If-None-Match", md5)])
        #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers["ETag"] == md5)
        #expect(status([("If-None-Match", "\"other\"")]) == 200)
        #expect(status([("If-Match", md5)]) == 200)
        #expect(status([("If-Match", "\"other\"")]) == 412)
        #expect(status([("If-Modified-Since", lastModified)]) == 304)
        #expect(status([("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")]) == 200)
        #expect(status([("If-Unmodified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")]) == 412)
        #expect(status([("If-Unmodified-Since", "not a date")]) == 200)
        // If-None-Match decides over If-Modified-Since (RFC 9110 §13.2.2).
        #expect(status([("If-None-Match", "\"other\""), ("If-Modified-Since", lastModified)]) == 200)
        #expect(status([("x-goog-if-generation-match", generation)]) == 200)
        #expect(status([("x-goog-if-generation-match", "1")]) == 412)
        #expect(status([("x-goog-if-metageneration-match", "2")]) == 412)
        #expect(status([], query: "?generation=\(generation)") == 200)
        #expect(status([], query: "?generation=1") == 404)
        #expect(status([("If-None-Match", md5)], method: "HEAD") == 304)
        // Conditions come before the range: a 304 wins over a range past the end.
        #expect(status([("If-None-Match", md5), ("Range", "bytes=100-")]) == 304)
        #expect(status([("Range", "bytes=100-")]) == 416)
        // Nothing is said to a caller who may not read the object.
        _ = h.send("POST", "/upload/storage/v1/b/\(b)/o?uploadType=media&name=private", body: body)
        #expect(h.send("GET", "/\(b)/private", headers: [("If-Match", "\"other\"")]).status == 403)
        #expect(h.send("GET", "/\(b)/private", headers: [("If-Match", "\"other\""), ("Authorization", "Bearer owner")]).status == 412)
    }
}
