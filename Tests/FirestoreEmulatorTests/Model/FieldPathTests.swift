import Testing
@testable import FirestoreEmulator

@Suite struct FieldPathTests {
    @Test(arguments: [
        ("a", ["a"]),
        ("a.b.c", ["a", "b", "c"]),
        ("_x1.y", ["_x1", "y"]),
        ("`a.b`.c", ["a.b", "c"]),
        ("`odd name`", ["odd name"]),
        ("`1st`", ["1st"]),
        (#"`back\`tick`"#, ["back`tick"]),
        (#"`back\\slash`"#, [#"back\slash"#]),
        ("__name__", ["__name__"]),
    ])
    func parses(_ text: String, _ segments: [String]) throws {
        #expect(try FieldPath.parse(text).segments == segments)
    }

    @Test(arguments: ["", "a..b", ".a", "a.", "`unterminated", "1abc", "a b", "a.`b`c", "``", #"`bad\escape`"#])
    func rejects(_ text: String) {
        #expect(throws: FieldPath.ParseError.self) { try FieldPath.parse(text) }
    }

    @Test(arguments: [
        (["a", "b"], "a.b"),
        (["a.b", "c d"], "`a.b`.`c d`"),
        (["1x"], "`1x`"),
        (["back`tick"], #"`back\`tick`"#),
    ])
    func canonicalQuotesWhatIsNotAnIdentifier(_ segments: [String], _ canonical: String) throws {
        let p = FieldPath(segments)
        #expect(p.canonical == canonical)
        #expect(try FieldPath.parse(canonical) == p)
    }
}
