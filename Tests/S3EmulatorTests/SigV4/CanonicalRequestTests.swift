import Testing
@testable import S3Emulator

@Suite struct CanonicalRequestTests {
    @Test(arguments: [
        ("", "/"),
        ("/", "/"),
        ("/bkt/key", "/bkt/key"),
        ("/bkt/a%20b", "/bkt/a%20b"),
        ("/bkt/a b", "/bkt/a%20b"),
        ("/bkt/a+b", "/bkt/a%2Bb"),
        ("/bkt/a%2Bb", "/bkt/a%2Bb"),
        ("/bkt/%7Euser", "/bkt/~user"),
        ("/bkt/a%2fb", "/bkt/a%2Fb"),
        ("/bkt/photo%201.jpg", "/bkt/photo%201.jpg"),
        ("/bkt//double//slash/", "/bkt//double//slash/"),
        ("/bkt/./dot/../seg", "/bkt/./dot/../seg"),
        ("/bkt/\u{1234}", "/bkt/%E1%88%B4"),
        ("/bkt/%E1%88%B4", "/bkt/%E1%88%B4"),
        ("/bkt/100%", "/bkt/100%25"),
        ("/bkt/%zz", "/bkt/%25zz"),
        ("/bkt/$delete", "/bkt/%24delete"),
        ("/bkt/a=b&c", "/bkt/a%3Db%26c"),
        ("bkt/key", "/bkt/key"),
    ])
    func s3CanonicalURI(raw: String, canonical: String) {
        #expect(CanonicalRequest.uri(rawPath: raw) == canonical)
    }

    @Test func otherPathForms() {
        #expect(CanonicalRequest.uri(rawPath: "/bkt/a%20b", form: .doubleEncoded) == "/bkt/a%2520b")
        #expect(CanonicalRequest.uri(rawPath: "/bkt/a%20b", form: .decoded) == "/bkt/a b")
        #expect(CanonicalRequest.uri(rawPath: "/bkt/%7e", form: .asSent) == "/bkt/%7e")
        #expect(CanonicalRequest.uri(rawPath: "/a/./b/../c//d/", form: .normalized) == "/a/c/d/")
        #expect(CanonicalRequest.uri(rawPath: "/example/..", form: .normalized) == "/")
    }

    @Test(arguments: [
        ("", ""),
        ("uploads", "uploads="),
        ("uploads=", "uploads="),
        ("b=2&a=1", "a=1&b=2"),
        ("a=2&a=1", "a=1&a=2"),
        ("Param1=value2&Param1=Value1", "Param1=Value1&Param1=value2"),
        ("prefix=a%20b%2F", "prefix=a%20b%2F"),
        ("prefix=a+b", "prefix=a%20b"),
        ("prefix=a%2Bb", "prefix=a%2Bb"),
        ("k=%7E~", "k=~~"),
        ("k=a/b", "k=a%2Fb"),
        ("k=\u{1234}", "k=%E1%88%B4"),
        ("a=1&&b=2&", "a=1&b=2"),
        ("list-type=2&prefix=a%20b%2F&max-keys=10&encoding-type=url", "encoding-type=url&list-type=2&max-keys=10&prefix=a%20b%2F"),
    ])
    func canonicalQuery(raw: String, canonical: String) {
        #expect(CanonicalRequest.query(rawQuery: raw) == canonical)
    }

    @Test func presignedQueryLeavesOutTheSignature() {
        let raw = "X-Amz-Signature=abc&X-Amz-Date=20261130T060320Z&response-content-type=image%2Fjpeg"
        #expect(CanonicalRequest.query(rawQuery: raw, presigned: true) == "X-Amz-Date=20261130T060320Z&response-content-type=image%2Fjpeg")
        #expect(CanonicalRequest.query(rawQuery: raw, presigned: false).hasPrefix("X-Amz-Date="))
    }

    @Test func plusForms() {
        #expect(CanonicalRequest.query(rawQuery: "p=a+b", plus: .space) == "p=a%20b")
        #expect(CanonicalRequest.query(rawQuery: "p=a+b", plus: .literal) == "p=a%2Bb")
        #expect(CanonicalRequest.query(rawQuery: "p=a+b%20c", plus: .raw) == "p=a+b%20c")
    }

    @Test(arguments: [
        ("value", "value"),
        ("  value  ", "value"),
        ("\"a   b   c\"", "\"a b c\""),
        ("value1\n  value2\n     value3", "value1 value2 value3"),
        ("a\t\tb", "a b"),
        ("", ""),
    ])
    func headerValues(raw: String, canonical: String) {
        #expect(CanonicalRequest.trimmed(raw) == canonical)
    }

    @Test func wholeCanonicalRequest() {
        let canonical = CanonicalRequest(
            method: "PUT", rawPath: "/bkt/a b", rawQuery: "partNumber=1&uploadId=x+y", presigned: false,
            headers: [("host", "127.0.0.1:9000"), ("x-amz-meta-a", " one "), ("x-amz-meta-a", "two  three"), ("content-type", "text/plain")],
            signedHeaders: ["content-type", "host", "x-amz-meta-a", "x-amz-missing"], payloadHash: "UNSIGNED-PAYLOAD")
        #expect(canonical.text == """
            PUT
            /bkt/a%20b
            partNumber=1&uploadId=x%20y
            content-type:text/plain
            host:127.0.0.1:9000
            x-amz-meta-a:one,two three
            x-amz-missing:

            content-type;host;x-amz-meta-a;x-amz-missing
            UNSIGNED-PAYLOAD
            """)
        let untrimmed = CanonicalRequest(method: "GET", rawPath: "/", rawQuery: "", presigned: false,
                                         headers: [("host", "h"), ("x-amz-meta-a", " one ")], signedHeaders: ["host", "x-amz-meta-a"],
                                         payloadHash: "UNSIGNED-PAYLOAD", options: CanonicalRequest.Options(trimHeaderValues: false))
        #expect(untrimmed.text.contains("x-amz-meta-a: one \n"))
    }

    @Test func encodingHelpers() {
        #expect(SigV4Encoding.encode("a b/c~d") == "a%20b%2Fc~d")
        #expect(SigV4Encoding.encode("a b/c", keepSlash: true) == "a%20b/c")
        #expect(SigV4Encoding.decode("a%20b+c") == "a b+c")
        #expect(SigV4Encoding.decode("a%20b+c", plusAsSpace: true) == "a b c")
        #expect(SigV4Encoding.spacedHex("AWS4\n") == "41 57 53 34 0a")
    }
}
