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

    /// Received fields with their `Known` ones noted on the way answer every known lookup as the
    /// walk does: any case, duplicates (the first wins), lengths shared by two known names, names a
    /// byte off, non-ASCII names (noting stops), more fields than the slots hold, and after changes.
    @Test func knownFieldsAgreeWithTheWalk() {
        let names = [
            "Authorization", "authorization", "AUTHORIZATION", "Origin", "origin", "Expect", "EXPECT", "Content-Length",
            "content-length", "Transfer-Encoding", "transfer-encoding", "X-HTTP-Method-Override", "x-http-method-override",
            "Authorizatio", "Authorizations", "Origim", "Expecu", "Content-Lengti", "Host", "Content-Type", "",
            "Orig\u{130}n", "\u{212A}ey", "Authorizatión", "Or\u{0131}gin",
        ]
        func check(_ h: HTTPHeaders, _ label: String) {
            for k in HTTPHeaders.Known.allCases {
                #expect(h[known: k] == h[k.name], "\(label): \(k.name)")
            }
        }
        func received(_ fields: [(String, String)]) -> HTTPHeaders {
            var h = HTTPHeaders(receiving: 16)
            for (n, v) in fields {
                var name = Array(n.utf8), value = Array(v.utf8)
                name.withUnsafeMutableBytes { nb in value.withUnsafeMutableBytes { vb in
                    h.appendReceived(name: UnsafeRawBufferPointer(nb), value: UnsafeRawBufferPointer(vb))
                } }
            }
            #expect(h.fields.map(\.name) == fields.map(\.0) && h.fields.map(\.value) == fields.map(\.1))
            return h
        }
        // Every name alone, every pair in both orders, and all of them at once.
        for (i, a) in names.enumerated() {
            check(received([(a, "v\(i)")]), a)
            for (j, b) in names.enumerated() {
                check(received([(a, "a"), ("Host", "h"), (b, "b\(j)")]), "\(a) then \(b)")
            }
        }
        check(received(names.enumerated().map { ($1, "v\($0)") }), "all")
        // Past the slots (more than 254 fields): known names late in the list are still found.
        let many = (0..<300).map { ("X-Field-\($0)", "\($0)") } + [("Origin", "late"), ("Authorization", "token")]
        check(received(many), "many")
        check(received([("Origin", "o")] + many), "many, Origin first")
        // Changes after receiving.
        var h = received([("Origin", "o1"), ("Authorization", "a"), ("Origin", "o2")])
        check(h, "before changes")
        h.remove("origin")
        check(h, "removed")
        h.add("ORIGIN", "o3")
        check(h, "added")
        h.set("Authorization", "b")
        check(h, "set")
        #expect(h[known: .authorization] == "b" && h[known: .origin] == "o3")
        // Headers made any other way are walked.
        check(HTTPHeaders([("origin", "x"), ("Expect", "100-continue")]), "made")
        #expect(HTTPHeaders()[known: .origin] == nil)
    }

    @Test func asciiCheckByWords() {
        for length in 0..<40 {
            for position in 0..<max(length, 1) {
                var bytes = [UInt8](repeating: 0x61, count: length)
                #expect(bytes.withUnsafeBytes { HTTPHeaders.isASCII($0) })
                guard length > 0 else { continue }
                bytes[position] = 0x80
                #expect(!bytes.withUnsafeBytes { HTTPHeaders.isASCII($0) })
            }
        }
    }
}
