import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The direct REST body → `Write` decoder builds exactly the writes the general path (`JSON.parse`,
/// then `WriteParser`) builds, and leaves every other body (refused, or not in the plain form) to it.
struct WriteJSONDecoderTests {
    typealias P = WriteProtoDecoderTests
    typealias Body = WriteJSONDecoder.Body
    static let db = P.db
    static let docs = P.docs

    /// What the handler does with a body the direct decoder leaves: the tree, its known members,
    /// then the general parser (`FirestoreHTTPService.parseWrites`).
    static func general(_ bytes: [UInt8], transaction: Bool = true) -> Result<Body, FirestoreError> {
        WriteJSONDecoder(database: db).general(bytes, transaction: transaction)
    }

    static func direct(_ bytes: [UInt8], transaction: Bool = true) -> Body? {
        WriteJSONDecoder(database: db).body(bytes, transaction: transaction)
    }

    /// A commit body holding `writes` (and a transaction).
    static func body(_ writes: [JSON], transaction: String? = nil) -> [UInt8] {
        var members: [(String, JSON)] = [("writes", .array(writes))]
        if let transaction { members.append(("transaction", .string(transaction))) }
        return JSON.object(JSONObject(members)).utf8Bytes
    }

    /// Plain writes: taken directly, and equal to the general path's.
    static let plain: [(String, [JSON])] = P.plain.filter { $0.0 != "every value kind" } + [
        ("every canonical value kind", [P.update("\(docs)/c/d", [
            ("n", P.value("nullValue", .null)), ("n2", P.value("nullValue", .string("NULL_VALUE"))),
            ("b", P.value("booleanValue", .bool(false))),
            ("i", P.value("integerValue", .string("-9223372036854775808"))), ("i2", P.value("integerValue", .int(7))),
            ("i3", P.value("integerValue", .string("1e3"))),
            ("d", P.value("doubleValue", .double(-2.5))), ("d2", P.value("doubleValue", .int(3))),
            ("d3", P.value("doubleValue", .double(1e300))), ("d4", P.value("doubleValue", .double(-0.0))),
            ("t", P.value("timestampValue", .string("2024-02-29T12:34:56.123456789Z"))),
            ("s", P.str("héllo ✓")), ("y", P.value("bytesValue", .string("AAEC_w"))),
            ("a", P.value("arrayValue", .object(["values": .array([P.str("x"), P.value("mapValue", .object(["fields": .object(["k": P.str("v")])]))])]))),
            ("ea", P.value("arrayValue", .object([:]))),
            ("m", P.value("mapValue", .object(["fields": .object(["inner": P.value("mapValue", .object(["fields": .object(["z": P.str("deep")])]))])]))),
            ("em", P.value("mapValue", .object([:]))), ("ef", P.value("mapValue", .object(["fields": .object([:])]))),
            ("dup", P.str("first")), ("dup", P.str("last")), ("ü ber", P.str("non-ASCII name")),
            ("v", P.vector([.double(1.5), .double(-2)])), ("mv", P.value("mapValue", .object(["fields": .object(["inner": P.vector([.double(0.25)])])]))),
        ])]),
        ("a transform before its field path", [P.update("\(docs)/c/d", [], extra: [("updateTransforms", .array([
            .object(JSONObject([("setToServerValue", .string("REQUEST_TIME")), ("fieldPath", .string("t"))]))]))])]),
    ]

    @Test(arguments: plain.map(\.0))
    func plainWritesAgree(_ name: String) throws {
        let bytes = Self.body(try #require(Self.plain.first { $0.0 == name }).1)
        let general = try Self.general(bytes).get()
        let direct = try #require(Self.direct(bytes), "the direct decoder fell back on a plain request")
        #expect(direct == general)
    }

    /// Forms the general parser accepts that the direct one leaves to it, and errors.
    static let other: [(String, [JSON], valid: Bool)] = P.refused.map { ($0.0, $0.1, $0.0.hasPrefix("a reference") || $0.0 == "a transform write") } + [
        ("snake_case member names", [P.write([("update", .object(["name": .string("\(docs)/c/d")])),
                                              ("current_document", .object(["exists": .bool(false)]))])], true),
        ("a number as a string value", [P.update("\(docs)/c/d", [("s", P.value("stringValue", .int(5)))])], true),
        ("an integral double as an integer", [P.update("\(docs)/c/d", [("i", P.value("integerValue", .double(2)))])], true),
        ("Infinity as text", [P.update("\(docs)/c/d", [("d", P.value("doubleValue", .string("Infinity")))])], true),
        ("a geo point", [P.update("\(docs)/c/d", [("g", P.value("geoPointValue", .object(["latitude": .double(1)])))])], true),
        ("null fields", [P.write([("update", .object(["name": .string("\(docs)/c/d"), "fields": .null]))])], true),
        ("an empty precondition", [P.write([("update", .object(["name": .string("\(docs)/c/d")])), ("currentDocument", .object([:]))])], true),
        ("update given twice", [P.write([("update", .object(["name": .string("\(docs)/c/a")])), ("update", .object(["name": .string("\(docs)/c/b")]))])], true),
        ("a value kind given twice", [P.update("\(docs)/c/d", [("x", .object(JSONObject([("stringValue", .string("a")), ("stringValue", .string("b"))])))])], true),
        ("two kinds in one value", [P.update("\(docs)/c/d", [("x", .object(JSONObject([("stringValue", .string("a")), ("booleanValue", .bool(true))])))])], false),
        ("a bad timestamp", [P.update("\(docs)/c/d", [("t", P.value("timestampValue", .string("2024-02-30T00:00:00z")))])], false),
        ("an empty field name", [P.update("\(docs)/c/d", [("", P.str("x"))])], false),
        ("a write that is not an object", [.string("x")], false),
    ]

    @Test(arguments: other.map(\.0))
    func otherRequestsFallBack(_ name: String) throws {
        let (_, writes, valid) = try #require(Self.other.first { $0.0 == name })
        let bytes = Self.body(writes)
        #expect(Self.direct(bytes) == nil)
        if valid {
            _ = try Self.general(bytes).get()
        } else {
            #expect(throws: FirestoreError.self) { try Self.general(bytes).get() }
        }
    }

    /// The bench's create as Python's `json.dumps` writes it (spaces after `,` and `:`).
    static let create = #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/users/u1/files/f1", "fields": {"ownerUid": {"stringValue": "u1"}, "storage": {"stringValue": "s3"}, "status": {"stringValue": "ready"}}}, "updateTransforms": [{"fieldPath": "createdAt", "setToServerValue": "REQUEST_TIME"}], "currentDocument": {"exists": false}}]}"#

    /// Bodies as text: which the direct decoder takes (agreeing with the general path) and which it
    /// leaves to the general path, and whether that accepts them.
    static let texts: [(String, String, direct: Bool, valid: Bool)] = [
        ("the bench's create", create, true, true),
        ("whitespace everywhere", " \n{ \"writes\" :\t[ { \"delete\" : \"\(docs)/c/d\" } , {\"update\":{\"name\":\"\(docs)/c/e\",\"fields\":{ }}} ] }\r\n ", true, true),
        ("a transaction", #"{"transaction": "dHgx", "writes": [{"delete": "projects/p/databases/(default)/documents/c/d"}]}"#, true, true),
        ("no members", "{}", true, true),
        ("no writes", #"{"writes": []}"#, true, true),
        ("an empty update mask", #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/c/d"}, "updateMask": {"fieldPaths": []}}]}"#, true, true),
        ("a negative zero integer as a double", #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/c/d", "fields": {"z": {"doubleValue": -0}}}}]}"#, true, true),
        ("an escape in a string", #"{"writes": [{"delete": "projects\/p/databases/(default)/documents/c/d"}]}"#, false, true),
        ("a unicode escape in a field name", #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/c/d", "fields": {"\u00e9": {"stringValue": "x"}}}}]}"#, false, true),
        ("a byte-order mark", "\u{FEFF}" + create, false, true),
        ("requestOptions", #"{"writes": [], "requestOptions": {}}"#, false, true),
        ("writes given twice", #"{"writes": [{"delete": "x"}], "writes": []}"#, false, true),
        ("null writes", #"{"writes": null}"#, false, true),
        ("an unknown member", #"{"writes": [], "bogus": 1}"#, false, false),
        ("a trailing comma", #"{"writes": [],}"#, false, false),
        ("data after the body", #"{"writes": []} x"#, false, false),
        ("two bodies", #"{"writes": []}{}"#, false, false),
        ("an unterminated body", #"{"writes": []"#, false, false),
        ("a double past its range", #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/c/d", "fields": {"z": {"doubleValue": 1e400}}}}]}"#, false, false),
        ("a leading zero", #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/c/d", "fields": {"z": {"doubleValue": 01}}}}]}"#, false, false),
        ("a bare minus", #"{"writes": [{"update": {"name": "projects/p/databases/(default)/documents/c/d", "fields": {"z": {"doubleValue": -}}}}]}"#, false, false),
        ("a control character in a string", "{\"writes\": [{\"delete\": \"\(docs)/c/\u{01}\"}]}", false, false),
        ("a misspelt literal", #"{"writes": [{"delete": "projects/p/databases/(default)/documents/c/d", "currentDocument": {"exists": tru}}]}"#, false, false),
        ("an array body", "[]", false, false),
        ("an empty body", "", false, true),
        ("a blank body", " \n", false, true),
    ]

    @Test(arguments: texts.map(\.0))
    func bodiesAsText(_ name: String) throws {
        let (_, text, takes, valid) = try #require(Self.texts.first { $0.0 == name })
        let bytes = Array(text.utf8)
        let direct = Self.direct(bytes)
        #expect((direct != nil) == takes)
        if let direct { #expect(direct == (try Self.general(bytes).get())) }
        switch Self.general(bytes) {
        case .success: #expect(valid)
        case .failure: #expect(!valid)
        }
    }

    @Test func invalidUTF8FallsBack() throws {
        var bytes = Array(#"{"writes": [{"delete": "projects/p/databases/(default)/documents/c/dX"}]}"#.utf8)
        let at = try #require(bytes.firstIndex(of: UInt8(ascii: "X")))
        bytes[at] = 0xC3  // a lead byte with no continuation
        #expect(Self.direct(bytes) == nil)
        #expect(throws: FirestoreError.self) { try Self.general(bytes).get() }
        bytes[at] = 0xA9  // a continuation byte alone
        #expect(Self.direct(bytes) == nil)
    }

    @Test func aTransactionOnlyWhereAllowed() throws {
        let bytes = Self.body([], transaction: "dHgx")
        #expect(Self.direct(bytes) == Body(writes: [], transaction: "dHgx"))
        #expect(Self.direct(bytes, transaction: false) == nil)
        #expect(throws: FirestoreError.self) { try Self.general(bytes, transaction: false).get() }
    }

    /// Every strict prefix of a plain body is left to the general path (which refuses it: no
    /// prefix of a JSON object is one).
    @Test func everyPrefixFallsBack() {
        let bytes = Array(Self.create.utf8)
        for n in 0..<bytes.count {
            let prefix = Array(bytes[..<n])
            #expect(Self.direct(prefix) == nil, "prefix of \(n) bytes")
        }
    }

    /// Strings are scanned eight bytes at a time: a quote, a backslash, a control character or a
    /// non-ASCII byte at any place of a word (and in the bytes after the last whole word) is seen
    /// as it is byte by byte — the body is read as the general path reads it, or left to it.
    @Test func stringsScannedByWordsAgree() {
        let special: [UInt8] = [0x00, 0x1F, 0x20, 0x21, 0x22, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA9, 0xC3, 0xE2, 0xFF]
        for length in [7, 8, 9, 16, 23, 24, 25] {
            for at in 0..<length {
                for b in special {
                    var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    text[at] = b
                    // Both as a field's value and as a field's name.
                    let bodies = [
                        Array(#"{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/c/d","fields":{"f":{"stringValue":""#.utf8)
                            + text + Array(#""}}}}]}"#.utf8),
                        Array(#"{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/c/d","fields":{""#.utf8)
                            + text + Array(#"":{"stringValue":"v"}}}}]}"#.utf8),
                    ]
                    for bytes in bodies {
                        guard let direct = Self.direct(bytes) else { continue }
                        let general = Self.general(bytes)
                        guard case .success(let expected) = general else {
                            Issue.record("length \(length), byte \(b) at \(at): taken, but the general path refuses it: \(general)")
                            continue
                        }
                        #expect(direct == expected, "length \(length), byte \(b) at \(at)")
                    }
                }
            }
        }
        // The plain string itself is taken, whole.
        let plain = Array(#"{"writes":[{"update":{"name":"projects/p/databases/(default)/documents/c/d","fields":{"f":{"stringValue":"0123456789abcdefghijklmnopqrstuvwxyz"}}}}]}"#.utf8)
        let taken = Self.direct(plain)?.writes.first?.operation
        #expect(taken == .update(fields: ["f": .string("0123456789abcdefghijklmnopqrstuvwxyz")], mask: nil))
    }

    /// Any body one byte away from a plain one is either left to the general path or read exactly
    /// as the general path reads it: the direct decoder never accepts what the general path refuses
    /// and never reads a body differently.
    @Test func mutatedBodiesAgreeOrFallBack() throws {
        let writes = try #require(Self.plain.first { $0.0 == "every canonical value kind" }).1
            + (try #require(Self.plain.first { $0.0 == "transforms of every kind" }).1)
        let bytes = Self.body(writes, transaction: "dHgx")
        let replacements: [UInt8] = [0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x20, 0x00, 0x80, 0xFF,
                                     UInt8(ascii: "x"), UInt8(ascii: "0"), UInt8(ascii: "-"), UInt8(ascii: "e"), UInt8(ascii: ".")]
        var taken = 0
        for at in bytes.indices {
            for b in replacements where bytes[at] != b {
                var mutated = bytes
                mutated[at] = b
                guard let direct = Self.direct(mutated) else { continue }
                taken += 1
                let general = Self.general(mutated)
                guard case .success(let expected) = general else {
                    Issue.record("byte \(at) → \(b): the direct decoder took a body the general path refuses: \(general)")
                    continue
                }
                #expect(direct == expected, "byte \(at) → \(b)")
            }
        }
        // Some mutations stay plain (a letter inside a string, a digit in a number).
        #expect(taken > 0)
    }
}
