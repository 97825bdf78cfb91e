import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

@Suite struct ValueJSONTests {
    @Test(arguments: [
        (#"{"nullValue":null}"#, FirestoreValue.null),
        (#"{"nullValue":"NULL_VALUE"}"#, .null),
        (#"{"booleanValue":true}"#, .boolean(true)),
        (#"{"integerValue":"-9223372036854775808"}"#, .integer(.min)),
        (#"{"integerValue":42}"#, .integer(42)),
        (#"{"doubleValue":1.5}"#, .double(1.5)),
        (#"{"doubleValue":"Infinity"}"#, .double(.infinity)),
        (#"{"doubleValue":"-Infinity"}"#, .double(-.infinity)),
        (#"{"timestampValue":"2026-01-02T03:04:05.123456789Z"}"#, .timestamp(Instant(rfc3339: "2026-01-02T03:04:05.123456Z")!)),
        (#"{"timestampValue":"2026-01-02T05:04:05+02:00"}"#, .timestamp(Instant(rfc3339: "2026-01-02T03:04:05Z")!)),
        (#"{"stringValue":"héllo"}"#, .string("héllo")),
        (#"{"bytesValue":"AAH/"}"#, .bytes([0, 1, 255])),
        (#"{"bytesValue":"AAH_"}"#, .bytes([0, 1, 255])),
        (#"{"referenceValue":"projects/p/databases/(default)/documents/a/b"}"#, .reference("projects/p/databases/(default)/documents/a/b")),
        (#"{"geoPointValue":{"latitude":1.5,"longitude":-2}}"#, .geoPoint(latitude: 1.5, longitude: -2)),
        (#"{"arrayValue":{}}"#, .array([])),
        (#"{"arrayValue":{"values":[{"integerValue":"1"},{"stringValue":"x"}]}}"#, .array([.integer(1), .string("x")])),
        (#"{"mapValue":{"fields":{"a":{"booleanValue":false}}}}"#, .map(["a": .boolean(false)])),
        (#"{"map_value":{"fields":{}}}"#, .map([:])),
    ])
    func decodes(_ text: String, _ expected: FirestoreValue) throws {
        let v = try ValueJSON.decode(try JSON.parse(text), path: "v")
        #expect(v == expected)
    }

    @Test func nanDecodes() throws {
        #expect(try ValueJSON.decode(try JSON.parse(#"{"doubleValue":"NaN"}"#), path: "v").isNaN)
    }

    @Test(arguments: [
        (FirestoreValue.integer(7), #"{"integerValue":"7"}"#),
        (.double(.nan), #"{"doubleValue":"NaN"}"#),
        (.double(-.infinity), #"{"doubleValue":"-Infinity"}"#),
        (.timestamp(Instant(rfc3339: "2026-01-02T03:04:05Z")!), #"{"timestampValue":"2026-01-02T03:04:05Z"}"#),
        (.timestamp(Instant(rfc3339: "2026-01-02T03:04:05.120Z")!), #"{"timestampValue":"2026-01-02T03:04:05.120Z"}"#),
        (.timestamp(Instant(rfc3339: "2026-01-02T03:04:05.000001Z")!), #"{"timestampValue":"2026-01-02T03:04:05.000001Z"}"#),
        (.bytes([0, 1, 255]), #"{"bytesValue":"AAH/"}"#),
        (.array([]), #"{"arrayValue":{}}"#),
        (.map([:]), #"{"mapValue":{}}"#),
        (.geoPoint(latitude: 0, longitude: 2.5), #"{"geoPointValue":{"longitude":2.5}}"#),
        (.null, #"{"nullValue":null}"#),
        (.map(["b": .integer(1), "a": .string("x")]), #"{"mapValue":{"fields":{"a":{"stringValue":"x"},"b":{"integerValue":"1"}}}}"#),
    ])
    func encodes(_ value: FirestoreValue, _ expected: String) {
        #expect(ValueJSON.encode(value).serialized() == expected)
    }

    @Test(arguments: [
        (#"{"fooValue":1}"#, "Unknown name \"fooValue\""),
        (#"{}"#, "Cannot convert firestore.v1.Value with type unset."),
        (#"{"stringValue":"a","integerValue":"1"}"#, "Oneof field 'value_type' is already set"),
        (#"{"integerValue":"12x"}"#, "TYPE_INT64"),
        (#"{"integerValue":"9223372036854775808"}"#, "TYPE_INT64"),
        (#"{"timestampValue":"yesterday"}"#, "Invalid time format"),
        (#"{"timestampValue":"0000-12-31T00:00:00Z"}"#, "Invalid time format"),
        (#"{"bytesValue":"***"}"#, "TYPE_BYTES"),
        (#"{"referenceValue":"users/u1"}"#, #"Resource name "users/u1" lacks "projects" at index 0."#),
        (#"{"referenceValue":"projects/p/databases/(default)/documents/users"}"#, #"lacks "/" at index 46."#),
        (#"{"referenceValue":"projects/p/databases/(default)/documents"}"#, #"Omit "/documents""#),
        (#"{"timestampValue":"2001-02-03t04:05:06Z"}"#, "Invalid time format"),
        (#"{"timestampValue":"2001-02-03T04:05:06z"}"#, "Invalid time format"),
        (#"{"geoPointValue":{"latitude":91}}"#, "latitude"),
        (#"{"arrayValue":{"values":[{"arrayValue":{}}]}}"#, "Cannot convert an array value in an array value."),
        (#"{"stringValue":{}}"#, "TYPE_STRING"),
        (#"{"mapValue":{"fields":{"":{"nullValue":null}}}}"#, "contains an invalid nested entity."),
        // Numbers past a double's range, which read as ±infinity: the official emulator refuses the
        // payload (Hearth stored Infinity). The body's parse stops them now (`FirestoreError.badJSON`).
        (#"{"doubleValue":1e400}"#, "Payload isn't valid for request."),
        (#"{"doubleValue":-1e999}"#, "Payload isn't valid for request."),
        (#"{"integerValue":1e400}"#, "Payload isn't valid for request."),
        // Hexadecimal and C's other spellings, which Swift's Double(_:) reads (faith34).
        (#"{"integerValue":"0x10"}"#, "TYPE_INT64"),
        (#"{"integerValue":"0x1p4"}"#, "TYPE_INT64"),
        (#"{"doubleValue":"0x1p3"}"#, "TYPE_DOUBLE"),
        (#"{"doubleValue":"0X10"}"#, "TYPE_DOUBLE"),
        (#"{"doubleValue":"infinity"}"#, "TYPE_DOUBLE"),
        (#"{"geoPointValue":{"latitude":"0x10"}}"#, "TYPE_DOUBLE"),
        // A leap second, which Google's parser refuses (seconds 0–59).
        (#"{"timestampValue":"2016-12-31T23:59:60Z"}"#, "Invalid time format"),
    ])
    func rejects(_ text: String, _ fragment: String) throws {
        do throws(FirestoreError) {
            // Parsed first, as `RequestContext.body` parses a REST body.
            let json: JSON
            do { json = try JSON.parse(text) } catch { throw .badJSON(error) }
            _ = try ValueJSON.decode(json, path: "document.fields[0].value")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.status == "INVALID_ARGUMENT")
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    /// A tree holding ±infinity as a JSON number (which no REST body parses to any more) is still
    /// refused as the emulator refuses the payload, never stored.
    @Test(arguments: [JSON.double(.infinity), .double(-.infinity), .double(.nan)])
    func aNonFiniteNumberInATreeIsRefused(_ number: JSON) {
        for key in ["doubleValue", "integerValue"] {
            #expect(throws: FirestoreError.invalidArgument("Payload isn't valid for request.")) {
                try ValueJSON.decode(.object([key: number]), path: "v")
            }
        }
    }

    @Test func nestingDeeperThanTwentyIsRejected() throws {
        var v: JSON = .object(["integerValue": .string("1")])
        for _ in 0..<20 { v = map([("x", v)]) }
        _ = try ValueJSON.decode(v, path: "v")  // 20 levels: fine
        v = map([("x", v)])
        #expect(throws: FirestoreError.self) { try ValueJSON.decode(v, path: "v") }
    }

    /// A field's whole path is bounded (`m.` and the name, unquoted: 1,500 bytes), a map inside an
    /// array counting as under the array's field, as the official emulator answers (faith30).
    @Test(arguments: [
        ("m", [String](), 1498), ("yyyyyyyyyy", [], 1489), ("m", ["a"], 1496), ("-", [], 1498),
    ])
    func aNestedNameIsBoundedByItsWholePath(_ top: String, _ between: [String], _ longest: Int) throws {
        func fields(_ inner: String, inArray: Bool = false) -> JSON {
            var v = map([(inner, .object(["nullValue": .null]))])
            for n in between.reversed() { v = map([(n, v)]) }
            if inArray { v = .object(["arrayValue": .object(["values": .array([v])])]) }
            return .object([top: v])
        }
        for inArray in [false, true] {
            _ = try ValueJSON.decodeFields(fields(String(repeating: "x", count: longest), inArray: inArray), path: "f")
            do {
                _ = try ValueJSON.decodeFields(fields(String(repeating: "x", count: longest + 1), inArray: inArray), path: "f")
                Issue.record("a path of 1,501 bytes was accepted")
            } catch {
                #expect(error.message == "Property \(top) contains an invalid nested entity.")
            }
        }
        // An operand is not a document's field: its map's names keep their own bound.
        _ = try ValueJSON.decode(map([(String(repeating: "x", count: 1500), .object(["nullValue": .null]))]), path: "v")
    }

    /// Google's JSON parser reads a number or boolean given for a string as its text, and drops
    /// timestamp digits past nanoseconds; `-0.0` keeps its sign.
    @Test func lenientInputsAreReadAsGoogleReadsThem() throws {
        #expect(try ValueJSON.decode(JSON.parse(#"{"stringValue":3}"#), path: "v") == .string("3"))
        #expect(try ValueJSON.decode(JSON.parse(#"{"stringValue":true}"#), path: "v") == .string("true"))
        let t = try ValueJSON.decode(JSON.parse(#"{"timestampValue":"2001-02-03T04:05:06.1234567891Z"}"#), path: "v")
        #expect(t == .timestamp(try #require(ValueJSON.parseTimestamp("2001-02-03T04:05:06.123456Z"))))
        guard case .double(let z) = try ValueJSON.decode(JSON.parse(#"{"doubleValue":-0.0}"#), path: "v") else {
            Issue.record("not a double")
            return
        }
        #expect(z == 0 && z.sign == .minus)
        // Decimal numbers in strings in every form the parser takes.
        for (text, value) in [("1e3", 1000), ("+5", 5), (".5e1", 5), ("5.", 5), ("0010", 10)] {
            #expect(try ValueJSON.decode(JSON.parse(#"{"integerValue":"\#(text)"}"#), path: "v") == .integer(Int64(value)))
            #expect(try ValueJSON.decode(JSON.parse(#"{"doubleValue":"\#(text)"}"#), path: "v") == .double(Double(value)))
        }
        // "NaN" is a double's JSON form: a latitude out of range, not a payload error.
        do {
            _ = try ValueJSON.decode(JSON.parse(#"{"geoPointValue":{"latitude":"NaN"}}"#), path: "v")
            Issue.record("a NaN latitude was accepted")
        } catch let error as FirestoreError {
            #expect(error.message == "Geo point latitude 'NaN' outside permitted range -90.0 to 90.0.")
        }
    }
}
