import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// The direct REST JSON → `Write` decoder builds exactly the writes `WriteParser` builds, and
/// leaves every other request (refused, or not in the plain form) to it.
struct WriteJSONDecoderTests {
    typealias P = WriteProtoDecoderTests
    static let db = P.db
    static let docs = P.docs

    static func general(_ writes: JSON) -> Result<[Write], FirestoreError> {
        do throws(FirestoreError) {
            let parser = WriteParser(database: db)
            var out: [Write] = []
            for (i, item) in (writes.arrayValue ?? []).enumerated() {
                out.append(try parser.parseWrite(try ProtoObject(json: item, path: "writes[\(i)]")))
            }
            return .success(out)
        } catch {
            return .failure(error)
        }
    }

    static func direct(_ writes: JSON) -> [Write]? { WriteJSONDecoder(database: db).writes(writes) }

    /// The REST body of the bench's create, as the SDKs write it.
    static let create = P.plain[0].1

    /// Plain writes: taken directly, and equal to the general path's.
    static let plain: [(String, [JSON])] = P.plain.filter { $0.0 != "every value kind" } + [
        ("every canonical value kind", [P.update("\(docs)/c/d", [
            ("n", P.value("nullValue", .null)), ("n2", P.value("nullValue", .string("NULL_VALUE"))),
            ("b", P.value("booleanValue", .bool(false))),
            ("i", P.value("integerValue", .string("-9223372036854775808"))), ("i2", P.value("integerValue", .int(7))),
            ("d", P.value("doubleValue", .double(-2.5))), ("d2", P.value("doubleValue", .int(3))),
            ("t", P.value("timestampValue", .string("2024-02-29T12:34:56.123456789Z"))),
            ("s", P.str("héllo ✓")), ("y", P.value("bytesValue", .string("AAEC_w"))),
            ("a", P.value("arrayValue", .object(["values": .array([P.str("x"), P.value("mapValue", .object(["fields": .object(["k": P.str("v")])]))])]))),
            ("ea", P.value("arrayValue", .object([:]))),
            ("m", P.value("mapValue", .object(["fields": .object(["inner": P.value("mapValue", .object(["fields": .object(["z": P.str("deep")])]))])]))),
            ("em", P.value("mapValue", .object([:]))),
            ("dup", P.str("first")), ("dup", P.str("last")),
        ])]),
    ]

    @Test(arguments: plain.map(\.0))
    func plainWritesAgree(_ name: String) throws {
        let writes = JSON.array(try #require(Self.plain.first { $0.0 == name }).1)
        let general = try Self.general(writes).get()
        let direct = try #require(Self.direct(writes), "the direct decoder fell back on a plain request")
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
        ("two kinds in one value", [P.update("\(docs)/c/d", [("x", .object(JSONObject([("stringValue", .string("a")), ("booleanValue", .bool(true))])))])], false),
        ("a bad timestamp", [P.update("\(docs)/c/d", [("t", P.value("timestampValue", .string("2024-02-30T00:00:00z")))])], false),
        ("an empty field name", [P.update("\(docs)/c/d", [("", P.str("x"))])], false),
        ("a write that is not an object", [.string("x")], false),
    ]

    @Test(arguments: other.map(\.0))
    func otherRequestsFallBack(_ name: String) throws {
        let (_, writes, valid) = try #require(Self.other.first { $0.0 == name })
        #expect(Self.direct(.array(writes)) == nil)
        if valid {
            _ = try Self.general(.array(writes)).get()
        } else {
            #expect(throws: FirestoreError.self) { try Self.general(.array(writes)).get() }
        }
    }

    @Test func absentAndMalformedWriteLists() {
        #expect(Self.direct(.null) == nil)
        #expect(WriteJSONDecoder(database: Self.db).writes(nil) == [])
        #expect(Self.direct(.object([:])) == nil)
    }
}
