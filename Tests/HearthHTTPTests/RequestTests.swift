import Testing
@testable import HearthHTTP

@Suite struct RequestTests {
    /// Methods and versions are the text libmicrohttpd gave, literal or copied.
    @Test(arguments: ["GET", "POST", "HTTP/1.1", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "HTTP/1.0", "get", "GETS", "GE",
                      "PROPFIND", "HTTP/2.0", "", "POST ", "caf\u{E9}"])
    func methodsAndVersionsKeepTheirText(text: String) {
        #expect(text.withCString { Exchange.token($0) } == text)
    }

    /// A target split at its first `?` byte, as the UTF8View search before it did.
    @Test(arguments: [
        ("/a/b", "/a/b", "", false),
        ("/a/b?", "/a/b", "", true),
        ("?x=1", "", "x=1", true),
        ("/a?x=1?y=2", "/a", "x=1?y=2", true),
        ("/é/b?q=é", "/é/b", "q=é", true),
        ("/a?\u{301}b", "/a", "\u{301}b", true),  // a combining mark after `?`: still a query
        ("", "", "", false),
    ])
    func splitsAtTheFirstQuestionMark(target: String, path: String, query: String, hasQuery: Bool) {
        let split = Request.split(target: target)
        #expect(split.path == path && split.query == query && split.hasQuery == hasQuery)
        let utf8 = target.utf8
        if let q = utf8.firstIndex(of: UInt8(ascii: "?")) {
            #expect(split.path == String(decoding: utf8[..<q], as: UTF8.self))
            #expect(split.query == String(decoding: utf8[utf8.index(after: q)...], as: UTF8.self))
        }
    }

    /// The server splits the target's bytes as libmicrohttpd hands them over; the strings must be
    /// those of making the whole target a string first (invalid UTF-8 repaired) and splitting that.
    @Test func splitsReceivedBytesAsTheirRepairedString() {
        var targets: [[UInt8]] = [
            Array("/a/b?x=1".utf8), Array("/a/b".utf8), Array("?".utf8), [], Array("/é?q=é?".utf8),
            [0x2F, 0xC3, 0x3F, 0x41],  // a truncated sequence just before `?`
            [0x2F, 0xFF, 0xFE, 0x3F, 0xE2, 0x82],  // invalid bytes both sides
            [0x2F, 0x3F, 0xF0, 0x9F, 0x98, 0x80, 0x3F, 0x80],  // a second `?` and a lone continuation byte
        ]
        var rng = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [0x2F, 0x3F, 0x26, 0x3D, 0x61, 0x25, 0xC3, 0xA9, 0xE2, 0x80, 0xFF]
        for _ in 0..<2000 { targets.append((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }) }
        for bytes in targets {
            let viaString = Request.split(target: String(decoding: bytes, as: UTF8.self))
            let viaBytes = bytes.withUnsafeBufferPointer { Request.split(target: $0) }
            #expect(viaBytes.path.utf8.elementsEqual(viaString.path.utf8) && viaBytes.query.utf8.elementsEqual(viaString.query.utf8)
                    && viaBytes.hasQuery == viaString.hasQuery, "\(bytes)")
        }
    }

    /// The Character-based parser the byte-based one replaced for ASCII queries: both must agree.
    static func referenceParse(_ raw: String, plusAsSpace: Bool) -> [(name: String, value: String?)] {
        guard !raw.isEmpty else { return [] }
        return raw.split(separator: "&", omittingEmptySubsequences: true).map { part in
            if let eq = part.firstIndex(of: "=") {
                return (Request.percentDecode(String(part[..<eq]), plusAsSpace: plusAsSpace),
                        Request.percentDecode(String(part[part.index(after: eq)...]), plusAsSpace: plusAsSpace))
            }
            return (Request.percentDecode(String(part), plusAsSpace: plusAsSpace), nil)
        }
    }

    static func flat(_ items: [(name: String, value: String?)]) -> [String] {
        items.map { "\($0.name)|\($0.value ?? "<nil>")" }
    }

    @Test(arguments: [
        ("", [String]()),
        ("a=1", ["a|1"]),
        ("a=1&b&c=", ["a|1", "b|<nil>", "c|"]),
        ("&&a=1&&", ["a|1"]),
        ("=v", ["|v"]),
        ("a=b=c", ["a|b=c"]),
        ("x=%20y+z", ["x| y z"]),
        ("k%3D=%26v", ["k=|&v"]),
        ("bad=%zz%4", ["bad|%zz%4"]),
        ("u=%C3%A9", ["u|é"]),
        ("notutf8=%FF", ["notutf8|%FF"]),
        ("X-Amz-Credential=AK%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Expires=86400", ["X-Amz-Credential|AK/20130524/us-east-1/s3/aws4_request", "X-Amz-Expires|86400"]),
        ("é=ü&z", ["é|ü", "z|<nil>"]),
    ])
    func parsesQueries(raw: String, expected: [String]) {
        #expect(Self.flat(Request.parseQuery(raw, plusAsSpace: true)) == expected)
        #expect(Self.flat(Request.parseQuery(raw, plusAsSpace: true)) == Self.flat(Self.referenceParse(raw, plusAsSpace: true)))
        #expect(Self.flat(Request.parseQuery(raw, plusAsSpace: false)) == Self.flat(Self.referenceParse(raw, plusAsSpace: false)))
    }

    @Test(arguments: [
        ("plain", false, "plain"),
        ("a+b", false, "a+b"),
        ("a+b", true, "a b"),
        ("a%2Bb", true, "a+b"),
        ("%", false, "%"),
        ("100%", false, "100%"),
        ("%4", false, "%4"),
        ("%41%42", false, "AB"),
        ("%c3%a9", false, "é"),
        ("%ff", false, "%ff"),
    ])
    func percentDecodes(text: String, plusAsSpace: Bool, expected: String) {
        #expect(Request.percentDecode(text, plusAsSpace: plusAsSpace) == expected)
    }

    @Test func queryLookupUsesFirstValue() {
        let r = Request(method: "GET", target: "/b/k?versionId=a&versionId=b&uploads&x=%2F")
        #expect(r.query("versionId") == "a")
        #expect(r.query("uploads") == "")
        #expect(r.query("x") == "/")
        #expect(r.query("missing") == nil)
    }
}

@Suite struct QueryPairSplitTests {
    func pairs(_ raw: String) -> [String] {
        var out: [String] = []
        var text = raw
        text.withUTF8 { bytes in
            Request.forEachQueryPair(bytes) { name, value in
                out.append(String(decoding: name, as: UTF8.self) + (value.map { "=" + String(decoding: $0, as: UTF8.self) } ?? "|nil"))
            }
        }
        return out
    }

    @Test func splitsOnAmpersandThenTheFirstEquals() {
        #expect(pairs("a=1&b&c=&d=x=y&&e%3D=%26") == ["a=1", "b|nil", "c=", "d=x=y", "e%3D=%26"])
        #expect(pairs("") == [])
        #expect(pairs("&&") == [])
        #expect(pairs("=v") == ["=v"])
    }
}
