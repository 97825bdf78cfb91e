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

    /// Received fields answer every lookup by name as the walk does, though most absent names are
    /// now ruled out by their length alone: any case, lengths at and past the 63 the mask tells
    /// apart, a non-ASCII lookup whose lower-cased form is an ASCII name of another length
    /// (`\u{212A}ey` is `key`), non-ASCII fields (the mask is not kept), and after changes.
    @Test func receivedLookupsAgreeWithTheWalk() {
        let long = String(repeating: "x", count: 62)
        let fieldNames = [
            "Host", "KEY", "If-Match", "x-amz-date", long + "a", long + "ab", long + "abcdefgh", "Ä-Key", "Range",
        ]
        let lookups = [
            "host", "HOST", "Hos", "Hosts", "key", "Key", "\u{212A}ey", "\u{212A}EY", "if-match", "If-None-Match", "Range",
            "range", "X-Amz-Date", "x-amz-dat", long, long + "A", long + "AB", long + "abcdefgH", long + "abcdefg",
            long + "abcdefghi", "ä-key", "Ä-KEY", "a-key", "", "Authorization", "If-Modified-Since",
        ]
        func received(_ names: [String]) -> HTTPHeaders {
            var h = HTTPHeaders(receiving: 16)
            for (i, n) in names.enumerated() {
                var name = Array(n.utf8), value = Array("v\(i)".utf8)
                name.withUnsafeMutableBytes { nb in value.withUnsafeMutableBytes { vb in
                    h.appendReceived(name: UnsafeRawBufferPointer(nb), value: UnsafeRawBufferPointer(vb))
                } }
            }
            return h
        }
        func check(_ h: HTTPHeaders, _ label: String) {
            for name in lookups {
                let walked = h.fields.first(where: { HTTPHeaders.namesEqual($0.name, name) })?.value
                #expect(h[name] == walked, "\(label): \(name)")
                #expect(h.contains(name) == (walked != nil), "\(label): \(name)")
            }
        }
        let ascii = fieldNames.filter { $0.utf8.allSatisfy { $0 < 0x80 } }
        for (i, name) in ascii.enumerated() {
            check(received([name]), name)
            check(received(Array(ascii[..<i])), "the first \(i)")
        }
        check(received(ascii), "all ASCII")
        check(received(fieldNames), "with a non-ASCII name")
        #expect(received(["KEY"])["\u{212A}ey"] == "v0" && received(["KEY"])["Ke"] == nil)
        var h = received(["Host"])
        h.add("Range", "bytes=0-1")
        check(h, "added")
        #expect(h["range"] == "bytes=0-1")
    }

    /// The section size summed as fields are received is the one summed from the fields (name,
    /// `": "`, value, CRLF each, in bytes), and after a change it is summed from the fields again.
    @Test func sectionSizeAsReceivedAndAfterChanges() {
        let fields = [("Host", "example.com:9000"), ("X-Amz-Meta-Ünïcode", "välue"), ("Empty", ""), ("host", "again")]
        var h = HTTPHeaders(receiving: 8)
        #expect(h.sectionSize == 0)
        for (n, v) in fields {
            var name = Array(n.utf8), value = Array(v.utf8)
            name.withUnsafeMutableBytes { nb in value.withUnsafeMutableBytes { vb in
                h.appendReceived(name: UnsafeRawBufferPointer(nb), value: UnsafeRawBufferPointer(vb))
            } }
        }
        let expected = fields.reduce(0) { $0 + $1.0.utf8.count + 2 + $1.1.utf8.count + 2 }
        #expect(expected == 24 + 30 + 9 + 13)
        #expect(h.sectionSize == expected)
        #expect(HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }).sectionSize == expected)
        h.add("Range", "bytes=0-1")
        #expect(h.sectionSize == expected + 18)
        h.remove("host")
        #expect(h.sectionSize == 30 + 9 + 18)
    }

    /// `lowercasedName` is `lowercased()`: ASCII names lowered byte by byte, or returned as they are
    /// with no upper-case letter; anything else through `lowercased()`.
    @Test(arguments: ["Host", "host", "X-Amz-Date", "X-AMZ-CONTENT-SHA256", "", "a", "Z", "@[`{", "\u{212A}ey",
                      "Ä-Key", "ÉTAG", "x-amz-meta-\u{130}", String(repeating: "AbC", count: 40)])
    func lowercasedNameIsLowercased(name: String) {
        #expect(HTTPHeaders.lowercasedName(name) == name.lowercased())
        #expect(Array(HTTPHeaders.lowercasedName(name).utf8) == Array(name.lowercased().utf8))
    }

    @Test(arguments: ["Content-Length", "content-length", "CONTENT-LENGTH", "Transfer-Encoding", "transfer-encoding",
                      "Content-Lengtx", "Content-Type", "Transfer-Encodinx", "ETag", "", "Content-Length ", "Cont\u{212A}nt-Length",
                      "Transfer-\u{130}ncoding", "x-amz-request-id"])
    func framingNamesAsCompared(name: String) {
        #expect(HTTPHeaders.isFraming(name)
            == (HTTPHeaders.namesEqual(name, "Content-Length") || HTTPHeaders.namesEqual(name, "Transfer-Encoding")))
    }

    /// `lowercasedASCIIName(_:is:)` decides ASCII names as comparing `lowercasedName` byte for
    /// byte would; `isASCIIName` keeps every other name from it.
    @Test func lowercasedNameComparedInPlace() {
        let names = ["Host", "host", "HOST", "X-Amz-Date", "x-amz-date", "Authorization", "authorization", "", "a", "Accept-Encoding",
                     "Hos", "Hostt", "H\u{E9}st", "\u{212A}ey", "X-AMZ-\u{130}D", "x-amz-date ", String(repeating: "Ab", count: 40)]
        let lowers = ["host", "x-amz-date", "authorization", "", "a", "accept-encoding", "key", "h\u{E9}st", "x-amz-i\u{307}d",
                      "Host", "x-amz-date ", String(repeating: "ab", count: 40)]
        for name in names {
            for lower in lowers {
                #expect(HTTPHeaders.isASCIIName(name) == name.utf8.allSatisfy { $0 < 0x80 }, "\(name)")
                guard HTTPHeaders.isASCIIName(name) else { continue }
                #expect(HTTPHeaders.lowercasedASCIIName(name, is: lower) == Array(HTTPHeaders.lowercasedName(name).utf8).elementsEqual(lower.utf8),
                        "\(name) / \(lower)")
            }
        }
    }

    /// Inserted fields go where asked, before the others, and lookups see them.
    @Test func insertKeepsTheOrderAsked() {
        var h: HTTPHeaders = ["ETag": "\"e\"", "Content-Type": "text/plain"]
        h.insert("x-amz-id-2", "id2", at: 0)
        h.insert("x-amz-request-id", "rid", at: 1)
        h.insert("Date", "d", at: 2)
        h.add("Server", "AmazonS3")
        #expect(h.fields.map(\.name) == ["x-amz-id-2", "x-amz-request-id", "Date", "ETag", "Content-Type", "Server"])
        #expect(h["DATE"] == "d" && h["etag"] == "\"e\"")
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
