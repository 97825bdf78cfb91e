import Testing
@testable import HearthHTTP

@Suite struct HTTPHeadersTests {
    @Test(arguments: [
        ("Content-Length", "content-length", true),
        ("CONTENT-LENGTH", "Content-Length", true),
        ("x-amz-date", "X-Amz-Date", true),
        ("Host", "Hos", false),
        ("Host", "Hosu", false),
        ("a-b", "a_b", false),
        ("[", "{", false),  // differ by 0x20 but are not letters
        ("@", "`", false),
        ("Ä-Key", "ä-key", true),  // non-ASCII: compared by lower-cased forms, as always
        ("Ä-Key", "Ä-KEY", true),
        ("Ä-Key", "a-key", false),
        ("", "", true),
        ("", "a", false),
        ("Origin", "Host", false),
        ("origin", "Origin", true),
        ("Äb", "äb", true),
        ("é", "É", true),
    ])
    func namesCompareIgnoringCase(a: String, b: String, equal: Bool) {
        #expect(HTTPHeaders.namesEqual(a, b) == equal)
        #expect(HTTPHeaders.namesEqual(b, a) == equal)
        #expect(HTTPHeaders.namesEqual(a, b) == (a.lowercased() == b.lowercased()))
    }

    @Test func lookupSetAndRemove() {
        var h = HTTPHeaders([("Host", "a"), ("X-Amz-Meta-A", "1"), ("x-amz-meta-a", "2"), ("ETag", "\"e\"")])
        #expect(h["host"] == "a")
        #expect(h["HOST"] == "a")
        #expect(h.values("X-AMZ-META-A") == ["1", "2"])
        #expect(h.contains("etag"))
        #expect(!h.contains("etags"))
        h.set("x-amz-meta-a", "3")
        #expect(h.values("X-Amz-Meta-A") == ["3"])
        h.remove("ETAG")
        #expect(h["ETag"] == nil)
        #expect(h.fields.map(\.name) == ["Host", "x-amz-meta-a"])
    }
}
