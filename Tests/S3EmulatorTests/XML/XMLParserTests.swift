import Testing
@testable import S3Emulator

@Suite struct XMLParserTests {
    @Test func parsesS3Documents() throws {
        let doc = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment -->
        <s3:Delete xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/">
          <Quiet>true</Quiet>
          <Object><Key>a &amp; b &lt;c&gt; &#233;&#x4E2D;</Key></Object>
          <Object><Key><![CDATA[<raw> & stuff]]></Key><VersionId/></Object>
        </s3:Delete>
        """
        let root = try S3XMLParser.parse(Array(doc.utf8))
        #expect(root.name == "Delete")
        #expect(root.childText("Quiet") == "true")
        let keys = root.children(named: "Object").compactMap { $0.childText("Key") }
        #expect(keys == ["a & b <c> é中", "<raw> & stuff"])
        #expect(root.children(named: "Object")[1].childText("VersionId") == "")
    }

    @Test(arguments: ["", "<a>", "<a></b>", "<a><b></a></b>", "<a>&bogus;</a>", "<a/><b/>", "text", "<a x=1/>",
                      "<!DOCTYPE a><a/>", "<a>&#xFFFFFFFF;</a>", String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)])
    func rejectsMalformed(text: String) {
        #expect(throws: S3XMLParser.Failure.self) { try S3XMLParser.parse(Array(text.utf8)) }
    }

    @Test func writerEscapesAndNamespaces() {
        var x = XMLWriter()
        x.group("R", namespace: true) { x in
            x.element("K", "\"q\" & <t>\t")
            x.empty("E")
        }
        #expect(String(decoding: x.bytes, as: UTF8.self)
            == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<R xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><K>&quot;q&quot; &amp; &lt;t&gt;&#9;</K><E/></R>")
    }

    @Test(arguments: [("a b/c+d", "a%20b/c%2Bd"), ("ü~*-_.", "%C3%BC%7E*-_."), ("", "")])
    func listingEncoding(raw: String, encoded: String) {
        #expect(S3URLEncoding.listingEncode(raw) == encoded)
    }
}
