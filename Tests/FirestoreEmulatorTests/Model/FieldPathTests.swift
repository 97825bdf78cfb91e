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

    /// A backslash in a quoted segment reads the escapes Firestore reads (the official emulator,
    /// probed one by one: docs/firestore.md, *Decisions where the official emulator differs*).
    @Test(arguments: [
        (#"`a\bb`"#, "a\u{8}b"), (#"`a\nb`"#, "a\nb"), (#"`a\tb`"#, "a\tb"), (#"`a\vb`"#, "a\u{B}b"), (#"`a\ab`"#, "a\u{7}b"),
        (#"`a\fb`"#, "a\u{C}b"), (#"`a\rb`"#, "a\rb"), (#"`a\"b`"#, "a\"b"), (#"`a\'b`"#, "a'b"), (#"`a\?b`"#, "a?b"),
        (#"`a\101b`"#, "aAb"), (#"`a\000b`"#, "a\u{0}b"), (#"`a\377b`"#, "a\u{FF}b"), (#"`a\1234`"#, "aS4"),
        (#"`a\x41b`"#, "aAb"), (#"`a\X4a`"#, "aJ"), (#"`a\x4142`"#, "aA42"), (#"`a\x4b`"#, "aK"),
        (#"`a\u00e9`"#, "aé"), (#"`a\U0010FFFF`"#, "a\u{10FFFF}"), (#"`\uD83D\uDE00`"#, "😀"),
        (#"`\uD800`"#, "?"), (#"`\uDE00x`"#, "?x"), (#"`\uD83D\uD83D\uDE00`"#, "?😀"), (#"`\uD83Dx`"#, "?x"),
        (#"`\U0000D800`"#, "?"),
    ])
    func readsEscapesInQuotedSegments(_ text: String, _ segment: String) throws {
        #expect(try FieldPath.parse(text).segments == [segment])
    }

    @Test(arguments: ["", "a..b", ".a", "a.", "`unterminated", "1abc", "a b", "a.`b`c", "``", #"`bad\escape`"#,
                      #"`a\qb`"#, #"`a\0b`"#, #"`a\00b`"#, #"`a\08`"#, #"`a\7`"#, #"`a\400`"#, #"`a\x`"#, #"`a\xg1`"#,
                      #"`a\u12`"#, #"`a\.b`"#, #"`a\ b`"#, #"`a\U00110000`"#, "`a\\\u{301}b`", #"`a\`"#])
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

    /// The official emulator's answer for each path, probed name by name (nil: accepted).
    @Test(arguments: [
        ("a.__x__", FieldPath.Use.write, "Invalid reserved name in field path __x__"),
        ("a.__x__.b", .write, "Invalid reserved name in field path __x__.b"),
        ("__x__.`a b`", .query, "Invalid reserved name in field path __x__.a b"),
        ("`__id5__`", .projection, "Invalid reserved name in field path __id5__"),
        ("a.__key__", .query, #"Invalid property path member name "__key__"."#),
        ("__key__.__x__", .write, #"Invalid property path member name "__key__"."#),
        ("__type__", .query, "the name __type__ is reserved"),
        ("a.__type__", .write, "the name __type__ is reserved"),
        ("a.__type__", .projection, "the name __type__ is reserved"),
        ("a.__type__", .query, nil),
        ("a.__type__.__x__", .write, "Invalid reserved name in field path __x__"),
        ("a.__name__", .query, "the name __key__ is reserved"),
        ("__name__.b", .write, "the name __key__ is reserved"),
        ("__name__", .query, nil),
        ("a.__", .write, nil),
        ("__a.b__", .write, nil),
    ] as [(String, FieldPath.Use, String?)])
    func reservedNamesAreRefusedInTheEmulatorsWords(_ text: String, _ use: FieldPath.Use, _ message: String?) throws {
        let path = try FieldPath.parse(text)
        do {
            try path.rejectReservedNames(as: use)
            #expect(message == nil, "\(text) was accepted")
        } catch {
            #expect(error.message == message, "\(text)")
        }
    }

    /// Simple segments (`[A-Za-z_][A-Za-z0-9_]*`, judged by UTF-8 bytes) stay bare; anything else,
    /// non-ASCII letters and digits included, is quoted — long names too (past the 15 bytes a
    /// String keeps inline).
    @Test(arguments: [
        ("ownerUid", "ownerUid"), ("_", "_"), ("a1_B2", "a1_B2"), ("Z9", "Z9"),
        ("a_very_long_field_name_past_inline_storage", "a_very_long_field_name_past_inline_storage"),
        ("1st", "`1st`"), ("", "``"), ("x y", "`x y`"), ("é", "`é`"), ("a-b", "`a-b`"), ("a.b", "`a.b`"),
        ("٣", "`٣`"), ("a\u{0}", "`a\u{0}`"), (#"b`q\"#, #"`b\`q\\`"#),
        ("a_very_long_field_name_past_inline_storage!", "`a_very_long_field_name_past_inline_storage!`"),
    ])
    func quotesAllButSimpleSegments(_ segment: String, _ canonical: String) {
        #expect(FieldPath.isSimple(segment) == (segment == canonical))
        #expect(FieldPath.quoteIfNeeded(segment) == canonical)
    }
}
